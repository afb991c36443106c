"""(issue #56) Labels and titles show as themselves in LaTeX and Markdown: the escaping bugs of the audit that no test
caught (each test names its bug)."""

from __future__ import annotations

import re

from test_tables import _gfm, _rows, _texts

from ganeval.results.summary import compare_runs, summarize_runs
from ganeval.results.tables import md_escape, table_latex, table_markdown, tex_escape


def _labelled(a: str, b: str):  # type: ignore[no-untyped-def]
    rows = _rows()
    rows["model"] = rows["model"].map({"wgan": a, "wgan_gp": b})
    return summarize_runs(rows, 0.99, 500), compare_runs(rows, 0.99)


def test_angle_brackets_are_escaped_in_latex() -> None:
    """Bug: `<` and `>` left as they are in LaTeX text (OT1 fonts print them as ¡ and ¿)."""
    assert tex_escape("a<b>c") == r"a\textless{}b\textgreater{}c"
    s, c = _labelled("G<1>", "G>2")
    tex = table_latex(s, c, caption="n < 10 > 5")
    assert r"G\textless{}1\textgreater{}" in tex and r"G\textgreater{}2" in tex
    assert r"\caption{n \textless{} 10 \textgreater{} 5. Mean" in tex  # the caption, then what ± is
    assert not re.search(r"[<>]", tex)


def test_an_ampersand_entity_in_markdown_shows_as_itself() -> None:
    """Bug: `&` left as it is in Markdown, where `R&amp;D` renders as `R&D`."""
    assert md_escape("R&amp;D") == r"R\&amp;D"
    html = _gfm("| h |\n|---|\n| " + md_escape("R&amp;D &lt;b&gt;") + " |")
    assert _texts(html, "td") == ["R&amp;D &lt;b&gt;"]
    s, c = _labelled("R&amp;D", "a&#42;b")
    page = _gfm(table_markdown(s, c))
    assert _texts(page, "th")[1:3] == ["mnist / R&amp;D", "mnist / a&#42;b"]


def test_the_markdown_title_is_escaped() -> None:
    """Bug: the table's `### title` written unescaped: emphasis, code, an entity or HTML in it would render as
    markup."""
    title = "*R&amp;D* `x` <b>bold</b> [l](u) # 1"
    s, c = _labelled("a", "b")
    md = table_markdown(s, c, title=title)
    assert md.splitlines()[0] == "### " + md_escape(title)
    assert _texts(_gfm(md), "h3") == [title]
