"""Training seeds as a level of the protocol: per-(model, seed) summaries -> per-model summaries and comparisons.

Per (model, seed) the interval is the one-level Student-t interval over subsample runs (`summarize_runs`, with
`train_seed` one more group column). Per model the value is the mean over seeds of the per-seed means, with
a Student-t interval across seeds (S - 1 degrees of freedom): it covers training variation and subsampling
together. Models are compared by the per-seed mean differences paired by seed index (seed s of A and seed s
of B share their real subsamples), t over seeds. With one seed the model row keeps the subsample interval
and says that training variation is not covered, and models are compared by run (`compare_runs`).

The variance of one run's value is split into training seeds, subsampling and (IMD) probes by a one-way
random-effects ANOVA over seeds; the probe part comes from a few rows that score a second probe draw
(`probe_draw` = 1) on the subsample of a run that also has its ordinary row (`probe_draw` = 0).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ganeval.results.intervals import COVERAGE_NOTE, t_interval
from ganeval.results.summary import (
    MODEL_COLUMNS,
    PROTOCOL_COLUMNS,
    compare_runs,
    group_columns,
    paired_differences,
    summarize_runs,
    summary_group_columns,
)

SEED = "train_seed"  # the group column naming a model's training seed (or replica)
PROBE = "probe_draw"  # optional column: 0 for every run's row, 1 for a repeated-probe row on the same subsample
COVERS_SEEDS = "training seeds and subsamples"
COVERS_SUBSAMPLES = "subsamples only: one training seed, training variation not covered"
SEEDS_COVERAGE_NOTE = (
    "Each interval is a Student-t confidence interval across training seeds of the per-seed means over runs; "
    "it covers the variation between training runs together with the variation over random subsamples of the "
    "real and generated pools and over IMD's random probes, not the variation over the real pool itself."
)
SEEDS_FILE = "summary_seeds.csv"  # the per-(model, seed) summary beside summary.csv (the model level)
SHARES = ("share_seed", "share_subsample", "share_probe")


def split_probe_draws(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the runs' rows, the repeated-probe rows): rows without a `probe_draw` column are all runs' rows."""
    if PROBE not in rows.columns:
        return rows, rows.iloc[:0]
    extra = rows[PROBE].fillna(0).astype(int) != 0
    return rows[~extra].drop(columns=PROBE), rows[extra]


def probe_variance(rows: pd.DataFrame, probe_rows: pd.DataFrame) -> pd.DataFrame:
    """Per model (all group columns but `train_seed`) and metric: var_probe = mean((draw 1 - draw 0)^2) / 2 and n_probe_pairs."""
    keys = [c for c in group_columns(rows) if c != SEED] + ["metric"]
    if probe_rows.empty:
        return pd.DataFrame(columns=[*keys, "var_probe", "n_probe_pairs"])
    on = [c for c in group_columns(rows)] + ["metric", "run"]
    pairs = rows.merge(probe_rows.drop(columns=PROBE), on=on, suffixes=("", "_again"))
    pairs["d2"] = (pairs["value_again"] - pairs["value"]) ** 2 / 2.0
    g = pairs.groupby(keys, sort=False, dropna=False)["d2"]
    return pd.DataFrame({"var_probe": g.mean(), "n_probe_pairs": g.size()}).reset_index()


