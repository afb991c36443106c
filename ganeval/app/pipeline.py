"""The pipeline every experiment runs: config -> context (settings validated once) -> data and features ->
generators (trained or given: `ganeval.app.generators`) -> protocol runs -> results.

Only this layer reads configs: it instantiates the data, features and generator groups and hands plain
arrays and one `Settings` object to `ganeval.protocol`.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np
import pandas as pd

from ganeval.app.paths import check_writable
from ganeval.hashing import array_identity
from ganeval.metrics.registry import integer
from ganeval.metrics.validation import check_scale
from ganeval.protocol import Settings
from ganeval.protocol.api import check_finite, unique_names
from ganeval.protocol.settings import check_value
from ganeval.protocol.store import identity_hash
from ganeval.results import RunRecord
from ganeval.results.outputs import begin_run
from ganeval.results.seeds import PROBE, SEED

log = logging.getLogger("ganeval")

# Keys that do not change any number: left out of the config part of a run's identity (see `Context.identity`).
# `runs` is left out too: run r's numbers do not depend on how many runs there are, so raising `runs`
# extends a finished experiment instead of refusing it.
NON_NUMERIC_KEYS = ("results_dir", "cache_dir", "models_dir", "overwrite", "workers", "batch_size",
                    "progress", "plots", "runs", "hydra", "dry_run")
# Keys left out of the identity while at these values (their defaults, which change no number); a generator's
# `replicas: null` likewise.
NEUTRAL_KEYS: dict[str, Any] = {"train_seeds": None, "probe_repeats": 0}


@dataclass
class Context:
    """What an experiment needs besides its config: where to write, on which device, and timings."""

    cfg: Any  # the composed DictConfig
    name: str  # experiment name (results/<name>)
    results_dir: Path
    device: str
    config: dict[str, Any]  # resolved config as plain containers
    settings: Settings
    train_seeds: tuple[int, ...] | None = None  # `train_seeds` checked; None: one seed (a spec's own, or `seed`)
    choices: dict[str, str] = field(default_factory=dict)  # Hydra's group choices, e.g. {"data": "digits"}
    stage_seconds: dict[str, float] = field(default_factory=dict)
    dry_run: bool = False  # dry_run=true: check the config, do no work (`ganeval.app.validate`)
    # what the numbers come from, by content (data arrays, generators, extractor): each input hashed once, as it
    # is loaded or planned; with the numeric config it is the identity of results_dir (see `open_results`)
    content: dict[str, dict[str, Any]] = field(default_factory=lambda: {"data": {}, "generators": {}})
    record: RunRecord = field(init=False)  # summary.json: each step sets the fields it knows
    report_title: str = ""  # the title `write` gave the tables, reused by report.html

    def __post_init__(self) -> None:
        """Start the run record with what the context knows; the steps and `write` fill in the rest."""
        self.record = RunRecord(config_hash=UNKNOWN_HASH, config=self.config, seed=self.settings.seed,
                                device=self.device, experiment=self.name, runs=self.settings.runs)

    def identity(self) -> dict[str, Any]:
        """What the numbers depend on besides the protocol settings: the resolved config without the keys that
        change no number (`numeric_config`) and the content hashes of every input."""
        return {"config": numeric_config(self.config), "content": self.content}

    @property
    def config_hash(self) -> str:
        """The run's config hash (`identity_hash`), once `open_results` or `score` has computed it."""
        return self.record.config_hash

    def set_config_hash(self, identity: Mapping[str, Any]) -> str:
        """Record and log the config hash of the identity results_dir is keyed by (`identity_hash`)."""
        if self.record.config_hash != (h := identity_hash(identity)):
            self.record.config_hash = h
            log.info("config hash %s (%s) -> %s", h, CONFIG_HASH_MEANS, self.results_dir)
        return h

    @contextmanager
    def stage(self, name: str, detail: str = "") -> Iterator[None]:
        """Time a stage (summed under `name` if entered again) and log its start and end (`name` and `detail`)."""
        shown = f"{name} {detail}".strip()
        log.info("%s ...", shown)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            self.stage_seconds[name] = self.stage_seconds.get(name, 0.0) + dt
            log.info("%s done in %.1f s", shown, dt)


