"""The paper-style tables of a summary: cells, Markdown, LaTeX, and table.md/.tex.

Tables follow the paper's GAN table: rows IMD, KID×10³, FID; one column per (dataset, model);
`mean ± half-width` of the confidence interval; a model in bold only where it is significantly best in its
dataset: the paired comparison (by run, or by training seed) against every other model says it is better.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ganeval.common import atomic_write_text
from ganeval.metrics.registry import feature_space, metric_order
from ganeval.results.intervals import decimals_for
from ganeval.results.seeds import coverage_note
from ganeval.results.summary import FULL_SET_COLUMN, PROTOCOL_COLUMNS, holm_level, summary_group_columns, with_holm_mde

def fd_name(extractor: str | Mapping[str, Any] | None) -> str | None:
    """The feature space's name in FD_<name> (e.g. DINOv2), or None for Inception pool3 (FID itself) and
    when the extractor is not known (`extractor`: a registered name or an extractor identity)."""
    if isinstance(extractor, Mapping):
        extractor = extractor.get("name")
    if extractor is None:
        return None
    name = feature_space(str(extractor))
    return None if name == "Inception" else name


def preprocess_mode(extractor: str | Mapping[str, Any] | None) -> str | None:
    """The non-default preprocessing mode of an extractor identity (e.g. 'clean'), shown in FID/FD labels."""
    return extractor.get("resize_mode") if isinstance(extractor, Mapping) else None


def metric_label(name: str, extractor: str | Mapping[str, Any] | None = None) -> tuple[str, float, str]:
    """(label, scale, LaTeX label) of a metric, as its registry entry gives them (KID shows as KID×10³);
    FID on features other than Inception's is named by them (FD_DINOv2, FD_pixels, ...), and a non-default
    preprocessing mode of the extractor (given as its identity) follows it: `FID (clean)`; a name the
    registry does not know shows as itself."""
    from ganeval.metrics.registry import REGISTRY

    if name == FULL_SET_COLUMN:  # the protocol's reported number: FID of the whole pools, one value
        label, scale, tex = metric_label("fid", extractor)
        return f"{label}, full sets", scale, f"{tex}, full sets"
    space = fd_name(extractor) if name == "fid" else None
    mode = preprocess_mode(extractor) if name == "fid" else None
    tail, tail_tex = (f" ({mode})", f" ({tex_escape(mode)})") if mode else ("", "")
    if space is not None:
        return f"FD_{space}{tail}", 1.0, rf"FD$_\text{{{tex_escape(space)}}}${tail_tex}"
    m = REGISTRY.get(name)
    if m is None:
        return name, 1.0, tex_escape(name)
    return m.label + tail, m.scale, m.label_tex + tail_tex


def direction_sentence(metrics: Any, given_sets: bool = False) -> str:
    """Which way is better for the metrics shown (lower for IMD/FID/KID, higher for IS, precision, ...); between
    given sets (`RunRecord.between_given_sets`: two languages, two layers) which way is closer to the real set, as
    no set is a model to call better."""
    from ganeval.metrics.registry import REGISTRY

    metrics = list(dict.fromkeys(metrics))
    higher = [m for m in metrics if getattr(REGISTRY.get(m), "higher_is_better", False)]
    names = lambda ms: ", ".join(metric_label(m)[0] for m in ms)  # noqa: E731
    if given_sets:
        lower = [m for m in metrics if m not in higher]
        parts = [f"{names(ms)}: {way} is closer to the real set" for ms, way in ((lower, "lower"), (higher, "higher"))
                 if ms]
        return "Distances between the real set and each given set (not a generator's samples); " + "; ".join(parts)
    if not higher:
        return "Lower is better"
    lower = [m for m in metrics if m not in higher]
    return f"Higher is better for {names(higher)}" + (f", lower for {names(lower)}" if lower else "")


def better_word(metric: str, given_sets: bool = False) -> str:
    """A figure panel's heading word for a metric: '(lower is better)', or between given sets '(distance)'."""
    from ganeval.metrics.registry import REGISTRY

    higher = getattr(REGISTRY.get(metric), "higher_is_better", False)
    if given_sets:
        return "(higher: closer)" if higher else "(distance)"
    return f"({'higher' if higher else 'lower'} is better)"


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v)) if abs(float(v)) < 1e15 else str(v)
    return str(v)


