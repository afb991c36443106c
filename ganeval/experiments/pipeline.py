"""The pipeline every experiment runs: config -> context (settings validated once) -> data and features ->
generators (trained or given) -> protocol runs -> results.

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

from ganeval.hashing import stable_hash
from ganeval.protocol import Settings
from ganeval.results import RunRecord

log = logging.getLogger("ganeval")

# Keys that do not change any number: left out of the config hash that guards resuming.
# `runs` is left out too: run r's numbers do not depend on how many runs there are, so raising `runs`
# extends a finished experiment instead of refusing it.
NON_NUMERIC_KEYS = ("results_dir", "cache_dir", "models_dir", "overwrite", "workers", "batch_size",
                    "progress", "plots", "runs", "hydra")


@dataclass
class Context:
    """What an experiment needs besides its config: where to write, on which device, and timings."""

    cfg: Any  # the composed DictConfig
    name: str  # experiment name (results/<name>)
    results_dir: Path
    device: str
    config: dict[str, Any]  # resolved config as plain containers
    config_hash: str
    settings: Settings
    choices: dict[str, str] = field(default_factory=dict)  # Hydra's group choices, e.g. {"data": "digits"}
    stage_seconds: dict[str, float] = field(default_factory=dict)
    record: RunRecord = field(init=False)  # summary.json: each step sets the fields it knows

    def __post_init__(self) -> None:
        """Start the run record with what the context knows; the steps and `write` fill in the rest."""
        self.record = RunRecord(config_hash=self.config_hash, config=self.config, seed=self.settings.seed,
                                device=self.device, experiment=self.name, runs=self.settings.runs)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a stage (summed if entered again) and log its start and end."""
        log.info("%s ...", name)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            self.stage_seconds[name] = self.stage_seconds.get(name, 0.0) + dt
            log.info("%s done in %.1f s", name, dt)


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

    import_plugins(cfg.get("plugins") or [])
    hc = HydraConfig.get()
    name = hc.runtime.choices.get("experiment") or "custom"
    if cfg.results_dir:
        results_dir = Path(str(cfg.results_dir))
    elif hc.mode == RunMode.MULTIRUN:
        results_dir = Path(hc.runtime.output_dir)  # each sweep job in its own job directory
    else:
        results_dir = Path("results") / name
    settings = settings_from_config(cfg)
    for key in ("overwrite", "plots"):
        strict_bool(cfg, key)
    if isinstance(cfg.batch_size, bool) or not isinstance(cfg.batch_size, int) or cfg.batch_size < 1:
        raise ValueError(f"batch_size must be an integer ≥ 1, got {cfg.batch_size!r}")
    config = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(config, dict)
    config["device"] = settings.device
    config["metrics"] = settings.metrics.as_dict()  # resolved: an option left at its default hashes as if given
    ctx = Context(cfg=cfg, name=name, results_dir=results_dir, device=str(settings.device), config=config,
                  config_hash=config_hash(config), settings=settings,
                  choices={str(k): str(v) for k, v in hc.runtime.choices.items() if v is not None})
    ctx.record.overrides = list(hc.overrides.task)
    ctx.record.command = "ganeval " + " ".join(hc.overrides.task)
    return ctx


def config_hash(config: Mapping[str, Any]) -> str:
    """Hash of the resolved config without the keys that change no number (NON_NUMERIC_KEYS)."""
    return stable_hash({k: v for k, v in config.items() if k not in NON_NUMERIC_KEYS})


def n_generated(cfg: Any) -> int:
    """The generated pool size: `n_generated`, or 2 × `sample_size` when null."""
    n = cfg.get("n_generated")
    return int(n) if n is not None else 2 * int(cfg.sample_size)


def strict_bool(cfg: Any, key: str) -> bool:
    """A true/false config value; anything else (e.g. the string "no", which is truthy) raises."""
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
                    progress=strict_bool(cfg, "progress"))


# --------------------------------------------------------------------------- data and features
def instantiate(node: Any) -> Any:
    """`hydra.utils.instantiate` of a config node (plain values pass through)."""
    from hydra.utils import instantiate as _inst

    return _inst(node, _convert_="all")


def load_data(node: Any, what: str) -> np.ndarray:
    """Instantiate a data config to an array; ValueError naming `what` when it is not one."""
    arr = instantiate(node)
    if hasattr(arr, "numpy") and not isinstance(arr, np.ndarray):
        arr = arr.numpy()
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{what} must instantiate to a numpy array, got {type(arr).__name__}")
    if len(arr) == 0:
        raise ValueError(f"{what} is empty")
    return arr


def make_extractor(ctx: Context) -> Any:
    """Instantiate the features group to an extractor, checking weights before any expensive step."""
    ex = instantiate(ctx.cfg.features)
    ex.identity()  # resolves weights now: a missing file fails here, before training or extraction
    ctx.record.extractor = ex.identity()
    return ex


def features(ctx: Context, images: np.ndarray, extractor: Any, what: str) -> np.ndarray:
    """Features of `images` through the cache (cache_dir), with a progress bar."""
    from ganeval.features import extract_with_info

    feats, info = extract_with_info(
        images, extractor, batch_size=int(ctx.cfg.batch_size), device=ctx.device,
        cache_dir=str(ctx.cfg.cache_dir) if ctx.cfg.cache_dir else None, progress=ctx.settings.progress,
    )
    log.info("features of %s: %s%s", what, feats.shape, " (cached)" if info.get("cache_hit") else "")
    return feats


