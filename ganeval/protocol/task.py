"""What one run computes: blocks of one real pool and the generated pools paired with it, scored by the metrics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

import numpy as np

from ganeval.protocol.draws import DeviceRows, branch, draw_rows, run_generator
from ganeval.protocol.settings import Settings


@dataclass(frozen=True)
class RowSpec:
    """The rows every run of a task writes: one per group (its group columns) and metric."""

    groups: tuple[Mapping[str, Any], ...]
    metrics: tuple[str, ...]

    def rows(self, r: int, value: float = 0.0) -> list[dict[str, Any]]:
        """The rows of a complete run r, in the task's order (group, then metric), each with `value`."""
        return [{"run": r, **g, "metric": m, "value": value} for g in self.groups for m in self.metrics]


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

    def __call__(self, r: int) -> list[dict[str, Any]]:
        from ganeval.metrics.suite import prepare_set, score_pair

        s = self.settings
        rows_of = self._rows = self._rows or DeviceRows(s.device)
        out: list[dict[str, Any]] = []
        for block in self.blocks:
            real = as_array(block.real)
            rng = run_generator(s.seed, r)
            real_state = prepare_set(rows_of(real, draw_rows(len(real), s.sample_size, rng)), s.metrics, s.device)
            for groups, fake in block.fakes:
                fake, rng_g = as_array(fake), branch(rng)
                fake_state = prepare_set(rows_of(fake, draw_rows(len(fake), s.sample_size, rng_g)), s.metrics, s.device)
                values = score_pair(real_state, fake_state, rng_g, s.metrics, s.device)
                out += [{"run": r, **block.groups, **groups, "metric": m, "value": float(v)} for m, v in values.items()]
        return out

    def row_spec(self) -> RowSpec:
        """Every block's generators, each scored by every metric."""
        groups = tuple({**b.groups, **g} for b in self.blocks for g, _ in b.fakes)
        return RowSpec(groups, tuple(self.settings.metrics))

    def shared(self, tmpdir: str) -> "MetricTask":
        """A copy whose arrays live in `.npy` files under `tmpdir` (for worker processes)."""
        names = iter(range(1 << 30))

        def save(a: Any) -> SharedArray:
            return share(a, os.path.join(tmpdir, f"a{next(names)}.npy"))

        blocks = [Block(save(b.real), [(g, save(f)) for g, f in b.fakes], dict(b.groups)) for b in self.blocks]
        return MetricTask(blocks, self.settings)
