"""report.html: one self-contained page per results directory, to look at a run without opening ten files.

Built from what the directory holds (so it shows exactly what was written): the paper-style table (drawn from the
same summary and comparison as table.md; a study's own table.md as it wrote it) and the verdict (verdict.md) when
there is one, every CSV but runs.csv (summary.csv first, its values as written), the summary and paired-differences
figures drawn again from those CSVs as inline SVG (one panel per metric, panels that wrap; text that scales), every
other PNG embedded as base64, and from the run record: what the intervals cover, the command that reproduces the run,
the resolved config, the extractor and weights identity, the generators, package versions and stage times. The
markup lives in templates/report.html.j2 (Jinja2, autoescaped: every text is escaped); the page loads nothing from
anywhere else.
"""

from __future__ import annotations

import base64
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import pandas as pd

from ganeval.common import atomic_write_text
from ganeval.hashing import shown_extractor, shown_identity
from ganeval.results.outputs import this_run, write_manifest
from ganeval.results.report_tables import csv_table, esc, markdown_table, paper_table_html, rounded_table, significant

if TYPE_CHECKING:
    from jinja2 import Environment
    from markupsafe import Markup

    from ganeval.results.record import RunRecord
    from ganeval.results.tables import PaperTable

REPORT_FILE = "report.html"
SKIP_CSV = ("runs.csv",)  # the per-run rows: long, and summarised by summary.csv
ROUNDED_CSV = ("summary.csv", "summary_seeds.csv", "comparison.csv")  # shown rounded, in the table's units
SVG_FIGURES = ("summary.png", "differences.png")  # drawn again as inline SVG, one panel per metric



