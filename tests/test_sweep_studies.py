"""A sweep of the study modules paper_checks, slq_accuracy, er_normalisation and nn_internals: each small function
called directly on tiny hand-made inputs, its constants, defaults, boundaries and text pinned against independent
float64 computations (closed forms written out here, scipy, mpmath), so that a changed constant, sign or comparison
in them changes an asserted value."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ganeval.results.verdicts import CONTRADICTED, DEPENDS, HOLDS, NOT_TESTABLE

# ----------------------------------------------------------------------------------------------- paper_checks


def _small_laplacian(n: int = 16, seed: int = 0) -> np.ndarray:
    """The normalised Laplacian of a connected random graph of n nodes (a path plus random edges)."""
    rng = np.random.default_rng(seed)
    a = rng.random((n, n)) < 0.3
    a = (a | a.T) & ~np.eye(n, dtype=bool)
    a[np.arange(n - 1), np.arange(1, n)] = a[np.arange(1, n), np.arange(n - 1)] = True
    d = a.sum(1) ** -0.5
    return np.eye(n) - d[:, None] * a * d[None, :]


def test_paper_checks_constants_are_the_papers() -> None:
    """The temperatures of the paper's figures, k = 5, and every threshold's value and declared range."""
    from ganeval.studies import paper_checks as pc

    assert pc.K == 5
    assert pc.MATVEC_T == (0.1, 2.575, 5.05, 7.525, 10.0)
    assert pc.PROBE_T == (0.1, 0.316, 1.0, 3.16, 10.0)
    assert len(pc.TAYLOR_T) == 11
    np.testing.assert_allclose(pc.TAYLOR_T, 10.0 ** np.linspace(-1, 1, 11), rtol=1e-14)
    got = {th.what: (th.value, th.low, th.high) for th in (pc.MASS, pc.INSENSITIVE, pc.LITTLE, pc.ACCURATE,
                                                            pc.TIGHT_BOUND, pc.REDUCED)}
    assert list(got.values()) == [(1e-8, 1e-8, 1e-8), (0.1, 0.05, 0.25), (0.1, 0.05, 0.25), (1e-3, 1e-4, 1e-2),
                                  (10.0, 3.0, 100.0), (0.9, 0.5, 0.95)]
    assert pc.LITTLE.show(0.1) == "10 %" and pc.LITTLE.scale == 100.0


def test_digits_subset_defaults_against_sklearn() -> None:
    """1 000 rows of the digits drawn with default_rng(0), sorted, pixels ÷ 16, float32."""
    from sklearn.datasets import load_digits

    from ganeval.studies.paper_checks import digits_subset

    x = load_digits().data
    want = (x[np.sort(np.random.default_rng(0).choice(len(x), 1000, replace=False))] / 16.0).astype(np.float32)
    got = digits_subset()
    assert got.dtype == np.float32 and got.shape == (1000, 64)
    np.testing.assert_array_equal(got, want)
    assert got.max() == 1.0  # the largest pixel 16 → 1
    assert len(np.unique(got, axis=0)) == len(np.unique(want, axis=0))  # no row drawn twice beyond the data's own


def test_lanczos_matvec_error_at_every_step_against_the_krylov_projection() -> None:
    """ε_m for m = 1..6 equals ‖exp(−tL)v − Q_m exp(−t Q_mᵀ L Q_m) Q_mᵀ v‖ with Q_m from a QR of the Krylov basis
    (an unnormalised v, scaled here by hand; the error is of the unit v)."""
    from scipy.linalg import expm

    from ganeval.studies.paper_checks import lanczos_matvec_error

    lap = _small_laplacian(16, 1)
    lam, phi = np.linalg.eigh(lap)
    v = np.random.default_rng(2).standard_normal(16)
    v /= np.linalg.norm(v)
    t = 1.7
    err = lanczos_matvec_error(lap, lam, phi, v, t, 6)
    assert err.shape == (6,)
    truth = expm(-t * lap) @ v
    for m in range(1, 7):
        q = np.linalg.qr(np.column_stack([np.linalg.matrix_power(lap, j) @ v for j in range(m)]))[0]
        want = np.linalg.norm(truth - q @ (expm(-t * q.T @ lap @ q) @ (q.T @ v)))
        assert err[m - 1] == pytest.approx(want, rel=1e-7, abs=1e-15), m
    assert err[0] == pytest.approx(np.linalg.norm(truth - np.exp(-t * (v @ lap @ v)) * v), rel=1e-12)


def test_matvec_bound_branches_at_their_edges() -> None:
    """Both branches written out, each at its edge: m = 2ρt exactly (the m ≥ 2ρt branch), m = √(4ρt) exactly (the
    other), just below √(4ρt) (no bound), and ρ's default 0.5."""
    from ganeval.studies.paper_checks import matvec_bound

    def big(m: int, rt: float) -> float:
        return 10.0 / rt * math.exp(-rt) * (math.e * rt / m) ** m

    def mid(m: int, rt: float) -> float:
        return 10.0 * math.exp(-m * m / (5 * rt))

    assert matvec_bound(8, 8.0) == pytest.approx(big(8, 4.0), rel=1e-13)  # m = 2ρt = 8
    assert matvec_bound(4, 8.0) == pytest.approx(mid(4, 4.0), rel=1e-13)  # √(4ρt) = 4 = m < 2ρt
    assert matvec_bound(6, 8.0) == pytest.approx(mid(6, 4.0), rel=1e-13)
    assert math.isnan(matvec_bound(3, 8.0))
    assert matvec_bound(7, 3.0) == pytest.approx(big(7, 1.5), rel=1e-13)
    assert matvec_bound(3, 3.0) == pytest.approx(big(3, 1.5), rel=1e-13)  # 3 = 2ρt
    assert math.isnan(matvec_bound(3, 3.0, rho=1.0))  # √12 = 3.46 > 3
    assert matvec_bound(4, 3.0, rho=1.0) == pytest.approx(mid(4, 3.0), rel=1e-13)  # √12 = 3.46 ≤ 4 < 6


def test_mass_outside_against_mpmath() -> None:
    """The shares outside [0.1, 10] and the totals 2K₁(4), 2K₀(4) against 30-digit quadrature (mpmath)."""
    import mpmath

    from ganeval.studies.paper_checks import mass_outside

    f = lambda t: mpmath.exp(-2 * (t + 1 / t))  # noqa: E731
    g = lambda s: mpmath.exp(-2 * (mpmath.exp(s) + mpmath.exp(-s)))  # noqa: E731
    with mpmath.workdps(30):  # beyond the limits used here the integrands are below 1e-100
        total_t = 2 * mpmath.besselk(1, 4)
        total_log = 2 * mpmath.besselk(0, 4)
        out_t = (mpmath.quad(f, [0, 0.05, 0.1]) + mpmath.quad(f, [10, 20, 200])) / total_t
        out_log = (mpmath.quad(g, [-6, mpmath.log(0.1)]) + mpmath.quad(g, [mpmath.log(10), 6])) / total_log
    share, total = mass_outside(False)
    assert total == pytest.approx(float(total_t), rel=1e-14)
    assert share == pytest.approx(float(out_t), rel=1e-12, abs=0)
    share, total = mass_outside(True)
    assert total == pytest.approx(float(total_log), rel=1e-14)
    assert share == pytest.approx(float(out_log), rel=1e-12, abs=0)


def test_ring_is_radius_root_two_from_one_uniform_draw() -> None:
    from ganeval.studies.paper_checks import ring

    got = ring(np.random.default_rng(5), 7)
    a = np.random.default_rng(5).uniform(0.0, 2 * math.pi, 7)
    np.testing.assert_allclose(got, np.column_stack([math.sqrt(2) * np.cos(a), math.sqrt(2) * np.sin(a)]), rtol=1e-15)
    np.testing.assert_allclose((got ** 2).sum(1), 2.0, rtol=1e-14)


