"""FID: the Fréchet distance between Gaussians fitted to two feature sets (float64, unbiased covariance).

tr √(Σ₁Σ₂) comes from a symmetric eigendecomposition: with Σ₁ = BBᵀ (Cholesky, or an eigen square root
when Σ₁ is singular), the eigenvalues of Σ₁Σ₂ are those of the symmetric PSD matrix BᵀΣ₂B. This gives
the trace of pytorch-fid's `scipy.linalg.sqrtm` formula without its slow, complex Schur route.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, as_tensor, resolve_device
from ganeval.metrics.linalg import column_sums64, eigvalsh, lower_congruence, matmul, syrk_t
from ganeval.metrics.memory import covariances
from ganeval.metrics.registry import GramHook, GramTap, Metric, PairWork, register_metric
from ganeval.metrics.validation import (
    FLOAT32_TINY, FLOAT64_MAX, FLOAT64_TINY, RESCALE, check_same_dim, detached, finite_result, load_features, peak_of,
)


def moments(
    x: ArrayLike, device: torch.device, product_dtype: torch.dtype = torch.float64, keep_centred: bool = True
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Mean, unbiased covariance and (if `keep_centred`) the centred data, in float64.

    The covariance's product may run in `product_dtype`: float32 halves its cost, and on pool3-like
    10k×2048 sets FID then moved by < 1e-8 relative. Then, unless the float64 centred data is wanted,
    the rows are centred in float32 too, by the float64 mean rounded once (a shift of the mean by δ
    changes the covariance by only n/(n−1)·δδᵀ); no float64 copy of the data is made.
    """
    if product_dtype == torch.float64 or keep_centred:
        xt = as_tensor(x, device, torch.float64)
        mu = xt.mean(dim=0)
        fresh = xt.data_ptr() != (x.data_ptr() if isinstance(x, torch.Tensor) else x.__array_interface__["data"][0])
        centred = xt.sub_(mu) if fresh else xt - mu  # centre in place when the float64 copy is ours
        sigma = syrk_t(centred.to(product_dtype)).to(torch.float64) / (xt.shape[0] - 1)
        return mu, sigma, centred if keep_centred else None
    xt = as_tensor(x, device)
    mu = column_sums64(xt) / xt.shape[0]
    sigma = syrk_t(xt.to(product_dtype) - mu.to(product_dtype)).to(torch.float64) / (xt.shape[0] - 1)
    return mu, sigma, None


def reach(peak: float, n: int, d: int) -> tuple[float, float, bool, bool]:
    """The largest numbers FID forms (see `validation.Reach`): the covariance product sums N squares of
    centred entries (≤ 2·peak) in the working precision; the eigenvalues of Σ₁Σ₂ reach (tr Σ)² ≤
    (4·D·peak²)² in float64. And whether it keeps its precision at the small end: the squares (~peak²)
    stay 2²⁴ above float32's smallest normal number, the eigenvalues (~peak⁴) 2⁵² above float64's (below,
    they lose bits to underflow: at peak 1e-80 FID was off by 6e-4, at 1e-100 it was tr Σ₁ + tr Σ₂)."""
    square = 4.0 * peak * peak
    small = peak * peak
    return (n * square, max(n * square, (d * square) * (d * square)),
            peak == 0 or small >= FLOAT32_TINY * 2.0**24, peak == 0 or small * small >= FLOAT64_TINY * 2.0**52)


def load(x: ArrayLike, name: str, device: torch.device) -> torch.Tensor:
    """A feature set checked for FID (finite, ≥ 2 rows, in range) and on `device`."""
    return load_features(x, name, device, min_rows=2, reaches=[("FID", reach)])


