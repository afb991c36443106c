"""Merge the job directories of a sweep into one summary and table (`ganeval-collate DIR`, `ganeval.app.collate`).

Every `summary.json` under DIR is a job. Jobs must share one protocol (sample size, confidence,
extractor and weights, metric options, kNN method); otherwise collating is refused with the difference
named. The overrides that differ between jobs become extra group columns (e.g. `gan.epochs`); an override
of the training seed (`seed`, `train_seed` or `train_seeds`, one value per job) becomes the `train_seed`
level instead, and the collated summary is then the two-level one of `results/seeds.py`: summary.csv per
model (mean over seeds, t interval across seeds), summary_seeds.csv per (model, seed), comparison.csv paired
by seed, tables bold only where that comparison says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ganeval.hashing import cut_short_form
from ganeval.results.files import write_csv
from ganeval.results.record import RunRecord
from ganeval.results.seeds import (
    SEED,
    SEEDS_FILE,
    Levels,
    compare_seeds,
    several_seeds,
    summarize_seeds,
    variance_components,
)
from ganeval.results.summary import MODEL_COLUMNS
from ganeval.results.tables import write_tables

SEED_OVERRIDES = ("seed", SEED, "train_seeds")  # overrides that name the training seed of a job


def _override_dict(record: RunRecord) -> dict[str, str]:
    """The job's Hydra overrides as key -> value (group prefixes + and ~ dropped)."""
    out = {}
    for o in record.overrides or []:
        if "=" in o:
            k, v = o.split("=", 1)
            out[k.lstrip("+~")] = v
    return out


def find_jobs(root: str | Path) -> list[Path]:
    """Job directories under `root`: those holding a summary.json and a summary.csv (root itself excluded)."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"DIR {root} is not a directory: give the sweep directory (e.g. multirun/DATE/TIME)")
    jobs = sorted(p.parent for p in root.rglob("summary.json") if (p.parent / "summary.csv").exists() and p.parent != root)
    if not jobs:
        raise ValueError(f"no job results (summary.json + summary.csv) under {root}: did the sweep finish?")
    return jobs


def _same_protocol(key: str, a: Any, b: Any) -> bool:
    """Equal protocol values; the extractors also when one job recorded the weights hash short (an older version)."""
    if key == "extractor" and isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return all(a[k] == b[k] or (k == "weights" and (cut_short_form(a[k], b[k]) or cut_short_form(b[k], a[k])))
                   for k in a)
    return bool(a == b)


def collate(root: str | Path) -> pd.DataFrame:
    """Merged summary of every job under `root`; ValueError when the jobs' protocols differ."""
    jobs = find_jobs(root)
    records = [RunRecord.read(j / "summary.json") for j in jobs]
    base = records[0].protocol()
    for job, rec in zip(jobs[1:], records[1:]):
        p = rec.protocol()
        diff = [k for k in base if not _same_protocol(k, base[k], p[k])]
        if diff:
            detail = "; ".join(f"{k}: {base[k]!r} in {jobs[0].name} vs {p[k]!r} in {job.name}" for k in diff)
            raise ValueError(f"jobs under {root} use different protocols, which are never put in one table ({detail}); "
                             "collate each protocol's jobs separately")
    overrides = [_override_dict(r) for r in records]
    keys = sorted({k for o in overrides for k in o})
    varying = [k for k in keys if len({o.get(k) for o in overrides}) > 1]
    seed_keys = [k for k in varying if k in SEED_OVERRIDES]
    if len(seed_keys) > 1:
        raise ValueError(f"jobs under {root} vary {seed_keys} together: sweep one training-seed key at a time")
    frames = []
    for job, o in zip(jobs, overrides):
        per_seed = job / SEEDS_FILE
        s = pd.read_csv(per_seed if per_seed.exists() else job / "summary.csv", keep_default_na=False, na_values=[""])
        if seed_keys and SEED in s.columns:
            if s[SEED].nunique() > 1:
                raise ValueError(f"job {job} holds several training seeds and the sweep varies {seed_keys[0]} too: "
                                 "collate sweeps of one seed per job, or the seeds of one job")
            s = s.drop(columns=SEED)  # the job's one seed: the override names it
        for i, k in enumerate(varying):
            s.insert(i, SEED if k in seed_keys else k, o.get(k, ""))
        if seed_keys:
            s = s.drop(columns=[c for c in MODEL_COLUMNS if c in s.columns])
        s.insert(0, "job", str(job.relative_to(root)))
        frames.append(s)
    merged = pd.concat(frames, ignore_index=True)
    if not varying:
        # jobs with identical overrides (e.g. reruns): keep them apart by job
        return merged
    return merged.drop(columns=["job"])


def collate_levels(root: str | Path) -> Levels:
    """The jobs under `root` as `Levels`: two levels when they hold several training seeds, else the merged
    summary as both levels, with no comparison (the jobs' runs are not read) and no variance parts."""
    merged = collate(root)
    if not several_seeds(merged):
        return Levels(merged, merged, pd.DataFrame(), pd.DataFrame())
    confidence = float(merged["confidence"].iloc[0])
    variance = variance_components(merged)
    return Levels(merged, summarize_seeds(merged, confidence, variance), compare_seeds(merged, confidence), variance)


def write_collated(root: str | Path, out: str | Path) -> tuple[Levels, list[Path]]:
    """Collate the jobs under `root` (see `collate_levels`) into `out`: summary.csv, with several training seeds
    summary_seeds.csv and comparison.csv, and table.md/.tex (FD named by the first job's extractor). The levels and
    the files written; ValueError when the jobs cannot be collated."""
    levels = collate_levels(root)
    out = Path(out)
    written = [write_csv(levels.summary, out / "summary.csv")]
    if several_seeds(levels.seeds):
        written += [write_csv(levels.seeds, out / SEEDS_FILE), write_csv(levels.comparison, out / "comparison.csv")]
    extractor = RunRecord.read(find_jobs(root)[0] / "summary.json").extractor or None  # one for all
    written += write_tables(levels.summary, out, levels.comparison, title=f"Collated from {root}", extractor=extractor)
    return levels, written
