"""`Protocol` and `IMD`: ganeval's subsample protocol as torchmetrics Metrics that a training loop feeds batch by batch.

The states are the feature rows themselves (float32, on the metric's device, `dist_reduce_fx="cat"`), so
torchmetrics' DDP sync gathers every rank's rows, and `compute()` runs `ganeval.evaluate` on the gathered pools
where they lie: the numbers are evaluate's on the same features.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Iterable, Mapping, cast

import numpy as np
import pandas as pd
import torch
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

from ganeval.metrics.dims import fit_metrics
from ganeval.protocol.api import evaluate
from ganeval.protocol.settings import DEFAULT_METRICS, Settings, fit_kid_subset, kid_subset_chosen
from ganeval.results.summary import SE_COLUMN
from ganeval.torchmetrics.features import FeatureArg, extractor_of, features_of
from ganeval.words import UNSET, caller_stacklevel, python_errors, renamed

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

MetricsArg = Iterable[str] | Mapping[str, Mapping[str, Any] | None]
EXTRACTOR_OPTIONS = ("weights", "download", "resize", "dims")  # the extractors' options, given in features_options
_ANY_SIZE = 2**31  # what the arguments are checked with at construction when sample_size=None


class Protocol(Metric):
    """Any registered metrics over `runs` random subsamples of `sample_size` rows of the accumulated real and fake
    features (run r draws as `evaluate` does, from `seed`), with a `confidence` interval of the mean.

    `update(x, real=True/False)` adds a batch's features (see `ganeval.torchmetrics.features` for `features=`, the
    name `ganeval.score` takes; torchmetrics' `feature=` and `feature_options=` are kept, with a DeprecationWarning);
    `compute()` returns {metric: mean} and, when runs > 1, {metric_ci_low, metric_ci_high} too (float64 tensors on
    the metric's device). The real and fake pools may differ in dimension when every metric is dimension-free (IMD,
    Vendi: e.g. two networks' layers); with the default metrics those needing one dimension are then left out (a
    logged note). `sample_size=None` takes the smaller pool whole (every run then scores the same rows, as
    torchmetrics' FID does); `reset_real_features=False` keeps the real rows across `reset()`.

    Args:
        metrics: Names (`["imd", "fid", "kid"]`, the default) or a mapping name → options, as `ganeval.evaluate`
            takes them.
        features: How a batch becomes feature rows: `"inception"` (default) or an int (64, 192, 768, 2048: FID
            Inception's block), `"dinov2"`, `"clip"`, `"pixels"`, `"identity"` (rows given directly), an
            `nn.Module` returning N×D, or an `Extractor`.
        runs: Random subsamples scored at `compute()` (1: one value, as torchmetrics' FID).
        sample_size: Rows drawn from each pool per run; None: the smaller pool whole.
        confidence: The interval's level (runs > 1).
        seed: Seed of every draw (as `evaluate`'s).
        reset_real_features: False: `reset()` keeps the real pool (feed a fixed real set once).
        features_options: The extractor's options: `{"weights": FILE}`, `{"download": False}`, `{"resize": MODE}`.
        feature: The former name of `features` (torchmetrics'; kept, with a DeprecationWarning).
        feature_options: The former name of `features_options`.
        **kwargs: torchmetrics' `Metric` arguments (`sync_on_compute`, `process_group`, ...).

    Raises:
        ValueError: A bad argument, in one line naming it, when the metric is made.
        ganeval.features.WeightsNotFoundError: The extractor's weights cannot be found (one line, naming
            `features_options={"weights": FILE}` and the offline way).

    Examples:
        >>> import torch
        >>> from ganeval.torchmetrics import Protocol
        >>> metric = Protocol({"fid": None, "kid": {"subset_size": 150}}, features="identity", runs=3, sample_size=150)
        >>> g = torch.Generator().manual_seed(0)
        >>> for step in range(2):  # a loop's batches
        ...     metric.update(torch.randn(100, 8, generator=g), real=True)
        ...     metric.update(torch.randn(100, 8, generator=g) + 0.3, real=False)
        >>> {k: round(float(v), 3) for k, v in metric.compute().items()}
        {'fid': 1.204, 'fid_ci_low': 0.678, 'fid_ci_high': 1.731, 'kid': 0.409, 'kid_ci_low': 0.234, 'kid_ci_high': 0.584}
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    real_features: list[torch.Tensor]
    fake_features: list[torch.Tensor]

    @python_errors
    def __init__(self, metrics: MetricsArg = DEFAULT_METRICS, features: FeatureArg = UNSET, runs: int = 1,
                 sample_size: int | None = None, confidence: float = 0.99, seed: int = 0,
                 reset_real_features: bool = True, features_options: Mapping[str, Any] | None = UNSET, *,
                 feature: FeatureArg = UNSET, feature_options: Mapping[str, Any] | None = UNSET,
                 **kwargs: Any) -> None:
        loose = [k for k in EXTRACTOR_OPTIONS if k in kwargs]  # else torchmetrics' "Unexpected keyword arguments"
        if loose:
            raise ValueError(f"{loose[0]}= is an option of the extractor: give features_options={{{loose[0]!r}: ...}}")
        super().__init__(**kwargs)
        features = renamed("features", features, "feature", feature, UNSET)
        features = "inception" if features is UNSET else features
        features_options = renamed("features_options", features_options, "feature_options", feature_options, UNSET)
        features_options = None if features_options is UNSET else features_options
        if not isinstance(reset_real_features, bool):
            raise ValueError(f"reset_real_features must be True or False, got {reset_real_features!r}")
        if sample_size is not None and (isinstance(sample_size, bool) or not isinstance(sample_size, int)):
            raise ValueError(f"sample_size must be an int of at least 2 or None (the smaller pool), "
                             f"got {sample_size!r}")
        self.runs, self.sample_size, self.seed, self.confidence = runs, sample_size, seed, confidence
        # every argument checked now (sample_size=None against the pools at compute()), kept as Settings made it
        s = self._settings(_ANY_SIZE if sample_size is None else sample_size, "cpu", metrics)
        self.runs, self.seed, self.confidence, self.metrics = s.runs, s.seed, s.confidence, s.metrics
        self._default_metrics = metrics is DEFAULT_METRICS  # narrowed, not refused, for pools of two dimensions
        # as given: at compute() KID's subsets then hold min(1000, the sample size) unless chosen (`fit_kid_subset`)
        self._metrics_given = metrics if not kid_subset_chosen(metrics) else s.metrics
        self.reset_real_features = reset_real_features
        extractor = extractor_of(features, features_options)
        if isinstance(extractor, torch.nn.Module):
            self.feature_module = extractor  # a submodule: moves with the metric (`.to`, Lightning)
        self._extractor = extractor
        self.add_state("real_features", [], dist_reduce_fx="cat")
        self.add_state("fake_features", [], dist_reduce_fx="cat")

    def _settings(self, sample_size: int, device: str, metrics: MetricsArg | None = None) -> Settings:
        """The protocol's settings for pools on `device` (every argument checked, ValueError naming it). KID's subset
        note (`fit_kid_subset`) is warned once per metric and size, at the caller's line, not at every compute()."""
        given, note = fit_kid_subset(self.metrics if metrics is None else metrics, sample_size,
                                     f"sample_size={sample_size}")
        said = self.__dict__.setdefault("_notes_said", set())
        if note is not None and note not in said:
            said.add(note)
            warnings.warn(note, UserWarning, stacklevel=caller_stacklevel())
        return Settings(self.runs, sample_size, given, self.seed, self.confidence, device, progress=False)

    def _width(self, real: bool) -> int | None:
        """The feature dimension of the rows held in the real or fake pool (None when it holds none)."""
        state = self.real_features if real else self.fake_features
        held = state if isinstance(state, list) else [state]
        if held and held[0].ndim == 2 and held[0].numel():
            return int(held[0].shape[1])
        return None

    def _sync_dist(self, dist_sync_fn: Any = None, process_group: Any = None) -> None:
        """torchmetrics' gather of the pools, after one gather of every rank's feature width per pool: ranks whose
        widths differ raise the ValueError update() raises in one process (on every rank alike), and a rank fed no rows
        offers an empty 0×D pool, so the collectives of every rank match (torchmetrics' 1-D empty stand-in would not)."""
        group = process_group or self.process_group
        world = torch.distributed.get_world_size(group)
        for name, real in (("real_features", True), ("fake_features", False)):
            width = self._width(real)
            mine = torch.tensor([-1 if width is None else width], dtype=torch.int64, device=self.device)
            widths = [torch.zeros_like(mine) for _ in range(world)]
            torch.distributed.all_gather(widths, mine, group=group)
            seen = sorted({int(w.item()) for w in widths} - {-1})
            if len(seen) > 1:
                raise ValueError(f"the ranks give {' and '.join(map(str, seen))} features per sample: feed one feature "
                                 "space (one image size, one extractor) to a metric on every rank")
            if seen and isinstance(getattr(self, name), list) and not getattr(self, name):
                setattr(self, name, [torch.zeros(0, seen[0], dtype=torch.float32, device=self.device)])
        if dist_sync_fn is None:
            super()._sync_dist(process_group=process_group)
        else:
            super()._sync_dist(dist_sync_fn, process_group=process_group)

    def update(self, x: torch.Tensor, real: bool) -> None:
        """Add the features of batch `x` to the real (`real=True`) or fake pool; a refused batch changes neither."""
        if not isinstance(real, bool):
            raise ValueError(f"real must be True or False, got {real!r}")
        if isinstance(self._extractor, torch.nn.Module) and isinstance(x, torch.Tensor):
            # a module of the user's sees x as given (as torchmetrics gives it): uint8 pictures and float ones would
            # be two scales of one picture, so the first batch's kind is the metric's
            kind = "uint8" if x.dtype == torch.uint8 else "floating-point" if x.is_floating_point() else str(x.dtype)
            first = self.__dict__.setdefault("_input_kind", kind)
            if kind != first:
                raise ValueError(f"x is {kind} but earlier updates were {first}: an nn.Module given as features sees x "
                                 "as given, so feed one kind (convert uint8 images with x.float() / 255, or floats in "
                                 "[0, 1] with (x * 255).round().to(torch.uint8))")
        rows = features_of(x, self._extractor)
        pool = "real" if real else "fake"
        width = self._width(real)
        if width is not None and rows.shape[1] != width:
            raise ValueError(f"x gives {rows.shape[1]} features per sample but earlier {pool} updates gave {width}: "
                             f"feed one feature space (one image size, one extractor) to a pool")
        other = self._width(not real)
        if other is not None and not self._default_metrics:  # chosen metrics needing one dimension: refused now
            width = int(rows.shape[1])
            dims = {"the real pool": width if real else other, "the fake pool": other if real else width}
            fit_metrics(cast("Metrics", self.metrics), dims, chosen=True)
        (self.real_features if real else self.fake_features).append(rows.to(self.device))

    def forward(self, x: torch.Tensor, real: bool) -> None:
        """`metric(x, real=...)` is `update`: one batch alone has no score (compute() scores the pools)."""
        self.update(x, real=real)

    def _pools(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The real and fake rows (every rank's, while torchmetrics syncs); ValueError when a pool is empty."""
        pools = []
        for name, state in (("real", self.real_features), ("fake", self.fake_features)):
            if isinstance(state, list) and not state or isinstance(state, torch.Tensor) and state.numel() == 0:
                raise ValueError(f"compute() before any {name} update: call update(x, real={name == 'real'}) first")
            pools.append(dim_zero_cat(state))
        return pools[0], pools[1]

    def _summary(self) -> Any:
        """evaluate's summary on the pools, where they lie (every check before any scoring)."""
        real, fake = self._pools()
        n = self.sample_size or min(len(real), len(fake))
        for name, pool in (("real", real), ("fake", fake)):
            if n > len(pool):
                raise ValueError(f"sample_size={n} is larger than the {name} rows fed ({len(pool)}): lower sample_size "
                                 f"or update with more {name} samples")
        # the default metrics of pools of two dimensions: narrowed by evaluate (KID left out, so no KID note)
        narrowed = self._default_metrics and real.shape[1] != fake.shape[1]
        s = self._settings(n, str(real.device), "imd" if narrowed else self._metrics_given)
        metrics = DEFAULT_METRICS if narrowed else s.metrics
        return evaluate(real, fake, s.runs, s.sample_size, metrics, s.seed, s.confidence, s.device, progress=False)

    def compute(self) -> dict[str, torch.Tensor]:
        """{metric: mean} and, when runs > 1, {metric_ci_low, metric_ci_high}: evaluate's numbers, bit for bit; when
        runs = 1, {metric_se} for a value with an estimator standard error (IMD's, over its probes)."""
        out: dict[str, torch.Tensor] = {}
        for row in self._summary().itertuples():
            keys = {row.metric: row.mean}
            if self.runs > 1:
                keys.update({f"{row.metric}_ci_low": row.ci_low, f"{row.metric}_ci_high": row.ci_high})
            elif pd.notna(getattr(row, SE_COLUMN, np.nan)):
                keys[f"{row.metric}_{SE_COLUMN}"] = getattr(row, SE_COLUMN)
            out.update({k: torch.tensor(float(v), dtype=torch.float64, device=self.device) for k, v in keys.items()})
        return out

    def reset(self) -> None:
        """Empty the pools; the real one stays when `reset_real_features=False` (a fixed real set is fed once)."""
        if self.reset_real_features:
            super().reset()
            return
        value = self._defaults.pop("real_features")
        try:
            super().reset()
        finally:
            self._defaults["real_features"] = value


class IMD(Protocol):
    """IMD alone (the metric torchmetrics lacks), with `options` from IMD's option table (k, m, nv, ...).

    `compute()` returns a 0-d tensor whatever `runs` (as torchmetrics' FID does, so `self.log` takes it): the mean
    over runs, and at runs = 1 with `.se`, the standard error of the value over IMD's random probes (as `imd()`'s
    value has); `compute_interval()` returns Protocol's dict: imd with, when runs > 1, imd_ci_low and imd_ci_high,
    and when runs = 1 imd_se.

    Args:
        features: As `Protocol`'s (default `"inception"`).
        runs: Random subsamples scored at `compute()`.
        sample_size: Rows drawn from each pool per run; None: the smaller pool whole.
        confidence: The interval's level (runs > 1).
        seed: Seed of every draw, IMD's probes included.
        reset_real_features: False: `reset()` keeps the real pool.
        options: IMD's options (`{"k": 5, "m": 10, "nv": 100, "knn": "exact"}`: its option table).
        features_options: The extractor's options, as `Protocol`'s.
        **kwargs: torchmetrics' `Metric` arguments, and `feature=`/`feature_options=` (former names).

    Examples:
        >>> import torch
        >>> from ganeval.torchmetrics import IMD
        >>> metric = IMD(features="identity")  # pools of any dimension each: IMD compares unaligned sets
        >>> g = torch.Generator().manual_seed(0)
        >>> metric.update(torch.randn(300, 8, generator=g), real=True)
        >>> metric.update(torch.randn(300, 8, generator=g) * 1.5, real=False)
        >>> value = metric.compute()
        >>> round(float(value), 2), round(value.se, 3)  # the value, and the standard error of its random probes
        (24.25, 0.073)
    """

    def __init__(self, features: FeatureArg = UNSET, runs: int = 1, sample_size: int | None = None,
                 confidence: float = 0.99, seed: int = 0, reset_real_features: bool = True,
                 options: Mapping[str, Any] | None = None, features_options: Mapping[str, Any] | None = UNSET,
                 **kwargs: Any) -> None:
        super().__init__({"imd": dict(options or {})}, features, runs, sample_size, confidence, seed,
                         reset_real_features, features_options, **kwargs)

    def compute(self) -> torch.Tensor:  # type: ignore[override]
        """IMD's mean over the runs, a 0-d float64 tensor; at runs = 1 with `.se`, its probes' standard error (see
        `compute_interval` for the interval at runs > 1)."""
        out = super().compute()
        key = f"imd_{SE_COLUMN}"
        self._probe_se = float(out[key]) if key in out else None
        return out["imd"]

    def _wrap_compute(self, compute: Any) -> Any:
        """torchmetrics' wrapper (sync, cache, a clone of the value), then `.se` set on the tensor it returns: an
        attribute set inside `compute` would not survive the wrapper's clone. Rewrapped on unpickling, as torchmetrics
        does."""
        import functools

        wrapped = super()._wrap_compute(compute)

        @functools.wraps(compute)
        def with_se(*args: Any, **kwargs: Any) -> Any:
            value = wrapped(*args, **kwargs)
            se = getattr(self, "_probe_se", None)
            if se is not None and isinstance(value, torch.Tensor):
                setattr(value, SE_COLUMN, se)
            return value

        return with_se

    def compute_interval(self) -> dict[str, torch.Tensor]:
        """{imd} and, when runs > 1, {imd_ci_low, imd_ci_high}, when runs = 1 {imd_se}: Protocol's compute()."""
        with self.sync_context(dist_sync_fn=self.dist_sync_fn, should_sync=self._to_sync,
                               should_unsync=self._should_unsync):  # every rank's rows, as compute() gathers them
            return Protocol.compute(self)
