"""A sweep of the metrics' edges against independent float64 ground truth: KID, PRDC, authenticity/MiFID, CMMD,
FID, the k-NN search's precision rules and IMD (argument edges, defaults, branch boundaries, exact values)."""

from __future__ import annotations

import warnings
import importlib
import math

import numpy as np
import pytest
import torch

from ganeval.metrics.kid import kid
from ganeval.metrics.prdc import prdc
from ganeval.metrics.cmmd import cmmd
from ganeval.metrics.imd import heat_trace, imd, imd_from_traces
from ganeval.metrics.memorization import authenticity, mifid
from ganeval.metrics.registry import CROSS_GRAM_HOOKS, Metrics, Shared, get_metric
from ganeval.metrics.streams import metric_draws
from ganeval.metrics.suite import prepare_set, score_pair
from ganeval.metrics.validation import FLOAT32_TINY, FLOAT64_TINY

kid_module = importlib.import_module("ganeval.metrics.kid")


def gauss(n: int, d: int, seed: int, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)) + shift


# ---------------------------------------------------------------------------------------------------- KID
def kid_reference(x: np.ndarray, y: np.ndarray, subsets: int, m: int, rng: np.random.Generator, degree: int = 3,
                  gamma: float | None = None, coef0: float = 1.0) -> tuple[float, float]:
    """Bińkowski et al.'s unbiased MMD² per subset (float64 full kernels, indicator sums), draws as kid's:
    per subset m rows of x then m rows of y, without replacement."""
    g = 1.0 / x.shape[1] if gamma is None else gamma
    kxx, kyy, kxy = ((g * a @ b.T + coef0) ** degree for a, b in ((x, x), (y, y), (x, y)))
    sx, sy = np.zeros((len(x), subsets)), np.zeros((len(y), subsets))
    for s in range(subsets):
        sx[rng.choice(len(x), m, replace=False), s] = 1.0
        sy[rng.choice(len(y), m, replace=False), s] = 1.0
    np.fill_diagonal(kxx, 0.0)
    np.fill_diagonal(kyy, 0.0)
    sxx, syy, sxy = (((k @ b) * a).sum(axis=0) for k, a, b in ((kxx, sx, sx), (kyy, sy, sy), (kxy, sx, sy)))
    vals = (sxx + syy) / (m * (m - 1)) - 2 * sxy / (m * m)
    v = np.array(vals)
    return float(v.mean()), float(v.std())


def test_kid_batched_path_matches_reference_per_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Per-subset blocks (nx·ny > subsets·m²), odd m, chunks of 4 subsets: the exact unbiased MMD² mean and std."""
    x, y = gauss(40, 5, 1), gauss(37, 5, 2, 0.4)
    monkeypatch.setattr(kid_module, "CHUNK_ELEMENTS", 4 * 7 * 5)
    got = kid(x, y, subsets=6, subset_size=7, seed=3)
    want = kid_reference(x, y, 6, 7, np.random.default_rng(3))
    assert got == pytest.approx(want, rel=1e-10, abs=1e-13)
    monkeypatch.setattr(kid_module, "CHUNK_ELEMENTS", 1 << 24)
    assert kid(x, y, subsets=6, subset_size=7, seed=3) == pytest.approx(want, rel=1e-10, abs=1e-13)


@pytest.mark.parametrize("degree,gamma,coef0", [(3, None, 1.0), (1, None, 1.0), (2, 0.3, -0.5), (4, 0.05, 2.0)])
def test_kid_all_pairs_path_matches_reference(degree: int, gamma: float | None, coef0: float) -> None:
    """Every pair summed once (nx·ny ≤ subsets·m²): any degree, γ and coef0 match the direct kernel."""
    x, y = gauss(20, 3, 4), gauss(22, 3, 5, 0.7)
    got = kid(x, y, subsets=6, subset_size=10, seed=7, degree=degree, gamma=gamma, coef0=coef0)
    want = kid_reference(x, y, 6, 10, np.random.default_rng(7), degree, gamma, coef0)
    assert got == pytest.approx(want, rel=1e-10, abs=1e-13)


def test_kid_defaults_are_100_subsets_of_1000_cubic_seed_0() -> None:
    """Called with no options: 100 subsets of 1000 rows, (x·y/d + 1)³, seed 0 (several row strips)."""
    x, y = gauss(1003, 3, 8), gauss(1001, 3, 9, 0.2)
    got = kid(x, y)
    want = kid_reference(x, y, 100, 1000, np.random.default_rng(0))
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_kid_subset_of_the_whole_set_and_generator_seed() -> None:
    """subset_size equal to both sets' sizes (draws without replacement: every row once) and a Generator seed."""
    x, y = gauss(9, 2, 10), gauss(9, 2, 11, 1.0)
    got = kid(x, y, subsets=3, subset_size=9, seed=np.random.default_rng(4))
    kxx, kyy, kxy = ((a @ b.T / 2 + 1) ** 3 for a, b in ((x, x), (y, y), (x, y)))
    full = (kxx.sum() - np.trace(kxx) + kyy.sum() - np.trace(kyy)) / 72 - 2 * kxy.sum() / 81
    assert got[0] == pytest.approx(full, rel=1e-10)
    assert got[1] == pytest.approx(0.0, abs=1e-12)


def test_kid_std_is_population_std_and_zero_for_one_subset() -> None:
    """std over subsets with ddof=0 (two subsets: half their difference); one subset: exactly 0.0."""
    x, y = gauss(30, 4, 12), gauss(30, 4, 13, 0.5)
    mean, std = kid(x, y, subsets=2, subset_size=5, seed=1)
    want = kid_reference(x, y, 2, 5, np.random.default_rng(1))
    assert (mean, std) == pytest.approx(want, rel=1e-10)
    assert std > 0
    one = kid(x, y, subsets=1, subset_size=5, seed=1)
    assert one[1] == 0.0
    assert one[0] == pytest.approx(kid_reference(x, y, 1, 5, np.random.default_rng(1))[0], rel=1e-10)


def test_kid_of_a_set_against_itself_on_whole_set_subsets() -> None:
    """x against a copy of itself, subsets of every row: the unbiased estimate 2·offdiag/(m(m−1)) − 2·all/m²."""
    x = gauss(12, 3, 14)
    mean, std = kid(x, x.copy(), subsets=2, subset_size=12)
    kxx = (x @ x.T / 3 + 1) ** 3
    want = 2 * (kxx.sum() - np.trace(kxx)) / 132 - 2 * kxx.sum() / 144
    assert mean == pytest.approx(want, rel=1e-10) and std == pytest.approx(0.0, abs=1e-12)


def test_kid_argument_edges() -> None:
    """The least legal values pass (2 rows, subset_size 2, subsets 1, degree 1) and the first illegal fail."""
    x, y = gauss(2, 3, 15), gauss(2, 3, 16)
    got = kid(x, y, subsets=1, subset_size=2, degree=1)
    assert got[0] == pytest.approx(kid_reference(x, y, 1, 2, np.random.default_rng(0), degree=1)[0], rel=1e-10)
    with pytest.raises(ValueError, match="at least 2"):
        kid(x[:1], y, subsets=1, subset_size=2)
    with pytest.raises(ValueError, match="subset_size"):
        kid(x, y, subsets=1, subset_size=1)
    with pytest.raises(ValueError, match="subsets"):
        kid(x, y, subsets=0, subset_size=2)
    with pytest.raises(ValueError, match="degree"):
        kid(x, y, subsets=1, subset_size=2, degree=0)
    with pytest.raises(ValueError, match="gamma"):
        kid(x, y, subsets=1, subset_size=2, gamma=float("nan"))
    with pytest.raises(ValueError, match="subset_size=3"):
        kid(x, y, subsets=1, subset_size=3)


def test_kid_option_table_and_metric_constants() -> None:
    opts = {o.name: o for o in kid_module.OPTIONS}
    assert {k: v.default for k, v in opts.items()} == {"subsets": 100, "subset_size": 1000, "degree": 3, "coef0": 1.0}
    assert Metrics({"kid": {"subsets": 1, "subset_size": 2, "degree": 1}})["kid"]["subsets"] == 1
    for bad in ({"subsets": 0}, {"subset_size": 1}, {"degree": 0}):
        with pytest.raises(ValueError):
            Metrics({"kid": bad})
    m = kid_module.METRIC
    assert m.scale == 1e3 and m.shares is True
    Metrics({"kid": {"subset_size": 50}}).check_sample_size(50)
    with pytest.raises(ValueError, match="exceeds sample_size=49"):
        Metrics({"kid": {"subset_size": 50}}).check_sample_size(49)


