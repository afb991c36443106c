"""(issue #55) Rules tested where they decide: every practical threshold named with its source and tried across its
declared range; each rule of the five studies and of paper_checks given effects just inside and just outside its
threshold (a wrong statistic, side or boundary changes the label), the curve rule given curves whose settling epoch is
known, with noise added, and the exact ground truths checked against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ganeval.results.thresholds import OURS, PAPER, Threshold, across, all_hold, interval_label
from ganeval.results.verdicts import (CONTRADICTED, DEPENDS, HOLDS, NOT_TESTABLE, STAND_IN, Claim, claims_table,
                                      one_sided_p, sign_label)

# ------------------------------------------------------------------------------------------ the threshold helper

TH = Threshold("CV below", 0.2, 0.1, 0.5, f"{OURS}: for the test")


def test_a_threshold_names_its_source_and_holds_its_value_inside_its_range() -> None:
    with pytest.raises(ValueError, match="source must start with"):
        Threshold("x", 0.2, 0.1, 0.3, "a number we liked")
    with pytest.raises(ValueError, match="outside its range"):
        Threshold("x", 0.4, 0.1, 0.3, f"{OURS}: why")
    assert Threshold("x", 1e-8, 1e-8, 1e-8, f"{PAPER}: “quoted”").text() == "x 1e−08 (the paper: “quoted”)"
    assert TH.text() == "CV below 0.2 (ours: for the test; declared range 0.1–0.5)"
    pct = Threshold("within ±", 0.05, 0.02, 0.1, f"{OURS}: why", unit=" %", scale=100.0)
    assert pct.show(0.05) == "5 %" and pct.span(0.02, 0.1) == "2–10 %"


def test_interval_label_at_its_boundaries() -> None:
    eps = 1e-9
    assert interval_label(0.1, 0.2 - eps, 0.2, "below") == HOLDS
    assert interval_label(0.1, 0.2 + eps, 0.2, "below") == NOT_TESTABLE  # across τ: never contradicted
    assert interval_label(0.2 + eps, 0.3, 0.2, "below") == CONTRADICTED
    assert interval_label(0.2 + eps, 0.3, 0.2, "above") == HOLDS
    assert interval_label(0.1, 0.2 - eps, 0.2, "above") == CONTRADICTED
    assert interval_label(-0.2 + eps, 0.2 - eps, 0.2, "within") == HOLDS
    assert interval_label(-0.2 - eps, 0.1, 0.2, "within") == NOT_TESTABLE
    assert interval_label(0.2 + eps, 0.5, 0.2, "within") == CONTRADICTED
    assert interval_label(-0.5, -0.2 - eps, 0.2, "within") == CONTRADICTED
    assert interval_label(float("nan"), 1.0, 0.2, "below") == NOT_TESTABLE
    assert all_hold([HOLDS, HOLDS]) == HOLDS and all_hold([HOLDS, NOT_TESTABLE]) == NOT_TESTABLE
    assert all_hold([NOT_TESTABLE, CONTRADICTED, HOLDS]) == CONTRADICTED


def test_across_finds_each_change_of_label_exactly() -> None:
    """An interval [0.19, 0.45] against "below τ", τ ∈ [0.1, 0.5]: contradicted up to 0.19, not testable to 0.45, then
    holds; the cuts located to 1e-6 (not to the grid's step)."""
    res = across(lambda tau: interval_label(0.19, 0.45, tau, "below"), TH, points=11)
    assert [s[0] for s in res.segments] == [CONTRADICTED, NOT_TESTABLE, HOLDS] and res.verdict == DEPENDS
    assert res.segments[0][1] == 0.1 and res.segments[-1][2] == 0.5
    assert res.segments[0][2] == pytest.approx(0.19, abs=1e-6) and res.segments[1][2] == pytest.approx(0.45, abs=1e-6)
    assert res.text() == "contradicted for 0.1–0.19; not testable here for 0.19–0.45; holds for 0.45–0.5"
    one = across(lambda tau: interval_label(0.01, 0.05, tau, "below"), TH)
    assert one.verdict == HOLDS and one.text() == "holds for all of 0.1–0.5"
    named = Threshold("from", 1, 1, 3, f"{OURS}: why", names=("a", "b", "c", "d"))
    res = across(lambda i: HOLDS if i >= 2 else NOT_TESTABLE, named)
    assert res.text() == "not testable here for b; holds for c–d" and res.verdict == DEPENDS


def test_a_claim_that_depends_says_where_and_its_table_shows_the_ranges() -> None:
    with pytest.raises(ValueError, match="across="):
        Claim("c", "s", DEPENDS, "rule", "τ")
    c = Claim("c", "s", DEPENDS, "rule", TH.text(), across="holds for 0.1–0.2; contradicted for 0.2–0.5")
    table = claims_table([c], 0.99)
    assert "| label across the declared range |" in table and "| holds for 0.1–0.2; contradicted for 0.2–0.5 |" in table
    assert "*depends on the threshold*" in table
    plain = claims_table([Claim("c", "s", HOLDS, "rule", "τ")], 0.99)  # no range declared: the table as before
    assert "across the declared range" not in plain and "depends on the threshold" not in plain
    assert "across" not in c.record() or c.record()["across"] == c.across
    assert "across" not in Claim("c", "s", HOLDS, "rule", "τ").record()


def test_one_sided_p_and_sign_label_at_the_level() -> None:
    rng = np.random.default_rng(0)
    z = rng.standard_normal(12)
    z = (z - z.mean()) / z.std(ddof=1)  # mean 0, sd 1: the t statistic is shift · √12
    crit = stats.t.ppf(0.99, 11) / math.sqrt(12)  # the shift whose one-sided p is exactly 0.01
    assert sign_label(z + crit * 1.001, 0.99)[0] == HOLDS and sign_label(z + crit * 0.999, 0.99)[0] == NOT_TESTABLE
    assert sign_label(z - crit * 1.001, 0.99)[0] == CONTRADICTED
    up, down = one_sided_p(z + 0.3)
    assert up == pytest.approx(stats.ttest_1samp(z + 0.3, 0, alternative="greater").pvalue)
    assert up + down == pytest.approx(1.0)
    assert one_sided_p(np.full(5, 2.0)) == (0.0, 1.0) and one_sided_p(np.full(5, -2.0)) == (1.0, 0.0)


def test_one_sided_mde_is_the_power_of_the_one_sided_test() -> None:
    from ganeval.results.power import one_sided_mde

    for n, alpha in ((10, 0.01 / 4), (10, 0.01 / 12), (30, 0.01)):
        mde = one_sided_mde(1.0, n, alpha)
        crit = stats.t.ppf(1 - alpha, n - 1)
        assert stats.nct.sf(crit, n - 1, mde * math.sqrt(n)) == pytest.approx(0.8, abs=1e-5)  # one tail: 80 %


# ----------------------------------------------------------------------------------------------- nn_internals

def settle_curves(knee: float, noise: float, sims: int, seed: int = 0, epochs: int = 20, drop: float = 10.0) -> np.ndarray:
    """Hinge curves: a straight fall of `drop` to a plateau at `knee`, plus Gaussian noise of sd noise·drop."""
    rng = np.random.default_rng(seed)
    e = np.arange(epochs + 1)
    return 1 + drop * np.maximum(0, knee - e) / max(knee, 1e-9) + rng.normal(0, noise * drop, (sims, epochs + 1))


def band_rule(curve: np.ndarray) -> int:
    """The rule the study used before issue #55 (the first epoch after which the curve stays within 10 % of its range
    of its end): kept here to show what it reads on noisy curves."""
    end = float(np.mean(curve[-3:]))
    outside = np.flatnonzero(np.abs(curve - end) > 0.1 * float(np.ptp(curve)))
    return min(int(outside[-1] + 1), len(curve) - 1) if outside.size else 0


@pytest.mark.parametrize("knee", [2.0, 6.0, 12.0])
def test_settle_epoch_finds_a_known_knee_through_noise(knee: float) -> None:
    """Curves settled at epoch 2, 6 and 12 with noise of 17 % of their drop (IMD's plateau noise on the digits): the
    hinge finds the knee (mean within 1 epoch, 80 % of curves within 3), where the band rule reads about 18 for
    every one of them."""
    from ganeval.studies.nn_internals import settle_epoch

    curves = settle_curves(knee, 0.17, 60)
    got = np.array([settle_epoch(c) for c in curves])
    assert abs(got.mean() - knee) < 1.0 and np.mean(np.abs(got - knee) <= 3) >= 0.8
    old = np.array([band_rule(c) for c in curves])
    assert old.mean() > 15  # the noise, not the knee


def training_rows(imd_knees: np.ndarray, err_knee: float, noise: float = 0.0) -> pd.DataFrame:
    """The training part of runs.csv: per network an error curve settling at `err_knee` and an IMD curve (to one
    reference) settling at its own knee, each a hinge."""
    rng = np.random.default_rng(1)
    rows = []
    e = np.arange(21)
    for n, k in enumerate(imd_knees):
        err = 0.05 + 0.9 * np.maximum(0, err_knee - e) / err_knee
        imd = 5 + 40 * np.maximum(0, k - e) / k + rng.normal(0, noise, e.size)
        rows += [{"part": "training", "network": n, "epoch": int(i), "layer": "fc", "reference": "", "metric": "val_error",
                  "value": float(a)} for i, a in zip(e, err)]
        rows += [{"part": "training", "network": n, "epoch": int(i), "layer": "fc", "reference": "width 8",
                  "metric": "imd", "value": float(a)} for i, a in zip(e, imd)]
    return pd.DataFrame(rows)


def test_convergence_rule_decides_at_its_tolerance() -> None:
    """Settling-epoch differences centred on 0.5, 2.5 and 4.5 epochs with a small spread: within ±1 at every tolerance
    of 1–4 (holds), beyond 4 (contradicted), and at 2.5 the label changes where the interval crosses the tolerance
    (depends on the threshold, the cut at the interval's upper end)."""
    from ganeval.results import t_interval
    from ganeval.studies.nn_internals import convergence_claims, training_table

    spread = np.linspace(-0.2, 0.2, 10)
    for shift, want in ((0.5, HOLDS), (4.5, CONTRADICTED), (-4.5, CONTRADICTED)):
        [c] = convergence_claims(training_rows(6 + shift + spread, 6.0), 0.99)
        assert c.verdict == want, (shift, c.evidence)
    rows = training_rows(6 + 2.5 + spread, 6.0)
    [c] = convergence_claims(rows, 0.99)
    iv = t_interval(training_table(rows)["difference"].to_numpy(float), 0.99)
    assert c.verdict == DEPENDS and c.across.startswith("contradicted for 1–")
    assert f"not testable here for {iv['ci_low']:.3g}–{iv['ci_high']:.3g}" in c.across


def layer_values(means: list[float], sd: list[float], networks: int = 10) -> pd.DataFrame:
    """The layers part: per layer values with exactly the given mean and sd over networks (a fixed standardised
    pattern), so a CV and its χ² interval are known in closed form."""
    from ganeval.studies.nn_internals import LAYERS

    z = np.linspace(-1, 1, networks)
    z = (z - z.mean()) / z.std(ddof=1)
    return pd.DataFrame([{"part": "layers", "network": n, "epoch": 20, "layer": ly, "reference": "fc", "metric": "imd",
                          "value": m + s * z[(n + i) % networks]}
                         for i, (ly, m, s) in enumerate(zip(LAYERS, means, sd)) for n in range(networks)])


def cv_bounds(cv: float, n: int = 10, confidence: float = 0.99) -> tuple[float, float]:
    a = 1 - confidence
    return (cv * math.sqrt((n - 1) / stats.chi2.ppf(1 - a / 2, n - 1)),
            cv * math.sqrt((n - 1) / stats.chi2.ppf(a / 2, n - 1)))


def test_variance_rule_decides_at_its_threshold_on_the_cv_interval() -> None:
    """The CV's χ² interval computed here by hand; a layer whose interval ends just below 0.1 holds at every threshold
    of 0.1–0.3, one whose lower end lies just above 0.3 contradicts at every one, and a CV of 0.2 depends on it,
    the cuts at the interval's ends. With SLQ traces (probe noise not separated) the claim is not testable."""
    from ganeval.studies.nn_internals import layer_table, variance_claim

    hi_factor = cv_bounds(1.0)[1]
    lo_factor = cv_bounds(1.0)[0]
    below = 0.1 / hi_factor * 0.999  # its interval's upper end just under 0.1
    rows = layer_values([10] * 5, [10 * below] * 5)
    lt = layer_table(rows, 0.99)
    np.testing.assert_allclose(lt.cv, below, rtol=1e-12)
    np.testing.assert_allclose(lt.cv_high, below * hi_factor, rtol=1e-9)
    assert variance_claim(rows, 0.99, "exact").verdict == HOLDS
    assert variance_claim(layer_values([10] * 5, [10 * 0.1 / hi_factor * 1.001] * 5), 0.99, "exact").verdict == DEPENDS
    above = 0.3 / lo_factor * 1.001  # the lower end just over 0.3, at one layer only
    c = variance_claim(layer_values([10] * 5, [0.5, 0.5, 10 * above, 0.5, 0.5]), 0.99, "exact")
    assert c.verdict == CONTRADICTED  # one layer above suffices
    c = variance_claim(layer_values([10] * 5, [2.0] * 5), 0.99, "exact")  # CV 0.2 [0.124, 0.456]
    assert c.verdict == DEPENDS and c.across == (f"contradicted for 0.1–{cv_bounds(0.2)[0]:.3g}; not testable here "
                                                 f"for {cv_bounds(0.2)[0]:.3g}–0.3")
    assert variance_claim(rows, 0.99, "slq").verdict == NOT_TESTABLE


def test_rise_rule_is_one_sided_bonferroni_and_states_its_own_detectable_rise() -> None:
    """One step rises with a one-sided p just under 0.01/4 (holds) or just over it (not testable: a two-sided test or
    no Bonferroni would decide otherwise); the smallest detectable rise is the one-sided test's at 0.01/4."""
    from ganeval.results.power import one_sided_mde
    from ganeval.studies.nn_internals import rise_claim

    z = np.linspace(-1, 1, 10)
    z = (z - z.mean()) / z.std(ddof=1)
    crit = stats.t.ppf(1 - 0.01 / 4, 9) / math.sqrt(10)  # the rise (in sd) whose one-sided p is 0.01/4

    def rows(rise: float) -> pd.DataFrame:  # input 20, conv1 20 + rise·(1 + z) per network, then steep falls
        frame = layer_values([20, 20, 10, 5, 2], [0.0, 0.0, 0.0, 0.0, 0.0])
        conv1 = frame.layer == "conv1"
        frame.loc[conv1, "value"] = 20 + rise + z
        return frame

    assert rise_claim(rows(crit * 1.001), 0.99, 0.99).verdict == HOLDS
    c = rise_claim(rows(crit * 0.999), 0.99, 0.99)
    assert c.verdict == NOT_TESTABLE
    assert c.detectable.startswith(f"a rise of {one_sided_mde(1.0, 10, 0.01 / 4):.3g} (one-sided, 0.01/4 steps)")


def test_decrease_rule_across_the_end_of_the_initial_stage() -> None:
    """Steps that all fall from conv1 on: holds for every stage end; a rise conv1→conv2 (significant) contradicts from
    conv1 and holds from conv2: depends on the threshold, with conv1's label and conv2–conv3's."""
    from ganeval.studies.nn_internals import decrease_claim

    falling = layer_values([10, 20, 15, 10, 5], [1.0] * 5)
    assert decrease_claim(falling, 0.99).verdict == HOLDS
    rising = layer_values([10, 20, 30, 10, 5], [1.0] * 5)
    c = decrease_claim(rising, 0.99)
    assert c.verdict == DEPENDS and c.across == "contradicted for conv1; holds for conv2–conv3"


def test_the_paper_claims_of_a_stand_in_read_stand_in() -> None:
    from ganeval.studies.nn_internals import paper_claims

    mine = [Claim("low variance across initialisations (digits CNN stand-in)", "s", CONTRADICTED, "r", "t")]
    [paper] = paper_claims(mine)
    assert paper.verdict == STAND_IN and "low variance across initialisations: contradicted" in paper.evidence


# ----------------------------------------------------------------------------------------------- wordvec_dims

def seeded_rows(per_seed: dict[int, float], runs: int = 6, spread: float = 1e-3) -> pd.DataFrame:
    """runs.csv over dims 4, 8, 16: IMD(4,16) − IMD(4,8) equal to per_seed[seed] (± a tiny spread over runs)."""
    rows = []
    for seed, d in per_seed.items():
        for r in range(runs):
            jitter = spread * (r - runs / 2)
            for (a, b), v in {("4", "8"): 10.0, ("4", "16"): 10.0 + d + jitter, ("8", "16"): 5.0}.items():
                rows += [{"run": r, "a": a, "b": b, "metric": m, "value": v, "train_seed": seed} for m in ("imd", "pip")]
    return pd.DataFrame(rows)


def test_wordvec_claims_are_decided_across_training_seeds_not_runs() -> None:
    """Runs agree to 1e-3 within each seed but the seeds disagree (+3, +1, −0.5, +2): over runs every seed is
    significant, across seeds the sign is not: not testable, and the per-seed labels show the retrain changing it."""
    from ganeval.studies.wordvec_dims import sign_claim, units, _pair

    rows = seeded_rows({0: 3.0, 1: 1.0, 2: -0.5, 3: 2.0})
    d = _pair(rows, "imd", 4, 16) - _pair(rows, "imd", 4, 8)
    x, unit = units(d)
    assert unit == "training seeds" and len(x) == 4
    np.testing.assert_allclose(sorted(x), [-0.5 - 0.001 / 2, 1 - 0.0005, 2 - 0.0005, 3 - 0.0005], atol=1e-9)
    c = sign_claim("c", "s", d, "what", "any", 0.99, 0.99)
    assert c.verdict == NOT_TESTABLE and "seed 2 contradicted" in c.evidence and "seed 0 holds" in c.evidence
    one = seeded_rows({0: 3.0})
    c = sign_claim("c", "s", _pair(one, "imd", 4, 16) - _pair(one, "imd", 4, 8), "what", "any", 0.99, 0.99)
    assert c.verdict == HOLDS and "over runs" in c.evidence  # one seed: decided over its runs, as before


def test_wordvec_strong_reading_depends_where_the_interval_crosses() -> None:
    from ganeval.results import t_interval
    from ganeval.studies.wordvec_dims import STRONG, across_claim

    rho = pd.Series(np.linspace(0.40, 0.44, 8), index=pd.MultiIndex.from_product([[0], range(8)],
                                                                                  names=["train_seed", "run"]))
    iv = t_interval(rho.to_numpy(), 0.99)
    c = across_claim("c", "s", rho, "ρ", STRONG, "above", 0.99)
    assert c.verdict == DEPENDS
    assert c.across == (f"holds for 0.3–{iv['ci_low']:.3g}; not testable here for {iv['ci_low']:.3g}–"
                        f"{iv['ci_high']:.3g}; contradicted for {iv['ci_high']:.3g}–0.7")


def matrix_rows(mat: dict[tuple[int, int], float], runs: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"run": r, "a": str(a), "b": str(b), "metric": "imd", "value": v + rng.normal(0, 1e-3),
                          "train_seed": 0} for r in range(runs) for (a, b), v in mat.items()])


