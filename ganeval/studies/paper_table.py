"""Our GAN table beside the paper's Table 1: per cell, do the intervals overlap; per dataset × metric, does the paper's
ordering hold in ours, decided from the interval of the paired difference (`experiment=paper_table`).

Plain functions of the summary and the model comparison (`ganeval.results`): `cells` and `orderings` build the
frames, `table_markdown` / `table_latex` / `verdict_markdown` render them. An ordering "holds" only when the
Holm-corrected p-value of our paired difference WGAN − WGAN-GP (all dataset × metric pairs of the run corrected
together) is within 1 − confidence and the difference lies in the paper's direction, is "contradicted" when it lies
the other way, "not testable here" otherwise (with the smallest difference the paired t could have detected), and
"not run" for a dataset this run did not score, and "not tested: stand-in data" for every pair when the run's
features, weights or files are not the paper's (`stand_in`): its numbers are shown and decide nothing (the common
vocabulary: `ganeval.results.verdicts`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ganeval.common import atomic_write_text
from ganeval.hashing import short_hash
from ganeval.studies.paper_numbers import (
    PAPER_DATASETS,
    PAPER_METRICS,
    PAPER_MODELS,
    PAPER_PROTOCOL,
    PAPER_SCALE,
    PAPER_TABLE,
    paper_better,
)
from ganeval.results.seeds import coverage_note
from ganeval.results.tables import metric_label, table_cells, tex_escape

from ganeval.results.power import paired_t_mde_effect  # noqa: E402
from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, STAND_IN, holm_adjust  # noqa: E402

REVERSED, UNDECIDED, NOT_RUN = CONTRADICTED, NOT_TESTABLE, "not run"
A, B = PAPER_MODELS  # the paper's pair, in its order: the difference is always A − B (WGAN − WGAN-GP)
PUBLISHED_WEIGHTS = "6726825d"  # SHA-256 prefix of pytorch-fid's FID Inception weights (the paper's features)


def _label(dataset: str) -> str:
    return PAPER_DATASETS.get(dataset, dataset)


def _model(model: str) -> str:
    return PAPER_MODELS.get(model, model)


def columns(summary: pd.DataFrame) -> list[tuple[str, str]]:
    """The table's (dataset, model) columns: the paper's eight in its order, then any other of the summary's."""
    ours = list(dict.fromkeys(zip(summary["data"].astype(str), summary["model"].astype(str))))
    paper = [(d, m) for d in PAPER_DATASETS for m in PAPER_MODELS]
    return paper + [c for c in ours if c not in paper]


def cells(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, model, metric) of the table: our interval and the paper's, in the paper's units
    (KID×10³), and whether they overlap ('yes', 'no'; 'not run' where we have no cell, '' where the paper has
    none)."""
    ours = {(str(r.data), str(r.model), str(r.metric)): r for r in summary.itertuples(index=False)}
    metrics = list(PAPER_METRICS) + sorted({str(m) for m in summary.metric} - set(PAPER_METRICS))
    out = []
    for data, model in columns(summary):
        for metric in metrics:
            scale = PAPER_SCALE.get(metric, metric_label(metric)[1])
            r = ours.get((data, model, metric))
            p = PAPER_TABLE.get((data, model, metric))
            row: dict[str, Any] = {"data": data, "model": model, "metric": metric,
                                   "ours_mean": np.nan, "ours_low": np.nan, "ours_high": np.nan,
                                   "paper_mean": np.nan, "paper_low": np.nan, "paper_high": np.nan}
            if r is not None:
                row.update(ours_mean=r.mean * scale, ours_low=r.ci_low * scale, ours_high=r.ci_high * scale)
            if p is not None:
                row.update(paper_mean=p.mean, paper_low=p.mean - p.half_width, paper_high=p.mean + p.half_width)
            if r is None:
                row["overlap"] = NOT_RUN
            elif p is None:
                row["overlap"] = ""
            elif not np.isfinite(row["ours_low"]):
                row["overlap"] = "no interval"
            else:
                row["overlap"] = "yes" if max(row["ours_low"], row["paper_low"]) <= min(row["ours_high"],
                                                                                         row["paper_high"]) else "no"
            out.append(row)
    return pd.DataFrame(out)


def decide(low: float, high: float, paper_sign: float) -> str:
    """The verdict of a difference's interval [low, high] against the paper's sign of it (+1 or −1)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return UNDECIDED
    if low > 0 or high < 0:
        return HOLDS if (1.0 if low > 0 else -1.0) == paper_sign else REVERSED
    return UNDECIDED


