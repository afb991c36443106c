"""The paper's stability figure: each metric's mean and interval against the sample size n, IMD with exact and
approximate kNN, for a same-distribution pair (two disjoint halves of one dataset) and a different pair.

`data` is split by a seeded permutation into halves A and B; `other` is the different set. For every n of the
grid (`sample_size` halved `halvings` times) the protocol scores (A, B) and (A, other) in one block, so the
two pairs share run r's subsample of A (paired), in three stores under `runs/`: IMD with exact kNN, IMD with
approximate kNN (the same subsamples and probes: paired with exact), and FID + KID. KID's subsets hold
min(metrics.kid.subset_size, n) rows (an unbiased estimate whatever the subset size; only its variance changes).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ganeval.app import pipeline
from ganeval.hashing import stable_hash
from ganeval.protocol import Block, Settings
from ganeval.results import paired_comparison, t_interval, write_csv, write_results
from ganeval.results.seeds import split_probe_draws

log = logging.getLogger("ganeval")

PAIRS = ("same", "different")
KNN_METHODS = ("exact", "approx")
LINES = (("imd", "exact"), ("imd", "approx"), ("fid", ""), ("kid", ""))  # (metric, knn) of each plotted line
PAPER = {  # the paper's statements the verdict answers (Section "Verifying Stability and Scalability", Sec. 3)
    "diverge": "we empirically verify, in Figure~\\ref{fig:scalability} (left), that IMD does not diverge too much "
               "with increased sample size.",
    "variance": "Most remarkably, we observe that IMD with approximate kNN does not induce additional variance, "
                "while it diverges slightly further than the exact version as the number of samples grows.",
    "time": "In practice, with approximate kNN graph construction, computational time is low while result "
            "variance is similar to the exact case.",
}


@dataclasses.dataclass(frozen=True)
class Part:
    """One protocol store: the metrics scored at one n (IMD with one kNN method, or FID and KID)."""

    n: int
    name: str  # "imd-exact", "imd-approx" or "fid-kid"
    knn: str  # the kNN method of an IMD part, "" for FID and KID
    settings: Settings

    def directory(self, results_dir: Path) -> Path:
        """Where this part's runs.csv lives."""
        return results_dir / "runs" / f"n{self.n}-{self.name}"


# --------------------------------------------------------------------------- the grid and the parts
def sample_sizes(top: int, halvings: int) -> list[int]:
    """The grid: `top` halved `halvings` times, rounded, smallest first (e.g. 4000, 4 -> 250, 500, 1000, 2000, 4000)."""
    if not isinstance(halvings, int) or isinstance(halvings, bool) or halvings < 1:
        raise ValueError(f"halvings must be an integer ≥ 1 (a curve needs at least two n), got {halvings!r}")
    sizes = [int(round(top / 2**k)) for k in range(halvings, -1, -1)]
    if sizes[0] < 10:
        raise ValueError(f"sample_size={top} halved {halvings} times gives n={sizes[0]}: the smallest n must be at "
                         "least 10 (IMD's kNN graph needs rows); lower halvings or raise sample_size")
    return sizes


def knn_methods(value: Any, imd_knn: str) -> list[str]:
    """`knn_methods` checked: a non-empty list of distinct methods of KNN_METHODS. metrics.imd.knn must stay at its
    default (exact), since each part sets it: a different value would be silently replaced, so it is refused."""
    methods = [str(m) for m in (value or [])]
    if not methods or len(set(methods)) < len(methods) or not set(methods) <= set(KNN_METHODS):
        raise ValueError(f"knn_methods must be a non-empty list of distinct values of {list(KNN_METHODS)}, got {value!r}")
    if imd_knn != "exact":
        raise ValueError(f"metrics.imd.knn={imd_knn!r} is set, but experiment=stability scores IMD with each of "
                         f"knn_methods={methods}: choose the methods with knn_methods=[...] and leave metrics.imd.knn")
    return methods


def plan_parts(settings: Settings, sizes: Sequence[int], methods: Sequence[str]) -> list[Part]:
    """The stores of the grid, each with its own validated settings (n as sample size, KID subsets of ≤ n rows)."""
    chosen = settings.metrics.as_dict()  # type: ignore[union-attr]
    parts = []
    for n in sizes:
        if "imd" in chosen:
            for method in methods:
                parts.append(Part(n, f"imd-{method}", method, dataclasses.replace(
                    settings, sample_size=n, metrics={"imd": {**chosen["imd"], "knn": method}})))
        rest = {k: dict(v) for k, v in chosen.items() if k != "imd"}
        if "kid" in rest:
            rest["kid"]["subset_size"] = min(int(rest["kid"]["subset_size"]), n)
        if rest:
            parts.append(Part(n, "-".join(rest), "", dataclasses.replace(settings, sample_size=n, metrics=rest)))
    return parts