def test_monotone_rule_holds_on_a_monotone_matrix_and_one_reversed_step_contradicts() -> None:
    from ganeval.studies.wordvec_dims import monotone_claim, row_steps

    dims = ["4", "8", "16", "32"]
    assert row_steps(dims) == [("4", "8", "16"), ("4", "16", "32"), ("8", "16", "32"), ("16", "8", "4"),
                               ("32", "16", "8"), ("32", "8", "4")]
    gap = {(a, b): float(abs(np.log2(b) - np.log2(a))) for i, a in enumerate([4, 8, 16, 32]) for b in [4, 8, 16, 32][i + 1:]}
    assert monotone_claim(matrix_rows(gap), "imd", dims, 0.99).verdict == HOLDS
    bent = {**gap, (4, 32): gap[(4, 16)] - 0.5}  # row 4: 32 nearer than 16
    c = monotone_claim(matrix_rows(bent), "imd", dims, 0.99)
    assert c.verdict == CONTRADICTED and "row 4: 32 nearer than 16" in c.evidence
    # a fall whose one-sided p lies between 0.01/6 and 0.01: significant alone, not after Bonferroni over the 6 steps
    runs = 8
    z = np.linspace(-1, 1, runs)
    z = (z - z.mean()) / z.std(ddof=1)
    fall = stats.t.ppf(1 - 0.005, runs - 1) / math.sqrt(runs)  # p = 0.005
    frame = matrix_rows(gap, runs)
    last = (frame.a == "4") & (frame.b == "32")
    frame.loc[last, "value"] = gap[(4, 16)] - fall - z[frame.loc[last, "run"].to_numpy()] * 1.0
    assert monotone_claim(frame, "imd", dims, 0.99).verdict == NOT_TESTABLE


