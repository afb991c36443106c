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
    """`n_generated`, except for a samples generator, whose pool is the samples given (its length)."""
    return len(gen) if hasattr(gen, "__len__") else int(cast(int, plan.options.n_generated))  # set for experiments


def generator_identity(gen: Any) -> dict[str, Any]:
    """The generator's identity() when it has one (content hashes: call it once per generator)."""
    return dict(gen.identity()) if hasattr(gen, "identity") else {"type": type(gen).__name__}


def planned_dims(plan: Plan, real: np.ndarray, models: Mapping[str, list[Any]], extractor: Any,
                 data: str) -> dict[str, int | None]:
    """Each set's feature dimension known before extraction (the real data's, then each stored array of samples'):
    None where it is known only after (trained or callable generators, image folders through some extractors)."""
    from ganeval.gan.stored_samples import SampleGenerator

    def dim(shape: tuple[int, ...] | None) -> int | None:
        if shape is None or not callable(getattr(extractor, "feature_dim", None)):
            return None
        return extractor.feature_dim(tuple(shape))

    dims: dict[str, int | None] = {f"the real data of {data}": dim(tuple(real.shape))}
    for model, entries in models.items():
        for i, gen in enumerate(entries):
            stored = isinstance(gen, SampleGenerator) and gen.path.is_file()
            dims[f"the generated set {seed_key(f'{data}/{model}', i, len(entries))}"] = (
                dim(gen.stored_shape()) if stored else None)
    return dims


def narrow_default_metrics(plan: Plan, dims: Mapping[str, int | None]) -> None:
    """With the default metrics (metrics=default) and sets of different dimension, leave out those needing one
    dimension before the results directory is opened (logged as a note); chosen ones are refused (`check_dims`)."""
    from dataclasses import replace

    from ganeval.metrics.dims import fit_metrics

    known = {k: v for k, v in dims.items() if v is not None}
    if plan.choices.get("metrics", "default") != "default" or len(known) < 2:
        return
    metrics, note = fit_metrics(plan.settings.metrics, known, chosen=False)  # type: ignore[arg-type]
    if note is not None:
        plan.settings = replace(plan.settings, metrics=metrics)
        log.warning("%s", note)


def check_dims(real_f: np.ndarray, real: np.ndarray, fake_f: np.ndarray, pool: Any, what: str,
               metrics: Any = None) -> None:
    """Refuse generated features of another dimension than the real ones when a metric of `metrics` needs one
    dimension (all of them when None), saying which and how the inputs differ (`pool`: the generated array or its
    shape)."""
    from ganeval.data.images import describe

    if fake_f.shape[1] == real_f.shape[1]:
        return
    need = [m.unscaled_label for m, _ in metrics.ordered() if m.same_dim] if metrics is not None else ["metrics"]
    if not need:
        return  # dimension-free metrics only (IMD, Vendi): sets of different dimension are what they compare
    shape = tuple(getattr(pool, "shape", pool))
    raise ValueError(
        f"{', '.join(need)} need{'s' if len(need) == 1 else ''} features of one dimension (to compare sets of two "
        f"dimensions as they are, choose only dimension-free metrics, e.g. metrics=imd): {what} has "
        f"{fake_f.shape[1]}-d features but its real data {real_f.shape[1]}-d, through the same extractor: "
        f"the inputs differ (real: {describe(real.shape)}, shape {real.shape}; generated: {describe(shape)}, "
        f"shape {shape}). Give both one shape: images of one size and channel count (features=pixels can "
        "resize with features.size=... and features.channels=...), features of one dimension"
    )
