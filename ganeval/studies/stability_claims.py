"""The stability study's testable claims in the common verdict vocabulary (`ganeval.results.verdicts`).

The separation of the two pairs (per line and n, paired t on different − same) and approximate k-NN's divergence
from exact (per pair, paired t at the largest n) rest on p-values; they are corrected together by Holm, and a
decision whose corrected p-value misses the level reads *not testable here* with its smallest detectable effect.
The claims decided by a rule that is not a test (interval overlap, a variance-ratio interval, point estimates on
the paper's axis) carry no p-value and say so in their rule. The claim dicts of `stability_report.verdict` are then
made to agree with the corrected decisions, so verdict.md's marks and its table never differ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ganeval.results.intervals import paired_t_mde
from ganeval.results.verdicts import (AS_STATED, BETTER, CONTRADICTED, HOLDS, NO_COMPARISON, NOT_TESTABLE,
                                      Claim, holm, holm_confidence, tests_in, vs_paper)
from ganeval.studies.stability_grid import PAIRS
from ganeval.studies.stability_report import label, separation_detail, verdict

_MARK = {HOLDS: True, CONTRADICTED: False, NOT_TESTABLE: None}
_EQUAL_DETAIL = "the approximate graph is the exact one"  # `stability_report.approx_claims`' reason, when it applies
_EQUAL = "none: the approximate graph is the exact one (recall ≥ 0.999 at every n), no effect of approximation can show"


def _separation(comparison: pd.DataFrame, summary: pd.DataFrame) -> list[Claim]:
    """Per line and n: the different pair above the same pair (paired t on different − same, two-sided)."""
    out = []
    diff = comparison[comparison.kind == "different - same"] if "kind" in comparison else comparison.iloc[:0]
    for _, r in diff.sort_values(["metric", "knn", "n"]).iterrows():
        v = HOLDS if r.ci_low > 0 else CONTRADICTED if r.ci_high < 0 else NOT_TESTABLE  # paired: the paired test
        out.append(Claim(
            f"separation/{r.metric}/{r.knn}/n={int(r.n)}".replace("//", "/"),
            f"{label(r.metric, r.knn)} puts the different pair above the same pair at n = {int(r.n)}", v,
            "paired t on different − same over runs (> 0)", "any difference",
            vs_paper(v),
            f"different − same {r.diff_mean:.4g} [{r.ci_low:.4g}, {r.ci_high:.4g}]", float(r.p_value),
            detectable=f"{r.mde:.2g}"))
    return out


def _diverges(comparison: pd.DataFrame, by: dict[str, dict[str, Any]]) -> list[Claim]:
    """Per pair: approximate k-NN's IMD diverges further from exact as n grows (paired t at the largest n)."""
    out = []
    ae = comparison[comparison.kind == "approx - exact"] if "kind" in comparison else comparison.iloc[:0]
    for pair in PAIRS:
        a = ae[ae.pair == pair].sort_values("n")
        c = by.get(f"approx/diverges_further/{pair}")
        if c is None or a.empty:
            continue
        top = a.iloc[-1]
        v = {True: HOLDS, False: CONTRADICTED, None: NOT_TESTABLE}[c["holds"]]
        out.append(Claim(
            f"approx/diverges_further/{pair}", f"IMD with approximate k-NN diverges further than exact as n grows "
            f"({pair} pair)", v, f"paired t on approx − exact at n = {int(top.n)} (> 0), relative difference larger "
            "than at the smallest n; recall ≥ 0.999 at every n: not testable (the graphs are equal)",
            "any difference", AS_STATED if v == HOLDS else BETTER if v == CONTRADICTED else NO_COMPARISON,
            f"approx − exact at n = {int(top.n)}: {top.diff_mean:+.3g} ± {top.half_width:.2g}",
            float(top.p_value) if math.isfinite(float(top.p_value)) else math.nan,
            detectable=f"{top.mde:.2g}" + (f" ({_EQUAL})" if _EQUAL_DETAIL in c["detail"] else "")))
    return out


def _agrees(comparison: pd.DataFrame, by: dict[str, dict[str, Any]]) -> list[Claim]:
    """Per pair: IMD's exact and approximate k-NN agree — contradicted by the paired t on approx − exact over runs
    (Bonferroni over the sizes: the smallest p times their number); no difference found leaves it not testable here
    (an agreement needs an equivalence margin, which the paper does not state)."""
    out = []
    ae = comparison[comparison.kind == "approx - exact"] if "kind" in comparison else comparison.iloc[:0]
    for pair in PAIRS:
        a = ae[ae.pair == pair].sort_values("n")
        c = by.get(f"approx/agrees/{pair}")
        if c is None or a.empty:
            continue
        p = a.p_value.to_numpy(dtype=float)
        p_min = float(min(1.0, len(p) * p[np.isfinite(p)].min())) if np.isfinite(p).any() else math.nan
        equal = _EQUAL_DETAIL in c["detail"]
        v = CONTRADICTED if c["holds"] is False else NOT_TESTABLE
        out.append(Claim(
            f"approx/agrees/{pair}", _STATEMENTS["approx/agrees/"] + f" ({pair} pair)", v,
            f"paired t on approx − exact over runs at every n (Bonferroni over the {len(p)} sizes); no difference "
            "found is no agreement shown", "any difference", NO_COMPARISON, c["detail"][:200],
            math.nan if equal else p_min,
            detectable=_EQUAL if equal else "up to " + f"{float(a.mde.max()):.2g} (the largest n's paired t: "
                                                       f"{float(a.mde.iloc[-1]):.2g})"))
    return out


