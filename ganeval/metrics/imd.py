"""IMD (the paper's Intrinsic Multi-scale Distance, 'MSID' in the reference code): heat-trace signatures of
k-NN graphs, compared at all scales.

Defaults (the option table `OPTIONS`: k=5, m=10 Lanczos steps, nv=100 probes, normalization "empty") follow the
paper's reference code (`msid`, Tsitsulin et al.); its control variate is `variance_reduction="paper"` (or True),
ours by default a Chebyshev one with exact traces (`control_variate`), which leaves ~1 % of the probes' noise.
`probes` feeds given starting vectors so results can be checked digit for digit against another implementation.
Every IMD value carries its standard error over the probes (`IMDValue.se`); `imd_over_seeds`: the estimator's
noise observed over several probe draws on fixed sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, resolve_device, upload
from ganeval.metrics.control_variate import (CHEBYSHEV_DEGREE, CONTROL_VARIATES, control_variate, probe_estimates,
                                             recorded_control)
from ganeval.metrics.knn import KnnGraph, exact_knn, exact_knn_graph
from ganeval.metrics.knn_approx import PARAMS_EXPECTED, full_params, params_valid
from ganeval.metrics.knn_precision import PRECISIONS
from ganeval.metrics.laplacian import adjacency_power_traces, dense_laplacian, normalized_adjacency
from ganeval.metrics.parallel import device_map
from ganeval.metrics.registry import GramHook, GramTap, Metric, PairWork, boolean, fan_out, integer, one_of, option, register_metric
from ganeval.metrics.slq import exact_heat_trace, lanczos, quadrature
from ganeval.metrics.validation import finite_result, load_features, peak_of, shape_of

SCALE = 1e6  # the reference reports normalised traces ×1e6
ER_EPSILON = 1e-6
NORMALIZATIONS = ("empty", "complete", "er", "none")
EXACT_MAX_N = 10000
Seed = int | np.random.Generator | None


def default_t() -> np.ndarray:
    """256 log-spaced temperatures on [0.1, 10], where the scale factor e^(−2(t+1/t)) has its mass."""
    return np.logspace(-1, 1, 256)


def temperatures(t: ArrayLike | None) -> np.ndarray:
    ts = default_t() if t is None else np.asarray(t, dtype=np.float64).reshape(-1)
    if ts.size == 0 or not np.all(np.isfinite(ts)) or np.any(ts <= 0):
        raise ValueError("t must be a non-empty array of positive, finite temperatures")
    return ts


def _rng(seed: Seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def draw_probes(n: int, nv: int, seed: Seed, rademacher: bool = False) -> np.ndarray:
    """n×nv starting vectors from `seed` (an int or a Generator, which is advanced): standard normal, or
    their signs for Rademacher probes. Columns are normalised later, inside Lanczos."""
    z = _rng(seed).standard_normal((n, nv))
    return np.sign(z) if rademacher else z


def normalize_trace(trace: np.ndarray, normalization: str, n: int, k: int, t: np.ndarray) -> np.ndarray:
    """Normalise a heat trace as the reference does: 'empty' (÷n), 'complete' (÷ the complete graph's
    trace), 'er' (÷ an Erdős–Rényi graph's approximate trace) or 'none'."""
    if normalization == "empty":
        return trace / n
    if normalization == "complete":
        return trace / (1 + (n - 1) * np.exp(-(1 + 1 / (n - 1)) * t))
    if normalization == "er":
        xs = np.linspace(0, 1, n)
        spectrum = 4 / np.sqrt(k) * xs + 1 - 2 / np.sqrt(k)
        er = np.concatenate([np.exp(-np.outer(chunk, spectrum)).sum(-1) for chunk in np.array_split(t, max(1, len(t) // 16))])
        return trace / (er + ER_EPSILON)
    if normalization == "none":
        return trace
    raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {normalization!r}")


OPTIONS = (
    option("k", 5, integer(1), "nearest neighbours of the k-NN graph"),
    option("m", 10, integer(1), "Lanczos steps"),
    option("nv", 100, integer(1), "random probe vectors"),
    option("normalization", "empty", one_of(*NORMALIZATIONS), "heat-trace normalisation"),
    option("knn", "exact", one_of("exact", "approx"), "exact search, or approx (pynndescent) above ~50k rows"),
    option("knn_precision", "float32", one_of(*PRECISIONS),
           "exact search's products: float32 | bfloat16 | tf32 | auto (the fastest, measured at start-up; "
           "certified: the same graph; float32 while KID shares the Gram strips)"),
    option("rademacher", False, boolean(), "Rademacher instead of Gaussian probes"),
    option("variance_reduction", "chebyshev",
           (lambda v: isinstance(v, (bool, np.bool_)) or v in CONTROL_VARIATES,
            "true, false or one of " + ", ".join(repr(c) for c in CONTROL_VARIATES)),
           f"the probes' control variate: chebyshev (degree {CHEBYSHEV_DEGREE}, exact traces: ~1 % of the noise left), "
           "paper (the reference's linear term; also true) or none (also false)", normalize=recorded_control),
    option("nndescent", None, (params_valid, PARAMS_EXPECTED),
           "knn=approx's pynndescent build parameters (knn_approx.DEFAULT_PARAMS where null or not given), e.g. "
           "{n_trees: 2, n_iters: 5} for a lower-recall graph; recorded and hashed only when not the defaults",
           neutral=True, normalize=full_params),
)
DEFAULTS = {o.name: o.default for o in OPTIONS}


def check_imd_options(method: str = "slq", **options: Any) -> None:
    """Check the library functions' options against the option table, and the trace method; `nndescent` is
    refused with exact k-NN (it would change nothing there)."""
    o = METRIC.resolve(options, where="")
    if o["nndescent"] is not None and o["knn"] != "approx":
        raise ValueError(f"nndescent={options['nndescent']!r} sets pynndescent's parameters, used only with "
                         f"knn='approx'; pass knn='approx' or leave nndescent out")
    if method not in ("slq", "exact"):
        raise ValueError(f"method must be 'slq' or 'exact', got {method!r}")


def knn_graph(x: torch.Tensor, k: int, knn: str = "exact", seed: int = 0, precision: str = "float32",
              nndescent: Mapping[str, Any] | None = None) -> torch.Tensor:
    """N×k neighbour indices: exact blocked search (its products in `precision`, the same graph in any),
    or pynndescent's approximate graph (opt-in; `nndescent` overrides its build parameters)."""
    if knn == "approx":
        from ganeval.metrics.knn_approx import approx_knn

        nbrs = approx_knn(x.detach().cpu().numpy(), k, seed=seed, params=dict(nndescent) if nndescent else None)
        return torch.from_numpy(nbrs).to(x.device)
    return exact_knn(x, k, precision=precision)


def _check_exact_size(a: ArrayLike, name: str, method: str) -> None:
    """method='exact' builds a dense N×N Laplacian: refuse it above EXACT_MAX_N rows, before any work."""
    n = shape_of(a, name)[0]
    if method == "exact" and n > EXACT_MAX_N:
        raise ValueError(
            f"method='exact' builds a dense {n}×{n} Laplacian for {name}; use it for N ≤ {EXACT_MAX_N} or use method='slq'"
        )


def reach(peak: float, n: int, d: int) -> tuple[float, float]:
    """The largest number the k-NN search forms (see `validation.Reach`): squared distances
    |x_i − x_j|² ≤ 4·D·peak², from Gram entries and squared norms, in the working precision and in float64."""
    r = 4.0 * d * peak * peak
    return r, r


def _features(x: ArrayLike, name: str, k: int, device: torch.device) -> torch.Tensor:
    return load_features(x, name, device, min_rows=k + 2, reaches=[("IMD's k-NN search", reach)])


@dataclass(frozen=True)
class HeatTrace:
    """A normalised heat trace ×1e6 (one value per t) and its standard error over the probes (zeros if exact)."""

    values: np.ndarray
    se: np.ndarray


class IMDValue(float):
    """An IMD value (a float) with its estimator's standard error over the probes (`se`, 0 for exact traces) and
    the temperature where its maximum lies (`t`). Arithmetic gives plain floats."""

    se: float
    t: float

    def __new__(cls, value: float, se: float = 0.0, t: float = float("nan")) -> IMDValue:
        obj = super().__new__(cls, value)
        obj.se, obj.t = float(se), float(t)
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return IMDValue, (float(self), self.se, self.t)

    def __repr__(self) -> str:
        return f"IMDValue({float(self)!r}, se={self.se:.3g}, t={self.t:.3g})"

    __str__ = float.__repr__


def probe_traces(
    nbrs: torch.Tensor,
    t: np.ndarray,
    *,
    m: int = 10,
    nv: int = 100,
    seed: Seed = 0,
    normalization: str = "empty",
    method: str = "slq",
    rademacher: bool = False,
    variance_reduction: bool | str = DEFAULTS["variance_reduction"],
    probes: ArrayLike | None = None,
) -> np.ndarray:
    """nv×T normalised single-probe heat-trace estimates ×1e6 of a k-NN graph given as N×k neighbour indices
    (1×T, exact, for method="exact"): their mean is the heat trace, their spread its standard error."""
    n, k = nbrs.shape
    device = nbrs.device
    tt = torch.as_tensor(t, dtype=torch.float64, device=device)
    if method == "exact":
        trace = exact_heat_trace(dense_laplacian(nbrs), tt)[None, :]
    else:
        if probes is None:
            p = draw_probes(n, nv, seed, rademacher)
        else:
            p = np.asarray(probes.detach().cpu() if isinstance(probes, torch.Tensor) else probes, dtype=np.float64)
            if p.ndim != 2 or p.shape[0] != n:
                raise ValueError(f"probes must be an N×nv array with N={n} rows, got shape {p.shape}")
            if np.any(np.linalg.norm(p, axis=0) == 0) or not np.all(np.isfinite(p)):
                raise ValueError("probes must be finite with no all-zero column")
        alpha, beta = lanczos(normalized_adjacency(nbrs), upload(p, device), m)  # pinned: no pageable copy
        theta, weights = quadrature(alpha, beta)
        control = control_variate(variance_reduction)
        powers = adjacency_power_traces(nbrs, CHEBYSHEV_DEGREE) if control == "chebyshev" else None
        trace = probe_estimates(theta, weights, n, tt, control, powers)
    return normalize_trace(trace.cpu().numpy(), normalization, n, k, t) * SCALE


def heat_trace_from_probes(estimates: np.ndarray) -> HeatTrace:
    """The heat trace (the mean of the single-probe estimates) and its standard error (their sd / √nv)."""
    nv = estimates.shape[0]
    values = finite_result(estimates.mean(axis=0), "the heat trace")
    se = estimates.std(axis=0, ddof=1) / np.sqrt(nv) if nv > 1 else np.zeros_like(values)
    return HeatTrace(values, se)


def traced(nbrs: torch.Tensor, t: np.ndarray, **options: Any) -> HeatTrace:
    """`probe_traces` reduced to the heat trace with its standard error."""
    return heat_trace_from_probes(probe_traces(nbrs, t, **options))


def trace_from_graph(nbrs: torch.Tensor, t: np.ndarray, **options: Any) -> np.ndarray:
    """The normalised heat trace ×1e6 of a k-NN graph given as N×k neighbour indices (`probe_traces`' options)."""
    return traced(nbrs, t, **options).values


def heat_trace(
    x: ArrayLike,
    t: ArrayLike | None = None,
    k: int = DEFAULTS["k"],
    m: int = DEFAULTS["m"],
    nv: int = DEFAULTS["nv"],
    seed: Seed = 0,
    normalization: str = DEFAULTS["normalization"],
    method: str = "slq",
    knn: str = DEFAULTS["knn"],
    rademacher: bool = DEFAULTS["rademacher"],
    variance_reduction: bool | str = DEFAULTS["variance_reduction"],
    probes: ArrayLike | None = None,
    knn_precision: str = DEFAULTS["knn_precision"],
    device: str | torch.device | None = None,
    nndescent: Mapping[str, Any] | None = DEFAULTS["nndescent"],
) -> np.ndarray:
    """Normalised heat-trace signature ×1e6 of the union k-NN graph of `x` (N×D), one value per t.

    Args:
        x: The samples, N×D (numpy or torch).
        t: The temperatures; default None: 256 log-spaced on [0.1, 10] (`default_t`).
        k: Nearest neighbours of the k-NN graph.
        m: Lanczos steps.
        nv: Random probe vectors.
        seed: An int or a numpy Generator (advanced by the probe draw, so one Generator passed to two calls gives
            them successive draws, as `imd` does).
        normalization: "empty" (÷N), "complete", "er" or "none".
        method: "slq" (stochastic Lanczos quadrature) or "exact" (a dense eigendecomposition, N ≤ 10 000: the
            ground truth for the estimate).
        knn: "exact" or "approx" (pynndescent).
        rademacher: Rademacher instead of Gaussian probes.
        variance_reduction: The probes' control variate: "chebyshev" (default), "paper" (or True: the
            reference's), "none" (or False).
        probes: N×nv starting vectors instead of drawn ones.
        knn_precision: The exact search's products: "float32", "bfloat16", "tf32" or "auto" (the same graph).
        device: Where to compute; default None: the input's device.
        nndescent: pynndescent's build parameters with knn="approx".

    Returns:
        A numpy array, one value per t.

    Examples:
        >>> import numpy as np
        >>> from ganeval.metrics import heat_trace
        >>> x = np.random.default_rng(0).normal(size=(200, 4))
        >>> h = heat_trace(x, method="exact")
        >>> h.shape, round(float(h[0]), -3)  # at t = 0.1 most of the trace (1e6 = all of it) is left
        ((256,), 906000.0)
    """
    check_imd_options(method, k=k, m=m, nv=nv, normalization=normalization, knn=knn, rademacher=rademacher,
                      variance_reduction=variance_reduction, knn_precision=knn_precision, nndescent=nndescent)
    ts = temperatures(t)
    dev = resolve_device(device, x)
    _check_exact_size(x, "x", method)
    xt = _features(x, "x", k, dev)
    knn_seed = seed if isinstance(seed, (int, np.integer)) else 0
    nbrs = knn_graph(xt, k, knn, seed=int(knn_seed), precision=knn_precision, nndescent=nndescent)
    return trace_from_graph(
        nbrs, ts, m=m, nv=nv, seed=seed, normalization=normalization, method=method,
        rademacher=rademacher, variance_reduction=variance_reduction, probes=probes,
    )


def imd_from_traces(hx: ArrayLike, hy: ArrayLike, t: ArrayLike | None = None) -> float:
    """IMD from two stored heat traces: max over t of e^(−2(t+1/t))·|hx(t) − hy(t)|.

    Args:
        hx: The first set's heat trace (`heat_trace`), one value per t.
        hy: The second set's, on the same temperatures.
        t: Their temperatures; default None: `default_t()`.

    Returns:
        IMD as a float (no standard error: the traces' probes are not known here; `imd` gives one).

    Examples:
        >>> import numpy as np
        >>> from ganeval.metrics import heat_trace, imd, imd_from_traces
        >>> rng = np.random.default_rng(0)
        >>> x, y = rng.normal(size=(300, 4)), rng.normal(size=(300, 6))
        >>> g = np.random.default_rng(1)
        >>> imd_from_traces(heat_trace(x, seed=g), heat_trace(y, seed=g)) == imd(x, y, seed=1)
        True
    """
    ts = temperatures(t)
    hx, hy = np.asarray(hx, dtype=np.float64), np.asarray(hy, dtype=np.float64)
    if hx.shape != ts.shape or hy.shape != ts.shape:
        raise ValueError(f"heat traces must have one value per t ({ts.size}); got {hx.shape} and {hy.shape}")
    peak_of(hx, "hx"), peak_of(hy, "hy")  # finite traces, or a ValueError naming the bad one
    return finite_result(float(np.max(np.exp(-2 * (ts + 1 / ts)) * np.abs(hx - hy))), "IMD")


def imd_value(hx: HeatTrace, hy: HeatTrace, t: np.ndarray) -> IMDValue:
    """IMD of two heat traces with its standard error: the probes' standard errors of both traces at the
    temperature t* of the maximum, combined (independent draws) and weighted like the difference there."""
    value = imd_from_traces(hx.values, hy.values, t)
    weight = np.exp(-2 * (t + 1 / t))
    top = int(np.argmax(weight * np.abs(hx.values - hy.values)))
    return IMDValue(value, weight[top] * float(np.hypot(hx.se[top], hy.se[top])), float(t[top]))


def imd(
    x: ArrayLike,
    y: ArrayLike,
    k: int = DEFAULTS["k"],
    m: int = DEFAULTS["m"],
    nv: int = DEFAULTS["nv"],
    seed: Seed = 0,
    normalization: str = DEFAULTS["normalization"],
    knn: str = DEFAULTS["knn"],
    probes: Sequence[ArrayLike] | None = None,
    device: str | torch.device | None = None,
    *,
    t: ArrayLike | None = None,
    rademacher: bool = DEFAULTS["rademacher"],
    variance_reduction: bool | str = DEFAULTS["variance_reduction"],
    method: str = "slq",
    knn_precision: str = DEFAULTS["knn_precision"],
    nndescent: Mapping[str, Any] | None = DEFAULTS["nndescent"],
) -> IMDValue:
    """IMD between sample sets x (N×D) and y (M×D'); D may differ (the distance is intrinsic).

    x's and y's probes are independent draws from one Generator seeded by `seed` (x's first), so
    imd(x, y, seed=s) == imd_from_traces(heat_trace(x, seed=g), heat_trace(y, seed=g)) for
    g = numpy.random.default_rng(s).

    Args:
        x: The first set, N×D (numpy or torch).
        y: The second set, M×D'.
        k: Nearest neighbours of the k-NN graphs.
        m: Lanczos steps.
        nv: Random probe vectors per set.
        seed: An int or a numpy Generator for the probes (x's drawn first).
        normalization: "empty" (÷N), "complete", "er" or "none".
        knn: "exact" or "approx" (pynndescent, for ~50k rows and more).
        probes: (Px, Py), starting vectors (N×nv and M×nv) instead of drawn ones.
        device: Where to compute; default None: the inputs' device.
        t: The temperatures; default None: 256 log-spaced on [0.1, 10].
        rademacher: Rademacher instead of Gaussian probes.
        variance_reduction: The probes' control variate: "chebyshev" (default: a degree-4 Chebyshev expansion with
            exact traces), "paper" (or True: the reference's linear term; with the reference's probes it equals
            the reference's code) or "none" (or False).
        method: "slq" or "exact" (dense eigendecompositions, N ≤ 10 000: no probe noise).
        knn_precision: The exact search's products: "float32", "bfloat16", "tf32" or "auto" (the same graph).
        nndescent: pynndescent's build parameters with knn="approx".

    Returns:
        An `IMDValue`: a float carrying its standard error over the probes, `.se` (0 for method="exact"), and the
        temperature of the maximum, `.t`.

    Examples:
        >>> import numpy as np
        >>> from ganeval.metrics import imd
        >>> rng = np.random.default_rng(0)
        >>> x, y = rng.normal(size=(500, 8)), 1.2 * rng.normal(size=(500, 8))
        >>> v = imd(x, y)
        >>> abs(v - imd(x, y, method="exact")) < 5 * v.se  # the estimate is within a few errors of the exact value
        True
    """
    check_imd_options(method, k=k, m=m, nv=nv, normalization=normalization, knn=knn, rademacher=rademacher,
                      variance_reduction=variance_reduction, knn_precision=knn_precision, nndescent=nndescent)
    ts = temperatures(t)
    dev = resolve_device(device, x, y)
    for name, a in (("x", x), ("y", y)):
        _check_exact_size(a, name, method)
    xt = _features(x, "x", k, dev)
    yt = _features(y, "y", k, dev)
    if probes is not None:
        if len(probes) != 2:
            raise ValueError("probes must be a pair (probes for x, probes for y)")
        px, py = probes
    else:
        px = py = None
    rng = _rng(seed)
    if method == "slq":  # x's probes, then y's, drawn here so both traces can run at once
        px = draw_probes(xt.shape[0], nv, rng, rademacher) if px is None else px
        py = draw_probes(yt.shape[0], nv, rng, rademacher) if py is None else py
    knn_seed = int(seed) if isinstance(seed, (int, np.integer)) else 0
    opts: dict[str, Any] = dict(m=m, nv=nv, normalization=normalization, method=method, rademacher=rademacher,
                variance_reduction=variance_reduction)

    def trace(job: tuple[torch.Tensor, ArrayLike | None]) -> HeatTrace:
        return traced(knn_graph(job[0], k, knn, knn_seed, knn_precision, nndescent), ts, probes=job[1], **opts)

    jobs = [(xt, px), (yt, py)]
    # pynndescent runs one build at a time
    hx, hy = device_map(trace, jobs, dev) if knn == "exact" else [trace(job) for job in jobs]
    return imd_value(hx, hy, ts)


def _prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None) -> KnnGraph:
    """The statistics stage: the set's k-NN graph (N×k indices, and an exact search's distances, which
    precision/recall/density/coverage reuse as radii); an exact search hands its Gram strips to `hooks`."""
    if o["knn"] == "exact":
        # KID reuses the Gram strips, which must then be float32 (the graph is the same either way)
        precision = o["knn_precision"] if not hooks else "float32"
        return exact_knn_graph(x, o["k"], gram_hook=fan_out(hooks), precision=precision)
    return KnnGraph(knn_graph(x, o["k"], o["knn"], nndescent=o["nndescent"]))


def _pair(gx: KnnGraph, gy: KnnGraph, o: Mapping[str, Any], rng: np.random.Generator) -> PairWork:
    """x's probes, then y's, drawn from `rng`; the two heat traces as jobs; the score from them."""
    ts = default_t()
    opts = dict(m=o["m"], nv=o["nv"], normalization=o["normalization"], rademacher=o["rademacher"],
                variance_reduction=o["variance_reduction"])
    graphs = (gx.nbrs, gy.nbrs)
    probes = [draw_probes(g.shape[0], o["nv"], rng, o["rademacher"]) for g in graphs]
    jobs = [partial(traced, g, ts, probes=p, **opts) for g, p in zip(graphs, probes)]
    return PairWork(jobs, lambda traces: imd_value(traces[0], traces[1], ts))


def lanczos_bytes(n: int, o: Mapping[str, Any]) -> tuple[float, str]:
    """What one set's SLQ holds: its float64 probes (n×nv) and Lanczos basis (nv×m×n)."""
    return 8.0 * o["nv"] * (o["m"] + 1) * n, f"{o['nv']} probes and their {o['m']}-step Lanczos basis in float64"


def _check_sample_size(sample_size: int, o: Mapping[str, Any]) -> None:
    if o["k"] >= sample_size:
        raise ValueError(f"metrics.imd.k={o['k']} must be below sample_size={sample_size}")


METRIC = register_metric(Metric(
    name="imd", options=OPTIONS, prepare=_prepare, pair=_pair, check_sample_size=_check_sample_size,
    reach=lambda peak, n, d, o: reach(peak, n, d),
    label="IMD", same_dim=False, memory=lambda n, d, o: lanczos_bytes(n, o),
    lowest=0.0,
    doc="Intrinsic Multi-scale Distance: heat-trace signatures of k-NN graphs compared at all scales",
))


def imd_over_seeds(x: ArrayLike, y: ArrayLike, seeds: Sequence[int], device: Any = None,
                   **options: Any) -> list[IMDValue]:
    """IMD(x, y) for each seed's probe draw (x's probes then y's from default_rng(seed), as `imd` draws them): the
    noise of the estimator alone. Equal to `[imd(x, y, seed=s) for s in seeds]` with exact k-NN, but each set's k-NN
    graph is built once (with the first seed, which matters only for knn=approx), so a further draw costs only its
    Lanczos runs."""
    o = {**DEFAULTS, **options}
    check_imd_options("slq", **o)
    ts = temperatures(None)
    dev = resolve_device(device, x, y)
    xt, yt = _features(x, "x", o["k"], dev), _features(y, "y", o["k"], dev)

    def graph(a: Any) -> Any:
        return knn_graph(a, o["k"], o["knn"], int(seeds[0]), o["knn_precision"], o["nndescent"])

    gx, gy = device_map(graph, [xt, yt], dev) if o["knn"] == "exact" else [graph(xt), graph(yt)]
    opts = dict(m=o["m"], nv=o["nv"], normalization=o["normalization"], rademacher=o["rademacher"],
                variance_reduction=o["variance_reduction"])
    values = []
    for s in seeds:
        rng = np.random.default_rng(s)
        px = draw_probes(gx.shape[0], o["nv"], rng, o["rademacher"])
        py = draw_probes(gy.shape[0], o["nv"], rng, o["rademacher"])
        values.append(imd_value(traced(gx, ts, probes=px, **opts), traced(gy, ts, probes=py, **opts), ts))
    return values
