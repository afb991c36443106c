"""report.html: parsed with html.parser and checked against the files beside it (summary.csv values, embedded
PNGs that decode, the config, the command, the coverage note, versions), self-contained and escaped."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd

from apphelp import run_inprocess
from ganeval.hashing import shown_extractor
from ganeval.results.record import RunRecord
from ganeval.results.report import render_report
from ganeval.results.report_tables import rounded_frame
from ganeval.results.tables import paper_table, table_markdown
from ganeval.results.verdict import decimals_for
from ganeval.app.score import main


class Page(HTMLParser):
    """The parts of a report a test looks at: tables by id (cell texts), images, code blocks by id, all tags."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.images: list[dict[str, str]] = []
        self.code: dict[str, str] = {}
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._code: str | None = None

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        if tag == "table" and "id" in a:
            self._table = a["id"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []
        elif tag == "img":
            self.images.append(a)
        elif tag == "code" and "id" in a:
            self._code = a["id"]
            self.code[self._code] = ""

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = None
        elif tag == "code":
            self._code = None

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._code is not None:
            self.code[self._code] += data


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def check_report(out: Path) -> Page:
    """The checks every report passes: summary table = summary.csv, PNGs embedded and decoding, config, command,
    coverage note and versions as in summary.json, nothing loaded from elsewhere."""
    from PIL import Image

    page = parse(out / "report.html")
    with open(out / "summary.csv", newline="") as f:
        assert page.tables["summary"] == list(csv.reader(f))  # every cell, as written (full precision)
    pngs = sorted(p.name for p in out.glob("*.png"))
    # summary.png and differences.png drawn again as inline SVG panels (one per metric), the other PNGs embedded
    drawn = sorted(a["data-source"] for tag, a in page.tags if tag == "div" and "data-source" in a)
    assert sorted(img["alt"] for img in page.images) == [p for p in pngs if p not in drawn] and pngs
    assert drawn == [p for p in ("differences.png", "summary.png") if p in pngs]
    if "summary.png" in drawn:  # a panel per metric at least
        assert sum(tag == "svg" for tag, _ in page.tags) >= pd.read_csv(out / "summary.csv").metric.nunique()
    for img in page.images:
        head, _, data = img["src"].partition(",")
        assert head == "data:image/png;base64"
        with Image.open(io.BytesIO(base64.b64decode(data, validate=True))) as im:
            im.verify()
            assert im.format == "PNG"
    record = json.loads((out / "summary.json").read_text())
    assert json.loads(page.code["config-json"]) == record["config"]
    assert page.code["command"] == record["command"]
    text = " ".join(page.text)
    assert record["interval_covers"] in text
    for pkg in ("python", "torch", "ganeval", "numpy"):
        assert pkg in text and record["packages"][pkg] in text
    # extractor and weights identity, one `key: value` a line (not JSON; the page's <wbr>s split the text pieces)
    from ganeval.results.report import readable

    assert re.sub(r"\s+", "", readable(shown_extractor(record["extractor"]))) in re.sub(r"\s+", "", text)
    for tag, attrs in page.tags:  # self-contained: no external stylesheet, script, image or frame
        assert tag not in ("script", "link", "iframe")
        for key in ("src", "href", "xlink:href"):
            assert not attrs.get(key) or attrs[key].startswith("data:") or attrs[key].startswith("#")
    return page


def test_report_of_ganeval_score_out(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    for name, shift, n in (("real", 0.0, 300), ("fake", 0.4, 250), ("other", 0.1, 250)):
        np.save(tmp_path / f"{name}.npy", (rng.normal(size=(n, 6)) + shift).astype(np.float32))
    out = tmp_path / "out"
    assert main([str(tmp_path / "real.npy"), str(tmp_path / "fake.npy"), str(tmp_path / "other.npy"), "--runs", "3",
                 "--sample-size", "120", "--option", "imd.nv=20", "--option", "kid.subsets=5", "--option",
                 "kid.subset_size=60", "--quiet", "--out", str(out)]) == 0
    page = check_report(out)
    assert page.code["command"].startswith("ganeval-score ") and "--sample-size 120" in page.code["command"]
    with open(out / "comparison.csv", newline="") as f:
        assert page.tables["comparison"] == list(csv.reader(f))
    assert "runs" not in page.tables  # runs.csv is summarised, not shown


def test_report_of_a_hydra_experiment_has_its_late_figures(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An experiment that draws its figure after the shared write (heat_traces) still gets it in the report."""
    out = tmp_path / "res"
    run_inprocess(["experiment=heat_traces", "runs=2", "sample_size=100", "n_t=6", "datasets.patches.n=200",
                   "metrics.imd.nv=10", "metrics.imd.m=6", "progress=false", f"results_dir={out}",
                   f"cache_dir={tmp_path / 'cache'}", f"models_dir={tmp_path / 'models'}"])
    page = check_report(out)
    assert "heat_traces.png" in {img["alt"] for img in page.images}
    assert page.code["command"].startswith("ganeval ") and "experiment=heat_traces" in page.code["command"]


def test_report_escapes_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "summary.csv").write_text('model,metric,mean\n"<script>x</script>",fid,1.5\n')
    (tmp_path / "table.md").write_text("| metric | <b>m</b> |\n|---|---|\n| FID | **1.50 ± 0.10** |\n\nA & B <i>\n")
    record = RunRecord(config_hash="h", config={"title": "</code><script>alert(1)</script>"}, seed=0, device="cpu",
                       command="ganeval title='<img src=x onerror=alert(1)>'", experiment="<e>")
    (tmp_path / "report.html").write_text(render_report(tmp_path, record, title="a <title> & more"))
    page = parse(tmp_path / "report.html")
    assert not any(tag in ("script", "img", "i", "b") for tag, _ in page.tags)
    assert page.tables["summary"][1][0] == "<script>x</script>"  # shown as text
    assert page.code["command"] == "ganeval title='<img src=x onerror=alert(1)>'"
    assert json.loads(page.code["config-json"]) == record.config
    assert "**" not in " ".join(page.text) and any(tag == "strong" for tag, _ in page.tags)  # table.md bold kept


def test_report_shows_a_verdict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "summary.csv").write_text("model,metric,mean\na,fid,1.5\n")
    (tmp_path / "verdict.md").write_text("# Does IMD separate <them>?\n\n| metric | separates |\n|---|---|\n| IMD | no |\n")
    record = RunRecord(config_hash="h", config={}, seed=0, device="cpu")
    (tmp_path / "report.html").write_text(render_report(tmp_path, record))
    page = parse(tmp_path / "report.html")
    text = " ".join(page.text)
    assert "Does IMD separate <them>?" in text and "separates" in text and ("h3", {}) in page.tags


def test_no_report_without_results(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The app's second write after an experiment adds nothing where no summary was written."""
    from types import SimpleNamespace

    from ganeval.app.pipeline import write_report

    plan = SimpleNamespace(results_dir=tmp_path, record=None, report_title="", report_table=None, title="x", name="x")
    write_report(plan)  # type: ignore[arg-type]
    assert not (tmp_path / "report.html").exists()


QUICKSTART = Path(__file__).resolve().parents[1] / "results" / "reference" / "quickstart"


def quickstart_frames() -> tuple[pd.DataFrame, pd.DataFrame, RunRecord]:
    """The committed quickstart's summary, its comparison with WGAN significantly better on IMD, and its record."""
    comparison = pd.read_csv(QUICKSTART / "comparison.csv", keep_default_na=False, na_values=[""])
    comparison["better"] = comparison["better"].astype(object)
    comparison.loc[comparison["metric"] == "imd", "better"] = "wgan"
    return pd.read_csv(QUICKSTART / "summary.csv"), comparison, RunRecord.read(QUICKSTART / "summary.json")


def test_report_table_is_drawn_from_the_summary_and_comparison(tmp_path: Path) -> None:
    """The paper table of report.html is the `PaperTable` table.md is written from (cells, bold, notes), never a
    table.md read back: a stale table.md in the folder is not shown."""
    summary, comparison, record = quickstart_frames()
    summary.to_csv(tmp_path / "summary.csv", index=False)
    (tmp_path / "table.md").write_text("| metric | wgan |\n|---|---|\n| stale | 0 |\n")
    table = paper_table(summary, comparison, "quickstart", extractor=record.extractor)
    assert [(r[0][0], c) for r in table.rows for c, (_, bold) in enumerate(r[1:]) if bold] == [("IMD", 0)]
    html = render_report(tmp_path, record, "quickstart", table)
    (tmp_path / "report.html").write_text(html)
    page = parse(tmp_path / "report.html")
    assert page.tables["paper-table"] == [table.header] + [[text for text, _ in row] for row in table.rows]
    assert re.findall(r"<td><strong>([^<]*)</strong></td>", html) == [table.rows[0][1][0]]
    text = " ".join(page.text)
    assert "stale" not in text and table.columns_note in text
    assert all(item in text for item in table.comparisons) and len(table.comparisons) == len(comparison)


def test_report_shows_no_markdown_markup(tmp_path: Path) -> None:
    """#39: the notes' *emphasis* is rendered (em), not shown with its asterisks: from the data frames, and in a
    study's own table.md (Markdown) shown as written."""
    summary, comparison, record = quickstart_frames()
    summary.to_csv(tmp_path / "summary.csv", index=False)
    table = paper_table(summary, comparison, extractor=record.extractor)
    assert "*smallest detectable*" in table.comparison_intro
    (tmp_path / "table.md").write_text(table_markdown(summary, comparison, extractor=record.extractor))
    for given in (table, None):
        (tmp_path / "report.html").write_text(render_report(tmp_path, record, "q", given))
        page = parse(tmp_path / "report.html")
        text = " ".join(page.text)
        assert "smallest detectable" in text and "*smallest detectable*" not in text and ("em", {}) in page.tags
        assert "**" not in text


def test_rounded_comparison_scales_the_smallest_detectable_difference() -> None:
    """#39: the rounded comparison gives KID's smallest detectable difference (mde) in the table's unit, KID×10³,
    to the precision of the row's interval, like the difference and its interval."""
    _, comparison, record = quickstart_frames()
    text, scaled = rounded_frame(comparison, record.extractor)
    kid = comparison.index[comparison["metric"] == "kid"][0]
    mde, half = float(comparison.loc[kid, "mde"]), float(comparison.loc[kid, "half_width"])
    d = decimals_for(half * 1e3)
    assert scaled and text.loc[kid, "metric"] == "KID×10³" and 1e-3 < mde < 1  # unscaled in the file: < 1, so × 10³ shows
    assert text.loc[kid, "mde"] == f"{mde * 1e3:.{d}f}" == "54"
    assert text.loc[kid, "diff_mean"] == f"{float(comparison.loc[kid, 'diff_mean']) * 1e3:.{d}f}"
    fid = comparison.index[comparison["metric"] == "fid"][0]
    assert text.loc[fid, "mde"] == f"{float(comparison.loc[fid, 'mde']):.{decimals_for(float(comparison.loc[fid, 'half_width']))}f}"