def test_kid_reach_formula() -> None:
    """reach = (N·K, max(N²·K, K²), precise24, precise53) with K = (|γ|·D·peak² + |c|)^degree."""
    k = (0.25 * 4 * 2.0**2 + 1.0) ** 3  # defaults: degree 3, coef0 1, γ = 1/D
    assert kid_module.reach(2.0, 10, 4) == (10 * k, max(100 * k, k * k), True, True)
    assert kid_module.reach(2.0, 1000, 4)[1] == 1000 * 1000 * k
    k2 = (0.5 * 4 * 3.0**2 + 2.0) ** 2
    assert kid_module.reach(3.0, 7, 4, degree=2, coef0=-2.0, gamma=-0.5)[:2] == (7 * k2, max(49 * k2, k2 * k2))
    # precision flags: coef0 = 0 at float32's edge (t³ = 2⁻¹⁰²), coef0 = 1 at float64's (t = 2⁻²⁶)
    assert kid_module.reach(2.0**-17, 3, 1, coef0=0.0, gamma=1.0)[2:] == (True, True)
    assert kid_module.reach(2.0**-17.5, 3, 1, coef0=0.0, gamma=1.0)[2:] == (False, True)
    assert kid_module.reach(2.0**-13, 3, 1)[2:] == (False, True)
    assert kid_module.reach(2.0**-13.25, 3, 1)[2:] == (False, False)


def test_kid_precise_rule_edges() -> None:
    p = kid_module.precise
    assert p(0.0, 3, 1.0, 24) and p(0.0, 3, 0.0, 53)
    assert p(2.0**-12, 3, 1.0, 24) and not p(2.0**-12.5, 3, 1.0, 24)
    assert p(2.0**-11, 3, -2.0, 24) and not p(2.0**-11.5, 3, -2.0, 24)
    assert not p(1.0, 3, 1e10, 53)
    assert p(2.0**-34, 3, 0.0, 24) and not p(2.0**-35, 3, 0.0, 24)
    assert p(2.0**-35, 3, 0.0, 25)  # beyond 24 bits: float64's smallest normal
    assert p(2.0**-((1022 - 53) / 3), 3, 0.0, 53) and not p(2.0**-((1022 - 53) / 3 + 0.1), 3, 0.0, 53)
    assert FLOAT32_TINY == 2.0**-126 and FLOAT64_TINY == 2.0**-1022


def test_kid_path_rules_at_their_edges() -> None:
    assert kid_module.all_pairs_cheaper(20, 20, 4, 10) and not kid_module.all_pairs_cheaper(20, 21, 4, 10)
    assert kid_module.all_pairs_cheaper(6, 6, 4, 3) and not kid_module.all_pairs_cheaper(6, 7, 4, 3)
    assert kid_module.strips_fit(16384, 4) and not kid_module.strips_fit(16385, 4)
    assert kid_module.strips_fit(11585, 8) and not kid_module.strips_fit(11586, 8)


def test_kid_mmd2_work_job_counts_by_path() -> None:
    """One batched job where per-subset blocks are cheaper, else strips of xx, yy and xy."""
    x = kid_module.KidStatistics(torch.from_numpy(gauss(30, 3, 17)))
    y = kid_module.KidStatistics(torch.from_numpy(gauss(30, 3, 18)))
    ix, iy = kid_module.draw_subsets(30, 30, 4, 10, np.random.default_rng(0))
    jobs, _ = kid_module.mmd2_work(x, y, ix, iy, 1 / 3, 1.0, 3)
    assert len(jobs) == 1
    ix, iy = kid_module.draw_subsets(30, 30, 9, 10, np.random.default_rng(0))
    jobs, combine = kid_module.mmd2_work(x, y, ix, iy, 1 / 3, 1.0, 3)
    assert len(jobs) == 3
    direct = kid_module.mmd2_subsets(x.x, y.x, ix, iy, 1 / 3, 1.0, 3)
    assert torch.allclose(combine([j() for j in jobs]), direct, rtol=1e-10)


def test_kid_in_the_suite_equals_kid_with_the_same_draws() -> None:
    """The protocol's KID (its own stream) equals kid() on the same Generator, with and without the kernel
    strips that IMD's search hands over; the cross strips are offered only on the all-pairs path."""
    x, y = gauss(60, 4, 19).astype(np.float32), gauss(50, 4, 20, 0.3).astype(np.float32)
    for chosen, tapped in (({"kid": {"subsets": 3, "subset_size": 40}}, False),
                           ({"imd": {"nv": 2, "m": 2}, "kid": {"subsets": 3, "subset_size": 40}}, True),
                           ({"imd": {"nv": 2, "m": 2}, "kid": {"subsets": 3, "subset_size": 10, "degree": 2,
                                                               "coef0": 0.5}}, False)):
        m = Metrics(chosen)
        sx, sy = prepare_set(x, m), prepare_set(y, m)
        assert (sx.stats["kid"].kernel is not None) == tapped
        got = score_pair(sx, sy, metric_draws(0), m)["kid"]
        o = m["kid"]
        want = kid(x, y, o["subsets"], o["subset_size"], seed=metric_draws(0)("kid"), degree=o["degree"],
                   coef0=o["coef0"])[0]
        assert got == pytest.approx(want, rel=1e-5)
        ctx = Shared({}, m)
        get_metric("kid").pair(sx.stats["kid"], sy.stats["kid"], o, np.random.default_rng(0), context=ctx)
        assert (CROSS_GRAM_HOOKS in ctx.memo) == (o["subset_size"] == 40)  # 60·50 ≤ 3·40², not ≤ 3·10² (4·50 is)
        get_metric("kid").pair(sx.stats["kid"], sy.stats["kid"], o, np.random.default_rng(0))  # no context


def test_kid_tapped_strips_leave_imds_graph_unchanged() -> None:
    """KID's tap copies the Gram strips it keeps: IMD's graph is that of a run without KID."""
    x = gauss(70, 4, 21).astype(np.float32)
    alone = prepare_set(x, {"imd": {"nv": 2, "m": 2}}).stats["imd"]
    both = prepare_set(x, {"imd": {"nv": 2, "m": 2}, "kid": {"subsets": 3, "subset_size": 50}}).stats["imd"]
    assert torch.equal(alone.nbrs, both.nbrs) and torch.equal(alone.sq_dist, both.sq_dist)


# --------------------------------------------------------------------------------------------------- PRDC
def prdc_reference(real: np.ndarray, fake: np.ndarray, ks: dict[str, int]) -> dict[str, float]:
    """Naeem et al.'s definitions from exact float64 differences (radius: the (k+1)-th smallest distance of a row
    to its own set, itself included; inside: strictly closer)."""
    real, fake = real.astype(np.float64), fake.astype(np.float64)

    def dist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))

    rr, ff, rf = np.sort(dist(real, real), axis=1), np.sort(dist(fake, fake), axis=1), dist(real, fake)
    out = {}
    if "precision" in ks:
        out["precision"] = float((rf < rr[:, ks["precision"], None]).any(axis=0).mean())
    if "recall" in ks:
        out["recall"] = float((rf < ff[None, :, ks["recall"]]).any(axis=1).mean())
    if "density" in ks:
        out["density"] = float((rf < rr[:, ks["density"], None]).sum(axis=0).mean() / ks["density"])
    if "coverage" in ks:
        out["coverage"] = float((rf.min(axis=1) < rr[:, ks["coverage"]]).mean())
    return out


PAPER_K = {"precision": 3, "recall": 3, "density": 5, "coverage": 5}


def lattice(n: int, seed: int, offset: float = 3000.0) -> np.ndarray:
    """float32 points on an integer grid far from the origin: distances tie the radii exactly, and float32's Gram
    products (~3e7) are off by whole units, so only the exact re-decision gets the counts right."""
    return (np.random.default_rng(seed).integers(0, 7, size=(n, 3)) + offset).astype(np.float32)


def test_prdc_default_k_is_5_and_matches_the_peer_package() -> None:
    import joblib
    from prdc import compute_prdc

    x, y = gauss(90, 4, 30), gauss(70, 4, 31, 0.4)
    got = prdc(x, y)
    with joblib.parallel_backend("threading", n_jobs=1):
        want = compute_prdc(x, y, 5)
    assert got == pytest.approx({k: float(v) for k, v in want.items()}, abs=1e-12)
    assert got == pytest.approx(prdc_reference(x, y, dict.fromkeys(PAPER_K, 5)), abs=1e-12)


@pytest.mark.parametrize("ks", [PAPER_K, {"precision": 1, "recall": 2, "density": 4, "coverage": 3}])
def test_prdc_exact_ties_on_a_float32_lattice(ks: dict[str, int]) -> None:
    """Exact ties at the radii and float32 rounding of whole units: every count as exact arithmetic gives it."""
    x, y = lattice(150, 32), lattice(110, 33)
    assert prdc(x, y, k=ks) == pytest.approx(prdc_reference(x, y, ks), abs=1e-12)
    for name, k in ks.items():  # each metric alone, its own pass
        assert prdc(x, y, k={name: k}) == pytest.approx(prdc_reference(x, y, {name: k}), abs=1e-12)


