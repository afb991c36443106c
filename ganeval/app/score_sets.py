"""Score given sets against a real one (what `ganeval-score` runs): inputs (`ganeval.app.score_inputs`) -> features
-> one value per metric on the full sets (runs=1) or the subsample protocol (runs > 1) -> the pipeline's files.
Everything is checked (kinds, shapes, set sizes against the metric options, results directory) before any feature
is extracted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ganeval.app import pipeline
from ganeval.app.plan import Options, Plan
from ganeval.app.score_inputs import InputSet, label_sets, load_input
from ganeval.app.paths import check_writable
from ganeval.hashing import array_identity
from ganeval.metrics.validation import check_scale
from ganeval.protocol import Block, Settings

log = logging.getLogger("ganeval")
EXTRACTORS = ("inception", "inception_spatial", "clip_l14_336", "dinov2", "clip", "pixels", "identity")
# what `--out` may hold after a score call: the pipeline's files and a sample grid per image input
OUTPUTS = ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "comparison.csv", "table.md", "table.tex",
           "verdict.md", "summary.png", "differences.png", "report.html", "samples_*.png")
DINOV2_DIMS = {"vits14": 384, "vitb14": 768, "vitl14": 1024, "vitg14": 1536}


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
    num_workers: int = 0  # DataLoader worker processes decoding image files
    size: int | None = None  # resize image files to size×size (PIL bilinear, as ganeval.data.folder's size=)
    layout: str = "auto"  # how 4-D image arrays are laid out: auto (one that fits both refused), nchw, nhwc
    resize: str | None = None  # preprocessing mode (None: the extractor's default, legacy_pytorch / pil)
    save_ref: str | None = None  # write REAL's features, moments and provenance here (ganeval's reference .npz)
    save_stats: str | None = None  # write REAL's moments here as pytorch-fid's {mu, sigma} .npz
    out: str | None = None  # results directory (None: nothing written)
    overwrite: bool = False
    plots: bool = True
    samples: bool = True  # a grid PNG of a few images of each image input in `out` (ganeval.app.score_samples)
    progress: bool = True
    command: str = ""  # the command line, recorded
    protocol: str | None = None  # --protocol NAME (`ganeval.app.score_protocol`): its values already applied


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
    saved: list[Path] = field(default_factory=list)  # files written by --save-ref / --save-stats


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
    if request.weights is not None and name not in ("inception", "inception_spatial", "clip_l14_336", "dinov2", "clip"):
        raise ValueError(f"--weights is for --features inception, inception_spatial, dinov2, clip or clip_l14_336, "
                         f"not {name}")
    modes = {"inception": ("legacy_pytorch", "legacy_tensorflow", "clean"), "dinov2": ("pil", "torch")}
    modes["inception_spatial"] = modes["inception"]
    if request.resize is not None and request.resize not in modes.get(name, ()):
        raise ValueError(f"--resize {request.resize} is not a preprocessing mode of --features {name}"
                         + (f" (one of {', '.join(modes[name])})" if name in modes else " (it resizes nothing)"))
    if name == "inception":
        ex = InceptionExtractor(dims=request.dims, weights=request.weights, download=request.download,
                                resize=request.resize or True)
    elif name == "inception_spatial":
        ex = InceptionExtractor(weights=request.weights, download=request.download, resize=request.resize or True,
                                output="spatial")
    elif name == "clip_l14_336":
        from ganeval.features import ClipExtractor

        ex = ClipExtractor(arch="ViT-L-14-336", pretrained="openai", weights=request.weights, download=request.download)
    elif name == "dinov2":
        from ganeval.features import DinoV2Extractor

        ex = DinoV2Extractor(weights=request.weights, download=request.download, resize=request.resize or "pil")
    elif name == "clip":
        from ganeval.features import ClipExtractor

        ex = ClipExtractor(weights=request.weights, download=request.download)
    else:
        ex = PixelsExtractor() if name == "pixels" else IdentityExtractor()
    if request.metrics is not None:
        from ganeval.metrics.registry import Metrics

        pipeline.check_extractor_feeds(Metrics({k: dict(v or {}) for k, v in request.metrics.items()}), ex, name)
    return ex


def feature_dim(extractor: Any, s: InputSet) -> int:
    """The dimension of `s`'s features through `extractor`, known before extracting (inception: its block's)."""
    from ganeval.data.images import to_nchw

    if extractor.name == "inception":
        return 17 * 17 * 7 if extractor.output == "spatial" else int(extractor.dims)
    if extractor.name == "clip":
        from ganeval.features.pretrained import import_extra

        return int(import_extra("open_clip", "clip", "features=clip").get_model_config(extractor.arch)["embed_dim"])
    if extractor.name == "dinov2":
        return DINOV2_DIMS[extractor.arch]
    if extractor.name == "pixels":
        return int(np.prod(to_nchw(np.empty((1, *s.shape[1:]), np.uint8)).shape[1:]))
    return int(np.prod(s.shape[1:]))


def check_inputs_fakes(fakes: list[InputSet], extractor: Any) -> int:
    """Each generated set's shape for the extractor and one feature dimension for all; returns it."""
    for s in fakes:
        extractor.check_input(s.shape, s.dtype)
    dims = {feature_dim(extractor, f) for f in fakes}
    if len(dims) > 1:
        raise ValueError(f"the generated sets give features of dimensions {sorted(dims)} through {extractor.name}: "
                         "give sets of one shape")
    return dims.pop()


