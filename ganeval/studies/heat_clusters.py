"""The paper's "for large-scale t values ... dh̃(t)/dt reflects the approximate number of clusters in the data"
(Section "Interpreting IMD"), tested on digit class subsets: the scikit-learn digits of classes 0..k−1 for
k = 1..10 (each class a cluster), `sample_size` rows of each per run, the exact heat trace of the union k-NN graph
normalised by the Erdős–Rényi null model (the paper's h̃), its slope in log t over the large-t range.

Made by `scripts/heat_clusters.py`; `regenerate` makes the derived files (summary.csv, summary.json, verdict.md)
from the stored runs.csv again. The claim: holds when the per-run Spearman correlation between k and the slope has
its interval (over the independent runs) beyond ±`STRONG` (a strong monotone relation: "reflects"), contradicted when
the interval lies within (−STRONG, STRONG), not testable here when it straddles a bound.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

CLASSES = tuple(range(1, 11))  # k: digits of classes 0..k−1
LARGE_T = (10.0, 100.0)  # the large-t range the slope is taken over (the heat_traces grid's upper decade)
STRONG = 0.8  # practical threshold: a Spearman ρ beyond ±this is a strong monotone relation ("reflects")
T_GRID = tuple(float(t) for t in np.geomspace(1.0, 100.0, 9))


def measure(sample_size: int = 170, runs: int = 20, seed: int = 0, k: int = 5,
            classes: Sequence[int] = CLASSES) -> pd.DataFrame:
    """runs.csv: per run and k, the ER-normalised exact heat trace of `sample_size` rows of digits 0..k−1 (RGB pixels
    in [0, 1], 192-d) at T_GRID; run r draws its rows with `run_generator(seed, r, k)` and its k-NN graph is exact."""
    from ganeval.data import digits_classes
    from ganeval.data.images import to_rgb
    from ganeval.metrics import heat_trace
    from ganeval.protocol.draws import draw_rows, run_generator

    rows = []
    for c in classes:
        pool = to_rgb(digits_classes(list(range(c)))).reshape(-1, 192).astype(np.float64) / 255
        if len(pool) < sample_size:
            raise ValueError(f"digits of classes 0..{c - 1} hold {len(pool)} rows, fewer than sample_size={sample_size}")
        for r in range(runs):
            rng = run_generator(seed, r, c)
            sub = pool[draw_rows(len(pool), sample_size, rng)]
            h = heat_trace(sub, t=np.asarray(T_GRID), k=k, method="exact", normalization="er", seed=0)
            rows += [{"run": r, "classes": c, "t": t, "value": float(v)} for t, v in zip(T_GRID, h)]
    return pd.DataFrame(rows)


def slopes(rows: pd.DataFrame) -> pd.DataFrame:
    """Per run and k: the slope of h̃ in log t over LARGE_T (its two grid points nearest the ends)."""
    ts = np.asarray(sorted(rows["t"].unique()))
    lo, hi = (float(ts[np.argmin(np.abs(np.log(ts / t)))]) for t in LARGE_T)
    wide = rows.pivot_table(index=["run", "classes"], columns="t", values="value")
    return ((wide[hi] - wide[lo]) / np.log(hi / lo)).rename("slope").reset_index()


def decide(rows: pd.DataFrame, confidence: float) -> tuple[Any, pd.DataFrame]:
    """(the claim in the common vocabulary, the per-k summary of the slope): Spearman ρ(k, slope) per run, its
    Student-t interval over the runs against ±STRONG."""
    from scipy.stats import spearmanr

    from ganeval.results import t_interval
    from ganeval.results.verdicts import AS_STATED, CONTRADICTED, HOLDS, NO_COMPARISON, NOT_TESTABLE, WORSE, Claim

    s = slopes(rows)
    rho = [float(spearmanr(g["classes"], g["slope"]).statistic) for _, g in s.groupby("run")]
    iv = t_interval(rho, confidence)
    strong = iv["ci_low"] > STRONG or iv["ci_high"] < -STRONG
    weak = -STRONG < iv["ci_low"] and iv["ci_high"] < STRONG
    v = HOLDS if strong else CONTRADICTED if weak else NOT_TESTABLE
    per_k = s.groupby("classes")["slope"].apply(lambda x: pd.Series(t_interval(x, confidence))).unstack()
    lo, hi = LARGE_T
    claim = Claim(
        "heat-trace slope reflects the number of clusters",
        "for large-scale t values, dh̃(t)/dt reflects the approximate number of clusters in the data", v,
        f"Spearman ρ between the number of digit classes k = {s.classes.min()}..{s.classes.max()} and the slope of "
        f"the ER-normalised heat trace in log t over t = {lo:g}..{hi:g}, per run; its Student-t interval over "
        f"{len(rho)} independent runs against ±{STRONG:g}",
        f"ρ beyond ±{STRONG:g} (a strong monotone relation)",
        AS_STATED if v == HOLDS else WORSE if v == CONTRADICTED else NO_COMPARISON,
        f"ρ = {iv['mean']:.3f} [{iv['ci_low']:.3f}, {iv['ci_high']:.3f}]; slope per k: "
        + ", ".join(f"{int(k)}: {r['mean']:.3g}" for k, r in per_k.iterrows()),
        detectable="" if v != NOT_TESTABLE else f"an interval half-width below {abs(abs(iv['mean']) - STRONG):.2g} "
        f"(measured {iv['half_width']:.2g})")
    return claim, per_k.reset_index()


def verdict_text(claim: Any, per_k: pd.DataFrame, config: dict[str, Any], confidence: float) -> str:
    """verdict.md: the claim's sentence, then the protocol and the per-k slopes."""
    from ganeval.results.verdict import claim_sentences, percent, verdict_markdown
    from ganeval.results.verdicts import claims_table

    table = ["| classes k | slope of h̃ in log t (mean) | interval |", "|---|---|---|"]
    table += [f"| {int(r.classes)} | {r['mean']:.4g} | [{r.ci_low:.4g}, {r.ci_high:.4g}] |" for _, r in per_k.iterrows()]
    body = [f"Protocol: {config['runs']} runs of {config['sample_size']} rows of the scikit-learn digits of classes "
            f"0..k−1 (RGB pixels, 192-d), k-NN graph k = {config['k']}, exact heat trace normalised by the "
            f"Erdős–Rényi null model (the paper's h̃), seed {config['seed']}; {percent(confidence)} intervals. The "
            "paper's figure uses Inception features of five datasets; here each digit class is a cluster, so the "
            "number of clusters is known; at k = 10 a set holds about "
            f"{int(config['sample_size']) // 10} rows per class, so its 5-NN graph links the classes (a smaller-scale "
            "setting than the paper's 10k rows).", "", claims_table([claim], confidence).rstrip("\n"), "", *table]
    return verdict_markdown(claim_sentences([claim], confidence, rule=True), "Heat-trace slope and the number of "
                            "clusters: verdict", "\n".join(body))


def write(out: str | Path, rows: pd.DataFrame, config: dict[str, Any]) -> None:
    """The derived files of stored runs: summary.csv (per-k slope), summary.json (config and claim), verdict.md."""
    from ganeval.common import atomic_write_text
    from ganeval.results import write_csv

    out = Path(out)
    conf = float(config["confidence"])
    claim, per_k = decide(rows, conf)
    write_csv(per_k, out / "summary.csv")
    atomic_write_text(out / "summary.json", json.dumps({"config": config, "claims": [claim.record()]}, indent=2,
                                                        ensure_ascii=False) + "\n")
    atomic_write_text(out / "verdict.md", verdict_text(claim, per_k, config, conf))


def regenerate(src: Any, out: Any) -> None:
    """Make the stored result's derived files again from its runs.csv and the config in its summary.json."""
    config = json.loads((Path(src) / "summary.json").read_text())["config"]
    write(out, pd.read_csv(Path(src) / "runs.csv"), config)