def split_halves(arr: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint halves of `arr`'s rows by a seeded permutation (an odd last row is left out)."""
    if len(arr) < 4:
        raise ValueError(f"data has {len(arr)} rows: at least 4 are needed to split it into two halves")
    perm = np.random.default_rng([int(seed), 0x5EED]).permutation(len(arr))
    half = len(arr) // 2
    return arr[np.sort(perm[:half])], arr[np.sort(perm[half : 2 * half])]


def stored_runs(directory: Path) -> int:
    """How many complete runs a part's runs.csv already holds (0 when there is none)."""
    path = directory / "runs.csv"
    if not path.exists():
        return 0
    try:
        return int(pd.read_csv(path, usecols=["run"])["run"].nunique())
    except (ValueError, OSError):
        return 0  # the store itself refuses (or overwrites) a damaged file


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else the platform's processor string."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def read_timing(directory: Path) -> dict[str, Any]:
    """A part's timing.json (seconds per run when its runs were made, the load then, the CPU), or {}."""
    import json

    try:
        return dict(json.loads((directory / "timing.json").read_text()))
    except (OSError, ValueError):
        return {}


def warm_up_approx() -> None:
    """Compile pynndescent's numba code once (30–50 s on 2 cores), so no part's time includes it."""
    from ganeval.metrics.knn_approx import approx_knn
    from ganeval.metrics.synthetic import pool3_like

    approx_knn(pool3_like(200, 16, seed=0), 5)


def approx_recall(a: np.ndarray, settings: Settings, n: int) -> float:
    """Recall of the true k-NN by IMD's approximate graph on run 0's subsample of n rows of `a` (the protocol's draw)."""
    from ganeval.metrics.knn_approx import approx_knn, brute_force_knn, knn_recall
    from ganeval.protocol.draws import draw_rows, run_generator

    x = np.ascontiguousarray(a[draw_rows(len(a), n, run_generator(settings.seed, 0))], dtype=np.float32)
    k = int(settings.metrics["imd"]["k"])
    return knn_recall(approx_knn(x, k), brute_force_knn(x, k))


# --------------------------------------------------------------------------- summaries
def summarize(rows: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """One row per (n, pair, knn, metric): Student-t interval over runs, and relative_* = each value divided by
    the mean at the largest n of the same line (the paper's axis; the denominator's uncertainty is not propagated)."""
    out = []
    for (n, pair, knn, metric), g in rows.groupby(["n", "pair", "knn", "metric"], sort=True):
        values = g.sort_values("run")["value"].to_numpy()
        out.append({"n": int(n), "pair": pair, "knn": knn, "metric": metric, **t_interval(values, confidence),
                    "confidence": float(confidence)})
    summary = pd.DataFrame(out)
    top = summary[summary.n == summary.n.max()].set_index(["pair", "knn", "metric"])["mean"]
    ref = summary.set_index(["pair", "knn", "metric"]).index.map(top)
    for col in ("mean", "ci_low", "ci_high"):
        summary[f"relative_{col}"] = summary[col].to_numpy() / np.asarray(ref, dtype=float)
    order = {(m, k): i for i, (m, k) in enumerate(LINES)}
    summary["_line"] = [order.get((m, k), len(order)) for m, k in zip(summary.metric, summary.knn)]
    summary["_pair"] = summary.pair.map({p: i for i, p in enumerate(PAIRS)})
    return summary.sort_values(["_line", "_pair", "n"]).drop(columns=["_line", "_pair"]).reset_index(drop=True)


def variance_ratio_interval(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """var(a)/var(b) of paired values with its Pitman–Morgan confidence interval (correlated pairs, normal values).

    The ratio λ is inside the interval when corr(a − √λ·b, a + √λ·b) is not significant; solving for λ gives
    F·(K ± √(K² − 1)), F = s_a²/s_b², K = 1 + 2(1 − ρ²)t²/(n − 2), ρ = corr(a, b), t the t(n − 2) quantile.
    """
    from scipy.stats import t as student_t

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.size < 3:
        raise ValueError(f"a and b must be paired runs (same length ≥ 3), got {a.size} and {b.size}")
    va, vb = a.var(ddof=1), b.var(ddof=1)
    if va == 0 or vb == 0:
        nan = float("nan")
        return (nan, nan, nan) if va == vb == 0 else (va / vb if vb else math.inf, nan, nan)
    f = va / vb
    rho = float(np.corrcoef(a, b)[0, 1])
    t = float(student_t.ppf(0.5 + confidence / 2.0, a.size - 2))
    k = 1.0 + 2.0 * (1.0 - rho**2) * t**2 / (a.size - 2)
    root = math.sqrt(k * k - 1.0)
    return float(f), float(f * (k - root)), float(f * (k + root))


def compare(rows: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Paired differences: `different − same` per (n, metric, knn) and `approx − exact` (IMD) per (n, pair), the
    latter with the variance ratio approx/exact and its interval."""
    out = []
    wide = rows.pivot_table(index=["n", "metric", "knn", "run"], columns="pair", values="value").reset_index()
    for (n, metric, knn), g in wide.groupby(["n", "metric", "knn"], sort=True):
        res = paired_comparison(g["different"], g["same"], confidence)
        out.append({"kind": "different - same", "n": int(n), "metric": metric, "knn": knn, "pair": "", **res,
                    "excludes_zero": bool(res["ci_low"] > 0 or res["ci_high"] < 0)})
    imd = rows[rows.metric == "imd"]
    if set(KNN_METHODS) <= set(imd.knn):
        wide = imd.pivot_table(index=["n", "pair", "run"], columns="knn", values="value").reset_index()
        for (n, pair), g in wide.groupby(["n", "pair"], sort=True):
            res = paired_comparison(g["approx"], g["exact"], confidence)
            ratio, low, high = variance_ratio_interval(g["approx"].to_numpy(), g["exact"].to_numpy(), confidence)
            out.append({"kind": "approx - exact", "n": int(n), "metric": "imd", "knn": "", "pair": pair, **res,
                        "excludes_zero": bool(res["ci_low"] > 0 or res["ci_high"] < 0),
                        "var_ratio": ratio, "var_ratio_low": low, "var_ratio_high": high})
    return pd.DataFrame(out)


def welch_interval(a: pd.Series, b: pd.Series, confidence: float) -> tuple[float, float, float]:
    """mean(a) − mean(b) of two independent sets of runs (two sample sizes) with its Welch confidence interval, from
    summary rows (mean, std, n_runs)."""
    from scipy.stats import t as student_t

    va, vb = a["std"] ** 2 / a["n_runs"], b["std"] ** 2 / b["n_runs"]
    se = math.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va**2 / (a["n_runs"] - 1) + vb**2 / (b["n_runs"] - 1)) if se > 0 else 1.0
    half = float(student_t.ppf(0.5 + confidence / 2.0, dof)) * se
    d = float(a["mean"] - b["mean"])
    return d, d - half, d + half


def loglog_slope(n: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log n (e.g. −0.5 for a half-width falling like 1/√n)."""
    x, v = np.log(np.asarray(n, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(x, v, 1)[0])


# --------------------------------------------------------------------------- the verdict
def _line(summary: pd.DataFrame, metric: str, knn: str, pair: str) -> pd.DataFrame:
    return summary[(summary.metric == metric) & (summary.knn == knn) & (summary.pair == pair)].sort_values("n")


def _lines(summary: pd.DataFrame) -> list[tuple[str, str]]:
    present = set(zip(summary.metric, summary.knn))
    return [line for line in LINES if line in present]


def label(metric: str, knn: str) -> str:
    """'IMD (exact kNN)', 'FID', ... for text and plots."""
    return metric.upper() + (f" ({knn} kNN)" if knn else "")


def timing_table(sizes: Sequence[int], parts: Sequence[Part], timings: dict[str, dict[str, Any]],
                 recall: dict[int, float]) -> pd.DataFrame:
    """knn.csv: per n, the approximate graph's recall, each part's seconds per run (when its runs were made) and the
    highest 1-min load average seen then."""
    out = []
    for n in sizes:
        row: dict[str, Any] = {"n": n, "approx_recall": recall.get(n, math.nan)}
        loads = []
        for part in parts:
            if part.n == n:
                t = timings.get(f"n{n}-{part.name}", {})
                row[f"seconds_per_run_{part.name}"] = t.get("seconds_per_run", math.nan)
                loads.append(t.get("load_1min", math.nan))
        row["load_1min_max"] = max(loads, default=math.nan)
        out.append(row)
    return pd.DataFrame(out)


RECALL_EXACT = 0.999  # an approximate graph with at least this recall at every n is the exact one, for testing


def verdict(summary: pd.DataFrame, comparison: pd.DataFrame, seconds: dict[str, float] | None = None,
            recall: dict[int, float] | None = None) -> list[dict[str, Any]]:
    """The claims answered from the intervals, each {claim, holds (True/False/None: not testable here), detail}.

    The claims about approximate k-NN (no added variance, diverging further) are not testable here when the
    approximate graph equals the exact one (recall ≥ RECALL_EXACT at every n): no effect of approximation can
    show, whatever the intervals say; their detail names the smallest paired difference the test could detect."""
    sizes = sorted(summary.n.unique())
    lo_n, hi_n = sizes[0], sizes[-1]
    claims: list[dict[str, Any]] = []
    diff = comparison[comparison.kind == "different - same"]
    for metric, knn in _lines(summary):
        d = diff[(diff.metric == metric) & (diff.knn == knn)].sort_values("n")
        same, other = _line(summary, metric, knn, "same"), _line(summary, metric, knn, "different")
        apart = [bool(o.ci_low > s.ci_high) for (_, s), (_, o) in zip(same.iterrows(), other.iterrows())]
        paired = [bool(r.ci_low > 0) for _, r in d.iterrows()]
        fails = [int(n) for n, a, p in zip(d.n, apart, paired) if not (a and p)]
        reversed_ = bool((d.ci_high < 0).any())  # a significantly lower different pair contradicts; else no power
        mde = "; smallest detectable (paired t, 80 % power) where undecided: " + ", ".join(
            f"n={int(r.n)}: {r.mde:.2g}" for _, r in d.iterrows() if int(r.n) in fails) if fails and "mde" in d else ""
        claims.append({
            "claim": f"separation/{metric}/{knn}".rstrip("/"),
            "holds": True if not fails else (False if reversed_ else None),
            "detail": f"{label(metric, knn)}: the different pair lies above the same pair "
                      + ("at every n (intervals disjoint, paired difference > 0)" if not fails else
                         "at no n" if len(fails) == len(d) else f"except at n = {', '.join(map(str, fails))}")
                      + "; different − same: " + ", ".join(f"n={int(r.n)}: {r.diff_mean:.4g} ± {r.half_width:.2g}"
                                                          for _, r in d.iterrows()) + mde,
        })
    for metric, knn in _lines(summary):
        for pair in PAIRS:
            s = _line(summary, metric, knn, pair)
            slope = loglog_slope(s.n, s.half_width)
            ratio = float(s.half_width.iloc[0] / s.half_width.iloc[-1])
            claims.append({
                "claim": f"interval/{metric}/{knn}/{pair}".replace("//", "/"),
                "holds": bool(s.half_width.iloc[-1] < s.half_width.iloc[0]),
                "slope": slope,
                "detail": f"{label(metric, knn)}, {pair} pair: half-width {s.half_width.iloc[0]:.3g} at n={lo_n} → "
                          f"{s.half_width.iloc[-1]:.3g} at n={hi_n} (×{1 / ratio:.2f}); log-log slope {slope:.2f} "
                          "(−0.5 would be 1/√n)",
            })
    for metric, knn in _lines(summary):
        for pair in PAIRS:
            s = _line(summary, metric, knn, pair)
            falls = all(a.ci_low > b.ci_high for (_, a), (_, b) in zip(s.iloc[:-1].iterrows(), s.iloc[1:].iterrows()))
            d, low, high = welch_interval(s.iloc[0], s.iloc[-1], float(s.confidence.iloc[0]))
            claims.append({
                "claim": f"falls/{metric}/{knn}/{pair}".replace("//", "/"),
                "holds": falls,
                "overall": bool(low > 0),
                "slope": loglog_slope(s.n, s["mean"].abs()),
                "detail": f"{label(metric, knn)}, {pair} pair: mean " + " → ".join(f"{v:.4g}" for v in s["mean"])
                          + f" over n = {', '.join(map(str, s.n))}; "
                          + ("each n's interval lies above the next one's" if falls else
                             "not every step down is outside the intervals")
                          + f"; n={lo_n} − n={hi_n}: {d:+.4g} [{low:.4g}, {high:.4g}] (Welch)",
            })
    for metric, knn in _lines(summary):
        s = _line(summary, metric, knn, "different")
        rel = s.relative_mean.to_numpy()
        claims.append({
            "claim": f"diverge/{metric}/{knn}".rstrip("/"),
            "holds": bool(rel.min() >= 0.5 and rel.max() <= 2.5),
            "range": [float(rel.min()), float(rel.max())],
            "detail": f"{label(metric, knn)}, different pair, relative to n={hi_n}: "
                      + ", ".join(f"{r:.2f}" for r in rel) + " (the paper's figure spans 0.5–2.5)",
        })
    ae = comparison[comparison.kind == "approx - exact"] if "kind" in comparison else comparison.iloc[:0]
    exact_graph = bool(recall) and min(recall.values()) >= RECALL_EXACT
    why = (f"the approximate graph is the exact one at these n (recall of the true k-NN "
           f"≥ {RECALL_EXACT} at every n), so no effect of approximation can show; ") if exact_graph else ""
    if len(ae):
        more_var = ae[ae.var_ratio_low > 1]
        claims.append({
            "claim": "approx/no_added_variance",
            "holds": None if exact_graph else more_var.empty,
            "detail": why + "variance ratio approx/exact per run (Pitman–Morgan interval): "
                      + "; ".join(f"n={int(r.n)} {r.pair}: {r.var_ratio:.2f} [{r.var_ratio_low:.2f}, {r.var_ratio_high:.2f}]"
                                  for _, r in ae.iterrows()),
        })
        for pair in PAIRS:
            a = ae[ae.pair == pair].sort_values("n")
            ex = _line(summary, "imd", "exact", pair).set_index("n")["mean"]
            rel = (a.diff_mean.to_numpy() / ex.loc[a.n].to_numpy())
            top = a.iloc[-1]
            mde = ", ".join(f"n={int(r.n)}: {r.mde:.2g}" for _, r in a.iterrows() if "mde" in a.columns)
            claims.append({
                "claim": f"approx/diverges_further/{pair}",
                "holds": None if exact_graph else bool(top.excludes_zero and top.diff_mean > 0
                                                       and abs(rel[-1]) > abs(rel[0])),
                "detail": why + f"{pair} pair, IMD approx − exact (paired): " + ", ".join(
                    f"n={int(r.n)}: {r.diff_mean:+.3g} ± {r.half_width:.2g} ({x:+.1%})"
                    for (_, r), x in zip(a.iterrows(), rel))
                    + (f"; smallest detectable difference (paired t, 80 % power): {mde}" if mde else ""),
            })
            exact, approx = _line(summary, "imd", "exact", pair), _line(summary, "imd", "approx", pair)
            overlap = [not (p.ci_low > q.ci_high or q.ci_low > p.ci_high)
                       for (_, p), (_, q) in zip(exact.iterrows(), approx.iterrows())]
            claims.append({
                "claim": f"approx/agrees/{pair}",
                "holds": all(overlap),
                "paired_zero": [int(r.n) for _, r in a.iterrows() if not r.excludes_zero],
                "detail": f"{pair} pair: exact and approx intervals overlap at "
                          + (f"every n" if all(overlap) else
                             f"n = {', '.join(str(int(n)) for n, o in zip(exact.n, overlap) if o) or 'no n'}")
                          + "; the paired difference contains 0 at "
                          + (", ".join(str(int(r.n)) for _, r in a.iterrows() if not r.excludes_zero) or "no n"),
            })
    if recall:
        claims.append({
            "claim": "approx/recall",
            "holds": None,
            "detail": "recall of the true k-NN by the approximate graph (run 0's subsample of the first half): "
                      + ", ".join(f"n={n}: {r:.4f}" for n, r in sorted(recall.items())),
        })
    if seconds:
        pairs = [(n, seconds.get(f"n{n}-imd-exact"), seconds.get(f"n{n}-imd-approx")) for n in sizes]
        pairs = [(n, e, a) for n, e, a in pairs if e and a]
        if pairs:
            claims.append({
                "claim": "approx/faster",
                "holds": all(a < e for _, e, a in pairs),
                "detail": "seconds per run, IMD exact vs approx (both pairs, 3 sets): "
                          + ", ".join(f"n={n}: {e:.2f} vs {a:.2f}" for n, e, a in pairs),
            })
    return claims


def verdict_markdown(claims: list[dict[str, Any]], summary: pd.DataFrame, context: dict[str, Any]) -> str:
    """verdict.md: the paper's statements quoted, each answered from the intervals, with the numbers."""
    by = {c["claim"]: c for c in claims}

    def mark(c: dict[str, Any] | None) -> str:
        return "not measured" if c is None else {True: "holds", False: "contradicted",
                                                  None: "not testable here"}[c["holds"]]

    def group(prefix: str) -> list[dict[str, Any]]:
        return [c for name, c in by.items() if name.startswith(prefix)]

    sizes = sorted(summary.n.unique())
    lines = [f"# Stability: metrics against the sample size ({context['description']})", "",
             f"n = {', '.join(map(str, sizes))}; {context['runs']} runs per n; {context['confidence']:.0%} Student-t "
             f"intervals over runs (subsamples of the pools and IMD's probes). Pools: {context['pools']}. "
             "The same pair is two disjoint halves of one dataset, the different pair the first half against the "
             "other dataset; both pairs share each run's subsample of the first half (paired).", ""]
    lines += ["## The paper's statements", ""]
    div = group("diverge/imd")
    lines += [f"> {PAPER['diverge']}", "",
              f"**{'Holds' if div and all(c['holds'] for c in div) else 'Contradicted'}** in the sense of the "
              "paper's figure, which plots each metric of the different pair relative to its value at 10⁴ samples on "
              "a 0.5–2.5 axis (\"too much\" is not defined further); here relative to the largest n (point estimates, "
              f"{context['runs']} runs per n: a practical threshold, not a test):", ""]
    lines += [f"- {c['detail']}: {mark(c)}" for c in div]
    lines += [f"- for comparison, {c['detail']}" for c in group("diverge/") if not c["claim"].startswith("diverge/imd")]
    falls = [by[k] for k in ("falls/imd/exact/same", "falls/imd/exact/different") if k in by]
    if falls:
        lines += ["", "IMD's expected value depends on n: "
                  + "; ".join(f"{c['detail']}, log-log slope of the mean {c['slope']:+.2f}" for c in falls) + ". "
                  "IMD is a maximum over t of noisy differences of heat traces, so the noise (subsampling and probes) "
                  "adds to its expected value, and that share falls as n grows; for a same-distribution pair, whose "
                  "true distance is 0, it is the whole value. Compare IMD values only at equal n and equal probe "
                  "settings."]
    lines += ["", f"> {PAPER['variance']}", ""]
    var = by.get("approx/no_added_variance")
    lines += [f"- No additional variance: **{mark(var)}** — "
              + (var["detail"] if var else "approximate kNN was not run (knn_methods)") + "."]
    for pair in PAIRS:
        c = by.get(f"approx/diverges_further/{pair}")
        if c:
            lines += [f"- Diverges further than exact as n grows ({pair} pair): **{mark(c)}** — {c['detail']}."]
    if "approx/recall" in by:
        lines += [f"- Why: the {by['approx/recall']['detail']}."]
    lines += ["", f"> {PAPER['time']}", ""]
    t = by.get("approx/faster")
    lines += ["- Time low (approx faster than exact at these n): "
              + (f"**{mark(t)}** — {t['detail']} ({context['machine']})" if t else
                 "not measured (runs resumed from disk, or approx not run)")
              + ". Variance similar: see above."]
    lines += ["", "## Same pair vs different pair", ""]
    lines += [f"- {c['detail']}: **{mark(c)}**" for c in group("separation/")]
    lines += ["", "## How the interval shrinks with n", ""]
    lines += [f"- {c['detail']}" for c in group("interval/")]
    lines += ["", "## Exact vs approximate kNN", ""]
    lines += [f"- {c['detail']}: intervals agree **{mark(c)}**" for c in group("approx/agrees/")] or ["- not run"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- table and plot
def _cell(row: pd.Series, scale: float) -> str:
    return f"{row['mean'] * scale:.3g} ± {row['half_width'] * scale:.2g}"


def table_markdown(summary: pd.DataFrame, comparison: pd.DataFrame) -> str:
    """table.md: mean ± half-width per n for every line and pair, then IMD approx − exact and the variance ratio."""
    scale = {"kid": 1e3}
    cols = [(m, k, p) for m, k in _lines(summary) for p in PAIRS]
    head = ["n"] + [f"{label(m, k)}{'×10³' if m in scale else ''} {p}" for m, k, p in cols]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in sorted(summary.n.unique()):
        cells = [str(n)]
        for m, k, p in cols:
            r = summary[(summary.n == n) & (summary.metric == m) & (summary.knn == k) & (summary.pair == p)]
            cells.append(_cell(r.iloc[0], scale.get(m, 1.0)) if len(r) else "–")
        out.append("| " + " | ".join(cells) + " |")
    conf = float(summary.confidence.iloc[0])
    out += ["", f"Mean ± half-width of the {conf:.0%} Student-t interval over runs."]
    ae = comparison[comparison.kind == "approx - exact"] if len(comparison) else comparison
    if len(ae):
        out += ["", "| n | pair | IMD approx − exact (paired) | variance ratio approx/exact [interval] |", "|---|---|---|---|"]
        for _, r in ae.sort_values(["pair", "n"]).iterrows():
            out.append(f"| {int(r.n)} | {r.pair} | {r.diff_mean:+.3g} ± {r.half_width:.2g} | "
                       f"{r.var_ratio:.2f} [{r.var_ratio_low:.2f}, {r.var_ratio_high:.2f}] |")
    return "\n".join(out) + "\n"


def plot_stability(summary: pd.DataFrame, path: Path) -> Path:
    """One panel per metric (mean ± interval against n, log x; IMD exact solid, approx dashed; same and different
    pair), and a last panel with the different pair relative to the largest n, the paper's axis."""
    from ganeval.results.plots import _plt, _save

    plt = _plt()
    from matplotlib.ticker import FixedLocator, NullLocator

    metrics = [m for m in ("imd", "fid", "kid") if m in set(summary.metric)]
    cols = 2 if len(metrics) >= 2 else len(metrics) + 1
    rows = math.ceil((len(metrics) + 1) / cols)
    fig, grid = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    axes = [list(grid.ravel())]
    for ax in axes[0][len(metrics) + 1:]:
        ax.axis("off")
    sizes = sorted(int(n) for n in summary.n.unique())

    def n_axis(ax: Any) -> None:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(FixedLocator(sizes))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([str(n) for n in sizes])
        ax.set_xlabel("sample size n")

    colors = {"same": "C0", "different": "C3"}
    for ax, m in zip(axes[0], metrics):
        for metric, knn in _lines(summary):
            if metric != m:
                continue
            for pair in PAIRS:
                s = _line(summary, metric, knn, pair)
                style = "--" if knn == "approx" else "-"
                ax.plot(s.n, s["mean"], style, marker="o", ms=3, color=colors[pair],
                        label=f"{pair} pair" + (f", {knn}" if knn else ""))
                ax.fill_between(s.n, s.ci_low, s.ci_high, color=colors[pair], alpha=0.15 if knn != "approx" else 0.08)
        n_axis(ax)
        ax.set_title(m.upper() + (" (exact kNN solid, approximate dashed)" if m == "imd" and len(_lines(summary)) and
                                  ("imd", "approx") in _lines(summary) else ""), fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    ax = axes[0][len(metrics)]
    for i, (metric, knn) in enumerate(_lines(summary)):
        s = _line(summary, metric, knn, "different")
        ax.plot(s.n, s.relative_mean, "--" if knn == "approx" else "-", marker="o", ms=3, color=f"C{i + 4}",
                label=label(metric, knn))
        ax.fill_between(s.n, s.relative_ci_low, s.relative_ci_high, color=f"C{i + 4}", alpha=0.15)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    n_axis(ax)
    ax.set_title(f"different pair, relative to its mean at n={int(summary.n.max())} (the paper's axis)", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    conf = float(summary.confidence.iloc[0])
    fig.suptitle(f"Stability against sample size (mean, {conf:.0%} CI over runs)", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


# --------------------------------------------------------------------------- the experiment
def run(ctx: pipeline.Context) -> pd.DataFrame:
    """Split data, extract, score every part of the grid, write summary, comparison, table, verdict and plot."""
    from ganeval.data.images import to_rgb
    from ganeval.protocol.api import store_identity
    from ganeval.protocol.store import check_store

    cfg, settings = ctx.cfg, ctx.settings
    sizes = sample_sizes(settings.sample_size, cfg.halvings)
    methods = knn_methods(cfg.knn_methods, settings.metrics["imd"]["knn"]) if "imd" in settings.metrics else []
    if settings.probe_repeats:
        raise ValueError("experiment=stability does not use probe_repeats (its rows are not curves): set probe_repeats=0")
    name = ctx.choices.get("data") or "data"
    other_name = ctx.choices.get("data@other") or "other"
    prep = to_rgb if pipeline.strict_bool(cfg, "color") else (lambda a: a)
    with ctx.stage("load data"):
        data = prep(pipeline.load_data(ctx, cfg.data, "data"))
        other = prep(pipeline.load_data(ctx, cfg.other, "other"))
    half = len(data) // 2
    settings.check_pools({f"each half of data ({name}, {len(data)} rows)": half, f"other ({other_name})": len(other)})
    parts = plan_parts(settings, sizes, methods)
    extractor = pipeline.make_extractor(ctx)
    overwrite = pipeline.strict_bool(cfg, "overwrite")
    for part in parts:  # another config's or other content's runs: refused before extraction
        check_store(part.directory(ctx.results_dir), stable_hash(store_identity(part.settings, ctx.identity())), overwrite)

    if overwrite:  # discard the stores of parts this grid no longer has, so results_dir holds one experiment
        import shutil

        planned = {part.directory(ctx.results_dir) for part in parts}
        for stale in sorted((ctx.results_dir / "runs").glob("n*-*")):
            if stale.is_dir() and stale not in planned:
                shutil.rmtree(stale)
    with ctx.stage("features"):
        feats = pipeline.features(ctx, data, extractor, name)
        other_f = pipeline.features(ctx, other, extractor, other_name)
    if feats.shape[1] != other_f.shape[1]:
        raise ValueError(f"other has {other_f.shape[1]} features, data {feats.shape[1]}: give both one shape "
                         "(one image size and channel count, color=true for grey against colour)")
    a, b = split_halves(feats, int(cfg.split_seed))
    fakes = [({"pair": "same"}, b), ({"pair": "different"}, other_f)]
    chunks, seconds, loads = [], {}, []
    timings: dict[str, dict[str, Any]] = {}
    warmed = False
    for part in parts:
        directory = part.directory(ctx.results_dir)
        todo = settings.runs - (0 if overwrite else min(stored_runs(directory), settings.runs))
        if part.knn == "approx" and todo and not warmed:
            with ctx.stage("compile pynndescent"):
                warm_up_approx()
            warmed = True
        groups = {"n": part.n, **({"knn": part.knn} if part.knn else {})}
        stage = f"runs n={part.n} {part.name}"
        with ctx.stage(stage):
            from ganeval.protocol import run_blocks

            rows = run_blocks([Block(a, fakes, groups)], part.settings, directory, ctx.identity(), overwrite)
        if todo:  # the time per run of the runs made now, kept beside them (a resumed part keeps its time)
            from ganeval.results import write_json

            write_json({"seconds_per_run": ctx.stage_seconds[stage] / todo, "runs_timed": todo,
                        "load_1min": round(os.getloadavg()[0], 2), "cpu": cpu_model(), "device": settings.device},
                       directory / "timing.json")
        timing = read_timing(directory)
        if part.knn == "approx" and "approx_recall" not in timing:  # measured once, kept beside the part's runs
            if not warmed:
                with ctx.stage("compile pynndescent"):
                    warm_up_approx()
                warmed = True
            with ctx.stage("approx kNN recall"):
                timing["approx_recall"] = approx_recall(a, part.settings, part.n)
            from ganeval.results import write_json

            write_json(timing, directory / "timing.json")
        timings[f"n{part.n}-{part.name}"] = timing
        if "seconds_per_run" in timing:
            seconds[f"n{part.n}-{part.name}"] = float(timing["seconds_per_run"])
            loads.append(float(timing.get("load_1min", math.nan)))
        chunks.append(split_probe_draws(rows)[0])
    recall = {int(key[1:].split("-")[0]): float(t["approx_recall"]) for key, t in timings.items() if "approx_recall" in t}
    rows = pd.concat(chunks, ignore_index=True)
    rows["knn"] = rows["knn"].fillna("") if "knn" in rows else ""
    summary = summarize(rows, settings.confidence)
    comparison = compare(rows, settings.confidence)
    claims = verdict(summary, comparison, seconds, recall)

    context = {"description": f"{name} halves vs {other_name}", "runs": settings.runs, "confidence": settings.confidence,
               "pools": f"two halves of {name} with {half} rows each, {other_name} with {len(other)} rows, "
                        f"{feats.shape[1]}-d features",
               "machine": f"{cpu_model()}, {os.cpu_count()} cores, 1-min load average {min(loads, default=math.nan):.1f}–"
                          f"{max(loads, default=math.nan):.1f} while the parts ran (knn.csv)"}
    ctx.record.verdict = claims
    ctx.record.context = context
    ctx.record.knn = "+".join(methods) or None  # pipeline.write would record metrics.imd.knn, not the methods run
    ctx.record.set_results(summary, ctx.stage_seconds)
    write_results(ctx.results_dir, summary, comparison if len(comparison) else None, ctx.record, tables=False)
    write_csv(timing_table(sizes, parts, timings, recall), ctx.results_dir / "knn.csv")
    from ganeval.common import atomic_write_text

    atomic_write_text(ctx.results_dir / "table.md", table_markdown(summary, comparison))
    atomic_write_text(ctx.results_dir / "verdict.md", verdict_markdown(claims, summary, context))
    if pipeline.strict_bool(cfg, "plots"):
        plot_stability(summary, ctx.results_dir / "stability.png")
    for c in claims:
        log.info("%s: %s", c["claim"], c["holds"])
    return summary


def regenerate(src: Any, out: Any) -> None:
    """Make a stored stability result's summary, comparison, summary.json, table.md and verdict.md again from its
    runs/*/runs.csv, knn.csv (recall, seconds per run) and the record's context (no new runs)."""
    from ganeval.common import atomic_write_text
    from ganeval.studies.stored import read_record

    src, out = Path(src), Path(out)
    record = read_record(src)
    conf = float(record.config["confidence"])
    rows = pd.concat([pd.read_csv(p / "runs.csv") for p in sorted((src / "runs").iterdir())], ignore_index=True)
    rows["knn"] = rows["knn"].fillna("") if "knn" in rows else ""
    knn = pd.read_csv(src / "knn.csv")
    recall = {int(r["n"]): float(r["approx_recall"]) for _, r in knn.iterrows()
              if "approx_recall" in knn.columns and pd.notna(r["approx_recall"])}
    seconds = {f"n{int(r['n'])}-{c[len('seconds_per_run_'):]}": float(r[c]) for _, r in knn.iterrows()
               for c in knn.columns if c.startswith("seconds_per_run_") and pd.notna(r[c])}
    summary = summarize(rows, conf)
    comparison = compare(rows, conf)
    claims = verdict(summary, comparison, seconds, recall)
    if record.context is None:
        raise ValueError(f"{src / 'summary.json'} has no context (pools, machine) to write the verdict with")
    record.verdict = claims
    record.set_results(summary, record.stage_seconds)
    write_results(out, summary, comparison if len(comparison) else None, record, tables=False)
    atomic_write_text(out / "table.md", table_markdown(summary, comparison))
    atomic_write_text(out / "verdict.md", verdict_markdown(claims, summary, record.context))
