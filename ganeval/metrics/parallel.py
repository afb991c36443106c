"""CPU parallelism by independent work items, each on one core, instead of every op on all cores.

Small ops (top-k, element-wise passes, 2048×2048 eigenproblems, Lanczos steps) scale poorly over threads,
and OpenBLAS's spinning workers fight torch's when the two alternate. So on CPU ganeval runs independent
pieces (Gram strips, the two sets of an IMD call, the metrics' jobs when a pair is scored) in Python
threads with torch and BLAS held to one thread each. Every piece is then computed single-threaded whatever the worker count, so the numbers
do not depend on how many cores did the work.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator, Sequence, TypeVar

import torch

T = TypeVar("T")
R = TypeVar("R")

_workers: contextvars.ContextVar[int | None] = contextvars.ContextVar("ganeval_workers", default=None)
_lock = threading.Lock()
_depth = 0
_saved: tuple[int, object] | None = None


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def cpu_workers() -> int:
    """Threads a parallel map may use here: 1 inside a worker of an enclosing map, else the usable
    cores, capped by torch's thread setting (so `torch.set_num_threads(1)` keeps ganeval on one core)."""
    inside = _workers.get()
    return min(usable_cores(), torch.get_num_threads()) if inside is None else inside


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """torch's intra-op pool and every BLAS library at one thread for the block (process-wide, nestable
    and safe to enter from several threads: the settings come back when the last one leaves)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            from threadpoolctl import threadpool_limits

            limiter = threadpool_limits(1)
            _saved = (torch.get_num_threads(), limiter)
            torch.set_num_threads(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                threads, limiter = _saved
                torch.set_num_threads(threads)
                limiter.restore_original_limits()  # type: ignore[attr-defined]
                _saved = None


def _as_worker(fn: Callable[[T], R]) -> Callable[[T], R]:
    def run(item: T) -> R:
        token = _workers.set(1)  # nested maps inside a worker run sequentially
        try:
            return fn(item)
        finally:
            _workers.reset(token)

    return run


def pmap(fn: Callable[[T], R], items: Sequence[T], workers: int | None = None) -> list[R]:
    """[fn(item) for item in items], computed single-threaded, on up to `workers` threads (default: the
    usable cores, or 1 inside another map's worker). Results come back in the order of `items`."""
    workers = cpu_workers() if workers is None else max(1, int(workers))
    workers = min(workers, len(items))
    with single_threaded():
        if workers <= 1:
            return [_as_worker(fn)(item) for item in items]
        with ThreadPoolExecutor(workers, thread_name_prefix="ganeval") as ex:
            return list(ex.map(_as_worker(fn), items))


def device_map(fn: Callable[[T], R], items: Sequence[T], device: torch.device) -> list[R]:
    """`pmap` for work on CPU tensors; a plain loop on a GPU, whose kernels already fill the device."""
    return pmap(fn, items) if device.type == "cpu" else [fn(item) for item in items]


def run_jobs(jobs: Sequence[Callable[[], R]], device: torch.device) -> list[R]:
    """Call each job (in parallel on CPU, in order on a GPU); results in the order of `jobs`."""
    return device_map(lambda job: job(), jobs, device)
