"""FD∞ (Chong & Forsyth 2020, "Effectively unbiased FID and Inception Score and where to find them"): FID at
several sample sizes n_i, the least-squares line FID(n) = FD∞ + b/n, and its value at 1/n = 0.

As their code (`calculate_FID_infinity`) does it: the real statistics are fixed (here: the run's whole real
subsample), the generated set is drawn at `points` sizes spread evenly over [min_fraction·n, n] (their default
15 sizes from 5000 to 50000, i.e. min_fraction 0.1), each size an independent draw without replacement (their
`np.random.shuffle` before each), FID of each, and an ordinary least-squares fit in 1/n_i (their
`LinearRegression().fit(1/n, fid)`, intercept = FD∞).

In the protocol each run does this on its own subsamples, the draws taken from the run's generator, and stores
the intercept: the protocol's interval over runs then covers the fit's variation together with the
subsampling's. The library call `fd_inf` also returns the fit's own interval (the OLS standard error of the
intercept, a Student-t interval with points − 2 degrees of freedom), which treats the points as independent;
they share rows, so that interval is narrower than the truth: prefer the protocol's. KID needs no such
extrapolation: its estimator is unbiased.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, resolve_device
from ganeval.metrics.fid import FidStatistics, fid_from_statistics, fid_statistics, reach
from ganeval.metrics.memory import covariances
from ganeval.metrics.parallel import run_jobs
from ganeval.metrics.registry import GramHook, GramTap, Metric, PairWork, integer, option, real, register_metric
from ganeval.metrics.validation import check_same_dim, load_features

MAX_POINTS = 1000  # each point is one FID (a D×D eigenproblem): beyond this a run takes minutes for no gain
OPTIONS = (
    option("points", 15, (lambda v: integer(2)[0](v) and v <= MAX_POINTS, f"an integer from 2 to {MAX_POINTS}"),
           "sample sizes the line is fitted to (Chong & Forsyth: 15)"),
    option("min_fraction", 0.1, (lambda v: real()[0](v) and 0 < v <= 1, "a number in (0, 1]"),
           "smallest size as a fraction of the generated subsample (Chong & Forsyth: 5000 of 50000)"),
)
DEFAULTS = {o.name: o.default for o in OPTIONS}


def sizes(n: int, points: int, min_fraction: float) -> np.ndarray:
    """The sample sizes: `points` values spread evenly over [min_fraction·n, n], truncated to integers (their
    `np.linspace(5000, num_im, num_points).astype('int32')`)."""
    return np.linspace(min_fraction * n, n, points).astype(np.int64)


def check_sizes(n: int, points: int, min_fraction: float, where: str) -> None:
    """At least 2 rows per size (a covariance) and 2 distinct sizes (a line); ValueError naming the options."""
    s = sizes(n, points, min_fraction)
    if s[0] < 2 or len(np.unique(s)) < 2:
        raise ValueError(f"{where}: sizes {sorted(set(s.tolist()))} from n={n}, points={points}, min_fraction="
                         f"{min_fraction} need at least 2 rows each and 2 distinct sizes: raise min_fraction or the "
                         "sample size")


def draw(n: int, ns: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Rows of each size, each drawn afresh without replacement (a permutation's first n_i rows)."""
    return [rng.permutation(n)[:k] for k in ns]


@dataclass(frozen=True)
class LineFit:
    """The least-squares line y = intercept + slope·(1/n), the intercept's standard error and t interval."""

    intercept: float
    slope: float
    stderr: float
    ci_low: float
    ci_high: float


