"""The result CSVs as report.html shows them: each number rounded to its interval's precision, in the table's
units (KID×10³, FD_<features>), so the page never prints 16-digit floats or mixes scales. The files keep full
precision (the report folds them away, as written).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ganeval.results.verdict import decimals_for

INTERVAL_COLUMNS = ("mean", "std", "ci_low", "ci_high", "half_width", "diff_mean", "diff_std")  # in the metric's unit
UNIT_NOTE = ("Rounded to each interval's precision (its half-width to two significant digits), in the table's "
             "units{kid}; the CSV files below hold every digit.")


def significant(v: float, digits: int = 3) -> str:
    """A number to `digits` significant digits (p-values, shares, seconds): '0.0706', '1.2e-05'."""
    if not math.isfinite(v):
        return "" if math.isnan(v) else str(v)
    return f"{v:.{digits}g}"


def rounded_frame(frame: pd.DataFrame, extractor: str | Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, bool]:
    """`frame` (summary, per-seed summary or comparison) as display text: interval columns scaled to the table's
    unit and rounded by the row's half-width, metric names as the table labels them, other floats to 3 significant
    digits, integers as they are. Returns (text frame, whether some row was rescaled)."""
    from ganeval.results.tables import metric_label

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
    from ganeval.results.report import esc

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