def test_pip_not_closer_is_contradicted_by_a_significant_order() -> None:
    """The paper's "not true for PIP": PIP(4,16) − PIP(4,8) significantly above 0 contradicts it, below 0 holds."""
    from ganeval.studies.wordvec_dims import _pair, sign_claim

    for d, want in ((0.01, CONTRADICTED), (-0.01, HOLDS), (0.0, NOT_TESTABLE)):
        rows = seeded_rows({0: d}, spread=1e-3)
        c = sign_claim("c", "s", _pair(rows, "pip", 4, 16) - _pair(rows, "pip", 4, 8), "w", "any", 0.99, 0.99, flip=True)
        assert c.verdict == want, d


# ------------------------------------------------------------------------------------------------ scalability

def slope_rows(power: dict[str, list[float]]) -> pd.DataFrame:
    """Timings whose log–log slope per repeat is exactly power[metric][repeat]."""
    return pd.DataFrame([{"metric": m, "n": n, "repeat": r, "seconds": 1e-6 * n ** p[r]}
                         for m, p in power.items() for r in range(len(p)) for n in (1000, 2000, 4000, 8000)])


def test_scalability_between_is_decided_on_the_growth() -> None:
    """KID − IMD and IMD − FID slope differences: both clearly above 0 (holds), one below (contradicted), both
    straddling 0 (not testable, the reason named); the absolute times (IMD slower than KID at every n here) decide
    nothing."""
    from ganeval.studies.scalability import between_claim, slopes

    def between(fid: list[float], imd: list[float], kid: list[float]) -> Claim:
        rows = slope_rows({"fid": fid, "imd_approx": imd, "kid_full": kid})
        rows.loc[rows.metric == "imd_approx", "seconds"] *= 1e4  # IMD far slower than KID at every n
        return between_claim(slopes(rows), 0.99, len(fid))

    assert between([0.0, 0.1, 0.0, 0.1], [1.1, 1.2, 1.1, 1.0], [2.0, 1.9, 2.0, 2.1]).verdict == HOLDS
    assert between([0.0, 0.1, 0.0, 0.1], [2.5, 2.6, 2.5, 2.7], [2.0, 1.9, 2.0, 2.1]).verdict == CONTRADICTED
    assert between([1.5, 1.6, 1.5, 1.6], [1.1, 1.2, 1.1, 1.0], [2.0, 1.9, 2.0, 2.1]).verdict == CONTRADICTED  # FID's
    c = between([0.0, 1.5, -1.0, 0.5], [1.0, 0.0, 2.0, 1.0], [2.0, 0.5, 2.5, 1.5])
    assert c.verdict == NOT_TESTABLE and "shared 2-core machine" in c.detectable


