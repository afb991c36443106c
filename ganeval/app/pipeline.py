"""The steps a study runs on its plan (`ganeval.app.plan`): inputs read and hashed -> features -> protocol runs
-> results written. The generators (trained or given) are `ganeval.app.generators`.

It instantiates the plan's input nodes and hands plain arrays and one `Settings` object to `ganeval.protocol`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ganeval.app.plan import Plan
from ganeval.hashing import array_identity
from ganeval.metrics.memory import check_memory
from ganeval.metrics.validation import check_scale
from ganeval.protocol.api import check_finite
from ganeval.results.seeds import PROBE, SEED

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

log = logging.getLogger("ganeval")


# --------------------------------------------------------------------------- data and features
def instantiate(node: Any) -> Any:
    """`hydra.utils.instantiate` of a config node (plain values pass through); a target's own ValueError or
    FileNotFoundError (a bad path or input, which names it) comes out as a ValueError with its message alone."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate as _inst

    try:
        return _inst(node, _convert_="all")
    except InstantiationException as e:
        if isinstance(e.__cause__, (ValueError, FileNotFoundError)):
            raise ValueError(str(e.__cause__)) from e
        raise


def load_data(plan: Plan, node: Any, what: str) -> np.ndarray:
    """Instantiate a data config to an array, checked (rows, finite values) and hashed once into `plan.content`."""
    arr = instantiate(node)
    if hasattr(arr, "numpy") and not isinstance(arr, np.ndarray):
        arr = arr.numpy()
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{what} must instantiate to a numpy array, got {type(arr).__name__}")
    if arr.ndim < 2:
        raise ValueError(f"{what} is an array of shape {arr.shape}: expected features N×D or images (N×H×W, "
                         "N×C×H×W, N×H×W×C); if each sample really is one number, reshape it to N×1")
    if len(arr) == 0:
        raise ValueError(f"{what} is empty")
    check_finite(what, arr)
    check_scale(f"{what} ({node.get('path')})" if hasattr(node, "get") and node.get("path") else what, arr,
                cast("Metrics", plan.settings.metrics).reaches(), plan.settings.sample_size)
    plan.content["data"][what] = array_identity(arr)
    return arr


def data_hash(plan: Plan, what: str) -> str:
    """The content hash of the data loaded as `what` (see `load_data`)."""
    return str(plan.content["data"][what]["sha256"])


def make_extractor(plan: Plan) -> Any:
    """Instantiate the features group to an extractor, checking weights before any expensive step."""
    ex = instantiate(plan.params.features)
    check_metric_inputs(plan, ex)
    ident = ex.identity()  # resolves (and hashes) weights now: a missing file fails here, before any work
    plan.record.extractor = plan.content["extractor"] = ident
    return ex


def check_metric_inputs(plan: Plan, extractor: Any) -> None:
    """Refuse a metric the extractor's rows cannot feed (the Inception Score takes class logits, the others
    features), naming the extractor to use; an extractor whose `outputs` is None (given arrays) feeds any."""
    check_extractor_feeds(plan.settings.metrics, extractor, plan.choices.get("features", type(extractor).__name__))


def check_extractor_feeds(metrics: Any, extractor: Any, chosen: str) -> None:
    """`check_metric_inputs` for chosen `metrics` (a `Metrics`) and the extractor named `chosen` in messages."""
    gives = getattr(extractor, "outputs", "features")
    for metric, _ in metrics.ordered():
        if gives is None or metric.input == gives:
            continue
        if metric.input == "spatial":
            raise ValueError(f"metrics.{metric.name} compares the ADM evaluator's spatial Inception features, but "
                             f"features={chosen} gives {gives}: use features=inception_spatial in a run of its own, "
                             f"e.g. features=inception_spatial metrics=sfid")
        if metric.input == "logits":
            raise ValueError(f"metrics.{metric.name} scores class logits, but features={chosen} gives {gives}: use "
                             f"features=inception_logits (the FID Inception's 1008-way logits) in a run of its own, "
                             f"e.g. features=inception_logits metrics=inception_score")
        raise ValueError(f"metrics.{metric.name} compares {metric.input}, but features={chosen} gives {gives}: score "
                         f"{metric.name} in a run with features=inception (drop it here with ~metrics.{metric.name})")


