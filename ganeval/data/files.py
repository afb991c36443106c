"""Images from a folder (recursive, deterministic order) and arrays from `.npy`/`.npz` files."""

from __future__ import annotations

import logging
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
SKIPPED_IMAGES = (".gif", ".tif", ".tiff", ".ppm", ".pgm", ".tga", ".ico", ".avif", ".heic")  # images not read: noted


def list_images(path: str | os.PathLike) -> list[Path]:
    """Image files under `path` (recursive; png/jpg/jpeg/webp/bmp, any case), sorted by relative path."""
    root = Path(path).expanduser()
    if root.is_file():
        raise ValueError(f"image folder {root} is a file, not a folder of images: for a .npy/.npz array use "
                         "data=array (ganeval.data.array)")
    if not root.is_dir():
        raise FileNotFoundError(f"image folder {root} does not exist or is not a directory")
    every = [p for p in root.rglob("*") if p.is_file()]
    files = [p for p in every if p.suffix.lower() in IMAGE_EXTENSIONS]
    skipped = [p for p in every if p.suffix.lower() in SKIPPED_IMAGES]
    if skipped:  # images the user may count on: say that they are not read
        log.warning("%d image file(s) under %s are not read (first: %s): ganeval reads %s only; convert them to PNG "
                    "to score them", len(skipped), root, min(skipped), ", ".join(IMAGE_EXTENSIONS))
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


class _Noted:
    """The conversions said so far (16-bit scaled, alpha dropped), in an anonymous shared page with a lock, both made
    at import, before any DataLoader worker forks: a folder decoded by several workers says each once, not once per
    worker. `clear()` forgets them (tests)."""

    KINDS = ("16bit", "alpha")

    def __init__(self) -> None:
        import mmap
        import multiprocessing
        import threading

        self._flags = mmap.mmap(-1, len(self.KINDS))  # MAP_SHARED | MAP_ANONYMOUS: seen by forked children
        try:
            self._lock: Any = multiprocessing.get_context("fork").Lock() if os.name == "posix" else threading.Lock()
        except (OSError, ImportError, ValueError):  # no POSIX semaphores here: a note may then come once per worker
            self._lock = threading.Lock()

    def claim(self, kind: str) -> bool:
        """True the first time `kind` is claimed in this process or any process forked from it."""
        i = self.KINDS.index(kind)
        with self._lock:
            if self._flags[i]:
                return False
            self._flags[i] = 1
            return True

    def clear(self) -> None:
        with self._lock:
            self._flags[:] = bytes(len(self.KINDS))


_NOTED = _Noted()


def _note_once(kind: str, message: str, *args: object) -> None:
    """Log `message` the first time a conversion of `kind` happens, so a folder of them says it once."""
    if _NOTED.claim(kind):
        log.warning(message, *args)


def _grey_16bit(im):  # -> PIL.Image.Image
    """A 16-bit (or 32-bit integer) grey image scaled to 8 bits by its bit depth (v / 257 for 16-bit, rounded), not
    clipped at 255 as PIL's convert("L") would."""
    from PIL import Image

    a = np.asarray(im)
    if a.dtype.kind == "i" and a.size and int(a.min()) < 0:
        raise ValueError(f"mode {im.mode} holds negative pixel values")
    top = 65535 if im.mode.startswith("I;16") or a.size == 0 or int(a.max()) <= 65535 else 2**32 - 1
    return Image.fromarray(np.rint(a.astype(np.float64) * (255.0 / top)).astype(np.uint8), mode="L")


def eight_bit(im, name: object):  # -> PIL.Image.Image
    """`im` with 16-bit grey scaled to 8 bits (`_grey_16bit`); that, and an alpha channel that will be dropped,
    said once per process (naming the first file, `name`)."""
    if im.mode.startswith("I;16") or im.mode == "I":
        _note_once("16bit", "%s is a %s (16-bit) image: scaled to 8 bits (value / 257), as every such image is",
                   name, im.mode)
        im = _grey_16bit(im)
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        _note_once("alpha", "%s has an alpha channel (%s): it is dropped (colours kept as stored, not composited), "
                   "for every such image", name, im.mode)
    return im


def _read(p: Path, size: int | None):  # -> PIL.Image.Image
    from PIL import Image

    try:
        with Image.open(p) as im:
            im.load()
            im = eight_bit(im, p)
            mode = "L" if im.mode in ("L", "1", "LA") else "RGB"
            im = im.convert(mode)
            if size is not None and im.size != (size, size):
                im = im.resize((size, size), Image.Resampling.BILINEAR)
            return im
    except Exception as e:  # PIL.UnidentifiedImageError, truncated file, OSError
        raise ValueError(f"cannot read image file {p}: {type(e).__name__}: {e}") from e


