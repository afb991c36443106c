"""`extract`: images from any source -> N×D float32 features, batched, on any device, cached."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from ganeval.common import resolve_device
from ganeval.data.images import check_unit_range
from ganeval.features import cache as fcache
from ganeval.features.base import Extractor, get_extractor
from ganeval.features.batches import run_batches
from ganeval.features.sources import Source, make_source
from ganeval.hashing import StreamHasher

log = logging.getLogger(__name__)


CPU_BATCH_SIZE = 32  # through Inception on a CPU the batch's activations set the peak memory; 32 is as fast as 50
ACCELERATOR_BATCH_SIZE = 250


def default_batch_size(device: str | torch.device) -> int:
    """The extraction batch size when none is given: 250 on an accelerator, 32 on a CPU, where a cold FID with
    250 held 2.5–3× pytorch-fid's peak memory at its 50 (4.6–5.4 GB against 1.6–2.1 GB) and 32 runs as fast as 50
    with ~0.25 GiB less (scripts/bench_everyday.py --batch-sizes)."""
    return CPU_BATCH_SIZE if torch.device(device).type == "cpu" else ACCELERATOR_BATCH_SIZE


def _compute(
    source: Source,
    ex: Extractor,
    device: torch.device,
    hasher: StreamHasher | None,
    progress: bool,
) -> np.ndarray:
    """Run the extractor over every batch (hashing the raw batches with `hasher` if given)."""
    from ganeval.common import progress_bar

    outputs: list[np.ndarray] = []
    # a bar where images go through a network; feature rows (identity) are taken as they are: no work to show
    bar = progress_bar(total=source.n, unit="img", unit_scale=True, desc=f"features[{ex.name}]",
                       disable=not progress or not ex.images, smoothing=0.1)

    def hashed() -> Iterator[torch.Tensor]:
        for b in source.batches():
            if hasher is not None:
                hasher.update(b)
            yield b

    def emit(out: np.ndarray) -> None:
        outputs.append(out)
        bar.update(out.shape[0])

    try:
        run_batches(hashed(), ex, device, emit)
    finally:
        bar.close()
    if not outputs:
        raise ValueError("images is empty: no batches to extract features from")
    return np.ascontiguousarray(np.concatenate(outputs).astype(np.float32, copy=False))


def extract_with_info(
    images: Any,
    extractor: str | Extractor = "inception",
    *,
    weights: str | os.PathLike | None = None,
    batch_size: int = 50,
    device: str | torch.device | None = None,
    cache_dir: str | os.PathLike | None = None,
    num_workers: int = 0,
    progress: bool = True,
    hash_content: bool = False,
    **options: Any,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Like `extract`, and also return a description: extractor identity (with weights hash),
    content hash, number of images, whether the cache was hit, seconds spent. `hash_content` (an `ImageSource`
    only): compute its content identity on the extraction's own decoding pass even without a cache, where it can."""
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if not isinstance(num_workers, int) or num_workers < 0:
        raise ValueError(f"num_workers must be a non-negative int, got {num_workers!r}")
    ex = get_extractor(extractor, weights=weights, **options)
    dev = resolve_device(device, images)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    from ganeval.data.sources import ImageSource

    if isinstance(images, ImageSource):  # streamed, chunk-cached, sharded over ranks (None off rank 0)
        from ganeval.features.streaming import extract_source

        return extract_source(images, ex, dev, batch_size=batch_size, num_workers=num_workers,  # type: ignore[return-value]
                              cache_dir=cache_dir, progress=progress, hash_content=hash_content)
    source = make_source(images, batch_size, num_workers, pin_memory=dev.type == "cuda")
    if source.array is not None:
        ex.check_input(tuple(source.array.shape), source.array.dtype)
        if source.array.shape[0] == 0:
            raise ValueError("images is empty: no images to extract features from")
        if ex.images and source.array.is_floating_point():
            check_unit_range(source.array)
    identity = ex.identity()  # resolves weights (Inception) before any expensive step
    info: dict[str, Any] = {"extractor": identity, "cache_hit": False, "cache_file": None}
    t0 = time.perf_counter()
    use_cache = cache_dir is not None and ex.cacheable
    hasher: StreamHasher | None = None
    path = None
    if use_cache and source.reiterable:
        hasher = StreamHasher()
        for b in source.batches():
            hasher.update(b)
        content = hasher.hexdigest()
        path, cached = fcache.find_cached(cache_dir, content, identity, hasher.n)  # type: ignore[arg-type]
        info.update(content_hash=content, cache_file=str(path))
        if cached is not None:
            log.info("feature cache hit: %s", path)
            info.update(cache_hit=True, n=int(cached.shape[0]), seconds=time.perf_counter() - t0)
            return cached, info
        # a re-iterated stream is hashed again while computing: a dataset that yields different
        # images on each pass (random sampling) must not store features under the first pass's key
        hasher = StreamHasher() if source.array is None else None
    elif use_cache:
        hasher = StreamHasher()  # one-shot stream: hash while computing, then store
    feats = _compute(source, ex, dev, hasher, progress)
    if use_cache:
        if hasher is not None:
            content = hasher.hexdigest()
            if path is not None and content != info["content_hash"]:
                log.warning("input changed between the hashing and the computing pass (a random "
                            "dataset?); features not cached")
                path = None
            else:
                path = fcache.cache_path(cache_dir, fcache.cache_key(content, identity))  # type: ignore[arg-type]
                info.update(content_hash=content, cache_file=str(path))
        if path is not None:
            fcache.save_cached(path, feats, fcache.entry_meta(info["content_hash"], identity, int(feats.shape[0])))
        else:
            info.update(cache_file=None)
    info.update(n=int(feats.shape[0]), seconds=time.perf_counter() - t0)
    return feats, info


