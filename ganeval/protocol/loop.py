"""The resumable run loop: each run not yet stored is computed and saved to runs.csv as soon as it finishes."""

from __future__ import annotations

import logging
import os
import tempfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ganeval.hashing import stable_hash
from ganeval.protocol import store
from ganeval.protocol.settings import Settings

log = logging.getLogger("ganeval")
Task = Callable[[int], list[dict[str, Any]]]


def _init_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(max(1, threads))


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

    With `results_dir`, all rows are rewritten to its runs.csv after each run, keyed by the hash of
    `identity` (a directory holding another identity is refused unless `overwrite`). With
    `settings.workers` > 1 runs go to that many spawned processes (CPU only); rows do not depend on
    the order in which runs finish.
    """
    from tqdm.auto import tqdm

    runs, workers = settings.runs, settings.workers
    existing = pd.DataFrame()
    if results_dir is not None:
        identity = identity or {}
        existing = store.open_store(results_dir, stable_hash(identity), identity, overwrite)
    chunks: list[pd.DataFrame] = [existing] if len(existing) else []
    done = set(int(r) for r in existing["run"].unique()) if len(existing) else set()
    todo = [r for r in range(runs) if r not in done]
    if done and todo:
        log.info("resuming: %d of %d runs already in %s", runs - len(todo), runs, results_dir)

    def keep(rows: list[dict[str, Any]]) -> None:
        chunks.append(pd.DataFrame(rows))
        if results_dir is not None:
            store.write_runs(results_dir, _sorted(pd.concat(chunks, ignore_index=True)))

    bar = tqdm(total=runs, initial=runs - len(todo), desc=desc, disable=not settings.progress, unit="run")
    try:
        if workers == 1 or len(todo) <= 1:
            for r in todo:
                keep(task(r))
                bar.update(1)
        else:
            import multiprocessing as mp

            threads = max(1, (os.cpu_count() or 1) // workers)
            with tempfile.TemporaryDirectory(prefix="ganeval-shared-") as tmp:
                shared = task.shared(tmp) if hasattr(task, "shared") else task
                ctx = mp.get_context("spawn")
                with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(threads,)) as ex:
                    pending = {ex.submit(shared, r) for r in todo}
                    while pending:
                        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for fut in finished:
                            keep(fut.result())
                            bar.update(1)
    finally:
        bar.close()
    if not chunks:
        return pd.DataFrame()
    rows = _sorted(pd.concat(chunks, ignore_index=True))
    return rows[rows["run"] < runs].reset_index(drop=True)