def test_prdc_several_real_strips_and_k_1() -> None:
    """Over 512 real rows (several strips of the real × fake pass), and the least k, 1."""
    x, y = gauss(600, 3, 34), gauss(200, 3, 35, 0.3)
    assert prdc(x, y, nearest_k=1) == pytest.approx(prdc_reference(x, y, dict.fromkeys(PAPER_K, 1)), abs=1e-12)
    assert prdc(x, y, k=PAPER_K) == pytest.approx(prdc_reference(x, y, PAPER_K), abs=1e-12)


def test_prdc_argument_edges() -> None:
    """k = n − 1 (the largest k the rows allow) passes; k = n, k = 0, no metric or an unknown name are refused."""
    x, y = gauss(6, 2, 36), gauss(7, 2, 37, 0.2)
    assert prdc(x, y, nearest_k=5) == pytest.approx(prdc_reference(x, y, dict.fromkeys(PAPER_K, 5)), abs=1e-12)
    with pytest.raises(ValueError, match="at least 7"):
        prdc(x, y, nearest_k=6)
    with pytest.raises(ValueError, match="at least 6"):
        prdc(x[:5], y, k={"precision": 2, "density": 5})
    assert prdc(x, y, k={"precision": 2, "density": 5}) == pytest.approx(
        prdc_reference(x, y, {"precision": 2, "density": 5}), abs=1e-12)
    with pytest.raises(ValueError, match="integer ≥ 1"):
        prdc(x, y, nearest_k=0)
    for bad in ({}, {"precison": 3}, {"precision": 3, "fidelity": 2}):
        with pytest.raises(ValueError, match="must map"):
            prdc(x, y, k=bad)
    with pytest.raises(ValueError, match="D=3"):
        prdc(x, gauss(7, 3, 38))


def test_prdc_registered_options_and_reach() -> None:
    from ganeval.metrics.prdc import reach

    m = Metrics(["precision", "recall", "density", "coverage"])
    assert {name: m[name]["k"] for name in m} == PAPER_K
    assert Metrics({"precision": {"k": 1}})["precision"]["k"] == 1
    with pytest.raises(ValueError):
        Metrics({"recall": {"k": 0}})
    for name in PAPER_K:
        metric = get_metric(name)
        assert metric.shares is True and metric.higher_is_better is True
    Metrics({"density": {"k": 5}}).check_sample_size(6)
    with pytest.raises(ValueError, match="metrics.density.k=5 must be below sample_size=5"):
        Metrics({"density": {"k": 5}}).check_sample_size(5)
    assert reach(3.0, 10, 2) == (72.0, 72.0)


def suite_values(x: np.ndarray, y: np.ndarray, chosen: dict) -> tuple[dict[str, float], object]:
    m = Metrics(chosen)
    sx, sy = prepare_set(x, m), prepare_set(y, m)
    return score_pair(sx, sy, metric_draws(0), m), sx


@pytest.mark.parametrize("extra,reused", [({}, False), ({"imd": {"k": 5, "nv": 2, "m": 2}}, True),
                                          ({"imd": {"k": 4, "nv": 2, "m": 2}}, False),
                                          ({"imd": {"k": 6, "nv": 2, "m": 2}, "kid": {"subsets": 2, "subset_size": 100}}, True),
                                          ({"imd": {"k": 2, "nv": 2, "m": 2}, "kid": {"subsets": 2, "subset_size": 100}}, False)])
def test_prdc_in_the_suite_with_and_without_shared_graphs_and_cross_strips(extra: dict, reused: bool) -> None:
    """The four from one pass: with IMD's graph (when its k covers every k), KID's cross strips and tapped kernel;
    the values are the exact ones and KID's is that of kid() on the same draws."""
    x, y = lattice(120, 39), lattice(100, 40)
    chosen = {**extra, "precision": {}, "recall": {}, "density": {}, "coverage": {"k": 4}}
    got, sx = suite_values(x, y, chosen)
    want = prdc_reference(x, y, {**PAPER_K, "coverage": 4})
    assert {name: got[name] for name in want} == pytest.approx(want, abs=1e-12)
    if "imd" in extra:
        assert (sx.stats["precision"].nbrs is sx.stats["imd"].nbrs) == reused
    if "kid" in extra:
        o = Metrics(chosen)["kid"]
        ref = kid(x, y, o["subsets"], o["subset_size"], seed=metric_draws(0)("kid"))[0]
        assert got["kid"] == pytest.approx(ref, rel=1e-4, abs=1e-9)


# ------------------------------------------------------------------------------------------ authenticity, MiFID
def fid_reference(x: np.ndarray, y: np.ndarray) -> float:
    """pytorch-fid's formula in float64 with scipy.linalg.sqrtm."""
    from scipy import linalg

    x, y = x.astype(np.float64), y.astype(np.float64)
    s1, s2 = np.atleast_2d(np.cov(x, rowvar=False)), np.atleast_2d(np.cov(y, rowvar=False))
    diff = x.mean(axis=0) - y.mean(axis=0)
    with warnings.catch_warnings():  # fewer rows than dimensions: a singular product, as pytorch-fid meets it too
        warnings.simplefilter("ignore", linalg.LinAlgWarning)
        root = linalg.sqrtm(s1 @ s2).real
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.trace(root))


def authenticity_reference(real: np.ndarray, fake: np.ndarray) -> float:
    """Alaa et al.: g is authentic where its nearest real row r* (first on ties) is strictly closer to its own
    nearest other real row than to g (exact float64 differences)."""
    real, fake = real.astype(np.float64), fake.astype(np.float64)
    rr = ((real[:, None] - real[None]) ** 2).sum(-1)
    np.fill_diagonal(rr, np.inf)
    fr = ((fake[:, None] - real[None]) ** 2).sum(-1)
    star = fr.argmin(axis=1)
    return float((rr.min(axis=1)[star] < fr[np.arange(len(fake)), star]).mean())


def mifid_reference(real: np.ndarray, fake: np.ndarray, eps: float = 0.1) -> float:
    """Kaggle's MiFID: FID / (d_thr + 1e-15), d = mean over kept generated rows of min over kept real rows of
    1 − |cos|, rows summing to 0 left out."""
    r, f = real.astype(np.float64), fake.astype(np.float64)
    r, f = r[r.sum(axis=1) != 0], f[f.sum(axis=1) != 0]
    cos = np.abs((f / np.linalg.norm(f, axis=1, keepdims=True)) @ (r / np.linalg.norm(r, axis=1, keepdims=True)).T)
    d = float((1 - cos).min(axis=1).mean())
    return fid_reference(real, fake) / ((d if d < eps else 1.0) + 1e-15)


def test_authenticity_matches_reference_on_gaussians_and_exact_ties() -> None:
    """Gaussians (float64), and a float32 lattice of 1100 real rows (three strips; ties between nearest real rows
    of different radii, and at the radius itself)."""
    x, y = gauss(80, 3, 50), gauss(60, 3, 51, 0.3)
    y[:10] = x[:10] + 1e-3
    assert authenticity(x, y) == pytest.approx(authenticity_reference(x, y), abs=1e-12)
    xl, yl = lattice(1100, 52, offset=1000.0), lattice(300, 53, offset=1000.0)
    assert authenticity(xl, yl) == pytest.approx(authenticity_reference(xl, yl), abs=1e-12)


def test_authenticity_least_rows() -> None:
    """Two real rows and one generated row suffice; one real row is refused."""
    real = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert authenticity(real, np.array([[0.0, 2.0]])) == 1.0  # nearest real (0,0): 1 < 2
    assert authenticity(real, np.array([[0.0, 0.5]])) == 0.0  # 1 > 0.5
    assert authenticity(real, np.array([[0.0, 1.0]])) == 0.0  # a tie is not authentic
    with pytest.raises(ValueError, match="at least 2"):
        authenticity(real[:1], np.array([[0.0, 2.0]]))
    with pytest.raises(ValueError, match="D=3"):
        authenticity(real, np.ones((2, 3)))


def test_mifid_threshold_edges_and_epsilon() -> None:
    """d below ε divides FID by d + 1e-15; d equal to ε (and above) by 1 + 1e-15; d = 0 by 1e-15 alone."""
    real = np.array([[1.0, 0.0], [0.0, 1.0]])
    fake = np.array([[3.0, 4.0], [3.0, 4.0]])  # nearest |cos| 0.8 for both rows
    fid_value = 19.5  # |(0.5, 0.5) − (3, 4)|² + tr Σ_real (1) + 0
    d = 1.0 - 0.8
    assert mifid(real, fake, cosine_distance_eps=d) == pytest.approx(fid_value / (1.0 + 1e-15), rel=1e-12)
    assert mifid(real, fake, cosine_distance_eps=0.2 + 1e-12) == pytest.approx(fid_value / (d + 1e-15), rel=1e-12)
    parallel = np.array([[2.0, 0.0], [0.0, 3.0]])  # |cos| 1: d = 0
    assert mifid(real, parallel) == pytest.approx(fid_reference(real, parallel) / 1e-15, rel=1e-9)