def features(plan: Plan, images: np.ndarray, extractor: Any, what: str) -> np.ndarray:
    """Features of `images` through the cache (cache_dir), with a progress bar; metrics that could not hold features
    of the dimension the extractor will give (pixels of large images) are refused first."""
    from ganeval.features import extract_with_info

    shape = getattr(images, "shape", None)
    dim = extractor.feature_dim(tuple(shape)) if shape is not None and hasattr(extractor, "feature_dim") else None
    if dim is not None:
        check_memory(plan.settings.metrics, plan.settings.sample_size, dim,
                     plan.device, plan.settings.workers, "score features of fewer dimensions (pixels of large images: "
                     "+features.max_size=32 resizes them to 32²) or a smaller sample_size")
    feats, info = extract_with_info(
        images, extractor, batch_size=plan.options.batch_size, device=plan.device,
        cache_dir=plan.options.cache_dir, progress=plan.settings.progress,
    )
    log.info("features of %s: %s%s", what, feats.shape, " (cached)" if info.get("cache_hit") else "")
    return feats


# --------------------------------------------------------------------------- scoring and writing
def open_results(plan: Plan, protocol: bool = True, narrowable: bool = False, clear: bool = True) -> None:
    """Check results_dir for this config and content before any expensive work: a directory holding other runs
    (unless overwrite=true) or being written by another process is refused now, not after training and extraction.

    `protocol`: the runs go through `run_blocks` (keyed by the settings' identity too), else straight to `run_loop`.
    `narrowable`: the default metrics may yet lose those needing one dimension, once extraction tells the sets'
    dimensions (`Plan.narrow_metrics`): runs stored under that narrower identity are this config's too.
    `clear` False: with overwrite=true the previous outputs stay until the runs start (the run may still be refused
    after extraction, and a refused run loses nothing).
    """
    from dataclasses import replace

    from ganeval.metrics.dims import dimension_free_part
    from ganeval.protocol.api import store_identity
    from ganeval.protocol.store import ConfigMismatchError, check_store, identity_hash

    def key(settings: Any, ident: dict[str, Any]) -> dict[str, Any]:
        return store_identity(settings, ident) if protocol else ident

    identity = key(plan.settings, plan.identity())
    free = dimension_free_part(cast("Metrics", plan.settings.metrics)) if narrowable else None
    candidates = [identity] + ([key(replace(plan.settings, metrics=free), plan.identity(free))] if free else [])
    refusals: list[tuple[int, int, str]] = []
    for i, candidate in enumerate(candidates):
        try:  # run_loop keys the store by identity_hash of the identity it is given: the same key here
            check_store(plan.results_dir, identity_hash(candidate), plan.options.overwrite, candidate, clear)
        except ConfigMismatchError as e:
            keys = differing_keys(plan.results_dir, candidate)
            refusals.append((len(keys), i, f"{e}{shown_differences(keys)}"))
            continue
        plan.set_config_hash(candidate)
        return
    _, i, message = min(refusals)  # the identity closest to the stored one says what differs (and its hash, "now")
    plan.set_config_hash(candidates[i])
    raise ConfigMismatchError(message)


def shown_differences(keys: list[tuple[str, Any, Any]], most: int = 4) -> str:
    """' (what differs: key: stored -> now; ...)' of `differing_keys`' answer, or '' when there is none."""
    if not keys:
        return ""
    shown = "; ".join(f"{k}: {old!r} -> {new!r}" for k, old, new in keys[:most])
    return f" (what differs: {shown}{'; ...' if len(keys) > most else ''})"


