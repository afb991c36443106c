"""The paper's torus appendix: two vanilla GANs on a 3-D torus, one that learns the hole and one that fills it.

Reports the fraction of each model's samples inside the hole (distance to the torus axis below R − r),
IMD, FID and KID with intervals on the raw coordinates, whether each metric's intervals of the two
models overlap (the paper's criterion) and whether the paired difference is significant, and a 3-D
scatter of both sample sets. The verdict is computed from the numbers, not assumed.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from ganeval.experiments import pipeline
from ganeval.protocol.api import unique_names
from ganeval.results import write_csv

log = logging.getLogger("ganeval")

# The paper's appendix (figure "torus"): mean ± half-width per metric, good and bad vanilla GAN, raw 3-D coordinates.
PAPER: dict[str, dict[str, tuple[float, float]]] = {
    "fid": {"good": (0.00529, 0.00070), "bad": (0.00627, 0.00076)},
    "kid": {"good": (0.00172, 0.00073), "bad": (0.00259, 0.00077)},
    "imd": {"good": (9.02059, 1.5195), "bad": (14.0732, 2.1706)},
}


def hole_fraction(points: np.ndarray, R: float, r: float) -> float:
    """Fraction of 3-D points whose distance to the z axis is below R − r (inside the torus hole)."""
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"points must be N×3, got shape {p.shape}")
    return float(np.mean(np.hypot(p[:, 0], p[:, 1]) < R - r))


def verdict(summary: pd.DataFrame, comparison: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Per metric: do the two models' intervals overlap, and is the paired difference significant?"""
    out = []
    for m in dict.fromkeys(summary.metric):
        sa = summary[(summary.model == a) & (summary.metric == m)].iloc[0]
        sb = summary[(summary.model == b) & (summary.metric == m)].iloc[0]
        overlap = not (sa.ci_high < sb.ci_low or sb.ci_high < sa.ci_low)
        c = comparison[comparison.metric == m].iloc[0]
        out.append({"metric": m, f"{a}_mean": sa["mean"], f"{b}_mean": sb["mean"], "intervals_overlap": overlap,
                    "paired_better": c["better"], "paired_p_value": c["p_value"],
                    "separates": (not overlap) and c["better"] != ""})
    return pd.DataFrame(out)


def run(ctx: pipeline.Context) -> pd.DataFrame:
    """Train both GANs, sample, score, and write the table, hole fractions, verdict and torus.png."""
    cfg = ctx.cfg
    gens = dict(cfg.generators)
    if len(gens) != 2 or any("train" not in g for g in gens.values()):
        raise ValueError("torus needs exactly two generators with train specs (e.g. generators.good / generators.bad)")
    R, r = float(cfg.data.R), float(cfg.data.r)
    with ctx.stage("load data"):
        real = pipeline.load_data(ctx, cfg.data, "data").astype(np.float32)
    if real.ndim != 2 or real.shape[1] != 3:
        raise ValueError(f"torus needs N×3 points as data, got shape {real.shape}")
    n_gen = pipeline.n_generated(cfg)
    ctx.settings.check_pools({"the real pool (data.n)": len(real), "the generated pool (n_generated)": n_gen})
    plans = {label: pipeline.plan_generator(ctx, real, spec, f"generators.{label}")
             for label, spec in zip(unique_names(gens, "generators"), gens.values())}
    for name, plan in plans.items():
        pipeline.identify_plan(ctx, plan, f"torus/{name}", "data")
    pipeline.open_results(ctx)  # another config's or other content's runs in results_dir: refused before training
    seed_pools: dict[str, list[np.ndarray]] = {}
    for name, seed_plans in plans.items():
        gens = pipeline.realise_generators(ctx, real, seed_plans, "torus", name)
        seed_pools[name] = [pipeline.generated_pool(ctx, gen, name).astype(np.float32) for gen in gens]
    rows = pipeline.score(ctx, pipeline.seed_blocks(real, seed_pools, {"data": "torus"}))
    summary, comparison, seeds = pipeline.summarize(ctx, rows)
    assert comparison is not None  # two models
    pools = {k: v[0] for k, v in seed_pools.items()}  # the first training seed's samples are plotted
    fractions = {"real": hole_fraction(real, R, r),  # with several training seeds: the mean over seeds
                 **{k: float(np.mean([hole_fraction(p, R, r) for p in v])) for k, v in seed_pools.items()}}
    a, b = list(pools)
    v = verdict(summary, comparison, a, b)
    ctx.record.hole_fraction = fractions
    ctx.record.verdict = v.to_dict(orient="records")
    pipeline.write(ctx, summary, comparison, str(cfg.get("title") or ctx.name), seeds=seeds)
    write_csv(v, ctx.results_dir / "verdict.csv")
    lines = [f"Fraction of samples inside the hole (distance to the axis < R − r = {R - r:g}): "
             + ", ".join(f"{k} {f:.3f}" for k, f in fractions.items()) + "."]
    for _, row in v.iterrows():
        lines.append(f"- {row.metric.upper()}: {a} {row[f'{a}_mean']:.4g} vs {b} {row[f'{b}_mean']:.4g}; intervals "
                     f"{'overlap' if row.intervals_overlap else 'do not overlap'}; paired difference "
                     f"{'significant, ' + row.paired_better + ' better' if row.paired_better else 'not significant'}.")
    from ganeval.common import atomic_write_text

    atomic_write_text(ctx.results_dir / "verdict.md", "\n".join(lines) + "\n")
    log.info("\n".join(lines))
    if pipeline.strict_bool(cfg, "plots"):
        from ganeval.results import plots

        plots.plot_points_3d({"real": real, **{f"{k} ({fractions[k]:.1%} in hole)": p for k, p in pools.items()}},
                             ctx.results_dir / "torus.png")
    return summary