def extract(
    images: Any,
    extractor: str | Extractor = "inception",
    *,
    weights: str | os.PathLike | None = None,
    batch_size: int = 50,
    device: str | torch.device | None = None,
    cache_dir: str | os.PathLike | None = None,
    num_workers: int = 0,
    progress: bool = True,
    **options: Any,
) -> np.ndarray:
    """N×D float32 features of `images` (array/tensor N×H×W, N×H×W×C or N×C×H×W uint8 or [0, 1]
    floats; a torch Dataset; an iterable of batches; or a `ganeval.data.sources.ImageSource`, streamed and
    cached per chunk, whose features only rank 0 of a torch.distributed run gets) by a registered extractor name
    ("inception", "pixels", "identity", with `options`) or an extractor instance.

    With `cache_dir`, features are stored under a hash of the image content and the extractor's
    identity, and a later call with the same content returns them without running the network.

    Args:
        images: The images (or, for `"identity"`, N×D feature rows), in any of the forms above.
        extractor: A registered extractor's name or an `Extractor` instance.
        weights: The weights file of an extractor that takes one (default: its environment variable, the cache,
            then a download).
        batch_size: Images per forward pass.
        device: Where the network runs; default None: the images' device, else the CPU.
        cache_dir: A folder caching the features, keyed by content and the extractor's identity.
        num_workers: DataLoader workers decoding the images of a Dataset or an `ImageSource`.
        progress: False: no progress bar.
        **options: The extractor's options (e.g. `resize="clean"`, `dims=768`, `max_size=32` for pixels).

    Returns:
        The N×D float32 features (None on a torchrun rank other than 0 for an `ImageSource`).

    Examples:
        >>> import numpy as np
        >>> from ganeval.features import extract
        >>> images = np.random.default_rng(0).integers(0, 256, size=(10, 8, 8, 3), dtype=np.uint8)
        >>> extract(images, "pixels", progress=False).shape
        (10, 192)
    """
    feats, _ = extract_with_info(
        images, extractor, weights=weights, batch_size=batch_size, device=device,
        cache_dir=cache_dir, num_workers=num_workers, progress=progress, **options,
    )
    return feats
