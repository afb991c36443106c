"""The documentation site builds without warnings (`mkdocs build --strict`), its API reference generated from the
docstrings (a renamed or removed function fails the build); skipped where mkdocs-material or mkdocstrings is not
installed (they are in the dev extra)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("material") is None or importlib.util.find_spec("mkdocstrings") is None,
                    reason="mkdocs-material or mkdocstrings is not installed")
def test_docs_build_strict(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "first-minutes" / "index.html").is_file()
    # the reference holds each public object's docstring, taken from the code
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    import ganeval.app.scoring
    import ganeval.metrics
    import ganeval.protocol.api

    for obj in (ganeval.app.scoring.score, ganeval.app.scoring.ScoreResult, ganeval.protocol.api.evaluate,
                ganeval.metrics.fid, ganeval.metrics.imd, ganeval.metrics.register_metric):
        first = " ".join(obj.__doc__.split("\n\n")[0].split()).split("`")[0][:40]
        assert first in " ".join(api.split()), (obj, first)


def test_every_column_of_the_results_csvs_is_documented() -> None:
    """Each column of runs.csv, summary.csv, summary_seeds.csv and comparison.csv (the committed quickstart's, with
    training seeds and probe draws, and a fresh comparison's) is named in docs/experiments.md's table of columns, or
    is a group column the page names (issue 57: comparison.csv's `mde` was documented nowhere). Kills: a new column
    written without its line."""
    import re

    import numpy as np
    import pandas as pd

    from ganeval.results.summary import compare_runs, summarize_runs

    page = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in page.splitlines() if line.startswith("| ") and ".csv" in line.split("|")[1]]
    documented = {name for r in rows for name in re.findall(r"`([a-z_]+)`", r[2])}
    groups = {"model", "data", "train_seed"}  # the page's group columns (a study's own, e.g. sigma, besides)
    assert all(f"`{g}`" in page for g in groups)
    reference = ROOT / "results" / "reference" / "quickstart"
    columns = {c for name in ("runs", "summary", "summary_seeds", "comparison")
               for c in pd.read_csv(reference / f"{name}.csv", nrows=1).columns}
    rng = np.random.default_rng(0)
    runs = pd.DataFrame([{"run": r, "model": m, "metric": "fid", "value": rng.normal() + i}
                         for r in range(4) for i, m in enumerate("ab")])
    columns |= set(compare_runs(runs, 0.99).columns) | set(summarize_runs(runs, 0.99, 100).columns)
    assert columns - groups <= documented, sorted(columns - groups - documented)