def differing_keys(results_dir: Path, identity: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(key, stored, now) of each leaf where the identity stored in results_dir differs from `identity`, defining keys
    only (input paths are provenance: never the difference); [] when no readable identity is stored."""
    import json

    from ganeval.protocol.store import META_FILE, defining

    def leaves(obj: Any, prefix: str = "") -> dict[str, Any]:
        if not isinstance(obj, dict) or not obj:
            return {prefix: obj}
        return {k: v for key, value in obj.items()
                for k, v in leaves(value, f"{prefix}.{key}" if prefix else str(key)).items()}

    now = json.loads(json.dumps(identity, default=str))
    try:
        old = leaves(defining(json.loads((results_dir / META_FILE).read_text())["identity"], now))
    except (OSError, ValueError, KeyError, TypeError):
        return []  # no readable identity stored: the store's message says enough
    new = leaves(defining(now))
    return [(k, old.get(k), new.get(k)) for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]


def score(plan: Plan, blocks: list[Any]) -> pd.DataFrame:
    """Run the protocol over `blocks` into results_dir/runs.csv (resumable) and return the per-run rows."""
    from ganeval.protocol import run_blocks
    from ganeval.protocol.api import store_identity

    plan.set_config_hash(store_identity(plan.settings, plan.identity()))  # the key run_blocks opens the store with
    with plan.stage("runs"):
        rows = run_blocks(blocks, plan.settings, plan.results_dir, plan.identity(), plan.options.overwrite)
    plan.record.seconds_per_run = plan.stage_seconds["runs"] / plan.settings.runs
    return rows


def summarize(plan: Plan, rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """(summary, comparison of models or None, per-(model, seed) summary or None) of the per-run rows.

    Rows with a `train_seed` or `probe_draw` column get the two levels of `summarize_levels` (what the intervals
    cover and the variance shares go into the run record); other rows one level (`summarize_runs`/`compare_runs`).
    """
    from ganeval.results import compare_runs, summarize_runs
    from ganeval.results.seeds import coverage_note, summarize_levels, variance_record

    s = plan.settings
    if SEED not in rows.columns and PROBE not in rows.columns:
        comparison = compare_runs(rows, s.confidence) if rows["model"].nunique() > 1 else None
        return summarize_runs(rows, s.confidence, s.sample_size), comparison, None
    levels = summarize_levels(rows, s.confidence, s.sample_size)
    plan.record.interval_covers = coverage_note(levels.summary)
    plan.record.variance_shares = variance_record(levels.variance)
    return levels.summary, levels.comparison if len(levels.comparison) else None, levels.seeds


def write(plan: Plan, summary: pd.DataFrame, comparison: pd.DataFrame | None, title: str,
          tables: bool = True, seeds: pd.DataFrame | None = None) -> None:
    """Write summary.csv/.json, comparison.csv, summary_seeds.csv (per-(model, seed) `seeds` with several
    training seeds), the tables, (if plots) summary.png and report.html into results_dir."""
    from ganeval.results import plots, write_results
    from ganeval.results.tables import paper_table

    if "imd" in plan.settings.metrics:
        plan.record.knn = cast("Metrics", plan.settings.metrics)["imd"]["knn"]
    seeds = seeds if seeds is not None and SEED in seeds.columns else None
    plan.record.set_results(summary, plan.stage_seconds)
    write_results(plan.results_dir, summary, comparison, plan.record, title=title, tables=tables, seeds=seeds)
    from ganeval.results.verdict import write_verdict

    write_verdict(plan.results_dir, comparison, plan.record.extractor or None)
    if plan.options.plots and tables:
        plots.plot_summary(summary, plan.results_dir / "summary.png", title, seeds=seeds,
                           extractor=plan.record.extractor or None, runs=plots.stored_runs(plan.results_dir),
                           given_sets=plan.record.between_given_sets())
        if comparison is not None and len(comparison) and {"a", "b", "diff_mean"} <= set(comparison.columns):
            from ganeval.results.plots import plot_paired

            plot_paired(plan.results_dir, comparison, seeds, plan.record.extractor or None, title)
    plan.report_title = title
    plan.report_table = paper_table(summary, comparison, title, extractor=plan.record.extractor or None,
                                    given_sets=plan.record.between_given_sets()) if tables else None
    write_report(plan)
    log.info("results in %s", plan.results_dir)


def write_report(plan: Plan) -> None:
    """(Re)write results_dir/report.html from the files there and the run record: called by `write` and again by
    the app after the experiment returns, so figures an experiment writes after `write` are in it too."""
    from ganeval.results.report import write_report as write_html

    if (plan.results_dir / "summary.csv").exists():
        write_html(plan.results_dir, plan.record, plan.report_title or plan.title, plan.report_table)
