"""IMD: reference numbers, exact ground truth on small graphs, estimator quality, invariances, errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import scipy.linalg
import torch

from ganeval.metrics import heat_trace, imd, imd_from_traces

knn_module = importlib.import_module("ganeval.metrics.knn")
imd_module = importlib.import_module("ganeval.metrics.imd")


def brute_force_knn(x: np.ndarray, k: int) -> np.ndarray:
    """k nearest other rows by exact float64 distance; ties to the lower index (stable sort)."""
    d = ((x[:, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    return np.argsort(d, axis=1, kind="stable")[:, :k]


def dense_normalized_laplacian(nbrs: np.ndarray) -> np.ndarray:
    n = len(nbrs)
    a = np.zeros((n, n))
    a[np.repeat(np.arange(n), nbrs.shape[1]), nbrs.ravel()] = 1
    a = np.maximum(a, a.T)
    dinv = 1 / np.sqrt(a.sum(1))
    return np.eye(n) - dinv[:, None] * a * dinv[None, :]


def independent_exact_trace(x: np.ndarray, t: np.ndarray, k: int = 5) -> np.ndarray:
    lam = scipy.linalg.eigvalsh(dense_normalized_laplacian(brute_force_knn(x, k)))
    return np.exp(-np.outer(t, lam)).sum(1) / len(x) * 1e6


def test_reference_readme_example_digit_for_digit() -> None:
    np.random.seed(1)
    x0 = np.random.randn(1000, 10)
    x1 = np.random.randn(1000, 9)
    y0 = np.random.beta(0.5, 0.5, (1000, 10))
    probes = [np.random.randn(1000, 100) for _ in range(4)]
    assert imd(x0, x1, probes=(probes[0], probes[1]), variance_reduction="paper") == pytest.approx(14.56558975989794, rel=1e-8)
    assert imd(x0, y0, probes=(probes[2], probes[3]), variance_reduction="paper") == pytest.approx(114.81416622661006, rel=1e-8)


@pytest.mark.parametrize("height", [1, 7, 64, 4096])
def test_exact_knn_matches_brute_force_with_duplicates(height: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((150, 6)).astype(np.float32)
    x[10:16] = x[3]  # a cluster of exact duplicates: ties must go to the lower index
    x[40] = x[41]
    got = knn_module.exact_knn(torch.from_numpy(x), 5, height=height).numpy()
    np.testing.assert_array_equal(np.sort(got, 1), np.sort(brute_force_knn(x, 5), 1))


def test_exact_knn_integer_grid_ties() -> None:
    # points on an integer grid: many exactly equal distances
    g = np.stack(np.meshgrid(np.arange(8), np.arange(8)), -1).reshape(-1, 2).astype(np.float32)
    got = knn_module.exact_knn(torch.from_numpy(g), 5, height=16).numpy()
    np.testing.assert_array_equal(np.sort(got, 1), np.sort(brute_force_knn(g, 5), 1))


def test_gram_hook_sees_upper_triangle_strips() -> None:
    x = torch.randn(50, 4, dtype=torch.float64)
    full = torch.zeros(50, 50, dtype=torch.float64)

    def hook(a: int, g: torch.Tensor) -> None:
        assert g.shape[1] == 50 - a
        full[a : a + g.shape[0], a:] = g

    knn_module.exact_knn(x, 3, height=16, gram_hook=hook)
    torch.testing.assert_close(torch.triu(full), torch.triu(x @ x.T))


def test_exact_method_against_independent_dense_computation() -> None:
    x = np.random.default_rng(1).standard_normal((120, 4))
    t = np.logspace(-1, 1, 32)
    np.testing.assert_allclose(heat_trace(x, t=t, method="exact"), independent_exact_trace(x, t), rtol=1e-10)


def test_normalizations_follow_their_definitions() -> None:
    x = np.random.default_rng(2).standard_normal((90, 3))
    t, n, k = np.logspace(-1, 1, 16), 90, 5
    raw = heat_trace(x, t=t, method="exact", normalization="none")
    np.testing.assert_allclose(heat_trace(x, t=t, method="exact"), raw / n, rtol=1e-12)
    complete = 1 + (n - 1) * np.exp(-(1 + 1 / (n - 1)) * t)
    np.testing.assert_allclose(heat_trace(x, t=t, method="exact", normalization="complete"), raw / complete, rtol=1e-12)
    er_spectrum = 4 / np.sqrt(k) * np.linspace(0, 1, n) + 1 - 2 / np.sqrt(k)
    er = np.array([np.exp(-ti * er_spectrum).sum() for ti in t])
    np.testing.assert_allclose(heat_trace(x, t=t, method="exact", normalization="er"), raw / (er + 1e-6), rtol=1e-12)


def test_slq_close_to_exact_trace() -> None:
    x = np.random.default_rng(3).standard_normal((800, 10))
    exact = heat_trace(x, method="exact")
    est = heat_trace(x, seed=0)
    rel = np.abs(est - exact) / exact
    assert rel.mean() < 0.02, rel.mean()


def test_control_variate_reduces_variance_over_seeds() -> None:
    x = np.random.default_rng(4).standard_normal((500, 8))
    t = np.logspace(-1, 1, 24)
    with_cv = np.stack([heat_trace(x, t=t, seed=s, nv=20) for s in range(12)])
    without = np.stack([heat_trace(x, t=t, seed=s, nv=20, variance_reduction=False) for s in range(12)])
    assert with_cv.std(0).mean() < 0.5 * without.std(0).mean()


def test_seeded_and_decomposes_into_traces() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((300, 5)), rng.standard_normal((250, 7))
    assert imd(x, y, seed=3) == imd(x, y, seed=3)
    assert imd(x, y, seed=3) != imd(x, y, seed=4)
    g = np.random.default_rng(3)
    assert imd(x, y, seed=3) == imd_from_traces(heat_trace(x, seed=g), heat_trace(y, seed=g))


def test_intrinsic_under_rotation_and_shift() -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((400, 12))
    q, _ = np.linalg.qr(rng.standard_normal((12, 12)))
    y = x @ q.T + rng.standard_normal(12) * 5
    p = rng.standard_normal((400, 100))
    assert imd(x, y, probes=(p, p)) < 1e-9


def test_different_distributions_score_far_above_same() -> None:
    rng = np.random.default_rng(7)
    same = [imd(rng.standard_normal((600, 10)), rng.standard_normal((600, 10)), seed=s) for s in range(3)]
    other = [imd(rng.standard_normal((600, 10)), rng.beta(0.5, 0.5, (600, 10)), seed=s) for s in range(3)]
    assert min(other) > 5 * max(same)


def test_rademacher_probes_estimate_the_same_trace() -> None:
    x = np.random.default_rng(8).standard_normal((400, 6))
    exact = heat_trace(x, method="exact")
    est = heat_trace(x, rademacher=True)
    assert (np.abs(est - exact) / exact).mean() < 0.02


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(x=np.zeros((6, 3))), "at least 7"),
        (dict(x=np.zeros(20)), "2-D"),
        (dict(x=np.zeros((0, 3))), "empty"),
        (dict(x=np.vstack([np.full((3, 2), np.nan), np.zeros((20, 2))])), "3 row"),
        (dict(x=np.zeros((20, 2)), normalization="bogus"), "normalization"),
        (dict(x=np.zeros((20, 2)), knn="fast"), "knn"),
        (dict(x=np.zeros((20, 2)), probes=np.ones((19, 4))), "N=20"),
        (dict(x=np.zeros((20, 2)), t=[0.0, 1.0]), "positive"),
    ],
)
def test_bad_input(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        heat_trace(**kwargs)


def test_imd_accepts_different_dimensions_and_checks_probes() -> None:
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((50, 3)), rng.standard_normal((60, 9))
    assert imd(x, y) >= 0
    with pytest.raises(ValueError, match="pair"):
        imd(x, y, probes=(rng.standard_normal((50, 4)),))


@pytest.mark.gpu
def test_gpu_matches_cpu() -> None:
    rng = np.random.default_rng(10)
    x, y = rng.standard_normal((2000, 64)).astype(np.float32), rng.standard_normal((2000, 64)).astype(np.float32)
    p = (rng.standard_normal((2000, 100)), rng.standard_normal((2000, 100)))
    assert imd(x, y, probes=p, device="cuda") == pytest.approx(imd(x, y, probes=p), rel=1e-6)


def test_exact_method_refuses_large_sets_before_any_work() -> None:
    big = np.zeros((10001, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="dense 10001×10001 Laplacian for y"):
        imd(big[:50], big, method="exact")
    with pytest.raises(ValueError, match="N ≤ 10000"):
        heat_trace(big, method="exact")


def test_lanczos_memory_estimate_is_what_lanczos_allocates() -> None:
    """IMD's memory estimate of one set's SLQ is the bytes of the float64 probes and the Lanczos basis that
    `lanczos` really allocates (`_first_step`), not a restated formula: an estimate short of them lets a run start
    that cannot fit."""
    from ganeval.metrics.imd import lanczos_bytes
    from ganeval.metrics.laplacian import normalized_adjacency
    from ganeval.metrics.slq import _first_step

    rng = np.random.default_rng(0)
    n, nv, m = 30, 4, 7
    nbrs = torch.as_tensor(brute_force_knn(rng.normal(size=(n, 3)), 3))
    probes = torch.as_tensor(rng.normal(size=(n, nv)))
    basis = _first_step(normalized_adjacency(nbrs), probes, m)[0]
    got, what = lanczos_bytes(n, {"nv": nv, "m": m})
    assert got == basis.nbytes + probes.nbytes and basis.dtype == probes.dtype == torch.float64
    assert what == f"{nv} probes and their {m}-step Lanczos basis in float64"
