"""Memorisation metrics: authenticity (Alaa et al. 2022) and MiFID (Bai et al. 2021, Kaggle's Generative Dog
Images competition). Both compare every generated row with its nearest real row, over blocked real × generated
strips (never an N×M matrix at once): KID's cross Gram strips when KID sums over every pair in the same run (as
precision/recall/density/coverage take them), else strips of their own.

authenticity = share of generated rows g whose nearest real row r* (Euclidean) is closer to its own nearest other
    real row than to g:  mean_g 1[ d(r*, NN_real(r*)) < d(g, r*) ]  — higher is better (less copying).
    As Alaa et al.'s code computes it (`compute_alpha_precision` in vanderschaarlab/evaluating-generative-models:
    `authen = real_to_real[synth_to_real_args] < synth_to_real`, scikit-learn NearestNeighbors). Comparisons within
    the working precision's rounding are decided again from exact float64 distances, as precision/recall's are.
MiFID = FID / (d_thr + 1e-15), d = mean over generated rows of min over real rows of (1 − |cos(g, r)|), rows whose
    entries sum to 0 left out, d_thr = d if d < ε (0.1) else 1 — lower is better. As Kaggle's scoring code
    (jybai/generative-memorization-benchmark `competition_scoring.py`) computes it: the minimum is over the real
    rows for each generated row. (torchmetrics' MemorizationInformedFrechetInceptionDistance passes the sets the
    other way round, minimum over generated rows per real row, and returns 0 when FID ≤ 1e-8.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, resolve_device
from ganeval.metrics.fid import FidStatistics, fid_from_statistics, fid_statistics
from ganeval.metrics.fid import reach as fid_reach
from ganeval.metrics.knn import _exact_sq_dist, exact_knn_graph
from ganeval.metrics.linalg import matmul, strips
from ganeval.metrics.memory import covariances
from ganeval.metrics.parallel import run_jobs
from ganeval.metrics.registry import (
    CROSS_GRAM_HOOKS, GramHook, GramTap, Metric, PairWork, Shared, option, real, register_metric,
)
from ganeval.metrics.validation import check_same_dim, finite_result, load_features

FID_EPSILON = 1e-15  # Kaggle's fid_epsilon


def distance_reach(peak: float, n: int, d: int) -> tuple[float, float]:
    """Squared distances ≤ 4·D·peak²."""
    r = 4.0 * d * peak * peak
    return r, r


class CrossPass:
    """A real × generated pass in row strips of real: `part(a, g)` of each Gram strip g = real[a:a+h]·fakeᵀ (left
    unmodified), taken from KID's strips when KID sums over every pair (`take`, as precision/recall do), else made
    here as jobs; parts kept by strip (dict assignment is atomic: safe from worker threads)."""

    def __init__(self, real: torch.Tensor, fake: torch.Tensor, part: Any) -> None:
        self.real, self.fake, self.part = real, fake, part
        self.parts: dict[int, Any] = {}

    def hook(self, a: int, g: torch.Tensor) -> None:
        self.parts[a] = self.part(a, g)

    def job(self, a: int, e: int) -> None:
        self.hook(a, matmul(self.real[a:e], self.fake.T))

    def work(self, context: Shared | None) -> list[Any]:
        """Hook onto KID's cross strips when the pair offers them (no jobs), else one job per strip."""
        hooks = None if context is None else context.memo.get(CROSS_GRAM_HOOKS)
        if hooks is not None:
            hooks.append(self.hook)
            return []
        return [partial(self.job, a, e) for a, e in strips(self.real.shape[0], self.real.device)]

    def ordered(self) -> list[Any]:
        return [self.parts[a] for a in sorted(self.parts)]


# ------------------------------------------------------------------------------------------- authenticity
@dataclass
class RealBalls:
    """A set's rows, squared norms, its exact 1-NN graph and each row's squared distance to its nearest other row."""

    x: torch.Tensor
    sq: torch.Tensor
    nbrs: torch.Tensor
    radius: torch.Tensor

    def exact_radius(self, rows: torch.Tensor) -> torch.Tensor:
        """Exact float64 squared distances of `rows` to their nearest other row (from the graph's neighbours)."""
        return _exact_sq_dist(self.x, rows, self.nbrs[rows]).min(dim=1).values


def real_balls(x: torch.Tensor, graph: Any = None) -> RealBalls:
    """From an exact k-NN graph with distances (IMD's, reused) or a 1-NN search made here."""
    if graph is None or getattr(graph, "sq_dist", None) is None:
        graph = exact_knn_graph(x, 1)
    assert graph.sq_dist is not None  # an exact search keeps its distances
    d = graph.sq_dist.to(x.dtype).min(dim=1).values
    return RealBalls(x, (x * x).sum(dim=1), graph.nbrs, d.contiguous())