def stand_in(extractor: Mapping[str, Any] | None, config: Mapping[str, Any] | None = None) -> str:
    """Why this run's numbers cannot test the paper's Table 1 ('' when they can): features other than Inception pool3
    (2048-d), Inception weights other than the published FID weights, or dataset files read with checksums=false
    (not the published files)."""
    ex, why = dict(extractor or {}), []
    if ex.get("name") != "inception" or ex.get("dims") != 2048:
        why.append(f"{ex.get('name')} features, not Inception pool3")
    elif not str(ex.get("weights") or "").startswith(PUBLISHED_WEIGHTS):
        why.append(f"Inception weights {short_hash(str(ex.get('weights') or ''))}…, not the published FID weights")
    datasets = dict((config or {}).get("datasets") or {})
    unchecked = [_label(d) for d, spec in datasets.items()
                 if isinstance(spec, Mapping) and dict(spec.get("data") or {}).get("checksums") is False]
    if unchecked:
        why.append(f"{', '.join(unchecked)} files not the published ones (checksums=false)")
    return "; ".join(why)


def orderings(comparison: pd.DataFrame | None, datasets_run: Sequence[str], stand_in: str = "") -> pd.DataFrame:
    """One row per paper dataset × metric: the paper's difference WGAN − WGAN-GP, ours (mean, the interval of the
    paired difference and its minimum detectable effect, in the paper's units), its p-value, the Holm-corrected one
    over every pair run, and the verdict (holds / contradicted / not testable here / not run; not tested: stand-in
    data for every pair run when `stand_in` names why the run cannot test the paper's table)."""
    if comparison is None or comparison.empty:
        comparison = pd.DataFrame(columns=["data", "metric", "a", "b"])
    out = []
    for data in PAPER_DATASETS:
        for metric in PAPER_METRICS:
            pa, pb = PAPER_TABLE[(data, A, metric)].mean, PAPER_TABLE[(data, B, metric)].mean
            row: dict[str, Any] = {"data": data, "metric": metric, "paper_better": paper_better(data, metric),
                                   "paper_diff": pa - pb, "diff_mean": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                                   "n_pairs": np.nan, "paired_by": "", "mde": np.nan, "p_value": np.nan,
                                   "p_holm": np.nan, "verdict": NOT_RUN}
            pair = comparison["a"].astype(str) + "|" + comparison["b"].astype(str)
            hit = comparison[(comparison["data"].astype(str) == data) & (comparison["metric"] == metric)
                             & pair.isin([f"{A}|{B}", f"{B}|{A}"])]
            if data in datasets_run and len(hit):
                c = hit.iloc[0]
                sign, scale = (1.0 if str(c["a"]) == A else -1.0), PAPER_SCALE[metric]
                lo, hi = sorted((sign * c["ci_low"] * scale, sign * c["ci_high"] * scale))
                seeds = "n_seeds" in c.index and pd.notna(c.get("n_seeds"))
                row.update(diff_mean=sign * c["diff_mean"] * scale, ci_low=lo, ci_high=hi,
                           n_pairs=int(c["n_seeds"] if seeds else c["n_runs"]),
                           paired_by="training seed" if seeds else "run",
                           mde=float(c["mde"]) * scale if "mde" in c.index else np.nan,
                           p_value=float(c["p_value"]), confidence=float(c["confidence"]),
                           verdict=decide(lo, hi, float(np.sign(pa - pb))))
            out.append(row)
    frame = pd.DataFrame(out)
    run = frame.verdict != NOT_RUN
    if run.any():  # Holm over every pair run: a decision whose corrected p misses the level is not testable here
        alpha = 1.0 - float(frame.loc[run, "confidence"].iloc[0])
        frame.loc[run, "p_holm"] = holm_adjust(frame.loc[run, "p_value"].to_numpy())
        frame.loc[run & (frame.p_holm > alpha), "verdict"] = NOT_TESTABLE
        # every smallest detectable effect at the family's Holm level (alpha / the pairs run): the ratio of the
        # exact detectable effect sizes at the two levels, with each pair's own count
        tests = int(run.sum())
        frame.loc[run, "mde"] = [m * paired_t_mde_effect(int(n), alpha / tests) / paired_t_mde_effect(int(n), alpha)
                                 for m, n in zip(frame.loc[run, "mde"], frame.loc[run, "n_pairs"])]
        if stand_in:
            frame.loc[run, "verdict"] = STAND_IN
    return frame.drop(columns=["confidence"], errors="ignore")