def check_inputs(real: InputSet, fakes: list[InputSet], extractor: Any, settings: Settings) -> None:
    """Each input's shape for the extractor and the feature dimensions the metrics need, before extraction."""
    from ganeval.app.score_notes import chw, size_hint
    from ganeval.app.score_reference import check_reference, precomputed

    for s in (real, *fakes):
        if not precomputed(s):
            extractor.check_input(s.shape, s.dtype)
            if not s.images and s.array is not None:  # magnitudes the metrics cannot hold: refused
                check_scale(s.arg, s.array, settings.metrics.reaches(), settings.sample_size)
    if real.reference is not None:
        dim = check_inputs_fakes(fakes, extractor)
        check_reference(real.reference, real.arg, extractor, list(settings.metrics), dim)
        if precomputed(real):
            return
    same_dim = [m.name for m, _ in settings.metrics.ordered() if m.same_dim]
    d = feature_dim(extractor, real)
    for f in fakes:
        if same_dim and feature_dim(extractor, f) != d:
            raise ValueError(
                f"{', '.join(n.upper() for n in same_dim)} need{'s' if len(same_dim) == 1 else ''} features of one "
                "dimension, but through "
                f"{extractor.name} REAL {real.describe()} gives {d} and FAKE {f.describe()} gives "
                f"{feature_dim(extractor, f)}: give sets of one shape (images of one size and channel count)"
                + (", or --features inception, which resizes every image" if extractor.name == "pixels" else "")
                + (size_hint(*(chw(s) for s in (real, f))) if real.images and f.images else ""))


def make_settings(request: ScoreRequest, real: InputSet, fakes: list[InputSet], notes: list[str]) -> Settings:
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
    from ganeval.app.score_notes import default_kid_subset, whole_set_note

    sizes = {f"REAL {real.arg}": len(real), **{f"FAKE {f.arg}": len(f) for f in fakes}}
    chosen = {k: dict(v or {}) for k, v in request.metrics.items()}
    kid_note = default_kid_subset(chosen, sizes, request.runs, request.sample_size)
    metrics = Metrics(chosen)
    if request.runs == 1:
        from ganeval.protocol.full import check_full_sizes

        check_full_sizes(sizes, metrics)
    settings = Settings(runs=request.runs, sample_size=request.sample_size or len(real), metrics=metrics,
                        seed=request.seed, confidence=request.confidence, device=request.device,
                        progress=request.progress)
    if request.runs > 1:
        settings.check_pools(sizes)
    notes += [n for n in (kid_note, whole_set_note(sizes, request.runs, request.sample_size)) if n]
    return settings