def test_mifid_default_epsilon_is_0_1() -> None:
    """d ≈ 0.1425 lies between 0.1 and 0.2: the default ε leaves FID undivided."""
    real = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1]])
    fake = np.array([[1.0, 0.6], [0.6, 1.0]])
    assert mifid(real, fake) == pytest.approx(mifid_reference(real, fake, 0.1), rel=1e-12)
    assert mifid(real, fake) == pytest.approx(fid_reference(real, fake) / (1 + 1e-15), rel=1e-12)
    assert Metrics(["mifid"])["mifid"]["cosine_distance_eps"] == 0.1


def test_mifid_rows_summing_to_zero_are_left_out() -> None:
    """Zero-sum rows (Kaggle's cosine_distance drops them) are never a nearest real row nor counted as generated;
    a row of norm 1 and one summing to 1 are kept."""
    rng = np.random.default_rng(54)
    real = rng.normal(size=(30, 3)) + 2.0
    fake = real[:20] * 1.5 + rng.normal(scale=0.02, size=(20, 3))
    real[0] = [1.0, -1.0, 0.0]  # zero sum, right next to fake rows below
    fake[0], fake[1] = [2.0, -2.0, 0.0], [1.1, -1.0, 0.0]
    real[1] = [0.0, 0.6, 0.8]  # norm 1
    fake[2] = [0.25, 0.5, 0.25]  # sums to 1
    want = mifid_reference(real, fake, eps=0.1)
    assert mifid(real, fake) == pytest.approx(want, rel=1e-10)
    assert want != pytest.approx(fid_reference(real, fake), rel=1e-3)  # d < ε: the threshold matters


def test_mifid_refuses_a_set_whose_every_row_sums_to_zero() -> None:
    ok = gauss(5, 2, 55) + 3.0
    zero = np.array([[1.0, -1.0], [2.0, -2.0], [0.5, -0.5]])
    for real, fake in ((zero, ok), (ok, zero)):
        with pytest.raises(ValueError, match="every row of a set sums to 0"):
            mifid(real, fake)


def test_mifid_float32_input_gets_float64_products_and_least_rows() -> None:
    x, y = gauss(50, 4, 56).astype(np.float32), gauss(40, 4, 57, 0.5).astype(np.float32)
    assert mifid(x, y, cosine_distance_eps=1e-300) == pytest.approx(fid_reference(x, y), rel=1e-11)
    assert mifid(x, y) == pytest.approx(mifid_reference(x, y), rel=1e-5)
    two = np.array([[1.0, 2.0], [2.0, 1.5]])
    assert mifid(two, two + 1.0) == pytest.approx(mifid_reference(two, two + 1.0), rel=1e-12)
    with pytest.raises(ValueError, match="at least 2"):
        mifid(two, two[:1])
    with pytest.raises(ValueError, match="D=3"):
        mifid(two, np.ones((2, 3)))


def test_mifid_epsilon_option_edges() -> None:
    x, y = gauss(6, 2, 58) + 2.0, gauss(6, 2, 59) + 2.0
    assert mifid(x, y, cosine_distance_eps=0.5) == pytest.approx(mifid_reference(x, y, 0.5), rel=1e-12)
    assert mifid(x, y, cosine_distance_eps=1e-300) == pytest.approx(mifid_reference(x, y, 1e-300), rel=1e-12)
    for bad in (0.0, -0.1, float("inf"), float("nan"), "0.1"):
        with pytest.raises(ValueError, match="cosine_distance_eps must be a finite number > 0"):
            mifid(x, y, cosine_distance_eps=bad)


def test_memorization_registry_and_reach() -> None:
    from ganeval.metrics.memorization import FID_EPSILON, distance_reach

    assert FID_EPSILON == 1e-15 and distance_reach(3.0, 10, 2) == (72.0, 72.0)
    a, m = get_metric("authenticity"), get_metric("mifid")
    assert a.shares is True and a.higher_is_better is True and m.shares is True


@pytest.mark.parametrize("extra", [{}, {"imd": {"k": 3, "nv": 2, "m": 2}},
                                   {"imd": {"k": 3, "nv": 2, "m": 2}, "kid": {"subsets": 2, "subset_size": 100}},
                                   {"kid": {"subsets": 1, "subset_size": 10}}])
def test_memorization_in_the_suite(extra: dict) -> None:
    """In a run: IMD's graph reused for the real balls, KID's cross strips or strips of their own: the same values
    as the float64 references."""
    x, y = gauss(150, 3, 60), gauss(130, 3, 61, 0.4)
    y[:40] = x[:40] + 0.01
    got, sx = suite_values(x, y, {**extra, "authenticity": {}, "mifid": {"cosine_distance_eps": 0.3}})
    assert got["authenticity"] == pytest.approx(authenticity_reference(x, y), abs=1e-12)
    assert got["mifid"] == pytest.approx(mifid_reference(x, y, 0.3), rel=1e-9)
    if "imd" in extra:
        assert sx.stats["authenticity"].nbrs is sx.stats["imd"].nbrs


# --------------------------------------------------------------------------------------------------- CMMD
def cmmd_reference(x: np.ndarray, y: np.ndarray, sigma: float = 10.0, estimator: str = "biased",
                   normalize: bool = True) -> float:
    """1000 · MMD² of the Gaussian RBF kernel exp(−‖a − b‖²/(2σ²)) in float64 from direct differences; rows
    L2-normalised (a zero row kept zero) when asked; the unbiased estimator drops the XX and YY diagonals."""
    def prep(a: np.ndarray) -> np.ndarray:
        a = a.astype(np.float64)
        if not normalize:
            return a
        norm = np.linalg.norm(a, axis=1, keepdims=True)
        return a / np.where(norm > 0, norm, 1.0)

    x, y = prep(x), prep(y)

    def k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.exp(-((a[:, None] - b[None]) ** 2).sum(-1) / (2 * sigma**2))

    n, m = len(x), len(y)
    kxx, kyy = k(x, x), k(y, y)
    if estimator == "biased":
        sxx, syy = kxx.sum() / n**2, kyy.sum() / m**2
    else:
        sxx = (kxx.sum() - np.trace(kxx)) / (n * (n - 1))
        syy = (kyy.sum() - np.trace(kyy)) / (m * (m - 1))
    return float(1000 * (sxx + syy - 2 * k(x, y).sum() / (n * m)))


def test_cmmd_defaults_are_the_references_sigma_10_biased_normalised() -> None:
    x, y = gauss(60, 5, 70, 1.0) * 3, gauss(45, 5, 71, 1.4)
    assert cmmd(x, y) == pytest.approx(cmmd_reference(x, y), rel=1e-9)
    assert Metrics(["cmmd"])["cmmd"] == {"sigma": 10.0, "estimator": "biased", "normalize": True}


@pytest.mark.parametrize("sigma,estimator,normalize", [(0.7, "unbiased", True), (3.0, "unbiased", False),
                                                       (1.5, "biased", False)])
def test_cmmd_options_match_the_reference(sigma: float, estimator: str, normalize: bool) -> None:
    x, y = gauss(50, 4, 72, 0.5), gauss(40, 4, 73, 0.8)
    got = cmmd(x, y, sigma=sigma, estimator=estimator, normalize=normalize)
    assert got == pytest.approx(cmmd_reference(x, y, sigma, estimator, normalize), rel=1e-9)


def test_cmmd_several_strips_and_a_zero_row() -> None:
    """Over 512 rows (several upper-triangle strips) and a zero row, which normalising leaves zero."""
    x, y = gauss(600, 3, 74, 0.3), gauss(70, 3, 75, 0.6)
    x[5] = 0.0
    y[3] = 0.0
    for estimator in ("biased", "unbiased"):
        want = cmmd_reference(x, y, 0.8, estimator)
        assert cmmd(x, y, sigma=0.8, estimator=estimator) == pytest.approx(want, rel=1e-9)


def test_cmmd_identical_sets_and_least_rows() -> None:
    """x against itself: the biased estimate is 0; two rows per set suffice, one is refused."""
    x = gauss(30, 3, 76)
    assert cmmd(x, x.copy(), sigma=0.5) == pytest.approx(0.0, abs=1e-12)
    two, other = np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([[1.0, 1.0], [-1.0, 0.5]])
    for est in ("biased", "unbiased"):
        assert cmmd(two, other, sigma=0.5, estimator=est) == pytest.approx(
            cmmd_reference(two, other, 0.5, est), rel=1e-12)
    with pytest.raises(ValueError, match="at least 2"):
        cmmd(two[:1], other)
    with pytest.raises(ValueError, match="at least 2"):
        cmmd(two, other[:1])
    with pytest.raises(ValueError, match="D=3"):
        cmmd(two, np.ones((2, 3)))


def test_cmmd_option_checks() -> None:
    x, y = gauss(5, 2, 77), gauss(5, 2, 78)
    assert cmmd(x, y, sigma=1e-3) == pytest.approx(cmmd_reference(x, y, 1e-3), rel=1e-9)
    for bad in (0.0, -1.0, float("inf"), float("nan"), "1"):
        with pytest.raises(ValueError, match="sigma must be a finite number > 0"):
            cmmd(x, y, sigma=bad)
    with pytest.raises(ValueError, match="estimator"):
        cmmd(x, y, estimator="U")
    with pytest.raises(ValueError, match="normalize"):
        cmmd(x, y, normalize=1)


