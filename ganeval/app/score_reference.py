"""`ganeval-score` with reference files: a REAL given as a statistics file (pytorch-fid/TTUR, clean-fid, EDM2,
ADM, ganeval's own), and `--save-ref` / `--save-stats` to write them.

A moments-only REAL (mu, sigma) gives FID/FD as one value per generated set (runs=1) or an interval over
subsamples of the generated set only (runs > 1), labelled so; metrics that need the real rows are refused,
naming the file that would serve. A reference with features (ganeval's, clean-fid's `_kid.npz`) serves every
metric; an ADM batch is its images. Everything is checked before any feature is extracted.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ganeval.data.references import (
    Moments, Reference, ReferenceError, check_file_writable, read_reference, refuse_moment_key,
)
from ganeval.hashing import cut_short_form, shown_extractor

if TYPE_CHECKING:
    from ganeval.app.score_inputs import InputSet
    from ganeval.app.score_sets import ScoreRequest, ScoreResult

LAYOUT_NAMES = {"ganeval": "ganeval reference", "pytorch-fid": "pytorch-fid statistics", "clean-fid": "clean-fid statistics",
                "clean-fid-kid": "clean-fid KID features", "adm": "ADM reference batch", "edm2": "EDM2 reference"}


def reference_input(arg: str, file: str, key: str) -> "InputSet | None":
    """The input of a reference file (None: not a reference layout, load it as an array); `FILE:mu` refused."""
    from ganeval.app.score_inputs import InputSet, classify

    if key:
        refuse_moment_key(file, key)
        return None
    ref = read_reference(Path(file).expanduser())
    if ref is None:
        return None
    name, source = Path(file).stem, LAYOUT_NAMES[ref.layout]
    if ref.images is not None:
        return classify(InputSet(arg, name, source, ref.images, True, reference=ref))
    if ref.features is not None:
        return classify(InputSet(arg, name, source, ref.features, False, reference=ref))
    dim = next(iter(ref.moments.values())).dim
    return InputSet(arg, name, source, np.empty((0, dim), np.float32), False, reference=ref)


def precomputed(s: "InputSet") -> bool:
    """Whether an input is a reference's features (used as they are, not extracted)."""
    return s.reference is not None and s.reference.features is not None


def refuse_fake_references(fakes: list["InputSet"]) -> None:
    """A statistics file cannot be a generated set: its rows are not samples."""
    for f in fakes:
        if f.reference is not None and f.reference.moments_only:
            raise ReferenceError(f"FAKE {f.arg} is a {LAYOUT_NAMES[f.reference.layout]} file (moments only): generated "
                                 "sets are scored from their samples; give it as REAL, the generated images as FAKE")


def extractor_mode(extractor: Any) -> str | None:
    """The extractor's preprocessing mode (Inception: legacy_pytorch by default; DINOv2: pil), None for others."""
    return getattr(extractor, "resize_mode", None)


def reference_moments(ref: Reference, extractor: Any, arg: str) -> Moments:
    """The reference's moments for this extractor's feature space (EDM2: fid -> inception, fd_dinov2 -> dinov2)."""
    name = extractor.name
    if name in ref.moments:
        return ref.moments[name]
    if name == "identity" and len(ref.moments) == 1:
        return next(iter(ref.moments.values()))
    have = ", ".join(ref.moments)
    raise ReferenceError(f"REAL {arg} holds moments of {have} features, not {name}'s: give --features "
                         f"{next(iter(ref.moments)) if len(ref.moments) == 1 else 'inception or dinov2'} (and images as FAKE)")


