"""FD∞'s line fit, Vendi and the Inception Score against direct float64 computations, at every option's edge."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special
import scipy.stats
import torch


# ------------------------------------------------------------------------------------------------------------------
# FD∞ (ganeval/metrics/fd_inf.py)
# ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("confidence", [0.99, 0.9])
def test_the_line_fit_is_scipys_least_squares(confidence: float) -> None:
    from ganeval.metrics.fd_inf import fit

    ns = np.array([50, 80, 120, 200, 400])
    y = np.array([3.1, 2.2, 1.9, 1.4, 1.1])
    got = fit(ns, y, confidence)
    ref = scipy.stats.linregress(1.0 / ns, y)
    assert got.intercept == pytest.approx(ref.intercept, rel=1e-12)
    assert got.slope == pytest.approx(ref.slope, rel=1e-12)
    assert got.stderr == pytest.approx(ref.intercept_stderr, rel=1e-10)
    t = scipy.stats.t.ppf(0.5 + confidence / 2, len(ns) - 2)
    assert (got.ci_low, got.ci_high) == pytest.approx((ref.intercept - t * ref.intercept_stderr,
                                                       ref.intercept + t * ref.intercept_stderr), rel=1e-10)
    assert fit(ns, y).ci_high - fit(ns, y).ci_low == pytest.approx(
        2 * scipy.stats.t.ppf(0.995, 3) * ref.intercept_stderr, rel=1e-10)  # default confidence 0.99


def test_a_two_point_line_has_no_interval() -> None:
    from ganeval.metrics.fd_inf import fit

    line = fit([10, 20], [2.0, 1.5])
    assert (line.intercept, line.slope) == pytest.approx((1.0, 10.0))
    assert math.isnan(line.stderr) and math.isnan(line.ci_low) and math.isnan(line.ci_high)
    three = fit([10, 20, 40], [2.0, 1.5, 1.25])  # exactly on the line: zero residual, zero width
    assert three.stderr == 0.0 and three.ci_low == three.ci_high == pytest.approx(1.0)


def test_sizes_are_their_linspace_and_checked() -> None:
    from ganeval.metrics.fd_inf import check_sizes, sizes

    assert sizes(50000, 15, 0.1).tolist() == np.linspace(5000, 50000, 15).astype(np.int32).tolist()
    assert sizes(10, 3, 0.5).tolist() == [5, 7, 10]
    check_sizes(4, 2, 0.5, "w")  # sizes 2 and 4
    with pytest.raises(ValueError, match=r"^w: sizes \[1, 2\] from n=2, points=2, min_fraction=0.5 need at least 2"):
        check_sizes(2, 2, 0.5, "w")
    with pytest.raises(ValueError, match=r"^w: sizes \[5\] from n=5, points=3, min_fraction=1.0"):
        check_sizes(5, 3, 1.0, "w")


def test_fd_inf_options_at_their_edges() -> None:
    from ganeval.metrics.fd_inf import DEFAULTS, MAX_POINTS, METRIC

    assert DEFAULTS == {"points": 15, "min_fraction": 0.1} and MAX_POINTS == 1000
    for ok in ({"points": 2}, {"points": 1000}, {"min_fraction": 1.0}, {"min_fraction": 1e-9}):
        assert METRIC.resolve(ok, where="") is not None
    for bad in ({"points": 1}, {"points": 1001}, {"points": 2.0}, {"min_fraction": 0.0}, {"min_fraction": 1.01}):
        with pytest.raises(ValueError):
            METRIC.resolve(bad, where="")


def test_fd_inf_draws_each_size_afresh_and_fits_their_fids() -> None:
    from ganeval.metrics.fd_inf import fd_inf, fit
    from ganeval.metrics.fid import fid

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    y = rng.normal(size=(40, 3)) + 0.5
    r = fd_inf(x, y, points=3, min_fraction=0.5, seed=7)
    assert r["sizes"] == [20, 30, 40]
    g = np.random.default_rng(7)
    want = [fid(x, y[g.permutation(40)[:k]]) for k in (20, 30, 40)]
    np.testing.assert_allclose(r["fids"], want, rtol=1e-6)
    line = fit([20, 30, 40], want)
    assert r["value"] == pytest.approx(line.intercept, rel=1e-6) and r["slope"] == pytest.approx(line.slope, rel=1e-6)
    default = fd_inf(x, y, points=3, min_fraction=0.5)  # seed 0
    assert default["fids"] == fd_inf(x, y, points=3, min_fraction=0.5, seed=np.random.default_rng(0))["fids"]


# ------------------------------------------------------------------------------------------------------------------
# Vendi (ganeval/metrics/vendi.py)
# ------------------------------------------------------------------------------------------------------------------
def _vendi64(x: np.ndarray, q: float) -> float:
    """The definition: eigenvalues of K/n for the cosine kernel, exp of their order-q Rényi entropy."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    xn = x / np.where(norms > 0, norms, 1.0)
    lam = np.linalg.eigvalsh(xn @ xn.T / len(x))
    p = lam[lam > 1e-12]
    if q == 1:
        return float(np.exp(-(p * np.log(p)).sum()))
    return float(np.exp(np.log((p**q).sum()) / (1 - q)))


