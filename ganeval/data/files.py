"""Images from a folder (recursive, deterministic order) and arrays from `.npy`/`.npz` files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".bmp")


def list_images(path: str | os.PathLike) -> list[Path]:
    """Image files under `path` (recursive; png/jpg/jpeg/webp/bmp, any case), sorted by relative path."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"image folder {root} does not exist or is not a directory")
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _read(p: Path, size: int | None):  # -> PIL.Image.Image
    from PIL import Image

    try:
        with Image.open(p) as im:
            im.load()
            mode = "L" if im.mode in ("L", "1", "LA", "I;16", "I") else "RGB"
            im = im.convert(mode)
            if size is not None and im.size != (size, size):
                im = im.resize((size, size), Image.BILINEAR)
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
    arrays = [np.asarray(im if gray else im.convert("RGB"), dtype=np.uint8) for im in images]
    out = np.stack(arrays)
    return out[:, None] if gray else np.ascontiguousarray(out.transpose(0, 3, 1, 2))


def array(path: str | os.PathLike, key: str | None = None) -> np.ndarray:
    """The array in a `.npy` file, or in a `.npz` file under `key` (default: its only array), loaded
    with `allow_pickle=False`; images or features, returned as stored."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"array file {p} does not exist")
    if p.suffix.lower() not in (".npy", ".npz"):
        raise ValueError(f"array file must be .npy or .npz, got {p}")
    try:
        loaded = np.load(p, allow_pickle=False)
    except ValueError as e:
        raise ValueError(f"cannot load {p} without pickle (object arrays are refused): {e}") from e
    if isinstance(loaded, np.ndarray):
        if key is not None:
            raise ValueError(f"key={key!r} given but {p} is a .npy file with one array; drop key")
        return loaded
    with loaded as z:
        keys = list(z.files)
        if key is None:
            if len(keys) != 1:
                raise ValueError(f"{p} holds arrays {keys}; pass key= to choose one")
            key = keys[0]
        if key not in keys:
            raise ValueError(f"{p} has no array {key!r}; it holds {keys}")
        return np.asarray(z[key])
