"""dry_run=true: every check that needs no input's content, then exit 0 without loading, training or extracting.

Done here (after `make_context`, which already checked plugins, mandatory keys, runs/sample_size/seed/confidence/
device/workers, every metric option and the metrics against sample_size, train_seeds, the booleans, batch_size,
train_epochs, colliding key names, and that results_dir and cache_dir can be written): models_dir can be written;
`run_experiment` imports; every `_target_` of the config imports; the feature extractor and every given generator
construct from their options; each train spec (architecture, its sizes, trainer preset and fields, epochs) is
valid; `n_generated` (and a data node's `n`) is at least sample_size; the datasets and generators of a GAN-table
experiment (include names, a generator to score, equal seed counts). An experiment module may add its own checks
as `validate(ctx)`.

Not done, since they need the inputs themselves (files, downloads, weights, user code): that data and sample files
exist and have enough rows of one shape without NaN, that a generator file loads or a callable imports, that
extractor weights resolve, that results_dir's stored runs belong to this config. Named input paths that do not
exist are logged as warnings (a real run would fail on them), not errors, so a command can be checked on a
machine without its data.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any, Callable, Iterator

from ganeval.app import pipeline
from ganeval.common import check_writable

log = logging.getLogger("ganeval")

PATH_KEYS = ("path", "weights", "state_dict")  # node keys that name an input file or folder


class _Unknown:
    """The real data of a dry run: its row count is not known (no batch size is refused for being larger)."""

    def __len__(self) -> int:
        return 2**62


def _nodes(node: Any, where: str) -> Iterator[tuple[str, Any]]:
    """(dotted path, node) of every mapping inside `node` (itself first)."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(node, DictConfig):
        yield where, node
        for key in node.keys():
            child = node._get_node(key)
            if isinstance(child, (DictConfig, ListConfig)) and not OmegaConf.is_missing(node, key):
                yield from _nodes(child, f"{where}.{key}" if where else str(key))
    elif isinstance(node, ListConfig):
        for i, child in enumerate(node):
            yield from _nodes(child, f"{where}[{i}]")


def check_targets(cfg: Any) -> list[str]:
    """Import the `_target_` of every node of the config (except `run_experiment`, instantiated already); ValueError
    naming the key of one that does not import."""
    from hydra.utils import get_object
    from omegaconf import OmegaConf

    found = []
    for where, node in _nodes(cfg, ""):
        if "_target_" not in node or OmegaConf.is_missing(node, "_target_") or where == "run_experiment":
            continue
        target = str(node._target_)
        try:
            get_object(target)
        except Exception as e:  # ImportError, AttributeError: say which key names it
            raise ValueError(f"{where}._target_={target} does not import ({e}); is it spelled right and on "
                             "PYTHONPATH (plugins=[...] for your own modules)?") from None
        found.append(f"{where}._target_")
    return found


def missing_paths(cfg: Any) -> list[str]:
    """`key=value` of every input path named in the config that does not exist here (a real run would stop there)."""
    from omegaconf import OmegaConf

    out = []
    for where, node in _nodes(cfg, ""):
        if where.startswith(("hydra", "run_experiment")):
            continue
        for key in PATH_KEYS:
            if key not in node or OmegaConf.is_missing(node, key) or not isinstance(node[key], str):
                continue
            values = [node[key]]
            replicas = node.get("replicas")
            if key == "path" and OmegaConf.is_list(replicas):
                values += [str(r) for r in replicas if isinstance(r, str)]
            out += [f"{where}.{key}={v}" for v in values if not Path(v).exists()]
    return out


def check_gan_table(ctx: pipeline.Context) -> list[str]:
    """The datasets and models of quickstart / paper_table / benchmark, as far as the config tells."""
    from ganeval.studies.gan_table import dataset_specs
    from ganeval.protocol.api import unique_names

    done = []
    specs = dataset_specs(ctx.cfg, ctx.choices.get("data") or "data")
    real = _Unknown()
    for name, spec in specs.items():
        nodes = {m: n for m, n in spec["generators"].items() if n is not None}
        counts = {}
        for label, node in zip(unique_names(nodes, f"dataset {name} has the models"), nodes.values()):
            counts[label] = len(plan_generator(ctx, real, node, f"{name}/{label}"))
        if spec["given"] is not None:
            counts["generator"] = len(plan_generator(ctx, real, spec["given"], f"{name}/generator"))
        pipeline.seed_count({m: [None] * c for m, c in counts.items()}, f"dataset {name}")
        done.append(f"dataset {name}: models {', '.join(counts)}")
    return done


def plan_generator(ctx: pipeline.Context, real: Any, node: Any, what: str) -> list[Any]:
    """`pipeline.plan_generator` without touching files: a train spec is checked (its pool is `n_generated` rows),
    a given generator only constructed from its options (its files are the run's inputs)."""
    if "train" in node:
        plans = pipeline.plan_generator(ctx, real, node, what)
        ctx.settings.check_pools({f"the generated pool of {what} (n_generated)": pipeline.n_generated(ctx.cfg)})
        return plans
    return [pipeline.instantiate(n) for n in pipeline.replica_nodes(node, what)]


CHECKS: dict[str, Callable[[pipeline.Context], list[str]]] = {"ganeval.studies.gan_table": check_gan_table}


def check_data_sizes(cfg: Any, sample_size: int) -> list[str]:
    """Data nodes that say their row count (`n`, e.g. data=torus) must hold sample_size rows."""
    done = []
    for where, node in _nodes(cfg, ""):
        if "_target_" in node and str(node._target_).startswith("ganeval.data.") and isinstance(node.get("n"), int):
            if node.n < sample_size:
                raise ValueError(f"sample_size={sample_size} is larger than {where} ({where}.n={node.n} rows): "
                                 "lower sample_size or raise n")
            done.append(f"{where}.n")
    return done


def validate(ctx: pipeline.Context) -> dict[str, Any]:
    """Run every check of a dry run (see the module doc) and log what was and was not checked; return that."""
    cfg = ctx.cfg
    check_writable(Path(str(cfg.models_dir)), "models_dir")
    checked = ["keys and values", "metric options vs sample_size", "results_dir, cache_dir, models_dir writable"]
    checked += check_targets(cfg)
    extractor = pipeline.instantiate(cfg.features) if cfg.get("features") is not None else None
    if extractor is not None:
        checked.append(f"features ({type(extractor).__name__}) options")
    checked += check_data_sizes(cfg, ctx.settings.sample_size)
    module = str(cfg.run_experiment._target_).rpartition(".")[0]
    if module in CHECKS:
        checked += CHECKS[module](ctx)
    own = getattr(importlib.import_module(module), "validate", None)
    if callable(own):
        checked += list(own(ctx) or [f"{module}.validate"])
    missing = missing_paths(cfg)
    for item in missing:
        log.warning("dry run: %s does not exist here (a real run would stop on it)", item)
    log.info("dry run of experiment %s (%s): the config is valid; results would go to %s. Checked: %s. Not checked "
             "(they need the inputs): the data, sample files and weights themselves, callables' code, stored runs.",
             ctx.name, cfg.run_experiment._target_, ctx.results_dir,
             "; ".join(checked))
    return {"experiment": ctx.name, "results_dir": str(ctx.results_dir), "checked": checked, "missing_inputs": missing}