def protocol_differences(sample_size: int, runs: int, confidence: float, extractor: Mapping[str, Any] | None,
                         train_epochs: Any = None) -> list[str]:
    """How our protocol differs from the paper's (10k vs 10k, 100 runs, 99 %, published Inception pool3 weights)."""
    out = []
    if sample_size != PAPER_PROTOCOL["sample_size"]:
        out.append(f"sample_size {sample_size} (paper {PAPER_PROTOCOL['sample_size']}; IMD's value depends on it)")
    if runs != PAPER_PROTOCOL["runs"]:
        out.append(f"runs {runs} (paper {PAPER_PROTOCOL['runs']})")
    if abs(confidence - PAPER_PROTOCOL["confidence"]) > 1e-12:
        out.append(f"confidence {confidence:g} (paper {PAPER_PROTOCOL['confidence']:g})")
    ex = dict(extractor or {})
    if ex.get("name") != "inception" or ex.get("dims") != 2048 or ex.get("resize") != 299 or ex.get("autocast"):
        out.append(f"features {ex.get('name')} {ex.get('dims', '')}-d"
                   f"{', resize ' + str(ex.get('resize')) if ex.get('name') == 'inception' else ''}"
                   f"{', autocast ' + str(ex.get('autocast')) if ex.get('autocast') else ''}"
                   f" (paper {PAPER_PROTOCOL['features']}, 299×299 input)")
    weights = str(ex.get("weights") or "")  # full SHA-256 (8 digits in older records): shown short
    if ex.get("name") == "inception" and not weights.startswith(PUBLISHED_WEIGHTS):
        out.append(f"Inception weights {short_hash(weights)}… (not the published FID weights {PUBLISHED_WEIGHTS}…)")
    if train_epochs is not None:
        out.append(f"train_epochs={train_epochs} overrides every model's epochs (paper: 200; CelebA 50)")
    return out


def _interval(low: float, high: float, digits: int = 2) -> str:
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _conf(summary: pd.DataFrame) -> str:
    return f"{float(summary['confidence'].iloc[0]):.0%}"


def _not_comparable(differences: Sequence[str]) -> str:
    if not differences:
        return "Our protocol is the paper's (10k vs 10k, 100 runs, 99 %, published Inception pool3 weights)."
    return ("Our protocol differs from the paper's: " + "; ".join(differences) + ". So our cells and the paper's are "
            "not the same quantity and their overlap says nothing about the paper's numbers.")


