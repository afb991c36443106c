"""Exact k-nearest-neighbour graphs by blocked matrix products (never an N×N matrix at once).

Distances come from Gram strips x[a:a+h]·x[a:]ᵀ (the upper triangle only, so the symmetric product
costs about half of a general one), computed independently, on all cores on CPU. Rows whose k-th and
(k+1)-th candidates are too close to tell apart in that precision are re-ranked by exact float64
distances with ties broken by the lower index, so the graph is deterministic, duplicates included.

Candidates come from `ganeval.metrics.knn_candidates`; the product precision and the error bounds that make
reduced precision safe from `ganeval.metrics.knn_precision` (`precision="bfloat16"`, `"tf32"`, `"auto"`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from ganeval.metrics.knn_candidates import GramHook, candidates
from ganeval.metrics.knn_precision import (auto_precision, centred, centring_error, distance_error, reduced_product,
                                           resolve_precision)
from ganeval.metrics.linalg import matmul


@dataclass(frozen=True)
class KnnGraph:
    """A set's k-NN graph: neighbour indices (N×k, nearest first) and, from an exact search, the squared
    distances it ranked them by (each within `distance_error(x, sq, "float32")` of the truth), which other
    metrics reuse as k-NN radii instead of measuring them again."""

    nbrs: torch.Tensor
    sq_dist: torch.Tensor | None = None


def _reduced_gram(lo: torch.Tensor, a: int, e: int, precision: str) -> torch.Tensor:
    """The Gram strip of rows a..e from reduced-precision products, as float32."""
    return reduced_product(lo[a:e], lo[a:], precision)


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


def _full_rows(x: torch.Tensor, rows: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact neighbours (and float64 squared distances) of a few rows whose candidate window was too narrow
    (near ties, duplicates)."""
    out = torch.empty((rows.shape[0], k), dtype=torch.long, device=x.device)
    dist = torch.empty((rows.shape[0], k), dtype=torch.float64, device=x.device)
    x64 = None
    for j, r in enumerate(rows.tolist()):
        if x64 is None:
            x64 = x.double()
        d = ((x64 - x64[r]) ** 2).sum(dim=1)
        d[r] = float("inf")
        kth = torch.kthvalue(d, k).values
        cand = torch.nonzero(d <= kth, as_tuple=False).flatten()
        top_d, top = _rank(d[cand][None], cand[None], k)
        out[j], dist[j] = top[0], top_d[0]
    del x64
    return out, dist


def _candidate_sq_dist(x: torch.Tensor, sq: torch.Tensor, cand: torch.Tensor, chunk: int = 512) -> torch.Tensor:
    """float32 Gram-based squared distances of each row to its candidates (the float32 search's numbers)."""
    out = torch.empty(cand.shape, dtype=x.dtype, device=x.device)
    for s in range(0, cand.shape[0], chunk):
        c = cand[s : s + chunk]
        g = torch.bmm(x[s : s + chunk, None, :], x[c].transpose(1, 2))[:, 0]
        out[s : s + chunk] = sq[s : s + chunk, None] + sq[c] - 2 * g
    return out


def _row_candidates(x: torch.Tensor, sq: torch.Tensor, rows: torch.Tensor, kk: int,
                    chunk: int = 512) -> tuple[torch.Tensor, torch.Tensor]:
    """The kk nearest candidates of some rows among all rows, from float32 Gram products (self excluded)."""
    out_d = torch.empty((rows.shape[0], kk), dtype=x.dtype, device=x.device)
    out_i = torch.empty((rows.shape[0], kk), dtype=torch.long, device=x.device)
    for s in range(0, rows.shape[0], chunk):
        r = rows[s : s + chunk]
        keys = matmul(x[r], x.T).mul_(-2.0).add_(sq[None, :])
        keys[torch.arange(r.shape[0], device=x.device), r] = float("inf")
        d, i = torch.topk(keys, kk, dim=1, largest=False, sorted=False)
        out_d[s : s + chunk], out_i[s : s + chunk] = d.add_(sq[r, None]), i
    return out_d, out_i


