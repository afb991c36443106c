"""Checkpoint files: what they hold, safe loading (`weights_only=True`) and RNG state capture/restore.

A checkpoint is a dict of tensors and primitive containers only, so `torch.load(weights_only=True)`
reads it: generator, critic, both optimisers, counters, every RNG state, the training config and its
hash, and the architecture name and kwargs (enough to rebuild the generator from the file alone).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

FORMAT = "ganeval-gan-checkpoint"
VERSION = 1
REQUIRED_KEYS = ("format", "version", "arch", "arch_kwargs", "generator", "config_hash", "config_json")


def capture_rng(noise: torch.Generator) -> dict[str, Any]:
    """All RNG states that training touches: torch (CPU and CUDA), numpy, python, the noise generator."""
    np_state = cast("tuple[str, np.ndarray, int, int, float]", np.random.get_state())  # legacy=True: the tuple
    py_state = random.getstate()
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "numpy": {
            "keys": torch.from_numpy(np.asarray(np_state[1], dtype=np.int64)),
            "pos": int(np_state[2]),
            "has_gauss": int(np_state[3]),
            "cached_gaussian": float(np_state[4]),
        },
        "python": {"version": py_state[0], "state": list(py_state[1]), "gauss": py_state[2]},
        "noise": noise.get_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any], noise: torch.Generator) -> None:
    """Restore what `capture_rng` stored (CUDA states only where CUDA is present)."""
    torch.set_rng_state(state["torch"])
    np_s = state["numpy"]
    np.random.set_state(
        ("MT19937", np_s["keys"].numpy().astype(np.uint32), np_s["pos"], np_s["has_gauss"], np_s["cached_gaussian"])
    )
    py = state["python"]
    random.setstate((py["version"], tuple(py["state"]), py["gauss"]))
    noise.set_state(state["noise"])
    if "cuda" in state and torch.cuda.is_available() and len(state["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(state["cuda"])


def load_checkpoint(path: str | Path, *, what: str = "checkpoint") -> dict[str, Any]:
    """Load a ganeval checkpoint safely (`weights_only=True`, on CPU) and check it is one.

    `what` names the caller's config in errors (e.g. "generator config 'checkpoint'").
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{what}: checkpoint file {str(path)!r} does not exist; train one with ganeval.gan.train")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any unreadable file gets the same clear message
        raise ValueError(f"{what}: {str(path)!r} is not a readable torch checkpoint ({type(e).__name__}: {e})") from e
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(
            f"{what}: {str(path)!r} is not a ganeval GAN checkpoint (expected a dict with format={FORMAT!r}); "
            "for another model use the generator config 'module'"
        )
    missing = [k for k in REQUIRED_KEYS if k not in ckpt]
    if missing:
        raise ValueError(f"{what}: checkpoint {str(path)!r} lacks {missing}; it is truncated or from another tool")
    if ckpt["version"] > VERSION:
        raise ValueError(f"{what}: checkpoint version {ckpt['version']} is newer than this ganeval ({VERSION})")
    return ckpt


def checkpoint_config(ckpt: dict[str, Any]) -> dict[str, Any]:
    """The training config stored in a checkpoint, as a dict."""
    return json.loads(ckpt["config_json"])
