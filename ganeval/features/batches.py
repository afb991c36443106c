"""The device loop of every extraction: host batches -> the extractor's host and device stages -> N×D rows, in order,
with the next batch uploaded and the last results copied back while the device works (on CUDA)."""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from ganeval.features.base import Extractor


def _to_device(batches: Iterator[torch.Tensor], device: torch.device) -> Iterator[torch.Tensor]:
    """Move batches to `device`; on CUDA, copy the next batch on a side stream (from pinned memory)
    while the current one is computed."""
    if device.type != "cuda":
        for b in batches:
            yield b.to(device)
        return
    copy_stream = torch.cuda.Stream(device)
    main = torch.cuda.current_stream(device)

    def upload(b: torch.Tensor) -> tuple[torch.Tensor, torch.cuda.Event | None]:
        if b.device == device:
            return b, None
        if b.device.type == "cpu" and not b.is_pinned():
            b = b.pin_memory()
        with torch.cuda.stream(copy_stream):
            d = b.to(device, non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(copy_stream)
        return d, ev

    it = iter(batches)
    try:
        nxt: tuple[torch.Tensor, torch.cuda.Event | None] | None = upload(next(it))
    except StopIteration:
        return
    while nxt is not None:
        cur, ev = nxt
        try:
            nxt = upload(next(it))
        except StopIteration:
            nxt = None
        if ev is not None:
            main.wait_event(ev)
            cur.record_stream(main)
        yield cur


def run_batches(
    batches: Iterator[torch.Tensor],
    ex: Extractor,
    device: torch.device,
    emit: Callable[[np.ndarray], None],
    host_stage: bool = True,
) -> None:
    """Run the extractor over host batches in order (host stage here unless `host_stage` is False: the batches
    had it in DataLoader workers; device stage on `device`, results copied back asynchronously on CUDA, at most two
    in flight) and hand each batch's N×D output to `emit`, in order."""
    ex.setup(device)
    pending: collections.deque[tuple[torch.Tensor, Any]] = collections.deque()

    def raw() -> Iterator[torch.Tensor]:
        # the host stage (e.g. PIL resizing) runs here, while the device still works on earlier batches
        for b in batches:
            yield ex.host_stage(b) if host_stage else b

    def finish(item: tuple[torch.Tensor, Any]) -> None:
        host, ev = item
        if ev is not None:
            ev.synchronize()
        emit(host.numpy())

    with torch.inference_mode():
        for batch in _to_device(raw(), device):
            y = ex.device_stage(batch.contiguous())  # a channels-last batch is transposed here, on the device
            if y.ndim != 2 or y.shape[0] != batch.shape[0]:
                raise RuntimeError(f"extractor {ex.name} returned shape {tuple(y.shape)}")
            if y.device.type == "cuda":
                host = y.to("cpu", non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(torch.cuda.current_stream(y.device))
                pending.append((host, ev))
                while len(pending) > 2:  # bounded in flight, honest progress
                    finish(pending.popleft())
            else:
                finish((y.cpu(), None))
        while pending:
            finish(pending.popleft())
