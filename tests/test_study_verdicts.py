"""The paper studies' verdict.md carry the result in words at their head (the main runs' sentence writers, one wording),
and a study's terminal output and report.html end / start with the same sentences."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from apphelp import run_inprocess
from ganeval.results.verdict import (RESULT_END, claim_sentence, claim_sentences, result_sentences, split_verdict,
                                     terminal_summary, verdict_markdown)
from ganeval.results.verdicts import CONTRADICTED, DEPENDS, HOLDS, NOT_TESTABLE, STAND_IN, Claim, holm
from ganeval.studies.regenerators import REGENERATORS

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference"
VERDICT_WORDS = (HOLDS, CONTRADICTED, NOT_TESTABLE, STAND_IN, DEPENDS, "no significant difference", " better on ")


def test_claim_sentence_says_what_the_verdict_and_the_numbers() -> None:
    assert claim_sentence("FID above", HOLDS, "d = 2.6 [2.5, 2.7]") == "FID above: holds (d = 2.6 [2.5, 2.7])"
    assert (claim_sentence("KID overlaps", NOT_TESTABLE, "intervals overlap", "0.7")
            == "KID overlaps: not testable here (intervals overlap); the smallest effect the test could detect: 0.7")
    assert claim_sentence("x", NOT_TESTABLE, "it needed 0.7", "0.7 (measured 0.1)") == "x: not testable here (it needed 0.7)"


def test_claim_sentences_carry_the_holm_corrected_p() -> None:
    """Two tested claims: p 0.004 and 0.02, Holm at 99 %: 0.008 (holds) and 0.02 (misses the level: not testable)."""
    claims = holm([Claim("a", "s", HOLDS, "t", "any", evidence="a − b = 3 [1, 5]", p_value=0.004, detectable="2"),
                   Claim("b", "s", HOLDS, "t", "any", evidence="c − d = 1 [0.1, 2]", p_value=0.02, detectable="1.5"),
                   Claim("c", "s", CONTRADICTED, "bound", "1", evidence="0.6 ± 0.1")], 0.99)
    assert claim_sentences(claims, 0.99) == [
        "a: holds (a − b = 3 [1, 5]; 99 % intervals, Holm-corrected p 0.008)",
        "b: not testable here (c − d = 1 [0.1, 2]; 99 % intervals, Holm-corrected p 0.02); the smallest effect the "
        "test could detect: 1.5",
        "c: contradicted (0.6 ± 0.1)"]
    assert claim_sentences(claims[2:], 0.99, rule=True) == ["c (bound): contradicted (0.6 ± 0.1)"]


def test_verdict_head_round_trips() -> None:
    text = verdict_markdown(["one", "two"], "Study: verdict", "Question.\n\n| a |\n|---|\n| 1 |\n")
    assert text.startswith("# Study: verdict\n\none\n\ntwo\n\n---\n\nQuestion.")
    head, rest = split_verdict(text)
    assert head == ["one", "two"] and rest.startswith("# Study: verdict\n\nQuestion.") and "|---|" in rest
    assert split_verdict(verdict_markdown(["s"])) == (["s"], "")  # a comparison's verdict.md: all head
    assert split_verdict("# Old\n\nsome text\n") == ([], "# Old\n\nsome text\n")  # no head: all rest
    assert verdict_markdown([], "T", "body") == "# T\n\nbody\n"


@pytest.mark.parametrize("name", sorted(REGENERATORS))
def test_reference_verdicts_have_the_sentences_at_their_head(name: str, tmp_path: Path) -> None:
    from ganeval.results.tables import md_unescape

    text = (REFERENCE / name / "verdict.md").read_text()
    head, rest = split_verdict(text)
    study = name != "quickstart"  # the quickstart's verdict.md is a comparison's: its sentences alone
    assert head and bool(rest) == study and (RESULT_END in text.splitlines()) == study
    claims = [s for s in head if not s.startswith("**")]  # a bold line is a note (paper_table's synthetic data)
    assert claims and all(any(w in s for w in VERDICT_WORDS) for s in claims), claims
    offline = name == "language_manifolds"  # a clustering's adjusted Rand index: one number, no interval
    assert not study or offline or sum(bool(re.search(r"\[[^\]]+, [^\]]+\]|± ", s)) for s in claims) >= 1  # intervals
    REGENERATORS[name](REFERENCE / name, tmp_path)
    shown = [md_unescape(s, keep="") for s in head]  # verdict.md escapes labels for Markdown; the terminal shows them
    assert terminal_summary(tmp_path).splitlines()[-len(head):] == shown  # the terminal ends with the same sentences


def test_paper_table_claim_sentence_from_its_cells() -> None:
    """contradicted when one cell is reversed, holds only when every cell run holds; cells named."""
    from ganeval.studies import paper_table as pt

    def frame(verdicts: list[str]) -> pd.DataFrame:
        return pd.DataFrame({"data": ["mnist"] * 3, "metric": ["imd", "kid", "fid"], "verdict": verdicts})

    s = pt.claim_result(frame([HOLDS, CONTRADICTED, NOT_TESTABLE]), "99 %")
    assert s.startswith("The paper's claim (WGAN-GP better than WGAN on IMD, KID and FID for every dataset): contradicted")
    assert "1 holds (MNIST IMD), 1 contradicted (MNIST KID×10³), 1 not testable here (MNIST FID)" in s
    assert ": holds (of 3" in pt.claim_result(frame([HOLDS] * 3), "99 %")
    assert ": not testable here (of 3" in pt.claim_result(frame([HOLDS, HOLDS, NOT_TESTABLE]), "99 %")
    assert ": not testable here (no dataset" in pt.claim_result(frame([pt.NOT_RUN] * 3), "99 %")


def test_blur_sentences_agree_with_their_paired_intervals() -> None:
    """Each 'above/below the similar line' sentence says holds exactly when its printed interval lies on the
    claimed side of 0 (the paired difference blurred − similar, recomputed here from runs.csv)."""
    from scipy import stats

    rows = pd.read_csv(REFERENCE / "blur_sweep" / "runs.csv")
    head, _ = split_verdict((REFERENCE / "blur_sweep" / "verdict.md").read_text())
    for metric, side in (("fid", "above"), ("kid", "above"), ("imd", "below")):
        r = rows[rows.metric == metric]
        b = r[(r.role == "blur") & (r.sigma == 1.0)].set_index("run")["value"]
        d = (b - r[r.role == "second"].set_index("run")["value"].reindex(b.index)).to_numpy()
        hw = stats.t.ppf(0.995, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
        [s] = [s for s in head if s.startswith(f"{metric.upper()} {side} the similar line")]
        assert f"[{d.mean() - hw:.3g}, {d.mean() + hw:.3g}]" in s
        ok = d.mean() > 0 if side == "above" else d.mean() < 0
        assert (": holds (" in s) == ok


def test_a_study_run_ends_with_its_sentences_and_its_report_starts_with_them(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "res"
    run_inprocess(["experiment=heat_traces", "runs=2", "sample_size=200", "n_t=16", "datasets.patches.n=300",
                   "progress=false", "plots=false", f"results_dir={out}", f"cache_dir={tmp_path / 'cache'}"])
    printed = capsys.readouterr().out.rstrip().splitlines()
    head, rest = split_verdict((out / "verdict.md").read_text())
    assert head and printed[-len(head):] == head and result_sentences(out) == head
    assert any("SLQ on patches" in s and "interval [" in s for s in head)
    import html as html_lib

    page = (out / "report.html").read_text()
    first = html_lib.escape(head[0])
    assert page.index(first) < page.index("<h2")  # the sentences head the page ...
    section = page[page.index('id="verdict"'):]
    assert "Accuracy check" in section and first not in section  # ... and the study's account follows, once
    assert "<p>---</p>" not in page


def test_heat_traces_statements_on_data_not_run_are_stand_in_and_overlap_decides_nothing() -> None:
    """(issue #36) "CelebA is most different at t = 10" without CelebA: not tested (stand-in data), never holds or
    contradicted; with CelebA second but its interval overlapping the first's: not testable here, not contradicted."""
    from ganeval.studies.heat_traces import SCALE, statements

    def summary(cells: dict[str, tuple[float, float]]) -> pd.DataFrame:
        return pd.DataFrame([{"data": d, "t": 10.0, "mean": (lo + hi) / 2 * SCALE, "ci_low": lo * SCALE,
                              "ci_high": hi * SCALE} for d, (lo, hi) in cells.items()])

    got = statements(summary({"digits": (1.30, 1.32), "patches": (1.21, 1.23)}), 0.99)
    assert [v for _, v, _, _ in got] == [STAND_IN, STAND_IN]
    overlap = statements(summary({"digits": (1.30, 1.34), "celeba": (1.28, 1.31)}), 0.99)[0]
    assert overlap[1] == NOT_TESTABLE
    apart = statements(summary({"digits": (1.40, 1.42), "celeba": (1.28, 1.31)}), 0.99)[0]
    assert apart[1] == CONTRADICTED
    first = statements(summary({"digits": (1.28, 1.31), "celeba": (1.40, 1.42)}), 0.99)[0]
    assert first[1] == HOLDS
