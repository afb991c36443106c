"""How many pairs (training seeds, or runs) a paired t-test needs to resolve a difference: the power calculation
behind the verdict's "would need about N seeds", from the measured mean and standard deviation of the differences.

Power of the two-sided paired t-test at level alpha with n pairs, effect size d = |mean| / std: with
T ~ noncentral t(n - 1, d·√n), power = P(T > t*) + P(T < -t*), t* the (1 - alpha/2) quantile of t(n - 1).
The measured d is itself noisy (a few seeds give a rough std), so N is an estimate, stated as one.
"""

from __future__ import annotations

import math

MOST = 100_000  # above this, "more than" (the effect is too small to resolve in practice)


def paired_t_power(effect: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired (one-sample) t-test with `n` pairs at level `alpha` for effect size |mean|/std."""
    from scipy.stats import nct
    from scipy.stats import t as student_t

    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 pairs, got {n}")
    df = n - 1
    crit = float(student_t.ppf(1.0 - alpha / 2.0, df))
    nc = abs(effect) * math.sqrt(n)
    return float(nct.sf(crit, df, nc) + nct.cdf(-crit, df, nc))


def pairs_needed(mean: float, std: float, confidence: float, power: float = 0.8) -> int | None:
    """The smallest n (≥ 2) whose paired t-test at `confidence` detects mean difference `mean` with difference
    std `std` with probability `power`; None when no n up to MOST does (or the measured effect is 0)."""
    if not (0 < confidence < 1 and 0 < power < 1):
        raise ValueError(f"confidence and power must lie in (0, 1), got {confidence} and {power}")
    if not (math.isfinite(mean) and math.isfinite(std)) or mean == 0:
        return None
    if std <= 0:
        return 2
    effect, alpha = abs(mean) / std, 1.0 - confidence
    if paired_t_power(effect, MOST, alpha) < power:
        return None
    lo, hi = 2, 2
    while paired_t_power(effect, hi, alpha) < power:  # power grows with n: bracket, then bisect
        lo, hi = hi, min(hi * 2, MOST)
    while lo < hi:
        mid = (lo + hi) // 2
        if paired_t_power(effect, mid, alpha) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo
