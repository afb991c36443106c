"""The per-run metric computation of the protocol: the registered metrics' stages, composed so that
every expensive step is done once.

`prepare_set` runs each chosen metric's statistics stage on one subsample (in registration order, so
IMD's exact k-NN search hands its Gram strips to KID's kernel); `score_pair` lets each metric draw
its random choices from its own stream (`streams`: IMD's probes, x's then y's; KID's subsets), so a metric's
numbers do not depend on which others run, and runs every metric's jobs together. A real set's state is
shared by every generator scored against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import torch

from ganeval.common import ArrayLike, resolve_device
from ganeval.metrics.parallel import run_lanes
from ganeval.metrics.registry import Metrics, Shared
from ganeval.metrics.streams import Draws
from ganeval.metrics.validation import FeatureInfo, check_same_dim, finite_result, load_features

MetricChoice = Metrics | Mapping[str, Mapping[str, Any] | None] | Iterable[str]


@dataclass
class SetState:
    """What one subsample contributes to every pair it is scored in: its rows and each metric's statistics."""

    x: torch.Tensor
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])


def prepare_set(x: ArrayLike, metrics: MetricChoice, device: str | torch.device | None = None,
                pool: FeatureInfo | None = None) -> SetState:
    """Per-set work for the chosen metrics (a `Metrics`, or names/options resolved here), once per subsample.

    The rows are checked and computed in the precision every chosen metric's reach allows (see
    `validation.load_features`, which `pool`, the checks of the pool x was drawn from, can spare a pass):
    as given for ordinary float32/float64 features."""
    metrics = metrics if isinstance(metrics, Metrics) else Metrics(metrics)
    xt = load_features(x, "features", resolve_device(device, x), min_rows=2, reaches=metrics.reaches(), pool=pool)
    chosen = metrics.ordered()
    taps = {m.name: m.tap(xt, opts) for m, opts in chosen if m.tap is not None}
    state = SetState(xt)
    shared = Shared(state.stats, metrics)
    for metric, opts in chosen:
        hooks = [tap for name, tap in taps.items() if name != metric.name and tap is not None]
        extra = {"context": shared} if metric.shares else {}
        state.stats[metric.name] = metric.prepare(xt, opts, hooks, taps.get(metric.name), **extra)
    return state


def score_pair(
    sx: SetState, sy: SetState, draws: Draws, metrics: MetricChoice, device: str | torch.device | None = None
) -> dict[str, float]:
    """Score one (real, generated) pair of prepared subsamples; returns {metric: value} in the order asked.

    Metric m draws from `draws(m)` (`streams.metric_draws(*key)`: a stream of its own under the run's key).
    Every metric's jobs run together (in parallel on CPU: FID's eigenproblem beside the two Lanczos
    runs and KID's strips), so no core waits on a small step."""
    metrics = metrics if isinstance(metrics, Metrics) else Metrics(metrics)
    work = {}
    shared = Shared({}, metrics)
    for metric, opts in metrics.ordered():
        if metric.same_dim:
            check_same_dim(sx.x.shape[1], sy.x.shape[1], metric.name.upper())
        extra = {"context": shared} if metric.shares else {}
        work[metric.name] = metric.pair(sx.stats[metric.name], sy.stats[metric.name], opts, draws(metric.name), **extra)
    # metrics with few jobs first: theirs are the large unsplit ones (FID's eigenproblem, IMD's Lanczos
    # runs), and the many small strips of the others then fill the cores' idle time at the end
    queue = sorted(work, key=lambda name: len(work[name].jobs))
    # on a GPU: a metric's few large jobs (FID's eigenproblem, IMD's two traces) each on a stream of its own,
    # a metric's many small ones (KID's strips) in order on one
    lanes: list[list[Any]] = []
    for name in queue:
        jobs = work[name].jobs
        lanes += [[job] for job in jobs] if len(jobs) <= 2 else [list(jobs)]
    results = iter(run_lanes(lanes, sx.x.device))
    values = {name: finite_result(work[name].finish([next(results) for _ in work[name].jobs]), name) for name in queue}
    return {name: values[name] for name in metrics}
