"""Score given sets against a real one (what `ganeval-score` runs): inputs (`ganeval.app.score_inputs`), checked
(`ganeval.app.score_request`) -> features -> one value per metric on the full sets (runs=1) or the subsample protocol
(runs > 1) -> the pipeline's files; against a moments-only reference, FID/FD of the generated sets; `--save-ref` /
`--save-stats` write REAL's reference files.
"""

from __future__ import annotations

import argparse
import math
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence, cast

import numpy as np
import pandas as pd

from ganeval.app import pipeline
from ganeval.app import score_protocol as sp
from ganeval.app.paths import check_writable
from ganeval.app.run_files import first_missing, remove_made
from ganeval.app.plan import Options, Plan
from ganeval.app.python_words import in_python, speaks_python
from ganeval.app.score_inputs import (
    LAYOUT_NAMES, InputSet, check_reference, fake_inputs, given_input, label_sets, precomputed, reference_moments,
    refuse_fake_references,
)
from ganeval.app.score_request import (
    ScoreRequest, check_inputs, check_out_not_input, check_outputs_not_inputs, check_inputs_fakes,
    NO_OWN_EXTRACTOR, default_metrics_for_dims, make_extractor, make_settings, set_dims, side_requests, two_spaces,
)
from ganeval.data.references import ReferenceError, check_file_writable
from ganeval.hashing import array_identity
from ganeval.results.summary import SE_COLUMN
from ganeval.protocol import Block, Settings

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics


log = logging.getLogger("ganeval")


# what `--out` may hold after a score call: the pipeline's files and a sample grid per image input
OUTPUTS = ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "comparison.csv", "table.md", "table.tex",
           "verdict.md", "summary.png", "differences.png", "report.html", "samples_*.png")


