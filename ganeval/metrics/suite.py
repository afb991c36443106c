"""The per-run metric computation of the protocol, doing every expensive step once.

`prepare_set` does the per-set work (k-NN graph, mean and covariance, and, when the set is small
enough, its KID kernel matrix, taken from the same Gram blocks as the k-NN search when IMD is scored); `score_pair` then
draws IMD's probes (x's, then y's) and KID's subsets from the run's Generator and scores the pair.
A real set's state is shared by every generator compared against it in one run.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping

import numpy as np
import torch

from ganeval.common import ArrayLike, as_tensor, resolve_device
from ganeval.metrics.fid import Factor, data_factor, moments, square_root_factor, trace_sqrt_product
from ganeval.metrics.imd import check_imd_options, temperatures, draw_probes, imd_from_traces, knn_graph, trace_from_graph
from ganeval.metrics.kid import (
    KernelStrips,
    all_pairs_cheaper,
    cross_parts,
    draw_subsets,
    kernel_strip,
    mmd2_from_sums,
    mmd2_subsets,
    offdiag_parts,
    strips_fit,
    sym_parts,
)
from ganeval.metrics.knn import exact_knn
from ganeval.metrics.parallel import run_jobs
from ganeval.metrics.validation import check_features, check_same_dim

METRIC_NAMES = ("imd", "fid", "kid")
DEFAULTS: dict[str, dict[str, Any]] = {
    "imd": {"k": 5, "m": 10, "nv": 100, "normalization": "empty", "knn": "exact", "rademacher": False,
            "variance_reduction": True},
    "fid": {},
    "kid": {"subsets": 100, "subset_size": 1000, "degree": 3, "coef0": 1.0},
}


def resolve_metrics(metrics: Mapping[str, Mapping[str, Any] | None] | list | tuple) -> dict[str, dict[str, Any]]:
    """Fill each requested metric's options with the defaults; unknown names or options raise at once."""
    if isinstance(metrics, (list, tuple)):
        metrics = {name: {} for name in metrics}
    if not metrics:
        raise ValueError(f"choose at least one metric of {METRIC_NAMES}")
    out: dict[str, dict[str, Any]] = {}
    for name, opts in metrics.items():
        if name not in DEFAULTS:
            raise ValueError(f"unknown metric {name!r}; available: {', '.join(METRIC_NAMES)}")
        opts = dict(opts or {})
        unknown = set(opts) - set(DEFAULTS[name])
        if unknown:
            names = ", ".join(repr(u) for u in sorted(unknown))
            raise ValueError(f"{name}: unknown option {names}; options are {sorted(DEFAULTS[name]) or 'none'}")
        out[name] = {**DEFAULTS[name], **opts}
    if "imd" in out:
        o = out["imd"]
        check_imd_options(o["k"], o["m"], o["nv"], o["normalization"], "slq", o["knn"])
    if "kid" in out and out["kid"]["subsets"] < 1:
        raise ValueError(f"kid.subsets must be ≥ 1, got {out['kid']['subsets']}")
    return out


@dataclass
class SetState:
    """What one subsample contributes to every pair it is scored in."""

    x: torch.Tensor
    nbrs: torch.Tensor | None = None
    mu: torch.Tensor | None = None
    sigma: torch.Tensor | None = None
    centred: torch.Tensor | None = None  # float64 centred rows, for FID's square-root factor
    _factor: Factor | None = None
    kernel: KernelStrips | None = None  # KID kernel strips (strict upper triangle), when small enough

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    def fid_factor(self) -> Factor:
        """B with BBᵀ = Σ for FID's tr √(Σ₁Σ₂), made once, on the first pair that needs it (the real
        side): the centred data over √(N−1) when N ≤ D, else the Cholesky factor."""
        if self._factor is None:
            self._factor = data_factor(self.centred) if self.centred is not None else square_root_factor(self.sigma)
        return self._factor


def prepare_set(x: ArrayLike, metrics: Mapping[str, Mapping[str, Any]], device: str | torch.device | None = None) -> SetState:
    """Per-set work for the chosen metrics, done once per subsample."""
    metrics = resolve_metrics(metrics)
    n, d = check_features(x, "features", min_rows=2)
    dev = resolve_device(device, x)
    xt = as_tensor(x, dev)
    xt = xt if xt.is_floating_point() else xt.float()
    state = SetState(x=xt)
    kid_opts = metrics.get("kid")
    keep = (kid_opts is not None and all_pairs_cheaper(n, n, kid_opts["subsets"], kid_opts["subset_size"])
            and strips_fit(n, xt.element_size()))
    if "imd" in metrics:
        o = metrics["imd"]
        if o["knn"] == "exact" and keep:  # the k-NN search's Gram strips give the KID kernel for free
            kernel: KernelStrips = []

            def hook(a: int, g: torch.Tensor) -> None:
                kernel.append((a, kernel_strip(g, 1.0 / d, kid_opts["coef0"], kid_opts["degree"], copy=True)))

            state.nbrs = exact_knn(xt, o["k"], gram_hook=hook)
            state.kernel = sorted(kernel, key=lambda part: part[0])  # strips finish in any order
        else:
            state.nbrs = knn_graph(xt, o["k"], o["knn"])
    if "fid" in metrics:
        # the covariance product in float32 for float32 features (FID moves by < 1e-8 relative); the
        # float64 centred data is kept only where it is the cheaper square-root factor (N ≤ D)
        state.mu, state.sigma, state.centred = moments(
            xt, dev, product_dtype=torch.promote_types(xt.dtype, torch.float32), keep_centred=n <= d
        )
    return state


