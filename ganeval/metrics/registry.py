"""Metrics by name: each metric's option table (names, defaults, checks) and its two stages.

A metric is scored per run in two stages, as torch-fidelity splits FID into features → statistics →
value: `prepare` turns one subsample's features into the metric's statistics (a real subsample's are
shared by every generator scored against it), and `pair` turns two sets' statistics and the
metric's own random stream (`streams`: keyed by its name, so no metric's draws depend on another's) into
independent jobs plus the function that makes the value from their results. Metrics are prepared and paired
in registration order (IMD, FID, KID, then precision, recall, density, coverage and the Inception Score), so
a set's Gram strips, computed by IMD's exact k-NN search, can feed KID's kernel (`tap`), and metrics that
declare `shares` can reuse what the ones before them made (IMD's graph, KID's cross Gram strips) through a
`Shared` context.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import torch

from ganeval.words import did_you_mean

if TYPE_CHECKING:
    from ganeval.metrics.validation import Reach, ReachBounds

GramHook = Callable[[int, torch.Tensor], None]
Job = Callable[[], Any]
CROSS_GRAM_HOOKS = "cross_gram_hooks"  # a pair's memo: hooks shown every real × fake Gram strip (made by KID)


@dataclass(frozen=True)
class Option:
    """One option of a metric: its default, what a valid value is (`check`, described by `expected`).

    Attributes:
        name: The option's name (`metrics={"kid": {"subset_size": 500}}`, `--option kid.subset_size=500`).
        default: Its value when not given.
        check: Whether a value is valid.
        expected: What a valid value is, in words (named in the refusal of an invalid one).
        doc: One line for the docs and `--help`.
        neutral: Added after results were stored: left out of records and config hashes while at its default.
        normalize: A valid value → the one form it is recorded and hashed in (None: as given).

    Examples:
        >>> from ganeval.metrics.registry import integer, option
        >>> k = option("k", 5, integer(1), "neighbours of each row")
        >>> k.validate("metrics.mine.", 0)
        Traceback (most recent call last):
        ValueError: metrics.mine.k must be an integer ≥ 1, got 0
    """

    name: str
    default: Any
    check: Callable[[Any], bool]
    expected: str
    doc: str = ""
    # an option added after results were stored: left out of `Metrics.as_dict` (records, config hashes) while at
    # its default, so those results keep their hash
    neutral: bool = False
    normalize: Callable[[Any], Any] | None = None  # a valid value -> the one form it is recorded and hashed in

    def validate(self, where: str, value: Any) -> None:
        """Raise ValueError naming the option (after the prefix `where`), what it must be and what it got."""
        if not self.check(value):
            raise ValueError(f"{where}{self.name} must be {self.expected}, got {value!r}")


def integer(low: int) -> tuple[Callable[[Any], bool], str]:
    """A check for integers ≥ `low` (bools and floats are refused, not truncated)."""
    def check(v: Any) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and bool(v >= low)

    return check, f"an integer ≥ {low}"


def one_of(*values: Any) -> tuple[Callable[[Any], bool], str]:
    """A check for one of a few allowed values."""
    return (lambda v: isinstance(v, str) and v in values), "one of " + ", ".join(repr(v) for v in values)


def boolean() -> tuple[Callable[[Any], bool], str]:
    """A check for true/false (not strings or numbers that merely look like them)."""
    return (lambda v: isinstance(v, (bool, np.bool_))), "true or false"


def real() -> tuple[Callable[[Any], bool], str]:
    """A check for finite real numbers."""
    def check(v: Any) -> bool:
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and math.isfinite(v)

    return check, "a finite number"


def option(name: str, default: Any, rule: tuple[Callable[[Any], bool], str], doc: str = "", neutral: bool = False,
           normalize: Callable[[Any], Any] | None = None) -> Option:
    """An Option from a (check, expected) rule such as `integer(1)`.

    Args:
        name: The option's name.
        default: Its value when not given.
        rule: (check, expected): `integer(low)`, `real()`, `boolean()`, `one_of(*values)` or one of your own.
        doc: One line for the docs and `--help`.
        neutral: See `Option.neutral`.
        normalize: See `Option.normalize`.

    Returns:
        The `Option`.

    Examples:
        >>> from ganeval.metrics.registry import one_of, option
        >>> option("kernel", "cosine", one_of("cosine"), "similarity kernel").expected
        "one of 'cosine'"
    """
    return Option(name, default, rule[0], rule[1], doc, neutral, normalize)


@dataclass
class PairWork:
    """A pair's work as independent jobs (run together with other metrics' jobs, in parallel on CPU),
    and the function that turns their results, in order, into the metric's value.

    Attributes:
        jobs: Callables without arguments, each one independent part of the work.
        finish: Their results, in order → the metric's value.

    Examples:
        >>> from ganeval.metrics import PairWork
        >>> work = PairWork([lambda: 2.0, lambda: 3.0], lambda results: results[0] * results[1])
        >>> work.finish([job() for job in work.jobs])
        6.0
    """

    jobs: Sequence[Job]
    finish: Callable[[list[Any]], float]


class GramTap:
    """Collects what a metric makes of a set's Gram strips x[a:e]·x[a:]ᵀ while another metric computes them."""

    def __init__(self, make: Callable[[torch.Tensor], torch.Tensor]) -> None:
        self.make = make
        self.parts: list[tuple[int, torch.Tensor]] = []

    def __call__(self, a: int, g: torch.Tensor) -> None:
        self.parts.append((a, self.make(g)))  # list.append is atomic: safe from worker threads

    def collected(self) -> list[tuple[int, torch.Tensor]] | None:
        """The parts by starting row (strips finish in any order), or None when nothing computed strips."""
        return sorted(self.parts, key=lambda part: part[0]) if self.parts else None


