"""A committed reference's stored runs read back, so its derived files (summary, tables, verdicts) can be made
again by the current code: `scripts/regenerate_references.py` writes them, tests/test_committed_references.py checks them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ganeval.results.record import RunRecord
from ganeval.results.seeds import PROBE, SEED


def read_record(src: str | Path) -> RunRecord:
    """The reference's summary.json, keyed by the hash its runs.csv is stored under (runs.meta.json), when it has
    one: the record then names the store its numbers come from, not an older hash of its config."""
    src = Path(src)
    rec = RunRecord.read(src / "summary.json")
    meta = src / "runs.meta.json"
    if meta.exists():
        rec.config_hash = str(json.loads(meta.read_text())["config_hash"])
    return rec


def read_runs(src: str | Path) -> pd.DataFrame:
    """The reference's runs.csv (every measurement, read as written)."""
    return pd.read_csv(Path(src) / "runs.csv", keep_default_na=False, na_values=[""])


def summarize_stored(rows: pd.DataFrame, record: RunRecord) -> tuple[pd.DataFrame, pd.DataFrame | None,
                                                                       pd.DataFrame | None]:
    """(summary, comparison or None, per-(model, seed) summary or None) of stored rows, as `app.pipeline.summarize`
    makes them during the run (the record's interval_covers and variance_shares filled the same way)."""
    from ganeval.results import compare_runs, summarize_runs
    from ganeval.results.seeds import coverage_note, summarize_levels, variance_record

    conf, n = float(record.config["confidence"]), int(record.config["sample_size"])
    if SEED not in rows.columns and PROBE not in rows.columns:
        comparison = compare_runs(rows, conf) if rows["model"].nunique() > 1 else None
        return summarize_runs(rows, conf, n), comparison, None
    levels = summarize_levels(rows, conf, n)
    record.interval_covers = coverage_note(levels.summary)
    record.variance_shares = variance_record(levels.variance)
    return levels.summary, levels.comparison if len(levels.comparison) else None, levels.seeds


def relative_paths(value: Any, root: str) -> Any:
    """`value` (a record's JSON) with the temporary folder `root` the reference was made in cut from every string,
    so the record names paths relative to where its command ran (COMMAND.md) and no machine's scratch folder."""
    root = root.rstrip("/") + "/"
    if isinstance(value, str):
        return value.replace(root, "") if root in value else (".") if value == root.rstrip("/") else value
    if isinstance(value, list):
        return [relative_paths(v, root) for v in value]
    if isinstance(value, dict):
        return {k: relative_paths(v, root) for k, v in value.items()}
    return value


def write_claims_record(out: str | Path, config: Any, claims: list[Any]) -> None:
    """A study's summary.json: its config and its claims as records (what the verdict decided, as data)."""
    from ganeval.common import atomic_write_text

    atomic_write_text(Path(out) / "summary.json", json.dumps({"config": dict(config), "claims": [c.record() for c in claims]},
                                                              indent=2, ensure_ascii=False) + "\n")