def check_reference(ref: Reference, arg: str, extractor: Any, metrics: list[str], dim: int) -> None:
    """Refuse, before extraction, a reference that cannot serve: other dimension, other preprocessing mode, other
    extractor identity (ganeval's), or metrics needing real rows against moments alone."""
    if ref.images is not None:
        return  # the real images themselves: extracted like any set
    if ref.moments_only:
        need = [m for m in metrics if m != "fid"]
        if need:
            raise ReferenceError(
                f"{', '.join(m.upper() for m in need)} need the real set's features, but REAL {arg} holds only moments "
                "(mu, sigma), which serve FID/FD alone: give --metrics fid, or as REAL the real images, a ganeval "
                "reference written by `ganeval-score --save-ref REF.npz REAL_IMAGES` (features and moments), or for "
                "KID clean-fid's matching _kid.npz")
        got = reference_moments(ref, extractor, arg).dim
    else:
        got = int(ref.features.shape[1])  # type: ignore[union-attr]
    if got != dim:
        raise ReferenceError(f"REAL {arg} holds {got}-d statistics but --features {extractor.name} gives {dim}-d "
                             "features: the file was made by another extractor (or block); choose the matching "
                             "--features/--dims or another reference")
    mode = extractor_mode(extractor)
    if ref.mode is not None and mode is not None and ref.mode != mode and extractor.name == (ref.space or "inception"):
        raise ReferenceError(f"REAL {arg} was made with the '{ref.mode}' preprocessing but the features would be made "
                             f"with '{mode}': add --resize {ref.mode} (mixing them moves FID by whole points)")
    if ref.layout == "ganeval" and extractor.name != "identity":
        made = (ref.meta.get("extractor") or {})
        now = extractor.identity()
        diff = sorted(k for k in made.keys() | now.keys() if not same_made(k, made.get(k), now.get(k), ref.meta))
        if diff:
            made, now = shown_extractor(made), shown_extractor(now)
            raise ReferenceError(f"REAL {arg} was made by another extractor than --features {extractor.name} "
                                 f"({', '.join(f'{k}: {made.get(k)!r} vs {now.get(k)!r}' for k in diff[:3])}): give "
                                 "the same --features/--dims/--resize/--weights, or write the reference again")


def same_made(key: str, made: Any, now: Any, meta: dict[str, Any]) -> bool:
    """Whether a reference's recorded extractor field is today's: equal, or its "weights" as older versions recorded
    it (cut to 8/16 hex digits, a prefix of today's SHA-256; the full `weights_sha256` beside it, when there, equal)."""
    if key != "weights" or made == now:
        return bool(made == now)
    return cut_short_form(made, now) and meta.get("weights_sha256") in (None, now)


def score_moments(request: "ScoreRequest", real: "InputSet", fakes: list["InputSet"]) -> "ScoreResult":
    """FID/FD of each generated set against a moments-only REAL (see `ganeval.protocol.reference`)."""
    from ganeval.app import pipeline
    from ganeval.app.score_sets import (ScoreResult, check_inputs_fakes, content_identity, extract, extract_first,
                                        make_extractor, score_plan)
    from ganeval.app.paths import check_writable as check_dir_writable
    from ganeval.hashing import sha256_file
    from ganeval.metrics.registry import Metrics, integer
    from ganeval.protocol import Settings
    from ganeval.protocol.loop import run_loop
    from ganeval.protocol.reference import MOMENTS_ONLY_NOTE, MomentsTask
    from ganeval.protocol.settings import check_value

    ref = real.reference
    assert ref is not None
    metrics = Metrics({k: dict(v or {}) for k, v in request.metrics.items()})
    check_value("--runs", request.runs, integer(1))
    extractor = make_extractor(request, fakes)
    dim = check_inputs_fakes(fakes, extractor)
    check_reference(ref, real.arg, extractor, list(metrics), dim)
    mom = reference_moments(ref, extractor, real.arg)
    sizes = {f"FAKE {f.arg}": len(f) for f in fakes}
    if request.runs > 1 and request.sample_size is None:
        raise ValueError(f"--runs {request.runs} draws subsamples of the generated sets: give their size with "
                         "--sample-size M, or --runs 1 to score the full sets")
    if request.runs == 1 and request.sample_size is not None:
        raise ValueError("--sample-size applies to the subsample protocol (--runs > 1); --runs 1 scores the full sets")
    for what, n in sizes.items():
        if n < 2 or (request.sample_size is not None and request.sample_size > n):
            raise ValueError(f"{what} has {n} rows: FID needs at least 2"
                             + (f" and --sample-size {request.sample_size} at most {n}" if request.sample_size else ""))
    settings = Settings(runs=request.runs, sample_size=request.sample_size or min(len(f) for f in fakes),
                        metrics=metrics, seed=request.seed, confidence=request.confidence, device=request.device,
                        progress=request.progress)
    if request.out is not None:
        check_dir_writable(Path(request.out), "--out")
    ident = extractor.identity()
    config: dict[str, Any] = {
        "real": real.arg, "reference": {"layout": ref.layout, "moments_only": True, "space": extractor.name},
        "fakes": {f.name: f.arg for f in fakes}, "sets": {f.name: len(f) for f in fakes},
        "features": ident, "metrics": settings.metrics.as_dict(), "runs": settings.runs,
        "sample_size": settings.sample_size if settings.runs > 1 else None, "full_sets": settings.runs == 1,
        "confidence": settings.confidence, "seed": settings.seed, "device": settings.device,
        "batch_size": request.batch_size, "results_dir": request.out, "cache_dir": request.cache_dir,
        "overwrite": request.overwrite, "plots": request.plots, "progress": request.progress,
    }
    plan = score_plan(request, config, settings)
    plan.content["data"]["real"] = {"file_sha256": sha256_file(Path(real.arg).expanduser())}
    extract_first(plan, request, fakes, extractor)
    for f in fakes:
        plan.content["generators"][f.name] = content_identity(request, f)
    plan.record.extractor = plan.content["extractor"] = ident
    plan.record.generators = {f.name: {"input": f.arg, "source": f.source, **plan.content["generators"][f.name]}
                             for f in fakes}
    plan.record.command = request.command or None
    results_dir = plan.results_dir if request.out is not None else None
    if results_dir is not None:
        pipeline.open_results(plan, protocol=False)
    else:
        plan.set_config_hash(plan.identity())
    fakes_f = [({"model": f.name}, extract(plan, request, f, extractor)) for f in fakes]
    if any(x is None for _, x in fakes_f):  # a torchrun rank other than 0: its share went to rank 0
        return None  # type: ignore[return-value]
    task = MomentsTask(mom.mu, mom.sigma, fakes_f, settings)
    with plan.stage("runs"):
        rows = run_loop(task, settings, results_dir, plan.identity(), request.overwrite)
    plan.record.seconds_per_run = plan.stage_seconds["runs"] / settings.runs
    summary, comparison, _ = pipeline.summarize(plan, rows)
    plan.record.interval_covers = MOMENTS_ONLY_NOTE.format(ref=f"{real.arg} ({LAYOUT_NAMES[ref.layout]})")
    if results_dir is not None:
        pipeline.write(plan, summary, comparison, f"ganeval-score: {', '.join(f.name for f in fakes)} vs the moments "
                       f"of {real.name}")
    return ScoreResult(summary, rows, comparison, {}, plan.record, real, fakes, results_dir)


