"""Result files written atomically: CSV frames, JSON documents, and an experiment's whole set of result files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
import pandas as pd

from ganeval.common import atomic_write_text
from ganeval.results.seeds import SEED, SEEDS_FILE
from ganeval.results.tables import write_tables

if TYPE_CHECKING:
    from ganeval.results.record import RunRecord


def json_safe(obj: Any) -> Any:
    """`obj` with every NaN or ±inf float (numpy's too) replaced by None, so the JSON written is valid (RFC 8259
    has no NaN or Infinity; Python would write them bare)."""
    if isinstance(obj, Mapping):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def json_dumps(obj: Any, **kwargs: Any) -> str:
    """`json.dumps` of `json_safe(obj)` that cannot emit NaN or Infinity (non-JSON values as strings)."""
    return json.dumps(json_safe(obj), allow_nan=False, default=str, **kwargs)


def json_text(obj: Mapping[str, Any]) -> str:
    """A JSON document as ganeval writes it: indented, sorted keys, non-JSON values as strings, null for non-finite
    numbers, final newline."""
    return json_dumps(obj, indent=2, sort_keys=True) + "\n"


def write_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a DataFrame as CSV atomically (full float precision)."""
    atomic_write_text(path, df.to_csv(index=False))
    return Path(path)


def write_json(obj: Mapping[str, Any], path: str | Path) -> Path:
    """Write a JSON document atomically (see `json_text`)."""
    atomic_write_text(path, json_text(obj))
    return Path(path)


def write_results(
    out_dir: str | Path,
    summary: pd.DataFrame,
    comparison: pd.DataFrame | None,
    record: RunRecord,
    title: str = "",
    tables: bool = True,
    seeds: pd.DataFrame | None = None,
) -> list[Path]:
    """Write summary.csv, summary.json, comparison.csv and summary_seeds.csv (when given) and the tables into `out_dir`.

    `summary` is what the tables show (the model level); `seeds` the per-(model, seed) summary, written only
    when it holds a `train_seed` column; the tables bold by `comparison`.
    """
    out = Path(out_dir)
    paths = [write_csv(summary, out / "summary.csv"), record.write(out / "summary.json")]
    if comparison is not None and len(comparison):
        paths.append(write_csv(comparison, out / "comparison.csv"))
    if seeds is not None and SEED in seeds.columns:
        paths.append(write_csv(seeds, out / SEEDS_FILE))
    if tables:
        paths += write_tables(summary, out, comparison, title, extractor=(record.extractor or {}).get("name"))
    return paths