def group_label(group: tuple) -> str:
    """A table column's header: its group values joined by " / ", or "value" for a summary without group columns
    (pandas keys that one column `((),)`, not `()`)."""
    return " / ".join(_fmt(v) for v in group if not (isinstance(v, tuple) and not v)) or "value"


def check_one_protocol(summary: pd.DataFrame) -> None:
    """Refuse a summary that mixes protocols (sample sizes or confidence levels) in one table."""
    for col in PROTOCOL_COLUMNS:
        if col in summary.columns and summary[col].nunique(dropna=False) > 1:
            raise ValueError(
                f"summary mixes protocols: {col} takes values {sorted(summary[col].unique().tolist())}; "
                "tabulate each protocol separately"
            )


def _winners(comparison: pd.DataFrame, on: list[str]) -> dict[tuple, str]:
    """(values of `on` as strings, metric, frozenset of the two models) -> the significantly better model ('' if none)."""
    return {
        (tuple(str(r[c]) for c in on), r["metric"], frozenset((str(r["a"]), str(r["b"])))): str(r["better"])
        for _, r in comparison.iterrows()
    }


def significantly_best(
    summary: pd.DataFrame, comparison: pd.DataFrame | None, model_column: str = "model"
) -> set[tuple[str, tuple]]:
    """The (metric, group) cells whose model is significantly better than every other model of its dataset.

    A dataset is a value of the group columns other than `model_column`; `comparison` (from `compare_runs`
    or `compare_seeds`) must hold the pair of each two models of it, else nothing of it is bold.
    """
    cols = summary_group_columns(summary)
    if comparison is None or comparison.empty or model_column not in cols:
        return set()
    conf = set(comparison["confidence"]) | set(summary["confidence"])
    if len(conf) > 1:
        raise ValueError(f"the comparison and the summary use different confidence levels {sorted(conf)}: "
                         "compare at the summary's level")
    mi = cols.index(model_column)
    on = [c for c in cols if c != model_column and c in comparison.columns]
    winners = _winners(comparison, on)
    groups = list(dict.fromkeys(tuple(r) for r in summary[cols].itertuples(index=False, name=None)))
    by_data: dict[tuple, list[tuple]] = {}
    for g in groups:
        by_data.setdefault(g[:mi] + g[mi + 1 :], []).append(g)
    best: set[tuple[str, tuple]] = set()
    for members in by_data.values():
        for m in dict.fromkeys(summary.metric):
            for g in members:
                key = tuple(str(g[cols.index(c)]) for c in on)
                verdicts = [winners.get((key, m, frozenset((str(g[mi]), str(h[mi]))))) for h in members if h != g]
                if verdicts and all(v == str(g[mi]) for v in verdicts):
                    best.add((m, g))
    return best


def table_cells(
    summary: pd.DataFrame, comparison: pd.DataFrame | None = None, model_column: str = "model", digits: int = 2
) -> pd.DataFrame:
    """The table as strings: index metric labels (IMD, KID×10³, FID, then others), one column per group; a mean ±
    half-width to the digits its interval carries (`decimals_for`: two significant digits of the half-width, the rule
    of the terminal and of report.html's CSV view), a value without interval to `digits` decimals.

    Also returns, in `.attrs['best']`, the (metric, column) cells whose model is significantly best in its
    dataset by `comparison` (see `significantly_best`; none without a comparison).
    """
    check_one_protocol(summary)
    cols = summary_group_columns(summary)
    groups = list(dict.fromkeys(tuple(r) for r in summary[cols].itertuples(index=False, name=None))) if cols else [()]
    metrics = metric_order(summary.metric)
    cells: dict[tuple, dict[str, tuple[float, float]]] = {}
    for _, row in summary.iterrows():
        scale = metric_label(row.metric)[1]
        key = tuple(row[c] for c in cols)
        cells.setdefault(key, {})[row.metric] = (row["mean"] * scale, row["half_width"] * scale)
    table = {}
    for g in groups:
        col = {}
        for m in metrics:
            mean, half = cells.get(g, {}).get(m, (np.nan, np.nan))
            d = digits if np.isnan(half) else decimals_for(half)  # to the digits its interval carries (the CSV view's)
            col[m] = "–" if np.isnan(mean) else (
                f"{mean:.{d}f}" if np.isnan(half) else f"{mean:.{d}f} ± {half:.{d}f}"
            )
        table[g] = col
    df = pd.DataFrame(table, index=metrics)
    if FULL_SET_COLUMN in summary.columns and summary[FULL_SET_COLUMN].notna().any():
        df = with_full_set_row(df, summary, cols, digits)
    df.attrs["best"] = significantly_best(summary, comparison, model_column)
    df.attrs["group_names"] = cols
    return df


