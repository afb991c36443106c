"""The generators of a run: `{train: ...}` specs checked, resolved per training seed and trained (or resumed) in their
folder (`model_dir`), given generators instantiated per replica, their content identity, their sampled pools, and
the protocol blocks of a model's seeds. Called by the studies on their plan (`ganeval.app.plan`)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping, cast

import numpy as np

from ganeval.app.pipeline import data_hash, instantiate
from ganeval.app.plan import Plan
from ganeval.hashing import stable_hash
from ganeval.metrics.registry import integer
from ganeval.protocol import Block
from ganeval.protocol.settings import check_value
from ganeval.results.seeds import SEED

log = logging.getLogger("ganeval")


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
    check_value(f"{what}.train.epochs", spec["epochs"], integer(1))


def resolve_train_spec(plan: Plan, spec: Mapping[str, Any], seed: int | None = None) -> dict[str, Any]:
    """The spec that trains: `train_epochs` (when set) replaces its epochs; its seed is `seed` when given (one of
    `train_seeds`), else its own, else the config's `seed`."""
    out = dict(spec)
    if plan.options.train_epochs is not None:
        out["epochs"] = plan.options.train_epochs
    if seed is not None:
        out["seed"] = seed
    out.setdefault("seed", plan.settings.seed)
    return out


def spec_key(data: str, model: str, spec: Mapping[str, Any]) -> str:
    """The 10-hex hash of the full training spec that keys a trained model's folder."""
    return stable_hash({"data": data, "model": model, **spec}, 10)


def model_dir(models_dir: str | Path, data: str, model: str, spec: Mapping[str, Any]) -> Path:
    """Where a generator trained by `spec` lives: `models_dir/<data>/<data>-<model>-seed<k>-<hash>/`, a name a person
    can read with the hash that keys it. A folder of the short layout (`models_dir/<data>/<model>-<hash>/`, same
    hash) is renamed to it once, so a resumed or repeated run reuses it; a link there is used in place, never
    renamed or followed into."""
    key = spec_key(data, model, spec)
    parent = Path(models_dir) / data
    new = parent / f"{data}-{model}-seed{spec.get('seed', 0)}-{key}"
    old = parent / f"{model}-{key}"
    if old.is_symlink():
        return old
    if old.is_dir() and not new.exists():
        os.replace(old, new)
        log.info("renamed %s to %s (a trained model's folder names its data, model and seed)", old, new)
    return new


def train_generator(plan: Plan, real: np.ndarray, spec: Mapping[str, Any], data: str, model: str) -> Any:
    """Train (or resume, or reuse) a generator on `real` as the resolved `spec` says; return a generator object.

    Its checkpoint directory is keyed by the spec (its seed included), so each training seed has its own."""
    from ganeval.gan import train

    out_dir = model_dir(plan.options.models_dir, data, model, spec)
    with plan.stage(f"train {data}/{model}", f"seed {spec.get('seed', 0)} in {out_dir}"):
        path = train(real, out_dir=out_dir, device=plan.device, progress=plan.settings.progress, **spec)
    return checkpoint_generator(path)


def checkpoint_generator(path: str | Path) -> Any:
    """The generator object of a trained checkpoint."""
    from ganeval.gan import CheckpointGenerator

    return CheckpointGenerator(path=str(path))


def plan_generator(plan: Plan, real: np.ndarray, node: Any, what: str) -> list[Any]:
    """A generator node, checked but not run, as one plan per training seed: the resolved `{train: ...}` spec
    (checked) once per `train_seeds` entry, or the instantiated generator (validated) once per `replicas` entry."""
    if "train" in node:
        spec = plain(node.train)
        if plan.train_seeds is not None and "seed" in spec:
            raise ValueError(f"{what}.train sets its own seed ({spec['seed']}) and train_seeds="
                             f"{list(plan.train_seeds)} is given: drop {what}.train.seed or train_seeds")
        plans = [resolve_train_spec(plan, spec, seed) for seed in plan.train_seeds or (None,)]
        check_train_spec(real, plans[0], what)  # the seeds' specs differ only in their seed
        return plans
    gens = [instantiate(n) for n in replica_nodes(node, what)]
    for gen in gens:
        if hasattr(gen, "validate"):
            gen.validate()
    return gens


def replica_nodes(node: Any, what: str) -> list[dict[str, Any]]:
    """A given generator's config without `replicas`, once per `replicas` entry (each one training seed): a scalar
    entry replaces the argument its class names in `replica_argument`, a mapping replaces the arguments it names."""
    from hydra.utils import get_class

    spec = dict(plain(node))
    replicas = spec.pop("replicas", None)
    if replicas is None:
        return [spec]
    if not isinstance(replicas, list) or not replicas:
        raise ValueError(f"{what}.replicas must be a non-empty list (one entry per training seed), got {replicas!r}")
    try:
        argument = getattr(get_class(str(spec.get("_target_"))), "replica_argument", None)
    except Exception:  # an unknown target: instantiating it says why
        argument = None
    out = []
    for i, entry in enumerate(replicas):
        if isinstance(entry, dict):
            out.append({**spec, **entry})
        elif argument is None:
            raise ValueError(f"{what}.replicas[{i}]={entry!r}: {spec.get('_target_')} names no replica argument; "
                             "give each replica as a mapping of the arguments it replaces")
        else:
            out.append({**spec, argument: entry})
        unset = sorted(k for k, v in out[-1].items() if v == "???")
        if unset:
            raise ValueError(f"{what}.replicas[{i}] leaves {', '.join(unset)} unset: give it in the entry or in {what}")
    return out


