"""Precision and recall (Kynkäänniemi et al. 2019, k = 3) and density and coverage (Naeem et al. 2020, k = 5):
k-NN balls around the real (and fake) rows, and counts of which rows of the other set fall inside them.

Definitions as the `prdc` package (Naeem et al.'s code) computes them on the same features, with a ball's
radius the distance from a row to its k-th nearest *other* row of its own set (prdc: the (k+1)-th smallest
of the row's distances, itself included) and "inside" meaning strictly closer than the radius:
  precision = share of fake rows inside some real ball (real radii, k)
  recall    = share of real rows inside some fake ball (fake radii, k)
  density   = mean over fake rows of (number of real balls holding it) / k
  coverage  = share of real balls holding some fake row.

The four are separate metrics (each with its own `k`) computed from one pass when asked together: one
exact k-NN search per set (IMD's graph when it is computed anyway), the radii from the distances that search
ranked the neighbours by, and one blocked pass over the real × fake distances (KID's cross Gram strips when KID
sums over every pair), never an N×M matrix at once. Comparisons are made in the working precision and
those within its rounding error of the radius are decided again from exact float64 distances and radii,
so the counts are those of exact arithmetic: prdc's float64 distances (scikit-learn's Gram-based formula)
can differ from them only for pairs within ~1e-15 relative of a radius, e.g. exact ties of non-integer data.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, resolve_device
from ganeval.metrics.knn import KnnGraph, _exact_sq_dist, exact_knn_graph
from ganeval.metrics.linalg import matmul, strips
from ganeval.metrics.parallel import run_jobs
from ganeval.metrics.registry import (
    CROSS_GRAM_HOOKS, GramHook, GramTap, Metric, PairWork, Shared, fan_out, integer, option, register_metric,
)
from ganeval.metrics.validation import check_same_dim, finite_result, load_features

NAMES = ("precision", "recall", "density", "coverage")
DEFAULT_K = {"precision": 3, "recall": 3, "density": 5, "coverage": 5}
BALLS = "prdc.balls"  # the memo keys shared by the four metrics
CROSS = "prdc.cross"


def reach(peak: float, n: int, d: int) -> tuple[float, float]:
    """The largest number formed (see `validation.Reach`): squared distances ≤ 4·D·peak²."""
    r = 4.0 * d * peak * peak
    return r, r


# ------------------------------------------------------------------------------------------ per set
@dataclass
class Balls:
    """A set's k-NN balls: its rows, their squared norms and, for every k asked, each row's squared radius (the
    distance to its k-th nearest other row; self excluded by index) in the working precision, as the exact
    k-NN search computed it (within `distance_error` of the truth); `exact_radii` gives them in exact float64
    where a comparison needs it."""

    x: torch.Tensor
    sq: torch.Tensor
    nbrs: torch.Tensor
    radii: dict[int, torch.Tensor]

    def exact_radii(self, rows: torch.Tensor, k: int) -> torch.Tensor:
        """Squared k-th neighbour distances of `rows` from exact float64 differences to their K neighbours."""
        return _exact_sq_dist(self.x, rows, self.nbrs[rows]).sort(dim=1).values[:, k - 1]


def balls(x: torch.Tensor, ks: Sequence[int], graph: KnnGraph | None = None,
          gram_hook: GramHook | None = None) -> Balls:
    """The balls of x for each k in `ks`: from an exact search's graph with its distances (N×K, K ≥ max ks)
    or a search made here. The K distances are sorted, so ties at the k-th place give one radius whichever
    tied row the graph holds."""
    top = max(ks)
    if graph is None or graph.sq_dist is None or graph.nbrs.shape[1] < top:
        graph = exact_knn_graph(x, top, gram_hook=gram_hook)
    assert graph.sq_dist is not None  # an exact search keeps its distances
    d = graph.sq_dist.to(x.dtype).sort(dim=1).values
    return Balls(x, (x * x).sum(dim=1), graph.nbrs, {k: d[:, k - 1].contiguous() for k in sorted(set(ks))})


def needs(chosen: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """name -> k of the four metrics that are chosen."""
    return {name: int(chosen[name]["k"]) for name in NAMES if name in chosen}


def set_ks(chosen: Mapping[str, Mapping[str, Any]]) -> list[int]:
    """Every k a set's balls are needed for (a set is real in one pair and may be fake in another)."""
    return sorted(set(needs(chosen).values()))