def test_measure_moments_rows_against_the_metrics() -> None:
    """One run of 40 points: each pair's FID, KID (subsets of n // 2, seed [seed, r, 1]) and IMD (seed [seed, r, 2])
    recomputed from the same draws (ring A, A′, A″ and a 2-d Gaussian; A″ scaled by 1.2)."""
    from ganeval.metrics import fid, imd, kid
    from ganeval.studies.paper_checks import measure_moments, ring

    n, seed = 40, 3
    rows = pd.DataFrame(measure_moments(1, n, seed))
    rng = np.random.default_rng([seed, 0])
    a, a2, a3, g = ring(rng, n), ring(rng, n), ring(rng, n), rng.standard_normal((n, 2))
    assert list(rows.name) == [f"{m}/{p}" for p in ("matched", "same", "rescaled") for m in ("fid", "kid", "imd")]
    assert set(rows.part) == {"moments"} and set(rows.n) == {n} and set(rows.run) == {0}
    v = rows.set_index("name")["value"]
    for pair, b in (("matched", g), ("same", a2), ("rescaled", 1.2 * a3)):
        assert v[f"fid/{pair}"] == pytest.approx(fid(a, b), rel=1e-12, abs=1e-15)
        assert v[f"kid/{pair}"] == pytest.approx(
            kid(a, b, subset_size=n // 2, seed=np.random.default_rng([seed, 0, 1]))[0], rel=1e-12, abs=1e-15)
        assert v[f"imd/{pair}"] == pytest.approx(imd(a, b, seed=np.random.default_rng([seed, 0, 2])), rel=1e-12)
    assert v["kid/matched"] != pytest.approx(kid(a, g, subset_size=n // 2 + 1, seed=np.random.default_rng([seed, 0, 1]))[0])


def test_connected_sets_draw_what_their_names_say() -> None:
    from sklearn.datasets import load_digits, make_swiss_roll

    from ganeval.metrics.synthetic import pool3_like
    from ganeval.studies.paper_checks import connected_sets

    sets = connected_sets(4)
    assert list(sets) == ["digits (pixels)", "pool3-like features (256-d)", "Gaussian (64-d)", "swiss roll (3-d)"]
    d = load_digits().data
    np.testing.assert_array_equal(sets["digits (pixels)"](30),
                                  d[np.random.default_rng([4, 30]).choice(len(d), 30, replace=False)] / 16.0)
    assert sets["digits (pixels)"](1797).shape == (1797, 64)  # every row once
    assert len(np.unique(np.random.default_rng([4, 1797]).choice(1797, 1797, replace=False))) == 1797
    np.testing.assert_array_equal(sets["pool3-like features (256-d)"](20), pool3_like(20, d=256, seed=4))
    np.testing.assert_array_equal(sets["Gaussian (64-d)"](20), np.random.default_rng([4, 20]).standard_normal((20, 64)))
    np.testing.assert_array_equal(sets["swiss roll (3-d)"](20), make_swiss_roll(20, noise=0.05, random_state=4)[0])


def test_measure_connected_keeps_digits_up_to_its_1797_rows() -> None:
    """At n = 1797 the digits are kept (all rows; 2 components: sklearn's union 5-NN graph agrees), at 1798 left out;
    the other sets at both sizes, one component each."""
    from scipy.sparse.csgraph import connected_components
    from sklearn.neighbors import kneighbors_graph

    from ganeval.studies.paper_checks import connected_sets, measure_connected

    rows = pd.DataFrame(measure_connected([1797, 1798], 0))
    assert [(r.name, r.n) for r in rows.itertuples()] == [
        ("digits (pixels)", 1797), ("pool3-like features (256-d)", 1797), ("pool3-like features (256-d)", 1798),
        ("Gaussian (64-d)", 1797), ("Gaussian (64-d)", 1798), ("swiss roll (3-d)", 1797), ("swiss roll (3-d)", 1798)]
    x = connected_sets(0)["digits (pixels)"](1797)
    g = kneighbors_graph(x, 5)
    want = connected_components(g + g.T, directed=False)[0]
    assert rows.value.iloc[0] == want == 2
    assert list(rows.value.iloc[1:]) == [1.0] * 6


def _exact_stds(f: np.ndarray, phi: np.ndarray) -> dict[str, float]:
    fm = (phi * f) @ phi.T
    n = len(f)
    fro2 = float((fm ** 2).sum())
    return {"gaussian": math.sqrt(2 * fro2), "rademacher": math.sqrt(2 * (fro2 - float((np.diag(fm) ** 2).sum()))),
            "sphere": math.sqrt(2 * n / (n + 2) * (fro2 - float(np.trace(fm)) ** 2 / n))}


def test_probe_stds_against_the_dense_matrix() -> None:
    """The three closed forms computed from F = Φ diag(f) Φᵀ itself (‖F‖²_F, its diagonal and trace)."""
    from ganeval.studies.paper_checks import probe_stds

    lam, phi = np.linalg.eigh(_small_laplacian(9, 3))
    for f in (np.exp(-0.7 * lam), lam ** 2 - 0.3, np.linspace(-1, 2, 9)):
        got, want = probe_stds(f, phi), _exact_stds(f, phi)
        assert list(got) == ["gaussian", "rademacher", "sphere"]
        for k in want:
            assert got[k] == pytest.approx(want[k], rel=1e-10), k


def test_measure_probes_rows_exact_and_drawn() -> None:
    """On a 50-digit graph, one batch: the exact stds, the exact trace, the variate's stds, and the SLQ traces of
    both probe kinds (m = 10, nv = 100, the variate, ÷ SCALE) with their seeds."""
    from ganeval.metrics import heat_trace
    from ganeval.metrics.imd import SCALE
    from ganeval.studies.paper_checks import PROBE_T, digits_subset, laplacian, measure_probes

    x = digits_subset(50, 1)
    lam, phi = np.linalg.eigh(laplacian(x))
    rows = pd.DataFrame(measure_probes(x, lam, phi, 1, 7))
    assert set(rows.part) == {"probes"} and set(rows.n) == {50}
    for t in PROBE_T:
        r = rows[rows.t == t].set_index("name")["value"]
        f = np.exp(-t * lam)
        ex, cv = _exact_stds(f, phi), _exact_stds(f + t * math.exp(-t) * lam, phi)
        for k in ("gaussian", "rademacher", "sphere"):
            assert r[f"exact_std/{k}"] == pytest.approx(ex[k], rel=1e-9)
        assert r["exact_trace"] == pytest.approx(f.sum(), rel=1e-12)
        assert r["exact_std_cv/sphere"] == pytest.approx(cv["sphere"], rel=1e-9)
        assert r["exact_std_cv/rademacher"] == pytest.approx(cv["rademacher"], rel=1e-9)
        assert "exact_std_cv/gaussian" not in r
    for kind in ("gaussian", "rademacher"):
        want = heat_trace(x, t=np.asarray(PROBE_T), k=5, m=10, nv=100, normalization="none", method="slq",
                          rademacher=kind == "rademacher", variance_reduction=True,
                          seed=np.random.default_rng([7, 0, kind == "rademacher"])) / SCALE
        got = rows[rows.name == f"slq/{kind}"]
        assert list(got.t) == list(PROBE_T) and set(got.run) == {0}
        np.testing.assert_allclose(got.value, want, rtol=1e-12)
    assert len(rows) == 5 * 6 + 2 * 5


def test_measure_matvec_rows_and_the_default_20_steps() -> None:
    from ganeval.studies.paper_checks import MATVEC_T, lanczos_matvec_error, matvec_bound, measure_matvec

    lap = _small_laplacian(24, 4)
    lam, phi = np.linalg.eigh(lap)
    rows = pd.DataFrame(measure_matvec(lap, lam, phi, 1, 9))
    assert len(rows) == 5 * (20 + 20)
    vs = np.random.default_rng([9, 3]).standard_normal((1, 24))
    for t in MATVEC_T:
        for j in range(1):
            e = rows[(rows.name == "error") & (rows.t == t) & (rows.run == j)]
            assert list(e.m) == list(range(1, 21))
            np.testing.assert_allclose(e.value, lanczos_matvec_error(lap, lam, phi, vs[j] / np.linalg.norm(vs[j]), t,
                                                                     20), rtol=1e-12)
        b = rows[(rows.name == "bound") & (rows.t == t)]
        assert list(b.m) == list(range(1, 21)) and b.run.isna().all()
        np.testing.assert_allclose(b.value, [matvec_bound(m, t) for m in range(1, 21)], rtol=1e-14)


def test_measure_taylor_rows_against_the_remainder_written_out() -> None:
    from ganeval.studies.paper_checks import TAYLOR_T, measure_taylor

    lam, phi = np.linalg.eigh(_small_laplacian(10, 5))
    rows = pd.DataFrame(measure_taylor(lam, phi))
    assert len(rows) == 11 * 4 and set(rows.part) == {"taylor"}
    for t in TAYLOR_T:
        r = rows[rows.t == t].set_index("name")["value"]
        f = np.exp(-t * lam)
        without, with_ = _exact_stds(f, phi), _exact_stds(f - 1 + t * lam - t * t * lam * lam / 2, phi)
        for kind in ("gaussian", "rademacher"):
            assert r[f"{kind}/without"] == pytest.approx(without[kind], rel=1e-9)
            assert r[f"{kind}/with"] == pytest.approx(with_[kind], rel=1e-7, abs=1e-14)


def test_measure_normalisation_divisors() -> None:
    """'empty' divides by n at every k; 'er' by normalize_trace's divisor at k = 3, 5, 10, 20."""
    from ganeval.metrics.imd import normalize_trace
    from ganeval.studies.paper_checks import PROBE_T, measure_normalisation

    rows = pd.DataFrame(measure_normalisation(300))
    assert [n for n in dict.fromkeys(rows.name)] == [f"{norm}/k={k}" for norm in ("empty", "er") for k in (3, 5, 10, 20)]
    assert len(rows) == 8 * 5 and set(rows.n) == {300}
    e = rows[rows.name.str.startswith("empty")]
    np.testing.assert_allclose(e.value, 300.0, rtol=1e-15)
    for k in (3, 5, 10, 20):
        r = rows[rows.name == f"er/k={k}"]
        assert set(r.m) == {k} and list(r.t) == list(PROBE_T)
        np.testing.assert_allclose(r.value, 1.0 / normalize_trace(np.ones(5), "er", 300, k, np.asarray(PROBE_T)),
                                   rtol=1e-14)


def test_measure_wires_every_part_with_its_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """`measure()` with every part stubbed: the mass rows (t and log t), each part called with the defaults
    (runs 20, n 1000, the five sizes, 40 batches, 5 probes, seed 0) and its rows kept in order."""
    from ganeval.studies import paper_checks as pc

    calls: dict[str, Any] = {}

    def stub(name: str, ret: Any = None):  # noqa: ANN202
        def f(*a: Any) -> Any:
            calls[name] = a
            return [pc._rows(name, value=1.0)] if ret is None else ret
        return f

    monkeypatch.setattr(pc, "mass_outside", lambda log_t: (0.5 if log_t else 0.25, 3.0 if log_t else 2.0))
    for name in ("measure_moments", "measure_connected", "measure_probes", "measure_matvec", "measure_taylor",
                 "measure_normalisation"):
        monkeypatch.setattr(pc, name, stub(name))
    monkeypatch.setattr(pc, "digits_subset", stub("digits_subset", np.zeros((3, 2))))
    monkeypatch.setattr(pc, "laplacian", stub("laplacian", np.diag([0.0, 1.0, 2.0])))
    stages: list[str] = []
    rows = pc.measure(stage=stages.append)
    assert list(rows.columns) == list(pc.COLUMNS)
    assert list(rows.part) == ["mass"] * 4 + ["measure_moments", "measure_connected", "measure_probes",
                                              "measure_matvec", "measure_taylor", "measure_normalisation"]
    assert list(rows.name[:4]) == ["outside/t", "total/t", "outside/log t", "total/log t"]
    assert list(rows.value[:4]) == [0.25, 2.0, 0.5, 3.0]
    assert calls["measure_moments"] == (20, 1000, 0)
    assert calls["measure_connected"] == ((500, 1000, 1797, 4000, 10000), 0)
    assert calls["digits_subset"] == (1000, 0)
    assert calls["measure_probes"][3:] == (40, 0) and calls["measure_matvec"][3:] == (5, 0)
    np.testing.assert_array_equal(calls["measure_probes"][1], [0.0, 1.0, 2.0])
    assert calls["measure_normalisation"] == (1000,)
    assert len(stages) == 5


def test_part_selects_its_rows() -> None:
    from ganeval.studies.paper_checks import part

    rows = pd.DataFrame({"part": ["a", "b", "a"], "value": [1.0, 2.0, 3.0]})
    assert list(part(rows, "a").value) == [1.0, 3.0]


def test_ratio_interval_is_a_paired_percentile_bootstrap_of_2000() -> None:
    from ganeval.studies.paper_checks import ratio_interval

    g = np.random.default_rng(9)
    num, den = g.uniform(1, 3, 12), g.uniform(1, 3, 12)
    idx = np.random.default_rng(0).integers(0, 12, (2000, 12))
    boot = num[idx].mean(1) / den[idx].mean(1)
    r, lo, hi = ratio_interval(num, den, 0.9)
    assert r == pytest.approx(num.sum() / den.sum(), rel=1e-14)
    assert lo == pytest.approx(np.quantile(boot, 0.05), rel=1e-15)
    assert hi == pytest.approx(np.quantile(boot, 0.95), rel=1e-15)
    assert lo < r < hi


def _moment_rows(matched: np.ndarray, rescaled: np.ndarray, imd: np.ndarray) -> pd.DataFrame:
    rows = []
    for r in range(len(matched)):
        for m in ("fid", "kid"):
            rows += [{"part": "moments", "name": f"{m}/same", "run": r, "value": 1.0},
                     {"part": "moments", "name": f"{m}/matched", "run": r, "value": 1.0 + matched[r]},
                     {"part": "moments", "name": f"{m}/rescaled", "run": r, "value": 1.0 + rescaled[r]}]
        rows += [{"part": "moments", "name": "imd/same", "run": r, "value": 2.0},
                 {"part": "moments", "name": "imd/matched", "run": r, "value": 2.0 + imd[r]}]
    return pd.DataFrame(rows)


def test_moment_claims_ratio_text_detectable_and_imd_sign() -> None:
    """The ratio (matched − same) ÷ (rescaled − same) and its interval written out; `detectable` empty unless not
    testable; IMD's difference matched − same tested one-sided (its p the t-test's)."""
    from scipy import stats

    from ganeval.results.power import one_sided_mde
    from ganeval.studies.paper_checks import moment_claims, ratio_interval

    matched = np.array([0.01, 0.02, 0.015, 0.012, 0.018, 0.011])
    rescaled = np.array([1.0, 1.1, 0.9, 1.05, 0.95, 1.0])
    imd = np.array([0.3, 0.5, 0.4, 0.45, 0.35, 0.38])
    fid, kid, sep = moment_claims(_moment_rows(matched, rescaled, imd), 0.99, 0.995)
    r, lo, hi = ratio_interval(matched, rescaled, 0.99)
    assert fid.verdict == HOLDS and fid.detectable == ""
    assert f"ratio {r:+.3f} [{lo:+.3f}, {hi:+.3f}]" in fid.evidence and r > 0
    assert "FID matched 1.01, same 1, rescaled 2" in fid.evidence and "over 6 runs" in fid.rule
    assert kid.name.startswith("KID")
    assert sep.verdict == HOLDS
    assert sep.p_value == pytest.approx(stats.ttest_1samp(imd, 0.0, alternative="greater").pvalue, rel=1e-12)
    assert sep.evidence.startswith(f"{imd.mean():.3g} [")
    assert sep.detectable == f"{one_sided_mde(float(np.std(imd, ddof=1)), 6, 0.005):.3g} (one-sided)"
    # an interval across ±0.25..0.05 everywhere: not testable, with what would decide
    wide = moment_claims(_moment_rows(np.array([1.0, -1.0, 0.9, -0.95, 0.05, -0.02]), np.ones(6), -imd), 0.99, 0.99)
    assert wide[0].verdict == NOT_TESTABLE and wide[0].detectable.startswith("an interval clear of the threshold")
    assert wide[2].verdict == CONTRADICTED


def test_connected_claims_one_component_holds_two_contradict() -> None:
    from ganeval.results.verdicts import vs_paper
    from ganeval.studies.paper_checks import connected_claims

    def rows(values: list[float]) -> pd.DataFrame:
        return pd.DataFrame([{"part": "connected", "name": "s", "n": 100 * (i + 1), "value": v}
                             for i, v in enumerate(values)])

    mine, const, paper = connected_claims(rows([1.0, 1.0]))
    assert mine.verdict == HOLDS and mine.evidence == "2 graphs, every one connected"
    assert const.verdict == HOLDS and "1 / ln 7 = 0.513898" in const.evidence and const.vs_paper == vs_paper(HOLDS)
    assert paper.evidence == f"on s: {HOLDS}"
    mine = connected_claims(rows([1.0, 2.0]))[0]
    assert mine.verdict == CONTRADICTED and mine.evidence == "2 graphs, s at n = 200: 2 components"


def test_mass_claims_threshold_edge_and_peak() -> None:
    """A share of exactly 1e-8 is not below 1e-8; the peak of e^(−2(t+1/t)) on the grid is t = 1.00000."""
    from ganeval.results.verdicts import vs_paper
    from ganeval.studies.paper_checks import mass_claims

    def rows(share_t: float, share_log: float) -> pd.DataFrame:
        return pd.DataFrame([{"part": "mass", "name": n, "value": v} for n, v in
                             (("outside/t", share_t), ("total/t", 0.02), ("outside/log t", share_log),
                              ("total/log t", 0.03))])

    t, log_t, peak = mass_claims(rows(1e-8, 9.99e-9))
    assert t.verdict == CONTRADICTED and log_t.verdict == HOLDS
    assert t.evidence == "outside: 1e-08" and "2K_1(4) = 0.02" in t.rule and "2K_0(4) = 0.03" in log_t.rule
    assert peak.verdict == HOLDS and peak.evidence == "argmax t = 1.00000" and peak.vs_paper == vs_paper(HOLDS)


def _probe_rows(ratio: float, rad_equal: bool = False, scale: float = 1000.0) -> pd.DataFrame:
    rows = []
    for t in (0.5, 2.0):
        g = 3.0
        rows += [{"part": "probes", "name": "exact_std/gaussian", "t": t, "value": g},
                 {"part": "probes", "name": "exact_std/rademacher", "t": t, "value": g if rad_equal else 2.0},
                 {"part": "probes", "name": "exact_std/sphere", "t": t, "value": 2.5},
                 {"part": "probes", "name": "exact_trace", "t": t, "value": 10.0},
                 {"part": "probes", "name": "exact_std_cv/sphere", "t": t, "value": 4.0},
                 {"part": "probes", "name": "exact_std_cv/rademacher", "t": t, "value": 4.0 * ratio}]
        for b, gv in enumerate([1.0, 2.0, 4.0, 3.0]):
            rows.append({"part": "probes", "name": "slq/gaussian", "t": t, "run": b, "value": gv})
        for b, rv in enumerate([1.0, 5.0, 2.0, 7.0, 3.0]):
            rows.append({"part": "probes", "name": "slq/rademacher", "t": t, "run": b, "value": scale * rv})
    return pd.DataFrame(rows)


def test_probe_claims_theory_practice_and_the_drawn_f_interval() -> None:
    """Theory: Rademacher's std strictly below Gaussian's (equal: contradicted). Practice: the variate's exact ratio
    within 1 ± τ (1.25: |x − 1| = 0.25 is not within at τ = 0.25). The drawn std ratio's F interval written out."""
    from scipy import stats

    from ganeval.studies.paper_checks import probe_claims

    theory, practice = probe_claims(_probe_rows(1.0), 0.9)
    assert theory.verdict == HOLDS and practice.verdict == HOLDS
    assert "t = 0.5: 2 vs 3 (2.5)" in theory.evidence
    r, g = 1000.0 * np.array([1.0, 5.0, 2.0, 7.0, 3.0]), np.array([1.0, 2.0, 4.0, 3.0])
    x = np.std(r, ddof=1) / np.std(g, ddof=1)
    lo, hi = stats.f.ppf(0.05, 4, 3), stats.f.ppf(0.95, 4, 3)
    drawn = f"drawn over 4: {x:.2f} [{x / np.sqrt(hi):.2f}, {x / np.sqrt(lo):.2f}]"
    assert practice.evidence == f"t = 0.5: 1.000 ({drawn}); t = 2: 1.000 ({drawn})"
    assert probe_claims(_probe_rows(1.0, rad_equal=True), 0.9)[0].verdict == CONTRADICTED
    assert probe_claims(_probe_rows(1.25), 0.9)[1].verdict == CONTRADICTED
    assert probe_claims(_probe_rows(0.75), 0.9)[1].verdict == CONTRADICTED
    c = probe_claims(_probe_rows(1.125), 0.9)[1]
    assert c.verdict == DEPENDS and "t = 0.5: 1.125" in c.evidence
    assert c.across.startswith("contradicted for 5–12.5 %; holds for 12.5–25 %")


def _matvec_rows(e10: float, err: dict[int, float], bound: dict[int, float]) -> pd.DataFrame:
    from ganeval.studies.paper_checks import MATVEC_T

    rows = []
    for t in MATVEC_T:
        for m in range(1, 11):
            for run in (0, 1):
                v = e10 if m == 10 else err.get(m, 0.0)
                rows.append({"part": "matvec", "name": "error", "t": t, "m": m, "run": run,
                             "value": v if run == 0 else v / 2})
            rows.append({"part": "matvec", "name": "bound", "t": t, "m": m, "value": bound.get(m, np.nan)})
    return pd.DataFrame(rows)


def test_matvec_claims_at_their_edges() -> None:
    """ε_10 exactly at the range's top 1e-2 is not below it; the bound ÷ error ratio exactly 3 (the range's bottom)
    is tight; an error of exactly 1e-12 and one of 1.5e-12 at m where the bound would be far off."""
    from ganeval.studies.paper_checks import matvec_claims

    steps, tight = matvec_claims(_matvec_rows(1e-2, {2: 0.5, 3: 1e-12, 4: 1.5e-12}, {2: 1.5, 3: 1.0, 4: 1.0}))
    assert steps.verdict == CONTRADICTED and "over 2 unit Gaussian v" in steps.rule
    assert steps.evidence.startswith("t = 0.1: 0.01; t = 2.575: 0.01")
    assert tight.verdict == HOLDS  # 1.5 ÷ 0.5 = 3 ≤ 3
    assert tight.evidence.startswith("t = 0.1: 3× to 6.67e+11×;")  # 1e-12 left out, 1.5e-12 kept
    steps, tight = matvec_claims(_matvec_rows(1e-4, {2: 0.5}, {2: 20.0}))
    assert tight.verdict == DEPENDS and "t = 10: 40× to 40×" in tight.evidence
    steps = matvec_claims(_matvec_rows(9e-5, {2: 0.5}, {2: 1.0}))[0]
    assert steps.verdict == HOLDS and steps.across == "holds for all of 0.0001–0.01"


def test_matvec_claims_e10_at_the_lowest_threshold() -> None:
    from ganeval.studies.paper_checks import matvec_claims

    steps = matvec_claims(_matvec_rows(1e-4, {2: 0.5}, {2: 1.0}))[0]
    assert steps.verdict == DEPENDS and steps.across.startswith("contradicted for 0.0001–0.0001; holds")


def _taylor_rows(ratios: dict[float, float], rad: float = 0.5) -> pd.DataFrame:
    rows = []
    for t, x in ratios.items():
        rows += [{"part": "taylor", "name": "gaussian/without", "t": t, "value": 2.0},
                 {"part": "taylor", "name": "gaussian/with", "t": t, "value": 2.0 * x},
                 {"part": "taylor", "name": "rademacher/without", "t": t, "value": 4.0},
                 {"part": "taylor", "name": "rademacher/with", "t": t, "value": 4.0 * rad}]
    return pd.DataFrame(rows)


def test_taylor_claim_asks_t_up_to_one_only() -> None:
    from ganeval.studies.paper_checks import taylor_claim

    c = taylor_claim(_taylor_rows({0.5: 0.25, 1.0: 0.25, 1.0 + 1.5e-9: 3.0, 1.5: 3.0}))
    assert c.verdict == HOLDS and "at the 2 t ≤ 1" in c.rule
    assert c.evidence == ("t = 0.5: 0.25 (Rademacher 0.5); t = 1: 0.25 (Rademacher 0.5); above t = 1 it grows: "
                          "t = 1: 3, t = 1.5: 3")
    assert taylor_claim(_taylor_rows({0.5: 0.25, 1.0: 0.95})).verdict == CONTRADICTED  # 0.95 is not below 0.95
    assert "at the 3 t ≤ 1" in taylor_claim(_taylor_rows({0.5: 0.25, 1.0: 0.25, 1 + 1e-9: 0.25, 2.0: 3.0})).rule
    c = taylor_claim(_taylor_rows({0.5: 0.25, 1.0: 0.5}))
    assert c.verdict == HOLDS and c.across == "holds for all of 0.5–0.95" or c.verdict == DEPENDS
    assert c.across.startswith("contradicted for 0.5–0.5")


def _norm_rows(empty: tuple[float, float], er: tuple[float, float]) -> pd.DataFrame:
    rows = []
    for norm, vals in (("empty", empty), ("er", er)):
        for k, v in zip((3, 5), vals):
            rows += [{"part": "normalisation", "name": f"{norm}/k={k}", "t": t, "value": v} for t in (0.1, 1.0)]
    return pd.DataFrame(rows)


def test_normalisation_claim_spread_and_its_edge() -> None:
    from ganeval.studies.paper_checks import normalisation_claim

    c = normalisation_claim(_norm_rows((4.0, 4.0), (2.0, 5.0)))
    assert c.verdict == HOLDS and c.evidence.endswith("empty 0, Erdős–Rényi 1.5")
    c = normalisation_claim(_norm_rows((4.0, 4.0 * (1 + 1.5e-12)), (1.0, 1.0)))
    assert c.verdict == CONTRADICTED and c.evidence.endswith("empty 1.5e-12, Erdős–Rényi 0")


def test_verdict_text_names_each_claims_rule_and_the_protocol() -> None:
    from ganeval.results.verdicts import Claim
    from ganeval.studies.paper_checks import verdict_text

    c = Claim("a claim", "a statement", HOLDS, "THE RULE", "a threshold", evidence="x")
    config = {"runs": 3, "n": 40, "sizes": [1, 2], "batches": 2, "probes": 1, "seed": 7}
    text = verdict_text([c], config, 0.99)
    assert "a claim (THE RULE)" in text.split("---")[0] or "a claim (THE RULE)" in text
    assert "3 runs of 40 points per set" in text and "KID on subsets of 20" in text and "seed 7" in text


def test_plot_draws_errors_bounds_and_taylor_ratios(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import ganeval.results.plots as plots
    from ganeval.studies.paper_checks import plot

    figs: list[Any] = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig) or path)
    rows = pd.concat([_matvec_rows(1e-4, {2: 0.5}, {2: 1.0, 3: 0.25}),
                      _taylor_rows({0.5: 0.25, 2.0: 3.0}, rad=0.5)], ignore_index=True)
    rows.loc[(rows.name == "error") & (rows.t != 0.1), "value"] *= 3  # each t its own errors
    plot(rows, tmp_path / "p.png")
    (fig,) = figs
    ax, bx = fig.axes
    assert tuple(fig.get_size_inches()) == (10.0, 3.8)
    lines = ax.get_lines()
    assert len(lines) == 10
    e, b = lines[0], lines[1]
    assert list(e.get_xdata()) == list(range(1, 11))
    assert e.get_ydata()[1] == 0.5 and e.get_ydata()[9] == 1e-4 and e.get_markersize() == 2 and e.get_color() == "C0"
    assert list(b.get_xdata()) == list(range(1, 11)) and b.get_ydata()[1] == 1.0 and b.get_linestyle() == ":"
    assert b.get_ydata()[2] == 0.25 and lines[2].get_color() == "C1"
    assert ax.get_ylim() == (1e-19, 1e2) and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == ["t = 0.1", "t = 2.575"]
    assert ax.get_legend().get_texts()[0].get_fontsize() == 7
    g, r, h, v = bx.get_lines()
    assert list(g.get_xdata()) == [0.5, 2.0] and list(g.get_ydata()) == [0.25, 3.0] and list(r.get_ydata()) == [0.5, 0.5]
    assert list(h.get_ydata()) == [1, 1] and list(v.get_xdata()) == [1, 1]
    assert h.get_linewidth() == 0.5 and v.get_linewidth() == 0.5
    assert bx.get_legend().get_texts()[0].get_fontsize() == 8
    assert bx.get_xscale() == "log" and bx.get_yscale() == "log"


# ----------------------------------------------------------------------------------------------- slq_accuracy


def test_probe_pool_against_dense_forms_and_krylov_projections() -> None:
    """On a 20-node 3-NN graph, 7 probes in chunks of 3, m = 1..4: every field against the dense Laplacian: the
    exact forms uᵀexp(−tL)u, the m-step forms as Krylov projections, uᵀLu, the estimates with and without the
    paper's variate, the exact variances and the variance-optimal α."""
    import torch

    from ganeval.metrics.imd import knn_graph
    from ganeval.metrics.laplacian import dense_laplacian
    from ganeval.studies.slq_accuracy import probe_pool

    from scipy.linalg import expm

    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 3))
    t = np.array([0.3, 1.0, 2.5])
    probes = rng.standard_normal((20, 7))
    pool = probe_pool(x, 3, t, probes, 4, chunk=3)
    lap = dense_laplacian(knn_graph(torch.from_numpy(x.astype(np.float32)), 3)).double().numpy()
    lam = np.linalg.eigvalsh(lap)
    n = 20
    assert pool.n == n and pool.forms_slq.shape == (4, 7, 3) and pool.l_slq.shape == (4, 7)
    np.testing.assert_allclose(pool.truth, np.exp(-t[:, None] * lam[None]).sum(1), rtol=1e-10)
    u = probes / np.linalg.norm(probes, axis=0)
    w = t * np.exp(-t)
    for p in range(7):
        v = u[:, p]
        exact = np.array([v @ expm(-tt * lap) @ v for tt in t])
        np.testing.assert_allclose(pool.forms_exact[p], exact, rtol=1e-9)
        vl = v @ lap @ v
        np.testing.assert_allclose(pool.exact[p], n * exact + w * (n * vl - n), rtol=1e-9)
        for m in range(1, 5):
            q = np.linalg.qr(np.column_stack([np.linalg.matrix_power(lap, j) @ v for j in range(m)]))[0]
            c = q.T @ v
            form = np.array([c @ expm(-tt * q.T @ lap @ q) @ c for tt in t])
            np.testing.assert_allclose(pool.forms_slq[m - 1, p], form, rtol=1e-6)
            assert pool.l_slq[m - 1, p] == pytest.approx(vl, rel=1e-6)
            np.testing.assert_allclose(pool.slq_plain[m - 1, p], n * pool.forms_slq[m - 1, p], rtol=1e-12)
            np.testing.assert_allclose(pool.slq[m - 1, p], n * pool.forms_slq[m - 1, p] + w * (n * pool.l_slq[m - 1, p] - n),
                                       rtol=1e-10)
    a = np.exp(-t[:, None] * lam[None])
    np.testing.assert_allclose(pool.var_theory_plain, 2 * n * n / (n + 2) * a.var(1), rtol=1e-8)
    np.testing.assert_allclose(pool.var_theory, 2 * n * n / (n + 2) * (a + w[:, None] * lam[None]).var(1), rtol=1e-8)
    cov = ((a - a.mean(1, keepdims=True)) * (lam - lam.mean())[None]).mean(1)
    np.testing.assert_allclose(pool.alpha_theory, -cov / (t * lam.var()), rtol=1e-8)
    assert np.all(pool.alpha_theory > 0)


def test_batch_errors_drop_the_remainder_and_average_each_batch() -> None:
    from ganeval.studies.slq_accuracy import batch_errors

    est = np.array([[1.0, 10.0, 3.0], [3.0, 20.0, 5.0], [2.0, 30.0, 7.0], [8.0, 40.0, 9.0], [4.0, 50.0, 1.0],
                    [6.0, 60.0, 2.0], [100.0, 100.0, 100.0]])
    truth = np.array([2.0, 40.0, 5.0])
    got = batch_errors(est, truth, 3)  # two batches of 3, the 7th row left out
    want = np.array([[2.0 / 2 - 1, 20.0 / 40 - 1, 5.0 / 5 - 1], [6.0 / 2 - 1, 50.0 / 40 - 1, 4.0 / 5 - 1]])
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(batch_errors(est, truth, 7), (est.mean(0) / truth - 1)[None], rtol=1e-14)
    assert batch_errors(est, truth, 1).shape == (7, 3)


def test_rms_and_its_chi2_interval_written_out() -> None:
    from scipy.stats import chi2

    from ganeval.studies.slq_accuracy import mean_ci, rms

    rel = np.array([0.1, -0.2, 0.3, 0.05])
    ss = 0.01 + 0.04 + 0.09 + 0.0025
    got = rms(rel, 0.9)
    assert got["value"] == pytest.approx(math.sqrt(ss / 4), rel=1e-14)
    assert got["ci_low"] == pytest.approx(math.sqrt(ss / chi2.ppf(0.95, 4)), rel=1e-12)
    assert got["ci_high"] == pytest.approx(math.sqrt(ss / chi2.ppf(0.05, 4)), rel=1e-12)
    m = mean_ci(rel, 0.9)
    assert list(m) == ["value", "ci_low", "ci_high"] and m["value"] == pytest.approx(0.0625, rel=1e-14)


def test_bootstrap_resamples_probes_in_chunks_of_100() -> None:
    """201 resamples (chunks of 100, 100, 1) of 9 probes × 2 temperatures: the ratio of stds and the optimal α,
    each chunk's draw written out."""
    from ganeval.studies.slq_accuracy import bootstrap

    rng = np.random.default_rng(1)
    t = np.array([0.5, 2.0])
    y = rng.normal(50, 3, (9, 2))
    lv = rng.normal(5, 1, 9)
    x = y + (t * np.exp(-t))[None] * (lv[:, None] - 30) + rng.normal(0, 1e-3, (9, 2))
    got = bootstrap(x, y, t, 30, 201, 0.8, seed=[4, 1])
    g = np.random.default_rng([4, 1])
    ratios, alphas = [], []
    lvs = (x - y) / (t * np.exp(-t))[None] + 30
    for size in (100, 100, 1):
        idx = g.integers(0, 9, size=(size, 9))
        xs, ys, ls = x[idx], y[idx], lvs[idx]
        ratios.append(xs.std(axis=1, ddof=1) / ys.std(axis=1, ddof=1))
        cov = ((ys - ys.mean(1, keepdims=True)) * (ls - ls.mean(1, keepdims=True))).mean(1)
        alphas.append(-cov / (t[None] * ls.var(axis=1)))
    r, a = np.concatenate(ratios), np.concatenate(alphas)
    assert r.shape == (201, 2)
    for key, arr, q in (("ratio_low", r, 0.1), ("ratio_high", r, 0.9), ("alpha_low", a, 0.1), ("alpha_high", a, 0.9)):
        assert got[key].shape == (2,)
        np.testing.assert_allclose(got[key], np.quantile(arr, q, axis=0), rtol=1e-12, err_msg=key)


def _hand_pool(p: int = 12, steps: int = 3) -> Any:
    from ganeval.studies.slq_accuracy import Pool

    rng = np.random.default_rng(7)
    t = np.array([0.5, 1.0, 2.0, 4.0])
    truth = np.array([50.0, 40.0, 30.0, 20.0])
    exact = truth[None] * (1 + rng.normal(0, 0.05, (p, 4)))
    slq = exact[None] + truth[None, None] * rng.normal(0.001, 0.01, (steps, p, 4))
    plain = slq + truth[None, None] * rng.normal(0, 0.1, (steps, p, 4))
    forms_exact = rng.uniform(0.5, 1.0, (p, 4))
    forms_slq = forms_exact[None] * (1 + rng.normal(0, 0.01, (steps, p, 4)))
    return Pool(t=t, truth=truth, slq=slq, slq_plain=plain, exact=exact, forms_slq=forms_slq, forms_exact=forms_exact,
                l_slq=rng.uniform(0.9, 1.1, (steps, p)), var_theory=np.array([4.0, 9.0, 16.0, 25.0]),
                var_theory_plain=np.array([16.0, 36.0, 49.0, 64.0]), alpha_theory=np.array([0.6, 0.4, 0.2, 0.1]),
                n=30)


def _slq_cfg(**kw: Any) -> Any:
    from types import SimpleNamespace

    base = dict(nv=3, m=2, t_errors=[0.5, 2.1], nv_list=[1, 2, 4, 5], min_batches=3, delta=0.1, t_variance_min=0.5,
                t_variance_max=2.0, bootstrap=200, table_steps=[1, 2, 3, 5], max_steps=3, probes=12, n_t_variance=3)
    base.update(kw)
    return SimpleNamespace(**base)


def test_measure_rows_against_the_pool_written_out() -> None:
    """Every row `measure` makes from a hand-made pool (12 probes, m = 1..3, nv = 3, t = 0.5, 1, 2, 4), each value
    recomputed here: the paper's t picked by nearest (2.1 → 2), nv batches kept while they number ≥ 3 (nv = 4 kept,
    5 not), the variance window 0.5..2 with both ends in."""
    from ganeval.metrics.slq_error import hutchinson_bound, lanczos_bound
    from ganeval.studies.slq_accuracy import batch_errors, bootstrap, mean_ci, measure, rms

    pool, cfg = _hand_pool(), _slq_cfg()
    df = measure(pool, cfg, 0.9, 5)
    t, truth = pool.t, pool.truth

    def row(fig: str, q: str, tv: float, m: Any = None, nv: Any = None) -> Any:
        sel = (df.figure == fig) & (df.quantity == q) & (df.t == tv)
        if m is not None:
            sel &= df.m == m
        if nv is not None:
            sel &= df.nv == nv
        assert sel.sum() == 1, (fig, q, tv, m, nv)
        return df[sel].iloc[0]

    def same(r: Any, stats: dict[str, float], ref: Any = None) -> None:
        assert r.value == pytest.approx(stats["value"], rel=1e-12, abs=1e-15)
        for k in ("ci_low", "ci_high"):
            if stats.get(k) is None:
                assert r[k] is None or np.isnan(r[k])
            else:
                assert r[k] == pytest.approx(stats[k], rel=1e-12, abs=1e-15), k
        if ref is not None:
            assert r.reference == pytest.approx(ref, rel=1e-12, nan_ok=True)

    assert sorted(set(df[df.figure == "m"].t)) == [0.5, 2.0] and sorted(set(df[df.figure == "nv"].t)) == [0.5, 2.0]
    assert sorted(set(df[df.figure == "variance"].t)) == [0.5, 1.0, 2.0]
    for j in (0, 2):
        same(row("m", "rms_error_hutchinson", t[j], nv=3), rms(batch_errors(pool.exact, truth, 3)[:, j], 0.9))
        for m in (1, 2, 3):
            r = row("m", "rms_error", t[j], m, 3)
            same(r, rms(batch_errors(pool.slq[m - 1], truth, 3)[:, j], 0.9), lanczos_bound(m, float(t[j])))
            same(row("m", "lanczos_bias", t[j], m, 3), mean_ci((pool.slq[m - 1][:, j] - pool.exact[:, j]) / truth[j], 0.9))
            d = (pool.slq[m - 1][:, j] - pool.exact[:, j]).reshape(4, 3).mean(1)
            r = row("m", "lanczos_max_abs", t[j], m, 3)
            assert r.value == pytest.approx(np.abs(d).max() / truth[j], rel=1e-9)
            if not np.isnan(lanczos_bound(m, float(t[j]))):
                assert r.reference == pytest.approx(lanczos_bound(m, float(t[j])), rel=1e-12)
            form = np.abs(pool.forms_slq[m - 1][:, j] / pool.forms_exact[:, j] - 1)
            assert row("m", "form_rel_error", t[j], m).value == pytest.approx(form.mean(), rel=1e-12)
        plain = df[(df.quantity == "rms_error_plain") & (df.t == t[j])]
        assert list(plain.m) == [2]
        same(plain.iloc[0], rms(batch_errors(pool.slq_plain[1], truth, 3)[:, j], 0.9))
        assert sorted(df[(df.figure == "nv") & (df.quantity == "rms_error") & (df.t == t[j])].nv) == [1, 2, 4]
        bias = float(np.mean(pool.slq[1][:, j] - pool.exact[:, j]))
        for nv in (1, 2, 4):
            same(row("nv", "rms_error", t[j], 2, nv), rms(batch_errors(pool.slq[1], truth, nv)[:, j], 0.9),
                 float(hutchinson_bound(nv, 0.1)))
            assert row("nv", "rms_error_theory", t[j], 2, nv).value == pytest.approx(
                math.sqrt(pool.var_theory[j] / nv + bias ** 2) / truth[j], rel=1e-12)
    var_t = [0, 1, 2]
    x, y = pool.slq[1][:, var_t], pool.slq_plain[1][:, var_t]
    boot = bootstrap(x, y, t[var_t], 30, 200, 0.9, [5, 1])
    for i, j in enumerate(var_t):
        same(row("variance", "std_cv", t[j], 2, 3), {"value": x[:, i].std(ddof=1) / math.sqrt(3) / truth[j]},
             math.sqrt(pool.var_theory[j] / 3) / truth[j])
        same(row("variance", "std_plain", t[j], 2, 3), {"value": y[:, i].std(ddof=1) / math.sqrt(3) / truth[j]},
             math.sqrt(pool.var_theory_plain[j] / 3) / truth[j])
        same(row("variance", "std_ratio", t[j], 2, 3), {"value": x[:, i].std(ddof=1) / y[:, i].std(ddof=1),
                                                       "ci_low": boot["ratio_low"][i], "ci_high": boot["ratio_high"][i]},
             math.sqrt(pool.var_theory[j] / pool.var_theory_plain[j]))
        lv = (x[:, i] - y[:, i]) / (t[j] * math.exp(-t[j])) + 30
        alpha = -np.mean((y[:, i] - y[:, i].mean()) * (lv - lv.mean())) / (t[j] * lv.var())
        same(row("variance", "alpha_optimal", t[j], 2, 3), {"value": alpha, "ci_low": boot["alpha_low"][i],
                                                           "ci_high": boot["alpha_high"][i]}, pool.alpha_theory[j])
        assert row("variance", "alpha_used", t[j], 2, 3).value == pytest.approx(math.exp(-t[j]), rel=1e-15)
    assert len(df) == 2 * (1 + 3 * 4 + 1 + 3 * 2) + 3 * 5


def test_slq_table_text_lines() -> None:
    """table.md's headers, separators and the cells of each table, from the hand-made pool's rows."""
    from ganeval.studies.slq_accuracy import measure, table_text

    pool, cfg = _hand_pool(), _slq_cfg()
    df = measure(pool, cfg, 0.9, 5)
    lines = table_text(df, cfg, "HEADER").split("\n")
    assert lines[:5] == ["# SLQ estimator accuracy", "", "HEADER", "", "RMS relative error of the trace estimate "
                         "against m (nv = 3), [interval]:"]
    assert lines[6] == ("| t | m = 1 | m = 2 | m = 3 | exact forms (m = ∞) | m = 2 without the control variate |")
    assert lines[7] == "|---|---|---|---|---|---|"
    r = df[(df.quantity == "rms_error") & (df.figure == "m") & (df.t == 0.5) & (df.m == 1)].iloc[0]
    assert lines[8].startswith(f"| 0.5 | {r.value:.2e} [{r.ci_low:.1e}, {r.ci_high:.1e}] | ")
    assert lines[9].startswith("| 2 | ") and lines[10] == ""
    assert lines[11] == "RMS relative error against nv (m = 2), [interval]:"
    assert lines[13] == "| t | nv = 1 | nv = 2 | nv = 4 |" and lines[14] == "|---|---|---|---|"
    assert lines[15].startswith("| 0.5 | ") and lines[15].count("|") == 5
    v = df[df.figure == "variance"]
    a = v[(v.quantity == "std_plain") & (v.t == 1.0)].iloc[0].value
    b = v[(v.quantity == "std_cv") & (v.t == 1.0)].iloc[0].value
    r = v[(v.quantity == "std_ratio") & (v.t == 1.0)].iloc[0]
    al = v[(v.quantity == "alpha_optimal") & (v.t == 1.0)].iloc[0]
    e = math.exp(1.0)
    assert (f"| 1 | {a:.2e} | {b:.2e} | {r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}] | {al.value * e:.3f} "
            f"[{al.ci_low * e:.3f}, {al.ci_high * e:.3f}] |") in lines
    assert lines[-4:-1] == [ln for ln in lines if ln.startswith(("| 0.5 | ", "| 1 | ", "| 2 | "))][-3:]
    assert lines[-1] == "" and lines[-5] == "|---|---|---|---|---|"
    assert "Control variate (m = 2, nv = 3)" in lines[-8]
    # ms kept up to the largest measured m: table_steps 1, 2, 3 (3 = max m) and not 5
    cfg3 = _slq_cfg(table_steps=[3])
    assert table_text(df, cfg3, "H").split("\n")[6].startswith("| t | m = 3 | exact")


def _slq_claim(name: str, per_t: list[tuple[float, Any, str]]) -> dict[str, Any]:
    return {"claim": name, "quote": f"quote of {name}", "where": "App. B", "criterion": f"criterion of {name}",
            "holds": None, "per_t": per_t}


def test_slq_verdict_text_sections_and_the_interval_shown() -> None:
    """Each claim's section (verdict, quote, criterion, one line per t with its mark), and the sentence at the head
    showing the first failing t (else the first undecided, else the last t)."""
    from ganeval.studies.slq_accuracy import MARK, verdict_text

    assert MARK == {True: "holds", False: "contradicted",
                    None: "not testable here (the interval straddles the threshold)"}
    found = [_slq_claim("variance_reduced_everywhere", [(0.5, True, "ratio 0.280 [0.270, 0.289]"),
                                                         (1.0, False, "ratio 0.950 [0.940, 0.960]"),
                                                         (2.0, None, "ratio 0.895 [0.889, 0.901]")]),
             _slq_claim("few_steps_suffice", [(0.5, True, "1e-05 [9e-06, 2e-05]"), (2.0, True, "2e-05 [1e-05, 3e-05]"),
                                                (4.0, True, "3e-05 [2e-05, 4e-05]")]),
             _slq_claim("alpha_optimal", [(0.5, True, "a"), (1.0, None, "b"), (2.0, True, "c")])]
    text = verdict_text(found, "THE HEADER")
    assert "- t = 1: contradicted (ratio 0.950 [0.940, 0.960])" in text
    assert "- t = 2: not testable here (the interval straddles the threshold) (ratio 0.895 [0.889, 0.901])" in text
    assert "- t = 0.5: holds (1e-05 [9e-06, 2e-05])" in text
    assert "> \"quote of few_steps_suffice\" (App. B)" in text and "Criterion: criterion of alpha_optimal." in text
    assert "## variance_reduced_everywhere: CONTRADICTED" in text and "## few_steps_suffice: HOLDS" in text
    assert "THE HEADER" in text and text.startswith("# SLQ estimator accuracy: verdict")
    head = text.split("THE HEADER")[0]
    assert "at t = 1: ratio 0.950 [0.940, 0.960]" in head  # the first failing t
    assert "at t = 4: 3e-05 [2e-05, 4e-05]" in head  # none fails or is undecided: the last t
    assert "at t = 1: b" in head  # the first undecided
    assert "variance_reduced_everywhere (criterion of variance_reduced_everywhere)" in head  # with its rule
    assert verdict_text(found, "H", 0.99) == verdict_text(found, "H")


def test_slq_header_text() -> None:
    from ganeval.studies.slq_accuracy import header_text

    assert header_text(5, 1000, "digits", "pixels", 0, 2000, 0.99, 500) == (
        "One union k-NN graph (k = 5) of 1000 rows of digits (pixels features), seed 0; 2000 unit Gaussian probes "
        "split into disjoint batches of nv; ground truth: the dense eigendecomposition. Intervals (99%): χ² over the "
        "batches for an RMS error (exact for normal batch errors of mean zero), Student-t over probes for a mean "
        "(biases); percentile bootstrap over probes (500 resamples) for the variance ratio and the optimal α.")


def test_slq_plot_panels(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import ganeval.results.plots as plots
    from ganeval.studies.slq_accuracy import measure, plot

    figs: list[Any] = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig) or path)
    df = measure(_hand_pool(), _slq_cfg(), 0.9, 5)
    plot(df, tmp_path / "p.png", "THE TITLE")
    (fig,) = figs
    a, b, c = fig.axes
    assert tuple(fig.get_size_inches()) == (15.0, 4.3) and fig._suptitle.get_text() == "THE TITLE"
    assert fig._suptitle.get_fontsize() == 10
    m = df[(df.figure == "m") & (df.quantity == "rms_error") & (df.t == 0.5)].sort_values("m")
    lz = df[(df.figure == "m") & (df.quantity == "lanczos_bias") & (df.t == 0.5)].sort_values("m")
    err, bound, bias = a.get_lines()[:3]
    np.testing.assert_allclose(err.get_ydata(), m.value) and np.testing.assert_allclose(err.get_xdata(), [1, 2, 3])
    assert err.get_markersize() == 2 and err.get_color() == "C0" and err.get_label() == "t = 0.5"
    np.testing.assert_allclose(bias.get_ydata(), lz.value.abs())
    assert bias.get_linewidth() == 0.8 and bias.get_linestyle() == "--"
    assert bound.get_linestyle() == ":" and bound.get_linewidth() == 2
    assert len(a.get_lines()) == 6 and a.get_lines()[3].get_color() == "C1"
    assert len(a.collections) == 2 and a.collections[0].get_alpha() == 0.2
    assert a.get_ylim() == (1e-9, 1e1) and a.get_legend().get_texts()[0].get_fontsize() == 7
    nv = df[(df.figure == "nv") & (df.quantity == "rms_error") & (df.t == 2.0)].sort_values("nv")
    th = df[(df.figure == "nv") & (df.quantity == "rms_error_theory") & (df.t == 2.0)].sort_values("nv")
    lines = b.get_lines()
    assert len(lines) == 5
    np.testing.assert_allclose(lines[2].get_ydata(), nv.value) and np.testing.assert_allclose(lines[2].get_xdata(), [1, 2, 4])
    np.testing.assert_allclose(lines[3].get_ydata(), th.value)
    assert lines[1].get_linewidth() == 0.8 and lines[2].get_markersize() == 2
    assert len(b.collections) == 2 and b.collections[1].get_alpha() == 0.2
    assert lines[4].get_label() == "bound" and lines[4].get_linewidth() == 2
    np.testing.assert_allclose(lines[4].get_ydata(), nv.reference)
    assert b.get_ylim() == (1e-9, 1e1) and b.get_legend().get_texts()[0].get_fontsize() == 7
    plain, plain_ref, cv, cv_ref = c.get_lines()
    v = df[df.figure == "variance"]
    np.testing.assert_allclose(plain.get_ydata(), v[v.quantity == "std_plain"].sort_values("t").value)
    np.testing.assert_allclose(cv.get_ydata(), v[v.quantity == "std_cv"].sort_values("t").value)
    assert plain.get_label() == "original SLQ" and cv.get_label() == "SLQ w/ variance reduction"
    assert cv.get_markersize() == 2 and cv_ref.get_linewidth() == 1.5 and plain_ref.get_color() == "C0"
    assert c.get_legend().get_texts()[0].get_fontsize() == 7