def with_full_set_row(df: pd.DataFrame, summary: pd.DataFrame, cols: list[str], digits: int) -> pd.DataFrame:
    """The cells with a `fid_full` row after FID's: each group's full-set FID (one value, no interval), '–' where
    there is none (e.g. a model over several training seeds)."""
    values = {tuple(r[c] for c in cols): r[FULL_SET_COLUMN] for _, r in summary.iterrows()
              if r["metric"] == "fid" and pd.notna(r[FULL_SET_COLUMN])}
    row = pd.DataFrame({g: [f"{values[g]:.{digits}f}" if g in values else "–"] for g in df.columns},
                       index=[FULL_SET_COLUMN])
    at = list(df.index).index("fid") + 1 if "fid" in df.index else len(df.index)
    return pd.concat([df.iloc[:at], row, df.iloc[at:]])


def full_set_sentence(summary: pd.DataFrame, extractor: str | Mapping[str, Any] | None = None) -> str:
    """What the full-set row is, when the table has one ('' otherwise)."""
    if FULL_SET_COLUMN not in summary.columns or not summary[FULL_SET_COLUMN].notna().any():
        return ""
    label = metric_label(FULL_SET_COLUMN, extractor)[0]
    return (f"{label}: the Fréchet distance of the whole generated pool against the whole real pool, one value "
            "without interval (the number the protocol's papers report; summary.csv column fid_full); the row above "
            "it is ganeval's mean over subsamples, which FID's bias at smaller sample sizes usually puts higher.")


def no_interval(summary: pd.DataFrame) -> bool:
    """Whether `summary` holds one value per cell (the full sets, runs=1) rather than intervals."""
    return int(summary["n_runs"].max()) == 1 and bool(summary["half_width"].isna().all())


def interval_sentence(summary: pd.DataFrame) -> str:
    """What each cell is: mean ± half-width of which interval, over how many seeds and runs of how many samples (one
    value per cell on the full sets: runs=1, no interval)."""
    p = summary.iloc[0]
    conf, runs = f"{p['confidence']:.0%}", f"{int(summary['n_runs'].max())} runs of {int(p['sample_size'])} samples per set"
    seeds = sorted(int(x) for x in set(summary["n_seeds"])) if "n_seeds" in summary.columns else [1]
    if seeds == [1] and no_interval(summary):
        return "One value per cell, on the full sets (no interval)."
    if seeds == [1]:
        return f"Mean ± half-width of the {conf} Student-t interval over {runs}."
    if len(seeds) == 1:
        return (f"Mean over {seeds[0]} training seeds ± half-width of the {conf} Student-t interval across seeds "
                f"({seeds[0] - 1} degrees of freedom) of the per-seed means over {runs}.")
    several = ", ".join(str(x) for x in seeds if x > 1)
    return (f"Mean ± half-width of the {conf} Student-t interval: across seeds (S − 1 degrees of freedom) of the "
            f"per-seed means for models with several training seeds (S = {several}), over runs for models with "
            f"one seed; {runs}.")


def _one_model_per_dataset(summary: pd.DataFrame, model_column: str = "model") -> bool:
    """True when no dataset (value of the group columns other than the model's) has two models to compare."""
    cols = summary_group_columns(summary)
    if model_column not in cols:
        return True
    rest = [c for c in cols if c != model_column]
    return bool((summary.groupby(rest, dropna=False)[model_column].nunique() if rest else
                 pd.Series([summary[model_column].nunique()])).max() <= 1)


