"""The tables of report.html as HTML: the paper-style table drawn from the same `PaperTable` as table.md, a study's
own Markdown (its table.md, verdict.md), and the result CSVs, as written and rounded to each interval's precision in
the table's units (KID×10³, FD_<features>), so the page never prints 16-digit floats or mixes scales. The files keep
full precision (the report folds them away, as written). All text is escaped.
"""

from __future__ import annotations

import csv
import html
import itertools
import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from ganeval.results.tables import PaperTable, metric_label
from ganeval.results.intervals import decimals_for

# in the metric's unit: scaled as the table scales it (KID×10³); `mde` is the smallest detectable difference
INTERVAL_COLUMNS = ("mean", "std", "ci_low", "ci_high", "half_width", "diff_mean", "diff_std", "mde", "mde_holm")
UNIT_NOTE = ("Rounded to each interval's precision (its half-width to two significant digits), in the table's "
             "units{kid}; the CSV files below hold every digit.")


def esc(value: Any) -> str:
    """Text made safe for HTML (quotes included)."""
    return html.escape(str(value), quote=True)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def csv_table(path: Path, css_id: str) -> str:
    """A CSV file as an HTML table, every cell the file's own text (numbers right-aligned)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return f"<p>{esc(path.name)} is empty.</p>"
    head, body = rows[0], rows[1:]
    out = [f'<div class="scroll"><table class="data" id="{esc(css_id)}" data-file="{esc(path.name)}">',
           "<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for row in body:
        cells = "".join(f'<td class="num">{esc(c)}</td>' if c and _is_number(c) else f"<td>{esc(c)}</td>" for c in row)
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _inline(text: str) -> str:
    """Markdown inline markup of the tables and notes (**bold**, *emphasis*, `code`) to HTML, everything else
    escaped; a backslash-escaped character (`md_escape`) shows as itself, never as markup."""
    held = _held_offset(text)
    text = re.sub(r"\\([!-/:-@\[-`{-~])", lambda m: chr(held + ord(m.group(1))), text)  # held apart from the markup
    parts = re.split(r"(\*\*[^*]+\*\*|\*[^*\s][^*]*\*|`[^`]+`)", text)
    out = []
    for p in parts:
        if p.startswith("**") and p.endswith("**") and len(p) > 4:
            out.append(f"<strong>{esc(p[2:-2])}</strong>")
        elif p.startswith("*") and p.endswith("*") and len(p) > 2:
            out.append(f"<em>{esc(p[1:-1])}</em>")
        elif p.startswith("`") and p.endswith("`") and len(p) > 2:
            out.append(f"<code>{esc(p[1:-1])}</code>")
        else:
            out.append(esc(p))
    return re.sub(f"[{chr(held + 33)}-{chr(held + 126)}]", lambda m: esc(chr(ord(m.group()) - held)), "".join(out))


def _held_offset(text: str) -> int:
    """Where an escaped character waits while the markup is read: an offset into Unicode's Private Use Area whose
    places for `!`…`~` no character of `text` takes (a text's own private-use characters then show as themselves)."""
    used = {ord(c) for c in text}
    blocks = itertools.chain(range(0xE000, 0xF800, 0x80), range(0xF0000, 0xFFF80, 0x80))  # the BMP's area, then plane 15
    return next(o for o in blocks if not any(o + 33 <= u <= o + 126 for u in used))


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row `| a | b\\|c |`: split at each `|` that is not backslash-escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip()[1:-1])]


