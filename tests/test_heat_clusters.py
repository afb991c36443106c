"""(issues #36, #46) The paper's "dh̃(t)/dt reflects the approximate number of clusters": the count read from the
derivative on graphs of known components, the rules on synthetic counts, and the committed reference's numbers
recomputed from its runs.csv by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE
from ganeval.studies import heat_clusters as hc

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "heat_clusters"


def test_the_count_read_is_the_number_of_far_apart_blobs() -> None:
    """c tight blobs far apart make a k-NN graph of c components: ĉ at t = 100 is c (to the small eigenvalues'
    share), whatever n, because the derivative is divided by the one-component graph's of the same n."""
    from ganeval.metrics import heat_trace

    rng = np.random.default_rng(0)
    rows = []
    for c in (1, 2, 4):
        x = np.concatenate([rng.normal(0, 1, (60, 8)) + 1000 * i for i in range(c)])
        h = heat_trace(x, t=hc.t_points(), k=hc.K, method="exact", normalization="er", seed=0)
        rows += [{"run": 0, "classes": c, "n": len(x), "cross_edges": 0.0, "t": t, "value": v}
                 for t, v in zip(hc.t_points(), h)]
    got = hc.counts(pd.DataFrame(rows)).query("t == 100").set_index("classes")["count"]
    np.testing.assert_allclose(got.to_numpy(), [1, 2, 4], rtol=0.02)


def rows_from(count: np.ndarray) -> pd.DataFrame:
    """runs.csv rows whose count read at every large t is count[run, k − 1] (h̃ = count × the null's h̃₁)."""
    from ganeval.metrics.imd import SCALE, normalize_trace

    out = []
    ts = hc.t_points()
    for r in range(count.shape[0]):
        for k in range(1, count.shape[1] + 1):
            null = normalize_trace(np.ones(len(ts)), "er", 100 * k, hc.K, ts) * SCALE
            out += [{"run": r, "classes": k, "n": 100 * k, "cross_edges": 0.0, "t": t, "value": count[r, k - 1] * v}
                    for t, v in zip(ts, null)]
    return pd.DataFrame(out)


def test_the_rules_on_synthetic_counts() -> None:
    rng = np.random.default_rng(0)
    k = np.arange(1, 11, dtype=float)
    reflects, approx = hc.decide(rows_from(k * (1 + rng.normal(0, 0.02, (12, 10)))), 0.99)[0]
    assert reflects.verdict == HOLDS and approx.verdict == HOLDS
    falling = hc.decide(rows_from(11 - k + rng.normal(0, 0.1, (12, 10))), 0.99)[0]
    assert falling[0].verdict == CONTRADICTED  # a falling count does not reflect the number of clusters
    far = hc.decide(rows_from(3 * k * (1 + rng.normal(0, 0.02, (12, 10)))), 0.99)[0]
    assert far[0].verdict == HOLDS and far[1].verdict == CONTRADICTED  # rises, but 3× the count
    noisy = hc.decide(rows_from(k + rng.normal(0, 4.0, (4, 10))), 0.99)[0][0]  # 4 runs of a middling ρ
    assert noisy.verdict == NOT_TESTABLE and noisy.detectable


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    rank = lambda a: np.argsort(np.argsort(a)).astype(float)  # noqa: E731  (no ties in these counts)
    return float(np.corrcoef(rank(x), rank(y))[0, 1])


def test_reference_recomputed() -> None:
    """ρ and ĉ from runs.csv by hand: the central difference of h̃ over that of 1/ER (numpy), ranks by numpy."""
    from scipy import stats

    rows = pd.read_csv(REFERENCE / "runs.csv")
    assert sorted(rows.classes.unique()) == list(range(1, 11)) and rows.run.nunique() == 20
    assert (rows.n == 150 * rows.classes).all() and rows.cross_edges.max() < 0.05  # classes are clusters
    lo, hi = 100 * (1 - hc.STEP), 100 * (1 + hc.STEP)
    w = rows.pivot_table(index=["run", "classes", "n"], columns="t", values="value")
    a, b = (w[w.columns[np.argmin(np.abs(w.columns - x))]] for x in (lo, hi))
    n = w.index.get_level_values("n").to_numpy()
    lam = [np.linspace(0, 1, m) * 4 / np.sqrt(5) + 1 - 2 / np.sqrt(5) for m in n]
    er = lambda t: np.array([np.exp(-t * s).sum() for s in lam]) + 1e-6  # noqa: E731
    count = pd.Series((b - a).to_numpy() / (1e6 / er(hi) - 1e6 / er(lo)), index=w.index).droplevel("n").unstack()
    rho = np.array([spearman(count.columns.to_numpy(), count.loc[r].to_numpy()) for r in count.index])
    hw = stats.t.ppf(0.995, len(rho) - 1) * rho.std(ddof=1) / np.sqrt(len(rho))
    claims, per_k = hc.decide(rows, 0.99)
    assert f"ρ = {rho.mean():.3f} [{rho.mean() - hw:.3f}, {rho.mean() + hw:.3f}]" in claims[0].evidence
    assert claims[0].verdict == (HOLDS if rho.mean() - hw > 0.8 else CONTRADICTED if rho.mean() + hw < 0.8
                                 else NOT_TESTABLE)
    at = per_k[per_k.t == 100].set_index("classes")
    np.testing.assert_allclose(at["mean"].to_numpy(), count.mean(axis=0).to_numpy(), rtol=1e-9)
    assert (REFERENCE / "verdict.md").read_text().splitlines()[2].startswith(
        "dh̃/dt at large t rises with the number of clusters (Spearman ρ between the number of digit classes k = 1..10")


def test_measure_draws_each_class_and_refuses_too_many_rows() -> None:
    rows = hc.measure(per_class=20, runs=2, classes=(1, 3))
    assert len(rows) == 2 * 2 * len(hc.t_points()) and np.isfinite(rows.value).all()
    assert set(rows[rows.classes == 3].n) == {60}
    a, b = (rows[(rows.classes == 3) & (rows.run == r)].value.to_numpy() for r in (0, 1))
    assert not np.allclose(a, b)  # two runs, two subsamples
    with pytest.raises(ValueError, match="per_class must lie in 2..174"):
        hc.measure(per_class=500, runs=1, classes=(1,))
