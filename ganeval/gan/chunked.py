"""How a `fn(n, seed)` callable's pool is drawn in pieces of bounded memory, reproducibly (`CallableGenerator`).

Two kinds of callable, told apart by their signature:

- offset-aware, `fn(n, seed, offset=0)` (a parameter named `offset`): it promises that `fn(m, seed, offset=o)`
  are rows o … o+m-1 of `fn(N, seed)` for every N ≥ o+m. Its pool is always drawn in chunks of about
  CHUNK_BYTES, and is the same pool as one call (`validate()` checks the promise on three rows).
- plain `fn(n, seed)`: called once, as always, when its whole output takes at most WHOLE_BYTES (2 GiB: e.g.
  50 000 CIFAR-size images, 10 000 uint8 images of 3×256×256), so every pool that fits stays the pool of before.
  A larger one is drawn in chunks: chunk k holds rows k·m … of the pool (m rows of about CHUNK_BYTES each, the last
  one shorter) and is `fn(m, chunk_seed(seed, k))`. That is another pool than one call would give, but the same for
  the same seed, n and output shape whatever the batch size or machine.

The row size is that of one row of the callable's own output (`fn(1, seed)`, its dtype included).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

WHOLE_BYTES = 2 << 30  # a plain callable whose whole output is at most this is called once (the pools of the shipped experiments)
CHUNK_BYTES = 256 << 20  # the size of one chunk of its output otherwise (and of an offset-aware callable's chunks)


def chunk_seed(seed: int, k: int) -> int:
    """The seed chunk k of a chunked plain callable is called with: SeedSequence([seed, k]).generate_state(1)[0]."""
    return int(np.random.SeedSequence([int(seed), int(k)]).generate_state(1)[0])


def takes_offset(fn: Callable[..., Any]) -> bool:
    """True when `fn` has a parameter named `offset` it can be given by keyword (an offset-aware callable)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False
    p = params.get("offset")
    return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


@dataclass(frozen=True)
class Call:
    """One call of the callable: `fn(rows, seed, **({"offset": offset} if offset is not None else {}))`."""

    rows: int
    seed: int
    offset: int | None = None

    def kwargs(self) -> dict[str, int]:
        return {} if self.offset is None else {"offset": self.offset}


def plan(n: int, seed: int, row_bytes: int, offset_aware: bool) -> list[Call]:
    """The calls that draw an n-row pool with `seed` (see the module doc); one call when the pool is drawn whole."""
    if row_bytes < 1:
        raise ValueError(f"row_bytes must be >= 1, got {row_bytes}")
    rows = max(1, CHUNK_BYTES // row_bytes)
    if offset_aware:
        return [Call(min(rows, n - s), seed, s) for s in range(0, n, rows)]
    if n * row_bytes <= WHOLE_BYTES:
        return [Call(n, seed)]
    return [Call(min(rows, n - s), chunk_seed(seed, k)) for k, s in enumerate(range(0, n, rows))]


def rebatch(chunks: Any, batch_size: int) -> Any:
    """The rows of an iterable of arrays as arrays of exactly `batch_size` rows (the last one shorter), in order:
    the same batches as slicing the concatenated pool, so extraction sees what it would see on the whole array."""
    carry: list[np.ndarray] = []
    held = 0
    for a in chunks:
        start = 0
        if held:  # complete the batch begun by the previous chunk
            take = min(batch_size - held, len(a))
            carry.append(a[:take])
            held += take
            start = take
            if held < batch_size:
                continue
            yield np.concatenate(carry)
            carry, held = [], 0
        while len(a) - start >= batch_size:
            yield a[start : start + batch_size]
            start += batch_size
        if start < len(a):
            carry, held = [a[start:]], len(a) - start
    if held:
        yield np.concatenate(carry)