def _finish(x: torch.Tensor, rows: torch.Tensor, approx_d: torch.Tensor, cand: torch.Tensor, k: int,
            tol: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The exact neighbours of `rows` from their kk float32 candidates (the kk nearest by Gram-based
    distance, each within `tol` of the truth): where the gap between the k-th and (k+1)-th candidate
    exceeds twice that, the neighbour set is certain; other rows (near ties, duplicates) are re-ranked by
    exact float64 distances, ties to the lower index, and searched in full if a non-candidate could
    still be as near as their k-th. Also returns the squared distances they were ranked by (x's dtype)."""
    n, kk = x.shape[0], cand.shape[1]
    approx_d, order = torch.sort(approx_d, dim=1)
    cand = torch.gather(cand, 1, order)
    nbrs, dist = cand[:, :k].clone(), approx_d[:, :k].clone()
    if kk == n - 1:
        unsure = torch.arange(rows.shape[0], device=x.device)
    else:
        gap = approx_d[:, k].double() - approx_d[:, k - 1].double()
        unsure = torch.nonzero(gap <= 2 * tol[rows], as_tuple=False).flatten()
    if unsure.numel() == 0:
        return nbrs, dist
    exact_d = _exact_sq_dist(x, rows[unsure], cand[unsure])
    kth_d, ranked = _rank(exact_d, cand[unsure], k)
    nbrs[unsure], dist[unsure] = ranked, kth_d.to(dist.dtype)
    if kk == n - 1:
        return nbrs, dist
    worst = approx_d[unsure, -1].double()
    wide = unsure[kth_d[:, -1] + 2 * tol[rows[unsure]] >= worst]
    if wide.numel():
        full, full_d = _full_rows(x, rows[wide], k)
        nbrs[wide], dist[wide] = full, full_d.to(dist.dtype)
    return nbrs, dist


def _refine(x: torch.Tensor, cand: torch.Tensor, coarse: torch.Tensor, sq: torch.Tensor, k: int,
            err: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The exact k-NN graph from reduced-precision candidates (each within `err` of the truth per row).

    Every non-candidate is at least `floor` = (largest candidate's coarse distance) − err away. A row
    whose candidates' float32 distances have their k-th below the floor and apart from the (k+1)-th by
    twice the float32 bound is decided; the others (close calls, concentrated data) are searched again
    with float32 products, as the float32 search does.
    """
    n, kk = cand.shape
    d32, order = torch.sort(_candidate_sq_dist(x, sq, cand), dim=1)
    cand = torch.gather(cand, 1, order)
    tol = distance_error(x, sq, "float32")
    if kk == n - 1:  # every other row is a candidate: their float32 distances decide, as in the float32 search
        return _finish(x, torch.arange(n, device=x.device), d32, cand, k, tol)
    floor = coarse.amax(dim=1).double() - err
    kth = d32[:, k - 1].double()
    certain = (kth + tol < floor) & (d32[:, k].double() - kth > 2 * tol)
    nbrs, dist = cand[:, :k].clone(), d32[:, :k].clone()
    again = torch.nonzero(~certain, as_tuple=False).flatten()
    if again.numel():
        d, i = _row_candidates(x, sq, again, kk)
        nbrs[again], dist[again] = _finish(x, again, d, i, k, tol)
    return nbrs, dist


def exact_knn_graph(
    x: torch.Tensor, k: int, height: int | None = None, extra: int | None = None, gram_hook: GramHook | None = None,
    precision: str = "float32", stream: bool | None = None,
) -> KnnGraph:
    """The exact k-NN graph of the rows of x with the squared distances the search ranked by (see `exact_knn`);
    `stream` forces (True) or forbids (False) the strip-by-strip merge of large sets (default: by memory)."""
    n = x.shape[0]
    if n < k + 1:
        raise ValueError(f"need at least k+1={k + 1} samples for a {k}-NN graph, got {n}")
    precision = resolve_precision(precision, x.device, gram_hook)
    if precision == "auto":
        precision = auto_precision(x, k)
    reduced = precision != "float32" and x.dtype == torch.float32  # a float64 input keeps its own precision
    wider = max(4 * k, 16) if reduced else max(k, 4)  # a coarser bound needs more candidates
    kk = min(n - 1, k + (extra if extra is not None else wider))
    if not reduced:
        approx_d, cand, sq = candidates(x, kk, height, gram_hook, None, stream)
        return KnnGraph(*_finish(x, torch.arange(n, device=x.device), approx_d, cand, k,
                                 distance_error(x, sq, "float32")))
    # reduced precision: candidates of the centred rows (distances do not move; the bound, relative to the
    # norms, shrinks), then the float32 check on x itself
    xc = centred(x)
    lo = xc.bfloat16() if precision == "bfloat16" else xc
    approx_d, cand, sq_c = candidates(xc, kk, height, None, partial(_reduced_gram, lo, precision=precision), stream)
    err = distance_error(xc, sq_c, precision) + centring_error(sq_c)
    return KnnGraph(*_refine(x, cand, approx_d, (x * x).sum(dim=1), k, err))


def exact_knn(
    x: torch.Tensor, k: int, height: int | None = None, extra: int | None = None, gram_hook: GramHook | None = None,
    precision: str = "float32", stream: bool | None = None,
) -> torch.Tensor:
    """Indices (N×k, int64) of each row's k nearest other rows by Euclidean distance.

    The set is exact (the graph depends on nothing else): self is excluded by index and ties at the
    k-th place go to the lower index. Within a row, neighbours are ordered by computed distance.
    `gram_hook(a, G)` sees every Gram strip G = x[a:a+h] @ x[a:].T as it is made (before it is
    overwritten), so callers can reuse the products; on CPU it is called from several threads at once.
    `precision` (see the module docstring) changes the cost, never the graph.
    """
    return exact_knn_graph(x, k, height, extra, gram_hook, precision, stream).nbrs