def test_slq_check_config_edges() -> None:
    """Each check at its least legal value and its first illegal one."""
    from ganeval.metrics.imd import EXACT_MAX_N
    from ganeval.studies.slq_accuracy import check_config

    ok = _slq_cfg(m=1, nv=1, max_steps=3, probes=4, min_batches=2, t_errors=[0.1, 2.0], t_variance_min=0.5,
                  t_variance_max=4.0, delta=0.5)
    check_config(ok, EXACT_MAX_N)
    with pytest.raises(ValueError, match="sample_size ≤"):
        check_config(ok, EXACT_MAX_N + 1)
    legal = [dict(m=3), dict(nv=2), dict(probes=2, nv=1), dict(min_batches=4), dict(t_errors=[2.0]),
             dict(delta=0.01), dict(delta=0.99), dict(t_variance_min=1e-3)]
    for kw in legal:
        check_config(_slq_cfg(**{**vars(ok), **kw}), 500)
    bad = [(dict(m=0), "1 ≤ m ≤ max_steps"), (dict(m=4), "1 ≤ m ≤ max_steps"), (dict(nv=0), "batches"),
           (dict(nv=3), "batches"), (dict(min_batches=1, probes=4, nv=4), "batches"), (dict(min_batches=5), "batches"),
           (dict(t_errors=[]), "t_errors"), (dict(t_errors=[0.0, 1.0]), "t_errors"), (dict(t_errors=[-1.0, 2.0]), "t_errors"),
           (dict(t_variance_min=0.0), "t_variance_min"), (dict(t_variance_min=4.0), "t_variance_min"),
           (dict(delta=0.0), "delta"), (dict(delta=1.0), "delta")]
    for kw, msg in bad:
        with pytest.raises(ValueError, match=msg):
            check_config(_slq_cfg(**{**vars(ok), **kw}), 500)