@lru_cache(maxsize=1)
def _environment() -> Environment:
    """The Jinja2 environment of the page: templates/ beside this module, every variable autoescaped, and an unknown
    name an error (never an empty string)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["breakable"] = breakable
    return env


def _safe(html: str) -> Markup:
    """HTML that the results code made from the files, every text in it escaped there (tables, SVG)."""
    from markupsafe import Markup

    return Markup(html)  # noqa: S704  (built by report_tables / matplotlib, which escape their text)


def cell_text(v: Any) -> tuple[str, bool]:
    """(text, is a number) of a record's value: floats to 3 significant digits (variance shares, fractions), never
    their 16 digits; None as empty."""
    if isinstance(v, bool) or v is None:
        return ("" if v is None else str(v)), False
    if isinstance(v, float):
        return significant(v), True
    if isinstance(v, int):
        return str(v), True
    return str(v), False


def records_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A list of flat records (summary.json's verdict, variance shares) as the template's table: columns in
    first-seen order, cells as `cell_text`."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    return {"columns": cols, "rows": [[cell_text(r.get(c)) for c in cols] for r in rows]}


def readable(value: Any, nested: bool = False) -> str:
    """A record's value as a reader reads it, not as JSON: a mapping one `key: value` a line (a nested one inline,
    `(key: value, ...)`), a list comma-separated, None as "none", a float to 3 significant digits."""
    if isinstance(value, dict):
        parts = [f"{k}: {readable(v, True)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))]
        return f"({', '.join(parts)})" if nested else "\n".join(parts)
    if isinstance(value, (list, tuple)):
        return ", ".join(readable(v, True) for v in value)
    if value is None:
        return "none"
    return cell_text(value)[0] if isinstance(value, float) else str(value)


def meta_rows(items: Iterable[tuple[str, Any]]) -> list[tuple[str, str]]:
    """Key-value rows (values None left out; dicts and lists `readable`)."""
    return [(str(key), readable(value)) for key, value in items if value is not None]


BREAK_AFTER = "/_,:=-"  # where a long value (a path, a name, a hash's key) may wrap before it must break mid-word


def breakable(text: Any) -> Markup:
    """`text` escaped, with a line-break opportunity (<wbr>) after each of BREAK_AFTER: on a phone a path wraps at
    its slashes rather than inside a folder's name (the report's Jinja filter `breakable`)."""
    from markupsafe import Markup, escape

    return Markup(re.sub("([" + re.escape(BREAK_AFTER) + "])", r"\1<wbr>", str(escape(str(text)))))  # noqa: S704


def png(path: Path) -> dict[str, str]:
    """A PNG to embed as a base64 data URI, with its file name."""
    return {"name": path.name, "data": base64.b64encode(path.read_bytes()).decode("ascii")}


def inline_svg(svg: str, prefix: str) -> str:
    """An SVG of `plots.svg_text` made fit to sit beside others in one page: its ids (clip paths, markers) and the
    references to them prefixed, so that two figures never share an id."""
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if not ids:
        return svg
    names = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    svg = re.sub(rf'\bid="({names})"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    return re.sub(rf"#({names})(?=[\")])", lambda m: f"#{prefix}-{m.group(1)}", svg)


def svg_figures(out: Path, record: RunRecord, ours: Any) -> list[dict[str, Any]]:
    """The summary and paired-differences figures (summary.png, differences.png: those this run drew) drawn again from
    summary.csv, summary_seeds.csv, comparison.csv and runs.csv as inline SVG, one panel per metric."""
    from ganeval.results.plots import differences_figure, paired_frame, stored_runs, summary_figure, svg_text

    extractor = record.extractor or None
    seeds_file = out / "summary_seeds.csv"
    seeds = pd.read_csv(seeds_file) if ours(seeds_file) else None
    seeds = seeds if seeds is not None and "train_seed" in seeds.columns else None
    figures = []
    summary_file, comparison_file = out / "summary.csv", out / "comparison.csv"
    if ours(out / "summary.png") and ours(summary_file):
        summary, runs = pd.read_csv(summary_file), stored_runs(out)
        given = record.between_given_sets()
        svgs = [summary_figure(summary[summary.metric == m], "", seeds, extractor, runs, given)
                for m in dict.fromkeys(summary.metric)]
        conf = f"{summary['confidence'].iloc[0]:.0%}" if "confidence" in summary.columns and len(summary) else ""
        note = (f"Each {'set' if given else 'model'}'s mean with its {conf} interval"
                + ("; orange: each training seed's mean" if seeds is not None else "")
                + ("; grey, behind: the value of each run" if runs is not None else "") + ".")
        figures.append({"source": "summary.png", "note": note,
                        "svgs": [_safe(inline_svg(svg_text(f), f"s{i}")) for i, f in enumerate(svgs)]})
    if ours(out / "differences.png") and ours(comparison_file):
        comparison = pd.read_csv(comparison_file)
        frame, pair_by, value = paired_frame(out, seeds)
        svgs = [differences_figure(comparison[comparison.metric == m], frame, pair_by, value, extractor)
                for m in dict.fromkeys(comparison.metric)]
        note = ("Each paired difference a − b (dot) with its interval (bar) against 0 (dashed); blue: significant; "
                + ("each training seed's difference in its colour, and below each seed's value across the models."
                   if pair_by == "train_seed" else "ochre: each run's difference."))
        figures.append({"source": "differences.png", "note": note,
                        "svgs": [_safe(inline_svg(svg_text(f), f"d{i}")) for i, f in enumerate(svgs)]})
    return figures


def sample_grids(record: RunRecord, most: int = 24) -> list[dict[str, str]]:
    """The sample grids (samples_final.png) beside the checkpoints of the run's trained generators, keyed by data/model
    (and the training seed with several); at most `most`."""
    out = []
    for key, ident in sorted((record.generators or {}).items()):
        path = ident.get("path") if isinstance(ident, dict) else None
        grid = Path(str(path)).parent / "samples_final.png" if path else None
        if grid is not None and grid.is_file() and not grid.is_symlink():
            out.append({"key": key, "data": png(grid)["data"]})
        if len(out) >= most:
            break
    return out


def git_commit() -> str | None:
    """The commit of the ganeval source tree when it is a git checkout (informational), else None."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out + (" (with uncommitted changes)" if dirty else "") if out else None


