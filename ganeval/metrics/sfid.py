"""sFID (Nash et al. 2021, the ADM evaluator of Dhariwal & Nichol): FID's Fréchet distance on spatial Inception
features instead of pool3.

The ADM evaluator (openai/guided-diffusion `evaluations/evaluator.py`) reads the TensorFlow graph's
`mixed_6/conv:0`, keeps its first 7 channels and flattens 17×17×7 = 2023 values per image. In the FID
Inception's PyTorch layout that tensor is `Mixed_6d.branch1x1` (conv, batch norm, ReLU; the TF graph's
mixed, mixed_1, … are Mixed_5b, 5c, 5d, 6a, 6b, 6c, 6d, …), which `features=inception_spatial` extracts with the
same network, weights and preprocessing as FID, flattened in the evaluator's (height, width, channel) order.
The distance is FID's (`ganeval.metrics.fid`: float64 moments, unbiased covariance) on those rows.
"""

from __future__ import annotations

import torch

from ganeval.common import ArrayLike
from ganeval.metrics.fid import _pair as fid_pair
from ganeval.metrics.fid import _prepare as fid_prepare
from ganeval.metrics.fid import fid, reach
from ganeval.metrics.memory import covariances
from ganeval.metrics.registry import Metric, register_metric

METRIC = register_metric(Metric(
    name="sfid", options=(), prepare=fid_prepare, pair=fid_pair, label="sFID", input="spatial", memory=covariances,
    reach=lambda peak, n, d, o: reach(peak, n, d),
    doc="Fréchet distance on the ADM evaluator's spatial Inception features (mixed_6/conv, 7×17×17; "
        "features=inception_spatial)",
))


def sfid(x: ArrayLike, y: ArrayLike, device: str | torch.device | None = None) -> float:
    """sFID of two sets of spatial features (N×2023 from `features=inception_spatial`): FID's formula on them.

    Args:
        x: The real spatial features, N×D.
        y: The generated spatial features, M×D.
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        The Fréchet distance of the two sets' Gaussian fits; lower is better.

    Examples:
        >>> from ganeval.metrics import sfid
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> round(sfid(x, y), 3)
        0.974
    """
    return fid(x, y, device=device)
