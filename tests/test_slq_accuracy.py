"""experiment=slq_accuracy at reduced size (fixed seed): each of the paper's estimator statements that holds on
our data is pinned, and so are the measured departures (the optimal α, the error at t = 0.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch

from apphelp import run_inprocess
from ganeval.studies.slq_accuracy import batch_errors, rms
from ganeval.metrics.laplacian import normalized_adjacency
from ganeval.metrics.slq import lanczos, quadrature
from ganeval.metrics.slq_error import hutchinson_bound, lanczos_bound
from test_imd import brute_force_knn

REDUCED = ["experiment=slq_accuracy", "sample_size=300", "probes=1000", "nv=50", "max_steps=12",
           "nv_list=[1,5,10,50,100]", "n_t_variance=7", "bootstrap=200", "progress=false"]


@pytest.fixture(scope="module")
def reduced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("slq_accuracy")
    df = run_inprocess([*REDUCED, f"results_dir={out / 'res'}", f"cache_dir={out / 'cache'}"])
    record = json.loads((out / "res" / "summary.json").read_text())
    return {"df": df, "dir": out / "res", "claims": {c["claim"]: c for c in record["verdict"]}}


def per_t(claim: dict[str, Any]) -> dict[float, bool | None]:
    return {round(float(t), 4): h for t, h, _ in claim["per_t"]}


@pytest.mark.slow
def test_statements_that_hold_are_pinned(reduced: dict[str, Any]) -> None:
    c = reduced["claims"]
    for key in ("few_steps_suffice", "hutchinson_dominates", "lanczos_bound"):
        assert c[key]["holds"], (key, c[key]["per_t"])
    # the control variate reduces the std practically (ratio ≤ 0.9, issue #26) at t ≤ 2, not at the largest t,
    # where the ratio tends to 1 (e^−t → 0): the paper's "over the whole range of t" is contradicted there
    reduced_at = per_t(c["variance_reduced_everywhere"])
    assert all(h for t, h in reduced_at.items() if t <= 2) and reduced_at[max(reduced_at)] is False
    # "with as much as nv = 100 the error is already 1e-3": at t ≤ 1 (here nv = 50), not at t = 10; at t = 2 the
    # interval lies near 10^-2.5 (above it, or straddling it: then undecided)
    found = per_t(c["error_1e-3_at_nv100"])
    assert {t: found[t] for t in (0.1, 1.0, 10.0)} == {0.1: True, 1.0: True, 10.0: False} and found[2.0] is not True
    # "much better than the bound" (10× below it): at t ≤ 2
    assert all(h for t, h in per_t(c["better_than_hutchinson_bound"]).items() if t <= 2)


@pytest.mark.slow
def test_measured_departures_are_pinned(reduced: dict[str, Any]) -> None:
    df, c = reduced["df"], reduced["claims"]
    # e^−t is not the variance-optimal α: the optimum is above it, far above at large t (the spectrum agrees)
    alpha = df[(df.quantity == "alpha_optimal")]
    ratio = alpha.ci_low * np.exp(alpha.t)
    assert not c["alpha_optimal"]["holds"] and (ratio > 1).all() and (ratio[alpha.t >= 1] > 1.2).all()
    np.testing.assert_allclose(alpha.value, alpha.reference, rtol=0.1)
    # at t = 0.1 the error is ~1e-3 only without the control variate; with it, far below
    with_cv = df[(df.quantity == "rms_error") & (df.figure == "m") & (df.m == 10) & np.isclose(df.t, 0.1)].iloc[0]
    plain = df[(df.quantity == "rms_error_plain") & np.isclose(df.t, 0.1)].iloc[0]
    assert with_cv.ci_high < 1e-4 and 10**-3.5 <= plain.ci_low and plain.ci_high <= 10**-2.5
    # the error is flat in m only from m ≥ 2 (one Gauss node is too few at every t)
    assert not c["error_flat_in_m"]["holds"]
    m1 = df[(df.quantity == "rms_error") & (df.figure == "m") & (df.m == 1)]
    m10 = df[(df.quantity == "rms_error") & (df.figure == "m") & (df.m == 10)]
    assert (m1.ci_low.to_numpy() > m10.ci_high.to_numpy()).all()


@pytest.mark.slow
def test_outputs_written(reduced: dict[str, Any]) -> None:
    res: Path = reduced["dir"]
    for name in ("estimator.csv", "table.md", "verdict.md", "summary.json"):
        assert (res / name).stat().st_size > 200
    assert (res / "slq_accuracy.png").stat().st_size > 10000
    verdict = (res / "verdict.md").read_text()
    assert verdict.count("> \"") == 9 and "## variance_reduced_everywhere: CONTRADICTED (worse than stated)" in verdict
    assert "## few_steps_suffice: HOLDS (as stated)" in verdict and "Holm" in verdict
    est = pd.read_csv(res / "estimator.csv")
    assert {"m", "nv", "variance"} == set(est.figure)


def test_leading_block_of_a_long_lanczos_run_is_the_short_run() -> None:
    """probe_pool takes every m from one max_steps run: its leading m×m block must be the m-step matrix."""
    x = np.random.default_rng(0).standard_normal((120, 3))
    s = normalized_adjacency(torch.from_numpy(brute_force_knn(x, 5)))
    p = torch.from_numpy(np.random.default_rng(1).standard_normal((120, 6)))
    a_long, b_long = lanczos(s, p, 15)
    for m in (1, 2, 5, 10):
        a, b = lanczos(s, p, m)
        torch.testing.assert_close(a_long[:, :m], a, rtol=0, atol=0)
        torch.testing.assert_close(b_long[:, : m - 1], b, rtol=0, atol=0)
        th_long, w_long = quadrature(a_long[:, :m], b_long[:, : m - 1])
        th, w = quadrature(a, b)
        torch.testing.assert_close(th_long, th)


def test_rms_interval_covers_and_batches_split() -> None:
    """The χ² interval of an RMS covers the true RMS at its level (normal errors); batches are disjoint means."""
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(400):
        r = rms(rng.normal(0, 0.01, 20), 0.9)
        hits += r["ci_low"] <= 0.01 <= r["ci_high"]
    assert 0.85 <= hits / 400 <= 0.95
    est = np.arange(12.0).reshape(6, 2) + 1
    np.testing.assert_allclose(batch_errors(est, np.array([4.0, 5.0]), 3), [[-0.25, -0.2], [1.25, 1.0]])


def test_paper_bounds() -> None:
    assert np.isnan(lanczos_bound(1, 10.0))  # below √(2t): the paper states no bound
    assert lanczos_bound(10, 10.0) == pytest.approx(40 / 10 * np.exp(-5) * (0.5 * np.e) ** 10)
    assert lanczos_bound(5, 10.0) == pytest.approx(20 * np.exp(-25 / 25))
    assert hutchinson_bound(100, 0.05) == pytest.approx(np.sqrt(8 * np.log(40) / 100))
    assert hutchinson_bound(100, 0.05, rademacher=True) == pytest.approx(np.sqrt(6 * np.log(40) / 100))


def test_an_interval_straddling_a_threshold_is_undecided() -> None:
    """(issue #36) An interval across the threshold is neither side: the claim is not testable here, never
    contradicted — as the reference's t = 2 against 10^-2.5 ([1.84e-3, 4.28e-3]) and t = 4.22 against 0.9
    ([0.889, 0.901])."""
    from ganeval.results.verdicts import CONTRADICTED, NOT_TESTABLE
    from ganeval.studies.slq_claims import below, claim_verdicts, inside

    assert below(0.889, 0.901, 0.9) is None and below(0.5, 0.8, 0.9) is True and below(0.95, 0.99, 0.9) is False
    assert below(1.84e-3, 4.28e-3, 10 ** -2.5, strict=False) is None
    assert inside(1e-4, 2e-4, 10 ** -3.5, 10 ** -2.5) is False and inside(2e-4, 5e-4, 10 ** -3.5, 10 ** -2.5) is None
    claim = {"claim": "variance_reduced_everywhere", "quote": "q", "criterion": "c", "holds": None,
             "per_t": [(1.0, True, "ratio 0.280 [0.270, 0.289]"), (4.22, None, "ratio 0.895 [0.889, 0.901]")]}
    [v] = claim_verdicts([claim], 0.99)
    assert v.verdict == NOT_TESTABLE and "undecided at t = 4.22" in v.evidence
    claim["per_t"].append((10.0, False, "ratio 0.999 [0.999, 0.999]"))
    assert claim_verdicts([claim], 0.99)[0].verdict == CONTRADICTED
    reference = Path(__file__).resolve().parent.parent / "results" / "reference" / "slq_accuracy"
    text = (reference / "verdict.md").read_text()
    assert "- t = 2: not testable here (the interval straddles the threshold) (2.61e-03 [1.84e-03, 4.28e-03])" in text
    assert "- t = 4.22: not testable here (the interval straddles the threshold) (ratio 0.895 [0.889, 0.901])" in text


def truncated_chebyshev(t: float, degree: int) -> np.ndarray:
    """e^(−t(1 − s))'s Chebyshev series on [−1, 1] cut at `degree`: numpy's 40-point interpolant (converged to
    rounding for t ≤ 9) truncated, independent of the Bessel-function coefficients the code uses."""
    return np.polynomial.chebyshev.Chebyshev.interpolate(lambda s: np.exp(-t * (1 - s)), 40).coef[: degree + 1]


@pytest.mark.parametrize("control", ["none", "paper", "chebyshev"])
def test_probe_estimates_are_the_probes_exact_quadratures_less_the_control_variate(control: str) -> None:
    """With as many Lanczos steps as nodes, each probe's Gauss quadrature is exact, so each single-probe estimate is
    n·v̂ᵀ(e^(−tL) − p(L))v̂ + tr p(L) (v̂ the unit probe, p the control variate's polynomial: 0, the paper's
    −t·e^−t·λ, or the degree-4 Chebyshev series), worked out here from L's eigendecomposition; at t = 0 every
    estimate is tr I = n."""
    from ganeval.metrics.control_variate import probe_estimates
    from ganeval.metrics.laplacian import adjacency_power_traces, dense_laplacian

    rng = np.random.default_rng(3)
    n, nv = 24, 5
    x = rng.normal(size=(n, 3))
    nbrs = torch.as_tensor(brute_force_knn(x, 4))
    probes = rng.normal(size=(n, nv))
    t = np.array([0.0, 0.3, 2.0, 9.0])
    alpha, beta = lanczos(normalized_adjacency(nbrs), torch.as_tensor(probes), n)
    theta, weights = quadrature(alpha, beta)
    got = probe_estimates(theta, weights, n, torch.from_numpy(t), control, adjacency_power_traces(nbrs, 4)).numpy()
    lam, vecs = np.linalg.eigh(dense_laplacian(nbrs).numpy())
    unit = probes / np.linalg.norm(probes, axis=0)
    proj = (vecs.T @ unit) ** 2  # n×nv: each probe's weight on each eigenvector
    for i, ti in enumerate(t):
        if control == "paper":
            p = -ti * np.exp(-ti) * lam
        elif control == "chebyshev":
            p = np.polynomial.chebyshev.chebval(1 - lam, truncated_chebyshev(ti, 4))
        else:
            p = np.zeros(n)
        want = n * (np.exp(-ti * lam) - p) @ proj + p.sum()
        np.testing.assert_allclose(got[:, i], want, rtol=1e-9, atol=1e-9 * n)
    np.testing.assert_allclose(got[:, 0], n, rtol=1e-12)


def test_chebyshev_control_variate_leaves_a_hundredth_of_the_paper_terms_noise() -> None:
    """The exact single-probe variance (over probes uniform on the sphere) of each control variate, from the
    spectrum of a 600-row k-NN graph: where IMD's weight peaks (t ∈ [0.5, 2]) the Chebyshev term's standard
    deviation is under 3 % of the paper's and under 1.5 % of the plain estimate's; at t = 3 under 10 % of either."""
    from ganeval.metrics.slq_error import single_probe_variance, spectrum

    x = np.random.default_rng(4).normal(size=(600, 6))
    spec = spectrum(torch.as_tensor(brute_force_knn(x, 5)))
    t = torch.tensor([0.5, 1.0, 1.5, 2.0, 3.0], dtype=torch.float64)
    sd = {c: single_probe_variance(spec, t, c).sqrt().numpy() for c in ("none", "paper", "chebyshev")}
    assert np.all(sd["chebyshev"][:4] < 0.03 * sd["paper"][:4]), sd
    assert np.all(sd["chebyshev"][:4] < 0.015 * sd["none"][:4]), sd
    assert sd["chebyshev"][4] < 0.1 * min(sd["paper"][4], sd["none"][4]), sd
