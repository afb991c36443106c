"""Confidence intervals over subsample runs: the Student-t interval of a mean and the paired-t difference.

The interval covers the variation over random subsamples of the two pools (and over IMD's probes),
which is what repeating the protocol with another seed would change; it says nothing about training seeds.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np

COVERAGE_NOTE = (
    "Each interval is a Student-t confidence interval of the mean over runs; it covers the variation "
    "over random subsamples of the real and generated pools and over IMD's random probes, "
    "not the variation over training seeds or over the pools themselves."
)


def decimals_for(half_width: float) -> int:
    """Decimals that show an interval's half-width to two significant digits (the precision a value has): every view
    of a mean ± half-width (the terminal, report.html's CSV view, table.md/.tex) rounds both to it."""
    if not math.isfinite(half_width) or half_width <= 0:
        return 3
    return max(0, 1 - math.floor(math.log10(half_width)))


def check_confidence(confidence: float) -> None:
    """Refuse a confidence level outside (0, 1) before any work, saying what a valid one looks like."""
    number = isinstance(confidence, (int, float, np.integer, np.floating)) and not isinstance(confidence, bool)
    if not number or not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1 (e.g. 0.99), got {confidence!r}")


@lru_cache(maxsize=1024)
def _t_quantile(confidence: float, dof: int) -> float:
    from scipy.stats import t as student_t

    return float(student_t.ppf(0.5 + confidence / 2.0, dof))


def t_interval(values: Sequence[float] | np.ndarray, confidence: float = 0.99) -> dict[str, float]:
    """Mean, std (ddof=1), Student-t interval of the mean and run count of `values`.

    With one value the std and interval are NaN (an interval needs at least two runs).
    """
    check_confidence(confidence)
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        raise ValueError("values is empty: an interval needs at least one run")
    if not np.all(np.isfinite(x)):
        raise ValueError("values contains NaN or infinity: drop or fix the failed runs first")
    n = int(x.size)
    mean = float(x.mean())
    if n < 2:
        nan = float("nan")
        return {"mean": mean, "std": nan, "ci_low": nan, "ci_high": nan, "half_width": nan, "n_runs": n}
    std = float(x.std(ddof=1))
    half = _t_quantile(confidence, n - 1) * std / math.sqrt(n)
    return {
        "mean": mean,
        "std": std,
        "ci_low": mean - half,
        "ci_high": mean + half,
        "half_width": half,
        "n_runs": n,
    }


def paired_t_mde(std: float, n: int, confidence: float = 0.99, power: float = 0.8) -> float:
    """Minimum detectable effect of the two-sided paired t test (exact noncentral t, `ganeval.results.power`): the
    true mean difference the test at `confidence` finds significant with probability `power`, given the measured std
    of the paired differences over `n` pairs; NaN with fewer than 2 pairs. A difference below it was never likely
    to show."""
    from ganeval.results.power import paired_t_mde as exact

    check_confidence(confidence)
    return exact(std, n, confidence, power)


def paired_comparison(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, confidence: float = 0.99
) -> dict[str, float]:
    """Paired-t interval of mean(a - b) over runs that share their real subsample, with its two-sided p-value and
    its minimum detectable effect (`mde`, see `paired_t_mde`).

    `a[i]` and `b[i]` must come from the same run; the interval excludes 0 when the models differ
    at this confidence level.
    """
    check_confidence(confidence)
    xa = np.asarray(a, dtype=np.float64).ravel()
    xb = np.asarray(b, dtype=np.float64).ravel()
    if xa.shape != xb.shape:
        raise ValueError(
            f"a and b must hold one value per shared run (same length), got {xa.size} and {xb.size}"
        )
    d = xa - xb
    out = t_interval(d, confidence)
    n = int(out["n_runs"])
    if n >= 2 and out["std"] > 0:
        from scipy.stats import t as student_t

        tstat = out["mean"] / (out["std"] / math.sqrt(n))
        p = float(2.0 * student_t.sf(abs(tstat), n - 1))
    elif n >= 2:
        p = 1.0 if out["mean"] == 0 else 0.0
    else:
        p = float("nan")
    return {
        "diff_mean": out["mean"],
        "diff_std": out["std"],
        "ci_low": out["ci_low"],
        "ci_high": out["ci_high"],
        "half_width": out["half_width"],
        "p_value": p,
        "mde": paired_t_mde(out["std"], n, confidence),
        "n_runs": n,
    }