def make_plan(request: ScoreRequest, real: InputSet, fakes: list[InputSet], extractor: Any,
                 settings: Settings) -> Plan:
    """The plan of a score call: its config (inputs, extractor, protocol), hash, content and record."""
    config: dict[str, Any] = {
        "real": real.arg, "fakes": {f.name: f.arg for f in fakes},
        "sets": {"real": len(real), **{f.name: len(f) for f in fakes}},
        "features": extractor.identity(), "metrics": settings.metrics.as_dict(), "runs": settings.runs,
        "sample_size": settings.sample_size if settings.runs > 1 else None,
        "full_sets": settings.runs == 1, "confidence": settings.confidence, "seed": settings.seed,
        "device": settings.device, "batch_size": request.batch_size, "results_dir": request.out,
        "cache_dir": request.cache_dir, "overwrite": request.overwrite, "plots": request.plots,
        "progress": request.progress,
    }
    plan = score_plan(request, config, settings)
    extract_first(plan, request, [real, *fakes], extractor)
    plan.content["data"]["real"] = content_identity(request, real)
    for f in fakes:
        plan.content["generators"][f.name] = content_identity(request, f)
    plan.record.extractor = plan.content["extractor"] = config["features"]
    plan.record.generators = {f.name: {"input": f.arg, "source": f.source, **plan.content["generators"][f.name]}
                             for f in fakes}
    plan.record.command = request.command or None
    return plan


def score_plan(request: ScoreRequest, config: dict[str, Any], settings: Settings) -> Plan:
    """The plan of a score call (the same `Plan` as the Hydra app's): its settings, options, config and folder."""
    options = Options(batch_size=request.batch_size, cache_dir=request.cache_dir, plots=request.plots,
                      overwrite=request.overwrite)
    return Plan(name="score", results_dir=Path(request.out or "."), device=str(settings.device), config=config,
                settings=settings, study="ganeval.app.score", options=options,
                outputs=OUTPUTS if request.out is not None else ())


def content_identity(request: ScoreRequest, s: InputSet) -> dict[str, Any]:
    """`array_identity` of an input's array (full SHA-256), for a streamed source from one decoding pass (on rank 0 under
    torchrun, remembered in --cache-dir): the same value as for the array `ganeval.data.folder` would give."""
    if s.stream is None:
        return array_identity(s.array)  # type: ignore[arg-type]
    from ganeval.features.streaming import shared_content

    c = shared_content(s.stream, request.batch_size, request.num_workers, request.cache_dir, request.progress)
    return {"shape": c["shape"], "dtype": c["dtype"], "sha256": c["sha256"]}


def extract_first(plan: Plan, request: ScoreRequest, sets: list[InputSet], extractor: Any) -> None:
    """Extract now the streamed sets whose content is not known yet (a first run over these files, one process, see
    `ganeval.features.streaming.one_pass`): their content, which the plan needs, is hashed on that same decoding
    pass instead of a pass of its own before the extraction. `extract` returns the kept features. Not when --out
    already holds files (and no --overwrite): whether they are this run's needs the content, and that refusal comes
    before any extraction (the content is then hashed in a pass of its own, as before)."""
    from ganeval.features.streaming import one_pass

    out = Path(request.out).expanduser() if request.out is not None else None
    if out is not None and not request.overwrite and out.is_dir() and any(out.iterdir()):
        return
    for s in sets:
        if s.stream is not None and s.features is None and one_pass(s.stream, extractor, request.num_workers,
                                                                    request.cache_dir):
            s.features = extract(plan, request, s, extractor)


def extract(plan: Plan, request: ScoreRequest, s: InputSet, extractor: Any) -> np.ndarray | None:
    """Features of one input through the extractor (cached in `cache_dir` when given); a reference's as they are; a
    streamed source is sharded over torchrun's ranks and its features returned on rank 0 only (None elsewhere)."""
    from ganeval.app.score_reference import precomputed
    from ganeval.features import extract_with_info

    if precomputed(s):
        return np.asarray(s.array, np.float32)
    if s.features is not None:
        return s.features
    with plan.stage("features"):  # a streamed set's content hashed on this pass when not known yet (`extract_first`)
        feats, _ = extract_with_info(s.stream if s.stream is not None else s.array, extractor,
                                     batch_size=request.batch_size, device=plan.device, cache_dir=request.cache_dir,
                                     num_workers=request.num_workers, progress=request.progress, hash_content=True)
    return feats


