"""The stability study's results: the verdict on the paper's statements, its markdown, the table and the figure."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from ganeval.studies.stability_grid import (LINES, PAIRS, PAPER, Part, loglog_slope,
                                            welch_interval)


# --------------------------------------------------------------------------- the verdict
def _line(summary: pd.DataFrame, metric: str, knn: str, pair: str) -> pd.DataFrame:
    return summary[(summary.metric == metric) & (summary.knn == knn) & (summary.pair == pair)].sort_values("n")


def _lines(summary: pd.DataFrame) -> list[tuple[str, str]]:
    present = set(zip(summary.metric, summary.knn))
    return [line for line in LINES if line in present]


def label(metric: str, knn: str) -> str:
    """'IMD (exact kNN)', 'FID', ... for text and plots."""
    return metric.upper() + (f" ({knn} kNN)" if knn else "")


def timing_table(sizes: Sequence[int], parts: Sequence[Part], timings: dict[str, dict[str, Any]],
                 recall: dict[int, float]) -> pd.DataFrame:
    """knn.csv: per n, the approximate graph's recall, each part's seconds per run (when its runs were made) and the
    highest 1-min load average seen then."""
    out = []
    for n in sizes:
        row: dict[str, Any] = {"n": n, "approx_recall": recall.get(n, math.nan)}
        loads = []
        for part in parts:
            if part.n == n:
                t = timings.get(f"n{n}-{part.name}", {})
                row[f"seconds_per_run_{part.name}"] = t.get("seconds_per_run", math.nan)
                loads.append(t.get("load_1min", math.nan))
        row["load_1min_max"] = max(loads, default=math.nan)
        out.append(row)
    return pd.DataFrame(out)


RECALL_EXACT = 0.999  # an approximate graph with at least this recall at every n is the exact one, for testing
VARIANCE_SIMILAR = 1.5  # "no additional variance" holds where every ratio approx/exact is below this (upper bound)


def verdict(summary: pd.DataFrame, comparison: pd.DataFrame, seconds: dict[str, float] | None = None,
            recall: dict[int, float] | None = None) -> list[dict[str, Any]]:
    """The claims answered from the intervals, each {claim, holds (True/False/None: not testable here), detail}.

    The claims about approximate k-NN (no added variance, diverging further) are not testable here when the
    approximate graph equals the exact one (recall ≥ RECALL_EXACT at every n): no effect of approximation can
    show, whatever the intervals say; their detail names the smallest paired difference the test could detect.
    Otherwise "no added variance" holds where every variance ratio's upper bound is ≤ VARIANCE_SIMILAR, is
    contradicted where a lower bound exceeds 1, and is not testable where the intervals are wider than that;
    "diverges further" holds where approx − exact at the largest n is significantly positive and larger (relative)
    than at the smallest, is contradicted where it is significantly negative there or significant but not larger,
    and is not testable where it contains 0 (the smallest detectable difference is named)."""
    sizes = sorted(summary.n.unique())
    lo_n, hi_n = sizes[0], sizes[-1]
    return (_separation_claims(summary, comparison) + _interval_claims(summary, lo_n, hi_n)
            + _falls_claims(summary, lo_n, hi_n) + _diverge_claims(summary, hi_n)
            + approx_claims(summary, comparison, recall) + _timing_claims(sizes, seconds, recall))


def _separation_claims(summary: pd.DataFrame, comparison: pd.DataFrame) -> list[dict[str, Any]]:
    """Per line: the different pair above the same pair at every n, by the paired t on different − same (the runs
    share their subsample of the first half: paired; `stability_claims.decide` corrects the sizes by Holm)."""
    claims: list[dict[str, Any]] = []
    diff = comparison[comparison.kind == "different - same"]
    for metric, knn in _lines(summary):
        d = diff[(diff.metric == metric) & (diff.knn == knn)].sort_values("n")
        fails = [int(r.n) for _, r in d.iterrows() if not r.ci_low > 0]
        reversed_ = bool((d.ci_high < 0).any())  # a significantly lower different pair contradicts; else no power
        claims.append({
            "claim": f"separation/{metric}/{knn}".rstrip("/"),
            "holds": True if not fails else (False if reversed_ else None),
            "detail": separation_detail(label(metric, knn), d, fails),
        })
    return claims


def separation_detail(name: str, d: pd.DataFrame, fails: Sequence[int]) -> str:
    """A separation line in words: at which n the paired difference different − same is not significantly > 0
    (`fails`), the differences at every n, and the smallest detectable difference where undecided."""
    mde = "; smallest detectable (paired t at the claims' Holm level, 80 % power) where undecided: " + ", ".join(
        f"n={int(r.n)}: {r.mde:.2g}" for _, r in d.iterrows() if int(r.n) in fails) if fails and "mde" in d else ""
    where = ("at every n" if not fails else "at no n" if len(fails) == len(d) else
             f"except at n = {', '.join(map(str, fails))}")
    return (f"{name}: the different pair lies above the same pair {where} (paired t on different − same, "
            "Holm-corrected); different − same: "
            + ", ".join(f"n={int(r.n)}: {r.diff_mean:.4g} ± {r.half_width:.2g}" for _, r in d.iterrows()) + mde)


def _interval_claims(summary: pd.DataFrame, lo_n: int, hi_n: int) -> list[dict[str, Any]]:
    """Per line and pair: the interval narrows from the smallest n to the largest (and its log-log slope)."""
    claims: list[dict[str, Any]] = []
    for metric, knn in _lines(summary):
        for pair in PAIRS:
            s = _line(summary, metric, knn, pair)
            slope = loglog_slope(s.n, s.half_width)
            ratio = float(s.half_width.iloc[0] / s.half_width.iloc[-1])
            claims.append({
                "claim": f"interval/{metric}/{knn}/{pair}".replace("//", "/"),
                "holds": bool(s.half_width.iloc[-1] < s.half_width.iloc[0]),
                "slope": slope,
                "detail": f"{label(metric, knn)}, {pair} pair: half-width {s.half_width.iloc[0]:.3g} at n={lo_n} → "
                          f"{s.half_width.iloc[-1]:.3g} at n={hi_n} (×{1 / ratio:.2f}); log-log slope {slope:.2f} "
                          "(−0.5 would be 1/√n)",
            })
    return claims


def _falls_claims(summary: pd.DataFrame, lo_n: int, hi_n: int) -> list[dict[str, Any]]:
    """Per line and pair: the mean falls with n, each step outside the intervals, and overall (Welch)."""
    claims: list[dict[str, Any]] = []
    for metric, knn in _lines(summary):
        for pair in PAIRS:
            s = _line(summary, metric, knn, pair)
            falls = all(a.ci_low > b.ci_high for (_, a), (_, b) in zip(s.iloc[:-1].iterrows(), s.iloc[1:].iterrows()))
            d, low, high = welch_interval(s.iloc[0], s.iloc[-1], float(s.confidence.iloc[0]))
            claims.append({
                "claim": f"falls/{metric}/{knn}/{pair}".replace("//", "/"),
                "holds": falls,
                "overall": bool(low > 0),
                "slope": loglog_slope(s.n, s["mean"].abs()),
                "detail": f"{label(metric, knn)}, {pair} pair: mean " + " → ".join(f"{v:.4g}" for v in s["mean"])
                          + f" over n = {', '.join(map(str, s.n))}; "
                          + ("each n's interval lies above the next one's" if falls else
                             "not every step down is outside the intervals")
                          + f"; n={lo_n} − n={hi_n}: {d:+.4g} [{low:.4g}, {high:.4g}] (Welch)",
            })
    return claims


AXIS = (0.5, 2.5)  # the paper's figure's y axis: "not too much" = within it


def _diverge_claims(summary: pd.DataFrame, hi_n: int) -> list[dict[str, Any]]:
    """Per line: the different pair relative to the largest n stays within the paper's 0.5–2.5 axis, decided from
    the relative intervals (each n's interval divided by the largest n's mean): holds where every one lies within
    the axis, contradicted where one lies wholly outside it, not testable here where one straddles an end."""
    lo, hi = AXIS
    claims: list[dict[str, Any]] = []
    for metric, knn in _lines(summary):
        s = _line(summary, metric, knn, "different")
        rel, a, b = (s[c].to_numpy() for c in ("relative_mean", "relative_ci_low", "relative_ci_high"))
        inside = bool(((a >= lo) & (b <= hi)).all())
        outside = bool(((b < lo) | (a > hi)).any())
        straddle = [int(n) for n, x, y in zip(s.n, a, b) if not (x >= lo and y <= hi) and not (y < lo or x > hi)]
        claims.append({
            "claim": f"diverge/{metric}/{knn}".rstrip("/"),
            "holds": True if inside else False if outside else None,
            "range": [float(rel.min()), float(rel.max())],
            "straddles": straddle,
            "detail": f"{label(metric, knn)}, different pair, relative to n={hi_n}: "
                      + ", ".join(f"n={int(n)}: {r:.2f} [{x:.2f}, {y:.2f}]" for n, r, x, y in zip(s.n, rel, a, b))
                      + f" (the paper's figure spans {lo:g}–{hi:g})",
        })
    return claims


def approx_claims(summary: pd.DataFrame, comparison: pd.DataFrame,
                  recall: dict[int, float] | None) -> list[dict[str, Any]]:
    """Approximate against exact k-NN: added variance, diverging further, agreeing intervals (when approx ran), by
    the rules `verdict` states."""
    claims: list[dict[str, Any]] = []
    ae = comparison[comparison.kind == "approx - exact"] if "kind" in comparison else comparison.iloc[:0]
    exact_graph = recall is not None and bool(recall) and min(recall.values()) >= RECALL_EXACT
    why = (f"the approximate graph is the exact one at these n (recall of the true k-NN "
           f"≥ {RECALL_EXACT} at every n), so no effect of approximation can show; ") if exact_graph else ""
    if len(ae):
        more_var, widest = ae[ae.var_ratio_low > 1], float(ae.var_ratio_high.max())
        similar = bool(widest <= VARIANCE_SIMILAR)
        rule = ("" if exact_graph else
                f"rule: holds where every upper bound is ≤ {VARIANCE_SIMILAR} (similar variance), contradicted where "
                "a lower bound is > 1" + ("" if similar or not more_var.empty else
                                          f"; the intervals reach ×{widest:.2f}, so an added "
                                          f"variance up to that could not be told from none") + "; ")
        claims.append({
            "claim": "approx/no_added_variance",
            "holds": None if exact_graph else (False if not more_var.empty else (True if similar else None)),
            "detail": why + rule + "variance ratio approx/exact per run (Pitman–Morgan interval): "
                      + "; ".join(f"n={int(r.n)} {r.pair}: {r.var_ratio:.2f} [{r.var_ratio_low:.2f}, {r.var_ratio_high:.2f}]"
                                  for _, r in ae.iterrows()),
        })
        for pair in PAIRS:
            a = ae[ae.pair == pair].sort_values("n")
            ex = _line(summary, "imd", "exact", pair).set_index("n")["mean"]
            rel = (a.diff_mean.to_numpy() / ex.loc[a.n].to_numpy())
            top = a.iloc[-1]
            mde = ", ".join(f"n={int(r.n)}: {r.mde:.2g}" for _, r in a.iterrows() if "mde" in a.columns)
            grows = bool(top.excludes_zero and top.diff_mean > 0 and abs(rel[-1]) > abs(rel[0]))
            shown = bool(top.excludes_zero)  # significant at the largest n: either way
            claims.append({
                "claim": f"approx/diverges_further/{pair}",
                "holds": None if exact_graph else (grows if shown else None),
                "detail": why + ("" if exact_graph or shown else
                                 f"at n={int(top.n)} the paired difference contains 0 (no power at this size); ")
                + f"{pair} pair, IMD approx − exact (paired): " + ", ".join(
                    f"n={int(r.n)}: {r.diff_mean:+.3g} ± {r.half_width:.2g} ({x:+.1%})"
                    for (_, r), x in zip(a.iterrows(), rel))
                    + (f"; smallest detectable difference (paired t at the claims' Holm level, 80 % power): {mde}" if mde else ""),
            })
            apart = [int(r.n) for _, r in a.iterrows() if r.excludes_zero]
            claims.append({  # the runs are paired: decided by the paired test alone, never by interval overlap
                "claim": f"approx/agrees/{pair}",
                "holds": None if exact_graph or not apart else False,
                "paired_zero": [int(r.n) for _, r in a.iterrows() if not r.excludes_zero],
                "detail": why + f"{pair} pair, IMD approx − exact (paired by run): the difference excludes 0 at "
                          + (", ".join(map(str, apart)) or "no n")
                          + " (" + ", ".join(f"n={int(r.n)}: {r.diff_mean:+.3g} ± {r.half_width:.2g}"
                                             for _, r in a.iterrows()) + ")"
                          + ("" if apart else "; no difference found is not agreement shown (no equivalence "
                             "margin is stated)"),
            })
    return claims


CLAIMED_N = 10_000  # the sample size the paper's timing claim is about (its 10k-sample runs)


def _timing_claims(sizes: list[int], seconds: dict[str, float] | None,
                   recall: dict[int, float] | None) -> list[dict[str, Any]]:
    """The approximate graph's recall, and the seconds of approx and exact (when the runs were timed). The timing
    claim is never decided here: its parts were timed one after another on a shared machine, not as a ratio measured
    side by side in one run, and below the sizes the paper's claim is about (CLAIMED_N)."""
    claims: list[dict[str, Any]] = []
    if recall:
        claims.append({
            "claim": "approx/recall",
            "holds": None,
            "detail": "recall of the true k-NN by the approximate graph (run 0's subsample of the first half): "
                      + ", ".join(f"n={n}: {r:.4f}" for n, r in sorted(recall.items())),
        })
    if seconds:
        pairs = [(n, seconds.get(f"n{n}-imd-exact"), seconds.get(f"n{n}-imd-approx")) for n in sizes]
        pairs = [(n, e, a) for n, e, a in pairs if e and a]
        if pairs:
            claims.append({
                "claim": "approx/faster",
                "holds": None,
                "detail": "a timing claim is decided only from a ratio measured side by side in one run over the sizes "
                          f"it is about (the paper's n = {CLAIMED_N}); these parts were timed one after another on a "
                          f"shared machine, up to n = {max(n for n, _, _ in pairs)}: "
                          "seconds per run, IMD exact vs approx (both pairs, 3 sets): "
                          + ", ".join(f"n={n}: {e:.2f} vs {a:.2f}" for n, e, a in pairs),
            })
    return claims


