"""The result in words: one sentence per pair of compared models, from comparison.csv's paired intervals.

"wgan vs wgan_gp: no significant difference on any metric at 99 % (3 training seeds); the largest effect,
FD_pixels +4, would need about 8 (5 to unbounded) training seeds to resolve at the Holm level of its 3 tests (0.01/3)
(an estimate from the measured spread; the range from its effect size's 99 % interval, which reaches zero: no number
is sure to suffice)". The seed (or run) count comes from the exact power of the paired t-test at the Holm level of the
frame's tests on the measured differences, its range from the ends of the effect size's interval
(`ganeval.results.power`).
The same sentences head report.html, verdict.md and the terminal's last lines.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from ganeval.results.intervals import decimals_for
from ganeval.results.power import MOST, needed_text, pairs_needed_range

PAIR_COLUMNS = {"metric", "a", "b", "diff_mean", "diff_std", "ci_low", "ci_high", "half_width", "p_value", "n_seeds",
                "n_runs", "better", "confidence", "mde", "mde_holm", "p_holm"}
VERDICT_FILE = "verdict.md"
VERDICT_HEADING = "# Verdict"
RESULT_END = "---"  # in a study's verdict.md: the rule between its result sentences and the rest


def signed(value: float, decimals: int) -> str:
    """'+4.1' / '−4.1' (a true minus sign), rounded to `decimals`."""
    text = f"{abs(value):.{decimals}f}"
    if float(text) == 0:
        return text
    return ("−" if value < 0 else "+") + text


def percent(confidence: float) -> str:
    """0.99 -> '99 %'."""
    return f"{confidence * 100:g} %"


def comparison_sentences(comparison: pd.DataFrame | None, extractor: str | Mapping[str, Any] | None = None) -> list[str]:
    """One sentence per (group, a, b) of a comparison frame (compare_runs / compare_seeds), in its row order."""
    from ganeval.results.summary import holm_level
    from ganeval.results.tables import metric_label

    if comparison is None or comparison.empty or not {"a", "b", "metric", "diff_mean", "diff_std"} <= set(comparison):
        return []  # no pairs of models (a study's own comparison has its own verdict)
    seeds = "n_seeds" in comparison.columns
    count_col = "n_seeds" if seeds else "n_runs"
    unit = "training seeds" if seeds else "runs"
    groups = [c for c in comparison.columns  # what is compared within (data, ...): never a number column
              if c not in PAIR_COLUMNS and not pd.api.types.is_float_dtype(comparison[c])]
    comparison = comparison[comparison[count_col] >= 2]  # one pair has no interval: nothing to say in words
    if comparison.empty:
        return []
    # the frame's paired tests, one family: counts are stated at its Holm level (as table.md's smallest detectable)
    tests = holm_level(comparison)[1] if "p_value" in comparison else 1
    sentences = []
    for key, g in comparison.groupby([*groups, "a", "b"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        a, b = key[-2], key[-1]
        where = ", ".join(f"{v}" for v in key[:-2] if isinstance(v, str) or pd.notna(v))
        head = f"{where}: {a} vs {b}" if where else f"{a} vs {b}"
        conf = percent(float(g["confidence"].iloc[0]))
        n = int(g[count_col].min())
        better: dict[str, list[str]] = {}
        open_rows = []
        for _, r in g.iterrows():
            label, scale, _ = metric_label(str(r["metric"]), extractor)
            d = decimals_for(float(r["half_width"]) * scale)
            diff = signed(float(r["diff_mean"]) * scale, d)
            winner = r["better"] if isinstance(r["better"], str) else ""
            if winner:
                better.setdefault(winner, []).append(f"{label} ({diff} ± {float(r['half_width']) * scale:.{d}f})")
            else:
                need, fewest, most = pairs_needed_range(float(r["diff_mean"]), float(r["diff_std"]), int(r[count_col]),
                                                        float(r["confidence"]), tests=tests)
                open_rows.append((need if need is not None else MOST + 1, label, diff, needed_text(need, fewest, most)))
        counted = f"({n} {unit})"
        if better:
            wins = "; ".join(f"{w} better on {' and '.join(ms)}" for w, ms in better.items())
            text = f"{head}: {wins} ({a} − {b}, {conf} intervals, {n} {unit})"
            if open_rows:
                text += f"; no significant difference on {', '.join(o[1] for o in open_rows)}"
        else:
            text = f"{head}: no significant difference on any metric at {conf} {counted}"
        if open_rows:
            _, label, diff, need = min(open_rows)
            if not need:
                text += (f"; the largest effect, {label} {diff}, is too small for any practical number of {unit} "
                         "to resolve")
            else:
                level = (f" at the Holm level of its {tests} tests ({1 - float(g['confidence'].iloc[0]):.2g}/{tests})"
                         if tests > 1 else "")
                reach = (", which reaches zero: no number is sure to suffice" if need.endswith("unbounded)") else "")
                text += (f"; the largest effect, {label} {diff}, would need {need} {unit} to resolve{level} "
                         f"(an estimate from the measured spread; the range from its effect size's {conf} interval"
                         f"{reach})")
        sentences.append(text)
    return sentences


def sentences_for_dir(out_dir: str | Path) -> list[str]:
    """The sentences of a results directory, from its comparison.csv and the extractor in summary.json."""
    out = Path(out_dir)
    path = out / "comparison.csv"
    if not path.is_file():
        return []
    comparison = pd.read_csv(path)
    extractor = None
    try:
        record: Any = json.loads((out / "summary.json").read_text())
        extractor = record.get("extractor") or None
    except (OSError, ValueError, AttributeError):
        pass
    return comparison_sentences(comparison, extractor)


def claim_sentence(what: str, verdict: str, evidence: str = "", detectable: str = "") -> str:
    """One claim of a study in words: what was compared or stated, its verdict (holds / contradicted / not testable
    here, `ganeval.results.verdicts`) and the numbers (the interval) that decided it; an untested claim names the
    smallest effect its test could have detected."""
    from ganeval.results.verdicts import NOT_TESTABLE

    text = f"{what}: {verdict}" + (f" ({evidence})" if evidence else "")
    if verdict.startswith(NOT_TESTABLE) and detectable and detectable.split(" ")[0] not in evidence:
        text += f"; the smallest effect the test could detect: {detectable}"
    return text


def claim_sentences(claims: Iterable[Any], confidence: float, rule: bool = False) -> list[str]:
    """One sentence per `ganeval.results.verdicts.Claim` (with its rule after its name when `rule`); a claim a test
    decided says its level and its Holm-corrected p-value; one that depends on the threshold, where each label holds."""
    from ganeval.results.verdicts import DEPENDS

    out = []
    for c in claims:
        evidence = "; ".join(filter(None, [c.evidence, c.across if c.verdict == DEPENDS else ""]))
        if math.isfinite(c.p_holm):
            p = f"{c.p_holm:.2g}" if c.p_holm >= 1e-4 else "< 1e-4"
            evidence = "; ".join(filter(None, [evidence, f"{percent(confidence)} intervals, Holm-corrected p {p}"]))
        out.append(claim_sentence(f"{c.name} ({c.rule})" if rule else c.name, c.label(), evidence, c.detectable))
    return out


def verdict_markdown(sentences: list[str], title: str = "", body: str = "") -> str:
    """verdict.md: the heading and one paragraph per result sentence; a study's own account (`body`, under its
    `title`) follows after a rule, so the sentences stay the file's head (`split_verdict` reads them back)."""
    heading = f"# {title}" if title else VERDICT_HEADING
    if not sentences:
        return heading + "\n\n" + body.strip("\n") + "\n"
    text = heading + "\n\n" + "\n\n".join(sentences) + "\n"
    return text + f"\n{RESULT_END}\n\n" + body.strip("\n") + "\n" if body.strip() else text


