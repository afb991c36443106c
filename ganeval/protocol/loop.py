"""The resumable run loop: each run not yet stored is computed and saved to runs.csv as soon as it finishes.

With several workers, the pools go to a scratch folder in the temporary directory that the spawned
workers memory-map; the workers exit, removing that folder, as soon as the parent process dies (even
by SIGKILL, even while they start up: `ganeval.lifeline`), and a later run removes the folders of dead runs
that no worker was left to remove.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import secrets
import shutil
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from ganeval.lifeline import init_protocol_worker
from ganeval.protocol import store
from ganeval.protocol.settings import Settings
from ganeval.protocol.task import Task
from ganeval.stops import stopped

log = logging.getLogger("ganeval")
SCRATCH_PREFIX = "ganeval-shared-"
OWNER_FILE = "owner.lock"
STALE_AFTER_S = 60.0
def _remove_stale_scratch() -> None:
    """Remove the scratch folders of killed runs (their owner lock is free), never those of running ones."""
    for path in glob.glob(os.path.join(tempfile.gettempdir(), SCRATCH_PREFIX + "*")):
        try:
            fd = os.open(os.path.join(path, OWNER_FILE), os.O_RDWR)
        except OSError:
            continue  # not a folder of this design
        try:
            if time.time() - os.fstat(fd).st_mtime > STALE_AFTER_S and store.try_lock(fd):
                shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)


def _scratch_path() -> str:
    """The name of a new scratch folder (made by `_scratch` once the workers that would remove it are launched)."""
    return os.path.join(tempfile.gettempdir(), SCRATCH_PREFIX + secrets.token_hex(8))


@contextlib.contextmanager
def _scratch(path: str) -> Iterator[str]:
    """Scratch folder `path` for worker processes, made now (private), locked while this process lives and removed
    on exit."""
    _remove_stale_scratch()
    os.mkdir(path, 0o700)
    fd = os.open(os.path.join(path, OWNER_FILE), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        store.try_lock(fd)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def _sorted(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.sort_values("run", kind="stable").reset_index(drop=True)


def run_loop(
    task: Task,
    settings: Settings,
    results_dir: str | Path | None = None,
    identity: dict[str, Any] | None = None,
    overwrite: bool = False,
    desc: str = "runs",
) -> pd.DataFrame:
    """Call `task(r)` for each of `settings.runs` runs not yet stored; return the rows of those runs by run.

    With `results_dir` (locked against other processes meanwhile), all rows are rewritten to its runs.csv
    after each run, keyed by the hash of `identity` (a directory holding another identity, or rows that
    are not exactly what this task wrote, is refused unless `overwrite`). With `settings.workers` > 1
    runs go to that many spawned processes (CPU only); rows do not depend on the order in which runs finish.
    """
    layout = store.Layout(task.row_spec())
    if results_dir is None:
        return _run(task, settings, layout, None, desc)
    with store.locked(results_dir):
        identity = identity or {}
        opened = store.open_store(results_dir, store.identity_hash(identity), identity, layout, overwrite)
        return _run(task, settings, layout, opened, desc)


def _run(task: Task, settings: Settings, layout: store.Layout, opened: store.Store | None, desc: str) -> pd.DataFrame:
    """The loop of `run_loop`, writing to `opened` (when given) after each run."""
    from ganeval.common import progress_bar

    runs, workers = settings.runs, settings.workers
    stored = opened.runs if opened is not None else {}
    chunks = [pd.DataFrame(rows) for _, rows in sorted(stored.items())]
    todo = [r for r in range(runs) if r not in stored]
    if stored and todo:
        log.info("resuming: %d of %d runs already in %s", runs - len(todo), runs, opened and opened.directory)

    def keep(r: int, rows: list[dict[str, Any]]) -> None:
        try:
            layout.check_new(r, rows)
        except ValueError as e:
            raise ValueError(f"{e}; run {r} is not stored") from None
        chunks.append(pd.DataFrame(rows))
        if opened is not None:
            opened.write(_sorted(pd.concat(chunks, ignore_index=True)))
        bar.update(1)

    # a bar for several runs to do; one (the full sets' single run) has no progress to show
    bar = progress_bar(total=runs, initial=runs - len(todo), desc=desc, disable=not settings.progress or len(todo) <= 1,
                       unit="run")
    try:
        if workers == 1 or len(todo) <= 1:
            for r in todo:
                keep(r, task(r))
        else:
            import multiprocessing as mp

            threads = max(1, (os.cpu_count() or 1) // workers)
            path = _scratch_path()
            ex = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=init_protocol_worker,
                                     initargs=(threads, os.getpid(), path))
            try:
                for _ in range(workers):
                    ex.submit(int)  # start every worker now, so they watch this process while the pools are saved
                # the folder is made once every worker is launched (its start-up data written): a kill from here on
                # leaves workers that remove it; a kill before leaves nothing to remove
                with _scratch(path) as tmp:
                    try:
                        shared = task.shared(tmp) if hasattr(task, "shared") else task
                        pending: dict[Future, int] = {ex.submit(shared, r): r for r in todo}
                        while pending:
                            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                            for fut in finished:
                                keep(pending.pop(fut), fut.result())
                    finally:
                        ex.shutdown(wait=True, cancel_futures=True)  # before the folder goes
            finally:
                ex.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: say what is stored (every write is whole)
        raise stopped(e, len(chunks), runs, opened.directory if opened is not None else None) from None
    finally:
        bar.close()
    if not chunks:
        return pd.DataFrame()
    rows = _sorted(pd.concat(chunks, ignore_index=True))
    return rows[rows["run"] < runs].reset_index(drop=True)
