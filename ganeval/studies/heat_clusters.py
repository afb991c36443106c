"""The paper's "for large-scale t values ... dh̃(t)/dt reflects the approximate number of clusters in the data"
(Section "Interpreting IMD"), tested on digit class subsets: the scikit-learn digits of classes 0..k−1 for
k = 1..10 (each class a cluster), `per_class` rows of EVERY class per run (the set holds 174..183 a class), the exact
heat trace of the union k-NN graph normalised by the Erdős–Rényi null model (the paper's h̃).

The count read from the derivative: ĉ(t) = (dh̃/dt) / (dh̃₁/dt), the derivative divided by that of a graph of the same
size whose trace is 1 at every t (one component, h̃₁ = the null's 1/ER). It needs no fit: for a graph of c
components, well apart, h(t) → c at large t and ĉ → c; n enters both the same way, so sets of different sizes compare.
The derivative is a central difference at t·(1 ± STEP) of the stored traces.

Made by `scripts/heat_clusters.py`; `regenerate` makes the derived files (summary.csv, summary.json, verdict.md)
from the stored runs.csv again. Two claims, at t = DECIDE_T (the figure's largest t), over the independent runs:
"reflects" holds when the per-run Spearman ρ(k, ĉ) has its interval above +STRONG (a strong RISING relation),
contradicted when its interval lies below it, not testable here when it straddles; "the approximate number" holds
when every k's interval of ĉ/k lies within [1/FACTOR, FACTOR], contradicted when one lies wholly outside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ganeval.studies.stored import write_claims_record

CLASSES = tuple(range(1, 11))  # k: digits of classes 0..k−1
LARGE_T = (10.0, 30.0, 100.0)  # the large t values the count is read at (the figure's upper decade)
DECIDE_T = 100.0  # the claims are decided at the figure's largest t
STEP = 1e-3  # the central difference's relative step in t
STRONG = 0.8  # practical threshold: a Spearman ρ above this is a strong rising relation ("reflects")
FACTOR = 2.0  # practical threshold: "approximate" = the count read within a factor of 2 of the true one
PER_CLASS = 150  # rows of each class per run (the smallest class, 8, holds 174)
K = 5  # the k-NN graph's k (the paper's)


def t_points(ts: Sequence[float] = LARGE_T) -> np.ndarray:
    """The t values a run's trace is stored at: t·(1 − STEP), t·(1 + STEP) for each t of `ts`."""
    return np.asarray([t * f for t in ts for f in (1.0 - STEP, 1.0 + STEP)])


def cross_class_edges(x: np.ndarray, labels: np.ndarray, k: int = K) -> float:
    """The share of the k-NN graph's edges (each row to its k nearest others) that join two classes."""
    from sklearn.neighbors import NearestNeighbors

    idx = NearestNeighbors(n_neighbors=k + 1).fit(x).kneighbors(x, return_distance=False)[:, 1:]
    return float(np.mean(labels[idx] != labels[:, None]))


def measure(per_class: int = PER_CLASS, runs: int = 20, seed: int = 0, k: int = K,
            classes: Sequence[int] = CLASSES) -> pd.DataFrame:
    """runs.csv: per run and k, the ER-normalised exact heat trace of `per_class` rows of each digit 0..k−1 (RGB
    pixels in [0, 1], 192-d) at `t_points()`, with n and the share of cross-class k-NN edges; run r draws each
    class's rows with `run_generator(seed, r, k)`."""
    from sklearn.datasets import load_digits

    from ganeval.data import digits
    from ganeval.data.images import to_rgb
    from ganeval.metrics import heat_trace
    from ganeval.protocol.draws import draw_rows, run_generator

    labels = load_digits().target
    pixels = to_rgb(digits(8)).reshape(len(labels), 192).astype(np.float64) / 255
    smallest = int(np.bincount(labels).min())
    if not 2 <= per_class <= smallest:
        raise ValueError(f"per_class must lie in 2..{smallest} (the smallest digit class), got {per_class}")
    ts = t_points()
    rows = []
    for c in classes:
        for r in range(runs):
            rng = run_generator(seed, r, c)
            pick = np.concatenate([np.flatnonzero(labels == d)[draw_rows(int(np.sum(labels == d)), per_class, rng)]
                                   for d in range(c)])
            sub, lab = pixels[pick], labels[pick]
            h = heat_trace(sub, t=ts, k=k, method="exact", normalization="er", seed=0)
            cross = cross_class_edges(sub, lab, k)
            rows += [{"run": r, "classes": c, "n": len(sub), "cross_edges": cross, "t": float(t), "value": float(v)}
                     for t, v in zip(ts, h)]
    return pd.DataFrame(rows)