def variance_components(seed_summary: pd.DataFrame, probe: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model and metric: the variance of one run's value due to seeds, subsampling and probes, and their shares.

    `seed_summary` holds one row per (model, seed, metric) with mean, std and n_runs. One-way random-effects
    ANOVA: var_seed = max(0, (MSB - MSW) / n0) (n0 the runs per seed, adjusted when unbalanced; 0 with one
    seed); var_probe from `probe` (see `probe_variance`; 0 when absent, capped at MSW); var_subsample =
    MSW - var_probe. The shares sum to 1, each in [0, 1]; they are NaN only when no seed has two runs.
    """
    keys = [c for c in summary_group_columns(seed_summary) if c != SEED] + ["metric"]
    n = seed_summary["n_runs"].astype(float)
    s = seed_summary[keys].assign(_n=n, _nm=n * seed_summary["mean"], _n2=n**2,
                                  _ss=((n - 1) * seed_summary["std"].fillna(0.0) ** 2).where(n > 1, 0.0))
    grand = s.groupby(keys, sort=False, dropna=False)
    s["_sb"] = n * (seed_summary["mean"] - grand["_nm"].transform("sum") / grand["_n"].transform("sum")) ** 2
    out = s.groupby(keys, sort=False, dropna=False).agg(
        n_seeds=("_n", "size"), _N=("_n", "sum"), _n2=("_n2", "sum"), _ss=("_ss", "sum"), _sb=("_sb", "sum")
    ).reset_index()
    S, N = out["n_seeds"].to_numpy(float), out["_N"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        msw = np.where(N > S, out["_ss"] / (N - S), np.nan)
        msb = out["_sb"].to_numpy() / np.maximum(S - 1, 1)
        n0 = (N - out["_n2"].to_numpy() / N) / np.maximum(S - 1, 1)
        var_seed = np.where(S > 1, np.maximum(0.0, (msb - msw) / n0), 0.0)
    probe = probe if probe is not None else pd.DataFrame(columns=[*keys, "var_probe", "n_probe_pairs"])
    out = out.merge(probe.astype({k: out[k].dtype for k in keys}), on=keys, how="left", sort=False)
    var_probe = np.minimum(np.nan_to_num(out["var_probe"].to_numpy(float)), msw)
    out["n_probe_pairs"] = out["n_probe_pairs"].fillna(0).astype(int)
    out["var_seed"], out["var_probe"], out["var_subsample"] = var_seed, var_probe, msw - var_probe
    total = var_seed + msw
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, part, empty in (("share_seed", var_seed, 0.0), ("share_subsample", msw - var_probe, 1.0),
                                  ("share_probe", var_probe, 0.0)):
            out[name] = np.where(total > 0, np.clip(part / total, 0.0, 1.0), np.where(np.isnan(total), np.nan, empty))
    return out[keys + ["n_seeds", *SHARES, "var_seed", "var_subsample", "var_probe", "n_probe_pairs"]]


def summarize_seeds(
    seed_summary: pd.DataFrame, confidence: float, variance: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The model-level summary of a per-(model, seed) summary: mean over seeds of the per-seed means, t across seeds.

    Columns: the group columns but `train_seed`, metric, mean, std (of the per-seed means), ci_low, ci_high,
    half_width, n_runs (runs per seed, the fewest), n_seeds, sample_size, confidence, covers, and the shares
    of `variance` (`variance_components`, computed without probe rows when not given). A model with one seed keeps its subsample interval and
    covers = COVERS_SUBSAMPLES; a summary without a `train_seed` column is one seed per model.
    """
    if seed_summary.empty:
        raise ValueError("seed_summary is empty: no run finished, so there is nothing to summarise")
    keys = [c for c in summary_group_columns(seed_summary) if c != SEED] + ["metric"]
    protocol = {c: seed_summary[c].iloc[0] for c in PROTOCOL_COLUMNS if c in seed_summary.columns}
    out = []
    for key, g in seed_summary.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        if len(g) == 1:
            stats = {c: g.iloc[0][c] for c in ("mean", "std", "ci_low", "ci_high", "half_width")}
            covers = COVERS_SUBSAMPLES
        else:
            stats = t_interval(g["mean"].to_numpy(), confidence)
            del stats["n_runs"]
            covers = COVERS_SEEDS
        out.append({**dict(zip(keys, key)), **stats, "n_runs": int(g["n_runs"].min()), "n_seeds": len(g),
                    **protocol, "confidence": float(confidence), "covers": covers})
    model = pd.DataFrame(out)
    variance = variance_components(seed_summary) if variance is None else variance
    return model.merge(variance[keys + list(SHARES)], on=keys, how="left", sort=False)


def compare_seeds(
    seed_summary: pd.DataFrame, confidence: float, between: str = "model", lower_is_better: bool = True
) -> pd.DataFrame:
    """Each pair of models per metric and dataset: mean over seeds of the per-seed mean differences a - b, paired by seed, t over seeds.

    Columns as `compare_runs`, with n_seeds (the seeds both models have) in place of n_runs; `better` only
    when the interval excludes 0. Needs a `train_seed` column.
    """
    if SEED not in seed_summary.columns:
        raise ValueError(f"seed_summary has no column {SEED!r}: give a per-(model, seed) summary")
    within = [c for c in summary_group_columns(seed_summary) if c not in (between, SEED)] + ["metric"]
    return paired_differences(seed_summary, within, between, SEED, "mean", confidence, lower_is_better, "n_seeds")


def several_seeds(frame: pd.DataFrame) -> bool:
    """Whether `frame` (rows or a per-seed summary) holds more than one training seed."""
    return SEED in frame.columns and frame[SEED].nunique() > 1


class Levels(NamedTuple):
    """The two levels of a summary: per (model, seed), per model, the comparison of models, the variance parts."""

    seeds: pd.DataFrame
    summary: pd.DataFrame
    comparison: pd.DataFrame
    variance: pd.DataFrame


def summarize_levels(rows: pd.DataFrame, confidence: float, sample_size: int, between: str = "model") -> Levels:
    """Long-form per-run rows -> Levels(per-(model, seed) summary, model-level summary, comparison, variance parts).

    The comparison pairs by seed when some model has several seeds, else by run (`compare_runs`, the
    one-level numbers); it is empty when there is no `between` column or a single model. Repeated-probe rows
    (`probe_draw` = 1) only feed the probe share of the variance.
    """
    runs, probe_rows = split_probe_draws(rows)
    seeds = summarize_runs(runs, confidence, sample_size)
    variance = variance_components(seeds, probe_variance(runs, probe_rows))
    model = summarize_seeds(seeds, confidence, variance)
    if between not in runs.columns or runs[between].nunique() < 2:
        comparison = pd.DataFrame()
    elif several_seeds(seeds):
        comparison = compare_seeds(seeds, confidence, between)
    else:
        comparison = compare_runs(runs, confidence, between)
    return Levels(seeds, model, comparison, variance)


def coverage_note(summary: pd.DataFrame) -> str:
    """What the intervals of a (model-level) summary cover: across seeds, subsamples only, or both kinds named."""
    covers = set(summary["covers"]) if "covers" in summary.columns else {COVERS_SUBSAMPLES}
    if covers == {COVERS_SEEDS}:
        return SEEDS_COVERAGE_NOTE
    if covers == {COVERS_SUBSAMPLES}:
        return COVERAGE_NOTE
    return (f"Rows with several training seeds: {SEEDS_COVERAGE_NOTE} Rows with one training seed: {COVERAGE_NOTE}")


def variance_record(variance: pd.DataFrame) -> list[dict[str, Any]]:
    """The variance parts (`variance_components`) as JSON records, for RunRecord.variance_shares."""
    return json.loads(variance.to_json(orient="records"))


__all__ = [
    "COVERS_SEEDS",
    "COVERS_SUBSAMPLES",
    "Levels",
    "MODEL_COLUMNS",
    "PROBE",
    "SEED",
    "SEEDS_COVERAGE_NOTE",
    "SEEDS_FILE",
    "compare_seeds",
    "coverage_note",
    "probe_variance",
    "several_seeds",
    "split_probe_draws",
    "summarize_levels",
    "summarize_seeds",
    "variance_components",
    "variance_record",
]
