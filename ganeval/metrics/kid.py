"""KID: the unbiased MMD² with the cubic polynomial kernel (x·y/d + 1)³ over random subsets
(Bińkowski et al.): XX and YY diagonals dropped, the full XY block kept; mean and std (ddof=0)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping, Sequence, cast

import numpy as np
import torch

from ganeval.common import ArrayLike, as_tensor, resolve_device
from ganeval.metrics.linalg import gram_strip, matmul, strips
from ganeval.metrics.parallel import run_jobs
from ganeval.metrics.registry import (
    CROSS_GRAM_HOOKS, GramHook, GramTap, Metric, PairWork, Shared, integer, option, real, register_metric,
)
from ganeval.metrics.validation import (
    FLOAT32_TINY, FLOAT64_TINY, check_same_dim, check_subset_size, detached, finite_result, inspect_features, power, working_dtype,
)

CHUNK_ELEMENTS = 1 << 24  # subsets per batched product: chunk × subset_size × D stays near 64 MB in float32
KERNEL_MAX_BYTES = 1 << 29  # keep a set's kernel strips (for reuse across a pair) only up to this size


def poly_kernel(g: torch.Tensor, gamma: float, coef0: float, degree: int) -> torch.Tensor:
    """k = (γ·g + c)^degree applied to Gram entries g, in place when possible."""
    k = g.mul_(gamma).add_(coef0)
    return k.pow_(degree) if degree != 1 else k


def sym_offdiag_sum(a: torch.Tensor, gamma: float, coef0: float, degree: int) -> torch.Tensor:
    """Σ_{i≠j} k(a_i, a_j) for each batch of rows (B×m×D), from the two diagonal half-blocks and one
    off-diagonal block: 3/4 of a full product, since the kernel matrix is symmetric."""
    m = a.shape[1]
    h = m // 2
    a1, a2 = a[:, :h], a[:, h:]
    diag = block_sum(poly_kernel((a * a).sum(dim=2)[:, :, None], gamma, coef0, degree))
    s11 = block_sum(poly_kernel(torch.bmm(a1, a1.transpose(1, 2)), gamma, coef0, degree))
    s22 = block_sum(poly_kernel(torch.bmm(a2, a2.transpose(1, 2)), gamma, coef0, degree))
    s12 = block_sum(poly_kernel(torch.bmm(a1, a2.transpose(1, 2)), gamma, coef0, degree))
    return s11 + s22 + 2 * s12 - diag


def block_sum(k: torch.Tensor) -> torch.Tensor:
    """Sum of each B×r×c block in float64: rows summed in the working precision, then rows in float64."""
    return k.sum(dim=2).sum(dim=1, dtype=torch.float64)


def draw_subsets(nx: int, ny: int, subsets: int, subset_size: int, rng: np.random.Generator):
    """Per subset, `subset_size` rows of x then of y, each without replacement."""
    ix = np.empty((subsets, subset_size), dtype=np.int64)
    iy = np.empty((subsets, subset_size), dtype=np.int64)
    for s in range(subsets):
        ix[s] = rng.choice(nx, subset_size, replace=False)
        iy[s] = rng.choice(ny, subset_size, replace=False)
    return ix, iy


def mmd2_from_sums(sxx: torch.Tensor, syy: torch.Tensor, sxy: torch.Tensor, m: int) -> torch.Tensor:
    """Unbiased MMD² from the off-diagonal XX and YY kernel sums and the full XY sum of m-row subsets."""
    return (sxx + syy) / (m * (m - 1)) - 2 * sxy / (m * m)


def indicator(n: int, idx: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """n×subsets matrix with a 1 where row i is in subset s: subset sums become matrix products."""
    ind = torch.zeros((n, len(idx)), dtype=like.dtype, device=like.device)
    return ind.scatter_(0, torch.as_tensor(idx.T, device=like.device), 1.0)


KernelStrips = list[tuple[int, torch.Tensor]]  # (a, kernel of rows a..a+h against rows a..n, strictly upper)


def kernel_strip(g: torch.Tensor, gamma: float, coef0: float, degree: int, copy: bool = False) -> torch.Tensor:
    """The kernel of a Gram strip g = x[a:e]·x[a:]ᵀ, its leading square block cut to the strict upper
    triangle, so that the strips of a set hold each off-diagonal pair once (in place unless `copy`)."""
    k = poly_kernel(g.clone() if copy else g, gamma, coef0, degree)
    k[:, : k.shape[0]].triu_(1)
    return k


def strip_sums(k: torch.Tensor, a: int, s: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
    """Σ_ij s[a+i]·k[i, j]·t[a'+j] for every subset column of the indicators s and t (t defaults to
    s[a:], i.e. a kernel strip of one set), summed in float64 over rows."""
    cols = s[a:] if t is None else t
    return ((k @ cols) * s[a : a + k.shape[0]]).sum(dim=0, dtype=torch.float64)


Job = Callable[[], torch.Tensor]


def offdiag_parts(strips: KernelStrips, n: int, idx: np.ndarray) -> list[Job]:
    """Σ_{i≠j∈S} K[i, j] for each subset S from a set's kernel strips, as independent jobs (add up their
    results): 2·sᵀUs with the subsets' indicator vectors s and U the strict upper triangle of the strips."""
    s = indicator(n, idx, strips[0][1])
    return [partial(lambda k, a: 2 * strip_sums(k, a, s), k, a) for a, k in strips]