def counts(rows: pd.DataFrame, k: int = K) -> pd.DataFrame:
    """Per run, k and large t: ĉ = (dh̃/dt) / (dh̃₁/dt), both central differences at t·(1 ± STEP), h̃₁ the null's
    trace of a one-component graph of the same n (`normalize_trace` of ones, as h̃ was normalised)."""
    from ganeval.metrics.imd import SCALE, normalize_trace

    def nearest(v: dict[float, float], x: float) -> float:
        return min(v, key=lambda s: abs(s - x))

    out = []
    for (r, c, n), g in rows.groupby(["run", "classes", "n"]):
        v = dict(zip(g["t"], g["value"]))
        for t in LARGE_T:
            lo, hi = t * (1.0 - STEP), t * (1.0 + STEP)
            a, b = (v[nearest(v, x)] for x in (lo, hi))
            null = normalize_trace(np.ones(2), "er", int(n), k, np.asarray([lo, hi])) * SCALE
            out.append({"run": r, "classes": c, "t": t, "count": (b - a) / (null[1] - null[0])})
    return pd.DataFrame(out)


def decide(rows: pd.DataFrame, confidence: float) -> tuple[list[Any], pd.DataFrame]:
    """(the two claims in the common vocabulary, the per-(k, t) summary of the count read): Spearman ρ(k, ĉ) per run
    and every k's ĉ/k, their Student-t intervals over the runs at t = DECIDE_T against STRONG and FACTOR."""
    from scipy.stats import spearmanr

    from ganeval.results import t_interval
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, Claim, vs_paper

    cs = counts(rows)
    at = cs[cs["t"] == DECIDE_T]
    runs = at["run"].nunique()
    rho = [float(spearmanr(g["classes"], g["count"]).statistic) if g["count"].nunique() > 1 else 0.0
           for _, g in at.groupby("run")]
    iv = t_interval(rho, confidence)
    v1 = HOLDS if iv["ci_low"] > STRONG else CONTRADICTED if iv["ci_high"] < STRONG else NOT_TESTABLE
    per_k = (cs.groupby(["t", "classes"])["count"].apply(lambda x: pd.Series(t_interval(x, confidence))).unstack()
             .reset_index())
    cross = rows.groupby("classes")["cross_edges"].mean()
    per_k["cross_edges"] = per_k["classes"].map(cross)
    ratio = at.assign(r=at["count"] / at["classes"]).groupby("classes")["r"].apply(
        lambda x: pd.Series(t_interval(x, confidence))).unstack()
    inside = (ratio["ci_low"] >= 1 / FACTOR) & (ratio["ci_high"] <= FACTOR)
    outside = (ratio["ci_high"] < 1 / FACTOR) | (ratio["ci_low"] > FACTOR)
    v2 = HOLDS if inside.all() else CONTRADICTED if outside.any() else NOT_TESTABLE
    ks = f"k = {int(at.classes.min())}..{int(at.classes.max())}"
    read = ", ".join(f"{int(k)}: {r['mean']:.2f}" for k, r in per_k[per_k.t == DECIDE_T].set_index("classes").iterrows())
    reflects = Claim(
        "dh̃/dt at large t rises with the number of clusters",
        "for large-scale t values, dh̃(t)/dt reflects the approximate number of clusters in the data", v1,
        f"Spearman ρ between the number of digit classes {ks} and the count read from the derivative, "
        f"ĉ = (dh̃/dt)/(dh̃₁/dt) at t = {DECIDE_T:g}, per run; its Student-t interval over {runs} independent runs "
        f"against +{STRONG:g}", f"ρ above +{STRONG:g} (a strong rising relation)",
        vs_paper(v1),
        f"ρ = {iv['mean']:.3f} [{iv['ci_low']:.3f}, {iv['ci_high']:.3f}]; ĉ per k: {read}",
        detectable="" if v1 != NOT_TESTABLE else f"an interval half-width below {abs(iv['mean'] - STRONG):.2g} "
        f"(measured {iv['half_width']:.2g})")
    worst = ratio.loc[ratio["mean"].apply(lambda m: abs(np.log(m)) if m > 0 else np.inf).idxmax()]
    approx = Claim(
        "dh̃/dt at large t gives the approximate number of clusters",
        "dh̃(t)/dt reflects the approximate number of clusters in the data", v2,
        f"the count read ĉ at t = {DECIDE_T:g} over the true count k, each of {ks}: its Student-t interval over "
        f"{runs} runs against [1/{FACTOR:g}, {FACTOR:g}]", f"ĉ within a factor {FACTOR:g} of k",
        vs_paper(v2),
        f"ĉ/k furthest from 1 at k = {int(worst.name)}: {worst['mean']:.2f} [{worst['ci_low']:.2f}, "
        f"{worst['ci_high']:.2f}]",
        detectable="" if v2 != NOT_TESTABLE else "an interval of ĉ/k within or beyond the bounds at every k "
        f"(widest half-width {ratio['half_width'].max():.2g})")
    return [reflects, approx], per_k


