"""Features of an `ImageSource` (folder, zip, tar): streamed, cached per chunk as made, sharded over ranks.

The set is cut into chunks of `chunk_size` images (each cut into batches of `batch_size`, so the numbers never
depend on where a run stopped). With a cache directory every finished chunk is written atomically under
`cache_dir/partial/<key>-b<batch>-c<chunk>/`, so a killed run resumes at the first missing chunk and the final
entry (written once, atomically, then the chunks removed) equals an uninterrupted run's. Under torch.distributed
(torchrun) rank r computes chunks r, r+W, ...; rank 0 gathers them in source order and is the only one that
returns the features (the others get None) and writes the final cache entry.

The cache key needs the content hash of the decoded pixels. When it is not yet remembered (`one_pass`: a first
run over these files, in one process), it is computed on the extraction's own decoding pass and the chunks are kept
under `partial/files-<files and extractor hash>-...` meanwhile; otherwise (remembered, torchrun, an extractor's
host stage run in the DataLoader workers, or a stopped one-pass run being resumed) it is computed first, in a
separate decoding pass (`ImageSource.content`), and the entry looked up before any extraction.
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
from ganeval.features.batches import run_batches
from ganeval.features.distributed import gather_to_main, group_call, rank_world

log = logging.getLogger(__name__)
CHUNK_SIZE = 2048  # images per cached chunk (the GANEVAL_CHUNK_SIZE environment variable overrides it)
THREADED_HASH = True  # a one-pass run hashes in a background thread (`ContentHasher`), off the main thread's path


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


def _chunk_meta(partial: Path, i: int, bounds: list[tuple[int, int]]) -> dict[str, Any]:
    """What chunk `i` carries and is checked against: its folder (content or files, extractor, batch and chunk
    sizes), index and rows."""
    return {"partial": partial.name, "chunk": i, "rows": list(bounds[i])}


def _load_chunk(partial: Path, i: int, bounds: list[tuple[int, int]]) -> np.ndarray | None:
    """A finished chunk's features (None when absent, invalid or another chunk's: it is computed again)."""
    return fcache.load_cached(_chunk_file(partial, i), bounds[i][1] - bounds[i][0], _chunk_meta(partial, i, bounds))


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
    hash_content: bool = False,
) -> tuple[np.ndarray | None, dict[str, Any]]:
    """(features N×D float32 on rank 0, else None; info) for a streamed image source; see the module doc.
    `hash_content`: without a cache too, compute the source's content identity on the extraction's decoding pass
    when `one_pass` allows it (`source.content()` then returns it without decoding)."""
    from ganeval.common import progress_bar

    chunk_size = chunk_size_default() if chunk_size is None else chunk_size
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    rank, world = rank_world()
    ex.check_input(source.shape, np.uint8)
    info: dict[str, Any] = {"extractor": ex.identity(), "cache_hit": False, "cache_file": None}
    t0 = time.perf_counter()
    source.snapshot()  # each chunk is checked against it once decoded (`ImageSource.check_unchanged`)
    partial = hasher = None
    if cache_dir is not None and ex.cacheable:
        partial, hasher, cached = _cache_plan(source, ex, batch_size, num_workers, chunk_size, cache_dir,
                                              progress and rank == 0, info)
        if cached is not None:
            info.update(n=len(source), seconds=time.perf_counter() - t0)
            return (cached if rank == 0 else None), info
        partial.mkdir(parents=True, exist_ok=True)
    elif hash_content and one_pass(source, ex, num_workers, None):
        hasher = _new_hasher()
    n = len(source)
    bounds = [(s, min(s + chunk_size, n)) for s in range(0, n, chunk_size)]
    mine = [i for i in range(len(bounds)) if i % world == rank]
    done = _chunks_on_disk(partial, mine, bounds)
    todo = [i for i in mine if i not in done]
    if done:
        log.info("resuming feature extraction of %s: %d of %d chunks on disk", source.path, len(done), len(mine))
    bar = progress_bar(total=sum(bounds[i][1] - bounds[i][0] for i in mine), initial=sum(len(v) for v in done.values()),
                       unit="img", unit_scale=True, desc=f"features[{ex.name}] {source.path.name}",
                       disable=not progress or rank != 0, smoothing=0.1)
    rows = Rows(n) if world == 1 else None  # one process: every chunk written straight into the final array
    try:
        _extract_chunks(source, ex, device, todo, bounds, batch_size, num_workers, partial, done, bar, rows, hasher)
    finally:
        bar.close()
        if hasher is not None:
            hasher.close()
    feats = _whole(done, bounds, rows, device)
    info.update(n=n, seconds=time.perf_counter() - t0)
    if feats is None:  # a torchrun rank other than 0: its chunks went to rank 0
        return None, info
    if partial is not None:
        if hasher is not None:  # the content was hashed on the way: remember it, then look the entry up
            feats = _store_hashed(source, ex, hasher, cache_dir, feats, info)  # type: ignore[arg-type]
        else:
            fcache.save_cached(info["cache_file"], feats, fcache.entry_meta(info["content_hash"], info["extractor"], n))
        shutil.rmtree(partial, ignore_errors=True)
    elif hasher is not None:
        info.update(content_hash=source.remember(hasher.content(source.shape), None)["stream"])
    return feats, info


def one_pass(source: ImageSource, ex: Extractor, num_workers: int, cache_dir: str | os.PathLike | None) -> bool:
    """Whether a cached extraction can hash the content on its own decoding pass (no separate pass first): one
    process (no torchrun), the content not yet known (no memo in `cache_dir/sources/`), and the batches seen by the
    main process still the raw uint8 pixels (not an extractor's host stage run in the DataLoader workers, as
    DINOv2's and CLIP's are with workers)."""
    return rank_world() == (0, 1) and not host_stage_in_workers(ex, num_workers) and source.memoised(cache_dir) is None


def host_stage_in_workers(ex: Extractor, num_workers: int) -> bool:
    """Whether the extractor's host stage (e.g. DINOv2's PIL resizing) runs in the DataLoader workers."""
    return num_workers > 0 and ex.host_work()


def _new_hasher() -> Any:
    """A `ContentHasher` for a one-pass extraction (hashing in a background thread unless THREADED_HASH is off)."""
    from ganeval.data.sources.content_hash import ContentHasher

    return ContentHasher(threaded=THREADED_HASH)


def _files_partial(source: ImageSource, ex: Extractor, batch_size: int, chunk_size: int,
                   cache_dir: str | os.PathLike) -> Path:
    """The chunks' folder of a one-pass run, named from the files (their content hash is not known before)."""
    from ganeval.hashing import stable_hash

    key = stable_hash({"files": source.files_key(cache_dir), "extractor": ex.identity()}, 32)
    return Path(cache_dir) / "partial" / f"files-{key}-b{batch_size}-c{chunk_size}"


