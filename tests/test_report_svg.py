"""report.html's figures scale: summary and paired differences drawn as inline SVG (one panel per metric, in a box
that wraps), per-run values behind each interval, no reference outside the page, no 16-digit float in the record's
tables; checked on the committed quickstart's report as this code rebuilds it, and in headless Chromium at 1280 px and
390 px where Chromium is installed (the screenshots are committed under results/reference/quickstart/screenshots/)."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ganeval.results.record import RunRecord
from ganeval.results.report import inline_svg, write_report

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "results" / "reference" / "quickstart"
CHROMIUM = next((shutil.which(c) for c in ("chromium", "chromium-browser", "google-chrome") if shutil.which(c)), None)
SVG_NS = "{http://www.w3.org/2000/svg}"


class Tags(HTMLParser):
    """Every start tag with its attributes, every inline <svg>…</svg> as its source text, and the <style> text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.source = text
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.style = ""
        self._in_style = False
        self.feed(text)
        self.close()
        self.svgs = re.findall(r"<svg\b.*?</svg>", text, flags=re.S)

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        self._in_style = False if tag == "style" else self._in_style

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._in_style:
            self.style += data


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed quickstart results with their report rebuilt by this code."""
    out = tmp_path_factory.mktemp("report") / "quickstart"
    shutil.copytree(QUICKSTART, out)
    write_report(out, RunRecord.read(out / "summary.json"), "quickstart")
    return out / "report.html"


def test_page_has_no_external_reference(quickstart: Path) -> None:
    page = Tags(quickstart.read_text(encoding="utf-8"))
    for tag, attrs in page.tags:
        assert tag not in ("script", "link", "iframe", "object", "embed", "base", "use") or (
            tag == "use" and attrs.get("xlink:href", attrs.get("href", "")).startswith("#")), (tag, attrs)
        for key, value in attrs.items():
            if key == "xmlns" or key.startswith("xmlns:"):
                continue  # a namespace's name, never fetched
            if key in ("src", "href", "xlink:href", "action", "poster", "srcset"):
                assert value.startswith(("data:", "#")), (tag, key, value[:80])
            assert not re.search(r"url\(\s*['\"]?(?!#)", value), (tag, key, value[:80])  # url(#clip) only
    assert "@import" not in page.style and not re.search(r"url\(", page.style)
    # no address anywhere but the SVG namespaces' names
    rest = re.sub(r'xmlns(:\w+)?="[^"]*"', "", quickstart.read_text(encoding="utf-8"))
    assert not re.search(r"(https?:)?//[\w.-]+\.\w", re.sub(r"<code[^>]*>.*?</code>", "", rest, flags=re.S))


def test_page_renders_its_svg_panels(quickstart: Path) -> None:
    page = Tags(quickstart.read_text(encoding="utf-8"))
    panels = [a for t, a in page.tags if t == "div" and a.get("class") == "panels"]
    assert [a["data-source"] for a in panels] == ["summary.png", "differences.png"]
    assert len(page.svgs) == 6  # IMD, FD_pixels, KID: a summary panel and a differences panel each
    ids: list[str] = []
    for svg in page.svgs:
        root = ET.fromstring(svg)  # well-formed XML
        assert root.tag == f"{SVG_NS}svg" and len(root.get("viewBox", "").split()) == 4
        w, h = (float(root.get(k, "0").removesuffix("pt")) for k in ("width", "height"))
        assert w > 100 and h > 100
        assert root.iter(f"{SVG_NS}path") and any(True for _ in root.iter(f"{SVG_NS}path"))
        texts = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG_NS}text"))  # text stays text: it scales
        assert re.search(r"IMD|FD_pixels|KID×10³", texts), texts[:200]
        ids += [e.get("id") for e in root.iter() if e.get("id")]
        for e in root.iter():  # every reference inside a figure points at an id of that figure
            for key, value in e.attrib.items():
                for ref in re.findall(r"#([\w-]+)", value) if "href" in key or "url(" in value else []:
                    assert any(x.get("id") == ref for x in root.iter()), (key, value)
    assert len(ids) == len(set(ids))  # two figures never share an id
    # the figures carry the numbers they show: the per-run values behind the summary (the legend names them)
    summary_svgs = page.svgs[:3]
    assert all("runs" in "".join(ET.fromstring(s).itertext()) for s in summary_svgs)
    assert "wrap" in page.style and "max-width: 100%" in page.style


def test_inline_svg_prefixes_ids_and_their_references() -> None:
    svg = ('<svg><defs><clipPath id="p1"><rect/></clipPath><path id="m2"/></defs>'
           '<g clip-path="url(#p1)"><use xlink:href="#m2"/></g></svg>')
    assert inline_svg(svg, "f0") == ('<svg><defs><clipPath id="f0-p1"><rect/></clipPath><path id="f0-m2"/></defs>'
                                     '<g clip-path="url(#f0-p1)"><use xlink:href="#f0-m2"/></g></svg>')


def test_record_tables_print_no_16_digit_float(quickstart: Path) -> None:
    html = quickstart.read_text(encoding="utf-8")
    shares = html[html.index("<h3>variance_shares (summary.json)</h3>"):]
    shares = shares[:shares.index("</table>")]
    cells = re.findall(r'<td class="num">([^<]*)</td>', shares)
    mantissas = [re.sub(r"e[-+]\d+$", "", c) for c in cells if "." in c]  # floats: 3 significant digits at most
    assert mantissas and all(len(re.sub(r"\D", "", m).lstrip("0")) <= 3 for m in mantissas), cells


def _measure(report: Path, width: int, tmp: Path) -> dict[str, int]:
    """The page rendered in a `width`-px Chromium window: its scroll width, and how many inline SVGs were laid out
    with a width and height (rendered) and how many of them fit inside the window."""
    script = ("<script>window.addEventListener('load', () => { const s = [...document.querySelectorAll('svg')];"
              " const r = s.map(e => e.getBoundingClientRect());"
              " document.body.setAttribute('data-m', [document.documentElement.scrollWidth, s.length,"
              f" r.filter(b => b.width > 50 && b.height > 50).length, r.filter(b => b.right <= {width}).length].join(','));"
              " });</script>")
    copy = tmp / f"measure-{width}.html"
    window = width
    if width < 500:  # headless Chromium's narrowest window: the page in a frame of that width (its own viewport)
        script = script.replace("document.body.setAttribute", "parent.document.body.setAttribute")
        copy.write_text(report.read_text(encoding="utf-8").replace("</body>", script + "</body>", 1), encoding="utf-8")
        frame = tmp / f"frame-{width}.html"
        frame.write_text(f'<!DOCTYPE html><html><body style="margin:0"><iframe src="{copy.as_uri()}" '
                         f'style="width:{width}px;height:900px;border:0"></iframe></body></html>', encoding="utf-8")
        copy, window = frame, 500
    else:
        copy.write_text(report.read_text(encoding="utf-8").replace("</body>", script + "</body>", 1), encoding="utf-8")
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'profile'}",
                           "--allow-file-access-from-files", "--virtual-time-budget=5000",
                           f"--window-size={window},900", "--dump-dom", copy.as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)
    found = re.search(r'data-m="(\d+),(\d+),(\d+),(\d+)"', done.stdout)
    assert found, f"chromium exit {done.returncode}: {done.stderr[-800:]}"
    return dict(zip(("scroll", "svgs", "rendered", "inside"), map(int, found.groups())))


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (apt-get install chromium)")
@pytest.mark.parametrize("width", [1280, 390])
def test_chromium_renders_every_svg_inside_the_window(quickstart: Path, tmp_path: Path, width: int) -> None:
    m = _measure(quickstart, width, tmp_path)
    assert m["svgs"] == 6 and m["rendered"] == 6 and m["inside"] == 6, m
    assert m["scroll"] <= width, m  # nothing reaches past the window (wide tables scroll in their box)


def test_screenshots_are_committed_at_both_widths() -> None:
    from PIL import Image

    for width in (1280, 390):
        with Image.open(QUICKSTART / "screenshots" / f"report-{width}.png") as im:
            assert im.format == "PNG" and im.size[0] == width and im.size[1] > 2000