def test_scalability_bands_across_their_ranges() -> None:
    from ganeval.studies.scalability import QUADRATIC, _band_claim

    iv = {"mean": 1.75, "ci_low": 1.7, "ci_high": 1.8, "half_width": 0.05}
    c = _band_claim("KID", "s", iv, QUADRATIC, "above", 4)
    assert c.verdict == DEPENDS and c.across == "holds for 1.6–1.7; not testable here for 1.7–1.8; contradicted for 1.8–1.9"
    assert _band_claim("KID", "s", {**iv, "ci_low": 1.95, "ci_high": 2.05}, QUADRATIC, "above", 4).verdict == HOLDS


# ----------------------------------------------------------------------------------------------- er_normalisation

def test_er_window_is_where_the_weight_is_its_share_of_the_peak() -> None:
    from ganeval.studies.er_normalisation import window

    for share in (0.01, 0.05, 0.1):
        lo, hi = window(share)
        assert lo * hi == pytest.approx(1.0)
        for t in (lo, hi):
            assert math.exp(-2 * (t + 1 / t)) / math.exp(-4) == pytest.approx(share, rel=1e-12)
    assert window(0.05)[0] == pytest.approx(0.3141, abs=1e-4) and window(0.05)[1] == pytest.approx(3.1838, abs=1e-4)


