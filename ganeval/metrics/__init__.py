"""IMD, FID and KID on feature arrays (numpy or torch, CPU or GPU).

Imports torch, numpy and scipy only; pynndescent is imported only for `knn="approx"`.
"""

from ganeval.metrics.fid import fid, frechet_distance
from ganeval.metrics.imd import heat_trace, imd, imd_from_traces
from ganeval.metrics.kid import kid

__all__ = ["fid", "frechet_distance", "kid", "heat_trace", "imd", "imd_from_traces"]