def score_sets(request: ScoreRequest) -> ScoreResult | None:
    """Load and check every input, extract features, score (full sets or protocol) and, with `out`, write the
    pipeline's files (runs.csv, runs.meta.json, summary.csv/json, tables, plots, report.html)."""
    from ganeval.app import score_protocol as sp, score_reference as sr
    from ganeval.protocol.full import FULL_SET_NOTE, FullSetTask
    from ganeval.protocol.loop import run_loop

    if not request.fakes and request.save_ref is None and request.save_stats is None:
        raise ValueError("give at least one FAKE set to score against REAL (or --save-ref/--save-stats to write REAL's)")
    if request.out is not None:
        from ganeval.results.outputs import check_foreign

        check_writable(Path(request.out), "--out")
        check_foreign(request.out, request.overwrite)  # a folder of the user's own files, as the app refuses it
    sr.check_save(request)
    from ganeval.features.distributed import is_main

    main = is_main()  # under torchrun: every rank extracts its share, rank 0 alone scores and writes (others: None)
    real = load_input(request.real, request.size, request.layout) if request.protocol is None else sp.load_real(request)
    fakes = [load_input(f, request.size, request.layout) for f in request.fakes]
    sp.check_fakes(request, fakes)  # --protocol's n_generated
    sr.refuse_fake_references(fakes)
    if real.reference is not None and real.reference.moments_only:
        if request.save_ref is not None or request.save_stats is not None:
            raise ValueError(f"--save-ref/--save-stats write REAL's features, but REAL {real.arg} holds moments only")
        label_sets(fakes)
        return sr.score_moments(request, real, fakes)
    if not fakes:
        return sr.save_only(request, real)
    label_sets(fakes)
    notes: list[str] = []
    settings = make_settings(request, real, fakes, notes)
    extractor = make_extractor(request, fakes if sr.precomputed(real) else [real, *fakes])
    check_inputs(real, fakes, extractor, settings)
    if callable(getattr(extractor, "weights_path", None)):
        extractor.weights_path()  # missing Inception weights refused now (extraction resolves them first anyway)
    for note in notes:  # after every check: a refused command prints only why
        log.warning("%s", note)
    plan = make_plan(request, real, fakes, extractor, settings)
    full = settings.runs == 1
    results_dir = plan.results_dir if request.out is not None and main else None
    if results_dir is not None:
        pipeline.open_results(plan, protocol=not full)
        if request.samples:  # before the features: cheap (a few files decoded), and a refused path stops no long work
            from ganeval.app.score_samples import write_sample_grids

            write_sample_grids(results_dir, [real, *fakes], settings.seed)
    else:
        from ganeval.protocol.api import store_identity

        plan.set_config_hash(plan.identity() if full else store_identity(settings, plan.identity()))

    real_f = extract(plan, request, real, extractor)
    saved = sr.save_outputs(request, real, real_f, extractor) if main else []
    fakes_f = [({"model": f.name}, extract(plan, request, f, extractor)) for f in fakes]
    if not main:
        return None
    extras: dict[tuple[str, str], dict[str, float]] = {}
    with plan.stage("runs"):
        if full:
            task = FullSetTask(real_f, fakes_f, settings)
            rows = run_loop(task, settings, results_dir, plan.identity(), request.overwrite)
            extras = task.extras
        else:
            from ganeval.protocol import run_blocks

            rows = run_blocks([Block(real_f, fakes_f)], settings, results_dir, plan.identity(), request.overwrite)
    plan.record.seconds_per_run = plan.stage_seconds["runs"] / settings.runs
    summary, comparison, _ = pipeline.summarize(plan, rows)
    summary = sp.add_full_set(plan, request, real_f, fakes_f, summary)
    if full:
        plan.record.interval_covers = FULL_SET_NOTE
    if results_dir is not None:
        title = f"ganeval-score: {', '.join(f.name for f in fakes)} vs {real.name}"
        pipeline.write(plan, summary, comparison, title)
    return ScoreResult(summary, rows, comparison, extras, plan.record, real, fakes, results_dir, saved)
