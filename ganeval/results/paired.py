"""differences.png of a results directory: the paired differences behind comparison.csv, per training seed (from
the per-seed summary) or per run (from runs.csv), drawn by `plots.plot_differences`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ganeval.results import plots

DIFFERENCES_FILE = "differences.png"


def plot_paired(out_dir: str | Path, comparison: pd.DataFrame, seeds: pd.DataFrame | None = None,
                extractor: Any = None, title: str = "") -> Path:
    """Write out_dir/differences.png: with several training seeds their per-seed differences (and each seed joined
    across the models), else the per-run differences of runs.csv (runs share their real subsample)."""
    out = Path(out_dir)
    if seeds is not None and "train_seed" in seeds.columns:
        frame, pair_by, value = seeds, "train_seed", "mean"
    else:
        runs = out / "runs.csv"
        frame = pd.read_csv(runs) if runs.is_file() else None
        if frame is not None and "probe_draw" in frame.columns:  # a repeated probe draw is no run of its own
            frame = frame[frame["probe_draw"].fillna(0).astype(int) == 0]
        pair_by, value = "run", "value"
    return plots.plot_differences(comparison, out / DIFFERENCES_FILE, frame, pair_by, value, extractor,
                                  f"{title}: paired differences" if title else "")
