"""IMD of two fixed sets over several probe draws: the noise of the estimator alone (the data do not change).

`imd_over_seeds(x, y, seeds)` equals `[imd(x, y, seed=s) for s in seeds]` (exact k-NN: the graphs do not depend on
the seed) but builds each set's k-NN graph once, so every further draw costs only its Lanczos runs.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ganeval.common import ArrayLike, resolve_device
from ganeval.metrics.imd import (
    DEFAULTS, _features, check_imd_options, draw_probes, imd_from_traces, knn_graph, temperatures, trace_from_graph,
)
from ganeval.metrics.parallel import device_map


def imd_over_seeds(x: ArrayLike, y: ArrayLike, seeds: Sequence[int], device: Any = None, **options: Any) -> list[float]:
    """IMD(x, y) for each seed's probe draw (x's probes then y's from default_rng(seed), as `imd` draws them); the
    k-NN graphs are built once, with the first seed (it matters only for knn=approx)."""
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
        values.append(imd_from_traces(trace_from_graph(gx, ts, probes=px, **opts),
                                      trace_from_graph(gy, ts, probes=py, **opts), ts))
    return values
