"""The paper's scalability statements (Sections "Putting IMD together" and "Verifying Stability and Scalability"):
IMD's time stands between KID's O(dn²) and FID's O(d³ + dn); with approximate k-NN it breaks KID's O(n²); FID's time
appears constant (its d³ matrix square root dominates).

Decided from wall times measured by `scripts/scalability.py` (runs.csv: metric, n, repeat, seconds), each repeat
timing every metric at every size side by side, in rotating order: the log–log slope of time against n per repeat, its
Student-t interval over repeats, against the practical bands below. `regenerate` remakes the derived files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ganeval.studies.stored import write_claims_record

QUADRATIC = 1.8  # a slope at or above this is quadratic
SUBQUADRATIC = 1.5  # a slope below this breaks the quadratic cost
CONSTANT = 0.3  # a slope below this is "constant"


def slopes(rows: pd.DataFrame) -> pd.DataFrame:
    """Per metric and repeat: the least-squares slope of log(seconds) on log(n)."""
    out = []
    for (m, r), g in rows.groupby(["metric", "repeat"], sort=False):
        out.append({"metric": m, "repeat": r, "slope": float(np.polyfit(np.log(g.n), np.log(g.seconds), 1)[0])})
    return pd.DataFrame(out)


def _band_claim(name: str, statement: str, iv: dict[str, float], lo: float | None, hi: float | None,
                opposite: str, n_rep: int) -> Any:
    """holds when the slope's interval lies in [lo, hi), contradicted when it lies wholly outside on `opposite`."""
    from ganeval.results.verdicts import AS_STATED, CONTRADICTED, HOLDS, NO_COMPARISON, NOT_TESTABLE, WORSE, Claim

    inside = (lo is None or iv["ci_low"] >= lo) and (hi is None or iv["ci_high"] < hi)
    beyond = (opposite == "above" and iv["ci_low"] >= (hi if hi is not None else np.inf)) or \
             (opposite == "below" and iv["ci_high"] < (lo if lo is not None else -np.inf))
    v = HOLDS if inside else CONTRADICTED if beyond else NOT_TESTABLE
    band = f"slope in [{lo if lo is not None else '−∞'}, {hi if hi is not None else '∞'})"
    return Claim(name, statement, v, f"least-squares slope of log time on log n per repeat; its Student-t interval "
                 f"over {n_rep} repeats", band, AS_STATED if v == HOLDS else WORSE if v == CONTRADICTED else
                 NO_COMPARISON, f"slope {iv['mean']:.2f} [{iv['ci_low']:.2f}, {iv['ci_high']:.2f}]",
                 detectable="" if v != NOT_TESTABLE else f"an interval narrower than {iv['half_width']:.2g} that "
                 "clears the band's bound")


def decide(rows: pd.DataFrame, confidence: float) -> tuple[list[Any], pd.DataFrame]:
    """The claims from the slopes and, at the largest n, the ordering FID < IMD < KID (per-repeat time ratios)."""
    from ganeval.results import t_interval
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, Claim, vs_paper

    s = slopes(rows)
    iv = {m: t_interval(g.slope.to_numpy(float), confidence) for m, g in s.groupby("metric", sort=False)}
    reps = int(rows.repeat.nunique())
    claims = []
    if "kid_full" in iv:
        claims.append(_band_claim("KID's cost is quadratic in n", "KID, which is O(dn²)", iv["kid_full"], QUADRATIC,
                                  None, "below", reps))
    if "imd_approx" in iv:
        claims.append(_band_claim("IMD with approximate k-NN breaks O(n²)", "Using approximate kNN, we break the "
                                  "O(n²) performance of KID", iv["imd_approx"], None, SUBQUADRATIC, "above", reps))
    if "fid" in iv:
        claims.append(_band_claim("FID's time appears constant in n", "FID's time complexity appears constant, as "
                                  "its runtime is dominated by the O(d³) matrix square root", iv["fid"], None, CONSTANT,
                                  "above", reps))
    top = rows[rows.n == rows.n.max()].pivot_table(index="repeat", columns="metric", values="seconds")
    if {"fid", "kid_full", "imd_approx"} <= set(top.columns):
        lo = t_interval(np.log(top.imd_approx / top.fid).to_numpy(), confidence)
        hi = t_interval(np.log(top.kid_full / top.imd_approx).to_numpy(), confidence)
        between = lo["ci_low"] > 0 and hi["ci_low"] > 0
        outside = lo["ci_high"] < 0 or hi["ci_high"] < 0
        v = HOLDS if between else CONTRADICTED if outside else NOT_TESTABLE
        claims.append(Claim(
            "IMD's time stands between FID's and KID's", "IMD's time complexity stands between those of KID, O(dn²), "
            "and FID, O(d³+dn)", v, f"at n = {int(rows.n.max())}, per repeat log(IMD/FID) and log(KID/IMD) (IMD with "
            f"approximate k-NN); their Student-t intervals over {reps} repeats above 0", "both ratios above 1",
            vs_paper(v),
            f"IMD/FID ×{np.exp(lo['mean']):.3g} [{np.exp(lo['ci_low']):.3g}, {np.exp(lo['ci_high']):.3g}], KID/IMD "
            f"×{np.exp(hi['mean']):.3g} [{np.exp(hi['ci_low']):.3g}, {np.exp(hi['ci_high']):.3g}]",
            detectable="" if v != NOT_TESTABLE else "intervals of the log ratios clear of 0 (measured straddle it)"))
    table = rows.groupby(["metric", "n"], sort=False)["seconds"].agg(["median", "min", "max"]).reset_index()
    return claims, table.merge(s.groupby("metric")["slope"].mean().rename("slope_mean").reset_index(), on="metric")