def table_markdown(summary: pd.DataFrame, comparison: pd.DataFrame | None, title: str,
                   differences: Sequence[str], note: str = "", digits: int = 2, stand_in: str = "") -> str:
    """table.md: per metric three rows (ours, the paper's, overlap) over the paper's eight columns (and any other we
    ran), then the ordering table (the paper's difference WGAN − WGAN-GP beside ours, with its verdict)."""
    c = cells(summary)
    t = table_cells(summary, comparison, digits=digits)
    cols = columns(summary)
    metrics = list(dict.fromkeys(c.metric))
    lines = ([f"### {title}", ""] if title else []) + ([f"**{note}**", ""] if note else [])
    lines += ["| metric | | " + " | ".join(f"{_label(d)} / {_model(m)}" for d, m in cols) + " |",
              "|---|---|" + "---|" * len(cols)]
    for metric in metrics:
        label = metric_label(metric)[0]
        ours, paper, overlap = [], [], []
        for d, m in cols:
            row = c[(c.data == d) & (c.model == m) & (c.metric == metric)].iloc[0]
            key = next((g for g in t.columns if (str(g[0]), str(g[-1])) == (d, m)), None)
            cell = t.loc[metric, key] if key is not None and metric in t.index else NOT_RUN
            ours.append(f"**{cell}**" if key is not None and (metric, key) in t.attrs["best"] else cell)
            half = (row.paper_high - row.paper_low) / 2
            paper.append("–" if np.isnan(row.paper_mean) else f"{row.paper_mean:.2f} ± {half:.2f}")
            overlap.append(row.overlap or "–")
        lines += [f"| {label} | ours | " + " | ".join(ours) + " |",
                  "| | paper | " + " | ".join(paper) + " |",
                  "| | overlap | " + " | ".join(overlap) + " |"]
    o = orderings(comparison, sorted(set(summary["data"].astype(str))), stand_in)
    conf = _conf(summary)
    diff = f"{_model(A)} − {_model(B)}"
    lines += ["", f"Ordering: the paper ranks {_model(B)} better (lower) than {_model(A)} on every dataset and "
              f"metric. Ours: the {conf} interval of the paired difference {diff}.", "",
              f"| dataset | metric | paper {diff} | ours {diff} [{conf} interval] | paired by | verdict (Holm) | "
              "smallest detectable |",
              "|---|---|---|---|---|---|---|"]
    for r in o.itertuples(index=False):
        interval = _interval(r.ci_low, r.ci_high, digits)
        ours_diff = "–" if r.verdict == NOT_RUN else f"{r.diff_mean:.{digits}f} {interval}"
        by = "–" if r.verdict == NOT_RUN else f"{r.paired_by} (n = {int(r.n_pairs)})"
        mde = "–" if r.verdict == NOT_RUN or not np.isfinite(r.mde) else f"{r.mde:.{digits}f}"
        lines.append(f"| {_label(r.data)} | {metric_label(r.metric)[0]} | {r.paper_diff:.2f} | {ours_diff} | {by} | "
                     f"{r.verdict} | {mde} |")
    lines += ["", f"Cells: mean ± half-width of the {conf} interval (the paper's: 99 % over 100 runs of 10k vs 10k). "
              "Bold (ours only): significantly best in its dataset by the paired difference. Overlap: whether our "
              "interval and the paper's share a point. Verdict: holds when the Holm-corrected p-value of our paired "
              "difference (all pairs run corrected together) is within the level and the difference lies in the "
              "paper's direction, contradicted when it lies the other way, not testable here otherwise; "
              f"{STAND_IN} for every pair when the run's features, weights or files are not the paper's"
              f"{f' (here: {stand_in})' if stand_in else ''}. Smallest "
              "detectable: the difference a paired t at the Holm level (1 − confidence)/(pairs run) finds with 80 % power, "
              "from the measured spread.",
              "", _not_comparable(differences), "", coverage_note(summary), ""]
    return "\n".join(lines)


_tex = tex_escape  # the one LaTeX escaping of the results layer


def _tex_cell(text: str, bold: bool = False) -> str:
    if " ± " not in text:
        return _tex(text).replace("–", "--")
    mean, half = text.split(" ± ")
    mean = r"\mathbf{" + mean + "}" if bold else mean
    return f"${mean} \\pm {half}$"


