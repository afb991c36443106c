"""A committed reference's stored runs read back, so its derived files (summary, tables, verdicts) can be made
again by today's code: `scripts/regenerate_references.py` writes them, tests/test_committed_references.py checks them."""

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


def _torus(src: Path, out: Path) -> None:
    from ganeval.studies.torus import regenerate

    regenerate(src, out)


def _paper_table(src: Path, out: Path) -> None:
    from ganeval.studies.gan_table import regenerate

    regenerate(src, out, scratch="/tmp/pt_ref")  # where it was made (COMMAND.md)


def _blur_sweep(src: Path, out: Path) -> None:
    from ganeval.studies.blur_sweep import regenerate

    regenerate(src, out)


def _slq_accuracy(src: Path, out: Path) -> None:
    from ganeval.studies.slq_accuracy import regenerate

    regenerate(src, out, scratch="/tmp/heat")  # where it was made (its summary.json's command)


def _stability(src: Path, out: Path) -> None:
    from ganeval.studies.stability import regenerate

    regenerate(src, out)


def _heat_traces(src: Path, out: Path) -> None:
    from ganeval.studies.heat_traces import regenerate

    regenerate(src, out, scratch="/tmp/heat")  # where it was made (its summary.json's command)


def _quickstart(src: Path, out: Path) -> None:
    """The quickstart's derived files as `ganeval` writes them (gan_table's generic path): summaries, comparison,
    tables, verdict.md and report.html, the report naming the run's own results directory (results/quickstart)."""
    from ganeval.common import atomic_write_text, forget_written
    from ganeval.results import write_results
    from ganeval.results.report import REPORT_FILE, esc, render_report
    from ganeval.results.verdict import write_verdict

    record, rows = read_record(src), read_runs(src)
    summary, comparison, seeds = summarize_stored(rows, record)
    record.set_results(summary, record.stage_seconds)
    title = str(record.config.get("title") or "")
    write_results(out, summary, comparison, record, title=title, seeds=seeds)
    write_verdict(out, comparison, record.extractor or None)
    forget_written(out)  # the report shows every file of the folder (the run's figures too), as the run's did
    shown = record.config.get("results_dir") or f"results/{record.experiment}"  # the default results_dir
    page = render_report(out, record, title).replace(f"<code>{esc(str(out))}</code>", f"<code>{esc(shown)}</code>", 1)
    atomic_write_text(out / REPORT_FILE, page)
    forget_written(out)  # and whatever reads the folder next (the terminal summary) reads all of it


def _heat_clusters(src: Path, out: Path) -> None:
    from ganeval.studies.heat_clusters import regenerate

    regenerate(src, out)


# reference name -> function(src, out) writing its derived files from its stored runs
REGENERATORS = {"torus": _torus, "paper_table": _paper_table, "blur_sweep": _blur_sweep,
                "slq_accuracy": _slq_accuracy, "stability": _stability, "stability_lowrecall": _stability,
                "heat_traces": _heat_traces, "quickstart": _quickstart,
                "heat_clusters": _heat_clusters}
