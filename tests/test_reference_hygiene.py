"""(issue #46) The committed references as a reader meets them: no derived file prints an unformatted placeholder
or a scratch folder of the machine that made it, every "mean ± half-width" docs/paper.md quotes is a committed
reference's (or the paper's own) number, and a committed report embeds only its own folder's figures."""

from __future__ import annotations

import base64
import math
import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "results" / "reference"
TEXT = (".md", ".csv", ".json", ".tex", ".html")
WRITTEN_BY_HAND = ("COMMAND.md",)  # a person's account of the command (it names the scratch folder it ran in)

# `{name}`, `{name:.2g}`, `{x['k']}`: a format field left unformatted; LaTeX (`\begin{tabular}`, `\textbf{…}`), JSON
# (`{"k": …}`) and CSS (`a{…}`) braces follow a letter, a backslash or another argument, or open on a quote
PLACEHOLDER = re.compile(r"(?<![A-Za-z\\}\]])\{[A-Za-z_]\w*(?:\[[^{}\]]*\]|\.\w+)*(?:![rsa])?"
                         r"(?::(?:.?[<>=^])?[+\- ]?z?#?0?\d*[,_]?(?:\.\d+)?[bcdeEfFgGnosxX%]?)?\}")
SCRATCH = re.compile(r"/tmp/|/var/folders/|/private/var/|[A-Za-z]:\\\\Users\\\\[^\\\\]+\\\\AppData\\\\Local\\\\Temp")


