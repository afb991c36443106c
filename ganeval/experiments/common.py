"""Steps every experiment shares: the run context, data and features, generators (trained or given), scoring, writing.

Only this pipeline layer reads configs: it instantiates the data, features and generator groups and hands
plain arrays to `ganeval.protocol`.
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
    choices: dict[str, str] = field(default_factory=dict)  # Hydra's group choices, e.g. {"data": "digits"}
    stage_seconds: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

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


def config_hash(config: Mapping[str, Any]) -> str:
    """Hash of the resolved config without the keys that change no number (NON_NUMERIC_KEYS)."""
    return stable_hash({k: v for k, v in config.items() if k not in NON_NUMERIC_KEYS})


def n_generated(cfg: Any) -> int:
    """The generated pool size: `n_generated`, or 2 × `sample_size` when null."""
    n = cfg.get("n_generated")
    return int(n) if n is not None else 2 * int(cfg.sample_size)


def metric_options(cfg: Any) -> dict[str, dict[str, Any]]:
    """The metrics group as name -> options, completed and checked by the protocol."""
    from omegaconf import OmegaConf

    from ganeval.protocol import normalize_metrics

    raw = OmegaConf.to_container(cfg.metrics, resolve=True) if cfg.get("metrics") is not None else {}
    return normalize_metrics({k: (v or {}) for k, v in dict(raw).items()})  # type: ignore[union-attr]


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
    from ganeval.features import get_extractor

    node = ctx.cfg.features
    ex = instantiate(node) if "_target_" in node else get_extractor(str(node.get("name", node)))
    ex.identity()  # resolves weights now: a missing file fails here, before training or extraction
    ctx.extra["extractor"] = ex.identity()
    return ex


def features(ctx: Context, images: np.ndarray, extractor: Any, what: str) -> np.ndarray:
    """Features of `images` through the cache (cache_dir), with a progress bar."""
    from ganeval.features import extract_with_info

    feats, info = extract_with_info(
        images, extractor, batch_size=int(ctx.cfg.batch_size), device=ctx.device,
        cache_dir=str(ctx.cfg.cache_dir) if ctx.cfg.cache_dir else None, progress=bool(ctx.cfg.progress),
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
    spec.setdefault("seed", int(ctx.cfg.seed))
    key = stable_hash({"data": data, "model": model, **spec}, 10)
    out_dir = Path(str(ctx.cfg.models_dir)) / data / f"{model}-{key}"
    with ctx.stage(f"train {data}/{model}"):
        path = train(real, out_dir=out_dir, device=ctx.device, progress=bool(ctx.cfg.progress), **spec)
    return checkpoint_generator(path)


def checkpoint_generator(path: str | Path) -> Any:
    """The generator object of a trained checkpoint."""
    from ganeval.gan import CheckpointGenerator

    return CheckpointGenerator(path=str(path))


def build_generators(ctx: Context, real: np.ndarray, specs: Mapping[str, Any], data: str, validate_only: bool = False) -> dict[str, Any]:
    """name -> generator object: `{train: {...}}` specs are trained, others instantiated from the generator group."""
    out: dict[str, Any] = {}
    for name, spec in specs.items():
        if spec is None:
            continue
        if "train" in spec:
            from omegaconf import OmegaConf

            plain = OmegaConf.to_container(spec.train, resolve=True) if not isinstance(spec.train, dict) else spec.train
            check_train_spec(real, plain, f"{data}/{name}")  # type: ignore[arg-type]
            if validate_only:
                continue
            out[name] = train_generator(ctx, real, plain, data, name)  # type: ignore[arg-type]
        else:
            gen = instantiate(spec)
            if hasattr(gen, "validate"):
                gen.validate()
            out[name] = gen
    return out


def generated_pool(ctx: Context, gen: Any, name: str) -> np.ndarray:
    """Draw the generator's pool once (seeded): `n_generated` samples, or all of a samples file."""
    n = pool_size(ctx, gen)
    with ctx.stage(f"sample {name}"):
        return np.asarray(gen.sample(n, seed=int(ctx.cfg.seed), batch_size=int(ctx.cfg.batch_size), device=ctx.device))


def pool_size(ctx: Context, gen: Any) -> int:
    """`n_generated`, except for a samples generator, whose pool is the samples given."""
    for attr in ("n_samples", "__len__"):
        if hasattr(gen, attr):
            try:
                return int(getattr(gen, attr)() if attr == "__len__" else getattr(gen, attr))
            except TypeError:
                continue
    return n_generated(ctx.cfg)


def generator_identity(gen: Any) -> dict[str, Any]:
    """The generator's identity() when it has one."""
    return dict(gen.identity()) if hasattr(gen, "identity") else {"type": type(gen).__name__}


# --------------------------------------------------------------------------- scoring and writing
def score(ctx: Context, blocks: list[Any], metrics: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Run the protocol over `blocks` into results_dir/runs.csv (resumable) and return the per-run rows."""
    from ganeval.protocol import run_blocks

    with ctx.stage("runs"):
        rows = run_blocks(
            blocks, runs=int(ctx.cfg.runs), sample_size=int(ctx.cfg.sample_size), metrics=metrics,
            seed=int(ctx.cfg.seed), device=ctx.device, results_dir=ctx.results_dir,
            identity={"config_hash": ctx.config_hash}, overwrite=bool(ctx.cfg.overwrite),
            workers=int(ctx.cfg.workers), progress=bool(ctx.cfg.progress),
        )
    ctx.extra["seconds_per_run"] = ctx.stage_seconds["runs"] / max(1, int(ctx.cfg.runs))
    return rows


def write(ctx: Context, summary: pd.DataFrame, comparison: pd.DataFrame | None, title: str,
          tables: bool = True, metrics: dict[str, dict[str, Any]] | None = None) -> None:
    """Write summary.csv/.json, comparison.csv, the tables and (if plots) summary.png into results_dir."""
    from ganeval import plots, reports

    extra = dict(ctx.extra)
    if metrics and "imd" in metrics:
        extra["knn"] = metrics["imd"]["knn"]
    extra["experiment"] = ctx.name
    extra["runs"] = int(ctx.cfg.runs)
    record = reports.summary_record(summary, ctx.config, ctx.config_hash, int(ctx.cfg.seed), ctx.device,
                                    ctx.stage_seconds, extra)
    reports.write_results(ctx.results_dir, summary, comparison, record, title=title, tables=tables)
    if ctx.cfg.plots and tables:
        plots.plot_summary(summary, ctx.results_dir / "summary.png", title)
    log.info("results in %s", ctx.results_dir)
