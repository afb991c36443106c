"""Tiny datasets written offline in the exact on-disk formats torchvision 0.29 reads (for the paper_table tests).

- MNIST / FashionMNIST: `<root>/<Class>/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte`, uncompressed big-endian
  IDX files (magic 0x00000803 / 0x00000801, then the sizes; torchvision checks no MD5 on them).
- CIFAR-10: `<root>/cifar-10-batches-py/data_batch_1..5, test_batch, batches.meta`, pickled dicts (protocol 2) with
  `data` (N×3072 uint8, R plane then G then B, row-major), `labels`, `batch_label`, `filenames`; meta `label_names`.
- CelebA: `<root>/celeba/img_align_celeba/NNNNNN.jpg` (178×218 JPEGs, like the aligned originals) and the five
  space-separated text files torchvision parses (`list_eval_partition.txt`, `identity_CelebA.txt`, and
  `list_bbox_celeba.txt`, `list_landmarks_align_celeba.txt`, `list_attr_celeba.txt` with their count and header lines).

Images are real pictures shipped with scikit-learn (digits upscaled, crops of its two photographs), so a GAN has
something to learn; CIFAR and CelebA files differ from the published ones, so they are read with `checksums=False`.
Run `python tests/realformat.py DIR [N [SEED]]` to write all four under DIR (N training images each, default 40).
"""

from __future__ import annotations

import pickle
import struct
import sys
from pathlib import Path

import numpy as np

MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
CIFAR10_CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
CELEBA_ATTRS = ("5_o_Clock_Shadow Arched_Eyebrows Attractive Bags_Under_Eyes Bald Bangs Big_Lips Big_Nose Black_Hair "
                "Blond_Hair Blurry Brown_Hair Bushy_Eyebrows Chubby Double_Chin Eyeglasses Goatee Gray_Hair "
                "Heavy_Makeup High_Cheekbones Male Mouth_Slightly_Open Mustache Narrow_Eyes No_Beard Oval_Face "
                "Pale_Skin Pointy_Nose Receding_Hairline Rosy_Cheeks Sideburns Smiling Straight_Hair Wavy_Hair "
                "Wearing_Earrings Wearing_Hat Wearing_Lipstick Wearing_Necklace Wearing_Necktie Young").split()


def write_idx(path: Path, array: np.ndarray) -> Path:
    """An uncompressed IDX file of a uint8 array (1-3 dimensions): 0, 0, type 0x08, ndim, big-endian sizes, data."""
    a = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, 0x08, a.ndim]) + b"".join(struct.pack(">I", n) for n in a.shape)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header + a.tobytes())
    return path


