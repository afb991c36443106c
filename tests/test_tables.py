"""The paper-style tables of a summary: layout, scaling, bold only for a significantly best model, LaTeX, mixed protocols refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ganeval.results.summary import compare_runs, summarize_runs
from ganeval.results.intervals import decimals_for
from ganeval.results.tables import table_latex, table_markdown


def _rows() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    recs = []
    for r in range(10):
        for data in ("mnist", "cifar10"):
            for model, level in (("wgan", 3.0), ("wgan_gp", 1.0)):
                for metric, scale in (("imd", 10.0), ("kid", 0.01), ("fid", 30.0)):
                    v = scale * level * (1 + 0.01 * rng.normal())
                    recs.append({"run": r, "data": data, "model": model, "metric": metric, "value": v})
    return pd.DataFrame(recs)


def test_table_layout_and_best_marked() -> None:
    s = summarize_runs(_rows(), 0.99, 500)
    md = table_markdown(s, compare_runs(_rows(), 0.99))
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert lines[0] == r"| metric | mnist / wgan | mnist / wgan\_gp | cifar10 / wgan | cifar10 / wgan\_gp |"
    assert [ln.split("|")[1].strip() for ln in lines[2:]] == ["IMD", "KID×10³", "FID"]
    kid = lines[3].split("|")
    # KID is scaled by 1e3 in the table only: 0.01 * 1 -> 10, to the digits of its interval (two significant ones of
    # the half-width, as report.html's CSV view and the terminal round)
    row = s[(s.data == "mnist") & (s.model == "wgan_gp") & (s.metric == "kid")].iloc[0]
    d = decimals_for(row["half_width"] * 1e3)
    assert kid[3].strip() == f"**{row['mean'] * 1e3:.{d}f} ± {row['half_width'] * 1e3:.{d}f}**"
    assert abs(row["mean"] * 1e3 - 10) < 0.5 and d == 3  # half-width 0.055: three decimals, not two
    assert not kid[2].strip().startswith("**")  # wgan is worse
    fid = s[(s.data == "mnist") & (s.model == "wgan") & (s.metric == "fid")].iloc[0]
    assert f"{fid['mean']:.{decimals_for(fid['half_width'])}f} ± " in lines[4].split("|")[2]
    assert "over 10 runs of 500 samples" in md
    assert "bold: significantly best at 99%: the interval of every paired difference (by run)" in md
    assert "**" not in table_markdown(s) and "nothing is bold: no paired comparison of the models was made" in table_markdown(s)


def test_latex_table_has_multicolumn_headers_and_bold() -> None:
    s = summarize_runs(_rows(), 0.99, 500)
    tex = table_latex(s, compare_runs(_rows(), 0.99), caption="GAN table")
    assert r"\multicolumn{2}{c}{\textbf{mnist}}" in tex
    assert r"\cmidrule(lr){2-3}\cmidrule(lr){4-5}" in tex
    assert r"wgan\_gp" in tex
    kid_line = next(ln for ln in tex.splitlines() if ln.startswith("KID"))
    assert kid_line.count(r"\mathbf") == 2  # one best model per dataset


def test_mixed_protocols_refused() -> None:
    a = summarize_runs(_rows(), 0.99, 500)
    b = summarize_runs(_rows(), 0.99, 1000)
    with pytest.raises(ValueError, match="sample_size"):
        table_markdown(pd.concat([a, b]))


@pytest.mark.parametrize("extractor, label, tex", [
    (None, "FID", None), ("inception", "FID", None), ("dinov2", "FD_DINOv2", r"FD$_\text{DINOv2}$"),
    ("clip", "FD_CLIP", r"FD$_\text{CLIP}$"), ("pixels", "FD_pixels", r"FD$_\text{pixels}$"),
], ids=["none", "inception", "dinov2", "clip", "pixels"])  # LaTeX braces kept out of the ids the test map stores
def test_fid_is_named_by_its_feature_space(extractor: str | None, label: str, tex: str | None) -> None:
    s = summarize_runs(_rows(), 0.99, 500)
    rows = [ln.split("|")[1].strip() for ln in table_markdown(s, extractor=extractor).splitlines()[2:5]]
    assert rows == ["IMD", "KID×10³", label.replace("_", "\\_")]  # table.md escapes Markdown's `_`
    if tex is not None:
        assert tex + " & " in table_latex(s, extractor=extractor)


def test_direction_sentence_follows_the_metrics() -> None:
    from ganeval.results.tables import direction_sentence

    assert direction_sentence(["imd", "kid", "fid"]) == "Lower is better"
    assert direction_sentence(["fid", "precision", "recall"]) == "Higher is better for Precision, Recall, lower for FID"


# every character with a meaning in LaTeX text, and what it must print as
TEX_EXPECTED = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "|": r"\textbar{}",
                "<": r"\textless{}", ">": r"\textgreater{}"}


@pytest.mark.parametrize("char", sorted(TEX_EXPECTED))
def test_tex_escape_each_special_character(char: str) -> None:
    from ganeval.results.tables import tex_escape

    assert tex_escape(f"a{char}b") == f"a{TEX_EXPECTED[char]}b"
    assert tex_escape(char * 2) == TEX_EXPECTED[char] * 2  # one pass: a replacement is never escaped again


@pytest.mark.parametrize("char", list("$^~{}|_&%#\\`*[]<>"))  # `%` means nothing in Markdown: left as it is
def test_md_escape_each_special_character_renders_as_itself(char: str) -> None:
    from ganeval.results.tables import md_escape

    for text in (f"a{char}b", f"{char}x{char}", char * 3, f"~~{char}~~ *{char}*"):
        html = _gfm("| h |\n|---|\n| " + md_escape(text) + " |")
        assert _texts(html, "td") == [text], (text, html)


@pytest.mark.parametrize("text", ["- item", "+ item", "1. first", "12) twelfth", "  - indented", "a\nb", "a\r\n\r\n# b",
                                  "x\n- y", "a\n\nb", "a\n===", "<b>bold</b> & R&amp;D"])
def test_md_escape_shows_line_starts_and_breaks_as_written(text: str) -> None:
    """A label at the head of a line (a verdict sentence begins with one) starts no list; a line break in a label
    (Markdown shows it as a space) ends no paragraph and starts no block: one paragraph or cell, as written."""
    from ganeval.results.tables import md_escape, md_unescape

    flat = " ".join(text.split("\n")).replace("\r", "")
    shown = " ".join(flat.split(" ")) if text.strip() == text else flat.strip()
    assert _texts(_gfm(md_escape(text)), "p") == [shown]
    assert _texts(_gfm("| h |\n|---|\n| " + md_escape(text) + " |"), "td") == [flat.strip()]
    assert md_unescape(md_escape(text), keep="") == flat.replace("\r", "")


def test_tex_escape_writes_a_line_break_as_a_space() -> None:
    from ganeval.results.tables import tex_escape

    assert tex_escape("a\n\nb\r\nc") == "a  b c"  # a blank line would end the paragraph (the table cell)


@pytest.mark.parametrize("text", ["a$x$b", "$\\foo$", "cost $5 and $6", "\\$x$"])
def test_mathtext_escape_draws_as_written(text: str) -> None:
    """matplotlib reads text between two `$` as mathtext (`$\\foo$` raised ParseFatalException at savefig): escaped,
    it is drawn as written (an SVG with text kept as text holds it verbatim)."""
    import html as h

    from ganeval.results.plots import _plt, svg_text
    from ganeval.results.tables import mathtext_escape

    fig, ax = _plt().subplots()
    ax.set_title(mathtext_escape(text))
    assert h.escape(text, quote=False) in svg_text(fig)


def _gfm(text: str) -> str:
    """Markdown as GitHub renders it (CommonMark with tables and strikethrough), by markdown-it-py."""
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)


def _texts(html: str, tag: str) -> list[str]:
    """The text of each <tag> element, with no markup left inside it (an escaped character is text, not markup)."""
    import html as h
    import re

    cells = re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.S)
    assert all("<" not in c for c in cells), cells  # no <em>, <s>, <code>, ... made of a label's characters
    return [h.unescape(c) for c in cells]


def _unescaped(tex: str, char: str) -> int:
    """How many times `char` occurs in `tex` not preceded by a backslash (LaTeX meaning, not text)."""
    import re

    return len(re.findall(r"(?<!\\)" + re.escape(char), tex))


def _labelled_rows() -> pd.DataFrame:
    rows = _rows()
    rows["model"] = rows["model"].map({"wgan": "ours$^{x}", "wgan_gp": "a|b"})
    return rows


def test_model_labels_with_special_characters_make_valid_tables() -> None:
    import re

    rows = _labelled_rows()
    s, c = summarize_runs(rows, 0.99, 500), compare_runs(rows, 0.99)
    md = table_markdown(s, c, title="ours_{1} & 50% #1")
    page = _gfm(md)
    assert _texts(page, "th") == ["metric", "mnist / ours$^{x}", "mnist / a|b", "cifar10 / ours$^{x}", "cifar10 / a|b"]
    for row in re.findall(r"<tr>(.*?)</tr>", page, flags=re.S)[1:]:  # no extra column from `a|b`
        assert row.count("<td") == 5, row
    assert _texts(page, "h3") == ["ours_{1} & 50% #1"]
    # the comparison lines name the models as they are
    assert any(item.startswith("mnist, IMD: ours$^{x} − a|b = ") for item in _texts(page, "li"))

    tex = table_latex(s, c, caption="ours_{1} & 50% #1")
    assert r"\textbf{Metric} & ours\$\textasciicircum{}\{x\} & a\textbar{}b & ours\$\textasciicircum{}\{x\} & a\textbar{}b \\" in tex
    assert r"\caption{ours\_\{1\} \& 50\% \#1. Mean $\pm$ half-width of the 99\% Student-t interval" in tex
    body = tex[tex.index(r"\toprule"):tex.index(r"\bottomrule")]
    for line in body.splitlines():
        if line.endswith(r"\\") and r"\multicolumn" not in line:  # each row: 5 cells, so 4 column separators
            assert _unescaped(line, "&") == 4, line
    # braces balance, and `$` opens and closes math only in the value cells (pairs per line)
    assert _unescaped(tex, "{") == _unescaped(tex, "}")
    assert all(_unescaped(ln, "$") % 2 == 0 for ln in tex.splitlines())
    comment, rest = tex.split("\n", 1)  # the first line a comment: the package the table needs
    assert comment.startswith("% needs \\usepackage{booktabs}")
    assert _unescaped(rest, "%") == 0 and _unescaped(tex, "#") == 0 and _unescaped(tex, "_") == 0


def test_report_shows_the_escaped_markdown_labels_as_themselves() -> None:
    from ganeval.results.report_tables import markdown_table

    rows = _labelled_rows()
    md = table_markdown(summarize_runs(rows, 0.99, 500), compare_runs(rows, 0.99))
    html = markdown_table(md)
    assert "<th>mnist / ours$^{x}</th><th>mnist / a|b</th>" in html and "\\" not in html


def test_terminal_reads_table_md_without_escapes_but_keeps_its_columns() -> None:
    from ganeval.results.tables import md_escape, md_unescape

    for text in ("ours$^{x}", "wgan_gp", "a\\b*c~d&e#f`g[h]<i>"):
        assert md_unescape(md_escape(text)) == text and md_unescape(md_escape(text), keep="") == text
    assert md_unescape(md_escape("a|b")) == "a\\|b" and md_unescape(md_escape("a|b"), keep="") == "a|b"


def test_fid_label_does_not_depend_on_import_order() -> None:
    """FID's label on each built-in extractor is the same in a fresh interpreter that never imported
    ganeval.features as after the extractors registered themselves (the label once came from a registry filled
    by importing them, so `import ganeval` alone gave FD_inception)."""
    import json
    import subprocess
    import sys

    from ganeval.features.base import REGISTRY
    from ganeval.results.tables import metric_label

    names = sorted({e.cls.name for e in REGISTRY.values()})  # the classes' own names: what an identity records
    code = ("import json, sys; from ganeval.results.tables import metric_label; "
            f"print(json.dumps({{n: metric_label('fid', n)[0] for n in {names!r}}})); "
            "assert 'ganeval.features' not in sys.modules")
    fresh = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      check=True).stdout)
    assert fresh == {n: metric_label("fid", n)[0] for n in names}
    assert fresh["inception"] == "FID" and fresh["dinov2"] == "FD_DINOv2"


def test_table_tex_rounds_to_the_interval_and_says_what_the_plus_minus_is() -> None:
    """table.tex (issue 57): each mean ± half-width to the digits the interval carries (two significant digits of the
    half-width, the rule of report.html's CSV view: `56 ± 25`, not `56.39 ± 25.35`), a caption saying what ± is,
    and a first line naming the package it needs. Kills: the fixed two decimals; a caption of the title alone."""
    from ganeval.results.report_tables import rounded_frame

    s = pd.DataFrame({"model": ["a", "b"], "metric": ["fid", "fid"], "mean": [56.3912, 40.1], "std": [1.0, 1.0],
                      "ci_low": [31.04, 40.0877], "ci_high": [81.74, 40.1123], "half_width": [25.3512, 0.0123],
                      "n_runs": [10, 10], "sample_size": [1000, 1000], "confidence": [0.99, 0.99]})
    tex = table_latex(s, None, "mine vs real")
    assert "FID & $56 \\pm 25$ & $40.100 \\pm 0.012$ \\\\" in tex
    csv_view = rounded_frame(s)[0]
    assert list(csv_view["mean"]) == ["56", "40.100"] and list(csv_view["half_width"]) == ["25", "0.012"]
    assert tex.splitlines()[0] == "% needs \\usepackage{booktabs} (\\toprule, \\midrule, \\cmidrule, \\bottomrule)"
    assert ("\\caption{mine vs real. Mean $\\pm$ half-width of the 99\\% Student-t interval over 10 runs of 1000 "
            "samples per set.}") in tex
    seeds = s.assign(n_seeds=3)
    assert "interval across seeds (2 degrees of freedom)" in table_latex(seeds)
    full = s.assign(n_runs=1, half_width=np.nan, ci_low=np.nan, ci_high=np.nan, std=np.nan)
    assert "\\caption{One value per cell, on the full sets (no interval).}" in table_latex(full)