def test_cmmd_reach_and_registry() -> None:
    from ganeval.metrics.cmmd import reach

    assert reach(3.0, 10, 2) == (72.0, 100.0)
    assert reach(3.0, 5, 2) == (72.0, 72.0)
    assert get_metric("cmmd").shares is True


@pytest.mark.parametrize("o", [{}, {"estimator": "unbiased", "sigma": 0.7}, {"normalize": False, "sigma": 3.0}])
def test_cmmd_in_the_suite_own_strips_taps_and_cross_hooks(o: dict) -> None:
    """Alone, on IMD's or precision's Gram strips (a tap) and on KID's cross strips (a hook, no jobs): the
    reference's value; paired without a context it makes its own cross jobs."""
    x, y = gauss(130, 4, 79, 0.5), gauss(110, 4, 80, 0.8)
    x[7] = 0.0
    want = cmmd_reference(x, y, **o)
    for extra in ({}, {"imd": {"nv": 2, "m": 2}}, {"precision": {}},
                  {"imd": {"nv": 2, "m": 2}, "kid": {"subsets": 2, "subset_size": 100}}):
        m = Metrics({**extra, "cmmd": o})
        sx, sy = prepare_set(x, m), prepare_set(y, m)
        assert score_pair(sx, sy, metric_draws(0), m)["cmmd"] == pytest.approx(want, rel=1e-9)
        ctx = Shared({}, m)
        if "kid" in extra:
            get_metric("kid").pair(sx.stats["kid"], sy.stats["kid"], m["kid"], np.random.default_rng(0), context=ctx)
        w = get_metric("cmmd").pair(sx.stats["cmmd"], sy.stats["cmmd"], m["cmmd"], np.random.default_rng(0), context=ctx)
        assert (w.jobs == []) == ("kid" in extra)
        alone = get_metric("cmmd").pair(sx.stats["cmmd"], sy.stats["cmmd"], m["cmmd"], np.random.default_rng(0))
        assert alone.jobs and alone.finish([j() for j in alone.jobs]) == pytest.approx(want, rel=1e-9)


# ---------------------------------------------------------------------------------------------------- FID
def test_fid_matches_sqrtm_for_more_rows_than_dims_and_fewer() -> None:
    """N > D (Cholesky factor), N = D and N < D (the centred data's factor): pytorch-fid's sqrtm formula."""
    from ganeval.metrics.fid import fid

    for n, d in ((40, 5), (6, 6), (4, 7)):
        x, y = gauss(n, d, 90 + n), gauss(n + 1, d, 91 + n, 0.3) * 1.3
        assert fid(x, y) == pytest.approx(fid_reference(x, y), rel=1e-9 if n > d else 1e-7)  # sqrtm: singular
    two = np.array([[0.0, 1.0], [2.0, 0.0]])
    assert fid(two, two * 3) == pytest.approx(fid_reference(two, two * 3), rel=1e-9)
    with pytest.raises(ValueError, match="at least 2"):
        fid(two[:1], two)
    with pytest.raises(ValueError, match="D=3"):
        fid(two, np.ones((2, 3)))


def test_fid_leaves_float64_inputs_unmodified() -> None:
    """A float64 input is used in place (no copy), so it must not be centred in place."""
    from ganeval.metrics.fid import fid

    x, y = gauss(20, 3, 92, 2.0), gauss(20, 3, 93, 1.0)
    xt, keep_x, keep_y = torch.from_numpy(x.copy()), x.copy(), y.copy()
    assert fid(xt, y) == pytest.approx(fid_reference(keep_x, keep_y), rel=1e-9)
    assert np.array_equal(xt.numpy(), keep_x) and np.array_equal(y, keep_y)


def test_fid_moments_and_statistics() -> None:
    from ganeval.metrics.fid import fid_statistics, moments, statistics

    x = gauss(9, 4, 94, 1.5)
    mu, sigma, centred = moments(torch.from_numpy(x), torch.device("cpu"))
    assert np.allclose(mu.numpy(), x.mean(axis=0), rtol=1e-14)
    assert np.allclose(sigma.numpy(), np.cov(x, rowvar=False), rtol=1e-12)
    assert centred is not None and np.allclose(centred.numpy(), x - x.mean(axis=0), atol=1e-14)
    mu32, sigma32, none = moments(torch.from_numpy(x).float(), torch.device("cpu"), torch.float32, keep_centred=False)
    assert none is None and np.allclose(mu32.numpy(), x.astype(np.float32).mean(axis=0, dtype=np.float64), rtol=1e-12)
    assert np.allclose(sigma32.numpy(), np.cov(x.astype(np.float32).astype(np.float64), rowvar=False), rtol=1e-5)
    m, s = statistics(x)
    assert np.allclose(s.numpy(), np.cov(x, rowvar=False), rtol=1e-12) and np.allclose(m.numpy(), x.mean(axis=0))
    assert fid_statistics(torch.from_numpy(gauss(5, 5, 95))).centred is not None
    assert fid_statistics(torch.from_numpy(gauss(6, 5, 95))).centred is None


def test_fid_trace_sqrt_product_and_singular_factors() -> None:
    """tr √(Σ₁Σ₂) from Σ₁'s Cholesky or (singular Σ₁, first minor 0) eigen factor: sqrtm's trace."""
    from scipy import linalg

    from ganeval.metrics.fid import square_root_factor, trace_sqrt_product

    rng = np.random.default_rng(96)
    a, b = rng.normal(size=(4, 4)) * 0.3, rng.normal(size=(4, 6)) * 0.2
    s1, s2 = a @ a.T, b @ b.T  # small eigenvalues (below 1)
    want = np.trace(linalg.sqrtm(s1 @ s2).real)
    assert float(trace_sqrt_product(torch.from_numpy(s1), torch.from_numpy(s2))) == pytest.approx(want, rel=1e-9)
    c = rng.normal(size=(4, 2)) * 0.5
    singular = np.zeros((4, 4))
    singular[1:, 1:] = (c @ c.T)[1:, 1:]  # rank 2, zero first minor: Cholesky fails at its first step
    bf, lower = square_root_factor(torch.from_numpy(singular))
    assert lower is False and np.allclose((bf @ bf.T).numpy(), singular, atol=1e-14)
    got = float(trace_sqrt_product(torch.from_numpy(singular), torch.from_numpy(s2)))
    evs = np.linalg.eigvals(singular @ s2).real
    assert got == pytest.approx(np.sqrt(np.clip(evs, 0, None)).sum(), rel=1e-7)


def test_fid_rounding_rule_at_its_edges() -> None:
    """A negative value within 1e-12 of ‖Δμ‖² + tr Σ₁ + tr Σ₂ is round-off (0.0); beyond it, or positive, as it comes."""
    from ganeval.metrics.fid import FidStatistics, fid_from_statistics

    one, mu = torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)

    def value(root: float) -> float:  # total = 2, value = 2 − 2·root (a forged factor sets the root)
        a = FidStatistics(mu, one, None, (torch.full((1, 1), root, dtype=torch.float64), False))
        return fid_from_statistics(a, FidStatistics(mu, one))

    assert value(1 + 0.5e-12) == 0.0
    assert value(1 + 1.5e-12) == pytest.approx(-3e-12, rel=1e-3)
    assert value(0.75) == pytest.approx(0.5, rel=1e-12)
    assert value(1 - 1e-13) == pytest.approx(2e-13, rel=1e-2)


def test_fid_reach_formula_and_precision_edges() -> None:
    from ganeval.metrics.fid import reach

    assert reach(2.0, 10, 3) == (160.0, 2304.0, True, True)
    assert reach(2.0, 1000, 3)[:2] == (16000.0, 16000.0)
    assert reach(0.0, 5, 2)[2:] == (True, True)
    assert reach(2.0**-51, 5, 2)[2] is True and reach(2.0**-51.5, 5, 2)[2] is False
    assert reach(2.0**-242, 5, 2)[3] is True and reach(2.0**-243, 5, 2)[3] is False
    assert reach(2.0**-242.375, 5, 2)[3] is True  # eigenvalue scale 2^-969.5: above float64's 2^-970 edge


