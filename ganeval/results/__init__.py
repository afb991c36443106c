"""What becomes of the per-run numbers: intervals, summaries, tables, the run record, result files, plots.

- `intervals`: Student-t interval of a mean, paired-t difference and its minimum detectable effect, what an
  interval covers.
- `verdicts`: the paper experiments' verdict vocabulary (holds / contradicted / not testable here), Holm.
- `summary`: per-run rows -> summary per group and metric, paired comparisons of models.
- `seeds`: training seeds as a level: per-(model, seed) -> per-model summaries, seed-paired comparisons,
  the variance shares (seeds, subsampling, probes).
- `tables`: the paper-style table (cells, Markdown, LaTeX) and table.md/.tex.
- `record`: `RunRecord`, the summary.json written and read by the same dataclass; an experiment's whole set of
  result files (`write_results`).
- `files`: atomic CSV/JSON writers.
- `plots`: PNG figures of results.
- `collate`: `ganeval-collate`, a sweep's jobs merged into one summary and table (import from the module).
"""

from __future__ import annotations

from ganeval.results.files import json_text, write_csv, write_json
from ganeval.results.intervals import COVERAGE_NOTE, check_confidence, paired_comparison, paired_t_mde, t_interval
from ganeval.results.plots import plot_blur, plot_heat_traces, plot_points_3d, plot_summary
from ganeval.results.record import RunRecord, package_versions, write_results
from ganeval.results.seeds import (
    Levels,
    compare_seeds,
    coverage_note,
    summarize_levels,
    summarize_seeds,
    variance_components,
    variance_record,
)
from ganeval.results.summary import compare_runs, group_columns, summarize_runs, summary_group_columns
from ganeval.results.tables import (
    metric_label,
    check_one_protocol,
    table_cells,
    table_latex,
    significantly_best,
    table_markdown,
    write_tables,
)

__all__ = [
    "COVERAGE_NOTE",
    "Levels",
    "metric_label",
    "RunRecord",
    "check_confidence",
    "check_one_protocol",
    "compare_runs",
    "compare_seeds",
    "coverage_note",
    "group_columns",
    "json_text",
    "package_versions",
    "paired_comparison",
    "paired_t_mde",
    "plot_blur",
    "plot_heat_traces",
    "plot_points_3d",
    "plot_summary",
    "significantly_best",
    "summarize_levels",
    "summarize_runs",
    "summarize_seeds",
    "summary_group_columns",
    "t_interval",
    "table_cells",
    "table_latex",
    "table_markdown",
    "variance_components",
    "variance_record",
    "write_csv",
    "write_json",
    "write_results",
    "write_tables",
]