def nearest_real(real: RealBalls, sq_f: torch.Tensor, a: int, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For every generated row, the smallest squared distance to real rows a..a+h (from their Gram strip g, left
    unmodified) and which row (first on ties)."""
    d2 = torch.add(sq_f[None, :], g, alpha=-2.0).add_(real.sq[a : a + g.shape[0], None])
    low, idx = d2.min(dim=0)
    return low, idx + a


def authenticity_value(real: RealBalls, fake: torch.Tensor, parts: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """Merge the strips' nearest rows (a strictly smaller distance replaces, so ties keep the lower row) and
    decide each generated row; margins within rounding of 0 are decided from exact float64 distances."""
    low, idx = parts[0]
    low, idx = low.clone(), idx.clone()
    for l2, i2 in parts[1:]:
        better = l2 < low
        low[better], idx[better] = l2[better], i2[better]
    margin = low - real.radius[idx]  # authentic where d²(g, r*) − R²(r*) > 0
    eps = torch.finfo(low.dtype).eps
    big = float(real.sq.max()) + float((fake * fake).sum(dim=1).max())
    tol = 12.0 * eps * (math.sqrt(real.x.shape[1]) + 1.0) * big
    authentic = margin > tol
    unsure = torch.nonzero(margin.abs() <= tol).flatten()
    if unsure.numel():
        rows = idx[unsure]
        diff = real.x[rows].double() - fake[unsure].double()
        authentic[unsure] = real.exact_radius(rows) < (diff * diff).sum(dim=1)
    return float(authentic.double().mean())


def authenticity_work(real: RealBalls, fake: torch.Tensor, context: Shared | None = None) -> PairWork:
    """The cross pass (KID's strips or jobs of its own) and the value from all strips."""
    dtype = torch.promote_types(real.x.dtype, fake.dtype)
    r = RealBalls(real.x.to(dtype), real.sq.to(dtype), real.nbrs, real.radius.to(dtype))
    f = fake.to(dtype)
    cross = CrossPass(r.x, f, partial(nearest_real, r, (f * f).sum(dim=1)))
    return PairWork(cross.work(context), lambda results: authenticity_value(r, f, cross.ordered()))


def authenticity(real: ArrayLike, fake: ArrayLike, device: str | torch.device | None = None) -> float:
    """Alaa et al.'s authenticity of `fake` against `real` (N×D, M×D): see the module doc.

    Args:
        real: The real features, N×D.
        fake: The generated features, M×D.
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        The share of generated rows that are farther from their nearest real row than that row is from its own
        nearest real neighbour; higher is better (less copying).

    Examples:
        >>> from ganeval.metrics import authenticity
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> round(authenticity(x, y), 3)
        0.616
    """
    dev = resolve_device(device, real, fake)
    reaches = [("the distances", distance_reach)]
    xr = load_features(real, "real", dev, min_rows=2, reaches=reaches)
    xf = load_features(fake, "fake", dev, min_rows=1, reaches=reaches)
    check_same_dim(xr.shape[1], xf.shape[1], "authenticity")
    w = authenticity_work(real_balls(xr), xf)
    return finite_result(w.finish(run_jobs(w.jobs, dev)), "authenticity")


def _reusable_graph(context: Shared | None) -> Any:
    """IMD's exact k-NN graph of this set (with its distances) when the run computes one."""
    if context is None:
        return None
    imd = context.chosen.get("imd")
    if imd is not None and imd["knn"] == "exact" and "imd" in context.stats:
        return context.stats["imd"]
    return None


def _auth_prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None, *,
                  context: Shared | None = None) -> RealBalls:
    return real_balls(x, _reusable_graph(context))


def _auth_pair(a: RealBalls, b: RealBalls, o: Mapping[str, Any], rng: np.random.Generator, *,
               context: Shared | None = None) -> PairWork:
    return authenticity_work(a, b.x, context)


AUTHENTICITY = register_metric(Metric(
    name="authenticity", options=(), prepare=_auth_prepare, pair=_auth_pair, shares=True, higher_is_better=True,
    label="Authenticity", reach=lambda peak, n, d, o: distance_reach(peak, n, d),
    doc="share of generated samples farther from their nearest real sample than that sample's nearest real "
        "neighbour (Alaa et al. 2022, AuthPct)",
))


# --------------------------------------------------------------------------------------------------- MiFID
MIFID_OPTIONS = (
    option("cosine_distance_eps", 0.1, (lambda v: real()[0](v) and v > 0, "a finite number > 0"),
           "the memorisation threshold ε (Kaggle: 0.1 for Inception features)"),
)


@dataclass
class MifidStatistics:
    """A set's FID statistics and its rows."""

    fid: FidStatistics
    x: torch.Tensor


def mifid_statistics(x: torch.Tensor, product_dtype: torch.dtype | None = None) -> MifidStatistics:
    """FID's moments (the covariance product in `product_dtype`, default: the rows' precision, at least float32, as
    the protocol's FID) and the rows (normalised per strip in the cross pass)."""
    dtype = torch.promote_types(x.dtype, torch.float32) if product_dtype is None else product_dtype
    return MifidStatistics(fid_statistics(x, product_dtype=dtype), x)


def largest_cosine(inv_r: torch.Tensor, inv_f: torch.Tensor, a: int, g: torch.Tensor) -> torch.Tensor:
    """For every generated row, max |cos| over real rows a..a+h from their Gram strip g (left unmodified); rows left
    out (zero sum: inverse norm 0) count as −1 for the real side, so they are never the nearest."""
    c = (g * inv_r[a : a + g.shape[0], None]).mul_(inv_f[None, :]).abs_()
    c[inv_r[a : a + g.shape[0]] == 0] = -1.0
    return c.amax(dim=0)


def mifid_value(fid_value: float, parts: list[torch.Tensor], kept_fake: torch.Tensor, eps: float) -> float:
    """FID / (thresholded mean over kept generated rows of min (1 − |cos|) + 1e-15)."""
    best = torch.stack(parts).amax(dim=0)[kept_fake]
    d = float((1.0 - best.double()).mean())
    d_thr = d if d < eps else 1.0
    return finite_result(fid_value / (d_thr + FID_EPSILON), "MiFID")


def inverse_norms(x: torch.Tensor) -> torch.Tensor:
    """1/|row| for the rows Kaggle's `cosine_distance` keeps (entries not summing to 0), 0 for the others."""
    keep = x.sum(dim=1) != 0
    norm = torch.linalg.vector_norm(x, dim=1)
    return torch.where(keep, 1.0 / torch.where(keep, norm, torch.ones_like(norm)), torch.zeros_like(norm))


def mifid_work(real: MifidStatistics, fake: MifidStatistics, eps: float, context: Shared | None = None) -> PairWork:
    """FID's job and the cross pass of |cos| (KID's strips, or jobs of its own)."""
    inv_r, inv_f = inverse_norms(real.x), inverse_norms(fake.x)
    if not bool((inv_r > 0).any()) or not bool((inv_f > 0).any()):
        raise ValueError("MiFID: every row of a set sums to 0, so no cosine distance is defined (Kaggle's code leaves "
                         "such rows out): check the features")
    dtype = torch.promote_types(real.x.dtype, fake.x.dtype)
    r, f = real.x.to(dtype), fake.x.to(dtype)
    cross = CrossPass(r, f, partial(largest_cosine, inv_r.to(dtype), inv_f.to(dtype)))
    jobs: list[Any] = [partial(fid_from_statistics, fake.fid, real.fid)] + cross.work(context)
    return PairWork(jobs, lambda results: mifid_value(float(results[0]), cross.ordered(), inv_f > 0, eps))


def mifid(real: ArrayLike, fake: ArrayLike, cosine_distance_eps: float = 0.1,
          device: str | torch.device | None = None) -> float:
    """Kaggle's MiFID of `fake` against `real` (N×D, M×D): see the module doc.

    Args:
        real: The real features, N×D.
        fake: The generated features, M×D.
        cosine_distance_eps: ε: a mean cosine distance to the nearest real row below it divides FID by it.
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        FID / (d_thr + 1e-15), d_thr the mean cosine distance if below ε, else 1; lower is better.

    Examples:
        >>> from ganeval.metrics import mifid
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> round(mifid(x, y), 3)
        0.974
    """
    MIFID.resolve({"cosine_distance_eps": cosine_distance_eps}, where="")
    dev = resolve_device(device, real, fake)
    reaches = [("MiFID", lambda peak, n, d: fid_reach(peak, n, d))]
    xr = load_features(real, "real", dev, min_rows=2, reaches=reaches)
    xf = load_features(fake, "fake", dev, min_rows=2, reaches=reaches)
    check_same_dim(xr.shape[1], xf.shape[1], "MiFID")
    # float64 covariance products, as `fid` computes them
    w = mifid_work(mifid_statistics(xr, torch.float64), mifid_statistics(xf, torch.float64), float(cosine_distance_eps))
    return w.finish(run_jobs(w.jobs, dev))


def _mifid_prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None, *,
                   context: Shared | None = None) -> MifidStatistics:
    return mifid_statistics(x)


def _mifid_pair(a: MifidStatistics, b: MifidStatistics, o: Mapping[str, Any], rng: np.random.Generator, *,
                context: Shared | None = None) -> PairWork:
    return mifid_work(a, b, float(o["cosine_distance_eps"]), context)


MIFID = register_metric(Metric(
    name="mifid", options=MIFID_OPTIONS, prepare=_mifid_prepare, pair=_mifid_pair, label="MiFID", shares=True,
    reach=lambda peak, n, d, o: fid_reach(peak, n, d), memory=covariances,
    doc="memorisation-informed FID: FID over the thresholded mean nearest cosine distance (Kaggle, Bai et al. 2021)",
))
