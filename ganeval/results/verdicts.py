"""One verdict vocabulary for every paper experiment: holds / contradicted / not testable here / not tested:
stand-in data (a claim about data or weights the run did not use: its numbers are shown, never a holds or
contradicted) / depends on the threshold (the label changes inside the declared range of reasonable practical
thresholds, `ganeval.results.thresholds`: not decided, the range where each label holds is given).

Each claim carries the named rule that decided it, the practical-significance threshold it used, whether
the result is better or worse than the paper's statement, and (when the test had no power) the smallest
effect it could have detected. The claims of one experiment are corrected together (Holm) before they are
decided, so a table of verdicts never rests on many uncorrected 99 % tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

import numpy as np

from ganeval.results.power import paired_t_mde  # noqa: F401  (the detectable effect of a paired comparison)

HOLDS = "holds"
CONTRADICTED = "contradicted"
NOT_TESTABLE = "not testable here"
STAND_IN = "not tested: stand-in data"  # the run used other data or weights than the claim is about
DEPENDS = "depends on the threshold"  # the label changes inside the threshold's declared range: not decided
VERDICTS = (HOLDS, CONTRADICTED, NOT_TESTABLE, STAND_IN, DEPENDS)

AS_STATED = "as stated"
BETTER = "better than stated"
WORSE = "worse than stated"
NO_COMPARISON = "–"
DIRECTIONS = (AS_STATED, BETTER, WORSE, NO_COMPARISON)


def vs_paper(verdict: str) -> str:
    """The usual *vs the paper* of a claim whose measured effect is the paper's direction: as stated when it holds,
    worse when contradicted, no comparison otherwise."""
    return AS_STATED if verdict == HOLDS else WORSE if verdict == CONTRADICTED else NO_COMPARISON

POWER = 0.8  # the power at which a minimum detectable effect is stated


def one_sided_p(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """The one-sample t-test's one-sided p-values that the mean of `values` lies above 0 and below 0 (values with no
    spread, to rounding: 0 or 1 by the mean's sign)."""
    from scipy import stats

    x = np.asarray(values, dtype=np.float64)
    m = float(x.mean())
    if np.std(x) > 1e-12 * max(1.0, abs(m)):
        return (float(stats.ttest_1samp(x, 0.0, alternative="greater").pvalue),
                float(stats.ttest_1samp(x, 0.0, alternative="less").pvalue))
    return (0.0, 1.0) if m > 0 else (1.0, 0.0) if m < 0 else (1.0, 1.0)


def sign_label(values: Sequence[float] | np.ndarray, confidence: float) -> tuple[str, float]:
    """A statistic's sign over independent units: holds when the one-sided t finds it above 0, contradicted when below,
    else not testable here; with the p-value that decided (the 'above' one when neither)."""
    up, down = one_sided_p(values)
    alpha = 1.0 - float(confidence)
    return (HOLDS, up) if up <= alpha else (CONTRADICTED, down) if down <= alpha else (NOT_TESTABLE, up)


@dataclass(frozen=True)
class Claim:
    """One of the paper's statements and how this experiment answered it.

    `p_value` is the p-value of the significance test the decision rests on (NaN when the rule is not a
    test, e.g. a bound or a recomputed number); `holm` fills `p_holm` and turns a decision whose corrected
    p-value misses the level into `not testable here`, naming `detectable` (the smallest effect the test
    could have found).
    """

    name: str
    statement: str
    verdict: str
    rule: str
    threshold: str
    vs_paper: str = NO_COMPARISON
    evidence: str = ""
    p_value: float = float("nan")
    p_holm: float = float("nan")
    detectable: str = ""
    selected: str = ""  # how the data were chosen when a search required this claim's outcome: said with the verdict
    across: str = ""  # the label across the threshold's declared range (`thresholds.Across.text`), where one is declared

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.vs_paper not in DIRECTIONS:
            raise ValueError(f"vs_paper must be one of {DIRECTIONS}, got {self.vs_paper!r}")
        if self.verdict == NOT_TESTABLE and not self.detectable:
            raise ValueError(f"claim {self.name!r} is not testable here: say the smallest effect it could detect "
                             "(detectable=...)")
        if self.verdict == DEPENDS and not self.across:
            raise ValueError(f"claim {self.name!r} depends on the threshold: say where each label holds (across=...)")

    def label(self) -> str:
        """The verdict as shown: on data a search selected for this outcome, the verdict says so."""
        return self.verdict + (f" on selected data ({self.selected})" if self.selected else "")

    def record(self) -> dict[str, object]:
        """The claim as a JSON-ready dict (NaN p-values as None)."""
        out: dict[str, object] = {}
        for k, v in self.__dict__.items():
            if k in ("selected", "across") and not v:
                continue  # said only where a search chose the data / a threshold range is declared
            out[k] = None if isinstance(v, float) and not math.isfinite(v) else v
        return out


