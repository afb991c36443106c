"""The SLQ heat-trace estimate split per probe into its two errors against the exact spectrum.

With the same unit probes v_i, three traces of exp(−tL) can be formed: the exact one (eigenvalues), the
Hutchinson estimate n/nv·Σ v_iᵀ exp(−tL) v_i (exact quadratic forms: only the probes' error) and the SLQ
estimate (Gauss quadrature of m Lanczos steps: the probes' error plus Lanczos'). SLQ − Hutchinson is the
Lanczos error, Hutchinson − exact the probes' error; the estimator-accuracy experiment measures both.
Dense eigendecompositions: small graphs only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ganeval.metrics.control_variate import (CHEBYSHEV_DEGREE, chebyshev_basis, control_variate,
                                             heat_chebyshev_coefficients, paper_term)
from ganeval.metrics.laplacian import dense_laplacian, normalized_adjacency
from ganeval.metrics.slq import lanczos, quadrature


@dataclass(frozen=True)
class Spectrum:
    """Eigenvalues λ (n) and orthonormal eigenvectors U (n×n, columns) of a graph's normalised Laplacian."""

    values: torch.Tensor
    vectors: torch.Tensor

    @property
    def n(self) -> int:
        return int(self.values.shape[0])

    def trace(self, t: torch.Tensor) -> torch.Tensor:
        """tr exp(−tL) for each t: the ground truth."""
        return torch.exp(-t[:, None] * self.values[None, :]).sum(dim=1)


def spectrum(nbrs: torch.Tensor) -> Spectrum:
    """The full eigendecomposition of the normalised Laplacian of the union k-NN graph `nbrs` (N×k indices)."""
    values, vectors = torch.linalg.eigh(dense_laplacian(nbrs))
    return Spectrum(values, vectors)


def unit_probes(probes: torch.Tensor) -> torch.Tensor:
    """The probes (n×nv) with unit columns, as the estimator uses them."""
    return probes / torch.linalg.vector_norm(probes, dim=0, keepdim=True)


@dataclass(frozen=True)
class ProbeForms:
    """Per probe i and temperature t: q[i, t] ≈ v_iᵀ exp(−tL) v_i and lap[i] ≈ v_iᵀ L v_i (nv×T and nv)."""

    q: torch.Tensor
    lap: torch.Tensor

    def estimates(self, n: int, t: torch.Tensor, variance_reduction: bool = True) -> torch.Tensor:
        """nv×T single-probe trace estimates n·q (+ the paper's control variate t·e^−t·(n·lap − n)); their mean over
        probes is the nv-probe estimate."""
        return n * self.q + paper_term(n, t, self.lap) if variance_reduction else n * self.q


def exact_forms(spec: Spectrum, probes: torch.Tensor, t: torch.Tensor) -> ProbeForms:
    """The exact quadratic forms of the unit probes: Σ_j (u_jᵀ v)² f(λ_j) (the Hutchinson estimate's terms)."""
    c2 = (spec.vectors.T @ unit_probes(probes)) ** 2  # n×nv squared components along the eigenvectors
    q = c2.T @ torch.exp(-spec.values[:, None] * t[None, :])
    return ProbeForms(q, c2.T @ spec.values)


def slq_forms(nbrs: torch.Tensor, probes: torch.Tensor, t: torch.Tensor, m: int) -> ProbeForms:
    """The m-step Gauss quadratures of the same forms: e₁ᵀ f(T_i) e₁ from each probe's Lanczos matrix T_i."""
    alpha, beta = lanczos(normalized_adjacency(nbrs), probes, m)
    theta, weights = quadrature(alpha, beta)
    q = torch.einsum("pk,tpk->pt", weights, torch.exp(-t[:, None, None] * theta[None]))
    return ProbeForms(q, (weights * theta).sum(dim=1))


def single_probe_variance(spec: Spectrum, t: torch.Tensor, variance_reduction: bool | str = True) -> torch.Tensor:
    """Exact variance over one probe uniform on the unit sphere (a normalised Gaussian) of the single-probe
    estimate n·vᵀAv, A = exp(−tL) less the control variate's polynomial (`control_variate`: True is the paper's
    t·e^−t·L term): 2n²/(n+2)·var(a), a = A's eigenvalues (population variance). The nv-probe estimate's
    variance is this over nv."""
    n = spec.n
    a = torch.exp(-t[:, None] * spec.values[None, :])
    control = control_variate(variance_reduction)
    if control == "paper":
        a = a + (t * torch.exp(-t))[:, None] * spec.values[None, :]
    elif control == "chebyshev":
        coef = torch.as_tensor(heat_chebyshev_coefficients(t.numpy(), CHEBYSHEV_DEGREE), dtype=a.dtype)
        a = a - coef @ chebyshev_basis(1.0 - spec.values, CHEBYSHEV_DEGREE)
    return 2.0 * n * n / (n + 2) * a.var(dim=1, unbiased=False)


def lanczos_bound(m: int, t: float) -> float:
    """The paper's appendix bound (its eq. eps2, from Hochbruck & Lubich with ρ = 0.5) on the relative trace
    error of m Lanczos steps at temperature t: 20·e^(−m²/(2.5t)) for √(2t) ≤ m ≤ t, 40/t·e^(−t/2)·(e·t/(2m))^m
    for m ≥ t; NaN where the paper states none (m < √(2t))."""
    if m >= t:
        return float(40.0 / t * np.exp(-0.5 * t) * (0.5 * np.e * t / m) ** m)
    if m >= np.sqrt(2.0 * t):
        return float(20.0 * np.exp(-m * m / (2.5 * t)))
    return float("nan")


def hutchinson_bound(nv: int | np.ndarray, delta: float, rademacher: bool = False) -> np.ndarray:
    """The relative error ε that nv probes guarantee with probability 1 − δ by Roosta-Khorasani & Ascher's
    sample bounds the paper quotes: nv ≥ 8ε⁻²ln(2/δ) (Gaussian), nv ≥ 6ε⁻²ln(2/δ) (Rademacher)."""
    c = 6.0 if rademacher else 8.0
    return np.sqrt(c * np.log(2.0 / delta) / np.asarray(nv, dtype=np.float64))
