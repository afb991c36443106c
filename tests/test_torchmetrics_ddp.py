"""ganeval.torchmetrics across processes and devices (issue 33): two gloo ranks each feeding half give one process's
numbers, and on a GPU the pools stay on the device through compute (no host copy of a pool or a subsample)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("torchmetrics")

from ganeval import evaluate  # noqa: E402
from ganeval.torchmetrics import Protocol  # noqa: E402

METRICS = {"imd": {}, "fid": {}, "kid": {"subset_size": 50, "subsets": 5}}
RUNS, SAMPLE = 3, 150


def halves(rank: int, world: int) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's contiguous share of the real and fake pools (the whole pools when world == 1)."""
    g = torch.Generator().manual_seed(0)
    real, fake = torch.randn(200, 6, generator=g), torch.randn(180, 6, generator=g) + 0.4
    return real.chunk(world)[rank], fake.chunk(world)[rank]


def scored(rank: int, world: int) -> dict[str, float]:
    metric = Protocol(METRICS, feature="identity", runs=RUNS, sample_size=SAMPLE, seed=1)
    real, fake = halves(rank, world)
    for i in range(0, len(real), 32):  # several updates per rank: list states of many tensors
        metric.update(real[i : i + 32], real=True)
    metric.update(fake, real=False)
    return {k: v.item() for k, v in metric.compute().items()}


def ddp_worker(rank: int, world: int, port: int, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.save(scored(rank, world), f"{out}.{rank}")
    finally:
        torch.distributed.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_two_gloo_ranks_give_one_processs_numbers(tmp_path: Path) -> None:
    """Each rank holds half the rows; torchmetrics gathers them (rank 0's, then rank 1's) before compute, so both
    ranks score exactly the pools one process fed in that order."""
    out = str(tmp_path / "scores")
    torch.multiprocessing.spawn(ddp_worker, args=(2, free_port(), out), nprocs=2, join=True)
    one = scored(0, 1)
    both = [torch.load(f"{out}.{r}", weights_only=True) for r in range(2)]
    assert both[0] == one and both[1] == one
    real, fake = halves(0, 1)
    want = evaluate(real.numpy(), fake.numpy(), runs=RUNS, sample_size=SAMPLE, metrics=METRICS, seed=1, progress=False)
    assert [one[m] for m in want["metric"]] == want["mean"].tolist()


def guard_large_host_copies(monkeypatch: pytest.MonkeyPatch, limit: int) -> list[str]:
    """Make every copy to the host of a CUDA tensor of `limit` elements or more raise (a pool or a subsample is at
    least that large; scalars and index vectors are smaller); return the attempts."""
    tried: list[str] = []

    def wrap(name: str) -> None:
        original = getattr(torch.Tensor, name)

        def guarded(self, *args, **kwargs):
            to_host = name != "to" or _target(args, kwargs) == "cpu"
            if self.is_cuda and self.numel() >= limit and to_host:
                tried.append(f"{name} {tuple(self.shape)}")
                raise AssertionError(f"host copy of a pool-sized CUDA tensor: Tensor.{name}")
            return original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, guarded)

    for name in ("numpy", "cpu", "__array__", "tolist", "to"):
        wrap(name)
    return tried


def _target(args: tuple, kwargs: dict) -> str | None:
    t = kwargs.get("device", args[0] if args and isinstance(args[0], (str, torch.device)) else None)
    return None if t is None else torch.device(t).type


@pytest.mark.gpu
def test_cuda_pools_stay_on_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    real, fake = halves(0, 1)
    want = evaluate(real.numpy(), fake.numpy(), runs=RUNS, sample_size=SAMPLE, metrics=METRICS, seed=1, device="cpu",
                    progress=False)
    metric = Protocol(METRICS, feature="identity", runs=RUNS, sample_size=SAMPLE, seed=1).to("cuda")
    metric.update(real.cuda(), real=True)
    metric.update(fake.cuda(), real=False)
    assert metric.real_features[0].is_cuda and metric.fake_features[0].is_cuda
    tried = guard_large_host_copies(monkeypatch, SAMPLE * real.shape[1])
    with pytest.raises(AssertionError, match="host copy"):  # the guard is live
        torch.zeros(SAMPLE, real.shape[1], device="cuda").cpu()
    tried.clear()
    got = metric.compute()
    assert tried == []
    assert all(v.is_cuda for v in got.values())
    np.testing.assert_allclose([got[m].item() for m in want["metric"]], want["mean"], rtol=1e-4)
