"""The approximate k-NN's checks and its ground truth (ganeval/metrics/knn_approx.py), without building a graph
(pynndescent compiles for 40 s): parameters at their edges, the brute-force k-NN with ties and blocks, recall."""

from __future__ import annotations

import numpy as np
import pytest

from ganeval.metrics import knn_approx as K


@pytest.mark.parametrize("params, ok", [
    (None, True), ({}, True), ({"n_trees": 1}, True), ({"n_trees": 0}, False), ({"n_trees": True}, False),
    ({"n_trees": 2.0}, False), ({"n_trees": np.int64(3)}, True), ({"n_iters": None}, True), ({"n_iters": 1}, True),
    ({"n_iters": 0}, False), ({"delta": 0}, True), ({"delta": 0.999}, True), ({"delta": 1.0}, False),
    ({"delta": -1e-9}, False), ({"delta": True}, False), ({"delta": np.float32(0.5)}, True),
    ({"max_candidates": 1, "n_neighbors_min": 1, "n_neighbors_factor": 1}, True), ({"other": 1}, False),
    ([("n_trees", 2)], False), ({"n_neighbors_factor": np.bool_(True)}, False),
])
def test_build_parameters_are_checked_at_their_edges(params: object, ok: bool) -> None:
    assert K.params_valid(params) is ok


def test_full_parameters_hash_a_spelled_out_default_as_absent() -> None:
    assert K.full_params(None) is None and K.full_params({}) is None
    assert K.full_params({"n_trees": 8, "delta": 0.001}) is None
    got = K.full_params({"n_trees": np.int64(2), "delta": 0})
    assert got == {"delta": 0.0, "max_candidates": 60, "n_iters": None, "n_neighbors_factor": 6,
                   "n_neighbors_min": 30, "n_trees": 2}
    assert list(got) == sorted(got) and type(got["delta"]) is float and type(got["n_trees"]) is int
    assert K.DEFAULT_PARAMS == {"n_neighbors_factor": 6, "n_neighbors_min": 30, "n_trees": 8, "n_iters": None,
                                "max_candidates": 60, "delta": 0.001}


def test_the_input_is_checked_before_a_graph_is_built() -> None:
    x = np.arange(12, dtype=np.int64).reshape(4, 3)
    got = K._check_input(x, 2)
    assert got.dtype == np.float32 and got.flags["C_CONTIGUOUS"]
    cases = [
        (x, 0, r"^k must be a positive integer, got 0$"), (x, True, "k must be a positive integer"),
        (x, 1.5, "k must be a positive integer"), (x, 3, r"^x has 4 rows; k=3 neighbours need at least k\+2=5 rows$"),
        (x[0], 1, r"x must be a 2-D array .*got shape \(3,\)"), (np.zeros((4, 0)), 1, "x has 0 feature columns"),
        (np.array([["a"]] * 4), 1, "x must be numeric, got dtype <U1"),
        (np.array([[0.0], [np.nan], [np.inf], [1.0]]), 1, r"^x has 2 rows with NaN or inf"),
    ]
    for a, k, match in cases:
        with pytest.raises(ValueError, match=match):
            K._check_input(a, k)


def _truth(x: np.ndarray, k: int) -> np.ndarray:
    d = ((x[:, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    return np.array([sorted(range(len(x)), key=lambda j: (d[i, j], j))[:k] for i in range(len(x))])


@pytest.mark.parametrize("block", [1, 2, 1024])
def test_brute_force_knn_orders_ties_by_index(block: int) -> None:
    grid = np.array([[i, j] for i in range(3) for j in range(3)], dtype=np.float64)  # many equal distances
    for k in (1, 2, 4, 8):
        assert np.array_equal(K.brute_force_knn(grid, k, block=block), _truth(grid, k))
    x = np.random.default_rng(0).normal(size=(15, 3))
    assert np.array_equal(K.brute_force_knn(x, 3, block=block), _truth(x, 3))
    assert np.array_equal(K.brute_force_knn(x, 3, rows=np.array([7, 2]), block=block), _truth(x, 3)[[7, 2]])


def test_brute_force_k_is_checked() -> None:
    x = np.zeros((4, 2))
    assert K.brute_force_knn(np.arange(4.0)[:, None], 3).shape == (4, 3)
    for k in (0, 4, True, 2.5):
        with pytest.raises(ValueError, match=r"k must be an integer in \[1, N-1\] = \[1, 3\]"):
            K.brute_force_knn(x, k)


def test_recall_by_index_and_by_distance() -> None:
    true = np.array([[1, 2], [0, 2], [0, 1]])
    assert K.knn_recall(np.array([[1, 2], [2, 0], [1, 1]]), true) == pytest.approx(5 / 6)
    assert K.knn_recall(np.array([[2, 1, 9]]), true[:1]) == 1.0  # more columns than k: any may hit
    x = np.array([[0.0], [1.0], [-1.0], [5.0]])  # row 0's two nearest, 1 and 2, tie at distance 1
    true = np.array([[1, 2]])
    assert K.knn_recall(np.array([[2, 1]]), true, x, rows=np.array([0])) == 1.0
    assert K.knn_recall(np.array([[3, 1]]), true, x, rows=np.array([0])) == 0.5
    assert K.knn_recall(np.array([[0, 1]]), true, x, rows=np.array([0])) == 0.5  # itself never counts
    tied = np.array([[0.0], [1.0], [1.0], [2.0]])
    truth = np.array([[1, 2], [2, 0], [1, 0], [1, 2]])
    assert K.knn_recall(np.array([[2, 1], [2, 3], [1, 3], [2, 1]]), truth, tied) == 1.0
    with pytest.raises(ValueError, match="found has 1 rows but true has 3; pass the same points"):
        K.knn_recall(np.zeros((1, 2)), np.zeros((3, 2)))