def _bold_sentence(summary: pd.DataFrame, comparison: pd.DataFrame | None, given_sets: bool = False) -> str:
    """What bold means in a table of `summary` given `comparison`, naming comparison.csv only when there is one
    (it is written exactly when the comparison is not empty)."""
    direction = direction_sentence(summary.metric, given_sets)
    if comparison is None or comparison.empty:
        one = "set" if given_sets else "model"
        why = (f"each dataset has one {one}, so there is nothing to compare" if _one_model_per_dataset(summary) else
               "no paired comparison of the models was made (their runs were not paired), so none is declared better")
        return f"{direction}; nothing is bold: {why}."
    paired = "by training seed" if "n_seeds" in comparison.columns else "by run"
    best = "closest to the real set" if given_sets else "best"
    return (f"{direction}; bold: significantly {best} at {summary['confidence'].iloc[0]:.0%}: the interval of "
            f"every paired difference ({paired}) with the other models of its dataset excludes 0 (the differences "
            "and their intervals: comparison.csv).")


def comparison_notes(comparison: pd.DataFrame | None,
                     extractor: str | Mapping[str, Any] | None = None) -> tuple[str, list[str]]:
    """The paired comparisons in words: (what the list shows, one line per difference a − b with its interval, the
    minimum detectable effect (paired t at the Holm level of the comparisons made together, 80 % power, the measured
    std of the differences) and the pair count), so an undecided difference says how far it is from decidable; ("", []) without
    a comparison. `*term*` marks emphasis."""
    if comparison is None or comparison.empty or "mde" not in comparison.columns:
        return "", []
    count = "n_seeds" if "n_seeds" in comparison.columns else "n_runs"
    if "mde_holm" not in comparison.columns:  # a comparison.csv of before the column
        comparison = with_holm_mde(comparison, count)
    skip = {"a", "b", "metric", "diff_mean", "diff_std", "ci_low", "ci_high", "half_width", "p_value", "mde",
            "mde_holm", "n_runs", "n_seeds", "better", "confidence"}
    groups = [c for c in comparison.columns if c not in skip]
    conf = float(comparison["confidence"].iloc[0])
    pairs = "training seeds" if count == "n_seeds" else "runs"
    _, tests = holm_level(comparison)  # the Holm level of the comparisons made together (its strictest step)
    at = (f"at the Holm level of the {tests} comparisons ({1 - conf:.2g}/{tests}; comparison.csv: mde_holm, where "
          f"mde is at {conf:.0%} for one comparison alone)" if tests > 1 else f"at {conf:.0%} (comparison.csv: mde)")
    intro = (f"Paired differences a − b, {conf:.0%} interval; *smallest detectable*: the true difference a paired "
             f"t {at} finds with 80 % power, from the measured spread of the differences over the {pairs} "
             "paired:")
    items = []
    for _, r in comparison.iterrows():
        label, scale, _ = metric_label(str(r["metric"]), extractor)
        where = ", ".join(_fmt(r[c]) for c in groups)
        detectable = float(r["mde_holm"])
        mde = "–" if not np.isfinite(detectable) else f"{detectable * scale:.3g}"
        better = r["better"] if isinstance(r["better"], str) and r["better"] else ""
        items.append(f"{where + ', ' if where else ''}{label}: {r['a']} − {r['b']} = {r['diff_mean'] * scale:.3g} "
                     f"[{r['ci_low'] * scale:.3g}, {r['ci_high'] * scale:.3g}], smallest detectable {mde} "
                     f"({int(r[count])} {pairs}): {better + ' better' if better else 'undecided'}")
    return intro, items


@dataclass
class PaperTable:
    """The paper-style table of a summary as display text, rendered by `table_markdown` (table.md) and by
    report.html alike: header, rows of (text, bold) cells (the first the metric's label), and the notes below."""

    title: str
    header: list[str]
    rows: list[list[tuple[str, bool]]]
    columns_note: str  # what the columns and cells are, what bold means (and the full-set row)
    comparison_intro: str  # "" without a comparison; `*term*` marks emphasis
    comparisons: list[str]
    coverage: str  # what each interval covers


