"""What a score call is asked (`ScoreRequest`) and everything checked on it before any feature is extracted: the
extractor against the inputs, the feature dimensions the metrics need, the protocol settings against the set sizes,
and the defaults adapted to small sets (with a note to print).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, MutableMapping, Sequence, cast

from ganeval.app import pipeline
from ganeval.app.score_inputs import InputSet, check_reference, precomputed
from ganeval.metrics.memory import check_memory
from ganeval.metrics.validation import check_scale
from ganeval.protocol import Settings
from ganeval.words import did_you_mean

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics


def default_metrics(real: Any) -> str:
    """imd,fid,kid; fid alone when REAL is a moments-only reference file (the others need real rows)."""
    from pathlib import Path

    from ganeval.data.references import ReferenceError, read_reference

    if not isinstance(real, (str, os.PathLike)):
        return "imd,fid,kid"  # an array, tensor or generator: rows
    try:
        ref = read_reference(Path(real).expanduser()) if Path(real).expanduser().is_file() else None
    except ReferenceError:
        ref = None  # reported when the input is loaded
    return "fid" if ref is not None and ref.moments_only else "imd,fid,kid"


def parse_metrics(text: str) -> dict[str, dict[str, Any]]:
    """'imd,fid' -> {'imd': {}, 'fid': {}}, each name checked against the metric registry."""
    from ganeval.metrics import get_metric

    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("--metrics is empty: name at least one of imd, fid, kid")
    for name in names:
        get_metric(name)
    if len(set(names)) < len(names):
        raise ValueError(f"--metrics {text} names a metric twice")
    return {n: {} for n in names}


def default_workers(given: int | None) -> int:
    """--num-workers, or min(8, CPU cores) decoding processes (0 on a one-core machine)."""
    if given is not None:
        return given
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 0 if cores <= 1 else min(8, cores)


class DefaultMetrics(dict):
    """The metrics `ganeval-score` scores when --metrics is not given (name -> options, --option applied): marked as
    such, since with sets of different dimension those needing one dimension are left out rather than refused."""


def given_metrics(metrics: str | Sequence[str] | Mapping[str, Mapping[str, Any] | None]) -> dict[str, dict[str, Any]]:
    """`score`'s metrics as name -> options: 'imd,fid' or a list of names (`parse_metrics`), or a mapping name ->
    options (None: the defaults), each option checked against the metric's table."""
    from ganeval.metrics import get_metric

    if isinstance(metrics, str):
        return parse_metrics(metrics)
    if not isinstance(metrics, Mapping):
        names = list(metrics)
        if not all(isinstance(n, str) for n in names):
            raise ValueError(f"metrics: give names (strings) or a mapping name -> options, got {names!r}")
        return parse_metrics(",".join(names))
    chosen = parse_metrics(",".join(str(k) for k in metrics))
    for name, options in metrics.items():
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"metrics: {name}'s options must be a mapping (or None), got {options!r}")
        chosen[str(name)] = dict(options or {})
        try:  # an unknown name or a bad value: refused here, before any input is read
            get_metric(str(name)).resolve(chosen[str(name)])
        except ValueError as e:
            raise ValueError(f"metrics: {e}") from None
    return chosen