def reusable_graph(context: Shared, top: int) -> KnnGraph | None:
    """IMD's exact k-NN graph (with its distances) of this set when it holds at least `top` neighbours, else None."""
    imd = context.chosen.get("imd")
    if imd is not None and imd["knn"] == "exact" and imd["k"] >= top and "imd" in context.stats:
        return context.stats["imd"]
    return None


def _prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None, *,
             context: Shared) -> Balls:
    """The statistics stage shared by the four metrics: one k-NN search (or IMD's graph), radii for every k."""
    if BALLS not in context.memo:
        ks = set_ks(context.chosen)
        graph = reusable_graph(context, max(ks))
        imd = context.chosen.get("imd")
        # IMD's exact search already hands its Gram strips to the other metrics' taps: never twice
        fed = imd is not None and imd["knn"] == "exact"
        context.memo[BALLS] = balls(x, ks, graph, None if fed else fan_out(hooks))
    return context.memo[BALLS]


# ----------------------------------------------------------------------------------------- per pair
@dataclass
class Cross:
    """Counts of one real × fake pair, filled strip by strip of real rows (from any thread)."""

    real: Balls
    fake: Balls
    ks: dict[str, int]
    parts: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)
    scratch: threading.local = field(default_factory=threading.local)

    def buffers(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """This thread's scratch strips (keys, margins, flags) shaped like `like`, reused from strip to strip:
        fresh memory costs more to touch than the passes that fill it."""
        held = getattr(self.scratch, "held", None)
        if held is None or held[0].shape != like.shape or held[0].dtype != like.dtype:
            held = (torch.empty_like(like), torch.empty_like(like), torch.empty(like.shape, dtype=torch.bool, device=like.device))
            self.scratch.held = held
        return held

    def gram_hook(self, a: int, g: torch.Tensor) -> None:
        """Take a real × fake Gram strip g = real[a:a+h]·fakeᵀ made by another metric (not modified)."""
        self.strip(a, g)

    def job(self, a: int, e: int) -> None:
        """Make the Gram strip of real rows a..e and count from it."""
        self.strip(a, matmul(self.real.x[a:e], self.fake.x.T))

    def strip(self, a: int, g: torch.Tensor) -> None:
        """Count from the Gram strip g = real[a:a+h]·fakeᵀ (left unmodified) into `parts[a]`."""
        r, f = self.real, self.fake
        h, dtype = g.shape[0], g.dtype
        e = a + h
        # keys = |f_j|² − 2 r_i·f_j, so d²(r_i, f_j) = |r_i|² + keys (g itself is left as it is)
        key_buf, buf, flags = self.buffers(g)
        keys = torch.add(f.sq[None, :], g, alpha=-2.0, out=key_buf)
        sq_r = r.sq[a:e]
        # a Gram-based squared distance is off by at most a few ulps of (|r|² + |f|²) per √D terms (the k-NN
        # search's `distance_error`), and a radius, which the search computed the same way, by up to twice as
        # much: margins within `tol` of 0 are decided from exact float64 distances and radii
        eps = torch.finfo(dtype).eps
        big = float(r.sq.max()) + float(f.sq.max())
        tol = 12.0 * eps * (math.sqrt(r.x.shape[1]) + 1.0) * big
        rows = torch.arange(a, e, device=g.device)
        out: dict[str, torch.Tensor] = {}
        if "coverage" in self.ks:  # real ball i holds some fake row: min_j d² < R_i²
            k = self.ks["coverage"]
            offset = sq_r - r.radii[k][a:e]
            out["coverage"] = self._rows_any(keys.amin(dim=1) + offset, tol, keys, offset, rows, real_k=k)
        if "recall" in self.ks:  # real row i inside some fake ball j: d² < Rf_j²
            k = self.ks["recall"]
            m = torch.sub(keys, f.radii[k][None, :], out=buf)
            out["recall"] = self._rows_any(m.amin(dim=1) + sq_r, tol, m, sq_r, rows, fake_k=k)
        for name in ("precision", "density"):
            if name in self.ks:  # per fake row j: the real balls i holding it
                k = self.ks[name]
                m = torch.add(keys, (sq_r - r.radii[k][a:e])[:, None], out=buf)
                out[name] = self._column_counts(m, tol, rows, k, name == "precision", flags)
        self.parts[a] = out  # dict assignment is atomic: safe from worker threads

    def _exact_inside(self, ri: torch.Tensor, fj: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
        """Exactly (float64 differences) whether d²(real ri, fake fj) < radius for index vectors ri, fj."""
        diff = self.real.x[ri].double() - self.fake.x[fj].double()
        return (diff * diff).sum(dim=1) < radius

    def _rows_any(self, margin: torch.Tensor, tol: float, m: torch.Tensor, offset: torch.Tensor, rows: torch.Tensor,
                  real_k: int | None = None, fake_k: int | None = None) -> torch.Tensor:
        """Per real row: is some entry of its margin row (m + offset: d² − R²) below 0? Certain where the
        smallest margin is beyond ±tol; the other rows are decided exactly from their near entries, against
        the real row's exact radius (`real_k`) or each fake row's (`fake_k`)."""
        hit = margin < -tol
        for i in torch.nonzero(margin.abs() <= tol).flatten().tolist():
            near = torch.nonzero(m[i] + offset[i] <= tol).flatten()
            if fake_k is not None:
                radius = self.fake.exact_radii(near, fake_k)
            else:
                assert real_k is not None  # one of real_k, fake_k is given
                radius = self.real.exact_radii(rows[i : i + 1], real_k).expand(near.shape[0])
            hit[i] = bool(self._exact_inside(rows[i].expand(near.shape[0]), near, radius).any())
        return hit

    def _column_counts(self, m: torch.Tensor, tol: float, rows: torch.Tensor, k: int, any_only: bool,
                       flags: torch.Tensor) -> torch.Tensor:
        """Per fake row (column of the margins m = d² − R²): how many real balls of the strip hold it (or
        whether any does); entries within ±tol are decided exactly."""
        if any_only:
            low = m.amin(dim=0)
            count = (low < -tol).to(torch.float64)
            unsure = torch.nonzero(low.abs() <= tol).flatten()
        else:
            lo = torch.lt(m, -tol, out=flags).sum(dim=0, dtype=torch.int32)
            hi = torch.le(m, tol, out=flags).sum(dim=0, dtype=torch.int32)
            count = lo.to(torch.float64)
            unsure = torch.nonzero(hi > lo).flatten()
        for j in unsure.tolist():
            near = torch.nonzero(m[:, j].abs() <= tol).flatten()
            radius = self.real.exact_radii(rows[near], k)
            count[j] += int(self._exact_inside(rows[near], torch.full_like(near, j), radius).sum())
        return count > 0 if any_only else count

    def value(self, name: str) -> float:
        """The metric's value from every strip's part (call after all strips are done)."""
        parts = [self.parts[a][name] for a in sorted(self.parts)]
        if name in ("coverage", "recall"):
            return float(torch.cat(parts).double().mean())
        if name == "precision":
            return float(torch.stack(parts).any(dim=0).double().mean())
        return float(torch.stack(parts).sum(dim=0).mean() / self.ks["density"])


def _pair(a: Balls, b: Balls, o: Mapping[str, Any], rng: np.random.Generator, *, context: Shared,
          name: str) -> PairWork:
    """The first of the four metrics to pair makes the one pass (its strips as jobs, or a hook on KID's
    cross Gram strips); every one reads its value from the shared counts once all jobs are done."""
    jobs = []
    if CROSS not in context.memo:
        dtype = torch.promote_types(a.x.dtype, b.x.dtype)
        real = Balls(a.x.to(dtype), a.sq.to(dtype), a.nbrs, {k: v.to(dtype) for k, v in a.radii.items()})
        fake = Balls(b.x.to(dtype), b.sq.to(dtype), b.nbrs, {k: v.to(dtype) for k, v in b.radii.items()})
        cross = context.memo[CROSS] = Cross(real, fake, needs(context.chosen))
        kid_hooks = context.memo.get(CROSS_GRAM_HOOKS)
        if kid_hooks is not None:
            kid_hooks.append(cross.gram_hook)
        else:
            jobs = [partial(cross.job, s, e) for s, e in strips(a.x.shape[0], a.x.device)]
    cross = context.memo[CROSS]
    return PairWork(jobs, lambda results: cross.value(name))


def _check_sample_size(name: str, sample_size: int, o: Mapping[str, Any]) -> None:
    if o["k"] >= sample_size:
        raise ValueError(f"metrics.{name}.k={o['k']} must be below sample_size={sample_size}")


DOCS = {
    "precision": "share of generated samples inside the k-NN ball of some real sample (Kynkäänniemi et al. 2019)",
    "recall": "share of real samples inside the k-NN ball of some generated sample (Kynkäänniemi et al. 2019)",
    "density": "mean number of real k-NN balls holding a generated sample, over k (Naeem et al. 2020)",
    "coverage": "share of real k-NN balls holding some generated sample (Naeem et al. 2020)",
}
METRICS = {
    name: register_metric(Metric(
        name=name,
        options=(option("k", DEFAULT_K[name], integer(1), "nearest neighbours of the k-NN balls (prdc's nearest_k)"),),
        prepare=_prepare, pair=partial(_pair, name=name), check_sample_size=partial(_check_sample_size, name),
        reach=lambda peak, n, d, o: reach(peak, n, d), label=name.capitalize(), shares=True, higher_is_better=True,
        doc=DOCS[name],
    ))
    for name in NAMES
}


def prdc(
    real: ArrayLike, fake: ArrayLike, nearest_k: int = 5, device: str | torch.device | None = None,
    *, k: Mapping[str, int] | None = None,
) -> dict[str, float]:
    """Precision, recall, density and coverage of `fake` against `real` (N×D and M×D), as the `prdc`
    package's compute_prdc(real, fake, nearest_k) gives them.

    Args:
        real: The real features, N×D.
        fake: The generated features, M×D.
        nearest_k: The k of every k-NN radius.
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.
        k: Each metric's own k instead of `nearest_k`, e.g. {"precision": 3, "recall": 3, "density": 5,
            "coverage": 5} (the papers' choices).

    Returns:
        {"precision", "recall", "density", "coverage"}: each higher is better (density may exceed 1).

    Examples:
        >>> from ganeval.metrics import prdc
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> {k: round(v, 3) for k, v in prdc(x, y).items()}
        {'precision': 0.91, 'recall': 0.934, 'density': 0.848, 'coverage': 0.894}
    """
    ks = {name: nearest_k for name in NAMES} if k is None else dict(k)
    unknown = set(ks) - set(NAMES)
    if unknown or not ks:
        raise ValueError(f"k must map some of {NAMES} to integers, got {k!r}")
    chosen = {name: METRICS[name].resolve({"k": v}, where=f"{name}.") for name, v in ks.items()}
    dev = resolve_device(device, real, fake)
    top = max(o["k"] for o in chosen.values())
    reaches = [("the distances", lambda peak, n, d: reach(peak, n, d))]
    xs = [load_features(v, name, dev, min_rows=top + 1, reaches=reaches) for name, v in (("real", real), ("fake", fake))]
    check_same_dim(xs[0].shape[1], xs[1].shape[1], "precision/recall/density/coverage")
    sets = [balls(x, sorted({o["k"] for o in chosen.values()})) for x in xs]
    context = Shared({}, chosen)
    work = {name: METRICS[name].pair(sets[0], sets[1], chosen[name], np.random.default_rng(0), context=context)
            for name in NAMES if name in chosen}
    run_jobs([job for w in work.values() for job in w.jobs], dev)
    return {name: finite_result(w.finish([]), name) for name, w in work.items()}