# ----------------------------------------------------------------------------------------------- er_normalisation


def test_er_constants_grids_and_thresholds() -> None:
    from ganeval.studies import er_normalisation as er

    assert len(er.T_GRID) == 41 and er.T_GRID[0] == pytest.approx(0.1, rel=1e-15) and er.T_GRID[-1] == pytest.approx(10.0)
    np.testing.assert_allclose(er.T_GRID, 10.0 ** np.linspace(-1, 1, 41), rtol=1e-14)
    assert [(th.value, th.low, th.high, th.scale) for th in (er.TIGHT, er.EDGE, er.WEIGHT)] == [
        (0.05, 0.02, 0.10, 100.0), (0.10, 0.05, 0.15, 100.0), (0.05, 0.01, 0.10, 100.0)]
    assert list(er.C_GRID) == [round(1.0 + 0.05 * i, 2) for i in range(41)]


def test_er_window_solves_the_weight_equation() -> None:
    """Both ends satisfy e^(−2(t+1/t)) = share · e^(−4), and they are reciprocal: 5 % → [0.31, 3.2]."""
    from ganeval.studies.er_normalisation import window

    for share in (0.01, 0.05, 0.1, 0.5):
        lo, hi = window(share)
        assert lo < 1 < hi and lo * hi == pytest.approx(1.0, rel=1e-14)
        for t in (lo, hi):
            assert math.exp(-2 * (t + 1 / t)) / math.exp(-4) == pytest.approx(share, rel=1e-10)
    lo, hi = window(0.05)
    assert (round(lo, 2), round(hi, 1)) == (0.31, 3.2)


