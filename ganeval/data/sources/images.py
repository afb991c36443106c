"""`ImageSource`: the images of a folder, `.zip` or `.tar`, checked from their headers and streamed in batches.

Decoding follows `ganeval.data.folder` exactly (same order, same pixels): each file is opened with PIL,
converted to grey ('L') when its mode is grey-like and to RGB otherwise, resized to size×size with PIL's
bilinear filter when `size` is given, and the whole set is grey (C=1) only when every image is. Unlike
`folder`, nothing but a few batches is ever in memory: a `torch.utils.data.DataLoader` with worker
processes decodes batch by batch. The set's shape (count, channels, size) comes from the headers alone, so a
source with mixed sizes (no `size`) or an unreadable header is refused, naming the file, before any decoding.
"""

from __future__ import annotations

import gc
import io
import json
import logging
import math
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from ganeval.data.files import eight_bit
from ganeval.data.sources import png
from ganeval.data.sources.containers import Container, open_container
from ganeval.lifeline import init_loader_worker

log = logging.getLogger(__name__)
GRAY_MODES = ("L", "1", "LA", "I;16", "I")  # read as one grey channel, as `ganeval.data.folder` does
RESIZE = "PIL bilinear"  # the filter `size` resizes with (`ganeval.data.folder`'s)
MAX_PIXELS = 1 << 28  # an image header declaring more pixels than this is refused (decompression bomb)
IDENTITY_FORMAT = 2  # 2: file identities by `ganeval.hashing.FilesHasher` (memos of format 1 are never read)


def _open(data: bytes):  # -> PIL.Image.Image
    from PIL import Image

    return Image.open(io.BytesIO(data))


def _why(e: Exception) -> str:
    """A decoding error in one line, without PIL's '<_io.BytesIO object at ...>'."""
    from PIL import UnidentifiedImageError

    if isinstance(e, UnidentifiedImageError):
        return "not an image format PIL can read"
    return f"{type(e).__name__}: {' '.join(str(e).split())}"


class Described:
    """A member's name as messages give it (`Container.describe`), made only when a message is written."""

    def __init__(self, container: Container, name: str) -> None:
        self.container, self.name = container, name

    def __str__(self) -> str:
        return self.container.describe(self.name)


class DecodedImages(Dataset):
    """Item i: member i decoded to uint8 C×H×W, or the one-line error naming it (workers never raise, so the
    message reaches the user without a worker traceback)."""

    def __init__(self, container: Container, channels: int, size: int | None, shape: tuple[int, int]) -> None:
        self.container = container
        self.channels = channels
        self.size = size
        self.shape = shape  # (H, W) every decoded image must have

    def __len__(self) -> int:
        return len(self.container.names)

    def decode(self, i: int) -> np.ndarray:
        name = self.container.names[i]
        # a PNG's bytes may skip the archive's own check (its chunk CRCs are checked instead); other files are read
        # once, checked
        data, checked = self.container.raw(name) if name.lower().endswith(".png") else (self.container.read(name), True)
        try:
            a = png.decode(data)  # 8-bit grey/RGB PNGs whose chunk CRCs all match, by libspng: PIL's pixels, faster
            if a is None and not checked:
                data = self.container.read(name)  # with the archive's own check (CRC)
            a = self._pil(_open(data) if a is None else None, a, name)
        except Exception as e:  # PIL.UnidentifiedImageError, truncated data, OSError, libspng's RuntimeError
            raise ValueError(f"cannot read image file {self.container.describe(name)}: {_why(e)}") from None
        if a.shape[:2] != self.shape:
            raise ValueError(f"{self.container.describe(name)} decodes to {a.shape[1]}×{a.shape[0]}, but its header "
                             f"said {self.shape[1]}×{self.shape[0]}: the file is inconsistent; write it again")
        return a  # H×W or H×W×3: copied once, into the batch (`Batches`)

    def _pil(self, opened: Any, a: np.ndarray | None, name: str) -> np.ndarray:
        """The PIL steps on an opened file, or on pixels libspng decoded (`a`) when they need any (a resize, grey
        made RGB): 16-bit scaled, grey-like to 'L', others to 'RGB', resized, made RGB in a colour set."""
        from PIL import Image

        needs_rgb = a is not None and a.ndim == 2 and self.channels == 3
        if a is not None and not needs_rgb and (self.size is None or a.shape[:2] == (self.size, self.size)):
            return a
        with (Image.fromarray(a) if a is not None else opened) as im:
            im.load()
            im = eight_bit(im, Described(self.container, name))  # 16-bit scaled, not clipped at 255
            mode = "L" if im.mode in GRAY_MODES else "RGB"
            if im.mode != mode:  # converting to its own mode would only copy it
                im = im.convert(mode)
            if self.size is not None and im.size != (self.size, self.size):
                im = im.resize((self.size, self.size), Image.Resampling.BILINEAR)
            if self.channels == 3 and im.mode != "RGB":
                im = im.convert("RGB")
            return np.asarray(im, dtype=np.uint8)

    def __getitem__(self, i: int) -> tuple[np.ndarray | None, str | None]:
        try:
            return self.decode(i), None
        except ValueError as e:
            return None, str(e)


