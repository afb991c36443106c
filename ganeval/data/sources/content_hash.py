"""`ContentHasher`: the content identity of a decoded image set, fed its uint8 batches in source order, either by a
separate decoding pass (`ImageSource.content`) or by the extraction pass itself (`ganeval.features.streaming`)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import torch

from ganeval.hashing import StreamHasher


class ContentHasher:
    """Feeds a `StreamHasher` with each batch as C-contiguous uint8 N×C×H×W (a channels-last view is copied to that
    layout first: the identity is defined on those bytes). `threaded`: the copy and the hashing run in a background
    thread (torch's copy and hashlib release the GIL), batches handed over through a queue of `depth` (order kept,
    memory bounded by a few batches); otherwise in the caller's thread. A batch handed over is read later, so its
    consumer must not change it in place (extractors do not: their host and device stages make new tensors)."""

    def __init__(self, threaded: bool = False, depth: int = 2) -> None:
        self.stream = StreamHasher()
        self._error: BaseException | None = None
        self._queue: queue.Queue[torch.Tensor | None] | None = None
        self._thread: threading.Thread | None = None
        if threaded:
            self._queue = queue.Queue(depth)
            self._thread = threading.Thread(target=self._run, name="ganeval-content-hash", daemon=True)
            self._thread.start()

    def _add(self, batch: torch.Tensor) -> None:
        self.stream.update(batch.contiguous())

    def _run(self) -> None:
        assert self._queue is not None
        while (batch := self._queue.get()) is not None:
            if self._error is None:  # after an error the rest is only drained, so `update` never blocks for ever
                try:
                    self._add(batch)
                except BaseException as e:  # noqa: BLE001 - raised in the caller's thread by `content`
                    self._error = e

    def update(self, batch: torch.Tensor) -> None:
        """Add the next batch (in source order)."""
        if self._queue is None:
            self._add(batch)
        else:
            self._queue.put(batch)

    def wrap(self, batches: Iterator[torch.Tensor]) -> Iterator[torch.Tensor]:
        """`batches`, each one added on its way through (before any host stage changes it)."""
        for b in batches:
            self.update(b)
            yield b

    def close(self) -> None:
        """Wait for the batches handed over so far (idempotent; also the clean-up after a failed pass)."""
        if self._thread is not None and self._queue is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def content(self, shape: tuple[int, ...]) -> dict[str, Any]:
        """{"stream": the feature-cache content key, "sha256": of the bytes alone, "shape", "dtype"}: what
        `ImageSource.content` returns and remembers, once every one of the `shape[0]` images was added."""
        self.close()
        if self._error is not None:
            raise self._error
        if self.stream.n != shape[0]:
            raise RuntimeError(f"content hash saw {self.stream.n} images, expected {shape[0]}")
        return {"stream": self.stream.hexdigest(), "sha256": self.stream.bytes_hexdigest(), "shape": list(shape),
                "dtype": "uint8"}
