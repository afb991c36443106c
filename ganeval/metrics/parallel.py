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


STREAMS = 3  # CUDA streams (and host threads) that independent GPU work items are spread over
_streams: dict[str, list[torch.cuda.Stream]] = {}


def _device_streams(device: torch.device) -> list[torch.cuda.Stream]:
    key = str(device)
    with _lock:
        if key not in _streams:
            _streams[key] = [torch.cuda.Stream(device) for _ in range(STREAMS)]
        return _streams[key]


def stream_map(fn: Callable[[T], R], items: Sequence[T], device: torch.device) -> list[R]:
    """[fn(item) for item in items]; on a GPU each item in a host thread of its own with its own CUDA stream, so
    one item's host work (Python, launches, the reads of values that decide the next step) overlaps another's
    kernels, and small kernels (an eigenproblem's, Lanczos steps) share the device. Each item starts after the
    work queued so far on the calling stream and is finished when this returns. Elsewhere a plain loop."""
    if device.type != "cuda" or len(items) <= 1 or _workers.get() is not None:
        return [fn(item) for item in items]
    caller = torch.cuda.current_stream(device)
    streams = _device_streams(device)

    def run(pos_item: tuple[int, T]) -> R:
        pos, item = pos_item
        stream = streams[pos % len(streams)]
        with torch.cuda.device(device):
            stream.wait_stream(caller)
            token = _workers.set(1)  # nested maps run in this thread and stream
            try:
                with torch.cuda.stream(stream):
                    out = fn(item)
            finally:
                _workers.reset(token)
            stream.synchronize()  # its tensors are complete before another stream or the caller uses them
        return out

    with ThreadPoolExecutor(min(len(streams), len(items)), thread_name_prefix="ganeval-cuda") as ex:
        return list(ex.map(run, enumerate(items)))


def run_jobs(jobs: Sequence[Callable[[], R]], device: torch.device) -> list[R]:
    """Call each job (in parallel on CPU, in order on a GPU); results in the order of `jobs`."""
    return device_map(lambda job: job(), jobs, device)


def run_lanes(lanes: Sequence[Sequence[Callable[[], R]]], device: torch.device) -> list[R]:
    """Call every job of `lanes` (lists of jobs); results in the order of the lanes' jobs. On CPU all jobs in
    parallel (`run_jobs`); on a GPU each lane's jobs in order on a stream of its own (`stream_map`)."""
    if device.type != "cuda":
        return run_jobs([job for lane in lanes for job in lane], device)
    done = stream_map(lambda lane: [job() for job in lane], [lane for lane in lanes if lane], device)
    return [r for lane in done for r in lane]
