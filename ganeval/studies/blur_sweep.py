"""The blur figure: a dataset blurred at each σ against itself unblurred, beside a similar dataset, normalised by
an unlike reference pair; verdict.md answers at which σ each metric's blurred distance passes the similar one.

All blurred copies and the similar (`second`) dataset are scored in one block against the same real subsamples,
so the curve over σ and the similar line are paired by run. The reference pair (reference.a vs reference.b) is
scored on the same runs (with reference.a = data, on the same real subsample). Normalised value = mean over runs
/ the reference pair's mean over runs (as the paper: reference = 1); its interval is the delta method's, paired
by run, so it carries the reference's own noise (see `ratio_interval`). Whether the blurred line passes the
similar one cannot depend on that common divisor, so the pass test compares the raw intervals (`first_passes`).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ganeval.app import pipeline
from ganeval.app.plan import Plan
from ganeval.metrics.registry import metric_order, unscaled_label
from ganeval.protocol import Block
from ganeval.results import summarize_runs
from ganeval.results.intervals import t_interval
from ganeval.results.seeds import split_probe_draws
from ganeval.studies.blur_verdict import ordering_holds, verdict_text, write_verdict  # noqa: F401  (blur_sweep.NAME)

log = logging.getLogger("ganeval")
INPUTS = ("data", "second", "reference", "features")  # the config keys it reads inputs from (its plan)
# the files it may write into results_dir (its plan lists them)
OUTPUTS = ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "table.md", "verdict.md", "blur.png",
           "blur_examples.png", "report.html")

# The paper's Figure "blur" (CIFAR-10 blurred, Inception, normalised so that CIFAR-10 vs MNIST = 1): the σ at
# which each metric's blurred distance first exceeds the CIFAR-100 distance (its text), and the dashed
# CIFAR-100 lines (the figure's source).
PAPER_FIRST_PASS = {"imd": 2.0, "fid": 1.0, "kid": 1.0}
PAPER_SIMILAR = {"imd": 0.40533806169876085, "fid": 0.1987008072670359, "kid": 0.06062547527073234}


def run(plan: Plan) -> pd.DataFrame:
    """Blur, extract, score every σ, the similar set and the reference pair; write summary, table.md, verdict.md
    and blur.png."""
    from ganeval.data import gaussian_blur
    from ganeval.data.images import to_rgb

    cfg = plan.params
    sigmas = [float(s) for s in cfg.sigmas]
    if not sigmas or min(sigmas) < 0 or len(set(sigmas)) < len(sigmas):
        raise ValueError(f"sigmas must be a non-empty list of distinct σ ≥ 0, got {sigmas}")
    name = plan.choices.get("data") or "data"
    ref_a = plan.choices.get("data@reference.a") or name
    ref_b = plan.choices.get("data@reference.b") or "reference.b"
    second_name = plan.choices.get("data@second") or "second"
    prep = to_rgb if cfg.get("color", True) else (lambda a: a)

    with plan.stage("load data"):
        real = prep(pipeline.load_data(plan, cfg.data, "data"))
        a = prep(pipeline.load_data(plan, cfg.reference.a, "reference.a"))
        b = prep(pipeline.load_data(plan, cfg.reference.b, "reference.b"))
        second = prep(pipeline.load_data(plan, cfg.second, "second")) if cfg.get("second") is not None else None
    if real.ndim != 4 or real.dtype != np.uint8:
        raise ValueError(f"data must be uint8 N×C×H×W images to blur, got {real.dtype} {real.shape}")
    sizes = {f"data ({name})": len(real), f"reference.a ({ref_a})": len(a), f"reference.b ({ref_b})": len(b)}
    if second is not None:
        sizes[f"second ({second_name})"] = len(second)
    plan.settings.check_pools(sizes)
    extractor = pipeline.make_extractor(plan)
    pipeline.open_results(plan)  # another config's or other content's runs in results_dir: refused before extraction

    with plan.stage("features"):
        real_f = pipeline.features(plan, real, extractor, name)
        fakes: list[tuple[dict[str, Any], np.ndarray]] = []
        for s in sigmas:
            blurred = gaussian_blur(real, s, device=plan.device)
            fakes.append(({"role": "blur", "model": name, "sigma": s}, pipeline.features(plan, blurred, extractor, f"{name} σ={s}")))
        if second is not None:
            fakes.append(({"role": "second", "model": second_name, "sigma": np.nan}, pipeline.features(plan, second, extractor, second_name)))
        a_f = pipeline.features(plan, a, extractor, ref_a)
        b_f = pipeline.features(plan, b, extractor, ref_b)
    for what, f in (("reference.a", a_f), ("reference.b", b_f), ("second", fakes[-1][1])):
        if f.shape[1] != real_f.shape[1]:
            raise ValueError(f"{what} has {f.shape[1]} features, data {real_f.shape[1]}: give the sets one image "
                             "size (e.g. data configs of one size, or features.size=32) and channel count (color=true)")
    blocks = [
        Block(real_f, fakes, {"data": name}),
        Block(a_f, [({"role": "reference", "model": ref_b, "sigma": np.nan}, b_f)], {"data": ref_a}),
    ]
    rows = split_probe_draws(pipeline.score(plan, blocks))[0]  # repeated-probe rows (probe_repeats) are not curves
    summary = normalized_summary(rows, plan.settings.confidence, plan.settings.sample_size)
    title = plan.title
    pipeline.write(plan, summary, None, title, tables=False)
    passes = first_passes(summary, rows, plan.settings.confidence) if second is not None else None
    write_table(summary, plan.results_dir / "table.md", title, name, second_name, ref_b)
    write_verdict(summary, passes, plan.results_dir / "verdict.md", name, second_name, ref_b, real.shape[-2:], rows)
    if plan.options.plots:
        from ganeval.results import plots

        plots.plot_blur(blur_curves(summary, name, second_name, sigmas), plan.results_dir / "blur.png")
        plot_examples(real[:6], sigmas, plan.results_dir / "blur_examples.png", plan.device)
    return summary


# --------------------------------------------------------------------------- normalisation
def ratio_interval(x: np.ndarray, y: np.ndarray, confidence: float) -> dict[str, float]:
    """mean(x) / mean(y) with its delta-method Student-t interval, x and y paired by run.

    Linearised per run: z_r = (x_r − R·y_r) / ȳ with R = x̄/ȳ, so Var(R̂) ≈ var(z)/n: the reference's own noise
    (and its covariance with x over shared subsamples) enters the half-width. For x = y it is 1 with half-width 0.
    """
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be paired 1-d run values, got shapes {x.shape} and {y.shape}")
    ybar = float(y.mean())
    if not ybar > 0:
        raise ValueError(f"the reference pair's mean distance is {ybar:.4g} (≤ 0): it cannot normalise; choose a "
                         "reference.b unlike the data")
    ratio = float(x.mean()) / ybar
    z = (x - ratio * y) / ybar
    half = t_interval(z, confidence)["half_width"]  # NaN for one run
    return {"mean": ratio, "ci_low": ratio - half, "ci_high": ratio + half, "half_width": half}


def normalized_summary(rows: pd.DataFrame, confidence: float, sample_size: int) -> pd.DataFrame:
    """summarize_runs plus normalized_{mean,ci_low,ci_high,half_width} (each metric over the reference pair's, per
    `ratio_interval`, paired by run) and the reference pair's mean and half-width per metric."""
    summary = summarize_runs(rows, confidence, sample_size)
    ref_rows = rows[rows["role"] == "reference"]
    if ref_rows.empty:
        raise ValueError("no reference rows: the blur sweep needs the reference pair (reference.a, reference.b)")
    ref = {m: g.set_index("run")["value"] for m, g in ref_rows.groupby("metric")}
    out: dict[str, list[float]] = {f"normalized_{k}": [] for k in ("mean", "ci_low", "ci_high", "half_width")}
    for _, srow in summary.iterrows():
        same = (rows["role"] == srow["role"]) & (rows["model"] == srow["model"]) & (rows["metric"] == srow["metric"])
        same &= rows["sigma"].isna() if pd.isna(srow["sigma"]) else rows["sigma"] == srow["sigma"]
        x = rows[same].set_index("run")["value"]
        y = ref[srow["metric"]].reindex(x.index)
        if y.isna().any():
            raise ValueError(f"runs {sorted(x.index[y.isna()])} have no reference value for {srow['metric']}")
        r = ratio_interval(x.to_numpy(), y.to_numpy(), confidence)
        for k in ("mean", "ci_low", "ci_high", "half_width"):
            out[f"normalized_{k}"].append(r[k])
    for k, v in out.items():
        summary[k] = v
    ref_summary = summary[summary["role"] == "reference"].set_index("metric")
    summary["reference_mean"] = summary["metric"].map(ref_summary["mean"])
    summary["reference_half_width"] = summary["metric"].map(ref_summary["half_width"])
    return summary


