"""The plan of a run, built once from the composed config: config -> Plan -> the study's `run(plan)` -> results.

`ganeval.app.validate.build_plan` makes every check that needs no input's content (types by the schema while Hydra
composed; there the ranges, the metric options against sample_size, mandatory keys, plugins, writable folders, the
named protocol, and the static checks) from the parts read here, and gathers what the run is: its validated
`Settings`, the run-wide options, the inputs the config names (each listed with its source; its content identity is
taken once, when it is read), the outputs and their directory. A study receives the plan and never the raw config:
its own keys and input nodes are `plan.params` (read-only). `dry_run=true` is "build the plan and print it" (`describe`).
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, cast

from ganeval.metrics.registry import integer
from ganeval.protocol import Settings
from ganeval.protocol.api import unique_names
from ganeval.protocol.settings import check_value
from ganeval.protocol.store import PROVENANCE_KEY, identity_hash
from ganeval.results import RunRecord

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

log = logging.getLogger("ganeval")

# Keys that do not change any number: left out of the config part of a run's identity (see `Plan.identity`).
# `runs` is left out too: run r's numbers do not depend on how many runs there are, so raising `runs`
# extends a finished experiment instead of refusing it.
NON_NUMERIC_KEYS = ("results_dir", "cache_dir", "models_dir", "overwrite", "workers", "batch_size",
                    "progress", "plots", "runs", "hydra", "dry_run")
# Keys left out of the identity while at these values (their defaults, which change no number); a generator's
# `replicas: null` likewise.
NEUTRAL_KEYS: dict[str, Any] = {"train_seeds": None, "probe_repeats": 0}
# The root keys the plan holds typed (settings, options, its own fields): the rest of the config is `params`.
TYPED_KEYS = ("plugins", "run_experiment", "runs", "sample_size", "n_generated", "confidence", "seed", "device",
              "results_dir", "cache_dir", "models_dir", "overwrite", "workers", "batch_size", "progress",
              "train_epochs", "train_seeds", "probe_repeats", "plots", "dry_run", "metrics", "hydra")

# The one "config hash" ganeval shows (log, refusal message, runs.meta.json, summary.json): `identity_hash` of the
# identity a results directory is keyed by (`store_identity(settings, plan.identity())`, or `plan.identity()` alone
# for a task run through `run_loop`). What it hashes:
CONFIG_HASH_MEANS = "resolved config without number-neutral keys + protocol settings + content hashes of the inputs"
UNKNOWN_HASH = "(not computed: no runs were scored)"


@dataclass(frozen=True)
class Options:
    """The run-wide keys that are not protocol settings: how to extract, sample, train and write."""

    batch_size: int = 250
    cache_dir: str | None = None
    models_dir: str = "models"
    train_epochs: int | None = None
    n_generated: int | None = None  # the generated pool size per generator (the config's null: 2 × sample_size)
    plots: bool = True
    overwrite: bool = False


@dataclass(frozen=True)
class Input:
    """One input the config names: where (`key`), what it is, and where it comes from (target and file)."""

    key: str  # e.g. data, datasets.mnist.data, generators.wgan, generator, features
    role: str  # real data | generator to train | given generator | extractor
    source: str  # the `_target_` and the file or folder it names, or the train spec


@dataclass
class Plan:
    """What a run does, checked: the study, its settings and options, inputs, outputs and directory; and, filled
    while it runs, the inputs' content identities, the run record and the stage timings."""

    name: str  # experiment name (results/<name>)
    results_dir: Path
    device: str
    settings: Settings
    config: dict[str, Any]  # resolved config as plain containers (the record and the identity)
    study: str = ""  # the `_target_` of the experiment's run function
    options: Options = field(default_factory=Options)
    params: Any = None  # the experiment's own keys and input nodes (a read-only DictConfig)
    inputs: tuple[Input, ...] = ()
    reads: tuple[str, ...] | None = None  # the keys the study reads inputs from (its `INPUTS`); None: any
    outputs: tuple[str, ...] = ()
    checked: tuple[str, ...] = ()  # what building the plan checked (listed by a dry run)
    train_seeds: tuple[int, ...] | None = None  # `train_seeds` checked; None: one seed (a spec's own, or `seed`)
    choices: dict[str, str] = field(default_factory=dict)  # Hydra's group choices, e.g. {"data": "digits"}
    dry_run: bool = False
    # filled while it runs: what the numbers come from, by content (data arrays, generators, extractor), each input
    # hashed once as it is read; with the numeric config it is the identity of results_dir (see `open_results`)
    content: dict[str, dict[str, Any]] = field(default_factory=lambda: {"data": {}, "generators": {}})
    stage_seconds: dict[str, float] = field(default_factory=dict)
    stage_items: dict[str, int] = field(default_factory=dict)  # what a stage processed (images extracted): its rate
    record: RunRecord = field(init=False)  # summary.json: each step sets the fields it knows
    report_title: str = ""  # the title `write` gave the tables, reused by report.html
    report_table: Any = None  # the `PaperTable` `write` wrote as table.md, drawn again by report.html (None: none)

    def __post_init__(self) -> None:
        """Start the run record with what the plan knows; the steps and `write` fill in the rest."""
        self.record = RunRecord(config_hash=UNKNOWN_HASH, config=self.config, seed=self.settings.seed,
                                device=self.device, experiment=self.name, runs=self.settings.runs)

    @property
    def title(self) -> str:
        """The experiment's `title` key, else its name."""
        own = self.params.get("title") if self.params is not None else None
        return str(own or self.name)

    def identity(self, metrics: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What the numbers depend on besides the protocol settings: the resolved config without the keys that
        change no number (`numeric_config`) and the content hashes of every input; the inputs' paths declared as
        provenance (`input_provenance`: kept, but neither hashed nor compared). `metrics`: the identity once
        `narrow_metrics(metrics)` has run."""
        config = self.config if metrics is None else narrowed_config(self.config, metrics)
        ident: dict[str, Any] = {"config": numeric_config(config), "content": self.content}
        where = input_provenance(ident["config"], self.content)
        return {**ident, PROVENANCE_KEY: where} if where else ident

    def narrow_metrics(self, metrics: Metrics, note: str) -> None:
        """Score only `metrics`, some of the settings' (the default ones that fit sets of different dimension,
        `ganeval.metrics.dims.fit_metrics`): in the settings and the config alike, `note` saying why in the record."""
        from dataclasses import replace

        self.settings = replace(self.settings, metrics=metrics)
        self.config = self.record.config = narrowed_config(self.config, metrics)
        self.record.left_out = note

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


# --------------------------------------------------------------------------- config -> plan parts
def import_plugins(modules: Any) -> None:
    """Import the modules named in `plugins`, so the metrics and extractors they register can be chosen."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(str(name))
        except ImportError as e:
            raise ValueError(f"plugins: cannot import {name!r} ({e}); is it on PYTHONPATH?") from None


