"""ganeval.torchmetrics across processes and devices (issue 33): two gloo ranks each feeding half give one process's
numbers, and the pools stay on their device through compute (on a GPU: no host copy of a pool)."""

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
from ganeval.torchmetrics import metric as metric_module  # noqa: E402
from torchmetrics.utilities import dim_zero_cat  # noqa: E402
from hostguard import guard_storages  # noqa: E402

METRICS = {"imd": {}, "fid": {}, "kid": {"subset_size": 50, "subsets": 5}}
RUNS, SAMPLE = 3, 150


def halves(rank: int, world: int) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's contiguous share of the real and fake pools (the whole pools when world == 1)."""
    g = torch.Generator().manual_seed(0)
    real, fake = torch.randn(200, 6, generator=g), torch.randn(180, 6, generator=g) + 0.4
    return real.chunk(world)[rank], fake.chunk(world)[rank]


def scored(rank: int, world: int) -> dict[str, float]:
    metric = Protocol(METRICS, features="identity", runs=RUNS, sample_size=SAMPLE, seed=1)
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


def guard_pools(monkeypatch: pytest.MonkeyPatch) -> tuple[set[int], list[str]]:
    """Make every host conversion of a pool raise for tensors whose storage is in the returned set; compute()'s
    gathered pools join it as they are made. Returns (the set, the attempts)."""
    ptrs: set[int] = set()
    tried = guard_storages(monkeypatch, ptrs)

    def recorded(state):  # type: ignore[no-untyped-def]
        out = dim_zero_cat(state)
        ptrs.add(out.untyped_storage().data_ptr())
        return out

    monkeypatch.setattr(metric_module, "dim_zero_cat", recorded)
    return ptrs, tried


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_pools_stay_on_their_device_through_compute(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The metric on `device` scores its pools there: no pool is converted to numpy or copied to the host (the
    gathered pools of compute() included); on CPU the numbers are evaluate's on numpy arrays, bit for bit."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    real, fake = halves(0, 1)
    want = evaluate(real.numpy(), fake.numpy(), runs=RUNS, sample_size=SAMPLE, metrics=METRICS, seed=1, device="cpu",
                    progress=False)
    metric = Protocol(METRICS, features="identity", runs=RUNS, sample_size=SAMPLE, seed=1).to(device)
    metric.update(real.to(device), real=True)
    metric.update(fake.to(device), real=False)
    states = [metric.real_features[0], metric.fake_features[0]]
    assert all(s.device.type == device for s in states)
    ptrs, tried = guard_pools(monkeypatch)
    ptrs.update(s.untyped_storage().data_ptr() for s in states)
    with pytest.raises(AssertionError, match="host copy"):  # the guard is live
        states[0].numpy()
    tried.clear()
    got = metric.compute()
    assert tried == [] and len(ptrs) == 4  # the two states and the two pools compute() made of them
    assert all(v.device.type == device for v in got.values())
    values = [got[m].item() for m in want["metric"]]
    if device == "cpu":
        assert values == want["mean"].tolist()
    else:  # GPU kernels sum in another order: float32 rounding
        np.testing.assert_allclose(values, want["mean"], rtol=1e-4)


def uneven_worker(rank: int, world: int, port: int, out: str, case: str) -> None:
    """Rank 0 feeds the whole pools; rank 1 feeds nothing ("empty") or rows of 7 features against rank 0's 6
    ("widths"). Saves the numbers, or the error's class and message."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world)
    try:
        metric = Protocol(METRICS, features="identity", runs=RUNS, sample_size=SAMPLE, seed=1)
        real, fake = halves(0, 1)
        if rank == 0:
            metric.update(real, real=True)
            metric.update(fake, real=False)
        elif case == "widths":
            metric.update(torch.randn(10, 7), real=True)
        try:
            result: object = {k: v.item() for k, v in metric.compute().items()}
        except ValueError as e:
            result = ("ValueError", str(e))
        torch.save(result, f"{out}.{rank}")
    finally:
        torch.distributed.destroy_process_group()


@pytest.mark.slow
def test_a_rank_fed_nothing_gets_the_numbers_of_the_rows_fed(tmp_path: Path) -> None:
    """A rank that fed no rows (a short last batch in a DDP loop) neither aborts nor changes the numbers: both ranks
    get one process's numbers on rank 0's rows."""
    out = str(tmp_path / "scores")
    torch.multiprocessing.spawn(uneven_worker, args=(2, free_port(), out, "empty"), nprocs=2, join=True)
    both = [torch.load(f"{out}.{r}", weights_only=True) for r in range(2)]
    assert both[0] == both[1] == scored(0, 1)


@pytest.mark.slow
def test_ranks_of_other_feature_widths_raise_the_documented_value_error(tmp_path: Path) -> None:
    out = str(tmp_path / "scores")
    torch.multiprocessing.spawn(uneven_worker, args=(2, free_port(), out, "widths"), nprocs=2, join=True)
    both = [torch.load(f"{out}.{r}", weights_only=False) for r in range(2)]
    assert both[0] == both[1] == ("ValueError", "the ranks give 6 and 7 features per sample: feed one feature space "
                                  "(one image size, one extractor) to a metric on every rank")