def test_frechet_distance_checks_and_edges() -> None:
    """Means and covariances at the edges of the overflow and underflow checks, and the shape checks."""
    from ganeval.metrics.fid import frechet_distance as fd

    eye, z = np.eye(2), np.zeros(2)
    assert fd(z, eye, np.array([1.0, 1.0]), eye) == pytest.approx(2.0, rel=1e-12)
    assert fd(z, eye, z, eye) == 0.0  # zero means are fine
    big = math.sqrt(1.7976931348623157e308 / 9)  # 8·μ² just below float64's max
    assert fd(z, eye, np.array([big, 0.0]), eye) == pytest.approx(big * big, rel=1e-12)
    with pytest.raises(ValueError, match="overflow"):
        fd(z, eye, np.array([math.sqrt(1.7976931348623157e308 / 7), 0.0]), eye)
    with pytest.raises(ValueError, match="overflow"):
        fd(z, eye, z, eye * 1e160)
    with pytest.raises(ValueError, match="overflow"):
        fd(z, eye, z, eye * (math.sqrt(1.7976931348623157e308) / 1.5))
    with pytest.raises(ValueError, match="means no larger"):
        fd(np.full(2, 1e-80), eye, z, eye)
    tiny_mu = np.array([1e-130, 0.0])
    assert fd(tiny_mu, eye, np.array([1.0, 0.0]), eye) == pytest.approx(1.0, rel=1e-12)
    assert fd(z, eye, z, eye * 1e-150) == pytest.approx(2 + 2e-150 - 4e-75, rel=1e-12)
    s = 2.0**-470  # eigenvalue scale 2^-940: fine
    assert fd(z, eye * s, z, eye * s) == pytest.approx(0.0, abs=1e-300)
    s = 2.0**-484.75  # 2^-969.5: just above the edge
    assert fd(z, eye * s, z, eye * s * 4) == pytest.approx(2 * s + 8 * s - 8 * s, abs=1e-300)
    s = 2.0**-485  # exactly at the edge (2^-970): still accepted
    assert fd(z, eye * s, z, eye * s) == pytest.approx(0.0, abs=1e-300)
    with pytest.raises(ValueError, match="covariances no larger"):
        fd(z, eye * 2.0**-486, z, eye * 2.0**-486)
    with pytest.raises(ValueError, match="sigma1 must be 2×2"):
        fd(z, np.eye(3), z, eye)
    with pytest.raises(ValueError, match="sigma2 must be 2×2"):
        fd(z, eye, z, np.eye(3))
    with pytest.raises(ValueError, match="mu2 has 3"):
        fd(z, eye, np.zeros(3), eye)
    assert fd(z.reshape(1, 2), eye, z, eye) == 0.0  # a 1×D mean is flattened
    assert get_metric("fid").lowest == 0.0


def test_fid_in_the_suite_float32_products() -> None:
    """The protocol's FID (covariance product in float32 for float32 features): the sqrtm formula within 1e-6."""
    x, y = gauss(80, 6, 97, 0.5).astype(np.float32), gauss(70, 6, 98).astype(np.float32)
    got, _ = suite_values(x, y, {"fid": {}})
    assert got["fid"] == pytest.approx(fid_reference(x, y), rel=1e-6)


# ------------------------------------------------------------------------------------------- k-NN precision
knn_precision = importlib.import_module("ganeval.metrics.knn_precision")


def test_knn_precision_error_bounds_are_the_documented_formulas() -> None:
    """distance_error (float32: 4·eps·√D·(|x_i|² + max|x_j|²) in the rows' own precision; bfloat16/tf32: inputs
    rounded with u, γ_D accumulation, bfloat16 output rounding) and centring_error, written out."""
    rng = np.random.default_rng(100)
    x64 = rng.normal(size=(7, 9)) * np.arange(1, 8)[:, None]
    sq = (x64 * x64).sum(axis=1)
    d = 9
    for x, eps in ((torch.from_numpy(x64).float(), 2.0**-23), (torch.from_numpy(x64), 2.0**-52)):
        got = knn_precision.distance_error(x, (x * x).sum(dim=1), "float32").numpy()
        s = (x * x).sum(dim=1).double().numpy()
        assert np.allclose(got, 4 * eps * 3.0 * (s + s.max()), rtol=1e-12, atol=0)
    x = torch.from_numpy(x64).float()
    s = (x * x).sum(dim=1).double().numpy()
    u32 = 2.0**-24
    g = d * u32 / (1 - d * u32)
    for precision, u, out_u in (("bfloat16", 2.0**-8, 2.0**-8), ("tf32", 2.0**-11, u32)):
        norm, top = np.sqrt(s), np.sqrt(s.max())
        product = (2 * u + u * u + (1 + u) ** 2 * (g + out_u * (1 + g))) * norm * top
        want = 2 * product + g * (s + s.max()) + 4 * 2.0**-23 * (s + s.max())
        got = knn_precision.distance_error(x, (x * x).sum(dim=1), precision).numpy()
        assert np.allclose(got, want, rtol=1e-12, atol=0)
    assert knn_precision.ROUNDOFF == {"bfloat16": 2.0**-8, "tf32": 2.0**-11}
    assert np.allclose(knn_precision.centring_error(torch.from_numpy(sq)).numpy(),
                       3 * u32 * (1 + 4 * u32) * (np.sqrt(sq) + np.sqrt(sq).max()) ** 2, rtol=1e-12, atol=0)
    c = knn_precision.centred(torch.from_numpy(x64).float())
    assert np.allclose(c.numpy(), (x64.astype(np.float32) - x64.astype(np.float32).mean(axis=0, dtype=np.float64)),
                       atol=1e-5)
    assert np.abs(c.double().mean(dim=0).numpy()).max() < 1e-5


def test_knn_precision_resolve_rules() -> None:
    cpu, hook = torch.device("cpu"), (lambda a, g: None)
    r = knn_precision.resolve_precision
    assert r("float32", cpu, None) == "float32" and r("float32", cpu, hook) == "float32"
    assert r("bfloat16", cpu, None) == "bfloat16"
    assert r("auto", cpu, None) == "auto" and r("auto", cpu, hook) == "float32"
    with pytest.raises(ValueError, match="cannot share"):
        r("bfloat16", cpu, hook)
    with pytest.raises(ValueError, match="needs a CUDA device"):
        r("tf32", cpu, None)
    with pytest.raises(ValueError, match="must be one of"):
        r("float16", cpu, None)
    assert r("tf32", torch.device("cuda"), None) == "tf32"  # resolving touches no device


def test_knn_precision_reduced_product_is_float32() -> None:
    a = torch.randn(5, 8, generator=torch.Generator().manual_seed(1))
    out = knn_precision.reduced_product(a.bfloat16(), a.bfloat16(), "bfloat16")
    assert out.dtype == torch.float32
    assert torch.allclose(out, a @ a.T, rtol=0.05, atol=0.1)


def test_knn_precision_undecided_share_counts_the_tied_rows() -> None:
    """Triples at c − 2, c, c + 2 far apart (k = 1): the middle rows tie their two nearest (undecided), the end
    rows are certain: a share of exactly 1/3; well-separated rows: 0; k = 2 (the ends then tie): 2/3."""
    centres = np.arange(20) * 100.0
    x = np.stack([np.concatenate([centres - 2, centres, centres + 2]), np.zeros(60)], axis=1).astype(np.float32)
    xt = torch.from_numpy(x)
    assert knn_precision.undecided_share(xt, 1, "bfloat16") == pytest.approx(1 / 3, abs=1e-12)
    spread = torch.from_numpy((np.arange(40.0)[:, None] ** 2 * np.array([[1.0, 0.0]])).astype(np.float32))
    assert knn_precision.undecided_share(spread, 1, "bfloat16") == 0.0
    assert knn_precision.undecided_share(xt, 1, "bfloat16", rows=6) == pytest.approx(1 / 3, abs=1e-12)
    # c − 2, c, c + 2.5: the middle rows' two nearest differ by 2.25, within twice float32's bound (≥ 4.8 here)
    near = np.stack([np.concatenate([centres - 2, centres, centres + 2.5]), np.zeros(60)], axis=1).astype(np.float32)
    assert knn_precision.undecided_share(torch.from_numpy(near), 1, "bfloat16") == pytest.approx(1 / 3, abs=1e-12)


def test_knn_precision_auto_choice_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """auto: float32 unless the device is faster in reduced precision, the rows are float32 and at least 20000,
    and ratio + 2·undecided ≤ 0.8."""
    monkeypatch.setattr(knn_precision, "measure_precision", lambda device: "bfloat16")
    monkeypatch.setattr(knn_precision, "_ratios", {"cpu": 0.6})
    monkeypatch.setattr(knn_precision, "undecided_share", lambda x, k, choice: 0.1)
    big, small = torch.zeros(20000, 1), torch.zeros(19999, 1)
    assert knn_precision.auto_precision(big, 3) == "bfloat16"  # 0.6 + 0.2 = 0.8
    assert knn_precision.auto_precision(small, 3) == "float32"
    assert knn_precision.auto_precision(big.double(), 3) == "float32"
    monkeypatch.setattr(knn_precision, "_ratios", {"cpu": 0.7})
    assert knn_precision.auto_precision(big, 3) == "float32"  # 0.9
    monkeypatch.setattr(knn_precision, "measure_precision", lambda device: "float32")
    assert knn_precision.auto_precision(big, 3) == "float32"


