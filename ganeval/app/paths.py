"""Where configs are read and results go, and whether a directory can be written: light (no torch), so a refusal needs no heavy import."""

from __future__ import annotations

import tempfile
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
