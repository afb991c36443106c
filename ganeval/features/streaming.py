"""Features of an `ImageSource` (folder, zip, tar): streamed, cached per chunk as made, sharded over ranks.

The set is cut into chunks of `chunk_size` images (each cut into batches of `batch_size`, so the numbers never
depend on where a run stopped). With a cache directory every finished chunk is written atomically under
`cache_dir/partial/<key>-b<batch>-c<chunk>/`, so a killed run resumes at the first missing chunk and the final
entry (written once, atomically, then the chunks removed) equals an uninterrupted run's. Under torch.distributed
(torchrun) rank r computes chunks r, r+W, ...; rank 0 gathers them in source order and is the only one that
returns the features (the others get None) and writes the final cache entry.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ganeval.data.sources import ImageSource
from ganeval.features import cache as fcache
from ganeval.features.base import Extractor
from ganeval.features.distributed import gather_to_main, rank_world

log = logging.getLogger(__name__)
CHUNK_SIZE = 2048  # images per cached chunk (the GANEVAL_CHUNK_SIZE environment variable overrides it)


def chunk_size_default() -> int:
    """Images per chunk: $GANEVAL_CHUNK_SIZE when set (tests, tuning), else CHUNK_SIZE."""
    text = os.environ.get("GANEVAL_CHUNK_SIZE", "")
    if not text:
        return CHUNK_SIZE
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"GANEVAL_CHUNK_SIZE must be a positive integer, got {text!r}")
    return int(text)


def _chunk_file(folder: Path, i: int) -> Path:
    return folder / f"chunk-{i:06d}.npz"


def _load_chunk(path: Path, rows: int) -> np.ndarray | None:
    """A finished chunk's features (None when absent or invalid: it is computed again)."""
    if path.is_symlink():
        return None
    return fcache.load_cached(path, rows)


def extract_source(
    source: ImageSource,
    ex: Extractor,
    device: torch.device,
    *,
    batch_size: int,
    num_workers: int,
    cache_dir: str | os.PathLike | None,
    progress: bool,
    chunk_size: int | None = None,
) -> tuple[np.ndarray | None, dict[str, Any]]:
    """(features N×D float32 on rank 0, else None; info) for a streamed image source; see the module doc."""
    from tqdm.auto import tqdm

    chunk_size = chunk_size_default() if chunk_size is None else chunk_size
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    rank, world = rank_world()
    ex.check_input(source.shape, np.uint8)
    identity = ex.identity()
    info: dict[str, Any] = {"extractor": identity, "cache_hit": False, "cache_file": None}
    t0 = time.perf_counter()
    use_cache = cache_dir is not None and ex.cacheable
    path = partial = None
    if use_cache:
        content = shared_content(source, batch_size, num_workers, cache_dir, progress and rank == 0)
        path, cached, found = fcache.find_cached(cache_dir, content["stream"], identity,  # type: ignore[arg-type]
                                                 ex.legacy_identity(), len(source))
        info.update(content_hash=content["stream"], cache_file=str(path))
        if cached is not None:
            log.info("feature cache hit: %s", found)
            info.update(cache_hit=True, cache_file=str(found), n=len(source), seconds=time.perf_counter() - t0)
            return (cached if rank == 0 else None), info
        partial = Path(cache_dir) / "partial" / f"{path.stem}-b{batch_size}-c{chunk_size}"  # type: ignore[arg-type]
        partial.mkdir(parents=True, exist_ok=True)
    n = len(source)
    bounds = [(s, min(s + chunk_size, n)) for s in range(0, n, chunk_size)]
    mine = [i for i in range(len(bounds)) if i % world == rank]
    done = _chunks_on_disk(partial, mine, bounds)
    todo = [i for i in mine if i not in done]
    if done:
        log.info("resuming feature extraction of %s: %d of %d chunks on disk", source.path, len(done), len(mine))
    bar = tqdm(total=sum(bounds[i][1] - bounds[i][0] for i in mine), initial=sum(len(v) for v in done.values()),
               unit="img", unit_scale=True, desc=f"features[{ex.name}] {source.path.name}",
               disable=not progress or rank != 0, smoothing=0.1)
    rows = Rows(n) if world == 1 else None  # one process: every chunk written straight into the final array
    try:
        _extract_chunks(source, ex, device, todo, bounds, batch_size, num_workers, partial, done, bar, rows)
    finally:
        bar.close()
    gathered = gather_to_main(done, device) if rows is None else None
    info.update(n=n, seconds=time.perf_counter() - t0)
    if rank != 0:
        return None, info
    if rows is not None:
        feats = rows.whole(done, bounds)
    else:
        assert gathered is not None
        feats = np.ascontiguousarray(np.concatenate([gathered[i] for i in range(len(bounds))]))
    if path is not None:
        fcache.save_cached(path, feats, {"extractor": identity, "content": info["content_hash"], "n": n})
        shutil.rmtree(partial, ignore_errors=True)  # type: ignore[arg-type]
    return feats, info


