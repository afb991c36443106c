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
