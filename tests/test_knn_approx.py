"""Approximate kNN (pynndescent) recall and determinism, the exact brute force it is checked against,
and the pool3-like synthetic features."""

from __future__ import annotations

import numpy as np
import pytest

from ganeval.metrics.knn_approx import _finish, approx_knn, brute_force_knn, knn_recall
from ganeval.metrics.synthetic import pool3_like


def _digits() -> np.ndarray:
    from sklearn.datasets import load_digits

    return load_digits().data.astype(np.float32)


# ------------------------------------------------------------------------------- exact ground truth
def test_brute_force_matches_sklearn_on_continuous_data() -> None:
    from sklearn.neighbors import NearestNeighbors

    x = np.random.default_rng(3).standard_normal((500, 12))
    ours = brute_force_knn(x, 5, block=128)  # several blocks
    ref = NearestNeighbors(n_neighbors=6, algorithm="brute").fit(x).kneighbors(x, return_distance=False)
    assert ours.dtype == np.int64 and ours.shape == (500, 5)
    np.testing.assert_array_equal(ours, ref[:, 1:])  # no ties: sklearn's first column is the point itself


def test_brute_force_excludes_self_by_index_and_breaks_ties_by_lower_index() -> None:
    # Points 0 and 3 coincide; 1, 2 and 4 are all at distance 1 from them.
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [-1.0, 0.0], [5.0, 5.0]])
    nb = brute_force_knn(x, 3)
    assert nb[0].tolist() == [3, 1, 2]  # the duplicate first (distance 0), then ties by index
    assert nb[3].tolist() == [0, 1, 2]
    rows = brute_force_knn(x, 3, rows=np.array([3, 0]))
    np.testing.assert_array_equal(rows, nb[[3, 0]])


def test_brute_force_rejects_bad_k() -> None:
    with pytest.raises(ValueError, match="k must be"):
        brute_force_knn(np.zeros((4, 2)), 4)


def test_knn_recall_by_index_and_tie_aware() -> None:
    true = np.array([[1, 2], [0, 2], [0, 1]])
    assert knn_recall(true, true) == 1.0
    assert knn_recall(np.array([[1, 0], [2, 1], [1, 0]]), true) == pytest.approx(4 / 6)
    # Point 0 has neighbours 1 and 2 at the same distance: with x, either one counts as correct.
    x = np.array([[0.0], [1.0], [-1.0], [10.0]])
    truth = brute_force_knn(x, 1)
    assert truth[0, 0] == 1
    assert knn_recall(np.array([[2], [0], [0], [1]]), truth) == 0.75  # by index: row 0 missed
    assert knn_recall(np.array([[2], [0], [0], [1]]), truth, x=x) == 1.0  # tie-aware
    assert knn_recall(np.array([[3], [0], [0], [1]]), truth, x=x) == 0.75
    with pytest.raises(ValueError, match="rows"):
        knn_recall(true[:2], true)


# ----------------------------------------------------------------------------- post-processing (no numba)
def test_finish_drops_self_and_missing_sorts_and_repairs_short_rows() -> None:
    x = np.array([[0.0], [1.0], [3.0], [6.0], [10.0]], dtype=np.float32)
    # A fake NN-descent graph: self in various places, -1 for neighbours not found, unsorted rows.
    idx = np.array([[0, 2, 1], [1, 0, 2], [2, 3, 1], [3, -1, -1], [4, 3, 2]])
    dist = np.array([[0, 3, 1], [0, 1, 2], [0, 3, 2], [0, 9, 9], [0, 4, 7]], dtype=np.float64)
    out = _finish(x, idx, dist, 2)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [[1, 2], [0, 2], [1, 3], [2, 4], [3, 2]])  # row 3 repaired exactly


