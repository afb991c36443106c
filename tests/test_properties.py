"""Properties every correct FID, KID and IMD has, checked on small random sets drawn by hypothesis.

Sets are drawn from a hypothesis-chosen seed, shape, scale and offset (continuous values, so the k-NN
graphs have no exact ties, whose index-based tie-breaking would legitimately depend on row order).
Examples are fixed (`derandomize`) so a run is reproducible, as everything in ganeval is per seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ganeval.metrics import fid, heat_trace, imd, kid
from ganeval.metrics.streams import metric_draws
from ganeval.metrics.suite import prepare_set, score_pair

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
FEW = settings(max_examples=25, deadline=None, derandomize=True, database=None)
seeds = st.integers(0, 2**32 - 1)
rows = st.integers(12, 60)
dims = st.integers(2, 12)
scales = st.floats(1e-2, 1e2)


def sample(seed: int, n: int, d: int, scale: float = 1.0, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d)) * scale + shift


def orthogonal(seed: int, d: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def full_kid(x: np.ndarray, y: np.ndarray) -> float:
    """KID of one subset holding every row: deterministic, whatever the seed."""
    return kid(x, y, subsets=1, subset_size=len(x))[0]


@FEW
@given(seeds, rows, dims, scales, st.floats(-5, 5))
def test_fid_is_symmetric_and_ignores_row_order_and_shared_shifts(seed: int, n: int, d: int, scale: float, shift: float) -> None:
    x, y = sample(seed, n, d), sample(seed + 1, n + 3, d, scale, shift)
    value = fid(x, y)
    p, q = np.random.default_rng(seed).permutation(n), np.random.default_rng(seed).permutation(n + 3)
    b = np.random.default_rng(seed + 2).uniform(-10, 10, d)
    tol = 1e-8 * (1 + value + scale**2 * d)  # rounding of the covariances' traces, not of the value itself
    assert abs(fid(y, x) - value) <= tol
    assert abs(fid(x[p], y[q]) - value) <= tol
    assert abs(fid(x + b, y + b) - value) <= tol + 1e-10 * d * (b @ b)


@FEW
@given(seeds, rows, dims, scales)
def test_full_set_kid_is_symmetric_and_ignores_row_order(seed: int, n: int, d: int, scale: float) -> None:
    x, y = sample(seed, n, d), sample(seed + 1, n, d, scale, 0.5)
    value = full_kid(x, y)
    p, q = np.random.default_rng(seed).permutation(n), np.random.default_rng(seed + 1).permutation(n)
    tol = 1e-9 * (1 + scale**2) ** 3
    assert abs(full_kid(y, x) - value) <= tol
    assert abs(full_kid(x[p], y[q]) - value) <= tol


@FEW
@given(seeds, rows, dims, scales, st.booleans())
def test_kid_is_above_the_bound_its_diagonal_correction_allows(seed: int, n: int, d: int, scale: float, same: bool) -> None:
    # With A, B the off-diagonal and a, b the diagonal sums of the XX, YY kernels and C the XY sum, the
    # biased MMD² (A + a + B + b − 2C)/m² is a squared RKHS norm, ≥ 0, so the unbiased
    # (A + B)/(m(m−1)) − 2C/m² is ≥ (A + B)/(m²(m−1)) − (a + b)/m² (equal when y is a permutation of x).
    x = sample(seed, n, d)
    y = x[np.random.default_rng(seed).permutation(n)] if same else sample(seed + 1, n, d, scale, 0.3)
    kxx, kyy = (np.float64(a @ a.T / d + 1) ** 3 for a in (x, y))
    diag = np.trace(kxx) + np.trace(kyy)
    off = kxx.sum() + kyy.sum() - diag
    bound = off / (n * n * (n - 1)) - diag / (n * n)
    value = full_kid(x, y)
    assert value >= bound - 1e-9 * (1 + scale**2) ** 3
    if same:
        assert value == pytest.approx(bound, rel=1e-9, abs=1e-9)


@FEW
@given(seeds, rows, dims, st.integers(1, 6))
def test_heat_trace_ignores_row_order_with_probes_permuted_alike(seed: int, n: int, d: int, k: int) -> None:
    x = sample(seed, n, d)
    p = np.random.default_rng(seed).permutation(n)
    probes = np.random.default_rng(seed + 1).standard_normal((n, 20))
    k = min(k, n - 2)
    np.testing.assert_allclose(heat_trace(x[p], k=k, probes=probes[p]), heat_trace(x, k=k, probes=probes), rtol=1e-9)
    np.testing.assert_allclose(heat_trace(x[p], k=k, method="exact"), heat_trace(x, k=k, method="exact"), rtol=1e-9)


@FEW
@given(seeds, rows, dims, st.floats(1e-3, 1e3), st.floats(-100, 100))
def test_heat_trace_ignores_isometries_and_scaling(seed: int, n: int, d: int, scale: float, shift: float) -> None:
    # rotations, translations and scaling leave every neighbour ranking, hence the k-NN graph, unchanged
    x = sample(seed, n, d)
    moved = scale * (x @ orthogonal(seed + 1, d)) + shift
    probes = np.random.default_rng(seed + 2).standard_normal((n, 20))
    np.testing.assert_allclose(heat_trace(moved, probes=probes), heat_trace(x, probes=probes), rtol=1e-9)
    assert imd(x, moved, probes=(probes, probes)) <= 1e-6


@FEW
@given(seeds, rows, rows, dims, dims)
def test_imd_is_symmetric_with_swapped_probes(seed: int, n: int, m: int, d: int, e: int) -> None:
    x, y = sample(seed, n, d), sample(seed + 1, m, e) ** 3  # IMD compares sets of any dimensions
    px, py = (np.random.default_rng(seed + s).standard_normal((len(a), 16)) for s, a in ((2, x), (3, y)))
    assert imd(x, y, nv=16, probes=(px, py)) == imd(y, x, nv=16, probes=(py, px))


@FEW
@given(seeds, st.integers(30, 60), dims, seeds)
def test_same_seed_same_value_other_seed_other_value(seed: int, n: int, d: int, run: int) -> None:
    x, y = sample(seed, n, d), sample(seed + 1, n, d, 1.0, 0.2)
    opts = dict(subsets=3, subset_size=n // 2)
    assert kid(x, y, seed=run, **opts) == kid(x, y, seed=run, **opts)
    assert kid(x, y, seed=run, **opts) != kid(x, y, seed=run + 1, **opts)
    assert imd(x, y, nv=16, seed=run) == imd(x, y, nv=16, seed=run)
    assert imd(x, y, nv=16, seed=run) != imd(x, y, nv=16, seed=run + 1)
    metrics = {"imd": {"nv": 16}, "fid": {}, "kid": {"subsets": 3, "subset_size": n // 2}}
    sx, sy = prepare_set(x, metrics), prepare_set(y, metrics)
    first = score_pair(sx, sy, metric_draws(run), metrics)
    assert score_pair(prepare_set(x, metrics), prepare_set(y, metrics), metric_draws(run), metrics) == first
