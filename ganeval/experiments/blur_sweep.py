"""The blur figure: a dataset blurred at each σ against itself unblurred, normalised by an unlike reference pair.

All blurred copies (and the optional similar second dataset) are scored in one block against the same
real subsamples, so the curve over σ is paired. The reference pair (reference.a vs reference.b) gives,
per metric, the mean distance of two unlike datasets; the normalised value is value / that mean
(its interval is the raw interval divided by the same mean: the reference's own uncertainty is
not propagated, and is reported beside it in summary.csv).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from ganeval.experiments import pipeline
from ganeval.protocol import Block
from ganeval.results import summarize_runs
from ganeval.results.seeds import split_probe_draws

log = logging.getLogger("ganeval")


def run(ctx: pipeline.Context) -> pd.DataFrame:
    """Blur, extract, score every σ and the reference pair, write summary (raw and normalised) and blur.png."""
    from ganeval.data import gaussian_blur
    from ganeval.data.images import to_rgb

    cfg = ctx.cfg
    sigmas = [float(s) for s in cfg.sigmas]
    if not sigmas or min(sigmas) < 0:
        raise ValueError(f"sigmas must be a non-empty list of σ ≥ 0, got {sigmas}")
    name = ctx.choices.get("data") or "data"
    ref_a = ctx.choices.get("data@reference.a") or name
    ref_b = ctx.choices.get("data@reference.b") or "reference.b"
    second_name = ctx.choices.get("data@second") or "second"
    prep = to_rgb if cfg.get("color", True) else (lambda a: a)

    with ctx.stage("load data"):
        real = prep(pipeline.load_data(ctx, cfg.data, "data"))
        a = prep(pipeline.load_data(ctx, cfg.reference.a, "reference.a"))
        b = prep(pipeline.load_data(ctx, cfg.reference.b, "reference.b"))
        second = prep(pipeline.load_data(ctx, cfg.second, "second")) if cfg.get("second") is not None else None
    if real.ndim != 4 or real.dtype != np.uint8:
        raise ValueError(f"data must be uint8 N×C×H×W images to blur, got {real.dtype} {real.shape}")
    sizes = {f"data ({name})": len(real), f"reference.a ({ref_a})": len(a), f"reference.b ({ref_b})": len(b)}
    if second is not None:
        sizes[f"second ({second_name})"] = len(second)
    ctx.settings.check_pools(sizes)
    extractor = pipeline.make_extractor(ctx)
    pipeline.open_results(ctx)  # another config's or other content's runs in results_dir: refused before extraction

    with ctx.stage("features"):
        real_f = pipeline.features(ctx, real, extractor, name)
        fakes: list[tuple[dict[str, Any], np.ndarray]] = []
        for s in sigmas:
            blurred = gaussian_blur(real, s, device=ctx.device)
            fakes.append(({"role": "blur", "model": name, "sigma": s}, pipeline.features(ctx, blurred, extractor, f"{name} σ={s}")))
        if second is not None:
            fakes.append(({"role": "second", "model": second_name, "sigma": np.nan}, pipeline.features(ctx, second, extractor, second_name)))
        a_f = pipeline.features(ctx, a, extractor, ref_a)
        b_f = pipeline.features(ctx, b, extractor, ref_b)
    for what, f in (("reference.a", a_f), ("reference.b", b_f)):
        if f.shape[1] != real_f.shape[1]:
            raise ValueError(f"{what} has {f.shape[1]} features, data {real_f.shape[1]}: give the sets one image "
                             "size (e.g. features.size=32) and channel count (color=true)")
    blocks = [
        Block(real_f, fakes, {"data": name}),
        Block(a_f, [({"role": "reference", "model": ref_b, "sigma": np.nan}, b_f)], {"data": ref_a}),
    ]
    rows = split_probe_draws(pipeline.score(ctx, blocks))[0]  # repeated-probe rows (probe_repeats) are not curves
    summary = normalized_summary(rows, ctx.settings.confidence, ctx.settings.sample_size)
    pipeline.write(ctx, summary, None, str(cfg.get("title") or ctx.name), tables=False)
    if pipeline.strict_bool(cfg, "plots"):
        from ganeval.results import plots

        plots.plot_blur(blur_curves(summary, name, second_name, sigmas), ctx.results_dir / "blur.png")
    return summary


def normalized_summary(rows: pd.DataFrame, confidence: float, sample_size: int) -> pd.DataFrame:
    """summarize_runs plus normalized_{mean,ci_low,ci_high}: each metric divided by the reference pair's mean."""
    summary = summarize_runs(rows, confidence, sample_size)
    ref = summary[summary["role"] == "reference"].set_index("metric")["mean"]
    for col in ("mean", "ci_low", "ci_high"):
        summary[f"normalized_{col}"] = summary[col] / summary["metric"].map(ref)
    summary["reference_mean"] = summary["metric"].map(ref)
    return summary


def blur_curves(summary: pd.DataFrame, name: str, second_name: str, sigmas: list[float]) -> pd.DataFrame:
    """The plot's data: the blur curve per metric and, when present, the second dataset as a flat line."""
    blur = summary[summary["role"] == "blur"].assign(line=f"{name} (blurred)")
    parts = [blur]
    sec = summary[summary["role"] == "second"]
    for _, row in sec.iterrows():
        flat = pd.DataFrame([row.to_dict()] * 2)
        flat["sigma"] = [min(sigmas), max(sigmas)]
        parts.append(flat.assign(line=second_name))
    return pd.concat(parts, ignore_index=True)