def verdict_markdown(claims: list[dict[str, Any]], summary: pd.DataFrame, context: dict[str, Any],
                     decided: Sequence[Any] = ()) -> str:
    """verdict.md: the paper's statements quoted, each answered from the intervals, with the numbers; then the
    claims in the common vocabulary, Holm-corrected together (`decided`, from `stability_claims.decide`)."""
    by = {c["claim"]: c for c in claims}

    def mark(c: dict[str, Any] | None) -> str:
        return "not measured" if c is None else {True: "holds", False: "contradicted",
                                                  None: "not testable here"}[c["holds"]]

    def group(prefix: str) -> list[dict[str, Any]]:
        return [c for name, c in by.items() if name.startswith(prefix)]

    sizes = sorted(summary.n.unique())
    lines = [f"# Stability: metrics against the sample size ({context['description']})", "",
             f"n = {', '.join(map(str, sizes))}; {context['runs']} runs per n; {context['confidence']:.0%} Student-t "
             f"intervals over runs (subsamples of the pools and IMD's probes). Pools: {context['pools']}. "
             "The same pair is two disjoint halves of one dataset, the different pair the first half against the "
             "other dataset; both pairs share each run's subsample of the first half (paired).", ""]
    if context.get("nndescent"):
        lines += [f"Approximate kNN with pynndescent's build parameters set by metrics.imd.nndescent (not its "
                  f"defaults): {context['nndescent']}.", ""]
    lines += ["## The paper's statements", ""]
    div = group("diverge/imd")
    lines += [f"> {PAPER['diverge']}", "",
              f"**{_overall(div)}** in the sense of the paper's figure, which plots each metric of the different "
              "pair relative to its value at 10⁴ samples on a 0.5–2.5 axis (\"too much\" is not defined further); "
              f"here relative to the largest n's mean, each n's {context['confidence']:.0%} interval over "
              f"{context['runs']} runs against the axis (a practical threshold, not a test; the largest n's own noise is "
              "not in these intervals): holds where every interval lies within the axis, contradicted where one lies "
              "wholly outside, not testable here where one straddles an end:", ""]
    lines += [f"- {c['detail']}: {mark(c)}" for c in div]
    lines += [f"- for comparison, {c['detail']}" for c in group("diverge/") if not c["claim"].startswith("diverge/imd")]
    falls = [by[k] for k in ("falls/imd/exact/same", "falls/imd/exact/different") if k in by]
    if falls:
        lines += ["", "IMD's expected value depends on n: "
                  + "; ".join(f"{c['detail']}, log-log slope of the mean {c['slope']:+.2f}" for c in falls) + ". "
                  "IMD is a maximum over t of noisy differences of heat traces, so the noise (subsampling and probes) "
                  "adds to its expected value, and that share falls as n grows; for a same-distribution pair, whose "
                  "true distance is 0, it is the whole value. Compare IMD values only at equal n and equal probe "
                  "settings."]
    lines += ["", f"> {PAPER['variance']}", ""]
    var = by.get("approx/no_added_variance")
    lines += [f"- No additional variance: **{mark(var)}** — "
              + (var["detail"] if var else "approximate kNN was not run (knn_methods)") + "."]
    for pair in PAIRS:
        c = by.get(f"approx/diverges_further/{pair}")
        if c:
            lines += [f"- Diverges further than exact as n grows ({pair} pair): **{mark(c)}** — {c['detail']}."]
    if "approx/recall" in by:
        lines += [f"- Why: the {by['approx/recall']['detail']}."]
    lines += ["", f"> {PAPER['time']}", ""]
    t = by.get("approx/faster")
    lines += ["- Time low (approx faster than exact at these n): "
              + (f"**{mark(t)}** — {t['detail']} ({context['machine']})" if t else
                 "not measured (runs resumed from disk, or approx not run)")
              + ". Variance similar: see above."]
    lines += ["", "## Same pair vs different pair", ""]
    lines += [f"- {c['detail']}: **{mark(c)}**" for c in group("separation/")]
    lines += ["", "## How the interval shrinks with n", ""]
    lines += [f"- {c['detail']}" for c in group("interval/")]
    lines += ["", "## Exact vs approximate kNN", ""]
    lines += [f"- {c['detail']}: exact and approx agree **{mark(c)}**" for c in group("approx/agrees/")] or [
        "- not run"]
    if decided:
        from ganeval.results.verdicts import claims_table

        lines += ["", "## Every claim, Holm-corrected", "", claims_table(decided, context["confidence"]).rstrip("\n")]
    from ganeval.results.verdict import verdict_markdown as with_head

    return with_head(result_sentences(by, mark), lines[0].lstrip("# "), "\n".join(lines[2:]))


