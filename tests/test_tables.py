"""The paper-style tables of a summary: layout, scaling, bold only for a significantly best model, LaTeX, mixed protocols refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ganeval.results.summary import compare_runs, summarize_runs
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
])
def test_fid_is_named_by_its_feature_space(extractor: str | None, label: str, tex: str | None) -> None:
    s = summarize_runs(_rows(), 0.99, 500)
    rows = [ln.split("|")[1].strip() for ln in table_markdown(s, extractor=extractor).splitlines()[2:5]]
    assert rows == ["IMD", "KID×10³", label]
    if tex is not None:
        assert tex + " & " in table_latex(s, extractor=extractor)


def test_direction_sentence_follows_the_metrics() -> None:
    from ganeval.results.tables import direction_sentence

    assert direction_sentence(["imd", "kid", "fid"]) == "Lower is better"
    assert direction_sentence(["fid", "precision", "recall"]) == "Higher is better for Precision, Recall, lower for FID"


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
