"""The subsample-run protocol: many paired random subsamples of real and generated features, scored by IMD, FID, KID.

Run r draws with `numpy.random.default_rng([seed, r])`: `sample_size` real rows, then for each generator
(from a copy of that generator, so models never change each other's numbers) `sample_size` generated rows
and the metrics' random draws (IMD probes, KID subsets). Per-run rows go to a resumable `runs.csv`.
"""

from __future__ import annotations

import copy
import logging
import os
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ganeval.hashing import array_identity, stable_hash

log = logging.getLogger("ganeval")

# --------------------------------------------------------------------------- options and validation
def resolve_device_name(device: str | None) -> str:
    """`None`/"auto" -> "cuda" when available else "cpu"; anything else is checked and returned."""
    import torch

    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    name = str(device)
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={name!r} but CUDA is not available here; use device=cpu")
    torch.device(name)  # raises on nonsense
    return name


def normalize_metrics(metrics: Sequence[str] | Mapping[str, Mapping[str, Any] | None]) -> dict[str, dict[str, Any]]:
    """Metric names (or name -> options) completed with the metrics' defaults; unknown names or options
    raise ValueError (the one table of defaults is `ganeval.metrics.suite.DEFAULTS`)."""
    from ganeval.metrics.suite import resolve_metrics

    if isinstance(metrics, str):
        metrics = (metrics,)
    if not isinstance(metrics, Mapping):
        metrics = {name: None for name in metrics}
    try:
        return resolve_metrics(metrics)
    except ValueError as e:
        raise ValueError(f"metrics: {e}") from None


def check_sizes(sample_size: int, sizes: Mapping[str, int], metrics: Mapping[str, Mapping[str, Any]]) -> None:
    """Raise ValueError (naming what to change) when `sample_size` cannot be drawn or metrics cannot run on it."""
    if int(sample_size) < 2:
        raise ValueError(f"sample_size must be at least 2, got {sample_size}")
    for name, n in sizes.items():
        if sample_size > n:
            raise ValueError(
                f"sample_size={sample_size} is larger than {name} ({n} rows): lower sample_size "
                f"or give a larger {name}; nothing is shrunk silently"
            )
    if "kid" in metrics and metrics["kid"]["subset_size"] > sample_size:
        raise ValueError(
            f"metrics.kid.subset_size={metrics['kid']['subset_size']} exceeds sample_size={sample_size}: "
            "lower metrics.kid.subset_size or raise sample_size"
        )
    if "imd" in metrics:
        k = int(metrics["imd"]["k"])
        if k >= sample_size:
            raise ValueError(f"metrics.imd.k={k} must be below sample_size={sample_size}")
        if metrics["imd"]["knn"] not in ("exact", "approx"):
            raise ValueError(f"metrics.imd.knn must be 'exact' or 'approx', got {metrics['imd']['knn']!r}")


# --------------------------------------------------------------------------- the per-run task
def _as_features(name: str, a: Any) -> np.ndarray:
    try:
        import torch

        if isinstance(a, torch.Tensor):
            a = a.detach().cpu().numpy()
    except ImportError:  # pragma: no cover
        pass
    arr = np.asarray(a)  # a memory-mapped array stays mapped (no copy)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be an N×D feature array, got shape {arr.shape}; extract features first")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float32)
    return arr


@dataclass
class Block:
    """One real feature set and the generated sets scored against it on shared (paired) real subsamples."""

    real: np.ndarray
    fakes: list[tuple[dict[str, Any], np.ndarray]]
    groups: dict[str, Any] = field(default_factory=dict)  # group columns shared by the block, e.g. data


