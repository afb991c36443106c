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
from typing import Any, cast

import numpy as np
import pandas as pd

from ganeval.app import generators, pipeline
from ganeval.app.plan import Plan
from ganeval.protocol.api import unique_names
from ganeval.results import write_csv
from ganeval.results.seeds import SEED
from ganeval.studies.torus_seeds import pattern as seed_pattern, per_seed_comparison, seed_separation, seed_sentence

log = logging.getLogger("ganeval")
INPUTS = ("data", "generators", "features")  # the config keys it reads inputs from (its plan)
# the files it may write into results_dir (its plan lists them)
OUTPUTS = ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "comparison.csv", "summary_seeds.csv",
           "table.md", "verdict.md", "verdict.csv", "torus.png", "report.html")

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


def per_seed_lines(seeds: pd.DataFrame, v: pd.DataFrame, good: str, bad: str,
                   labels: list[Any] | None = None) -> list[str]:
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
            parts.append(f"seed {labels[int(i)] if labels is not None else i}: {_pm(a['mean'], a['half_width'])} vs {_pm(b['mean'], b['half_width'])}"
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


def seed_labels(config: Any, n: int) -> list[Any]:
    """The training seeds' own values (config `train_seeds`) for seed indices 0..n−1, else the indices themselves."""
    seeds = list(config.get("train_seeds") or []) if hasattr(config, "get") else []
    return seeds if len(seeds) == n else list(range(n))


SEARCH = "scripts/torus_search.py"  # a run whose about_default names it was chosen by that search
SELECTED = "chosen by scripts/torus_search.py, which required IMD to separate and FID, KID to overlap across seeds"


def selected_by_search(config: Any) -> bool:
    """Whether the run's setting was chosen by the torus search (its about_default says so): its across-seed
    claims are then read on data selected for their outcome."""
    return SEARCH in str((config or {}).get("about_default") or "")


def claims(summary: pd.DataFrame, comparison: pd.DataFrame, seeds: pd.DataFrame | None,
           seed_cmp: pd.DataFrame | None, v: pd.DataFrame, good: str, bad: str, selected: bool = False) -> list[Any]:
    """The paper's torus claim split into what each kind of interval can decide, in the common vocabulary
    (`ganeval.results.verdicts`), Holm-corrected together, each smallest detectable effect at the family's Holm
    level; with `selected`, the across-seed claims (the ones the search selected on) say so in their label."""
    from ganeval.results.verdicts import holm_family

    conf = float(summary["confidence"].iloc[0])
    return holm_family(lambda pc: _claims(summary, comparison, seeds, seed_cmp, v, good, bad, selected, pc), conf)


def _claims(summary: pd.DataFrame, comparison: pd.DataFrame, seeds: pd.DataFrame | None,
            seed_cmp: pd.DataFrame | None, v: pd.DataFrame, good: str, bad: str, selected: bool,
            power_confidence: float) -> list[Any]:
    from ganeval.results.intervals import paired_t_mde
    from ganeval.results.verdicts import (BETTER, CONTRADICTED, HOLDS, NOT_TESTABLE, AS_STATED, Claim,
                                          NO_COMPARISON)

    def mde(c: Any) -> float:  # the paired t's smallest detectable effect at the family's Holm level
        n = int(c["n_seeds"]) if "n_seeds" in c.index and pd.notna(c["n_seeds"]) else int(c["n_runs"])
        return paired_t_mde(float(c["diff_std"]), n, power_confidence)

    row = v.set_index("metric")
    cmp_ = comparison.set_index("metric")
    n_seeds = int(summary["n_seeds"].max()) if "n_seeds" in summary.columns else 1
    across = f"across {n_seeds} training seeds" if n_seeds > 1 else "over runs"
    chosen = SELECTED if selected else ""
    out = []
    c = cmp_.loc["imd"]
    imd_verdict = (HOLDS if c["better"] == good and not row.loc["imd", "intervals_overlap"] else
                   CONTRADICTED if c["better"] == bad else NOT_TESTABLE)
    out.append(Claim(
        f"IMD separates ({across})", "IMD's intervals of the good and the bad GAN are distinct, the bad GAN's higher",
        imd_verdict, f"paired t {across} on good − bad, with the paper's rule (intervals do not overlap)",
        "any difference (the paper states no size)", AS_STATED if imd_verdict == HOLDS else NO_COMPARISON,
        f"good − bad = {c['diff_mean']:.3g} [{c['ci_low']:.3g}, {c['ci_high']:.3g}]", float(c["p_value"]),
        detectable=f"{mde(c):.3g}", selected=chosen))
    if seeds is not None and seed_cmp is not None and n_seeds > 1:
        sc = seed_cmp.set_index(["metric", SEED])
        idx = sorted(seeds[SEED].unique())
        for m in ("imd", "fid", "kid"):
            better = [sc.loc[(m, i), "better"] for i in idx]
            p = max(float(sc.loc[(m, i), "p_value"]) for i in idx)  # intersection-union: every pair must show it
            worst = max(mde(sc.loc[(m, i)]) for i in idx)
            n_sep = sum(b == good for b in better)
            rule = (f"paired t over runs within each of the {len(idx)} training-seed pairs (intersection–union: the "
                    "largest p); the paper's rule (subsample intervals overlap) read per pair")
            if m == "imd":
                verdict_ = HOLDS if n_sep == len(idx) else CONTRADICTED if all(b == bad for b in better) else NOT_TESTABLE
                out.append(Claim("IMD separates (per trained pair)", "IMD's intervals are distinct, the bad GAN's higher",
                                 verdict_, rule, "any difference", AS_STATED if verdict_ == HOLDS else NO_COMPARISON,
                                 f"good better in {n_sep} of {len(idx)} pairs", p, detectable=f"{worst:.3g}"))
                continue
            if n_sep == len(idx):
                verdict_, vs, ev = CONTRADICTED, BETTER, (f"{m.upper()} tells good from bad in {n_sep} of {len(idx)} "
                                                          "pairs: better than the paper says")
            elif n_sep == 0 and not any(better):
                verdict_, vs, ev = HOLDS, AS_STATED, f"no pair separated; could detect {worst:.3g}"
                p = float("nan")
            else:
                verdict_, vs, ev = NOT_TESTABLE, NO_COMPARISON, f"good better in {n_sep} of {len(idx)} pairs"
                p = float("nan")
            out.append(Claim(f"{m.upper()} does not separate (per trained pair, the paper's kind of interval)",
                             f"{m.upper()}'s intervals of the good and the bad GAN overlap", verdict_, rule,
                             "any difference", vs, ev, p, detectable=f"{worst:.3g}"))
    for m in ("fid", "kid"):  # across seeds the runs are paired by seed: the paired t decides, in the Holm family
        c = cmp_.loc[m]
        if c["better"] in (good, bad):
            verdict_, vs = CONTRADICTED, BETTER if c["better"] == good else NO_COMPARISON
            ev = f"the paired t separates them: good − bad = {c['diff_mean']:.3g} [{c['ci_low']:.3g}, {c['ci_high']:.3g}]"
        else:
            verdict_, vs = NOT_TESTABLE, NO_COMPARISON
            ev = (f"good − bad = {c['diff_mean']:.3g} [{c['ci_low']:.3g}, {c['ci_high']:.3g}], no difference found "
                  f"(intervals {'overlap' if row.loc[m, 'intervals_overlap'] else 'separate'}); no difference "
                  "found is no overlap shown")
        out.append(Claim(f"{m.upper()} does not separate ({across})", f"{m.upper()}'s intervals of the good and the "
                         "bad GAN overlap", verdict_, f"paired t {across} on good − bad (the seeds pair the "
                         "models): a difference contradicts the claim, none found leaves it untested (no "
                         "equivalence margin is stated)", "any difference", vs, ev, float(c["p_value"]),
                         detectable=f"{mde(c):.3g} (measured difference {abs(c['diff_mean']):.3g})",
                         selected=chosen))
    return out


def headline(summary: pd.DataFrame, v: pd.DataFrame, seeds: pd.DataFrame | None, comparison: pd.DataFrame,
             good: str, bad: str, labels: list[Any], power_confidence: float | None = None) -> list[str]:
    """What was and was not reproduced, by the paper's kind of interval (per trained pair) and across seeds; the
    smallest detectable effects at `power_confidence` (the claims' Holm level; the confidence when None)."""
    from ganeval.results.intervals import _t_quantile, paired_t_mde

    conf = float(summary["confidence"].iloc[0])
    pc = conf if power_confidence is None else power_confidence
    row = v.set_index("metric")
    cmp_ = comparison.set_index("metric")
    n_seeds = int(summary["n_seeds"].max()) if "n_seeds" in summary.columns else 1
    lines = []
    if seeds is not None and SEED in seeds.columns and n_seeds > 1:
        idx = sorted(seeds[SEED].unique())
        cell = seeds.set_index(["model", SEED, "metric"])
        sep = {m: sum(bool(cell.loc[(good, i, m)].ci_high < cell.loc[(bad, i, m)].ci_low
                           or cell.loc[(bad, i, m)].ci_high < cell.loc[(good, i, m)].ci_low) for i in idx)
               for m in ("fid", "kid", "imd")}
        pattern = [labels[int(i)] for i in idx if seed_pattern(seeds, good, bad, i)]
        lines.append(f"**With the paper's kind of interval (one trained pair, {conf:.0%} intervals over subsamples): "
                     f"{'reproduced' if len(pattern) == len(idx) else 'not reproduced'}.** FID separates the good "
                     f"from the bad GAN in {sep['fid']} of {len(idx)} training-seed pairs, KID in {sep['kid']} of "
                     f"{len(idx)}, IMD in {sep['imd']} of {len(idx)}; the paper's pattern (FID and KID overlap, IMD "
                     f"separate, bad higher) appears in {len(pattern)} of {len(idx)} pairs"
                     + (f" (training seed {', '.join(str(x) for x in pattern)})" if pattern else "") + ".")
        tq = _t_quantile(conf, n_seeds - 1)
        paper_pattern = (row.loc["fid", "intervals_overlap"] and row.loc["kid", "intervals_overlap"]
                         and not row.loc["imd", "intervals_overlap"])
        lines += ["", f"**Across the {n_seeds} training seeds ({conf:.0%} t interval, {n_seeds - 1} degrees of freedom, "
                  f"t = {tq:.2f}): the paper's pattern {'appears' if paper_pattern else 'does not appear'}** — FID's "
                  f"intervals {'overlap' if row.loc['fid', 'intervals_overlap'] else 'separate'}, KID's "
                  f"{'overlap' if row.loc['kid', 'intervals_overlap'] else 'separate'}, IMD's "
                  f"{'overlap' if row.loc['imd', 'intervals_overlap'] else 'separate'}"
                  + (f"; but an overlap there is a test without power: the smallest good − bad difference the "
                     f"paired t across seeds could detect at the claims' Holm level {1 - pc:.2g} is "
                     f"{paired_t_mde(cmp_.loc['fid', 'diff_std'], n_seeds, pc):.3g} for FID (measured "
                     f"{abs(cmp_.loc['fid', 'diff_mean']):.3g}) and "
                     f"{paired_t_mde(cmp_.loc['kid', 'diff_std'], n_seeds, pc):.3g} for KID (measured "
                     f"{abs(cmp_.loc['kid', 'diff_mean']):.3g}), and the overlap comes from the spread between training "
                     "runs (see the per-seed lines), not from FID or KID missing the difference in a trained pair"
                     if paper_pattern else "") + "."]
    else:
        c = claim(v, good, bad)
        lines.append(f"**By the paper's rule (overlapping {conf:.0%} intervals over subsamples): "
                     f"{'reproduced' if c['paper'] else 'not reproduced'}** — {_claim_detail(v, good, bad)}")
    return lines


def verdict_markdown(summary: pd.DataFrame, v: pd.DataFrame, good: str, bad: str, fractions: dict[str, float],
                     per_seed: dict[str, list[float]], R: float, r: float, about: str = "",
                     seeds: pd.DataFrame | None = None, comparison: pd.DataFrame | None = None,
                     seed_cmp: pd.DataFrame | None = None, labels: list[Any] | None = None) -> str:
    """verdict.md: the headline (what was and was not reproduced, by each kind of interval), the claims in the
    common vocabulary, hole fractions, each metric's intervals and paired difference, the per-seed reading and how
    the default setting was chosen."""
    from ganeval.results.verdicts import claims_table

    n = max((len(xs) for xs in per_seed.values()), default=1)
    labels = labels if labels is not None else list(range(n))
    lines = ["# Vanilla GANs on a torus: verdict", "",
             "The paper's claim (appendix, figure \"torus\"): FID's and KID's intervals of the good and the bad GAN "
             "overlap while IMD's are distinct, the bad GAN's higher.", ""]
    from ganeval.results.verdict import claim_sentences, comparison_sentences, markdown_sentences
    from ganeval.results.verdict import verdict_markdown as with_head

    sentences = []
    if comparison is not None:
        found = claims(summary, comparison, seeds, seed_cmp, v, good, bad, selected_by_search({"about_default": about}))
        conf = float(summary["confidence"].iloc[0])
        sentences = (markdown_sentences(comparison_sentences(comparison) + seed_sentence(seed_cmp, seeds, good, bad))
                     + claim_sentences(found, conf))
        from ganeval.results.verdicts import holm_confidence, tests_in

        lines += [*headline(summary, v, seeds, comparison, good, bad, labels,
                            holm_confidence(conf, tests_in(found))), "",
                  claims_table(found, conf).rstrip("\n"), ""]
    lines += [f"Fraction of samples inside the hole (distance to the axis < R − r = {R - r:g}): "
              + ", ".join(f"{k} {f:.3f}" for k, f in fractions.items())
              + (" (models: mean over training seeds; per training seed "
                 + ", ".join(str(x) for x in labels) + ": "
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
    c = claim(v, good, bad)
    lines += ["", "By these intervals the paper's rule reads: " + _claim_detail(v, good, bad),
              "", "Read by the paired good − bad differences instead (a stricter test than overlapping intervals): "
              + ("FID and KID find no significant difference while IMD does." if c["strict"] else
                 "not the same picture: " + "; ".join(
                     f"{m.upper()} {'significant' if row_.paired_better else 'not significant'}"
                     for m, row_ in v.set_index("metric").iterrows()) + ".")]
    if seeds is not None and SEED in seeds.columns and seeds[SEED].nunique() > 1:
        lines += ["", *per_seed_lines(seeds, v, good, bad, labels)]
    if about:
        lines += ["", f"About the default setting: {about.strip()}"]
    return with_head(sentences, lines[0].lstrip("# "), "\n".join(lines[2:]))


def _claim_detail(v: pd.DataFrame, good: str, bad: str) -> str:
    row = v.set_index("metric")
    parts = [f"{m.upper()}'s intervals {'overlap' if row.loc[m, 'intervals_overlap'] else 'do not overlap'}"
             for m in ("fid", "kid", "imd")]
    if row.loc["imd", f"{bad}_mean"] <= row.loc["imd", f"{good}_mean"]:
        parts.append(f"IMD is not higher for {bad}")
    return ", ".join(parts) + "."


def run(plan: Plan) -> pd.DataFrame:
    """Train both GANs (or take given ones, e.g. samples with replicas), sample, score, and write the table beside
    the paper's, hole fractions, verdict and torus.png. The first generator plays the paper's good GAN."""
    cfg = plan.params
    gens = dict(cfg.generators)
    if len(gens) != 2:
        raise ValueError("torus needs exactly two generators, the good one first (e.g. generators.good / generators.bad, "
                         "each a train spec or given samples)")
    R, r = float(cfg.data.R), float(cfg.data.r)
    with plan.stage("load data"):
        real = pipeline.load_data(plan, cfg.data, "data").astype(np.float32)
    if real.ndim != 2 or real.shape[1] != 3:
        raise ValueError(f"torus needs N×3 points as data, got shape {real.shape}")
    n_gen = int(cast(int, plan.options.n_generated))  # set for experiments
    plan.settings.check_pools({"the real pool (data.n)": len(real), "the generated pool (n_generated)": n_gen})
    plans = {label: generators.plan_generator(plan, real, spec, f"generators.{label}")
             for label, spec in zip(unique_names(gens, "generators"), gens.values())}
    generators.seed_count(plans, "torus")  # both models need the same number of training seeds (paired by index)
    for name, seed_plans in plans.items():
        generators.identify_plan(plan, seed_plans, f"torus/{name}", "data")
    pipeline.open_results(plan)  # another config's or other content's runs in results_dir: refused before training
    seed_pools: dict[str, list[np.ndarray]] = {}
    for name, seed_plans in plans.items():
        gens = generators.realise_generators(plan, real, seed_plans, "torus", name)
        seed_pools[name] = [generators.generated_pool(plan, gen, name).astype(np.float32) for gen in gens]
    rows = pipeline.score(plan, generators.seed_blocks(real, seed_pools, {"data": "torus"}))
    summary, comparison, seeds = pipeline.summarize(plan, rows)
    assert comparison is not None  # two models
    pools = {k: v[0] for k, v in seed_pools.items()}  # the first training seed's samples are plotted
    plan.record.hole_fraction = {"real": hole_fraction(real, R, r),  # with several training seeds: the mean over seeds
                                **{k: float(np.mean([hole_fraction(p, R, r) for p in v])) for k, v in seed_pools.items()}}
    per_seed = {k: [hole_fraction(p, R, r) for p in v_] for k, v_ in seed_pools.items()}
    if any(len(x) > 1 for x in per_seed.values()):
        plan.record.hole_fraction_per_seed = per_seed
    files = verdict_files(plan.record, rows, summary, comparison, seeds)
    pipeline.write(plan, summary, comparison, plan.title, tables=False, seeds=seeds)
    write_verdict_files(plan.results_dir, files)
    log.info(files["verdict.md"])
    if plan.options.plots:
        first = seed_labels(plan.record.config, len(next(iter(per_seed.values()))))[0]
        seed_note = f"training seed {first}, " if len(next(iter(per_seed.values()))) > 1 else ""
        plot_samples(real, pools, {k: v[0] for k, v in per_seed.items()}, plan.results_dir / "torus.png", seed_note)
    return summary


def plot_samples(real: np.ndarray, pools: dict[str, np.ndarray], fractions: dict[str, float], path: Any,
                 seed_note: str = "", shown_note: str = "") -> Any:
    """torus.png: the real points beside each model's samples of one training seed, each panel titled with the hole
    fraction of that seed's own pool (`fractions`), not a mean over seeds; `shown_note` a second title line."""
    from ganeval.results import plots

    tail = f"\n{shown_note}" if shown_note else ""
    return plots.plot_points_3d({"real": real, **{f"{k} ({seed_note}{fractions[k]:.1%} in hole){tail}": p
                                                  for k, p in pools.items()}}, path)


def verdict_files(record: Any, rows: pd.DataFrame, summary: pd.DataFrame, comparison: pd.DataFrame,
                  seeds: pd.DataFrame | None) -> dict[str, Any]:
    """verdict.csv (a frame), table.md and verdict.md (texts) of a torus run, from its rows and summaries and its
    record (hole fractions, config); fills the record's verdict and claims. The first model plays the good GAN."""
    good, bad = list(dict.fromkeys(summary.model))
    cfg = record.config
    R, r = float(cfg["data"]["R"]), float(cfg["data"]["r"])
    v = verdict(summary, comparison, good, bad)
    seed_cmp = per_seed_comparison(rows, float(summary["confidence"].iloc[0]))
    per_seed = record.hole_fraction_per_seed or {k: [f] for k, f in record.hole_fraction.items() if k != "real"}
    labels = seed_labels(cfg, int(seeds[SEED].nunique()) if seeds is not None and SEED in seeds.columns else 1)
    found = claims(summary, comparison, seeds, seed_cmp, v, good, bad, selected_by_search(cfg))
    sep = seed_separation(seed_cmp)
    if sep:  # the per-seed pattern beside the across-seed one (the paper's kind of interval)
        v = v.assign(seed_pairs_separating=[sep.get(str(m), (None, None))[0] for m in v.metric],
                     seed_pairs=[sep.get(str(m), (None, None))[1] for m in v.metric])
    record.verdict = v.to_dict(orient="records")
    record.claims = [c.record() for c in found]
    fractions = {k: record.hole_fraction[k] for k in ("real", good, bad) if k in record.hole_fraction}
    per_seed = {k: per_seed[k] for k in (good, bad) if k in per_seed}
    text = verdict_markdown(summary, v, good, bad, fractions, per_seed, R, r,
                            str(cfg.get("about_default") or ""), seeds, comparison, seed_cmp, labels)
    return {"verdict.csv": v, "table.md": paper_table(summary, v, good, bad), "verdict.md": text}


def write_verdict_files(out_dir: Any, files: dict[str, Any]) -> None:
    """Write `verdict_files`' output atomically into `out_dir`."""
    from pathlib import Path

    from ganeval.common import atomic_write_text

    write_csv(files["verdict.csv"], Path(out_dir) / "verdict.csv")
    atomic_write_text(Path(out_dir) / "table.md", files["table.md"])
    atomic_write_text(Path(out_dir) / "verdict.md", files["verdict.md"])


def regenerate(src: Any, out: Any) -> None:
    """Make a stored torus result's derived files again from its runs.csv and summary.json (no new runs): summary,
    comparison, summary_seeds, summary.json, verdict.csv, table.md, verdict.md into `out`."""
    from ganeval.results import write_results
    from ganeval.studies.stored import read_record, read_runs, summarize_stored

    record, rows = read_record(src), read_runs(src)
    summary, comparison, seeds = summarize_stored(rows, record)
    assert comparison is not None
    files = verdict_files(record, rows, summary, comparison, seeds)
    record.set_results(summary, record.stage_seconds)
    write_results(out, summary, comparison, record, title=str(record.config.get("title") or ""), tables=False,
                  seeds=seeds if seeds is not None and SEED in seeds.columns else None)
    write_verdict_files(out, files)
