"""Score given sets against a real one (what `ganeval-score` runs): folders, arrays or dataset names -> features
-> one value per metric on the full sets (runs=1) or the subsample protocol (runs > 1) -> the pipeline's files.

Each input is resolved in this order: an existing folder (images, read by `ganeval.data.folder`), an existing
`.npy`/`.npz` file (`PATH.npz:KEY` picks one array of several; `ganeval.data.array`), else the name of a data
config (`ganeval/configs/data/NAME.yaml`, loaded with its defaults as `data=NAME` would be). An array is
features when it is 2-D (N×D) and images when it is 3-D or 4-D in an image layout (N×H×W, N×C×H×W, N×H×W×C with
C = 1 or 3) holding uint8 or floats in [0, 1]; anything else is refused as ambiguous. Everything is checked
(kinds, shapes, set sizes against the metric options, results directory) before any feature is extracted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ganeval.app import pipeline
from ganeval.common import check_writable
from ganeval.hashing import array_identity
from ganeval.protocol import Block, Settings
from ganeval.protocol.api import check_finite

log = logging.getLogger("ganeval")
EXTRACTORS = ("inception", "pixels", "identity")
NOT_NAMES = ("array", "folder")  # data configs that need a path: given as paths instead


@dataclass
class InputSet:
    """One input as loaded: what was given, its label, where it came from and its array (images or features)."""

    arg: str
    name: str
    source: str  # "folder", "array" or "data config NAME"
    array: np.ndarray
    images: bool

    def describe(self) -> str:
        """'ARG (N images of H×W with C channels)' or 'ARG (N×D features)' for messages."""
        from ganeval.data.images import describe

        if self.images:
            return f"{self.arg} ({len(self.array)} {describe(self.array.shape)})"
        return f"{self.arg} ({len(self.array)}×{self.array.shape[1]} features)"


@dataclass
class ScoreRequest:
    """What to score and how (the options of `ganeval-score`); checked by `score_sets` before any work."""

    real: str
    fakes: Sequence[str]
    features: str | None = None  # None: inception for images, identity for features
    metrics: Mapping[str, Mapping[str, Any] | None] = field(default_factory=lambda: {"imd": {}, "fid": {}, "kid": {}})
    runs: int = 1
    sample_size: int | None = None  # required with runs > 1
    confidence: float = 0.99
    seed: int = 0
    device: str | None = None
    batch_size: int = 250
    weights: str | None = None  # Inception weights file (None: $GANEVAL_INCEPTION_WEIGHTS, torch hub cache, download)
    dims: int = 2048  # Inception block
    download: bool = True  # may Inception weights be downloaded when found nowhere
    cache_dir: str | None = None  # feature cache (None: no cache)
    out: str | None = None  # results directory (None: nothing written)
    overwrite: bool = False
    plots: bool = True
    progress: bool = True
    command: str = ""  # the command line, recorded


@dataclass
class ScoreResult:
    """What `score_sets` produced: the summary (one row per model and metric), the per-run rows, the paired
    comparison (runs > 1, several models), per-(model, metric) extras (KID's std over subsets on full sets),
    the run record, the inputs and, with `out`, the results directory."""

    summary: pd.DataFrame
    runs: pd.DataFrame
    comparison: pd.DataFrame | None
    extras: dict[tuple[str, str], dict[str, float]]
    record: Any
    real: InputSet
    fakes: list[InputSet]
    out: Path | None


def data_names() -> list[str]:
    """The data configs a name may be (`ganeval/configs/data/*.yaml` except those that need a path)."""
    from ganeval.app.main import config_dir

    return sorted(p.stem for p in (config_dir() / "data").glob("*.yaml") if p.stem not in NOT_NAMES)


def load_input(arg: str) -> InputSet:
    """An input argument resolved and loaded (see the module doc for the order); ValueError when it is none."""
    from ganeval.data import array, folder

    path = Path(arg).expanduser()
    file, _, key = arg.rpartition(":") if ":" in arg and not path.exists() else (arg, "", "")
    if path.is_dir():
        return classify(InputSet(arg, path.resolve().name, "folder", folder(path), True))
    if Path(file).expanduser().is_file():
        try:
            arr = array(Path(file).expanduser(), key or None)
        except ValueError as e:
            if "pass key=" not in str(e):
                raise
            raise ValueError(f"{e} (on the command line: {file}:KEY)") from None
        name = Path(file).stem + (f":{key}" if key else "")
        return classify(InputSet(arg, name, "array", arr, False))
    names = data_names()
    if arg in names:
        from omegaconf import OmegaConf

        from ganeval.app.main import config_dir

        node = OmegaConf.load(config_dir() / "data" / f"{arg}.yaml")
        arr = pipeline.instantiate(node)
        arr = arr.numpy() if hasattr(arr, "numpy") and not isinstance(arr, np.ndarray) else np.asarray(arr)
        return classify(InputSet(arg, arg, f"data config {arg}", arr, False))
    hint = "does not exist" if ("/" in arg or path.suffix) else "is not an existing folder or file"
    raise ValueError(f"{arg} {hint}, and it is not a dataset name; give an image folder, a .npy/.npz file (FILE.npz:KEY "
                     f"for one array of several) or one of: {', '.join(names)}")


def classify(s: InputSet) -> InputSet:
    """Decide images vs features by dimensions and dtype (see the module doc); ValueError when it is neither."""
    from ganeval.data.images import image_layout

    a = s.array
    if len(a) == 0:
        raise ValueError(f"{s.arg} is empty")
    if a.ndim == 2:
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
            raise ValueError(f"{s.arg} holds {a.dtype} values: features must be numbers")
        check_finite(s.arg, a)
        s.images = False
        return s
    layout_ok = True
    try:
        image_layout(a.shape)
    except ValueError:
        layout_ok = False
    if a.ndim in (3, 4) and layout_ok and a.dtype == np.uint8:
        s.images = True
        return s
    if a.ndim in (3, 4) and layout_ok and np.issubdtype(a.dtype, np.floating):
        check_finite(s.arg, a)
        lo, hi = float(a.min()), float(a.max())
        if lo >= 0.0 and hi <= 1.0:
            s.images = True
            return s
        raise ValueError(f"{s.arg} is a float array of shape {a.shape} with values in [{lo:.4g}, {hi:.4g}]: neither "
                         "images (floats must lie in [0, 1]; convert with ganeval.data.to_uint8(images, value_range=...)) "
                         "nor N×D features (reshape them to N×D)")
    raise ValueError(f"{s.arg} is an array of shape {a.shape} and dtype {a.dtype}: neither N×D features nor images "
                     "(uint8 or floats in [0, 1], N×H×W, N×C×H×W or N×H×W×C with C = 1 or 3); reshape features to N×D")


def label_sets(fakes: list[InputSet]) -> None:
    """Give the generated sets distinct model labels: their names, or the arguments where names collide."""
    from collections import Counter

    counts = Counter(s.name for s in fakes)
    for s in fakes:
        if counts[s.name] > 1:
            s.name = s.arg
    args = Counter(s.arg for s in fakes)
    twice = [a for a, n in args.items() if n > 1]
    if twice:
        raise ValueError(f"FAKE {twice[0]} is given {args[twice[0]]} times: give each generated set once")


def make_extractor(request: ScoreRequest, sets: list[InputSet]) -> Any:
    """The extractor asked for (default: inception for images, identity for features), checked against the inputs."""
    from ganeval.features import IdentityExtractor, InceptionExtractor, PixelsExtractor

    kinds = {s.images for s in sets}
    if len(kinds) > 1:
        images = next(s for s in sets if s.images)
        feats = next(s for s in sets if not s.images)
        raise ValueError(f"{images.describe()} holds images but {feats.describe()} holds features: give every set "
                         "as images (folders, image arrays) or every set as feature arrays")
    images = kinds.pop()
    name = request.features or ("inception" if images else "identity")
    if name not in EXTRACTORS:
        raise ValueError(f"--features must be one of {', '.join(EXTRACTORS)}, got {name!r}")
    if name != "identity" and not images:
        raise ValueError(f"--features {name} extracts features from images, but the inputs are feature arrays "
                         f"(e.g. {sets[0].describe()}): drop --features (identity is the default for features)")
    if request.weights is not None and name != "inception":
        raise ValueError(f"--weights is for --features inception, not {name}")
    if name == "inception":
        return InceptionExtractor(dims=request.dims, weights=request.weights, download=request.download)
    return PixelsExtractor() if name == "pixels" else IdentityExtractor()


def feature_dim(extractor: Any, s: InputSet) -> int:
    """The dimension of `s`'s features through `extractor`, known before extracting (inception: its block's)."""
    from ganeval.data.images import to_nchw

    if extractor.name == "inception":
        return int(extractor.dims)
    if extractor.name == "pixels":
        return int(np.prod(to_nchw(s.array[:1]).shape[1:]))
    return int(np.prod(s.array.shape[1:]))


def check_inputs(real: InputSet, fakes: list[InputSet], extractor: Any, settings: Settings) -> None:
    """Each input's shape for the extractor and the feature dimensions the metrics need, before extraction."""
    for s in (real, *fakes):
        extractor.check_input(tuple(s.array.shape), s.array.dtype)
    same_dim = [m.name for m, _ in settings.metrics.ordered() if m.same_dim]
    d = feature_dim(extractor, real)
    for f in fakes:
        if same_dim and feature_dim(extractor, f) != d:
            raise ValueError(
                f"{', '.join(n.upper() for n in same_dim)} need features of one dimension, but through "
                f"{extractor.name} REAL {real.describe()} gives {d} and FAKE {f.describe()} gives "
                f"{feature_dim(extractor, f)}: give sets of one shape (images of one size and channel count)"
                + (", or --features inception, which resizes every image" if extractor.name == "pixels" else ""))


