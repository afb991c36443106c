"""Per-run rows -> summary (mean, Student-t CI per group and metric) and paired model comparisons."""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import pandas as pd

from ganeval.results.intervals import paired_comparison, t_interval

SUMMARY_STATS = ("mean", "std", "ci_low", "ci_high", "half_width", "n_runs")
PROTOCOL_COLUMNS = ("sample_size", "confidence")
# what a model-level summary adds (see results/seeds.py): the number of training seeds, what its interval
# covers, and the variance shares of one run's value
MODEL_COLUMNS = ("n_seeds", "covers", "share_seed", "share_subsample", "share_probe")
# under a named protocol: the full-set value its papers report, beside the interval (`ganeval.protocol.reported`)
FULL_SET_COLUMN = "fid_full"
# on full sets (runs = 1): a value's estimator standard error where it has one (IMD's, over its probes)
SE_COLUMN = "se"


def group_columns(rows: pd.DataFrame) -> list[str]:
    """The group columns of long-form rows: every column except run, metric and value."""
    return [c for c in rows.columns if c not in ("run", "metric", "value")]


def summary_group_columns(summary: pd.DataFrame) -> list[str]:
    """The group columns of a summary (what tables and plots label by): all but metric, statistics and protocol."""
    skip = {"metric", *SUMMARY_STATS, *PROTOCOL_COLUMNS, *MODEL_COLUMNS, FULL_SET_COLUMN, SE_COLUMN}
    return [c for c in summary.columns if c not in skip]


def _groupby(rows: pd.DataFrame, keys: Sequence[str]):
    return rows.groupby(list(keys), sort=False, dropna=False)


def floored(stats: dict[str, float], metric: object) -> dict[str, float]:
    """The t-interval cut at the least value the metric can give (`Metric.lowest`: 0 for IMD and FID): the quantity
    it estimates is at least that too, so [max(lo, lowest), hi] covers it whenever [lo, hi] does (the same confidence)
    and shows no impossible value. `half_width` stays the t half-width; KID (unbiased: its estimates go below 0) and
    names outside the registry keep the plain interval."""
    from ganeval.metrics.registry import REGISTRY

    lowest = getattr(REGISTRY.get(str(metric)), "lowest", None)
    if lowest is not None and stats["ci_low"] < lowest:  # False for NaN (one run)
        stats = {**stats, "ci_low": float(lowest)}
    return stats


def summarize_runs(rows: pd.DataFrame, confidence: float, sample_size: int) -> pd.DataFrame:
    """One row per group and metric: the group columns, metric, mean, std, ci_low, ci_high, n_runs, sample_size,
    confidence; and `se` where the rows of one run carry their values' standard errors (`rows.attrs["se"]`)."""
    if rows.empty:
        raise ValueError("rows is empty: no run finished, so there is nothing to summarise")
    keys = group_columns(rows) + ["metric"]
    out = []
    for key, g in _groupby(rows, keys):
        key = key if isinstance(key, tuple) else (key,)
        order = np.argsort(g["run"].to_numpy(), kind="stable")
        stats = floored(t_interval(g["value"].to_numpy()[order], confidence), key[-1])
        out.append({**dict(zip(keys, key)), **stats, "sample_size": int(sample_size), "confidence": float(confidence)})
    summary = pd.DataFrame(out)
    errors = rows.attrs.get(SE_COLUMN)
    if errors and rows["run"].nunique() == 1:
        found = {tuple(e.get(k) for k in keys): e[SE_COLUMN] for e in errors}
        summary[SE_COLUMN] = [found.get(tuple(r[k] for k in keys), np.nan) for _, r in summary.iterrows()]
    return summary


def compare_runs(
    rows: pd.DataFrame, confidence: float, between: str = "model", lower_is_better: bool = True
) -> pd.DataFrame:
    """Each pair of `between` values (e.g. models) per metric and remaining group: mean difference a - b with its paired-t CI.

    Pairs are matched by run (runs share their real subsample). `better` names the model whose metric is
    significantly lower at this confidence, or is empty when the interval contains 0.
    """
    within = [c for c in group_columns(rows) if c != between] + ["metric"]
    return paired_differences(rows, within, between, "run", "value", confidence, lower_is_better)