def _overall(claims: list[dict[str, Any]]) -> str:
    """'Holds' where every claim holds, 'Contradicted' where one is contradicted, else 'Not testable here'."""
    marks = [c["holds"] for c in claims]
    return "Holds" if marks and all(m is True for m in marks) else "Contradicted" if False in marks else \
        "Not testable here"


def result_sentences(by: dict[str, dict[str, Any]], mark: Any) -> list[str]:
    """The paper's statements as result sentences (`ganeval.results.verdict.claim_sentence`), each with its numbers:
    IMD's divergence with n (a practical threshold on point estimates), then approximate k-NN's variance, divergence
    and time."""
    from ganeval.results.verdict import claim_sentence

    out = [claim_sentence(f"IMD ({k.split('/')[-1]} k-NN) does not diverge too much with the sample size (each n's "
                          "interval relative to the largest n's mean against the paper's 0.5–2.5 axis, no test)",
                          mark(c), c["detail"]) for k, c in by.items() if k.startswith("diverge/imd")]
    said = {"approx/no_added_variance": "IMD with approximate k-NN adds no variance",
            **{f"approx/diverges_further/{p}": f"IMD with approximate k-NN diverges further than exact as n grows "
               f"({p} pair)" for p in PAIRS}, "approx/faster": "approximate k-NN is faster than exact"}
    return out + [claim_sentence(what, mark(by[k]), by[k]["detail"]) for k, what in said.items() if k in by]


