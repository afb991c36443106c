"""Figures of experiment results (matplotlib, headless): metric bars, the blur figure, heat traces, torus samples, as
PNG files; and any figure as SVG text (`svg_text`), which report.html inlines so that its figures scale."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ganeval.common import atomic_write_bytes
from ganeval.metrics.registry import unscaled_label
from ganeval.results.summary import summary_group_columns
from ganeval.results.tables import mathtext_escape



def _plt():
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


def svg_text(fig: Any) -> str:
    """The figure as an SVG element to inline in HTML (closed afterwards): text kept as text (readable and searchable
    at any zoom), no date or random ids (the same figure gives the same text), no XML prolog or DOCTYPE (which would
    name an outside DTD), and a size that CSS may shrink (`max-width: 100%`) with the drawing's aspect ratio."""
    plt = _plt()
    buf = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ganeval"}):
        fig.savefig(buf, format="svg", bbox_inches="tight",  # no metadata block (it names outside vocabularies)
                    metadata={k: None for k in ("Date", "Creator", "Format", "Type")})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):].strip()


def _seed_means(seeds: pd.DataFrame, columns: list[str], group: tuple, metric: str) -> np.ndarray:
    """The per-seed means of one group (its values of `columns`) and metric."""
    mask = seeds["metric"] == metric
    for c, v in zip(columns, group):
        mask &= seeds[c].astype(str) == str(v)
    return seeds.loc[mask, "mean"].to_numpy(float)


def stored_runs(out_dir: str | Path) -> pd.DataFrame | None:
    """The per-run values of a results directory (runs.csv) without the repeated probe draws (no runs of their own);
    None where there is no runs.csv."""
    runs = Path(out_dir) / "runs.csv"
    frame = pd.read_csv(runs) if runs.is_file() else None
    if frame is not None and "probe_draw" in frame.columns:
        frame = frame[frame["probe_draw"].fillna(0).astype(int) == 0]
    return frame


def _run_values(runs: pd.DataFrame, columns: list[str], group: tuple, metric: str) -> np.ndarray:
    """The per-run values of one group (its values of `columns`; every training seed's runs) and metric."""
    mask = runs["metric"] == metric
    for c, v in zip(columns, group):
        if c in runs.columns:
            mask &= runs[c].astype(str) == str(v)
    return runs.loc[mask, "value"].to_numpy(float)


def summary_figure(summary: pd.DataFrame, title: str = "", seeds: pd.DataFrame | None = None,
                   extractor: str | Mapping[str, Any] | None = None, runs: pd.DataFrame | None = None,
                   given_sets: bool = False) -> Any:
    """The figure of `plot_summary`: one panel per metric, in the table's units (the registry's label and scale,
    e.g. KID×10³), panels laid out so that no label reaches into a neighbour (constrained layout); with `runs`
    (runs.csv's rows) the per-run values behind each interval as faint points. Each panel is headed by which way is
    better, or between given sets (two languages, two layers: `given_sets`) as a distance."""
    from ganeval.results.tables import better_word, metric_label

    plt = _plt()
    cols = summary_group_columns(summary)
    metrics = list(dict.fromkeys(summary.metric))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.8 * len(metrics), 3.6), squeeze=False, layout="constrained")
    for ax, m in zip(axes[0], metrics):
        label, scale, _ = metric_label(m, extractor)
        s = summary[summary.metric == m]
        groups = list(s[cols].itertuples(index=False, name=None))
        labels = [mathtext_escape(" / ".join(str(v) for v in r)) for r in groups] if cols else ["value"]
        x = np.arange(len(s))
        if runs is not None:  # the values the interval summarises, behind it
            for i, g in enumerate(groups):
                y = _run_values(runs, cols, g, m) * scale
                ax.plot(x[i] - 0.2 + np.linspace(-0.07, 0.07, len(y)), y, ".", color="#8c959f", ms=3, alpha=0.6,
                        zorder=1, label="runs" if i == 0 else None)
        ax.errorbar(x, s["mean"] * scale, yerr=s["half_width"].fillna(0) * scale, fmt="o", capsize=4, zorder=3,
                    label="mean, CI" if seeds is not None or runs is not None else None)
        if seeds is not None:
            for i, g in enumerate(groups):
                y = _seed_means(seeds, cols, g, m) * scale
                ax.plot(x[i] + 0.2 + np.linspace(-0.05, 0.05, len(y)), y, ".", color="C1", ms=5,
                        label="training seeds" if i == 0 else None)
        if seeds is not None or runs is not None:
            ax.legend(fontsize=7)
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_xlim(-0.5 - (0.3 if runs is not None else 0), len(s) - 0.5 + (0.3 if seeds is not None else 0))
        ax.set_title(f"{label} {better_word(m, given_sets)}", fontsize=10)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    conf = summary["confidence"].iloc[0] if "confidence" in summary else None
    fig.suptitle(mathtext_escape(title + " " if title else "") + (f"(mean, {conf:.0%} CI)" if conf else ""), fontsize=10)
    return fig