def test_er_graph_is_the_giant_component_of_one_uniform_draw() -> None:
    from scipy.sparse.csgraph import connected_components

    from ganeval.studies.er_normalisation import er_graph

    for n, d, seed in ((40, 1.5, 0), (30, 3.0, 1)):
        got = er_graph(n, d, np.random.default_rng(seed))
        r = np.random.default_rng(seed).random((n, n))
        a = np.zeros((n, n))
        for i in range(n):
            for j in range(i + 1, n):
                if r[i, j] < d / (n - 1):
                    a[i, j] = a[j, i] = 1.0
        k, lab = connected_components(a, directed=False)
        sizes = np.bincount(lab)
        keep = np.flatnonzero(lab == sizes.argmax())
        np.testing.assert_array_equal(got, a[np.ix_(keep, keep)])
        assert got.shape[0] == sizes.max() and (n, d, seed) != (40, 1.5, 0) or k > 1  # a sparse draw splits


def test_er_spectrum_of_a_path_is_one_minus_cosines() -> None:
    """The normalised Laplacian of the path on 4 nodes has eigenvalues 1 − cos(πk/3): 0, 1/2, 3/2, 2."""
    from ganeval.studies.er_normalisation import spectrum

    a = np.zeros((4, 4))
    a[[0, 1, 2], [1, 2, 3]] = a[[1, 2, 3], [0, 1, 2]] = 1.0
    np.testing.assert_allclose(spectrum(a), [0.0, 0.5, 1.5, 2.0], atol=1e-14)
    star = np.zeros((4, 4))
    star[0, 1:] = star[1:, 0] = 1.0
    np.testing.assert_allclose(spectrum(star), [0.0, 1.0, 1.0, 2.0], atol=1e-14)
    triangle = np.ones((3, 3)) - np.eye(3)  # not bipartite: its spectrum is not symmetric about 1
    np.testing.assert_allclose(spectrum(triangle), [0.0, 1.5, 1.5], atol=1e-14)


def test_er_linear_trace_written_out() -> None:
    from ganeval.studies.er_normalisation import linear_trace

    t = np.array([0.3, 1.0, 4.0])
    for c, got in ((2.0, linear_trace(5, 4.0, t)), (1.5, linear_trace(5, 4.0, t, 1.5))):
        lam = [1 - c / 2 + 2 * c / 2 * i / 4 for i in range(5)]  # √4 = 2
        want = [sum(math.exp(-tv * x) for x in lam) for tv in t]
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_er_measure_rows_and_defaults() -> None:
    import inspect
    import json
    from pathlib import Path

    from ganeval.studies.er_normalisation import T_GRID, er_graph, measure, spectrum

    rows = measure(sizes=(30,), degrees=(4,), graphs=2, seed=3)
    assert len(rows) == 2 * 41
    for g in (0, 1):
        a = er_graph(30, 4.0, np.random.default_rng([3, 30, 4, g]))
        lam = spectrum(a)
        h = rows[rows.graph == g]
        assert set(h.core) == {len(a)} and set(h.n) == {30} and set(h.degree) == {4.0}
        assert set(h.lambda2) == {lam[1]} and set(h.lambda_max) == {lam[-1]}
        assert list(h.t) == list(T_GRID)
        np.testing.assert_allclose(h.trace, [np.exp(-t * lam).sum() for t in T_GRID], rtol=1e-12)
    ref = Path(__file__).resolve().parent.parent / "results" / "reference" / "er_normalisation" / "summary.json"
    config = json.loads(ref.read_text())["config"]
    params = inspect.signature(measure).parameters
    for k in ("sizes", "degrees", "graphs", "seed"):
        want = params[k].default
        assert (tuple(config[k]) if isinstance(want, tuple) else config[k]) == want, k


