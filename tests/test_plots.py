"""Figures of results: each plot writes a PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ganeval.results import plots

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "quickstart"


def test_plots_write_png(tmp_path: Path) -> None:
    s = pd.read_csv(REFERENCE / "summary.csv")
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


def test_differences_figure_keeps_legends_off_points_and_seed_labels_apart() -> None:
    """differences.png (issue 57): the seeds' legend covers no plotted point (its marker included) and no label
    overlaps another, on the quickstart's reference numbers (where the legend sat on a point) and with two seeds of
    one difference (where the s0/s1 labels beside the dots fell on each other). Kills: the legend inside the panel
    ('best' still covered a point) and the labels written beside each dot."""
    from matplotlib.collections import PathCollection

    reference = Path(__file__).resolve().parents[1] / "results" / "reference" / "quickstart"
    seeds = pd.read_csv(reference / "summary_seeds.csv")
    comparison = pd.read_csv(reference / "comparison.csv")
    tied = seeds.copy()  # seed 1's difference made seed 0's: two dots at one place
    for metric in tied["metric"].unique():
        at = lambda m, s: (tied["metric"] == metric) & (tied["model"] == m) & (tied["train_seed"] == s)  # noqa: E731
        diff0 = float(tied.loc[at("wgan", 0), "mean"].iloc[0] - tied.loc[at("wgan_gp", 0), "mean"].iloc[0])
        tied.loc[at("wgan_gp", 1), "mean"] = tied.loc[at("wgan", 1), "mean"].iloc[0] - diff0
    for frame in (seeds, tied):
        fig = plots.differences_figure(comparison, frame, "train_seed", "mean", {"name": "pixels"}, "t")
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            points = []  # (display x, y, marker radius in pixels)
            for line in ax.get_lines():
                radius = line.get_markersize() * fig.dpi / 72 / 2
                points += [(*p, radius) for p in ax.transData.transform(np.column_stack(line.get_data()))]
            for coll in ax.collections:
                if isinstance(coll, PathCollection) and len(coll.get_offsets()):
                    radius = np.sqrt(coll.get_sizes()[0]) * fig.dpi / 72 / 2
                    points += [(*p, radius) for p in coll.get_offset_transform().transform(coll.get_offsets())]
            legend = ax.get_legend()
            boxes = ([legend.get_window_extent(renderer)] if legend is not None else []) + [
                t.get_window_extent(renderer) for t in ax.texts if t.get_text()]
            for box in boxes:
                covered = [(x, y) for x, y, r in points
                           if np.isfinite(x) and box.x0 - r < x < box.x1 + r and box.y0 - r < y < box.y1 + r]
                assert not covered, f"a legend or label of {ax.get_title()!r} covers points at {covered}"
            labels = [b for b in boxes[1 if legend is not None else 0:]]
            for i, a in enumerate(labels):
                assert not any(a.overlaps(b) for b in labels[i + 1:]), f"two labels overlap in {ax.get_title()!r}"
        plots._plt().close(fig)
