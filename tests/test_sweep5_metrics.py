"""Sweep 5 (metrics): exact checks of the k-NN search, stochastic Lanczos quadrature and the metric registry's
fields against brute-force float64 ground truth and hand-computed examples."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from ganeval.metrics import knn, slq
from ganeval.metrics.registry import Metric, Option, function_metric, integer, option


# ---------------------------------------------------------------- k-NN: helpers


def _brute_knn(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's k nearest other rows (ties to the lower index) and their squared distances, in float64."""
    x = x.astype(np.float64)
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d, np.inf)
    idx = np.lexsort((np.broadcast_to(np.arange(len(x)), d.shape), d), axis=1)[:, :k]
    return idx, np.take_along_axis(d, idx, axis=1)


def _line(*pos: float) -> torch.Tensor:
    """Points on a line (one feature), float32: squared distances between them are exact."""
    return torch.tensor([[p] for p in pos], dtype=torch.float32)


def test_exact_sq_dist_every_chunk_float64() -> None:
    """`_exact_sq_dist` gives ||x[r]-x[c]||² in float64 for every row, chunked or not."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(7, 3, generator=g)
    rows = torch.tensor([6, 0, 3, 2, 5])
    cols = torch.randint(0, 7, (5, 4), generator=g)
    xn = x.double().numpy()
    want = ((xn[rows.numpy()][:, None, :] - xn[cols.numpy()]) ** 2).sum(axis=2)
    for chunk in (2, 256):
        got = knn._exact_sq_dist(x, rows, cols, chunk=chunk)
        assert got.dtype == torch.float64
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-14, atol=0)


def test_rank_sorts_by_distance_then_lower_index() -> None:
    """`_rank` keeps the k nearest of each row, equal distances going to the lower index."""
    d = torch.tensor([[3.0, 1.0, 1.0, 0.5, 1.0], [2.0, 2.0, 2.0, 1.0, 0.0]], dtype=torch.float64)
    idx = torch.tensor([[9, 7, 2, 4, 5], [8, 1, 6, 3, 0]])
    top_d, top = knn._rank(d, idx, 3)
    assert top.tolist() == [[4, 2, 5], [0, 3, 1]]
    assert top_d.tolist() == [[0.5, 1.0, 1.0], [0.0, 1.0, 2.0]]


def test_full_rows_ties_and_duplicates() -> None:
    """`_full_rows` searches all rows in float64: self excluded, ties at the k-th place to the lower index."""
    x = _line(0, 2, -2, 0, 5, 2, 1)
    rows = torch.tensor([0, 4, 6])
    want, want_d = _brute_knn(x.numpy(), 3)
    nbrs, dist = knn._full_rows(x, rows, 3)
    assert nbrs.tolist() == want[rows.numpy()].tolist()
    assert dist.dtype == torch.float64
    assert dist.tolist() == want_d[rows.numpy()].tolist()


def test_candidate_sq_dist_matches_float64() -> None:
    """`_candidate_sq_dist` is |x_r|² + |x_c|² − 2 x_r·x_c for each row's candidates, chunked or not."""
    x = _line(0, 1, 3, 7, -4)
    x = torch.cat([x, 2 * x + 1], dim=1)
    sq = (x * x).sum(dim=1)
    cand = torch.tensor([[1, 2], [4, 0], [3, 1], [0, 2], [2, 3]])
    xn = x.double().numpy()
    want = ((xn[:, None, :] - xn[cand.numpy()]) ** 2).sum(axis=2)
    for chunk in (2, 512):
        got = knn._candidate_sq_dist(x, sq, cand, chunk=chunk)
        assert got.tolist() == want.tolist()


def test_row_candidates_nearest_kk_self_excluded() -> None:
    """`_row_candidates` gives the kk nearest other rows (self excluded) with their squared distances."""
    x = _line(0, 1, 3, 7, -4, 10)
    sq = (x * x).sum(dim=1)
    rows = torch.tensor([5, 0, 2])
    want, want_d = _brute_knn(x.numpy(), 2)
    for chunk in (2, 512):
        d, i = knn._row_candidates(x, sq, rows, 2, chunk=chunk)
        d, order = torch.sort(d, dim=1)
        i = torch.gather(i, 1, order)
        assert i.tolist() == want[rows.numpy()].tolist()
        assert d.tolist() == want_d[rows.numpy()].tolist()


# ---------------------------------------------------------------- k-NN: `_finish` rules, with planted distances
# x: points 0, 1, 2, 3, 10 on a line; row 0's true nearest is row 1 (squared distance 1). The planted float32
# candidates (rows 2..4) and their planted distances are wrong, so whether a row was re-checked shows.


def _finish_row0(cand: list[int], approx: list[float], t: float, k: int = 1) -> tuple[list[int], list[float]]:
    x = _line(0, 1, 2, 3, 10)
    tol = torch.zeros(5, dtype=torch.float64)
    tol[0] = t
    nbrs, dist = knn._finish(x, torch.tensor([0]), torch.tensor([approx]), torch.tensor([cand]), k, tol)
    return nbrs[0].tolist(), dist[0].tolist()


def test_finish_gap_exactly_twice_tol_is_unsure() -> None:
    """A k-th/(k+1)-th gap equal to 2·tol is not certain: the row is re-ranked (and here searched in full)."""
    assert _finish_row0([3, 4], [1.0, 2.0], 0.5) == ([1], [1.0])


def test_finish_gap_above_twice_tol_is_certain() -> None:
    """A gap above 2·tol keeps the float32 candidates as they are (no re-check)."""
    assert _finish_row0([4, 3], [2.0, 1.0], 0.4) == ([3], [1.0])
    assert _finish_row0([3, 4], [1.0, 2.0], 0.0) == ([3], [1.0])


def test_finish_wide_at_equality_searches_in_full() -> None:
    """Exact k-th (4) + 2·tol (2) equal to the widest candidate's distance (6): searched in full."""
    assert _finish_row0([2, 4], [4.0, 6.0], 1.0) == ([1], [1.0])


