"""dry_run=true: every check that needs no input's content, then exit 0 without loading, training or extracting.

Done here (after `make_context`, which already checked plugins, mandatory keys, runs/sample_size/seed/confidence/
device/workers, every metric option and the metrics against sample_size, train_seeds, the booleans, batch_size,
train_epochs, colliding key names, and that results_dir and cache_dir can be written): models_dir can be written;
`run_experiment` imports; every `_target_` of the config imports; the feature extractor and every given generator
construct from their options; each train spec (architecture, its sizes, trainer preset and fields, epochs) is
valid; `n_generated` (and a data node's `n`) is at least sample_size; the datasets and generators of a GAN-table
experiment (include names, a generator to score, equal seed counts). An experiment module may add its own checks
as `validate(ctx)`.

From metadata alone (`check_data_sizes`, `check_present`): a dataset's published row count against sample_size,
a dataset with download=false is on disk, a named weights file exists (and Inception's resolve with download=false).

Not done, since they need the inputs themselves (files, downloads, weights, user code): that data and sample files
have enough rows of one shape without NaN, that a generator file loads or a callable imports, that
extractor weights resolve, that results_dir's stored runs belong to this config. Named input paths that do not
exist are logged as warnings (a real run would fail on them), not errors, so a command can be checked on a
machine without its data.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any, Callable, Iterator

from ganeval.app import generators, pipeline
from ganeval.app.paths import check_writable

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
            if isinstance(child, (DictConfig, ListConfig)) and not OmegaConf.is_missing(node, key) \
                    and not child._is_none():  # a typed null (schema: train_seeds) is a node holding None
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
        generators.seed_count({m: [None] * c for m, c in counts.items()}, f"dataset {name}")
        done.append(f"dataset {name}: models {', '.join(counts)}")
    return done


def plan_generator(ctx: pipeline.Context, real: Any, node: Any, what: str) -> list[Any]:
    """`generators.plan_generator` without touching files: a train spec is checked (its pool is `n_generated` rows),
    a given generator only constructed from its options (its files are the run's inputs)."""
    if "train" in node:
        plans = generators.plan_generator(ctx, real, node, what)
        ctx.settings.check_pools({f"the generated pool of {what} (n_generated)": pipeline.n_generated(ctx.cfg)})
        return plans
    return [pipeline.instantiate(n) for n in generators.replica_nodes(node, what)]


CHECKS: dict[str, Callable[[pipeline.Context], list[str]]] = {"ganeval.studies.gan_table": check_gan_table}


def check_data_sizes(cfg: Any, sample_size: int) -> list[str]:
    """Every data node whose row count is known without loading (`n`, or the dataset's published size:
    `ganeval.data.sizes`) must hold sample_size rows."""
    from omegaconf import OmegaConf

    from ganeval.data.sizes import known_rows

    done = []
    for where, node in _nodes(cfg, ""):
        if "_target_" not in node or not str(node._target_).startswith(("ganeval.data.", "ganeval.metrics.synthetic")):
            continue
        if not used(cfg, where):
            continue
        rows = known_rows(str(node._target_), OmegaConf.to_container(node, resolve=True))  # type: ignore[arg-type]
        if rows is None:
            continue
        if rows < sample_size:
            size = f"{where}.n={rows} rows" if "n" in node else f"{rows} rows"
            raise ValueError(f"sample_size={sample_size} is larger than {where} ({size}): lower sample_size"
                             + (" or raise n" if "n" in node else ""))
        done.append(f"{where}: {rows} rows")
    return done


def used(cfg: Any, where: str) -> bool:
    """Whether the run reads the node at `where`: not the root `data` of an experiment with `datasets` (they
    replace it), not a dataset that `include` leaves out."""
    datasets = cfg.get("datasets")
    if where == "data" and datasets:
        return False
    include = cfg.get("include")
    if where.startswith("datasets.") and include is not None:
        return where.split(".")[1] in [str(i) for i in include]
    return True


def check_present(cfg: Any) -> list[str]:
    """Inputs a real run could not fetch: a dataset with download=false that is not on disk, a weights file named
    but absent, an extractor with download=false and no weights to find. ValueError naming the key."""
    from ganeval.data.datasets import data_root

    done = []
    for where, node in _nodes(cfg, ""):
        target = str(node.get("_target_") or "")
        if not used(cfg, where):
            continue
        if target.startswith("ganeval.data.") and node.get("download") is False:
            folder = dataset_folder(target.rpartition(".")[2], data_root(node.get("root")))
            if folder is not None and not folder.is_dir():
                raise ValueError(f"{where}: the dataset is not under {folder} and {where}.download=false: place it "
                                 f"there, set $GANEVAL_DATA or {where}.root, or allow {where}.download=true")
            done.append(f"{where} on disk")
        if target.startswith("ganeval.features.") and "weights" in node:
            weights = node.get("weights")
            if weights is not None and not Path(str(weights)).is_file():
                raise ValueError(f"{where}.weights={weights} does not exist: give the weights file, or "
                                 f"{where}.weights=null to resolve them (environment variable, cache, download)")
            if weights is None and node.get("download") is False and target.endswith("InceptionExtractor"):
                from ganeval.features.inception import check_weights_available

                check_weights_available(None, download=False)  # WeightsNotFoundError says where it looked
            done.append(f"{where}.weights")
    return done


def dataset_folder(name: str, root: Path) -> Path | None:
    """The folder torchvision reads a downloadable dataset from (None: not a downloadable dataset)."""
    folders = {"mnist": "MNIST/raw", "fashion_mnist": "FashionMNIST/raw", "cifar10": "cifar-10-batches-py",
               "cifar100": "cifar-100-python", "celeba": "celeba"}
    return root / folders[name] if name in folders else None


def validate(ctx: pipeline.Context) -> dict[str, Any]:
    """Run every check of a dry run (see the module doc) and log what was and was not checked; return that."""
    cfg = ctx.cfg
    check_writable(Path(str(cfg.models_dir)), "models_dir")
    checked = ["keys and values", "metric options vs sample_size", "results_dir, cache_dir, models_dir writable"]
    checked += check_targets(cfg)
    extractor = pipeline.instantiate(cfg.features) if cfg.get("features") is not None else None
    if extractor is not None:
        checked.append(f"features ({type(extractor).__name__}) options")
    module = str(cfg.run_experiment._target_).rpartition(".")[0]
    if module in CHECKS:
        checked += CHECKS[module](ctx)
    own = getattr(importlib.import_module(module), "validate", None)
    if callable(own):
        checked += list(own(ctx) or [f"{module}.validate"])
    checked += check_data_sizes(cfg, ctx.settings.sample_size)
    checked += check_present(cfg)
    missing = missing_paths(cfg)
    for item in missing:
        log.warning("dry run: %s does not exist here (a real run would stop on it)", item)
    log.info("dry run of experiment %s (%s): the config is valid; results would go to %s. Checked: %s. Not checked "
             "(they need the inputs): the data, sample files and weights themselves, callables' code, stored runs.",
             ctx.name, cfg.run_experiment._target_, ctx.results_dir,
             "; ".join(checked))
    return {"experiment": ctx.name, "results_dir": str(ctx.results_dir), "checked": checked, "missing_inputs": missing}
