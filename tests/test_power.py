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
