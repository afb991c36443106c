"""(issue #56) Each study rule on intervals placed just inside, across and just outside its threshold, so that a
wrong statistic (the mean for an interval's end, one end for the other) or a moved boundary changes the label.
The existing rule tests use effects so strong that a wrong rule gives the same label (the audit planted eight such
bugs; five passed every rule test). The data are built so that each interval is exactly where the test says
(`exact`); each test names the rule and threshold it checks, to be adapted when a rule changes. The rules of
scalability, er_normalisation, wordvec_dims and nn_internals were rewritten by #55 (thresholds with their source,
labels across a declared range): tests/test_study_rules.py tests those the same way, at and around each threshold."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ganeval.results import t_interval
from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE

CONF = 0.99


def exact(center: float, half_width: float, n: int) -> np.ndarray:
    """n values whose Student-t interval at CONF is exactly center ± half_width (alternating deviations)."""
    z = np.resize([-1.0, 1.0], n)
    z = (z - z.mean()) / z.std(ddof=1)
    values = center + half_width * np.sqrt(n) / stats.t.ppf((1 + CONF) / 2, n - 1) * z
    iv = t_interval(values, CONF)
    assert iv["ci_low"] == pytest.approx(center - half_width) and iv["ci_high"] == pytest.approx(center + half_width)
    return values


# (center, half-width) of an interval, and the label it must get, around each threshold
def _around(t: float, step: float, inside_above: bool) -> list[tuple[float, float, str]]:
    """Intervals (center, half-width `step`) wholly on the holding side of threshold `t`, straddling it with the
    mean on either side, and wholly on the other side."""
    sign = 1.0 if inside_above else -1.0
    return [(t + sign * 2.5 * step, step, HOLDS), (t + sign * 0.5 * step, step, NOT_TESTABLE),
            (t - sign * 0.5 * step, step, NOT_TESTABLE), (t - sign * 2.5 * step, step, CONTRADICTED)]


# ----------------------------------------------------------------------------------------------- heat_clusters
def _swapped(*pairs: tuple[int, int]) -> np.ndarray:
    """1..10 with the given positions swapped: Spearman ρ with 1..10 is 1 − 6·Σd²/990."""
    p = np.arange(1.0, 11.0)
    for i, j in pairs:
        p[[i, j]] = p[[j, i]]
    return p


RHO = {  # Σd² → the permutation of the counts (ρ = 1 − 6 Σd² / 990)
    28: _swapped((0, 3), (4, 6), (7, 8)), 32: _swapped((0, 4)), 36: _swapped((0, 4), (5, 6), (7, 8)),
    40: _swapped((0, 4), (5, 7)),
}


@pytest.mark.parametrize("a, b, want", [(28, 32, HOLDS), (28, 36, NOT_TESTABLE), (28, 40, NOT_TESTABLE),
                                        (36, 40, CONTRADICTED)])
def test_heat_clusters_rho_against_the_strong_threshold(a: int, b: int, want: str) -> None:
    """ρ(k, ĉ) per run alternates between two permutations' values around 0.8 (0.830, 0.806, 0.782, 0.758): over
    12 runs [0.807, 0.829], [0.783, 0.829] (mean above 0.8), [0.760, 0.828] (mean below), [0.759, 0.781]."""
    from test_heat_clusters import rows_from

    from ganeval.studies import heat_clusters as hc

    for s, p in RHO.items():
        assert stats.spearmanr(np.arange(10), p).statistic == pytest.approx(1 - 6 * s / 990)
    counts = np.stack([RHO[a] if r % 2 else RHO[b] for r in range(12)])
    reflects = hc.decide(rows_from(counts), CONF)[0][0]
    assert reflects.verdict == want, reflects.evidence


@pytest.mark.parametrize("center, hw, want", _around(2.0, 0.03, False) + _around(0.5, 0.03, True))
def test_heat_clusters_count_within_a_factor_of_two(center: float, hw: float, want: str) -> None:
    from test_heat_clusters import rows_from

    from ganeval.studies import heat_clusters as hc

    k = np.arange(1.0, 11.0)
    counts = np.outer(exact(center, hw, 8), k)  # every class's ratio ĉ/k: that interval
    reflects, approx = hc.decide(rows_from(counts), CONF)[0]
    assert reflects.verdict == HOLDS and approx.verdict == want, approx.evidence


@pytest.mark.parametrize("low, high", [(0.4, 0.5), (2.0, 2.1)])
def test_heat_clusters_a_count_interval_ending_at_the_factor_is_not_outside(
        low: float, high: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule "outside a factor of 2" is strict (ĉ/k's interval below 1/2 or above 2); "inside" includes its ends.
    An interval ending exactly at 1/2 or starting exactly at 2 straddles nothing and excludes nothing: not testable.
    (Bug: `ci_high < 1 / FACTOR` → `<=`.) The interval is placed exactly by standing in for the t interval."""
    import ganeval.results
    from test_heat_clusters import rows_from

    from ganeval.studies import heat_clusters as hc

    fixed = {"mean": (low + high) / 2, "std": 0.1, "ci_low": low, "ci_high": high, "half_width": (high - low) / 2,
             "n_runs": 8}
    monkeypatch.setattr(ganeval.results, "t_interval", lambda values, confidence: dict(fixed))
    counts = np.outer(np.full(8, 1.0), np.arange(1.0, 11.0))
    approx = hc.decide(rows_from(counts), CONF)[0][1]
    assert approx.verdict == NOT_TESTABLE, approx.evidence
