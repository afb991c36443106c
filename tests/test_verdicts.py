"""The verdict vocabulary: Holm's correction, the minimum detectable effect of a paired t, and Claim's rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ganeval.results.intervals import paired_comparison, paired_t_mde
from ganeval.results.verdicts import (
    BETTER,
    CONTRADICTED,
    HOLDS,
    NOT_TESTABLE,
    Claim,
    claims_table,
    holm,
    holm_adjust,
)


def test_holm_adjust_by_hand() -> None:
    # sorted 0.01, 0.02, 0.04 (m = 3): 3·0.01 = 0.03, max(0.03, 2·0.02) = 0.04, max(0.04, 1·0.04) = 0.04
    np.testing.assert_allclose(holm_adjust([0.04, 0.01, float("nan"), 0.02]), [0.04, 0.03, np.nan, 0.04])
    np.testing.assert_allclose(holm_adjust([0.5, 0.9]), [1.0, 1.0])  # capped at 1, monotone
    assert np.isnan(holm_adjust([float("nan")])).all()


def test_holm_adjust_matches_a_direct_stepdown() -> None:
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 0.05, 12)
    order = np.argsort(p)
    direct = np.empty_like(p)
    prev = 0.0
    for r, i in enumerate(order):  # Holm (1979): reject while p_(r) <= alpha / (m - r)
        prev = max(prev, (len(p) - r) * p[i])
        direct[i] = min(prev, 1.0)
    np.testing.assert_allclose(holm_adjust(p), direct)
    for alpha in (0.01, 0.02, 0.05):  # the rejections equal the step-down procedure's
        rejected = set()
        for r, i in enumerate(order):
            if p[i] > alpha / (len(p) - r):
                break
            rejected.add(int(i))
        assert rejected == {int(i) for i in np.flatnonzero(holm_adjust(p) <= alpha)}


def test_paired_t_mde_has_the_stated_power() -> None:
    for n, std in ((10, 2.0), (30, 0.5), (100, 1.0)):
        mde = paired_t_mde(std, n, 0.99, 0.8)
        df, crit = n - 1, stats.t.ppf(0.995, n - 1)
        delta = mde / (std / math.sqrt(n))  # noncentrality at a true mean difference of mde
        power = stats.nct.sf(crit, df, delta) + stats.nct.cdf(-crit, df, delta)
        assert 0.78 < power < 0.83, (n, power)
    assert math.isnan(paired_t_mde(1.0, 1, 0.99))


def test_paired_comparison_carries_the_mde() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=20), rng.normal(size=20)
    res = paired_comparison(a, b, 0.99)
    assert res["mde"] == pytest.approx(paired_t_mde(np.std(a - b, ddof=1), 20, 0.99))
    assert res["mde"] > res["half_width"]  # 80 % power needs more than just reaching the interval's edge


def test_holm_turns_a_missed_decision_into_not_testable() -> None:
    claims = [Claim("a", "x", HOLDS, "paired t", "any", p_value=0.004, detectable="1.0"),
              Claim("b", "y", CONTRADICTED, "paired t", "any", p_value=0.009, detectable="2.0"),
              Claim("c", "z", HOLDS, "bound", "≤ 1e-3", vs_paper=BETTER)]
    out = holm(claims, 0.99)
    # uncorrected both pass 0.01; Holm: 2·0.004 = 0.008 passes, 1·0.009 = 0.009 passes too ...
    assert [c.verdict for c in out] == [HOLDS, CONTRADICTED, HOLDS]
    assert out[0].p_holm == pytest.approx(0.008) and out[1].p_holm == pytest.approx(0.009)
    out = holm([*claims, Claim("d", "w", HOLDS, "paired t", "any", p_value=0.0049, detectable="3.0")], 0.99)
    # ... but with a third test: 3·0.004 = 0.012 > 0.01, so all three (step-down stops at the first) miss it
    assert [c.verdict for c in out] == [NOT_TESTABLE, NOT_TESTABLE, HOLDS, NOT_TESTABLE]
    assert out[1].vs_paper == "–"
    assert math.isnan(out[2].p_holm)
    text = claims_table(out, 0.99)
    assert "**not testable here**" in text and "Holm" in text and "| c | **holds** | bound | ≤ 1e-3 |" in text


def test_claim_refuses_unknown_words_and_untestable_without_effect() -> None:
    with pytest.raises(ValueError, match="verdict must be one of"):
        Claim("a", "x", "does not hold", "r", "t")
    with pytest.raises(ValueError, match="smallest effect"):
        Claim("a", "x", NOT_TESTABLE, "r", "t")
    assert Claim("a", "x", HOLDS, "r", "t").record()["p_value"] is None


def test_every_paired_comparison_in_a_table_shows_its_detectable_effect() -> None:
    import pandas as pd

    from ganeval.results import compare_runs, summarize_runs, table_markdown

    rng = np.random.default_rng(2)
    rows = pd.DataFrame([{"run": r, "model": m, "metric": "fid", "value": v + rng.normal()}
                         for r in range(12) for m, v in (("a", 10.0), ("b", 10.2))])
    cmp_ = compare_runs(rows, 0.99)
    d = rows[rows.model == "a"].value.to_numpy() - rows[rows.model == "b"].value.to_numpy()
    mde = paired_t_mde(d.std(ddof=1), 12, 0.99)
    md = table_markdown(summarize_runs(rows, 0.99, 100), cmp_)
    line = next(ln for ln in md.splitlines() if ln.startswith("- FID: a − b"))
    assert f"smallest detectable {mde:.3g} (12 runs): undecided" in line


def test_holm_does_not_count_stand_in_claims() -> None:
    """A stand-in claim tests nothing: it keeps no corrected p-value and does not raise the others' (counted, it
    would double the p-value 0.006 to 0.012 > 0.01 and turn the one real decision into not testable)."""
    from ganeval.results.verdicts import STAND_IN

    real = Claim("real", "x", HOLDS, "paired t", "any", p_value=0.006, detectable="1.0")
    for stand_p in (0.001, 0.5):  # the example (below the real p), and one above it
        stand = Claim("stand", "y", STAND_IN, "paired t", "any", p_value=stand_p, detectable="2.0")
        out = holm([stand, real], 0.99)
        assert [c.verdict for c in out] == [STAND_IN, HOLDS]
        assert math.isnan(out[0].p_holm) and out[1].p_holm == pytest.approx(0.006, rel=1e-12)


def test_claims_table_prints_p_values_to_two_digits_down_to_1e_4() -> None:
    """p-values show with two significant digits from 1e-4 up, and as "<1e-4" only below it (a p of 0.00015 printed
    as "<1e-4" would claim more than the data)."""
    claims = [Claim("a", "x", HOLDS, "paired t", "any", p_value=0.00015, detectable="1.0"),
              Claim("b", "y", HOLDS, "paired t", "any", p_value=0.00005, detectable="1.0"),
              Claim("c", "z", HOLDS, "paired t", "any", p_value=0.0001, detectable="1.0")]
    out = holm(claims, 0.99)  # Holm: 3·0.00005, 2·0.0001, then 0.0002 (monotone)
    text = claims_table(out, 0.99)
    assert "| 0.00015 (0.0002) |" in text and "| <1e-4 (0.00015) |" in text and "| 0.0001 (0.0002) |" in text
