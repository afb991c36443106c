"""Exact k-NN candidates from Gram strips (ganeval/metrics/knn_candidates.py) equal a brute-force search in float64,
at every strip height, through both the head-bound filter and the streamed merge, with the Gram hook seeing each
strip once."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.metrics import knn_candidates as C


def _brute(x: np.ndarray, kk: int) -> tuple[np.ndarray, np.ndarray]:
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    idx = np.argsort(d, axis=1, kind="stable")[:, :kk]
    return np.take_along_axis(d, idx, axis=1), idx


def _sorted(d: torch.Tensor, i: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    order = torch.argsort(d, dim=1, stable=True)
    return torch.gather(d, 1, order).double().numpy(), torch.gather(i, 1, order).numpy()


@pytest.mark.parametrize("n, kk, height, stream", [
    (23, 4, 1, False), (23, 4, 2, False), (23, 4, 3, False), (23, 4, 5, False), (23, 4, 50, False),
    (23, 22, 3, False), (23, 1, 4, False), (23, 4, None, False), (23, 4, 2, True), (23, 22, 3, True),
    (40, 6, 3, True), (40, 6, 3, False), (9, 8, 1, True), (9, 8, 1, False), (2, 1, 1, False),
])
def test_candidates_are_the_true_nearest(n: int, kk: int, height: int | None, stream: bool) -> None:
    x64 = np.random.default_rng(n * 100 + kk).normal(size=(n, 5))
    x = torch.from_numpy(x64)
    seen: list[tuple[int, tuple[int, ...]]] = []
    d, i, sq = C.candidates(x, kk, height, lambda a, g: seen.append((a, tuple(g.shape))), stream=stream)
    want_d, want_i = _brute(x64, kk)
    got_d, got_i = _sorted(d, i)
    np.testing.assert_allclose(got_d, want_d, rtol=1e-9, atol=1e-9)
    assert np.array_equal(got_i, want_i)
    np.testing.assert_allclose(sq.numpy(), (x64 ** 2).sum(1))
    rows = sorted(seen)  # each strip once: its rows a..e against every column from a on
    covered = sum(shape[0] for _, shape in rows)
    assert covered == n and all(shape[1] == n - a for a, shape in rows)


def test_a_gram_function_replaces_the_product() -> None:
    from ganeval.metrics.linalg import gram_strip

    x = torch.from_numpy(np.random.default_rng(1).normal(size=(12, 3)))
    calls: list[tuple[int, int]] = []

    def gram(a: int, e: int) -> torch.Tensor:
        calls.append((a, e))
        return gram_strip(x, a, e)

    d, i, _ = C.candidates(x, 3, 4, None, gram=gram)
    ref_d, ref_i, _ = C.candidates(x, 3, 4, None)
    assert calls and torch.equal(d, ref_d) and torch.equal(i, ref_i)


def test_the_first_pairs_of_each_row() -> None:
    d = torch.tensor([5.0, 1.0, 3.0, 2.0, 0.5, 4.0])
    rows = torch.tensor([0, 0, 0, 2, 2, 0])
    idx = torch.tensor([10, 11, 12, 13, 14, 15])
    out_d, out_i = C._first_per_row(d, rows, idx, 3, 2)
    assert out_d.tolist() == [[1.0, 3.0], [float("inf"), float("inf")], [0.5, 2.0]]
    assert out_i.tolist() == [[11, 12], [-1, -1], [14, 13]]
    tie_d, tie_i = C._first_per_row(torch.tensor([1.0, 1.0]), torch.tensor([0, 0]), torch.tensor([7, 3]), 1, 1)
    assert tie_i.tolist() == [[7]]  # a tie keeps the pair listed first


def test_merging_keeps_each_rows_running_best() -> None:
    best_d = torch.tensor([[1.0, 4.0], [2.0, 3.0]])
    best_i = torch.tensor([[5, 6], [7, 8]])
    C._merge_rows(best_d, best_i, torch.tensor([0.5, 9.0]), torch.tensor([0, 1]), torch.tensor([9, 10]))
    assert sorted(best_d[0].tolist()) == [0.5, 1.0] and sorted(best_i[0].tolist()) == [5, 9]
    assert best_d[1].tolist() == [2.0, 3.0]
    C._merge_rows(best_d, best_i, torch.zeros(0), torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long))
    assert best_i[1].tolist() == [7, 8]


def test_memory_rules_of_the_filter() -> None:
    assert C.held_pairs_bytes(1000, 5, 10) == 20 * 5 * 1000 * (1000 - 40) // 40
    assert C.held_pairs_bytes(100, 5, 30) == 0  # the heads cover every row
    assert (C.STREAM_ABOVE_BYTES, C.STRIP_MAX_ELEMENTS, C.CUDA_STRIP_MAX_ELEMENTS) == (1 << 28, 1 << 28, 1 << 30)
    assert C.strip_max_elements(torch.device("cpu")) == 1 << 28


def test_a_large_set_streams_by_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.from_numpy(np.random.default_rng(2).normal(size=(30, 4)))
    called: list[bool] = []
    real = C._streamed_candidates
    monkeypatch.setattr(C, "_streamed_candidates", lambda *a, **k: called.append(True) or real(*a, **k))
    monkeypatch.setattr(C, "STREAM_ABOVE_BYTES", 0)
    d, i, _ = C.candidates(x, 3, 2, None)
    assert called == [True]
    monkeypatch.setattr(C, "STREAM_ABOVE_BYTES", 1 << 40)
    d2, i2, _ = C.candidates(x, 3, 2, None)
    assert called == [True]
    assert np.array_equal(_sorted(d, i)[1], _sorted(d2, i2)[1])