@dataclass
class ScoreRequest:
    """What to score and how (the options of `ganeval-score`); checked by `score_sets` before any work."""

    real: Any  # a path or dataset name; from Python also an array, tensor or generator (`score_inputs.given_input`)
    fakes: Sequence[Any]
    labels: Sequence[str | None] = ()  # a model label per FAKE (None or absent: its name)
    said: Sequence[str] = ()  # how a Python caller writes each FAKE (fakes, fakes[0], fakes['a']; `InputSet.said`)
    features: str | None = None  # None: inception for images, identity for features
    metrics: Mapping[str, Mapping[str, Any] | None] = field(default_factory=lambda: {"imd": {}, "fid": {}, "kid": {}})
    runs: int = 1
    sample_size: int | None = None  # required with runs > 1
    confidence: float = 0.99
    seed: int = 0
    device: str | None = None
    batch_size: int | None = None  # None: `ganeval.features.extraction.default_batch_size` of the device
    weights: str | None = None  # Inception weights file (None: $GANEVAL_INCEPTION_WEIGHTS, torch hub cache, download)
    dims: int | None = None  # which of its dimensions an extractor gives (Inception's block; None: its default)
    download: bool = True  # may Inception weights be downloaded when found nowhere
    cache_dir: str | None = None  # feature cache (None: no cache)
    num_workers: int = 0  # DataLoader worker processes decoding image files
    size: int | None = None  # resize image files to size×size (PIL bilinear, as ganeval.data.folder's size=)
    layout: str = "auto"  # how 4-D image arrays are laid out: auto (one that fits both refused), nchw, nhwc
    pixels_size: int | None = None  # pixels: images with a side over it resized to it (None: PIXELS_SIZE; 0: never)
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
    n_generated: int | None = None  # rows drawn from a generator input
    vocab: int | None = None  # word-vector inputs (.vec, .vec.gz, .bin): their most frequent words read (None: all)
    real_features: str | None = None  # REAL through an extractor of its own (None: `features`), for IMD-like metrics
    real_weights: str | None = None  # the weights file of REAL's own extractor (`real_features`); `weights` then FAKE's
    default_metrics: bool = False  # `metrics` are the defaults: those needing one dimension left out where sets differ


PIXELS_SIZE = 32  # --features pixels: larger images resized to 32² (3072-d RGB rows, CIFAR-10's size)


def input_files(request: ScoreRequest) -> list[Path]:
    """The files and folders REAL and the FAKEs name (`FILE.npz:KEY` by its file; dataset names name none)."""
    out = []
    for arg in (request.real, *request.fakes):
        if not isinstance(arg, (str, os.PathLike)):  # arrays, tensors, generators: no file
            continue
        arg = os.fspath(arg)
        p = Path(arg).expanduser()
        if not p.exists() and ":" in arg:
            p = Path(arg.rpartition(":")[0]).expanduser()
        if p.exists():
            out.append(p)
    return out


def check_out_not_input(request: ScoreRequest) -> None:
    """Refuse --out naming an input folder or a folder inside one, whatever the flags (--overwrite too)."""
    if request.out is not None:
        from ganeval.app.paths import check_not_inside_inputs

        check_not_inside_inputs(request.out, input_files(request), "--out")


def check_outputs_not_inputs(request: ScoreRequest) -> None:
    """Refuse --save-ref/--save-stats naming (or resolving to, through links) an input, whatever the flags."""
    inputs = input_files(request)
    for flag, out in (("--save-ref", request.save_ref), ("--save-stats", request.save_stats)):
        p = Path(out).expanduser() if out is not None else None
        if p is None or not p.exists():
            continue
        for i in inputs:
            if p.resolve() == i.resolve() or os.path.samefile(p, i):
                raise ValueError(f"{flag} {out} is an input of this command ({i}): an output never replaces an input, "
                                 "with or without --overwrite; give another path")


