"""The stability study's verdict (ganeval/studies/stability_report.py) on hand-made summaries: each claim's rule at
its edges and the numbers its detail shows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ganeval.studies import stability_report as R

NS = (100, 200, 400)


def _summary(half: dict | None = None, means: dict | None = None, rel: dict | None = None) -> pd.DataFrame:  # type: ignore[type-arg]
    """Every line × pair × n: mean falling with n (different above same), half-width 1/√n, confidence 0.9."""
    rows = []
    for metric, knn in (("imd", "exact"), ("imd", "approx"), ("fid", ""), ("kid", "")):
        for pair, base in (("same", 1.0), ("different", 3.0)):
            for n in NS:
                m = (means or {}).get((metric, knn, pair, n), base * (1 + 100 / n))
                h = (half or {}).get((metric, knn, pair, n), 1 / math.sqrt(n))
                rm = (rel or {}).get((metric, knn, pair, n), 1.0)
                rows.append({"n": n, "pair": pair, "knn": knn, "metric": metric, "mean": m, "half_width": h,
                             "ci_low": m - h, "ci_high": m + h, "std": h, "n_runs": 10, "confidence": 0.9,
                             "relative_mean": rm, "relative_ci_low": rm - 0.1, "relative_ci_high": rm + 0.1})
    return pd.DataFrame(rows)


def _comparison(diff: dict | None = None, approx: dict | None = None) -> pd.DataFrame:  # type: ignore[type-arg]
    rows = []
    for metric, knn in (("imd", "exact"), ("imd", "approx"), ("fid", ""), ("kid", "")):
        for n in NS:
            lo, hi = (diff or {}).get((metric, knn, n), (1.0, 2.0))
            rows.append({"kind": "different - same", "n": n, "metric": metric, "knn": knn, "pair": "",
                         "diff_mean": (lo + hi) / 2, "half_width": (hi - lo) / 2, "ci_low": lo, "ci_high": hi,
                         "mde": 0.5, "excludes_zero": lo > 0 or hi < 0})
    for pair in ("same", "different"):
        for n in NS:
            d = (approx or {}).get((pair, n), {})
            lo, hi = d.get("ci", (-0.1, 0.1))
            rows.append({"kind": "approx - exact", "n": n, "metric": "imd", "knn": "", "pair": pair,
                         "diff_mean": d.get("mean", (lo + hi) / 2), "half_width": (hi - lo) / 2, "ci_low": lo,
                         "ci_high": hi, "mde": 0.25, "excludes_zero": lo > 0 or hi < 0,
                         "var_ratio": d.get("ratio", 1.0), "var_ratio_low": d.get("low", 0.8),
                         "var_ratio_high": d.get("high", 1.2)})
    return pd.DataFrame(rows)


def _by(claims: list) -> dict:  # type: ignore[type-arg]
    return {c["claim"]: c for c in claims}


def test_labels_and_thresholds() -> None:
    assert R.label("imd", "exact") == "IMD (exact kNN)" and R.label("fid", "") == "FID"
    assert (R.RECALL_EXACT, R.VARIANCE_SIMILAR, R.AXIS, R.CLAIMED_N) == (0.999, 1.5, (0.5, 2.5), 10_000)


def test_separation_holds_fails_or_is_undecided_per_line() -> None:
    comp = _comparison({("fid", "", 200): (-2.0, -1.0), ("kid", "", 400): (-0.5, 0.5), ("kid", "", 100): (0.0, 1.0)})
    got = _by(R.verdict(_summary(), comp))
    assert got["separation/imd/exact"]["holds"] is True and got["separation/imd/approx"]["holds"] is True
    assert got["separation/fid"]["holds"] is False  # significantly lower at n = 200
    assert got["separation/kid"]["holds"] is None  # ci_low = 0 at n = 100: not > 0; nothing reversed
    assert got["separation/kid"]["detail"] == (
        "KID: the different pair lies above the same pair except at n = 100, 400 (paired t on different − same, "
        "Holm-corrected); different − same: n=100: 0.5 ± 0.5, n=200: 1.5 ± 0.5, n=400: 0 ± 0.5; smallest "
        "detectable (paired t at the claims' Holm level, 80 % power) where undecided: n=100: 0.5, n=400: 0.5")
    assert got["separation/imd/exact"]["detail"].startswith("IMD (exact kNN): the different pair lies above the "
                                                            "same pair at every n")
    every = R.separation_detail("X", _comparison().query("metric == 'fid' and kind == 'different - same'"),
                                [100, 200, 400])
    assert "lies above the same pair at no n" in every


def test_intervals_narrow_and_their_slope() -> None:
    half = {("fid", "", "same", 400): 0.1, ("fid", "", "same", 100): 0.1}
    got = _by(R.verdict(_summary(half=half), _comparison()))
    c = got["interval/imd/exact/same"]
    assert c["holds"] is True and c["slope"] == pytest.approx(-0.5)
    assert c["detail"] == ("IMD (exact kNN), same pair: half-width 0.1 at n=100 → 0.05 at n=400 (×0.50); log-log "
                           "slope -0.50 (−0.5 would be 1/√n)")
    assert got["interval/fid/same"]["holds"] is False  # equal at the two ends: not narrower
    assert "interval/fid/different" in got and "interval/kid/same" in got


def test_the_mean_falls_step_by_step_and_overall() -> None:
    means = {("kid", "", "same", 200): 2.0 - 0.05, ("kid", "", "same", 400): 1.25}  # 2.0 → 1.95 → 1.25
    got = _by(R.verdict(_summary(means=means), _comparison()))
    c = got["falls/imd/exact/different"]
    assert c["holds"] is True and c["overall"] is True
    assert c["slope"] == pytest.approx(np.polyfit(np.log(NS), np.log([6.0, 4.5, 3.75]), 1)[0])
    assert c["detail"].startswith("IMD (exact kNN), different pair: mean 6 → 4.5 → 3.75 over n = 100, 200, 400; "
                                  "each n's interval lies above the next one's; n=100 − n=400: +2.25 [")
    k = got["falls/kid/same"]
    assert k["holds"] is False and "not every step down is outside the intervals" in k["detail"]


@pytest.mark.parametrize("rel, want, straddles", [
    ({}, True, []),
    ({("imd", "exact", "different", 100): 0.6}, True, []),  # [0.5, 0.7]: on the axis' end
    ({("imd", "exact", "different", 100): 2.4}, True, []),  # [2.3, 2.5]
    ({("imd", "exact", "different", 100): 2.7}, False, []),  # [2.6, 2.8]: wholly above
    ({("imd", "exact", "different", 100): 0.3}, False, []),  # [0.2, 0.4]: wholly below
    ({("imd", "exact", "different", 200): 2.5}, None, [200]),  # [2.4, 2.6]: straddles
    ({("imd", "exact", "different", 200): 0.5}, None, [200]),
])
def test_divergence_stays_within_the_papers_axis(rel: dict, want: bool | None, straddles: list) -> None:  # type: ignore[type-arg]
    c = _by(R.verdict(_summary(rel=rel), _comparison()))["diverge/imd/exact"]
    assert c["holds"] is want and c["straddles"] == straddles
    assert c["detail"].endswith("(the paper's figure spans 0.5–2.5)")


def test_approximate_knn_claims_by_their_rules() -> None:
    summary = _summary()
    similar = _by(R.approx_claims(summary, _comparison(), {100: 0.9}))
    assert similar["approx/no_added_variance"]["holds"] is True
    assert similar["approx/no_added_variance"]["detail"].startswith(
        "rule: holds where every upper bound is ≤ 1.5 (similar variance), contradicted where a lower bound is > 1; "
        "variance ratio approx/exact per run (Pitman–Morgan interval): n=100 same: 1.00 [0.80, 1.20]")
    edge = _by(R.approx_claims(summary, _comparison(approx={("same", 100): {"high": 1.5}}), None))
    assert edge["approx/no_added_variance"]["holds"] is True  # an upper bound of exactly 1.5 is similar
    wide = _by(R.approx_claims(summary, _comparison(approx={("same", 100): {"high": 1.6}}), None))
    assert wide["approx/no_added_variance"]["holds"] is None
    assert "the intervals reach ×1.60, so an added variance up to that could not be told from none" in \
        wide["approx/no_added_variance"]["detail"]
    more = _by(R.approx_claims(summary, _comparison(approx={("same", 100): {"low": 1.01, "high": 3.0}}), None))
    assert more["approx/no_added_variance"]["holds"] is False
    assert "could not be told" not in more["approx/no_added_variance"]["detail"]
    one = _by(R.approx_claims(summary, _comparison(approx={("same", 100): {"low": 1.0, "high": 1.2}}), None))
    assert one["approx/no_added_variance"]["holds"] is True  # a lower bound of exactly 1 is no added variance


def test_approximate_knn_diverges_further_only_when_significant_and_growing() -> None:
    summary = _summary()  # IMD exact, same pair: means 2.0, 1.5, 1.25
    grows = {("same", 100): {"ci": (0.01, 0.03)}, ("same", 400): {"ci": (0.1, 0.3)}}
    got = _by(R.approx_claims(summary, _comparison(approx=grows), None))
    assert got["approx/diverges_further/same"]["holds"] is True
    assert got["approx/diverges_further/same"]["detail"].startswith(
        "same pair, IMD approx − exact (paired): n=100: +0.02 ± 0.01 (+1.0%), n=200: +0 ± 0.1 (+0.0%), "
        "n=400: +0.2 ± 0.1 (+16.0%); smallest detectable difference")
    assert got["approx/agrees/same"]["holds"] is False and got["approx/agrees/same"]["paired_zero"] == [200]
    assert "the difference excludes 0 at 100, 400 (" in got["approx/agrees/same"]["detail"]
    shrinks = {("same", 100): {"ci": (0.5, 0.7)}, ("same", 400): {"ci": (0.1, 0.3)}}
    assert _by(R.approx_claims(summary, _comparison(approx=shrinks), None))["approx/diverges_further/same"][
        "holds"] is False
    lower = {("same", 400): {"ci": (-0.3, -0.1)}}
    assert _by(R.approx_claims(summary, _comparison(approx=lower), None))["approx/diverges_further/same"][
        "holds"] is False
    none = _by(R.approx_claims(summary, _comparison(), None))
    assert none["approx/diverges_further/same"]["holds"] is None
    assert "at n=400 the paired difference contains 0 (no power at this size); " in \
        none["approx/diverges_further/same"]["detail"]
    assert none["approx/agrees/different"]["holds"] is None
    assert none["approx/agrees/different"]["detail"].endswith(
        "; no difference found is not agreement shown (no equivalence margin is stated)")


def test_an_exact_approximate_graph_tests_nothing() -> None:
    grows = {("same", 100): {"ci": (0.01, 0.03)}, ("same", 400): {"ci": (0.1, 0.3)},
             ("different", 200): {"low": 2.0, "high": 3.0}}
    for recall, exact in (({100: 0.999, 200: 1.0}, True), ({100: 0.998, 200: 1.0}, False), ({}, False)):
        got = _by(R.approx_claims(_summary(), _comparison(approx=grows), recall))
        assert (got["approx/no_added_variance"]["holds"] is None) is exact
        assert (got["approx/diverges_further/same"]["holds"] is None) is exact
        assert (got["approx/agrees/same"]["holds"] is None) is exact
        assert got["approx/agrees/same"]["detail"].startswith("the approximate graph is the exact one") is exact
    assert R.approx_claims(_summary(), _comparison().query("kind != 'approx - exact'"), None) == []


def test_timing_and_recall_are_shown_never_decided() -> None:
    seconds = {"n100-imd-exact": 2.0, "n100-imd-approx": 1.0, "n200-imd-exact": 3.0}
    got = _by(R._timing_claims([100, 200], seconds, {200: 0.95, 100: 0.99}))
    assert got["approx/recall"] == {"claim": "approx/recall", "holds": None, "detail": (
        "recall of the true k-NN by the approximate graph (run 0's subsample of the first half): n=100: 0.9900, "
        "n=200: 0.9500")}
    assert got["approx/faster"]["holds"] is None
    assert got["approx/faster"]["detail"].endswith("up to n = 100: seconds per run, IMD exact vs approx (both pairs, "
                                                   "3 sets): n=100: 2.00 vs 1.00")
    assert R._timing_claims([100], {"n100-imd-exact": 2.0}, None) == []
    assert R._timing_claims([100], None, {}) == []


def test_the_timing_table_per_size() -> None:
    from ganeval.studies.stability_grid import Part

    parts = [Part(100, "imd-exact", "exact", None), Part(100, "fid-kid", "", None),  # type: ignore[arg-type]
             Part(200, "imd-exact", "exact", None)]  # type: ignore[arg-type]
    timings = {"n100-imd-exact": {"seconds_per_run": 1.5, "load_1min": 0.7},
               "n100-fid-kid": {"seconds_per_run": 0.5, "load_1min": 1.2}}
    t = R.timing_table([100, 200], parts, timings, {100: 0.9})
    assert t.loc[0, "approx_recall"] == 0.9 and math.isnan(t.loc[1, "approx_recall"])
    assert t.loc[0, "seconds_per_run_imd-exact"] == 1.5 and t.loc[0, "seconds_per_run_fid-kid"] == 0.5
    assert t.loc[0, "load_1min_max"] == 1.2 and math.isnan(t.loc[1, "load_1min_max"])
    assert math.isnan(t.loc[1, "seconds_per_run_imd-exact"])
    assert math.isnan(R.timing_table([300], parts, {}, {}).loc[0, "load_1min_max"])
