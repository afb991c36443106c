"""Real image datasets through torchvision (MNIST, FashionMNIST, CIFAR-10/100, CelebA) as uint8 arrays.

`root` defaults to $GANEVAL_DATA, else ./data. With `download=True` torchvision fetches what is
missing; offline and absent, a `DatasetNotFoundError` names the folder to fill and the files it needs.
torchvision checks the MD5 of CIFAR's and CelebA's files even when nothing is downloaded; `checksums=False`
reads a copy whose bytes differ (re-made or converted files, the tests' small real-format sets) through the same
torchvision reader, checking only that the files are there.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Mapping

import numpy as np


class DatasetNotFoundError(RuntimeError):
    """A dataset is not on disk and could not be downloaded."""


def data_root(root: str | os.PathLike | None = None) -> Path:
    """`root`, else $GANEVAL_DATA, else ./data."""
    return Path(root if root not in (None, "") else os.environ.get("GANEVAL_DATA") or "data").expanduser()


def _md5_files(cls: Any) -> list[str]:
    """The files of a torchvision dataset class whose MD5 it checks before reading (CIFAR, CelebA)."""
    if hasattr(cls, "file_list"):  # CelebA: (id, md5, name); the image archive may be gone once extracted
        return [name for _, _, name in cls.file_list if not name.endswith((".zip", ".7z"))]
    return [name for name, _ in cls.train_list + cls.test_list] + [cls.meta["filename"]]


def unverified(cls: Any) -> Any:
    """A subclass of torchvision's CIFAR10/CIFAR100/CelebA that reads exactly as it does but checks only that its
    files exist (MD5 None: torchvision's `check_integrity` then tests existence), for `checksums=False`."""
    if hasattr(cls, "file_list"):
        attrs: dict[str, Any] = {"file_list": [(i, None, name) for i, _, name in cls.file_list]}
    else:
        attrs = {"train_list": [[name, None] for name, _ in cls.train_list],
                 "test_list": [[name, None] for name, _ in cls.test_list], "meta": {**cls.meta, "md5": None}}
    return type(cls.__name__, (cls,), attrs)


def _check_checksums_args(checksums: bool, download: bool) -> None:
    if not isinstance(checksums, bool):
        raise ValueError(f"checksums must be true or false, got {checksums!r}")
    if not checksums and download:
        raise ValueError("checksums=false reads files already on disk without checking their MD5; a download is "
                         "always checked: pass download=false with it (data.download=false)")


def _present(cls: Any, folder: Path) -> bool:
    """Whether every file a checksummed torchvision dataset reads is in `folder` (CelebA: and its image folder)."""
    images = not hasattr(cls, "file_list") or (folder / "img_align_celeba").is_dir()
    return images and all((folder / f).is_file() for f in _md5_files(cls))


def _remove_if_empty(made: list[Path]) -> None:
    """Remove the folders of `made` (deepest first) that are still empty: a refused dataset leaves nothing behind."""
    for d in made:
        try:
            d.rmdir()
        except OSError:  # not empty (a partial download stays for the user to see) or already gone
            pass


def _open(cls: Any, root: Path, folder: Path, needs: str, download: bool, checksums: bool = True, **kw: Any) -> Any:
    name = cls.__name__
    made = [d for d in (folder, *folder.parents) if not d.exists() and (d == root or root in d.parents)]
    try:
        return (cls if checksums else unverified(cls))(str(root), download=download, **kw)
    except Exception as e:  # torchvision: RuntimeError / URLError / OSError when absent and offline
        _remove_if_empty(made)
        checked = hasattr(cls, "file_list") or hasattr(cls, "train_list")
        if checked and checksums and not download and _present(cls, folder):
            raise DatasetNotFoundError(
                f"{name} files are present under {folder} but fail torchvision's MD5 checksums ({type(e).__name__}: "
                f"{str(e).strip()[:200]}). If this copy is meant to differ from the published files (re-made or "
                "converted), read it with checksums=false and download=false (config keys data.checksums, "
                "data.download); else replace the damaged files."
            ) from e
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


def _cifar(cls_name: str, root: str | os.PathLike | None, train: bool, download: bool, checksums: bool) -> np.ndarray:
    import torchvision.datasets as tvd

    _check_checksums_args(checksums, download)
    cls = getattr(tvd, cls_name)
    r = data_root(root)
    needs = f"the extracted python archive {cls.filename} (folder {cls.base_folder}/, checksums verified; {cls.url})"
    ds = _open(cls, r, r / cls.base_folder, needs, download, checksums, train=train)
    return np.ascontiguousarray(np.asarray(ds.data, dtype=np.uint8).transpose(0, 3, 1, 2))


def cifar10(root: str | os.PathLike | None = None, train: bool = True, download: bool = True,
            checksums: bool = True) -> np.ndarray:
    """CIFAR-10, uint8 N×3×32×32 (50 000 train / 10 000 test); `checksums=False`: see the module doc."""
    return _cifar("CIFAR10", root, train, download, checksums)


def cifar100(root: str | os.PathLike | None = None, train: bool = True, download: bool = True,
             checksums: bool = True) -> np.ndarray:
    """CIFAR-100, uint8 N×3×32×32 (50 000 train / 10 000 test); `checksums=False`: see the module doc."""
    return _cifar("CIFAR100", root, train, download, checksums)


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
            im = im.resize((size, size), Image.Resampling.BILINEAR)
        return np.asarray(im, dtype=np.uint8).transpose(2, 0, 1)


def celeba(
    root: str | os.PathLike | None = None,
    split: str = "train",
    download: bool = True,
    crop: int = 108,
    size: int = 64,
    limit: int | None = None,
    num_workers: int = 4,
    checksums: bool = True,
) -> np.ndarray:
    """CelebA aligned faces, centre-cropped to `crop` and resized to `size` (bilinear, PIL), uint8
    N×3×size×size, as DCGAN-style CelebA models; `limit` keeps the first images of the split; `checksums=False`:
    see the module doc."""
    import torchvision.datasets as tvd

    if split not in ("train", "valid", "test", "all"):
        raise ValueError(f"split must be 'train', 'valid', 'test' or 'all', got {split!r}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive int or None, got {limit!r}")
    _check_checksums_args(checksums, download)
    r = data_root(root)
    folder = r / "celeba"
    needs = ("img_align_celeba/ (the extracted img_align_celeba.zip) and list_eval_partition.txt, "
             "list_attr_celeba.txt, identity_CelebA.txt, list_bbox_celeba.txt, "
             "list_landmarks_align_celeba.txt (checksums verified; downloading needs gdown)")
    ds = _open(tvd.CelebA, r, folder, needs, download, checksums, split=split, target_type=[])
    names = list(ds.filename)[:limit]
    paths = [str(folder / "img_align_celeba" / f) for f in names]
    with ThreadPoolExecutor(max_workers=max(1, num_workers)) as pool:
        out = list(pool.map(lambda p: _crop_resize(p, crop, size), paths))
    return np.stack(out)


# Row counts of the shipped datasets from their published sizes, so a dry run can compare them with sample_size
# without loading anything (tests/test_configs.py checks the small ones against a real load).
DIGITS_PER_CLASS = (178, 182, 177, 183, 181, 182, 181, 179, 174, 180)  # scikit-learn's digits: 1 797 in all
TRAIN_TEST = {"mnist": (60000, 10000), "fashion_mnist": (60000, 10000), "cifar10": (50000, 10000),
              "cifar100": (50000, 10000)}
CELEBA = {"train": 162770, "valid": 19867, "test": 19962, "all": 202599}


def known_rows(target: str, options: Mapping[str, Any]) -> int | None:
    """Rows a `ganeval.data.*` node yields, from the dataset's published size; None when only its content says
    (folders, files) or the options are not plain."""
    name = target.rpartition(".")[2]
    try:
        if name == "digits":
            return sum(DIGITS_PER_CLASS)
        if name == "digits_classes":
            return sum(DIGITS_PER_CLASS[int(c)] for c in set(options.get("classes", (0, 1, 2, 3, 4))))
        if name in TRAIN_TEST:
            return TRAIN_TEST[name][0 if options.get("train", True) else 1]
        if name == "celeba":
            rows = CELEBA[str(options.get("split", "train"))]
            limit = options.get("limit")
            return min(rows, int(limit)) if limit is not None else rows
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    n = options.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) else None