# --------------------------------------------------------------------------- table and plot
def _cell(row: pd.Series, scale: float) -> str:
    return f"{row['mean'] * scale:.3g} ± {row['half_width'] * scale:.2g}"


def table_markdown(summary: pd.DataFrame, comparison: pd.DataFrame) -> str:
    """table.md: mean ± half-width per n for every line and pair, then IMD approx − exact and the variance ratio."""
    scale = {"kid": 1e3}
    cols = [(m, k, p) for m, k in _lines(summary) for p in PAIRS]
    head = ["n"] + [f"{label(m, k)}{'×10³' if m in scale else ''} {p}" for m, k, p in cols]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in sorted(summary.n.unique()):
        cells = [str(n)]
        for m, k, p in cols:
            r = summary[(summary.n == n) & (summary.metric == m) & (summary.knn == k) & (summary.pair == p)]
            cells.append(_cell(r.iloc[0], scale.get(m, 1.0)) if len(r) else "–")
        out.append("| " + " | ".join(cells) + " |")
    conf = float(summary.confidence.iloc[0])
    out += ["", f"Mean ± half-width of the {conf:.0%} Student-t interval over runs."]
    ae = comparison[comparison.kind == "approx - exact"] if len(comparison) else comparison
    if len(ae):
        out += ["", "| n | pair | IMD approx − exact (paired) | variance ratio approx/exact [interval] |", "|---|---|---|---|"]
        for _, r in ae.sort_values(["pair", "n"]).iterrows():
            out.append(f"| {int(r.n)} | {r.pair} | {r.diff_mean:+.3g} ± {r.half_width:.2g} | "
                       f"{r.var_ratio:.2f} [{r.var_ratio_low:.2f}, {r.var_ratio_high:.2f}] |")
    return "\n".join(out) + "\n"