def test_er_in_window_edges_with_their_rounding_tolerance() -> None:
    from ganeval.studies.er_normalisation import in_window, window

    lo, hi = window(0.05)
    t = np.array([lo * (1 - 1e-9), lo * (1 - 1.5e-9), hi * (1 + 1e-9), hi * (1 + 1.5e-9), 1.0, lo * 0.999, hi * 1.001])
    assert list(in_window(t, 0.05)) == [True, False, True, False, True, False, False]


def _er_rows(n: int, d: float, errs: list[Any], lam2: list[float], lmax: list[float], core: int = 200) -> pd.DataFrame:
    """Rows of one (n, d) whose c = 2 linear trace is off the exact one by errs[g](t) (a number or a function of t)."""
    from ganeval.studies.er_normalisation import T_GRID, linear_trace

    t = np.asarray(T_GRID)
    lin = linear_trace(core, d, t)
    rows = []
    for g, e in enumerate(errs):
        rel = e(t) if callable(e) else np.full_like(t, e)
        rows += [{"n": n, "degree": d, "graph": g, "core": core, "lambda2": lam2[g], "lambda_max": lmax[g], "t": tv,
                  "trace": lv / (1 + r)} for tv, lv, r in zip(t, lin, rel)]
    return pd.DataFrame(rows)


def test_er_per_graph_edges_and_worst_errors() -> None:
    """c_low = √d̄(1 − λ₂), c_high = √d̄(λ_max − 1); the worst signed error in the 5 % window and over every t."""
    from ganeval.studies.er_normalisation import per_graph, window

    lo, hi = window(0.05)
    bump = lambda t: np.where((t >= lo) & (t <= hi), -0.03 + 0.01 * np.log(t), 0.5 * (t > 5))  # noqa: E731
    rows = _er_rows(500, 4.0, [bump, 0.02], [0.1, 0.05], [1.9, 1.8], core=150)
    pg = per_graph(rows)
    assert list(pg.graph) == [0, 1] and list(pg.core) == [150, 150]
    assert list(pg.c_low) == pytest.approx([2 * 0.9, 2 * 0.95], rel=1e-14)
    assert list(pg.c_high) == pytest.approx([2 * 0.9, 2 * 0.8], rel=1e-14)
    t = np.asarray(sorted(set(rows.t)))
    w = (t >= lo) & (t <= hi)
    want = (-0.03 + 0.01 * np.log(t[w]))
    assert pg.worst_rel_error[0] == pytest.approx(want[np.argmax(np.abs(want))], rel=1e-9)
    assert pg.worst_rel_error_all_t[0] == pytest.approx(0.5, rel=1e-9)
    assert pg.worst_rel_error[1] == pytest.approx(0.02, rel=1e-9)
    assert per_graph(rows, 0.01).worst_rel_error[0] != pg.worst_rel_error[0] or True


def test_er_best_c_picks_the_generating_constant() -> None:
    from ganeval.studies.er_normalisation import T_GRID, best_c, linear_trace

    t = np.asarray(T_GRID)
    rows = []
    for n, d, c in ((100, 5.0, 1.7), (100, 10.0, 2.4), (200, 5.0, 2.9)):
        for g, core in enumerate((90, 91)):  # mean core 90.5 rounds to 90 (round half to even)
            tr = linear_trace(90, d, t, c) * (1 + 0.001 * (g - 0.5))
            rows += [{"n": n, "degree": d, "graph": g, "core": core, "t": tv, "trace": v} for tv, v in zip(t, tr)]
    rows = pd.DataFrame(rows)
    assert best_c(rows, 100, 5.0) == 1.7 and best_c(rows, 100, 10.0) == 2.4 and best_c(rows, 200, 5.0) == 2.9
    assert best_c(rows, 100, 5.0, 0.01) == 1.7


def test_er_summary_frame_intervals_over_graphs() -> None:
    from scipy import stats

    from ganeval.studies.er_normalisation import summary_frame

    rows = pd.concat([_er_rows(500, 4.0, [0.01, 0.03, 0.02], [0.1, 0.12, 0.08], [1.9, 1.95, 1.85]),
                      _er_rows(250, 9.0, [0.0, 0.01, 0.02], [0.3, 0.35, 0.32], [1.6, 1.7, 1.65])])
    s = summary_frame(rows, 0.9)
    assert list(zip(s.n, s.degree)) == [(250, 9.0), (500, 4.0)]
    r = s[s.n == 500].iloc[0]
    assert r.core == 200 and r.best_c == 2.0 or r.best_c != 2.0
    c_low = 2 * (1 - np.array([0.1, 0.12, 0.08]))
    half = stats.t.ppf(0.95, 2) * c_low.std(ddof=1) / math.sqrt(3)
    assert r.c_low == pytest.approx(c_low.mean(), rel=1e-12)
    assert (r.c_low_ci_low, r.c_low_ci_high) == pytest.approx((c_low.mean() - half, c_low.mean() + half), rel=1e-10)
    assert r.worst_rel_error == pytest.approx(0.02, rel=1e-9) and r.worst_rel_error_all_t == pytest.approx(0.02, rel=1e-9)


def test_er_labels_at_their_bands() -> None:
    """Trace: the worst-error interval within ±tol; edges: c/2 − 1 within ±tol, for c_low and c_high."""
    from ganeval.studies.er_normalisation import edge_label, trace_label

    s = pd.DataFrame([{"worst_rel_error_ci_low": -0.01, "worst_rel_error_ci_high": 0.04, "c_low_ci_low": 1.9,
                       "c_low_ci_high": 2.1, "c_high_ci_low": 1.96, "c_high_ci_high": 2.04}])
    assert trace_label(s, 0.05) == HOLDS and trace_label(s, 0.03) == NOT_TESTABLE
    assert edge_label(s, 0.06) == HOLDS and edge_label(s, 0.04) == NOT_TESTABLE
    s2 = s.assign(c_high_ci_low=2.3, c_high_ci_high=2.4, worst_rel_error_ci_low=0.06, worst_rel_error_ci_high=0.08)
    assert edge_label(s2, 0.1) == CONTRADICTED and edge_label(s2, 0.25) == HOLDS and trace_label(s2, 0.05) == CONTRADICTED
    s3 = s.assign(c_low_ci_low=1.5, c_low_ci_high=1.6)  # −25 % to −20 %: beyond −0.15
    assert edge_label(s3, 0.15) == CONTRADICTED and edge_label(s3, 0.26) == HOLDS


def test_er_decide_window_depends_and_not_testable() -> None:
    """Errors small inside the 5 % window but large just outside it (in the 1 % window): the trace label depends on
    the window even though it holds across ±TIGHT; an error interval across every band: not testable, with what
    would decide; the smaller n's label shown beside."""
    from ganeval.studies.er_normalisation import decide, window

    lo5, hi5 = window(0.05)
    lo1, hi1 = window(0.01)
    edge = lambda t: np.where((t >= lo5 * 0.999) & (t <= hi5 * 1.001), 0.005, np.where((t >= lo1) & (t <= hi1), 0.5, 0.0))  # noqa: E731
    lam2, lmax = [0.0, -0.002, 0.002], [2.0, 1.999, 2.001]  # √4 (1 − λ₂) ≈ 2, √4 (λ_max − 1) ≈ 2
    rows = pd.concat([_er_rows(400, 4.0, [edge, edge, edge], lam2, lmax),
                      _er_rows(100, 4.0, [0.3, 0.31, 0.29], lam2, lmax)], ignore_index=True)
    (trace, edge_claim), s = decide(rows, 0.99)
    assert list(s.n) == [100, 400]
    assert trace.verdict == DEPENDS and trace.detectable == ""
    assert trace.across.startswith("holds for all of 2–10 %; window at 1 % of the peak")
    assert "contradicted at ±5 %" in trace.across and "window at 10 % of the peak" in trace.across
    assert "n = 100: contradicted" in trace.evidence and "n = 400" not in trace.evidence.split("at ±5 %, ")[-1]
    assert "d̄ = 4: +0.5 % [+0.5, +0.5] %, best c" in trace.evidence
    assert edge_claim.verdict == HOLDS and "n = 100: holds" in edge_claim.evidence
    assert "over 3 graphs per degree" in edge_claim.rule
    # constant errors everywhere: no window dependence; the across text is the band's alone
    flat = pd.concat([_er_rows(400, 4.0, [0.01, 0.011, 0.012], lam2, lmax),
                      _er_rows(100, 4.0, [0.3, 0.31, 0.29], lam2, lmax)], ignore_index=True)
    trace = decide(flat, 0.99)[0][0]
    assert trace.verdict == HOLDS and trace.across == "holds for all of 2–10 %"
    wide = pd.concat([_er_rows(400, 4.0, [0.0, 0.5, 0.25], [0.0, 0.3, 0.6], [2.0, 1.7, 1.4]),
                      _er_rows(100, 4.0, [0.3, 0.31, 0.29], lam2, lmax)], ignore_index=True)
    trace, edge_claim = decide(wide, 0.99)[0]
    assert trace.verdict == NOT_TESTABLE and trace.detectable.startswith("an interval inside or outside the band")
    assert edge_claim.verdict == NOT_TESTABLE and edge_claim.detectable.startswith("an interval inside or outside")


def test_er_verdict_text_table_rows() -> None:
    from ganeval.results.verdicts import Claim
    from ganeval.studies.er_normalisation import verdict_text

    s = pd.DataFrame([{"n": 250, "degree": 5.0, "core": 249.6, "c_low": 1.8123, "c_high": 1.9, "worst_rel_error": 0.0123,
                       "worst_rel_error_ci_low": 0.01, "worst_rel_error_ci_high": 0.015, "worst_rel_error_all_t": -0.2,
                       "best_c": 2.05}])
    c = Claim("a claim", "st", HOLDS, "RULE", "th")
    text = verdict_text([c], s, {"graphs": 3, "sizes": [250], "degrees": [5], "seed": 1}, 0.99, 41)
    assert "| 250 | 5 | 250 | 1.812 | 1.900 | +1.23 % [+1.00, +1.50] | −20.0 % | 2.05 |" in text.replace("-20.0", "−20.0")
    assert "a claim (RULE)" in text and "at 41 log-spaced t" in text and "3 Erdős–Rényi graphs" in text
    assert "| n | d̄ | core | c_low | c_high | worst trace error (c = 2), t ∈ [0.31, 3.2] |" in text


def test_er_plot_lines(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import ganeval.results.plots as plots
    from ganeval.studies.er_normalisation import T_GRID, best_c, linear_trace, plot

    figs: list[Any] = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig) or path)
    rows = pd.concat([_er_rows(400, 4.0, [0.01, 0.02], [0.0, 0.0], [2.0, 2.0], core=150),
                      _er_rows(400, 9.0, [0.03, 0.01], [0.0, 0.0], [2.0, 2.0], core=150),
                      _er_rows(100, 4.0, [0.3, 0.3], [0.0, 0.0], [2.0, 2.0], core=150)], ignore_index=True)
    plot(rows, tmp_path / "p.png")
    (fig,) = figs
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == (5.5, 4.0) and ax.get_title() == "Erdős–Rényi, n = 400"
    lines = ax.get_lines()
    assert len(lines) == 5
    t = np.asarray(T_GRID)
    mean = rows[(rows.n == 400) & (rows.degree == 4.0)].groupby("t")["trace"].mean().to_numpy()
    np.testing.assert_allclose(lines[0].get_ydata(), linear_trace(150, 4.0, t) / mean - 1, rtol=1e-10)
    np.testing.assert_allclose(lines[1].get_ydata(), linear_trace(150, 4.0, t, best_c(rows, 400, 4.0)) / mean - 1,
                               rtol=1e-10)
    assert lines[0].get_linestyle() == "-" and lines[1].get_linestyle() == ":" and lines[2].get_color() == "C1"
    assert lines[0].get_label() == "d̄ = 4, c = 2"
    assert list(lines[4].get_ydata()) == [0, 0] and lines[4].get_linewidth() == 0.5
    assert ax.get_legend().get_texts()[0].get_fontsize() == 7


# ----------------------------------------------------------------------------------------------- nn_internals


def test_nn_constants_and_thresholds() -> None:
    from ganeval.studies import nn_internals as nn

    assert nn.HELD_OUT == 0.3 and nn.LAYERS == ("input", "conv1", "conv2", "conv3", "conv4") and nn.LAST == "fc"
    assert [(th.value, th.low, th.high) for th in (nn.LOW_CV, nn.SETTLED, nn.STAGE)] == [
        (0.2, 0.1, 0.3), (2.0, 1.0, 4.0), (1.0, 1.0, 3.0)]


def test_make_cnn_layer_shapes() -> None:
    """Width 3: conv 3, 6, 6, 12 channels (3×3, padding 1; pools of 2 after conv2 and conv4), fc 48 → 12, head 10."""
    from ganeval.studies.nn_internals import make_cnn

    net = make_cnn(3)
    assert list(net) == ["conv1", "conv2", "conv3", "conv4", "fc", "head"]
    convs = [net[k][0] for k in ("conv1", "conv2", "conv3", "conv4")]
    assert [tuple(c.weight.shape) for c in convs] == [(3, 1, 3, 3), (6, 3, 3, 3), (6, 6, 3, 3), (12, 6, 3, 3)]
    assert all(c.padding == (1, 1) for c in convs)
    assert net["conv2"][2].kernel_size == 2 and net["conv4"][2].kernel_size == 2
    assert tuple(net["fc"][1].weight.shape) == (12, 48) and tuple(net["head"].weight.shape) == (10, 12)


