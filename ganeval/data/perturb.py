"""Image perturbations applied before feature extraction (Gaussian blur for the sensitivity sweep)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ganeval.common import resolve_device


def blur_radius(sigma: float) -> int:
    """Kernel half-width for `sigma`: ceil(3σ), so the kernel has 2·ceil(3σ)+1 taps."""
    return int(math.ceil(3.0 * sigma))


def _symmetric_index(n: int, r: int) -> torch.Tensor:
    """Indices padding an axis of length n by r on both sides with half-sample symmetric reflection
    (… c b a | a b c … x y z | z y x …), valid for any r."""
    i = np.arange(-r, n + r)
    period = 2 * n
    i = np.mod(i, period)
    i = np.where(i >= n, period - 1 - i, i)
    return torch.from_numpy(i)


def gaussian_blur(
    images: Any, sigma: float, *, device: str | torch.device | None = None, chunk: int = 1024
) -> np.ndarray:
    """Blur uint8 N×C×H×W images with a Gaussian of std `sigma` pixels (separable, kernel of
    2·ceil(3σ)+1 taps normalised to sum 1, symmetric reflect padding), rounded back to uint8;
    σ = 0 returns the images unchanged."""
    if isinstance(images, torch.Tensor):
        dev = resolve_device(device, images)
        images = images.detach().cpu().numpy()
    else:
        dev = resolve_device(device)
    a = np.asarray(images)
    if a.dtype != np.uint8 or a.ndim != 4:
        raise ValueError(
            f"images must be uint8 N×C×H×W, got {a.dtype} of shape {a.shape}; "
            "convert with ganeval.data.to_uint8"
        )
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
    if sigma == 0:
        return a.copy()
    r = blur_radius(sigma)
    x = torch.arange(-r, r + 1, dtype=torch.float64)
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    k = (k / k.sum()).to(torch.float32).to(dev)
    _, c, h, w = a.shape
    iy, ix = _symmetric_index(h, r).to(dev), _symmetric_index(w, r).to(dev)
    out = np.empty_like(a)
    for s in range(0, a.shape[0], chunk):
        t = torch.from_numpy(a[s : s + chunk]).to(dev).float().reshape(-1, 1, h, w)
        t = t.index_select(2, iy)
        t = F.conv2d(t, k.view(1, 1, -1, 1))
        t = t.index_select(3, ix)
        t = F.conv2d(t, k.view(1, 1, 1, -1))
        out[s : s + chunk] = t.reshape(-1, c, h, w).round().clamp(0, 255).to(torch.uint8).cpu().numpy()
    return out
