"""The result in words (ganeval/results/verdict.py): each sentence's parts from hand-made comparison rows, the
verdict file's layout and reading it back."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from ganeval.results import verdict as V
from ganeval.results.power import needed_text, pairs_needed_range


def test_signed_and_percent() -> None:
    assert V.signed(4.14, 1) == "+4.1" and V.signed(-4.16, 1) == "−4.2" and V.signed(-0.004, 2) == "0.00"
    assert V.signed(0.0, 0) == "0" and V.signed(0.5, 0) == "0" and V.signed(1.5, 0) == "+2"
    assert V.percent(0.99) == "99 %" and V.percent(0.995) == "99.5 %"


def _row(metric: str, diff: float, std: float, half: float, better: str, n: int = 5, **kw: object) -> dict:  # type: ignore[type-arg]
    return {"data": "d", "metric": metric, "a": "x", "b": "y", "diff_mean": diff, "diff_std": std,
            "ci_low": diff - half, "ci_high": diff + half, "half_width": half, "p_value": 0.001 if better else 0.4,
            "n_runs": n, "better": better, "confidence": 0.99, **kw}


def test_a_pair_better_on_some_metrics_and_open_on_others() -> None:
    frame = pd.DataFrame([_row("fid", -2.0, 0.5, 0.7, "x"), _row("kid", -0.002, 0.0004, 0.0005, "x"),
                          _row("imd", 0.3, 1.0, 1.4, "")])
    (text,) = V.comparison_sentences(frame)
    need, fewest, most = pairs_needed_range(0.3, 1.0, 5, 0.99, tests=3)
    assert text.startswith("d: x vs y: x better on FID (−2.00 ± 0.70) and KID×10³ (−2.00 ± 0.50) (x − y, 99 % "
                           "intervals, 5 runs); no significant difference on IMD; the largest effect, IMD +0.3, "
                           f"would need {needed_text(need, fewest, most)} runs to resolve at the Holm level of its 3 "
                           "tests (0.01/3) (an estimate from the measured spread; the range from its effect size's "
                           "99 % interval")


def test_no_difference_anywhere_and_an_effect_too_small() -> None:
    frame = pd.DataFrame([_row("fid", 1e-9, 5.0, 7.0, "", n=3)])
    (text,) = V.comparison_sentences(frame)
    assert text.startswith("d: x vs y: no significant difference on any metric at 99 % (3 runs); the largest effect, "
                           "FID ")
    assert text.endswith(", is too small for any practical number of runs to resolve")
    seeds = pd.DataFrame([{**_row("fid", 2.0, 1.0, 3.0, ""), "n_seeds": 3}]).drop(columns="data")
    (s,) = V.comparison_sentences(seeds)
    assert s.startswith("x vs y: no significant difference on any metric at 99 % (3 training seeds); the largest effect")
    assert "training seeds to resolve (an estimate" in s  # one test: no Holm level named


def test_rows_without_an_interval_or_pairs_say_nothing() -> None:
    assert V.comparison_sentences(None) == [] and V.comparison_sentences(pd.DataFrame()) == []
    assert V.comparison_sentences(pd.DataFrame([_row("fid", 1.0, 1.0, 1.0, "", n=1)])) == []
    assert V.comparison_sentences(pd.DataFrame({"metric": ["fid"], "a": ["x"]})) == []
    two = pd.DataFrame([_row("fid", -2.0, 0.5, 0.7, "x", n=2), _row("fid", -2.0, 0.5, 0.7, "x", n=1)])
    assert len(V.comparison_sentences(two)) == 1


def test_a_claim_sentence_names_what_an_untested_claim_could_detect() -> None:
    assert V.claim_sentence("IMD separates", "holds", "d = 2 [1, 3]") == "IMD separates: holds (d = 2 [1, 3])"
    assert V.claim_sentence("x", "holds") == "x: holds"
    assert V.claim_sentence("x", "not testable here", "d = 0.1 [−1, 1]", "0.5 (80 % power)") == (
        "x: not testable here (d = 0.1 [−1, 1]); the smallest effect the test could detect: 0.5 (80 % power)")
    assert V.claim_sentence("x", "not testable here", "mde 0.5 shown", "0.5 (80 %)") == (
        "x: not testable here (mde 0.5 shown)")  # already in the evidence: not said twice
    assert V.claim_sentence("x", "contradicted", "e", "0.5") == "x: contradicted (e)"


def test_claim_sentences_state_the_corrected_p_value() -> None:
    from ganeval.results.verdicts import Claim

    base = Claim("c", "quote", "holds", "rule r", "t", "as stated", "ev", 0.001)
    done = [dataclasses.replace(base, p_holm=0.0123),
            dataclasses.replace(base, p_holm=5e-5), base]
    got = V.claim_sentences(done, 0.99)
    assert got[0] == "c: holds (ev; 99 % intervals, Holm-corrected p 0.012)"
    assert got[1] == "c: holds (ev; 99 % intervals, Holm-corrected p < 1e-4)"
    assert got[2] == "c: holds (ev)" and math.isnan(base.p_holm)
    assert V.claim_sentences([base], 0.99, rule=True) == ["c (rule r): holds (ev)"]


def test_the_verdict_file_and_reading_it_back() -> None:
    assert V.verdict_markdown([]) == "# Verdict\n\n\n"
    assert V.verdict_markdown([], "T", "body\n") == "# T\n\nbody\n"
    one = V.verdict_markdown(["A.", "B."])
    assert one == "# Verdict\n\nA.\n\nB.\n" and V.split_verdict(one) == (["A.", "B."], "")
    study = V.verdict_markdown(["A."], "Study", "\n## Part\n\nmore\n")
    assert study == "# Study\n\nA.\n\n---\n\n## Part\n\nmore\n"
    assert V.split_verdict(study) == (["A."], "# Study\n\n## Part\n\nmore")
    assert V.split_verdict("# Other\n\ntext") == ([], "# Other\n\ntext")
    assert V.split_verdict("# Study\n\nA.\n\n---\n") == (["A."], "")
    assert (V.VERDICT_FILE, V.VERDICT_HEADING, V.RESULT_END) == ("verdict.md", "# Verdict", "---")


def test_result_sentences_come_from_the_verdict_else_the_comparison(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert V.result_sentences(tmp_path) == [] and V.sentences_for_dir(tmp_path) == []
    pd.DataFrame([_row("fid", -2.0, 0.5, 0.7, "x")]).to_csv(tmp_path / "comparison.csv", index=False)
    (tmp_path / "summary.json").write_text("not json")
    (from_csv,) = V.result_sentences(tmp_path)
    assert from_csv.startswith("d: x vs y: x better on FID (−2.00 ± 0.70)")
    assert V.result_sentences(tmp_path, ours=lambda p: False) == []
    (tmp_path / "verdict.md").write_text(V.verdict_markdown(V.markdown_sentences(["a *b* <c>"])))
    assert V.result_sentences(tmp_path) == ["a *b* <c>"]
    assert V.write_verdict(tmp_path, None) is None
    path = V.write_verdict(tmp_path, pd.DataFrame([_row("fid", -2.0, 0.5, 0.7, "x")]))
    assert path == tmp_path / "verdict.md" and V.split_verdict(path.read_text())[0][0].startswith("d: x vs y:")
