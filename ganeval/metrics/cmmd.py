"""CMMD (Jayasumana et al., "Rethinking FID", CVPR 2024): the MMD² of L2-normalised CLIP embeddings with the
Gaussian RBF kernel k(x, y) = exp(−‖x − y‖² / (2σ²)), σ = 10, times 1000.

Two estimators, named as such:
  biased   (the reference's, google-research `cmmd/distance.py` and the cmmd-pytorch port: the
            "minimum-variance/biased" V-statistic, every kernel entry including the diagonals)
            1000 · ( Σ_ij k(x_i, x_j)/n² + Σ_ij k(y_i, y_j)/m² − 2 Σ_ij k(x_i, y_j)/(nm) )
  unbiased (the U-statistic: the XX and YY diagonals dropped)
            1000 · ( Σ_{i≠j} k(x_i, x_j)/(n(n−1)) + Σ_{i≠j} k(y_i, y_j)/(m(m−1)) − 2 Σ_ij k(x_i, y_j)/(nm) )
The kernel sums run over Gram strips (rows a..e against the rows after them), reduced as soon as they are made,
so no N×N matrix is held; each strip's kernel is summed in float64. In a run with IMD (exact k-NN) the sets' own
strips are the ones its search makes (a tap, which keeps that search in float32), and with KID summing over every
pair the real × generated strips are KID's (a hook), so CMMD then adds only the kernel's exponentials. The reference's embeddings are CLIP
ViT-L/14 at 336 px (`features=clip_l14_336`); with `normalize` (default) the rows are L2-normalised here, so
FD_CLIP computed in the same run keeps the un-normalised embeddings it is defined on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, resolve_device
from ganeval.metrics.linalg import gram_strip, matmul, strips
from ganeval.metrics.parallel import run_jobs
from ganeval.metrics.registry import (
    CROSS_GRAM_HOOKS, GramHook, Metric, PairWork, Shared, boolean, one_of, option, real, register_metric,
)
from ganeval.metrics.validation import check_same_dim, finite_result, load_features

SIGMA = 10.0  # the reference's bandwidth
SCALE = 1000.0  # the reference's factor ("more human readable")
ESTIMATORS = ("biased", "unbiased")

OPTIONS = (
    option("sigma", SIGMA, (lambda v: real()[0](v) and v > 0, "a finite number > 0"), "bandwidth σ of the Gaussian RBF kernel"),
    option("estimator", "biased", one_of(*ESTIMATORS), "biased: the reference's V-statistic; unbiased: diagonals dropped"),
    option("normalize", True, boolean(), "L2-normalise each row first (the reference's embeddings are)"),
)
DEFAULTS = {o.name: o.default for o in OPTIONS}


def reach(peak: float, n: int, d: int) -> tuple[float, float]:
    """The largest numbers formed: squared distances ≤ 4·D·peak² (kernel entries are ≤ 1, sums ≤ n² in float64)."""
    r = 4.0 * d * peak * peak
    return r, max(r, float(n) * n)


def prepared_rows(x: torch.Tensor, normalize: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows (L2-normalised when asked; a zero row stays zero) and their squared norms."""
    if normalize:
        norm = torch.linalg.vector_norm(x, dim=1, keepdim=True)
        x = x / torch.where(norm > 0, norm, torch.ones_like(norm))
    return x, (x * x).sum(dim=1)


def kernel_sum(g: torch.Tensor, sq_rows: torch.Tensor, sq_cols: torch.Tensor, gamma: float) -> torch.Tensor:
    """Σ exp(−γ·max(|r|² + |c|² − 2g, 0)) over a Gram block g, in float64 (the block is overwritten)."""
    d2 = g.mul_(-2.0).add_(sq_rows[:, None]).add_(sq_cols[None, :]).clamp_min_(0.0)
    return d2.mul_(-gamma).exp_().sum(dim=1).sum(dtype=torch.float64)


def self_strip_sum(x: torch.Tensor, sq: torch.Tensor, a: int, e: int, gamma: float) -> torch.Tensor:
    """Σ_{i<j} k(x_i, x_j) over rows i in a..e (every j > i): a Gram strip with its leading block's lower
    triangle and diagonal left out."""
    g = gram_strip(x, a, e)
    d2 = g.mul_(-2.0).add_(sq[a:e, None]).add_(sq[None, a:]).clamp_min_(0.0)
    k = d2.mul_(-gamma).exp_()
    k[:, : e - a].triu_(1)
    return k.sum(dim=1).sum(dtype=torch.float64)


