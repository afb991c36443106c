"""report.html: one self-contained page per results directory, to look at a run without opening ten files.

Built from what the directory holds (so it shows exactly what was written): the paper-style table (drawn from the
same summary and comparison as table.md; a study's own table.md as it wrote it) and the verdict (verdict.md) when
there is one,
every CSV but runs.csv (summary.csv first, its values as written), every PNG embedded as base64, and from the
run record: what the intervals cover, the command that reproduces the run, the resolved config, the
extractor and weights identity, the generators, package versions and stage times. All text is escaped; the
page loads nothing from anywhere else.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from ganeval.common import atomic_write_text
from ganeval.hashing import shown_extractor, shown_identity
from ganeval.results.outputs import this_run, write_manifest
from ganeval.results.report_tables import csv_table, esc, markdown_table, paper_table_html, rounded_table

if TYPE_CHECKING:
    from ganeval.results.record import RunRecord
    from ganeval.results.tables import PaperTable

REPORT_FILE = "report.html"
SKIP_CSV = ("runs.csv",)  # the per-run rows: long, and summarised by summary.csv
ROUNDED_CSV = ("summary.csv", "summary_seeds.csv", "comparison.csv")  # shown rounded, in the table's units
CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0 auto; max-width: 1480px;
       padding: 1.5em 2em 3em; color: #1f2328; line-height: 1.45; }
h1 { font-size: 1.5em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #eaeef2; padding-bottom: .2em; }
h3 { font-size: 1em; margin-top: 1.2em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .86em; }
th, td { border: 1px solid #d0d7de; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.data { font-size: .68em; }
table.data td:not(.num) { max-width: 9em; }
table.data th, table.data td { padding: .2em .4em; }
.scroll { overflow-x: auto; max-width: 100%; }
table.paper td { text-align: center; white-space: nowrap; }
table.paper td:first-child { text-align: left; font-weight: 600; }
pre { background: #f6f8fa; padding: .8em 1em; overflow-x: auto; font-size: .82em; border-radius: 6px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
.gallery { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.gallery figure { margin: 0; max-width: min(100%, 900px); }
pre.config { column-count: 2; column-gap: 2em; }
pre.command { white-space: pre-wrap; overflow-wrap: anywhere; }
figcaption { font-size: .85em; color: #57606a; }
.samples figure img { width: 180px; image-rendering: pixelated; }
details { margin: .6em 0; }
details > summary { cursor: pointer; color: #0969da; }
p.small { font-size: .82em; color: #57606a; margin: .2em 0; }
.note { background: #fff8c5; border: 1px solid #eed888; padding: .6em 1em; border-radius: 6px; }
.verdict { font-size: 1.05em; background: #ddf4ff; border: 1px solid #54aeff; padding: .6em 1em;
           border-radius: 6px; margin: .5em 0; }
.meta td:first-child { font-weight: 600; white-space: nowrap; }
"""


def records_table(rows: list[dict[str, Any]]) -> str:
    """A list of flat records (summary.json's verdict, variance shares) as a table, columns in first-seen order."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(_cell(r.get(c)) for c in cols) + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="data"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _cell(v: Any) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f'<td class="num">{esc(v)}</td>'
    return f"<td>{esc('' if v is None else v)}</td>"


def figure(path: Path) -> str:
    """A PNG embedded as a base64 data URI, captioned with its file name."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{esc(path.name)}">'
            f"<figcaption>{esc(path.name)}</figcaption></figure>")


def meta_table(items: Iterable[tuple[str, Any]]) -> str:
    """Key-value rows (values None left out; dicts and lists as compact JSON)."""
    rows = []
    for key, value in items:
        if value is None:
            continue
        text = json.dumps(value, sort_keys=True, default=str) if isinstance(value, (dict, list)) else str(value)
        rows.append(f"<tr><td>{esc(key)}</td><td><code>{esc(text)}</code></td></tr>")
    return '<table class="meta">' + "".join(rows) + "</table>"


def sample_grids(record: RunRecord, most: int = 24) -> list[str]:
    """Figures of the sample grids (samples_final.png) beside the checkpoints of the run's trained generators,
    captioned with their key (data/model, and the training seed with several); at most `most`."""
    out = []
    for key, ident in sorted((record.generators or {}).items()):
        path = ident.get("path") if isinstance(ident, dict) else None
        grid = Path(str(path)).parent / "samples_final.png" if path else None
        if grid is not None and grid.is_file() and not grid.is_symlink():
            data = base64.b64encode(grid.read_bytes()).decode("ascii")
            out.append(f'<figure><img src="data:image/png;base64,{data}" alt="samples of {esc(key)}">'
                       f"<figcaption>{esc(key)}</figcaption></figure>")
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