@dataclass(repr=False)
class ScoreResult:
    """What `ganeval.score` returns: the numbers, as a script, a notebook and a results folder read them.

    `r["fid"]` is a metric's number (its value on the full sets; with `runs` > 1 the mean over runs) for the one
    generated set, `r["mine", "fid"]` for one of several (a KeyError names what there is otherwise); `print(r)` shows
    the command's lines and the comparisons in words; a notebook shows a table; `r.to_dict()` is `ganeval-score
    --json`'s document; `r.table()` the summary DataFrame.

    Attributes:
        summary: One row per model and metric: mean, std, ci_low, ci_high, half_width, n_runs, sample_size,
            confidence (docs/experiments.md lists every column).
        runs: The per-run values: run, model, metric, value.
        comparison: The paired differences of each two generated sets per metric (with `runs` > 1 and several
            sets; comparison.csv's columns), else None or empty.
        extras: (model, metric) → what a full-set value has besides itself: KID's std over subsets, IMD's
            `se` (the standard error of its random probes, also `r["imd"].se`).
        record: The run record (summary.json): the config, extractor identity, each set's dimension, versions.
        real: The real set as loaded (its label, where it came from, its shape).
        fakes: The generated sets as loaded, in the order given.
        out: The results folder (`out=`), or None.
        saved: The files `save_ref` / `save_stats` wrote.
        stages: Seconds by stage: scan, hash, features, metrics, writing.
        extracted: Images that went through the extractor (not read from the cache).
        from_cache: Rows whose features were read from `cache_dir`.

    Examples:
        >>> import numpy as np
        >>> import ganeval
        >>> real = np.random.default_rng(0).normal(size=(500, 8)).astype(np.float32)
        >>> r = ganeval.score(real, {"a": real + 0.3, "b": real * 1.2}, metrics="fid", progress=False)
        >>> round(r["a", "fid"], 2), round(r["b", "fid"], 2)
        (0.72, 0.32)
        >>> r["fid"]
        Traceback (most recent call last):
        KeyError: "'fid' was scored for 2 generated sets: give one, e.g. r['a', 'fid']"
        >>> print(r)
        a  FD_features 0.72
        b  FD_features 0.319628
    """

    summary: pd.DataFrame
    runs: pd.DataFrame
    comparison: pd.DataFrame | None
    extras: dict[tuple[str, str], dict[str, float]]
    record: Any
    real: InputSet
    fakes: list[InputSet]
    out: Path | None
    saved: list[Path] = field(default_factory=list)  # files written by --save-ref / --save-stats
    stages: dict[str, float] = field(default_factory=dict)  # seconds by stage (`stage_times`)
    extracted: int = 0  # images through the extractor (not read from the cache)
    from_cache: int = 0  # rows whose features were read from the cache


    def __getitem__(self, key: str | tuple[str, str]) -> float:
        """`r["fid"]`: the metric's number (its value on the full sets, the mean over runs with runs > 1) for the one
        generated set; `r["mine", "fid"]` for one of several.

        Args:
            key: A metric's name (`"fid"`), or (label, metric name) of one of several generated sets.

        Returns:
            The number, a float in the metric's own unit (KID raw, not ×10³). On the full sets IMD's value carries
            its probes' standard error, `r["imd"].se`.

        Raises:
            KeyError: No such metric or set, or a metric alone where several sets were scored (naming what there is).
        """
        model, metric = key if isinstance(key, tuple) else (None, key)
        rows = self.summary[self.summary["metric"] == metric]
        if rows.empty:
            raise KeyError(f"no metric {metric!r} in this result; it has {', '.join(map(repr, self.summary['metric'].unique()))}")
        models = list(dict.fromkeys(map(str, rows["model"])))
        if model is None and len(models) > 1:
            raise KeyError(f"{metric!r} was scored for {len(models)} generated sets: give one, e.g. r[{models[0]!r}, {metric!r}]")
        model = models[0] if model is None else model
        if model not in models:
            raise KeyError(f"no generated set {model!r} in this result; it has {', '.join(map(repr, models))}")
        row = rows[rows["model"].astype(str) == model].iloc[0]
        se = row.get(SE_COLUMN, math.nan)
        if metric == "imd" and pd.notna(se):  # one value with its probes' standard error (IMDValue.se)
            from ganeval.metrics.imd import IMDValue

            return IMDValue(float(row["mean"]), float(se))
        return float(row["mean"])

    def to_dict(self) -> dict[str, Any]:
        """The machine-readable document `ganeval-score --json` prints (`ganeval.app.score_print.as_json`)."""
        from ganeval.app.score_print import as_json

        return as_json(self)

    def table(self) -> pd.DataFrame:
        """The summary: one row per model and metric (mean, interval, runs, protocol columns)."""
        return self.summary.copy()

    @property
    def lines(self) -> list[str]:
        """One line per model and metric, as `ganeval-score` prints them."""
        from ganeval.app.score_print import plain_lines

        return plain_lines(self) if self.fakes else []

    @property
    def sentences(self) -> list[str]:
        """The comparisons in words (which model is better where an interval says so), as the command prints them."""
        from ganeval.results.verdict import comparison_sentences

        if self.record is None or not self.fakes:
            return []
        return list(comparison_sentences(self.comparison, self.record.extractor or None))

    def __str__(self) -> str:
        return "\n".join([*self.lines, *self.sentences])

    def __repr__(self) -> str:
        """The lines `print(r)` shows (a notebook cell's value, the REPL's echo); never the arrays it holds."""
        if not self.fakes:
            return f"ScoreResult(nothing scored; wrote {', '.join(map(str, self.saved)) or 'nothing'})"
        return str(self)

    def _repr_html_(self) -> str:
        """A notebook's view: one table row per model and metric, then the comparisons in words."""
        if not self.fakes:
            from html import escape

            return f"<p>{escape(repr(self))}</p>"
        from ganeval.app.score_print import html_view

        return html_view(self)


def stage_times(plan: Plan, scan: float = 0.0) -> dict[str, float]:
    """Seconds by stage in the order of the work: scan (inputs found, image headers checked), hash (contents not
    hashed on the extraction pass), features (decode + forward), metrics, writing (--out's files)."""
    s = plan.stage_seconds
    return {"scan": scan, "hash": s.get("hash", 0.0), "features": s.get("features", 0.0),
            "metrics": s.get("runs", 0.0) + s.get("full sets", 0.0), "writing": s.get("writing", 0.0)}