def split_verdict(text: str) -> tuple[list[str], str]:
    """(the result sentences at the head of a verdict.md, the rest): the paragraphs between the heading and the rule
    `verdict_markdown` writes (all of them in a comparison's verdict.md); a verdict.md of another form is all rest."""
    lines = text.splitlines()
    if RESULT_END in lines:
        head, rest = lines[1:lines.index(RESULT_END)], "\n".join(lines[lines.index(RESULT_END) + 1:]).strip("\n")
        rest = "\n".join([lines[0], "", rest]) if rest else ""
    elif lines and lines[0] == VERDICT_HEADING:
        head, rest = lines[1:], ""
    else:
        return [], text
    return [ln.strip() for ln in head if ln.strip()], rest


def result_sentences(out_dir: str | Path, ours: Any = None) -> list[str]:
    """The result in words of a results directory, as plain text: the head of its verdict.md (a study's claims, or a
    comparison's sentences; its escapes undone), else the sentences of its comparison.csv; `ours(path)` says which
    files this run wrote."""
    from ganeval.results.tables import md_unescape

    out = Path(out_dir)
    ours = ours or (lambda p: p.is_file())
    if ours(out / VERDICT_FILE):
        head, _ = split_verdict((out / VERDICT_FILE).read_text())
        if head:
            return [md_unescape(s, keep="") for s in head]
    return sentences_for_dir(out) if ours(out / "comparison.csv") else []


def markdown_sentences(sentences: Iterable[str]) -> list[str]:
    """Plain-text sentences (model labels in them as the user typed them) as Markdown that shows them as written:
    no label becomes live HTML, emphasis or a table (`md_escape`)."""
    from ganeval.results.tables import md_escape

    return [md_escape(s) for s in sentences]


def write_verdict(out_dir: str | Path, comparison: pd.DataFrame | None, extractor: str | Mapping[str, Any] | None = None) -> Path | None:
    """Write verdict.md (atomically) when `comparison` pairs models; None (nothing written) otherwise."""
    from ganeval.common import atomic_write_text

    sentences = comparison_sentences(comparison, extractor)
    if not sentences:
        return None
    path = Path(out_dir) / VERDICT_FILE
    atomic_write_text(path, verdict_markdown(markdown_sentences(sentences)))
    return path


def terminal_summary(out_dir: str | Path) -> str:
    """What a run prints last: table.md (without its notes) and the verdict sentences; '' when there is neither."""
    from ganeval.results.outputs import this_run

    out = Path(out_dir)
    shown = this_run(out)  # only what this run wrote: never a previous run's table or comparison

    def ours(p: Path) -> bool:
        return p.is_file() and (shown is None or p.name in shown)

    lines: list[str] = []
    table = out / "table.md"
    if ours(table):
        from ganeval.results.tables import md_unescape

        lines += [md_unescape(ln) for ln in table.read_text().splitlines() if ln.startswith("|") or ln.startswith("#")]
    sentences = result_sentences(out, ours)
    if sentences:
        lines += ["", *sentences]
    return "\n".join(lines).strip("\n")