@pytest.mark.parametrize("times,choice,ratio", [
    ({("float32", 5): 1.0, ("bfloat16", 1): 0.5, ("bfloat16", 5): 0.45}, "bfloat16", 0.45),  # a closer look at 2×
    ({("float32", 5): 1.0, ("bfloat16", 1): 0.4, ("bfloat16", 5): 0.5}, "bfloat16", 0.5),  # exactly 2× faster
    ({("float32", 5): 1.0, ("bfloat16", 1): 0.8, ("bfloat16", 5): 0.3}, "float32", 1.0),  # no closer look
    ({("float32", 5): 1.0, ("bfloat16", 1): 0.4, ("bfloat16", 5): 0.6}, "float32", 1.0),
])
def test_knn_precision_measure_rules(monkeypatch: pytest.MonkeyPatch, times: dict, choice: str, ratio: float) -> None:
    """measure_precision from given product times: the probe shape and seed, 5 float32 repeats, 1 bfloat16 then 5
    where the first is 2× faster, the fastest taken only at 2× float32's speed, and the ratio recorded."""
    calls = []

    def fake(a: torch.Tensor, b: torch.Tensor, repeats: int) -> float:
        calls.append((str(a.dtype).split(".")[1], repeats, tuple(a.shape), tuple(b.shape)))
        probe = torch.randn(256, 512, generator=torch.Generator().manual_seed(0))
        assert float(a[0, 0]) == pytest.approx(float(probe[0, 0].to(a.dtype)), rel=1e-6)
        return times[(calls[-1][0], repeats)]

    monkeypatch.setattr(knn_precision, "_product_seconds", fake)
    monkeypatch.setattr(knn_precision, "_measured", {})
    monkeypatch.setattr(knn_precision, "_ratios", {})
    cpu = torch.device("cpu")
    assert knn_precision.measure_precision(cpu) == choice
    assert knn_precision._ratios["cpu"] == pytest.approx(ratio, rel=1e-12)
    again = times[("bfloat16", 1)] * 2 <= 1.0
    assert [c[:2] for c in calls] == [("float32", 5), ("bfloat16", 1)] + ([("bfloat16", 5)] if again else [])
    assert all(c[2:] == ((256, 512), (512, 256)) for c in calls)
    assert knn_precision.measure_precision(cpu) == choice and len(calls) == 2 + again  # measured once
    assert knn_precision.PROBE_SHAPE == (256, 512, 256) and knn_precision.AUTO_SPEEDUP == 2.0


def test_knn_precision_product_seconds_is_the_fastest_timed_repeat(monkeypatch: pytest.MonkeyPatch) -> None:
    """One untimed product, then the smallest of `repeats` stop − start intervals."""
    import time

    ticks = iter([0.0, 100.0, 200.0, 205.0, 300.0, 303.0, 400.0, 407.0])  # warm-up 100, then 5, 3, 7
    monkeypatch.setattr(time, "perf_counter", lambda: next(ticks))
    a = torch.ones(8, 8)
    assert knn_precision._product_seconds(a, a, 3) == 3.0


def test_knn_precision_undecided_share_looks_past_a_close_cluster() -> None:
    """A far outlier makes bfloat16's error bound (∝ |x_i|·max|x_j|) swamp a cluster's distances: the certificate
    over k + max(4k, 16) = 17 candidates decides no row (all 60 candidates would reach the outlier and decide the
    cluster's rows, whose nearest neighbour, a twin at distance 1, is clearly nearer than the next)."""
    grid = np.array([(i * 15.0, j * 15.0) for i in range(6) for j in range(5)])
    x = np.concatenate([grid, grid + [1.0, 0.0], [[1e4, 0.0]]]).astype(np.float32)
    assert knn_precision.undecided_share(torch.from_numpy(x), 1, "bfloat16") == 1.0


# ---------------------------------------------------------------------------------------------------- IMD
imd_module = importlib.import_module("ganeval.metrics.imd")