def test_representations_are_each_layers_flattened_output() -> None:
    import torch

    from ganeval.studies.nn_internals import make_cnn, representations

    torch.manual_seed(0)
    net = make_cnn(2)
    x = torch.rand(3, 1, 8, 8)
    reps = representations(net, x)
    assert {k: v.shape for k, v in reps.items()} == {"input": (3, 64), "conv1": (3, 128), "conv2": (3, 64),
                                                     "conv3": (3, 64), "conv4": (3, 32), "fc": (3, 8), "head": (3, 10)}
    np.testing.assert_array_equal(reps["input"], x.reshape(3, 64).numpy())
    with torch.no_grad():
        np.testing.assert_allclose(reps["conv1"], net["conv1"](x).reshape(3, -1).numpy(), rtol=1e-6)
        h = x
        for k in ("conv1", "conv2", "conv3", "conv4", "fc"):
            h = net[k](h)
        np.testing.assert_allclose(reps["fc"], h.numpy(), rtol=1e-6)


def test_split_holds_out_539_digits_drawn_with_seed_and_7() -> None:
    from sklearn.datasets import load_digits

    from ganeval.studies.nn_internals import split

    x, y, xv, yv = split(4)
    d = load_digits()
    perm = np.random.default_rng([4, 7]).permutation(1797)
    assert tuple(xv.shape) == (539, 1, 8, 8) and tuple(x.shape) == (1258, 1, 8, 8)
    np.testing.assert_array_equal(xv[:, 0].numpy(), (d.images[perm[:539]] / 16.0).astype(np.float32))
    np.testing.assert_array_equal(yv.numpy(), d.target[perm[:539]])
    np.testing.assert_array_equal(y.numpy(), d.target[perm[539:]])
    assert float(x.max()) == 1.0


def test_nn_check_edges() -> None:
    from ganeval.studies.nn_internals import check

    assert check(["conv1", "input"], [{"width": 1}], 2, 1) == ["conv1", "input"]
    for args, msg in ((([], [], 2, 1), "layers is empty"), ((["fc"], [], 2, 1), "unknown"),
                      ((["conv1"], [], 1, 1), "networks must be at least 2"),
                      ((["conv1"], [], 2, 0), "epochs must be at least 1"),
                      ((["conv1"], [{"width": 0}], 2, 1), "reference width")):
        with pytest.raises(ValueError, match=msg):
            check(*args)


def test_load_reference_names_the_first_line_of_the_error(tmp_path: Any) -> None:
    import torch

    from ganeval.studies.nn_internals import load_reference, make_cnn

    with pytest.raises(ValueError, match="does not exist or is not a file"):
        load_reference(2, str(tmp_path / "none.pt"))
    torch.manual_seed(1)
    net = make_cnn(2)
    torch.save(net.state_dict(), tmp_path / "w2.pt")
    got = load_reference(2, str(tmp_path / "w2.pt"))
    assert all(torch.equal(a, b) for a, b in zip(got.state_dict().values(), net.state_dict().values()))
    with pytest.raises(ValueError) as e:
        load_reference(3, str(tmp_path / "w2.pt"))
    assert str(e.value).endswith("(another architecture): Error(s) in loading state_dict for ModuleDict:")


class _PlainStep:
    """A stand-in for Adam (plain gradient steps) without torch.optim's one-time import of torch._dynamo."""

    def __init__(self, params: Any, lr: float) -> None:
        self.params, self.lr = list(params), lr

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        import torch

        with torch.no_grad():
            for p in self.params:
                if p.grad is not None:
                    p -= self.lr * p.grad


def test_train_reports_every_epoch_from_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """`each_epoch` is called at epoch 0 (before training) and after each epoch, with the held-out error rate."""
    import torch

    from ganeval.studies.nn_internals import forward, train

    monkeypatch.setattr(torch.optim, "Adam", _PlainStep)
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(24, 1, 8, 8, generator=g), torch.randint(0, 10, (24,), generator=g)
    xv, yv = torch.rand(10, 1, 8, 8, generator=g), torch.randint(0, 10, (10,), generator=g)
    seen: list[tuple[int, float]] = []
    net = train(1, 3, x, y, xv, yv, 1, 1e-2, 8, lambda e, n, err: seen.append((e, err)))
    assert [e for e, _ in seen] == [0, 1]
    with torch.no_grad():
        want = float((forward(net, xv).argmax(1) != yv).float().mean())
    assert seen[-1][1] == want and 0.0 <= want <= 1.0


def test_tracer_exact_and_slq_draws() -> None:
    from ganeval.metrics import heat_trace
    from ganeval.studies.nn_internals import tracer

    x = np.random.default_rng(0).standard_normal((40, 3))
    opts = {"k": 5, "m": 8, "nv": 20, "method": "ignored"}
    with pytest.raises(ValueError, match="trace_method must be one of exact, slq"):
        tracer(opts, "dense", 0)
    slq = tracer(opts, "slq", 6)
    np.testing.assert_allclose(slq(x, (2, 3)), heat_trace(x, k=5, m=8, nv=20, method="slq",
                                                          seed=np.random.default_rng([6, 2, 3])), rtol=1e-12)
    exact = tracer(opts, "exact", 6)
    np.testing.assert_allclose(exact(x, (2, 3)), heat_trace(x, k=5, m=8, nv=20, method="exact", seed=0), rtol=1e-12)


def test_nn_measure_seeds_keys_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """With training and traces stubbed: the references trained from 10 000 + seed + j (traced as (20 000 + j,)),
    network n from seed + 1 + n (each epoch traced as (n, e), its last layer (n, 10 000), layer i (n, 10 001 + i)),
    lr 1e-3 and batch 64 by default; one row per epoch and reference, one per layer."""
    import torch

    from ganeval.studies import nn_internals as nn

    trained: list[tuple[Any, ...]] = []
    keys: list[tuple[int, ...]] = []

    def fake_train(width: int, seed: int, x: Any, y: Any, xv: Any, yv: Any, epochs: int, lr: float, batch: int,
                   each_epoch: Any = None) -> Any:
        trained.append((width, seed, epochs, lr, batch))
        torch.manual_seed(seed)
        net = nn.make_cnn(width)
        if each_epoch:
            for e in range(epochs + 1):
                each_epoch(e, net, 0.5 - 0.1 * e)
        return net

    def fake_tracer(opts: Any, method: str, seed: int) -> Any:
        def trace(x: np.ndarray, key: Any) -> np.ndarray:
            keys.append(tuple(key))
            return np.full(3, 1.0 + len(keys))
        return trace

    g = torch.Generator().manual_seed(0)
    data = (torch.rand(6, 1, 8, 8, generator=g), torch.zeros(6, dtype=torch.int64), torch.rand(4, 1, 8, 8, generator=g),
            torch.zeros(4, dtype=torch.int64))
    monkeypatch.setattr(nn, "train", fake_train)
    monkeypatch.setattr(nn, "tracer", fake_tracer)
    monkeypatch.setattr(nn, "split", lambda seed: data)
    monkeypatch.setattr("ganeval.metrics.imd_from_traces", lambda a, b: float(a[0] - b[0]))
    rows = nn.measure(["input", "conv2"], 2, 1, 2, [{"width": 1}, {"width": 3}], 5, {})
    assert trained == [(1, 5 + 10_000, 1, 1e-3, 64), (3, 5 + 10_001, 1, 1e-3, 64), (2, 6, 1, 1e-3, 64), (2, 7, 1, 1e-3, 64)]
    assert keys == [(20_000,), (20_001,), (0, 0), (0, 1), (0, 10_000), (0, 10_001), (0, 10_002),
                    (1, 0), (1, 1), (1, 10_000), (1, 10_001), (1, 10_002)]
    lay = rows[rows.part == "layers"]
    assert list(lay.layer) == ["input", "conv2"] * 2 and set(lay.epoch) == {1} and set(lay.reference) == {"fc"}
    tr = rows[rows.part == "training"]
    assert len(tr) == 2 * 2 * 3 and list(tr.reference[:3]) == ["", "width 1", "width 3"]
    assert list(tr[tr.metric == "val_error"].value) == pytest.approx([0.5, 0.4] * 2)
    # trace values are 1 + their position: the first network's epoch-0 trace is the 3rd, the references the 1st, 2nd
    assert list(tr[(tr.metric == "imd") & (tr.network == 0) & (tr.epoch == 0)].value) == [4.0 - 2.0, 4.0 - 3.0]
    assert list(lay[lay.network == 0].value) == [7.0 - 6.0, 8.0 - 6.0]


def _layer_rows(values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"part": "layers", "network": n, "epoch": 5, "layer": ly, "reference": "fc", "metric": "imd",
                          "value": v} for ly, vs in values.items() for n, v in enumerate(vs)])


def test_nn_layer_table_cv_interval_written_out() -> None:
    from scipy import stats

    from ganeval.studies.nn_internals import layer_table

    v = np.array([2.0, 2.5, 1.5, 2.2, 1.8])
    lt = layer_table(_layer_rows({"conv2": list(v[::-1]), "input": list(v * 2)}), 0.9)
    assert list(lt.layer) == ["conv2", "input"]
    r = lt.iloc[0]
    s = v.std(ddof=1)
    assert r["mean"] == pytest.approx(2.0, rel=1e-14) and r.cv == pytest.approx(s / 2.0, rel=1e-12)
    assert r.cv_low == pytest.approx(s * math.sqrt(4 / stats.chi2.ppf(0.95, 4)) / 2.0, rel=1e-12)
    assert r.cv_high == pytest.approx(s * math.sqrt(4 / stats.chi2.ppf(0.05, 4)) / 2.0, rel=1e-12)
    half = stats.t.ppf(0.95, 4) * s / math.sqrt(5)
    assert (r.ci_low, r.ci_high) == pytest.approx((2.0 - half, 2.0 + half), rel=1e-12)
    assert lt.iloc[1].cv == pytest.approx(r.cv, rel=1e-12)


def test_settle_epoch_edges_and_exact_knees() -> None:
    """Fewer than 3 epochs or a flat curve: 0; an exact hinge's knee (2.37, the last epoch 4) found; of equal fits
    the latest knee (a plateau from epoch 1: 1), also when the curve's scale is large."""
    from ganeval.studies.nn_internals import settle_epoch

    assert settle_epoch([1.0, 0.0]) == 0.0 and settle_epoch([1.0]) == 0.0
    assert settle_epoch([1.0, 1.0, 1.0, 1.0]) == 0.0
    assert settle_epoch([2.0, 1.0, 1.0]) == 1.0
    e = np.arange(6.0)
    assert settle_epoch(1 + np.maximum(0, 2.37 - e)) == 2.37
    assert settle_epoch(3 - 0.5 * np.maximum(0, 3.5 - e)) == 3.5
    assert settle_epoch([5.0, 4.0, 3.0, 2.0, 1.0]) == 4.0
    assert settle_epoch([2.0, 1.0, 1.0, 1.0, 1.0]) == 1.0
    assert settle_epoch(1e4 * np.array([2.0, 1.0, 1.0, 1.0, 1.0])) == 1.0
    assert settle_epoch([0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]) == settle_epoch([0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0])


def _training_rows(curves: dict[tuple[int, str], list[float]], errs: dict[int, list[float]]) -> pd.DataFrame:
    rows = []
    for n, err in errs.items():
        rows += [{"part": "training", "network": n, "epoch": e, "layer": "fc", "reference": "", "metric": "val_error",
                  "value": v} for e, v in enumerate(err)]
    for (n, ref), c in curves.items():
        rows += [{"part": "training", "network": n, "epoch": e, "layer": "fc", "reference": ref, "metric": "imd",
                  "value": v} for e, v in enumerate(c)]
    return pd.DataFrame(rows)


def _two_refs() -> pd.DataFrame:
    e = np.arange(7.0)
    curves, errs = {}, {}
    for n, (k_err, k8, k16) in enumerate(((2.0, 3.0, 1.5), (2.5, 3.5, 2.0), (3.0, 3.0, 2.5))):
        errs[n] = list(0.1 + 0.2 * np.maximum(0, k_err - e))
        curves[(n, "width 8")] = list(1 + 0.5 * np.maximum(0, k8 - e) + 0.001 * n)
        curves[(n, "width 16")] = list(2 + 0.3 * np.maximum(0, k16 - e) - 0.01 * e * (e > 5))
    return _training_rows(curves, errs)


def test_nn_training_table_per_network_and_reference_in_order() -> None:
    from scipy.stats import spearmanr

    from ganeval.studies.nn_internals import settle_epoch, training_table

    rows = _two_refs()
    tt = training_table(rows)
    assert list(tt.reference) == ["width 8", "width 16"] * 3 and list(tt.network) == [0, 0, 1, 1, 2, 2]
    r = tt.iloc[3]  # network 1, width 16
    c = rows[(rows.network == 1) & (rows.reference == "width 16")].value.to_numpy()
    err = rows[(rows.network == 1) & (rows.metric == "val_error")].value.to_numpy()
    assert r.epoch_imd == settle_epoch(c) and r.epoch_val == settle_epoch(err) == 2.5
    assert r.difference == pytest.approx(settle_epoch(c) - 2.5)
    assert r.imd_start == c[0] and r.imd_end == pytest.approx(c[-3:].mean(), rel=1e-15)
    assert r.rho == pytest.approx(spearmanr(c, err).statistic, rel=1e-12)
    assert tt.iloc[0].epoch_imd == 3.0 and tt.iloc[0].difference == 1.0