def _cache_plan(source: ImageSource, ex: Extractor, batch_size: int, num_workers: int, chunk_size: int,
                cache_dir: str | os.PathLike, progress: bool, info: dict[str, Any],
                ) -> tuple[Path, Any, np.ndarray | None]:
    """(chunks' folder, a `ContentHasher` for the extraction pass or None, the cached features or None). With the
    content unknown (`one_pass`) it is hashed during extraction, the chunks kept under a files-named folder; when
    that folder already holds chunks (a stopped one-pass run), the content is hashed first in a separate pass (the
    finished chunks' images decoded once more, only for the hash) and the extraction continues into it. Otherwise
    (content remembered, torchrun, host stage in workers): hashed first, looked up, chunks under the cache key."""
    files_partial, resumed = None, False
    if rank_world() == (0, 1):
        files_partial = _files_partial(source, ex, batch_size, chunk_size, cache_dir)
        resumed = any(files_partial.glob("chunk-*.npz"))
        if not resumed and one_pass(source, ex, num_workers, cache_dir):
            return files_partial, _new_hasher(), None
    content = shared_content(source, batch_size, num_workers, cache_dir, progress)
    path, cached = fcache.find_cached(cache_dir, content["stream"], info["extractor"], len(source))
    info.update(content_hash=content["stream"], cache_file=str(path))
    if cached is not None:
        log.info("feature cache hit: %s", path)
        info.update(cache_hit=True)
        return path, None, cached
    if resumed:
        return files_partial, None, None  # type: ignore[return-value]
    return Path(cache_dir) / "partial" / f"{path.stem}-b{batch_size}-c{chunk_size}", None, None


