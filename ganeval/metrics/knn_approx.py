"""Approximate k-nearest neighbours with pynndescent (IMD's opt-in `knn="approx"`), and recall checks.

Exact kNN costs O(N²·D); NN-descent is near-linear in N, so it is the choice for large sets
(50k+). Its build parameters below were chosen so that recall of the true 5-NN is >= 0.95 on
2048-d pool3-like features, on scikit-learn digit pixels and on easy low-dimensional data
(`scripts/knn_recall.py` measures it).
"""

from __future__ import annotations

import warnings

import numpy as np

# Build parameters for pynndescent.NNDescent, chosen with scripts/knn_recall.py (see its output):
# on 2048-d pool3-like features the true-5-NN recall is 0.99 at N = 10k and 0.987 at N = 50k with
# these, against 0.98 / 0.94 with a candidate list of 20 and max_candidates 40 (0.96 / 0.88 with
# max_candidates 20). NN-descent keeps `n_neighbors` candidates per point; a list well above k lifts
# the recall of the first k, which is what matters here. The search-graph parameters
# (diversify_prob, pruning_degree_multiplier) do not touch the kNN graph and are left alone; no
# query is made: the index's own neighbor_graph is the answer.
DEFAULT_PARAMS: dict[str, object] = {
    "n_neighbors_factor": 6,  # candidate list = max(n_neighbors_min, factor * k), at most N-1
    "n_neighbors_min": 30,
    "n_trees": 8,
    "n_iters": None,  # pynndescent default: max(5, round(log2 N)), stops early on convergence
    "max_candidates": 60,
    "delta": 0.001,
}


PARAMS_EXPECTED = ("null (the defaults) or a mapping of pynndescent build parameters: n_neighbors_factor, "
                   "n_neighbors_min, n_trees, max_candidates (integers ≥ 1), n_iters (null or an integer ≥ 1), "
                   "delta (a number in [0, 1)), e.g. {n_trees: 2, n_iters: 5}")


def _is_int(v: object, low: int) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and bool(v >= low)


def params_valid(params: object) -> bool:
    """Whether `params` is None or a mapping of some of DEFAULT_PARAMS's keys, each with a value of its kind
    (PARAMS_EXPECTED): the check of IMD's `nndescent` option."""
    from collections.abc import Mapping

    if params is None:
        return True
    if not isinstance(params, Mapping) or not set(params) <= set(DEFAULT_PARAMS):
        return False
    for key, v in params.items():
        if key == "n_iters":
            ok = v is None or _is_int(v, 1)
        elif key == "delta":
            ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and bool(0 <= v < 1)
        else:
            ok = _is_int(v, 1)
        if not ok:
            return False
    return True


def full_params(params: object) -> dict[str, object] | None:
    """The complete build parameters `params` asks for (DEFAULT_PARAMS completed by it, as plain numbers), or None
    when they are the defaults: a config that spells out a default hashes as one that leaves it out."""
    from collections.abc import Mapping

    if params is None:
        return None
    assert isinstance(params, Mapping)
    full = {**DEFAULT_PARAMS, **{str(k): (v if v is None else (float(v) if k == "delta" else int(v)))
                                 for k, v in params.items()}}
    return None if full == DEFAULT_PARAMS else dict(sorted(full.items()))


def _check_input(x: np.ndarray, k: int) -> np.ndarray:
    """Validate (x, k) and return x as a C-contiguous float32 array."""
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must be a 2-D array (N samples × D features), got shape {x.shape}")
    if x.shape[0] < k + 2:
        raise ValueError(f"x has {x.shape[0]} rows; k={k} neighbours need at least k+2={k + 2} rows")
    if x.shape[1] < 1:
        raise ValueError("x has 0 feature columns; pass an N×D array with D >= 1")
    if not np.issubdtype(x.dtype, np.number):
        raise ValueError(f"x must be numeric, got dtype {x.dtype}")
    bad = ~np.isfinite(x).all(axis=1)
    if bad.any():
        raise ValueError(f"x has {int(bad.sum())} rows with NaN or inf; drop or fix them first")
    return np.ascontiguousarray(x, dtype=np.float32)


def brute_force_knn(x: np.ndarray, k: int, rows: np.ndarray | None = None, block: int = 1024) -> np.ndarray:
    """Exact Euclidean k-NN in float64 (self excluded by index, ties to the lower index) of `rows` (default all).

    The ground truth that recall is measured against; blocked so no N×N matrix is held at once.
    Returns a len(rows)×k int64 array.
    """
    x64 = np.asarray(x, dtype=np.float64)
    n = x64.shape[0]
    if isinstance(k, bool) or int(k) != k or not 1 <= k < n:
        raise ValueError(f"k must be an integer in [1, N-1] = [1, {n - 1}], got {k!r}")
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
    sq = np.einsum("ij,ij->i", x64, x64)
    out = np.empty((rows.size, k), dtype=np.int64)
    for start in range(0, rows.size, block):
        r = rows[start : start + block]
        d2 = sq[r, None] + sq[None, :] - 2.0 * (x64[r] @ x64.T)
        d2[np.arange(r.size), r] = np.inf  # self, by index
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        pd = np.take_along_axis(d2, part, axis=1)
        order = np.lexsort((part, pd), axis=1)  # by distance, then lower index
        best = np.take_along_axis(part, order, axis=1)
        # argpartition picks arbitrarily among points tied with the k-th distance: redo those rows
        kth = np.take_along_axis(d2, best[:, -1:], axis=1)
        for i in np.flatnonzero((d2 <= kth).sum(axis=1) > k):
            cand = np.flatnonzero(d2[i] <= kth[i, 0])
            best[i] = cand[np.lexsort((cand, d2[i, cand]))][:k]
        out[start : start + r.size] = best
    return out