def _digits(n: int, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` of scikit-learn's digits (drawn with `seed`), upscaled to size×size: uint8 N×size×size and labels."""
    from sklearn.datasets import load_digits

    from ganeval.data import digits

    idx = np.random.default_rng(seed).choice(1797, n, replace=False)
    return digits(size)[idx, 0], load_digits().target[idx].astype(np.uint8)


def _photo_crops(n: int, height: int, width: int, seed: int) -> np.ndarray:
    """`n` seeded height×width crops of scikit-learn's two photographs: uint8 N×H×W×3."""
    from sklearn.datasets import load_sample_images

    photos = load_sample_images().images
    rng = np.random.default_rng(seed)
    out = np.empty((n, height, width, 3), np.uint8)
    for i in range(n):
        p = photos[rng.integers(len(photos))]
        y, x = rng.integers(0, p.shape[0] - height + 1), rng.integers(0, p.shape[1] - width + 1)
        out[i] = p[y : y + height, x : x + width]
    return out


def write_mnist(root: Path, n_train: int, n_test: int, fashion: bool = False, seed: int = 0) -> dict[str, np.ndarray]:
    """MNIST (digits) or FashionMNIST (grey photo crops) raw IDX files under root; returns the arrays written."""
    raw = Path(root) / ("FashionMNIST" if fashion else "MNIST") / "raw"
    if fashion:
        images = _photo_crops(n_train + n_test, 28, 28, seed).mean(axis=3).round().astype(np.uint8)
        labels = np.random.default_rng(seed).integers(0, 10, n_train + n_test).astype(np.uint8)
    else:
        images, labels = _digits(n_train + n_test, 28, seed)
    out = {"train_images": images[:n_train], "train_labels": labels[:n_train],
           "test_images": images[n_train:], "test_labels": labels[n_train:]}
    for name, key in zip(MNIST_FILES, ("train_images", "train_labels", "test_images", "test_labels")):
        write_idx(raw / name, out[key])
    return out


def write_cifar10(root: Path, per_batch: int, n_test: int, seed: int = 0) -> np.ndarray:
    """CIFAR-10's python pickles under root/cifar-10-batches-py; returns the training images as N×32×32×3."""
    folder = Path(root) / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    images = _photo_crops(5 * per_batch + n_test, 32, 32, seed)
    labels = np.random.default_rng(seed + 1).integers(0, 10, len(images))

    def dump(name: str, part: slice, label: str) -> None:
        x = images[part]
        entry = {"batch_label": label, "labels": [int(v) for v in labels[part]],
                 "data": np.ascontiguousarray(x.transpose(0, 3, 1, 2)).reshape(len(x), 3072),
                 "filenames": [f"synthetic_{part.start + i}.png" for i in range(len(x))]}
        (folder / name).write_bytes(pickle.dumps(entry, protocol=2))

    for b in range(5):
        dump(f"data_batch_{b + 1}", slice(b * per_batch, (b + 1) * per_batch), f"training batch {b + 1} of 5")
    dump("test_batch", slice(5 * per_batch, len(images)), "testing batch 1 of 1")
    meta = {"num_cases_per_batch": per_batch, "label_names": CIFAR10_CLASSES, "num_vis": 3072}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=2))
    return images[: 5 * per_batch]


def write_celeba(root: Path, partition: list[int], seed: int = 0) -> np.ndarray:
    """CelebA's aligned-image folder and text files under root/celeba, one image per `partition` entry (0 train,
    1 valid, 2 test); returns the images written (N×218×178×3, before JPEG)."""
    from PIL import Image

    folder = Path(root) / "celeba"
    (folder / "img_align_celeba").mkdir(parents=True, exist_ok=True)
    images = _photo_crops(len(partition), 218, 178, seed)
    names = [f"{i + 1:06d}.jpg" for i in range(len(partition))]
    for name, im in zip(names, images):
        Image.fromarray(im).save(folder / "img_align_celeba" / name, quality=95)
    rng = np.random.default_rng(seed)
    n = len(names)

    def table(fname: str, rows: list[str], header: str | None = None) -> None:
        head = [str(n), header] if header is not None else []
        (folder / fname).write_text("\n".join(head + rows) + "\n")

    table("list_eval_partition.txt", [f"{f} {p}" for f, p in zip(names, partition)])
    table("identity_CelebA.txt", [f"{f} {int(rng.integers(1, 10178))}" for f in names])
    table("list_bbox_celeba.txt", [f"{f:<10s} " + " ".join(f"{v:>3d}" for v in rng.integers(1, 300, 4)) for f in names],
          "image_id x_1 y_1 width height")
    table("list_landmarks_align_celeba.txt",
          [f"{f:<10s} " + " ".join(f"{v:>4d}" for v in rng.integers(60, 160, 10)) for f in names],
          "lefteye_x lefteye_y righteye_x righteye_y nose_x nose_y leftmouth_x leftmouth_y rightmouth_x rightmouth_y")
    table("list_attr_celeba.txt", [f + " " + " ".join(f"{v:>2d}" for v in rng.choice([-1, 1], 40)) for f in names],
          " ".join(CELEBA_ATTRS))
    return images


def write_all(root: Path, n: int = 40, seed: int = 0) -> Path:
    """Every dataset of the paper's table under `root`, `n` training images each (n/5 per CIFAR batch) and a few
    test ones; returns root."""
    root, test = Path(root), max(2, n // 10)
    write_mnist(root, n, test, seed=seed)
    write_mnist(root, n, test, fashion=True, seed=seed + 1)
    write_cifar10(root, n // 5, test, seed=seed + 2)
    write_celeba(root, [0] * n + [1] * test + [2] * test, seed=seed + 3)
    return root


if __name__ == "__main__":
    print(write_all(Path(sys.argv[1]), *(int(a) for a in sys.argv[2:])))
