"""Study decision rules at their exact boundaries: an interval on a threshold, a range's ends, all-or-any of the
per-temperature decisions, and the p-value read back from a stored interval (ganeval/studies/slq_claims.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from ganeval.studies import slq_claims as S


@pytest.mark.parametrize("low, high, strict, want", [
    (0.1, 0.9, True, True), (0.1, 1.0, True, None), (1.0, 2.0, True, False), (0.5, 1.5, True, None),
    (0.1, 1.0, False, True), (1.0, 2.0, False, None), (1.0 + 1e-12, 2.0, False, False), (0.1, 0.9, False, True),
])
def test_an_interval_against_a_threshold(low: float, high: float, strict: bool, want: bool | None) -> None:
    assert S.below(low, high, 1.0, strict=strict) is want


def test_below_is_strict_by_default() -> None:
    assert S.below(0.0, 1.0, 1.0) is None and S.below(1.0, 1.0, 1.0) is False


@pytest.mark.parametrize("low, high, want", [
    (1.0, 2.0, True), (1.5, 1.5, True), (0.5, 2.0, None), (1.0, 2.5, None), (2.5, 3.0, False), (0.0, 0.99, False),
    (2.0, 2.0, True), (2.0 + 1e-9, 3.0, False), (0.0, 1.0, None),
])
def test_an_interval_against_a_range(low: float, high: float, want: bool | None) -> None:
    assert S.inside(low, high, 1.0, 2.0) is want


@pytest.mark.parametrize("decisions, want", [
    ([True, True], True), ([True, None], None), ([None, False], False), ([True, False], False), ([None], None),
    ([], True),
])
def test_a_claim_holds_where_every_temperature_does(decisions: list, want: bool | None) -> None:  # type: ignore[type-arg]
    out: list = []  # type: ignore[type-arg]
    per_t = [(float(i), h, "x") for i, h in enumerate(decisions)]
    S._add(out, "k", "q", "w", "c", per_t)
    assert out == [{"claim": "k", "quote": "q", "where": "w", "criterion": "c", "holds": want, "per_t": per_t}]


def test_one_row_selects_by_figure_quantity_temperature_and_sizes() -> None:
    df = pd.DataFrame({"figure": ["m", "m", "m", "nv"], "quantity": ["e", "e", "e", "e"],
                       "t": [0.1, 0.1 + 1e-12, 1.0, 0.1], "m": [5, 10, 5, 5], "nv": [1, 1, 2, 1], "value": [1, 2, 3, 4]})
    assert S.one_row(df, "m", "e", 0.1).value == 1
    assert S.one_row(df, "m", "e", 0.1, m=10).value == 2  # t within float rounding
    assert S.one_row(df, "m", "e", 1.0, nv=2).value == 3 and S.one_row(df, "nv", "e", 0.1).value == 4
    with pytest.raises(IndexError):
        S.one_row(df, "m", "e", 1.0, nv=1)


def test_the_thresholds_are_the_stated_ones() -> None:
    assert (S.ROUNDING, S.REDUCED) == (1e-12, 0.9)
    assert set(S.THRESHOLD) == {"few_steps_suffice", "hutchinson_dominates", "error_flat_in_m", "error_1e-3_at_nv100",
                                "error_around_1e-3_at_t0.1", "better_than_hutchinson_bound", "lanczos_bound",
                                "variance_reduced_everywhere", "alpha_optimal"}
    assert S.FAILS_BETTER == {"error_around_1e-3_at_t0.1"}


@pytest.mark.parametrize("confidence", [0.99, 0.9])
def test_the_p_value_is_read_back_from_the_interval(confidence: float) -> None:
    z = norm.ppf(0.5 + confidence / 2)
    # few_steps_suffice: value, low, high are the text's last three numbers; the threshold 1e-3
    text = "m = 10: 4.00e-04 [2.00e-04, 7.00e-04]"
    se = (7e-4 - 4e-4) / z
    assert S._approx_p(text, True, "few_steps_suffice", confidence) == pytest.approx(norm.sf((1e-3 - 4e-4) / se))
    bad = "2.00e-03 [1.50e-03, 3.00e-03]"
    se = (2e-3 - 1.5e-3) / z
    assert S._approx_p(bad, False, "few_steps_suffice", confidence) == pytest.approx(norm.sf((2e-3 - 1e-3) / se))
    # variance_reduced_everywhere: the first three numbers; the threshold 0.9
    ratio = "ratio 0.500 [0.400, 0.650] at t = 3"
    se = (0.65 - 0.5) / z
    assert S._approx_p(ratio, True, "variance_reduced_everywhere", confidence) == pytest.approx(
        norm.sf((0.9 - 0.5) / se))
    level = "1.00e-03 [5.00e-04, 2.00e-03]"
    se = (2e-3 - 1e-3) / z
    assert S._approx_p(level, True, "error_1e-3_at_nv100", confidence) == pytest.approx(
        norm.sf((10 ** -2.5 - 1e-3) / se))


def test_a_p_value_needs_a_threshold_claim_an_interval_and_a_decision() -> None:
    assert math.isnan(S._approx_p("1 [0, 2]", None, "few_steps_suffice", 0.99))
    assert math.isnan(S._approx_p("1 [0, 2]", True, "alpha_optimal", 0.99))
    assert math.isnan(S._approx_p("1 [0]", True, "few_steps_suffice", 0.99))
    assert S._approx_p("4e-04 [2e-04, 4e-04]", True, "few_steps_suffice", 0.99) == 0.0  # no width: certain
    assert S._approx_p("4e-04 [4e-04, 5e-04]", False, "few_steps_suffice", 0.99) == 0.0


def _claim(key: str, per_t: list) -> dict:  # type: ignore[type-arg]
    return {"claim": key, "quote": "q", "where": "w", "criterion": "c", "holds": None, "per_t": per_t}


def test_claim_verdicts_state_each_outcome() -> None:
    from ganeval.results.verdicts import AS_STATED, BETTER, CONTRADICTED, HOLDS, NO_COMPARISON, NOT_TESTABLE, WORSE

    ok = "4.00e-04 [2.00e-04, 7.00e-04]"
    fail = "2.00e-03 [1.50e-03, 3.00e-03]"
    found = [
        _claim("few_steps_suffice", [(0.1, True, ok), (1.0, True, ok)]),
        _claim("few_steps_suffice", [(0.1, True, ok), (1.0, False, fail), (10.0, None, ok)]),
        _claim("few_steps_suffice", [(0.1, True, ok), (1.0, None, ok)]),
        _claim("error_around_1e-3_at_t0.1", [(0.1, False, "x")]),
        _claim("error_1e-3_at_nv100", [(5.0, False, "5.00e-03 [4.50e-03, 6.00e-03]")]),
        _claim("not_listed", [(2.0, False, "x")]),
    ]
    got = S.claim_verdicts(found, 0.99)
    assert [c.verdict for c in got] == [HOLDS, CONTRADICTED, NOT_TESTABLE, CONTRADICTED, CONTRADICTED, CONTRADICTED]
    assert [c.vs_paper for c in got] == [AS_STATED, WORSE, NO_COMPARISON, BETTER, WORSE, WORSE]
    assert got[0].evidence == "at every t (2)"
    assert got[1].evidence == "fails at t = 1 of 3"
    assert got[2].evidence == "undecided at t = 1 of 2: the interval straddles the threshold"
    assert got[5].threshold == "–" and got[0].threshold == S.THRESHOLD["few_steps_suffice"]
    z = norm.ppf(0.995)
    p_ok = norm.sf((1e-3 - 4e-4) / ((7e-4 - 4e-4) / z))
    p_fail = norm.sf((2e-3 - 1e-3) / ((2e-3 - 1.5e-3) / z))
    assert got[0].p_value == pytest.approx(p_ok)  # holds: the largest of its t's p-values
    assert got[1].p_value == pytest.approx(min(1.0, p_fail * 3))  # fails: Bonferroni over its 3 t values
    assert math.isnan(got[2].p_value) and math.isnan(got[3].p_value)


# ------------------------------------------------------------------------------------------------------------------
# The blur order (ganeval/studies/blur_verdict.py)
# ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("first, want", [
    ({"imd": 2.0, "fid": 1.0, "kid": 1.0}, True),
    ({"imd": 1.0, "fid": 1.0, "kid": 0.5}, False),  # a tie is not "smaller"
    ({"imd": np.nan, "fid": 1.0, "kid": 3.0}, True),  # IMD never passes: beyond the grid
    ({"imd": 2.0, "fid": np.nan, "kid": 1.0}, False),  # FID never passes
    ({"imd": 2.0, "fid": np.nan, "kid": np.nan}, None),  # nothing to order
    ({"imd": 2.0, "fid": 1.0}, None),  # KID missing
    ({"fid": 1.0, "kid": 1.0}, None),
    ({"imd": 0.5, "fid": 1.0, "kid": 0.25}, False),
])
def test_the_blur_order_is_fid_and_kid_before_imd(first: dict, want: bool | None) -> None:  # type: ignore[type-arg]
    from ganeval.studies.blur_verdict import MNIST, ordering_holds

    passes = pd.DataFrame({"metric": list(first), "first_sigma": list(first.values())})
    assert ordering_holds(passes) is want
    assert MNIST == ("mnist",)


# ------------------------------------------------------------------------------------------------------------------
# The stability grid's helpers (ganeval/studies/stability_grid.py)
# ------------------------------------------------------------------------------------------------------------------
def test_the_grid_halves_the_top_size() -> None:
    from ganeval.studies.stability_grid import sample_sizes

    assert sample_sizes(4000, 4) == [250, 500, 1000, 2000, 4000]
    assert sample_sizes(20, 1) == [10, 20] and sample_sizes(30, 1) == [15, 30] and sample_sizes(25, 1) == [12, 25]
    with pytest.raises(ValueError, match=r"^sample_size=18 halved 1 times gives n=9: the smallest n must be at least 10"):
        sample_sizes(18, 1)
    assert sample_sizes(19, 1)[0] == 10  # round(9.5) = 10 (half to even): the edge passes
    for bad in (0, True, 1.0):
        with pytest.raises(ValueError, match="halvings must be an integer ≥ 1"):
            sample_sizes(4000, bad)  # type: ignore[arg-type]


def test_knn_methods_are_distinct_known_and_imds_own_left_alone() -> None:
    from ganeval.studies.stability_grid import KNN_METHODS, knn_methods

    assert KNN_METHODS == ("exact", "approx")
    assert knn_methods(["approx"], "exact") == ["approx"] and knn_methods(("exact", "approx"), "exact") == ["exact", "approx"]
    for bad in ([], None, ["exact", "exact"], ["exact", "faiss"]):
        with pytest.raises(ValueError, match="knn_methods must be a non-empty list of distinct values"):
            knn_methods(bad, "exact")
    with pytest.raises(ValueError, match=r"metrics.imd.knn='approx' is set, but experiment=stability"):
        knn_methods(["exact"], "approx")


def test_two_halves_are_disjoint_seeded_and_sorted() -> None:
    from ganeval.studies.stability_grid import split_halves

    arr = np.arange(9)[:, None] * 10
    a, b = split_halves(arr, 3)
    perm = np.random.default_rng([3, 0x5EED]).permutation(9)
    assert np.array_equal(a[:, 0], np.sort(perm[:4]) * 10) and np.array_equal(b[:, 0], np.sort(perm[4:8]) * 10)
    assert len(split_halves(np.zeros((4, 1)), 0)[1]) == 2
    with pytest.raises(ValueError, match="data has 3 rows: at least 4"):
        split_halves(np.zeros((3, 1)), 0)


def test_stored_runs_and_timing_are_read_safely(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval.studies.stability_grid import read_timing, stored_runs

    assert stored_runs(tmp_path) == 0 and read_timing(tmp_path) == {}
    pd.DataFrame({"run": [0, 0, 1, 2], "value": [1, 2, 3, 4]}).to_csv(tmp_path / "runs.csv", index=False)
    assert stored_runs(tmp_path) == 3
    (tmp_path / "runs.csv").write_text("other\n1\n")
    assert stored_runs(tmp_path) == 0
    (tmp_path / "timing.json").write_text('{"seconds": 2.5}')
    assert read_timing(tmp_path) == {"seconds": 2.5}
    (tmp_path / "timing.json").write_text("{bad")
    assert read_timing(tmp_path) == {}


def test_the_variance_ratio_interval_is_pitman_morgans() -> None:
    """At each end λ of the interval, the correlation of (a − √λ·b, a + √λ·b) is exactly significant: its t statistic
    r·√(n − 2)/√(1 − r²) equals the t(n − 2) quantile (the test the interval inverts)."""
    from scipy.stats import t as student_t

    from ganeval.studies.stability_grid import variance_ratio_interval

    rng = np.random.default_rng(5)
    b = rng.normal(size=12)
    a = 0.6 * b + rng.normal(size=12) * 0.9
    ratio, low, high = variance_ratio_interval(a, b, 0.95)
    assert ratio == pytest.approx(a.var(ddof=1) / b.var(ddof=1))
    q = student_t.ppf(0.975, 10)
    for lam in (low, high):
        r = np.corrcoef(a - np.sqrt(lam) * b, a + np.sqrt(lam) * b)[0, 1]
        assert abs(r) * np.sqrt(10) / np.sqrt(1 - r * r) == pytest.approx(q, rel=1e-9)
    assert low < ratio < high


def test_the_variance_ratio_of_constant_or_unpaired_runs() -> None:
    from ganeval.studies.stability_grid import variance_ratio_interval

    assert all(math.isnan(v) for v in variance_ratio_interval(np.ones(4), np.ones(4), 0.9))
    r = variance_ratio_interval(np.array([1.0, 2.0, 4.0]), np.ones(3), 0.9)
    assert r[0] == math.inf and math.isnan(r[1]) and math.isnan(r[2])
    r = variance_ratio_interval(np.ones(3), np.array([1.0, 2.0, 4.0]), 0.9)
    assert r[0] == 0.0 and math.isnan(r[1])
    for a, b in ((np.ones(2), np.ones(2)), (np.ones(3), np.ones(4))):
        with pytest.raises(ValueError, match="paired runs"):
            variance_ratio_interval(a, b, 0.9)


def test_welchs_interval_from_summary_rows() -> None:
    from scipy.stats import ttest_ind

    from ganeval.studies.stability_grid import welch_interval

    rng = np.random.default_rng(2)
    x, y = rng.normal(1.0, 1.0, 8), rng.normal(0.0, 3.0, 5)
    row = lambda v: pd.Series({"mean": v.mean(), "std": v.std(ddof=1), "n_runs": len(v)})  # noqa: E731
    d, lo, hi = welch_interval(row(x), row(y), 0.9)
    ci = ttest_ind(x, y, equal_var=False).confidence_interval(0.9)
    assert d == pytest.approx(x.mean() - y.mean()) and (lo, hi) == pytest.approx((ci.low, ci.high), rel=1e-9)
    same = welch_interval(pd.Series({"mean": 2.0, "std": 0.0, "n_runs": 3}), pd.Series({"mean": 1.0, "std": 0.0,
                                                                                         "n_runs": 3}), 0.9)
    assert same == (1.0, 1.0, 1.0)


def test_the_loglog_slope_of_a_power_law() -> None:
    from ganeval.studies.stability_grid import loglog_slope

    n = [250, 500, 1000, 4000]
    assert loglog_slope(n, [3.0 * v**-0.5 for v in n]) == pytest.approx(-0.5)
    assert loglog_slope(n, [0.1 * v**2 for v in n]) == pytest.approx(2.0)


# ------------------------------------------------------------------------------------------------------------------
# The torus study's rules (ganeval/studies/torus.py)
# ------------------------------------------------------------------------------------------------------------------
def test_the_hole_fraction_counts_points_strictly_inside_the_hole() -> None:
    from ganeval.studies.torus import hole_fraction

    pts = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 5.0], [0.6, 0.8, 0.0], [3.0, 0.0, 0.0]])  # radii 0, 1, 1, 3
    assert hole_fraction(pts, 2.0, 1.0) == 0.25  # R − r = 1: a radius of exactly 1 is not inside
    assert hole_fraction(pts, 2.5, 1.0) == 0.75
    with pytest.raises(ValueError, match=r"points must be N×3, got shape \(4, 2\)"):
        hole_fraction(pts[:, :2], 2.0, 1.0)


def _torus_frames(lows: dict, better: dict) -> tuple[pd.DataFrame, pd.DataFrame]:  # type: ignore[type-arg]
    """Summary rows of models g and b per metric (interval [low, low + 1] each) and the paired comparison."""
    rows = []
    for m, (lg, lb) in lows.items():
        rows += [{"model": "g", "metric": m, "mean": lg + 0.5, "ci_low": lg, "ci_high": lg + 1.0},
                 {"model": "b", "metric": m, "mean": lb + 0.5, "ci_low": lb, "ci_high": lb + 1.0}]
    comp = pd.DataFrame([{"metric": m, "better": better.get(m, ""), "p_value": 0.5} for m in lows])
    return pd.DataFrame(rows), comp


def test_the_torus_verdict_reads_overlap_and_separation() -> None:
    from ganeval.studies.torus import verdict

    summary, comp = _torus_frames({"fid": (0.0, 1.0), "kid": (0.0, 1.0 + 1e-9), "imd": (0.0, 3.0)},
                                  {"imd": "g", "kid": "g"})
    v = verdict(summary, comp, "g", "b").set_index("metric")
    assert v["intervals_overlap"].tolist() == [True, False, False]  # touching at 1: overlap
    assert v["separates"].tolist() == [False, True, True]
    assert v.loc["imd", "g_mean"] == 0.5 and v.loc["imd", "b_mean"] == 3.5 and v.loc["imd", "paired_better"] == "g"
    summary, comp = _torus_frames({"fid": (3.0, 0.0)}, {})
    assert not verdict(summary, comp, "g", "b").iloc[0]["intervals_overlap"]


@pytest.mark.parametrize("lows, better, paper, strict", [
    ({"fid": (0, 0.5), "kid": (0, 0.5), "imd": (0, 3)}, {"imd": "g"}, True, True),
    ({"fid": (0, 0.5), "kid": (0, 0.5), "imd": (3, 0)}, {"imd": "b"}, False, False),  # IMD's bad model is lower
    ({"fid": (0, 3), "kid": (0, 0.5), "imd": (0, 3)}, {"imd": "g"}, False, True),
    ({"fid": (0, 0.5), "kid": (0, 3), "imd": (0, 3)}, {"imd": "g"}, False, True),
    ({"fid": (0, 0.5), "kid": (0, 0.5), "imd": (0, 0.5)}, {"imd": "g"}, False, True),
    ({"fid": (0, 0.5), "kid": (0, 0.5), "imd": (0, 3)}, {"imd": "g", "fid": "g"}, True, False),
    ({"fid": (0, 0.5), "kid": (0, 0.5), "imd": (0, 3)}, {"imd": "g", "kid": "g"}, True, False),
    ({"fid": (0, 0.5), "kid": (0, 0.5), "imd": (0, 3)}, {}, True, False),
])
def test_the_torus_claim_in_both_readings(lows: dict, better: dict, paper: bool, strict: bool) -> None:  # type: ignore[type-arg]
    from ganeval.studies.torus import claim, verdict

    summary, comp = _torus_frames(lows, better)
    assert claim(verdict(summary, comp, "g", "b"), "g", "b") == {"paper": paper, "strict": strict}


def test_the_paper_style_plus_minus() -> None:
    from ganeval.studies.torus import _pm

    assert _pm(9.02059, 1.5195) == "9.0 ± 1.5"
    assert _pm(0.0123456, 0.00456) == "0.0123 ± 0.0046"
    assert _pm(123.456, 15.0) == "123 ± 15"
    assert _pm(2.5, 0.0) == "2.5" and _pm(2.5, float("nan")) == "2.5" and _pm(1.23456789, -1.0) == "1.235"


def test_seed_labels_and_the_search_marker() -> None:
    from ganeval.studies.torus import seed_labels, selected_by_search

    assert seed_labels({"train_seeds": [7, 9]}, 2) == [7, 9]
    assert seed_labels({"train_seeds": [7, 9]}, 3) == [0, 1, 2] and seed_labels({}, 2) == [0, 1]
    assert seed_labels(None, 2) == [0, 1]
    assert selected_by_search({"about_default": "set by scripts/torus_search.py on 2025-01-01"})
    assert not selected_by_search({"about_default": "hand-picked"}) and not selected_by_search(None)


# ------------------------------------------------------------------------------------------------------------------
# The paper's Table 1 beside ours (ganeval/studies/paper_table.py)
# ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("low, high, sign, want", [
    (0.1, 1.0, 1.0, "holds"), (0.1, 1.0, -1.0, "contradicted"), (-1.0, -0.1, -1.0, "holds"),
    (-1.0, -0.1, 1.0, "contradicted"), (0.0, 1.0, 1.0, "not testable here"), (-1.0, 0.0, -1.0, "not testable here"),
    (-1.0, 1.0, 1.0, "not testable here"), (np.nan, 1.0, 1.0, "not testable here"),
    (0.1, np.inf, 1.0, "not testable here"),
])
def test_a_differences_interval_against_the_papers_sign(low: float, high: float, sign: float, want: str) -> None:
    from ganeval.studies.paper_table import decide

    assert decide(low, high, sign) == want


def test_a_run_is_a_stand_in_unless_it_is_the_papers_features_and_files() -> None:
    from ganeval.studies.paper_table import PUBLISHED_WEIGHTS, stand_in

    ok = {"name": "inception", "dims": 2048, "weights": PUBLISHED_WEIGHTS + "ab" * 28}
    assert stand_in(ok) == "" and stand_in(ok, {"datasets": {"mnist": {"data": {"checksums": True}}}}) == ""
    assert stand_in({**ok, "dims": 768}) == "inception features, not Inception pool3"
    assert stand_in({"name": "dinov2", "dims": 2048}) == "dinov2 features, not Inception pool3"
    assert stand_in(None) == "None features, not Inception pool3"
    assert stand_in({**ok, "weights": "0123456789abcdef"}) == "Inception weights 01234567…, not the published FID weights"
    assert stand_in({**ok, "weights": None}) == "Inception weights …, not the published FID weights"
    cfg = {"datasets": {"mnist": {"data": {"checksums": False}}, "cifar10": {"data": {}}, "celeba": "x",
                        "fashion_mnist": {"data": {"checksums": False}}}}
    assert stand_in(ok, cfg) == "MNIST, FashionMNIST files not the published ones (checksums=false)"
    assert stand_in({"name": "pixels"}, cfg) == ("pixels features, not Inception pool3; MNIST, FashionMNIST files not "
                                                  "the published ones (checksums=false)")


def test_each_protocol_difference_is_named() -> None:
    from ganeval.studies.paper_table import PUBLISHED_WEIGHTS, _not_comparable, protocol_differences

    paper = {"name": "inception", "dims": 2048, "resize": 299, "weights": PUBLISHED_WEIGHTS + "0" * 56}
    assert protocol_differences(10000, 100, 0.99, paper) == []
    assert protocol_differences(10000, 100, 0.99 + 1e-13, paper) == []
    got = protocol_differences(500, 20, 0.9, {**paper, "autocast": "bf16", "weights": "ffff0000" + "1" * 56},
                               train_epochs=3)
    assert got == ["sample_size 500 (paper 10000; IMD's value depends on it)", "runs 20 (paper 100)",
                   "confidence 0.9 (paper 0.99)",
                   "features inception 2048-d, resize 299, autocast bf16 (paper Inception pool3 (2048-d), 299×299 input)",
                   "Inception weights ffff0000… (not the published FID weights 6726825d…)",
                   "train_epochs=3 overrides every model's epochs (paper: 200; CelebA 50)"]
    assert protocol_differences(10000, 100, 0.99, {"name": "dinov2", "dims": 768}) == [
        "features dinov2 768-d (paper Inception pool3 (2048-d), 299×299 input)"]
    assert protocol_differences(10000, 100, 0.99, {**paper, "resize": 256})[0].startswith(
        "features inception 2048-d, resize 256 (paper")
    assert _not_comparable([]).startswith("Our protocol is the paper's (10k vs 10k, 100 runs, 99 %")
    assert _not_comparable(["a", "b"]).startswith("Our protocol differs from the paper's: a; b. So our cells")


def test_the_tables_columns_are_the_papers_eight_then_ours() -> None:
    from ganeval.studies.paper_table import columns

    summary = pd.DataFrame({"data": ["extra", "mnist", "extra"], "model": ["m", "wgan", "m"]})
    got = columns(summary)
    assert got[:8] == [(d, m) for d in ("mnist", "fashion_mnist", "cifar10", "celeba") for m in ("wgan", "wgan_gp")]
    assert got[8:] == [("extra", "m")]


def test_each_cell_overlaps_the_papers_or_says_why_not() -> None:
    from ganeval.studies.paper_numbers import PAPER_TABLE
    from ganeval.studies.paper_table import cells

    p = PAPER_TABLE[("mnist", "wgan", "kid")]
    lo = (p.mean + p.half_width) / 1e3  # our interval starts exactly at the paper's upper end: they touch
    summary = pd.DataFrame([
        {"data": "mnist", "model": "wgan", "metric": "kid", "mean": lo + 1e-3, "ci_low": lo, "ci_high": lo + 2e-3},
        {"data": "mnist", "model": "wgan", "metric": "fid", "mean": 1.0, "ci_low": np.nan, "ci_high": np.nan},
        {"data": "mnist", "model": "wgan", "metric": "imd", "mean": 1e6, "ci_low": 1e6, "ci_high": 1e6 + 1},
        {"data": "other", "model": "m", "metric": "kid", "mean": 1.0, "ci_low": 0.5, "ci_high": 1.5},
    ])
    c = cells(summary).set_index(["data", "model", "metric"])
    row = c.loc[("mnist", "wgan", "kid")]
    assert row.overlap == "yes" and row.ours_low == pytest.approx(p.mean + p.half_width)  # KID × 10³
    assert row.paper_low == pytest.approx(p.mean - p.half_width) and row.paper_mean == p.mean
    assert c.loc[("mnist", "wgan", "fid")].overlap == "no interval"
    assert c.loc[("mnist", "wgan", "imd")].overlap == "no"
    assert c.loc[("mnist", "wgan_gp", "kid")].overlap == "not run"
    other = c.loc[("other", "m", "kid")]
    assert other.overlap == "" and other.ours_mean == 1000.0 and np.isnan(other.paper_mean)
    assert len(c) == 9 * 3