def knn_laplacian(x: np.ndarray, k: int) -> np.ndarray:
    """The normalised Laplacian I − D^-½AD^-½ of the union k-NN graph (brute force, float64)."""
    d2 = ((x[:, None] - x[None]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    a = np.zeros_like(d2)
    rows = np.repeat(np.arange(len(x)), k)
    a[rows, np.argsort(d2, axis=1, kind="stable")[:, :k].ravel()] = 1.0
    a = np.maximum(a, a.T)
    s = a / np.sqrt(np.outer(a.sum(1), a.sum(1)))
    return np.eye(len(x)) - s


def normalized_reference(trace: np.ndarray, normalization: str, n: int, k: int, t: np.ndarray) -> np.ndarray:
    if normalization == "empty":
        return trace / n
    if normalization == "complete":
        return trace / (1 + (n - 1) * np.exp(-(1 + 1 / (n - 1)) * t))
    if normalization == "er":
        spectrum = 4 / np.sqrt(k) * np.linspace(0, 1, n) + 1 - 2 / np.sqrt(k)
        return trace / (np.exp(-np.outer(t, spectrum)).sum(axis=1) + 1e-6)
    return trace


def exact_trace_reference(x: np.ndarray, k: int, t: np.ndarray, normalization: str = "empty") -> np.ndarray:
    lam = np.linalg.eigvalsh(knn_laplacian(x, k))
    trace = np.exp(-np.outer(t, lam)).sum(axis=1)
    return normalized_reference(trace, normalization, len(x), k, t) * 1e6


def probe_reference(x: np.ndarray, k: int, t: np.ndarray, probes: np.ndarray, normalization: str = "empty") -> np.ndarray:
    """nv×T single-probe estimates n·qᵀe^(−tL)q (unit q), exact: what SLQ without a control variate gives once its
    Krylov space is exhausted (m ≥ n)."""
    lam, u = np.linalg.eigh(knn_laplacian(x, k))
    q = probes / np.linalg.norm(probes, axis=0)
    w = (u.T @ q) ** 2  # n×nv
    est = len(x) * (w.T @ np.exp(-np.outer(lam, t)))
    return np.stack([normalized_reference(e, normalization, len(x), k, t) for e in est]) * 1e6


TS = np.array([0.1, 0.5, 1.0, 2.0, 5.0])


@pytest.mark.parametrize("normalization", ["empty", "complete", "er", "none"])
def test_imd_exact_heat_trace_matches_dense_eigenvalues(normalization: str) -> None:
    """method="exact" on the default 256 log-spaced temperatures (0.1 … 10): e^(−tλ) summed, normalised, ×1e6."""
    x = gauss(30, 3, 110)
    got = heat_trace(x, k=4, method="exact", normalization=normalization)
    t = np.logspace(-1, 1, 256)
    assert np.allclose(got, exact_trace_reference(x, 4, t, normalization), rtol=1e-9, atol=0)
    assert np.array_equal(imd_module.default_t(), t)


def test_imd_normalisations_where_their_constants_dominate() -> None:
    """At large t the ER trace vanishes beside its ε = 1e-6; the complete graph's at n = 2 and 3."""
    t = np.array([0.3, 50.0, 400.0])
    trace = np.array([3.0, 2.0, 1.5])
    for n, k in ((2, 1), (3, 1), (40, 5)):
        for norm in ("empty", "complete", "er", "none"):
            got = imd_module.normalize_trace(trace, norm, n, k, t)
            assert np.allclose(got, normalized_reference(trace, norm, n, k, t), rtol=1e-13, atol=0)
    long_t = np.linspace(0.1, 30, 100)  # several chunks of 16 temperatures
    want = normalized_reference(np.ones(100), "er", 25, 3, long_t)
    assert np.allclose(imd_module.normalize_trace(np.ones(100), "er", 25, 3, long_t), want, rtol=1e-13, atol=0)
    with pytest.raises(ValueError, match="normalization must be one of"):
        imd_module.normalize_trace(trace, "full", 5, 2, t)


@pytest.mark.parametrize("nv", [1, 2, 5])
def test_imd_slq_with_given_probes_is_exact_once_krylov_is_exhausted(nv: int) -> None:
    """Given probes, m ≥ n and no control variate: each probe's estimate is n·qᵀe^(−tL)q; the trace their mean,
    its standard error sd(ddof=1)/√nv (0 for one probe); IMD the weighted maximum and its standard error there."""
    x, y = gauss(14, 3, 111), gauss(12, 2, 112, 0.5) * 1.7
    rng = np.random.default_rng(113)
    px, py = rng.normal(size=(14, nv)), rng.normal(size=(12, nv))
    ex, ey = probe_reference(x, 3, TS, px), probe_reference(y, 3, TS, py)
    got = heat_trace(x, t=TS, k=3, m=14, nv=nv, probes=px, variance_reduction="none")
    assert np.allclose(got, ex.mean(axis=0), rtol=1e-9, atol=0)
    v = imd(x, y, k=3, m=14, nv=nv, probes=(px, py), t=TS, variance_reduction=False)
    w = np.exp(-2 * (TS + 1 / TS))
    diff = w * np.abs(ex.mean(axis=0) - ey.mean(axis=0))
    top = int(np.argmax(diff))
    assert float(v) == pytest.approx(diff.max(), rel=1e-9)
    assert v.t == TS[top]
    if nv == 1:
        assert v.se == 0.0
    else:
        se = np.hypot(ex.std(axis=0, ddof=1)[top], ey.std(axis=0, ddof=1)[top]) / np.sqrt(nv)
        assert v.se == pytest.approx(w[top] * se, rel=1e-9)
    nbrs = torch.from_numpy(np.argsort(np.where(np.eye(14, dtype=bool), np.inf, ((x[:, None] - x[None]) ** 2).sum(-1)),
                                       axis=1, kind="stable")[:, :3])
    est = imd_module.probe_traces(nbrs, TS, m=14, nv=nv, probes=px, normalization="complete", variance_reduction="none")
    assert np.allclose(est, probe_reference(x, 3, TS, px, "complete"), rtol=1e-9, atol=0)


def test_imd_defaults_are_the_option_table() -> None:
    """Called without options: k=5, m=10, nv=100, seed 0, 'empty', Gaussian probes, the Chebyshev control variate."""
    x, y = gauss(40, 3, 114), gauss(35, 3, 115, 0.4)
    ts = np.array([0.2, 1.0, 4.0])
    full = dict(k=5, m=10, nv=100, seed=0, normalization="empty", rademacher=False, variance_reduction="chebyshev")
    assert np.array_equal(heat_trace(x, t=ts), heat_trace(x, t=ts, **full))
    a, b = imd(x, y, t=ts), imd(x, y, t=ts, **full)
    assert float(a) == float(b) and a.se == b.se
    assert float(imd(x, y, t=ts, variance_reduction="none")) != float(a)
    assert float(imd(x, y, t=ts, rademacher=True)) != float(a)
    nbrs = torch.from_numpy(np.argsort(np.where(np.eye(40, dtype=bool), np.inf, ((x[:, None] - x[None]) ** 2).sum(-1)),
                                       axis=1, kind="stable")[:, :5])
    assert np.array_equal(imd_module.probe_traces(nbrs, ts),
                          imd_module.probe_traces(nbrs, ts, m=10, nv=100, seed=0, rademacher=False))
    assert Metrics(["imd"])["imd"] == {**{k: v for k, v in full.items() if k != "seed"}, "knn": "exact",
                                       "knn_precision": "float32", "nndescent": None}
    assert "nndescent" not in Metrics(["imd"]).as_dict()["imd"]
    z = np.random.default_rng(0).standard_normal((6, 3))
    assert np.array_equal(imd_module.draw_probes(6, 3, 0), z)
    assert np.array_equal(imd_module.draw_probes(6, 3, 0, rademacher=True), np.sign(z))
    assert imd_module.IMDValue(1.5).se == 0.0 and math.isnan(imd_module.IMDValue(1.5).t)


def test_imd_seeded_draws_decompose_into_heat_traces() -> None:
    x, y = gauss(30, 3, 116), gauss(28, 4, 117)
    g = np.random.default_rng(7)
    hx, hy = heat_trace(x, seed=g, nv=4, m=5), heat_trace(y, seed=g, nv=4, m=5)
    assert float(imd(x, y, seed=7, nv=4, m=5)) == imd_from_traces(hx, hy)
    assert imd(x, y, seed=np.random.default_rng(7), nv=4, m=5) == imd_from_traces(hx, hy)
    v = imd(x, y, method="exact", k=3)
    t = np.logspace(-1, 1, 256)
    want = imd_from_traces(exact_trace_reference(x, 3, t), exact_trace_reference(y, 3, t))
    assert float(v) == pytest.approx(want, rel=1e-9) and v.se == 0.0


def test_imd_from_traces_formula_and_checks() -> None:
    t = np.array([0.5, 1.0, 3.0])
    hx, hy = np.array([10.0, 40.0, 5.0]), np.array([12.0, 10.0, 1.0])
    want = np.max(np.exp(-2 * (t + 1 / t)) * np.abs(hx - hy))
    assert imd_from_traces(hx, hy, t) == pytest.approx(want, rel=1e-14)
    assert imd_from_traces(hy, hx, t) == pytest.approx(want, rel=1e-14)
    for a, b in ((hx[:2], hy), (hx, hy[:2])):
        with pytest.raises(ValueError, match="one value per t"):
            imd_from_traces(a, b, t)
    with pytest.raises(ValueError):
        imd_from_traces(np.array([1.0, np.nan, 2.0]), hy, t)


def test_imd_temperature_checks() -> None:
    assert np.array_equal(imd_module.temperatures(2.0), np.array([2.0]))
    assert np.array_equal(imd_module.temperatures([[0.5, 1.0], [2.0, 1e-300]]), np.array([0.5, 1.0, 2.0, 1e-300]))
    assert np.array_equal(imd_module.temperatures(None), np.logspace(-1, 1, 256))
    for bad in ([], [0.0], [1.0, -1.0], [np.inf], [np.nan]):
        with pytest.raises(ValueError, match="positive, finite temperatures"):
            imd_module.temperatures(bad)


def test_imd_option_and_input_edges() -> None:
    """The least legal values (k = 1, m = 1, nv = 1, N = k + 2 rows) pass; the next illegal ones fail."""
    x = gauss(3, 2, 118)
    assert heat_trace(x, t=TS, k=1, m=1, nv=1).shape == (5,)
    with pytest.raises(ValueError, match="at least 3"):
        heat_trace(x[:2], t=TS, k=1)
    for bad in ({"k": 0}, {"m": 0}, {"nv": 0}, {"variance_reduction": "linear"}, {"variance_reduction": 1},
                {"normalization": "full"}, {"knn": "ann"}, {"method": "lanczos"},
                {"nndescent": {"n_trees": 2}}):
        with pytest.raises(ValueError):
            heat_trace(gauss(10, 2, 119), t=TS, **bad)
    for ok in (True, False, "paper", "none", "chebyshev"):
        assert np.all(np.isfinite(heat_trace(gauss(10, 2, 119), t=TS, k=2, nv=2, variance_reduction=ok)))
    probes = np.ones((10, 2))
    probes[3] = 0.0  # a zero row is fine, a zero column is not
    probes[:, 1] = 0.0
    probes[0, 1] = 1.0  # a unit column
    assert heat_trace(gauss(10, 2, 119), t=TS, k=2, nv=2, probes=probes).shape == (5,)
    for bad in (np.ones((9, 2)), np.ones(10), np.zeros((10, 2)), np.full((10, 2), np.inf)):
        with pytest.raises(ValueError, match="probes must"):
            heat_trace(gauss(10, 2, 119), t=TS, k=2, nv=2, probes=bad)
    with pytest.raises(ValueError, match="pair"):
        imd(gauss(10, 2, 119), gauss(10, 2, 120), probes=(probes, probes, probes))
    imd_module._check_exact_size(np.zeros((10000, 1)), "x", "exact")
    imd_module._check_exact_size(np.zeros((10001, 1)), "x", "slq")
    with pytest.raises(ValueError, match="10001×10001"):
        imd_module._check_exact_size(np.zeros((10001, 1)), "x", "exact")


def test_imd_registry_constants_and_memory() -> None:
    m = get_metric("imd")
    assert m.same_dim is False and m.lowest == 0.0
    assert imd_module.reach(3.0, 10, 2) == (72.0, 72.0)
    assert imd_module.lanczos_bytes(1000, {"nv": 7, "m": 3})[0] == 8.0 * 7 * 4 * 1000
    Metrics({"imd": {"k": 5}}).check_sample_size(6)
    with pytest.raises(ValueError, match="metrics.imd.k=5 must be below sample_size=5"):
        Metrics({"imd": {"k": 5}}).check_sample_size(5)
    h = imd_module.HeatTrace(np.zeros(2), np.zeros(2))
    with pytest.raises(AttributeError):
        h.values = np.ones(2)  # type: ignore[misc]
    assert imd_module.SCALE == 1e6 and imd_module.ER_EPSILON == 1e-6 and imd_module.EXACT_MAX_N == 10000


def test_imd_in_the_suite_equals_imd_with_the_same_draws() -> None:
    """The protocol's IMD: x's then y's probes from its stream, exact graphs with distances; a reduced-precision
    search falls back to float32 where KID takes the Gram strips."""
    x, y = gauss(60, 3, 121).astype(np.float32), gauss(50, 5, 122).astype(np.float32)
    o = {"k": 4, "nv": 3, "m": 6}
    got, sx = suite_values(x, y, {"imd": o})
    assert float(got["imd"]) == pytest.approx(float(imd(x, y, **o, seed=metric_draws(0)("imd"))), rel=1e-9)
    assert sx.stats["imd"].sq_dist is not None
    chosen = {"imd": {**o, "knn_precision": "bfloat16"}, "kid": {"subsets": 2, "subset_size": 50}}
    x2 = gauss(60, 5, 123).astype(np.float32)
    got, _ = suite_values(x2, y, chosen)
    assert float(got["imd"]) == pytest.approx(float(imd(x2, y, **o, seed=metric_draws(0)("imd"))), rel=1e-9)