def test_finish_not_wide_keeps_exact_candidates() -> None:
    """Exact k-th + 2·tol below the widest candidate: the re-ranked candidates stand (no full search)."""
    assert _finish_row0([4, 2], [6.5, 5.0], 1.0) == ([2], [4.0])
    assert _finish_row0([2, 4], [4.5, 5.5], 0.5) == ([2], [4.0])


def test_finish_k2_uses_last_candidate_and_kth() -> None:
    """With k=2 and kk=3 the wide test reads the k-th exact distance and the last candidate's."""
    # exact: row2 → 4, row3 → 9, row4 → 100; gap 12−10 = 2·tol: unsure; k-th exact 9 + 2 = 11 vs widest
    # planted 12 (not the k-th planted 10): not wide
    assert _finish_row0([2, 3, 4], [4.0, 10.0, 12.0], 1.0, k=2) == ([2, 3], [4.0, 9.0])
    # widest planted 11: wide, searched in full
    assert _finish_row0([2, 3, 4], [4.0, 9.0, 11.0], 1.0, k=2) == ([1, 2], [1.0, 4.0])


def test_finish_k3_reads_the_last_exact_distance() -> None:
    """k=3: the wide test adds 2·tol to the k-th (last) exact distance, 16 + 4 = 20 = widest: searched in full."""
    x = _line(0, 1, 2, 3, 4, 10, 20)
    tol = torch.zeros(7, dtype=torch.float64)
    tol[0] = 2.0
    nbrs, dist = knn._finish(x, torch.tensor([0]), torch.tensor([[4.0, 9.0, 16.0, 20.0]]),
                             torch.tensor([[2, 3, 4, 5]]), 3, tol)
    assert (nbrs[0].tolist(), dist[0].tolist()) == ([1, 2, 3], [1.0, 4.0, 9.0])


def test_finish_all_candidates_reranked_exactly() -> None:
    """kk = n−1: every row is re-ranked by exact distances (planted distances ignored), ties to lower index."""
    x = _line(0, 1, -1, 3)
    n = 4
    cand = torch.tensor([[3, 2, 1], [3, 2, 0], [3, 1, 0], [2, 1, 0]])
    approx = torch.tensor([[0.0, 1.0, 2.0]] * n)
    tol = torch.zeros(n, dtype=torch.float64)
    nbrs, dist = knn._finish(x, torch.arange(n), approx, cand, 2, tol)
    want, want_d = _brute_knn(x.numpy(), 2)
    assert nbrs.tolist() == want.tolist()
    assert dist.tolist() == want_d.tolist()


# ---------------------------------------------------------------- k-NN: `_refine` rules (tolerance planted)


def _refine_row0(monkeypatch: pytest.MonkeyPatch, t: float, coarse: float, err: float) -> list[int]:
    x = _line(0, 1, 2, 3, 10)
    n = 5
    monkeypatch.setattr(knn, "distance_error", lambda x_, sq_, p_: torch.full((n,), t, dtype=torch.float64))
    cand = torch.tensor([[2, 3], [3, 4], [4, 0], [0, 1], [1, 2]])
    c = torch.full((n, 2), coarse, dtype=torch.float32)
    nbrs, dist = knn._refine(x, cand, c, (x * x).sum(dim=1), 1, torch.full((n,), err, dtype=torch.float64))
    # row 0's candidates (2, 3: squared distances 4, 9) miss its true neighbour 1
    return nbrs[0].tolist() + dist[0].tolist()


def test_refine_gap_equal_twice_tol_searches_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gap 9−4 = 5 = 2·tol: not certain, so the row is searched again and finds row 1."""
    assert _refine_row0(monkeypatch, 2.5, 100.0, 0.0) == [1, 1.0]


def test_refine_certain_keeps_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gap 5 > 2·tol and k-th + tol below the floor: the candidates' nearest stands."""
    assert _refine_row0(monkeypatch, 2.0, 100.0, 0.0) == [2, 4.0]
    assert _refine_row0(monkeypatch, 2.0, 8.0, 1.0) == [2, 4.0]


def test_refine_floor_equality_searches_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """k-th + tol (4+2) equal to the floor (coarse max − err = 7−1): not certain."""
    assert _refine_row0(monkeypatch, 2.0, 6.0, 0.0) == [1, 1.0]
    assert _refine_row0(monkeypatch, 2.0, 7.0, 1.0) == [1, 1.0]


def test_refine_every_row_candidate_uses_float32_distances() -> None:
    """kk = n−1 (every other row a candidate): the exact graph whatever the coarse distances."""
    x = _line(0, 1, -1, 3, 0)
    n = 5
    cand = torch.tensor([[j for j in range(n) if j != i] for i in range(n)])
    coarse = torch.zeros((n, n - 1))
    nbrs, dist = knn._refine(x, cand, coarse, (x * x).sum(dim=1), 2, torch.zeros(n, dtype=torch.float64))
    want, want_d = _brute_knn(x.numpy(), 2)
    assert nbrs.tolist() == want.tolist()
    assert dist.tolist() == want_d.tolist()


