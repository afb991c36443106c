"""Student-t intervals and paired comparisons against scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ganeval.results.intervals import check_confidence, paired_comparison, t_interval


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_t_interval_matches_scipy(confidence: float) -> None:
    x = np.random.default_rng(3).normal(5.0, 2.0, size=37)
    got = t_interval(x, confidence)
    lo, hi = sps.t.interval(confidence, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
    assert got["mean"] == pytest.approx(x.mean(), rel=1e-12)
    assert got["std"] == pytest.approx(x.std(ddof=1), rel=1e-12)
    assert got["ci_low"] == pytest.approx(lo, rel=1e-12)
    assert got["ci_high"] == pytest.approx(hi, rel=1e-12)
    assert got["half_width"] == pytest.approx((hi - lo) / 2, rel=1e-12)
    assert got["n_runs"] == 37


def test_t_interval_coverage_is_nominal() -> None:
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        r = t_interval(rng.normal(1.0, 3.0, size=10), 0.9)
        hits += r["ci_low"] <= 1.0 <= r["ci_high"]
    assert 0.88 < hits / 2000 < 0.92


def test_t_interval_bad_input() -> None:
    with pytest.raises(ValueError, match="confidence"):
        t_interval([1.0, 2.0], 1.5)
    with pytest.raises(ValueError, match="empty"):
        t_interval([], 0.9)
    with pytest.raises(ValueError, match="NaN"):
        t_interval([1.0, float("nan")], 0.9)
    one = t_interval([4.0], 0.9)
    assert one["mean"] == 4.0 and np.isnan(one["ci_low"])


def test_paired_comparison_matches_scipy_ttest_rel() -> None:
    rng = np.random.default_rng(1)
    shared = rng.normal(0, 5, size=50)  # the shared real subsample's effect, large
    a = shared + rng.normal(1.0, 0.3, size=50)
    b = shared + rng.normal(0.8, 0.3, size=50)
    got = paired_comparison(a, b, 0.99)
    ref = sps.ttest_rel(a, b)
    lo, hi = ref.confidence_interval(0.99)
    assert got["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert got["ci_low"] == pytest.approx(lo, rel=1e-9)
    assert got["ci_high"] == pytest.approx(hi, rel=1e-9)
    assert got["ci_low"] > 0  # pairing removes the shared noise: A is detectably worse
    # the unpaired intervals overlap, which is why pairing matters
    ia, ib = t_interval(a, 0.99), t_interval(b, 0.99)
    assert ia["ci_low"] < ib["ci_high"]


def test_paired_comparison_length_mismatch() -> None:
    with pytest.raises(ValueError, match="same length"):
        paired_comparison([1.0, 2.0], [1.0], 0.9)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 99])
def test_check_confidence_refuses_levels_outside_0_1(confidence: float) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        check_confidence(confidence)
    check_confidence(0.99)
