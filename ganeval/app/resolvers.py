"""The OmegaConf resolvers of ganeval's root config: where a sweep's and a benchmark's results go, and `--help`.

`register()` is called when `ganeval.app.main` is imported, before Hydra composes anything:

- `${ganeval.first:a,b}`: a, or b when a is null (a sweep's directory: `results_dir`, else multirun/DATE/TIME);
- `${ganeval.benchmark_dir:}`: results/benchmark/<data>-vs-<models>-<hash> (experiment=benchmark's default), so two
  benchmarks of different inputs coexist;
- `${ganeval.help:experiments|keys}`: the generated parts of `ganeval --help` (`ganeval.app.help`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def _choices(root: Any) -> dict[str, Any]:
    """Hydra's group choices: from the config's hydra node when it has one, else from the running HydraConfig."""
    if "hydra" in root:
        return dict(root.hydra.runtime.choices)
    from hydra.core.hydra_config import HydraConfig

    return dict(HydraConfig.get().runtime.choices) if HydraConfig.initialized() else {}


def _label(text: str) -> str:
    """A path-safe label: runs of characters other than letters, digits, '.', '_' and '-' become '_'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"


def _value(node: Any, key: str) -> Any:
    """`node[key]` when `node` is a mapping that gives it (not null, not ???), else None."""
    from omegaconf import OmegaConf

    if not OmegaConf.is_dict(node) or key not in node or OmegaConf.is_missing(node, key):
        return None
    return node[key]


def _stem(node: Any, key: str) -> str | None:
    """The file or folder name (without suffix) of `node[key]` when it is a given path, else None."""
    value = _value(node, key)
    return Path(str(value)).stem if value is not None else None


def model_labels(root: Any) -> list[str]:
    """The models a benchmark scores, named as the tables name them where the config tells: the `generators` keys,
    then the generator group's `name`, else its file's name, its function, or the group option."""
    labels = [str(k) for k in (root.get("generators") or {})]
    node = root.get("generator")
    if node is not None:
        label = _value(node, "name") or _stem(node, "path") or _value(node, "function") or \
            _choices(root).get("generator")
        labels.append(str(label or "generator"))
    return labels


def benchmark_dir(root: Any) -> str:
    """results/benchmark/<data>-vs-<models>-<hash of the data and generator nodes>: two benchmarks of other data or
    other generators (even of files with equal names) get different directories, the same benchmark the same one."""
    from omegaconf import OmegaConf

    data = root.get("data")
    data_label = _stem(data, "path") if data is not None else None
    data_label = data_label or _choices(root).get("data") or "data"
    nodes = {k: OmegaConf.to_container(root[k], resolve=True) if OmegaConf.is_config(root.get(k)) else root.get(k)
             for k in ("data", "generator", "generators")}
    models = "+".join(_label(m) for m in model_labels(root)) or "nothing"
    from ganeval.hashing import stable_hash  # torch: only when a benchmark names its folder

    return str(Path("results") / "benchmark" / f"{_label(str(data_label))}-vs-{models}-{stable_hash(nodes, 6)}")


def _benchmark_dir(*, _root_: Any) -> str:
    return benchmark_dir(_root_)


def _first(a: Any, b: Any) -> Any:
    return b if a is None or a == "" else a


def _help(part: str, *, _root_: Any) -> str:
    from ganeval.app import help as helptext

    return helptext.part(part, _root_)


def register() -> None:
    """Register the resolvers (once; registering again is a no-op)."""
    from omegaconf import OmegaConf

    for name, fn in (("ganeval.benchmark_dir", _benchmark_dir), ("ganeval.first", _first),
                     ("ganeval.help", _help)):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)