# ---------------------------------------------------------------- k-NN: the public search


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_exact_knn_graph_matches_brute_force(dtype: torch.dtype, precision: str) -> None:
    """The graph equals brute-force float64 k-NN (duplicates included) and its distances are near the truth."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(60, 5, generator=g).to(dtype)
    x[10] = x[3]
    x[11] = x[3]
    x[40] = x[20]
    graph = knn.exact_knn_graph(x, 3, precision=precision)
    want, want_d = _brute_knn(x.double().numpy(), 3)
    # the sets are exact; within a row, exactly equal distances may come in either order
    assert np.sort(graph.nbrs.numpy(), axis=1).tolist() == np.sort(want, axis=1).tolist()
    np.testing.assert_allclose(graph.sq_dist.double().numpy(), want_d, rtol=0, atol=1e-4)
    assert torch.equal(knn.exact_knn(x, 3, precision=precision), graph.nbrs)


def test_exact_knn_graph_needs_k_plus_one_rows() -> None:
    """k+1 rows are enough (everyone is everyone's neighbour); k rows are refused."""
    x = _line(0, 1, 3, 7)
    assert knn.exact_knn(x, 3).tolist() == [[1, 2, 3], [0, 2, 3], [1, 0, 3], [2, 1, 0]]
    with pytest.raises(ValueError, match=r"need at least k\+1=5 samples for a 4-NN graph, got 4"):
        knn.exact_knn(x, 4)


def test_knn_graph_is_frozen() -> None:
    """A KnnGraph cannot be changed after it is made."""
    graph = knn.KnnGraph(torch.zeros((2, 1), dtype=torch.long))
    assert graph.sq_dist is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        graph.nbrs = torch.ones(1)  # type: ignore[misc]


def _spy_kk(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    real = knn.candidates

    def spy(x, kk, *a, **kw):  # type: ignore[no-untyped-def]
        seen.append(kk)
        return real(x, kk, *a, **kw)

    monkeypatch.setattr(knn, "candidates", spy)
    return seen


@pytest.mark.parametrize(("k", "extra", "precision", "dtype", "kk"), [
    (2, None, "float32", torch.float32, 6),  # k + max(k, 4)
    (5, None, "float32", torch.float32, 10),
    (2, 3, "float32", torch.float32, 5),
    (2, None, "bfloat16", torch.float32, 18),  # k + max(4k, 16)
    (5, None, "bfloat16", torch.float32, 25),
    (2, None, "bfloat16", torch.float64, 6),  # float64 input keeps its own precision
    (30, None, "float32", torch.float32, 49),  # at most n−1
])
def test_candidate_count(monkeypatch: pytest.MonkeyPatch, k: int, extra: int | None, precision: str,
                         dtype: torch.dtype, kk: int) -> None:
    """How many candidates each row gets: k + extra, else k + max(k, 4) (float32) or k + max(4k, 16)
    (reduced precision), at most n−1."""
    seen = _spy_kk(monkeypatch)
    x = torch.randn(50, 4, generator=torch.Generator().manual_seed(1)).to(dtype)
    want, _ = _brute_knn(x.double().numpy(), k)
    got = knn.exact_knn(x, k, extra=extra, precision=precision).numpy()
    assert np.sort(got, axis=1).tolist() == np.sort(want, axis=1).tolist()
    assert seen == [kk]


def test_bfloat16_products_and_refine_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """precision='bfloat16' multiplies bfloat16 rows and refines with x's float32 squared norms; 'auto'
    asks `auto_precision`, an explicit precision does not."""
    dtypes: list[torch.dtype] = []
    real_product = knn.reduced_product
    monkeypatch.setattr(knn, "reduced_product", lambda a, b, p: (dtypes.append(a.dtype), real_product(a, b, p))[1])
    seen: dict[str, torch.Tensor] = {}
    real_refine = knn._refine

    def refine(x, cand, coarse, sq, k, err):  # type: ignore[no-untyped-def]
        seen["sq"], seen["err"] = sq, err
        return real_refine(x, cand, coarse, sq, k, err)

    monkeypatch.setattr(knn, "_refine", refine)
    asked: list[int] = []
    monkeypatch.setattr(knn, "auto_precision", lambda x, k: (asked.append(k), "bfloat16")[1])
    x = torch.randn(40, 3, generator=torch.Generator().manual_seed(2))
    want, _ = _brute_knn(x.double().numpy(), 2)
    assert knn.exact_knn(x, 2, precision="bfloat16").tolist() == want.tolist()
    assert dtypes and set(dtypes) == {torch.bfloat16}
    assert torch.equal(seen["sq"], (x * x).sum(dim=1))
    assert asked == []
    xc = knn.centred(x)
    sq_c = (xc * xc).sum(dim=1)
    err = knn.distance_error(xc, sq_c, "bfloat16") + knn.centring_error(sq_c)
    np.testing.assert_allclose(seen["err"].numpy(), err.numpy(), rtol=1e-3)
    # the centring error is added, not subtracted
    ce = knn.centring_error(sq_c)
    np.testing.assert_allclose((seen["err"] - knn.distance_error(xc, sq_c, "bfloat16")).numpy(), ce.numpy(), rtol=0.1)
    assert knn.exact_knn(x, 2, precision="auto").tolist() == want.tolist()
    assert asked == [2]


# ---------------------------------------------------------------- SLQ


def _adjacency(n: int, seed: int) -> np.ndarray:
    """A symmetric normalised adjacency D^-1/2 A D^-1/2 of a random weighted graph (float64)."""
    rng = np.random.default_rng(seed)
    a = rng.random((n, n))
    a = np.triu(a, 1)
    a = a + a.T
    deg = a.sum(axis=1)
    return a / np.sqrt(deg[:, None] * deg[None, :])


def _lanczos_ref(lap: np.ndarray, v: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Plain Lanczos with full re-orthogonalisation (twice), float64."""
    q = [v / np.linalg.norm(v)]
    alpha, beta = [], []
    for i in range(m):
        w = lap @ q[i]
        alpha.append(q[i] @ w)
        if i == m - 1:
            break
        for _ in range(2):
            w = w - np.array(q).T @ (np.array(q) @ w)
        b = np.linalg.norm(w)
        beta.append(b)
        q.append(w / b)
    return np.array(alpha), np.array(beta)


def test_apply_l_dense_and_sparse() -> None:
    """`_apply_l` is (I − S) qᵀ, probe-major, for dense and sparse CSR S."""
    s = _adjacency(6, 0)
    q = np.random.default_rng(1).normal(size=(3, 6))
    want = q - (s @ q.T).T
    st = torch.from_numpy(s)
    got = slq._apply_l(st, torch.from_numpy(q))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)
    got_sparse = slq._apply_l(st.to_sparse_csr(), torch.from_numpy(q))
    np.testing.assert_allclose(got_sparse.numpy(), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn", ["_normalize", "_normalize_async"])
def test_normalize_breakdown_threshold(fn: str) -> None:
    """Rows are scaled to unit norm; a norm at most 1e-6 (exactly 1e-6 included) becomes a zero row and zero."""
    w = torch.tensor([[3.0, 4.0], [1e-6, 0.0], [0.0, 1.5e-6], [5e-7, 0.0]], dtype=torch.float64)
    unit, b = getattr(slq, fn)(w.clone())
    assert b.tolist() == [5.0, 0.0, 1.5e-6, 0.0]
    assert unit.tolist() == [[0.6, 0.8], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    unit, b = getattr(slq, fn)(w[:1].clone())
    assert b.tolist() == [5.0] and unit.tolist() == [[0.6, 0.8]]


def test_components_and_subtract() -> None:
    """`_components` are v·w per basis row; `_subtract` removes them."""
    rng = np.random.default_rng(2)
    v, w, c = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 5)), rng.normal(size=(2, 3))
    comp = slq._components(torch.from_numpy(v), torch.from_numpy(w))
    np.testing.assert_allclose(comp.numpy(), np.einsum("pjn,pn->pj", v, w), rtol=1e-12)
    sub = slq._subtract(torch.from_numpy(v), torch.from_numpy(w), torch.from_numpy(c))
    np.testing.assert_allclose(sub.numpy(), w - np.einsum("pj,pjn->pn", c, v), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("m", [1, 2, 4, 7])
def test_lanczos_matches_reference(m: int) -> None:
    """alpha, beta of every probe equal a plain float64 Lanczos with full re-orthogonalisation."""
    n = 9
    s = _adjacency(n, 3)
    lap = np.eye(n) - s
    probes = np.random.default_rng(4).normal(size=(n, 3)) * 2.0
    alpha, beta = slq.lanczos(torch.from_numpy(s), torch.from_numpy(probes), m)
    assert alpha.shape == (3, m) and beta.shape == (3, m - 1)
    for p in range(3):
        a, b = _lanczos_ref(lap, probes[:, p], m)
        np.testing.assert_allclose(alpha[p].numpy(), a, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(beta[p].numpy(), b, rtol=1e-10, atol=1e-12)
    queued = slq._lanczos_queued(torch.from_numpy(s), torch.from_numpy(probes), m)
    assert queued is not None
    np.testing.assert_allclose(queued[0].numpy(), alpha.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(queued[1].numpy(), beta.numpy(), rtol=1e-10, atol=1e-12)


def test_lanczos_breakdown_keeps_zero_rows_and_exact_quadrature() -> None:
    """A probe in a 2-dimensional invariant space breaks down after 2 steps: the rest of T is zero and the
    quadrature is still exact (vᵀ exp(−tL) v)."""
    n = 6
    s = _adjacency(n, 5)
    lap = np.eye(n) - s
    lam, vec = np.linalg.eigh(lap)
    v = vec[:, 1] + 2 * vec[:, 4]
    other = np.random.default_rng(6).normal(size=n)
    probes = np.stack([v, other], axis=1)
    alpha, beta = slq.lanczos(torch.from_numpy(s), torch.from_numpy(probes), 5)
    assert alpha[0, 2:].tolist() == [0.0, 0.0, 0.0]
    assert beta[0, 1:].tolist() == [0.0, 0.0, 0.0]
    theta, w = slq.quadrature(alpha, beta)
    np.testing.assert_allclose(w.sum(dim=1).numpy(), [1.0, 1.0], rtol=1e-12)
    for p, u in enumerate((v, other)):
        u = u / np.linalg.norm(u)
        want = u @ vec @ np.diag(np.exp(-0.7 * lam)) @ vec.T @ u
        got = float((w[p] * torch.exp(-0.7 * theta[p])).sum())
        assert got == pytest.approx(want, rel=1e-9 if p == 0 else 1e-3)


def test_quadrature_hand_example() -> None:
    """T = [[2,1],[1,2]]: nodes 1 and 3, each with weight 1/2; T = [[1,0],[0,5]]: node 1 with weight 1."""
    alpha = torch.tensor([[2.0, 2.0], [1.0, 5.0]], dtype=torch.float64)
    beta = torch.tensor([[1.0], [0.0]], dtype=torch.float64)
    theta, w = slq.quadrature(alpha, beta)
    np.testing.assert_allclose(theta.numpy(), [[1.0, 3.0], [1.0, 5.0]], rtol=1e-14)
    np.testing.assert_allclose(w.numpy(), [[0.5, 0.5], [1.0, 0.0]], rtol=1e-14, atol=1e-15)


def test_exact_heat_trace() -> None:
    """tr exp(−tL) = Σ exp(−t λ) over L's eigenvalues."""
    lap = np.eye(5) - _adjacency(5, 7)
    t = np.array([0.0, 0.5, 3.0])
    lam = np.linalg.eigvalsh(lap)
    got = slq.exact_heat_trace(torch.from_numpy(lap), torch.from_numpy(t))
    np.testing.assert_allclose(got.numpy(), np.exp(-t[:, None] * lam[None, :]).sum(axis=1), rtol=1e-13)


def test_slq_tolerances() -> None:
    """The documented re-orthogonalisation and breakdown tolerances."""
    assert slq.ORTH_TOL == 1e-5
    assert slq.BREAKDOWN == 1e-6


# ---------------------------------------------------------------- registry fields


def _metric(**kw: object) -> Metric:
    return function_metric("sweep_probe", lambda x, y, rng, p=1: 0.0, [option("p", 1, integer(1), "p")], **kw)


def test_metric_field_defaults() -> None:
    """A metric given nothing else: scale 1, same dim, no sharing, lower is better, labels from the name."""
    m = _metric()
    assert m.scale == 1.0 and m.same_dim is True and m.shares is False and m.higher_is_better is False
    assert (m.label, m.label_tex, m.unscaled_label) == ("SWEEP_PROBE",) * 3
    assert m.defaults == {"p": 1}
    m2 = _metric(label="L", label_tex="T", unscaled_label="U")
    assert (m2.label, m2.label_tex, m2.unscaled_label) == ("L", "T", "U")
    m3 = _metric(label="L")
    assert (m3.label, m3.label_tex, m3.unscaled_label) == ("L", "L", "L")


def test_metric_defaults_field_not_compared_hashed_shown_or_given() -> None:
    """`defaults` is made from the options: not an argument, not in repr, not compared (a Metric hashes)."""
    m = _metric()
    assert "defaults=" not in repr(m)
    hash(m)
    with pytest.raises(TypeError):
        Metric("x", (), lambda *a: None, lambda *a: None, defaults={})  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.label = "y"  # type: ignore[misc]


def test_option_defaults_and_frozen() -> None:
    """An option is not neutral unless asked, keeps its rule's check and words, and cannot be changed."""
    o = option("k", 5, integer(1), "doc")
    assert o.neutral is False and o.normalize is None and o.expected == "an integer ≥ 1" and o.doc == "doc"
    assert o.check(1) and not o.check(0)
    assert Option("k", 5, o.check, "x").neutral is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.name = "j"  # type: ignore[misc]


# ---------------------------------------------------------------- validation


from ganeval.metrics import validation as val  # noqa: E402


def test_inspect_features_row_and_shape_edges() -> None:
    """min_rows rows pass, one fewer is refused; empty inputs name the least count (at least 1)."""
    x = np.ones((3, 2), dtype=np.float32)
    assert val.inspect_features(x, "x", 3) == val.FeatureInfo(3, 2, 1.0, torch.float32)
    assert val.check_features(x, "x", 3) == (3, 2)
    with pytest.raises(ValueError, match="x has 3 samples but at least 4 are needed"):
        val.inspect_features(x, "x", 4)
    with pytest.raises(ValueError, match=r"pass at least 1 samples"):
        val.inspect_features(np.ones((0, 2)), "x", 0)
    with pytest.raises(ValueError, match=r"pass at least 5 samples"):
        val.inspect_features(np.ones((3, 0)), "x", 5)
    with pytest.raises(ValueError, match="must be 2-D"):
        val.inspect_features(np.ones(3), "x")
    with pytest.raises(ValueError, match="must hold real numbers"):
        val.inspect_features(np.ones((2, 2), dtype=bool), "x")
    with pytest.raises(ValueError, match="must hold real numbers"):
        val.inspect_features(torch.ones((2, 2), dtype=torch.complex64), "x")
    with pytest.raises(ValueError, match="must be a numpy array or torch tensor"):
        val.inspect_features([[1.0]], "x")  # type: ignore[arg-type]


@pytest.mark.parametrize(("a", "peak", "exact"), [
    (torch.tensor([[2.0**24, -1.0]]), 2.0**24, torch.float32),
    (torch.tensor([[1.0]], dtype=torch.float64), 1.0, torch.float64),
    (torch.tensor([[2**24, 0]]), 2.0**24, torch.float32),
    (torch.tensor([[-(2**24) - 1, 0]]), 2.0**24 + 1, torch.float64),
    (np.array([[-3.0]], dtype=np.float16), 3.0, torch.float32),
    (np.array([[-3.0]], dtype=np.float64), 3.0, torch.float64),
    (np.array([[2**24]], dtype=np.int64), 2.0**24, torch.float32),
    (np.array([[2**24 + 1]], dtype=np.int64), 2.0**24 + 1, torch.float64),
])
def test_inspect_features_peak_and_exact_precision(a: object, peak: float, exact: torch.dtype) -> None:
    """The peak is the largest |value|; float64 input and integers beyond 2²⁴ need float64, others float32."""
    info = val.inspect_features(a, "x")  # type: ignore[arg-type]
    assert (info.peak, info.exact) == (peak, exact)


def test_peak_of_counts_bad_rows() -> None:
    """A NaN or inf is refused with the number of rows that hold one (2-D and 1-D)."""
    a = np.ones((5, 3))
    a[1, 0] = np.nan
    a[3, 2] = np.inf
    a[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"x has 2 row\(s\) with NaN or inf values \(of 5\)"):
        val.peak_of(a, "x")
    with pytest.raises(ValueError, match=r"x has 1 row\(s\) with NaN or inf values \(of 4\)"):
        val.peak_of(torch.tensor([1.0, -np.inf, 2.0, 3.0]), "x")
    assert val.peak_of(np.array([[-7.0, 3.0]]), "x") == 7.0
    assert val.extremes(np.arange(12.0).reshape(3, 4)[:, ::2]) == (0.0, 10.0)  # not contiguous: numpy's own
    assert val.extremes(np.array([[1.0, -2.0]], dtype=np.longdouble)) == (-2.0, 1.0)  # a dtype torch cannot view
    with pytest.raises(dataclasses.FrozenInstanceError):
        val.FeatureInfo(1, 1, 1.0, torch.float32).n = 2  # type: ignore[misc]


def _reach(working: float, wide: float, *precise: bool) -> val.Reach:
    return lambda peak, n, d: (working, wide, *precise)


def test_working_dtype_bounds() -> None:
    """float32 holds a reach up to float32's max; beyond it float64; beyond float64's max, or a precision lost
    even in float64, is refused; a precision lost in float32 only moves to float64."""
    info = val.FeatureInfo(4, 2, 1.0, torch.float32)
    f32, f64 = val.FLOAT32_MAX, val.FLOAT64_MAX
    assert val.working_dtype(info, "x") is torch.float32
    assert val.working_dtype(info, "x", base=torch.float16) is torch.float16
    assert val.working_dtype(info, "x", [("m", _reach(f32, f64))]) is torch.float32
    assert val.working_dtype(info, "x", [("m", _reach(f32 * 1.0000001, 1.0))]) is torch.float64
    assert val.working_dtype(info, "x", [("m", _reach(1.0, 1.0, True, True))]) is torch.float32
    assert val.working_dtype(info, "x", [("m", _reach(1.0, 1.0, False, True))]) is torch.float64
    with pytest.raises(ValueError, match="m would form numbers beyond float64's range"):
        val.working_dtype(info, "x", [("m", _reach(1.0, math_inf))])
    with pytest.raises(ValueError, match="at so small a scale m would lose"):
        val.working_dtype(info, "x", [("m", _reach(1.0, 1.0, True, False))])
    assert val.working_dtype(info, "x", [("a", _reach(2 * f32, 1.0)), ("b", _reach(1.0, 1.0))]) is torch.float64


math_inf = float("inf")


def test_load_features_pool_skip_edges() -> None:
    """With a finite pool, a float32 subsample of min_rows..pool.n rows and the pool's D is not re-checked
    (a planted NaN passes); otherwise it is checked."""
    pool = val.FeatureInfo(4, 2, 1.0, torch.float32)
    cpu = torch.device("cpu")

    def bad(n: int, d: int = 2, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        a = torch.zeros((n, d), dtype=dtype)
        a[0, 0] = float("nan")
        return a

    assert val.load_features(bad(4), "x", cpu, pool=pool).shape == (4, 2)
    assert val.load_features(bad(2), "x", cpu, min_rows=2, pool=pool).shape == (2, 2)
    for a, rows in ((bad(5), 1), (bad(1), 2), (bad(3, 3), 1), (bad(3, dtype=torch.float64), 1)):
        with pytest.raises(ValueError):
            val.load_features(a, "x", cpu, min_rows=rows, pool=pool)
    with pytest.raises(ValueError, match="NaN"):
        val.load_features(bad(3), "x", cpu, reaches=[("m", _reach(2 * val.FLOAT32_MAX, 1.0))], pool=pool)
    ok = torch.ones((3, 2))
    assert val.load_features(ok, "x", cpu, pool=pool).data_ptr() == ok.data_ptr()
    assert val.load_features(ok, "x", cpu, reaches=[("m", _reach(2 * val.FLOAT32_MAX, 1.0))]).dtype == torch.float64


def test_check_scale_edges() -> None:
    """Float features up to float32's max pass; beyond, refused; ints, 1-D, empty and NaN inputs are not judged
    here; the reach sees n (or the rows) and the product of the trailing axes."""
    val.check_scale("f", np.full((2, 2), val.FLOAT32_MAX))
    with pytest.raises(ValueError, match="f has values up to .*beyond float32's range"):
        val.check_scale("f", np.full((2, 2), -1e39))
    val.check_scale("f", torch.full((2, 2), 2**62, dtype=torch.int64), [("m", _reach(math_inf, math_inf))])
    val.check_scale("f", np.full(3, 1e39))
    val.check_scale("f", np.zeros((0, 3)))
    val.check_scale("f", np.array([[np.nan, 1e39]]))
    seen: list[tuple[float, int, int]] = []
    reach = lambda peak, n, d: (seen.append((peak, n, d)), (1.0, 1.0))[1]  # noqa: E731
    val.check_scale("f", torch.full((3, 2, 5), -2.0), [("m", reach)])
    val.check_scale("f", torch.full((3, 2, 5), 2.0), [("m", reach)], n=7)
    assert seen == [(2.0, 3, 10), (2.0, 7, 10)]


def test_power_finite_result_same_dim_subset_size() -> None:
    """power is base**e, inf on overflow; non-finite results, different D and bad subset sizes are refused."""
    assert val.power(3.0, 4) == 81.0
    assert val.power(10.0, 400) == float("inf")
    assert val.finite_result(2.5, "m") == 2.5
    t = torch.tensor([1.0, 2.0])
    assert val.finite_result(t, "m") is t
    for bad in (float("nan"), np.array([1.0, np.inf]), torch.tensor([np.nan])):
        with pytest.raises(ValueError, match="m came out non-finite"):
            val.finite_result(bad, "m")
    val.check_same_dim(3, 3, "FID")
    with pytest.raises(ValueError, match="FID: x has D=3 features but y has D=4"):
        val.check_same_dim(3, 4, "FID")
    val.check_subset_size(2, 2, "x")
    val.check_subset_size(5, 5, "x")
    with pytest.raises(ValueError, match="at least 2, got 1"):
        val.check_subset_size(1, 5, "x")
    with pytest.raises(ValueError, match="subset_size=6 is larger than x, which has 5 samples"):
        val.check_subset_size(6, 5, "x")
    assert val.detached(torch.ones(1, requires_grad=True)).requires_grad is False


# ---------------------------------------------------------------- parallel, streams


import hashlib  # noqa: E402
import os  # noqa: E402
import threading  # noqa: E402

from ganeval.metrics import parallel, streams  # noqa: E402


def test_usable_cores_and_cpu_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Usable cores are the affinity set; a map may use min(cores, torch threads), and 1 inside a worker."""
    assert parallel.usable_cores() == max(1, len(os.sched_getaffinity(0)))
    monkeypatch.setattr(parallel, "usable_cores", lambda: 8)
    monkeypatch.setattr(parallel.torch, "get_num_threads", lambda: 3)
    assert parallel.cpu_workers() == 3
    monkeypatch.setattr(parallel.torch, "get_num_threads", lambda: 12)
    assert parallel.cpu_workers() == 8
    assert parallel.pmap(lambda i: parallel.cpu_workers(), [0, 1, 2], workers=2) == [1, 1, 1]
    assert parallel.cpu_workers() == 8


def test_pmap_threads_order_and_worker_counts() -> None:
    """Results in order; more than one worker runs in 'ganeval' threads, one worker (or one item) inline."""
    def name(i: int) -> tuple[int, bool]:
        return i * i, threading.current_thread().name.startswith("ganeval")

    assert parallel.pmap(name, [3, 1, 2], workers=2) == [(9, True), (1, True), (4, True)]
    assert parallel.pmap(name, [3, 1], workers=1) == [(9, False), (1, False)]
    assert parallel.pmap(name, [3, 1], workers=0) == [(9, False), (1, False)]
    assert parallel.pmap(name, [5], workers=4) == [(25, False)]
    assert parallel.pmap(name, []) == []


def test_single_threaded_nests_and_restores() -> None:
    """Inside (nested too) torch runs on one thread; the setting comes back only when the last block leaves."""
    before = torch.get_num_threads()
    with parallel.single_threaded():
        assert torch.get_num_threads() == 1
        with parallel.single_threaded():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    assert parallel.pmap(lambda i: torch.get_num_threads(), [0, 1], workers=2) == [1, 1]
    assert torch.get_num_threads() == before


def test_device_map_run_jobs_run_lanes_off_gpu() -> None:
    """Off a GPU: jobs and lanes run in order (lanes flattened); a non-CPU device runs a plain loop inline."""
    cpu, meta = torch.device("cpu"), torch.device("meta")
    assert parallel.run_jobs([lambda: 1, lambda: 2, lambda: 3], cpu) == [1, 2, 3]
    assert parallel.run_lanes([[lambda: 1, lambda: 2], [], [lambda: 3]], cpu) == [1, 2, 3]
    inline = lambda i: (i, threading.current_thread() is threading.main_thread())  # noqa: E731
    assert parallel.device_map(inline, [1, 2], meta) == [(1, True), (2, True)]
    assert parallel.stream_map(inline, [1, 2], cpu) == [(1, True), (2, True)]


def test_stream_key_and_generator() -> None:
    """stream_key = first 4 bytes of SHA-256 (big-endian) with the top bit set; the generator is seeded with it."""
    h = int.from_bytes(hashlib.sha256("imd".encode()).digest()[:4], "big")
    assert streams.stream_key("imd") == h | 2**31
    assert streams.stream_key("imd") >= 2**31 and streams.stream_key("imd") < 2**32
    want = np.random.default_rng([7, 2, h | 2**31]).integers(1 << 30, size=4)
    assert streams.metric_generator("imd", 7, 2).integers(1 << 30, size=4).tolist() == want.tolist()
    assert streams.metric_draws(7, 2)("imd").integers(1 << 30, size=4).tolist() == want.tolist()


# ---------------------------------------------------------------- registry: checks and resolution


from ganeval.metrics import registry as reg  # noqa: E402


def test_option_rules_edges() -> None:
    """integer(low) takes low, refuses low−1, bools and floats; real refuses bools and non-finite numbers;
    one_of takes only the listed strings."""
    check, expected = reg.integer(2)
    assert (check(2), check(np.int64(3)), check(1), check(True), check(2.0)) == (True, True, False, False, False)
    assert expected == "an integer ≥ 2"
    rcheck, rexp = reg.real()
    assert (rcheck(1), rcheck(0.5), rcheck(np.float32(2)), rcheck(True), rcheck(float("inf")), rcheck("1")) == (
        True, True, True, False, False, False)
    assert rexp == "a finite number"
    ocheck, oexp = reg.one_of("a", "b")
    assert (ocheck("a"), ocheck("c"), ocheck(1)) == (True, False, False)
    assert oexp == "one of 'a', 'b'"
    bcheck, bexp = reg.boolean()
    assert (bcheck(False), bcheck(np.bool_(True)), bcheck(0), bcheck("true")) == (True, True, False, False)
    o = option("k", 5, reg.integer(1))
    o.validate("m.", 1)
    with pytest.raises(ValueError, match=r"^m\.k must be an integer ≥ 1, got 0$"):
        o.validate("m.", 0)


def test_resolve_defaults_unknown_and_where() -> None:
    """resolve completes the defaults, names unknown options (with the closest), uses `where`, normalises."""
    m = function_metric("sweep_probe2", lambda x, y, rng, **kw: 0.0,
                        [option("alpha", 1, reg.integer(1)), option("beta", "x", reg.one_of("x", "y"), normalize=str.upper)])
    assert m.resolve(None) == {"alpha": 1, "beta": "X"}
    assert m.resolve({"alpha": 3, "beta": "y"}) == {"alpha": 3, "beta": "Y"}
    with pytest.raises(ValueError, match=r"unknown option 'alpah', 'zzz' \(did you mean alpha\?\); options are alpha, beta"):
        m.resolve({"zzz": 1, "alpah": 2})
    with pytest.raises(ValueError, match=r"unknown option 'qqqq'; options are alpha, beta$"):
        m.resolve({"qqqq": 1})
    with pytest.raises(ValueError, match=r"unknown option 'alp' \(did you mean alpha\?\)"):
        m.resolve({"alp": 1})
    with pytest.raises(ValueError, match=r"^metrics\.sweep_probe2\.alpha must be"):
        m.resolve({"alpha": 0})
    with pytest.raises(ValueError, match=r"^cfg\.alpha must be"):
        m.resolve({"alpha": 0}, where="cfg.")


def test_function_metric_pair_draws_one_seed() -> None:
    """The function gets a Generator seeded from one draw below 2**63 of the metric's stream; the value is
    its result as a float."""
    got: list[int] = []
    m = function_metric("sweep_probe3", lambda x, y, rng, **kw: got.append(int(rng.integers(1 << 30))) or 2)
    work = m.pair("x", "y", {}, np.random.default_rng(5))
    seed = int(np.random.default_rng(5).integers(2**63))
    assert work.finish([job() for job in work.jobs]) == 2.0
    assert got == [int(np.random.default_rng(seed).integers(1 << 30))]


def test_metric_order_and_labels() -> None:
    """Paper rows first (IMD, KID, FID), then the rest by name, each once; unknown names label themselves."""
    assert reg.metric_order(["zeta", "fid", "alpha", "imd", "fid"]) == ["imd", "fid", "alpha", "zeta"]
    assert reg.metric_order(["kid", "fid", "imd"]) == ["imd", "kid", "fid"]
    assert reg.unscaled_label("no_such_metric") == "no_such_metric"
    assert reg.unscaled_label("kid") == reg.get_metric("kid").unscaled_label == "KID"
    with pytest.raises(ValueError, match="unknown metric 'fdi'"):
        reg.get_metric("fdi")


def test_gram_tap_and_fan_out() -> None:
    """A tap returns its parts by starting row (None when empty); fan_out calls every hook, None for none."""
    tap = reg.GramTap(lambda g: g * 2)
    assert tap.collected() is None
    tap(5, torch.ones(1))
    tap(0, torch.zeros(1))
    assert [(a, g.tolist()) for a, g in tap.collected()] == [(0, [0.0]), (5, [2.0])]
    assert reg.fan_out([]) is None
    seen: list[tuple[str, int]] = []
    hook = reg.fan_out([lambda a, g: seen.append(("p", a)), lambda a, g: seen.append(("q", a))])
    hook(3, torch.ones(1))
    assert seen == [("p", 3), ("q", 3)]


def test_metrics_choice_and_as_dict() -> None:
    """Metrics takes a name, names or a mapping, refuses none, orders by registration and leaves neutral
    options at their default out of as_dict."""
    with pytest.raises(ValueError, match="choose at least one metric"):
        reg.Metrics([])
    assert list(reg.Metrics("fid")) == ["fid"]
    ms = reg.Metrics(["fid", "imd"])
    assert [m.name for m, _ in ms.ordered()] == ["imd", "fid"]
    assert list(reg.Metrics(ms)) == ["fid", "imd"]
    assert reg.Metrics({"kid": {"subset_size": 50}})["kid"]["subset_size"] == 50
    neutral = [(m.name, o) for m in reg.REGISTRY.values() for o in m.options if o.neutral]
    if neutral:
        name, o = neutral[0]
        assert o.name not in reg.Metrics([name]).as_dict()[name]
    assert reg.Metrics(["kid"]).as_dict()["kid"] == reg.get_metric("kid").defaults


# ---------------------------------------------------------------- torchmetrics Protocol / IMD


from ganeval.torchmetrics import IMD, Protocol  # noqa: E402


def _pools(nr: int = 12, nf: int = 10, d: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(nr, d, generator=g), torch.randn(nf, d, generator=g) + 0.5


def test_protocol_and_imd_defaults() -> None:
    """Defaults: one run, the smaller pool whole, 99 % confidence, seed 0, the real pool reset; not differentiable,
    lower is better, no full state update."""
    for m in (Protocol(["fid"], features="identity"), IMD(features="identity")):
        assert (m.runs, m.sample_size, m.confidence, m.seed, m.reset_real_features) == (1, None, 0.99, 0, True)
    assert (Protocol.is_differentiable, Protocol.higher_is_better, Protocol.full_state_update) == (False, False, False)


def test_protocol_argument_checks() -> None:
    """sample_size must be an int (not a bool or float) or None; reset_real_features a bool; extractor options
    belong in features_options."""
    for bad in (True, 2.0):
        with pytest.raises(ValueError, match="sample_size must be an int"):
            Protocol(["fid"], features="identity", sample_size=bad)  # type: ignore[arg-type]
    assert Protocol(["fid"], features="identity", sample_size=5).sample_size == 5
    with pytest.raises(ValueError, match="reset_real_features must be True or False"):
        Protocol(["fid"], features="identity", reset_real_features=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"weights= is an option of the extractor"):
        Protocol(["fid"], features="identity", weights="w.pth")
    with pytest.raises(ValueError, match="real must be True or False"):
        Protocol(["fid"], features="identity").update(torch.ones(2, 3), real=1)  # type: ignore[arg-type]


def test_protocol_compute_matches_evaluate() -> None:
    """compute() is evaluate's mean on the pools, the smaller pool's size by default; runs > 1 adds the interval."""
    from ganeval import evaluate

    real, fake = _pools()
    m = Protocol(["fid"], features="identity")
    m.update(real, real=True)
    m.update(fake, real=False)
    out = m.compute()
    want = evaluate(real, fake, 1, 10, ["fid"], 0, 0.99, "cpu", progress=False)
    assert set(out) == {"fid"}
    assert float(out["fid"]) == float(want["mean"].iloc[0])
    m2 = Protocol(["fid"], features="identity", runs=2, sample_size=10, seed=3)
    m2.update(real, real=True)
    m2.update(fake, real=False)
    out2 = m2.compute()
    want2 = evaluate(real, fake, 2, 10, ["fid"], 3, 0.99, "cpu", progress=False).iloc[0]
    assert {k: float(v) for k, v in out2.items()} == {
        "fid": float(want2["mean"]), "fid_ci_low": float(want2["ci_low"]), "fid_ci_high": float(want2["ci_high"])}


def test_protocol_pool_checks() -> None:
    """compute() needs both pools; a sample size above a pool is refused, equal to it is fine; a pool keeps one
    width; chosen metrics needing one dimension refuse a second width at once."""
    real, fake = _pools()
    m = Protocol(["fid"], features="identity")
    with pytest.raises(ValueError, match=r"compute\(\) before any real update"):
        m.compute()
    m.update(real, real=True)
    with pytest.raises(ValueError, match=r"compute\(\) before any fake update: call update\(x, real=False\)"):
        m.compute()
    with pytest.raises(ValueError, match="x gives 4 features per sample but earlier real updates gave 3"):
        m.update(torch.ones(2, 4), real=True)
    with pytest.raises(ValueError):
        m.update(torch.ones(5, 4), real=False)
    m.update(fake, real=False)
    assert m._width(True) == 3 and m._width(False) == 3
    big = Protocol(["fid"], features="identity", sample_size=11)
    big.update(real, real=True)
    big.update(fake, real=False)
    with pytest.raises(ValueError, match=r"sample_size=11 is larger than the fake rows fed \(10\)"):
        big.compute()
    exact = Protocol(["fid"], features="identity", sample_size=10)
    exact.update(real, real=True)
    exact.update(fake, real=False)
    assert float(exact.compute()["fid"]) == float(m.compute()["fid"])


def test_protocol_reset_real_features() -> None:
    """reset() empties both pools, or only the fake one with reset_real_features=False."""
    real, fake = _pools()
    for keep in (False, True):
        m = Protocol(["fid"], features="identity", reset_real_features=not keep)
        m.update(real, real=True)
        m.update(fake, real=False)
        m.reset()
        assert len(m.fake_features) == 0
        assert len(m.real_features) == (1 if keep else 0)


def test_protocol_module_input_kind() -> None:
    """An nn.Module extractor sees x as given: a float batch after a uint8 one is refused."""
    m = Protocol(["fid"], features=torch.nn.Flatten())
    m.update(torch.zeros((2, 3), dtype=torch.uint8), real=True)
    with pytest.raises(ValueError, match="x is floating-point but earlier updates were uint8"):
        m.update(torch.zeros((2, 3)), real=True)
    m.update(torch.ones((2, 3), dtype=torch.uint8), real=False)
