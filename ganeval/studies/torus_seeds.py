"""The torus study's per-training-seed reading: one trained pair per GAN, intervals over subsamples only (the paper's
kind of interval), beside the across-seed one (`ganeval.studies.torus`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ganeval.results.seeds import SEED


def per_seed_comparison(rows: pd.DataFrame, confidence: float) -> pd.DataFrame | None:
    """Paired good − bad differences over runs within each training-seed pair (the paper's kind of interval: one
    trained model per GAN, subsamples only); None without a train_seed column."""
    from ganeval.results import compare_runs

    return compare_runs(rows, confidence) if SEED in rows.columns else None


def seed_separation(seed_cmp: pd.DataFrame | None) -> dict[str, tuple[int, int]]:
    """Per metric: (training-seed pairs whose paired good − bad difference over runs excludes 0, pairs compared)."""
    if seed_cmp is None or seed_cmp.empty:
        return {}
    return {str(m): (int((g["better"].fillna("") != "").sum()), int(len(g)))
            for m, g in seed_cmp.groupby("metric", sort=False)}


def seed_sentence(seed_cmp: pd.DataFrame | None, seeds: pd.DataFrame | None, good: str, bad: str) -> list[str]:
    """The per-training-seed pattern in words (the paper's kind of interval: one trained model per GAN), for the head
    of verdict.md beside the across-seed sentence; [] with one training seed."""
    sep = seed_separation(seed_cmp)
    if not sep or seed_cmp is None or seeds is None or SEED not in seeds.columns:  # sep: seed_cmp holds rows
        return []
    pairs = sorted(seeds[SEED].unique())
    shown = sum(pattern(seeds, good, bad, i) for i in pairs)
    conf = float(seed_cmp["confidence"].iloc[0])
    better = {str(m): dict(g["better"].fillna("").value_counts()) for m, g in seed_cmp.groupby("metric", sort=False)}
    return [f"torus: {good} vs {bad} per training seed (one trained pair each, paired by run, {conf:.0%} intervals "
            "over subsamples): " + "; ".join(
                f"{m.upper()}: {good} better in {better[m].get(good, 0)}, {bad} better in {better[m].get(bad, 0)}, "
                f"no significant difference in {n - k} of {n} pairs" for m, (k, n) in sep.items())
            + f"; the paper's pattern (FID and KID overlap, IMD separates, bad higher) in {shown} of {len(pairs)}"]


def pattern(seeds: pd.DataFrame, good: str, bad: str, i: Any) -> bool:
    """Does training-seed pair i show the paper's pattern by subsample intervals: FID and KID overlap, IMD separate
    with the bad GAN higher?"""
    cell = seeds.set_index(["model", SEED, "metric"])

    def sep(m: str) -> bool:
        a, b = cell.loc[(good, i, m)], cell.loc[(bad, i, m)]
        return bool(a.ci_high < b.ci_low or b.ci_high < a.ci_low)

    imd_up = cell.loc[(bad, i, "imd"), "mean"] > cell.loc[(good, i, "imd"), "mean"]
    return (not sep("fid")) and (not sep("kid")) and sep("imd") and bool(imd_up)
