"""Exact k-nearest-neighbour graphs by blocked matrix products (never an N×N matrix at once).

Distances come from Gram blocks computed once per pair of row blocks (the upper triangle only, so the
symmetric product costs about half of a general one). Rows whose k-th and (k+1)-th candidates are too
close to tell apart in that precision are re-ranked by exact float64 distances with ties broken by the
lower index, so the graph is deterministic, duplicates included.
"""

from __future__ import annotations

from typing import Callable

import torch

from ganeval.metrics.linalg import block_size

GramHook = Callable[[int, int, torch.Tensor], None]


def _merge(best_d: torch.Tensor, best_i: torch.Tensor, d: torch.Tensor, i: torch.Tensor, kk: int):
    """Keep the `kk` smallest of the running candidates and the new ones, row by row."""
    cd = torch.cat([best_d, d], dim=1)
    ci = torch.cat([best_i, i], dim=1)
    top_d, pos = torch.topk(cd, kk, dim=1, largest=False, sorted=False)
    return top_d, torch.gather(ci, 1, pos)


def _candidates(x: torch.Tensor, kk: int, block: int, gram_hook: GramHook | None):
    """Blocked Gram pass: the `kk` nearest candidates of every row by Gram-based squared distance."""
    n = x.shape[0]
    sq = (x * x).sum(dim=1)
    inf = torch.tensor(float("inf"), dtype=x.dtype, device=x.device)
    best_d = torch.full((n, kk), float("inf"), dtype=x.dtype, device=x.device)
    best_i = torch.full((n, kk), -1, dtype=torch.long, device=x.device)
    starts = list(range(0, n, block))
    for a in starts:
        xa = x[a : a + block]
        for b in starts:
            if b < a:
                continue
            xb = x[b : b + block]
            g = xa @ xb.T
            if gram_hook is not None:
                gram_hook(a, b, g)
            dist = g.mul_(-2.0).add_(sq[None, b : b + block]).add_(sq[a : a + block, None])  # in place
            if a == b:
                dist.fill_diagonal_(inf)  # self excluded by index, not by distance
            k_row = min(kk, dist.shape[1])
            d_ab, i_ab = torch.topk(dist, k_row, dim=1, largest=False, sorted=False)
            best_d[a : a + block], best_i[a : a + block] = _merge(
                best_d[a : a + block], best_i[a : a + block], d_ab, i_ab + b, kk
            )
            if b != a:
                k_col = min(kk, dist.shape[0])
                d_ba, i_ba = torch.topk(dist.T, k_col, dim=1, largest=False, sorted=False)
                best_d[b : b + block], best_i[b : b + block] = _merge(
                    best_d[b : b + block], best_i[b : b + block], d_ba, i_ba + a, kk
                )
    return best_d, best_i, sq


def _exact_sq_dist(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    """Squared distances ||x[r] - x[c]||² in float64 by direct differences, for rows r and their columns c."""
    out = torch.empty(cols.shape, dtype=torch.float64, device=x.device)
    for s in range(0, rows.shape[0], chunk):
        r = rows[s : s + chunk]
        diff = x[r].double()[:, None, :] - x[cols[s : s + chunk]].double()
        out[s : s + chunk] = (diff * diff).sum(dim=2)
    return out


def _rank(d: torch.Tensor, idx: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sort each row by (distance, index) and keep the first k: ties go to the lower index."""
    by_index = torch.argsort(idx, dim=1)
    d, idx = torch.gather(d, 1, by_index), torch.gather(idx, 1, by_index)
    order = torch.argsort(d, dim=1, stable=True)
    return torch.gather(d, 1, order)[:, :k], torch.gather(idx, 1, order)[:, :k]


def _full_rows(x: torch.Tensor, rows: torch.Tensor, k: int) -> torch.Tensor:
    """Exact neighbours of a few rows whose candidate window was too narrow (near ties, duplicates)."""
    out = torch.empty((rows.shape[0], k), dtype=torch.long, device=x.device)
    x64 = None
    for j, r in enumerate(rows.tolist()):
        if x64 is None:
            x64 = x.double()
        d = ((x64 - x64[r]) ** 2).sum(dim=1)
        d[r] = float("inf")
        kth = torch.kthvalue(d, k).values
        cand = torch.nonzero(d <= kth, as_tuple=False).flatten()
        _, top = _rank(d[cand][None], cand[None], k)
        out[j] = top[0]
    del x64
    return out


def exact_knn(
    x: torch.Tensor, k: int, block: int | None = None, extra: int | None = None, gram_hook: GramHook | None = None
) -> torch.Tensor:
    """Indices (N×k, int64) of each row's k nearest other rows by Euclidean distance.

    The set is exact (the graph depends on nothing else): self is excluded by index and ties at the
    k-th place go to the lower index. Within a row, neighbours are ordered by computed distance. `gram_hook(a, b, G)` sees every Gram
    block G = x[a:a+B] @ x[b:b+B].T (b ≥ a) as it is made, so callers can reuse the products.
    """
    n = x.shape[0]
    if n < k + 1:
        raise ValueError(f"need at least k+1={k + 1} samples for a {k}-NN graph, got {n}")
    kk = min(n - 1, k + (extra if extra is not None else max(k, 4)))
    approx_d, cand, sq = _candidates(x, kk, block or block_size(n), gram_hook)
    approx_d, order = torch.sort(approx_d, dim=1)
    cand = torch.gather(cand, 1, order)
    nbrs = cand[:, :k].clone()
    # Gram-based distances are off by at most a few ulps of (|x_i|² + |x_j|²) per √D terms. Where the gap
    # between the k-th and (k+1)-th candidate exceeds twice that, the neighbour set is certain; other rows
    # (near ties, duplicates) are re-ranked by exact float64 distances, ties to the lower index.
    eps = torch.finfo(x.dtype).eps
    sq64 = sq.double()
    tol = 4.0 * eps * x.shape[1] ** 0.5 * (sq64 + sq64.max())
    if kk == n - 1:
        unsure = torch.arange(n, device=x.device)
    else:
        gap = approx_d[:, k].double() - approx_d[:, k - 1].double()
        unsure = torch.nonzero(gap <= 2 * tol, as_tuple=False).flatten()
    if unsure.numel() == 0:
        return nbrs
    exact_d = _exact_sq_dist(x, unsure, cand[unsure])
    kth_d, ranked = _rank(exact_d, cand[unsure], k)
    nbrs[unsure] = ranked
    if kk == n - 1:
        return nbrs
    # a non-candidate could still be as near as the k-th neighbour: recompute those rows in full
    worst = approx_d[unsure, -1].double()
    wide = unsure[kth_d[:, -1] + 2 * tol[unsure] >= worst]
    if wide.numel():
        nbrs[wide] = _full_rows(x, wide, k)
    return nbrs