def make_extractor(request: ScoreRequest, sets: list[InputSet]) -> Any:
    """The extractor asked for (default: inception for images, identity for features), made from its registry entry
    (`ganeval.features.base.REGISTRY`) and checked against the inputs; an extractor option it does not take is
    refused (`option_refusal`)."""
    from ganeval.features.base import REGISTRY

    kinds = {s.images for s in sets}
    if len(kinds) > 1:
        images = next(s for s in sets if s.images)
        feats = next(s for s in sets if not s.images)
        raise ValueError(f"{images.describe()} holds images but {feats.describe()} holds features: give every set "
                         "as images (folders, image arrays) or every set as feature arrays")
    images = kinds.pop()
    name = request.features or ("inception" if images else "identity")
    if name not in REGISTRY:
        raise ValueError(f"--features must be one of {', '.join(REGISTRY)}, got {name!r}"
                         + did_you_mean(name, REGISTRY, "--features {}"))
    entry = REGISTRY[name]
    if entry.cls.images and not images:
        raise ValueError(f"--features {name} extracts features from images, but the inputs are feature arrays "
                         f"(e.g. {sets[0].describe()}): drop --features, or give --features identity (the default for feature "
                         "arrays)")
    for option in EXTRACTOR_OPTIONS:
        value = getattr(request, option)
        if value is not None and not takes(entry, option, value):
            raise ValueError(option_refusal(option, value, name))
    options: dict[str, Any] = {}
    if name == "pixels":
        pixels_size = PIXELS_SIZE if request.pixels_size is None else request.pixels_size
        options["max_size"] = pixels_size or None
    if entry.weights:
        options.update(weights=request.weights, download=request.download)
    if request.resize is not None:
        options["resize"] = request.resize
    if request.dims is not None and len(entry.dims) > 1:  # --dims chooses among the dimensions it declares
        options["dims"] = request.dims
    ex = entry.make(**options)
    if request.metrics is not None:
        from ganeval.metrics.registry import Metrics

        pipeline.check_extractor_feeds(Metrics({k: dict(v or {}) for k, v in request.metrics.items()}), ex, name)
    return ex


EXTRACTOR_OPTIONS = ("weights", "resize", "dims", "pixels_size")  # `ScoreRequest`'s options of an extractor
NO_OWN_EXTRACTOR = ("--real-weights gives REAL's own extractor (--real-features NAME) its weights; without one, REAL "
                    "goes through --features too, whose weights --weights gives")


def takes(entry: Any, option: str, value: Any) -> bool:
    """Whether the extractor of registry entry `entry` takes the extractor option `option` with `value`: a weights
    file where it loads one, a preprocessing mode it declares, a dimension it gives, pixels' size."""
    if option == "weights":
        return bool(entry.weights)
    if option == "resize":
        return value in entry.resize
    if option == "dims":
        return value in entry.dims
    return bool(entry.name == "pixels")  # pixels_size


def option_refusal(option: str, value: Any, given: str) -> str:
    """The refusal of extractor option `option` (`value`) that the extractor(s) `given` ("pixels", or "pixels
    (--real-features) or identity (--features)") do not take, naming those that do."""
    from ganeval.features.base import REGISTRY

    takers = [n for n, e in REGISTRY.items() if takes(e, option, value)]
    listed = f"{', '.join(takers[:-1])} or {takers[-1]}" if len(takers) > 1 else "".join(takers)
    if option == "weights":
        return f"--weights is for --features {listed}, not {given}"
    if option == "resize":
        one = REGISTRY.get(given)
        return (f"--resize {value} is not a preprocessing mode of --features {given}"
                + ("" if one is None else f" (one of {', '.join(one.resize)})" if one.resize else " (it resizes nothing)"))
    if option == "dims":
        return (f"--dims {value} is a dimension of --features {listed}, not of {given}: drop it" if takers else
                f"--dims {value} is a dimension of no extractor: drop it")
    return f"--pixels-size sizes --features pixels, not {given}: drop it, or use --size N to resize every image file"