class Batches(Dataset):
    """Item: a list of member indices decoded into one uint8 N×C×H×W batch, or the first one-line error (workers
    never raise, so the message reaches the user without a worker traceback). Each image is copied into the batch
    as soon as it is decoded: a list of decoded images held until stacking would cost fresh pages for every image
    (~10 % of a PNG's decode). `channels_last`: the batch is an N×H×W×C buffer seen as N×C×H×W (`permute`), each
    image one plain copy, its transposition left to the consumer (the GPU, in extraction). `shared`: the buffer is
    in shared memory when made in a DataLoader worker (it reaches the main process without another copy)."""

    def __init__(self, images: DecodedImages, channels_last: bool = False, shared: bool = True) -> None:
        self.images, self.channels_last, self.shared = images, channels_last, shared

    def __getitem__(self, indices: Sequence[int]) -> tuple[torch.Tensor | None, str | None]:
        (h, w), c = self.images.shape, self.images.channels
        shape = (len(indices), h, w, c) if self.channels_last else (len(indices), c, h, w)
        if self.shared and torch.utils.data.get_worker_info() is not None:  # made in shared memory (as default_collate
            # does: share_memory_() on a new tensor would copy it there, ~5 % of a PNG's decode)
            batch = torch.empty(0, dtype=torch.uint8).set_(torch.UntypedStorage._new_shared(math.prod(shape)))
            batch = batch.view(shape)
        else:
            batch = torch.empty(shape, dtype=torch.uint8)
        out = batch.numpy()
        with warnings.catch_warnings():  # PIL's arrays are read-only; they are only read here
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            for k, i in enumerate(indices):
                try:
                    a = self.images.decode(i).reshape(h, w, -1)
                except ValueError as e:
                    return None, str(e)
                if a.shape[2] != c:  # grey pixels in a colour set come from PIL as RGB already; never here
                    raise AssertionError(f"member {i} decoded to {a.shape[2]} channels, not {c}")
                if self.channels_last:
                    out[k] = a
                else:
                    batch[k].copy_(torch.from_numpy(a).permute(2, 0, 1))
        return (batch.permute(0, 3, 1, 2) if self.channels_last else batch), None


class Finish:
    """The DataLoader's collate step on a decoded batch: `transform` it in the worker (e.g. an extractor's host
    stage), or pass the error on."""

    def __init__(self, transform: Callable[[torch.Tensor], torch.Tensor] | None = None) -> None:
        self.transform = transform

    def __call__(self, item: tuple[torch.Tensor | None, str | None]) -> tuple[torch.Tensor | None, str | None]:
        batch, err = item
        if err is not None or self.transform is None:
            return item
        return self.transform(batch), None  # type: ignore[arg-type]


def started(loader: DataLoader) -> Iterator[Any]:
    """iter(loader), its workers forked while the parent's objects are frozen out of the cyclic garbage collector
    (`gc.freeze`): a worker's collections then never write to the parent's Python objects it inherited, so their
    pages stay shared instead of being copied into every worker (`scripts/bench_worker_memory.py`)."""
    if not loader.num_workers:
        return iter(loader)
    gc.freeze()
    try:
        return iter(loader)  # the workers start here
    finally:
        gc.unfreeze()


def _header(c: Container, name: str) -> tuple[str, tuple[int, int]]:
    """(PIL mode, (width, height)) of a member without decoding it: an 8-bit grey/RGB PNG's IHDR read directly
    (from its first bytes in a folder), anything else through PIL's header parsing."""
    try:
        got = png.header(c.head(name, 33))
        if got is not None:
            return got
        with _open(c.read(name)) as im:
            return im.mode, im.size
    except ValueError:
        raise
    except Exception as e:  # PIL.UnidentifiedImageError, OSError
        raise ValueError(f"cannot read image file {c.describe(name)}: {_why(e)}") from None


class WorkerLost(ValueError):
    """A DataLoader worker decoding a source's images died (killed by the kernel, e.g. out of memory)."""


def worker_lost(path: Path, num_workers: int, e: BaseException) -> str:
    """One line for a DataLoader worker that died: what happened, and how to go on."""
    fewer = f"fewer --num-workers (num_workers=; now {num_workers})" if num_workers > 1 else "--num-workers 0"
    return (f"a worker process decoding {path} died ({' '.join(str(e).split())}): the kernel kills a process like "
            f"this when memory runs out; rerun with {fewer} or a smaller --batch-size: with --cache-dir the finished "
            "chunks are kept and the rerun resumes from them")

