"""The SLQ estimator's parts against closed forms (ganeval/metrics/slq_error.py, control_variate.py): the paper's
bounds, the single-probe variance by Monte Carlo over many probes, Chebyshev expansions of the heat kernel, and each
control variate's estimate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.special import iv

from ganeval.metrics import control_variate as CV
from ganeval.metrics import slq_error as E


@pytest.mark.parametrize("m, t, want", [
    (10, 10.0, 40 / 10 * math.exp(-5) * (math.e * 10 / 20) ** 10),  # m ≥ t
    (12, 10.0, 40 / 10 * math.exp(-5) * (math.e * 10 / 24) ** 12),
    (5, 10.0, 20 * math.exp(-25 / 25)),  # √(2t) ≤ m < t
    (math.sqrt(20.0), 10.0, 20 * math.exp(-20 / 25)),  # exactly √(2t)
])
def test_the_papers_lanczos_bound(m: float, t: float, want: float) -> None:
    assert E.lanczos_bound(m, t) == pytest.approx(want, rel=1e-12)  # type: ignore[arg-type]


def test_no_lanczos_bound_below_the_square_root() -> None:
    assert math.isnan(E.lanczos_bound(4, 10.0))


def test_the_hutchinson_bounds() -> None:
    nv = np.array([10, 100])
    np.testing.assert_allclose(E.hutchinson_bound(nv, 0.05), np.sqrt(8 * np.log(40) / nv))
    np.testing.assert_allclose(E.hutchinson_bound(100, 0.1, rademacher=True), np.sqrt(6 * np.log(20) / 100))


def _graph() -> tuple[torch.Tensor, E.Spectrum]:
    from ganeval.metrics.knn import exact_knn

    x = torch.from_numpy(np.random.default_rng(3).normal(size=(12, 2)))
    nbrs = exact_knn(x, 3)
    return nbrs, E.spectrum(nbrs)


def test_the_spectrum_and_its_trace() -> None:
    from ganeval.metrics.laplacian import dense_laplacian

    nbrs, spec = _graph()
    lap = dense_laplacian(nbrs).numpy()
    np.testing.assert_allclose(spec.values.numpy(), np.linalg.eigvalsh(lap), atol=1e-12)
    t = torch.tensor([0.5, 3.0], dtype=torch.float64)
    w = np.linalg.eigvalsh(lap)
    np.testing.assert_allclose(spec.trace(t).numpy(), [np.exp(-0.5 * w).sum(), np.exp(-3 * w).sum()])
    assert spec.n == 12


def test_exact_forms_are_the_quadratic_forms_of_unit_probes() -> None:
    from scipy.linalg import expm

    from ganeval.metrics.laplacian import dense_laplacian

    nbrs, spec = _graph()
    lap = dense_laplacian(nbrs).numpy()
    probes = torch.from_numpy(np.random.default_rng(4).normal(size=(12, 3)))
    v = probes.numpy() / np.linalg.norm(probes.numpy(), axis=0)
    t = torch.tensor([0.5, 3.0], dtype=torch.float64)
    f = E.exact_forms(spec, probes, t)
    want = np.array([[v[:, i] @ expm(-tt * lap) @ v[:, i] for tt in (0.5, 3.0)] for i in range(3)])
    np.testing.assert_allclose(f.q.numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(f.lap.numpy(), [v[:, i] @ lap @ v[:, i] for i in range(3)], rtol=1e-10)
    np.testing.assert_allclose(f.estimates(12, t, False).numpy(), 12 * want)
    with_cv = f.estimates(12, t).numpy()
    np.testing.assert_allclose(with_cv - 12 * want, (t * torch.exp(-t)).numpy()[None] * (12 * f.lap.numpy()[:, None]
                                                                                         - 12))
    m_forms = E.slq_forms(nbrs, probes, t, m=12)  # m = n: the quadrature is exact
    np.testing.assert_allclose(m_forms.q.numpy(), want, rtol=1e-7)
    np.testing.assert_allclose(m_forms.lap.numpy(), f.lap.numpy(), rtol=1e-7)


@pytest.mark.parametrize("control", [False, True, "chebyshev"])
def test_the_single_probe_variance_is_that_over_many_probes(control: bool | str) -> None:
    from ganeval.metrics.laplacian import adjacency_power_traces, dense_laplacian

    nbrs, spec = _graph()
    t = torch.tensor([0.3, 2.0], dtype=torch.float64)
    probes = torch.from_numpy(np.random.default_rng(5).normal(size=(12, 40000)))
    f = E.exact_forms(spec, probes, t)
    est = (12 * f.q).numpy()
    if control is True:
        est = est + CV.paper_term(12, t, f.lap).numpy()
    elif control == "chebyshev":
        v = E.unit_probes(probes)
        s = torch.eye(12, dtype=torch.float64) - dense_laplacian(nbrs)
        basis = [torch.eye(12, dtype=torch.float64), s]
        while len(basis) <= 4:
            basis.append(2 * s @ basis[-1] - basis[-2])
        forms = torch.stack([torch.einsum("ip,ij,jp->p", v, b, v) for b in basis], dim=1)  # nv×5
        coef = torch.from_numpy(CV.heat_chebyshev_coefficients(t.numpy(), 4))
        exact = torch.from_numpy(CV.chebyshev_traces(adjacency_power_traces(nbrs, 4)))
        est = est - (12 * forms @ coef.T).numpy() + (coef @ exact).numpy()[None]
    want = E.single_probe_variance(spec, t, control).numpy()
    np.testing.assert_allclose(est.var(axis=0), want, rtol=0.05)
    np.testing.assert_allclose(est.mean(axis=0), spec.trace(t).numpy(), rtol=0.01)


def test_control_variate_names_and_records() -> None:
    assert CV.CONTROL_VARIATES == ("chebyshev", "paper", "none") and CV.CHEBYSHEV_DEGREE == 4
    assert [CV.control_variate(v) for v in (True, False, np.bool_(True), "chebyshev", "paper")] == [
        "paper", "none", "paper", "chebyshev", "paper"]
    assert [CV.recorded_control(v) for v in (True, "paper", False, "none", "chebyshev")] == [
        True, True, False, False, "chebyshev"]


def test_the_heat_kernels_chebyshev_coefficients() -> None:
    t = np.array([0.5, 2.0])
    c = CV.heat_chebyshev_coefficients(t, 3)
    want = np.exp(-t)[:, None] * np.array([[iv(0, x), 2 * iv(1, x), 2 * iv(2, x), 2 * iv(3, x)] for x in t])
    np.testing.assert_allclose(c, want, rtol=1e-12)
    s = torch.linspace(-1, 1, 9, dtype=torch.float64)
    series = torch.from_numpy(CV.heat_chebyshev_coefficients(t, 20)) @ CV.chebyshev_basis(s, 20)
    np.testing.assert_allclose(series.numpy(), np.exp(-t[:, None] * (1 - s.numpy()[None])), rtol=1e-10)


def test_the_chebyshev_basis_and_traces() -> None:
    s = torch.tensor([-1.0, -0.3, 0.0, 0.5, 1.0], dtype=torch.float64)
    basis = CV.chebyshev_basis(s, 4)
    want = np.stack([np.polynomial.chebyshev.chebval(s.numpy(), np.eye(5)[j]) for j in range(5)])
    np.testing.assert_allclose(basis.numpy(), want, atol=1e-15)
    assert CV.chebyshev_basis(s, 1).shape == (2, 5) and CV.chebyshev_basis(s, 0).shape == (1, 5)
    m = np.diag([0.2, -0.7, 0.9])
    powers = np.array([np.trace(np.linalg.matrix_power(m, i)) for i in range(5)])
    lam = np.diag(m)
    want_tr = [np.polynomial.chebyshev.chebval(lam, np.eye(5)[j]).sum() for j in range(5)]
    np.testing.assert_allclose(CV.chebyshev_traces(powers), want_tr)
    theta = torch.tensor([[0.1, 1.2]], dtype=torch.float64)
    weights = torch.tensor([[0.25, 0.75]], dtype=torch.float64)
    forms = CV.chebyshev_forms(theta, weights, 2)
    np.testing.assert_allclose(forms.numpy(), [[0.25 * b0 + 0.75 * b1 for b0, b1 in
                                                zip(*[CV.chebyshev_basis(1.0 - theta[0], 2)[:, i].numpy()
                                                      for i in range(2)])]])


def test_each_control_variates_estimate() -> None:
    theta = torch.tensor([[0.1, 1.2], [0.4, 1.9]], dtype=torch.float64)
    weights = torch.tensor([[0.25, 0.75], [0.5, 0.5]], dtype=torch.float64)
    t = torch.tensor([0.5, 2.0], dtype=torch.float64)
    n = 7
    plain = n * (weights[:, None, :] * torch.exp(-t[None, :, None] * theta[:, None, :])).sum(-1)
    assert torch.allclose(CV.probe_estimates(theta, weights, n, t, "none"), plain)
    lap = (weights * theta).sum(1)
    assert torch.allclose(CV.probe_estimates(theta, weights, n, t, "paper"),
                          plain + (t * torch.exp(-t))[None] * (n * lap[:, None] - n))
    powers = np.array([7.0, 0.3, 2.0, 0.1, 1.5])
    coef = torch.from_numpy(CV.heat_chebyshev_coefficients(t.numpy(), 4))
    forms = CV.chebyshev_forms(theta, weights, 4)
    exact = torch.from_numpy(CV.chebyshev_traces(powers))
    assert torch.allclose(CV.probe_estimates(theta, weights, n, t, "chebyshev", powers),
                          plain - n * forms @ coef.T + (coef @ exact)[None])
    with pytest.raises(ValueError, match="needs the exact traces tr S"):
        CV.probe_estimates(theta, weights, n, t, "chebyshev")
    with pytest.raises(ValueError, match=r"variance_reduction must be one of \('chebyshev', 'paper', 'none'\)"):
        CV.probe_estimates(theta, weights, n, t, "other")