@pytest.mark.parametrize("q", [1.0, 0.5, 2.0, 3.0])
def test_vendi_is_the_exp_of_the_kernels_renyi_entropy(q: float) -> None:
    from ganeval.metrics.vendi import vendi

    x = np.random.default_rng(1).normal(size=(30, 5))
    x[3] = 0.0  # a zero row stays zero
    assert vendi(x, q=q) == pytest.approx(_vendi64(x, q), rel=1e-9)
    assert vendi(x) == pytest.approx(_vendi64(x, 1.0), rel=1e-9)


def test_vendi_counts_distinct_directions() -> None:
    from ganeval.metrics.vendi import vendi

    assert vendi(np.eye(4)) == pytest.approx(4.0)
    assert vendi(np.ones((6, 3)) * 2.5) == pytest.approx(1.0)
    assert vendi(np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0], [0.0, 0.5]])) == pytest.approx(2.0)
    assert vendi(np.array([[1.0, 0.0]])) == pytest.approx(1.0)


def test_vendi_options_at_their_edges() -> None:
    from ganeval.metrics.vendi import DEFAULTS, METRIC, normalized

    assert DEFAULTS == {"q": 1.0, "kernel": "cosine"}
    METRIC.resolve({"q": 1e-9}, where="")
    for bad in ({"q": 0.0}, {"q": -1.0}, {"q": float("inf")}, {"kernel": "rbf"}):
        with pytest.raises(ValueError):
            METRIC.resolve(bad, where="")
    got = normalized(torch.tensor([[3.0, 4.0], [0.0, 0.0]]))
    assert torch.equal(got, torch.tensor([[0.6, 0.8], [0.0, 0.0]]))
    assert METRIC.memory(10, 7, {})[0] == 8.0 * 49