def er_trace_rows(bad_t: float, error: float) -> pd.DataFrame:
    """runs.csv rows whose exact trace is the c = 2 linear trace except at `bad_t`, where the linear one is off by
    `error` (relative)."""
    from ganeval.studies import er_normalisation as er

    t = np.asarray(er.T_GRID)
    rows = []
    for d in (5.0, 10.0):
        for g in range(4):
            tr = er.linear_trace(400, d, t) * (1 + 1e-4 * g)
            tr[np.argmin(np.abs(t - bad_t))] /= 1 + error
            e = 2 / np.sqrt(d) * (1 + 1e-3 * g)
            rows += [{"n": 400, "degree": d, "graph": g, "core": 400, "lambda2": 1 - e, "lambda_max": 1 + e, "t": tv,
                      "trace": v} for tv, v in zip(t, tr)]
    return pd.DataFrame(rows)


def test_er_trace_rule_judges_the_trace_where_imd_weighs_it() -> None:
    """A 50 % error at t = 10 (weight 10⁻⁷ of the peak) leaves the trace tight; the same error at t = 1 contradicts
    it; an error of 3.5 % at t = 1 depends on the threshold (2–10 %), cut at 3.5 %."""
    from ganeval.studies.er_normalisation import decide

    assert decide(er_trace_rows(10.0, 0.5), 0.99)[0][0].verdict == HOLDS
    assert decide(er_trace_rows(1.0, 0.5), 0.99)[0][0].verdict == CONTRADICTED
    c = decide(er_trace_rows(1.0, 0.035), 0.99)[0][0]
    assert c.verdict == DEPENDS and c.across.startswith("contradicted for 2–") and c.across.endswith("–10 %")
    assert all(3.4 <= x <= 3.6 for x in cuts(c.across)), c.across