def folder(path: str | os.PathLike, size: int | None = None) -> np.ndarray:
    """All images under `path` as uint8 N×C×H×W (C=1 if every image is grayscale, else 3), in sorted
    relative-path order; `size` resizes each to size×size (bilinear), else all must share one size."""
    if size is not None and (not isinstance(size, int) or size < 1):
        raise ValueError(f"size must be a positive int or None, got {size!r}")
    files = list_images(path)
    if not files:
        raise ValueError(f"no image files ({', '.join(IMAGE_EXTENSIONS)}) under {path}")
    images = [_read(p, size) for p in files]
    (w0, h0) = images[0].size
    for f, im in zip(files, images):
        if im.size != (w0, h0):
            raise ValueError(
                f"images under {path} differ in size ({files[0]} is {w0}×{h0}, {f} is "
                f"{im.size[0]}×{im.size[1]}); pass size= to resize them all"
            )
    gray = all(im.mode == "L" for im in images)
    colour = [f for f, im in zip(files, images) if im.mode != "L"]
    if colour and len(colour) < len(files):  # a few colour files turn the whole folder into RGB: say which
        log.warning("%d of the %d images under %s are in colour (first: %s), so all are read as RGB (3 channels)",
                    len(colour), len(files), path, colour[0])
    arrays = [np.asarray(im if gray else im.convert("RGB"), dtype=np.uint8) for im in images]
    out = np.stack(arrays)
    return out[:, None] if gray else np.ascontiguousarray(out.transpose(0, 3, 1, 2))


def _check_npy(p: Path) -> None:
    """Refuse a `.npy` file that is not one, holds pickled objects, or is shorter than its header says."""
    from numpy.lib import format as npformat

    size = p.stat().st_size
    with open(p, "rb") as f:
        try:
            version = npformat.read_magic(f)
            read = npformat.read_array_header_1_0 if version == (1, 0) else npformat.read_array_header_2_0
            shape, _, dtype = read(f)
        except ValueError as e:
            raise ValueError(f"{p} is not a readable .npy file ({e}); was it written by numpy.save, "
                             "and completely?") from None
        offset = f.tell()
    if dtype.hasobject:
        raise ValueError(f"{p} holds Python objects (dtype {dtype}), which are not loaded (no pickle): "
                         "save a numeric array (numpy.save of a float or uint8 array)")
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if size - offset < need:
        raise ValueError(f"{p} is truncated: its header says {shape} {dtype} ({need} bytes of data) but it holds "
                         f"{size - offset}; write or copy the file again")


def array(path: str | os.PathLike, key: str | None = None, mmap: bool = False, layout: str | None = None) -> np.ndarray:
    """The array in a `.npy` file, or in a `.npz` file under `key` (default: its only array), loaded
    with `allow_pickle=False` (`mmap`: a `.npy` is memory-mapped, read-only); images or features, as stored.

    A file that is not an array file, is truncated or holds pickled objects is refused, naming the file. A 4-D
    array that fits both N×C×H×W and N×H×W×C (axes 1 and 3 both of size 1 or 3) is refused as ambiguous unless
    `layout` ("NCHW" or "NHWC") says which it is; an NHWC array is returned as an N×C×H×W view.
    """
    out = load_array(path, key, mmap)
    return _with_layout(out, Path(path).expanduser(), layout)


def _with_layout(a: np.ndarray, p: Path, layout: str | None) -> np.ndarray:
    """`a` checked against `layout` (see `array`): an ambiguous 4-D shape needs it, NHWC becomes an NCHW view."""
    from ganeval.data.images import apply_layout

    if layout is not None and layout not in ("NCHW", "NHWC"):
        raise ValueError(f"layout={layout!r} for {p}: use NCHW or NHWC")
    return apply_layout(a, layout, str(p), "+data.layout=NCHW or +data.layout=NHWC (data=array; in Python "
                        "ganeval.data.array(path, layout=...))")


def load_array(path: str | os.PathLike, key: str | None = None, mmap: bool = False) -> np.ndarray:
    """`array` without the layout rule (for callers that apply their own: `ganeval-score --layout`)."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"array file {p} is a folder, not a .npy/.npz file: for a folder of images use "
                         "data=folder (ganeval.data.folder)")
    if not p.is_file():
        raise FileNotFoundError(f"array file {p} does not exist")
    if p.suffix.lower() not in (".npy", ".npz"):
        raise ValueError(f"array file must be .npy or .npz, got {p}")
    if p.suffix.lower() == ".npy":
        if key is not None:
            raise ValueError(f"key={key!r} given but {p} is a .npy file with one array; drop key")
        _check_npy(p)
        return np.load(p, allow_pickle=False, mmap_mode="r" if mmap else None)
    if not zipfile.is_zipfile(p):
        raise ValueError(f"{p} is not a readable .npz file (not a zip archive); was it written by numpy.savez, "
                         "and completely?")
    try:
        with np.load(p, allow_pickle=False) as z:
            keys = list(z.files)
            if key is None:
                if len(keys) != 1:
                    raise ValueError(f"{p} holds arrays {keys}; pass key= to choose one")
                key = keys[0]
            if key not in keys:
                raise ValueError(f"{p} has no array {key!r}; it holds {keys}")
            return np.asarray(z[key])
    except (OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{p} is not a readable .npz file ({type(e).__name__}: {e}); write or copy it again") from None
    except ValueError as e:
        if "pickle" in str(e) or "Object arrays" in str(e):
            raise ValueError(f"{p} holds Python objects under {key!r}, which are not loaded (no pickle): "
                             "save numeric arrays") from None
        raise
