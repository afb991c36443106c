"""Seeded samples from synthetic manifolds (torus, sphere, swiss roll) as float32 N×D point sets."""

from __future__ import annotations

import numpy as np


def _check_n(n: int) -> None:
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")


def torus(n: int = 1000, R: float = 2.0, r: float = 1.0, seed: int = 0, noise: float = 0.0) -> np.ndarray:
    """`n` points uniform (by area) on a torus in R³ with tube centre radius `R` and tube radius `r`,
    plus optional isotropic Gaussian `noise`: float32 N×3."""
    _check_n(n)
    if not (R > r > 0):
        raise ValueError(f"need R > r > 0 for a ring torus, got R={R!r}, r={r!r}")
    rng = np.random.default_rng(seed)
    thetas: list[np.ndarray] = []
    got = 0
    while got < n:  # rejection: the tube angle has density ∝ R + r cos θ
        th = rng.uniform(0, 2 * np.pi, 2 * n)
        keep = th[rng.uniform(0, R + r, 2 * n) < R + r * np.cos(th)]
        thetas.append(keep)
        got += keep.size
    theta = np.concatenate(thetas)[:n]
    phi = rng.uniform(0, 2 * np.pi, n)
    ring = R + r * np.cos(theta)
    pts = np.stack([ring * np.cos(phi), ring * np.sin(phi), r * np.sin(theta)], axis=1)
    if noise:
        pts = pts + rng.normal(0.0, noise, pts.shape)
    return pts.astype(np.float32)


def sphere(n: int = 1000, dim: int = 3, seed: int = 0, radius: float = 1.0, noise: float = 0.0) -> np.ndarray:
    """`n` points uniform on the sphere of `radius` in R^dim (a (dim−1)-manifold), plus optional
    Gaussian `noise`: float32 N×dim."""
    _check_n(n)
    if not isinstance(dim, (int, np.integer)) or dim < 2:
        raise ValueError(f"dim must be an int >= 2 (the ambient dimension), got {dim!r}")
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((n, dim))
    pts = radius * g / np.linalg.norm(g, axis=1, keepdims=True)
    if noise:
        pts = pts + rng.normal(0.0, noise, pts.shape)
    return pts.astype(np.float32)


def swiss_roll(n: int = 1000, seed: int = 0, noise: float = 0.0) -> np.ndarray:
    """`n` points of scikit-learn's swiss roll (a 2-D sheet rolled in R³), seeded: float32 N×3."""
    from sklearn.datasets import make_swiss_roll

    _check_n(n)
    pts, _ = make_swiss_roll(n_samples=int(n), noise=noise, random_state=seed)
    return pts.astype(np.float32)