# --------------------------------------------------------------------------- the paper's question
def first_passes(summary: pd.DataFrame, rows: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per metric: the first σ at which the blurred interval lies wholly above the similar-dataset interval
    (NaN: none in the grid), whether every larger σ passes too, and the first σ where the paired difference
    (blurred − similar, by run) has its interval above 0.

    Raw intervals are compared: the normalised ones differ from them by the reference mean, a positive divisor
    common to both lines, so which line lies above the other does not depend on it."""
    out = []
    for metric in metric_order(summary["metric"]):
        s = summary[summary["metric"] == metric]
        sec = s[s["role"] == "second"]
        if len(sec) != 1:
            raise ValueError(f"expected one similar-dataset row for {metric}, got {len(sec)}")
        sec_row = sec.iloc[0]
        blur = s[s["role"] == "blur"].sort_values("sigma")
        above = blur["ci_low"].to_numpy() > sec_row["ci_high"]
        sig = blur["sigma"].to_numpy()
        first = float(sig[above.argmax()]) if above.any() else math.nan
        stays = bool(above.any() and above[above.argmax():].all())
        mean_above = blur["mean"].to_numpy() > sec_row["mean"]
        crossing = float(sig[mean_above.argmax()]) if mean_above.any() else math.nan
        r = rows[rows["metric"] == metric]
        sec_runs = r[r["role"] == "second"].set_index("run")["value"]
        paired = math.nan
        for sigma in sig:
            d = r[(r["role"] == "blur") & (r["sigma"] == sigma)].set_index("run")["value"] - sec_runs
            if t_interval(d.dropna().to_numpy(), confidence)["ci_low"] > 0:
                paired = float(sigma)
                break
        out.append({"metric": metric, "first_sigma": first, "stays_above": stays, "first_sigma_paired": paired,
                    "paper_first_sigma": PAPER_FIRST_PASS.get(metric, math.nan), "first_sigma_mean": crossing})
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- files
def _cell(mean: float, half: float, digits: int = 3) -> str:
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def table_text(summary: pd.DataFrame, title: str, name: str, second_name: str, ref_name: str) -> str:
    """table.md: normalised mean ± half-width per σ and metric, the similar and reference rows; the raw values."""
    metrics = metric_order(summary["metric"])
    s0 = summary.iloc[0]
    head = "| " + " | ".join(["σ (blur of " + name + ")"] + [unscaled_label(m) for m in metrics]) + " |"
    rule = "|" + "---|" * (len(metrics) + 1)

    def rows_of(value: str, digits: int) -> list[str]:
        lines = []
        blur = summary[summary["role"] == "blur"]
        for sigma in sorted(blur["sigma"].unique()):
            cells = [blur[(blur["sigma"] == sigma) & (blur["metric"] == m)].iloc[0] for m in metrics]
            lines.append(f"| {sigma:g} | " + " | ".join(_cell(c[f"{value}mean"], c[f"{value}half_width"], digits)
                                                        for c in cells) + " |")
        for role, label in (("second", f"similar: {name} vs {second_name}"), ("reference", f"reference: {name} vs {ref_name}")):
            part = summary[summary["role"] == role]
            if len(part):
                cells = [part[part["metric"] == m].iloc[0] for m in metrics]
                lines.append(f"| {label} | " + " | ".join(_cell(c[f"{value}mean"], c[f"{value}half_width"], digits)
                                                           for c in cells) + " |")
        return lines

    paper = "| paper, CIFAR-10 vs CIFAR-100 (figure) | " + " | ".join(
        f"{PAPER_SIMILAR[m]:.3f}" if m in PAPER_SIMILAR else "–" for m in metrics) + " |"
    return "\n".join([
        f"# {title}",
        "",
        f"Each metric divided by its mean on the reference pair ({name} vs {ref_name}), so the reference = 1: "
        f"mean ± half-width of the {s0['confidence']:.0%} interval (delta method, paired by run: it includes the "
        f"reference's own noise), {int(s0['n_runs'])} runs of {int(s0['sample_size'])} vs {int(s0['sample_size'])}.",
        "",
        head, rule, *rows_of("normalized_", 3), paper,
        "",
        "Raw values (mean ± half-width of the Student-t interval over runs):",
        "",
        head, rule, *rows_of("", 4),
        "",
    ])


def write_table(summary: pd.DataFrame, path: Path, title: str, name: str, second_name: str, ref_name: str) -> None:
    """Write table.md atomically."""
    from ganeval.common import atomic_write_text

    atomic_write_text(path, table_text(summary, title, name, second_name, ref_name))


def regenerate(src: Any, out: Any) -> None:
    """Make a stored blur sweep's derived files again from its runs.csv and summary.json (no new runs): summary,
    summary.json, table.md and verdict.md into `out` (the figures are not redrawn)."""
    from ganeval.results import write_results
    from ganeval.studies.stored import read_record, read_runs

    record, rows = read_record(src), read_runs(src)
    cfg = record.config
    summary = normalized_summary(rows, float(cfg["confidence"]), int(cfg["sample_size"]))
    record.set_results(summary, record.stage_seconds)
    write_results(out, summary, None, record, title=str(cfg.get("title") or ""), tables=False)
    name = str(rows.loc[rows["role"] == "blur", "model"].iloc[0])
    second = rows.loc[rows["role"] == "second", "model"]
    second_name = str(second.iloc[0]) if len(second) else "second"
    ref_name = str(rows.loc[rows["role"] == "reference", "model"].iloc[0])
    size = (cfg.get("data") or {}).get("size")
    hw = (int(size), int(size)) if size else ()
    passes = first_passes(summary, rows, float(cfg["confidence"])) if len(second) else None
    write_table(summary, Path(out) / "table.md", str(cfg.get("title") or ""), name, second_name, ref_name)
    write_verdict(summary, passes, Path(out) / "verdict.md", name, second_name, ref_name, hw, rows)


def blur_curves(summary: pd.DataFrame, name: str, second_name: str, sigmas: list[float]) -> pd.DataFrame:
    """The plot's data: the blur curve per metric and, when present, the second dataset as a flat (dashed) line."""
    blur = summary[summary["role"] == "blur"].assign(line=f"{name} (blurred)")
    parts = [blur]
    sec = summary[summary["role"] == "second"]
    for _, row in sec.iterrows():
        flat = pd.DataFrame([row.to_dict()] * 2)
        flat["sigma"] = [min(sigmas), max(sigmas)]
        parts.append(flat.assign(line=f"{second_name} (similar)"))
    return pd.concat(parts, ignore_index=True)


def plot_examples(images: np.ndarray, sigmas: list[float], path: Path, device: str | None = None) -> Path:
    """A grid of the first images (rows) blurred at each σ (columns), as the experiment blurs them: what σ looks like."""
    from ganeval.data import gaussian_blur
    from ganeval.results.plots import _plt, _save

    plt = _plt()
    fig, axes = plt.subplots(len(images), len(sigmas), figsize=(0.8 * len(sigmas), 0.8 * len(images)), squeeze=False)
    for j, sigma in enumerate(sigmas):
        blurred = gaussian_blur(images, sigma, device=device).transpose(0, 2, 3, 1)  # N×H×W×C
        for i, ax in enumerate(axes[:, j]):
            img = blurred[i]
            ax.imshow(img[..., 0] if img.shape[-1] == 1 else img, cmap="gray", vmin=0, vmax=255,
                      interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[0, j].set_title(f"σ={sigma:g}", fontsize=8)
    return _save(fig, path)
