"""Every figure of ganeval/results/plots.py read back from its artists: where each point sits, its size, the axes'
limits, scales, labels and titles (what a reader sees), not pixels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ganeval.results import plots


@pytest.fixture(autouse=True)
def _close_figures():  # type: ignore[no-untyped-def]
    yield
    plots._plt().close("all")


def _summary() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["a", "b", "a", "b"], "metric": ["fid", "fid", "kid", "kid"],
        "mean": [10.0, 12.0, 0.002, 0.004], "half_width": [1.0, np.nan, 0.001, 0.0005],
        "confidence": [0.9] * 4,
    })


def _runs() -> pd.DataFrame:
    rows = []
    for model, base in (("a", 10.0), ("b", 12.0)):
        for r in range(3):
            rows.append({"model": model, "metric": "fid", "run": r, "value": base + r})
            rows.append({"model": model, "metric": "kid", "run": r, "value": base / 5000 + r / 1000})
    rows.append({"model": "c", "metric": "fid", "run": 0, "value": 99.0})  # another model: never drawn
    return pd.DataFrame(rows)


def _seeds() -> pd.DataFrame:
    return pd.DataFrame({"model": ["a", "a", "b", "b"] * 2, "metric": ["fid"] * 4 + ["kid"] * 4,
                         "train_seed": [0, 1, 0, 1] * 2, "mean": [9.0, 11.0, 12.5, 11.5, 0.001, 0.003, 0.004, 0.004]})


def test_the_summary_panels_place_runs_means_and_seeds() -> None:
    fig = plots.summary_figure(_summary(), "t $5", seeds=_seeds(), runs=_runs())
    fid, kid = fig.axes
    runs_a, seeds_a = fid.lines[0], fid.lines[-2]
    assert runs_a.get_label() == "runs" and fid.lines[1].get_label().startswith("_")
    np.testing.assert_allclose(runs_a.get_xdata(), 0 - 0.2 + np.linspace(-0.07, 0.07, 3))
    np.testing.assert_allclose(runs_a.get_ydata(), [10.0, 11.0, 12.0])
    assert (runs_a.get_markersize(), runs_a.get_alpha(), runs_a.get_color()) == (3, 0.6, "#8c959f")
    np.testing.assert_allclose(fid.lines[1].get_xdata(), 1 - 0.2 + np.linspace(-0.07, 0.07, 3))
    assert seeds_a.get_label() == "training seeds" and seeds_a.get_markersize() == 5
    np.testing.assert_allclose(seeds_a.get_xdata(), 0 + 0.2 + np.linspace(-0.05, 0.05, 2))
    np.testing.assert_allclose(seeds_a.get_ydata(), [9.0, 11.0])
    np.testing.assert_allclose(fid.lines[-1].get_xdata(), 1 + 0.2 + np.linspace(-0.05, 0.05, 2))
    bar = fid.containers[0]
    assert bar.get_label() == "mean, CI"
    np.testing.assert_allclose(np.asarray(bar.lines[0].get_ydata(), float), [10.0, 12.0])
    segs = bar.lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 1] for s in segs], [[9.0, 11.0], [12.0, 12.0]])  # a NaN half-width: no bar
    assert fid.get_xlim() == pytest.approx((-0.8, 1.8))
    assert [t.get_text() for t in fid.get_xticklabels()] == ["a", "b"]
    assert fid.get_xticklabels()[0].get_rotation() == 30 and fid.get_xticklabels()[0].get_fontsize() == 8
    assert fid.get_title() == "FID (lower is better)" and fid.title.get_fontsize() == 10
    assert fid.get_ylabel() == "FID" and fid.get_legend().get_texts()[0].get_fontsize() == 7
    np.testing.assert_allclose(np.asarray(kid.containers[0].lines[0].get_ydata(), float), [2.0, 4.0])  # KID × 10³
    np.testing.assert_allclose(kid.lines[0].get_ydata(), [2.0, 3.0, 4.0])
    assert fig._suptitle.get_text() == "t \\$5 (mean, 90% CI)" and fig._suptitle.get_fontsize() == 10
    assert fig.get_size_inches() == pytest.approx((7.6, 3.6))


def test_a_plain_summary_panel_has_no_legend_and_its_own_limits() -> None:
    fig = plots.summary_figure(_summary()[["model", "metric", "mean", "half_width"]])
    fid = fig.axes[0]
    assert fid.get_legend() is None and fid.containers[0].get_label().startswith("_")
    assert fid.get_xlim() == pytest.approx((-0.5, 1.5))
    assert fig._suptitle.get_text() == ""
    fig = plots.summary_figure(_summary(), "only", runs=_runs())
    assert fig.axes[0].get_xlim() == pytest.approx((-0.8, 1.5))
    fig = plots.summary_figure(_summary(), seeds=_seeds())
    assert fig.axes[0].get_xlim() == pytest.approx((-0.5, 1.8))
    assert fig._suptitle.get_text() == "(mean, 90% CI)"


def test_stored_runs_leave_out_the_repeated_probe_draws(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert plots.stored_runs(tmp_path) is None
    pd.DataFrame({"run": [0, 0, 1], "probe_draw": [0, 1, np.nan], "value": [1.0, 2.0, 3.0]}).to_csv(
        tmp_path / "runs.csv", index=False)
    assert plots.stored_runs(tmp_path)["value"].tolist() == [1.0, 3.0]


def _blur() -> pd.DataFrame:
    rows = []
    for line in ("cifar", "mnist"):
        for m in ("imd", "fid", "vendi"):
            for s in (2.0, 0.0, 1.0):
                rows.append({"line": line, "metric": m, "sigma": s, "normalized_mean": s + 1,
                             "normalized_ci_low": s + 0.5, "normalized_ci_high": s + 1.5,
                             "raw_mean": 2 * s, "raw_ci_low": s, "raw_ci_high": 3 * s})
    return pd.DataFrame(rows)


def test_the_blur_figure_draws_each_metric_per_line_against_sigma(tmp_path) -> None:  # type: ignore[no-untyped-def]
    figs: list = []  # type: ignore[type-arg]
    keep = plots._save
    plots._save = lambda fig, path: figs.append(fig) or path  # type: ignore[assignment]
    try:
        plots.plot_blur(_blur(), tmp_path / "b.png")
        plots.plot_blur(_blur().query("line == 'cifar'").drop(columns="line"), tmp_path / "c.png", value="raw")
    finally:
        plots._save = keep  # type: ignore[assignment]
    ax = figs[0].axes[0]
    lines = [ln for ln in ax.lines if not ln.get_label().startswith("_")]
    assert [ln.get_label() for ln in lines] == [f"{m} vs {d}" for d in ("cifar", "mnist")
                                                for m in ("IMD", "FID", "Vendi")]
    assert [ln.get_linestyle() for ln in lines] == ["-"] * 3 + ["--"] * 3
    assert [ln.get_marker() for ln in lines[:3]] == ["o", "s", "o"]
    assert [ln.get_color() for ln in lines[:3]] == ["C0", "C1", "C2"] and lines[0].get_markersize() == 4
    np.testing.assert_allclose(lines[0].get_xdata(), [0.0, 1.0, 2.0])
    np.testing.assert_allclose(lines[0].get_ydata(), [1.0, 2.0, 3.0])
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(0.5) and band[:, 1].max() == pytest.approx(3.5)
    assert ax.collections[0].get_alpha() == 0.2
    ref = [ln for ln in ax.lines if ln.get_label().startswith("_")][-1]
    assert list(ref.get_ydata()) == [1.0, 1.0] and ref.get_linestyle() == ":"
    assert ax.get_xlabel() == "Gaussian blur level σ"
    assert ax.get_ylabel() == "distance / distance of the reference pair"
    raw = figs[1].axes[0]
    assert raw.get_ylabel() == "distance" and [ln.get_label() for ln in raw.lines[:3]] == ["IMD", "FID", "Vendi"]
    np.testing.assert_allclose(raw.lines[0].get_ydata(), [0.0, 2.0, 4.0])


def test_heat_traces_are_log_log_only_when_every_band_is_positive(tmp_path) -> None:  # type: ignore[no-untyped-def]
    figs: list = []  # type: ignore[type-arg]
    keep = plots._save
    plots._save = lambda fig, path: figs.append(fig) or path  # type: ignore[assignment]
    frame = pd.DataFrame({"data": ["z", "z", "a", "a"], "t": [10.0, 1.0, 1.0, 10.0], "mean": [4.0, 3.0, 2.0, 1.0],
                          "ci_low": [3.5, 2.5, 1.5, 0.5], "ci_high": [4.5, 3.5, 2.5, 1.5]})
    try:
        plots.plot_heat_traces(frame, tmp_path / "h.png")
        plots.plot_heat_traces(frame.assign(ci_low=[3.5, 2.5, 1.5, 0.0]), tmp_path / "g.png", normalization="none")
    finally:
        plots._save = keep  # type: ignore[assignment]
    ax = figs[0].axes[0]
    assert [ln.get_label() for ln in ax.lines] == ["z", "a"]  # in the data's order
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [1.0, 10.0])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [3.0, 4.0])
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log") and ax.collections[0].get_alpha() == 0.25
    assert ax.get_ylabel() == "heat trace, ER normalisation" and ax.get_xlabel() == "t"
    assert figs[1].axes[0].get_yscale() == "linear"
    assert figs[1].axes[0].get_ylabel() == "heat trace, NONE normalisation"


def test_point_sets_share_the_first_sets_padded_box(tmp_path) -> None:  # type: ignore[no-untyped-def]
    figs: list = []  # type: ignore[type-arg]
    keep = plots._save
    plots._save = lambda fig, path: figs.append(fig) or path  # type: ignore[assignment]
    first = np.array([[0.0, 0.0, 0.0], [10.0, 20.0, 40.0]])
    second = np.random.default_rng(0).normal(size=(50, 3))
    try:
        plots.plot_points_3d({"real": first, "gen": second}, tmp_path / "p.png", max_points=20, seed=3)
    finally:
        plots._save = keep  # type: ignore[assignment]
    fig = figs[0]
    assert len(fig.axes) == 2 and fig.get_size_inches() == pytest.approx((8.4, 4.0))
    for ax in fig.axes:
        assert ax.get_xlim() == pytest.approx((-1.5, 11.5)) and ax.get_ylim() == pytest.approx((-3.0, 23.0))
        assert ax.get_zlim() == pytest.approx((-6.0, 46.0))
    assert [ax.get_title() for ax in fig.axes] == ["real", "gen"]
    shown = np.array(fig.axes[1].collections[0]._offsets3d).T  # type: ignore[attr-defined]
    want = second[np.random.default_rng(3).choice(50, 20, replace=False)]
    np.testing.assert_allclose(shown, want)
    assert len(np.array(fig.axes[0].collections[0]._offsets3d).T) == 2  # type: ignore[attr-defined]


def _dots(ax):  # type: ignore[no-untyped-def]
    """The scatter points of a differences panel (its error bars are collections too)."""
    from matplotlib.collections import PathCollection

    return [c for c in ax.collections if isinstance(c, PathCollection)]


def _comparison() -> pd.DataFrame:
    return pd.DataFrame({"metric": ["fid", "fid", "kid"], "a": ["a", "a", "a"], "b": ["b", "c", "b"],
                         "diff_mean": [-2.0, 1.0, -0.002], "ci_low": [-3.0, -1.0, -0.003],
                         "ci_high": [-1.0, 3.0, -0.001], "better": ["a", "", "a"]})


def _seed_frame() -> pd.DataFrame:
    rows = []
    for model, base in (("a", 8.0), ("b", 10.0), ("c", 7.0)):
        for seed in (5, 3):
            rows.append({"model": model, "metric": "fid", "train_seed": seed, "mean": base + seed})
            rows.append({"model": model, "metric": "kid", "train_seed": seed, "mean": (base + seed) / 1000})
    return pd.DataFrame(rows)


def test_the_differences_figure_places_each_pair_and_seed() -> None:
    frame = _seed_frame()
    fig = plots.differences_figure(_comparison(), frame, "train_seed", "mean", title="x $y")
    fid, kid, fid2, kid2 = fig.axes
    bars = fid.containers
    np.testing.assert_allclose(np.asarray(bars[0].lines[0].get_xdata(), float), [-2.0])
    np.testing.assert_allclose(np.asarray(bars[0].lines[0].get_ydata(), float), [0.0])
    np.testing.assert_allclose(np.asarray(bars[1].lines[0].get_ydata(), float), [-1.0])
    np.testing.assert_allclose(bars[0].lines[2][0].get_segments()[0][:, 0], [-3.0, -1.0])
    assert bars[0].lines[0].get_color() == "#0969da" and bars[1].lines[0].get_color() == "#57606a"
    dots = _dots(fid)[0].get_offsets()
    np.testing.assert_allclose(dots[:, 0], [-2.0, -2.0])  # a − b of seeds 3 and 5 (sorted by seed)
    np.testing.assert_allclose(dots[:, 1], 0.3 + np.linspace(-0.18, 0.18, 2) * 0.5)
    assert fid.get_ylim() == pytest.approx((-2 + 0.4, 0.8))
    assert [t.get_text() for t in fid.get_yticklabels()] == ["a − b", "a − c"]
    assert fid.get_title() == "FID: difference a − b" and fid.title.get_fontsize() == 9
    line = fid.lines[-1] if fid.lines else None
    assert line is not None and list(line.get_xdata()) == [0.0, 0.0] and line.get_linestyle() == "--"
    np.testing.assert_allclose(np.asarray(kid.containers[0].lines[0].get_xdata(), float), [-2.0])  # ×10³
    assert [ln.get_label() for ln in fid2.lines] == ["s3", "s5"]
    np.testing.assert_allclose(fid2.lines[0].get_ydata(), [11.0, 13.0, 10.0])  # seed 3 across a, b, c
    assert fid2.lines[0].get_color() == "C0" and fid2.lines[1].get_color() == "C1"
    assert [t.get_text() for t in fid2.get_xticklabels()] == ["a", "b", "c"]
    assert fid2.get_title() == "FID: each training seed across the models"
    assert [t.get_text() for t in fid2.get_legend().get_texts()] == ["s3", "s5"]
    assert fig._suptitle.get_text() == "x \\$y"
    assert fig.get_size_inches() == pytest.approx((8.4, 1.2 + 2.0 + 0.55 * 2))


def test_run_differences_are_one_row_in_one_colour() -> None:
    runs = pd.DataFrame({"model": ["a", "b", "a", "b", "a"], "metric": ["fid"] * 5, "run": [0, 0, 1, 1, 2],
                         "value": [1.0, 3.0, 2.0, 2.5, 9.0]})
    fig = plots.differences_figure(_comparison().iloc[:1], runs, "run", "value")
    assert len(fig.axes) == 1 and fig._suptitle is None
    dots = _dots(fig.axes[0])[0]
    np.testing.assert_allclose(dots.get_offsets()[:, 0], [-2.0, -0.5])  # run 2 has no b: no pair
    assert dots.get_alpha() == 0.4
    one = plots.differences_figure(_comparison().iloc[:1], runs[runs.run == 0], "run", "value")
    np.testing.assert_allclose(_dots(one.axes[0])[0].get_offsets()[:, 1], [0.3])  # one point: no jitter
    assert plots.seed_color(pd.DataFrame({"s": [7, 2, 7, 30]}), "s", 30) == "C2"
    assert plots.seed_color(pd.DataFrame({"s": list(range(12))}), "s", 11) == "C1"


def test_pair_points_match_on_data_and_the_two_models() -> None:
    frame = pd.DataFrame({"model": ["a", "b", "a", "b"], "metric": ["fid"] * 4, "data": ["x", "x", "y", "y"],
                          "run": [0, 0, 0, 0], "value": [1.0, 4.0, 10.0, 40.0]})
    row = pd.Series({"metric": "fid", "a": "a", "b": "b", "data": "y"})
    assert plots.pair_points(row, frame, "run", "value").tolist() == [-30.0]
    row_any = pd.Series({"metric": "fid", "a": "b", "b": "a", "data": np.nan})
    assert plots.pair_points(row_any, frame, "run", "value").tolist() == [3.0]  # the first row of each pair


def test_the_paired_frame_is_seeds_with_seeds_else_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    seeds = _seed_frame()
    assert plots.paired_frame(tmp_path, seeds) == (seeds, "train_seed", "mean")
    assert plots.paired_frame(tmp_path, seeds.drop(columns="train_seed"))[1:] == ("run", "value")
    assert plots.DIFFERENCES_FILE == "differences.png"