def side_requests(request: ScoreRequest, fake: str, real: str) -> tuple[ScoreRequest, ScoreRequest]:
    """FAKE's and REAL's requests when REAL goes through an extractor of its own (`real`, --real-features; FAKE
    through `fake`, --features or its default): each extractor option reaches the extractor(s) that take it and is
    refused where neither does. `--weights` where both load a weights file is refused (a file is one network's):
    `--real-weights` gives REAL's, `--weights` then FAKE's."""
    import dataclasses

    from ganeval.features.base import REGISTRY

    sides = {"fake": REGISTRY[fake], "real": REGISTRY[real]}
    kept: dict[str, dict[str, Any]] = {"fake": {}, "real": {}}
    for option in EXTRACTOR_OPTIONS:
        value = getattr(request, option)
        if value is None or option == "weights" and request.real_weights is not None:
            continue  # --weights beside --real-weights: FAKE's alone (checked by `make_extractor`)
        taken = {side for side, entry in sides.items() if takes(entry, option, value)}
        if not taken:
            raise ValueError(option_refusal(option, value, f"{fake} (--features) or {real} (--real-features)"))
        if option == "weights" and len(taken) == 2:
            raise ValueError(f"--weights {value}: {real} (--real-features, for REAL) and {fake} (--features, for "
                             f"FAKE) both load a weights file: give {real}'s with --real-weights FILE and {fake}'s "
                             "with --weights FILE")
        for side in set(sides) - taken:
            kept[side][option] = None
    if request.real_weights is not None:
        if not sides["real"].weights:
            raise ValueError(option_refusal("weights", request.real_weights, real).replace(
                "--weights is for --features", "--real-weights is for --real-features", 1))
        kept["real"]["weights"] = request.real_weights
    return (dataclasses.replace(request, **kept["fake"], real_weights=None),
            dataclasses.replace(request, features=real, **kept["real"], real_weights=None))


def feature_dim(extractor: Any, s: InputSet) -> int | None:
    """The dimension of `s`'s features through `extractor`, known before extracting (None: known only after)."""
    return extractor.feature_dim(s.shape)


def check_inputs_fakes(fakes: list[InputSet], extractor: Any) -> int | None:
    """Each generated set's shape for the extractor and one feature dimension for all; returns it."""
    for s in fakes:
        extractor.check_input(s.shape, s.dtype)
    dims = {feature_dim(extractor, f) for f in fakes}
    if len(dims) > 1:
        # an extractor knows every set's dimension or none's (None): never both
        raise ValueError(f"the generated sets give features of dimensions {sorted(cast('set[int]', dims))} through {extractor.name}: "
                         "give sets of one shape")
    return dims.pop()


def check_inputs(real: InputSet, fakes: list[InputSet], extractor: Any, settings: Settings,
                 real_extractor: Any = None) -> None:
    """Each input's shape for its extractor (REAL's: `real_extractor`, default `extractor`) and the feature dimensions
    the metrics need, before extraction."""
    real_ex = extractor if real_extractor is None else real_extractor
    for s in (real, *fakes):
        if not precomputed(s):
            (real_ex if s is real else extractor).check_input(s.shape, s.dtype)
            if not s.images and s.array is not None:  # magnitudes the metrics cannot hold: refused
                check_scale(s.arg, s.array, cast("Metrics", settings.metrics).reaches(), settings.sample_size)
    if real.reference is not None:
        dim = check_inputs_fakes(fakes, extractor)
        check_reference(real.reference, real.arg, extractor, list(settings.metrics), dim)
        if precomputed(real):
            return
    same_dim = [m.name for m, _ in cast("Metrics", settings.metrics).ordered() if m.same_dim]
    d = feature_dim(real_ex, real)
    for f in fakes:
        if same_dim and feature_dim(extractor, f) != d:
            images = real.images and f.images
            through = f"through {extractor.name} " if extractor.images else ""  # feature rows are taken as they are
            raise ValueError(
                f"{', '.join(n.upper() for n in same_dim)} need{'s' if len(same_dim) == 1 else ''} features of one "
                f"dimension, but {through}{real.named(True)} ({real.contents()}) gives {d} and {f.named(False)} "
                f"({f.contents()}) gives {feature_dim(extractor, f)}: choose only dimension-free metrics "
                f"({free_labels()}) to compare them as they are"
                # images can be made one shape; feature rows (word vectors, layers) have the dimension they have
                + (", or give sets of one shape (images of one size and channel count)" if images else "")
                + (", or --features inception, which resizes every image" if extractor.name == "pixels" else "")
                + (size_hint(*(chw(s) for s in (real, f))) if images else ""))
    rows = max(len(s) for s in (real, *fakes)) if settings.runs == 1 else settings.sample_size
    widest = max([x for x in (d, *(feature_dim(extractor, f) for f in fakes)) if x is not None], default=None)
    if widest is not None:  # else known only after extraction (an extractor that declares no `feature_dim`)
        check_memory(settings.metrics, rows, widest, settings.device, settings.workers, memory_way_out(extractor))


