"""Candidate neighbours of an exact k-NN search from blocked Gram strips (never an N×N matrix at once).

Distances come from Gram strips x[a:a+h]·x[a:]ᵀ (the upper triangle only, so the symmetric product
costs about half of a general one), computed independently, on all cores on CPU; `candidates` returns each
row's kk nearest by those distances, which `ganeval.metrics.knn` then certifies or re-ranks exactly.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

from ganeval.metrics.linalg import gram_strip, strip_height
from ganeval.metrics.parallel import cpu_workers, device_map

GramHook = Callable[[int, torch.Tensor], None]


def _strip(x: torch.Tensor, sq: torch.Tensor, a: int, e: int, kk: int, hook: GramHook | None,
           bound: torch.Tensor | None, gram: Callable[[int, int], torch.Tensor] | None = None):
    """One Gram strip G = x[a:e]·x[a:]ᵀ. Returns the kk nearest candidates (distance, index) of rows a..e
    among columns ≥ a, and the candidates it offers the later rows j ≥ e among rows a..e: the kk nearest
    of each (kk×(n−e) arrays) when `bound` is None, else (distance, row j, index) of every pair within
    the row's `bound` on its kk-th nearest distance (few: the bound comes from the head strips)."""
    n = x.shape[0]
    g = gram_strip(x, a, e) if gram is None else gram(a, e)
    if hook is not None:
        hook(a, g)
    keys = g.mul_(-2.0).add_(sq[None, a:])  # |x_j|² − 2 x_i·x_j: row i's distances less |x_i|², in place
    keys[:, : e - a].fill_diagonal_(float("inf"))  # self excluded by index, not by distance
    d_row, i_row = torch.topk(keys, min(kk, n - a), dim=1, largest=False, sorted=False)
    d_row.add_(sq[a:e, None])
    if e == n:
        return d_row, i_row + a, None
    right = keys[:, e - a :].add_(sq[a:e, None])  # full distances of rows a..e to the rows after them
    if bound is None:
        d_col, i_col = torch.topk(right, min(kk, e - a), dim=0, largest=False, sorted=False)
        return d_row, i_row + a, (d_col.T, i_col.T + a)
    ii, jj = torch.nonzero(right <= bound[None, e:], as_tuple=True)
    return d_row, i_row + a, (right[ii, jj], jj + e, ii + a)


def _first_per_row(d: torch.Tensor, rows: torch.Tensor, idx: torch.Tensor, n: int, kk: int):
    """The kk smallest (distance, index) pairs of each row from a flat list, inf/−1 padded to n×kk."""
    order = torch.argsort(d, stable=True)
    order = order[torch.argsort(rows[order], stable=True)]
    r = rows[order]
    counts = torch.bincount(r, minlength=n)
    pos = torch.arange(r.numel(), device=r.device) - (torch.cumsum(counts, 0) - counts)[r]
    keep = pos < kk
    out_d = torch.full((n, kk), float("inf"), dtype=d.dtype, device=d.device)
    out_i = torch.full((n, kk), -1, dtype=torch.long, device=d.device)
    out_d[r[keep], pos[keep]] = d[order][keep]
    out_i[r[keep], pos[keep]] = idx[order][keep]
    return out_d, out_i