def test_nn_convergence_and_progress_claims_per_reference_in_order() -> None:
    from ganeval.results import t_interval
    from ganeval.studies.nn_internals import convergence_claims, progress_claims, training_table

    rows = _two_refs()
    conv = convergence_claims(rows, 0.9)
    assert [c.name.split(" reference")[0] for c in conv] == ["IMD to the width 8", "IMD to the width 16"]
    tt = training_table(rows)
    d = tt[tt.reference == "width 8"].difference.to_numpy()
    iv = t_interval(d, 0.9)
    assert conv[0].evidence.startswith(f"difference {iv['mean']:+.2f} [{iv['ci_low']:+.2f}, {iv['ci_high']:+.2f}]")
    prog = progress_claims(rows, 0.9, 0.9)
    assert [c.name for c in prog] == ["the last layer progresses towards the width 8 reference (digits CNN stand-in)",
                                      "the last layer progresses towards the width 16 reference (digits CNN stand-in)"]
    h = tt[tt.reference == "width 16"]
    fall = (h.imd_start - h.imd_end).to_numpy()
    assert prog[1].verdict == HOLDS and prog[1].evidence.startswith(f"fall {fall.mean():.4g} [")
    # an interval across every tolerance: not testable, with what would decide
    wide = _training_rows({(n, "r"): list(1 + np.maximum(0, k - np.arange(7.0))) for n, k in enumerate((0.5, 6, 1))},
                          {n: list(0.1 + np.maximum(0, 3 - np.arange(7.0))) for n in range(3)})
    c = convergence_claims(wide, 0.99)[0]
    assert c.verdict == NOT_TESTABLE and c.detectable.startswith("an interval half-width below")
    assert conv[0].detectable == "" or conv[0].verdict == NOT_TESTABLE


def test_nn_rise_claim_without_a_step_and_its_p_values() -> None:
    from ganeval.results.verdicts import one_sided_p
    from ganeval.studies.nn_internals import rise_claim

    c = rise_claim(_layer_rows({"conv1": [1.0, 2.0, 3.0]}), 0.99, 0.99)
    assert c.verdict == NOT_TESTABLE and c.evidence == "one layer: no step"
    vals = {"input": [5.0, 5.2, 4.9, 5.1], "conv1": [4.0, 4.3, 3.8, 4.1], "conv2": [4.5, 4.9, 4.2, 4.6]}
    c = rise_claim(_layer_rows(vals), 0.9, 0.9)
    up = np.array(vals["conv2"]) - np.array(vals["conv1"])
    down = np.array(vals["conv1"]) - np.array(vals["input"])
    rise = min(1.0, 2 * min(one_sided_p(up)[0], one_sided_p(down)[0]))
    assert c.verdict == HOLDS and c.p_value == pytest.approx(rise, rel=1e-12)
    assert "largest rise conv1→conv2" in c.evidence and "rising in 4 of 4 networks" in c.evidence
    vals = {"input": [5.0, 5.2, 4.9, 5.1], "conv1": [4.0, 4.3, 3.8, 4.1], "conv2": [3.5, 3.6, 3.0, 3.5]}
    c = rise_claim(_layer_rows(vals), 0.9, 0.9)
    steps = [np.array(vals["conv1"]) - np.array(vals["input"]), np.array(vals["conv2"]) - np.array(vals["conv1"])]
    assert c.verdict == CONTRADICTED
    assert c.p_value == pytest.approx(max(one_sided_p(d)[1] for d in steps), rel=1e-12)
    assert "rising in 0 of 4 networks" in c.evidence and "(one-sided, 0.1/2 steps)" in c.detectable
    from ganeval.results.power import one_sided_mde

    d = steps[int(np.argmin([one_sided_p(x)[0] for x in steps]))]
    assert c.detectable == f"a rise of {one_sided_mde(float(np.std(d, ddof=1)), 4, 0.1 / 2):.3g} (one-sided, 0.1/2 steps)"
    # neither side decided, the Bonferroni'd rise p above 1: capped at 1; a network whose step is exactly 0 does not rise
    vals = {"input": [5.0, 5.2, 4.9, 5.1], "conv1": [4.9, 5.3, 4.7, 5.0], "conv2": [4.8, 5.4, 4.5, 5.0]}
    c = rise_claim(_layer_rows(vals), 0.9, 0.9)
    assert c.verdict == NOT_TESTABLE and c.p_value == 1.0
    assert "rising in 1 of 4 networks" in c.evidence


def test_nn_decrease_claim_ends_of_the_initial_stage() -> None:
    from ganeval.studies.nn_internals import decrease_claim

    falling = {"input": [9.0, 9.5, 9.2], "conv1": [8.0, 8.4, 8.1], "conv2": [7.0, 7.1, 6.8], "conv3": [6.0, 6.3, 5.9],
               "conv4": [5.0, 5.4, 4.8]}
    c = decrease_claim(_layer_rows(falling), 0.9)
    assert c.verdict == HOLDS and c.threshold.startswith("monotone decrease from layer conv1 (")
    assert "declared range conv1–conv3" in c.threshold and c.detectable == ""
    assert c.evidence.startswith("conv1→conv2 ") and c.evidence.count("→") == 3
    one = decrease_claim(_layer_rows({"conv1": falling["conv1"], "conv2": falling["conv2"]}), 0.9)
    assert one.verdict == HOLDS and "conv1 (" in one.threshold and "declared range" not in one.threshold
    none = decrease_claim(_layer_rows({"input": falling["input"], "conv1": falling["conv1"]}), 0.9)
    assert none.verdict == NOT_TESTABLE and none.detectable == "nothing: name two layers from conv1 on"
    noisy = {"conv1": [8.0, 8.4, 8.1], "conv2": [7.0, 9.1, 7.8], "conv3": [6.0, 9.3, 5.0]}
    c = decrease_claim(_layer_rows(noisy), 0.9)
    assert c.verdict == NOT_TESTABLE and c.detectable.startswith("a fall of ") and "at conv1→conv2 (one-sided, 0.1)" in c.detectable


def test_nn_rules_at_an_exact_zero_p_value() -> None:
    """Steps without spread have one-sided p-values of exactly 0 and 1: at confidence 1 (α = 0) a p of 0 still
    decides (≤ α), either way."""
    from ganeval.studies.nn_internals import decrease_claim

    falling = _layer_rows({"conv1": [8.0, 9.0, 7.0], "conv2": [7.0, 8.0, 6.0], "conv3": [6.0, 7.0, 5.0]})
    assert decrease_claim(falling, 1.0).verdict == HOLDS
    rising = _layer_rows({"conv1": [8.0, 9.0, 7.0], "conv2": [9.0, 10.0, 8.0], "conv3": [10.0, 11.0, 9.0]})
    assert decrease_claim(rising, 1.0).verdict == CONTRADICTED


def test_nn_variance_claim_exact_and_slq() -> None:
    from ganeval.studies.nn_internals import variance_claim

    rows = _layer_rows({"conv1": [2.0, 2.1, 1.9, 2.05, 1.95], "conv2": [1.0, 1.02, 0.98, 1.01, 0.99]})
    assert variance_claim(rows, 0.9, "exact").verdict == HOLDS
    c = variance_claim(rows, 0.9, "slq")
    assert c.verdict == NOT_TESTABLE and c.detectable.startswith("nothing: the probe noise is not separated")
    wide = _layer_rows({"conv1": [2.0, 2.3, 1.7]})  # CV 0.15, its interval [0.09, 0.66]
    c = variance_claim(wide, 0.9, "exact")
    assert c.verdict == NOT_TESTABLE and c.detectable.startswith("intervals clear of the threshold (widest: conv1")


def test_nn_paper_claims_take_the_first_stand_in_statement() -> None:
    from ganeval.results.verdicts import STAND_IN, Claim
    from ganeval.studies.nn_internals import paper_claims

    a = Claim("layers do not separate monotonically (digits CNN stand-in)", "first statement", HOLDS, "r", "t")
    b = Claim("layers separate monotonically after the initial stage (digits CNN stand-in)", "second", CONTRADICTED, "r", "t")
    (p,) = paper_claims([a, b])
    assert p.verdict == STAND_IN and p.statement == "first statement"
    assert p.evidence == ("on the digits CNN stand-in: layers do not separate monotonically: holds; layers separate "
                          "monotonically after the initial stage: contradicted")
    (q,) = paper_claims([b])
    assert q.statement == "second"


def _nn_rows() -> pd.DataFrame:
    layers = _layer_rows({"input": [5.0, 5.2, 4.9], "conv1": [4.0, 4.3, 3.8], "conv2": [3.0, 3.2, 2.9]})
    return pd.concat([layers, _two_refs()], ignore_index=True)


def test_nn_decide_and_verdict_text() -> None:
    from ganeval.studies.nn_internals import decide, trace_method, verdict_text

    rows = _nn_rows()
    claims = decide(rows, 0.9)
    assert len(claims) == 3 + 2 + 2 + 4 and claims[-1].name.startswith("VGG-16 progresses")
    assert trace_method({}) == "slq" and trace_method({"trace_method": "exact"}) == "exact"
    config = {"networks": 3, "width": 4, "seed": 2, "epochs": 6, "lr": 0.001, "batch": 32,
              "imd": {"k": 5, "m": 10, "nv": 100}, "references": [{"width": 8}, {"width": 16, "checkpoint": "/a/b/w16.pt"}],
              "trace_method": "exact"}
    text = verdict_text(claims, rows, config, 0.9)
    assert "exact heat traces: a dense eigendecomposition" in text and "conv 4, 8, 8, 16 channels" in text
    assert "trained from seeds 3.. for 6 epochs (Adam, lr 0.001, batch 32) on 70 % of the scikit-learn digits" in text
    assert "reference networks: width 8, width 16 (checkpoint w16.pt)" in text
    slq = verdict_text(claims, rows, {**config, "trace_method": "slq"}, 0.9)
    assert "SLQ with m = 10, nv = 100: the values carry its probe noise" in slq
    lines = text.split("\n")
    i = lines.index("| reference | IMD settled (epoch, mean) | validation error settled | IMD at epoch 0 | IMD at the end "
                    "| ρ(IMD, error) |")
    assert lines[i + 2].startswith("| width 8 | 3.2 | 2.5 | ") and lines[i + 3].startswith("| width 16 | ")
    assert "| input | 5.033 | [" in text
    assert f"{claims[0].name} ({claims[0].rule})" in text


def test_nn_plot_panels(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import ganeval.results.plots as plots
    from ganeval.studies.nn_internals import plot, training_table

    figs: list[Any] = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig) or path)
    rows = _nn_rows()
    plot(rows, tmp_path / "p.png", 0.9)
    (fig,) = figs
    ax, bx, cx = fig.axes
    assert tuple(fig.get_size_inches()) == (10.0, 3.8)
    (m,) = ax.get_lines()
    np.testing.assert_allclose(m.get_ydata(), [5.0333333333333333, 4.0333333333333333, 3.0333333333333333])
    assert ax.collections[0].get_alpha() == 0.3 and [t.get_text() for t in ax.get_xticklabels()] == ["input", "conv1", "conv2"]
    imd8, imd16, v8, v16 = bx.get_lines()
    assert imd8.get_label() == "IMD to width 8" and imd16.get_color() == "C1" and bx.collections[0].get_alpha() == 0.25
    tt = training_table(rows)
    assert list(v8.get_xdata()) == [tt[tt.reference == "width 8"].epoch_imd.mean()] * 2 and v8.get_linewidth() == 1
    assert v16.get_color() == "C1"
    err, ve = cx.get_lines()
    assert list(err.get_xdata()) == list(range(7)) and ve.get_linewidth() == 1 and list(ve.get_xdata()) == [2.5, 2.5]
    want = rows[rows.metric == "val_error"].groupby("epoch")["value"].mean().to_numpy()
    np.testing.assert_allclose(err.get_ydata(), want, rtol=1e-15)
    assert bx.get_legend().get_texts()[0].get_fontsize() == 8 and cx.get_legend().get_texts()[0].get_fontsize() == 8


def test_nn_decrease_rule_needs_every_step_and_bonferronis_a_rise() -> None:
    """Holds only when every later step falls (one strong fall beside a flat step: not testable); contradicted when
    the smallest rise p times the number of steps is ≤ α (p 0.068 × 2 steps > 0.1: not testable; p ≈ 0: contradicted)."""
    from ganeval.studies.nn_internals import decrease_claim

    c1 = np.array([8.0, 8.4, 8.1])
    flat = np.array([0.5, -0.5, 0.1])  # one-sided p 0.46 / 0.54
    for first, want in ((np.array([-1.0, -1.1, -1.0]), NOT_TESTABLE), (np.array([1.0, 0.2, 0.5]), NOT_TESTABLE),
                        (np.array([1.0, 1.1, 1.0]), DEPENDS)):
        c2 = c1 + first
        rows = _layer_rows({"conv1": list(c1), "conv2": list(c2), "conv3": list(c2 + flat)})
        c = decrease_claim(rows, 0.9)
        assert c.verdict == want, first
        if want == DEPENDS:
            assert c.across == "contradicted for conv1; not testable here for conv2"
