"""Dense linear algebra on the fastest backend at hand, symmetric and triangular products at the cost
their structure allows, and the strip heights of the upper-triangle Gram loops (k-NN search, KID).

On CPU, numpy's OpenBLAS ran this project's float32 products ~1.1× (one thread) and float64 ones ~1.3×
faster than torch's MKL on its 2-core machine, and SciPy's divide-and-conquer symmetric eigensolver ~1.6×
faster than numpy's, so CPU tensors go through numpy/SciPy as zero-copy views. CPU work runs one thread
per piece (see `ganeval.metrics.parallel`), so the two thread pools never alternate.
"""

from __future__ import annotations

import numpy as np
import torch


def _numpy_ok(*ts: torch.Tensor) -> bool:
    return all(t.device.type == "cpu" and t.dtype in (torch.float32, torch.float64) for t in ts) and len(
        {t.dtype for t in ts}
    ) == 1


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b (numpy's BLAS for CPU float tensors of one dtype; transposed views need no copy)."""
    if _numpy_ok(a, b):
        return torch.from_numpy(np.matmul(a.numpy(), b.numpy()))
    return a @ b


def eigvalsh(m: torch.Tensor) -> torch.Tensor:
    """Eigenvalues of a symmetric matrix, ascending (SciPy's divide-and-conquer LAPACK driver on CPU)."""
    if _numpy_ok(m):
        from scipy.linalg import eigh

        return torch.from_numpy(eigh(m.numpy(), eigvals_only=True, driver="evd", check_finite=False))
    return torch.linalg.eigvalsh(m)


def lower_congruence(b: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """BᵀSB for a lower-triangular B (a Cholesky factor): two triangular products on CPU, half the
    arithmetic of two general ones."""
    if _numpy_ok(b, s) and b.dtype == torch.float64:
        from scipy.linalg import blas

        # C-ordered arrays are Fortran-ordered transposes: U = Bᵀ (upper) and S (symmetric), no copies
        u, sf = b.numpy().T, s.numpy().T
        sb = blas.dtrmm(1.0, u, sf, side=1, lower=0, trans_a=1)  # S·Uᵀ = S·B
        return torch.from_numpy(blas.dtrmm(1.0, u, sb, side=0, lower=0, overwrite_b=1))  # U·(S·B) = Bᵀ·S·B
    return matmul(matmul(b.T, s), b)


def column_sums64(a: torch.Tensor) -> torch.Tensor:
    """Σ over rows of an N×D matrix, accumulated in float64 (numpy's strided reduce on CPU is ~4× faster)."""
    if _numpy_ok(a):
        return torch.from_numpy(np.add.reduce(a.numpy(), axis=0, dtype=np.float64))
    return a.sum(dim=0, dtype=torch.float64)


def syrk_t(a: torch.Tensor) -> torch.Tensor:
    """aᵀa for an N×D matrix, computing one triangle only where BLAS offers it (CPU float32/float64)."""
    if a.device.type == "cpu" and a.dtype in (torch.float32, torch.float64):
        from scipy.linalg import blas

        f = blas.dsyrk if a.dtype == torch.float64 else blas.ssyrk
        arr = np.ascontiguousarray(a.numpy())
        # aᵀa of a C-ordered N×D array is the syrk of its Fortran-ordered D×N view, with no copy; the
        # Fortran-ordered upper triangle it returns is, read in C order, the lower one (zeros above).
        lower = torch.from_numpy(f(1.0, arr.T, trans=0, lower=0).T)
        return lower + torch.tril(lower, -1).T
    return a.T @ a


def strip_height(n: int, device: torch.device) -> int:
    """Rows per strip of an upper-triangle Gram loop: the strips cost (1 + h/n)/2 of a full product, so
    shorter strips waste less, down to ~512 rows on CPU where each product still runs at full speed
    (~2048 on a GPU, which wants fewer, larger products); n is split into equal strips."""
    target = 512 if device.type == "cpu" else 2048
    strips = max(1, -(-n // target))
    return -(-n // strips)


def strips(n: int, device: torch.device, height: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each strip of rows (`height` rows, default `strip_height`), the widest first."""
    h = height or strip_height(n, device)
    return [(a, min(a + h, n)) for a in range(0, n, h)]


def gram_strip(x: torch.Tensor, a: int, e: int) -> torch.Tensor:
    """The Gram strip x[a:e] · x[a:]ᵀ (rows a..e against every row from a on): numpy's BLAS on CPU."""
    return matmul(x[a:e], x[a:].T)
