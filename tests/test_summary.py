"""Per-run rows -> summary per group and metric, and paired comparisons of models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ganeval.results.summary import compare_runs, summarize_runs, summary_group_columns


def _rows() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    recs = []
    for r in range(20):
        base = rng.normal(0, 1)
        for model, shift in (("wgan", 2.0), ("wgan_gp", 1.0), ("same", 1.0)):
            for metric in ("imd", "fid"):
                recs.append({"run": r, "data": "digits", "model": model, "metric": metric,
                             "value": base + shift + (0.0 if model != "same" else 1e-3 * rng.normal())})
    return pd.DataFrame(recs)


def test_summarize_runs_groups_and_values() -> None:
    rows = _rows()
    s = summarize_runs(rows, 0.99, 1000)
    assert list(s.columns[:3]) == ["data", "model", "metric"]
    assert len(s) == 6
    one = s[(s.model == "wgan") & (s.metric == "fid")].iloc[0]
    vals = rows[(rows.model == "wgan") & (rows.metric == "fid")]["value"]
    assert one["mean"] == pytest.approx(vals.mean())
    assert one["n_runs"] == 20 and one["sample_size"] == 1000 and one["confidence"] == 0.99


def test_compare_runs_pairs_by_run() -> None:
    c = compare_runs(_rows(), 0.99)
    assert len(c) == 6  # 3 pairs x 2 metrics
    first = c[(c.a == "wgan") & (c.b == "wgan_gp") & (c.metric == "imd")].iloc[0]
    assert first["diff_mean"] == pytest.approx(1.0)
    assert first["better"] == "wgan_gp"
    tie = c[(c.a == "wgan_gp") & (c.b == "same") & (c.metric == "imd")].iloc[0]
    assert tie["better"] == ""
    with pytest.raises(ValueError, match="no column"):
        compare_runs(_rows(), 0.99, between="sigma")


def test_summary_group_columns_leave_out_statistics_and_protocol() -> None:
    s = summarize_runs(_rows(), 0.99, 1000)
    assert summary_group_columns(s) == ["data", "model"]


def test_compare_runs_matches_pairs_by_run_not_by_row_position() -> None:
    """One model's rows stored in reverse run order and one of its runs missing: the pairs are still matched by
    `run`, and the interval is scipy's paired t over the runs both models have."""
    from scipy import stats

    runs = np.arange(8)
    base = 10.0 * runs  # a run-to-run spread far larger than the difference: a mismatched pair shows at once
    a = base + 2.0 + 0.01 * np.sin(runs)
    b = base + 1.0 + 0.01 * np.cos(runs)
    rows = pd.DataFrame([{"run": r, "model": "a", "metric": "imd", "value": a[r]} for r in runs]
                        + [{"run": r, "model": "b", "metric": "imd", "value": b[r]} for r in runs[::-1] if r != 3])
    got = compare_runs(rows, 0.95).iloc[0]
    both = runs[runs != 3]
    d = a[both] - b[both]
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    assert (got["a"], got["b"], got["n_runs"]) == ("a", "b", 7)
    assert got["diff_mean"] == pytest.approx(d.mean(), rel=1e-12)
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-9)
    assert got["p_value"] == pytest.approx(stats.ttest_rel(a[both], b[both]).pvalue, rel=1e-9)
    assert got["better"] == "b"