def render_report(out_dir: str | Path, record: RunRecord, title: str = "", table: PaperTable | None = None,
                  shown_dir: str | None = None) -> str:
    """The HTML text of the report of results directory `out_dir` with its run record; `table`: the paper-style
    table this run wrote as table.md (None: a study's own table.md, shown as written); `shown_dir`: the folder named
    as the results directory (default `out_dir`; a committed reference names the one its command wrote)."""
    from ganeval.results.verdict import VERDICT_FILE, result_sentences, split_verdict

    out = Path(out_dir)
    shown = this_run(out)  # only files this run wrote: a previous run's comparison.csv is never shown as this one's

    def ours(p: Path) -> bool:
        return p.exists() and (shown is None or p.name in shown)

    facts = [("experiment", record.experiment), ("results directory", shown_dir or str(out)), ("runs", record.runs),
             ("sample size", record.config.get("sample_size")), ("confidence", record.config.get("confidence")),
             ("seed", record.seed), ("device", record.device), ("config hash", record.config_hash),
             ("scored on", "the full sets (one value per metric, no interval)" if record.config.get("full_sets") else None),
             ("rows per set", record.config.get("sets")), ("feature dimensions", record.dims),
             ("metrics left out", record.left_out.removeprefix("note: ") if record.left_out else None)]
    table_md = out / "table.md"
    if table is not None:
        table_html = paper_table_html(table, record.interval_covers)
    elif ours(table_md):
        table_html = markdown_table(table_md.read_text(), [record.interval_covers])
    else:
        table_html = ""
    verdict = out / VERDICT_FILE
    rest = split_verdict(verdict.read_text())[1] if ours(verdict) else ""
    panels = svg_figures(out, record, ours)
    drawn = {f["source"] for f in panels}
    pngs = sorted(p for p in out.glob("*.png") if ours(p) and p.name not in drawn)
    what = "set" if record.between_given_sets() else "generator"  # two languages or layers are not generators
    generators = [(f"{what} {k}", shown_identity(v)) for k, v in sorted((record.generators or {}).items())]
    hidden = (REPORT_FILE, ".ganeval.lock")  # the lock is held while the report is written, removed at a clean exit
    files = sorted(p.name for p in out.iterdir() if p.is_file() and p.name not in hidden) if out.is_dir() else []
    page = {
        "name": title or record.experiment or out.name,
        "sentences": result_sentences(out, ours),  # the result in words first, as the terminal and verdict.md say it
        "facts": meta_rows(facts),
        "command": record.command or "(not recorded)",
        "covers": record.interval_covers,
        "table": _safe(table_html),
        "verdict": _safe(markdown_table(rest, headings=True)) if rest else "",  # a study's own account
        "panels": panels,
        # other figures as written: the wide ones full width first, experiment figures side by side
        "wide": [png(p) for p in pngs if p.name in SVG_FIGURES],
        "gallery": [png(p) for p in pngs if p.name not in SVG_FIGURES],
        "samples": sample_grids(record),  # what the trained generators draw, per model and training seed
        **result_files(out, record, ours),
        "inputs": meta_rows([("extractor (weights identity)", shown_extractor(record.extractor)),
                             ("IMD k-NN", record.knn), *generators]),
        "versions": meta_rows([*sorted(record.packages.items()), ("ganeval source commit", git_commit()),
                               ("stage seconds", record.stage_seconds or None),
                               ("seconds per run", None if record.seconds_per_run is None
                                else round(record.seconds_per_run, 3))]),
        "config": json.dumps(record.config, indent=2, sort_keys=True, default=str, ensure_ascii=False),
        "files": ", ".join(files),
    }
    return _environment().get_template("report.html.j2").render(page)


def result_files(out: Path, record: RunRecord, ours: Any) -> dict[str, Any]:
    """The report's "Results" part: the CSVs this run wrote (rounded to their intervals, and as written) and the
    run record's tables (verdict, variance shares, hole fractions)."""
    csvs = sorted((p for p in out.glob("*.csv") if p.name not in SKIP_CSV and ours(p)),
                  key=lambda p: (p.name != "summary.csv", p.name))
    extractor = record.extractor or None
    files = [{"name": p.name, "raw": _safe(csv_table(p, p.stem)),
              "rounded": _safe(rounded_table(p, f"{p.stem}-rounded", extractor)) if p.name in ROUNDED_CSV else ""}
             for p in csvs]
    extras: list[dict[str, Any]] = []
    for extra in ("verdict", "variance_shares", "hole_fraction"):
        value = getattr(record, extra, None)
        if value and isinstance(value, list) and all(isinstance(r, dict) for r in value):
            extras.append({"name": extra, "records": records_table(value), "rows": []})
        elif value:
            items = sorted(dict(value).items()) if isinstance(value, dict) else [(extra, value)]
            extras.append({"name": extra, "records": None, "rows": meta_rows(items)})
    return {"csvs": files, "extras": extras}


def write_report(out_dir: str | Path, record: RunRecord, title: str = "", table: PaperTable | None = None) -> Path:
    """Write report.html into `out_dir` atomically (see `render_report`)."""
    path = Path(out_dir) / REPORT_FILE
    atomic_write_text(path, render_report(out_dir, record, title, table))
    write_manifest(out_dir)  # which files are this run's, for a fresh start (overwrite=true) to clear
    return path


__all__ = ["REPORT_FILE", "esc", "render_report", "write_report"]