_STATEMENTS = {"diverge/imd": "IMD of the different pair does not diverge too much with n",
               "interval/": "the interval narrows as n grows",
               "approx/no_added_variance": "IMD with approximate k-NN adds no variance",
               "approx/agrees/": "IMD's exact and approximate intervals agree"}


def _ruled(by: dict[str, dict[str, Any]], comparison: pd.DataFrame) -> list[Claim]:
    """The claims decided by a rule that is not a test: no p-value, not in the Holm family."""
    ae = comparison[comparison.kind == "approx - exact"] if "kind" in comparison else comparison.iloc[:0]
    widest = f"a variance ratio up to ×{float(ae.var_ratio_high.max()):.2f} (the widest interval's upper bound)" \
        if len(ae) else "–"
    rules = {"approx/no_added_variance": ("variance ratio approx/exact per run (Pitman–Morgan interval): holds where "
                                          "every upper bound ≤ 1.5, contradicted where a lower bound > 1",
                                          "ratio ≤ 1.5 counts as no added variance")}
    out = []
    for name, c in by.items():
        if name.startswith("diverge/imd"):
            rule, thr = ("each n's interval relative to the largest n's mean: holds where every one lies within the "
                         "axis, contradicted where one lies wholly outside (no test)", "within the paper's 0.5–2.5 axis")
        elif name.startswith("interval/"):
            rule, thr = "half-width at the largest n below the smallest n's (point comparison, no test)", "narrower"
        elif name in rules:
            rule, thr = rules[name]
        else:
            continue
        v = {True: HOLDS, False: CONTRADICTED, None: NOT_TESTABLE}[c["holds"]]
        statement = next(text for key, text in _STATEMENTS.items() if name.startswith(key))
        out.append(Claim(name, statement, v, rule, thr, NO_COMPARISON, c["detail"][:200],
                         detectable="" if v != NOT_TESTABLE else _EQUAL if _EQUAL_DETAIL in c["detail"] else
                         _straddle(c) if name.startswith("diverge/") else widest))
    return out


def _straddle(c: dict[str, Any]) -> str:
    """A divergence claim's missing power: the sizes whose relative interval straddles an end of the axis."""
    return ("relative intervals clear of the axis' ends at n = " + ", ".join(map(str, c.get("straddles", [])))
            + " (more runs there)")


def at_level(comparison: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """The comparison with each smallest detectable effect (`mde`) stated at `confidence` (the paired t over
    `n_runs` pairs with the measured `diff_std`)."""
    if comparison.empty or "mde" not in comparison:
        return comparison
    return comparison.assign(mde=[paired_t_mde(float(s), int(n), confidence) if math.isfinite(float(s)) else math.nan
                                  for s, n in zip(comparison.diff_std, comparison.n_runs)])


def decide(summary: pd.DataFrame, comparison: pd.DataFrame, seconds: dict[str, float] | None = None,
           recall: dict[int, float] | None = None) -> tuple[list[dict[str, Any]], list[Claim]]:
    """`stability_report.verdict`'s claim dicts and the same claims as `Claim`s, Holm-corrected together; each dict's
    `holds` follows the corrected decision (a separation line holds only where every n holds after Holm)."""
    conf = float(summary.confidence.iloc[0])

    def build(power_confidence: float) -> tuple[list[dict[str, Any]], pd.DataFrame, list[Claim]]:
        cmp_ = at_level(comparison, power_confidence)
        made = verdict(summary, cmp_, seconds, recall)
        by_ = {c["claim"]: c for c in made}
        return made, cmp_, _separation(cmp_, summary) + _diverges(cmp_, by_) + _agrees(cmp_, by_) + _ruled(by_, cmp_)

    tests = tests_in(build(conf)[2])  # the family's size, then every smallest detectable effect at its Holm level
    claims, comparison, found = build(holm_confidence(conf, tests))
    decided = holm(found, conf)
    for c in claims:
        if c["claim"].startswith("separation/"):
            per_n = [d for d in decided if d.name.rsplit("/n=", 1)[0] == c["claim"]]
            verdicts = {d.verdict for d in per_n}
            c["holds"] = (True if verdicts == {HOLDS} else False if CONTRADICTED in verdicts else None)
            metric, knn = (c["claim"].split("/") + [""])[1:3]
            d = comparison[(comparison.kind == "different - same") & (comparison.metric == metric)
                           & (comparison.knn.fillna("") == knn)].sort_values("n")
            c["detail"] = separation_detail(label(metric, knn), d,
                                            [int(x.name.rsplit("=", 1)[1]) for x in per_n if x.verdict != HOLDS])
            c["holm"] = {d.name.rsplit("=", 1)[1]: d.p_holm for d in per_n}
        else:
            d = next((d for d in decided if d.name == c["claim"]), None)
            if d is not None:
                c["holds"] = _MARK[d.verdict]
                if math.isfinite(d.p_holm):
                    c["holm"] = d.p_holm
    return claims, decided