def cross_strip_sum(x: torch.Tensor, sx: torch.Tensor, y: torch.Tensor, sy: torch.Tensor, a: int, e: int,
                    gamma: float) -> torch.Tensor:
    """Σ_{i in a..e, j} k(x_i, y_j) from the Gram strip x[a:e]·yᵀ."""
    return kernel_sum(matmul(x[a:e], y.T), sx[a:e], sy, gamma)


@dataclass
class CmmdStatistics:
    """A set's CMMD statistics: its rows as given and (normalised) as compared, their squared norms and
    Σ_{i<j} k(x_i, x_j) (float64)."""

    raw: torch.Tensor
    x: torch.Tensor
    sq: torch.Tensor
    upper: float


def scaled_kernel_sum(g: torch.Tensor, inv_r: torch.Tensor, inv_c: torch.Tensor, sq_r: torch.Tensor,
                      sq_c: torch.Tensor, gamma: float, upper: bool) -> torch.Tensor:
    """The kernel sum of a raw Gram block g = x[rows]·x[cols]ᵀ (left unmodified) of the rows scaled by inv (1/|x|
    when normalising, else 1); with `upper`, only entries right of the leading block's diagonal (a set's strip)."""
    d2 = (g * inv_r[:, None]).mul_(inv_c[None, :]).mul_(-2.0).add_(sq_r[:, None]).add_(sq_c[None, :]).clamp_min_(0.0)
    k = d2.mul_(-gamma).exp_()
    if upper:
        k[:, : g.shape[0]].triu_(1)
    return k.sum(dim=1).sum(dtype=torch.float64)


class CmmdTap:
    """Sums the kernel of a set's Gram strips x[a:e]·x[a:]ᵀ while another metric's exact k-NN search makes them
    (IMD's, or precision/recall's), so the set's own strips are not computed twice (a GramTap's interface)."""

    def __init__(self, x: torch.Tensor, sigma: float, normalize: bool) -> None:
        self.inv = inverse_norms(x, normalize)
        self.sq = (x * x).sum(dim=1) * self.inv * self.inv
        self.gamma = 1.0 / (2.0 * sigma * sigma)
        self.parts: dict[int, torch.Tensor] = {}

    def __call__(self, a: int, g: torch.Tensor) -> None:
        e = a + g.shape[0]
        inv, sq = self.inv.to(g.dtype), self.sq.to(g.dtype)
        self.parts[a] = scaled_kernel_sum(g, inv[a:e], inv[a:], sq[a:e], sq[a:], self.gamma, upper=True)

    def collected(self) -> float | None:
        """The upper-triangle sum, or None when no strip was made."""
        return float(sum(self.parts[a] for a in sorted(self.parts))) if self.parts else None


def inverse_norms(x: torch.Tensor, normalize: bool) -> torch.Tensor:
    """1/|row| (1 for a zero row, which stays zero) when normalising, else ones."""
    if not normalize:
        return torch.ones(x.shape[0], dtype=x.dtype, device=x.device)
    norm = torch.linalg.vector_norm(x, dim=1)
    return 1.0 / torch.where(norm > 0, norm, torch.ones_like(norm))


def statistics(x: torch.Tensor, sigma: float, normalize: bool, tap: CmmdTap | None = None) -> CmmdStatistics:
    """The statistics stage: the set's upper-triangle kernel sum, from `tap` (strips another metric made) or over
    Gram strips of its own (jobs in parallel on CPU)."""
    xn, sq = prepared_rows(x, normalize)
    upper = tap.collected() if tap is not None else None
    if upper is None:
        gamma = 1.0 / (2.0 * sigma * sigma)
        jobs = [partial(self_strip_sum, xn, sq, a, e, gamma) for a, e in strips(xn.shape[0], xn.device)]
        upper = float(sum(run_jobs(jobs, xn.device)))
    return CmmdStatistics(x, xn, sq, upper)


def combine(a: CmmdStatistics, b: CmmdStatistics, cross: float, estimator: str) -> float:
    """The estimator from the two sets' upper sums and the cross sum (k(x, x) = 1 on the diagonals)."""
    n, m = a.x.shape[0], b.x.shape[0]
    if estimator == "biased":
        kxx, kyy = (2 * a.upper + n) / (n * n), (2 * b.upper + m) / (m * m)
    else:
        kxx, kyy = 2 * a.upper / (n * (n - 1)), 2 * b.upper / (m * (m - 1))
    return finite_result(SCALE * (kxx + kyy - 2 * cross / (n * m)), "CMMD")