def _chunks_on_disk(partial: Path | None, mine: list[int], bounds: list[tuple[int, int]]) -> dict[int, np.ndarray]:
    """This rank's chunks that a stopped run finished (in `partial`; none without a cache): not extracted again."""
    done: dict[int, np.ndarray] = {}
    if partial is not None:
        for i in mine:
            got = _load_chunk(_chunk_file(partial, i), bounds[i][1] - bounds[i][0])
            if got is not None:
                done[i] = got
    return done


class Rows:
    """The N×D float32 features of a whole source in one array, made at the first batch (when D is known) and
    filled batch by batch: no per-chunk arrays and no final concatenation, so a 50k run holds its features once
    (and leaves no heap of freed chunk arrays behind for the next set's extraction)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.array: np.ndarray | None = None

    def put(self, start: int, out: np.ndarray) -> None:
        if self.array is None:
            self.array = np.empty((self.n, out.shape[1]), dtype=np.float32)
        self.array[start : start + out.shape[0]] = out

    def whole(self, done: dict[int, np.ndarray], bounds: list[tuple[int, int]]) -> np.ndarray:
        """The filled array, with the chunks read from disk (a resumed run) copied in."""
        for i, (s, e) in enumerate(bounds):
            part = done[i]
            if self.array is None or not np.shares_memory(part, self.array):
                self.put(s, part)
        assert self.array is not None
        return self.array


def _extract_chunks(source: ImageSource, ex: Extractor, device: torch.device, todo: list[int],
                    bounds: list[tuple[int, int]], batch_size: int, num_workers: int, partial: Path | None,
                    done: dict[int, np.ndarray], bar: Any, rows: Rows | None = None) -> None:
    """Extract the chunks `todo` in batches of `batch_size` (each chunk cut alone), each chunk into `done` (a view
    of `rows` when given) and, with a cache, written to `partial` as soon as it is complete."""
    from ganeval.features.extraction import run_batches

    sampler = [range(s, min(s + batch_size, bounds[i][1])) for i in todo for s in range(bounds[i][0], bounds[i][1],
                                                                                         batch_size)]
    owner = [i for i in todo for _ in range(bounds[i][0], bounds[i][1], batch_size)]
    parts: list[np.ndarray] = []
    state = {"batch": 0}

    def emit(out: np.ndarray) -> None:
        i = owner[state["batch"]]
        if rows is not None:
            rows.put(sampler[state["batch"]].start, out)
        else:
            parts.append(out)
        state["batch"] += 1
        bar.update(out.shape[0])
        if state["batch"] == len(owner) or owner[state["batch"]] != i:  # chunk i is complete
            if rows is not None and rows.array is not None:
                feats = rows.array[bounds[i][0] : bounds[i][1]]
            else:
                feats = np.ascontiguousarray(np.concatenate(parts).astype(np.float32, copy=False))
            parts.clear()
            done[i] = feats
            if partial is not None:
                fcache.save_cached(_chunk_file(partial, i), feats, {"chunk": i, "rows": list(bounds[i])})

    if sampler:
        pin = device.type == "cuda"
        in_workers = num_workers > 0 and type(ex).host_stage is not Extractor.host_stage  # e.g. PIL resizing
        batches = source.batches(batch_size, num_workers, pin, batch_sampler=sampler,
                                 transform=ex.host_stage if in_workers else None, channels_last=True)
        run_batches(batches, ex, device, emit, host_stage=not in_workers)


def shared_content(source: ImageSource, batch_size: int, num_workers: int, cache_dir: Any,
                    progress: bool) -> dict[str, Any]:
    """The source's content identity, computed on rank 0 and shared with every rank."""
    rank, world = rank_world()
    if world == 1:
        return source.content(batch_size=batch_size, num_workers=num_workers, cache_dir=cache_dir, progress=progress)
    import torch.distributed as dist

    box = [source.content(batch_size=batch_size, num_workers=num_workers, cache_dir=cache_dir, progress=progress)
           if rank == 0 else None]
    dist.broadcast_object_list(box, src=0)
    source._content = box[0]
    return box[0]  # type: ignore[return-value]
