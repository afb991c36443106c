"""The one conversion of float images to uint8 pixels, shared by data sources, GAN sampling and features."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def to_uint8(images: Any, value_range: tuple[float, float] = (-1.0, 1.0)) -> np.ndarray:
    """Map float images in `value_range` to uint8 (affine to [0, 255], round half to even, clip).

    Accepts a numpy array or torch tensor of any shape (typically N×C×H×W) and returns a numpy
    uint8 array of the same shape; uint8 input is returned unchanged (as numpy). Values outside
    `value_range` are clipped, NaN is rejected.
    """
    lo, hi = (float(v) for v in value_range)
    if not hi > lo:
        raise ValueError(f"value_range must be (low, high) with high > low, got {value_range!r}")
    if isinstance(images, torch.Tensor):
        t = images.detach()
        if t.dtype == torch.uint8:
            return t.cpu().numpy()
        if not (t.is_floating_point() or t.dtype in (torch.int16, torch.int32, torch.int64)):
            raise ValueError(f"images must be a float or integer tensor, got dtype {t.dtype}")
        t = t.to(torch.float32) if t.dtype != torch.float64 else t
        if torch.isnan(t).any():
            raise ValueError("images contain NaN; check the generator output before converting")
        out = ((t - lo) * (255.0 / (hi - lo))).round_().clamp_(0, 255)
        return out.to(torch.uint8).cpu().numpy()
    a = np.asarray(images)
    if a.dtype == np.uint8:
        return a
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"images must be a float or integer array, got dtype {a.dtype}")
    a = a.astype(np.float32) if a.dtype != np.float64 else a
    if np.isnan(a).any():
        raise ValueError("images contain NaN; check the generator output before converting")
    out = np.clip(np.rint((a - lo) * (255.0 / (hi - lo))), 0, 255)
    return out.astype(np.uint8)
