"""The per-run random draws, as documented: run r of seed s draws its rows from `numpy.random.default_rng([s, r,
*draw])`, and each metric draws from a stream of its own, `default_rng([s, r, *draw, stream_key(metric)])`.

`draw` is a block's extra key: () for an ordinary block (so `default_rng([s, r])`, the draws of every
experiment with one training seed) and (i,) for the block of training-seed index i >= 1, so each seed index
gets its own real subsample of run r (shared by all models of that index). The real subsample is drawn
first; each generator then draws its subsample rows from its own copy of that generator, so adding or
removing a model changes no other numbers. The metrics' random choices (IMD's probes, KID's subsets) come
from their own streams (`ganeval.metrics.streams`: `stream_key` is a 32-bit word of SHA-256 of the metric's
name), the same for every generator of the block, so adding or removing a metric changes no other metric's
numbers. A repeated probe draw (`probe_draws`) scores IMD again on the same subsamples with IMD's stream
under the key (s, r, *draw, PROBE_KEY).

DRAWS_VERSION names these draws in a results folder's identity: runs stored under other draws (version 1:
every metric drew from the generator's copy after its rows, in registration order) are never extended.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ganeval.metrics.streams import Draws, metric_draws


PROBE_KEY = 1 << 20  # the last entry of a repeated probe draw's key (above any seed index)
DRAWS_KEY = "draws"  # the key of a protocol results folder's identity that holds its DRAWS_VERSION (absent: 1)
DRAWS_VERSION = 2  # the draws above (each metric its own stream)


def run_generator(seed: int, run: int, *draw: int) -> np.random.Generator:
    """The random generator of run `run`'s rows (of the block whose extra key is `draw`; () for one seed's)."""
    return np.random.default_rng([seed, run, *draw])


def probe_draws(seed: int, run: int, *draw: int) -> Draws:
    """Each metric's stream in run `run`'s repeated IMD probe draw (same subsamples, other probes)."""
    return metric_draws(seed, run, *draw, PROBE_KEY)


def branch(rng: np.random.Generator) -> np.random.Generator:
    """An independent copy of `rng` in its current state (one per generator compared on a real subsample)."""
    return copy.deepcopy(rng)


def draw_rows(pool_size: int, sample_size: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `sample_size` rows of a pool, without replacement."""
    return rng.choice(pool_size, sample_size, replace=False)


class DeviceRows:
    """Rows of pools on the compute device. CPU pools are indexed in place (memory maps stay mapped; a tensor
    pool stays a tensor). For a GPU, a pool is uploaded once (host arrays through pinned staging buffers,
    tensors already there used as they are) and indexed there, so a run moves only its index vectors
    (through pinned memory, without synchronising); a pool that does not fit is copied per subsample."""

    def __init__(self, device: str) -> None:
        self.device = device
        self._resident: dict[int, Any] = {}
        self._index: Any = None

    def __call__(self, pool: Any, idx: np.ndarray) -> Any:
        import torch

        if self.device == "cpu":
            if isinstance(pool, torch.Tensor):
                return pool[torch.from_numpy(idx).to(pool.device)]
            return np.asarray(pool[idx])
        from ganeval.common import IndexUploader, upload

        key = id(pool)
        if key not in self._resident:
            try:
                self._resident[key] = upload(pool, self.device)
            except torch.cuda.OutOfMemoryError:
                self._resident[key] = None
        resident = self._resident[key]
        if resident is None:
            rows = pool[torch.from_numpy(idx).to(pool.device)] if isinstance(pool, torch.Tensor) else pool[idx]
            return upload(rows, self.device)
        if self._index is None:
            self._index = IndexUploader(resident.device)
        return resident[self._index(idx)]
