"""The stability study's grid (sample sizes, kNN methods, the parts stored under runs/) and its summaries
(per-n intervals, the paired same-vs-different comparison, variance ratios, log-log slopes)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, cast

import numpy as np
import pandas as pd

from ganeval.protocol import Settings
from ganeval.results import paired_comparison, t_interval

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

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
    """The stores of the grid, each with its own validated settings (n as sample size, KID subsets of ≤ n rows).
    metrics.imd.nndescent goes to the approx parts only: the exact parts keep the identity of a run without it."""
    chosen = cast("Metrics", settings.metrics).as_dict()
    parts = []
    for n in sizes:
        if "imd" in chosen:
            for method in methods:
                imd = {**chosen["imd"], "knn": method}
                if method == "exact":
                    imd.pop("nndescent", None)
                parts.append(Part(n, f"imd-{method}", method, dataclasses.replace(
                    settings, sample_size=n, metrics={"imd": imd})))
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
    k, params = int(cast("Metrics", settings.metrics)["imd"]["k"]), cast("Metrics", settings.metrics)["imd"]["nndescent"]
    return knn_recall(approx_knn(x, k, params=params), brute_force_knn(x, k))


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