def cuts(text: str) -> list[float]:
    """The inner ends of an across text's segments ("a for 2–3.49 %; b for 3.49–10 %" -> [3.49, 3.49])."""
    import re

    ends = [float(x) for x in re.findall(r"(\d+(?:\.\d+)?)(?:–| %|;|$)", text)]
    return ends[1:-1]


def test_er_edge_rule_depends_where_c_leaves_the_band() -> None:
    """Edges at c = 1.87 (6.5 % off 2): contradicted below a 6.5 % band, holds above, the cut at the intervals' ends."""
    from ganeval.studies.er_normalisation import decide

    rows = er_trace_rows(10.0, 0.0)
    for col in ("lambda2", "lambda_max"):
        sign = -1 if col == "lambda2" else 1
        rows[col] = 1 + sign * 1.87 / np.sqrt(rows.degree) * (1 + 1e-4 * rows.graph)
    edge = decide(rows, 0.99)[0][1]
    assert edge.verdict == DEPENDS and edge.across.startswith("contradicted for 5–") and edge.across.endswith("–15 %")
    assert all(6.4 <= x <= 6.6 for x in cuts(edge.across)), edge.across


# --------------------------------------------------------------------------------------------- language_manifolds

def test_recovered_rule_and_the_demonstration_label() -> None:
    from ganeval.studies.language_manifolds import RECOVERED, recovered_label

    assert recovered_label(0.81, True, RECOVERED.value) == HOLDS and recovered_label(0.79, True, 0.8) == CONTRADICTED
    assert recovered_label(0.79, False, 0.8) == HOLDS and recovered_label(0.81, False, 0.8) == CONTRADICTED