def _wide(g: pd.DataFrame, pair_by: str, between: str, value: str) -> tuple[np.ndarray, list]:
    """Rows: `pair_by` values, columns: `between` values (both in order of appearance); each cell the first value, else NaN."""
    rows, _ = pd.factorize(g[pair_by])
    cols, names = pd.factorize(g[between])
    wide = np.full((rows.max() + 1, len(names)), np.nan)
    wide[rows[::-1], cols[::-1]] = g[value].to_numpy(np.float64)[::-1]
    return wide, list(names)


def _higher_is_better(metric: object) -> bool:
    """Whether the registered metric named `metric` is better when higher (IS, precision, ...); False otherwise."""
    from ganeval.metrics.registry import REGISTRY

    m = REGISTRY.get(str(metric)) if metric is not None else None
    return bool(m is not None and m.higher_is_better)


def paired_differences(
    frame: pd.DataFrame,
    within: Sequence[str],
    between: str,
    pair_by: str,
    value: str,
    confidence: float,
    lower_is_better: bool = True,
    count: str = "n_runs",
) -> pd.DataFrame:
    """Per `within` group, each pair (a, b) of `between` values: paired-t CI of mean(a - b) over rows matched by `pair_by`.

    `better` names the significantly better of a and b (lower, or higher when not `lower_is_better`; turned
    around for a registered metric that is `higher_is_better`, e.g. IS or precision, when `within` holds
    "metric"), or is empty when the interval contains 0; `count` names the column holding the number of pairs.
    """
    if between not in frame.columns:
        raise ValueError(f"rows has no column {between!r} to compare; columns: {list(frame.columns)}")
    out = []
    for key, g in _groupby(frame, within):
        key = key if isinstance(key, tuple) else (key,)
        wide, names = _wide(g, pair_by, between, value)
        lower = lower_is_better != _higher_is_better(dict(zip(within, key)).get("metric"))
        for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
            pair = wide[:, [i, j]][~np.isnan(wide[:, [i, j]]).any(axis=1)]
            if len(pair) == 0:
                continue
            res = paired_comparison(pair[:, 0], pair[:, 1], confidence)
            better = ""
            if np.isfinite(res["ci_high"]) and res["ci_high"] < 0:
                better = a if lower else b
            elif np.isfinite(res["ci_low"]) and res["ci_low"] > 0:
                better = b if lower else a
            res[count] = res.pop("n_runs")
            out.append({**dict(zip(within, key)), "a": a, "b": b, **res, "better": better,
                        "confidence": float(confidence)})
    return with_holm_mde(pd.DataFrame(out), count)


def holm_level(comparison: pd.DataFrame) -> tuple[float, int]:
    """(level, tests): the strictest Holm step of the paired tests a comparison frame makes together, 1 − (1 −
    confidence)/tests, with tests its rows that have a p-value (one family, as the terminal and the tables state)."""
    tests = max(1, int(pd.to_numeric(comparison["p_value"], errors="coerce").notna().sum()))
    return 1.0 - (1.0 - float(comparison["confidence"].iloc[0])) / tests, tests


def with_holm_mde(comparison: pd.DataFrame, count: str = "n_runs") -> pd.DataFrame:
    """`comparison` with `mde_holm` after `mde`: the smallest difference its paired t finds with 80 % power at the Holm
    level of the frame's tests (`holm_level`, the number table.md and report.html print), where `mde` is at the
    frame's confidence for one test alone."""
    from ganeval.results.intervals import paired_t_mde

    if comparison.empty or "mde" not in comparison.columns:
        return comparison
    level, _ = holm_level(comparison)
    holm = [paired_t_mde(float(sd), int(n), level) if np.isfinite(m) else np.nan
            for sd, n, m in zip(comparison["diff_std"], comparison[count], comparison["mde"])]
    return comparison.assign(mde_holm=holm)[[*comparison.columns[:list(comparison.columns).index("mde") + 1],
                                             "mde_holm", *comparison.columns[list(comparison.columns).index("mde") + 1:]]]
