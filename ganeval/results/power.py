"""The power of the two-sided paired t-test, exactly (noncentral t): its minimum detectable effect, the pairs it
needs, and how far the effect size measured from a few pairs can be trusted. The one power module of ganeval.

Power at level alpha with n pairs, effect size d = |mean| / std: with T ~ noncentral t(n − 1, d·√n),
power = P(T > t*) + P(T < −t*), t* the (1 − alpha/2) quantile of t(n − 1). The lower tail is taken as the upper tail
of −T (noncentrality −d·√n): scipy's `nct.cdf` returns NaN far in that tail, its `sf` returns the (tiny) value.
The measured d is itself noisy (a few pairs give a rough std), so a count from it is an estimate, stated with the
range its confidence interval gives (`pairs_needed_range`).
"""

from __future__ import annotations

import math

MOST = 100_000  # above this, "more than" (the effect is too small to resolve in practice)
SHOWN_MOST = 100  # a range's end above this is written "more than 100"


def _check_alpha(alpha: float) -> None:
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")


def paired_t_power(effect: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired (one-sample) t-test with `n` pairs at level `alpha` for effect size |mean|/std."""
    from scipy.stats import nct
    from scipy.stats import t as student_t

    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 pairs, got {n}")
    _check_alpha(alpha)
    df = n - 1
    crit = float(student_t.ppf(1.0 - alpha / 2.0, df))
    nc = abs(float(effect)) * math.sqrt(n)
    upper, lower = float(nct.sf(crit, df, nc)), float(nct.sf(crit, df, -nc))
    power = upper + lower
    if not math.isfinite(power):
        raise ValueError(f"the noncentral t's tails are not finite at effect {effect}, n = {n}, alpha = {alpha}")
    return min(1.0, power)


def paired_t_mde_effect(n: int, alpha: float, power: float = 0.8) -> float:
    """The effect size |mean|/std that the two-sided paired t-test with `n` pairs at level `alpha` detects with
    probability `power` (exact, noncentral t); NaN with fewer than 2 pairs."""
    from scipy.optimize import brentq

    if n < 2:
        return float("nan")
    _check_alpha(alpha)
    if not alpha < power < 1.0:
        raise ValueError(f"power must lie in (alpha, 1) = ({alpha}, 1), got {power}")
    hi = 1.0
    while paired_t_power(hi, n, alpha) < power:
        hi *= 2.0
    return float(brentq(lambda e: paired_t_power(e, n, alpha) - power, 0.0, hi, xtol=1e-12, rtol=1e-12))


def paired_t_mde(std: float, n: int, confidence: float = 0.99, power: float = 0.8) -> float:
    """Minimum detectable effect of the two-sided paired t-test at `confidence` with `power`: the true mean difference
    it finds significant with that probability, given the measured std of the differences over `n` pairs (runs or
    training seeds), from the exact noncentral t; NaN with fewer than 2 pairs or a non-finite std."""
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1 (e.g. 0.99), got {confidence!r}")
    if n < 2 or not math.isfinite(float(std)):
        return float("nan")
    return paired_t_mde_effect(n, 1.0 - float(confidence), power) * float(std)


def one_sided_mde(std: float, n: int, alpha: float, power: float = 0.8) -> float:
    """Minimum detectable effect of the one-sided paired t-test at level `alpha`: the two-sided test at 2·alpha has its
    critical value, and the opposite tail adds under 1e-6 of power at 80 % (NaN as `paired_t_mde`)."""
    _check_alpha(2.0 * float(alpha))
    return paired_t_mde(std, n, 1.0 - 2.0 * float(alpha), power)


def pairs_needed(mean: float, std: float, confidence: float, power: float = 0.8) -> int | None:
    """The smallest n (≥ 2) whose paired t-test at `confidence` detects mean difference `mean` with difference
    std `std` with probability `power`; None when no n up to MOST does (or the measured effect is 0)."""
    if not (0 < confidence < 1 and 0 < power < 1):
        raise ValueError(f"confidence and power must lie in (0, 1), got {confidence} and {power}")
    if not (math.isfinite(mean) and math.isfinite(std)) or mean == 0:
        return None
    if std <= 0:
        return 2
    return _smallest_n(abs(mean) / std, 1.0 - confidence, power)


def _smallest_n(effect: float, alpha: float, power: float) -> int | None:
    if effect <= 0 or paired_t_power(effect, MOST, alpha) < power:
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


def effect_size_interval(mean: float, std: float, n: int, confidence: float) -> tuple[float, float]:
    """Exact confidence interval of the true effect size mean/std from `n` pairs (inverting the noncentral t of the
    observed t statistic in its noncentrality), signed like `mean`; (NaN, NaN) with fewer than 2 pairs or std ≤ 0."""
    from scipy.optimize import brentq
    from scipy.stats import nct

    if n < 2 or not (math.isfinite(mean) and math.isfinite(std)) or std <= 0:
        return float("nan"), float("nan")
    df, tobs = n - 1, float(mean) / float(std) * math.sqrt(n)
    tail = (1.0 - float(confidence)) / 2.0

    def below(lam: float) -> float:  # P(T ≤ tobs | λ), falling as λ grows (1 − sf where scipy's cdf is NaN)
        value = float(nct.cdf(tobs, df, lam))
        return value if math.isfinite(value) else 1.0 - float(nct.sf(tobs, df, lam))

    def noncentrality(p: float) -> float:  # the λ with P(T ≤ tobs | λ) = p
        lo, hi = tobs - 1.0, tobs + 1.0
        while below(lo) < p:
            lo -= 2.0 * (tobs - lo)
        while below(hi) > p:
            hi += 2.0 * (hi - tobs)
        return float(brentq(lambda lam: below(lam) - p, lo, hi, xtol=1e-10))

    return noncentrality(1.0 - tail) / math.sqrt(n), noncentrality(tail) / math.sqrt(n)


def pairs_needed_range(mean: float, std: float, n: int, confidence: float, power: float = 0.8,
                       tests: int = 1) -> tuple[int | None, int | None, int | None]:
    """(about, fewest, most): the pairs a paired t-test needs for `power` at the Holm level of a family of `tests`
    (1 − confidence)/tests (its strictest step; the plain level with one test), from the measured effect size and
    from the two ends of its exact interval at `confidence` (`effect_size_interval`); the end nearer zero gives
    `most`. None where no n up to MOST would do (an end at or across zero: unbounded)."""
    if tests < 1:
        raise ValueError(f"tests must be at least 1, got {tests}")
    level = 1.0 - (1.0 - confidence) / tests
    about = pairs_needed(mean, std, level, power)
    lo, hi = effect_size_interval(mean, std, n, confidence)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return about, None, None
    near, far = sorted((abs(lo), abs(hi))) if lo * hi > 0 else (0.0, max(abs(lo), abs(hi)))
    alpha = 1.0 - level
    return about, _smallest_n(far, alpha, power), _smallest_n(near, alpha, power)


def needed_text(about: int | None, fewest: int | None, most: int | None) -> str:
    """'about 8 (5 to unbounded)': a count and its range as the verdict writes them, an end above SHOWN_MOST as
    'more than 100', an end no count reaches (None: the interval at or across zero) as 'unbounded' ('' when `about`
    is None)."""
    if about is None:
        return ""

    def show(k: int | None) -> str:
        return "unbounded" if k is None else f"more than {SHOWN_MOST}" if k > SHOWN_MOST else str(k)

    if fewest is None and most is None:
        return f"about {about}"
    return f"about {about} ({show(fewest)} to {show(most)})"