def make_settings(request: ScoreRequest, real: InputSet, fakes: list[InputSet]) -> Settings:
    """The protocol settings, with the set sizes checked against them: runs > 1 needs a sample size no larger than
    any set; runs=1 scores the full sets (the summary's sample_size is then the real set's rows)."""
    from ganeval.metrics.registry import Metrics, integer
    from ganeval.protocol.settings import check_value

    check_value("--runs", request.runs, integer(1))
    if request.runs > 1 and request.sample_size is None:
        raise ValueError(f"--runs {request.runs} draws subsamples: give their size with --sample-size M (at most the "
                         "smallest set's rows), or --runs 1 to score the full sets")
    if request.runs == 1 and request.sample_size is not None:
        raise ValueError("--sample-size applies to the subsample protocol (--runs > 1); --runs 1 scores the full sets")
    from ganeval.app.score_notes import default_kid_subset

    sizes = {f"REAL {real.arg}": len(real.array), **{f"FAKE {f.arg}": len(f.array) for f in fakes}}
    chosen = {k: dict(v or {}) for k, v in request.metrics.items()}
    note = default_kid_subset(chosen, sizes, request.runs, request.sample_size)
    if note:
        log.warning("%s", note)
    metrics = Metrics(chosen)
    if request.runs == 1:
        from ganeval.protocol.full import check_full_sizes

        check_full_sizes(sizes, metrics)
    settings = Settings(runs=request.runs, sample_size=request.sample_size or len(real.array), metrics=metrics,
                        seed=request.seed, confidence=request.confidence, device=request.device,
                        progress=request.progress)
    if request.runs > 1:
        settings.check_pools(sizes)
    return settings


