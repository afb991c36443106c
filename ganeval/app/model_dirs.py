"""Where the app puts a trained generator: `models_dir/<data>/<data>-<model>-seed<k>-<hash>/`, a name a person can
read (which data, which model, which training seed) with the hash of the full training spec that keys it.

Folders of the earlier layout (`models_dir/<data>/<model>-<hash>/`, the same hash) are found and renamed to the new
name once, so a resumed or repeated run reuses them; a link is never renamed or followed into (it is used where it
is, as before).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping

from ganeval.hashing import stable_hash

log = logging.getLogger("ganeval")


def spec_key(data: str, model: str, spec: Mapping[str, Any]) -> str:
    """The 10-hex hash that keys a trained model's folder (unchanged from the earlier layout)."""
    return stable_hash({"data": data, "model": model, **spec}, 10)


def model_dir(models_dir: str | Path, data: str, model: str, spec: Mapping[str, Any]) -> Path:
    """The folder of the model trained by `spec`: the new name, after renaming a folder of the old layout into it."""
    key = spec_key(data, model, spec)
    parent = Path(models_dir) / data
    new = parent / f"{data}-{model}-seed{spec.get('seed', 0)}-{key}"
    old = parent / f"{model}-{key}"
    if old.is_symlink():
        return old  # a link someone made: used in place, never renamed
    if old.is_dir() and not new.exists():
        os.replace(old, new)
        log.info("renamed %s to %s (the folder names of trained models now say data, model and seed)", old, new)
    return new