def plot_stability(summary: pd.DataFrame, path: Path) -> Path:
    """One panel per metric (mean ± interval against n, log x; IMD exact solid, approx dashed; same and different
    pair), and a last panel with the different pair relative to the largest n, the paper's axis."""
    from ganeval.results.plots import _plt, _save

    plt = _plt()
    from matplotlib.ticker import FixedLocator, NullLocator

    metrics = [m for m in ("imd", "fid", "kid") if m in set(summary.metric)]
    cols = 2 if len(metrics) >= 2 else len(metrics) + 1
    rows = math.ceil((len(metrics) + 1) / cols)
    fig, grid = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    axes = [list(grid.ravel())]
    for ax in axes[0][len(metrics) + 1:]:
        ax.axis("off")
    sizes = sorted(int(n) for n in summary.n.unique())

    def n_axis(ax: Any) -> None:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(FixedLocator(sizes))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([str(n) for n in sizes])
        ax.set_xlabel("sample size n")

    colors = {"same": "C0", "different": "C3"}
    for ax, m in zip(axes[0], metrics):
        for metric, knn in _lines(summary):
            if metric != m:
                continue
            for pair in PAIRS:
                s = _line(summary, metric, knn, pair)
                style = "--" if knn == "approx" else "-"
                ax.plot(s.n, s["mean"], style, marker="o", ms=3, color=colors[pair],
                        label=f"{pair} pair" + (f", {knn}" if knn else ""))
                ax.fill_between(s.n, s.ci_low, s.ci_high, color=colors[pair], alpha=0.15 if knn != "approx" else 0.08)
        n_axis(ax)
        ax.set_title(m.upper() + (" (exact kNN solid, approximate dashed)" if m == "imd" and len(_lines(summary)) and
                                  ("imd", "approx") in _lines(summary) else ""), fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    ax = axes[0][len(metrics)]
    for i, (metric, knn) in enumerate(_lines(summary)):
        s = _line(summary, metric, knn, "different")
        ax.plot(s.n, s.relative_mean, "--" if knn == "approx" else "-", marker="o", ms=3, color=f"C{i + 4}",
                label=label(metric, knn))
        ax.fill_between(s.n, s.relative_ci_low, s.relative_ci_high, color=f"C{i + 4}", alpha=0.15)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    n_axis(ax)
    ax.set_title(f"different pair, relative to its mean at n={int(summary.n.max())} (the paper's axis)", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    conf = float(summary.confidence.iloc[0])
    fig.suptitle(f"Stability against sample size (mean, {conf:.0%} CI over runs)", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)