def fit(ns: Sequence[int] | np.ndarray, values: Sequence[float], confidence: float = 0.99) -> LineFit:
    """OLS of values on 1/n (float64) and the intercept's Student-t interval (NaN with only 2 points)."""
    from scipy import stats

    x = 1.0 / np.asarray(ns, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    slope = float(((x - xm) * (y - ym)).sum() / sxx)
    intercept = float(ym - slope * xm)
    k = len(x)
    if k <= 2:
        return LineFit(intercept, slope, math.nan, math.nan, math.nan)
    resid = y - (intercept + slope * x)
    s2 = float((resid**2).sum()) / (k - 2)
    se = math.sqrt(s2 * (1.0 / k + xm * xm / sxx))
    t = float(stats.t.ppf(0.5 + confidence / 2, k - 2))
    return LineFit(intercept, slope, se, intercept - t * se, intercept + t * se)


@dataclass
class FdInfStatistics:
    """A set's rows and its FID statistics (used when it is the real set of a pair)."""

    x: torch.Tensor
    stats: FidStatistics


def _fd(real: FidStatistics, y: torch.Tensor, rows: np.ndarray) -> float:
    """FID of the real statistics against y's rows `rows`; a subset of at most D rows brings its own (smaller)
    square-root factor, an m×m eigenproblem instead of D×D (FD is symmetric in the two sets)."""
    sub = y[torch.as_tensor(rows, device=y.device)]
    stats = fid_statistics(sub, product_dtype=torch.promote_types(sub.dtype, torch.float32))
    return fid_from_statistics(stats, real) if stats.centred is not None else fid_from_statistics(real, stats)


def work(real: FdInfStatistics, fake: torch.Tensor, o: Mapping[str, Any], rng: np.random.Generator
         ) -> tuple[np.ndarray, list[Any]]:
    """The sizes and one FID job per size (real statistics shared; the real factor made once, before the jobs)."""
    ns = sizes(fake.shape[0], o["points"], o["min_fraction"])
    rows = draw(fake.shape[0], ns, rng)
    real.stats.factor()
    return ns, [partial(_fd, real.stats, fake, r) for r in rows]


def fd_inf(x: ArrayLike, y: ArrayLike, points: int = DEFAULTS["points"],
           min_fraction: float = DEFAULTS["min_fraction"], seed: int | np.random.Generator = 0,
           confidence: float = 0.99, device: str | torch.device | None = None) -> dict[str, Any]:
    """FD∞ of generated features y against real features x: FID at several sizes of y, extrapolated to 1/n = 0.

    Args:
        x: The real features, N×D (their statistics fixed).
        y: The generated features, M×D, drawn at `points` sizes.
        points: How many sizes, spread evenly over [min_fraction·M, M].
        min_fraction: The smallest size as a fraction of M.
        seed: The seed (or a `numpy.random.Generator`) of y's draws.
        confidence: The level of the fit's own interval.
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        {"value": the intercept FD∞, "slope", "stderr", "ci_low", "ci_high" (the fit's t interval at
        `confidence`, narrower than the truth: the points share rows), "sizes", "fids"}.

    Examples:
        >>> from ganeval.metrics import fd_inf
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> r = fd_inf(x, y, points=5, min_fraction=0.5)
        >>> round(r["value"], 3), len(r["fids"])
        (0.963, 5)
    """
    o = METRIC.resolve({"points": points, "min_fraction": min_fraction}, where="")
    dev = resolve_device(device, x, y)
    reaches = [("FD∞", lambda peak, n, d: reach(peak, n, d))]
    xt = load_features(x, "x", dev, min_rows=2, reaches=reaches)
    yt = load_features(y, "y", dev, min_rows=2, reaches=reaches)
    check_same_dim(xt.shape[1], yt.shape[1], "FD∞")
    check_sizes(yt.shape[0], o["points"], o["min_fraction"], "fd_inf")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    real = FdInfStatistics(xt, fid_statistics(xt, product_dtype=torch.promote_types(xt.dtype, torch.float32)))
    ns, jobs = work(real, yt, o, rng)
    fids = [float(v) for v in run_jobs(jobs, dev)]
    line = fit(ns, fids, confidence)
    return {"value": line.intercept, "slope": line.slope, "stderr": line.stderr, "ci_low": line.ci_low,
            "ci_high": line.ci_high, "sizes": ns.tolist(), "fids": fids}


def _prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None) -> FdInfStatistics:
    return FdInfStatistics(x, fid_statistics(x, product_dtype=torch.promote_types(x.dtype, torch.float32)))


def _pair(a: FdInfStatistics, b: FdInfStatistics, o: Mapping[str, Any], rng: np.random.Generator) -> PairWork:
    """The generated subsample's subsets drawn from `rng` now, one FID job each; the value is the fit's intercept."""
    ns, jobs = work(a, b.x, o, rng)
    return PairWork(jobs, lambda results: fit(ns, [float(v) for v in results]).intercept)


def _check_sample_size(sample_size: int, o: Mapping[str, Any]) -> None:
    check_sizes(sample_size, o["points"], o["min_fraction"], "metrics.fd_inf")


METRIC = register_metric(Metric(
    name="fd_inf", options=OPTIONS, prepare=_prepare, pair=_pair, check_sample_size=_check_sample_size,
    label="FD∞", label_tex=r"FD$_\infty$", reach=lambda peak, n, d, o: reach(peak, n, d), memory=covariances,
    doc="FID extrapolated to infinitely many generated samples: the OLS line in 1/n at 1/n = 0 (Chong & Forsyth 2020)",
))