def seed_key(what: str, index: int, seeds: int) -> str:
    """The name a model's seed `index` (of `seeds`) is identified and recorded under: "data/model" for one seed."""
    return what if seeds == 1 else f"{what}/{SEED}={index}"


def identify_plan(plan: Plan, plans: list[Any], what: str, data: str) -> None:
    """Put each seed's plan's content identity into `plan.content` under `what` ("data/model"; one key per seed
    with several, see `seed_key`), computed once here.

    A train spec is identified with the content hash of the data it trains on (`data`, a `load_data` name), a
    given generator by its `identity()` (file, folder, weights or code content).
    """
    for i, entry in enumerate(plans):
        ident = {"train": entry, "data": data_hash(plan, data)} if isinstance(entry, dict) else generator_identity(entry)
        plan.content["generators"][seed_key(what, i, len(plans))] = ident


def realise_generators(plan: Plan, real: np.ndarray, plans: list[Any], data: str, model: str) -> list[Any]:
    """The generator objects of a model's plans, one per seed (trained, resumed or reused for a train spec),
    recorded in summary.json under "data/model" (`seed_key`): a trained one by its checkpoint, a given one by the
    identity `identify_plan` took."""
    record = plan.record.generators = plan.record.generators or {}
    gens = []
    for i, entry in enumerate(plans):
        key = seed_key(f"{data}/{model}", i, len(plans))
        gen = entry if not isinstance(entry, dict) else train_generator(plan, real, entry, data, model)
        record[key] = plan.content["generators"][key] if gen is entry else generator_identity(gen)
        gens.append(gen)
    return gens


def seed_count(plans: Mapping[str, list[Any]], what: str) -> int:
    """The number of training seeds S every model of `plans` (model -> one plan per seed) has; unequal counts raise."""
    counts = {model: len(p) for model, p in plans.items()}
    if len(set(counts.values())) > 1:
        raise ValueError(f"the models of {what} have different numbers of training seeds ({counts}): give each the "
                         "same number (train_seeds for trained models, replicas for given ones)")
    return next(iter(counts.values()), 1)


def seed_blocks(real: Any, fakes: Mapping[str, list[Any]], groups: dict[str, Any]) -> list[Block]:
    """The protocol blocks of one real pool and each model's pools (one per seed): with one seed one block
    (draw ()); else one per seed index i (group train_seed = i; draw () for i = 0, (i,) after, see `ganeval.protocol`)."""
    seeds = len(next(iter(fakes.values())))
    if seeds == 1:
        return [Block(real, [({"model": m}, f[0]) for m, f in fakes.items()], dict(groups))]
    return [Block(real, [({"model": m, SEED: i}, f[i]) for m, f in fakes.items()], dict(groups), (i,) if i else ())
            for i in range(seeds)]


def plain(node: Any) -> dict[str, Any]:
    """A config node as plain containers (resolved)."""
    from omegaconf import OmegaConf

    out = node if isinstance(node, dict) else cast("dict[str, Any]", OmegaConf.to_container(node, resolve=True))
    assert isinstance(out, dict)
    return out


def generated_pool(plan: Plan, gen: Any, name: str) -> np.ndarray:
    """Draw the generator's pool once (seeded): `n_generated` samples, or all of a samples file."""
    n = pool_size(plan, gen)
    with plan.stage(f"sample {name}"):
        return np.asarray(gen.sample(n, seed=plan.settings.seed, batch_size=plan.options.batch_size, device=plan.device))


def generated_features(plan: Plan, gen: Any, name: str, extractor: Any, what: str) -> tuple[np.ndarray, Any]:
    """(features of the generator's pool, the pool's shape). A pool larger than `ganeval.gan.chunked.WHOLE_BYTES`
    (2 GiB) from a generator that can stream goes batch by batch into the extractor (`PoolStream`: with cache_dir
    it is drawn twice on a cache miss, once to hash it); a smaller one is drawn whole: the same features either way."""
    from ganeval.app.pipeline import features
    from ganeval.gan import chunked
    from ganeval.gan.pool import PoolStream

    if hasattr(gen, "sample_batches"):
        stream = PoolStream(gen, pool_size(plan, gen), plan.settings.seed, plan.options.batch_size, plan.device)
        if stream.nbytes > chunked.WHOLE_BYTES:
            with plan.stage("features"):
                return features(plan, stream, extractor, what), stream.shape  # type: ignore[arg-type]
    pool = generated_pool(plan, gen, name)
    with plan.stage("features"):
        return features(plan, pool, extractor, what), pool.shape


