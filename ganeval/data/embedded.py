"""Image sets that ship with scikit-learn, so experiments run offline: digits and photo patches."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F


def digits(size: int = 32) -> np.ndarray:
    """scikit-learn's 1 797 real 8×8 handwritten digits (16 grey levels scaled to 0..255), bilinearly
    upsampled to `size`×`size`: uint8 N×1×size×size."""
    from sklearn.datasets import load_digits

    if not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive int, got {size!r}")
    x = torch.from_numpy(load_digits().images.astype(np.float32) * (255.0 / 16.0))[:, None]
    if size != 8:
        x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False,
                          antialias=size < 8)
    return x.round().clamp(0, 255).to(torch.uint8).numpy()


def patches(n: int = 2000, size: int = 32, seed: int = 0) -> np.ndarray:
    """`n` seeded random `size`×`size` crops of the two photographs scikit-learn ships (china,
    flower): natural images, uint8 N×3×size×size."""
    from sklearn.datasets import load_sample_images

    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    photos = load_sample_images().images  # two H×W×3 uint8 arrays
    if not isinstance(size, int) or not 1 <= size <= min(min(p.shape[:2]) for p in photos):
        raise ValueError(f"size must be an int in [1, {min(min(p.shape[:2]) for p in photos)}], got {size!r}")
    rng = np.random.default_rng(seed)
    which = rng.integers(0, len(photos), n)
    out = np.empty((n, 3, size, size), dtype=np.uint8)
    for i, k in enumerate(which):
        p = photos[k]
        y = rng.integers(0, p.shape[0] - size + 1)
        x = rng.integers(0, p.shape[1] - size + 1)
        out[i] = p[y : y + size, x : x + size].transpose(2, 0, 1)
    return out


def digits_classes(classes: Sequence[int] = (0, 1, 2, 3, 4), size: int = 8) -> np.ndarray:
    """The scikit-learn digits of the given classes only (in their original order), at `size` (8: as made):
    uint8 N×1×size×size. Two disjoint class sets make a similar-but-different pair, as CIFAR-10 and CIFAR-100."""
    from sklearn.datasets import load_digits

    wanted = list(classes) if isinstance(classes, Sequence) and not isinstance(classes, str) else None
    if not wanted or any(isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= 9 for c in wanted):
        raise ValueError(f"classes must be a non-empty list of digits 0..9, got {classes!r}")
    if len(set(wanted)) < len(wanted):
        raise ValueError(f"classes {wanted} repeats a digit: list each class once")
    keep = np.isin(load_digits().target, wanted)
    return digits(size)[keep]
