"""IMD, FID and KID on feature arrays (numpy or torch, CPU or GPU), and the registry of metrics by name.

Imports torch, numpy and scipy only; pynndescent is imported only for `knn="approx"`. The modules are
imported in registration order: IMD (whose exact k-NN search makes the Gram strips), FID, KID.
"""

from ganeval.metrics.imd import heat_trace, imd, imd_from_traces
from ganeval.metrics.fid import fid, frechet_distance
from ganeval.metrics.kid import kid
from ganeval.metrics.registry import (
    Metric, Metrics, Option, PairWork, function_metric, get_metric, metric_names, option, register_metric,
)

__all__ = [
    "fid", "frechet_distance", "kid", "heat_trace", "imd", "imd_from_traces",
    "Metric", "Metrics", "Option", "PairWork", "function_metric", "get_metric", "metric_names", "option",
    "register_metric",
]
