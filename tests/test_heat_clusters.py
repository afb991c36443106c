"""(issue #36) The paper's "dh̃(t)/dt reflects the approximate number of clusters": the rule on synthetic slopes,
and the committed reference's ρ recomputed from its runs.csv by hand (ranks by numpy, no scipy)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE
from ganeval.studies import heat_clusters as hc

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "heat_clusters"


def rows_from(slope: np.ndarray) -> pd.DataFrame:
    """runs.csv rows whose slope over LARGE_T is slope[run, k − 1] (h̃ = 0 at t = 10, slope·ln 10 at t = 100)."""
    out = []
    for r in range(slope.shape[0]):
        for k in range(1, slope.shape[1] + 1):
            out += [{"run": r, "classes": k, "t": 10.0, "value": 0.0},
                    {"run": r, "classes": k, "t": 100.0, "value": float(slope[r, k - 1] * np.log(10.0))}]
    return pd.DataFrame(out)


def test_the_rule_on_synthetic_slopes() -> None:
    rng = np.random.default_rng(0)
    k = np.arange(1, 11, dtype=float)
    assert hc.decide(rows_from(k + rng.normal(0, 0.3, (12, 10))), 0.99)[0].verdict == HOLDS
    assert hc.decide(rows_from(-k + rng.normal(0, 0.3, (12, 10))), 0.99)[0].verdict == HOLDS  # falling reflects too
    assert hc.decide(rows_from(rng.normal(0, 1, (30, 10))), 0.99)[0].verdict == CONTRADICTED  # ρ near 0
    noisy = hc.decide(rows_from(k + rng.normal(0, 4.0, (4, 10))), 0.99)[0]  # 4 runs of a middling ρ: undecided
    assert noisy.verdict == NOT_TESTABLE and noisy.detectable


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    rank = lambda a: np.argsort(np.argsort(a)).astype(float)  # noqa: E731  (no ties in these slopes)
    return float(np.corrcoef(rank(x), rank(y))[0, 1])


def test_reference_rho_recomputed() -> None:
    from scipy import stats

    rows = pd.read_csv(REFERENCE / "runs.csv")
    assert sorted(rows.classes.unique()) == list(range(1, 11)) and rows.run.nunique() == 20
    w = rows.pivot_table(index=["run", "classes"], columns="t", values="value")
    t = np.asarray(sorted(rows.t.unique()))
    lo, hi = t[np.argmin(np.abs(np.log(t / 10)))], t[np.argmin(np.abs(np.log(t / 100)))]
    slope = ((w[hi] - w[lo]) / np.log(hi / lo)).unstack("classes")
    rho = np.array([spearman(slope.columns.to_numpy(), slope.loc[r].to_numpy()) for r in slope.index])
    hw = stats.t.ppf(0.995, len(rho) - 1) * rho.std(ddof=1) / np.sqrt(len(rho))
    claim, per_k = hc.decide(rows, 0.99)
    assert f"ρ = {rho.mean():.3f} [{rho.mean() - hw:.3f}, {rho.mean() + hw:.3f}]" in claim.evidence
    assert claim.verdict == (HOLDS if abs(rho.mean()) - hw > 0.8 else CONTRADICTED if abs(rho.mean()) + hw < 0.8
                             else NOT_TESTABLE)
    np.testing.assert_allclose(per_k["mean"], slope.mean(axis=0).to_numpy(), rtol=1e-12)
    assert (REFERENCE / "verdict.md").read_text().splitlines()[2].startswith(
        f"heat-trace slope reflects the number of clusters (Spearman ρ between the number of digit classes k = 1..10")


def test_measure_draws_each_set_and_refuses_a_small_pool() -> None:
    rows = hc.measure(sample_size=40, runs=2, classes=(1, 3))
    assert len(rows) == 2 * 2 * len(hc.T_GRID) and np.isfinite(rows.value).all()
    a, b = (rows[(rows.classes == 3) & (rows.run == r)].value.to_numpy() for r in (0, 1))
    assert not np.allclose(a, b)  # two runs, two subsamples
    with pytest.raises(ValueError, match="fewer than sample_size=500"):
        hc.measure(sample_size=500, runs=1, classes=(1,))