def sym_parts(x: torch.Tensor, idx: np.ndarray, gamma: float, coef0: float, degree: int, height: int | None = None) -> list[Job]:
    """Σ_{i≠j∈S} k(x_i, x_j) for each subset S, as jobs over x's upper-triangle Gram strips (half the
    product of the full kernel matrix), each strip reduced as soon as it is made."""
    s = indicator(x.shape[0], idx, x)

    def one(a: int, e: int) -> torch.Tensor:
        return 2 * strip_sums(kernel_strip(gram_strip(x, a, e), gamma, coef0, degree), a, s)

    return [partial(one, a, e) for a, e in strips(x.shape[0], x.device, height)]


def cross_parts(
    x: torch.Tensor, y: torch.Tensor, ix: np.ndarray, iy: np.ndarray, gamma: float, coef0: float, degree: int,
    height: int | None = None, hooks: Sequence[GramHook] = (),
) -> list[Job]:
    """Σ_{i∈Sx, j∈Sy} k(x_i, y_j) for each pair of subsets, as sxᵀ K sy over row strips of K = k(X, Y)
    (never the whole matrix at once), one job per strip. Each hook of `hooks` (read when the job runs, so
    other metrics may add theirs after this call) sees every Gram strip x[a:e]·yᵀ before it is overwritten."""
    sx, sy = indicator(x.shape[0], ix, x), indicator(y.shape[0], iy, y)

    def one(a: int, e: int) -> torch.Tensor:
        g = matmul(x[a:e], y.T)
        for hook in hooks:
            hook(a, g)
        return strip_sums(poly_kernel(g, gamma, coef0, degree), a, sx, sy)

    return [partial(one, a, e) for a, e in strips(x.shape[0], x.device, height)]


def reach(
    peak: float, n: int, d: int, degree: int = 3, coef0: float = 1.0, gamma: float | None = None
) -> tuple[float, float, bool, bool]:
    """The largest numbers KID forms (see `validation.Reach`): kernel entries (γ·x·y + c)^degree ≤
    (|γ|·D·peak² + |c|)^degree, summed over ≤ N columns in the working precision, then over ≤ N rows
    in float64, where the spread over subsets squares estimates of the kernel's size too."""
    t = abs(1.0 / d if gamma is None else gamma) * d * peak * peak
    kernel = power(t + abs(coef0), degree)
    return n * kernel, max(n * n * kernel, power(kernel, 2)), precise(t, degree, coef0, 24), precise(t, degree, coef0, 53)