# --------------------------------------------------------------------------- generators
def check_train_spec(real: np.ndarray, spec: Mapping[str, Any], what: str) -> None:
    """Check a `{train: ...}` spec (architecture, its sizes, trainer, batch size, epochs) before anything trains."""
    import dataclasses

    from ganeval.gan import GanConfig, gan_config, get_architecture
    from ganeval.gan.architectures import resolve_arch_kwargs

    trainer = {f.name for f in dataclasses.fields(GanConfig)} - {"name"}  # trainer overrides, e.g. lr_d
    known = {"arch", "gan", "epochs", "batch_size", "seed", "arch_kwargs", "checkpoint_every", "sample_every"} | trainer
    unknown = set(spec) - known
    if "arch" not in spec or "gan" not in spec or "epochs" not in spec:
        raise ValueError(f"{what}.train needs arch, gan and epochs (e.g. {{arch: digits, gan: wgan, epochs: 20}})")
    if unknown:
        raise ValueError(f"{what}.train has unknown keys {sorted(unknown)}; known: {sorted(known)}")
    try:
        get_architecture(str(spec["arch"]))
        resolve_arch_kwargs(str(spec["arch"]), dict(spec.get("arch_kwargs") or {}))
        gan_config(spec["gan"], **{k: v for k, v in spec.items() if k in trainer})
    except ValueError as e:
        raise ValueError(f"{what}.train: {e}") from e
    bs = int(spec.get("batch_size", 64))
    if bs > len(real):
        raise ValueError(f"{what}.train.batch_size={bs} is larger than the real data ({len(real)} rows); lower it")
    if int(spec["epochs"]) < 1:
        raise ValueError(f"{what}.train.epochs must be at least 1, got {spec['epochs']}")


def train_generator(ctx: Context, real: np.ndarray, spec: Mapping[str, Any], data: str, model: str) -> Any:
    """Train (or resume, or reuse) a generator on `real` as `spec` says; return a generator object."""
    from ganeval.gan import train

    spec = dict(spec)
    if ctx.cfg.get("train_epochs") is not None:
        spec["epochs"] = int(ctx.cfg.train_epochs)
    spec.setdefault("seed", ctx.settings.seed)
    key = stable_hash({"data": data, "model": model, **spec}, 10)
    out_dir = Path(str(ctx.cfg.models_dir)) / data / f"{model}-{key}"
    with ctx.stage(f"train {data}/{model}"):
        path = train(real, out_dir=out_dir, device=ctx.device, progress=ctx.settings.progress, **spec)
    return checkpoint_generator(path)


def checkpoint_generator(path: str | Path) -> Any:
    """The generator object of a trained checkpoint."""
    from ganeval.gan import CheckpointGenerator

    return CheckpointGenerator(path=str(path))


def plan_generator(ctx: Context, real: np.ndarray, node: Any, what: str) -> Any:
    """A generator node, checked but not run: the `{train: ...}` spec as a plain dict (checked), or the
    instantiated generator (validated)."""
    if "train" in node:
        spec = plain(node.train)
        check_train_spec(real, spec, what)
        return spec
    gen = instantiate(node)
    if hasattr(gen, "validate"):
        gen.validate()
    return gen


def realise_generator(ctx: Context, real: np.ndarray, plan: Any, data: str, model: str) -> Any:
    """The generator object of a plan: trained (or resumed, or reused) for a train spec."""
    return train_generator(ctx, real, plan, data, model) if isinstance(plan, dict) else plan


def plain(node: Any) -> dict[str, Any]:
    """A config node as plain containers (resolved)."""
    from omegaconf import OmegaConf

    out = node if isinstance(node, dict) else OmegaConf.to_container(node, resolve=True)
    assert isinstance(out, dict)
    return out


def generated_pool(ctx: Context, gen: Any, name: str) -> np.ndarray:
    """Draw the generator's pool once (seeded): `n_generated` samples, or all of a samples file."""
    n = pool_size(ctx, gen)
    with ctx.stage(f"sample {name}"):
        return np.asarray(gen.sample(n, seed=ctx.settings.seed, batch_size=int(ctx.cfg.batch_size), device=ctx.device))


def pool_size(ctx: Context, gen: Any) -> int:
    """`n_generated`, except for a samples generator, whose pool is the samples given (its length)."""
    return len(gen) if hasattr(gen, "__len__") else n_generated(ctx.cfg)


def generator_identity(gen: Any) -> dict[str, Any]:
    """The generator's identity() when it has one."""
    return dict(gen.identity()) if hasattr(gen, "identity") else {"type": type(gen).__name__}


# --------------------------------------------------------------------------- scoring and writing
def score(ctx: Context, blocks: list[Any]) -> pd.DataFrame:
    """Run the protocol over `blocks` into results_dir/runs.csv (resumable) and return the per-run rows."""
    from ganeval.protocol import run_blocks

    with ctx.stage("runs"):
        rows = run_blocks(blocks, ctx.settings, ctx.results_dir, {"config_hash": ctx.config_hash},
                          strict_bool(ctx.cfg, "overwrite"))
    ctx.record.seconds_per_run = ctx.stage_seconds["runs"] / ctx.settings.runs
    return rows


def write(ctx: Context, summary: pd.DataFrame, comparison: pd.DataFrame | None, title: str,
          tables: bool = True) -> None:
    """Write summary.csv/.json, comparison.csv, the tables and (if plots) summary.png into results_dir."""
    from ganeval.results import plots, write_results

    if "imd" in ctx.settings.metrics:
        ctx.record.knn = ctx.settings.metrics["imd"]["knn"]
    ctx.record.set_results(summary, ctx.stage_seconds)
    write_results(ctx.results_dir, summary, comparison, ctx.record, title=title, tables=tables)
    if strict_bool(ctx.cfg, "plots") and tables:
        plots.plot_summary(summary, ctx.results_dir / "summary.png", title)
    log.info("results in %s", ctx.results_dir)
