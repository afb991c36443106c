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
from typing import Any, Dict, Iterable, List, Optional

# The root is an open dataclass (extra keys allowed: an experiment's own keys): OmegaConf 2.3 supports this and
# warns that a later major version may not.
warnings.filterwarnings("ignore", message=r"Class `\w+` subclasses `Dict`", category=UserWarning)

GROUPS = ("data", "features", "metrics", "generator", "experiment", "hydra")  # Hydra groups (GROUP=OPTION)


@dataclass
class RootConfig(Dict[str, Any]):
    """Every top-level key that every experiment honours (configs/config.yaml sets their values and comments)."""

    plugins: List[str] = field(default_factory=list)
    run_experiment: Optional[Any] = None
    runs: int = 100
    sample_size: int = 10000
    n_generated: Optional[int] = None
    confidence: float = 0.99
    seed: int = 0
    device: Optional[str] = None
    results_dir: Optional[str] = None
    cache_dir: Optional[str] = ".cache/ganeval"
    models_dir: str = "models"
    overwrite: bool = False
    workers: int = 1
    batch_size: int = 250
    progress: bool = True
    train_epochs: Optional[int] = None
    train_seeds: Optional[List[int]] = None
    probe_repeats: int = 0
    plots: bool = True
    dry_run: bool = False
    data: Optional[Any] = None  # the group nodes: `_target_` and its keyword arguments (checked when instantiated)
    features: Optional[Any] = None
    metrics: Optional[Dict[str, Any]] = None  # name -> options (the registry's option tables check them)
    generator: Optional[Any] = None


BOOLEAN_KEYS = tuple(f.name for f in fields(RootConfig) if f.type in ("bool", bool))
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


def experiment_keys(hydra_cfg: Any) -> list[str]:
    """The top-level keys the chosen experiment file declares (its own keys and its `/group@key` packages), read
    from the first config source that has it; [] without an experiment."""
    import importlib.resources
    from pathlib import Path

    from omegaconf import OmegaConf

    name = hydra_cfg.runtime.choices.get("experiment")
    if not name:
        return []
    for source in hydra_cfg.runtime.config_sources:
        where = f"experiment/{name}.yaml"
        if source.schema == "file":
            path: Any = Path(source.path) / where
        elif source.schema == "pkg":
            path = importlib.resources.files(source.path.replace("/", ".")).joinpath(where)
        else:
            continue
        if not path.is_file():
            continue
        node = OmegaConf.create(path.read_text())
        keys = [str(k) for k in node.keys() if k != "defaults"]
        for entry in node.get("defaults") or []:
            for spec in (entry.keys() if OmegaConf.is_dict(entry) else [entry]):
                if "@" in str(spec):
                    keys.append(str(spec).partition("@")[2].split(".")[0].split(":")[0])
        return keys
    return []
