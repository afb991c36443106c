"""Each experiment end to end at tiny sizes, offline (embedded data, tiny training budgets)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from apphelp import run_inprocess
from ganeval.studies.torus import hole_fraction

FAST = ["metrics.imd.nv=10", "metrics.imd.m=6", "metrics.kid.subsets=4", "progress=false"]


def _dirs(tmp_path: Path) -> list[str]:
    return [f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}", f"models_dir={tmp_path / 'models'}"]


def _tiny_training(prefix: str, models: tuple[str, ...] = ("wgan", "wgan_gp")) -> list[str]:
    """Overrides that shrink the training of `models` under `prefix` to a few seconds."""
    out = []
    for g in models:
        out += [f"{prefix}.{g}.train.arch_kwargs.latent_dim=8", f"{prefix}.{g}.train.arch_kwargs.dim=4",
                f"{prefix}.{g}.train.batch_size=512"]
    return out


QUICK = ["experiment=quickstart", "runs=3", "sample_size=200", "n_generated=300", "train_epochs=1",
         "metrics.kid.subset_size=100", *_tiny_training("generators"), *FAST]


@pytest.mark.slow
def test_quickstart_tiny(tmp_path) -> None:  # type: ignore[no-untyped-def]
    s = run_inprocess([*QUICK, *_dirs(tmp_path)])
    res = tmp_path / "res"
    assert set(s.model) == {"wgan", "wgan_gp"} and set(s.data) == {"digits"}
    table = (res / "table.md").read_text()
    significant = (pd.read_csv(res / "comparison.csv", keep_default_na=False)["better"] != "").sum()
    assert "| metric | digits / wgan | digits / wgan\\_gp |" in table
    assert table.count("**") == 2 * significant  # bold: only a significantly best model
    rec = json.loads((res / "summary.json").read_text())
    assert rec["extractor"]["name"] == "pixels" and {"train digits/wgan", "train digits/wgan_gp"} <= set(rec["stage_seconds"])
    assert (res / "summary.png").stat().st_size > 1000
    assert len(list((tmp_path / "models" / "digits").glob("*/checkpoint.pt"))) == 2 * 3  # 3 training seeds each
    # a second call reuses the trained models, the cached features and the stored runs
    again = run_inprocess([*QUICK, *_dirs(tmp_path)])
    pd.testing.assert_frame_equal(again, s)


@pytest.mark.slow
def test_paper_table_with_embedded_sources(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # the paper's architectures output 32×32 (MNIST WGAN) and 28×28 (WGAN-GP): pixels resized to 16×16
    over = ["experiment=paper_table", "include=[mnist,cifar10]", "data@datasets.mnist.data=digits",
            "data@datasets.cifar10.data=patches", "datasets.cifar10.data.n=600", "features=pixels",
            "features.size=16", "runs=2", "sample_size=150", "n_generated=200", "train_epochs=1",
            "metrics.kid.subset_size=50"]
    for d in ("mnist", "cifar10"):
        over += [o.replace(".train.", ".train.").replace("arch_kwargs.", "arch_kwargs.") for o in
                 _tiny_training(f"datasets.{d}.generators")]
    over = [("+" + o if "arch_kwargs" in o else o) for o in over]
    s = run_inprocess(over + FAST + _dirs(tmp_path))
    assert set(zip(s.data, s.model)) == {(d, g) for d in ("mnist", "cifar10") for g in ("wgan", "wgan_gp")}
    tex = (tmp_path / "res" / "table.tex").read_text()
    assert r"\multicolumn{2}{c}{\textbf{MNIST}}" in tex and r"KID $\times 10^3$" in tex
    cmp_ = pd.read_csv(tmp_path / "res" / "comparison.csv")
    assert len(cmp_) == 6  # one pair per dataset and metric
    # the numbers: each summary cell is the mean ± Student-t half-width (99 %) of its 2 runs in runs.csv, each
    # comparison the mean of the per-run differences, and the table prints the summary's cells
    from scipy import stats

    runs = pd.read_csv(tmp_path / "res" / "runs.csv")
    assert len(runs) == 2 * 2 * 2 * 3 and np.isfinite(runs.value).all() and (runs[runs.metric == "fid"].value > 0).all()
    values = runs.set_index(["data", "model", "metric", "run"]).value.sort_index()
    for r in s.itertuples():
        v = values.loc[(r.data, r.model, r.metric)].to_numpy()
        half = stats.t.ppf(0.995, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
        assert (r.mean, r.half_width) == pytest.approx((v.mean(), half), rel=1e-9, abs=1e-12), r
    for c in cmp_.itertuples():
        d = values.loc[(c.data, c.a, c.metric)] - values.loc[(c.data, c.b, c.metric)]  # aligned by run
        assert c.diff_mean == pytest.approx(d.mean(), rel=1e-9, abs=1e-12) and c.n_runs == 2
    fid = s[(s.data == "mnist") & (s.model == "wgan") & (s.metric == "fid")].iloc[0]
    k = max(0, 1 - int(np.floor(np.log10(fid["half_width"]))))  # the half-width to two significant digits
    assert f"{fid['mean']:.{k}f} ± {fid['half_width']:.{k}f}" in (tmp_path / "res" / "table.md").read_text()


# experiment=blur_sweep: tests/test_blur_sweep.py


@pytest.mark.slow
def test_heat_traces_tiny(tmp_path) -> None:  # type: ignore[no-untyped-def]
    fast = [o for o in FAST if "kid" not in o]  # heat traces use the metrics=imd group
    s = run_inprocess(["experiment=heat_traces", "runs=3", "sample_size=150", "n_t=8", "datasets.patches.n=300",
                       *fast, *_dirs(tmp_path)])
    assert set(s.data) == {"digits", "patches"} and len(s) == 16
    t = s[s.data == "digits"]["t"].to_numpy()
    np.testing.assert_allclose(t[[0, -1]], [1.0, 100.0])
    assert (s.ci_low <= s["mean"]).all() and (s["mean"] <= s.ci_high).all()
    runs = pd.read_csv(tmp_path / "res" / "runs.csv")
    assert runs.run.nunique() == 3
    assert (tmp_path / "res" / "heat_traces.png").stat().st_size > 1000


def test_hole_fraction() -> None:
    pts = np.array([[0.1, 0.0, 0.0], [2.0, 0.0, 0.5], [0.0, 0.5, 0.0], [3.0, 0.0, 0.0]])
    assert hole_fraction(pts, 2.0, 1.0) == 0.5
    with pytest.raises(ValueError, match="N×3"):
        hole_fraction(pts[:, :2], 2.0, 1.0)


@pytest.mark.slow
def test_torus_tiny(tmp_path) -> None:  # type: ignore[no-untyped-def]
    s = run_inprocess(["experiment=torus", "runs=2", "sample_size=100", "n_generated=200", "data.n=300",
                       "train_epochs=2", "metrics.kid.subset_size=50", *FAST, *_dirs(tmp_path)])
    res = tmp_path / "res"
    assert set(s.model) == {"good", "bad"}
    rec = json.loads((res / "summary.json").read_text())
    assert set(rec["hole_fraction"]) == {"real", "good", "bad"} and rec["hole_fraction"]["real"] == 0.0
    v = pd.read_csv(res / "verdict.csv")
    assert set(v.metric) == {"imd", "fid", "kid"} and "intervals_overlap" in v.columns
    assert "inside the hole" in (res / "verdict.md").read_text()
    assert (res / "torus.png").stat().st_size > 1000


@pytest.mark.parametrize(
    "extra, match",
    [
        (["generators.wgan_gp.train.arch=nosuch"], "wgan_gp.train: arch='nosuch' is not a known architecture"),
        (["generators.wgan_gp.train.batch_size=5000"], "batch_size=5000 is larger than the real data"),
        (["+generators.wgan_gp.train.lr_q=1"], "unknown keys \\['lr_q'\\]"),
        (["n_generated=100"], "sample_size=200 is larger than the generated pool"),
    ],
)
def test_bad_training_config_fails_before_any_training(tmp_path, extra, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=match):
        run_inprocess([*QUICK, *_dirs(tmp_path), *extra])
    assert not (tmp_path / "models").exists()