def write(out: str | Path, rows: pd.DataFrame, config: dict[str, Any]) -> None:
    """summary.csv (median time per metric and n, mean slope), summary.json (config, claims), verdict.md."""
    from ganeval.common import atomic_write_text
    from ganeval.results import write_csv
    from ganeval.results.verdict import claim_sentences, percent, verdict_markdown
    from ganeval.results.verdicts import claims_table

    out, conf = Path(out), float(config["confidence"])
    claims, table = decide(rows, conf)
    write_csv(table, out / "summary.csv")
    write_claims_record(out, config, claims)
    sizes = sorted(rows.n.unique())
    lines = ["| metric | " + " | ".join(f"n = {n}" for n in sizes) + " | slope |", "|---" * (len(sizes) + 2) + "|"]
    for m, g in table.groupby("metric", sort=False):
        lines.append(f"| {m} | " + " | ".join(f"{g[g.n == n]['median'].iloc[0]:.3g} s" for n in sizes)
                     + f" | {g.slope_mean.iloc[0]:.2f} |")
    body = [f"Protocol: {config['repeats']} repeats; each times every metric at every n ∈ {config['sizes']} on two "
            f"different Gaussian sets of dimension d = {config['d']} (drawn before the clock), in rotating order, "
            f"on {config['cpu']} with {config['threads']} torch threads, load average {config['load']} (a machine "
            "shared with other jobs: the times are noisy, the slopes less so). imd_exact: IMD with exact k-NN; "
            "imd_approx: with pynndescent (compiled by a warm-up call before timing); kid_full: KID as one subset of "
            "all n rows (the O(dn²) estimator the paper means); fid: FID. "
            f"{percent(conf)} intervals over repeats. The paper's figure uses d = 2048 and a GPU server; GPU numbers "
            "are pending (no GPU this session).", "", claims_table(claims, conf).rstrip("\n"), "",
            "Median wall time:", "", *lines]
    atomic_write_text(out / "verdict.md", verdict_markdown(claim_sentences(claims, conf, rule=True),
                                                           "Scalability: verdict", "\n".join(body)))


def plot(rows: pd.DataFrame, path: str | Path) -> Path:
    """Time against n, log–log, one line per metric (median over repeats, min–max band), as the paper's figure."""
    from ganeval.results.plots import _plt, _save

    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, (m, g) in enumerate(rows.groupby("metric", sort=False)):
        a = g.groupby("n")["seconds"].agg(["median", "min", "max"])
        ax.plot(a.index, a["median"], marker="o", color=f"C{i}", label=m)
        ax.fill_between(a.index, a["min"], a["max"], color=f"C{i}", alpha=0.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("samples n")
    ax.set_ylabel("wall time (s)")
    ax.legend(fontsize=8)
    return _save(fig, path)


def regenerate(src: Any, out: Any) -> None:
    """Make the stored result's derived files again from its runs.csv and the config in its summary.json."""
    config = json.loads((Path(src) / "summary.json").read_text())["config"]
    write(out, pd.read_csv(Path(src) / "runs.csv"), config)
