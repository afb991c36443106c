"""What one run computes: blocks of one real pool and the generated pools paired with it, scored by the metrics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, cast

import numpy as np

from ganeval.metrics.streams import metric_draws
from ganeval.protocol.draws import DeviceRows, branch, draw_rows, probe_draws, run_generator
from ganeval.protocol.settings import Settings

PROBE_DRAW = "probe_draw"  # group column of the rows when probe_repeats > 0: 0 the run's value, 1 the repeat


@dataclass(frozen=True)
class RowSpec:
    """The rows every run of a task writes: one per group (its group columns) and metric; and, in runs
    r < `extra_runs` only, one per extra group and extra metric (e.g. IMD's repeated probe draw)."""

    groups: tuple[Mapping[str, Any], ...]
    metrics: tuple[str, ...]
    extra_groups: tuple[Mapping[str, Any], ...] = ()
    extra_metrics: tuple[str, ...] = ()
    extra_runs: int = 0

    def rows(self, r: int, value: float = 0.0, every: bool = False) -> list[dict[str, Any]]:
        """The rows of a complete run r (with `every`, the extra rows whatever r), each with `value`."""
        extra = every or r < self.extra_runs
        pairs = [(g, m) for g in self.groups for m in self.metrics]
        pairs += [(g, m) for g in self.extra_groups for m in self.extra_metrics] if extra else []
        return [{"run": r, **g, "metric": m, "value": value} for g, m in pairs]


class Task(Protocol):
    """What the run loop calls: run r -> long-form rows, and the rows each run writes (to check stored runs)."""

    def __call__(self, r: int) -> list[dict[str, Any]]: ...

    def row_spec(self) -> RowSpec: ...


@dataclass
class Block:
    """One real feature set and the generated sets scored against it on shared (paired) real subsamples."""

    real: Any
    fakes: list[tuple[dict[str, Any], Any]]
    groups: dict[str, Any] = field(default_factory=dict)  # group columns shared by the block, e.g. data
    draw: tuple[int, ...] = ()  # appended to the run's random key: default_rng([seed, r, *draw]); () = one seed's


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


def share(a: Any, path: str) -> SharedArray:
    """Save `a` as `path` (.npy) for worker processes to map."""
    np.save(path, np.ascontiguousarray(as_array(a)))
    return SharedArray(path)


@dataclass
class MetricTask:
    """Callable run r -> long-form rows (run, group columns, metric, value) for every block and generator."""

    blocks: list[Block]
    settings: Settings
    _rows: DeviceRows | None = field(default=None, repr=False)
    _infos: dict[int, Any] = field(default_factory=dict, repr=False)
    # what a value computed in this process comes with: {**groups, metric, se} of values with a standard error
    # (IMD's over its probes); not stored in runs.csv
    errors: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def __call__(self, r: int) -> list[dict[str, Any]]:
        import torch

        from ganeval.metrics.parallel import stream_map
        from ganeval.metrics.registry import Metrics
        from ganeval.metrics.suite import prepare_set, score_pair

        s = self.settings
        rows_of = self._rows = self._rows or DeviceRows(cast(str, s.device))  # Settings resolves None to a name
        repeat = r < s.probe_repeats
        probe = {PROBE_DRAW: 0} if s.probe_repeats else {}
        imd = Metrics({"imd": s.metrics["imd"]}) if repeat else None  # type: ignore[index]
        out: list[dict[str, Any]] = []

        for block in self.blocks:
            real = as_array(block.real)
            rng = run_generator(s.seed, r, *block.draw)
            pools = [real] + [as_array(fake) for _, fake in block.fakes]
            rows = [draw_rows(len(real), s.sample_size, rng)]
            rngs = [branch(rng) for _ in block.fakes]  # each generator's copy, after the real draw
            rows += [draw_rows(len(pool), s.sample_size, g) for pool, g in zip(pools[1:], rngs)]
            sets = [(rows_of(pool, idx), self._pool_info(pool)) for pool, idx in zip(pools, rows)]
            # every set's statistics stage at once (on a GPU, one CUDA stream each: see `stream_map`), unless
            # a reduced-precision k-NN search would switch TF32 on for the other sets' float32 products too
            device = torch.device(cast(str, s.device)) if self._float32_products() else torch.device("cpu")
            states = stream_map(lambda rows_info: prepare_set(rows_info[0], s.metrics, s.device, rows_info[1]),
                                sets, device)
            del sets
            real_state = states[0]
            draws = metric_draws(s.seed, r, *block.draw)  # each metric's own stream, the same for every generator
            for (groups, _fake), fake_state in zip(block.fakes, states[1:]):
                values = score_pair(real_state, fake_state, draws, s.metrics, s.device)
                head = {"run": r, **block.groups, **groups}
                out += [{**head, **probe, "metric": m, "value": float(v)} for m, v in values.items()]
                self.errors += [{**head, **probe, "metric": m, "se": v.se} for m, v in values.items() if hasattr(v, "se")]
                if imd is not None:  # IMD once more on the same subsamples, with the probes of another draw
                    again = score_pair(real_state, fake_state, probe_draws(s.seed, r, *block.draw), imd, s.device)
                    out.append({**head, PROBE_DRAW: 1, "metric": "imd", "value": float(again["imd"])})
        return out

    def _float32_products(self) -> bool:
        """Whether every metric's statistics stage keeps torch's float32 products in float32 (IMD's reduced-
        precision k-NN search turns TF32 on process-wide while it forms its candidates)."""
        metrics = self.settings.metrics
        return "imd" not in metrics or metrics["imd"].get("knn_precision", "float32") == "float32"  # type: ignore[index]

    def _pool_info(self, pool: Any) -> Any:
        """What the checks learn of a pool (one pass, on its device), once per pool: spares each subsample
        its own pass (see `validation.load_features`)."""
        from ganeval.metrics.validation import inspect_features

        key = id(pool)
        if key not in self._infos:
            self._infos[key] = inspect_features(pool, "pool", min_rows=1)
        return self._infos[key]

    def row_spec(self) -> RowSpec:
        """Every block's generators, each scored by every metric; with probe repeats, IMD once more in the first runs."""
        heads = [{**b.groups, **g} for b in self.blocks for g, _ in b.fakes]
        s = self.settings
        if not s.probe_repeats:
            return RowSpec(tuple(heads), tuple(s.metrics))
        return RowSpec(tuple({**h, PROBE_DRAW: 0} for h in heads), tuple(s.metrics),
                       tuple({**h, PROBE_DRAW: 1} for h in heads), ("imd",), s.probe_repeats)

    def shared(self, tmpdir: str) -> "MetricTask":
        """A copy whose arrays live in `.npy` files under `tmpdir` (for worker processes)."""
        names = iter(range(1 << 30))

        def save(a: Any) -> SharedArray:
            return share(a, os.path.join(tmpdir, f"a{next(names)}.npy"))

        blocks = [Block(save(b.real), [(g, save(f)) for g, f in b.fakes], dict(b.groups), b.draw) for b in self.blocks]
        return MetricTask(blocks, self.settings)