def fit_kid_to_sample(cfg: Any) -> None:
    """The one rule of every entry point (`ganeval.protocol.settings.fit_kid_subset`): KID's subsets at the metrics
    group's default size (1000 rows) but sample_size smaller are shrunk to sample_size, with a logged note; the config
    then records the size used. Any other size larger than sample_size stays refused (`Settings`)."""
    from omegaconf import open_dict

    from ganeval.metrics.kid import DEFAULTS as KID_DEFAULTS

    kid, n, default = (cfg.get("metrics") or {}).get("kid"), cfg.get("sample_size"), int(KID_DEFAULTS["subset_size"])
    if kid is None or not isinstance(n, int) or not 2 <= n < default or kid.get("subset_size") != default:
        return
    with open_dict(cfg):
        cfg.metrics.kid.subset_size = n
    log.warning("note: KID's subsets hold %d rows (sample_size=%d; the default is %d): KID is comparable only with KID "
                "at the same subset size; choose it with metrics.kid.subset_size=N", n, n, default)


def settings_from_config(cfg: Any) -> Settings:
    """The protocol settings of a composed config, validated (before any data is loaded)."""
    from omegaconf import OmegaConf

    fit_kid_to_sample(cfg)
    raw = cast("dict[str, Any]", OmegaConf.to_container(cfg.metrics, resolve=True)) if cfg.get("metrics") is not None else {}
    metrics = {k: (v or {}) for k, v in dict(raw).items() if v is not None}  # null: not chosen
    return Settings(runs=cfg.runs, sample_size=cfg.sample_size, metrics=metrics, seed=cfg.seed,
                    confidence=cfg.confidence, device=cfg.device, workers=cfg.workers,
                    progress=cfg.progress, probe_repeats=cfg.probe_repeats)


def options_from_config(cfg: Any) -> Options:
    """The run-wide options of a composed config, their ranges checked (the schema checked their types)."""
    check_value("batch_size", cfg.batch_size, integer(1))
    if cfg.get("train_epochs") is not None:
        check_value("train_epochs", cfg.train_epochs, integer(1))
    if cfg.get("n_generated") is not None:
        check_value("n_generated", cfg.n_generated, integer(1))
    n = cfg.get("n_generated")
    return Options(batch_size=int(cfg.batch_size), cache_dir=str(cfg.cache_dir) if cfg.cache_dir else None,
                   models_dir=str(cfg.models_dir), train_epochs=cfg.get("train_epochs"),
                   n_generated=int(n) if n is not None else 2 * int(cfg.sample_size),
                   plots=bool(cfg.plots), overwrite=bool(cfg.overwrite))


def check_train_seeds(value: Any) -> tuple[int, ...] | None:
    """`train_seeds` checked: null (one seed: a spec's own, or `seed`) or a non-empty list of distinct integers >= 0 (the
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
    `replicas` may be left to them: see `generators.replica_nodes`)."""
    from omegaconf import OmegaConf

    def replicated(key: str) -> bool:
        parent = key.rpartition(".")[0]
        node = OmegaConf.select(cfg, parent, throw_on_missing=False) if parent else None
        return bool(node is not None and OmegaConf.is_dict(node) and node.get("replicas") is not None)

    missing = sorted(k for k in OmegaConf.missing_keys(cfg) if not k.startswith("hydra") and not replicated(k))
    if missing:
        keys = ", ".join(missing)
        example = " (e.g. data.path=/path/to/real.npy for data=array)" if "data.path" in missing else ""
        raise ValueError(f"{keys} must be given: add {' '.join(k + '=...' for k in missing)} to the command line"
                         + example)