def paper_table(
    summary: pd.DataFrame, comparison: pd.DataFrame | None = None, title: str = "", digits: int = 2,
    extractor: str | Mapping[str, Any] | None = None, given_sets: bool = False,
) -> PaperTable:
    """The paper-style table of `summary`; bold marks a model significantly best in its dataset by `comparison`
    (`given_sets`: the columns are given sets, e.g. two languages, not models: see `direction_sentence`)."""
    t = table_cells(summary, comparison, digits=digits)
    names = t.attrs["group_names"]
    header = ["metric"] + [group_label(g) for g in t.columns]
    rows = [[(metric_label(m, extractor)[0], False)] + [(str(t.loc[m, g]), (m, g) in t.attrs["best"]) for g in t.columns]
            for m in t.index]
    full = full_set_sentence(summary, extractor)
    note = (f"Columns: {' / '.join(names) or 'value'}. {interval_sentence(summary)} {_bold_sentence(summary, comparison, given_sets)}"
            + (f" {full}" if full else ""))
    intro, items = comparison_notes(comparison, extractor)
    coverage = "" if no_interval(summary) else coverage_note(summary)  # the columns note says there is none
    return PaperTable(title, header, rows, note, intro, items, coverage)


def table_markdown(
    summary: pd.DataFrame, comparison: pd.DataFrame | None = None, title: str = "", digits: int = 2,
    extractor: str | Mapping[str, Any] | None = None, given_sets: bool = False,
) -> str:
    """The paper-style table in Markdown (see `paper_table`)."""
    t = paper_table(summary, comparison, title, digits, extractor, given_sets)
    e = md_escape
    lines = [f"### {e(t.title)}", ""] if t.title else []
    lines += ["| " + " | ".join(e(h) for h in t.header) + " |", "|" + "---|" * len(t.header)]
    lines += ["| " + " | ".join(f"**{e(text)}**" if bold else e(text) for text, bold in row) + " |" for row in t.rows]
    lines += ["", e(t.columns_note)]
    if t.comparison_intro:  # its `*term*` emphasis is markup, the rest generated text without labels
        lines += ["", t.comparison_intro, "", *(f"- {e(item)}" for item in t.comparisons)]
    lines += ["", e(t.coverage), ""] if t.coverage else [""]
    return "\n".join(lines)


# the characters with a meaning in LaTeX text, each replaced in one pass (a replacement is never re-escaped)
TEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
               "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "|": r"\textbar{}",
               "<": r"\textless{}", ">": r"\textgreater{}"}
# the ASCII punctuation with a meaning in (GitHub-flavoured) Markdown, its math and tables, or an HTML entity (`&`);
# CommonMark renders `\c` as c. `%` has none, so a note's "99%" stays as written.
MD_SPECIAL = "\\`*_{}[]<>#|$^~&"


# what starts a list item at the head of a line ("- ", "+ ", "1. ", "1) "): escaped there, since a label may begin one
_MD_LEADING = re.compile(r"^([ \t]*\d{0,9})([-+.)])(?=[ \t]|$)")
_LINE_BREAK = re.compile(r"\r\n|[\r\n\v\f\x85\u2028\u2029]")  # one line of text: a break would end a cell or a block


def md_unescape(s: str, keep: str = "|") -> str:
    """`md_escape` undone for reading as plain text (the terminal), except the characters in `keep` (a table row's
    `\\|` stays, so that the row keeps its columns)."""
    return re.sub("\\\\([" + re.escape(MD_SPECIAL + "-+.)") + "])",
                  lambda m: m.group() if m.group(1) in keep else m.group(1), s)


def tex_escape(s: str) -> str:
    """`s` as LaTeX text that prints as `s`: every special character of LaTeX escaped (labels such as `ours$^{x}`), a
    line break as a space (a blank line would end the paragraph, or the table cell)."""
    return re.sub("[" + re.escape("".join(TEX_SPECIAL)) + "]", lambda m: TEX_SPECIAL[m.group()],
                  _LINE_BREAK.sub(" ", str(s)))