# ------------------------------------------------------------------------------------------------------------------
# Inception Score (ganeval/metrics/inception_score.py)
# ------------------------------------------------------------------------------------------------------------------
def _is64(z: np.ndarray, splits: int) -> np.ndarray:
    p = scipy.special.softmax(z, axis=1)
    out = []
    n = len(z)
    for i in range(splits):
        part = p[i * n // splits : (i + 1) * n // splits]
        q = part.mean(axis=0)
        out.append(np.exp(np.mean(np.sum(part * (np.log(part) - np.log(q)), axis=1))))
    return np.array(out)


@pytest.mark.parametrize("n, splits", [(23, 1), (23, 4), (23, 23), (30, 10)])
def test_the_inception_score_is_torch_fidelitys_formula(n: int, splits: int) -> None:
    from ganeval.metrics.inception_score import inception_score, split_scores

    z = np.random.default_rng(n + splits).normal(size=(n, 6)) * 2
    want = _is64(z, splits)
    np.testing.assert_allclose(split_scores(torch.from_numpy(z), splits).numpy(), want, rtol=1e-12)
    mean, std = inception_score(z, splits=splits)
    assert mean == pytest.approx(want.mean(), rel=1e-10)
    assert std == (0.0 if splits == 1 else pytest.approx(want.std(ddof=0), rel=1e-9))


def test_the_inception_scores_defaults_and_edges() -> None:
    from ganeval.metrics.inception_score import DEFAULTS, METRIC, check_splits, inception_score

    assert DEFAULTS == {"splits": 10}
    z = np.random.default_rng(0).normal(size=(20, 3))
    assert inception_score(z) == pytest.approx((_is64(z, 10).mean(), _is64(z, 10).std()), rel=1e-9)
    check_splits(5, 5, "logits")
    with pytest.raises(ValueError, match=r"^splits=6 is more than the 5 rows of logits: every split needs a row"):
        check_splits(6, 5, "logits")
    with pytest.raises(ValueError):
        check_splits(0, 5, "logits")
    with pytest.raises(ValueError, match=r"one column per class \(at least 2\), got 1"):
        inception_score(np.zeros((4, 1)), splits=2)
    assert inception_score(np.zeros((4, 2)), splits=2) == (1.0, 0.0)
    METRIC.check_sample_size(10, {"splits": 10})
    with pytest.raises(ValueError, match=r"metrics.inception_score.splits=11 exceeds sample_size=10"):
        METRIC.check_sample_size(10, {"splits": 11})


# ------------------------------------------------------------------------------------------------------------------
# Memory before work (ganeval/metrics/memory.py)
# ------------------------------------------------------------------------------------------------------------------
def test_memory_counts_are_their_formulas() -> None:
    from ganeval.metrics import memory as M

    assert M.GIB == 2.0**30
    assert M.covariances(10, 4, {}) == (8.0 * (2 * 16 + 16), "two 4×4 float64 covariances")
    assert M.covariances(3, 4, {})[0] == 8.0 * (2 * 16 + 9)
    assert M.features_bytes(5, 3) == 2 * 4.0 * 15


def test_a_run_that_cannot_fit_is_refused_naming_the_largest(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.metrics import memory as M
    from ganeval.metrics.registry import Metrics

    n, d = 100, 1000
    fid = 8.0 * (2 * d * d + n * n)
    rows = M.features_bytes(n, d)
    monkeypatch.setattr(M, "available_bytes", lambda device=None: int(rows + fid))
    M.check_memory(Metrics(["fid"]), n, d)  # exactly what is available: fits
    with pytest.raises(ValueError, match=r"^FID needs 0.0 GiB at once for 100 rows of 1001-d features \(two "
                                         r"1001×1001 float64 covariances\), but this machine has 0.0 GiB available: "
                                         "score features of fewer dimensions"):
        M.check_memory(Metrics(["fid"]), n, d + 1)
    with pytest.raises(ValueError, match=r", 2 runs in parallel 0.0 GiB, but this machine"):
        M.check_memory(Metrics(["fid"]), n, d, parallel=2)
    monkeypatch.setattr(M, "available_bytes", lambda device=None: 10)
    with pytest.raises(ValueError, match=r"^scoring 100 rows of 1000-d features needs 0.0 GiB at once, .*: WAY$"):
        M.check_memory(Metrics(["kid"]), n, d, way_out="WAY")  # KID declares nothing: the rows alone
    monkeypatch.setattr(M, "available_bytes", lambda device=None: None)
    M.check_memory(Metrics(["fid"]), 10**6, 10**5)  # unknown memory: no refusal


def test_needs_lists_the_declaring_metrics_largest_first() -> None:
    from ganeval.metrics.memory import needs
    from ganeval.metrics.registry import Metrics

    got = needs(Metrics(["kid", "vendi", "fid"]), 10, 6)
    assert [g[0] for g in got] == ["FID", "Vendi"] and got[0][1] == 8.0 * (2 * 36 + 36) and got[1][1] == 8.0 * 36


def test_available_memory_reads_the_host() -> None:
    from ganeval.metrics.memory import available_bytes

    got = available_bytes()
    with open("/proc/meminfo") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("MemAvailable:"))
    assert got is not None and abs(got - kib * 1024) < 2**30
    assert available_bytes("cpu") is not None and available_bytes("meta") is None


# ------------------------------------------------------------------------------------------------------------------
# Synthetic pool3-like features (ganeval/metrics/synthetic.py)
# ------------------------------------------------------------------------------------------------------------------
def test_pool3_like_is_its_documented_construction() -> None:
    from ganeval.metrics.synthetic import _structure, pool3_like

    n, d, rank = 5, 7, 3
    offset, loadings, noise = _structure(d, rank, 2)
    rng = np.random.default_rng([2, 0x9E3779B9])
    b = rng.normal(0.1, 0.25, size=d)
    spec = 1.0 / np.sqrt(1.0 + np.arange(rank) / 4.0)
    spec *= 0.3 / np.sqrt((spec**2).sum())
    w = rng.standard_normal((rank, d)) * spec[:, None]
    s = rng.uniform(0.05, 0.15, size=d)
    np.testing.assert_allclose(offset, b, rtol=1e-6)
    np.testing.assert_allclose(loadings, w, rtol=1e-6)
    np.testing.assert_allclose(noise, s, rtol=1e-6)
    g = np.random.default_rng([1, 2, 0])
    z = g.standard_normal((4096, rank), dtype=np.float32)
    e = g.standard_normal((4096, d), dtype=np.float32)[:n]
    want = np.maximum((z @ loadings)[:n] + offset + e * noise, 0.0)
    np.testing.assert_allclose(pool3_like(n, d, 1, distribution_seed=2, rank=rank), want, rtol=1e-6, atol=1e-7)


def test_pool3_like_defaults_and_chunks() -> None:
    from ganeval.metrics.synthetic import pool3_like

    x = pool3_like(3)
    assert x.shape == (3, 2048) and x.dtype == np.float32
    assert np.array_equal(x, pool3_like(3, 2048, 0, distribution_seed=0, rank=64))
    assert (x == 0).mean() == pytest.approx(0.4, abs=0.1)
    big = pool3_like(4097, 16, 5, rank=1)
    assert np.array_equal(big[:10], pool3_like(10, 16, 5, rank=1))  # the first rows do not depend on n
    assert not np.array_equal(big[4096], pool3_like(1, 16, 5, rank=1)[0])  # row 4096 starts chunk 1's stream
    assert pool3_like(1, 1, rank=1).shape == (1, 1)
    for kw, match in (({"n": 0}, "n must be a positive integer, got 0"), ({"n": 1.5}, "got 1.5"),
                      ({"n": 2, "d": 0}, "d must be a positive integer, got 0"),
                      ({"n": 2, "rank": 0}, "rank must be a positive integer, got 0")):
        with pytest.raises(ValueError, match=match):
            pool3_like(**kw)  # type: ignore[arg-type]


def test_pool3_like_on_a_device_draws_the_same_distribution() -> None:
    from ganeval.metrics.synthetic import _structure, pool3_like_on

    x = pool3_like_on("cpu", 6, d=4, seed=2, distribution_seed=1, rank=2, chunk=4)
    offset, loadings, noise = (torch.from_numpy(a) for a in _structure(4, 2, 1))
    g = torch.Generator().manual_seed(2 * 1000003 + 1)
    parts = []
    for m in (4, 2):
        z = torch.randn((m, 2), generator=g)
        parts.append((z @ loadings + offset + torch.randn((m, 4), generator=g) * noise).clamp(min=0.0))
    assert torch.allclose(x, torch.cat(parts))
    assert pool3_like_on("cpu", 3).shape == (3, 2048)
