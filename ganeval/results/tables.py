"""The paper-style tables of a summary: cells, Markdown, LaTeX, and table.md/.tex.

Tables follow the paper's GAN table: rows IMD, KID×10³, FID; one column per (dataset, model);
`mean ± half-width` of the confidence interval; the model with the lowest mean per dataset in bold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ganeval.common import atomic_write_text
from ganeval.results.intervals import COVERAGE_NOTE
from ganeval.results.summary import PROTOCOL_COLUMNS, summary_group_columns

METRIC_ORDER = ("imd", "kid", "fid")  # the paper's rows; other metrics follow by name


def metric_label(name: str) -> tuple[str, float, str]:
    """(label, scale, LaTeX label) of a metric, as its registry entry gives them (KID shows as KID×10³);
    a name the registry does not know shows as itself."""
    from ganeval.metrics.registry import REGISTRY

    m = REGISTRY.get(name)
    return (m.label, m.scale, m.label_tex) if m is not None else (name, 1.0, _tex_escape(name))


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v)) if abs(v) < 1e15 else str(v)
    return str(v)


def check_one_protocol(summary: pd.DataFrame) -> None:
    """Refuse a summary that mixes protocols (sample sizes or confidence levels) in one table."""
    for col in PROTOCOL_COLUMNS:
        if col in summary.columns and summary[col].nunique(dropna=False) > 1:
            raise ValueError(
                f"summary mixes protocols: {col} takes values {sorted(summary[col].unique().tolist())}; "
                "tabulate each protocol separately"
            )


def table_cells(summary: pd.DataFrame, model_column: str = "model", digits: int = 2) -> pd.DataFrame:
    """The table as strings: index metric labels (IMD, KID×10³, FID, then others), one column per group.

    Also returns, in `.attrs['best']`, the (metric, column) cells holding the lowest mean among the models
    of their dataset (the other group columns).
    """
    check_one_protocol(summary)
    cols = summary_group_columns(summary)
    groups = list(dict.fromkeys(tuple(r) for r in summary[cols].itertuples(index=False, name=None))) if cols else [()]
    metrics = [m for m in METRIC_ORDER if m in set(summary.metric)] + sorted(
        set(summary.metric) - set(METRIC_ORDER)
    )
    cells: dict[tuple, dict[str, tuple[float, float]]] = {}
    for _, row in summary.iterrows():
        scale = metric_label(row.metric)[1]
        key = tuple(row[c] for c in cols)
        cells.setdefault(key, {})[row.metric] = (row["mean"] * scale, row["half_width"] * scale)
    best: set[tuple[str, tuple]] = set()
    if model_column in cols:
        mi = cols.index(model_column)
        by_data: dict[tuple, list[tuple]] = {}
        for g in groups:
            by_data.setdefault(g[:mi] + g[mi + 1 :], []).append(g)
        for members in by_data.values():
            if len(members) < 2:
                continue
            for m in metrics:
                vals = [(cells.get(g, {}).get(m, (np.inf, 0))[0], g) for g in members]
                best.add((m, min(vals, key=lambda t: t[0])[1]))
    table = {}
    for g in groups:
        col = {}
        for m in metrics:
            mean, half = cells.get(g, {}).get(m, (np.nan, np.nan))
            col[m] = "–" if np.isnan(mean) else (
                f"{mean:.{digits}f}" if np.isnan(half) else f"{mean:.{digits}f} ± {half:.{digits}f}"
            )
        table[g] = col
    df = pd.DataFrame(table, index=metrics)
    df.attrs["best"] = best
    df.attrs["group_names"] = cols
    return df


def table_markdown(summary: pd.DataFrame, title: str = "", digits: int = 2) -> str:
    """The paper-style table in Markdown; bold marks the lowest mean (the better model) per dataset and metric."""
    t = table_cells(summary, digits=digits)
    names = t.attrs["group_names"]
    header = ["metric"] + [" / ".join(_fmt(v) for v in g) or "value" for g in t.columns]
    lines = []
    if title:
        lines += [f"### {title}", ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for m in t.index:
        label = metric_label(m)[0]
        cells = [f"**{t.loc[m, g]}**" if (m, g) in t.attrs["best"] else t.loc[m, g] for g in t.columns]
        lines.append("| " + " | ".join([label] + cells) + " |")
    p = summary.iloc[0]
    lines += [
        "",
        f"Columns: {' / '.join(names) or 'value'}. Mean ± half-width of the {p['confidence']:.0%} Student-t "
        f"interval over {int(summary['n_runs'].max())} runs of {int(p['sample_size'])} samples per set. "
        "Lower is better; bold: lowest mean among the models of a dataset (see comparison.csv for whether "
        "the paired difference is significant).",
        "",
        COVERAGE_NOTE,
        "",
    ]
    return "\n".join(lines)


def _tex_escape(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"), ("#", r"\#")):
        s = s.replace(a, b)
    return s


def table_latex(summary: pd.DataFrame, caption: str = "", digits: int = 2) -> str:
    """The paper-style table as a booktabs LaTeX tabular (first group level as multicolumn headers)."""
    t = table_cells(summary, digits=digits)
    groups = list(t.columns)
    ncol = len(groups)
    lines = [r"\begin{table}[t]", r"\centering", r"\small"]
    if caption:
        lines.append(rf"\caption{{{_tex_escape(caption)}}}")
    lines += [rf"\begin{{tabular}}{{l{'c' * ncol}}}", r"\toprule"]
    if groups and len(groups[0]) >= 2:
        spans: list[tuple[Any, int]] = []
        for g in groups:
            if spans and spans[-1][0] == g[0]:
                spans[-1] = (g[0], spans[-1][1] + 1)
            else:
                spans.append((g[0], 1))
        head = [rf"\multicolumn{{{n}}}{{c}}{{\textbf{{{_tex_escape(_fmt(v))}}}}}" for v, n in spans]
        lines.append(" & " + " & ".join(head) + r" \\")
        start, rules = 2, []
        for _, n in spans:
            rules.append(rf"\cmidrule(lr){{{start}-{start + n - 1}}}")
            start += n
        lines.append("".join(rules))
        sub = [_tex_escape(" / ".join(_fmt(v) for v in g[1:])) for g in groups]
    else:
        sub = [_tex_escape(" / ".join(_fmt(v) for v in g) or "value") for g in groups]
    lines.append(r"\textbf{Metric} & " + " & ".join(sub) + r" \\")
    lines.append(r"\midrule")
    for m in t.index:
        cells = []
        for g in groups:
            text = t.loc[m, g].replace("±", r"\pm").replace("–", "--")
            if " \\pm " in text:
                mean, half = text.split(" \\pm ")
                mean = rf"\mathbf{{{mean}}}" if (m, g) in t.attrs["best"] else mean
                text = f"${mean} \\pm {half}$"
            cells.append(text)
        lines.append(metric_label(m)[2] + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def write_tables(summary: pd.DataFrame, out_dir: str | Path, title: str = "") -> list[Path]:
    """Write table.md and table.tex for `summary` into `out_dir`."""
    out = Path(out_dir)
    atomic_write_text(out / "table.md", table_markdown(summary, title))
    atomic_write_text(out / "table.tex", table_latex(summary, title))
    return [out / "table.md", out / "table.tex"]