def render_report(out_dir: str | Path, record: RunRecord, title: str = "", table: PaperTable | None = None) -> str:
    """The HTML text of the report of results directory `out_dir` with its run record; `table`: the paper-style
    table this run wrote as table.md (None: a study's own table.md, shown as written)."""
    out = Path(out_dir)
    name = title or record.experiment or out.name
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             f"<title>{esc(name)}</title><style>{CSS}</style></head><body>",
             f"<h1>{esc(name)}</h1>"]
    from ganeval.results.verdict import VERDICT_FILE, result_sentences, split_verdict

    shown = this_run(out)  # only files this run wrote: a previous run's comparison.csv is never shown as this one's

    def ours(p: Path) -> bool:
        return p.exists() and (shown is None or p.name in shown)

    # the result in words first, as the terminal and verdict.md say it
    sentences = result_sentences(out, ours)
    if sentences:
        parts.append('<section id="summary-verdict">' + "".join(f'<p class="verdict">{esc(t)}</p>' for t in sentences)
                     + "</section>")
    facts = [("experiment", record.experiment), ("results directory", str(out)), ("runs", record.runs),
             ("sample size", record.config.get("sample_size")), ("confidence", record.config.get("confidence")),
             ("seed", record.seed), ("device", record.device), ("config hash", record.config_hash),
             ("scored on", "the full sets (one value per metric, no interval)" if record.config.get("full_sets") else None),
             ("rows per set", record.config.get("sets"))]
    parts.append(meta_table(facts))
    parts.append(f'<h2 id="reproduce">Reproduce</h2><pre class="command"><code id="command">{esc(record.command or "(not recorded)")}'
                 "</code></pre>")
    parts.append(f'<h2 id="covers">What each interval covers</h2><p class="note" id="coverage">'
                 f"{esc(record.interval_covers)}</p>")
    table_md = out / "table.md"
    if table is not None:
        parts.append('<h2 id="table">Table</h2>' + paper_table_html(table, record.interval_covers))
    elif ours(table_md):
        parts.append('<h2 id="table">Table</h2>' + markdown_table(table_md.read_text(), [record.interval_covers]))
    verdict = out / VERDICT_FILE
    rest = split_verdict(verdict.read_text())[1] if ours(verdict) else ""
    if rest:  # a study's own account, below the sentences that head the page
        parts.append('<h2 id="verdict">Verdict (verdict.md)</h2>' + markdown_table(rest, headings=True))
    wide = ("summary.png", "differences.png")
    pngs = sorted(filter(ours, out.glob("*.png")),
                  key=lambda p: (p.name not in wide, wide.index(p.name) if p.name in wide else 0, p.name))
    if pngs:  # summary and paired differences full width first, the others (experiment figures, grids) side by side
        main_fig = [p for p in pngs if p.name in wide]
        rest = [p for p in pngs if p.name not in wide]
        parts.append('<h2 id="figures">Figures</h2>' + "".join(figure(p) for p in main_fig)
                     + ('<div class="gallery">' + "\n".join(figure(p) for p in rest) + "</div>" if rest else ""))
    samples = sample_grids(record)
    if samples:  # what the trained generators draw, per model and training seed
        parts.append('<h2 id="samples">Generated samples</h2><div class="gallery samples">' + "\n".join(samples)
                     + "</div>")
    parts += result_files(out, record, ours)
    parts.append('<h2 id="inputs">Extractor, generators, k-NN</h2>')
    generators = [(f"generator {k}", shown_identity(v)) for k, v in sorted((record.generators or {}).items())]
    parts.append(meta_table([("extractor (weights identity)", shown_extractor(record.extractor)),
                             ("IMD k-NN", record.knn), *generators]))
    versions = {**record.packages}
    commit = git_commit()
    parts.append('<h2 id="versions">Versions and times</h2>'
                 + meta_table([*sorted(versions.items()), ("ganeval source commit", commit),
                               ("stage seconds", record.stage_seconds or None),
                               ("seconds per run", None if record.seconds_per_run is None
                                else round(record.seconds_per_run, 3))]))
    config = json.dumps(record.config, indent=2, sort_keys=True, default=str, ensure_ascii=False)
    parts.append(f'<h2 id="config">Resolved config</h2><details><summary>the config as resolved (JSON)</summary>'
                 f'<pre class="config"><code id="config-json">{esc(config)}</code></pre></details>')
    hidden = (REPORT_FILE, ".ganeval.lock")  # the lock is held while the report is written, removed at a clean exit
    files = sorted(p.name for p in out.iterdir() if p.is_file() and p.name not in hidden) if out.is_dir() else []
    parts.append('<h2 id="files">Files in this directory</h2><p>' + esc(", ".join(files)) + "</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def result_files(out: Path, record: RunRecord, ours: Any) -> list[str]:
    """The report's "Results" part: the CSVs this run wrote (rounded to their intervals, and as written) and the
    run record's tables (verdict, variance shares, hole fractions)."""
    parts = []
    csvs = sorted((p for p in out.glob("*.csv") if p.name not in SKIP_CSV and ours(p)),
                  key=lambda p: (p.name != "summary.csv", p.name))
    if csvs:
        extractor = record.extractor or None
        parts.append('<h2 id="data">Results</h2>')
        for p in csvs:
            if p.name in ROUNDED_CSV:
                parts.append(f"<h3>{esc(p.name)}</h3>" + rounded_table(p, f"{p.stem}-rounded", extractor))
        parts.append('<details id="raw-files"><summary>Result files as written (every digit)</summary>'
                     + "".join(f"<h3>{esc(p.name)}</h3>" + csv_table(p, p.stem) for p in csvs) + "</details>")
    for extra in ("verdict", "variance_shares", "hole_fraction"):
        value = getattr(record, extra, None)
        if value and isinstance(value, list) and all(isinstance(r, dict) for r in value):
            parts.append(f"<h3>{esc(extra)} (summary.json)</h3>" + records_table(value))
        elif value:
            parts.append(f"<h3>{esc(extra)} (summary.json)</h3>" + meta_table(sorted(dict(value).items())
                         if isinstance(value, dict) else [(extra, value)]))
    return parts


def write_report(out_dir: str | Path, record: RunRecord, title: str = "", table: PaperTable | None = None) -> Path:
    """Write report.html into `out_dir` atomically (see `render_report`)."""
    path = Path(out_dir) / REPORT_FILE
    atomic_write_text(path, render_report(out_dir, record, title, table))
    write_manifest(out_dir)  # which files are this run's, for a fresh start (overwrite=true) to clear
    return path


__all__ = ["REPORT_FILE", "esc", "render_report", "write_report"]