def verdict_text(claims: list[Any], per_k: pd.DataFrame, config: dict[str, Any], confidence: float) -> str:
    """verdict.md: the claims' sentences, then the protocol and the count read per k and t."""
    from ganeval.results.verdict import claim_sentences, percent, verdict_markdown
    from ganeval.results.verdicts import claims_table

    ts = sorted(per_k["t"].unique())
    table = ["| classes k | n | cross-class 5-NN edges | " + " | ".join(f"ĉ at t = {t:g}" for t in ts) + " |",
             "|---|---|---|" + "---|" * len(ts)]
    for k, g in per_k.groupby("classes"):
        g = g.set_index("t")
        table.append(f"| {int(k)} | {int(k) * int(config['per_class'])} | {float(g['cross_edges'].iloc[0]):.1%} | "
                     + " | ".join(f"{g.loc[t, 'mean']:.2f} [{g.loc[t, 'ci_low']:.2f}, {g.loc[t, 'ci_high']:.2f}]"
                                  for t in ts) + " |")
    body = [f"Protocol: {config['runs']} runs; in each, {config['per_class']} rows of EVERY digit class 0..k−1 of the "
            "scikit-learn digits (the set holds 174..183 a class; RGB pixels, 192-d), so a set of k classes holds "
            f"{config['per_class']}·k rows; k-NN graph k = {config['k']}, exact heat trace normalised by the "
            f"Erdős–Rényi null model (the paper's h̃), seed {config['seed']}; {percent(confidence)} intervals over the "
            "runs (the runs share most of their rows: the intervals show how the reading depends on the rows "
            "drawn, not a population's spread). The count read from the derivative is ĉ = (dh̃/dt)/(dh̃₁/dt), h̃₁ "
            "the normalised trace of a one-component graph of the same size (central differences at "
            f"t·(1 ± {STEP:g})): for c components well apart, ĉ → c at large t. The paper's figure uses 10k "
            "Inception features of five datasets and shows no count; here the number of classes is known, and the "
            "cross-class column says how far the classes are separate clusters in the 5-NN graph. A class can split "
            "into several components and classes can join, so ĉ counts the graph's near-disconnected parts, which "
            "the classes only approximate.", "", claims_table(claims, confidence).rstrip("\n"), "",
            f"The count read per k ({percent(confidence)} intervals over the runs):", "", *table, "",
            "The labels are read at t = " + f"{DECIDE_T:g}" + " (the figure's largest t); at smaller t the count "
            "is read higher: ĉ/k (means) " + "; ".join(
                f"t = {t:g}: {float((g['mean'] / g['classes']).min()):.2f}–{float((g['mean'] / g['classes']).max()):.2f}"
                for t, g in per_k.groupby("t")) + f" (\"approximate\" = within [1/{FACTOR:g}, {FACTOR:g}])."]
    return verdict_markdown(claim_sentences(claims, confidence, rule=True), "Heat-trace derivative and the number of "
                            "clusters: verdict", "\n".join(body))


def write(out: str | Path, rows: pd.DataFrame, config: dict[str, Any]) -> None:
    """The derived files of stored runs: summary.csv (the count read per k and t), summary.json (config and
    claims), verdict.md."""
    from ganeval.common import atomic_write_text
    from ganeval.results import write_csv

    out = Path(out)
    conf = float(config["confidence"])
    claims, per_k = decide(rows, conf)
    write_csv(per_k, out / "summary.csv")
    write_claims_record(out, config, claims)
    atomic_write_text(out / "verdict.md", verdict_text(claims, per_k, config, conf))


def regenerate(src: Any, out: Any) -> None:
    """Make the stored result's derived files again from its runs.csv and the config in its summary.json."""
    config = json.loads((Path(src) / "summary.json").read_text())["config"]
    write(out, pd.read_csv(Path(src) / "runs.csv"), config)