def holm_adjust(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (monotone, capped at 1); NaN entries stay NaN and do not count."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(np.isfinite(p))
    m = idx.size
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def holm(claims: Sequence[Claim], confidence: float) -> list[Claim]:
    """The claims with Holm-corrected p-values over every claim that rests on a test (a stand-in claim tests nothing
    and is not counted); a decision whose corrected p-value exceeds 1 − confidence becomes `not testable here` (its
    `detectable` must already be set)."""
    alpha = 1.0 - float(confidence)
    adj = holm_adjust([c.p_value if c.verdict != STAND_IN else float("nan") for c in claims])
    out = []
    for c, q in zip(claims, adj):
        if not math.isfinite(q):
            out.append(c)
            continue
        c = replace(c, p_holm=float(q))
        if q > alpha and c.verdict != NOT_TESTABLE:
            if not c.detectable:
                raise ValueError(f"claim {c.name!r}: its corrected p-value {q:.3g} misses the level and it has no "
                                 "detectable effect to state")
            c = replace(c, verdict=NOT_TESTABLE, vs_paper=NO_COMPARISON)
        out.append(c)
    return out


def tests_in(claims: Iterable[Claim]) -> int:
    """How many claims rest on a p-value (the Holm family's size; a stand-in claim tests nothing)."""
    return sum(1 for c in claims if math.isfinite(c.p_value) and c.verdict != STAND_IN)


def holm_confidence(confidence: float, tests: int) -> float:
    """The confidence of the Holm family's strictest step, 1 − (1 − confidence)/tests: the level a claim's test must
    beat when it is the family's smallest p-value, so the one its smallest detectable effect is stated at."""
    return 1.0 - (1.0 - float(confidence)) / max(1, int(tests))


def holm_family(build: Callable[[float], list[Claim]], confidence: float) -> list[Claim]:
    """The claims `build(power_confidence)` makes, Holm-corrected, each smallest detectable effect stated at the
    family's Holm level: built once to count the tests, then again at `holm_confidence` of that count (the
    decisions themselves use `confidence` and the corrected p-values)."""
    first = build(float(confidence))
    tests = tests_in(first)
    return holm(first if tests <= 1 else build(holm_confidence(confidence, tests)), confidence)


def _p(x: float) -> str:
    return "–" if not math.isfinite(x) else (f"{x:.2g}" if x >= 1e-4 else "<1e-4")


def claims_table(claims: Iterable[Claim], confidence: float) -> str:
    """Markdown table of the claims: verdict, rule, threshold, vs the paper, p and Holm-corrected p, detectable."""
    claims = list(claims)
    ranged = any(c.across for c in claims)  # a column for the labels across thresholds where a claim declares a range
    lines = ["| claim | verdict | rule | practical threshold | " + ("label across the declared range | " if ranged else "")
             + "vs the paper | p (Holm) | smallest detectable |", "|---|---|---|---|" + ("---|" if ranged else "")
             + "---|---|---|"]
    for c in claims:
        p = "–" if not math.isfinite(c.p_value) else f"{_p(c.p_value)} ({_p(c.p_holm)})"
        lines.append(f"| {c.name} | **{c.label()}** | {c.rule} | {c.threshold} | "
                     + (f"{c.across or '–'} | " if ranged else "") + f"{c.vs_paper} | {p} | {c.detectable or '–'} |")
    tests = tests_in(claims)
    family = (f"The {tests} p-value{'s' if tests != 1 else ''} of this experiment {'are' if tests != 1 else 'is'} "
              "corrected together by Holm's "
              f"step-down method before being compared with {1 - confidence:.2g}; a claim whose corrected p-value "
              "misses it is *not testable here*." if tests else "No claim of this experiment rests on a p-value, so "
              "none is Holm-corrected.")
    level = (f"a paired t at the family's Holm level {1 - confidence:.2g}/{tests} = {1 - holm_confidence(confidence, tests):.2g}"
             if tests > 1 else f"a paired t at {confidence:.0%}")
    lines += ["", f"Verdicts: *holds*, *contradicted*, *not testable here* (the test had no power; the last column says "
              f"the smallest effect it could have detected, {level} with {POWER:.0%} power "
              f"where a t test decided), *{STAND_IN}* (the claim is about data or weights this run did not use: "
              f"its numbers are shown, and decide nothing)"
              + (f", *{DEPENDS}* (the label changes inside the declared range of reasonable thresholds: not decided; "
                 "the column beside the threshold gives the range where each label holds)" if ranged else "")
              + f". {family} *vs the paper*: whether the measured effect is better or worse than the paper's statement "
              "says."
              + (" *on selected data*: a search chose the data for this claim's outcome, so the verdict shows what "
                 "such data can give, not an independent test." if any(c.selected for c in claims) else "")]
    return "\n".join(lines) + "\n"