def make_context(request: ScoreRequest, real: InputSet, fakes: list[InputSet], extractor: Any,
                 settings: Settings) -> pipeline.Context:
    """The pipeline context of a score call: its config (inputs, extractor, protocol), hash, content and record."""
    config: dict[str, Any] = {
        "real": real.arg, "fakes": {f.name: f.arg for f in fakes},
        "sets": {"real": len(real.array), **{f.name: len(f.array) for f in fakes}},
        "features": extractor.identity(), "metrics": settings.metrics.as_dict(), "runs": settings.runs,
        "sample_size": settings.sample_size if settings.runs > 1 else None,
        "full_sets": settings.runs == 1, "confidence": settings.confidence, "seed": settings.seed,
        "device": settings.device, "batch_size": request.batch_size, "results_dir": request.out,
        "cache_dir": request.cache_dir, "overwrite": request.overwrite, "plots": request.plots,
        "progress": request.progress,
    }
    cfg = {"overwrite": request.overwrite, "plots": request.plots}
    ctx = pipeline.Context(cfg=cfg, name="score", results_dir=Path(request.out or "."), device=str(settings.device),
                           config=config, settings=settings)
    ctx.content["data"]["real"] = array_identity(real.array, 16)
    for f in fakes:
        ctx.content["generators"][f.name] = array_identity(f.array, 16)
    ctx.record.extractor = ctx.content["extractor"] = config["features"]
    ctx.record.generators = {f.name: {"input": f.arg, "source": f.source, **ctx.content["generators"][f.name]}
                             for f in fakes}
    ctx.record.command = request.command or None
    return ctx