@speaks_python
def score(real: Any, fakes: Any = (), *,
          metrics: str | Sequence[str] | Mapping[str, Mapping[str, Any] | None] | None = None,
          features: str | None = None, runs: int = 1, sample_size: int | None = None, seed: int = 0,
          confidence: float = 0.99, device: str | None = None, out: str | os.PathLike[str] | None = None,
          n_generated: int | None = None, batch_size: int | None = None, weights: str | None = None, dims: int | None = None,
          resize: str | None = None, size: int | None = None, layout: str = "auto", pixels_size: int | None = None,
          download: bool = True,
          cache_dir: str | None = None, num_workers: int | None = None, save_ref: str | None = None,
          save_stats: str | None = None, overwrite: bool = False, plots: bool = True, samples: bool = True,
          progress: bool = True, protocol: str | None = None, command: str = "", vocab: int | None = None,
          real_features: str | None = None, real_weights: str | None = None) -> ScoreResult | None:
    """Score generated sets against a real one: what `ganeval-score` does, from Python (`ganeval.score`).

    One value per metric on the full sets by default (as pytorch-fid and torch-fidelity give it), or with `runs` > 1
    the mean and a confidence interval over random subsamples. Every argument after `fakes` is keyword-only and is
    the command's flag of the same name (`sample_size` is `--sample-size`), with its default.

    Args:
        real: The real set: a path or dataset name as on the command line (an image folder, a .zip/.tar of images, a
            .npy/.npz array, a reference file such as pytorch-fid's statistics, a word-vector file, a name of
            `ganeval/configs/data/`), a numpy array or torch tensor (images N×H×W, N×C×H×W or N×H×W×C as uint8 or
            floats in [0, 1]; or N×D feature rows), or a generator (see `fakes`).
        fakes: The generated set(s), each scored against `real`: one input as `real` takes them, a list of them
            (labelled by their names), or a dict label → input. A generator is a callable `fn(n, seed)` or an object
            with `sample(n, seed)`, drawn once for `n_generated` rows; it may return images or N×D feature rows
            (read as an array is). Empty with `save_ref`/`save_stats` to write `real`'s reference only.
        metrics: Metric names (`"imd,fid"` or `["imd", "fid"]`) or a mapping name → options
            (`{"kid": {"subset_size": 500}}`). Default None: IMD, FID and KID (FID alone against a moments-only
            reference; IMD alone, with a note, for sets of different dimension).
        features: The extractor: `"inception"` (the default for images), `"dinov2"`, `"clip"`, `"pixels"`,
            `"identity"` (the default for feature rows) or a registered plugin's name.
        runs: 1 (default): one value per metric on the full sets. N > 1: N random subsamples of `sample_size` rows
            per set and the mean ± its Student-t interval.
        sample_size: Rows drawn from each set per run; required with `runs` > 1, at most the smallest set.
        seed: Seed of every random draw: subsamples (`numpy.random.default_rng([seed, run])`), IMD's probes, KID's
            subsets, the sample grids.
        confidence: The interval's level with `runs` > 1 (default 0.99).
        device: `"cpu"`, `"cuda"`, `"cuda:1"`; default None: CUDA when available.
        out: A folder to write the results into (runs.csv, summary.csv/json, comparison.csv, table.md/.tex,
            figures, report.html); a rerun with the same inputs resumes there. None: nothing is written.
        n_generated: Rows drawn from each generator given as `real` or `fakes` (required for them).
        batch_size: The extraction batch; default 250 on a GPU, 32 on a CPU.
        weights: The weights file of `features` "inception", "dinov2" or "clip" (default: the environment variable
            `GANEVAL_INCEPTION_WEIGHTS` / `GANEVAL_DINOV2_WEIGHTS` / `GANEVAL_CLIP_WEIGHTS`, the torch hub or Hugging
            Face cache, then a download).
        dims: The feature dimension of an extractor that offers several (Inception: 2048, 768, 192 or 64).
        resize: The extractor's preprocessing mode (Inception: `"legacy_pytorch"`, pytorch-fid's, by default;
            `"legacy_tensorflow"`, `"clean"`, `"torchmetrics"`; docs/reporting.md says which number each gives).
        size: Resize every image file to size×size (PIL bilinear) before the extractor's own preprocessing; without
            it the image files of one set must share one size.
        layout: How 4-D image arrays are laid out: `"auto"` (default; an array that fits both N×C×H×W and
            N×H×W×C is refused), `"nchw"` or `"nhwc"`.
        pixels_size: `features="pixels"`: an image with a side over this is resized to it (default 32); 0 keeps
            every image at its own size.
        download: False: never download weights (offline); a missing file is refused in one line.
        cache_dir: A folder caching the features, keyed by the inputs' content and the extractor (default: none).
        num_workers: Processes decoding image files (default min(8, CPU cores); 0: in this process).
        save_ref: Write `real`'s features, moments and provenance here as ganeval's reference .npz.
        save_stats: Write `real`'s moments (mu, sigma) here as pytorch-fid's statistics .npz.
        overwrite: Replace the runs of other inputs or options in `out`, and existing `save_ref`/`save_stats` files.
        plots: False: no summary.png in `out`.
        samples: False: no sample grids of the image inputs in `out`.
        progress: False: no progress bars (they show only for work that takes time: images through a network,
            several runs).
        protocol: A named protocol (e.g. `"cifar10_train_50k"`): fixes the extractor, preprocessing, seed and the
            real data, refuses other values, and adds the full-set FID its papers report.
        command: The command line that made the call, recorded in the results (`ganeval-score` sets it; from Python
            leave it empty: refusals then name these arguments, not the command's flags).
        vocab: Word-vector inputs (.vec, .vec.gz, .bin): read their `vocab` most frequent words (default: all).
        real_features: `real`'s own extractor (default: `features`): two feature spaces, which only dimension-free
            metrics (IMD, Vendi) compare. Each extractor option goes to the extractor that takes it.
        real_weights: With `real_features`, the weights file of `real`'s extractor where both extractors load one
            (`weights` is then the generated sets').

    Returns:
        A `ScoreResult`: `r["fid"]` the number, `print(r)` the command's lines, `r.to_dict()` the `--json` document,
        `r.table()` the summary; None on a torchrun rank other than 0.

    Raises:
        ValueError: Bad input, in one line naming these arguments, before any feature is extracted.
        ganeval.features.WeightsNotFoundError: The extractor's weights cannot be found (offline: `weights=FILE` or
            `features="pixels"`).

    Examples:
        >>> import numpy as np
        >>> import ganeval
        >>> real = np.random.default_rng(0).normal(size=(500, 8)).astype(np.float32)
        >>> r = ganeval.score(real, {"mine": real + 0.3}, metrics="fid", progress=False)
        >>> round(r["fid"], 2)  # the number; r["mine", "fid"] names the set
        0.72
        >>> def sampler(n, seed):  # a generator of 8-d feature rows
        ...     return np.random.default_rng(seed + 1).normal(0.2, 1.0, size=(n, 8))
        >>> r = ganeval.score(real, sampler, n_generated=500, metrics=["fid", "kid"], runs=5, sample_size=400,
        ...                   progress=False)
        >>> print(r)
        fake  FD_features 0.42 ± 0.13  (99% CI over 5 runs of 400)
        fake  KID         0.139 ± 0.061  (99% CI over 5 runs of 400)
    """
    from ganeval.app.score_request import DefaultMetrics, default_metrics, default_workers, given_metrics

    labels, sets, said = fake_inputs(fakes)
    chosen = given_metrics(metrics if metrics is not None else default_metrics(real))
    unchosen = metrics is None or isinstance(metrics, DefaultMetrics)
    if protocol is not None:
        if not isinstance(real, (str, os.PathLike)):
            raise ValueError(f"--protocol {protocol} fixes the real data: give REAL as a path or dataset name")
        values = argparse.Namespace(protocol=protocol, features=features, dims=dims, resize=resize, seed=seed,
                                    size=size, metrics=",".join(chosen))
        defaults = {"features": None, "dims": None, "resize": None, "seed": 0, "size": None}
        sp.apply_protocol(values, {k for k, v in defaults.items() if getattr(values, k) != v})
        features, dims, resize, seed, size = values.features, values.dims, values.resize, values.seed, values.size
    request = ScoreRequest(
        real=real, fakes=sets, labels=labels, said=said, features=features, metrics=chosen, runs=runs, sample_size=sample_size,
        confidence=confidence, seed=seed, device=device, batch_size=batch_size, weights=weights, dims=dims,
        download=download, cache_dir=cache_dir, num_workers=default_workers(num_workers), size=size, layout=layout,
        pixels_size=pixels_size,
        resize=resize, save_ref=save_ref, save_stats=save_stats, out=None if out is None else os.fspath(out),
        overwrite=overwrite, plots=plots, samples=samples, progress=progress, command=command, protocol=protocol,
        n_generated=n_generated, vocab=vocab, real_features=real_features, real_weights=real_weights,
        default_metrics=unchosen)
    if request.real_weights is not None and request.real_features is None:
        raise ValueError(NO_OWN_EXTRACTOR)
    if request.batch_size is not None and request.batch_size < 1:
        raise ValueError(f"--batch-size must be at least 1, got {request.batch_size}")
    if request.num_workers < 0:
        raise ValueError(f"--num-workers must be at least 0, got {request.num_workers}")
    if request.size is not None and request.size < 1:
        raise ValueError(f"--size must be at least 1, got {request.size}")
    if request.pixels_size is not None and request.pixels_size < 0:
        raise ValueError(f"--pixels-size must be at least 0 (0: images at their own size), got {request.pixels_size}")
    from ganeval.features.distributed import init_from_env, is_main

    request.device = init_from_env(request.device)  # torchrun: join the group, one GPU per rank
    if not is_main():
        request.progress = False
    return score_sets(request)