def placeholders(text: str) -> list[str]:
    """The unformatted format fields of a text (a page's style and script skipped)."""
    text = re.sub(r"<(style|script)\b.*?</\1>", "", text, flags=re.S)
    text = re.sub(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", "", text)
    return PLACEHOLDER.findall(text)


def derived_files() -> list[Path]:
    return sorted(p for p in REFERENCE.rglob("*") if p.is_file() and p.suffix in TEXT
                  and p.name not in WRITTEN_BY_HAND and "bench" not in p.relative_to(REFERENCE).parts)


def test_the_placeholder_check_finds_what_it_must() -> None:
    assert placeholders("The {tests} p-values of this experiment") == ["{tests}"]
    assert placeholders("ρ = {rho:.3f}; {c['mde']}") == ["{rho:.3f}", "{c['mde']}"]
    assert not placeholders('\\begin{tabular}{lrr} \\textbf{57.7} {"config": {"a": 1}} <style>p{margin:0}</style>')
    assert SCRATCH.search('"root": "/tmp/pt_ref/data"') and not SCRATCH.search('"root": "data"')


@pytest.mark.parametrize("path", derived_files(), ids=lambda p: str(p.relative_to(REFERENCE)))
def test_committed_outputs_have_no_placeholder_and_no_scratch_path(path: Path) -> None:
    """No unformatted placeholder, no temporary folder and not the checkout's own absolute path (a regenerator that
    named the folder it wrote into); a page's word-break hints (<wbr>) do not hide a path."""
    text = path.read_text(errors="replace").replace("<wbr>", "")
    assert not placeholders(text), f"{path.relative_to(ROOT)} prints unformatted placeholders {placeholders(text)}"
    hit = SCRATCH.search(text) or re.search(re.escape(str(ROOT)), text)
    assert hit is None, f"{path.relative_to(ROOT)} names a temporary folder: …{text[max(0, hit.start() - 40):hit.end() + 40]}…"


NUM = r"[−-]?\d+(?:\.\d+)?(?:e[−-]?\d+)?"
PLUS_MINUS = re.compile(rf"({NUM}) ± ({NUM})")


def _value(s: str) -> float:
    return float(s.replace("−", "-"))


def _decimals(s: str) -> int:
    mantissa, _, exponent = s.replace("−", "-").partition("e")
    return (len(mantissa.split(".")[1]) if "." in mantissa else 0) - (int(exponent) if exponent else 0)


def reference_pairs() -> set[tuple[float, float]]:
    """Every (mean, half-width) the committed references print or store, and the paper's own cells."""
    from ganeval.studies.paper_numbers import PAPER_TABLE
    from ganeval.studies.torus import PAPER

    pairs: set[tuple[float, float]] = {tuple(c) for c in PAPER_TABLE.values()}
    pairs |= {cell for metric in PAPER.values() for cell in metric.values()}
    for p in REFERENCE.rglob("*"):
        if p.is_file() and p.suffix == ".md":
            pairs |= {(_value(a), _value(b)) for a, b in PLUS_MINUS.findall(p.read_text())}
        elif p.is_file() and p.suffix == ".csv":
            frame = pd.read_csv(p)
            for mean, half in (("mean", "half_width"), ("normalized_mean", "normalized_half_width"),
                               ("relative_mean", "relative_half_width"), ("diff_mean", "half_width")):
                if {mean, half} <= set(frame.columns):
                    pairs |= set(zip(pd.to_numeric(frame[mean], errors="coerce"),
                                     pd.to_numeric(frame[half], errors="coerce")))
    return {(float(m), float(h)) for m, h in pairs if math.isfinite(float(m)) and math.isfinite(float(h))}


def quoted_in(pairs: set[tuple[float, float]], mean: str, half: str) -> bool:
    """Whether some stored (mean, half-width) rounds to the quote at the digits it shows."""
    x, y = _value(mean), _value(half)
    tx, ty = (0.5 * 10.0 ** -_decimals(s) * (1 + 1e-9) for s in (mean, half))
    return any(abs(m - x) <= tx and abs(h - y) <= ty for m, h in pairs)


def test_docs_quote_the_references_numbers() -> None:
    """Each "mean ± half-width" of docs/paper.md is a committed reference's number (or the paper's) at the digits
    shown: a number left behind by a regenerated reference (43.36 ± 3.84 for 43.20 ± 2.51) fails here."""
    pairs = reference_pairs()
    text = (ROOT / "docs" / "paper.md").read_text()
    quotes = PLUS_MINUS.findall(text)
    assert len(quotes) >= 20
    stale = [f"{a} ± {b}" for a, b in quotes if not quoted_in(pairs, a, b)]
    assert not stale, f"docs/paper.md quotes numbers no committed reference holds: {stale}"
    assert not quoted_in(pairs, "43.36", "3.84") and quoted_in(pairs, "43.20", "2.51")  # the check can fail


@pytest.mark.parametrize("page", sorted(REFERENCE.rglob("report.html")), ids=lambda p: p.parent.name)
def test_a_committed_report_embeds_only_its_own_figures(page: Path) -> None:
    """Every figure the page embeds is a file of its own folder, byte for byte (a sample grid of its generators
    aside), and none is a picture of a report (a screenshot of an older rendering shows other numbers)."""
    text = page.read_text()
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"', text)
    assert images, "the page embeds no figure"
    for data, alt in images:
        if alt.startswith("samples of "):
            continue
        assert not alt.startswith("report"), f"{page.parent.name}/report.html embeds {alt}, a picture of a report"
        own = page.parent / alt
        assert own.is_file() and base64.b64decode(data) == own.read_bytes(), \
            f"{page.parent.name}/report.html embeds {alt}, which is not its folder's file"
    assert not list(page.parent.glob("report*.png")), "a report screenshot beside report.html would be embedded"


INVENTORY = "## Every claim of the paper (inventory, issue #46)"


def inventory_rows() -> list[list[str]]:
    """docs/paper.md's inventory table, one list of cells per claim."""
    text = (ROOT / "docs" / "paper.md").read_text()
    part = text.split(INVENTORY, 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split(" | ") for line in part.splitlines() if re.match(r"\| \d+ \|", line)]
    assert rows and all(len(r) == 6 for r in rows), "every inventory row has its six cells"
    return [[c.strip() for c in r] for r in rows]


def test_the_inventory_labels_are_the_references() -> None:
    """Every row naming a reference's claim (`study` → `claim`) carries that claim's label in the reference's
    verdict.md (its claims table or its sentence); every other row is pending or says why it is not run."""
    from ganeval.results.verdicts import VERDICTS

    checked = 0
    for number, section, _claim, study, label, _notes in inventory_rows():
        assert section and label, f"inventory row {number} lacks its section or label"
        hit = re.fullmatch(r"`(\w+)` → `(.+)`", study)
        if hit is None:
            assert label == "pending (study being added)" or label.startswith("not run: "), \
                f"inventory row {number}: no reference named, so its label must be pending or say why not run"
            continue
        verdict = (REFERENCE / hit.group(1) / "verdict.md").read_text()
        name = hit.group(2)
        assert label.split(" on selected data")[0] in VERDICTS, f"inventory row {number}: {label!r} is no verdict"
        assert f"| {name} | **{label}" in verdict or f"{name}: {label}" in verdict, \
            f"inventory row {number}: {hit.group(1)}/verdict.md does not label {name!r} {label!r}"
        checked += 1
    assert checked >= 30
