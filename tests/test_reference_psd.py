"""A read covariance must be one: symmetric, finite and positive semi-definite within the stated float tolerance
(`ganeval.data.references.psd_tolerance`); mu and sigma finite; their dimension that of the features. Each bad
file is refused naming it, with exit 2 and one line from `ganeval-score`, before any extraction."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from ganeval.app.score import main
from ganeval.data.references import PSD_RTOL, ReferenceError, check_moments, psd_tolerance, read_reference

D = 12


def spectrum_matrix(eigenvalues: np.ndarray, seed: int = 0) -> np.ndarray:
    """Q diag(λ) Qᵀ for a random orthogonal Q: a symmetric matrix with exactly these eigenvalues."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(eigenvalues), len(eigenvalues))))
    s = (q * eigenvalues) @ q.T
    return (s + s.T) / 2


def refused(args: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code = main([*args, "--quiet"])
    _, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    x = np.random.default_rng(1).standard_normal((40, D)).astype(np.float32)
    np.save(tmp_path / "fake.npy", x)
    return tmp_path / "fake.npy"


def test_a_clearly_negative_eigenvalue_is_refused_naming_the_file(tmp_path: Path, fake: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    lam = np.linspace(1.0, 2.0, D)
    lam[0] = -0.05  # symmetric, finite, but not a covariance
    sigma = spectrum_matrix(lam)
    np.savez(tmp_path / "neg.npz", mu=np.zeros(D), sigma=sigma)
    line = refused([str(tmp_path / "neg.npz"), str(fake)], capsys, str(tmp_path / "neg.npz"), "negative eigenvalue",
                   "positive semi-definite")
    assert "-0.05" in line  # the eigenvalue found, as numpy's eigvalsh gives it
    with open(tmp_path / "neg.pkl", "wb") as f:  # EDM2's layout goes through the same check
        pickle.dump({"fid": {"mu": np.zeros(D), "sigma": sigma}}, f)
    refused([str(tmp_path / "neg.pkl"), str(fake)], capsys, "neg.pkl [fid]", "negative eigenvalue")


def test_the_tolerance_is_the_stated_one() -> None:
    """An eigenvalue just inside −tol·max|σ| passes, one just outside is refused (float64: tol = PSD_RTOL)."""
    assert psd_tolerance(D, np.finfo(np.float64).eps) == PSD_RTOL
    assert psd_tolerance(2048, np.finfo(np.float32).eps) == 2048 * float(np.finfo(np.float32).eps)
    for factor, ok in ((0.5, True), (2.0, False)):
        lam = np.linspace(0.5, 1.0, D)
        s = spectrum_matrix(lam)
        scale = np.abs(s).max()
        lam[0] = -factor * PSD_RTOL * scale
        s = spectrum_matrix(lam)  # max|σ| unchanged to within the tiny eigenvalue's share
        if ok:
            check_moments(np.zeros(D), s, "x.npz")
        else:
            with pytest.raises(ReferenceError, match="x.npz: sigma has 1 negative eigenvalues"):
                check_moments(np.zeros(D), s, "x.npz")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_true_covariances_pass_singular_and_float32_stored(tmp_path: Path, dtype: type) -> None:
    """np.cov of fewer rows than dimensions (rank-deficient: eigenvalues at rounding level, some negative), of
    ReLU-like features with constant (zero) columns, stored as float64 or float32: read without complaint."""
    rng = np.random.default_rng(3)
    d = 256
    x = np.maximum(rng.standard_normal((100, d)) @ rng.standard_normal((d, d)) * 0.1, 0).astype(np.float32)
    x[:, :20] = 0
    mu, sigma = x.astype(np.float64).mean(0), np.cov(x.astype(np.float64), rowvar=False)
    assert np.linalg.eigvalsh(sigma.astype(dtype).astype(np.float64))[0] <= 0  # at the edge of PSD: the case tested
    np.savez(tmp_path / "stats.npz", mu=mu.astype(dtype), sigma=sigma.astype(dtype))
    ref = read_reference(tmp_path / "stats.npz")
    assert ref is not None and ref.layout == "pytorch-fid"
    np.testing.assert_array_equal(ref.moments["inception"].sigma, sigma.astype(dtype).astype(np.float64))


def test_a_constant_set_zero_covariance_passes() -> None:
    check_moments(np.ones(D), np.zeros((D, D)), "zero.npz")


def test_a_zero_diagonal_with_off_diagonal_mass_is_refused() -> None:
    """max|σ| is over all entries, not the diagonal: [[0, 1], [1, 0]] (eigenvalues ±1) is not a covariance."""
    with pytest.raises(ReferenceError, match="negative eigenvalues down to -1"):
        check_moments(np.zeros(2), np.array([[0.0, 1.0], [1.0, 0.0]]), "offdiag.npz")


@pytest.mark.parametrize("key,index,value", [("mu", (0,), np.nan), ("mu", (3,), -np.inf),
                                             ("sigma", (1, 1), np.inf), ("sigma", (2, 5), np.nan)])
def test_non_finite_moments_are_refused_naming_the_file(tmp_path: Path, fake: Path, capsys, key: str,  # type: ignore[no-untyped-def]
                                                       index: tuple[int, ...], value: float) -> None:
    arrays = {"mu": np.zeros(D), "sigma": np.eye(D)}
    arrays[key][index] = value
    if key == "sigma":
        arrays[key][index[::-1]] = value
    np.savez(tmp_path / "bad.npz", **arrays)
    refused([str(tmp_path / "bad.npz"), str(fake)], capsys, str(tmp_path / "bad.npz"), f"{key} holds", "non-finite")


@pytest.mark.parametrize("extra", [["--dims", "768", "--weights", "none.pth", "--no-download"],
                                   ["--features", "pixels"]])
def test_a_dimension_mismatch_is_refused_before_extraction(tmp_path: Path, capsys, extra: list[str]) -> None:  # type: ignore[no-untyped-def]
    """2048-d moments against 768-d Inception features (refused before any weights are looked for: the weights
    file given does not exist), or against pixels (another feature space, named)."""
    np.savez(tmp_path / "stats.npz", mu=np.zeros(2048), sigma=np.eye(2048))
    imgs = np.random.default_rng(1).integers(0, 256, (4, 8, 8, 3), dtype=np.uint8)
    np.save(tmp_path / "imgs.npy", imgs)
    extra = [str(tmp_path / a) if a.endswith(".pth") else a for a in extra]
    words = ("2048-d statistics", "768-d") if "--dims" in extra else ("moments of inception features, not pixels",)
    refused([str(tmp_path / "stats.npz"), str(tmp_path / "imgs.npy"), *extra], capsys, str(tmp_path / "stats.npz"),
            *words)


def test_a_dimension_mismatch_with_feature_arrays(tmp_path: Path, fake: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A 20-d reference (moments, or ganeval's with features) against 12-d generated features: refused, naming both."""
    np.savez(tmp_path / "s20.npz", mu=np.zeros(20), sigma=np.eye(20))
    refused([str(tmp_path / "s20.npz"), str(fake)], capsys, str(tmp_path / "s20.npz"), "20-d statistics", "12-d")