def fan_out(hooks: Sequence[GramHook]) -> GramHook | None:
    """One hook that calls every hook of `hooks` (None when there are none, so no strip is kept)."""
    if not hooks:
        return None

    def hook(a: int, g: torch.Tensor) -> None:
        for h in hooks:
            h(a, g)

    return hook


@dataclass(frozen=True)
class Metric:
    """A registered metric: option table, stages, and how tables label it.

    prepare(x, options, hooks, tap) -> statistics of one subsample x (a float tensor); `hooks` are
    other metrics' Gram taps to call with any Gram strip of x it computes, `tap` its own (or None).
    pair(stats_x, stats_y, options, rng) -> PairWork; draws its random choices from `rng`, its own stream, now.
    reach(peak, n, d, options) -> (working, wide) or (working, wide, precise32, precise64): the largest
    numbers it forms on an n×d set whose entries are at most `peak` in magnitude, in the working precision and
    in float64, and for metrics that lose precision at small scales whether float32 and float64 keep it (see
    `validation.Reach`); None for no bound beyond finite input.
    With `shares`, both stages also get `context=`: a `Shared` per set (prepare) and per pair (pair), through
    which metrics computed together share one pass (precision/recall/density/coverage one k-NN search).
    `input` is what the rows must be ("features", or "logits" of a classifier for the Inception Score);
    `higher_is_better` turns paired comparisons (and bold in tables) around. `lowest`: the least value the metric
    can give (its estimates, not only the quantity estimated), where an interval is cut (`ganeval.results.summary`).
    memory(n, d, options) -> (bytes, what): the largest arrays it holds at once on a pair of n-row sets of d
    features, a lower bound of its peak (`ganeval.metrics.memory` refuses a run that cannot fit); None for work
    in bounded strips.

    Attributes:
        name: The name it is chosen by (`metrics=["name"]`, configs, tables).
        options: Its option table (`Option`s).
        prepare: Statistics of one subsample (see above).
        pair: The work on two sets' statistics (see above).
        tap: Its own Gram tap on a set (or None).
        check_sample_size: Refuses a sample size its options cannot take (e.g. KID's subset size), or None.
        label: Its label in tables (default: the name in capitals).
        label_tex: Its label in table.tex (default: `label`).
        scale: Tables show value × scale (KID×10³).
        unscaled_label: The name of a value shown unscaled (KID, not KID×10³).
        same_dim: Both sets must live in one feature space (False: IMD, Vendi compare sets of any dimension).
        doc: One line for the docs and `--help`.
        reach: The largest numbers it forms (see above), or None.
        shares: Its stages take `context=` (see above).
        input: What the rows must be: "features" or "logits".
        higher_is_better: Paired comparisons and bold in tables turned around.
        memory: Its largest arrays at once (see above), or None.
        lowest: The least value it can give (an interval's floor), or None.
        defaults: Each option's default (made from `options`).

    Examples:
        >>> from ganeval.metrics import get_metric
        >>> kid = get_metric("kid")
        >>> kid.label, kid.scale, kid.defaults["subset_size"]
        ('KID×10³', 1000.0, 1000)
    """

    name: str
    options: tuple[Option, ...]
    # with `shares`, both stages also take `context=` (below), so their types are not fixed by `shares` alone
    prepare: Callable[..., Any]
    pair: Callable[..., PairWork]
    tap: Callable[[torch.Tensor, Mapping[str, Any]], GramHook | None] | None = None
    check_sample_size: Callable[[int, Mapping[str, Any]], None] | None = None
    label: str = ""
    label_tex: str = ""
    scale: float = 1.0  # tables show value × scale (KID×10³)
    unscaled_label: str = ""  # the name of a value shown unscaled (raw numbers, normalised curves): KID, not KID×10³
    same_dim: bool = True  # both sets must live in one feature space
    doc: str = ""
    reach: Callable[[float, int, int, Mapping[str, Any]], ReachBounds] | None = None
    shares: bool = False
    input: str = "features"
    higher_is_better: bool = False
    memory: Callable[[int, int, Mapping[str, Any]], tuple[float, str]] | None = None
    lowest: float | None = None  # every value it gives is at least this (IMD, FID: 0): an interval's floor
    defaults: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "defaults", {o.name: o.default for o in self.options})
        if not self.label:
            object.__setattr__(self, "label", self.name.upper())
        if not self.label_tex:
            object.__setattr__(self, "label_tex", self.label)
        if not self.unscaled_label:
            object.__setattr__(self, "unscaled_label", self.label)

    def resolve(self, given: Mapping[str, Any] | None, where: str | None = None) -> dict[str, Any]:
        """The defaults completed by `given`; unknown names and invalid values raise ValueError naming
        the option as `where` + name (default `metrics.<metric>.`, as in configs)."""
        given = dict(given or {})
        unknown = set(given) - set(self.defaults)
        if unknown:
            import difflib

            names = ", ".join(repr(u) for u in sorted(unknown))
            near = difflib.get_close_matches(sorted(unknown)[0], sorted(self.defaults), n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise ValueError(f"{self.name}: unknown option {names}{hint}; options are "
                             f"{', '.join(sorted(self.defaults)) or 'none'}")
        out = {**self.defaults, **given}
        for o in self.options:
            o.validate(f"metrics.{self.name}." if where is None else where, out[o.name])
            if o.normalize is not None:
                out[o.name] = o.normalize(out[o.name])
        return out


@dataclass
class Shared:
    """What a metric with `shares` may reuse on one set (or pair): the statistics the metrics before it made
    (registration order), every chosen metric's options, and a memo for work that several metrics share."""

    stats: Mapping[str, Any]
    chosen: Mapping[str, Mapping[str, Any]]
    memo: dict[str, Any] = field(default_factory=dict)


def function_metric(name: str, fn: Callable[..., float], options: Sequence[Option] = (), **kw: Any) -> Metric:
    """A metric computed straight from the two subsamples, fn(x, y, rng, **options) -> float (x, y: float
    tensors); `rng` is a Generator seeded from the metric's own stream.

    Args:
        name: The name it will be chosen by.
        fn: fn(x, y, rng, **options) -> float: the metric on a real and a generated subsample.
        options: Its option table (`option(...)`s), given to `fn` by name.
        **kw: Any other `Metric` field (`label`, `higher_is_better`, `same_dim`, `doc`, ...).

    Returns:
        The `Metric`, to pass to `register_metric`.

    Examples:
        >>> import numpy as np
        >>> import ganeval
        >>> from ganeval.metrics.registry import function_metric, integer, option, register_metric
        >>> def mean_gap(x, y, rng, power=1):  # the distance between the two sets' means
        ...     return float((x.mean(0) - y.mean(0)).abs().pow(power).sum())
        >>> _ = register_metric(function_metric("mean_gap", mean_gap, [option("power", 1, integer(1), "the power")]))
        >>> rng = np.random.default_rng(0)
        >>> real, fake = rng.normal(size=(300, 4)), rng.normal(size=(300, 4)) + 0.5
        >>> s = ganeval.evaluate(real, fake, runs=3, sample_size=200, metrics=["mean_gap"], progress=False)
        >>> s["metric"].tolist()
        ['mean_gap']
    """
    def pair(x: torch.Tensor, y: torch.Tensor, opts: Mapping[str, Any], rng: np.random.Generator) -> PairWork:
        own = np.random.default_rng(int(rng.integers(2**63)))
        return PairWork([partial(fn, x, y, own, **opts)], lambda results: float(results[0]))

    return Metric(name, tuple(options), prepare=lambda x, opts, hooks, tap: x, pair=pair, **kw)


REGISTRY: dict[str, Metric] = {}
# extractor name -> the name of its feature space in FID's label FD_<name> ("Inception" is FID itself). The built-in
# extractors' are declared here, so a label never depends on whether ganeval.features was imported; an extractor
# registered elsewhere adds its own (`ganeval.features.base.register`, from its class's `fd_name`)
FEATURE_SPACES: dict[str, str] = {"inception": "Inception", "pixels": "pixels", "identity": "features",
                                  "dinov2": "DINOv2", "clip": "CLIP"}
PAPER_ROWS = ("imd", "kid", "fid")  # the paper's GAN table, top to bottom: first wherever metrics are listed


def register_metric(metric: Metric) -> Metric:
    """Make `metric` selectable by its name (in `evaluate`, configs and tables); a taken name raises.

    Args:
        metric: The `Metric` (e.g. from `function_metric`).

    Returns:
        `metric` itself.

    Raises:
        ValueError: A metric of that name is registered already.

    Examples:
        >>> from ganeval.metrics import function_metric, register_metric
        >>> m = register_metric(function_metric("always_one", lambda x, y, rng: 1.0))
        >>> register_metric(m)
        Traceback (most recent call last):
        ValueError: a metric named 'always_one' is already registered
    """
    if metric.name in REGISTRY:
        raise ValueError(f"a metric named {metric.name!r} is already registered")
    REGISTRY[metric.name] = metric
    return metric


def metric_names() -> tuple[str, ...]:
    """The registered metrics, in registration order.

    Returns:
        Their names (the built-in ones first, then those registered since).

    Examples:
        >>> from ganeval.metrics import metric_names
        >>> metric_names()[:3]
        ('imd', 'fid', 'kid')
    """
    return tuple(REGISTRY)


def get_metric(name: str) -> Metric:
    """The metric registered as `name`; ValueError listing the others.

    Args:
        name: A registered metric's name.

    Returns:
        Its `Metric`.

    Raises:
        ValueError: No metric of that name (naming the closest one and the registered ones).

    Examples:
        >>> from ganeval.metrics import get_metric
        >>> get_metric("fid").label
        'FID'
        >>> get_metric("fdi")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: unknown metric 'fdi' (did you mean 'fid'?); available: imd, fid, kid, ...
    """
    if name not in REGISTRY:
        raise ValueError(f"unknown metric {name!r}{did_you_mean(name, REGISTRY)}; available: {', '.join(REGISTRY)}")
    return REGISTRY[name]


def metric_order(names: Iterable[str]) -> list[str]:
    """`names` (once each) in the one order of table rows, figure curves and verdict columns: the paper's rows
    (IMD, KID, FID), then the others by name."""
    names = list(dict.fromkeys(names))
    return [m for m in PAPER_ROWS if m in names] + sorted(set(names) - set(PAPER_ROWS))


def feature_space(extractor: str) -> str:
    """The name in FD_<name> of FID on an extractor's features (its own name when it declares none or is unknown)."""
    return FEATURE_SPACES.get(extractor, extractor)


def unscaled_label(name: str) -> str:
    """How a metric's unscaled value is named (KID, not KID×10³); a name the registry does not know, as itself."""
    metric = REGISTRY.get(name)
    return name if metric is None else metric.unscaled_label


def _bound_reach(reach: Callable[..., ReachBounds], options: Mapping[str, Any], peak: float, n: int,
                 d: int) -> ReachBounds:
    return reach(peak, n, d, options)


class Metrics(Mapping[str, dict[str, Any]]):
    """Chosen metrics with resolved options (name -> options, in the order asked for), validated once.

    `ordered()` gives them in registration order, the order in which sets are prepared and paired (each
    metric draws from its own stream), so the numbers do not depend on the order the user lists metrics in.

    Args:
        metrics: Names (`["imd", "fid"]`, or `"imd,fid"`), a mapping name → options (None: the defaults), or a
            `Metrics`.

    Examples:
        >>> from ganeval.metrics import Metrics
        >>> m = Metrics({"kid": {"subset_size": 500}, "fid": None})
        >>> list(m), m["kid"]["subset_size"], m["kid"]["subsets"]
        (['kid', 'fid'], 500, 100)
    """

    def __init__(self, metrics: Iterable[str] | Mapping[str, Mapping[str, Any] | None] | str) -> None:
        if isinstance(metrics, Metrics):
            self._opts: dict[str, dict[str, Any]] = {k: dict(v) for k, v in metrics.items()}
            return
        if isinstance(metrics, str):
            metrics = (metrics,)
        if not isinstance(metrics, Mapping):
            metrics = {name: None for name in metrics}
        if not metrics:
            raise ValueError(f"choose at least one metric of {metric_names()}")
        self._opts = {str(name): get_metric(str(name)).resolve(opts) for name, opts in metrics.items()}

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self._opts[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._opts)

    def __len__(self) -> int:
        return len(self._opts)

    def __repr__(self) -> str:
        return f"Metrics({self._opts!r})"

    def ordered(self) -> list[tuple[Metric, dict[str, Any]]]:
        """(metric, options) in registration order."""
        return [(m, self._opts[m.name]) for m in REGISTRY.values() if m.name in self._opts]

    def check_sample_size(self, sample_size: int) -> None:
        """Raise ValueError when a metric's options cannot work on subsamples of `sample_size` rows."""
        for metric, opts in self.ordered():
            if metric.check_sample_size is not None:
                metric.check_sample_size(sample_size, opts)

    def reaches(self) -> list[tuple[str, Reach]]:
        """(label, reach with the options bound) of each chosen metric that declares its reach, for
        `validation.working_dtype`: the precision one set must be computed in for all of them."""
        return [(m.label, partial(_bound_reach, m.reach, o)) for m, o in self.ordered() if m.reach is not None]

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """Plain name -> options (for records and hashing), without `neutral` options at their default."""
        neutral = {(m.name, o.name): o.default for m in REGISTRY.values() for o in m.options if o.neutral}
        return {k: {name: value for name, value in v.items()
                    if (k, name) not in neutral or value != neutral[(k, name)]} for k, v in self._opts.items()}
