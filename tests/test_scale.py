"""FID, KID and the other moment-based distances at extreme scales (issue #22): large scales are exact (FID is
scale-covariant bit for bit, and matches a 50-digit mpmath FID at 1e30 as closely as at 1); small scales at
which the terms underflow or vanish beside KID's constant are computed in float64 or refused, never returned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from ganeval.metrics.fid import fid, frechet_distance
from ganeval.metrics.kid import kid
from ganeval.metrics.streams import metric_draws
from ganeval.metrics.suite import prepare_set, score_pair

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 4))
Y = RNG.normal(size=(40, 4)) * 1.3 + 0.3


def mp_fid(x: np.ndarray, y: np.ndarray) -> float:
    """FID of the float64 rows (exact binary values) in 50-digit arithmetic (symmetric eigendecompositions)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50

    def moments(a: np.ndarray):
        m = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in a])
        n, d = a.shape
        mu = [sum(m[i, j] for i in range(n)) / n for j in range(d)]
        cov = mpmath.matrix(d, d)
        for j in range(d):
            for k in range(d):
                cov[j, k] = sum((m[i, j] - mu[j]) * (m[i, k] - mu[k]) for i in range(n)) / (n - 1)
        return mu, cov

    (mu1, s1), (mu2, s2) = moments(x), moments(y)
    d = len(mu1)
    lam, u = mpmath.eigsy(s1)
    r1 = u * mpmath.diag([mpmath.sqrt(max(v, 0)) for v in lam]) * u.T  # Σ₁^½
    inner, _ = mpmath.eigsy(r1 * s2 * r1)  # tr √(Σ₁Σ₂) = Σ √eig(Σ₁^½ Σ₂ Σ₁^½)
    value = sum((a - b) ** 2 for a, b in zip(mu1, mu2)) + sum(s1[i, i] + s2[i, i] for i in range(d))
    return float(value - 2 * sum(mpmath.sqrt(max(v, 0)) for v in inner))


@pytest.mark.parametrize("k", [100, -100])
def test_fid_is_exactly_scale_covariant(k: int) -> None:
    # scaling by a power of two is exact in binary floating point, and so is every step of FID on it (beyond
    # eigenvalues ~1e153, LAPACK rescales by a factor that is not a power of two: then equal to ~1e-15, below)
    s = 2.0**k
    assert fid(X * s, Y * s) == fid(X, Y) * s * s
    assert fid(X * s, X * s) == fid(X, X) * s * s  # the self-distance's round-off scales too: no new error


@pytest.mark.parametrize("scale", [1.0, 1e30, 1e66, 1e-30])
def test_fid_at_large_and_small_scales_matches_mpmath(scale: float) -> None:
    x, y = X * scale, Y * scale
    exact = mp_fid(x, y)
    terms = scale * scale * (np.trace(np.cov(X.T)) + np.trace(np.cov(Y.T)))
    assert abs(fid(x, y) - exact) <= 1e-13 * terms
    assert abs(fid(x, y) / (scale * scale) - fid(X, Y)) <= 1e-13 * fid(X, Y)


@pytest.mark.parametrize("scale", [1e-80, 1e-150])
def test_fid_refuses_a_scale_whose_eigenvalues_underflow(scale: float) -> None:
    # before: 1e-80 gave FID off by 6e-4, 1e-150 gave tr Σ₁ + tr Σ₂ (the root underflowed to 0)
    with pytest.raises(ValueError, match=r"^x has values no larger than .*FID would lose most of its precision.*rescale"):
        fid(X * scale, Y * scale)
    with pytest.raises(ValueError, match="covariances no larger than.*rescale"):
        frechet_distance(np.zeros(4), np.cov(X.T) * scale**2, np.zeros(4), np.cov(Y.T) * scale**2)


def test_all_zero_features_are_exact_not_refused() -> None:
    z = np.zeros((10, 3))
    assert fid(z, z) == 0.0
    assert kid(z, z, subsets=2, subset_size=5)[0] == 0.0


def test_float32_features_at_1e_22_are_computed_in_float64_by_the_protocol_path() -> None:
    # the protocol's FID forms float32 covariance products for float32 features; at 1e-22 their squares are
    # below float32's normal range (before: 1 % off), so the set is computed in float64 and agrees with float64
    x, y = (X * 1e-22).astype(np.float32), (Y * 1e-22).astype(np.float32)
    sx, sy = prepare_set(x, ["fid"]), prepare_set(y, ["fid"])
    assert sx.x.dtype == torch.float64
    value = score_pair(sx, sy, metric_draws(0), ["fid"])["fid"]
    expected = fid(x.astype(np.float64), y.astype(np.float64))
    assert value == pytest.approx(expected, rel=1e-12)


def test_kid_of_small_float32_features_is_computed_in_float64() -> None:
    # before: float32 features at 1e-4 gave KID 0.0 (x·y/D vanished beside coef0 = 1 in float32)
    x, y = (X * 1e-4).astype(np.float32), (Y * 1e-4).astype(np.float32)
    got = kid(x, y, subsets=5, subset_size=20)[0]
    want = kid(x.astype(np.float64), y.astype(np.float64), subsets=5, subset_size=20)[0]
    assert got != 0.0 and got == pytest.approx(want, rel=1e-9)


def test_kid_refuses_features_too_small_for_float64() -> None:
    # before: 0.0 at 1e-8 (float64)
    with pytest.raises(ValueError, match="KID's kernel would lose most of its precision.*rescale"):
        kid(X * 1e-8, Y * 1e-8, subsets=5, subset_size=20)
    # with coef0 = 0 the kernel is homogeneous (degree 6 in the scale) and nothing is lost
    small = kid(X * 1e-8, Y * 1e-8, subsets=5, subset_size=20, coef0=0.0)[0]
    assert small == pytest.approx(kid(X, Y, subsets=5, subset_size=20, coef0=0.0)[0] * 1e-48, rel=1e-9)


def test_ganeval_score_refuses_tiny_features_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from ganeval.app.score import main

    np.save(tmp_path / "tiny.npy", X * 1e-80)
    np.save(tmp_path / "huge.npy", X * 1e30)
    assert main([str(tmp_path / "tiny.npy"), str(tmp_path / "tiny.npy"), "--metrics", "fid", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "tiny.npy" in err and "rescale" in err and len(err.strip().splitlines()) == 1
    # 1e30 alone is exact for FID (above) and is scored
    assert main([str(tmp_path / "huge.npy"), str(tmp_path / "huge.npy"), "--metrics", "fid", "--quiet"]) == 0
