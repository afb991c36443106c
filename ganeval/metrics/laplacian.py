"""The union k-NN graph and its normalised Laplacian, as the reference IMD builds them."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import torch


def union_edges(nbrs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Undirected, unweighted edges (row, col), both directions, of the graph where i~j if either is a
    k-NN of the other; sorted by row then column, no duplicates, no self-loops."""
    n, k = nbrs.shape
    src = torch.arange(n, device=nbrs.device).repeat_interleave(k)
    dst = nbrs.reshape(-1)
    keys = torch.cat([src * n + dst, dst * n + src])
    keys = torch.unique(keys)  # sorted
    return keys // n, keys % n


def normalized_adjacency(nbrs: torch.Tensor, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """S = D^-1/2 A D^-1/2 as a sparse CSR matrix, so that the Laplacian is L = I − S (tr L = n)."""
    n = nbrs.shape[0]
    rows, cols = union_edges(nbrs)
    deg = torch.bincount(rows, minlength=n).to(dtype)
    inv_sqrt = deg.rsqrt()
    vals = inv_sqrt[rows] * inv_sqrt[cols]
    crow = torch.zeros(n + 1, dtype=torch.long, device=nbrs.device)
    crow[1:] = torch.cumsum(torch.bincount(rows, minlength=n), dim=0)
    with warnings.catch_warnings():  # CSR support is labelled beta; the invariants hold by construction
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(crow, cols, vals, size=(n, n), check_invariants=False)


def dense_laplacian(nbrs: torch.Tensor, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The normalised Laplacian as a dense matrix: for the exact method on small graphs only."""
    n = nbrs.shape[0]
    return torch.eye(n, dtype=dtype, device=nbrs.device) - normalized_adjacency(nbrs, dtype).to_dense()


def adjacency_power_traces(nbrs: torch.Tensor, degree: int, rows_per_chunk: int = 1 << 16) -> np.ndarray:
    """Exact tr S^i, i = 0..degree, of S = D^-1/2 A D^-1/2 (float64, on the CPU): tr S^i = ⟨S^a, S^b⟩_F with
    a = ⌊i/2⌋, b = ⌈i/2⌉ (S is symmetric), summed over blocks of rows so that only a block of S^⌈d/2⌉ is held."""
    n = nbrs.shape[0]
    rows, cols = (v.cpu().numpy() for v in union_edges(nbrs))
    deg = np.bincount(rows, minlength=n).astype(np.float64)
    s = sp.csr_matrix((1.0 / np.sqrt(deg[rows] * deg[cols]), (rows, cols)), shape=(n, n))
    top = (degree + 1) // 2
    step = max(1, rows_per_chunk // max(1, int(np.ceil(len(rows) / n)) ** max(top - 1, 0)))
    out = np.zeros(degree + 1)
    for a in range(0, n, step):
        powers = [sp.identity(n, format="csr")[a:a + step], s[a:a + step]]
        while len(powers) <= top:
            powers.append(powers[-1] @ s)
        for i in range(degree + 1):
            out[i] += powers[i // 2].multiply(powers[(i + 1) // 2]).sum()
    return out
