"""The result in words: one sentence per compared pair, its seed count from the power calculation, the same text at
the end of the terminal output, in verdict.md and at the top of report.html."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from apphelp import run_inprocess
from ganeval.app.score import main
from ganeval.results.power import pairs_needed, pairs_needed_range
from ganeval.results.seeds import compare_seeds
from ganeval.results.verdict import comparison_sentences, decimals_for, signed, terminal_summary


def seed_summary(diffs: dict[str, list[float]]) -> pd.DataFrame:
    """A per-(model, seed) summary of models a and b whose per-seed differences a - b are `diffs[metric]`."""
    rows = []
    for metric, d in diffs.items():
        for s, v in enumerate(d):
            rows.append({"model": "b", "train_seed": s, "metric": metric, "mean": 10.0})
            rows.append({"model": "a", "train_seed": s, "metric": metric, "mean": 10.0 + v})
    return pd.DataFrame(rows)


def _seeds_needed(d: np.ndarray, alpha: float, power: float = 0.8, most: int = 100) -> int | None:
    """The smallest n whose two-sided paired t at `alpha` has `power` at the effect |mean(d)|/std(d), by scanning n
    with scipy's noncentral t (independent of ganeval.results.power)."""
    from scipy import stats

    effect = abs(d.mean()) / d.std(ddof=1)
    for n in range(2, most + 1):
        crit, nc = stats.t.ppf(1 - alpha / 2, n - 1), effect * np.sqrt(n)
        if stats.nct.sf(crit, n - 1, nc) + stats.nct.cdf(-crit, n - 1, nc) >= power:
            return n
    return None


def test_no_significant_difference_names_the_largest_effect_and_its_seed_count() -> None:
    diffs = {"imd": [1.0, -3.0, 2.5], "fid": [-4.0, -2.0, -6.3], "kid": [0.001, -0.002, 0.0005]}
    comp = compare_seeds(seed_summary(diffs), 0.99)
    assert (comp["better"].fillna("") == "").all()
    [sentence] = comparison_sentences(comp, "pixels")
    fid = comp[comp.metric == "fid"].iloc[0]
    need = pairs_needed(fid["diff_mean"], fid["diff_std"], 0.99)
    by_hand = {m: _seeds_needed(np.asarray(d), 0.01) for m, d in diffs.items()}  # a direct scan, from the diffs
    assert by_hand["fid"] == need == min(n for n in by_hand.values() if n is not None)  # FID: the largest effect
    d = decimals_for(fid["half_width"])
    assert (fid["a"], fid["b"]) == ("b", "a")  # models in order of appearance; the difference is a - b of the frame
    _, fewest, most = pairs_needed_range(fid["diff_mean"], fid["diff_std"], 3, 0.99)
    assert (need, fewest, most) == (7, 4, None)  # the effect size's 99 % interval runs from 4 pairs to unbounded
    # (issue #46) the sentence states the count at the Holm level of the frame's 3 tests, 0.01/3: more seeds
    holm_need = pairs_needed(fid["diff_mean"], fid["diff_std"], 1 - 0.01 / 3)
    _, holm_fewest, holm_most = pairs_needed_range(fid["diff_mean"], fid["diff_std"], 3, 0.99, tests=3)
    assert (holm_need, holm_fewest, holm_most) == (9, 5, None) and holm_need > need
    assert sentence == (f"b vs a: no significant difference on any metric at 99 % (3 training seeds); the largest "
                        f"effect, FD_pixels {signed(fid['diff_mean'], d)}, would need about 9 (5 to unbounded) "
                        "training seeds to resolve at the Holm level of its 3 tests (0.01/3) (an estimate from the "
                        "measured spread; the range from its effect size's 99 % interval, which reaches zero: no "
                        "number is sure to suffice)")


def test_significant_difference_named_with_its_interval_in_table_units() -> None:
    diffs = {"fid": [-4.0, -4.1, -3.9, -4.05], "kid": [0.002, -0.001, 0.0005, 0.0]}
    comp = compare_seeds(seed_summary(diffs), 0.99)
    [sentence] = comparison_sentences(comp)
    winner = comp[comp.metric == "fid"]["better"].iloc[0]
    from scipy import stats

    d = -np.array(diffs["fid"])  # the frame's a is model b: differences b - a
    hw = stats.t.ppf(0.995, 3) * d.std(ddof=1) / 2
    assert winner == "a" and f"a better on FID (+{d.mean():.2f} ± {hw:.2f}) (b − a, 99 % intervals" in sentence
    assert "no significant difference on KID×10³" in sentence  # the table's unit (×10³)
    assert "(4 training seeds)" not in sentence and "4 training seeds" in sentence


def test_rounding_helpers() -> None:
    assert decimals_for(11.4) == 0 and decimals_for(3.6) == 1 and decimals_for(0.018) == 3
    assert signed(-4.14, 1) == "−4.1" and signed(4.0, 0) == "+4" and signed(-0.001, 1) == "0.0"


