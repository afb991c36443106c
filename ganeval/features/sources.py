"""Turn any supported image input into batches of CPU/device tensors.

Inputs: a numpy array or torch tensor (the whole set), a torch `Dataset` (items are images or
(image, ...) tuples; decoded by DataLoader workers), or an iterable of batches (streamed). Their content
is hashed by `ganeval.hashing.StreamHasher`, the same however the set is batched.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset

from ganeval.common import check_plain


def item_to_array(item: Any) -> np.ndarray | torch.Tensor:
    """One dataset item as an array: the first element of a tuple/list, a PIL image as H×W(×C)."""
    if isinstance(item, (tuple, list)):
        if not item:
            raise ValueError("dataset item is an empty tuple; expected an image or (image, label)")
        item = item[0]
    if isinstance(item, (np.ndarray, torch.Tensor)):
        return item
    if hasattr(item, "mode") and hasattr(item, "size"):  # PIL image
        return np.asarray(item)
    raise ValueError(f"dataset items must be arrays, tensors or PIL images, got {type(item).__name__}")


def collate_items(items: list[Any]) -> torch.Tensor:
    """DataLoader collate: stack dataset items into one batch tensor (shapes must agree)."""
    arrays = [item_to_array(it) for it in items]
    shapes = {tuple(a.shape) for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"dataset items have different shapes {sorted(shapes)}; resize them to one size")
    if all(isinstance(a, torch.Tensor) for a in arrays):
        return torch.stack(arrays)  # type: ignore[arg-type]
    return torch.from_numpy(np.stack([np.asarray(a) for a in arrays]))


def from_numpy(a: np.ndarray) -> torch.Tensor:
    """A tensor sharing `a`'s memory (read-only arrays too: ganeval never writes to its inputs)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(np.ascontiguousarray(a))


def _as_batch(b: Any) -> torch.Tensor:
    if isinstance(b, torch.Tensor):
        return b
    if isinstance(b, np.ndarray):
        return from_numpy(b)
    if isinstance(b, (tuple, list)) and b and isinstance(b[0], (np.ndarray, torch.Tensor)):
        return _as_batch(b[0])  # (images, labels) batches from a DataLoader
    raise ValueError(
        f"each streamed batch must be an array or tensor (or an (images, labels) pair), got {type(b).__name__}"
    )


@dataclass
class Source:
    """Batches of an input set: `batches()` yields tensors; `n` is the size when known up front;
    `reiterable` is False for one-shot iterators (they are hashed while computing)."""

    batches: Callable[[], Iterator[torch.Tensor]]
    n: int | None
    reiterable: bool
    array: torch.Tensor | None = None  # the whole set when it is one array/tensor


def make_source(images: Any, batch_size: int, num_workers: int = 0, pin_memory: bool = False) -> Source:
    """A `Source` for an array/tensor, a torch Dataset or an iterable of batches."""
    check_plain(images, "images")
    if isinstance(images, np.ndarray):
        if images.dtype == object:
            raise ValueError("images is an object array; pass a numeric uint8/float array")
        images = from_numpy(images)
    if isinstance(images, torch.Tensor):
        t = images
        if t.ndim < 1:
            raise ValueError("images must have a leading sample axis, got a scalar")

        def array_batches() -> Iterator[torch.Tensor]:
            for i in range(0, t.shape[0], batch_size):
                yield t[i : i + batch_size]

        return Source(array_batches, int(t.shape[0]), True, t)
    if isinstance(images, Dataset):
        n = None if isinstance(images, IterableDataset) else len(images)  # type: ignore[arg-type]
        ds = images

        def dataset_batches() -> Iterator[torch.Tensor]:
            loader = DataLoader(ds, batch_size=batch_size, shuffle=False, num_workers=num_workers,
                                collate_fn=collate_items, pin_memory=pin_memory)
            yield from loader

        return Source(dataset_batches, n, True)
    if isinstance(images, (str, bytes)) or not isinstance(images, Iterable):
        raise ValueError(
            "images must be a numpy array, a torch tensor, a torch Dataset or an iterable of batches, "
            f"got {type(images).__name__} (for a folder or file use ganeval.data.folder / ganeval.data.array)"
        )
    reiterable = iter(images) is not images
    n = sum(int(_as_batch(b).shape[0]) for b in images) if isinstance(images, (list, tuple)) else None
    src = images

    def stream_batches() -> Iterator[torch.Tensor]:
        for b in src:
            yield _as_batch(b)

    return Source(stream_batches, n, reiterable)
