"""The protocol's settings: one frozen object, validated once where it is made, that everything downstream takes.

Its `identity()` (sample size, metric options, seed, device kind, the version of the random draws) is what a
stored run's numbers depend on besides the data; the run count is left out, since more runs extend a results
directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ganeval.common import resolve_device_name
from ganeval.metrics.registry import Metrics, boolean, integer, option
from ganeval.protocol.draws import DRAWS_KEY, DRAWS_VERSION
from ganeval.results.intervals import check_confidence

DEFAULT_METRICS = ("imd", "fid", "kid")


def check_value(name: str, value: Any, rule: tuple[Any, str]) -> None:
    """Raise ValueError naming the setting, what it must be and what it got (the option tables' rule)."""
    option(name, None, rule).validate("", value)


@dataclass(frozen=True)
class Settings:
    """Runs, subsample size, metrics with their options, seed, confidence level, device and CPU workers.

    Run r draws its rows with `numpy.random.default_rng([seed, r])` and each metric's random choices from a
    stream of its own (`protocol.draws`); `metrics` may be names, name -> options,
    or a `Metrics`; `device` None/"auto" means CUDA when available, else CPU. The first `probe_repeats`
    runs also score IMD once more with another probe draw on the same subsamples (the probe share of the
    variance; rows with `probe_draw` = 1).
    """

    runs: int = 100
    sample_size: int = 10000
    metrics: Metrics | Mapping[str, Mapping[str, Any] | None] | Iterable[str] = DEFAULT_METRICS
    seed: int = 0
    confidence: float = 0.99
    device: str | None = None
    workers: int = 1
    progress: bool = True
    probe_repeats: int = 0
    subsamples: bool = True  # False: runs score the full sets, whose sizes `full.check_full_sizes` checks per set

    def __post_init__(self) -> None:
        check_value("runs", self.runs, integer(1))
        check_value("sample_size", self.sample_size, integer(2))
        check_value("seed", self.seed, integer(0))
        check_value("workers", self.workers, integer(1))
        check_value("progress", self.progress, boolean())
        check_value("probe_repeats", self.probe_repeats, integer(0))
        check_confidence(self.confidence)
        try:
            metrics = Metrics(self.metrics)
        except ValueError as e:
            raise ValueError(f"metrics: {e}") from None
        if self.subsamples:
            metrics.check_sample_size(int(self.sample_size))
        if self.probe_repeats and "imd" not in metrics:
            raise ValueError(f"probe_repeats={self.probe_repeats} repeats IMD's probe draw, but IMD is not among the "
                             "metrics: set probe_repeats=0 or score IMD")
        device = resolve_device_name(self.device)
        if self.workers > 1 and device != "cpu":
            raise ValueError(f"workers={self.workers} needs device=cpu (a GPU runs one run at a time); set workers=1")
        for name, value in (("runs", int(self.runs)), ("sample_size", int(self.sample_size)), ("seed", int(self.seed)),
                            ("workers", int(self.workers)), ("probe_repeats", int(self.probe_repeats)),
                            ("confidence", float(self.confidence)), ("metrics", metrics),
                            ("device", device)):
            object.__setattr__(self, name, value)

    def check_pools(self, sizes: Mapping[str, int]) -> None:
        """Refuse, naming the pool, any pool with fewer rows than `sample_size` (nothing is shrunk silently)."""
        for name, n in sizes.items():
            if self.sample_size > n:
                raise ValueError(
                    f"sample_size={self.sample_size} is larger than {name} ({n} rows): lower sample_size "
                    "or give that pool more rows"
                )

    def identity(self) -> dict[str, Any]:
        """The settings that change the numbers of a run (not the run count: more runs extend a store), and the
        version of the random draws (a store of other draws is never extended); probe_repeats only when set."""
        assert isinstance(self.metrics, Metrics)
        out: dict[str, Any] = {"sample_size": self.sample_size, "metrics": self.metrics.as_dict(), "seed": self.seed,
                               "device": str(self.device).split(":")[0], DRAWS_KEY: DRAWS_VERSION}
        if self.probe_repeats:
            out["probe_repeats"] = self.probe_repeats
        return out
