"""The protocol as library calls: `run_blocks` (many real pools and generators) and `evaluate`."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, cast

import numpy as np
import pandas as pd
import torch

from ganeval.common import check_plain
from ganeval.metrics.dims import fit_metrics
from ganeval.metrics.memory import check_memory
from ganeval.metrics.registry import Metrics
from ganeval.protocol.loop import run_loop
from ganeval.protocol.settings import DEFAULT_METRICS, Settings
from ganeval.hashing import array_identity
from ganeval.protocol.task import Block, MetricTask, SharedArray, as_array
from ganeval.results.summary import SE_COLUMN
from ganeval.words import UNSET, python_errors, renamed

log = logging.getLogger(__name__)


def as_features(name: str, a: Any) -> np.ndarray | torch.Tensor:
    """`a` as an N×D feature array, ValueError otherwise: a numpy array (a memory map stays mapped) or a tensor
    left on its device (detached); integers become float32."""
    check_plain(a, name)
    if isinstance(a, torch.Tensor):
        t = a.detach()
        if t.ndim != 2:
            raise ValueError(f"{name} must be an N×D feature array, got shape {tuple(t.shape)}; extract features first")
        return t if t.is_floating_point() else t.float()
    arr = np.asarray(a)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be an N×D feature array, got shape {arr.shape}; extract features first")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float32)
    return arr


def _bad_rows(part: np.ndarray | torch.Tensor) -> np.ndarray | torch.Tensor:
    """A flag per row of `part`: True where a value is NaN or inf (on the part's own device)."""
    if isinstance(part, torch.Tensor):
        return ~torch.isfinite(part.reshape(len(part), -1)).all(dim=1)
    part = np.asarray(part)
    return ~np.isfinite(part.reshape(len(part), -1)).all(axis=1)


def check_finite(name: str, a: Any, chunk: int = 4096) -> None:
    """Refuse an array with NaN or inf values, naming `name`, the number of bad rows and the first few.

    A tensor is checked on its own device, reading back one flag (and, only when some row is bad, their rows)."""
    arr = as_array(a)
    floating = arr.is_floating_point() if isinstance(arr, torch.Tensor) else arr.dtype.kind in "fc"
    if not floating or len(arr) == 0:
        return  # integers (e.g. uint8 images) are always finite
    flags = [_bad_rows(arr[i : i + chunk]) for i in range(0, len(arr), chunk)]  # bounded extra memory
    if isinstance(arr, torch.Tensor):
        bad = torch.cat(flags)
        if not bool(bad.any()):
            return
        rows = torch.nonzero(bad).flatten().tolist()
    else:
        rows = np.flatnonzero(np.concatenate(flags)).tolist()
    if rows:
        first = ", ".join(map(str, rows[:5])) + (", ..." if len(rows) > 5 else "")
        raise ValueError(f"{name} has {len(rows)} row(s) with NaN or inf values (of {len(arr)}; rows {first}): "
                         "remove or fix them before scoring")


def unique_names(names: Iterable[Any], what: str) -> list[str]:
    """`names` as strings; refuse two that become one label (e.g. 1 and "1"), since their rows would be pooled."""
    out: dict[str, Any] = {}
    for name in names:
        label = str(name)
        if label in out:
            raise ValueError(f"{what} {out[label]!r} and {name!r} both become the label {label!r}, so their runs "
                             "would be pooled into one: rename one of them")
        out[label] = name
    return list(out)


def check_blocks(blocks: Sequence[Block], settings: Settings) -> list[Block]:
    """The blocks with their pools as finite N×D arrays, each large enough for a subsample; pools of different
    dimension only when every metric is dimension-free (`metrics.dims`)."""
    if not blocks:
        raise ValueError("blocks is empty: give at least one real set with one generated set")
    sizes: dict[str, int] = {}
    out = []
    for i, b in enumerate(blocks):
        real = b.real if isinstance(b.real, SharedArray) else as_features(f"real set {b.groups or i}", b.real)
        check_finite(f"the real pool {b.groups or i}", real)
        sizes[f"the real pool {b.groups or i}"] = len(real)
        if not b.fakes:
            raise ValueError(f"block {b.groups or i} has no generated set")
        fakes = []
        for g, f in b.fakes:
            f = as_features(f"generated set {g}", f)
            name = "the generated set" + (f" {', '.join(map(str, g.values()))}" if isinstance(g, Mapping) else "")
            fit_metrics(cast(Metrics, settings.metrics), {"the real set": as_array(real).shape[1], name: f.shape[1]}, chosen=True)
            check_finite(f"the generated pool {g or ''}".strip(), f)
            sizes[f"the generated pool {g or ''}".strip()] = len(f)
            fakes.append((g, f))
        out.append(Block(real, fakes, dict(b.groups), tuple(int(d) for d in b.draw)))
    settings.check_pools(sizes)
    for b in out:  # before any run: a metric that cannot fit (FID's D×D covariances of wide features) refused
        d = max(int(as_array(x).shape[1]) for x in (b.real, *(f for _, f in b.fakes)))
        check_memory(settings.metrics, settings.sample_size, d, settings.device, settings.workers)
    return out


def store_identity(settings: Settings, identity: dict[str, Any]) -> dict[str, Any]:
    """What a results directory of `run_blocks` is keyed by: the settings' identity plus `identity`."""
    return {**settings.identity(), "data": identity}


def run_blocks(
    blocks: Sequence[Block],
    settings: Settings,
    results_dir: str | Path | None = None,
    identity: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> pd.DataFrame:
    """Run the protocol over `blocks` and return the long-form per-run rows (resumable through `results_dir`).

    A results directory is keyed by the settings' identity plus `identity` (what the numbers depend on
    besides the settings, e.g. the resolved config); when None, the arrays' content hashes are used.
    """
    blocks = check_blocks(blocks, settings)
    full_identity = settings.identity()
    if results_dir is not None:
        if identity is None:
            identity = {"blocks": [
                {"groups": b.groups, **({"draw": list(b.draw)} if b.draw else {}),
                 "real": array_identity(as_array(b.real)),
                 "fakes": [{"groups": g, **array_identity(f)} for g, f in b.fakes]}
                for b in blocks
            ]}
        full_identity = store_identity(settings, identity)
    task = MetricTask(blocks, settings)
    rows = run_loop(task, settings, results_dir, full_identity, overwrite)
    if settings.runs == 1 and task.errors:  # one run: its values' own standard errors (not kept in runs.csv)
        rows.attrs[SE_COLUMN] = [{k: v for k, v in e.items() if k != "run"} for e in task.errors]
    return rows


@dataclass
class Evaluation:
    """Everything one protocol call produced: the summary, the per-run rows and the paired model differences."""

    summary: pd.DataFrame
    runs: pd.DataFrame
    comparison: pd.DataFrame
    wall_time_s: float
    dims: dict[str, int | None] = field(default_factory=dict)  # each set's feature dimension ("real", then the models)
    notes: list[str] = field(default_factory=list)  # e.g. default metrics left out for sets of different dimension


@python_errors
def evaluate_detailed(
    real: Any,
    fakes: Any = UNSET,
    runs: int = 100,
    sample_size: int = 10000,
    metrics: Iterable[str] | Mapping[str, Mapping[str, Any] | None] = DEFAULT_METRICS,
    seed: int = 0,
    confidence: float = 0.99,
    device: str | None = None,
    out: str | Path | None = UNSET,
    overwrite: bool = False,
    workers: int = 1,
    progress: bool = True,
    *,
    fake: Any = UNSET,
    results_dir: str | Path | None = UNSET,
) -> Evaluation:
    """`evaluate`, returning the per-run rows and the paired comparison of models too.

    Args:
        real: The real features, N×D (see `evaluate`).
        fakes: The generated features: an N×D array or a dict name → array.
        runs: How many random subsamples to score.
        sample_size: Rows drawn from each set per run.
        metrics: Names or a mapping name → options (default IMD, FID, KID).
        seed: Seed of every draw.
        confidence: The level of the intervals (of each mean, and of each paired difference).
        device: `"cpu"`, `"cuda"`; default None: the arrays' device.
        out: A folder to save the runs in as they finish; a stopped call resumes from it.
        overwrite: Replace runs in `out` made with other inputs or settings.
        workers: CPU processes for the runs.
        progress: False: no progress bar.
        fake: The former name of `fakes`.
        results_dir: The former name of `out`.

    Returns:
        An `Evaluation`: `.summary` (`evaluate`'s DataFrame), `.runs` (run, model, metric, value), `.comparison`
        (each two models' paired difference a − b per metric with its interval, p-value, `mde`, `mde_holm` and
        `better`; empty with one model), `.wall_time_s`, `.dims` (each set's dimension) and `.notes`.

    Examples:
        >>> import numpy as np
        >>> from ganeval.protocol import evaluate_detailed
        >>> rng = np.random.default_rng(0)
        >>> real = rng.normal(size=(600, 8)).astype(np.float32)
        >>> fake = (rng.normal(size=(600, 8)) + 0.3).astype(np.float32)
        >>> ev = evaluate_detailed(real, {"a": fake, "b": fake * 1.1}, runs=5, sample_size=400, metrics=["fid"],
        ...                        progress=False)
        >>> print(ev.comparison[["metric", "a", "b", "diff_mean", "better"]].round(3).to_string(index=False))
        metric a b  diff_mean better
           fid a b     -0.274      a
        >>> len(ev.runs), ev.dims
        (10, {'real': 8, 'a': 8, 'b': 8})
    """
    from ganeval.results import compare_runs, summarize_runs

    fakes = renamed("fakes", fakes, "fake", fake, UNSET)
    out = renamed("out", out, "results_dir", results_dir, UNSET)
    if fakes is UNSET:
        raise ValueError("evaluate: give fakes, the generated features (an N×D array or a dict name -> array)")
    out = None if out is UNSET else out
    fakes = fakes if isinstance(fakes, Mapping) else {"fake": fakes}
    if not fakes:
        raise ValueError("fakes is an empty dict: give at least one generated set")
    labels = unique_names(fakes, "fakes has the models")
    dims = {"real": _width(real), **{label: _width(arr) for label, arr in zip(labels, fakes.values())}}
    notes = []
    if metrics is DEFAULT_METRICS and None not in dims.values():  # default metrics: those needing one space left out
        named = {"the real set" if i == 0 else f"the generated set {k}": v for i, (k, v) in enumerate(dims.items())}
        fitted, note = fit_metrics(Metrics(metrics), named, chosen=False)  # type: ignore[arg-type]
        if note:
            metrics = fitted
            log.warning("%s", note)
            notes.append(note)
    settings = Settings(runs, sample_size, metrics, seed, confidence, device, workers, progress)
    block = Block(real, [({"model": label}, arr) for label, arr in zip(labels, fakes.values())])
    t0 = time.perf_counter()
    rows = run_blocks([block], settings, out, None, overwrite)
    summary = summarize_runs(rows, settings.confidence, settings.sample_size)
    summary.attrs["dims"] = rows.attrs["dims"] = dict(dims)
    summary.attrs["metrics"] = cast(Metrics, settings.metrics).as_dict()  # what each number is (KID's subset size among them)
    comparison = compare_runs(rows, settings.confidence) if len(fakes) > 1 else pd.DataFrame()
    return Evaluation(summary, rows, comparison, time.perf_counter() - t0, dims, notes)


def _width(a: Any) -> int | None:
    """The feature dimension of an N×D array or tensor (None for anything else; `check_blocks` refuses it)."""
    shape = getattr(a, "shape", None)
    return int(shape[1]) if shape is not None and len(shape) == 2 else None


@python_errors
def evaluate(
    real: Any,
    fakes: Any = UNSET,
    runs: int = 100,
    sample_size: int = 10000,
    metrics: Iterable[str] | Mapping[str, Mapping[str, Any] | None] = DEFAULT_METRICS,
    seed: int = 0,
    confidence: float = 0.99,
    device: str | None = None,
    out: str | Path | None = UNSET,
    overwrite: bool = False,
    workers: int = 1,
    progress: bool = True,
    *,
    fake: Any = UNSET,
    results_dir: str | Path | None = UNSET,
) -> pd.DataFrame:
    """Score generated features against real ones over `runs` random subsamples; one row per model and metric.

    The defaults are the paper's protocol, 100 runs of 10 000 rows each (an interval of the mean), where
    `ganeval.score` scores the full sets once (the number other tools give) unless given `runs` and `sample_size`.
    `evaluate_detailed` returns the per-run rows and the paired comparison too.

    Args:
        real: The real features, N×D (numpy array or torch tensor; on a GPU they are scored there).
        fakes: The generated features: an N×D array, or a dict name → array (several generators, each run's real
            subsample shared, so they are compared pair by pair). Their dimension may differ from `real`'s when
            every metric is dimension-free (IMD, Vendi).
        runs: How many random subsamples (runs) to score.
        sample_size: Rows drawn from each set per run (`numpy.random.default_rng([seed, run])`), at most the
            smallest set.
        metrics: Names (`["imd", "fid"]`) or a mapping name → options (`{"kid": {"subset_size": 500}}`); default
            IMD, FID, KID (those needing one dimension left out, with a note, for sets of different dimension).
        seed: Seed of every draw: the subsamples and each metric's own random choices (a stream per metric).
        confidence: The level of the Student-t interval of the mean.
        device: `"cpu"`, `"cuda"`; default None: the arrays' device (CUDA tensors stay there), else the CPU.
        out: A folder to save the runs in as they finish (runs.csv); a stopped call resumes from it.
        overwrite: Replace runs in `out` made with other inputs or settings (else refused).
        workers: CPU processes for the runs (1 is fastest at 10k rows: one run uses every core).
        progress: False: no progress bar over the runs.
        fake: The former name of `fakes` (kept, with a DeprecationWarning).
        results_dir: The former name of `out` (kept, with a DeprecationWarning).

    Returns:
        A DataFrame, one row per model and metric: model, metric, mean, std, ci_low, ci_high, half_width, n_runs,
        sample_size, confidence; `.attrs["metrics"]` holds every metric's options (KID's subset size among them).

    Raises:
        ValueError: Bad arguments or sets (too small, NaN, mixed dimensions for a metric needing one), in one line
            naming the argument, before any run.

    Examples:
        >>> import numpy as np
        >>> import ganeval
        >>> rng = np.random.default_rng(0)
        >>> real = rng.normal(size=(600, 8)).astype(np.float32)
        >>> fake = (rng.normal(size=(600, 8)) + 0.3).astype(np.float32)
        >>> s = ganeval.evaluate(real, fake, runs=5, sample_size=400, metrics=["fid"], progress=False)
        >>> print(s[["model", "metric", "mean", "ci_low", "ci_high"]].round(3).to_string(index=False))
        model metric  mean  ci_low  ci_high
         fake    fid 1.002   0.867    1.137
    """
    return evaluate_detailed(
        real, fakes, runs, sample_size, metrics, seed, confidence, device, out, overwrite, workers, progress,
        fake=fake, results_dir=results_dir,
    ).summary
