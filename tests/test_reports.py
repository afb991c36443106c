"""Tables, result files and figures from a summary."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ganeval import plots, reports
from ganeval.summary import compare_runs, summarize_runs


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
    md = reports.table_markdown(s)
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert lines[0] == "| metric | mnist / wgan | mnist / wgan_gp | cifar10 / wgan | cifar10 / wgan_gp |"
    assert [ln.split("|")[1].strip() for ln in lines[2:]] == ["IMD", "KID×10³", "FID"]
    kid = lines[3].split("|")
    # KID is scaled by 1e3 in the table only: 0.01 * 1 -> 10.00
    kid_mean = s[(s.data == "mnist") & (s.model == "wgan_gp") & (s.metric == "kid")]["mean"].iloc[0]
    assert kid[3].strip().startswith(f"**{kid_mean * 1e3:.2f} ± ") and abs(kid_mean * 1e3 - 10) < 0.5
    assert not kid[2].strip().startswith("**")  # wgan is worse
    fid_mean = s[(s.data == "mnist") & (s.model == "wgan") & (s.metric == "fid")]["mean"].iloc[0]
    assert f"{fid_mean:.2f}" in lines[4].split("|")[2]
    assert "over 10 runs of 500 samples" in md


def test_latex_table_has_multicolumn_headers_and_bold() -> None:
    s = summarize_runs(_rows(), 0.99, 500)
    tex = reports.table_latex(s, caption="GAN table")
    assert r"\multicolumn{2}{c}{\textbf{mnist}}" in tex
    assert r"\cmidrule(lr){2-3}\cmidrule(lr){4-5}" in tex
    assert r"wgan\_gp" in tex
    kid_line = next(ln for ln in tex.splitlines() if ln.startswith("KID"))
    assert kid_line.count(r"\mathbf") == 2  # one best model per dataset


def test_mixed_protocols_refused() -> None:
    a = summarize_runs(_rows(), 0.99, 500)
    b = summarize_runs(_rows(), 0.99, 1000)
    with pytest.raises(ValueError, match="sample_size"):
        reports.table_markdown(pd.concat([a, b]))


def test_write_results_files(tmp_path) -> None:
    rows = _rows()
    s = summarize_runs(rows, 0.99, 500)
    c = compare_runs(rows, 0.99)
    rec = reports.summary_record(s, {"runs": 10}, "abc", 0, "cpu", {"runs": 1.5}, {"extractor": {"name": "pixels"}})
    paths = reports.write_results(tmp_path, s, c, rec, title="t")
    names = sorted(p.name for p in paths)
    assert names == ["comparison.csv", "summary.csv", "summary.json", "table.md", "table.tex"]
    back = pd.read_csv(tmp_path / "summary.csv")
    np.testing.assert_array_equal(back["mean"].to_numpy(), s["mean"].to_numpy())  # full precision
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["config_hash"] == "abc" and "not the variation over training seeds" in doc["interval_covers"]
    assert doc["packages"]["torch"] and len(doc["results"]) == len(s)
    cmp_ = pd.read_csv(tmp_path / "comparison.csv")
    assert set(cmp_["better"].dropna()) == {"wgan_gp"}


def test_plots_write_png(tmp_path) -> None:
    s = summarize_runs(_rows(), 0.99, 500)
    p = plots.plot_summary(s, tmp_path / "summary.png")
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    blur = pd.DataFrame({"sigma": [0, 1, 0, 1], "metric": ["imd", "imd", "fid", "fid"], "line": "digits",
                         "normalized_mean": [0.1, 0.5, 0.2, 0.9], "normalized_ci_low": [0.0, 0.4, 0.1, 0.8],
                         "normalized_ci_high": [0.2, 0.6, 0.3, 1.0]})
    assert plots.plot_blur(blur, tmp_path / "blur.png").stat().st_size > 1000
    ht = pd.DataFrame({"data": ["a"] * 3, "t": [1, 10, 100], "mean": [1, 2, 3], "ci_low": [0.9, 1.9, 2.9],
                       "ci_high": [1.1, 2.1, 3.1]})
    assert plots.plot_heat_traces(ht, tmp_path / "ht.png").stat().st_size > 1000
    pts = {"good": np.random.default_rng(0).normal(size=(50, 3)), "bad": np.zeros((5, 3))}
    assert plots.plot_points_3d(pts, tmp_path / "torus.png").stat().st_size > 1000
