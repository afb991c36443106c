"""report.html as a person sees it: rendered in headless Chromium at 1280 px, nothing reaches past the window (wide
tables scroll inside their box), the verdict comes first and the raw files are folded. Skipped without Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ganeval.results.record import RunRecord
from ganeval.results.report import write_report

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = next((shutil.which(c) for c in ("chromium", "chromium-browser", "google-chrome") if shutil.which(c)), None)
MEASURE = ("<script>window.addEventListener('load', () => document.body.setAttribute('data-width', "
           "String(document.documentElement.scrollWidth)));</script>")


def rendered_width(report: Path, width: int, tmp: Path) -> int:
    """document.documentElement.scrollWidth of the page rendered in a `width`-px window."""
    copy = tmp / "measure.html"
    copy.write_text(report.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>", 1), encoding="utf-8")
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'profile'}",
                           "--virtual-time-budget=5000", f"--window-size={width},900", "--dump-dom", copy.as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)
    found = re.search(r'data-width="(\d+)"', done.stdout)
    assert found, f"chromium exit {done.returncode}: {done.stderr[-800:]}"
    return int(found.group(1))


@pytest.fixture()
def quickstart_report(tmp_path: Path) -> Path:
    """The committed quickstart results (3 seeds: the widest summary.csv) with their report rebuilt by this code."""
    out = tmp_path / "quickstart"
    shutil.copytree(ROOT / "results" / "reference" / "quickstart", out)
    write_report(out, RunRecord.read(out / "summary.json"), "quickstart")
    return out / "report.html"


def test_report_structure(quickstart_report: Path) -> None:
    html = quickstart_report.read_text()
    first = html.index('<p class="verdict">')
    assert first < html.index("<h2") and "no significant difference on any metric at 99 % (3 training seeds)" in html
    assert html.index('<details id="raw-files">') < html.index('id="summary" data-file="summary.csv"')  # the raw CSVs folded
    assert "<details><summary>the config as resolved" in html
    rounded = html[html.index('id="summary-rounded"'):]
    assert "KID×10³" in rounded[:4000] and "0.023820" not in rounded[:4000]  # table units, no 16-digit floats


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (apt-get install chromium)")
def test_report_fits_1280_px(quickstart_report: Path, tmp_path: Path) -> None:
    assert rendered_width(quickstart_report, 1280, tmp_path) <= 1280


PHONE_CHECK = """<!DOCTYPE html><html><body style="margin:0"><iframe src="{src}" style="width:390px;height:900px;border:0">
</iframe><script>document.querySelector('iframe').addEventListener('load', e => {{
  const d = e.target.contentDocument, broken = [];
  for (const td of d.querySelectorAll('table.meta td')) {{
    const walk = d.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {{
      for (const m of n.data.matchAll(/(?<![A-Za-z0-9])[A-Za-z]{{3,}}(?![A-Za-z0-9])/g)) {{
        const r = d.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        if (new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1) broken.push(m[0]);
      }}
    }}
  }}
  const uncued = [];
  for (const t of d.querySelectorAll('table')) {{
    const box = t.parentElement;
    if (t.scrollWidth > d.documentElement.clientWidth - 8 || box.scrollWidth > box.clientWidth) {{
      const bg = getComputedStyle(box).backgroundImage;
      if (!box.classList.contains('scroll') || (bg.match(/linear-gradient/g) || []).length < 4) uncued.push(t.id || t.className);
    }}
  }}
  document.body.setAttribute('data-result', JSON.stringify({{width: d.documentElement.scrollWidth, broken, uncued}}));
}});</script></body></html>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (apt-get install chromium)")
def test_report_reads_on_a_phone(quickstart_report: Path, tmp_path: Path) -> None:
    """At 390 px (issue 57): the page is no wider; no word of a key/value table is broken across lines (a path wraps
    at its slashes: "exp / erim / ent" and "referenc / e" before); every table wider than its box scrolls in a box
    with the edge shadows that say so; no value is shown as raw JSON. Kills: overflow-wrap: anywhere on the keys,
    values without break opportunities, a scroll box without its cue, meta_rows' json.dumps."""
    import json

    frame = tmp_path / "phone.html"
    frame.write_text(PHONE_CHECK.format(src=quickstart_report.as_uri()), encoding="utf-8")
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
                           "--virtual-time-budget=5000", "--allow-file-access-from-files", "--window-size=500,900",
                           "--dump-dom", frame.as_uri()], capture_output=True, text=True, timeout=180, check=False)
    found = re.search(r"data-result=\"([^\"]*)\"", done.stdout)
    assert found, f"chromium exit {done.returncode}: {done.stderr[-800:]}"
    result = json.loads(found.group(1).replace("&quot;", '"'))
    assert result["width"] <= 390 and result["broken"] == [] and result["uncued"] == [], result
    html = quickstart_report.read_text(encoding="utf-8")
    meta = "".join(re.findall(r'<table class="meta">.*?</table>', html, flags=re.S))
    assert meta and "{&#34;" not in meta and '{"' not in meta and "channels:<wbr> none" in meta  # key: value