def precise(t: float, degree: int, coef0: float, bits: int) -> bool:
    """Whether the kernel keeps its precision with a significand of `bits` bits when γ·x·y reaches t: beside
    coef0, t must keep half its bits in t + coef0 (at x·1e-4, float32 KID came out 0.0, and float64 at 1e-8);
    with coef0 = 0, t^degree must stay 2^bits above the precision's smallest normal number."""
    if t == 0:
        return True  # all-zero features: every kernel entry is coef0^degree exactly
    if coef0 != 0:
        return t >= abs(coef0) * 2.0 ** -(bits // 2)
    tiny = FLOAT32_TINY if bits <= 24 else FLOAT64_TINY
    return power(t, degree) >= tiny * 2.0**bits


def all_pairs_cheaper(nx: int, ny: int, subsets: int, subset_size: int) -> bool:
    """Kernel entries of every pair (in strips) are no more than those of all subsets' own blocks."""
    return nx * ny <= subsets * subset_size**2


def strips_fit(n: int, itemsize: int) -> bool:
    """A set's kernel strips (about half its N×N kernel) may be kept in memory."""
    return n * n * itemsize // 2 <= KERNEL_MAX_BYTES


OPTIONS = (
    option("subsets", 100, integer(1), "KID subsets per run"),
    option("subset_size", 1000, integer(2), "rows per subset (at most sample_size)"),
    option("degree", 3, integer(1), "degree of the polynomial kernel (x·y/d + coef0)^degree"),
    option("coef0", 1.0, real(), "constant of the polynomial kernel"),
)
DEFAULTS = {o.name: o.default for o in OPTIONS}


@dataclass
class KidStatistics:
    """A set's KID statistics: its rows, and its kernel strips when they were kept (see `tap`)."""

    x: torch.Tensor
    kernel: KernelStrips | None = None


def mmd2_work(
    x: KidStatistics, y: KidStatistics, ix: np.ndarray, iy: np.ndarray, gamma: float, coef0: float, degree: int,
    cross_hooks: list[GramHook] | None = None,
) -> tuple[list[Job], Callable[[list[torch.Tensor]], torch.Tensor]]:
    """The value stage of KID as independent jobs, and the function that turns their results into each
    subset's MMD²: every pair's kernel summed once (kept strips, or strips made now) where that is less
    arithmetic than all subsets' own blocks, else batched per-subset products. On the first path the
    x × y Gram strips are shown to `cross_hooks` (see `cross_parts`)."""
    subsets, m = ix.shape
    nx, ny = x.x.shape[0], y.x.shape[0]
    if not all_pairs_cheaper(nx, ny, subsets, m):
        job = partial(mmd2_subsets, x.x, y.x, ix, iy, gamma, coef0, degree)
        return [job], lambda parts: finite_result(parts[0], "KID")
    xx = offdiag_parts(x.kernel, nx, ix) if x.kernel is not None else sym_parts(x.x, ix, gamma, coef0, degree)
    yy = offdiag_parts(y.kernel, ny, iy) if y.kernel is not None else sym_parts(y.x, iy, gamma, coef0, degree)
    xy = cross_parts(x.x, y.x, ix, iy, gamma, coef0, degree, hooks=() if cross_hooks is None else cross_hooks)

    def combine(parts: list[torch.Tensor]) -> torch.Tensor:
        sxx, syy = sum(parts[: len(xx)]), sum(parts[len(xx) : len(xx) + len(yy)])
        sxy = sum(parts[len(xx) + len(yy) :])
        return finite_result(mmd2_from_sums(cast(torch.Tensor, sxx), cast(torch.Tensor, syy), cast(torch.Tensor, sxy), m),
                             "KID")

    return xx + yy + xy, combine


def kid(
    x: ArrayLike,
    y: ArrayLike,
    subsets: int = DEFAULTS["subsets"],
    subset_size: int = DEFAULTS["subset_size"],
    seed: int | np.random.Generator = 0,
    device: str | torch.device | None = None,
    *,
    degree: int = DEFAULTS["degree"],
    gamma: float | None = None,
    coef0: float = DEFAULTS["coef0"],
) -> tuple[float, float]:
    """KID of feature sets x (N×D) and y (M×D): (mean, std) of the unbiased MMD² over random subsets.

    Args:
        x: The real features, N×D.
        y: The generated features, M×D.
        subsets: How many random subsets of each set to score.
        subset_size: Rows per subset (at most the smaller set; `ganeval.score` and `evaluate` shrink the default
            1000 to the rows they score, with a note).
        seed: The seed (or a `numpy.random.Generator`) of the subsets' draws.
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.
        degree: The polynomial kernel's degree, k(a, b) = (γ a·b + coef0)^degree.
        gamma: The kernel's γ; default None: 1/D.
        coef0: The kernel's constant term.

    Returns:
        (mean, std) of the unbiased MMD² estimates over the subsets (raw, not ×10³ as the tables show it).

    Examples:
        >>> from ganeval.metrics import kid
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> [round(v, 4) for v in kid(x, y, subsets=10, subset_size=200)]
        [0.4371, 0.069]
    """
    if gamma is not None:
        option("gamma", None, real()).validate("", gamma)
    reaches = [("KID's kernel", partial(reach, degree=degree, coef0=coef0, gamma=gamma))]
    fx, fy = inspect_features(x, "x", min_rows=2), inspect_features(y, "y", min_rows=2)
    check_same_dim(fx.d, fy.d, "KID")
    METRIC.resolve({"subsets": subsets, "subset_size": subset_size, "degree": degree, "coef0": coef0}, where="")
    check_subset_size(subset_size, fx.n, "x")
    check_subset_size(subset_size, fy.n, "y")
    # x's precision (float32 for narrower input), widened where either set's values need float64
    dtype = working_dtype(fy, "y", reaches, base=working_dtype(fx, "x", reaches))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    ix, iy = draw_subsets(fx.n, fy.n, subsets, subset_size, rng)
    dev = resolve_device(device, x, y)
    xt, yt = as_tensor(detached(x), dev, dtype), as_tensor(detached(y), dev, dtype)
    g = 1.0 / fx.d if gamma is None else float(gamma)
    jobs, combine = mmd2_work(KidStatistics(xt), KidStatistics(yt), ix, iy, g, coef0, degree)
    values = combine(run_jobs(jobs, dev))
    return float(values.mean()), float(values.std(unbiased=False)) if subsets > 1 else 0.0


def mmd2_subsets(
    x: torch.Tensor, y: torch.Tensor, ix: np.ndarray, iy: np.ndarray, gamma: float, coef0: float, degree: int
) -> torch.Tensor:
    """MMD² of every subset (rows ix of x against rows iy of y), batched as chunks of subsets."""
    subsets, m = ix.shape
    chunk = max(1, CHUNK_ELEMENTS // (m * x.shape[1]))
    out = torch.empty(subsets, dtype=torch.float64, device=x.device)
    for s in range(0, subsets, chunk):
        a = x[torch.as_tensor(ix[s : s + chunk], device=x.device)]
        b = y[torch.as_tensor(iy[s : s + chunk], device=x.device)]
        sxy = block_sum(poly_kernel(torch.bmm(a, b.transpose(1, 2)), gamma, coef0, degree))
        sxx = sym_offdiag_sum(a, gamma, coef0, degree)
        syy = sym_offdiag_sum(b, gamma, coef0, degree)
        out[s : s + chunk] = mmd2_from_sums(sxx, syy, sxy, m)
    return out


def _tap(x: torch.Tensor, o: Mapping[str, Any]) -> GramTap | None:
    """Keep the set's kernel strips from another metric's Gram strips when KID will sum over every pair
    and the strips (about half an N×N kernel) fit in memory."""
    n, d = x.shape
    if not (all_pairs_cheaper(n, n, o["subsets"], o["subset_size"]) and strips_fit(n, x.element_size())):
        return None
    return GramTap(partial(kernel_strip, gamma=1.0 / d, coef0=o["coef0"], degree=o["degree"], copy=True))


def _prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None, *,
             context: Shared | None = None) -> KidStatistics:
    return KidStatistics(x, tap.collected() if tap is not None else None)


def _pair(a: KidStatistics, b: KidStatistics, o: Mapping[str, Any], rng: np.random.Generator, *,
          context: Shared | None = None) -> PairWork:
    """KID's subsets drawn from `rng`; when it sums over every pair, its real × fake Gram strips are offered
    to the metrics paired after it (`context.memo[CROSS_GRAM_HOOKS]`, e.g. precision/recall's one pass)."""
    ix, iy = draw_subsets(a.x.shape[0], b.x.shape[0], o["subsets"], o["subset_size"], rng)
    dtype = torch.promote_types(a.x.dtype, b.x.dtype)
    x, y = KidStatistics(a.x.to(dtype), a.kernel), KidStatistics(b.x.to(dtype), b.kernel)
    hooks: list[GramHook] = []
    if context is not None and all_pairs_cheaper(a.x.shape[0], b.x.shape[0], o["subsets"], o["subset_size"]):
        context.memo[CROSS_GRAM_HOOKS] = hooks
    jobs, combine = mmd2_work(x, y, ix, iy, 1.0 / a.x.shape[1], o["coef0"], o["degree"], hooks)
    return PairWork(jobs, lambda results: float(combine(results).mean()))


def _check_sample_size(sample_size: int, o: Mapping[str, Any]) -> None:
    if o["subset_size"] > sample_size:
        raise ValueError(
            f"metrics.kid.subset_size={o['subset_size']} exceeds sample_size={sample_size}: "
            "lower metrics.kid.subset_size or raise sample_size"
        )


METRIC = register_metric(Metric(
    name="kid", options=OPTIONS, prepare=_prepare, pair=_pair, tap=_tap, check_sample_size=_check_sample_size,
    reach=lambda peak, n, d, o: reach(peak, n, d, o["degree"], o["coef0"]), shares=True,
    label="KID×10³", label_tex=r"KID $\times 10^3$", scale=1e3, unscaled_label="KID",
    doc="unbiased MMD² with the cubic polynomial kernel over random subsets (Bińkowski et al.)",
))