def plot_summary(summary: pd.DataFrame, path: str | Path, title: str = "", seeds: pd.DataFrame | None = None,
                 extractor: str | Mapping[str, Any] | None = None, runs: pd.DataFrame | None = None,
                 given_sets: bool = False) -> Path:
    """One panel per metric: each group's mean with its confidence interval as an error bar, in the table's units.

    With `seeds` (the per-(model, seed) summary) each training seed's mean is a small point beside its model's
    pooled interval; with `runs` (runs.csv's rows, see `stored_runs`) each run's value a faint point behind it.
    """
    return _save(summary_figure(summary, title, seeds, extractor, runs, given_sets), path)


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
            label = unscaled_label(m) + ("" if line is None else mathtext_escape(f" vs {line}"))
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
        ax.plot(s["t"], s["mean"], color=f"C{i}", label=mathtext_escape(name))
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
        ax.set_title(mathtext_escape(name), fontsize=9)
        ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])  # the first set's box on every panel (outliers clipped)
        ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
        ax.set_zlim(lo[2] - pad[2], hi[2] + pad[2])
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_zlabel("z")
    return _save(fig, path)


def pair_points(comparison_row: pd.Series, frame: pd.DataFrame, pair_by: str, value: str) -> pd.Series:
    """The per-pair differences a − b behind one comparison row: per training seed (pair_by train_seed, value
    mean of the per-seed summary) or per run (pair_by run, value of runs.csv), indexed by the pair."""
    mask = frame["metric"] == comparison_row["metric"]
    for c in frame.columns:
        if c in comparison_row.index and c not in ("metric", "a", "b", "model") and c in ("data",) and pd.notna(
                comparison_row[c]):
            mask &= frame[c].astype(str) == str(comparison_row[c])
    g = frame[mask]
    a = g[g["model"].astype(str) == str(comparison_row["a"])].groupby(pair_by)[value].first()
    b = g[g["model"].astype(str) == str(comparison_row["b"])].groupby(pair_by)[value].first()
    return (a - b).dropna()


def seed_color(frame: pd.DataFrame, pair_by: str, seed: Any) -> str:
    """A training seed's colour in the differences figure: matplotlib's cycle by the seed's rank in `frame`."""
    order = sorted(frame[pair_by].unique().tolist())
    return f"C{order.index(seed) % 10}"


