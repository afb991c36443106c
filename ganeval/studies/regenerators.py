"""Each committed reference's regenerator: its derived files (summary, tables, verdicts) written again from its stored
runs by the current code. `scripts/regenerate_references.py` writes them, tests/test_committed_references.py checks them."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

from ganeval.studies import (blur_sweep, er_normalisation, gan_table, heat_clusters, heat_traces, language_manifolds,
                             nn_internals, paper_checks, scalability, slq_accuracy, stability, torus, wordvec_dims)
from ganeval.studies.stored import read_record, read_runs, summarize_stored


def quickstart(src: Path, out: Path) -> None:
    """The quickstart's derived files as `ganeval` writes them (gan_table's generic path): summaries, comparison,
    tables, verdict.md, the summary and differences figures and report.html, the report naming the run's own results directory (results/quickstart)."""
    from ganeval.common import atomic_write_text, forget_written
    from ganeval.results import write_results
    from ganeval.results.report import REPORT_FILE, render_report
    from ganeval.results.tables import paper_table
    from ganeval.results.verdict import write_verdict

    record, rows = read_record(src), read_runs(src)
    summary, comparison, seeds = summarize_stored(rows, record)
    record.set_results(summary, record.stage_seconds)
    title = str(record.config.get("title") or "")
    write_results(out, summary, comparison, record, title=title, seeds=seeds)
    write_verdict(out, comparison, record.extractor or None)
    from ganeval.results import plots

    # the figures as the run draws them now (the per-run values behind each interval, the paired differences)
    plots.plot_summary(summary, out / "summary.png", title, seeds=seeds, extractor=record.extractor or None,
                       runs=plots.stored_runs(src))
    plots.plot_paired(out, comparison, seeds, record.extractor or None, title)
    forget_written(out)  # the report shows every file of the folder (the run's figures too), as the run's did
    shown = record.config.get("results_dir") or f"results/{record.experiment}"  # the default results_dir
    table = paper_table(summary, comparison, title, extractor=record.extractor or None)
    page = render_report(out, record, title, table, shown_dir=shown)
    atomic_write_text(out / REPORT_FILE, page)
    forget_written(out)  # and whatever reads the folder next (the terminal summary) reads all of it


# reference name -> function(src, out) writing its derived files from its stored runs; `scratch`: the folder the
# reference was made in (its COMMAND.md, its summary.json's command), cut from the recorded paths
REGENERATORS: dict[str, Callable[[Path, Path], None]] = {
    "torus": torus.regenerate, "paper_table": partial(gan_table.regenerate, scratch="/tmp/pt_ref"),
    "blur_sweep": blur_sweep.regenerate, "slq_accuracy": partial(slq_accuracy.regenerate, scratch="/tmp/heat"),
    "stability": stability.regenerate, "stability_lowrecall": stability.regenerate,
    "heat_traces": partial(heat_traces.regenerate, scratch="/tmp/heat"), "quickstart": quickstart,
    "heat_clusters": heat_clusters.regenerate, "wordvec_dims": wordvec_dims.regenerate,
    "nn_internals": nn_internals.regenerate, "language_manifolds": language_manifolds.regenerate,
    "er_normalisation": er_normalisation.regenerate, "scalability": scalability.regenerate,
    "paper_checks": paper_checks.regenerate}
