"""The protocol's settings: one frozen object, validated once where it is made, that everything downstream takes.

Its `identity()` (sample size, metric options, seed, device kind, the version of the random draws) is what a
stored run's numbers depend on besides the data; the run count is left out, since more runs extend a results
directory.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ganeval.common import resolve_device_name
from ganeval.metrics.registry import Metrics, boolean, integer, option
from ganeval.protocol.draws import DRAWS_KEY, DRAWS_VERSION
from ganeval.results.intervals import check_confidence
from ganeval.words import caller_stacklevel

DEFAULT_METRICS = ("imd", "fid", "kid")


def kid_subset_chosen(metrics: Any) -> bool:
    """Whether the caller chose KID's subset size (a `Metrics` object counts as chosen: its options are final)."""
    if isinstance(metrics, Metrics):
        return True
    if isinstance(metrics, Mapping):
        return isinstance(metrics.get("kid"), Mapping) and "subset_size" in metrics["kid"]
    return False


def fit_kid_subset(metrics: Any, rows: int, what: str = "sample_size") -> tuple[Any, str | None]:
    """The one rule of every entry point: without a chosen `subset_size`, KID's subsets hold min(default 1000, `rows`)
    (the rows each run scores per set; `what` names them). Returns the metrics, with `subset_size` set when it was
    shrunk, and the note saying so (None when the default fits or the size was chosen); the size is recorded in the
    metric options (`Settings.identity()`, summary.json)."""
    from ganeval.metrics.kid import DEFAULTS as KID_DEFAULTS

    if kid_subset_chosen(metrics):
        return metrics, None
    try:
        resolved = Metrics(metrics)
    except ValueError:
        return metrics, None  # refused, with its own message, where the settings are made
    default = int(KID_DEFAULTS["subset_size"])
    if "kid" not in resolved or rows >= default or rows < 2:
        return metrics, None
    options = {name: dict(o) for name, o in resolved.items()}
    options["kid"]["subset_size"] = int(rows)
    return options, (f"note: KID's subsets hold {rows} rows ({what}; the default is {default}): KID is comparable only "
                     f"with KID at the same subset size; choose it with metrics={{'kid': {{'subset_size': N}}}}")


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
        given = self.metrics
        if self.subsamples:  # KID's subsets hold min(1000, sample_size) unless chosen (`fit_kid_subset`)
            given, note = fit_kid_subset(given, int(self.sample_size), f"sample_size={self.sample_size}")
            if note:
                warnings.warn(note, UserWarning, stacklevel=caller_stacklevel())  # the caller's line
        try:
            metrics = Metrics(given)
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