def two_spaces(request: ScoreRequest, real_extractor: Any, extractor: Any) -> str | None:
    """REAL and the FAKEs through two extractors (--real-features) are two feature spaces: metrics needing one are
    refused when chosen and left out of the default metrics (the note saying so is returned)."""
    from ganeval.metrics.registry import REGISTRY

    need = [n for n in request.metrics if REGISTRY[n].same_dim]
    if not need:
        return None
    labels = ", ".join(REGISTRY[n].unscaled_label for n in need)
    where = (f"REAL goes through {real_extractor.name} and FAKE through {extractor.name} (--real-features): two "
             "feature spaces")
    if not request.default_metrics or len(need) == len(request.metrics):
        raise ValueError(f"{labels} need{'s' if len(need) == 1 else ''} one feature space, but {where}; choose only "
                         f"dimension-free metrics ({free_labels()})")
    request.metrics = {k: v for k, v in request.metrics.items() if k not in need}
    return (f"note: {where}: {labels} need{'s' if len(need) == 1 else ''} one and {'is' if len(need) == 1 else 'are'} "
            f"left out; scoring {', '.join(REGISTRY[n].unscaled_label for n in request.metrics)}")


def free_labels() -> str:
    """The dimension-free metrics' labels, for messages ("IMD, Vendi")."""
    from ganeval.metrics.dims import dimension_free
    from ganeval.metrics.registry import REGISTRY

    return ", ".join(REGISTRY[n].unscaled_label for n in dimension_free())


def set_dims(real: InputSet, fakes: list[InputSet], extractor: Any, real_extractor: Any) -> dict[str, int | None]:
    """Each set's feature dimension before extraction, by `InputSet.named` ("REAL ARG"; None: known only after)."""
    return {real.named(True): None if precomputed(real) else feature_dim(real_extractor, real),
            **{f.named(False): feature_dim(extractor, f) for f in fakes}}


def default_metrics_for_dims(request: ScoreRequest, dims: Mapping[str, int | None]) -> str | None:
    """With the default metrics and sets of different dimension, those needing one dimension left out of
    `request.metrics`; the note saying so (None: nothing left out). Metrics the user chose are checked by
    `check_inputs` instead (refused, naming them)."""
    from ganeval.metrics.dims import fit_metrics
    from ganeval.metrics.registry import Metrics

    if not request.default_metrics or None in dims.values():
        return None
    chosen = Metrics({k: dict(v or {}) for k, v in request.metrics.items()})
    kept, note = fit_metrics(chosen, dims, chosen=False)  # type: ignore[arg-type]
    if note is not None:
        request.metrics = {k: v for k, v in request.metrics.items() if k in kept}
    return note


def memory_way_out(extractor: Any) -> str:
    """What to change when the metrics cannot fit, in ganeval-score's flags: the pixels' size, or fewer rows or
    dimensions."""
    if extractor.name == "pixels":
        return (f"give pixels a smaller size (--pixels-size {PIXELS_SIZE}, the default, resizes larger images to "
                f"{PIXELS_SIZE}²) or --features inception")
    return "score fewer rows (--runs N --sample-size M) or features of fewer dimensions"


KID_SUBSET_DEFAULT = 1000  # kid's option table default (checked against it in the tests)


