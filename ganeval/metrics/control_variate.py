"""Per-probe heat-trace estimates with a control variate whose trace is known exactly.

Each probe v (unit norm) gives n·vᵀ e^(−tL) v, a Hutchinson estimate of tr e^(−tL); SLQ replaces the quadratic
form by an m-step Gauss quadrature. Subtracting n·vᵀ p(L) v − tr p(L) for a polynomial p with tr p(L) known
leaves the expectation unchanged and removes the part of each estimate that p explains:

- "paper": the reference's linear term (its appendix), p(λ) = −t·e^−t·λ with tr L = n;
- "chebyshev": e^(−tλ) = e^(−t)·e^(t·s) (s = 1 − λ, an eigenvalue of S = D^−½AD^−½ in [−1, 1]) expanded in
  Chebyshev polynomials, e^(t·s) = I₀(t) + 2Σ I_j(t)·T_j(s), cut at `CHEBYSHEV_DEGREE`. tr T_j(S) is exact from
  sparse products of S (`laplacian.adjacency_power_traces`), and vᵀT_j(S)v is exact from the same quadrature
  (Gauss quadrature of m steps integrates polynomials up to degree 2m − 1). What is left, e^(−tλ) minus its
  degree-4 expansion, varies so little over the spectrum that the probes' noise falls ~100-fold in standard deviation
  at the temperatures IMD's maximum lies on (docs/metrics.md: IMD's own noise);
- "none": the plain estimate.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.special import ive

CONTROL_VARIATES = ("chebyshev", "paper", "none")
CHEBYSHEV_DEGREE = 4  # tr S⁴ = ‖S²‖²_F: one sparse product, a few % of the Lanczos time (scripts/imd_noise.py)


def control_variate(value: object) -> str:
    """What a `variance_reduction` value means: True is the paper's term, False none (their meaning before the
    Chebyshev control variate became the default)."""
    if isinstance(value, (bool, np.bool_)):
        return "paper" if value else "none"
    return str(value)


def recorded_control(value: object) -> bool | str:
    """The form a `variance_reduction` value is recorded and hashed in: the paper's term and none as the booleans
    results folders made before "chebyshev" recorded (so those resume), "chebyshev" by name."""
    return {"paper": True, "none": False}.get(control_variate(value), control_variate(value))


def heat_chebyshev_coefficients(t: np.ndarray, degree: int) -> np.ndarray:
    """T×(degree+1) coefficients c_j(t) with e^(−t(1 − s)) ≈ Σ_j c_j(t)·T_j(s) on s ∈ [−1, 1]: c₀ = e^−t·I₀(t),
    c_j = 2·e^−t·I_j(t) (the generating function of the modified Bessel functions; `ive` is e^−t·I_j(t))."""
    c = ive(np.arange(degree + 1)[None, :], np.asarray(t, dtype=np.float64)[:, None])
    c[:, 1:] *= 2.0
    return c


def chebyshev_basis(s: torch.Tensor, degree: int) -> torch.Tensor:
    """(degree+1)×s.shape: T_j(s) for j = 0..degree, by the three-term recurrence."""
    terms = [torch.ones_like(s), s]
    while len(terms) <= degree:
        terms.append(2.0 * s * terms[-1] - terms[-2])
    return torch.stack(terms[: degree + 1])


def chebyshev_forms(theta: torch.Tensor, weights: torch.Tensor, degree: int) -> torch.Tensor:
    """nv×(degree+1) quadratures vᵀT_j(S)v of each probe's Gauss nodes θ (eigenvalues of L) and weights."""
    return (weights[None] * chebyshev_basis(1.0 - theta, degree)).sum(dim=2).T


def chebyshev_traces(power_traces: np.ndarray) -> np.ndarray:
    """tr T_j(S) for j = 0..d from tr S^i, i = 0..d (T_j's coefficients in powers of s)."""
    d = len(power_traces) - 1
    return np.array([np.polynomial.chebyshev.cheb2poly(np.eye(d + 1)[j]) @ power_traces[: j + 1]
                     for j in range(d + 1)])


def paper_term(n: int, t: torch.Tensor, trace_l: torch.Tensor) -> torch.Tensor:
    """nv×T: the paper's control variate t·e^−t·(n·vᵀLv − tr L) of each probe (tr L = n), added to its estimate."""
    return (t * torch.exp(-t))[None, :] * (n * trace_l[:, None] - n)


def probe_estimates(theta: torch.Tensor, weights: torch.Tensor, n: int, t: torch.Tensor, control: str,
                    power_traces: np.ndarray | None = None) -> torch.Tensor:
    """nv×T single-probe estimates of tr e^(−tL) with the control variate `control`; their mean over the probes is
    the SLQ estimate, their spread its standard error. `power_traces` (tr S^j, j ≤ CHEBYSHEV_DEGREE) for "chebyshev"."""
    est = n * torch.einsum("pk,tpk->pt", weights, torch.exp(-t[:, None, None] * theta[None]))
    if control == "paper":
        return est + paper_term(n, t, (weights * theta).sum(dim=1))
    if control == "chebyshev":
        if power_traces is None:
            raise ValueError("the Chebyshev control variate needs the exact traces tr S^j of the graph")
        degree = len(power_traces) - 1
        coef = torch.as_tensor(heat_chebyshev_coefficients(t.detach().cpu().numpy(), degree), dtype=est.dtype,
                               device=est.device)  # T×(d+1)
        exact = torch.as_tensor(chebyshev_traces(power_traces), dtype=est.dtype, device=est.device)
        forms = chebyshev_forms(theta, weights, degree)  # nv×(d+1)
        return est - n * forms @ coef.T + (coef @ exact)[None, :]
    if control == "none":
        return est
    raise ValueError(f"variance_reduction must be one of {CONTROL_VARIATES} (or true/false), got {control!r}")
