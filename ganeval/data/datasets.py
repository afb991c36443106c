"""Real image datasets through torchvision (MNIST, FashionMNIST, CIFAR-10/100, CelebA) as uint8 arrays.

`root` defaults to $GANEVAL_DATA, else ./data. With `download=True` torchvision fetches what is
missing; offline and absent, a `DatasetNotFoundError` names the folder to fill and the files it needs.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np


class DatasetNotFoundError(RuntimeError):
    """A dataset is not on disk and could not be downloaded."""


def data_root(root: str | os.PathLike | None = None) -> Path:
    """`root`, else $GANEVAL_DATA, else ./data."""
    return Path(root if root not in (None, "") else os.environ.get("GANEVAL_DATA") or "data").expanduser()


def _open(cls: Any, root: Path, folder: Path, needs: str, download: bool, **kw: Any) -> Any:
    name = cls.__name__
    try:
        return cls(str(root), download=download, **kw)
    except Exception as e:  # torchvision: RuntimeError / URLError / OSError when absent and offline
        how = "the download failed" if download else "download=False"
        raise DatasetNotFoundError(
            f"{name} not found under {folder} ({how}: {type(e).__name__}: {str(e).strip()[:300]}). "
            f"Fill {folder} with {needs}, or run once with download=True on a machine with internet "
            f"access (root={root}; set GANEVAL_DATA or the config key data.root to move it)."
        ) from e


def _mnist_like(cls_name: str, root: str | os.PathLike | None, train: bool, download: bool) -> np.ndarray:
    import torchvision.datasets as tvd

    cls = getattr(tvd, cls_name)
    r = data_root(root)
    needs = ("train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
             f"t10k-labels-idx1-ubyte (uncompressed IDX files, from {cls.mirrors[0]})")
    ds = _open(cls, r, r / cls_name / "raw", needs, download, train=train)
    return ds.data.numpy().astype(np.uint8)[:, None]


def mnist(root: str | os.PathLike | None = None, train: bool = True, download: bool = True) -> np.ndarray:
    """MNIST digits, uint8 N×1×28×28 (60 000 train / 10 000 test)."""
    return _mnist_like("MNIST", root, train, download)


def fashion_mnist(root: str | os.PathLike | None = None, train: bool = True, download: bool = True) -> np.ndarray:
    """Fashion-MNIST, uint8 N×1×28×28 (60 000 train / 10 000 test)."""
    return _mnist_like("FashionMNIST", root, train, download)


def _cifar(cls_name: str, root: str | os.PathLike | None, train: bool, download: bool) -> np.ndarray:
    import torchvision.datasets as tvd

    cls = getattr(tvd, cls_name)
    r = data_root(root)
    needs = f"the extracted python archive {cls.filename} (folder {cls.base_folder}/, checksums verified; {cls.url})"
    ds = _open(cls, r, r / cls.base_folder, needs, download, train=train)
    return np.ascontiguousarray(np.asarray(ds.data, dtype=np.uint8).transpose(0, 3, 1, 2))


def cifar10(root: str | os.PathLike | None = None, train: bool = True, download: bool = True) -> np.ndarray:
    """CIFAR-10, uint8 N×3×32×32 (50 000 train / 10 000 test)."""
    return _cifar("CIFAR10", root, train, download)


def cifar100(root: str | os.PathLike | None = None, train: bool = True, download: bool = True) -> np.ndarray:
    """CIFAR-100, uint8 N×3×32×32 (50 000 train / 10 000 test)."""
    return _cifar("CIFAR100", root, train, download)


def _crop_resize(path: str, crop: int, size: int) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        im = im.convert("RGB")
        w, h = im.size
        if min(w, h) < crop:
            raise ValueError(f"{path} is {w}×{h}, smaller than the crop {crop}")
        top, left = int(round((h - crop) / 2.0)), int(round((w - crop) / 2.0))
        im = im.crop((left, top, left + crop, top + crop))
        if size != crop:
            im = im.resize((size, size), Image.BILINEAR)
        return np.asarray(im, dtype=np.uint8).transpose(2, 0, 1)


def celeba(
    root: str | os.PathLike | None = None,
    split: str = "train",
    download: bool = True,
    crop: int = 108,
    size: int = 64,
    limit: int | None = None,
    num_workers: int = 4,
) -> np.ndarray:
    """CelebA aligned faces, centre-cropped to `crop` and resized to `size` (bilinear, PIL), uint8
    N×3×size×size, as DCGAN-style CelebA models; `limit` keeps the first images of the split."""
    import torchvision.datasets as tvd

    if split not in ("train", "valid", "test", "all"):
        raise ValueError(f"split must be 'train', 'valid', 'test' or 'all', got {split!r}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive int or None, got {limit!r}")
    r = data_root(root)
    folder = r / "celeba"
    needs = ("img_align_celeba/ (the extracted img_align_celeba.zip) and list_eval_partition.txt, "
             "list_attr_celeba.txt, identity_CelebA.txt, list_bbox_celeba.txt, "
             "list_landmarks_align_celeba.txt (checksums verified; downloading needs gdown)")
    ds = _open(tvd.CelebA, r, folder, needs, download, split=split, target_type=[])
    names = list(ds.filename)[:limit]
    paths = [str(folder / "img_align_celeba" / f) for f in names]
    with ThreadPoolExecutor(max_workers=max(1, num_workers)) as pool:
        out = list(pool.map(lambda p: _crop_resize(p, crop, size), paths))
    return np.stack(out)