def markdown_table(text: str, skip: Iterable[str] = (), headings: bool = False) -> str:
    """A results Markdown file (table.md, verdict.md) as HTML: pipe tables, other lines as paragraphs, headings as
    h3 when `headings` (else dropped: the section says what it is); lines in `skip` (e.g. the coverage note shown
    above) left out."""
    out: list[str] = []
    table: list[list[str]] = []
    skipped = {t.strip() for t in skip}

    def flush() -> None:
        if not table:
            return
        head, body = table[0], [r for r in table[1:] if not all(set(c.strip()) <= set("-:") for c in r)]
        out.append('<div class="scroll"><table class="paper"><thead><tr>'
                   + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead><tbody>")
        out.extend("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body)
        out.append("</tbody></table></div>")
        table.clear()

    for line in text.splitlines():
        s = line.strip()
        if s.startswith("|") and s.endswith("|"):
            table.append(_cells(s))
            continue
        flush()
        if s.startswith("#"):
            if headings:
                out.append(f"<h3>{_inline(s.lstrip('#').strip())}</h3>")
        elif s and s not in skipped:
            out.append(f"<p>{_inline(s[2:] if s.startswith(('- ', '* ')) else s)}</p>")
    flush()
    return "\n".join(out)


def paper_table_html(table: PaperTable, shown_above: str = "") -> str:
    """The paper-style table (see `ganeval.results.tables.paper_table`) as HTML with its notes; the coverage note is
    left out when it is `shown_above`."""
    head = "".join(f"<th>{esc(c)}</th>" for c in table.header)
    body = "".join("<tr>" + "".join(f"<td><strong>{esc(text)}</strong></td>" if bold else f"<td>{esc(text)}</td>"
                                    for text, bold in row) + "</tr>" for row in table.rows)
    out = [f'<div class="scroll"><table class="paper" id="paper-table"><thead><tr>{head}</tr></thead>'
           f"<tbody>{body}</tbody></table></div>", f"<p>{esc(table.columns_note)}</p>"]
    if table.comparison_intro:
        out.append(f"<p>{_inline(table.comparison_intro)}</p>")
        out.append("<ul>" + "".join(f"<li>{esc(item)}</li>" for item in table.comparisons) + "</ul>")
    if table.coverage and table.coverage.strip() != shown_above.strip():
        out.append(f"<p>{esc(table.coverage)}</p>")
    return "\n".join(out)


def significant(v: float, digits: int = 3) -> str:
    """A number to `digits` significant digits (p-values, shares, seconds): '0.0706', '1.2e-05'."""
    if not math.isfinite(v):
        return "" if math.isnan(v) else str(v)
    return f"{v:.{digits}g}"


def rounded_frame(frame: pd.DataFrame, extractor: str | Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, bool]:
    """`frame` (summary, per-seed summary or comparison) as display text: interval columns scaled to the table's
    unit and rounded by the row's half-width, metric names as the table labels them, other floats to 3 significant
    digits, integers as they are. Returns (text frame, whether some row was rescaled)."""
    out = frame.astype(object).copy()
    scaled = False
    for i, row in frame.iterrows():
        scale, d = 1.0, 3
        if "metric" in frame.columns and isinstance(row["metric"], str):
            label, scale, _ = metric_label(row["metric"], extractor)
            out.at[i, "metric"] = label
            scaled = scaled or scale != 1.0
        if "half_width" in frame.columns and pd.notna(row["half_width"]):
            d = decimals_for(float(row["half_width"]) * scale)
        for col in frame.columns:
            v = row[col]
            if col in INTERVAL_COLUMNS and isinstance(v, (int, float)) and pd.notna(v):
                out.at[i, col] = f"{float(v) * scale:.{d}f}"
            elif isinstance(v, float) and col not in ("metric",):
                out.at[i, col] = significant(v) if not float(v).is_integer() or abs(v) >= 1e6 else str(int(v))
            elif v is None or (isinstance(v, float) and math.isnan(v)):
                out.at[i, col] = ""
    return out, scaled


def rounded_table(path: Path, css_id: str, extractor: str | Mapping[str, Any] | None = None) -> str:
    """A result CSV rounded for reading (see `rounded_frame`) as an HTML table in a scrolling box, with its note."""
    frame = pd.read_csv(path)
    text, scaled = rounded_frame(frame, extractor)
    head = "".join(f"<th>{esc(c)}</th>" for c in text.columns)
    body = []
    for _, r in text.iterrows():
        cells = []
        for c in text.columns:
            v = "" if r[c] is None else str(r[c])
            numeric = v.replace("−", "-").replace(".", "", 1).lstrip("-").replace("e-", "").replace("e+", "").isdigit()
            cells.append(f'<td class="num">{esc(v)}</td>' if numeric else f"<td>{esc(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = UNIT_NOTE.format(kid=" (KID×10³)" if scaled else "")
    return (f'<p class="small">{esc(note)}</p><div class="scroll"><table class="data rounded" id="{esc(css_id)}" '
            f'data-file="{esc(path.name)}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')