class SharedArray:
    """An array saved as `.npy` and memory-mapped lazily, so worker processes do not copy it through pickles."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._arr: np.ndarray | None = None

    def get(self) -> np.ndarray:
        if self._arr is None:
            self._arr = np.load(self.path, mmap_mode="r", allow_pickle=False)
        return self._arr

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "_arr": None}

    def __len__(self) -> int:
        return len(self.get())


def as_array(a: Any) -> np.ndarray:
    """The array behind `a` (a SharedArray is memory-mapped on first use)."""
    return a.get() if isinstance(a, SharedArray) else a


@dataclass
class MetricTask:
    """Callable run r -> long-form rows (run, group columns, metric, value) for every block and generator."""

    blocks: list[Block]
    sample_size: int
    metrics: dict[str, dict[str, Any]]
    seed: int
    device: str
    _resident: dict[int, Any] = field(default_factory=dict, repr=False)

    def _rows(self, a: Any, idx: np.ndarray) -> Any:
        """Rows `idx` of a pool; on a GPU the pools are copied to the device once and indexed there."""
        if self.device == "cpu":
            return np.asarray(as_array(a)[idx])
        import torch

        key = id(a)
        if key not in self._resident:
            try:
                self._resident[key] = torch.from_numpy(np.ascontiguousarray(as_array(a))).to(self.device)
            except torch.cuda.OutOfMemoryError:  # pools too large for the device: copy subsamples instead
                self._resident[key] = None
        pool = self._resident[key]
        if pool is None:
            return torch.from_numpy(np.asarray(as_array(a)[idx])).to(self.device)
        return pool[torch.as_tensor(idx, device=pool.device)]

    def __call__(self, r: int) -> list[dict[str, Any]]:
        from ganeval.metrics.suite import prepare_set, score_pair

        rows: list[dict[str, Any]] = []
        for block in self.blocks:
            real = as_array(block.real)
            rng = np.random.default_rng([self.seed, r])
            real_sub = self._rows(block.real, rng.choice(len(real), self.sample_size, replace=False))
            real_state = prepare_set(real_sub, self.metrics, self.device)
            for groups, fake in block.fakes:
                rng_g = copy.deepcopy(rng)
                fake_sub = self._rows(fake, rng_g.choice(len(as_array(fake)), self.sample_size, replace=False))
                fake_state = prepare_set(fake_sub, self.metrics, self.device)
                values = score_pair(real_state, fake_state, rng_g, self.metrics, self.device)
                for metric, value in values.items():
                    rows.append({"run": r, **block.groups, **groups, "metric": metric, "value": float(value)})
        return rows

    def shared(self, tmpdir: str) -> "MetricTask":
        """A copy whose arrays live in `.npy` files under `tmpdir` (for worker processes)."""
        count = [0]

        def save(a: Any) -> SharedArray:
            count[0] += 1
            path = os.path.join(tmpdir, f"a{count[0]}.npy")
            np.save(path, np.ascontiguousarray(as_array(a)))
            return SharedArray(path)

        blocks = [
            Block(save(b.real), [(g, save(f)) for g, f in b.fakes], dict(b.groups)) for b in self.blocks
        ]
        return MetricTask(blocks, self.sample_size, self.metrics, self.seed, self.device)


# --------------------------------------------------------------------------- the resumable run loop
def _init_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(max(1, threads))


def run_loop(
    task: Callable[[int], list[dict[str, Any]]],
    runs: int,
    results_dir: str | Path | None = None,
    config_hash: str | None = None,
    identity: dict[str, Any] | None = None,
    overwrite: bool = False,
    workers: int = 1,
    progress: bool = True,
    desc: str = "runs",
) -> pd.DataFrame:
    """Call `task(r)` for each run not yet stored, saving all rows to `results_dir/runs.csv` after each run.

    Returns the rows of runs 0..runs-1 sorted by run. With `workers` > 1 runs go to that many spawned
    processes (CPU only); the rows do not depend on the order in which runs finish.
    """
    from tqdm.auto import tqdm

    from ganeval import runstore

    if int(runs) < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    if int(workers) < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    existing = pd.DataFrame()
    if results_dir is not None:
        if config_hash is None:
            raise ValueError("config_hash is required with results_dir (it guards resuming)")
        existing = runstore.open_store(results_dir, config_hash, identity or {}, overwrite)
    chunks: list[pd.DataFrame] = [existing] if len(existing) else []
    done = set(int(r) for r in existing["run"].unique()) if len(existing) else set()
    todo = [r for r in range(int(runs)) if r not in done]
    if done and todo:
        log.info("resuming: %d of %d runs already in %s", runs - len(todo), runs, results_dir)

    def store(rows: list[dict[str, Any]]) -> None:
        chunks.append(pd.DataFrame(rows))
        if results_dir is not None:
            runstore.write_runs(results_dir, _sorted(pd.concat(chunks, ignore_index=True)))

    bar = tqdm(total=int(runs), initial=int(runs) - len(todo), desc=desc, disable=not progress, unit="run")
    try:
        if workers == 1 or len(todo) <= 1:
            for r in todo:
                store(task(r))
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
                            store(fut.result())
                            bar.update(1)
    finally:
        bar.close()
    if not chunks:
        return pd.DataFrame()
    rows = _sorted(pd.concat(chunks, ignore_index=True))
    return rows[rows["run"] < int(runs)].reset_index(drop=True)


def _sorted(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.sort_values("run", kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- public entry points
def protocol_identity(
    sample_size: int, metrics: Mapping[str, Mapping[str, Any]], seed: int, device: str
) -> dict[str, Any]:
    """The settings that change the numbers of a run (the run count is left out: more runs extend a store)."""
    return {"sample_size": int(sample_size), "metrics": {k: dict(v) for k, v in metrics.items()},
            "seed": int(seed), "device": str(device).split(":")[0]}


def run_blocks(
    blocks: Sequence[Block],
    runs: int = 100,
    sample_size: int = 10000,
    metrics: Sequence[str] | Mapping[str, Mapping[str, Any] | None] = ("imd", "fid", "kid"),
    seed: int = 0,
    device: str | None = None,
    results_dir: str | Path | None = None,
    identity: dict[str, Any] | None = None,
    overwrite: bool = False,
    workers: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Run the protocol over `blocks` and return the long-form per-run rows (resumable through `results_dir`).

    `identity` is what the stored runs depend on besides the protocol settings (e.g. the resolved config);
    when None, the arrays' content hashes are used.
    """
    metric_opts = normalize_metrics(metrics)
    dev = resolve_device_name(device)
    if workers > 1 and dev != "cpu":
        raise ValueError(f"workers={workers} needs device=cpu (a GPU runs one run at a time); set workers=1")
    if not blocks:
        raise ValueError("blocks is empty: give at least one real set with one generated set")
    sizes: dict[str, int] = {}
    for i, b in enumerate(blocks):
        b.real = b.real if isinstance(b.real, SharedArray) else _as_features(f"real set {i}", b.real)
        sizes[f"the real pool {b.groups or i}"] = len(b.real)
        if not b.fakes:
            raise ValueError(f"block {b.groups or i} has no generated set")
        fixed = []
        for g, f in b.fakes:
            f = _as_features(f"generated set {g}", f)
            if f.shape[1] != b.real.shape[1]:
                raise ValueError(
                    f"generated set {g} has {f.shape[1]} features but the real set has {b.real.shape[1]}: "
                    "use the same extractor for both"
                )
            sizes[f"the generated pool {g or ''}".strip()] = len(f)
            fixed.append((g, f))
        b.fakes = fixed
    check_sizes(sample_size, sizes, metric_opts)
    config_hash = None
    full_identity = protocol_identity(sample_size, metric_opts, seed, dev)
    if results_dir is not None:
        if identity is None:
            identity = {
                "blocks": [
                    {"groups": b.groups, "real": array_identity(as_array(b.real), 16),
                     "fakes": [{"groups": g, **array_identity(f, 16)} for g, f in b.fakes]}
                    for b in blocks
                ]
            }
        full_identity = {**full_identity, "data": identity}
        config_hash = stable_hash(full_identity)
    task = MetricTask(list(blocks), int(sample_size), metric_opts, int(seed), dev)
    return run_loop(task, runs, results_dir, config_hash, full_identity, overwrite, workers, progress)


