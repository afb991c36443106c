"""torch.distributed for feature extraction: start from torchrun's environment, rank and world size, and
gathering per-chunk features on rank 0 (through a gloo group, so NCCL runs need no extra device memory)."""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

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
        with group_call("joining the group"):
            dist.init_process_group(backend="nccl" if cuda else "gloo")
    if cuda:
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        return f"cuda:{local}"
    return device


def leave_group() -> None:
    """Leave the torchrun group this process joined, so gloo's threads end before the interpreter does (a rank that
    exits with its group alive can abort: "terminate called without an active exception")."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


class GroupLost(ValueError):
    """The torchrun group broke (the launcher or another rank stopped): said in one line, not torch's traceback."""


@contextlib.contextmanager
def group_call(what: str) -> Iterator[None]:
    """Run a collective step; a broken group (torch's `DistError`, e.g. `DistNetworkError: Broken pipe` when the
    launcher was killed) becomes `GroupLost` saying what happened and how to go on."""
    import torch.distributed as dist

    try:
        yield
    except dist.DistError as e:
        raise GroupLost(f"rank {rank_world()[0]}: the torchrun group broke while {what} ({type(e).__name__}: "
                        f"{' '.join(str(e).split())[:200]}): the launcher or another rank stopped; rerun the torchrun "
                        "command: with --cache-dir the chunks finished so far are kept and resume") from None


def gather_to_main(parts: dict[int, Any], device: torch.device | None = None) -> dict[int, Any] | None:
    """Every rank's {chunk index: features} merged on rank 0 (None on the other ranks); single-process: `parts`."""
    global _GATHER_GROUP
    import torch.distributed as dist

    rank, world = rank_world()
    if world == 1:
        return parts
    out: list[Any] = [None] * world if rank == 0 else None  # type: ignore[assignment]
    with group_call("gathering the features on rank 0"):
        if _GATHER_GROUP is None:
            _GATHER_GROUP = dist.new_group(backend="gloo")
        dist.gather_object(parts, out, dst=0, group=_GATHER_GROUP)
    if rank != 0:
        return None
    merged: dict[int, Any] = {}
    for p in out:
        merged.update(p)
    return merged