def knn_recall(found: np.ndarray, true: np.ndarray, x: np.ndarray | None = None, rows: np.ndarray | None = None) -> float:
    """Fraction of the true k-NN found: rows of `found` (≥ k columns) against rows of `true` (N×k).

    Without `x`, by index. With `x` (and `rows`, the points the rows of `found`/`true` belong to,
    default all), tie-aware: a found neighbour counts if it is no farther than the true k-th one,
    so data with tied distances (integer pixels) is not penalised for picking an equal neighbour.
    """
    found = np.asarray(found)
    true = np.asarray(true)
    if found.shape[0] != true.shape[0]:
        raise ValueError(f"found has {found.shape[0]} rows but true has {true.shape[0]}; pass the same points")
    k = true.shape[1]
    if x is None:
        hits = (found[:, :, None] == true[:, None, :]).any(axis=1)
        return float(hits.mean())
    x64 = np.asarray(x, dtype=np.float64)
    rows = np.arange(found.shape[0]) if rows is None else np.asarray(rows)
    hits = 0
    for start in range(0, rows.size, 512):  # chunks: the gathered neighbours are chunk×k×D
        r, f = rows[start : start + 512], found[start : start + 512, :k]
        q = x64[r]
        d_found = np.linalg.norm(x64[f] - q[:, None, :], axis=2)
        d_kth = np.linalg.norm(x64[true[start : start + 512, -1]] - q, axis=1)
        ok = (d_found <= d_kth[:, None] * (1 + 1e-9)) & (f != r[:, None])
        hits += int(np.minimum(ok.sum(axis=1), k).sum())
    return hits / (k * found.shape[0])


def approx_knn(
    x: np.ndarray,
    k: int,
    seed: int = 0,
    n_jobs: int | None = 1,
    params: dict[str, object] | None = None,
) -> np.ndarray:
    """Approximate N×k int64 neighbour indices (Euclidean, self excluded, rows sorted by distance).

    Builds a pynndescent NN-descent graph (no search index, no queries) with `DEFAULT_PARAMS`
    (override any of them with `params`), which reach >= 0.95 recall of the true 5-NN on 2048-d
    pool3-like features (0.99 at N = 10k, 0.987 at 50k) and on digit pixels. pynndescent is numba code: the FIRST call in each
    process compiles it, which takes 30–45 s on a quiet 2-core CPU (later calls do not pay it).
    `seed` fixes pynndescent's random state; with `n_jobs=1` (the default) the same seed gives the
    same graph. `n_jobs=None` uses all numba threads: its graph differs from n_jobs=1's, its
    run-to-run determinism is not guaranteed, and on 2 cores it was no faster. Ties in distance
    are ordered by lower index.
    """
    x = _check_input(x, k)
    k = int(k)
    p = dict(DEFAULT_PARAMS)
    if params:
        unknown = set(params) - set(DEFAULT_PARAMS)
        if unknown:
            raise ValueError(f"params has unknown keys {sorted(unknown)}; allowed: {sorted(DEFAULT_PARAMS)}")
        if not params_valid(params):
            raise ValueError(f"params must be {PARAMS_EXPECTED}, got {params!r}")
        p.update(params)
    n = x.shape[0]
    n_neighbors = min(n - 1, max(int(p["n_neighbors_min"]), int(p["n_neighbors_factor"]) * k))  # type: ignore[call-overload]

    try:  # heavy (numba); imported only when approx kNN is asked for
        from pynndescent import NNDescent
    except ImportError as e:
        raise ImportError("knn='approx' needs pynndescent, an optional dependency: pip install 'ganeval[approx]' "
                          "(or knn='exact')") from e

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Failed to correctly find n_neighbors")
        index = NNDescent(
            x,
            metric="euclidean",
            n_neighbors=n_neighbors,
            n_trees=p["n_trees"],
            n_iters=p["n_iters"],
            max_candidates=p["max_candidates"],
            delta=p["delta"],
            random_state=int(seed),
            n_jobs=n_jobs,
            low_memory=True,
            compressed=False,
        )
        idx, dist = index.neighbor_graph
    idx = np.asarray(idx, dtype=np.int64)
    dist = np.asarray(dist, dtype=np.float64)
    return _finish(x, idx, dist, k)


def _finish(x: np.ndarray, idx: np.ndarray, dist: np.ndarray, k: int) -> np.ndarray:
    """Drop self and missing (-1) entries, order rows by (distance, index), keep k; repair short rows exactly."""
    n = idx.shape[0]
    invalid = (idx < 0) | (idx == np.arange(n)[:, None])
    dist = np.where(invalid, np.inf, dist)
    idx = np.where(invalid, n, idx)  # sorts after every valid index at equal (infinite) distance
    order = np.lexsort((idx, dist), axis=1)
    idx = np.take_along_axis(idx, order, axis=1)[:, :k]
    short = np.flatnonzero((idx >= n).any(axis=1))
    if short.size:  # rows where NN-descent found fewer than k others: compute them exactly
        idx[short] = _exact_rows(x, short, k)
    return np.ascontiguousarray(idx)


def _exact_rows(x: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """Exact k-NN of the given rows against all of x (the repair for rows NN-descent left short)."""
    return brute_force_knn(x, k, rows=rows)
