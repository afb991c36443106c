"""The paper's torus appendix: two vanilla GANs on a 3-D torus, one that learns the hole and one that fills it.

Reports the fraction of each model's samples inside the hole (distance to the torus axis below R − r),
IMD, FID and KID with intervals on the raw coordinates in the paper's table layout beside the paper's numbers
(table.md), whether each metric's intervals of the two models overlap (the paper's criterion) and whether the
paired difference is significant, whether the paper's claim held, how each training-seed pair reads with
subsample intervals alone (verdict.md), and a 3-D scatter of the sample sets. The verdict is computed from the
numbers, not assumed. The default setting was chosen by scripts/torus_search.py (its log: results/reference/torus).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from ganeval.app import pipeline
from ganeval.protocol.api import unique_names
from ganeval.results import write_csv
from ganeval.results.seeds import SEED

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


def claim(v: pd.DataFrame, good: str, bad: str) -> dict[str, bool]:
    """The paper's claim read from a `verdict` frame: FID's and KID's intervals overlap while IMD's do not, with the
    bad model above (`paper`); and the stricter reading by paired differences (`strict`: FID and KID not
    significant, IMD significantly better for the good model)."""
    row = v.set_index("metric")
    imd_higher = row.loc["imd", f"{bad}_mean"] > row.loc["imd", f"{good}_mean"]
    paper = (bool(row.loc["fid", "intervals_overlap"]) and bool(row.loc["kid", "intervals_overlap"])
             and not bool(row.loc["imd", "intervals_overlap"]) and bool(imd_higher))
    strict = (row.loc["fid", "paired_better"] == "" and row.loc["kid", "paired_better"] == ""
              and row.loc["imd", "paired_better"] == good)
    return {"paper": paper, "strict": bool(strict)}


def _pm(mean: float, half: float) -> str:
    """mean ± half-width to the half-width's second significant digit (the paper's style)."""
    if not np.isfinite(half) or half <= 0:
        return f"{mean:.4g}"
    digits = max(0, 1 - int(np.floor(np.log10(half))))
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def paper_table(summary: pd.DataFrame, v: pd.DataFrame, good: str, bad: str) -> str:
    """The paper's torus table (metrics × good/bad GAN, mean ± half-width) with ours beside the paper's numbers."""
    cell = summary.set_index(["model", "metric"])
    row = v.set_index("metric")
    s0 = summary.iloc[0]
    covers = "training seeds and subsamples" if int(summary["n_seeds"].max() if "n_seeds" in summary else 1) > 1 \
        else "subsamples only"
    lines = [f"Vanilla GANs on a torus: ours ({good} = the paper's good GAN, {bad} = its bad GAN) beside the paper's "
             "appendix table. Mean ± half-width of the "
             f"{float(s0['confidence']):.0%} interval ({covers}; {int(s0['n_runs'])} runs of {int(s0['sample_size'])} "
             f"points per model{' and training seed' if covers.startswith('training') else ''}); the paper does "
             "not state its level or run count.", "",
             f"| metric | {good} (ours) | {bad} (ours) | overlap (ours) | good GAN (paper) | bad GAN (paper) "
             "| overlap (paper) |", "|---|---|---|---|---|---|---|"]
    for m in ("fid", "kid", "imd"):
        if m not in row.index:
            continue
        g, b_ = cell.loc[(good, m)], cell.loc[(bad, m)]
        pg, pb = PAPER[m]["good"], PAPER[m]["bad"]
        p_overlap = not (pg[0] + pg[1] < pb[0] - pb[1] or pb[0] + pb[1] < pg[0] - pg[1])
        lines.append(f"| {m.upper()} | {_pm(g['mean'], g['half_width'])} | {_pm(b_['mean'], b_['half_width'])} | "
                     f"{'yes' if row.loc[m, 'intervals_overlap'] else 'no'} | {_pm(*pg)} | {_pm(*pb)} | "
                     f"{'yes' if p_overlap else 'no'} |")
    return "\n".join(lines) + "\n"


def per_seed_lines(seeds: pd.DataFrame, v: pd.DataFrame, good: str, bad: str) -> list[str]:
    """verdict.md's per-training-seed reading: each seed pair with intervals over subsamples only (what one trained
    model per GAN, as in the paper's table, would show), and whether the model level's overlaps come from the
    variation between seeds."""
    cell = seeds.set_index(["model", SEED, "metric"])
    indices = sorted(seeds[SEED].unique())
    out = ["Per training seed (intervals over subsamples only, as one trained model per GAN would give):"]
    separated: dict[str, int] = {}
    for m in v.metric:
        parts = []
        for i in indices:
            a, b = cell.loc[(good, i, m)], cell.loc[(bad, i, m)]
            sep = a.ci_high < b.ci_low or b.ci_high < a.ci_low
            separated[m] = separated.get(m, 0) + int(sep)
            parts.append(f"seed {i}: {_pm(a['mean'], a['half_width'])} vs {_pm(b['mean'], b['half_width'])}"
                         f"{' (separate)' if sep else ' (overlap)'}")
        out.append(f"- {m.upper()}: " + "; ".join(parts) + ".")
    row = v.set_index("metric")
    blurred = [m.upper() for m in v.metric if row.loc[m, "intervals_overlap"] and separated[m] == len(indices)]
    if blurred:
        out += ["", f"{' and '.join(blurred)} separate the two models at every training seed, yet their intervals "
                "across seeds overlap: the overlap comes from the variation between training runs (a t interval "
                f"over {len(indices)} seeds), not from {' and '.join(blurred)} missing the difference in any one "
                "trained pair."]
    return out


def verdict_markdown(summary: pd.DataFrame, v: pd.DataFrame, good: str, bad: str, fractions: dict[str, float],
                     per_seed: dict[str, list[float]], R: float, r: float, about: str = "",
                     seeds: pd.DataFrame | None = None) -> str:
    """verdict.md: hole fractions, each metric's intervals and paired difference, and whether the paper's claim held."""
    c = claim(v, good, bad)
    lines = ["# Vanilla GANs on a torus: verdict", "",
             f"Fraction of samples inside the hole (distance to the axis < R − r = {R - r:g}): "
             + ", ".join(f"{k} {f:.3f}" for k, f in fractions.items())
             + (" (models: mean over training seeds; per seed "
                + "; ".join(f"{k} " + ", ".join(f"{x:.3f}" for x in xs) for k, xs in per_seed.items()) + ")"
                if any(len(xs) > 1 for xs in per_seed.values()) else "") + ".", ""]
    cell = summary.set_index(["model", "metric"])
    for _, row in v.iterrows():
        g, b_ = cell.loc[(good, row.metric)], cell.loc[(bad, row.metric)]
        lines.append(f"- {row.metric.upper()}: {good} {_pm(g['mean'], g['half_width'])} vs {bad} "
                     f"{_pm(b_['mean'], b_['half_width'])}; intervals "
                     f"{'overlap' if row.intervals_overlap else 'do not overlap'}; paired difference "
                     f"{'significant, ' + row.paired_better + ' better' if row.paired_better else 'not significant'} "
                     f"(p = {row.paired_p_value:.2g}).")
    lines += ["", "The paper's claim (appendix, figure \"torus\"): FID's and KID's intervals of the good and the bad GAN "
              "overlap while IMD's are distinct, the bad GAN's higher. "
              + (f"**It holds here**: {_claim_detail(v, good, bad)}" if c["paper"]
                 else f"**It does not hold here**: {_claim_detail(v, good, bad)}"),
              "", "Read by the paired good − bad differences instead (a stricter test than overlapping intervals): "
              + ("FID and KID find no significant difference while IMD does." if c["strict"] else
                 "not the same picture: " + "; ".join(
                     f"{m.upper()} {'significant' if row_.paired_better else 'not significant'}"
                     for m, row_ in v.set_index("metric").iterrows()) + ".")]
    if seeds is not None and SEED in seeds.columns and seeds[SEED].nunique() > 1:
        lines += ["", *per_seed_lines(seeds, v, good, bad)]
    if about:
        lines += ["", f"About the default setting: {about.strip()}"]
    return "\n".join(lines) + "\n"


def _claim_detail(v: pd.DataFrame, good: str, bad: str) -> str:
    row = v.set_index("metric")
    parts = [f"{m.upper()}'s intervals {'overlap' if row.loc[m, 'intervals_overlap'] else 'do not overlap'}"
             for m in ("fid", "kid", "imd")]
    if row.loc["imd", f"{bad}_mean"] <= row.loc["imd", f"{good}_mean"]:
        parts.append(f"IMD is not higher for {bad}")
    return ", ".join(parts) + "."


def run(ctx: pipeline.Context) -> pd.DataFrame:
    """Train both GANs (or take given ones, e.g. samples with replicas), sample, score, and write the table beside
    the paper's, hole fractions, verdict and torus.png. The first generator plays the paper's good GAN."""
    cfg = ctx.cfg
    gens = dict(cfg.generators)
    if len(gens) != 2:
        raise ValueError("torus needs exactly two generators, the good one first (e.g. generators.good / generators.bad, "
                         "each a train spec or given samples)")
    R, r = float(cfg.data.R), float(cfg.data.r)
    with ctx.stage("load data"):
        real = pipeline.load_data(ctx, cfg.data, "data").astype(np.float32)
    if real.ndim != 2 or real.shape[1] != 3:
        raise ValueError(f"torus needs N×3 points as data, got shape {real.shape}")
    n_gen = pipeline.n_generated(cfg)
    ctx.settings.check_pools({"the real pool (data.n)": len(real), "the generated pool (n_generated)": n_gen})
    plans = {label: pipeline.plan_generator(ctx, real, spec, f"generators.{label}")
             for label, spec in zip(unique_names(gens, "generators"), gens.values())}
    pipeline.seed_count(plans, "torus")  # both models need the same number of training seeds (paired by index)
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
    per_seed = {k: [hole_fraction(p, R, r) for p in v_] for k, v_ in seed_pools.items()}
    ctx.record.hole_fraction = fractions
    ctx.record.verdict = v.to_dict(orient="records")
    pipeline.write(ctx, summary, comparison, str(cfg.get("title") or ctx.name), tables=False, seeds=seeds)
    write_csv(v, ctx.results_dir / "verdict.csv")
    from ganeval.common import atomic_write_text

    atomic_write_text(ctx.results_dir / "table.md", paper_table(summary, v, a, b))
    text = verdict_markdown(summary, v, a, b, fractions, per_seed, R, r, str(cfg.get("about_default") or ""), seeds)
    atomic_write_text(ctx.results_dir / "verdict.md", text)
    log.info(text)
    if pipeline.strict_bool(cfg, "plots"):
        from ganeval.results import plots

        plots.plot_points_3d({"real": real, **{f"{k} ({fractions[k]:.1%} in hole)": p for k, p in pools.items()}},
                             ctx.results_dir / "torus.png")
    return summary