def import_plugins(modules: Any) -> None:
    """Import the modules named in `plugins`, so the metrics and extractors they register can be chosen."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(str(name))
        except ImportError as e:
            raise ValueError(f"plugins: cannot import {name!r} ({e}); is it on PYTHONPATH?") from None


def make_context(cfg: Any) -> Context:
    """The run's context from a composed config: name, results_dir, settings, config hash; bad values fail here."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    from ganeval.app.paths import default_results_dir

    import_plugins(cfg.get("plugins") or [])
    check_missing(cfg)
    from ganeval.app.protocols import check_protocol

    check_protocol(cfg)  # a named protocol's fixed values (dry_run too)
    hc = HydraConfig.get()
    name = hc.runtime.choices.get("experiment") or "custom"
    if hc.mode == RunMode.MULTIRUN:
        results_dir = Path(hc.runtime.output_dir)  # each sweep job in its own job directory (under results_dir)
    else:
        results_dir = default_results_dir(cfg.results_dir, name)  # = Hydra's run folder (hydra.run.dir)
    settings = settings_from_config(cfg)  # types are the schema's (ganeval.app.schema); ranges are checked here
    train_seeds = check_train_seeds(cfg.train_seeds)
    check_value("batch_size", cfg.batch_size, integer(1))
    if cfg.get("train_epochs") is not None:
        check_value("train_epochs", cfg.train_epochs, integer(1))
    check_writable(results_dir, "results_dir")
    begin_run(results_dir, strict_bool(cfg, "overwrite"))  # a folder of someone else's files is refused
    if cfg.get("cache_dir"):
        check_writable(Path(str(cfg.cache_dir)), "cache_dir")
    config = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(config, dict)
    check_keys(config)
    config["device"] = settings.device
    config["metrics"] = settings.metrics.as_dict()  # resolved: an option left at its default hashes as if given
    ctx = Context(cfg=cfg, name=name, results_dir=results_dir, device=str(settings.device), config=config,
                  settings=settings, train_seeds=train_seeds, dry_run=cfg.dry_run,
                  choices={str(k): str(v) for k, v in hc.runtime.choices.items() if v is not None})
    ctx.record.overrides = list(hc.overrides.task)
    ctx.record.command = "ganeval " + " ".join(hc.overrides.task)
    return ctx


def check_train_seeds(value: Any) -> tuple[int, ...] | None:
    """`train_seeds` checked: null (one seed, today's behaviour) or a non-empty list of distinct integers >= 0 (the
    schema makes it a list of integers)."""
    if value is None:
        return None
    seeds = list(value)
    if not seeds:
        raise ValueError(f"train_seeds must be null or a non-empty list of distinct integers >= 0, e.g. [0, 1, 2]; "
                         f"got {value!r}")
    for i, seed in enumerate(seeds):
        check_value(f"train_seeds[{i}]", seed, integer(0))
    if len(set(seeds)) < len(seeds):
        raise ValueError(f"train_seeds={seeds} repeats a seed: list each training seed once")
    return tuple(int(seed) for seed in seeds)


def check_missing(cfg: Any) -> None:
    """Refuse a config that leaves a mandatory value ('???') unset, naming the keys to set (a key of a node with
    `replicas` may be left to them: see `replica_nodes`)."""
    from omegaconf import OmegaConf

    def replicated(key: str) -> bool:
        parent = key.rpartition(".")[0]
        node = OmegaConf.select(cfg, parent, throw_on_missing=False) if parent else None
        return bool(OmegaConf.is_dict(node) and node.get("replicas") is not None)

    missing = sorted(k for k in OmegaConf.missing_keys(cfg) if not k.startswith("hydra") and not replicated(k))
    if missing:
        keys = ", ".join(missing)
        raise ValueError(f"{keys} must be given: add {' '.join(k + '=...' for k in missing)} to the command line "
                         "(e.g. data.path=/path/to/real.npy for data=array)")