def load_real(request: ScoreRequest) -> InputSet:
    """REAL loaded (as the protocol fixes it, under --protocol)."""
    if request.protocol is not None:
        return sp.load_real(request.protocol, str(request.real), request.size)
    in_memory = not isinstance(request.real, (str, os.PathLike))
    s = given_input(request.real, "real" if in_memory else str(request.real), request.size, request.layout,
                    request.n_generated, request.seed, request.vocab)
    s.said = "real" if in_memory else None  # a message names it as the caller wrote it
    return s


def load_fakes(request: ScoreRequest) -> list[InputSet]:
    """Each FAKE loaded, named by its label when it has one (an unlabelled in-memory one: fake, fake_1, ...)."""
    fakes = []
    labels = list(request.labels) or [None] * len(request.fakes)
    for i, (label, f) in enumerate(zip(labels, request.fakes)):
        unnamed = "fake" if len(request.fakes) == 1 else f"fake_{i}"
        shown = label or (str(f) if isinstance(f, (str, os.PathLike)) else unnamed)
        s = given_input(f, shown, request.size, request.layout, request.n_generated, request.seed, request.vocab)
        if label is not None:
            s.name, s.labelled = label, True
        if not isinstance(f, (str, os.PathLike)) and request.said:
            s.said = request.said[i]  # a message names it as the caller wrote it: fakes, fakes[0], fakes['a']
        fakes.append(s)
    return fakes


