"""Experiment logic, one module per `task` (the key experiment configs set): each has `run(ctx) -> summary`.

- gan_table: real data vs generators (trained here or given) -> the paper's GAN table (quickstart,
  paper_table, benchmark).
- blur_sweep: a dataset blurred at several σ against itself, normalised by an unlike reference pair.
- torus: two vanilla GANs on a 3-D torus, the fraction of samples in the hole, and the metrics.
- heat_traces: normalised heat-trace curves of several datasets with bands over runs.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

TASKS = ("gan_table", "blur_sweep", "torus", "heat_traces")


def get_task(name: str) -> Callable[[Any], Any]:
    """The `run(ctx)` function of task `name`; ValueError listing the tasks otherwise."""
    if name not in TASKS:
        raise ValueError(f"task={name!r} is not known; choose one of {list(TASKS)}")
    return importlib.import_module(f"ganeval.experiments.{name}").run
