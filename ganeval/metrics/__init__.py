"""IMD, FID, KID, precision/recall/density/coverage and the Inception Score on feature arrays (numpy or
torch, CPU or GPU), and the registry of metrics by name.

Imports torch, numpy and scipy only; pynndescent is imported only for `knn="approx"`. The modules are
imported in registration order: IMD (whose exact k-NN search makes the Gram strips and graphs), FID, KID
(whose cross Gram strips precision/recall/density/coverage reuse), PRDC, IS, then CMMD, sFID, FD∞, Vendi,
authenticity and MiFID.
"""

from ganeval.metrics.imd import heat_trace, imd, imd_from_traces
from ganeval.metrics.fid import fid, frechet_distance
from ganeval.metrics.kid import kid
from ganeval.metrics.prdc import prdc
from ganeval.metrics.inception_score import inception_score
from ganeval.metrics.cmmd import cmmd
from ganeval.metrics.sfid import sfid
from ganeval.metrics.fd_inf import fd_inf
from ganeval.metrics.vendi import vendi
from ganeval.metrics.memorization import authenticity, mifid
from ganeval.metrics.registry import (
    Metric, Metrics, Option, PairWork, function_metric, get_metric, metric_names, option, register_metric,
)

__all__ = [
    "fid", "frechet_distance", "kid", "heat_trace", "imd", "imd_from_traces", "prdc", "inception_score",
    "cmmd", "sfid", "fd_inf", "vendi", "authenticity", "mifid",
    "Metric", "Metrics", "Option", "PairWork", "function_metric", "get_metric", "metric_names", "option",
    "register_metric",
]
