"""A generator's pool as a re-iterable stream of batches, for extraction without an N-image array.

`PoolStream(gen, n, seed, batch_size)` draws `gen.sample_batches(n, seed, batch_size)` afresh on every pass (the
same rows for the same seed), so feature extraction can hash it once for the cache key and, on a miss, draw it again
into the extractor; `shape` and `nbytes` (from one probe row) describe the pool without drawing it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


class PoolStream:
    """`n` samples of `gen` drawn with `seed`, batch by batch (`batch_size` rows), on every iteration."""

    def __init__(self, gen: Any, n: int, seed: int, batch_size: int, device: Any = None) -> None:
        if not hasattr(gen, "sample_batches"):
            raise ValueError(f"{gen!r} cannot stream its samples (it has no sample_batches)")
        self.gen, self.n, self.seed, self.batch_size, self.device = gen, int(n), int(seed), int(batch_size), device
        row = np.asarray(gen.sample(1, seed=self.seed, batch_size=1, device=device))
        self.shape: tuple[int, ...] = (self.n, *row.shape[1:])
        self.dtype = row.dtype
        self.nbytes = self.n * row.nbytes

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter(self.gen.sample_batches(self.n, seed=self.seed, batch_size=self.batch_size, device=self.device))

    def __len__(self) -> int:
        return self.n