def extract(ctx: pipeline.Context, request: ScoreRequest, s: InputSet, extractor: Any) -> np.ndarray:
    """Features of one input through the extractor (cached in `cache_dir` when given)."""
    from ganeval.features import extract_with_info

    with ctx.stage("features"):
        feats, _ = extract_with_info(s.array, extractor, batch_size=request.batch_size, device=ctx.device,
                                     cache_dir=request.cache_dir, progress=request.progress)
    return feats


def score_sets(request: ScoreRequest) -> ScoreResult:
    """Load and check every input, extract features, score (full sets or protocol) and, with `out`, write the
    pipeline's files (runs.csv, runs.meta.json, summary.csv/json, tables, plots, report.html)."""
    from ganeval.protocol.full import FULL_SET_NOTE, FullSetTask
    from ganeval.protocol.loop import run_loop

    if not request.fakes:
        raise ValueError("give at least one FAKE set to score against REAL")
    if request.out is not None:
        check_writable(Path(request.out), "--out")
    real = load_input(request.real)
    fakes = [load_input(f) for f in request.fakes]
    label_sets(fakes)
    settings = make_settings(request, real, fakes)
    extractor = make_extractor(request, [real, *fakes])
    check_inputs(real, fakes, extractor, settings)
    ctx = make_context(request, real, fakes, extractor, settings)
    full = settings.runs == 1
    results_dir = ctx.results_dir if request.out is not None else None
    if results_dir is not None:
        pipeline.open_results(ctx, protocol=not full)
    else:
        from ganeval.protocol.api import store_identity

        ctx.set_config_hash(ctx.identity() if full else store_identity(settings, ctx.identity()))

    real_f = extract(ctx, request, real, extractor)
    fakes_f = [({"model": f.name}, extract(ctx, request, f, extractor)) for f in fakes]
    extras: dict[tuple[str, str], dict[str, float]] = {}
    with ctx.stage("runs"):
        if full:
            task = FullSetTask(real_f, fakes_f, settings)
            rows = run_loop(task, settings, results_dir, ctx.identity(), request.overwrite)
            extras = task.extras
        else:
            from ganeval.protocol import run_blocks

            rows = run_blocks([Block(real_f, fakes_f)], settings, results_dir, ctx.identity(), request.overwrite)
    ctx.record.seconds_per_run = ctx.stage_seconds["runs"] / settings.runs
    summary, comparison, _ = pipeline.summarize(ctx, rows)
    if full:
        ctx.record.interval_covers = FULL_SET_NOTE
    if results_dir is not None:
        title = f"ganeval-score: {', '.join(f.name for f in fakes)} vs {real.name}"
        pipeline.write(ctx, summary, comparison, title)
    return ScoreResult(summary, rows, comparison, extras, ctx.record, real, fakes, results_dir)
