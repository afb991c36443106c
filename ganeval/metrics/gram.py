"""Symmetric products at half cost: XᵀX for covariances (BLAS syrk on CPU)."""

from __future__ import annotations

import numpy as np
import torch


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
