"""Exact k-nearest-neighbour graphs by blocked matrix products (never an N×N matrix at once).

Distances come from Gram strips x[a:a+h]·x[a:]ᵀ (the upper triangle only, so the symmetric product
costs about half of a general one), computed independently, on all cores on CPU. Rows whose k-th and
(k+1)-th candidates are too close to tell apart in that precision are re-ranked by exact float64
distances with ties broken by the lower index, so the graph is deterministic, duplicates included.

`precision="bfloat16"` (CPU or GPU) or `"tf32"` (CUDA) forms the candidate Gram products of the centred rows
in reduced precision; a bound on their error from the row norms and the precision used widens the certainty test,
and the rows it cannot certify are searched again in float32: the graph is the same as the float32
search's. The bound is relative to the row norms (|x_i||x_j|·2u, u = 2⁻⁸ for bfloat16, whose CPU products
also round their outputs to bfloat16), hence the centring: on 3000 non-negative 512-d rows it cut the rows
searched again from 2618 to 66 (pool3-like: 85 to 37), though well-separated clusters, whose norms are their
offsets, are still searched again in full. Without bfloat16 units (an AMD EPYC) the search takes 5–8× longer
than float32, so float32 stays the default; reduced precision is opt-in, and `"auto"` picks it only where a
start-up product measures it at least twice as fast as float32 (`measure_precision`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import torch

from ganeval.metrics.linalg import gram_strip, matmul, strip_height
from ganeval.metrics.parallel import cpu_workers, device_map

GramHook = Callable[[int, torch.Tensor], None]


@dataclass(frozen=True)
class KnnGraph:
    """A set's k-NN graph: neighbour indices (N×k, nearest first) and, from an exact search, the squared
    distances it ranked them by (each within `distance_error(x, sq, "float32")` of the truth), which other
    metrics reuse as k-NN radii instead of measuring them again."""

    nbrs: torch.Tensor
    sq_dist: torch.Tensor | None = None


PRECISIONS = ("float32", "bfloat16", "tf32", "auto")
# unit roundoff of each product precision: inputs rounded to it (and bfloat16 outputs too)
ROUNDOFF = {"bfloat16": 2.0**-8, "tf32": 2.0**-11}
PROBE_SHAPE = (256, 512, 256)  # the start-up product: small, since bfloat16 without matrix units is ~400× slower
CUDA_PROBE_SHAPE = (4096, 2048, 4096)  # on a GPU the small one would time the launch, not the product
AUTO_SPEEDUP = 2.0  # a reduced precision is considered only this much faster than float32
AUTO_SAMPLE_ROWS = 256  # rows whose certificate `auto` tries on the data at hand before it commits
AUTO_MIN_ROWS = 20000  # below this a search is cheap (and launch-bound on a GPU): auto keeps float32
AUTO_GAIN = 0.8  # reduced precision is taken where its expected cost is at most this share of float32's
_measured: dict[str, str] = {}
_ratios: dict[str, float] = {}  # device -> product time of the chosen precision / float32's


def _product_seconds(a: torch.Tensor, b: torch.Tensor, repeats: int) -> float:
    """The fastest of `repeats` timed products a @ b (after one untimed), synchronised on CUDA."""
    import time

    def once() -> float:
        if a.device.type == "cuda":
            torch.cuda.synchronize(a.device)
        t = time.perf_counter()
        a @ b
        if a.device.type == "cuda":
            torch.cuda.synchronize(a.device)
        return time.perf_counter() - t

    once()
    return min(once() for _ in range(repeats))


def measure_precision(device: torch.device) -> str:
    """The candidate-product precision `auto` uses on `device`, measured once per process: bfloat16 (or TF32 on
    CUDA) where its product of the probe shape runs at least AUTO_SPEEDUP× faster than float32's (matrix units:
    AMX, AVX512-BF16, tensor cores), else float32. Decided by timing, not by the processor's name."""
    key = str(device)
    if key not in _measured:
        m, d, n = CUDA_PROBE_SHAPE if device.type == "cuda" else PROBE_SHAPE
        g = torch.Generator().manual_seed(0)
        a, b = torch.randn(m, d, generator=g).to(device), torch.randn(d, n, generator=g).to(device)
        times = {"float32": _product_seconds(a, b, 5)}
        if device.type == "cuda":
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                times["tf32"] = _product_seconds(a, b, 5)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
        lo_a, lo_b = a.bfloat16(), b.bfloat16()
        times["bfloat16"] = _product_seconds(lo_a, lo_b, 1)
        if times["bfloat16"] * AUTO_SPEEDUP <= times["float32"]:  # worth a closer look
            times["bfloat16"] = _product_seconds(lo_a, lo_b, 5)
        best = min(times, key=times.get)  # type: ignore[arg-type]
        _measured[key] = best if times[best] * AUTO_SPEEDUP <= times["float32"] else "float32"
        _ratios[key] = times[_measured[key]] / times["float32"]
    return _measured[key]