# ----------------------------------------------------------------------------------------------- paper_checks

def test_mass_outside_against_a_direct_sum() -> None:
    """The shares outside [0.1, 10] by quadrature equal a fine trapezoid sum (in t and in log t): 3.4e-8 and 7.3e-9."""
    from ganeval.studies.paper_checks import mass_outside

    s = np.linspace(np.log(1e-4), np.log(1e4), 400_001)
    f = np.exp(-2 * (np.exp(s) + np.exp(-s)))
    for log_t, weight in ((True, np.ones_like(s)), (False, np.exp(s))):
        g = f * weight  # dt = e^s ds
        inside = (s >= np.log(0.1)) & (s <= np.log(10))
        direct = np.trapezoid(np.where(inside, 0, g), s) / np.trapezoid(g, s)
        assert mass_outside(log_t)[0] == pytest.approx(direct, rel=1e-3)
    assert mass_outside(False)[0] > 1e-8 > mass_outside(True)[0]


def test_matvec_error_and_bound_against_scipy() -> None:
    from scipy.linalg import expm

    from ganeval.studies.paper_checks import lanczos_matvec_error, matvec_bound

    rng = np.random.default_rng(0)
    a = rng.random((60, 60)) < 0.1
    a = (a | a.T) & ~np.eye(60, dtype=bool)
    a[np.arange(59), np.arange(1, 60)] = a[np.arange(1, 60), np.arange(59)] = True  # connected
    d = a.sum(1) ** -0.5
    lap = np.eye(60) - d[:, None] * a * d[None, :]
    lam, phi = np.linalg.eigh(lap)
    v = rng.standard_normal(60)
    v /= np.linalg.norm(v)
    err = lanczos_matvec_error(lap, lam, phi, v, 3.0, 12)
    truth = expm(-3.0 * lap) @ v
    q = np.linalg.qr(np.column_stack([np.linalg.matrix_power(lap, j) @ v for j in range(3)]))[0]
    q *= np.sign(q[:, 0] @ v)
    three = np.linalg.norm(truth - q @ expm(-3.0 * q.T @ lap @ q)[:, 0])  # the Krylov projection, by hand
    assert err[2] == pytest.approx(three, rel=1e-6) and err[-1] < 1e-8 and np.all(np.diff(err[:8]) < 0)
    assert matvec_bound(10, 10.0) == pytest.approx(10 / 5 * math.exp(-5) * (math.e * 5 / 10) ** 10)  # m ≥ 2ρt
    assert matvec_bound(5, 10.0) == pytest.approx(10 * math.exp(-25 / 25))  # √(4ρt) = 4.47 ≤ m ≤ 2ρt = 10
    assert math.isnan(matvec_bound(4, 10.0))  # m < √(4ρt): no bound stated