def pool_size(plan: Plan, gen: Any) -> int:
    """`n_generated`, except for a samples generator, whose pool is the samples given (its length); a train spec's
    (a dict, one seed's plan) is `n_generated`."""
    if isinstance(gen, dict) or not hasattr(gen, "__len__"):
        return int(cast(int, plan.options.n_generated))  # set for experiments
    return len(gen)


def generator_identity(gen: Any) -> dict[str, Any]:
    """The generator's identity() when it has one (content hashes: call it once per generator)."""
    return dict(gen.identity()) if hasattr(gen, "identity") else {"type": type(gen).__name__}


def planned_shape(real: np.ndarray, entry: Any) -> tuple[int, ...] | None:
    """One generated sample's shape, known before training and sampling: a train spec's architecture output for
    `real`, a given generator's `sample_shape()`; None for a generator that declares none."""
    if isinstance(entry, dict):
        from ganeval.gan.train_data import trained_sample_shape

        return trained_sample_shape(real, str(entry["arch"]), entry.get("arch_kwargs"))
    shape = getattr(entry, "sample_shape", None)
    return tuple(int(d) for d in shape()) if callable(shape) else None


def planned_sets(plan: Plan, real: np.ndarray, models: Mapping[str, list[Any]], extractor: Any,
                 data: str) -> dict[str, tuple[tuple[int, ...] | None, int | None]]:
    """Each set's (input shape, feature dimension) known before training, sampling and extraction: the real data's
    under "DATA (real)", then each generated set's under its seed key, as results record them; None where known only
    after (a generator or an extractor that declares none)."""
    def dim(shape: tuple[int, ...] | None) -> int | None:
        return extractor.feature_dim(shape) if shape is not None and hasattr(extractor, "feature_dim") else None

    sets: dict[str, tuple[tuple[int, ...] | None, int | None]] = {f"{data} (real)": (tuple(real.shape), dim(real.shape))}
    for model, entries in models.items():
        for i, entry in enumerate(entries):
            row = planned_shape(real, entry)
            shape = None if row is None else (pool_size(plan, entry), *row)
            sets[seed_key(f"{data}/{model}", i, len(entries))] = (shape, dim(shape))
    return sets


def fit_dims(plan: Plan, sets: Mapping[str, tuple[tuple[int, ...] | None, int | None]]) -> None:
    """Sets of different dimension (`sets` as `planned_sets` gives them, the real one first; those of unknown
    dimension skipped): with the default metrics (metrics=default) those needing one dimension are left out
    (`Plan.narrow_metrics`, a logged note); chosen ones are refused (`check_dims`), naming the set and both inputs."""
    from ganeval.metrics.dims import fit_metrics

    (real, (real_shape, real_dim)), *fakes = sets.items()
    known = {what: d for what, (_, d) in sets.items() if d is not None}
    if real_dim is None or len(known) < 2:
        return
    if plan.choices.get("metrics", "default") == "default":
        metrics, note = fit_metrics(plan.settings.metrics, known, chosen=False)  # type: ignore[arg-type]
        if note is not None:
            plan.narrow_metrics(metrics, note)
            log.warning("%s", note)
        return
    for what, (shape, d) in fakes:
        if d is not None:
            check_dims(real_dim, cast("tuple[int, ...]", real_shape), d, cast("tuple[int, ...]", shape), what,
                       plan.settings.metrics)


def dims_unknown(plan: Plan, sets: Mapping[str, Mapping[str, tuple[Any, int | None]]]) -> bool:
    """Whether the default metrics still hold some needing one dimension while a set's dimension is known only after
    extraction (`fit_dims` may then narrow them late: `pipeline.open_results(narrowable=...)`)."""
    from ganeval.metrics.dims import dimension_free_part

    return (plan.choices.get("metrics", "default") == "default"
            and dimension_free_part(plan.settings.metrics) is not None  # type: ignore[arg-type]
            and any(d is None for one in sets.values() for _, d in one.values()))


def check_dims(real_dim: int, real_shape: tuple[int, ...], fake_dim: int, fake_shape: tuple[int, ...], what: str,
               metrics: Any) -> None:
    """Refuse generated features of another dimension than the real ones when a metric of `metrics` needs one
    dimension, saying which and how the inputs differ (their shapes)."""
    from ganeval.data.images import describe

    if fake_dim == real_dim:
        return
    need = [m.unscaled_label for m, _ in metrics.ordered() if m.same_dim]
    if not need:
        return  # dimension-free metrics only (IMD, Vendi): sets of different dimension are what they compare
    raise ValueError(
        f"{', '.join(need)} need{'s' if len(need) == 1 else ''} features of one dimension (to compare sets of two "
        f"dimensions as they are, choose only dimension-free metrics, e.g. metrics=imd): {what} has "
        f"{fake_dim}-d features but its real data {real_dim}-d, through the same extractor: "
        f"the inputs differ (real: {describe(real_shape)}, shape {real_shape}; generated: {describe(fake_shape)}, "
        f"shape {fake_shape}). Give both one shape: images of one size and channel count (features=pixels can "
        "resize with features.size=... and features.channels=...), features of one dimension"
    )