def extractor_requests(request: ScoreRequest, real: InputSet) -> tuple[ScoreRequest, ScoreRequest | None]:
    """The requests FAKE's extractor and REAL's own one are made from (None: REAL goes through FAKE's): with
    --real-features, each extractor option goes to the extractor that takes it (`side_requests`)."""
    fake = request.features or ("inception" if real.images else "identity")
    if request.real_features in (None, fake):
        if request.real_weights is not None:
            raise ValueError(NO_OWN_EXTRACTOR)
        return request, None
    if precomputed(real):
        raise ValueError(f"--real-features extracts REAL's features, but REAL {real.arg} already holds features "
                         "(a reference file): drop --real-features")
    return side_requests(request, fake, request.real_features)


def real_extractor(request: ScoreRequest | None, real: InputSet, extractor: Any) -> Any:
    """REAL's extractor: `extractor`, or made from `request` (`extractor_requests`) one of its own (REAL's features
    then differ from the FAKEs' in space and maybe dimension, which only dimension-free metrics compare)."""
    return extractor if request is None else make_extractor(request, [real])


def make_plan(request: ScoreRequest, real: InputSet, fakes: list[InputSet], extractor: Any,
                 settings: Settings, real_extractor: Any = None) -> Plan:
    """The plan of a score call: its config (inputs, extractor, protocol), hash, content and record."""
    config: dict[str, Any] = {
        "real": real.arg, "fakes": {f.name: f.arg for f in fakes},
        "sets": {"real": len(real), **{f.name: len(f) for f in fakes}},
        "features": extractor.identity(), "metrics": cast("Metrics", settings.metrics).as_dict(), "runs": settings.runs,
        "sample_size": settings.sample_size if settings.runs > 1 else None,
        "full_sets": settings.runs == 1, "confidence": settings.confidence, "seed": settings.seed,
        "device": settings.device, "batch_size": request.batch_size, "results_dir": request.out,
        "cache_dir": request.cache_dir, "overwrite": request.overwrite, "plots": request.plots,
        "progress": request.progress,
        # image files resized (--size) and arrays' layout (--layout): recorded only when given, so the config hashes
        # of runs without them stay what they were
        **({"size": request.size} if request.size is not None else {}),
        **({"layout": request.layout} if request.layout != "auto" else {}),
        **({"vocab": request.vocab} if request.vocab is not None else {}),
        **({"real_features": real_extractor.identity()} if real_extractor not in (None, extractor) else {}),
    }
    plan = score_plan(request, config, settings)
    if real_extractor not in (None, extractor):  # REAL through its own extractor, first
        extract_first(plan, request, [real], real_extractor)
        extract_first(plan, request, fakes, extractor)
    else:
        extract_first(plan, request, [real, *fakes], extractor)
    with plan.stage("hash"):
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
    options = Options(batch_size=cast(int, request.batch_size), cache_dir=request.cache_dir, plots=request.plots,
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

    c = shared_content(s.stream, cast(int, request.batch_size), request.num_workers, request.cache_dir, request.progress)
    return {"shape": c["shape"], "dtype": c["dtype"], "sha256": c["sha256"]}


def extract_first(plan: Plan, request: ScoreRequest, sets: list[InputSet], extractor: Any) -> None:
    """Extract now the streamed sets whose content is not known yet (a first run over these files, one process, see
    `ganeval.features.streaming.one_pass`): their content, which the plan needs, is hashed on that same decoding
    pass instead of a pass of its own before the extraction. `extract` returns the kept features. Not when --out
    already holds files (and no --overwrite): whether they are this run's needs the content, and that refusal comes
    before any extraction (the content is then hashed in a pass of its own)."""
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
    from ganeval.features import extract_with_info

    if precomputed(s):
        return np.asarray(s.array, np.float32)
    if s.features is not None:
        return s.features
    with plan.stage("features"):  # a streamed set's content hashed on this pass when not known yet (`extract_first`)
        feats, info = extract_with_info(s.stream if s.stream is not None else s.array, extractor,
                                        batch_size=cast(int, request.batch_size), device=plan.device, cache_dir=request.cache_dir,
                                        num_workers=request.num_workers, progress=request.progress, hash_content=True)
    done = "from cache" if info["cache_hit"] else "features" if extractor.images else "rows"  # rows: a feature array's
    plan.stage_items[done] = plan.stage_items.get(done, 0) + len(s)
    return feats


def default_batch(device: str | None) -> int:
    """The extraction batch of a request that names none: `default_batch_size` of the device it will run on."""
    from ganeval.common import resolve_device_name
    from ganeval.features.extraction import default_batch_size

    return default_batch_size(resolve_device_name(device))


def load_sets(request: ScoreRequest) -> tuple[InputSet, list[InputSet], float]:
    """REAL and the FAKEs resolved (folders scanned, image headers checked), and the seconds it took."""
    t0 = time.perf_counter()
    real, fakes = load_real(request), load_fakes(request)
    return real, fakes, time.perf_counter() - t0


def score_sets(request: ScoreRequest) -> ScoreResult | None:
    """Load and check every input, extract features, score (full sets or protocol) and, with `out`, write the
    pipeline's files (runs.csv, runs.meta.json, summary.csv/json, tables, plots, report.html)."""
    from ganeval.protocol.full import FULL_SET_NOTE, FullSetTask, split_extras, with_standard_errors
    from ganeval.protocol.loop import run_loop

    if not request.fakes and request.save_ref is None and request.save_stats is None:
        raise ValueError("give at least one FAKE set to score against REAL (or --save-ref/--save-stats to write REAL's)")
    check_paths(request)
    from ganeval.features.distributed import is_main

    main = is_main()  # under torchrun: every rank extracts its share, rank 0 alone scores and writes (others: None)
    if request.batch_size is None:
        request.batch_size = default_batch(request.device)
    real, fakes, scan = load_sets(request)
    sp.check_images(request.protocol, real, fakes)  # --protocol's image size and channels
    sp.check_fakes(request.protocol, fakes)  # --protocol's n_generated
    refuse_fake_references(fakes)
    if real.reference is not None and real.reference.moments_only:
        if request.save_ref is not None or request.save_stats is not None:
            raise ValueError(f"--save-ref/--save-stats write REAL's features, but REAL {real.arg} holds moments only")
        label_sets(fakes)
        return score_moments(request, real, fakes, scan)
    if not fakes:
        return save_only(request, real)
    label_sets(fakes)
    notes: list[str] = []
    settings = make_settings(request, real, fakes, notes)
    fake_request, real_request = extractor_requests(request, real)
    own = real_request is not None
    extractor = make_extractor(fake_request, fakes if precomputed(real) or own else [real, *fakes])
    real_ex = real_extractor(real_request, real, extractor)  # REAL's own extractor when `own`
    planned = set_dims(real, fakes, extractor, real_ex)
    narrowed = two_spaces(request, real_ex, extractor) if own else default_metrics_for_dims(request, planned)
    if narrowed is not None:  # default metrics, sets of different dimension: the dimension-free ones scored
        notes = [narrowed]
        settings = make_settings(request, real, fakes, notes)
    check_inputs(real, fakes, extractor, settings, real_ex)
    for ex in dict.fromkeys((real_ex, extractor)):
        if callable(getattr(ex, "weights_path", None)):
            ex.weights_path()  # missing weights refused now (extraction resolves them first anyway)
    for note in notes:  # after every check: a refused command prints only why (in Python's words from Python)
        log.warning("%s", note if request.command else in_python(note))
    plan = make_plan(request, real, fakes, extractor, settings, real_ex)
    plan.record.left_out = narrowed if narrowed is None or request.command else in_python(narrowed)  # as logged
    full = settings.runs == 1
    # a set's dimension known only after extraction (an extractor that declares no `feature_dim`) while some metric
    # needs one: the default metrics are narrowed then, chosen ones refused then (`settle_dims`)
    late = not own and None in planned.values() and any(m.same_dim for m, _ in cast("Metrics", settings.metrics).ordered())
    results_dir = plan.results_dir if request.out is not None and main else None
    made = first_missing(results_dir) if results_dir is not None else None  # removed again if refused after extraction
    if results_dir is not None:
        with plan.stage("writing"):
            pipeline.open_results(plan, protocol=not full, narrowable=late and request.default_metrics, clear=not late)
            if request.samples and not late:  # before the features: cheap; a refused path stops no long work
                write_grids(results_dir, real, fakes, settings.seed)
    else:
        from ganeval.protocol.api import store_identity

        plan.set_config_hash(plan.identity() if full else store_identity(settings, plan.identity()))

    real_f = extract(plan, request, real, real_ex)
    saved = save_outputs(request, real, cast(np.ndarray, real_f), real_ex) if main else []
    fakes_f = [({"model": f.name}, extract(plan, request, f, extractor)) for f in fakes]
    if not main:
        return None
    plan.record.dims = {"real": int(cast(np.ndarray, real_f).shape[1]),
                        **{g["model"]: int(cast(np.ndarray, f).shape[1]) for g, f in fakes_f}}
    if late:
        try:
            settle_dims(request, plan, {real.named(True): int(cast(np.ndarray, real_f).shape[1]),
                                        **{f.named(False): int(cast(np.ndarray, x).shape[1])
                                           for f, (_, x) in zip(fakes, fakes_f)}})
        except ValueError:
            if made is not None:  # nothing of this command's stays: the folders it made are empty (no record, no grids)
                remove_made(cast(Path, results_dir), made)
            raise
        settings = plan.settings
        if results_dir is not None and request.samples:
            write_grids(results_dir, real, fakes, settings.seed)
    extras: dict[tuple[str, str], dict[str, float]] = {}
    with plan.stage("runs"):
        if full:
            task = FullSetTask(real_f, fakes_f, settings)
            rows, stored = split_extras(run_loop(task, settings, results_dir, plan.identity(), request.overwrite))
            extras = {k: {**task.extras.get(k, {}), **stored.get(k, {})} for k in {*task.extras, *stored}}
        else:
            from ganeval.protocol import run_blocks

            rows = run_blocks([Block(real_f, fakes_f)], settings, results_dir, plan.identity(), request.overwrite)
    plan.record.seconds_per_run = plan.stage_seconds["runs"] / settings.runs
    summary, comparison, _ = pipeline.summarize(plan, rows)
    summary = sp.add_full_set(plan, request.protocol, real_f, fakes_f, summary)
    if full:
        plan.record.interval_covers = FULL_SET_NOTE
        summary = with_standard_errors(summary, extras)
    if results_dir is not None:
        title = f"ganeval-score: {', '.join(f.name for f in fakes)} vs {real.name}"
        with plan.stage("writing"):
            pipeline.write(plan, summary, comparison, title)
    return ScoreResult(summary, rows, comparison, extras, plan.record, real, fakes, results_dir, saved,
                       stage_times(plan, scan), plan.stage_items.get("features", 0),
                       plan.stage_items.get("from cache", 0))


def settle_dims(request: ScoreRequest, plan: Plan, dims: Mapping[str, int]) -> None:
    """The sets' dimensions (`dims`, REAL's first), known only after extraction: with the default metrics those needing
    one dimension are left out where they differ (`Plan.narrow_metrics`, the note logged); chosen ones are refused in
    one line naming them and both dimensions (`ganeval.metrics.dims.fit_metrics`)."""
    from ganeval.metrics.dims import fit_metrics

    metrics, note = fit_metrics(cast("Metrics", plan.settings.metrics), dims, chosen=not request.default_metrics)
    if note is not None:
        note = note if request.command else in_python(note)  # recorded as logged: in Python's words from Python
        log.warning("%s", note)
        plan.narrow_metrics(metrics, note)


def write_grids(results_dir: Path, real: InputSet, fakes: list[InputSet], seed: int) -> None:
    """A grid of sample images of each set into results_dir, listed in its manifest (an --overwrite clears them)."""
    from ganeval.app.score_samples import write_sample_grids
    from ganeval.results.outputs import write_manifest

    write_manifest(results_dir)  # the folder is ganeval's from now on: a stopped run's rerun is not refused
    write_sample_grids(results_dir, [real, *fakes], seed)
    write_manifest(results_dir)


def score_moments(request: ScoreRequest, real: InputSet, fakes: list[InputSet], scan: float = 0.0) -> ScoreResult:
    """FID/FD of each generated set against a moments-only REAL (see `ganeval.protocol.reference`)."""
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
    sizes = {f.named(False): len(f) for f in fakes}
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
        check_writable(Path(request.out), "--out")
    ident = extractor.identity()
    config: dict[str, Any] = {
        "real": real.arg, "reference": {"layout": ref.layout, "moments_only": True, "space": extractor.name},
        "fakes": {f.name: f.arg for f in fakes}, "sets": {f.name: len(f) for f in fakes},
        "features": ident, "metrics": cast("Metrics", settings.metrics).as_dict(), "runs": settings.runs,
        "sample_size": settings.sample_size if settings.runs > 1 else None, "full_sets": settings.runs == 1,
        "confidence": settings.confidence, "seed": settings.seed, "device": settings.device,
        "batch_size": request.batch_size, "results_dir": request.out, "cache_dir": request.cache_dir,
        "overwrite": request.overwrite, "plots": request.plots, "progress": request.progress,
    }
    plan = score_plan(request, config, settings)
    plan.content["data"]["real"] = {"file_sha256": sha256_file(Path(real.arg).expanduser())}
    extract_first(plan, request, fakes, extractor)
    with plan.stage("hash"):
        for f in fakes:
            plan.content["generators"][f.name] = content_identity(request, f)
    plan.record.extractor = plan.content["extractor"] = ident
    plan.record.generators = {f.name: {"input": f.arg, "source": f.source, **plan.content["generators"][f.name]}
                             for f in fakes}
    plan.record.command = request.command or None
    results_dir = plan.results_dir if request.out is not None else None
    if results_dir is not None:
        with plan.stage("writing"):
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
        with plan.stage("writing"):
            pipeline.write(plan, summary, comparison, f"ganeval-score: {', '.join(f.name for f in fakes)} vs the "
                           f"moments of {real.name}")
    return ScoreResult(summary, rows, comparison, {}, plan.record, real, fakes, results_dir, [],
                       stage_times(plan, scan),
                       plan.stage_items.get("features", 0), plan.stage_items.get("from cache", 0))


def check_paths(request: ScoreRequest) -> None:
    """--out, --cache-dir and the --save-ref/--save-stats files checked before any work."""
    check_out_not_input(request)
    if request.out is not None:
        from ganeval.results.outputs import check_foreign

        check_writable(Path(request.out), "--out")
        check_foreign(request.out, request.overwrite)  # a folder of the user's own files, as the app refuses it
    if request.cache_dir is not None:
        check_writable(Path(request.cache_dir).expanduser(), "--cache-dir")
    check_save(request)


def check_save(request: ScoreRequest) -> None:
    """--save-ref / --save-stats paths checked before any work (no links, no folders, no silent replacement)."""
    if request.save_ref is not None:
        check_file_writable(request.save_ref, "--save-ref", request.overwrite)
    if request.save_stats is not None:
        check_file_writable(request.save_stats, "--save-stats", request.overwrite)
    if request.save_ref is not None and request.save_stats is not None and \
            Path(request.save_ref).expanduser().resolve() == Path(request.save_stats).expanduser().resolve():
        raise ReferenceError("--save-ref and --save-stats name the same file: give two paths")
    check_outputs_not_inputs(request)


def save_outputs(request: ScoreRequest, real: InputSet, features: np.ndarray, extractor: Any) -> list[Path]:
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
        content = array_identity(cast(np.ndarray, real.array))["sha256"]
    write_outputs(features, reference_meta(extractor, len(features), content, real.arg), request.save_ref,
                  request.save_stats, request.overwrite)
    return [Path(p) for p in (request.save_ref, request.save_stats) if p is not None]


def save_only(request: ScoreRequest, real: InputSet) -> ScoreResult | None:
    """`ganeval-score --save-ref OUT REAL` without FAKE: extract REAL's features and write the files."""
    import pandas as pd

    from ganeval.features import extract_with_info

    extractor = make_extractor(request, [real])
    if precomputed(real):
        feats = np.asarray(real.array, np.float32)
    else:
        extractor.check_input(real.shape, real.dtype)
        feats, _ = extract_with_info(real.stream if real.stream is not None else real.array, extractor,
                                     batch_size=cast(int, request.batch_size), device=request.device, cache_dir=request.cache_dir,
                                     num_workers=request.num_workers, progress=request.progress, hash_content=True)
        if feats is None:  # a torchrun rank other than 0
            return None
    saved = save_outputs(request, real, feats, extractor)
    return ScoreResult(pd.DataFrame(), pd.DataFrame(), None, {}, None, real, [], None, saved)
