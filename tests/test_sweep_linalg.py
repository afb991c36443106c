"""Linear algebra helpers, the union k-NN graph and sets of different dimension (ganeval/metrics/linalg.py,
laplacian.py, dims.py) against direct float64 computations."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.metrics import laplacian as L
from ganeval.metrics import linalg as A


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_products_and_eigenvalues(dtype: torch.dtype) -> None:
    rng = np.random.default_rng(0)
    a = torch.from_numpy(rng.normal(size=(7, 4))).to(dtype)
    b = torch.from_numpy(rng.normal(size=(4, 3))).to(dtype)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(A.matmul(a, b).numpy(), a.double().numpy() @ b.double().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(A.syrk_t(a).numpy(), a.double().numpy().T @ a.double().numpy(), rtol=tol, atol=tol)
    s = a.T @ a
    np.testing.assert_allclose(A.eigvalsh(s).numpy(), np.linalg.eigvalsh(s.double().numpy()), rtol=1e-4, atol=1e-4)
    assert A.column_sums64(a).dtype == torch.float64
    np.testing.assert_allclose(A.column_sums64(a).numpy(), a.double().numpy().sum(0), rtol=1e-12)
    mixed = A.matmul(a.double(), b.float().double())
    assert mixed.dtype == torch.float64
    assert A._numpy_ok(a, b) and not A._numpy_ok(a.double(), b.float()) and not A._numpy_ok(a.half())
    assert torch.equal(A.column_sums64(a.half()), a.half().sum(dim=0, dtype=torch.float64))


def test_the_lower_congruence_is_bt_s_b() -> None:
    rng = np.random.default_rng(1)
    m = rng.normal(size=(5, 5))
    s = torch.from_numpy(m @ m.T)
    b = torch.from_numpy(np.tril(rng.normal(size=(5, 5))))
    np.testing.assert_allclose(A.lower_congruence(b, s).numpy(), b.numpy().T @ s.numpy() @ b.numpy(), rtol=1e-12)
    np.testing.assert_allclose(A.lower_congruence(b.float(), s.float()).numpy(),
                               b.numpy().T @ s.numpy() @ b.numpy(), rtol=1e-4)


def test_strips_split_rows_evenly() -> None:
    cpu, gpu = torch.device("cpu"), torch.device("meta")
    assert A.strip_height(512, cpu) == 512 and A.strip_height(513, cpu) == 257 and A.strip_height(1, cpu) == 1
    assert A.strip_height(2048, gpu) == 2048 and A.strip_height(4097, gpu) == 1366
    assert A.strips(10, cpu, 4) == [(0, 4), (4, 8), (8, 10)] and A.strips(3, cpu) == [(0, 3)]
    x = torch.arange(12.0).reshape(4, 3)
    assert torch.equal(A.gram_strip(x, 1, 3), x[1:3] @ x[1:].T)


def test_the_union_graph_and_its_laplacian() -> None:
    nbrs = torch.tensor([[1], [2], [1], [0]])  # 0→1, 1→2, 2→1, 3→0: edges {0,1}, {1,2}, {0,3}
    rows, cols = L.union_edges(nbrs)
    assert list(zip(rows.tolist(), cols.tolist())) == [(0, 1), (0, 3), (1, 0), (1, 2), (2, 1), (3, 0)]
    a = np.zeros((4, 4))
    for i, j in zip(rows.tolist(), cols.tolist()):
        a[i, j] = 1
    d = a.sum(1)
    want = np.eye(4) - a / np.sqrt(np.outer(d, d))
    np.testing.assert_allclose(L.dense_laplacian(nbrs).numpy(), want)
    s = L.normalized_adjacency(nbrs)
    assert s.layout == torch.sparse_csr and s.crow_indices().tolist() == [0, 2, 4, 5, 6]
    powers = L.adjacency_power_traces(nbrs, 5, rows_per_chunk=1)
    sm = np.eye(4) - want
    np.testing.assert_allclose(powers, [np.trace(np.linalg.matrix_power(sm, i)) for i in range(6)], atol=1e-12)
    np.testing.assert_allclose(L.adjacency_power_traces(nbrs, 4), powers[:5], atol=1e-12)


def test_sets_of_different_dimension() -> None:
    from ganeval.metrics.dims import dimension_free, dimension_free_part, fit_metrics, mismatch, record_dims
    from ganeval.metrics.registry import Metrics

    assert "imd" in dimension_free() and "fid" not in dimension_free()
    assert mismatch({"real": 3, "a": 3}) is None and mismatch({"real": 3, "a": 3, "b": 4}) == (("real", 3), ("b", 4))
    m = Metrics(["imd", "fid", "kid"])
    assert fit_metrics(m, {"real": 3, "a": 3}, chosen=True) == (m, None)
    kept, note = fit_metrics(m, {"real": 3, "a": 5}, chosen=False)
    assert list(kept) == ["imd"]
    assert note == ("note: real has 3 features and a has 5: FID, KID need one dimension and are left out; "
                    "scoring IMD")
    one, note1 = fit_metrics(Metrics(["imd", "fid"]), {"real": 3, "a": 5}, chosen=False)
    assert note1 == "note: real has 3 features and a has 5: FID needs one dimension and is left out; scoring IMD"
    with pytest.raises(ValueError, match=r"^FID needs features of one dimension, but real has 3 features and a has 5: "
                                         r"to compare sets of different dimension choose only dimension-free metrics"):
        fit_metrics(Metrics(["fid", "imd"]), {"real": 3, "a": 5}, chosen=True)
    with pytest.raises(ValueError, match=r"^FID, KID need features of one dimension"):
        fit_metrics(Metrics(["fid", "kid"]), {"real": 3, "a": 5}, chosen=False)
    assert fit_metrics(Metrics(["imd"]), {"real": 3, "a": 5}, chosen=True)[1] is None
    assert dimension_free_part(Metrics(["imd"])) is None and dimension_free_part(Metrics(["fid"])) is None
    assert record_dims({1: np.int64(3)}) == {"1": 3}
