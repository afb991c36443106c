"""torch.distributed for feature extraction: start from torchrun's environment, rank and world size, and
gathering per-chunk features on rank 0 (through a gloo group, so NCCL runs need no extra device memory)."""

from __future__ import annotations

import os
from typing import Any

import torch

_GATHER_GROUP: Any = None


def rank_world() -> tuple[int, int]:
    """(rank, world size) of the default process group; (0, 1) when torch.distributed is not running."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def is_main() -> bool:
    """True on rank 0 (and in every single-process run)."""
    return rank_world()[0] == 0


def init_from_env(device: str | None = None) -> str | None:
    """Join the process group torchrun describes (WORLD_SIZE > 1 in the environment); returns the device this
    rank computes on (cuda:LOCAL_RANK with NCCL when CUDA is there and `device` is not 'cpu', else `device`)."""
    import torch.distributed as dist

    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return device
    cuda = torch.cuda.is_available() and (device is None or str(device).startswith("cuda"))
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if cuda else "gloo")
    if cuda:
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        return f"cuda:{local}"
    return device


def gather_to_main(parts: dict[int, Any], device: torch.device | None = None) -> dict[int, Any] | None:
    """Every rank's {chunk index: features} merged on rank 0 (None on the other ranks); single-process: `parts`."""
    global _GATHER_GROUP
    import torch.distributed as dist

    rank, world = rank_world()
    if world == 1:
        return parts
    if _GATHER_GROUP is None:
        _GATHER_GROUP = dist.new_group(backend="gloo")
    out: list[Any] = [None] * world if rank == 0 else None  # type: ignore[assignment]
    dist.gather_object(parts, out, dst=0, group=_GATHER_GROUP)
    if rank != 0:
        return None
    merged: dict[int, Any] = {}
    for p in out:
        merged.update(p)
    return merged