def candidates(x: torch.Tensor, kk: int, height: int | None, gram_hook: GramHook | None,
                gram: Callable[[int, int], torch.Tensor] | None = None, stream: bool | None = None):
    """The `kk` nearest candidates of every row by Gram-based squared distance, from upper-triangle strips.

    First two taller "head" strips (run at once) give every later row its kk nearest
    among their rows, hence a bound on its kk-th nearest distance; the other strips (independent, in
    parallel on CPU) then pass on only the pairs within that bound instead of a column-wise top-k,
    which costs ~4× a row-wise one on CPU. Each pair's distance is computed once, so the bound holds for
    the very numbers it filters. Large sets, where those pairs would not fit in memory at once
    (`held_pairs_bytes` > STREAM_ABOVE_BYTES, or `stream=True`), merge them strip by strip instead
    (`_streamed_candidates`).
    """
    n = x.shape[0]
    sq = (x * x).sum(dim=1)
    h = strip_height(n, x.device) if height is None else height
    h = max(1, min(h, strip_max_elements(x.device) // n)) if height is None else h
    if stream if stream is not None else held_pairs_bytes(n, kk, h) > STREAM_ABOVE_BYTES:
        return _streamed_candidates(x, sq, kk, h, gram_hook, gram)
    # two heads of 2h rows whatever the worker count, so the strips (and KID's sums over them) are the same
    heads = [(a, min(a + 2 * h, n)) for a in range(0, min(n, 4 * h), 2 * h)]
    parts = heads + [(a, min(a + h, n)) for a in range(heads[-1][1], n, h)]
    own_d = torch.full((n, kk), float("inf"), dtype=x.dtype, device=x.device)
    own_i = torch.full((n, kk), -1, dtype=torch.long, device=x.device)
    head_d = torch.full((n, len(heads), kk), float("inf"), dtype=x.dtype, device=x.device)
    head_i = torch.full((n, len(heads), kk), -1, dtype=torch.long, device=x.device)
    extras: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def run(t: int, bound: torch.Tensor | None = None) -> None:
        a, e = parts[t]
        d_row, i_row, col = _strip(x, sq, a, e, kk, gram_hook, bound, gram)
        own_d[a:e, : d_row.shape[1]], own_i[a:e, : i_row.shape[1]] = d_row, i_row
        if col is not None and t < len(heads):
            head_d[e:, t, : col[0].shape[1]], head_i[e:, t, : col[1].shape[1]] = col
        elif col is not None:
            extras.append(col)  # list.append is atomic: safe from the worker threads

    device_map(run, range(len(heads)), x.device)
    # a head's kk-th nearest among its rows bounds each later row's kk-th nearest distance
    kth = head_d.amax(dim=2) if heads[0][1] - heads[0][0] >= kk else torch.full_like(head_d[:, :, 0], float("inf"))
    device_map(partial(run, bound=kth.amin(dim=1)), range(len(heads), len(parts)), x.device)
    pieces_d, pieces_i = [own_d, head_d.reshape(n, -1)], [own_i, head_i.reshape(n, -1)]
    if extras:
        cat_d, cat_rows, cat_i = (torch.cat(z) for z in zip(*extras))
        extra_d, extra_i = _first_per_row(cat_d, cat_rows, cat_i, n, kk)
        pieces_d.append(extra_d)
        pieces_i.append(extra_i)
    all_d, all_i = torch.cat(pieces_d, dim=1), torch.cat(pieces_i, dim=1)
    best_d, pos = torch.topk(all_d, kk, dim=1, largest=False, sorted=False)
    return best_d, torch.gather(all_i, 1, pos), sq


# above this estimate of the pairs the head-bound filter would hold at once (its peak memory is several times
# the estimate: 15.7 GiB RSS at 150k×256 for 1.9 GiB estimated), candidates are merged strip by strip
STREAM_ABOVE_BYTES = 1 << 28
STRIP_MAX_ELEMENTS = 1 << 28  # a strip of a large set holds at most this many Gram entries (1 GiB in float32)
CUDA_STRIP_MAX_ELEMENTS = 1 << 30  # on a GPU with room for it, 4 GiB: 1073-row strips at 1M rows, not 268


def strip_max_elements(device: torch.device) -> int:
    """Gram entries a strip may hold: more on a GPU with at least 32 GiB free (fewer, taller, faster products)."""
    if device.type == "cuda" and torch.cuda.mem_get_info(device)[0] >= 32 * 2**30:
        return CUDA_STRIP_MAX_ELEMENTS
    return STRIP_MAX_ELEMENTS


def held_pairs_bytes(n: int, kk: int, h: int) -> int:
    """The memory of the pairs the head-bound filter passes on for a later merge (20 bytes each): a later
    row meets about kk·n/(4h) rows within the kk-th nearest distance among the 4h head rows."""
    return 20 * kk * n * max(0, n - 4 * h) // (4 * h)


def _merge_rows(best_d: torch.Tensor, best_i: torch.Tensor, d: torch.Tensor, rows: torch.Tensor,
                idx: torch.Tensor) -> None:
    """Merge candidate pairs (distance d, row, index) into the running kk best of their rows, in place."""
    if rows.numel() == 0:
        return
    kk = best_d.shape[1]
    aff = torch.unique(rows)
    flat_d = torch.cat([best_d[aff].flatten(), d])
    flat_r = torch.cat([torch.arange(aff.shape[0], device=aff.device).repeat_interleave(kk),
                        torch.searchsorted(aff, rows)])
    flat_i = torch.cat([best_i[aff].flatten(), idx])
    best_d[aff], best_i[aff] = _first_per_row(flat_d, flat_r, flat_i, aff.shape[0], kk)


def _streamed_candidates(x: torch.Tensor, sq: torch.Tensor, kk: int, h: int, gram_hook: GramHook | None,
                         gram: Callable[[int, int], torch.Tensor] | None):
    """The kk nearest candidates of every row with memory bounded by a few strips and n×kk: the upper-
    triangle strips in waves (one per worker), each strip's pairs merged at once into the rows' running kk
    best, whose kk-th distance bounds the pairs the next waves pass on (the first wave passes column-wise
    top-kk). The bound tightens as rows meet more of the set, so the pairs held stay few. Same candidates
    as `candidates`: every pair's distance computed once, pairs within a row's bound (ties included) kept."""
    n = x.shape[0]
    best_d = torch.full((n, kk), float("inf"), dtype=x.dtype, device=x.device)
    best_i = torch.full((n, kk), -1, dtype=torch.long, device=x.device)
    parts = [(a, min(a + h, n)) for a in range(0, n, h)]
    wave = cpu_workers() if x.device.type == "cpu" else 1
    for w in range(0, len(parts), wave):
        bound = None if w == 0 else best_d.amax(dim=1)

        def run(t: int, bound: torch.Tensor | None = bound):
            a, e = parts[t]
            return a, e, _strip(x, sq, a, e, kk, gram_hook, bound, gram)

        for a, e, (d_row, i_row, col) in device_map(run, range(w, min(w + wave, len(parts))), x.device):
            rows = torch.arange(a, e, device=x.device).repeat_interleave(d_row.shape[1])
            _merge_rows(best_d, best_i, d_row.flatten(), rows, i_row.flatten())
            if col is None:
                continue
            if len(col) == 2:  # column-wise top-kk of the rows after the strip
                c_d, c_i = col
                rows = torch.arange(e, n, device=x.device).repeat_interleave(c_d.shape[1])
                _merge_rows(best_d, best_i, c_d.flatten(), rows, c_i.flatten())
            else:
                _merge_rows(best_d, best_i, *col)
    return best_d, best_i, sq