def default_kid_subset(metrics: MutableMapping[str, dict[str, Any]], sizes: Mapping[str, int], runs: int,
                       sample_size: int | None) -> str | None:
    """Without `--option kid.subset_size`, KID's subsets hold min(1000, rows scored per set): the smallest set on
    full sets (runs=1), the sample size with runs > 1. Sets it in `metrics` and returns the note to print (None when
    the default 1000 fits or the user chose a size)."""
    if "kid" not in metrics or "subset_size" in (metrics["kid"] or {}):
        return None
    rows = min(sizes.values()) if runs == 1 or sample_size is None else sample_size  # too big: refused later
    if rows >= KID_SUBSET_DEFAULT or rows < 2:
        return None  # fits, or too small for any metric (refused with its own message)
    metrics["kid"] = {**(metrics["kid"] or {}), "subset_size": rows}
    what = "the smallest set" if runs == 1 or sample_size is None else "--sample-size"
    return (f"note: KID's subsets hold {rows} rows ({what}; the default is {KID_SUBSET_DEFAULT}): KID is comparable "
            f"only with KID at the same subset size; choose it with --option kid.subset_size=N")


def whole_set_note(sizes: Mapping[str, int], runs: int, sample_size: int | None) -> str | None:
    """With runs > 1, the note for sets whose every row each run draws (sample size = the set's size): the runs then
    score the same rows of them, so an interval says nothing about other samples of those sets. None otherwise."""
    if runs < 2 or sample_size is None:
        return None
    whole = [name for name, n in sizes.items() if n == sample_size]
    if not whole:
        return None
    smaller = max(2, min(sizes.values()) // 2)
    return (f"note: --sample-size {sample_size} is every row of {' and '.join(whole)}: each run scores the same rows "
            f"of {'it' if len(whole) == 1 else 'them'}, so the intervals cover only what else varies (IMD's probes, "
            f"KID's subsets{', the other sets' if len(whole) < len(sizes) else ''}), not other samples; for "
            f"intervals over subsamples draw fewer rows, e.g. --sample-size {smaller}")


def chw(s: Any) -> tuple[str, tuple[int, int, int], bool]:
    """(argument, (C, H, W) of its images, streamed from image files) of an image `InputSet`, for `size_hint`."""
    import numpy as np

    from ganeval.data.images import to_nchw

    c, h, w = to_nchw(np.empty((1, *s.shape[1:]), np.uint8)).shape[1:]
    return s.arg, (int(c), int(h), int(w)), s.stream is not None


def size_hint(real: tuple[str, tuple[int, int, int], bool], fake: tuple[str, tuple[int, int, int], bool]) -> str:
    """', or --size N (...)' when both sets are image files (folders, zips, tars: `--size` resizes only those, and
    refuses arrays) of one channel count and REAL's images are square; '' otherwise. Each set is (argument, (C, H, W),
    streamed from files)."""
    (_, (rc, rh, rw), r_files), (_, (fc, _, _), f_files) = real, fake
    if rc != fc or not (r_files and f_files) or rh != rw:
        return ""
    return f", or --size {rh} (every image file resized to {rh}×{rh}, REAL's size)"


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
    sizes = {real.named(True): len(real), **{f.named(False): len(f) for f in fakes}}
    chosen = {k: dict(v or {}) for k, v in request.metrics.items()}
    kid_note = default_kid_subset(chosen, sizes, request.runs, request.sample_size)
    metrics = Metrics(chosen)
    if request.runs == 1:
        from ganeval.protocol.full import check_full_sizes

        check_full_sizes(sizes, metrics, real=real.named(True))
    settings = Settings(runs=request.runs, sample_size=request.sample_size or len(real), metrics=metrics,
                        seed=request.seed, confidence=request.confidence, device=request.device,
                        progress=request.progress, subsamples=request.runs > 1)
    if request.runs > 1:
        settings.check_pools(sizes)
    notes += [n for n in (kid_note, whole_set_note(sizes, request.runs, request.sample_size)) if n]
    return settings
