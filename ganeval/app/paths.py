"""Where configs are read and results go, and whether a directory can be written: light (no torch), so a refusal needs no heavy import."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

CUSTOM = "custom"  # the experiment name of a config without an experiment (experiment=~)


def config_dir() -> Path:
    """The Hydra config directory shipped inside the package (`ganeval/configs/`)."""
    return Path(__file__).resolve().parent.parent / "configs"


def default_results_dir(results_dir: Any, experiment: str | None) -> Path:
    """`results_dir` when given, else results/<experiment> (results/custom without one)."""
    return Path(str(results_dir)) if results_dir else Path("results") / (experiment or CUSTOM)


def check_writable(path: Path, key: str) -> None:
    """Refuse a directory that cannot be created or written, before any work (probed on its nearest existing part)."""
    existing = path.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{key}={path} cannot be made: {existing} is a file; choose another {key}")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as e:
        raise ValueError(f"{key}={path} is not writable ({existing}: {e.strerror}); choose another {key} "
                         "or make it writable") from None


def check_not_inside_inputs(out: str | os.PathLike, inputs: Iterable[str | os.PathLike], key: str) -> None:
    """Refuse an output folder that is an input folder or lies inside one (through links too): its sample grids and
    plots would become images of that input on the next run."""
    where = Path(out).expanduser().resolve()
    for i in inputs:
        folder = Path(i).expanduser()
        if not folder.is_dir():
            continue
        folder = folder.resolve()
        if where == folder or folder in where.parents:
            raise ValueError(f"{key}={out} is {'the' if where == folder else 'inside the'} input folder {i}: ganeval "
                             f"would write its files among that input's images; choose {key} outside every input")


def config_input_paths(config: Any) -> list[str]:
    """The inputs a resolved config names: every `path` value and `replicas` entry (data, generator, generators;
    Hydra's own settings left out)."""
    found: list[str] = []
    if isinstance(config, dict):
        for k, v in config.items():
            if k == "hydra":
                continue
            if k == "path" and isinstance(v, (str, os.PathLike)):
                found.append(os.fspath(v))
            elif k == "replicas" and isinstance(v, list):
                found += [os.fspath(r) for r in v if isinstance(r, (str, os.PathLike))]
            else:
                found += config_input_paths(v)
    elif isinstance(config, list):
        for v in config:
            found += config_input_paths(v)
    return found