@dataclass
class Evaluation:
    """Everything one protocol call produced: the summary, the per-run rows and the paired model differences."""

    summary: pd.DataFrame
    runs: pd.DataFrame
    comparison: pd.DataFrame
    wall_time_s: float


def evaluate_detailed(
    real: Any,
    fake: Any,
    runs: int = 100,
    sample_size: int = 10000,
    metrics: Sequence[str] | Mapping[str, Mapping[str, Any] | None] = ("imd", "fid", "kid"),
    seed: int = 0,
    confidence: float = 0.99,
    device: str | None = None,
    results_dir: str | Path | None = None,
    overwrite: bool = False,
    workers: int = 1,
    progress: bool = True,
) -> Evaluation:
    """`evaluate`, returning the per-run rows and the paired comparison of models too."""
    from ganeval.stats import _check_confidence
    from ganeval.summary import compare_runs, summarize_runs

    _check_confidence(confidence)
    fakes = fake if isinstance(fake, Mapping) else {"fake": fake}
    if not fakes:
        raise ValueError("fake is an empty dict: give at least one generated set")
    block = Block(real, [({"model": str(name)}, arr) for name, arr in fakes.items()])
    t0 = time.perf_counter()
    rows = run_blocks([block], runs, sample_size, metrics, seed, device, results_dir, None, overwrite, workers, progress)
    summary = summarize_runs(rows, confidence, sample_size)
    comparison = compare_runs(rows, confidence) if len(fakes) > 1 else pd.DataFrame()
    return Evaluation(summary, rows, comparison, time.perf_counter() - t0)


def evaluate(
    real: Any,
    fake: Any,
    runs: int = 100,
    sample_size: int = 10000,
    metrics: Sequence[str] | Mapping[str, Mapping[str, Any] | None] = ("imd", "fid", "kid"),
    seed: int = 0,
    confidence: float = 0.99,
    device: str | None = None,
    results_dir: str | Path | None = None,
    overwrite: bool = False,
    workers: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """Score generated features against real ones over `runs` random subsamples; one row per model and metric.

    `fake` is an N×D array or a dict name -> array (several generators, paired on the real subsample).
    Columns: model, metric, mean, std, ci_low, ci_high, half_width, n_runs, sample_size, confidence.
    With `results_dir`, runs are saved there as they finish and a stopped call resumes
    (see `evaluate_detailed` for the per-run rows and the paired comparison).
    """
    return evaluate_detailed(
        real, fake, runs, sample_size, metrics, seed, confidence, device, results_dir, overwrite, workers, progress
    ).summary
