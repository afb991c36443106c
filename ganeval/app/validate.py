"""config -> checked Plan (`build_plan`): the plan's checks that need no input's content (`check_plan`, for every
run), its inputs in words (`inputs_of`), and dry_run=true: print the plan and exit 0 without loading, training or
extracting (`dry_run`).

Done by `build_plan` before `check_plan`: plugins, mandatory keys, runs/sample_size/seed/confidence/device/workers,
every metric option and the metrics against sample_size, train_seeds, batch_size, train_epochs, n_generated, colliding
key names, a named protocol, and that results_dir, cache_dir and models_dir can be written. Here: every `_target_`
of the config imports; from metadata alone (`check_data_sizes`, `check_present`) a dataset's published row count
(and a data node's `n`) against sample_size, a dataset with download=false is on disk, a named weights file exists
(and Inception's resolve with download=false). In a dry run also: the feature extractor and every given generator
construct from their options; each train spec (architecture, its sizes, trainer preset and fields, epochs) is
valid; `n_generated` is at least sample_size; and the checks an experiment module declares as its `validate(plan)`
(the GAN-table experiments': include names, a generator to score, equal seed counts).

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
from typing import TYPE_CHECKING, Any, Iterator, cast

from ganeval.app import generators, pipeline
from ganeval.app.paths import check_not_inside_inputs, check_writable, config_input_paths
from ganeval.app.plan import (TYPED_KEYS, Input, Plan, check_keys, check_missing, check_train_seeds, import_plugins,
                              options_from_config, settings_from_config)

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

log = logging.getLogger("ganeval")

PATH_KEYS = ("path", "weights", "state_dict")  # node keys that name an input file or folder


class UnknownRows:
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
                yield from _nodes(child, f"{where}.{key!s}" if where else str(key))
    elif isinstance(node, ListConfig):
        for i, child in enumerate(node):
            yield from _nodes(child, f"{where}[{i}]")


def target_nodes(cfg: Any, reads: tuple[str, ...] | None = None) -> Iterator[tuple[str, Any]]:
    """(dotted path, node) of every node with a `_target_` set that the run reads (`used`)."""
    from omegaconf import OmegaConf

    for where, node in _nodes(cfg, ""):
        if where and "_target_" in node and not OmegaConf.is_missing(node, "_target_") and used(cfg, where, reads):
            yield where, node


def check_targets(cfg: Any, reads: tuple[str, ...] | None = None) -> list[str]:
    """Import the `_target_` of every node the run reads; ValueError naming the key of one that does not import."""
    from hydra.utils import get_object

    found = []
    for where, node in target_nodes(cfg, reads):
        target = str(node._target_)
        try:
            get_object(target)
        except Exception as e:  # ImportError, AttributeError: say which key names it
            raise ValueError(f"{where}._target_={target} does not import ({e}); is it spelled right and on "
                             "PYTHONPATH (plugins=[...] for your own modules)?") from None
        found.append(f"{where}._target_")
    return found


def check_nodes(cfg: Any, reads: tuple[str, ...] | None = None) -> list[str]:
    """Every input node's keys and value types against its target's signature (`ganeval.app.node_types`)."""
    from omegaconf import OmegaConf

    from ganeval.app.node_types import check_node

    done = []
    for where, node in target_nodes(cfg, reads):
        check_node(where, OmegaConf.to_container(node, resolve=True))  # type: ignore[arg-type]
        done.append(f"{where} arguments")
    return done


def missing_paths(cfg: Any) -> list[str]:
    """`key=value` of every input path named in the config that does not exist here (a real run would stop there)."""
    from omegaconf import OmegaConf

    out = []
    for where, node in _nodes(cfg, ""):  # the plan's params: neither hydra's node nor run_experiment is in them
        for key in PATH_KEYS:
            if key not in node or OmegaConf.is_missing(node, key) or not isinstance(node[key], str):
                continue
            values = [node[key]]
            replicas = node.get("replicas")
            if key == "path" and OmegaConf.is_list(replicas):
                values += [str(r) for r in replicas if isinstance(r, str)]
            out += [f"{where}.{key}={v}" for v in values if not Path(v).exists()]
    return out


def plan_generator(plan: Plan, real: Any, node: Any, what: str) -> list[Any]:
    """`generators.plan_generator` without touching files: a train spec is checked (its pool is `n_generated` rows),
    a given generator only constructed from its options (its files are the run's inputs)."""
    if "train" in node:
        plans = generators.plan_generator(plan, real, node, what)
        plan.settings.check_pools({f"the generated pool of {what} (n_generated)": int(cast(int, plan.options.n_generated))})
        return plans
    return [pipeline.instantiate(n) for n in generators.replica_nodes(node, what)]


def check_data_sizes(cfg: Any, sample_size: int, reads: tuple[str, ...] | None = None) -> list[str]:
    """Every data node whose row count is known without loading (`n`, or the dataset's published size:
    `ganeval.data.datasets.known_rows`) must hold sample_size rows."""
    from omegaconf import OmegaConf

    from ganeval.data.datasets import known_rows

    done = []
    for where, node in target_nodes(cfg, reads):
        if not str(node._target_).startswith(("ganeval.data.", "ganeval.metrics.synthetic")):
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


def used(cfg: Any, where: str, reads: tuple[str, ...] | None = None) -> bool:
    """Whether the run reads the node at `where`: under a key the study reads inputs from (`reads`, its `INPUTS`;
    None: any), not the root `data` of an experiment with `datasets` (they replace it), not a dataset that
    `include` leaves out."""
    if reads is not None and where.split(".")[0].split("[")[0] not in reads:
        return False
    datasets = cfg.get("datasets")
    if where == "data" and datasets:
        return False
    include = cfg.get("include")
    if where.startswith("datasets.") and include is not None:
        return where.split(".")[1] in [str(i) for i in include]
    return True


def check_present(cfg: Any, reads: tuple[str, ...] | None = None) -> list[str]:
    """Inputs a real run could not fetch: a dataset with download=false that is not on disk, a weights file named
    but absent, an extractor with download=false and no weights to find. ValueError naming the key."""
    from ganeval.data.datasets import data_root

    done = []
    for where, node in target_nodes(cfg, reads):
        target = str(node._target_)
        if target.startswith("ganeval.data.") and node.get("download") is False:
            folder = dataset_folder(target.rpartition(".")[2], data_root(node.get("root")))
            if folder is not None and not folder.is_dir():
                raise ValueError(f"{where}: the dataset is not under {folder} and {where}.download=false: place it "
                                 f"there, set $GANEVAL_DATA or {where}.root, or allow {where}.download=true")
            done.append(f"{where} on disk")
        if target.startswith("ganeval.features.") and "weights" in node:
            weights = node.get("weights")
            if weights is not None and not Path(str(weights)).is_file() and target.endswith("InceptionExtractor"):
                from ganeval.features.inception import check_weights_available

                check_weights_available(str(weights), download=False)  # its message names every way to give them
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


def build_plan(cfg: Any) -> Plan:
    """The plan of a composed config, every check that needs no input's content made (bad values fail here)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    from ganeval.app.paths import default_results_dir
    from ganeval.app.protocols import check_protocol
    from ganeval.results.outputs import STANDARD, begin_run

    import_plugins(cfg.get("plugins") or [])
    check_missing(cfg)
    check_protocol(cfg)  # a named protocol's fixed values (dry_run too)
    hc = HydraConfig.get()
    name = hc.runtime.choices.get("experiment") or "custom"
    if hc.mode == RunMode.MULTIRUN:
        results_dir = Path(hc.runtime.output_dir)  # each sweep job in its own job directory (under results_dir)
    else:
        results_dir = default_results_dir(cfg.results_dir, name)  # = Hydra's run folder (hydra.run.dir)
    settings = settings_from_config(cfg)  # types are the schema's (ganeval.app.schema); ranges are checked here
    options = options_from_config(cfg)
    train_seeds = check_train_seeds(cfg.train_seeds)
    check_writable(results_dir, "results_dir")
    check_not_inside_inputs(results_dir, config_input_paths(OmegaConf.to_container(cfg, resolve=True)), "results_dir")
    begin_run(results_dir, options.overwrite)  # a folder of someone else's files is refused (it writes nothing)
    if options.cache_dir:
        check_writable(Path(options.cache_dir), "cache_dir")
    check_writable(Path(options.models_dir), "models_dir")
    config = cast("dict[str, Any]", OmegaConf.to_container(cfg, resolve=True))
    assert isinstance(config, dict)
    check_keys(config)
    params = OmegaConf.create({k: v for k, v in config.items() if k not in TYPED_KEYS})
    OmegaConf.set_readonly(params, True)
    config["device"] = settings.device
    config["metrics"] = cast("Metrics", settings.metrics).as_dict()  # resolved: an option left at its default hashes as if given
    study = str(cfg.run_experiment._target_)
    module = importlib.import_module(study.rpartition(".")[0])
    reads = getattr(module, "INPUTS", None)
    plan = Plan(name=name, results_dir=results_dir, device=str(settings.device), settings=settings, config=config,
                study=study, options=options, params=params, inputs=inputs_of(params, reads), reads=reads,
                outputs=tuple(getattr(module, "OUTPUTS", STANDARD)), train_seeds=train_seeds,
                dry_run=bool(cfg.dry_run),
                choices={str(k): str(v) for k, v in hc.runtime.choices.items() if v is not None})
    plan.checked = tuple(check_plan(plan))
    plan.record.overrides = list(hc.overrides.task)
    plan.record.command = "ganeval " + " ".join(hc.overrides.task)
    return plan


def check_plan(plan: Plan) -> list[str]:
    """Every check of the plan that needs no input's content (see the module doc); what was checked, in words.
    A dry run also constructs the extractor and the given generators from their options and checks the studies'
    model plans (a real run does that when it reads them)."""
    params = plan.params
    checked = ["keys and values", "metric options vs sample_size", "results_dir, cache_dir, models_dir writable"]
    checked += check_targets(params, plan.reads)
    checked += check_nodes(params, plan.reads)
    # the data sizes before the dry run's own checks, so that a dry run refuses first what a real run refuses first;
    # a study that does not say which inputs it reads may leave the default data unread
    if plan.reads is not None:
        checked += check_data_sizes(params, plan.settings.sample_size, plan.reads)
    if plan.dry_run:
        if params.get("features") is not None:
            checked.append(f"features ({type(pipeline.instantiate(params.features)).__name__}) options")
        module = plan.study.rpartition(".")[0]
        own = getattr(importlib.import_module(module), "validate", None)
        if callable(own):
            checked += list(own(plan) or [f"{module}.validate"])
    checked += check_present(params, plan.reads)
    return checked


def dry_run(plan: Plan) -> dict[str, Any]:
    """dry_run=true: print the plan, warn of the named inputs missing here, and return what was checked."""
    from ganeval.app.plan import describe

    missing = missing_paths(plan.params)
    for item in missing:
        log.warning("dry run: %s does not exist here (a real run would stop on it)", item)
    print(describe(plan), flush=True)
    log.info("dry run of experiment %s (%s): the config is valid; results would go to %s. Not checked (they need "
             "the inputs): the data, sample files and weights themselves, callables' code, stored runs.",
             plan.name, plan.study, plan.results_dir)
    return {"experiment": plan.name, "results_dir": str(plan.results_dir), "checked": list(plan.checked),
            "missing_inputs": missing}


def inputs_of(params: Any, reads: tuple[str, ...] | None = None) -> tuple[Input, ...]:
    """The inputs the run reads: every `_target_` node of `params` it uses (see `used`), with role and source."""
    from omegaconf import OmegaConf

    out = []
    for where, node in _nodes(params, ""):
        if not where or not used(params, where, reads) or ("_target_" not in node and "train" not in node):
            continue
        spec = cast("dict[str, Any]", OmegaConf.to_container(node, resolve=True))
        assert isinstance(spec, dict)
        out.append(Input(where, role(where, spec), source(spec)))
    return tuple(out)


def is_train_spec(spec: dict[str, Any]) -> bool:
    """A `{train: {...}}` generator node (no `_target_`; a dataset's `train: true` is an argument)."""
    return "_target_" not in spec and isinstance(spec.get("train"), dict)


def role(where: str, spec: dict[str, Any]) -> str:
    """What an input node is: real data, a generator to train, a given generator, the extractor."""
    target = str(spec.get("_target_") or "")
    if is_train_spec(spec):
        return "generator to train"
    if target.startswith("ganeval.features.") or where == "features":
        return "extractor"
    if target.startswith("ganeval.gan.") or where == "generator" or ".generators." in f".{where}":
        return "given generator"
    return "data"


def source(spec: dict[str, Any]) -> str:
    """An input's source in a few words: its target and the file it names, or its train spec."""
    if is_train_spec(spec):
        train = spec["train"]
        return "train " + ", ".join(f"{k}={v}" for k, v in train.items() if k in ("arch", "gan", "epochs", "seed"))
    named = [f"{k}={spec[k]}" for k in PATH_KEYS if isinstance(spec.get(k), str)]
    return " ".join([str(spec.get("_target_")), *named])
