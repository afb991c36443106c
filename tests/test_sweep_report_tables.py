"""report.html's tables (ganeval/results/report_tables.py) read back cell by cell: escaping, Markdown's inline
markup, number alignment, rounding by the interval, and the notes."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from ganeval.results import report_tables as T


def test_a_csv_becomes_an_escaped_table_with_numbers_aligned(tmp_path: Path) -> None:
    p = tmp_path / "a&b.csv"
    p.write_text('name,value\n<x>,1.5\n"q""r",-2e-3\n,\n')
    assert T.csv_table(p, "id&") == "\n".join([
        '<div class="scroll"><table class="data" id="id&amp;" data-file="a&amp;b.csv">',
        "<thead><tr><th>name</th><th>value</th></tr></thead><tbody>",
        '<tr><td>&lt;x&gt;</td><td class="num">1.5</td></tr>',
        '<tr><td>q&quot;r</td><td class="num">-2e-3</td></tr>',
        "<tr><td></td><td></td></tr>",
        "</tbody></table></div>"])
    (tmp_path / "e.csv").write_text("")
    assert T.csv_table(tmp_path / "e.csv", "x") == "<p>e.csv is empty.</p>"


@pytest.mark.parametrize("md, html", [
    ("**bold** and *em* and `code`", "<strong>bold</strong> and <em>em</em> and <code>code</code>"),
    ("a < b & c", "a &lt; b &amp; c"),
    (r"\*not em\* and 2\*3", "*not em* and 2*3"),
    (r"R\&D \| x", "R&amp;D | x"),
    ("* not em", "* not em"), ("**", "**"), ("``", "``"), ("*x*y", "<em>x</em>y"),
    ("\ue021 kept", "\ue021 kept"),
])
def test_inline_markup_is_read_and_the_rest_escaped(md: str, html: str) -> None:
    assert T._inline(md) == html


def test_the_held_offset_avoids_the_texts_own_private_characters() -> None:
    assert T._held_offset("plain") == 0xE000
    assert T._held_offset("\ue021") == 0xE080
    assert T._held_offset("".join(chr(o + 40) for o in range(0xE000, 0xF800, 0x80))) == 0xF0000


def test_markdown_tables_and_paragraphs() -> None:
    text = "# Title\n\n| a | b\\|c |\n|---|:-:|\n| **1** | 2 |\nsome *note*\n- item one\n* item two\nskip me\n"
    assert T.markdown_table(text, skip=["skip me"]) == "\n".join([
        '<div class="scroll"><table class="paper"><thead><tr><th>a</th><th>b|c</th></tr></thead><tbody>',
        "<tr><td><strong>1</strong></td><td>2</td></tr>",
        "</tbody></table></div>",
        "<p>some <em>note</em></p>", "<p>item one</p>", "<p>item two</p>"])
    assert T.markdown_table("## Head *x*\n", headings=True) == "<h3>Head <em>x</em></h3>"
    assert T.markdown_table("| a |\n") == ('<div class="scroll"><table class="paper"><thead><tr><th>a</th></tr></thead>'
                                           "<tbody>\n</tbody></table></div>")
    assert T._cells("| a | b\\|c | d |") == ["a", "b\\|c", "d"]


def test_significant_digits() -> None:
    assert T.significant(0.070612) == "0.0706" and T.significant(1.234e-5) == "1.23e-05"
    assert T.significant(12345.0, 2) == "1.2e+04"
    assert T.significant(math.nan) == "" and T.significant(math.inf) == "inf" and T.significant(-math.inf) == "-inf"


def test_a_frame_is_rounded_by_its_interval_in_the_tables_units() -> None:
    frame = pd.DataFrame({"model": ["a", "b"], "metric": ["kid", "fid"], "mean": [0.0012345, 12.3456],
                          "half_width": [0.00012, 0.5], "p_value": [0.0123456, 3.0], "n_runs": [10, 10],
                          "note": [None, "x"], "big": [2e6 + 0.5, 7.0]})
    text, scaled = T.rounded_frame(frame)
    assert scaled
    assert text.loc[0, "metric"] == "KID×10³" and text.loc[0, "mean"] == "1.23" and text.loc[0, "half_width"] == "0.12"
    assert text.loc[1, "metric"] == "FID" and text.loc[1, "mean"] == "12.35" and text.loc[1, "half_width"] == "0.50"
    assert text.loc[0, "p_value"] == "0.0123" and text.loc[1, "p_value"] == "3"
    assert text.loc[0, "big"] == "2e+06" and text.loc[1, "big"] == "7" and text.loc[0, "note"] == ""
    assert text.loc[0, "n_runs"] == 10
    plain, scaled = T.rounded_frame(pd.DataFrame({"metric": ["fid"], "mean": [1.23456], "half_width": [math.nan]}))
    assert not scaled and plain.loc[0, "mean"] == "1.235"  # no interval: 3 decimals
    assert T.INTERVAL_COLUMNS == ("mean", "std", "ci_low", "ci_high", "half_width", "diff_mean", "diff_std", "mde",
                                  "mde_holm")


def test_a_rounded_table_marks_numbers_and_says_its_units(tmp_path: Path) -> None:
    p = tmp_path / "summary.csv"
    pd.DataFrame({"model": ["m<1>"], "metric": ["kid"], "mean": [-0.0012345], "half_width": [0.00012]}).to_csv(p, index=False)
    html = T.rounded_table(p, "s")
    assert html.startswith('<p class="small">Rounded to each interval&#x27;s precision (its half-width to two '
                           "significant digits), in the table&#x27;s units (KID×10³); the CSV files below hold every "
                           'digit.</p><div class="scroll"><table class="data rounded" id="s" data-file="summary.csv">')
    assert "<td>m&lt;1&gt;</td><td>KID×10³</td><td class=\"num\">-1.23</td><td class=\"num\">0.12</td>" in html
    q = tmp_path / "other.csv"
    pd.DataFrame({"metric": ["fid"], "mean": [2.0], "half_width": [0.5]}).to_csv(q, index=False)
    assert "units; the CSV files" in T.rounded_table(q, "o")


def test_the_paper_table_as_html(tmp_path: Path) -> None:
    from ganeval.results.tables import PaperTable

    t = PaperTable(title="t", header=["", "a<"], rows=[[("FID", False), ("1.0 ± 0.1", True)]], columns_note="cols & notes",
                   comparison_intro="**Bold** intro", comparisons=["x > y"], coverage="coverage note")
    html = T.paper_table_html(t)
    assert html == "\n".join([
        '<div class="scroll"><table class="paper" id="paper-table"><thead><tr><th></th><th>a&lt;</th></tr></thead>'
        "<tbody><tr><td>FID</td><td><strong>1.0 ± 0.1</strong></td></tr></tbody></table></div>",
        "<p>cols &amp; notes</p>", "<p><strong>Bold</strong> intro</p>", "<ul><li>x &gt; y</li></ul>",
        "<p>coverage note</p>"])
    assert "coverage note" not in T.paper_table_html(t, shown_above=" coverage note ")
    bare = PaperTable(title="t", header=["h"], rows=[], columns_note="n", comparison_intro="", comparisons=[], coverage="")
    assert T.paper_table_html(bare).count("<p>") == 1
