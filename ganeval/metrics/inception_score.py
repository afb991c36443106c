"""The Inception Score (Salimans et al. 2016) of a set's class logits: exp of the mean KL divergence between
each row's class distribution and the set's marginal, per split; mean and std (ddof=0) over the splits.

Computed as torch-fidelity computes it (`isc_features_to_metric`), in float64: splits are the rows
[i·N/splits, (i+1)·N/splits) in the order given (torch-fidelity first shuffles with its own seed; the
protocol's subsamples come in random order already). The logits are the FID Inception network's 1008-way
classifier output: `features=inception_logits` (unbiased: without the fc bias, as torch-fidelity and the
original TensorFlow code use for IS). IS scores one set: in the protocol it is the generated subsample's;
the real subsample of the run is not used by it.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, resolve_device
from ganeval.metrics.registry import GramHook, GramTap, Metric, PairWork, integer, option, register_metric
from ganeval.metrics.validation import finite_result, load_features

OPTIONS = (option("splits", 10, integer(1), "splits of the generated subsample; IS is their mean"),)
DEFAULTS = {o.name: o.default for o in OPTIONS}


def split_scores(logits: torch.Tensor, splits: int) -> torch.Tensor:
    """IS of each split of the rows (float64): exp(mean_i KL(p_i ‖ mean of the split's p))."""
    n = logits.shape[0]
    z = logits.double()
    p, log_p = z.softmax(dim=1), z.log_softmax(dim=1)
    scores = torch.empty(splits, dtype=torch.float64, device=z.device)
    for i in range(splits):
        a, e = i * n // splits, (i + 1) * n // splits
        q = p[a:e].mean(dim=0, keepdim=True)
        scores[i] = (p[a:e] * (log_p[a:e] - q.log())).sum(dim=1).mean().exp()
    return scores


def check_splits(splits: int, n: int, name: str) -> None:
    """Every split needs at least one row."""
    METRIC.resolve({"splits": splits}, where="")
    if splits > n:
        raise ValueError(f"splits={splits} is more than the {n} rows of {name}: every split needs a row; lower splits")


def inception_score(
    logits: ArrayLike, splits: int = DEFAULTS["splits"], device: str | torch.device | None = None
) -> tuple[float, float]:
    """(mean, std) over `splits` of the Inception Score of N×C class logits (e.g. features=inception_logits).

    Args:
        logits: N×C class logits of the generated images (softmax taken here), e.g. the `inception_logits`
            extractor's rows.
        splits: Into how many consecutive parts the rows are split (torch-fidelity's and the paper's 10).
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        (mean, std) of exp(E KL(p(y|x) ‖ p(y))) over the splits; higher is better.

    Examples:
        >>> import numpy as np
        >>> from ganeval.metrics import inception_score
        >>> logits = np.random.default_rng(0).normal(size=(500, 10)).astype(np.float32) * 3
        >>> [round(v, 3) for v in inception_score(logits, splits=5)]
        [3.812, 0.036]
    """
    dev = resolve_device(device, logits)
    z = load_features(logits, "logits", dev, min_rows=1)
    check_splits(splits, z.shape[0], "logits")
    if z.shape[1] < 2:
        raise ValueError(f"logits must have one column per class (at least 2), got {z.shape[1]}")
    s = finite_result(split_scores(z, splits), "IS")
    return float(s.mean()), float(s.std(unbiased=False)) if splits > 1 else 0.0


def _prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None) -> torch.Tensor:
    return x  # the logits themselves; a real subsample's are never used


def _pair(real: torch.Tensor, fake: torch.Tensor, o: Mapping[str, Any], rng: np.random.Generator) -> PairWork:
    """One job: the generated subsample's IS (the mean over splits); draws nothing from `rng`."""
    return PairWork([partial(split_scores, fake, o["splits"])], lambda results: float(results[0].mean()))


def _check_sample_size(sample_size: int, o: Mapping[str, Any]) -> None:
    if o["splits"] > sample_size:
        raise ValueError(f"metrics.inception_score.splits={o['splits']} exceeds sample_size={sample_size}: "
                         "every split needs a row; lower splits")


METRIC = register_metric(Metric(
    name="inception_score", options=OPTIONS, prepare=_prepare, pair=_pair, check_sample_size=_check_sample_size,
    label="IS", input="logits", higher_is_better=True,
    doc="Inception Score of the generated subsample from class logits (mean over splits; torch-fidelity's formula)",
))