def check_keys(node: Any, path: str = "") -> None:
    """Refuse mapping keys anywhere in the config that collide as labels after str() (1 and "1")."""
    if isinstance(node, dict):
        unique_names(node, f"{path or 'the config'} has the keys")
        for key, value in node.items():
            check_keys(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            check_keys(value, f"{path}[{i}]")


def narrowed_config(config: dict[str, Any], metrics: Mapping[str, Any]) -> dict[str, Any]:
    """`config` with its `metrics` node cut to the names of `metrics` (a config without one: unchanged)."""
    node = config.get("metrics")
    if not isinstance(node, Mapping):
        return config
    return {**config, "metrics": {k: v for k, v in node.items() if k in metrics}}


def numeric_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved config without the keys that change no number (NON_NUMERIC_KEYS) and those at their neutral
    value (NEUTRAL_KEYS, the generator group's `replicas: null`): the config part of a run's identity."""
    kept = {k: v for k, v in config.items()
            if k not in NON_NUMERIC_KEYS and not (k in NEUTRAL_KEYS and v == NEUTRAL_KEYS[k])}
    generator = kept.get("generator")
    if isinstance(generator, dict) and "replicas" in generator and generator["replicas"] is None:
        kept["generator"] = {k: v for k, v in generator.items() if k != "replicas"}
    return kept


def input_provenance(config: Mapping[str, Any], content: Mapping[str, Any]) -> list[list[str]]:
    """The key paths (under "config" and "content") of an identity whose values are input paths, each standing
    beside a content hash of what was read from it: ganeval-score's REAL and FAKEs (content.data.real,
    content.generators[name]); the app's data.path (its array hashed into content.data) and the paths of generators
    identified by their files' SHA-256. What defines a run is the content; a path is provenance."""
    data, gens = content.get("data") or {}, content.get("generators") or {}
    out: list[list[str]] = []
    if isinstance(config.get("real"), str) and "real" in data:
        out.append(["config", "real"])
    fakes = config.get("fakes")
    for name, arg in (fakes.items() if isinstance(fakes, Mapping) else ()):
        if isinstance(arg, str) and name in gens:
            out.append(["config", "fakes", str(name)])
    node = config.get("data")
    if isinstance(node, Mapping) and isinstance(node.get("path"), str) and data:
        out.append(["config", "data", "path"])
    for key, g in gens.items():
        if isinstance(g, Mapping) and isinstance(g.get("path"), str) and g.get("sha256"):
            out.append(["content", "generators", str(key), "path"])
    if gens and all(isinstance(g, Mapping) and g.get("sha256") for g in gens.values()):  # every generator a file
        others = config.get("generators")
        nodes = [(["config", "generator"], config.get("generator")),
                 *((["config", "generators", str(n)], v) for n, v in (others.items() if isinstance(others, Mapping)
                                                                     else ()))]
        for where, g in nodes:
            if isinstance(g, Mapping):
                out += [[*where, k] for k in ("path", "replicas") if g.get(k) is not None]
    return out


def strict_bool(params: Any, key: str) -> bool:
    """A true/false value of an experiment's own key (the schema types the top-level keys); anything else (e.g.
    the string "no", which is truthy) raises."""
    value = params.get(key)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false, got {value!r}")
    return value


# --------------------------------------------------------------------------- plan -> words (dry_run=true)
def describe(plan: Plan) -> str:
    """The plan in words: the study, settings, options, inputs, outputs and what building it checked."""
    s, o = plan.settings, plan.options
    metrics = ", ".join(f"{m.name}" for m, _ in cast("Metrics", s.metrics).ordered()) or "none"
    lines = [f"plan of experiment {plan.name} ({plan.study})",
             f"  protocol: {s.runs} run{'s' if s.runs != 1 else ''} of {s.sample_size} rows per pool, seed {s.seed}, {s.confidence:.0%} "
             f"intervals, metrics {metrics}, on {plan.device}",
             f"  options: batch_size {o.batch_size}, n_generated {o.n_generated}, cache_dir {o.cache_dir}, "
             f"models_dir {o.models_dir}" + (f", train_epochs {o.train_epochs}" if o.train_epochs else "")
             + (f", train_seeds {list(plan.train_seeds)}" if plan.train_seeds else ""),
             "  inputs (each hashed by content when it is read):"]
    lines += [f"    {i.key}: {i.role}, {i.source}" for i in plan.inputs] or ["    (none)"]
    lines.append(f"  outputs in {plan.results_dir} (those that apply): {', '.join(plan.outputs)}")
    lines.append(f"  checked: {'; '.join(plan.checked)}")
    return "\n".join(lines)
