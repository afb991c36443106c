"""The subsample-run protocol: settings, per-run draws, the scoring task, the resumable loop and store, `evaluate`.

Run r draws its rows with `numpy.random.default_rng([seed, r])`: `sample_size` real rows, then for each
generator (from a copy of that generator, so models never change each other's numbers) `sample_size` generated
rows. Each metric draws its random choices (IMD's probes, KID's subsets) from a stream of its own,
`default_rng([seed, r, stream_key(metric)])` (`ganeval.metrics.streams`: a word of SHA-256 of its name), the
same for every generator, so a metric's numbers are the same alone or beside any other. Per-run rows go to a
resumable `runs.csv`, whose identity holds the version of these draws (`draws.DRAWS_VERSION`).

Training seeds: a `Block` may carry an extra key `draw`, and run r of that block draws with
`default_rng([seed, r, *draw])` (its metrics `default_rng([seed, r, *draw, stream_key(metric)])`). The pipeline
builds one block per training-seed index i (every model's seed-i generator, group column `train_seed` = i)
with draw () for i = 0 (the draws of one training seed) and (i,) for
i >= 1: the real subsample of run r is drawn per seed index and shared by all models of that index, so
seed i of model A and seed i of model B are paired on the real side, and seeds do not share real subsamples
(an interval across seeds then covers the real-subsample variation too). With `Settings.probe_repeats` = P
the first P runs also score IMD again on the same subsamples with probes from
`default_rng([seed, r, *draw, 2**20, stream_key("imd")])`: rows with `probe_draw` = 1 beside the ordinary rows'
`probe_draw` = 0.
"""

from ganeval.protocol.api import Evaluation, evaluate, evaluate_detailed, run_blocks
from ganeval.protocol.loop import run_loop
from ganeval.protocol.settings import Settings
from ganeval.protocol.store import ConfigMismatchError, ResultsDirBusyError, StoreError
from ganeval.protocol.task import Block, RowSpec, SharedArray, Task, as_array, share

__all__ = ["Block", "ConfigMismatchError", "Evaluation", "ResultsDirBusyError", "RowSpec", "Settings", "SharedArray",
           "StoreError", "Task", "as_array", "evaluate", "evaluate_detailed", "run_blocks", "run_loop", "share"]
