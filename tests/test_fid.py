"""FID against closed forms, scipy's sqrtm formula and pytorch-fid's own function."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg
import torch

from ganeval.metrics import fid, frechet_distance
from ganeval.metrics.fid import statistics


def sqrtm_formula(x: np.ndarray, y: np.ndarray) -> float:
    """The textbook FID with scipy.linalg.sqrtm (pytorch-fid's route), written independently here."""
    mu1, mu2 = x.mean(0), y.mean(0)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = scipy.linalg.sqrtm(s1 @ s2)
    if isinstance(covmean, tuple):
        covmean = covmean[0]
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean).real)


def correlated(rng: np.random.Generator, n: int, d: int, shift: float = 0.0) -> np.ndarray:
    mix = rng.standard_normal((d, d)) / np.sqrt(d)
    return rng.standard_normal((n, d)) @ mix + shift


def test_unit_gaussians_2048d_is_2048() -> None:
    d = 2048
    eye = np.eye(d)
    assert frechet_distance(np.zeros(d), eye, np.ones(d), eye) == pytest.approx(2048.0, rel=1e-12)


def test_closed_form_diagonal_gaussians() -> None:
    # For commuting (diagonal) covariances tr√(Σ1Σ2) = Σ √(a_i b_i).
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.5, 2, 50), rng.uniform(0.5, 2, 50)
    mu1, mu2 = rng.standard_normal(50), rng.standard_normal(50)
    expected = ((mu1 - mu2) ** 2).sum() + a.sum() + b.sum() - 2 * np.sqrt(a * b).sum()
    assert frechet_distance(mu1, np.diag(a), mu2, np.diag(b)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n,d", [(800, 64), (40, 64), (120, 256)])
def test_matches_sqrtm_formula(n: int, d: int) -> None:
    rng = np.random.default_rng(n + d)
    x = correlated(rng, n, d, 0.2)
    y = np.maximum(correlated(rng, n + 7, d), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sqrtm_formula(x, y)
    assert fid(x, y) == pytest.approx(ref, rel=1e-6)


def test_matches_pytorch_fid_calculate_frechet_distance(monkeypatch: pytest.MonkeyPatch) -> None:
    fid_score = pytest.importorskip("pytorch_fid.fid_score")
    real_sqrtm = scipy.linalg.sqrtm

    def sqrtm_compat(a, disp=True, **kw):  # SciPy ≥ 1.18 dropped `disp`; pytorch-fid 0.3.0 still passes it
        out = real_sqrtm(a, **kw)
        return (out[0] if isinstance(out, tuple) else out), 0.0

    monkeypatch.setattr(fid_score.linalg, "sqrtm", sqrtm_compat)
    rng = np.random.default_rng(11)
    for n, d in [(600, 128), (90, 128)]:  # N > D and N < D (rank-deficient covariances)
        x, y = correlated(rng, n, d), np.abs(correlated(rng, n, d, 0.1))
        mu1, s1 = x.mean(0), np.cov(x, rowvar=False)
        mu2, s2 = y.mean(0), np.cov(y, rowvar=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = fid_score.calculate_frechet_distance(mu1, s1, mu2, s2)
        assert fid(x, y) == pytest.approx(ref, rel=1e-6)
        assert frechet_distance(mu1, s1, mu2, s2) == pytest.approx(ref, rel=1e-6)


def test_statistics_are_float64_unbiased() -> None:
    x = np.random.default_rng(0).standard_normal((50, 6)).astype(np.float32)
    mu, sigma = statistics(x)
    assert mu.dtype == torch.float64 and sigma.dtype == torch.float64
    np.testing.assert_allclose(sigma.numpy(), np.cov(x.astype(np.float64), rowvar=False), rtol=1e-10)


def test_torch_and_numpy_inputs_agree() -> None:
    rng = np.random.default_rng(1)
    x, y = correlated(rng, 200, 16), correlated(rng, 150, 16, 0.5)
    assert fid(torch.from_numpy(x), torch.from_numpy(y)) == pytest.approx(fid(x, y), rel=1e-12)
    assert fid(x, x) == pytest.approx(0.0, abs=1e-8)


@pytest.mark.parametrize(
    "x,y,match",
    [
        (np.zeros((10, 3)), np.zeros((10, 4)), "D=3.*D=4"),
        (np.full((10, 3), np.nan), np.zeros((10, 3)), "3.*NaN|10 row"),
        (np.zeros(10), np.zeros((10, 1)), "2-D"),
        (np.zeros((0, 3)), np.zeros((10, 3)), "empty"),
    ],
)
def test_bad_input(x: np.ndarray, y: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fid(x, y)


def test_nan_rows_are_counted() -> None:
    x = np.random.default_rng(0).standard_normal((20, 3))
    x[[2, 5]] = np.inf
    with pytest.raises(ValueError, match="2 row"):
        fid(x, x[::-1].copy())


def test_finite_values_whose_sum_overflows_are_accepted() -> None:
    # the fast finiteness check sums the array; an overflowing sum must not be taken for an inf entry
    from ganeval.metrics.validation import check_features

    x = np.full((4, 3), 3e38, dtype=np.float32)
    assert check_features(x, "x") == (4, 3)
    assert check_features(torch.from_numpy(x), "x") == (4, 3)
    x[1, 2] = np.nan
    with pytest.raises(ValueError, match="1 row"):
        check_features(torch.from_numpy(x), "x")


@pytest.mark.gpu
def test_gpu_matches_cpu() -> None:
    rng = np.random.default_rng(2)
    x, y = correlated(rng, 500, 64), correlated(rng, 500, 64, 0.3)
    assert fid(x, y, device="cuda") == pytest.approx(fid(x, y), rel=1e-9)


def test_zero_means_are_accepted_and_give_the_closed_form() -> None:
    """Centred features (both means exactly 0) are ordinary input, not an underflow: with diagonal covariances the
    distance is Σ (√aᵢ − √bᵢ)² (the underflow guard applies only to a nonzero scale)."""
    a, b = np.array([1.0, 4.0, 0.25]), np.array([9.0, 1.0, 0.25])
    got = frechet_distance(np.zeros(3), np.diag(a), np.zeros(3), np.diag(b))
    assert got == pytest.approx(float(((np.sqrt(a) - np.sqrt(b)) ** 2).sum()), rel=1e-9)  # 4 + 1 + 0