def check_save(request: "ScoreRequest") -> None:
    """--save-ref / --save-stats paths checked before any work (no links, no folders, no silent replacement)."""
    if request.save_ref is not None:
        check_file_writable(request.save_ref, "--save-ref", request.overwrite)
    if request.save_stats is not None:
        check_file_writable(request.save_stats, "--save-stats", request.overwrite)
    if request.save_ref is not None and request.save_stats is not None and \
            Path(request.save_ref).expanduser().resolve() == Path(request.save_stats).expanduser().resolve():
        raise ReferenceError("--save-ref and --save-stats name the same file: give two paths")


def save_outputs(request: "ScoreRequest", real: "InputSet", features: np.ndarray, extractor: Any) -> list[Path]:
    """Write REAL's features as --save-ref (ganeval's reference) and its moments as --save-stats (pytorch-fid's)."""
    from ganeval.features.reference import reference_meta, write_outputs
    from ganeval.hashing import array_identity

    if request.save_ref is None and request.save_stats is None:
        return []
    if precomputed(real):
        content = (real.reference.meta or {}).get("content_hash")
    elif real.stream is not None:
        content = real.stream.content(batch_size=request.batch_size, num_workers=request.num_workers,
                                      cache_dir=request.cache_dir)["sha256"]
    else:
        content = array_identity(real.array)["sha256"]
    write_outputs(features, reference_meta(extractor, len(features), content, real.arg), request.save_ref,
                  request.save_stats)
    return [Path(p) for p in (request.save_ref, request.save_stats) if p is not None]


def save_only(request: "ScoreRequest", real: "InputSet") -> "ScoreResult":
    """`ganeval-score --save-ref OUT REAL` without FAKE: extract REAL's features and write the files."""
    import pandas as pd

    from ganeval.app.score_sets import ScoreResult, make_extractor
    from ganeval.features import extract_with_info

    extractor = make_extractor(request, [real])
    if precomputed(real):
        feats = np.asarray(real.array, np.float32)
    else:
        extractor.check_input(real.shape, real.dtype)
        feats, _ = extract_with_info(real.stream if real.stream is not None else real.array, extractor,
                                     batch_size=request.batch_size, device=request.device, cache_dir=request.cache_dir,
                                     num_workers=request.num_workers, progress=request.progress, hash_content=True)
        if feats is None:  # a torchrun rank other than 0
            return None  # type: ignore[return-value]
    saved = save_outputs(request, real, feats, extractor)
    return ScoreResult(pd.DataFrame(), pd.DataFrame(), None, {}, None, real, [], None, saved)