def _kid_jobs(sx: SetState, sy: SetState, o: Mapping[str, Any], rng: np.random.Generator):
    """KID's subsets (drawn from `rng` now) and its work as independent jobs, with the function that
    turns their results into each subset's MMD²: sums over every pair's kernel once (kept strips, or
    strips made now) where that is less arithmetic, else batched per-subset products."""
    m, c0, deg = o["subset_size"], o["coef0"], o["degree"]
    ix, iy = draw_subsets(sx.n, sy.n, o["subsets"], m, rng)
    gamma = 1.0 / sx.x.shape[1]
    dtype = torch.promote_types(sx.x.dtype, sy.x.dtype)
    x, y = sx.x.to(dtype), sy.x.to(dtype)
    if not all_pairs_cheaper(sx.n, sy.n, o["subsets"], m):
        return [partial(mmd2_subsets, x, y, ix, iy, gamma, c0, deg)], lambda parts: parts[0]
    xx = offdiag_parts(sx.kernel, sx.n, ix) if sx.kernel is not None else sym_parts(x, ix, gamma, c0, deg)
    yy = offdiag_parts(sy.kernel, sy.n, iy) if sy.kernel is not None else sym_parts(y, iy, gamma, c0, deg)
    xy = cross_parts(x, y, ix, iy, gamma, c0, deg)

    def combine(parts: list[torch.Tensor]) -> torch.Tensor:
        sxx, syy = sum(parts[: len(xx)]), sum(parts[len(xx) : len(xx) + len(yy)])
        return mmd2_from_sums(sxx, syy, sum(parts[len(xx) + len(yy) :]), m)

    return xx + yy + xy, combine


def _fid(sx: SetState, sy: SetState) -> float:
    """FID from the two sets' moments (the real side's square-root factor made once and kept)."""
    diff = sx.mu - sy.mu
    tr = trace_sqrt_product(sx.sigma, sy.sigma, sx.fid_factor())
    return float(diff @ diff + torch.trace(sx.sigma) + torch.trace(sy.sigma) - 2 * tr)


def score_pair(
    sx: SetState,
    sy: SetState,
    rng: np.random.Generator,
    metrics: Mapping[str, Mapping[str, Any]],
    device: str | torch.device | None = None,
) -> dict[str, float]:
    """Score one (real, generated) pair of prepared subsamples: IMD (probes for x then y drawn from
    `rng`), FID, and KID (subsets drawn from `rng` after the probes). Returns {metric: value}.

    Every metric's work is a list of independent jobs run together (in parallel on CPU: FID's
    eigenproblem beside the two Lanczos runs and KID's strips), so no core waits on a small step."""
    metrics = resolve_metrics(metrics)
    jobs: dict[str, list[Callable[[], Any]]] = {}
    if "fid" in metrics:
        check_same_dim(sx.x.shape[1], sy.x.shape[1], "FID")
        jobs["fid"] = [partial(_fid, sx, sy)]
    if "imd" in metrics:
        o = metrics["imd"]
        ts = temperatures(None)
        opts = dict(m=o["m"], nv=o["nv"], normalization=o["normalization"], rademacher=o["rademacher"],
                    variance_reduction=o["variance_reduction"])
        px = draw_probes(sx.n, o["nv"], rng, o["rademacher"])
        py = draw_probes(sy.n, o["nv"], rng, o["rademacher"])
        jobs["imd"] = [partial(trace_from_graph, s.nbrs, ts, probes=p, **opts) for s, p in ((sx, px), (sy, py))]
    if "kid" in metrics:
        check_same_dim(sx.x.shape[1], sy.x.shape[1], "KID")
        jobs["kid"], kid_combine = _kid_jobs(sx, sy, metrics["kid"], rng)
    flat = [job for part in jobs.values() for job in part]
    results = iter(run_jobs(flat, sx.x.device))
    out = {name: [next(results) for _ in part] for name, part in jobs.items()}
    values: dict[str, float] = {}
    if "imd" in out:
        values["imd"] = imd_from_traces(out["imd"][0], out["imd"][1], ts)
    if "fid" in out:
        values["fid"] = out["fid"][0]
    if "kid" in out:
        values["kid"] = float(kid_combine(out["kid"]).mean())
    return {name: values[name] for name in metrics}