def md_escape(s: str) -> str:
    """`s` as Markdown text that shows as `s`, wherever it is put (a table cell: `|` does not split it; the head of a
    line: no list item): each punctuation character with a meaning in Markdown backslash-escaped, a list marker at
    its head too, a line break written as a space (Markdown shows it as one)."""
    text = re.sub("[" + re.escape(MD_SPECIAL) + "]", lambda m: "\\" + m.group(), _LINE_BREAK.sub(" ", str(s)))
    return _MD_LEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), text, count=1)


def mathtext_escape(s: str) -> str:
    """`s` as matplotlib text that draws as `s`: each `$` escaped, so no pair of them is read as mathtext (a label
    `a$x$b` drew x as math; `$\\foo$` stopped the run with a ParseFatalException after every number was computed)."""
    return str(s).replace("$", "\\$")


def tex_text(s: str) -> str:
    """`s` as LaTeX text (`tex_escape`), its ±, −, ×, ³ and ∞ as math, so that pdflatex without Unicode setup prints it."""
    math_chars = {"±": r"$\pm$", "−": r"$-$", "×": r"$\times$", "³": r"$^3$", "∞": r"$\infty$"}
    return re.sub("[±−×³∞]", lambda m: math_chars[m.group()], tex_escape(s))


def table_latex(
    summary: pd.DataFrame, comparison: pd.DataFrame | None = None, caption: str = "", digits: int = 2,
    extractor: str | Mapping[str, Any] | None = None,
) -> str:
    """The paper-style table as a booktabs LaTeX tabular (first group level as multicolumn headers), bold as in
    Markdown; its caption says what a cell is (`interval_sentence`: mean ± which interval's half-width) after
    `caption`, and its first line that it needs booktabs."""
    t = table_cells(summary, comparison, digits=digits)
    groups = list(t.columns)
    ncol = len(groups)
    lines = [r"% needs \usepackage{booktabs} (\toprule, \midrule, \cmidrule, \bottomrule)",
             r"\begin{table}[t]", r"\centering", r"\small"]
    what = interval_sentence(summary)  # what ± is, for a reader of the paper
    text = f"{caption.rstrip('.')}. {what}" if caption else what
    lines.append(rf"\caption{{{tex_text(text)}}}")
    lines += [rf"\begin{{tabular}}{{l{'c' * ncol}}}", r"\toprule"]
    if groups and len(groups[0]) >= 2:
        spans: list[tuple[Any, int]] = []
        for g in groups:
            if spans and spans[-1][0] == g[0]:
                spans[-1] = (g[0], spans[-1][1] + 1)
            else:
                spans.append((g[0], 1))
        head = [rf"\multicolumn{{{n}}}{{c}}{{\textbf{{{tex_escape(_fmt(v))}}}}}" for v, n in spans]
        lines.append(" & " + " & ".join(head) + r" \\")
        start, rules = 2, []
        for _, n in spans:
            rules.append(rf"\cmidrule(lr){{{start}-{start + n - 1}}}")
            start += n
        lines.append("".join(rules))
        sub = [tex_escape(" / ".join(_fmt(v) for v in g[1:])) for g in groups]
    else:
        sub = [tex_escape(group_label(g)) for g in groups]
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
        lines.append(metric_label(m, extractor)[2] + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def write_tables(
    summary: pd.DataFrame, out_dir: str | Path, comparison: pd.DataFrame | None = None, title: str = "",
    extractor: str | Mapping[str, Any] | None = None, given_sets: bool = False,
) -> list[Path]:
    """Write table.md and table.tex for `summary` (bold by `comparison`) into `out_dir`; `extractor` names FD."""
    out = Path(out_dir)
    atomic_write_text(out / "table.md", table_markdown(summary, comparison, title, extractor=extractor,
                                                       given_sets=given_sets))
    atomic_write_text(out / "table.tex", table_latex(summary, comparison, title, extractor=extractor))
    return [out / "table.md", out / "table.tex"]