class ImageSource:
    """The images of a folder, `.zip` or `.tar` as uint8 N×C×H×W batches, without holding them all.

    `shape` is known from the headers at construction; `batches(...)` streams; `content()` is the content
    identity of the decoded set (the same digests `ganeval.hashing` gives the array `folder()` returns), kept
    per source file set in `cache_dir/sources/` so a second run does not decode twice.
    """

    def __init__(self, path: str | os.PathLike, size: int | None = None) -> None:
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
            raise ValueError(f"size must be a positive int or None, got {size!r}")
        self.path = Path(path).expanduser()
        self.size = size
        self.container = open_container(self.path)
        if not self.container.names:
            raise ValueError(f"no image files under {self.path}")
        self.channels, (h, w) = self._scan()
        self.shape = (len(self.container.names), self.channels, h, w)
        self.dataset = DecodedImages(self.container, self.channels, size, (h, w))
        self._content: dict[str, Any] | None = None
        self._files_key: dict[str, Any] | None = None
        self._stats: list[list[int]] | None = None  # the files' stats when first read (`snapshot`)

    def __len__(self) -> int:
        return self.shape[0]

    def describe(self) -> str:
        return f"{self.path} ({self.shape[0]} images of {self.shape[2]}×{self.shape[3]}, {self.channels} channel(s))"

    def _scan(self) -> tuple[int, tuple[int, int]]:
        """Channels and decoded H×W from every header (no pixel decoding); refuse mixed sizes and bad headers."""
        c = self.container
        first: tuple[str, tuple[int, int]] | None = None
        colour: list[str] = []
        for name in c.names:
            mode, wh = _header(c, name)
            if wh[0] * wh[1] > MAX_PIXELS:
                raise ValueError(f"{c.describe(name)} declares {wh[0]}×{wh[1]} pixels: refusing a possible decompression "
                                 "bomb; resize the image")
            if mode not in GRAY_MODES:
                colour.append(name)
            if first is None:
                first = (name, wh)
            elif self.size is None and wh != first[1]:
                raise ValueError(f"images under {self.path} differ in size ({c.describe(first[0])} is {first[1][0]}×"
                                 f"{first[1][1]}, {c.describe(name)} is {wh[0]}×{wh[1]}); pass --size (size=) to "
                                 "resize them all")
        assert first is not None
        if colour and len(colour) < len(c.names):
            log.warning("%d of the %d images under %s are in colour (first: %s), so all are read as RGB (3 channels)",
                        len(colour), len(c.names), self.path, c.describe(colour[0]))
        w, h = (self.size, self.size) if self.size is not None else first[1]
        return (3 if colour else 1), (h, w)

    def loader(self, batch_sampler: Sequence[Sequence[int]], num_workers: int = 0, pin_memory: bool = False,
               transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
               channels_last: bool = False) -> DataLoader:
        """A DataLoader yielding (uint8 batch, error) for the given lists of indices, in that order."""
        return DataLoader(Batches(self.dataset, channels_last, shared=transform is None), sampler=batch_sampler,
                          batch_size=None, num_workers=num_workers, collate_fn=Finish(transform),  # type: ignore[arg-type]  # batch_size=None: called per item
                          pin_memory=pin_memory and torch.cuda.is_available(),
                          multiprocessing_context="fork" if num_workers and os.name == "posix" else None,
                          worker_init_fn=partial(init_loader_worker, os.getpid()) if num_workers else None)

    def batches(self, batch_size: int, num_workers: int = 0, pin_memory: bool = False,
                batch_sampler: Sequence[Sequence[int]] | None = None,
                transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
                channels_last: bool = False) -> Iterator[torch.Tensor]:
        """uint8 N×C×H×W batches in source order (or of `batch_sampler`'s index lists), each passed through
        `transform` in the decoding process when given; a file that cannot be decoded raises `ValueError` naming it.
        `channels_last`: each batch an N×C×H×W view of an N×H×W×C buffer (not contiguous; the same values), which
        spares the decoding processes a transposing copy per image: for consumers that transpose on the device."""
        if batch_sampler is None:
            batch_sampler = [range(i, min(i + batch_size, len(self))) for i in range(0, len(self), batch_size)]
        try:
            for batch, err in started(self.loader(batch_sampler, num_workers, pin_memory, transform, channels_last)):
                if err is not None:
                    raise ValueError(err)
                yield batch
        except RuntimeError as e:
            if "DataLoader worker" not in str(e):
                raise
            raise WorkerLost(worker_lost(self.path, num_workers, e)) from None


    def read_all(self, batch_size: int = 256, num_workers: int = 0) -> np.ndarray:
        """Every image in one uint8 N×C×H×W array (what `ganeval.data.folder` returns; small sets only)."""
        return np.concatenate([b.numpy() for b in self.batches(batch_size, num_workers)])

    def files_key(self, cache_dir: str | os.PathLike | None = None) -> dict[str, Any]:
        """What the decoded content is a function of: the files (names and bytes), the resize and the decoder.
        Computed once per source: every file read, in parallel, unless `cache_dir/files/` remembers each digest
        under an unchanged stat (`ganeval.data.sources.file_digests`)."""
        if self._files_key is None:
            import PIL

            self.snapshot()  # before the files are read: a later change moves their stat away from it
            memo_dir = Path(cache_dir) / "files" if cache_dir is not None else None
            self._files_key = {"files": self.container.file_hash(memo_dir), "kind": self.container.kind,
                               "size": self.size,
                               "resize": RESIZE if self.size is not None else None, "pillow": PIL.__version__,
                               "pyspng": png.version(), "format": IDENTITY_FORMAT}
        return self._files_key

    def snapshot(self) -> None:
        """Take the files' stats once, before ganeval first reads their bytes (for `files_key` or an extraction):
        what `check_unchanged` compares with."""
        if self._stats is None:
            self._stats = self.container.stats()

    def check_unchanged(self, start: int = 0, end: int | None = None) -> None:
        """Refuse (`ValueError`, one line) when a file of members `start:end` no longer has the stat `snapshot` took:
        it was written while (or since) ganeval read it, so what was decoded may mix its old and new bytes. Called
        once members were decoded, before anything made from them is kept (a chunk, the content memo)."""
        self.snapshot()
        assert self._stats is not None
        name = self.container.changed(self._stats, self.container.names[start:end])
        if name is not None:
            raise ValueError(f"{self.container.describe(name)} changed while ganeval was reading {self.path} (its "
                             "size or times are not those it had when the run began): features or a hash made now "
                             "could mix old and new bytes, so nothing of it is scored or cached; rerun once the files "
                             "no longer change")

    def _memo(self, cache_dir: str | os.PathLike) -> Path:
        from ganeval.hashing import stable_hash

        return Path(cache_dir) / "sources" / f"{stable_hash(self.files_key(cache_dir), 32)}.json"

    def memoised(self, cache_dir: str | os.PathLike | None) -> dict[str, Any] | None:
        """The content identity if already known (computed by this object, or remembered in `cache_dir/sources/`
        by an earlier run), else None: never decodes."""
        if self._content is not None or cache_dir is None:
            return self._content
        memo = self._memo(cache_dir)
        if memo.is_file() and not memo.is_symlink():
            try:
                found = json.loads(memo.read_text())
                if found.get("shape") == list(self.shape):
                    self._content = found
            except (OSError, ValueError):
                pass  # unreadable memo: decode again and rewrite it
        return self._content

    def remember(self, content: dict[str, Any], cache_dir: str | os.PathLike | None) -> dict[str, Any]:
        """Keep the content identity (`content()`'s dict) on this object and, with a cache, in its memo file."""
        from ganeval.common import atomic_write_text

        self._content = content
        if cache_dir is not None:
            memo = self._memo(cache_dir)
            memo.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(memo, json.dumps(content, sort_keys=True))
        return content

    def content(self, batch_size: int = 256, num_workers: int = 0, cache_dir: str | os.PathLike | None = None,
                progress: bool = False) -> dict[str, Any]:
        """{"stream": StreamHasher digest (the feature-cache content key), "sha256", "shape", "dtype" (the
        `array_identity` of the decoded array)}: one decoding pass, remembered in `cache_dir/sources/`."""
        found = self.memoised(cache_dir)
        if found is not None:
            return found
        from ganeval.common import progress_bar

        from ganeval.data.sources.content_hash import ContentHasher

        hasher = ContentHasher()
        with progress_bar(total=len(self), unit="img", unit_scale=True, desc=f"hashing {self.path.name}",
                          disable=not progress) as bar:
            self.snapshot()
            for b in self.batches(batch_size, num_workers):
                hasher.update(b)
                bar.update(len(b))
        self.check_unchanged()
        return self.remember(hasher.content(self.shape), cache_dir)

    def array_identity(self, length: int | None = 16, **kw: Any) -> dict[str, Any]:
        """`ganeval.hashing.array_identity` of the decoded array, without holding it."""
        c = self.content(**kw)
        return {"shape": c["shape"], "dtype": c["dtype"], "sha256": c["sha256"][:length] if length else c["sha256"]}
