"""The per-run metric computation of the protocol, doing every expensive step once.

`prepare_set` does the per-set work (k-NN graph, mean and covariance, and, when the set is small
enough, its KID kernel matrix, taken from the same Gram blocks as the k-NN search when IMD is scored); `score_pair` then
draws IMD's probes (x's, then y's) and KID's subsets from the run's Generator and scores the pair.
A real set's state is shared by every generator compared against it in one run.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import torch

from ganeval.common import ArrayLike, as_tensor, resolve_device
from ganeval.metrics.fid import moments, square_root_factor, trace_sqrt_product
from ganeval.metrics.imd import check_imd_options, temperatures, draw_probes, imd_from_traces, knn_graph, trace_from_graph
from ganeval.metrics.kid import (
    block_sum,
    cross_sums,
    draw_subsets,
    kernel_block,
    mmd2_from_sums,
    offdiag_sums,
    poly_kernel,
    sym_kernel,
    sym_offdiag_sum,
    use_full_kernel,
)
from ganeval.metrics.knn import exact_knn
from ganeval.metrics.validation import check_features, check_same_dim

kid_module = importlib.import_module("ganeval.metrics.kid")
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
    _factor: torch.Tensor | None = None
    kernel: torch.Tensor | None = None  # KID kernel matrix (strict upper triangle), when small enough

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    def fid_factor(self) -> torch.Tensor:
        """B with BBᵀ = Σ for FID's tr √(Σ₁Σ₂), made once, on the first pair that needs it (the real
        side): the centred data over √(N−1) when N ≤ D, else the Cholesky factor."""
        if self._factor is None:
            n, d = self.x.shape
            self._factor = self.centred.T / (n - 1) ** 0.5 if n <= d else square_root_factor(self.sigma)
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
    fits = kid_opts is not None and n * n * xt.element_size() <= kid_module.KERNEL_MAX_BYTES
    if "imd" in metrics:
        o = metrics["imd"]
        if o["knn"] == "exact" and fits:  # the k-NN search's Gram blocks give the kernel for free
            kernel = torch.zeros((n, n), dtype=xt.dtype, device=dev)

            def hook(a: int, b: int, g: torch.Tensor) -> None:
                kernel_block(kernel, a, b, g, 1.0 / d, kid_opts["coef0"], kid_opts["degree"])

            state.nbrs = exact_knn(xt, o["k"], gram_hook=hook)
            state.kernel = kernel
        else:
            state.nbrs = knn_graph(xt, o["k"], o["knn"])
    if state.kernel is None and kid_opts is not None and use_full_kernel(n, n, kid_opts["subsets"], kid_opts["subset_size"], xt.element_size()):
        state.kernel = sym_kernel(xt, 1.0 / d, kid_opts["coef0"], kid_opts["degree"])
    if "fid" in metrics:
        # the covariance product in float32 for float32 features (FID moves by < 1e-8 relative)
        state.mu, state.sigma, centred = moments(xt, dev, product_dtype=torch.promote_types(xt.dtype, torch.float32))
        state.centred = centred if n <= d else None  # kept only where it is the cheaper factor
    return state


def _kid(sx: SetState, sy: SetState, o: Mapping[str, Any], rng: np.random.Generator) -> torch.Tensor:
    """MMD² of every KID subset: from full kernel matrices where they pay off (read through indicator
    products), else from batched per-subset products."""
    m, c0, deg = o["subset_size"], o["coef0"], o["degree"]
    ix, iy = draw_subsets(sx.n, sy.n, o["subsets"], m, rng)
    gamma = 1.0 / sx.x.shape[1]
    dtype = torch.promote_types(sx.x.dtype, sy.x.dtype)
    x, y = sx.x.to(dtype), sy.x.to(dtype)
    sxx = offdiag_sums(sx.kernel, ix) if sx.kernel is not None else None
    syy = offdiag_sums(sy.kernel, iy) if sy.kernel is not None else None
    sxy = None
    if use_full_kernel(sx.n, sy.n, o["subsets"], m, x.element_size()):
        sxy = cross_sums(poly_kernel(x @ y.T, gamma, c0, deg), ix, iy)
    out = torch.empty(len(ix), dtype=torch.float64, device=x.device)
    chunk = max(1, (1 << 24) // (m * x.shape[1]))
    for s in range(0, len(ix), chunk):
        part = slice(s, s + chunk)
        a = x[torch.as_tensor(ix[part], device=x.device)] if sxx is None or sxy is None else None
        b = y[torch.as_tensor(iy[part], device=x.device)] if syy is None or sxy is None else None
        cxy = sxy[part] if sxy is not None else block_sum(poly_kernel(torch.bmm(a, b.transpose(1, 2)), gamma, c0, deg))
        cxx = sxx[part] if sxx is not None else sym_offdiag_sum(a, gamma, c0, deg)
        cyy = syy[part] if syy is not None else sym_offdiag_sum(b, gamma, c0, deg)
        out[part] = mmd2_from_sums(cxx, cyy, cxy, m)
    return out


def score_pair(
    sx: SetState,
    sy: SetState,
    rng: np.random.Generator,
    metrics: Mapping[str, Mapping[str, Any]],
    device: str | torch.device | None = None,
) -> dict[str, float]:
    """Score one (real, generated) pair of prepared subsamples: IMD (probes for x then y drawn from
    `rng`), FID, and KID (subsets drawn from `rng` after the probes). Returns {metric: value}."""
    metrics = resolve_metrics(metrics)
    values: dict[str, float] = {}
    if "imd" in metrics:
        o = metrics["imd"]
        ts = temperatures(None)
        opts = dict(m=o["m"], nv=o["nv"], normalization=o["normalization"], rademacher=o["rademacher"],
                    variance_reduction=o["variance_reduction"])
        px = draw_probes(sx.n, o["nv"], rng, o["rademacher"])
        py = draw_probes(sy.n, o["nv"], rng, o["rademacher"])
        hx = trace_from_graph(sx.nbrs, ts, probes=px, **opts)
        hy = trace_from_graph(sy.nbrs, ts, probes=py, **opts)
        values["imd"] = imd_from_traces(hx, hy, ts)
    if "fid" in metrics:
        check_same_dim(sx.x.shape[1], sy.x.shape[1], "FID")
        diff = sx.mu - sy.mu
        tr = trace_sqrt_product(sx.sigma, sy.sigma, sx.fid_factor())
        values["fid"] = float(diff @ diff + torch.trace(sx.sigma) + torch.trace(sy.sigma) - 2 * tr)
    if "kid" in metrics:
        check_same_dim(sx.x.shape[1], sy.x.shape[1], "KID")
        values["kid"] = float(_kid(sx, sy, metrics["kid"], rng).mean())
    return values