def table_latex(summary: pd.DataFrame, comparison: pd.DataFrame | None, title: str,
                differences: Sequence[str], note: str = "", digits: int = 2, stand_in: str = "") -> str:
    """table.tex: the paper's layout (datasets as multicolumn headers, models below) with rows ours / paper / overlap
    per metric, and the ordering table; booktabs."""
    c = cells(summary)
    t = table_cells(summary, comparison, digits=digits)
    cols = columns(summary)
    datasets = list(dict.fromkeys(d for d, _ in cols))
    caption = title + (f" ({note})" if note else "")
    lines = [r"\begin{table}[t]", r"\centering", r"\small"]
    if caption:
        lines.append(rf"\caption{{{_tex(caption)}}}")
    lines += [rf"\begin{{tabular}}{{ll{'c' * len(cols)}}}", r"\toprule",
              " & & " + " & ".join(rf"\multicolumn{{{sum(1 for d2, _ in cols if d2 == d)}}}{{c}}"
                                   rf"{{\textbf{{{_tex(_label(d))}}}}}" for d in datasets) + r" \\"]
    start, rules = 3, []
    for d in datasets:
        n = sum(1 for d2, _ in cols if d2 == d)
        rules.append(rf"\cmidrule(lr){{{start}-{start + n - 1}}}")
        start += n
    lines += ["".join(rules), r"\textbf{Metric} & & " + " & ".join(_tex(_model(m)) for _, m in cols) + r" \\",
              r"\midrule"]
    for metric in dict.fromkeys(c.metric):
        ours, paper, overlap = [], [], []
        for d, m in cols:
            row = c[(c.data == d) & (c.model == m) & (c.metric == metric)].iloc[0]
            key = next((g for g in t.columns if (str(g[0]), str(g[-1])) == (d, m)), None)
            text = t.loc[metric, key] if key is not None and metric in t.index else NOT_RUN
            ours.append(_tex_cell(text, key is not None and (metric, key) in t.attrs["best"]))
            half = (row.paper_high - row.paper_low) / 2
            paper.append("--" if np.isnan(row.paper_mean) else f"${row.paper_mean:.2f} \\pm {half:.2f}$")
            overlap.append(_tex(row.overlap) if row.overlap else "--")
        lines += [metric_label(metric)[2] + " & ours & " + " & ".join(ours) + r" \\",
                  " & paper & " + " & ".join(paper) + r" \\",
                  " & overlap & " + " & ".join(overlap) + r" \\"]
    lines += [r"\bottomrule", r"\end{tabular}", "", r"\medskip", "", r"\begin{tabular}{llrll}", r"\toprule",
              rf"\textbf{{Dataset}} & \textbf{{Metric}} & paper {_tex(_model(A))} $-$ {_tex(_model(B))} & "
              rf"ours [{_tex(_conf(summary))} interval] & verdict \\", r"\midrule"]
    for r in orderings(comparison, sorted(set(summary["data"].astype(str))), stand_in).itertuples(index=False):
        ours_diff = "--" if r.verdict == NOT_RUN else (
            f"${r.diff_mean:.{digits}f}$ $[{r.ci_low:.{digits}f}, {r.ci_high:.{digits}f}]$")
        lines.append(f"{_tex(_label(r.data))} & {metric_label(r.metric)[2]} & ${r.paper_diff:.2f}$ & {ours_diff} & "
                     f"{r.verdict} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def overall(o: pd.DataFrame) -> str:
    """One statement on the paper's claim (WGAN-GP better on every metric) over the datasets run."""
    run = o[o.verdict != NOT_RUN]
    missing = [_label(d) for d in dict.fromkeys(o[o.verdict == NOT_RUN].data)]
    untested = f" Not run (claim untested there): {', '.join(missing)}." if missing else ""
    if run.empty:
        return f"Overall: no dataset of the paper's table was run, so the claim is untested.{untested}"
    if (run.verdict == STAND_IN).all():
        return (f"Overall: {STAND_IN} — this run's features, weights or files are not the paper's, so its "
                f"{len(run)} dataset × metric differences say nothing about the paper's ordering.{untested}")
    n, counts = len(run), run.verdict.value_counts()
    h, rv, u = (int(counts.get(v, 0)) for v in (HOLDS, REVERSED, UNDECIDED))
    what = f"{h} of {n} dataset × metric pairs hold, {rv} contradicted, {u} not testable here"
    if h == n:
        status = "holds on every dataset and metric run"
    elif rv:
        status = "does not hold: the ordering is reversed (contradicted) where listed above"
    else:
        status = "is not confirmed: some differences are not testable here"
    return f"Overall: the paper's ordering ({_model(B)} better) {status} ({what}).{untested}"


def claim_result(o: pd.DataFrame, conf: str, stand_in: str = "") -> str:
    """The paper's ordering claim as one result sentence (`ganeval.results.verdict.claim_sentence`): its verdict over
    the datasets run and the cells that decided it."""
    from ganeval.results.verdict import claim_sentence

    what = f"The paper's claim ({_model(B)} better than {_model(A)} on IMD, KID and FID for every dataset)"
    run = o[o.verdict != NOT_RUN]
    if run.empty:
        return claim_sentence(what, NOT_TESTABLE, "no dataset of the paper's table was run")
    if (run.verdict == STAND_IN).all():
        return claim_sentence(what, STAND_IN, f"{stand_in or 'not the paper’s data or weights'}; the "
                              f"{len(run)} dataset × metric differences are shown, and decide nothing")
    counts = run.verdict.value_counts()
    h, rv, u = (int(counts.get(v, 0)) for v in (HOLDS, REVERSED, UNDECIDED))

    def cells(v: str) -> str:
        return ", ".join(f"{_label(r.data)} {metric_label(r.metric)[0]}" for r in run[run.verdict == v].itertuples())

    parts = [f"{k} {v}" + (f" ({cells(v)})" if k else "") for k, v in ((h, HOLDS), (rv, REVERSED), (u, UNDECIDED))]
    verdict = HOLDS if h == len(run) else REVERSED if rv else UNDECIDED
    return claim_sentence(what, verdict, f"of {len(run)} dataset × metric pairs run: {', '.join(parts)}; {conf} "
                          f"intervals of the paired difference {_model(A)} − {_model(B)}, Holm-corrected")


def agreement(o: pd.DataFrame) -> list[str]:
    """Per dataset run: does IMD's verdict agree with KID's and FID's (the paper's caption: IMD agrees with both)?
    Only decided verdicts (holds / contradicted) can agree or disagree; the line names which metrics were decided."""
    out = []
    for data, g in o[o.verdict != NOT_RUN].groupby("data", sort=False):
        v = dict(zip(g.metric, g.verdict))
        if set(v.values()) == {STAND_IN}:
            out.append(f"- {_label(str(data))}: IMD, KID and FID agreement {STAND_IN}")
            continue
        decided = {m: x for m, x in v.items() if x in (HOLDS, REVERSED)}
        names = lambda ms: " and ".join(metric_label(m)[0] for m in ms)  # noqa: E731
        open_ = [m for m in v if m not in decided]
        if len(decided) == len(v) and len(set(decided.values())) == 1:
            state = f"agree (all three: {next(iter(decided.values()))})"
        elif "imd" in decided and any(x != decided["imd"] for m, x in decided.items() if m != "imd"):
            state = "disagree (IMD decided against a decided KID or FID)"
        elif "imd" not in decided:
            state = ("agreement not testable here (IMD not testable here"
                     + (f"; decided: {names(decided)}" if decided else "") + ")")
        else:
            state = f"agreement not testable here ({names(open_)} not testable here)"
        out.append(f"- {_label(str(data))}: IMD, KID and FID " + state + ": "
                   + ", ".join(f"{metric_label(m)[0]} {x}" for m, x in v.items()))
    return out


def verdict_markdown(summary: pd.DataFrame, comparison: pd.DataFrame | None, differences: Sequence[str],
                     note: str = "", stand_in: str = "") -> str:
    """verdict.md: one line per paper dataset × metric (the ordering verdict, or 'not run'), the agreement of IMD with
    KID and FID per dataset run, an overall statement, and what our protocol and intervals are."""
    o = orderings(comparison, sorted(set(summary["data"].astype(str))), stand_in)
    conf = _conf(summary)
    lines = ["# The paper's Table 1 (tab:gans) against ours", ""]  # the note heads the result sentences (below)
    lines += [f"The paper's claim: {_model(B)} is better (lower) than {_model(A)} on IMD, KID and FID for every "
              f"dataset, and IMD agrees with KID and FID. Decided here from the {conf} interval of our paired "
              f"difference {_model(A)} − {_model(B)}, every dataset × metric pair run corrected together (Holm): "
              "**holds** when the corrected p-value is within the level and the difference lies in the paper's "
              "direction, **contradicted** when it lies the other way, **not testable here** otherwise (the test "
              "had no power: the smallest difference a paired t at the Holm level (the level ÷ the pairs run) finds with "
              "80 % power, from the "
              f"measured spread, is given); **{STAND_IN}** for every pair when the run's features, weights or files "
              "are not the paper's (its numbers are shown and decide nothing). Practical threshold: any difference (the paper states no size); our "
              "protocol differs from the paper's (below), so no cell says whether the effect is better or worse "
              "than the paper's.", ""]
    for r in o.itertuples(index=False):
        head = f"- {_label(r.data)}, {metric_label(r.metric)[0]}: "
        if r.verdict == NOT_RUN:
            lines.append(head + NOT_RUN)
            continue
        lines.append(head + f"{r.verdict} ({_model(A)} − {_model(B)} = {r.diff_mean:.4g}, {conf} interval "
                     f"{_interval(r.ci_low, r.ci_high, 4)}, paired by {r.paired_by}, n = {int(r.n_pairs)}, "
                     f"p = {r.p_value:.2g}, Holm {r.p_holm:.2g}, smallest detectable {r.mde:.4g}; "
                     f"paper {r.paper_diff:.2f})")
    agree = agreement(o)
    if agree:
        lines += ["", "IMD against KID and FID (the paper's caption: IMD agrees with both):", *agree]
    lines += ["", overall(o), "", _not_comparable(differences), "", coverage_note(summary), ""]
    from ganeval.results.verdict import comparison_sentences, markdown_sentences, percent
    from ganeval.results.verdict import verdict_markdown as with_head

    head = [*([f"**{note}**"] if note else []), *markdown_sentences(comparison_sentences(comparison)),
            claim_result(o, percent(float(summary["confidence"].iloc[0])), stand_in)]
    return with_head(head, lines[0].lstrip("# "), "\n".join(lines[2:]))


def write(out_dir: str | Path, summary: pd.DataFrame, comparison: pd.DataFrame | None, title: str,
          differences: Sequence[str], note: str = "", stand_in: str = "") -> pd.DataFrame:
    """Write table.md, table.tex, verdict.md, verdict.csv (the orderings) and paper_cells.csv; return the orderings."""
    from ganeval.results import write_csv

    out = Path(out_dir)
    o = orderings(comparison, sorted(set(summary["data"].astype(str))), stand_in)
    atomic_write_text(out / "table.md", table_markdown(summary, comparison, title, differences, note, stand_in=stand_in))
    atomic_write_text(out / "table.tex", table_latex(summary, comparison, title, differences, note, stand_in=stand_in))
    atomic_write_text(out / "verdict.md", verdict_markdown(summary, comparison, differences, note, stand_in))
    write_csv(o, out / "verdict.csv")
    write_csv(cells(summary), out / "paper_cells.csv")
    return o