def _store_hashed(source: ImageSource, ex: Extractor, hasher: Any, cache_dir: str | os.PathLike,
                  feats: np.ndarray, info: dict[str, Any]) -> np.ndarray:
    """After a one-pass extraction: remember the content (the memo `content()` writes), then the entry: an existing
    one (the same pixels came from other files before: the same features) is used as it is, else it is written."""
    content = source.remember(hasher.content(source.shape), cache_dir)
    path, cached = fcache.find_cached(cache_dir, content["stream"], info["extractor"], len(source))
    info.update(content_hash=content["stream"], cache_file=str(path))
    if cached is not None:
        assert cached.shape == feats.shape, (cached.shape, feats.shape)
        log.info("feature cache hit (after extracting: the content was not known before): %s", path)
        info.update(cache_hit=True)
        return cached
    fcache.save_cached(path, feats, fcache.entry_meta(content["stream"], info["extractor"], len(feats)))
    return feats


def _whole(done: dict[int, np.ndarray], bounds: list[tuple[int, int]], rows: Rows | None,
           device: torch.device) -> np.ndarray | None:
    """The N×D features on rank 0, None on the others: `rows`' array (one process) or every rank's chunks gathered
    in source order (torchrun)."""
    if rows is not None:
        return rows.whole(done, bounds)
    gathered = gather_to_main(done, device)
    if gathered is None:
        return None
    return np.ascontiguousarray(np.concatenate([gathered[i] for i in range(len(bounds))]))


def _chunks_on_disk(partial: Path | None, mine: list[int], bounds: list[tuple[int, int]]) -> dict[int, np.ndarray]:
    """This rank's chunks that a stopped run finished (in `partial`; none without a cache): not extracted again."""
    done: dict[int, np.ndarray] = {}
    if partial is not None:
        for i in mine:
            got = _load_chunk(partial, i, bounds)
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
        for i, (s, _end) in enumerate(bounds):
            part = done[i]
            if self.array is None or not np.shares_memory(part, self.array):
                self.put(s, part)
        assert self.array is not None
        return self.array


def _extract_chunks(source: ImageSource, ex: Extractor, device: torch.device, todo: list[int],
                    bounds: list[tuple[int, int]], batch_size: int, num_workers: int, partial: Path | None,
                    done: dict[int, np.ndarray], bar: Any, rows: Rows | None = None, hasher: Any = None) -> None:
    """Extract the chunks `todo` in batches of `batch_size` (each chunk cut alone), each chunk into `done` (a view
    of `rows` when given) and, with a cache, written to `partial` as soon as it is complete. `hasher` (a
    `ContentHasher`): fed every raw uint8 batch, in order, before any host stage (then `todo` is every chunk)."""
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
            source.check_unchanged(*bounds[i])  # its files as when the run began: else nothing of them is kept
            done[i] = feats
            if partial is not None:
                fcache.save_cached(_chunk_file(partial, i), feats, _chunk_meta(partial, i, bounds))

    if sampler:
        pin = device.type == "cuda"
        in_workers = host_stage_in_workers(ex, num_workers)
        batches = source.batches(batch_size, num_workers, pin, batch_sampler=sampler,
                                 transform=ex.host_stage if in_workers else None, channels_last=True)
        if hasher is not None:
            assert not in_workers and len(todo) == len(bounds), "hashing needs every raw batch in source order"
            batches = hasher.wrap(batches)
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
    with group_call("sharing the content hash"):
        dist.broadcast_object_list(box, src=0)
    source._content = box[0]
    return box[0]  # type: ignore[return-value]
