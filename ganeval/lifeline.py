"""Worker processes that exit as soon as their parent dies, even by SIGKILL and even while they start up.

Standard library only, and not under a package whose `__init__` imports torch: a spawned worker unpickles its
initializer (importing this module) before anything heavy, so it watches its parent from its first moments
instead of after torch's import (seconds on a loaded machine; parents killed during start-up left workers ~10-25 s).
Two watches: the kernel's parent-death signal (Linux, SIGTERM; its handler exits only when the process really is an
orphan), and a thread polling the parent's pid (portable, and the only one for forked loader workers, where the
signal would also fire when the thread that forked them ends).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from typing import Callable

PR_SET_PDEATHSIG = 1
POLL_S = 0.1


def _orphaned(cleanup: Callable[[], None] | None) -> None:
    """What a worker does when its parent has died: `cleanup`, then exit at once (no atexit, no flushing)."""
    if cleanup is not None:
        with contextlib.suppress(Exception):
            cleanup()
    os._exit(1)


def _kernel_signal(parent: int, cleanup: Callable[[], None] | None) -> None:
    """Ask Linux for SIGTERM when the parent dies; the handler exits as an orphan, or dies as usual on an ordinary
    SIGTERM while the parent lives."""

    def on_term(signum: int, frame: object) -> None:
        deadline = time.monotonic() + 1.0
        while os.getppid() == parent and time.monotonic() < deadline:  # the kernel may signal before reparenting
            time.sleep(0.01)
        if os.getppid() != parent:
            _orphaned(cleanup)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))


def die_with_parent(parent: int, cleanup: Callable[[], None] | None = None, kernel: bool = True) -> None:
    """Make this process exit (after `cleanup`) as soon as process `parent` is no longer its parent; at once when
    it already is not (the parent died before this was set up). `kernel`: also the parent-death signal."""
    if kernel:
        _kernel_signal(parent, cleanup)
    if os.getppid() != parent:
        _orphaned(cleanup)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_S)
        _orphaned(cleanup)

    threading.Thread(target=watch, name="ganeval-parent-watch", daemon=True).start()


def init_protocol_worker(threads: int, parent: int, scratch: str) -> None:
    """A spawned run-loop worker: death with `parent` (removing the run's `scratch` folder) first, then torch."""
    die_with_parent(parent, lambda: shutil.rmtree(scratch, ignore_errors=True))
    import torch

    torch.set_num_threads(max(1, threads))


def init_loader_worker(parent: int, worker_id: int) -> None:
    """A forked DataLoader worker (`worker_init_fn=partial(init_loader_worker, os.getpid())`, made in the parent):
    exit within `POLL_S` of the parent's death (torch's own watchdog looks every 5 s, and only between batches)."""
    die_with_parent(parent, kernel=False)
