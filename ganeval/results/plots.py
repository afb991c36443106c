"""PNG figures of experiment results (matplotlib, headless): metric bars, the blur figure, heat traces, torus samples."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ganeval.common import atomic_write_bytes
from ganeval.results.summary import summary_group_columns

LABELS = {"imd": "IMD", "fid": "FID", "kid": "KID"}  # curve names of normalised values (no unit), e.g. blur.png


def _plt():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | Path) -> Path:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    _plt().close(fig)
    atomic_write_bytes(path, buf.getvalue())
    return Path(path)


def _seed_means(seeds: pd.DataFrame, columns: list[str], group: tuple, metric: str) -> np.ndarray:
    """The per-seed means of one group (its values of `columns`) and metric."""
    mask = seeds["metric"] == metric
    for c, v in zip(columns, group):
        mask &= seeds[c].astype(str) == str(v)
    return seeds.loc[mask, "mean"].to_numpy(float)


def summary_figure(summary: pd.DataFrame, title: str = "", seeds: pd.DataFrame | None = None,
                   extractor: str | Mapping[str, Any] | None = None) -> Any:
    """The figure of `plot_summary`: one panel per metric, in the table's units (the registry's label and scale,
    e.g. KID×10³), panels laid out so that no label reaches into a neighbour (constrained layout)."""
    from ganeval.metrics.registry import REGISTRY
    from ganeval.results.tables import metric_label

    plt = _plt()
    cols = summary_group_columns(summary)
    metrics = list(dict.fromkeys(summary.metric))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.8 * len(metrics), 3.6), squeeze=False, layout="constrained")
    for ax, m in zip(axes[0], metrics):
        label, scale, _ = metric_label(m, extractor)
        s = summary[summary.metric == m]
        groups = list(s[cols].itertuples(index=False, name=None))
        labels = [" / ".join(str(v) for v in r) for r in groups] if cols else ["value"]
        x = np.arange(len(s))
        ax.errorbar(x, s["mean"] * scale, yerr=s["half_width"].fillna(0) * scale, fmt="o", capsize=4,
                    label="model: mean, CI" if seeds is not None else None)
        if seeds is not None:
            for i, g in enumerate(groups):
                y = _seed_means(seeds, cols, g, m) * scale
                ax.plot(x[i] + 0.2 + np.linspace(-0.05, 0.05, len(y)), y, ".", color="C1", ms=5,
                        label="training seeds" if i == 0 else None)
            ax.legend(fontsize=7)
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_xlim(-0.5, len(s) - 0.5 + (0.3 if seeds is not None else 0))
        better = "higher" if getattr(REGISTRY.get(m), "higher_is_better", False) else "lower"
        ax.set_title(f"{label} ({better} is better)", fontsize=10)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    conf = summary["confidence"].iloc[0] if "confidence" in summary else None
    fig.suptitle((title + " " if title else "") + (f"(mean, {conf:.0%} CI)" if conf else ""), fontsize=10)
    return fig


def plot_summary(summary: pd.DataFrame, path: str | Path, title: str = "", seeds: pd.DataFrame | None = None,
                 extractor: str | Mapping[str, Any] | None = None) -> Path:
    """One panel per metric: each group's mean with its confidence interval as an error bar, in the table's units.

    With `seeds` (the per-(model, seed) summary) each training seed's mean is a small point beside its model's
    pooled interval.
    """
    return _save(summary_figure(summary, title, seeds, extractor), path)


def plot_blur(summary: pd.DataFrame, path: str | Path, value: str = "normalized") -> Path:
    """The paper's blur figure: each metric (normalised by the reference pair) against σ, with CI bands.

    `summary` has columns sigma, metric, line (e.g. the dataset compared against) and
    `{value}_mean`, `{value}_ci_low`, `{value}_ci_high`.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    styles = ["-", "--", ":", "-."]
    markers = {"imd": "o", "fid": "s", "kid": "^"}
    lines = list(dict.fromkeys(summary["line"])) if "line" in summary else [None]
    for li, line in enumerate(lines):
        part = summary if line is None else summary[summary["line"] == line]
        for ci, m in enumerate(dict.fromkeys(part.metric)):
            s = part[part.metric == m].sort_values("sigma")
            color = f"C{ci}"
            label = LABELS.get(m, m) + ("" if line is None else f" vs {line}")
            ax.plot(s["sigma"], s[f"{value}_mean"], styles[li % 4], marker=markers.get(m, "o"), color=color,
                    label=label, ms=4)
            ax.fill_between(s["sigma"], s[f"{value}_ci_low"], s[f"{value}_ci_high"], color=color, alpha=0.2)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("Gaussian blur level σ")
    ax.set_ylabel("distance / distance of the reference pair" if value == "normalized" else "distance")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_heat_traces(summary: pd.DataFrame, path: str | Path, normalization: str = "er") -> Path:
    """Normalised heat-trace curves (log–log), one line per dataset with its CI band over runs.

    `summary` has columns data, t, mean, ci_low, ci_high.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, (name, s) in enumerate(summary.groupby("data", sort=False)):
        s = s.sort_values("t")
        ax.plot(s["t"], s["mean"], color=f"C{i}", label=str(name))
        ax.fill_between(s["t"], s["ci_low"], s["ci_high"], color=f"C{i}", alpha=0.25)
    ax.set_xscale("log")
    if (summary["ci_low"] > 0).all():
        ax.set_yscale("log")
    ax.set_xlabel("t")
    ax.set_ylabel(f"heat trace, {normalization.upper()} normalisation")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return _save(fig, path)


def plot_points_3d(sets: Mapping[str, np.ndarray], path: str | Path, max_points: int = 3000, seed: int = 0) -> Path:
    """A 3-D scatter of several point sets side by side (e.g. each model's torus samples)."""
    plt = _plt()
    fig = plt.figure(figsize=(4.2 * len(sets), 4))
    rng = np.random.default_rng(seed)
    first = np.asarray(next(iter(sets.values())), dtype=np.float64)
    lo, hi = first.min(axis=0), first.max(axis=0)
    pad = 0.15 * (hi - lo)
    for i, (name, pts) in enumerate(sets.items()):
        pts = np.asarray(pts)
        if len(pts) > max_points:
            pts = pts[rng.choice(len(pts), max_points, replace=False)]
        ax = fig.add_subplot(1, len(sets), i + 1, projection="3d")
        ax.scatter(pts[:, 0], pts[:, 1], pts[:, 2], s=1, alpha=0.5, color=f"C{i}")
        ax.set_title(str(name), fontsize=9)
        ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])  # the first set's box on every panel (outliers clipped)
        ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
        ax.set_zlim(lo[2] - pad[2], hi[2] + pad[2])
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_zlabel("z")
    return _save(fig, path)
