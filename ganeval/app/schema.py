"""The config's schema: typed dataclasses that OmegaConf checks while Hydra composes, before ganeval's code runs.

`ganeval_base` (the root, in Hydra's ConfigStore) is the first entry of `configs/config.yaml`'s defaults, so a
non-integer `runs`, a string `seed`, a list of floats as `train_seeds` are refused with the key's path. The
top-level keys are declared here, once; an experiment file adds its own keys (the root is open to them), and a
key that neither declares (`+sample_szie=500`) is refused by `unknown_keys`. The group nodes (data, features,
generator) are `_target_` nodes: their keys are closed by Hydra (a typo is refused while composing) and their
values checked by the target's signature when instantiated; `metrics` is name -> options, checked by the metric
registry's option tables (plugins register metrics there, so it stays open to them).
"""

from __future__ import annotations

import difflib
import warnings
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, cast

if TYPE_CHECKING:
    from omegaconf import DictConfig

# The root is an open dataclass (extra keys allowed: an experiment's own keys): OmegaConf 2.3 supports this and
# warns that a later major version may not.
warnings.filterwarnings("ignore", message=r"Class `\w+` subclasses `Dict`", category=UserWarning)

GROUPS = ("data", "features", "metrics", "generator", "experiment", "hydra")  # Hydra groups (GROUP=OPTION)


def key(default: Any, help: str, factory: bool = False) -> Any:
    """A top-level key's default and its `ganeval --help` line: the one place a key is declared."""
    if factory:
        return field(default_factory=default, metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class RootConfig(Dict[str, Any]):
    """Every top-level key that every experiment honours: its type, default and `--help` line (`key`)."""

    plugins: List[str] = key(list,
              "modules imported first: the metrics and extractors they register become usable", factory=True)
    run_experiment: Optional[Any] = key(None,
              "what runs: a function of the run's plan (ganeval.studies.<module>.run), instantiated by "
              "Hydra and called once; every experiment sets it, e.g. {_target_: "
              "ganeval.studies.gan_table.run, _partial_: true}")
    runs: int = key(100, "subsample runs per (real, generated) pair")
    sample_size: int = key(10000, "rows drawn from each pool per run, without replacement")
    n_generated: Optional[int] = key(None, "generated pool size per generator; null -> 2 x sample_size")
    confidence: float = key(0.99, "level of the Student-t interval of the mean over runs")
    seed: int = key(0, "run r draws with numpy.random.default_rng([seed, r]); training/sampling seeds too")
    device: Optional[str] = key(None, "null -> cuda if available, else cpu")
    results_dir: Optional[str] = key(None,
              "null -> results/<experiment> (benchmark: named by its inputs); under -m the sweep's folder")
    cache_dir: Optional[str] = key(".cache/ganeval", "feature cache (keyed by content), under the working directory")
    models_dir: str = key("models", "where trained generator checkpoints go")
    overwrite: bool = key(False, "true discards results_dir's runs made by another config")
    workers: int = key(1, "processes for the per-run loop (CPU only); one run already uses every core")
    batch_size: int = key(250, "feature-extraction and sampling batch size")
    progress: bool = key(True, "progress bars (extraction, training, runs)")
    train_epochs: Optional[int] = key(None, "if set, overrides the epochs of every generator an experiment trains")
    train_seeds: Optional[List[int]] = key(None,
              "e.g. [0, 1, 2]: train every trained generator once per seed (null: one, its own or `seed`)")
    probe_repeats: int = key(0,
              "the first N runs also score IMD with a second probe draw (the probe share of the variance)")
    plots: bool = key(True, "write PNG figures next to the tables")
    dry_run: bool = key(False, "true: build the run's plan, make every check that needs no input, print it; no work, "
                        "writes nothing")
    data: Optional[Any] = None  # the group nodes: `_target_` and its keyword arguments (checked when instantiated)
    features: Optional[Any] = None
    metrics: Optional[Dict[str, Any]] = None  # name -> options (the registry's option tables check them)
    generator: Optional[Any] = None


BOOLEAN_KEYS = tuple(f.name for f in fields(RootConfig) if f.type in ("bool", bool))
HELP = {f.name: str(f.metadata["help"]) for f in fields(RootConfig) if "help" in f.metadata}  # key -> --help line
ROOT_KEYS = tuple(f.name for f in fields(RootConfig))


def register() -> None:
    """Store the root schema as `ganeval_base` (configs/config.yaml lists it first in its defaults)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="ganeval_base", node=RootConfig)


def closest(key: str, candidates: Iterable[str]) -> str:
    """' (did you mean X?)' for the candidate closest to `key`, or '' when none is close."""
    match = difflib.get_close_matches(key, sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else ""


def unknown_keys(cfg: Any, declared: Iterable[str]) -> None:
    """Refuse top-level keys that neither the schema nor the experiment declares (added with `+key=...`):
    nothing would read them. ValueError naming the key and the closest valid one."""
    known = set(ROOT_KEYS) | set(declared) | {"hydra"}
    extra = [str(k) for k in cfg.keys() if str(k) not in known]
    if extra:
        key = extra[0]
        raise ValueError(f"{key}: no such key, nothing would read it{closest(key, known - {'hydra'})}; "
                         "`ganeval --help` lists the keys")


def _sources(hydra_cfg: Any) -> Iterator[Any]:
    """The folders of the config sources (file and pkg), readable as paths."""
    import importlib.resources
    from pathlib import Path

    for source in hydra_cfg.runtime.config_sources:
        if source.schema == "file":
            yield Path(source.path)
        elif source.schema == "pkg":
            yield importlib.resources.files(source.path.replace("/", "."))


def group_keys(hydra_cfg: Any) -> list[str]:
    """The config groups of every source (configs/<group>/): a chosen group's node is a top-level key."""
    return [p.name for root in _sources(hydra_cfg) if root.is_dir() for p in root.iterdir() if p.is_dir()]


def _experiment_files(hydra_cfg: Any) -> Iterator[tuple[str, str]]:
    """(name, yaml text) of every experiment file in the config sources (first source wins for a name)."""
    seen = set()
    for root in _sources(hydra_cfg):
        folder = root.joinpath("experiment")
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir(), key=lambda p: p.name):
            name = path.name.rpartition(".")[0]
            if path.name.endswith(".yaml") and name not in seen:
                seen.add(name)
                yield name, path.read_text()