def cross_jobs(a: CmmdStatistics, b: CmmdStatistics, sigma: float) -> list[Any]:
    """Σ_ij k(x_i, y_j) as one job per row strip of x."""
    gamma = 1.0 / (2.0 * sigma * sigma)
    dtype = torch.promote_types(a.x.dtype, b.x.dtype)
    x, y = a.x.to(dtype), b.x.to(dtype)
    sx, sy = a.sq.to(dtype), b.sq.to(dtype)
    return [partial(cross_strip_sum, x, sx, y, sy, s, e, gamma) for s, e in strips(x.shape[0], x.device)]


def cmmd(x: ArrayLike, y: ArrayLike, sigma: float = SIGMA, estimator: str = "biased", normalize: bool = True,
         device: str | torch.device | None = None) -> float:
    """CMMD of embeddings x (N×D) and y (M×D): the reference's value with the defaults (see the module doc).

    Args:
        x: The real embeddings, N×D (CLIP's, `features="clip_l14_336"`, for the paper's number).
        y: The generated embeddings, M×D.
        sigma: The Gaussian kernel's bandwidth.
        estimator: `"biased"` (the reference's V-statistic) or `"unbiased"` (the kernel matrices' diagonals dropped).
        normalize: L2-normalise each row first (the reference's embeddings are).
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        The MMD² of the Gaussian kernel, ×1000 as the reference reports it; lower is better.

    Examples:
        >>> from ganeval.metrics import cmmd
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> round(cmmd(x, y), 3)
        0.963
    """
    o = METRIC.resolve({"sigma": sigma, "estimator": estimator, "normalize": normalize}, where="")
    dev = resolve_device(device, x, y)
    reaches = [("CMMD", lambda peak, n, d: reach(peak, n, d))]
    xt = load_features(x, "x", dev, min_rows=2, reaches=reaches)
    yt = load_features(y, "y", dev, min_rows=2, reaches=reaches)
    check_same_dim(xt.shape[1], yt.shape[1], "CMMD")
    a, b = statistics(xt, o["sigma"], o["normalize"]), statistics(yt, o["sigma"], o["normalize"])
    cross = float(sum(run_jobs(cross_jobs(a, b, o["sigma"]), dev)))
    return combine(a, b, cross, o["estimator"])


def _tap(x: torch.Tensor, o: Mapping[str, Any]) -> CmmdTap:
    return CmmdTap(x, o["sigma"], o["normalize"])


def _prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: Any, *,
             context: Shared | None = None) -> CmmdStatistics:
    return statistics(x, o["sigma"], o["normalize"], tap)


class CrossSum:
    """Σ_ij k(x_i, y_j) of a pair from KID's real × generated Gram strips (a hook), strip by strip."""

    def __init__(self, a: CmmdStatistics, b: CmmdStatistics, sigma: float, normalize: bool) -> None:
        dtype = torch.promote_types(a.x.dtype, b.x.dtype)
        self.inv_a, self.inv_b = inverse_norms(a.raw, normalize).to(dtype), inverse_norms(b.raw, normalize).to(dtype)
        self.sq_a, self.sq_b = a.sq.to(dtype), b.sq.to(dtype)
        self.gamma = 1.0 / (2.0 * sigma * sigma)
        self.parts: dict[int, torch.Tensor] = {}

    def __call__(self, a: int, g: torch.Tensor) -> None:
        e = a + g.shape[0]
        self.parts[a] = scaled_kernel_sum(g, self.inv_a[a:e], self.inv_b, self.sq_a[a:e], self.sq_b, self.gamma, False)

    def total(self) -> float:
        return float(sum(self.parts[a] for a in sorted(self.parts)))


def _pair(a: CmmdStatistics, b: CmmdStatistics, o: Mapping[str, Any], rng: np.random.Generator, *,
          context: Shared | None = None) -> PairWork:
    """The real × generated kernel sum: on KID's cross Gram strips when KID sums over every pair, else strip jobs of
    its own; draws nothing from `rng`."""
    hooks = None if context is None else context.memo.get(CROSS_GRAM_HOOKS)
    if hooks is not None:
        cross = CrossSum(a, b, o["sigma"], o["normalize"])
        hooks.append(cross)
        return PairWork([], lambda results: combine(a, b, cross.total(), o["estimator"]))
    jobs = cross_jobs(a, b, o["sigma"])
    return PairWork(jobs, lambda results: combine(a, b, float(sum(results)), o["estimator"]))


METRIC = register_metric(Metric(
    name="cmmd", options=OPTIONS, prepare=_prepare, pair=_pair, tap=_tap, shares=True, label="CMMD",
    reach=lambda peak, n, d, o: reach(peak, n, d),
    doc="MMD² ×1000 of L2-normalised embeddings, Gaussian RBF σ=10 (Jayasumana et al. 2024; use features=clip_l14_336)",
))
