"""The resumable per-run store: `runs.csv` (long form, rewritten atomically) and its `runs.meta.json` sidecar.

A results directory is resumed only when the sidecar's config hash equals the current one;
otherwise it is refused, so numbers of two configs are never mixed in one file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ganeval.common import atomic_write_text

RUNS_FILE = "runs.csv"
META_FILE = "runs.meta.json"


class ConfigMismatchError(ValueError):
    """The results directory holds runs made by another config."""


def open_store(
    results_dir: str | Path, config_hash: str, identity: dict[str, Any], overwrite: bool = False
) -> pd.DataFrame:
    """Prepare `results_dir` for runs of `config_hash` and return the rows already there (empty if none).

    Refuses (ConfigMismatchError) when existing runs were made by another config, unless `overwrite`.
    """
    d = Path(results_dir)
    runs_path, meta_path = d / RUNS_FILE, d / META_FILE
    if overwrite:
        for p in (runs_path, meta_path):
            p.unlink(missing_ok=True)
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        old = meta.get("config_hash")
        if old != config_hash:
            raise ConfigMismatchError(
                f"{d} holds runs made by another config (hash {old}, now {config_hash}); "
                "choose another results_dir or pass overwrite=true to discard them"
            )
    elif runs_path.exists():
        raise ConfigMismatchError(
            f"{runs_path} exists without {META_FILE}, so its config is unknown; "
            "choose another results_dir or pass overwrite=true to discard it"
        )
    else:
        d.mkdir(parents=True, exist_ok=True)
        meta = {"config_hash": config_hash, "identity": identity}
        atomic_write_text(meta_path, json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    if runs_path.exists():
        return pd.read_csv(runs_path, keep_default_na=False, na_values=[""])
    return pd.DataFrame()


def write_runs(results_dir: str | Path, rows: pd.DataFrame) -> Path:
    """Rewrite `runs.csv` atomically with all `rows` (sorted by run), so a kill never leaves half a file."""
    path = Path(results_dir) / RUNS_FILE
    text = rows.to_csv(index=False)
    atomic_write_text(path, text)
    return path