def _reduced_product(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    """a @ b.T in the reduced precision (inputs already rounded for bfloat16), as float32."""
    if precision == "tf32":
        old = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return a @ b.T
        finally:
            torch.backends.cuda.matmul.allow_tf32 = old
    return (a @ b.T).float()


def undecided_share(x: torch.Tensor, k: int, precision: str, rows: int = AUTO_SAMPLE_ROWS) -> float:
    """The share of rows the reduced-precision certificate (`_refine`'s test) leaves undecided, tried on `rows`
    evenly spaced rows against the whole set: those would be searched again in float32."""
    n = x.shape[0]
    kk = min(n - 1, k + max(4 * k, 16))
    pick = torch.linspace(0, n - 1, min(rows, n), device=x.device).round().long().unique()
    xc = centred(x)
    sq_c = (xc * xc).sum(dim=1)
    lo = xc.bfloat16() if precision == "bfloat16" else xc
    keys = _reduced_product(lo[pick], lo, precision).mul_(-2.0).add_(sq_c[None, :])
    keys[torch.arange(pick.shape[0], device=x.device), pick] = float("inf")
    coarse, cand = torch.topk(keys, kk, dim=1, largest=False)
    coarse = coarse + sq_c[pick, None]
    err = (distance_error(xc, sq_c, precision) + centring_error(sq_c))[pick]
    sq = (x * x).sum(dim=1)
    d32 = sq[pick, None] + sq[cand] - 2 * torch.bmm(x[pick, None, :], x[cand].transpose(1, 2))[:, 0]
    d32 = torch.sort(d32, dim=1).values.double()
    tol = distance_error(x, sq, "float32")[pick]
    kth = d32[:, k - 1]
    certain = (kth + tol < coarse.amax(dim=1).double() - err) & (d32[:, k] - kth > 2 * tol)
    return 1.0 - float(certain.double().mean())


def auto_precision(x: torch.Tensor, k: int) -> str:
    """`auto`'s choice for this search: a reduced precision only where the device runs its products at least
    AUTO_SPEEDUP× faster (`measure_precision`) and, on this data, the rows its certificate leaves undecided
    (`undecided_share`, each searched again at about twice a symmetric search's per-row cost) keep the whole
    search at most AUTO_GAIN of float32's. Small sets stay float32."""
    choice = measure_precision(x.device)
    if choice == "float32" or x.dtype != torch.float32 or x.shape[0] < AUTO_MIN_ROWS:
        return "float32"
    again = undecided_share(x, k, choice)
    return choice if _ratios[str(x.device)] + 2 * again <= AUTO_GAIN else "float32"


def resolve_precision(precision: str, device: torch.device, gram_hook: GramHook | None) -> str:
    """The product precision to use (`auto` stays `auto` without a hook: `auto_precision` decides on the data); reduced precision refused
    where the Gram strips are shared (KID reuses them, so they must be float32) or unsupported (tf32 off CUDA)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "auto":  # decided per search on its data (`auto_precision`)
        return "float32" if gram_hook is not None else "auto"
    if precision != "float32" and gram_hook is not None:
        raise ValueError(f"precision={precision!r} cannot share its Gram strips (gram_hook): they are not float32")
    if precision == "tf32" and device.type != "cuda":
        raise ValueError("precision='tf32' needs a CUDA device; use 'bfloat16' or 'float32' on CPU")
    return precision


def _reduced_gram(lo: torch.Tensor, a: int, e: int, precision: str) -> torch.Tensor:
    """The Gram strip of rows a..e from reduced-precision products, as float32."""
    return _reduced_product(lo[a:e], lo[a:], precision)


def distance_error(x: torch.Tensor, sq: torch.Tensor, precision: str) -> torch.Tensor:
    """Per row i, a bound (float64) on |computed − true| squared distance to any row j.

    float32: a few ulps of (|x_i|² + max|x_j|²) per √D terms (the long-standing test). Reduced precision:
    inputs rounded with unit roundoff u (|x̃ − x| ≤ u|x|), so |x̃_i·x̃_j − x_i·x_j| ≤ (2u + u²)|x_i||x_j|;
    the float32 accumulation adds at most γ_D|x̃_i||x̃_j| (γ_D = D·u₃₂/(1 − D·u₃₂)) and a bfloat16 output
    u|x̃_i·x̃_j|; the distance |x_i|² + |x_j|² − 2g doubles the product's error and adds the norms' own γ_D.
    """
    d = x.shape[1]
    sq64 = sq.double()
    eps32 = torch.finfo(torch.float32).eps
    if precision == "float32":
        eps = torch.finfo(x.dtype).eps
        return 4.0 * eps * d**0.5 * (sq64 + sq64.max())
    u = ROUNDOFF[precision]
    u32 = eps32 / 2
    gamma = d * u32 / (1 - d * u32)
    out_u = u if precision == "bfloat16" else u32
    norm, top = sq64.sqrt(), sq64.max().sqrt()
    grown = (1 + u) ** 2
    product = (2 * u + u * u + grown * (gamma + out_u * (1 + gamma))) * norm * top
    return 2 * product + gamma * (sq64 + sq64.max()) + 4 * eps32 * (sq64 + sq64.max())


def centred(x: torch.Tensor) -> torch.Tensor:
    """x less its column means (taken in float64, rounded to x's dtype): the same distances, smaller norms."""
    return x - x.mean(dim=0, dtype=torch.float64).to(x.dtype)


def centring_error(sq_c: torch.Tensor) -> torch.Tensor:
    """Per row i, a bound (float64) on how far the centring's rounding moves a squared distance to any row j.

    Subtracting any fixed vector keeps distances exactly; rounding c = x − μ moves each row by at most u₃₂|c|,
    so a distance by η ≤ u₃₂(|c_i| + |c_j|) and its square by η(2d + η) ≤ 3u₃₂(|c_i| + max|c_j|)² (d ≤ |c_i| + |c_j|).
    """
    u32 = torch.finfo(torch.float32).eps / 2
    norm = sq_c.double().sqrt()
    return 3 * u32 * (1 + 4 * u32) * (norm + norm.max()) ** 2


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


def _candidates(x: torch.Tensor, kk: int, height: int | None, gram_hook: GramHook | None,
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
        extra_d, extra_i = _first_per_row(*(torch.cat(z) for z in zip(*extras)), n, kk)
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
    as `_candidates`: every pair's distance computed once, pairs within a row's bound (ties included) kept."""
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
        approx_d, cand, sq = _candidates(x, kk, height, gram_hook, None, stream)
        return KnnGraph(*_finish(x, torch.arange(n, device=x.device), approx_d, cand, k,
                                 distance_error(x, sq, "float32")))
    # reduced precision: candidates of the centred rows (distances do not move; the bound, relative to the
    # norms, shrinks), then the float32 check on x itself
    xc = centred(x)
    lo = xc.bfloat16() if precision == "bfloat16" else xc
    approx_d, cand, sq_c = _candidates(xc, kk, height, None, partial(_reduced_gram, lo, precision=precision), stream)
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
