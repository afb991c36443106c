"""The seed count of the verdict: the paired t-test's power, against a direct simulation with scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ganeval.results.power import MOST, paired_t_power, pairs_needed


def simulated_power(effect: float, n: int, alpha: float, trials: int = 40_000, seed: int = 0) -> float:
    """The fraction of simulated N(effect, 1) samples of n pairs whose scipy.stats.ttest_1samp rejects at alpha."""
    d = np.random.default_rng(seed).normal(effect, 1.0, size=(trials, n))
    return float(np.mean(stats.ttest_1samp(d, 0.0, axis=1).pvalue < alpha))


@pytest.mark.parametrize("effect, n, alpha", [(0.5, 10, 0.05), (1.2, 5, 0.01), (0.3, 40, 0.01), (2.0, 3, 0.01)])
def test_power_matches_simulation(effect: float, n: int, alpha: float) -> None:
    got = paired_t_power(effect, n, alpha)
    sim = simulated_power(effect, n, alpha)
    assert abs(got - sim) < 4 * np.sqrt(sim * (1 - sim) / 40_000) + 1e-3


def test_no_effect_power_is_alpha() -> None:
    assert paired_t_power(0.0, 12, 0.01) == pytest.approx(0.01, rel=1e-9)


@pytest.mark.parametrize("mean, std, confidence", [(4.1, 2.0, 0.99), (0.97, 9.1, 0.99), (1.0, 1.0, 0.95)])
def test_pairs_needed_is_the_smallest_n_with_power(mean: float, std: float, confidence: float) -> None:
    n = pairs_needed(mean, std, confidence)
    alpha = 1 - confidence
    assert paired_t_power(mean / std, n, alpha) >= 0.8
    if n > 2:
        assert paired_t_power(mean / std, n - 1, alpha) < 0.8
    if n <= 200:  # and the simulation agrees: the power at n reaches 0.8, at n - 1 it does not (within noise)
        assert simulated_power(mean / std, n, alpha) > 0.8 - 0.01
        if n > 2:
            assert simulated_power(mean / std, n - 1, alpha) < 0.8 + 0.01


def test_pairs_needed_edges() -> None:
    assert pairs_needed(0.0, 1.0, 0.99) is None
    assert pairs_needed(1.0, 0.0, 0.99) == 2
    assert pairs_needed(1e-6, 1.0, 0.99) is None  # beyond MOST pairs
    assert pairs_needed(-4.1, 2.0, 0.99) == pairs_needed(4.1, 2.0, 0.99)
    assert MOST > 1000
    with pytest.raises(ValueError):
        pairs_needed(1.0, 1.0, 1.5)


# An independent computation of the noncentral t's tails: T = (Z + λ) / √(V/df), V ~ χ²(df), so
# P(T > c) = E_V[Φ(λ − c·√(V/df))], integrated by mpmath over V's density (no scipy distribution involved).
def mp_upper(c: float, df: int, lam: float) -> float:
    import mpmath as mp

    with mp.workdps(30):
        k = mp.mpf(df) / 2
        dens = lambda v: mp.exp((k - 1) * mp.log(v) - v / 2 - k * mp.log(2) - mp.loggamma(k))  # noqa: E731
        f = lambda v: mp.ncdf(lam - c * mp.sqrt(v / df)) * dens(v)  # noqa: E731
        return float(mp.quad(f, [0, df / 4, df, 2 * df + 10, 4 * df + 40, mp.inf]))


def mp_power(effect: float, n: int, alpha: float) -> float:
    import mpmath as mp

    with mp.workdps(30):
        c = float(mp.findroot(lambda x: mp.betainc(mp.mpf(n - 1) / 2, mp.mpf(1) / 2, 0,
                                                     (n - 1) / ((n - 1) + x * x), regularized=True) - alpha, 3.0))
    lam = effect * np.sqrt(n)
    return mp_upper(c, n - 1, lam) + mp_upper(c, n - 1, -lam)


def test_critical_value_and_power_of_the_independent_computation() -> None:
    """The mpmath route itself: with λ = 0 the power is alpha, and at df = 1 it matches a t(1) = Cauchy closed form."""
    assert mp_power(0.0, 6, 0.01) == pytest.approx(0.01, abs=1e-12)
    c = np.tan(np.pi / 2 * (1 - 0.05))  # the two-sided 5 % critical value of t(1)
    assert mp_upper(c, 1, 0.0) == pytest.approx(0.025, abs=1e-12)


@pytest.mark.parametrize("alpha", [0.01, 0.05])
@pytest.mark.parametrize("effect", [0.6, 1.0, 2.0, 3.0, 4.5, 6.0, 8.0, 12.0])
def test_pairs_needed_matches_an_independent_computation(effect: float, alpha: float) -> None:
    """(issue #36) Over a grid of effect sizes, the exact count; where scipy's nct.cdf is NaN far in the lower tail
    the old code gave 7, 2 and 2 pairs at alpha = 0.01 for effects 3, 6 and 8 (exact: 5, 4, 3)."""
    n = pairs_needed(effect, 1.0, 1 - alpha)
    assert mp_power(effect, n, alpha) >= 0.8  # enough pairs
    assert n == 2 or mp_power(effect, n - 1, alpha) < 0.8  # and the fewest


def test_pairs_needed_where_scipy_lower_tail_is_nan() -> None:
    assert [pairs_needed(e, 1.0, 0.99) for e in (3.0, 6.0, 8.0)] == [5, 4, 3]


@pytest.mark.parametrize("effect, n", [(3.0, 6), (6.0, 2), (6.0, 5), (8.0, 3), (8.0, 7), (0.3, 40), (1.5, 4)])
def test_power_matches_an_independent_computation(effect: float, n: int) -> None:
    assert paired_t_power(effect, n, 0.01) == pytest.approx(mp_power(effect, n, 0.01), abs=1e-9)


@pytest.mark.parametrize("n, confidence", [(3, 0.99), (4, 0.99), (10, 0.95), (30, 0.99)])
def test_mde_is_exact(n: int, confidence: float) -> None:
    """The minimum detectable effect has exactly 80 % power (mpmath), and at 2 degrees of freedom the central-t
    approximation (t_{1-α/2} + t_{0.8}) / √n that it replaces understates it by over 10 %."""
    from ganeval.results.intervals import paired_t_mde as mde_intervals
    from ganeval.results.power import paired_t_mde

    std = 2.5
    mde = paired_t_mde(std, n, confidence)
    assert mde_intervals(std, n, confidence) == mde  # one power module
    assert mp_power(mde / std, n, 1 - confidence) == pytest.approx(0.8, abs=1e-8)
    central = (stats.t.ppf(0.5 + confidence / 2, n - 1) + stats.t.ppf(0.8, n - 1)) * std / np.sqrt(n)
    if n == 3:
        assert mde > 1.10 * central


def test_effect_size_interval_ends_are_exact() -> None:
    """At each end λ of the interval, P(T ≤ t_obs | λ) is 1 − tail and tail (mpmath), for a measured effect of 2.056
    over 3 pairs (the quickstart's FD_pixels: about 7 pairs, 4 to unbounded by its 99 % interval)."""
    from ganeval.results.power import effect_size_interval, needed_text, pairs_needed_range

    mean, std, n = 4.0975, 1.9927, 3
    lo, hi = effect_size_interval(mean, std, n, 0.99)
    tobs = mean / std * np.sqrt(n)
    assert 1 - mp_upper(tobs, n - 1, lo * np.sqrt(n)) == pytest.approx(0.995, abs=1e-8)
    assert 1 - mp_upper(tobs, n - 1, hi * np.sqrt(n)) == pytest.approx(0.005, abs=1e-8)
    assert lo < 0 < mean / std < hi
    about, fewest, most = pairs_needed_range(mean, std, n, 0.99)
    assert (about, fewest, most) == (7, 4, None) and fewest == pairs_needed(hi, 1.0, 0.99)
    assert needed_text(about, fewest, most) == "about 7 (4 to unbounded)"  # an end across zero: no count suffices
    assert needed_text(about, fewest, 250) == "about 7 (4 to more than 100)"
    assert pairs_needed_range(mean, std, n, 0.99, tests=3) == (8, 5, None)  # (issue #46) at the Holm level 0.01/3
    neg = effect_size_interval(-mean, std, n, 0.99)
    assert neg == pytest.approx((-hi, -lo), abs=1e-8)


def test_effect_size_interval_covers() -> None:
    """Coverage by simulation: the 90 % interval holds the true effect size 0.8 in about 90 % of 300 samples of 6 pairs."""
    from ganeval.results.power import effect_size_interval

    rng = np.random.default_rng(1)
    hits = []
    for _ in range(300):
        d = rng.normal(0.8, 1.0, 6)
        lo, hi = effect_size_interval(d.mean(), d.std(ddof=1), 6, 0.9)
        hits.append(lo <= 0.8 <= hi)
    assert abs(np.mean(hits) - 0.9) < 4 * np.sqrt(0.09 / 300)


@pytest.mark.parametrize("mean, std", [(float("nan"), 1.0), (1.0, float("nan")), (float("inf"), 1.0), (1.0, float("inf"))])
def test_pairs_needed_of_a_non_finite_measurement_is_none(mean: float, std: float) -> None:
    """A mean difference or spread that is not a finite number says nothing about the pairs needed: None."""
    assert pairs_needed(mean, std, 0.99) is None
