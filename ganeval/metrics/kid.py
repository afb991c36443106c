"""KID: the unbiased MMD² with the cubic polynomial kernel (x·y/d + 1)³ over random subsets
(Bińkowski et al.): XX and YY diagonals dropped, the full XY block kept; mean and std (ddof=0)."""

from __future__ import annotations

import numpy as np
import torch

from ganeval.common import ArrayLike, as_tensor, resolve_device
from ganeval.metrics.validation import check_features, check_same_dim, check_subset_size

CHUNK_ELEMENTS = 1 << 24  # subsets per batched product: chunk × subset_size × D stays near 64 MB in float32


def poly_kernel(g: torch.Tensor, gamma: float, coef0: float, degree: int) -> torch.Tensor:
    """k = (γ·g + c)^degree applied to Gram entries g, in place when possible."""
    k = g.mul_(gamma).add_(coef0)
    return k.pow_(degree) if degree != 1 else k


def sym_offdiag_sum(a: torch.Tensor, gamma: float, coef0: float, degree: int) -> torch.Tensor:
    """Σ_{i≠j} k(a_i, a_j) for each batch of rows (B×m×D), from the two diagonal half-blocks and one
    off-diagonal block: 3/4 of a full product, since the kernel matrix is symmetric."""
    m = a.shape[1]
    h = m // 2
    a1, a2 = a[:, :h], a[:, h:]
    diag = block_sum(poly_kernel((a * a).sum(dim=2)[:, :, None], gamma, coef0, degree))
    s11 = block_sum(poly_kernel(torch.bmm(a1, a1.transpose(1, 2)), gamma, coef0, degree))
    s22 = block_sum(poly_kernel(torch.bmm(a2, a2.transpose(1, 2)), gamma, coef0, degree))
    s12 = block_sum(poly_kernel(torch.bmm(a1, a2.transpose(1, 2)), gamma, coef0, degree))
    return s11 + s22 + 2 * s12 - diag


def block_sum(k: torch.Tensor) -> torch.Tensor:
    """Sum of each B×r×c block in float64: rows summed in the working precision, then rows in float64."""
    return k.sum(dim=2).sum(dim=1, dtype=torch.float64)


def draw_subsets(nx: int, ny: int, subsets: int, subset_size: int, rng: np.random.Generator):
    """Per subset, `subset_size` rows of x then of y, each without replacement."""
    ix = np.empty((subsets, subset_size), dtype=np.int64)
    iy = np.empty((subsets, subset_size), dtype=np.int64)
    for s in range(subsets):
        ix[s] = rng.choice(nx, subset_size, replace=False)
        iy[s] = rng.choice(ny, subset_size, replace=False)
    return ix, iy


def mmd2_from_sums(sxx: torch.Tensor, syy: torch.Tensor, sxy: torch.Tensor, m: int) -> torch.Tensor:
    """Unbiased MMD² from the off-diagonal XX and YY kernel sums and the full XY sum of m-row subsets."""
    return (sxx + syy) / (m * (m - 1)) - 2 * sxy / (m * m)


def kid(
    x: ArrayLike,
    y: ArrayLike,
    subsets: int = 100,
    subset_size: int = 1000,
    seed: int | np.random.Generator = 0,
    device: str | torch.device | None = None,
    *,
    degree: int = 3,
    gamma: float | None = None,
    coef0: float = 1.0,
) -> tuple[float, float]:
    """KID of feature sets x (N×D) and y (M×D): (mean, std) of the unbiased MMD² over random subsets."""
    nx, dx = check_features(x, "x", min_rows=2)
    ny, dy = check_features(y, "y", min_rows=2)
    check_same_dim(dx, dy, "KID")
    if subsets < 1:
        raise ValueError(f"subsets must be ≥ 1, got {subsets}")
    check_subset_size(subset_size, nx, "x")
    check_subset_size(subset_size, ny, "y")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    ix, iy = draw_subsets(nx, ny, subsets, subset_size, rng)
    dev = resolve_device(device, x, y)
    xt, yt = as_tensor(x, dev), as_tensor(y, dev)
    dtype = xt.dtype if xt.is_floating_point() else torch.float32
    xt, yt = xt.to(dtype), yt.to(dtype)
    g = 1.0 / dx if gamma is None else float(gamma)
    values = mmd2_subsets(xt, yt, ix, iy, g, coef0, degree)
    return float(values.mean()), float(values.std(unbiased=False)) if subsets > 1 else 0.0


def mmd2_subsets(
    x: torch.Tensor, y: torch.Tensor, ix: np.ndarray, iy: np.ndarray, gamma: float, coef0: float, degree: int
) -> torch.Tensor:
    """MMD² of every subset (rows ix of x against rows iy of y), batched as chunks of subsets."""
    subsets, m = ix.shape
    chunk = max(1, CHUNK_ELEMENTS // (m * x.shape[1]))
    out = torch.empty(subsets, dtype=torch.float64, device=x.device)
    for s in range(0, subsets, chunk):
        a = x[torch.as_tensor(ix[s : s + chunk], device=x.device)]
        b = y[torch.as_tensor(iy[s : s + chunk], device=x.device)]
        sxy = block_sum(poly_kernel(torch.bmm(a, b.transpose(1, 2)), gamma, coef0, degree))
        sxx = sym_offdiag_sum(a, gamma, coef0, degree)
        syy = sym_offdiag_sum(b, gamma, coef0, degree)
        out[s : s + chunk] = mmd2_from_sums(sxx, syy, sxy, m)
    return out
