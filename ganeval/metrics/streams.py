"""Each metric's own random stream, so a metric's numbers do not depend on which other metrics run beside it.

Scored under the key k (the protocol's run key (seed, r, *draw)), metric m draws its random choices (IMD's
probes, KID's subsets, FD∞'s subsets) from `numpy.random.default_rng([*k, stream_key(m)])`. `stream_key` is
taken from SHA-256 of the name's UTF-8 bytes, not Python's `hash()`, so it is the same in every release,
process and import order, and adding a metric changes no other metric's draws.
"""

from __future__ import annotations

import hashlib
from typing import Callable

import numpy as np

Draws = Callable[[str], np.random.Generator]  # metric name -> the Generator that metric draws from


def stream_key(name: str) -> int:
    """The first four bytes of SHA-256(name in UTF-8) as a big-endian word, top bit set: one 32-bit entropy word
    that never equals a training-seed index or the protocol's probe key (both below 2**31)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big") | (1 << 31)


def metric_generator(name: str, *key: int) -> np.random.Generator:
    """The Generator metric `name` draws from under `key`: `default_rng([*key, stream_key(name)])`."""
    return np.random.default_rng([*(int(k) for k in key), stream_key(name)])


def metric_draws(*key: int) -> Draws:
    """Every metric's own stream under `key` (what `suite.score_pair` takes)."""
    return lambda name: metric_generator(name, *key)
