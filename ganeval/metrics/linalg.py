"""Dense linear algebra on the fastest backend at hand, symmetric products at half cost, and the block
sizes of the upper-triangle Gram loops (k-NN search, KID kernels).

On CPU, numpy's OpenBLAS ran FID's float64 products ~1.3× and its symmetric eigenvalues ~2× faster
than torch's MKL on this project's 2-core machine, so FID's dense algebra on CPU tensors goes through
numpy (zero-copy views). The Gram loops stay in torch: interleaving OpenBLAS calls with torch's
threaded top-k made the two thread pools contend (k-NN 1.5× slower).
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
    """Eigenvalues of a symmetric matrix, ascending (numpy's LAPACK on CPU)."""
    if _numpy_ok(m):
        return torch.from_numpy(np.linalg.eigvalsh(m.numpy()))
    return torch.linalg.eigvalsh(m)


def syrk_t(a: torch.Tensor) -> torch.Tensor:
    """aᵀa for an N×D matrix, computing one triangle only where BLAS offers it (CPU float32/float64)."""
    if a.device.type == "cpu" and a.dtype in (torch.float32, torch.float64):
        from scipy.linalg import blas

        f = blas.dsyrk if a.dtype == torch.float64 else blas.ssyrk
        arr = np.ascontiguousarray(a.numpy())
        # aᵀa of a C-ordered N×D array is the syrk of its Fortran-ordered D×N view, with no copy.
        upper = f(1.0, arr.T, trans=0, lower=0)
        upper = torch.from_numpy(np.ascontiguousarray(upper))
        return torch.triu(upper) + torch.triu(upper, 1).T
    return a.T @ a


def block_size(n: int, target: int = 1024) -> int:
    """Rows per block for an upper-triangle Gram loop: about `target`, with n split into equal blocks.

    Smaller blocks bring the triangle's cost nearer half of the full product (10 blocks: 55%, 5: 60%);
    ~1000 rows keep each matrix product large enough to run at full speed.
    """
    blocks = max(1, -(-n // target))
    return -(-n // blocks)