def test_exact_probe_variances_against_monte_carlo() -> None:
    """`probe_stds` (Gaussian, Rademacher, Gaussian on the sphere) against 20 000 draws of each on a 40-node
    Laplacian, for exp(−L/2) and for the Taylor remainder."""
    from ganeval.studies.paper_checks import probe_stds

    rng = np.random.default_rng(0)
    n = 12  # small: the sphere's factor n/(n+2) moves its std by 7 %, well beyond the draws' 1 %
    a = rng.random((n, n)) < 0.3
    a = (a | a.T) & ~np.eye(n, dtype=bool)
    a[np.arange(n - 1), np.arange(1, n)] = a[np.arange(1, n), np.arange(n - 1)] = True
    d = a.sum(1) ** -0.5
    lam, phi = np.linalg.eigh(np.eye(n) - d[:, None] * a * d[None, :])
    z = rng.standard_normal((n, 100_000))
    r = np.sign(rng.standard_normal((n, 100_000)))
    u = z / np.linalg.norm(z, axis=0)
    for f in (np.exp(-0.5 * lam), np.exp(-0.5 * lam) - (1 - 0.5 * lam + (0.5 * lam) ** 2 / 2)):
        fm = (phi * f) @ phi.T
        std = probe_stds(f, phi)
        assert np.einsum("ij,ij->j", z, fm @ z).std() == pytest.approx(std["gaussian"], rel=0.015)
        assert np.einsum("ij,ij->j", r, fm @ r).std() == pytest.approx(std["rademacher"], rel=0.015)
        assert (n * np.einsum("ij,ij->j", u, fm @ u)).std() == pytest.approx(std["sphere"], rel=0.015)


def moment_rows(matched: float, rescaled: float, runs: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for r in range(runs):
        same = 0.01 + rng.normal(0, 1e-4)
        for m in ("fid", "kid", "imd"):
            for pair, v in (("same", same), ("matched", same + matched + rng.normal(0, 1e-5)),
                            ("rescaled", same + rescaled + rng.normal(0, 1e-5))):
                rows.append({"part": "moments", "name": f"{m}/{pair}", "run": r, "value": v})
    return pd.DataFrame(rows)


def test_moment_rule_decides_close_to_zero_at_its_threshold() -> None:
    """The matched pair's shift ÷ the rescale's: 0.04 (below 0.05: holds at every threshold), 0.3 (above 0.25:
    contradicted), 0.15 (depends, cut at 0.15)."""
    from ganeval.studies.paper_checks import moment_claims

    def fid(ratio: float) -> Claim:
        return moment_claims(moment_rows(0.1 * ratio, 0.1), 0.99, 0.99)[0]

    assert fid(0.04).verdict == HOLDS and fid(0.3).verdict == CONTRADICTED
    c = fid(0.15)
    assert c.verdict == DEPENDS and "0.15" in c.across


def test_taylor_and_normalisation_rules() -> None:
    from ganeval.studies.paper_checks import measure_normalisation, normalisation_claim, taylor_claim

    assert normalisation_claim(pd.DataFrame(measure_normalisation(500))).verdict == HOLDS
    rows = []
    for t, ratio in ((0.1, 0.01), (1.0, 0.49), (3.0, 5.0)):
        for kind in ("gaussian", "rademacher"):
            rows += [{"part": "taylor", "name": f"{kind}/without", "t": t, "value": 1.0},
                     {"part": "taylor", "name": f"{kind}/with", "t": t, "value": ratio}]
    assert taylor_claim(pd.DataFrame(rows)).verdict == HOLDS  # 0.49 < 0.5: reduced at every threshold; t = 3 not asked
    rows[5]["value"] = 0.7  # t = 1, Gaussian: 0.7 reduces at 0.9, not at 0.5
    c = taylor_claim(pd.DataFrame(rows))
    assert c.verdict == DEPENDS and c.across == "contradicted for 0.5–0.7; holds for 0.7–0.95"
