"""Practical thresholds with their source, and the label a rule gives across a declared range of them.

A rule that compares a statistic with a practical threshold (a CV "below 0.2", settling epochs "within ±2") rests on a
number someone chose. Each such number is a `Threshold`: its value, where it comes from (the paper's words, quoted, or
ours, named with the reason) and the range of values a reader could reasonably have chosen instead. `across` applies
the rule at every threshold of that range: where the label is the same throughout it stands; where it changes the
claim reads *depends on the threshold* (`ganeval.results.verdicts.DEPENDS`) with the range where each label holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

PAPER = "the paper"  # a threshold quoted from the paper: its source starts with these words
OURS = "ours"  # a threshold the project chose: its source starts with this word and says why


@dataclass(frozen=True)
class Threshold:
    """A practical threshold: `value` (the one a claim's rule names), the declared range [`low`, `high`] of reasonable
    alternatives, and its `source` ("the paper: “…”" or "ours: why"). Shown as `show(x)`: x × `scale` with `digits`
    significant digits and `unit`; with `names` the threshold is a position among them (a layer, a reading), and
    every position in the range is tried."""

    what: str
    value: float
    low: float
    high: float
    source: str
    unit: str = ""
    scale: float = 1.0
    digits: int = 3
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (self.source.startswith(PAPER) or self.source.startswith(OURS)):
            raise ValueError(f"threshold {self.what!r}: its source must start with {PAPER!r} (quoted) or {OURS!r} "
                             f"(named, with the reason), got {self.source!r}")
        if not self.low <= self.value <= self.high:
            raise ValueError(f"threshold {self.what!r}: value {self.value} lies outside its range "
                             f"[{self.low}, {self.high}]")
        if self.names and not (0 <= self.low and self.high < len(self.names)):
            raise ValueError(f"threshold {self.what!r}: positions {self.low}..{self.high} outside {self.names}")

    def show(self, x: float, unit: bool = True) -> str:
        """x as the reader meets it: a name, or x × scale to `digits` significant digits with the unit (`unit`)."""
        if self.names:
            return self.names[int(round(x))]
        v = x * self.scale
        text = "0" if v == 0 else f"{v:.{self.digits}g}"
        return text.replace("-", "−") + (self.unit if unit else "")

    def span(self, a: float, b: float) -> str:
        """"a–b unit" (one name or number when a = b)."""
        return self.show(a) if a == b else f"{self.show(a, unit=False)}–{self.show(b)}"

    def text(self) -> str:
        """"{what} {value} ({source}; declared range low–high)": the threshold column of a claims table (a quoted value
        with no range: its source alone)."""
        rng = f"; declared range {self.span(self.low, self.high)}" if self.low < self.high else ""
        return f"{self.what} {self.show(self.value)} ({self.source}{rng})"


@dataclass(frozen=True)
class Across:
    """The labels of one rule over a threshold's declared range: `segments` (label, from, to) in order, and the
    `verdict`: the label when there is one, else *depends on the threshold*."""

    threshold: Threshold
    segments: tuple[tuple[str, float, float], ...]

    @property
    def verdict(self) -> str:
        from ganeval.results.verdicts import DEPENDS

        labels = {s[0] for s in self.segments}
        return self.segments[0][0] if len(labels) == 1 else DEPENDS

    def text(self) -> str:
        """"holds for 0.1–0.19; not testable here for 0.19–0.3" (one label: "holds for all of 0.1–0.3")."""
        th = self.threshold
        if len(self.segments) == 1:
            return f"{self.segments[0][0]} for all of {th.span(th.low, th.high)}"
        return "; ".join(f"{label} for {th.span(a, b)}" for label, a, b in self.segments)


def across(rule: Callable[[float], str], threshold: Threshold, points: int = 201) -> Across:
    """The label `rule(τ)` gives at every τ of the threshold's declared range: a grid of `points` values (every
    position with `names`), each change of label located by bisection to 1e-9 of the range. A rule must be a
    function of τ alone (its data fixed), so the segments are exact up to that tolerance."""
    th = threshold
    if th.names:
        grid = [float(i) for i in range(int(th.low), int(th.high) + 1)]
        labels = [rule(x) for x in grid]
        segs: list[list] = []
        for x, lab in zip(grid, labels):
            if segs and segs[-1][0] == lab:
                segs[-1][2] = x
            else:
                segs.append([lab, x, x])
        return Across(th, tuple((str(s[0]), float(s[1]), float(s[2])) for s in segs))
    if th.low == th.high:
        return Across(th, ((rule(th.low), th.low, th.high),))
    grid = np.linspace(th.low, th.high, max(2, int(points)))
    labels = [rule(float(x)) for x in grid]
    cuts: list[float] = []
    for i in range(len(grid) - 1):
        if labels[i] != labels[i + 1]:
            a, b = float(grid[i]), float(grid[i + 1])
            for _ in range(80):  # bisection: the last τ with the left label
                if b - a <= 1e-9 * (th.high - th.low):
                    break
                mid = 0.5 * (a + b)
                a, b = (mid, b) if rule(mid) == labels[i] else (a, mid)
            cuts.append(0.5 * (a + b))
    segments, start, j = [], float(th.low), 0
    for i in range(len(grid) - 1):
        if labels[i] != labels[i + 1]:
            segments.append((labels[i], start, cuts[j]))
            start, j = cuts[j], j + 1
    segments.append((labels[-1], start, float(th.high)))
    return Across(th, tuple(segments))


def interval_label(low: float, high: float, tau: float, side: str) -> str:
    """The label of an interval [low, high] against a threshold τ: `side` "below" (holds when the whole interval lies
    below τ, contradicted when it lies above), "above" (the mirror) or "within" (holds inside ±τ, contradicted when
    it lies wholly beyond +τ or −τ); an interval across τ is not testable here, never contradicted."""
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE

    if not (math.isfinite(low) and math.isfinite(high)):
        return NOT_TESTABLE
    if side == "below":
        return HOLDS if high < tau else CONTRADICTED if low > tau else NOT_TESTABLE
    if side == "above":
        return HOLDS if low > tau else CONTRADICTED if high < tau else NOT_TESTABLE
    if side == "within":
        return HOLDS if -tau < low and high < tau else CONTRADICTED if (low > tau or high < -tau) else NOT_TESTABLE
    raise ValueError(f"side must be 'below', 'above' or 'within', got {side!r}")


def all_hold(labels: Sequence[str]) -> str:
    """Several intervals that must all hold (every layer, every degree): holds when all hold, contradicted when one is
    contradicted, else not testable here."""
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE

    if all(v == HOLDS for v in labels):
        return HOLDS
    return CONTRADICTED if any(v == CONTRADICTED for v in labels) else NOT_TESTABLE