# ------------------------------------------------------------------------------------ input validation
@pytest.mark.parametrize(
    ("x", "k", "match"),
    [
        (np.zeros(10), 5, "2-D"),
        (np.zeros((6, 3)), 5, "at least k\\+2"),
        (np.zeros((10, 0)), 2, "0 feature columns"),
        (np.zeros((10, 3)), 0, "k must be a positive integer"),
        (np.zeros((10, 3)), 2.5, "k must be a positive integer"),
        (np.array([[np.nan, 0.0]] * 2 + [[0.0, 0.0]] * 8), 2, "2 rows with NaN or inf"),
    ],
)
def test_approx_knn_rejects_bad_input_before_building(x: np.ndarray, k: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        approx_knn(x, k)


def test_approx_knn_rejects_unknown_params() -> None:
    with pytest.raises(ValueError, match="unknown keys"):
        approx_knn(np.zeros((10, 3)), 2, params={"n_neighbours": 10})


# --------------------------------------------------------------------------- pynndescent (numba: slow)
def _check_graph(x: np.ndarray, nb: np.ndarray, k: int) -> None:
    """N×k int64, no self, distinct per row, rows non-decreasing in distance."""
    n = x.shape[0]
    assert nb.shape == (n, k) and nb.dtype == np.int64
    assert nb.min() >= 0 and nb.max() < n
    assert not (nb == np.arange(n)[:, None]).any()
    assert all(len(set(r)) == k for r in nb.tolist())
    d = np.linalg.norm(x[nb].astype(np.float64) - x[:, None, :].astype(np.float64), axis=2)
    assert (np.diff(d, axis=1) >= -1e-4 * (1 + d[:, 1:])).all()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["digits", "pool3_like"])
def test_approx_knn_recall_at_least_095(name: str) -> None:
    x = _digits() if name == "digits" else pool3_like(2000, 256, seed=1)
    true = brute_force_knn(x, 5)
    found = approx_knn(x, 5, seed=0)
    _check_graph(x, found, 5)
    recall = knn_recall(found, true, x=x)
    assert recall >= 0.95, f"{name}: recall {recall:.4f} < 0.95"


@pytest.mark.slow
def test_approx_knn_is_deterministic_for_a_seed() -> None:
    x = pool3_like(2000, 256, seed=2)
    a = approx_knn(x, 5, seed=7)
    b = approx_knn(x.copy(), 5, seed=7)
    np.testing.assert_array_equal(a, b)
    k10 = approx_knn(x, 10, seed=7)  # other k: still a valid graph
    _check_graph(x, k10, 10)


@pytest.mark.slow
def test_approx_knn_on_tiny_sets_and_duplicates() -> None:
    rng = np.random.default_rng(5)
    tiny = rng.standard_normal((7, 3)).astype(np.float32)  # k + 2 rows: the smallest allowed
    found = approx_knn(tiny, 5)
    _check_graph(tiny, found, 5)
    assert knn_recall(found, brute_force_knn(tiny, 5), x=tiny) == 1.0
    dup = np.repeat(rng.standard_normal((100, 4)).astype(np.float32), 3, axis=0)  # every point thrice
    found = approx_knn(dup, 5)
    _check_graph(dup, found, 5)
    twins = found[:, :2] // 3 == (np.arange(300) // 3)[:, None]  # the two copies come first
    assert twins.mean() >= 0.95


# ----------------------------------------------------------------------------------------- pool3_like
def test_pool3_like_shape_sign_sparsity_and_seeds() -> None:
    x = pool3_like(1000, 256, seed=0)
    assert x.shape == (1000, 256) and x.dtype == np.float32
    assert x.min() == 0.0 and np.isfinite(x).all()
    assert 0.25 < (x == 0).mean() < 0.55  # ReLU-like share of exact zeros
    np.testing.assert_array_equal(x, pool3_like(1000, 256, seed=0))
    assert not np.array_equal(x, pool3_like(1000, 256, seed=1))
    np.testing.assert_array_equal(pool3_like(5000, 64, seed=3)[:4200], pool3_like(4200, 64, seed=3))  # prefix-stable


def test_pool3_like_is_correlated_and_distribution_seed_moves_it() -> None:
    x = pool3_like(4000, 256, seed=0)
    ev = np.linalg.eigvalsh(np.cov(x, rowvar=False))[::-1]
    assert ev[:64].sum() / ev.sum() > 0.6  # a low-rank structure carries most of the variance
    assert ev[0] / ev.sum() > 5 / 256  # far from isotropic
    same = pool3_like(4000, 256, seed=1)
    other = pool3_like(4000, 256, seed=1, distribution_seed=1)
    gap_same = np.abs(x.mean(0) - same.mean(0)).mean()
    gap_other = np.abs(x.mean(0) - other.mean(0)).mean()
    assert gap_other > 10 * gap_same


@pytest.mark.parametrize(("kw", "match"), [({"n": 0}, "n must"), ({"n": 5, "d": 0}, "d must"), ({"n": 5, "rank": 0}, "rank must")])
def test_pool3_like_rejects_bad_sizes(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        pool3_like(**kw)
