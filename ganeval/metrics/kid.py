"""KID: the unbiased MMD² with the cubic polynomial kernel (x·y/d + 1)³ over random subsets
(Bińkowski et al.): XX and YY diagonals dropped, the full XY block kept; mean and std (ddof=0)."""

from __future__ import annotations

import numpy as np
import torch

from ganeval.common import ArrayLike, as_tensor, resolve_device
from ganeval.metrics.linalg import block_size
from ganeval.metrics.validation import check_features, check_same_dim, check_subset_size

CHUNK_ELEMENTS = 1 << 24  # subsets per batched product: chunk × subset_size × D stays near 64 MB in float32
KERNEL_MAX_BYTES = 1 << 29  # build a full kernel matrix (N×M) only up to this size


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


def indicator(n: int, idx: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """n×subsets matrix with a 1 where row i is in subset s: subset sums become matrix products."""
    ind = torch.zeros((n, len(idx)), dtype=like.dtype, device=like.device)
    return ind.scatter_(0, torch.as_tensor(idx.T, device=like.device), 1.0)


def offdiag_sums(upper: torch.Tensor, idx: np.ndarray) -> torch.Tensor:
    """Σ_{i≠j∈S} K[i, j] for each subset S of a symmetric kernel given by its strict upper triangle U
    (zeros elsewhere, as `sym_kernel` makes it): 2·sᵀUs with the subsets' indicator vectors s."""
    s = indicator(upper.shape[0], idx, upper)
    return 2 * ((upper @ s) * s).sum(dim=0, dtype=torch.float64)


def kernel_block(upper: torch.Tensor, a: int, b: int, g: torch.Tensor, gamma: float, coef0: float, degree: int) -> None:
    """Write the kernel of Gram block g = x[a:…] x[b:…]ᵀ (b ≥ a) into a strict-upper-triangle matrix."""
    blk = upper[a : a + g.shape[0], b : b + g.shape[1]]
    poly_kernel(blk.copy_(g), gamma, coef0, degree)
    if a == b:
        blk.triu_(1)


def cross_sums(kernel: torch.Tensor, ix: np.ndarray, iy: np.ndarray) -> torch.Tensor:
    """Σ_{i∈Sx, j∈Sy} K[i, j] for each pair of subsets, as sxᵀ K sy."""
    sx, sy = indicator(kernel.shape[0], ix, kernel), indicator(kernel.shape[1], iy, kernel)
    return ((kernel @ sy) * sx).sum(dim=0, dtype=torch.float64)


def use_full_kernel(nx: int, ny: int, subsets: int, subset_size: int, itemsize: int) -> bool:
    """A full nx×ny kernel matrix pays off when it has no more entries than all subsets' blocks, and fits."""
    return nx * ny <= subsets * subset_size**2 and nx * ny * itemsize <= KERNEL_MAX_BYTES


def sym_kernel(x: torch.Tensor, gamma: float, coef0: float, degree: int, block: int | None = None) -> torch.Tensor:
    """The strict upper triangle (zeros elsewhere) of x's N×N kernel matrix, from upper-triangle Gram
    blocks only: all that the off-diagonal subset sums need."""
    n = x.shape[0]
    block = block or block_size(n)
    out = torch.zeros((n, n), dtype=x.dtype, device=x.device)
    for a in range(0, n, block):
        for b in range(a, n, block):
            kernel_block(out, a, b, x[a : a + block] @ x[b : b + block].T, gamma, coef0, degree)
    return out


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
    if use_full_kernel(nx, ny, subsets, subset_size, xt.element_size()):
        # fewer kernel entries in the full matrices than in all subsets' blocks: build them once
        values = mmd2_from_sums(
            offdiag_sums(sym_kernel(xt, g, coef0, degree), ix),
            offdiag_sums(sym_kernel(yt, g, coef0, degree), iy),
            cross_sums(poly_kernel(xt @ yt.T, g, coef0, degree), ix, iy),
            subset_size,
        )
    else:
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