def statistics(x: ArrayLike, device: str | torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and unbiased covariance (ddof=1) of the rows of x, in float64."""
    dev = resolve_device(device, x)
    mu, sigma, _ = moments(load(x, "x", dev), dev)
    return mu, sigma


Factor = tuple[torch.Tensor, bool]  # B with BBᵀ = Σ, and whether B is lower triangular


def square_root_factor(sigma: torch.Tensor) -> Factor:
    """B with BBᵀ = Σ: the Cholesky factor (lower triangular), or U·√max(λ, 0) when Σ is singular (N ≤ D)."""
    chol, info = torch.linalg.cholesky_ex(sigma)
    if int(info) == 0:
        return chol, True
    lam, u = torch.linalg.eigh(sigma)
    return u * lam.clamp_min(0).sqrt(), False


def data_factor(centred: torch.Tensor) -> Factor:
    """B = Xcᵀ/√(N−1) from the float64 centred data, BBᵀ = Σ: the cheaper factor when N ≤ D (BᵀΣ₂B is N×N)."""
    return centred.T / (centred.shape[0] - 1) ** 0.5, False


def trace_sqrt_product(sigma1: torch.Tensor, sigma2: torch.Tensor, factor1: Factor | None = None) -> torch.Tensor:
    """tr √(Σ₁Σ₂) for symmetric PSD Σ₁, Σ₂ via the eigenvalues of BᵀΣ₂B, where BBᵀ = Σ₁ (`factor1` if
    given, else Σ₁'s Cholesky factor, whose triangle halves the products)."""
    b, lower = square_root_factor(sigma1) if factor1 is None else factor1
    m = lower_congruence(b, sigma2) if lower else matmul(matmul(b.T, sigma2), b)
    m = (m + m.T) / 2
    return eigvalsh(m).clamp_min(0).sqrt().sum()


@dataclass
class FidStatistics:
    """A set's FID statistics: mean and covariance (float64), and the float64 centred data when it is
    the cheaper square-root factor of Σ (N ≤ D)."""

    mu: torch.Tensor
    sigma: torch.Tensor
    centred: torch.Tensor | None = None
    _factor: Factor | None = None

    def factor(self) -> Factor:
        """B with BBᵀ = Σ, made on first use and kept (a real set's serves every generator)."""
        if self._factor is None:
            self._factor = data_factor(self.centred) if self.centred is not None else square_root_factor(self.sigma)
        return self._factor


def fid_statistics(x: torch.Tensor, product_dtype: torch.dtype = torch.float64) -> FidStatistics:
    """The statistics stage: moments of the rows of x (see `moments` for `product_dtype`)."""
    n, d = x.shape
    return FidStatistics(*moments(x, x.device, product_dtype=product_dtype, keep_centred=n <= d))


ROUNDING_RTOL = 1e-12  # a negative FID above −this·(‖μ₁ − μ₂‖² + tr Σ₁ + tr Σ₂) is round-off: reported as 0


def fid_from_statistics(a: FidStatistics, b: FidStatistics) -> float:
    """The value stage: ‖μ₁ − μ₂‖² + tr Σ₁ + tr Σ₂ − 2 tr √(Σ₁Σ₂), in float64. FID is never negative; the
    difference of those sums is, by round-off, down to ~1e-15 of them (a set against itself: −8.5e-14), so a value
    within ROUNDING_RTOL of their total below 0 is reported as 0, and a lower one as it comes (it cannot come from
    covariances)."""
    diff = a.mu - b.mu
    root = trace_sqrt_product(a.sigma, b.sigma, a.factor())
    total = diff @ diff + torch.trace(a.sigma) + torch.trace(b.sigma)
    value = float(total - 2 * root)
    if -ROUNDING_RTOL * float(total) <= value < 0:
        value = 0.0
    return finite_result(value, "FID")


def frechet_distance(
    mu1: ArrayLike, sigma1: ArrayLike, mu2: ArrayLike, sigma2: ArrayLike, device: str | torch.device | None = None
) -> float:
    """‖μ₁ − μ₂‖² + tr Σ₁ + tr Σ₂ − 2 tr √(Σ₁Σ₂), in float64, from given means and covariances.

    Args:
        mu1: The first set's mean, D.
        sigma1: The first set's covariance, D×D.
        mu2: The second set's mean, D.
        sigma2: The second set's covariance, D×D.
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        The Fréchet distance (e.g. FID from pytorch-fid's statistics files).

    Examples:
        >>> import numpy as np
        >>> from ganeval.metrics import frechet_distance
        >>> round(frechet_distance(np.zeros(2), np.eye(2), np.ones(2), np.eye(2)), 3)
        2.0
    """
    dev = resolve_device(device, mu1, sigma1, mu2, sigma2)
    m1, m2 = (as_tensor(detached(v), dev, torch.float64).reshape(-1) for v in (mu1, mu2))
    s1, s2 = (as_tensor(detached(s), dev, torch.float64) for s in (sigma1, sigma2))
    d = m1.shape[0]
    for name, s in (("sigma1", s1), ("sigma2", s2)):
        if s.shape != (d, d):
            raise ValueError(f"{name} must be {d}×{d} to match the means, got {tuple(s.shape)}")
    if m2.shape[0] != d:
        raise ValueError(f"mu1 has {d} entries but mu2 has {m2.shape[0]}; both must come from the same features")
    peaks = {name: peak_of(v, name) for name, v in (("mu1", m1), ("sigma1", s1), ("mu2", m2), ("sigma2", s2))}
    mu_peak, sigma_peak = max(peaks["mu1"], peaks["mu2"]), max(peaks["sigma1"], peaks["sigma2"])
    if not max(4 * d * mu_peak * mu_peak, (d * sigma_peak) * (d * sigma_peak)) <= FLOAT64_MAX:
        raise ValueError(
            f"frechet_distance: means up to {mu_peak:.3g} and covariances up to {sigma_peak:.3g} would overflow "
            f"float64 (tr √(Σ₁Σ₂) forms (D·max|Σ|)²); {RESCALE}"
        )
    for name, peak, scale in (("means", mu_peak, mu_peak * mu_peak), ("covariances", sigma_peak, sigma_peak)):
        if 0 < scale and scale * scale < FLOAT64_TINY * 2.0**52:  # the eigenvalues' scale, as in `reach`
            raise ValueError(f"frechet_distance: {name} no larger than {peak:.3g} would lose most of FID's "
                             f"precision to float64 underflow (its eigenvalues ~ max|Σ|²); {RESCALE}")
    return fid_from_statistics(FidStatistics(m1, s1), FidStatistics(m2, s2))


def fid(x: ArrayLike, y: ArrayLike, device: str | torch.device | None = None) -> float:
    """FID between feature sets x (N×D) and y (M×D), as pytorch-fid computes it from the same features.

    Args:
        x: The real features, N×D (numpy array or torch tensor).
        y: The generated features, M×D (the same D).
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        The Fréchet distance of the two sets' Gaussian fits (float64 statistics, no `scipy.linalg.sqrtm`).

    Examples:
        >>> from ganeval.metrics import fid
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> round(fid(x, y), 3)
        0.974
    """
    dev = resolve_device(device, x, y)
    xt, yt = load(x, "x", dev), load(y, "y", dev)
    check_same_dim(xt.shape[1], yt.shape[1], "FID")
    return fid_from_statistics(fid_statistics(xt), fid_statistics(yt))


def _prepare(x: torch.Tensor, options: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None) -> FidStatistics:
    # the covariance product in float32 for float32 features (FID moves by < 1e-8 relative)
    return fid_statistics(x, product_dtype=torch.promote_types(x.dtype, torch.float32))


def _pair(a: FidStatistics, b: FidStatistics, options: Mapping[str, Any], rng: np.random.Generator) -> PairWork:
    return PairWork([partial(fid_from_statistics, a, b)], lambda results: results[0])


METRIC = register_metric(Metric(
    name="fid", options=(), prepare=_prepare, pair=_pair, label="FID", reach=lambda peak, n, d, o: reach(peak, n, d),
    memory=covariances,
    lowest=0.0,
    doc="Fréchet distance of Gaussians fitted to the two feature sets (pytorch-fid's formula)",
))