def test_score_prints_writes_and_reports_the_sentence(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    for name, shift in (("real", 0.0), ("near", 0.0), ("far", 1.0)):
        np.save(tmp_path / f"{name}.npy", (rng.normal(size=(200, 6)) + shift).astype(np.float32))
    out = tmp_path / "res"
    assert main([str(tmp_path / "real.npy"), str(tmp_path / "near.npy"), str(tmp_path / "far.npy"), "--runs", "4",
                 "--sample-size", "100", "--metrics", "fid,kid", "--quiet", "--no-plots", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert printed.startswith("near vs far: near better on FD_features") and "(near − far, 99 % intervals, 4 runs)" in printed
    verdict = (out / "verdict.md").read_text()
    assert verdict.splitlines()[0] == "# Verdict" and printed.replace("_", "\\_") in verdict  # Markdown-escaped
    html = (out / "report.html").read_text()
    assert html.index(printed.replace("−", "−")) < html.index("<h2")  # the verdict heads the page
    assert terminal_summary(out).endswith(printed)


def test_ganeval_run_ends_with_its_table(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    np.save(tmp_path / "r.npy", rng.normal(size=(150, 4)).astype(np.float32))
    np.save(tmp_path / "f.npy", rng.normal(size=(150, 4)).astype(np.float32))
    run_inprocess(["experiment=benchmark", "data=array", f"data.path={tmp_path / 'r.npy'}", "generator=samples",
                   f"generator.path={tmp_path / 'f.npy'}", "features=identity", "sample_size=100", "runs=2",
                   "metrics.imd.nv=10", "metrics.kid.subset_size=50", "metrics.kid.subsets=5", "progress=false", "plots=false", f"results_dir={tmp_path / 'res'}"])
    out = capsys.readouterr().out
    assert "| FD_features |" in out and "| IMD |" in out
    assert out.rstrip().splitlines()[-1].startswith("|")  # nothing after the table: one model, no comparison


@pytest.mark.parametrize("bad", [pd.DataFrame(), None, pd.DataFrame({"metric": ["imd"], "x": [1]}),
                                 pd.DataFrame({"metric": ["fid"], "a": ["x"], "b": ["y"], "diff_mean": [1.0],
                                               "diff_std": [float("nan")], "half_width": [float("nan")],
                                               "n_runs": [1], "better": [""], "confidence": [0.99]})])
def test_no_pairs_no_sentences(bad) -> None:  # type: ignore[no-untyped-def]
    assert comparison_sentences(bad) == []


def test_paired_differences_plot_uses_the_pairs(tmp_path: Path) -> None:
    """differences.png is drawn from the per-seed differences; the points plotted are a − b per seed."""
    from ganeval.results.plots import plot_paired
    from ganeval.results.plots import pair_points

    diffs = {"fid": [-4.0, -4.1, -3.9], "kid": [0.002, -0.001, 0.0005]}
    seeds = seed_summary(diffs)
    seeds["data"] = "digits"
    comp = compare_seeds(seeds, 0.99)
    path = plot_paired(tmp_path, comp, seeds)
    assert path.name == "differences.png" and path.stat().st_size > 1000
    r = comp[comp.metric == "fid"].iloc[0]
    np.testing.assert_allclose(pair_points(r, seeds, "train_seed", "mean").to_numpy(), -np.array(diffs["fid"]))


HOSTILE = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "a_b*c*|d|e_", "R&amp;D",
           "x$y^z{w}~%#\\q", "- item", "1. first", "a$\\foo$b"]


def test_every_file_shows_the_users_labels_as_written(tmp_path: Path) -> None:
    """Labels that are HTML, Markdown, LaTeX or mathtext: verdict.md wrote them raw (a `<script>` or `<img onerror>`
    became live HTML when rendered, `_ * |` emphasis and cells, `- ` a list); each file now escapes them for its
    format and shows them as written: verdict.md and table.md rendered as GitHub does, table.tex, report.html, the
    CSVs read back, the figures drawn (a label `a$\\foo$b` stopped the run in matplotlib's mathtext)."""
    import html as h
    import re

    import ganeval
    from ganeval.results.tables import tex_escape
    from ganeval.results.verdict import result_sentences

    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    rng = np.random.default_rng(0)
    real = rng.normal(size=(150, 4)).astype(np.float32)
    fakes = {label: rng.normal(size=(150, 4)).astype(np.float32) + 0.2 * i for i, label in enumerate(HOSTILE)}
    out = tmp_path / "res"
    r = ganeval.score(real, fakes, metrics="fid", runs=2, sample_size=100, out=out, progress=False)
    assert r.sentences and all(any(label in s for label in HOSTILE) for s in r.sentences)
    # verdict.md: one plain paragraph per sentence, each the sentence as written
    tokens = md.parse((out / "verdict.md").read_text())
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    assert not kinds & {"html_inline", "html_block", "em_open", "strong_open", "s_open", "code_inline", "table_open",
                        "bullet_list_open", "ordered_list_open", "link_open", "image"}, kinds
    page = md.render((out / "verdict.md").read_text())
    assert [h.unescape(p) for p in re.findall(r"<p>(.*?)</p>", page, flags=re.S)] == r.sentences
    assert "<script" not in page and "<img" not in page and "R&amp;amp;D" in page
    assert result_sentences(out) == r.sentences  # read back as plain text (the terminal, report.html)
    # table.md: one column per label, each shown as written
    page = md.render((out / "table.md").read_text())
    heads = [h.unescape(c) for c in re.findall(r"<th>(.*?)</th>", page)]
    assert "<script" not in page and "<img" not in page
    assert heads == ["metric", *HOSTILE]
    # table.tex: each label escaped for LaTeX (every special character)
    tex = (out / "table.tex").read_text()
    assert all(tex_escape(label) in tex for label in HOSTILE) and "<script" not in tex
    # report.html: no live tag made of a label; the sentences as text
    report = (out / "report.html").read_text()
    assert "<script>alert" not in report and "<img src=x" not in report
    assert [h.unescape(t) for t in re.findall(r'<p class="verdict">(.*?)</p>', report)] == r.sentences
    # the CSVs read back to the labels; the figures drawn
    assert set(pd.read_csv(out / "runs.csv")["model"]) == set(HOSTILE)
    assert set(pd.read_csv(out / "comparison.csv")["a"]) | set(pd.read_csv(out / "comparison.csv")["b"]) == set(HOSTILE)
    assert (out / "summary.png").stat().st_size > 0 and (out / "differences.png").stat().st_size > 0
