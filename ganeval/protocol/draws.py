"""The per-run random draws, as documented: run r of seed s uses `numpy.random.default_rng([s, r])`.

The real subsample is drawn first; each generator then draws from its own copy of that generator
(its subsample rows, then its metrics' draws), so adding or removing a model changes no other numbers.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np


def run_generator(seed: int, run: int) -> np.random.Generator:
    """The random generator of run `run`."""
    return np.random.default_rng([seed, run])


def branch(rng: np.random.Generator) -> np.random.Generator:
    """An independent copy of `rng` in its current state (one per generator compared on a real subsample)."""
    return copy.deepcopy(rng)


def draw_rows(pool_size: int, sample_size: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `sample_size` rows of a pool, without replacement."""
    return rng.choice(pool_size, sample_size, replace=False)


class DeviceRows:
    """Rows of pools on the compute device: CPU pools are indexed in place (memory maps stay mapped),
    GPU pools are copied to the device once and indexed there (or per subsample when they do not fit)."""

    def __init__(self, device: str) -> None:
        self.device = device
        self._resident: dict[int, Any] = {}

    def __call__(self, pool: np.ndarray, idx: np.ndarray) -> Any:
        if self.device == "cpu":
            return np.asarray(pool[idx])
        import torch

        key = id(pool)
        if key not in self._resident:
            try:
                self._resident[key] = torch.from_numpy(np.ascontiguousarray(pool)).to(self.device)
            except torch.cuda.OutOfMemoryError:
                self._resident[key] = None
        resident = self._resident[key]
        if resident is None:
            return torch.from_numpy(np.asarray(pool[idx])).to(self.device)
        return resident[torch.as_tensor(idx, device=resident.device)]