def differences_figure(comparison: pd.DataFrame, frame: pd.DataFrame | None = None, pair_by: str = "train_seed",
                       value: str = "mean", extractor: Any = None, title: str = "") -> Any:
    """The figure of `plot_differences`: per metric, each compared pair's difference a − b (dot) and its paired
    interval (bar) against 0 (dashed), in the table's units, with the per-pair differences behind it; with training
    seeds each seed's difference in its own colour and a second row joining each seed's value across the models (one
    line per seed, the same colours), the legend naming the seeds beside the panel: no legend over a point, no two
    seed labels over each other however close their values."""
    from ganeval.results.tables import metric_label

    plt = _plt()
    metrics = list(dict.fromkeys(comparison["metric"]))
    seeds = frame is not None and pair_by == "train_seed"
    rows = 2 if seeds else 1
    fig, axes = plt.subplots(rows, len(metrics), figsize=(4.2 * len(metrics), 1.2 + 1.0 * rows
                                                          + 0.55 * comparison.groupby("metric").size().max()),
                             squeeze=False, constrained_layout=True)
    for j, metric in enumerate(metrics):
        label, scale, _ = metric_label(str(metric), extractor)
        ax = axes[0][j]
        part = comparison[comparison["metric"] == metric].reset_index(drop=True)
        names = []
        for i, r in part.iterrows():
            y = -i
            where = f"{r['data']}: " if "data" in part.columns and isinstance(r.get("data"), str) else ""
            names.append(mathtext_escape(f"{where}{r['a']} − {r['b']}"))
            sig = bool(isinstance(r.get("better"), str) and r.get("better"))
            color = "#0969da" if sig else "#57606a"
            ax.errorbar([r["diff_mean"] * scale], [y],
                        xerr=[[(r["diff_mean"] - r["ci_low"]) * scale], [(r["ci_high"] - r["diff_mean"]) * scale]],
                        fmt="o", color=color, capsize=4, lw=2, zorder=3)
            if frame is not None:
                pts = pair_points(r, frame, pair_by, value)
                jitter = np.linspace(-0.18, 0.18, len(pts)) if len(pts) > 1 else np.zeros(len(pts))
                colors = [seed_color(frame, pair_by, seed) for seed in pts.index] if seeds else "#bf8700"
                ax.scatter(pts.to_numpy(float) * scale, y + 0.3 + jitter * 0.5, s=14, c=colors, zorder=2,
                           alpha=0.9 if seeds else 0.4)
        ax.axvline(0.0, color="#cf222e", ls="--", lw=1)
        ax.set_yticks([-i for i in range(len(part))], names, fontsize=8)
        ax.set_ylim(-len(part) + 0.4, 0.8)
        ax.set_title(f"{label}: difference a − b", fontsize=9)
        if seeds and frame is not None:
            ax2 = axes[1][j]
            g = frame[frame["metric"] == metric]
            models = list(dict.fromkeys(g["model"].astype(str)))
            keys = [c for c in ("data",) if c in g.columns]
            for _, sub in (g.groupby(keys) if keys else [((), g)]):
                for seed, line in sub.groupby(pair_by):
                    line = line.set_index(line["model"].astype(str)).reindex(models)
                    ax2.plot(range(len(models)), line[value].to_numpy(float) * scale, "-o", ms=4, lw=1,
                             color=seed_color(frame, pair_by, seed), label=f"s{seed}")
            ax2.set_xticks(range(len(models)), [mathtext_escape(m) for m in models], fontsize=8)
            ax2.set_title(f"{label}: each training seed across the models", fontsize=9)
            handles, texts = ax2.get_legend_handles_labels()
            keep = dict(zip(texts, handles))  # one entry per seed (a seed's lines of several datasets share it)
            # beside the panel, never over a point; the seeds' colours are those of the dots above
            ax2.legend(keep.values(), keep.keys(), fontsize=7, title="seed", title_fontsize=7, loc="upper left",
                       bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    if title:
        fig.suptitle(mathtext_escape(title), fontsize=10)
    return fig


def plot_differences(comparison: pd.DataFrame, path: str | Path, frame: pd.DataFrame | None = None,
                     pair_by: str = "train_seed", value: str = "mean", extractor: Any = None,
                     title: str = "") -> Path:
    """Write differences.png: the paired differences with their intervals against 0 (see `differences_figure`)."""
    return _save(differences_figure(comparison, frame, pair_by, value, extractor, title), path)


DIFFERENCES_FILE = "differences.png"


def plot_paired(out_dir: str | Path, comparison: pd.DataFrame, seeds: pd.DataFrame | None = None,
                extractor: Any = None, title: str = "") -> Path:
    """Write out_dir/differences.png, the paired differences behind comparison.csv: with several training seeds
    their per-seed differences (each seed joined across the models), else the per-run differences of runs.csv (runs
    share their real subsample)."""
    frame, pair_by, value = paired_frame(out_dir, seeds)
    return plot_differences(comparison, Path(out_dir) / DIFFERENCES_FILE, frame, pair_by, value, extractor,
                            f"{title}: paired differences" if title else "")


def paired_frame(out_dir: str | Path, seeds: pd.DataFrame | None) -> tuple[pd.DataFrame | None, str, str]:
    """(frame, pair_by, value) of the pairs behind comparison.csv: the per-seed summary by training seed with several
    seeds, else runs.csv by run."""
    if seeds is not None and "train_seed" in seeds.columns:
        return seeds, "train_seed", "mean"
    return stored_runs(out_dir), "run", "value"
