"""The subsample-run protocol: settings, per-run draws, the scoring task, the resumable loop and store, `evaluate`.

Run r draws with `numpy.random.default_rng([seed, r])`: `sample_size` real rows, then for each generator
(from a copy of that generator, so models never change each other's numbers) `sample_size` generated rows
and the metrics' random draws (IMD probes, KID subsets). Per-run rows go to a resumable `runs.csv`.
"""

from ganeval.protocol.api import Evaluation, evaluate, evaluate_detailed, run_blocks
from ganeval.protocol.loop import run_loop
from ganeval.protocol.settings import Settings
from ganeval.protocol.store import ConfigMismatchError, ResultsDirBusyError, StoreError
from ganeval.protocol.task import Block, RowSpec, SharedArray, Task, as_array, share

__all__ = ["Block", "ConfigMismatchError", "Evaluation", "ResultsDirBusyError", "RowSpec", "Settings", "SharedArray",
           "StoreError", "Task", "as_array", "evaluate", "evaluate_detailed", "run_blocks", "run_loop", "share"]