def check_keys(node: Any, path: str = "") -> None:
    """Refuse mapping keys anywhere in the config that collide as labels after str() (1 and "1")."""
    if isinstance(node, dict):
        unique_names(node, f"{path or 'the config'} has the keys")
        for key, value in node.items():
            check_keys(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            check_keys(value, f"{path}[{i}]")


def numeric_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved config without the keys that change no number (NON_NUMERIC_KEYS) and those at their neutral
    value (NEUTRAL_KEYS, the generator group's `replicas: null`): the config part of a run's identity."""
    kept = {k: v for k, v in config.items()
            if k not in NON_NUMERIC_KEYS and not (k in NEUTRAL_KEYS and v == NEUTRAL_KEYS[k])}
    generator = kept.get("generator")
    if isinstance(generator, dict) and "replicas" in generator and generator["replicas"] is None:
        kept["generator"] = {k: v for k, v in generator.items() if k != "replicas"}
    return kept


# The one "config hash" ganeval shows (log, refusal message, runs.meta.json, summary.json): `identity_hash` of the
# identity a results directory is keyed by (`store_identity(settings, ctx.identity())`, or `ctx.identity()` alone
# for a task run through `run_loop`). What it hashes:
CONFIG_HASH_MEANS = "resolved config without number-neutral keys + protocol settings + content hashes of the inputs"
UNKNOWN_HASH = "(not computed: no runs were scored)"


def n_generated(cfg: Any) -> int:
    """The generated pool size: `n_generated`, or 2 × `sample_size` when null."""
    n = cfg.get("n_generated")
    return int(n) if n is not None else 2 * int(cfg.sample_size)


def strict_bool(cfg: Any, key: str) -> bool:
    """A true/false value of an experiment's own key (the schema types the top-level keys); anything else (e.g.
    the string "no", which is truthy) raises."""
    value = cfg.get(key)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false, got {value!r}")
    return value


def settings_from_config(cfg: Any) -> Settings:
    """The protocol settings of a composed config, validated (before any data is loaded)."""
    from omegaconf import OmegaConf

    raw = OmegaConf.to_container(cfg.metrics, resolve=True) if cfg.get("metrics") is not None else {}
    metrics = {k: (v or {}) for k, v in dict(raw).items() if v is not None}  # type: ignore[union-attr]  # null: not chosen
    return Settings(runs=cfg.runs, sample_size=cfg.sample_size, metrics=metrics, seed=cfg.seed,
                    confidence=cfg.confidence, device=cfg.device, workers=cfg.workers,
                    progress=cfg.progress, probe_repeats=cfg.probe_repeats)


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


def load_data(ctx: Context, node: Any, what: str) -> np.ndarray:
    """Instantiate a data config to an array, checked (rows, finite values) and hashed once into `ctx.content`."""
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
                ctx.settings.metrics.reaches(), ctx.settings.sample_size)
    ctx.content["data"][what] = array_identity(arr)
    return arr


def data_hash(ctx: Context, what: str) -> str:
    """The content hash of the data loaded as `what` (see `load_data`)."""
    return str(ctx.content["data"][what]["sha256"])


def make_extractor(ctx: Context) -> Any:
    """Instantiate the features group to an extractor, checking weights before any expensive step."""
    ex = instantiate(ctx.cfg.features)
    check_metric_inputs(ctx, ex)
    ident = ex.identity()  # resolves (and hashes) weights now: a missing file fails here, before any work
    ctx.record.extractor = ctx.content["extractor"] = ident
    return ex


def check_metric_inputs(ctx: Context, extractor: Any) -> None:
    """Refuse a metric the extractor's rows cannot feed (the Inception Score takes class logits, the others
    features), naming the extractor to use; an extractor whose `outputs` is None (given arrays) feeds any."""
    check_extractor_feeds(ctx.settings.metrics, extractor, ctx.choices.get("features", type(extractor).__name__))


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


def features(ctx: Context, images: np.ndarray, extractor: Any, what: str) -> np.ndarray:
    """Features of `images` through the cache (cache_dir), with a progress bar."""
    from ganeval.features import extract_with_info

    feats, info = extract_with_info(
        images, extractor, batch_size=int(ctx.cfg.batch_size), device=ctx.device,
        cache_dir=str(ctx.cfg.cache_dir) if ctx.cfg.cache_dir else None, progress=ctx.settings.progress,
    )
    log.info("features of %s: %s%s", what, feats.shape, " (cached)" if info.get("cache_hit") else "")
    return feats


# --------------------------------------------------------------------------- scoring and writing
def open_results(ctx: Context, protocol: bool = True) -> None:
    """Check results_dir for this config and content before any expensive work: a directory holding other runs
    (unless overwrite=true) or being written by another process is refused now, not after training and extraction.

    `protocol`: the runs go through `run_blocks` (keyed by the settings' identity too), else straight to `run_loop`.
    """
    from ganeval.protocol.api import store_identity
    from ganeval.protocol.store import ConfigMismatchError, check_store

    identity = store_identity(ctx.settings, ctx.identity()) if protocol else ctx.identity()
    try:  # run_loop keys the store by identity_hash of the identity it is given: the same key here
        check_store(ctx.results_dir, ctx.set_config_hash(identity), ctx.cfg["overwrite"], identity)
    except ConfigMismatchError as e:
        raise ConfigMismatchError(f"{e}{stored_differences(ctx.results_dir, identity)}") from None


def stored_differences(results_dir: Path, identity: dict[str, Any], most: int = 4) -> str:
    """' (what differs: key: stored -> now; ...)' between the identity stored in results_dir and `identity`, or ''."""
    import json

    from ganeval.protocol.store import META_FILE

    def leaves(obj: Any, prefix: str = "") -> dict[str, Any]:
        if not isinstance(obj, dict) or not obj:
            return {prefix: obj}
        return {k: v for key, value in obj.items()
                for k, v in leaves(value, f"{prefix}.{key}" if prefix else str(key)).items()}

    try:
        old = leaves(json.loads((results_dir / META_FILE).read_text())["identity"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""  # no readable identity stored: the store's message says enough
    new = leaves(json.loads(json.dumps(identity, default=str)))
    keys = [k for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]
    if not keys:
        return ""
    shown = "; ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys[:most])
    return f" (what differs: {shown}{'; ...' if len(keys) > most else ''})"


def score(ctx: Context, blocks: list[Any]) -> pd.DataFrame:
    """Run the protocol over `blocks` into results_dir/runs.csv (resumable) and return the per-run rows."""
    from ganeval.protocol import run_blocks
    from ganeval.protocol.api import store_identity

    ctx.set_config_hash(store_identity(ctx.settings, ctx.identity()))  # the key run_blocks opens the store with
    with ctx.stage("runs"):
        rows = run_blocks(blocks, ctx.settings, ctx.results_dir, ctx.identity(), ctx.cfg["overwrite"])
    ctx.record.seconds_per_run = ctx.stage_seconds["runs"] / ctx.settings.runs
    return rows


def summarize(ctx: Context, rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """(summary, comparison of models or None, per-(model, seed) summary or None) of the per-run rows.

    Rows with a `train_seed` or `probe_draw` column get the two levels of `summarize_levels` (what the intervals
    cover and the variance shares go into the run record); other rows today's `summarize_runs`/`compare_runs`.
    """
    from ganeval.results import compare_runs, summarize_runs
    from ganeval.results.seeds import coverage_note, summarize_levels, variance_record

    s = ctx.settings
    if SEED not in rows.columns and PROBE not in rows.columns:
        comparison = compare_runs(rows, s.confidence) if rows["model"].nunique() > 1 else None
        return summarize_runs(rows, s.confidence, s.sample_size), comparison, None
    levels = summarize_levels(rows, s.confidence, s.sample_size)
    ctx.record.interval_covers = coverage_note(levels.summary)
    ctx.record.variance_shares = variance_record(levels.variance)
    return levels.summary, levels.comparison if len(levels.comparison) else None, levels.seeds


def write(ctx: Context, summary: pd.DataFrame, comparison: pd.DataFrame | None, title: str,
          tables: bool = True, seeds: pd.DataFrame | None = None) -> None:
    """Write summary.csv/.json, comparison.csv, summary_seeds.csv (per-(model, seed) `seeds` with several
    training seeds), the tables, (if plots) summary.png and report.html into results_dir."""
    from ganeval.results import plots, write_results

    if "imd" in ctx.settings.metrics:
        ctx.record.knn = ctx.settings.metrics["imd"]["knn"]
    seeds = seeds if seeds is not None and SEED in seeds.columns else None
    ctx.record.set_results(summary, ctx.stage_seconds)
    write_results(ctx.results_dir, summary, comparison, ctx.record, title=title, tables=tables, seeds=seeds)
    from ganeval.results.verdict import write_verdict

    write_verdict(ctx.results_dir, comparison, ctx.record.extractor or None)
    if ctx.cfg["plots"] and tables:
        plots.plot_summary(summary, ctx.results_dir / "summary.png", title, seeds=seeds,
                           extractor=ctx.record.extractor or None)
        if comparison is not None and len(comparison) and {"a", "b", "diff_mean"} <= set(comparison.columns):
            from ganeval.results.paired import plot_paired

            plot_paired(ctx.results_dir, comparison, seeds, ctx.record.extractor or None, title)
    ctx.report_title = title
    write_report(ctx)
    log.info("results in %s", ctx.results_dir)


def write_report(ctx: Context) -> None:
    """(Re)write results_dir/report.html from the files there and the run record: called by `write` and again by
    the app after the experiment returns, so figures an experiment writes after `write` are in it too."""
    from ganeval.results.report import write_report as write_html

    if (ctx.results_dir / "summary.csv").exists():
        write_html(ctx.results_dir, ctx.record, ctx.report_title or str(ctx.cfg.get("title") or ctx.name))