def _declared(node: Any) -> list[str]:
    """The top-level keys an experiment file declares: its own keys and the keys of its `/group@key` packages."""
    from omegaconf import OmegaConf

    keys = [str(k) for k in node.keys() if k != "defaults"]
    for entry in node.get("defaults") or []:
        for spec in (entry.keys() if OmegaConf.is_dict(entry) else [entry]):
            if "@" in str(spec):
                keys.append(str(spec).partition("@")[2].split(".")[0])
    return keys


def experiment_keys(hydra_cfg: Any, target: str | None) -> list[str]:
    """The config groups' keys (e.g. `protocol`), the keys the chosen experiment declares, and those of every
    experiment run by the same study (`target`,
    its `run_experiment._target_`): the keys that study reads (e.g. `datasets` for a benchmark, as in
    paper_table). Read from the yaml files alone: no study module is imported."""
    from omegaconf import OmegaConf

    chosen = hydra_cfg.runtime.choices.get("experiment")
    keys: list[str] = group_keys(hydra_cfg)
    for name, text in _experiment_files(hydra_cfg):
        node = cast("DictConfig", OmegaConf.create(text))  # an experiment file is a mapping
        run = node.get("run_experiment")
        if name == chosen or (target and OmegaConf.is_dict(run) and run.get("_target_") == target):
            keys += _declared(node)
    return keys
