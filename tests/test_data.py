"""Data sources: shapes, dtypes, seeding, offline errors, folders, arrays, blur, configs."""

from __future__ import annotations

import struct
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest

import ganeval.data as gd
from ganeval.app.main import config_dir
from ganeval.data import DatasetNotFoundError

CONFIGS = config_dir()


# --------------------------------------------------------------------------- torchvision sets
def _write_idx(folder: Path, prefix: str, images: np.ndarray) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    n, h, w = images.shape
    (folder / f"{prefix}-images-idx3-ubyte").write_bytes(struct.pack(">iiii", 2051, n, h, w) + images.tobytes())
    labels = (np.arange(n) % 10).astype(np.uint8)
    (folder / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">ii", 2049, n) + labels.tobytes())


@pytest.mark.parametrize("source, name", [(gd.mnist, "MNIST"), (gd.fashion_mnist, "FashionMNIST")])
def test_mnist_like_loads_from_a_folder(tmp_path: Path, source, name: str) -> None:
    rng = np.random.default_rng(1)
    train = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    test = rng.integers(0, 256, (3, 28, 28), dtype=np.uint8)
    _write_idx(tmp_path / name / "raw", "train", train)
    _write_idx(tmp_path / name / "raw", "t10k", test)
    x = source(tmp_path, train=True, download=False)
    assert x.dtype == np.uint8 and x.shape == (5, 1, 28, 28)
    np.testing.assert_array_equal(x[:, 0], train)
    np.testing.assert_array_equal(source(tmp_path, train=False, download=False)[:, 0], test)


def test_data_root_comes_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_idx(tmp_path / "MNIST" / "raw", "train", np.zeros((2, 28, 28), np.uint8))
    _write_idx(tmp_path / "MNIST" / "raw", "t10k", np.zeros((1, 28, 28), np.uint8))
    monkeypatch.setenv("GANEVAL_DATA", str(tmp_path))
    assert gd.data_root() == tmp_path
    assert gd.mnist(download=False).shape == (2, 1, 28, 28)
    monkeypatch.delenv("GANEVAL_DATA")
    assert gd.data_root() == Path("data")


def test_offline_absent_dataset_names_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DatasetNotFoundError) as e:
        gd.mnist(tmp_path, download=False)
    assert str(tmp_path / "MNIST" / "raw") in str(e.value) and "train-images-idx3-ubyte" in str(e.value)

    import torchvision.datasets.mnist as tvm

    calls = []

    def offline(url: str, *a, **k) -> None:
        calls.append(url)
        raise URLError("no network")

    monkeypatch.setattr(tvm, "download_and_extract_archive", offline)
    with pytest.raises(DatasetNotFoundError, match="download failed") as e:
        gd.fashion_mnist(tmp_path, download=True)
    assert calls and str(tmp_path / "FashionMNIST" / "raw") in str(e.value)


@pytest.mark.parametrize("source, folder", [(gd.cifar10, "cifar-10-batches-py"), (gd.cifar100, "cifar-100-python")])
def test_cifar_error_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source, folder: str) -> None:
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "data_batch_1").write_bytes(b"not the real file")  # fails the checksum
    with pytest.raises(DatasetNotFoundError) as e:
        source(tmp_path, download=False)
    assert str(tmp_path / folder) in str(e.value)

    import torchvision.datasets.cifar as tvc

    def offline(*a, **k) -> None:
        raise URLError("no network")

    monkeypatch.setattr(tvc, "download_and_extract_archive", offline)
    with pytest.raises(DatasetNotFoundError, match="download failed"):
        source(tmp_path, download=True)


def test_celeba_error_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DatasetNotFoundError) as e:
        gd.celeba(tmp_path, download=False)
    msg = str(e.value)
    assert str(tmp_path / "celeba") in msg and "img_align_celeba" in msg and "list_eval_partition.txt" in msg

    import torchvision.datasets.celeba as tvc

    def offline(*a, **k) -> None:
        raise URLError("no network")

    monkeypatch.setattr(tvc, "download_file_from_google_drive", offline)
    with pytest.raises(DatasetNotFoundError, match="download failed"):
        gd.celeba(tmp_path, download=True)
    with pytest.raises(ValueError, match="split"):
        gd.celeba(tmp_path, split="dev")


def test_celeba_crop_and_resize(tmp_path: Path) -> None:
    from PIL import Image

    from ganeval.data.datasets import _crop_resize

    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (218, 178, 3), dtype=np.uint8)
    Image.fromarray(img).save(tmp_path / "a.png")
    full = _crop_resize(str(tmp_path / "a.png"), 108, 108)
    np.testing.assert_array_equal(full, img[55:163, 35:143].transpose(2, 0, 1))  # centred crop
    small = _crop_resize(str(tmp_path / "a.png"), 108, 64)
    assert small.shape == (3, 64, 64) and small.dtype == np.uint8


# --------------------------------------------------------------------------- embedded and synthetic
def test_digits_shapes_and_values() -> None:
    from sklearn.datasets import load_digits

    x8 = gd.digits(size=8)
    assert x8.shape == (1797, 1, 8, 8) and x8.dtype == np.uint8
    np.testing.assert_array_equal(x8[:, 0], np.rint(load_digits().images * 255 / 16).astype(np.uint8))
    x = gd.digits()
    assert x.shape == (1797, 1, 32, 32) and x.dtype == np.uint8 and x.max() == 255
    # upsampling keeps each image's mean brightness
    np.testing.assert_allclose(x.mean(axis=(1, 2, 3)), x8.mean(axis=(1, 2, 3)), atol=2.0)
    with pytest.raises(ValueError, match="size"):
        gd.digits(size=0)


def test_patches_are_seeded_crops_of_the_photos() -> None:
    from sklearn.datasets import load_sample_images

    a, b, c = gd.patches(n=6, size=8, seed=3), gd.patches(n=6, size=8, seed=3), gd.patches(n=6, size=8, seed=4)
    assert a.shape == (6, 3, 8, 8) and a.dtype == np.uint8
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    photos = load_sample_images().images
    for p in a:
        win = p.transpose(1, 2, 0)
        found = False
        for ph in photos:
            ys, xs = np.nonzero(np.all(ph[: -7, : -7] == win[0, 0], axis=-1))
            found = found or any(np.array_equal(ph[y : y + 8, x : x + 8], win) for y, x in zip(ys, xs))
        assert found
    with pytest.raises(ValueError, match="size"):
        gd.patches(n=2, size=1000)


def test_torus_on_surface_uniform_by_area_and_seeded() -> None:
    p = gd.torus(20000, R=2.0, r=1.0, seed=0)
    assert p.shape == (20000, 3) and p.dtype == np.float32
    rho = np.hypot(p[:, 0], p[:, 1])
    np.testing.assert_allclose((rho - 2.0) ** 2 + p[:, 2] ** 2, 1.0, atol=1e-4)
    # area-uniform: the tube angle has density ∝ R + r cos θ, so E[cos θ] = r / (2R) = 0.25
    assert abs(np.mean(rho - 2.0) - 0.25) < 0.02
    np.testing.assert_array_equal(gd.torus(50, seed=1), gd.torus(50, seed=1))
    assert not np.array_equal(gd.torus(50, seed=1), gd.torus(50, seed=2))
    with pytest.raises(ValueError, match="R > r"):
        gd.torus(10, R=1.0, r=2.0)


def test_sphere_and_swiss_roll() -> None:
    s = gd.sphere(5000, dim=4, seed=0)
    assert s.shape == (5000, 4) and s.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(s, axis=1), 1.0, atol=1e-5)
    assert np.abs(s.mean(axis=0)).max() < 0.05
    np.testing.assert_array_equal(gd.sphere(10, 3, seed=2), gd.sphere(10, 3, seed=2))
    with pytest.raises(ValueError, match="dim"):
        gd.sphere(10, dim=1)
    w = gd.swiss_roll(300, seed=0)
    assert w.shape == (300, 3) and w.dtype == np.float32
    np.testing.assert_array_equal(w, gd.swiss_roll(300, seed=0))
    assert not np.array_equal(w, gd.swiss_roll(300, seed=1))
    with pytest.raises(ValueError, match="n must"):
        gd.swiss_roll(0)


# --------------------------------------------------------------------------- folder and array
def _save(path: Path, arr: np.ndarray) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path)


def test_folder_recursive_sorted_and_channels(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    imgs = {rel: rng.integers(0, 256, (6, 5, 3), dtype=np.uint8) for rel in ["b.png", "a/z.PNG", "a/c.bmp"]}
    for rel, im in imgs.items():
        _save(tmp_path / rel, im)
    (tmp_path / "notes.txt").write_text("not an image")
    x = gd.folder(tmp_path)
    assert x.shape == (3, 3, 6, 5) and x.dtype == np.uint8
    for i, rel in enumerate(["a/c.bmp", "a/z.PNG", "b.png"]):  # sorted by relative path
        np.testing.assert_array_equal(x[i], imgs[rel].transpose(2, 0, 1))
    gray = tmp_path / "gray"
    _save(gray / "1.png", rng.integers(0, 256, (4, 4), dtype=np.uint8))
    _save(gray / "2.png", rng.integers(0, 256, (4, 4), dtype=np.uint8))
    assert gd.folder(gray).shape == (2, 1, 4, 4)
    _save(gray / "3.png", rng.integers(0, 256, (4, 4, 3), dtype=np.uint8))
    assert gd.folder(gray).shape == (3, 3, 4, 4)  # mixed: all become RGB


def test_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="missing"):
        gd.folder(tmp_path / "missing")
    with pytest.raises(ValueError, match="no image files"):
        gd.folder(tmp_path)
    _save(tmp_path / "a.png", np.zeros((4, 4, 3), np.uint8))
    _save(tmp_path / "b.png", np.zeros((5, 4, 3), np.uint8))
    with pytest.raises(ValueError, match="differ in size"):
        gd.folder(tmp_path)
    assert gd.folder(tmp_path, size=3).shape == (2, 3, 3, 3)
    (tmp_path / "c.jpg").write_bytes(b"\xff\xd8 broken")
    with pytest.raises(ValueError, match="c.jpg"):
        gd.folder(tmp_path, size=3)


def test_array_npy_npz_and_keys(tmp_path: Path) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "a.npy", a)
    np.testing.assert_array_equal(gd.array(tmp_path / "a.npy"), a)
    np.savez(tmp_path / "one.npz", feats=a)
    np.testing.assert_array_equal(gd.array(tmp_path / "one.npz"), a)
    np.savez(tmp_path / "two.npz", x=a, y=a + 1)
    with pytest.raises(ValueError, match=r"\['x', 'y'\]"):
        gd.array(tmp_path / "two.npz")
    np.testing.assert_array_equal(gd.array(tmp_path / "two.npz", key="y"), a + 1)
    with pytest.raises(ValueError, match="no array 'z'"):
        gd.array(tmp_path / "two.npz", key="z")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="pickle"):
        gd.array(tmp_path / "obj.npy")
    with pytest.raises(FileNotFoundError):
        gd.array(tmp_path / "nope.npy")


# --------------------------------------------------------------------------- blur
def _total_variation(x: np.ndarray) -> float:
    x = x.astype(np.float64)
    return float(np.abs(np.diff(x, axis=-1)).sum() + np.abs(np.diff(x, axis=-2)).sum())


def test_blur_identity_reference_and_monotone() -> None:
    from scipy.ndimage import gaussian_filter

    x = gd.patches(n=8, size=16, seed=0)
    y0 = gd.gaussian_blur(x, 0.0)
    np.testing.assert_array_equal(y0, x)
    assert y0 is not x
    assert gd.blur_radius(1.0) == 3 and gd.blur_radius(0.5) == 2
    for s in (0.7, 2.0):  # same kernel (truncated at ceil(3σ)) and same symmetric padding as SciPy
        ref = gaussian_filter(x.astype(np.float64), sigma=(0, 0, s, s), mode="reflect",
                              truncate=np.ceil(3 * s) / s)
        assert np.abs(gd.gaussian_blur(x, s).astype(int) - np.rint(ref)).max() <= 1
    tvs = [_total_variation(gd.gaussian_blur(x, s)) for s in (0, 0.5, 1, 2, 4)]
    assert all(a > b for a, b in zip(tvs, tvs[1:]))
    const = np.full((2, 3, 8, 8), 77, np.uint8)
    np.testing.assert_array_equal(gd.gaussian_blur(const, 10.0), const)  # radius > image size works
    big = gd.gaussian_blur(x, 30.0)
    assert abs(big.astype(float).mean() - x.astype(float).mean()) < 3.0


def test_blur_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="uint8"):
        gd.gaussian_blur(np.zeros((1, 1, 4, 4), np.float32), 1.0)
    with pytest.raises(ValueError, match="uint8"):
        gd.gaussian_blur(np.zeros((4, 4), np.uint8), 1.0)
    with pytest.raises(ValueError, match="sigma"):
        gd.gaussian_blur(np.zeros((1, 1, 4, 4), np.uint8), -1.0)


# --------------------------------------------------------------------------- configs
@pytest.mark.parametrize(
    "name, shape",
    [("digits", (1797, 1, 32, 32)), ("patches", (2000, 3, 32, 32)), ("torus", (1000, 3)),
     ("sphere", (1000, 3)), ("swiss_roll", (1000, 3))],
)
def test_embedded_configs_instantiate(name: str, shape: tuple[int, ...]) -> None:
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    out = instantiate(OmegaConf.load(CONFIGS / "data" / f"{name}.yaml"))
    assert isinstance(out, np.ndarray) and out.shape == shape


def test_dataset_configs_target_the_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    for name in ["mnist", "fashion_mnist", "cifar10", "cifar100", "celeba", "folder", "array"]:
        cfg = OmegaConf.load(CONFIGS / "data" / f"{name}.yaml")
        assert cfg._target_ == f"ganeval.data.{name}"
    _write_idx(tmp_path / "MNIST" / "raw", "train", np.zeros((2, 28, 28), np.uint8))
    _write_idx(tmp_path / "MNIST" / "raw", "t10k", np.zeros((1, 28, 28), np.uint8))
    monkeypatch.setenv("GANEVAL_DATA", str(tmp_path))
    cfg = OmegaConf.load(CONFIGS / "data" / "mnist.yaml")
    assert instantiate(cfg, download=False).shape == (2, 1, 28, 28)


def test_array_given_a_folder_says_it_is_one(tmp_path: Path) -> None:
    """data=array data.path=FOLDER: the folder exists, so "does not exist" was wrong; say it is a folder and
    name data=folder."""
    from ganeval.data import array

    (tmp_path / "imgs").mkdir()
    with pytest.raises(ValueError, match=r"imgs is a folder, not a \.npy/\.npz file: .*data=folder"):
        array(tmp_path / "imgs")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        array(tmp_path / "nope.npy")


def test_folder_given_a_file_says_it_is_one(tmp_path: Path) -> None:
    """data=folder data.path=FILE.npy: say it is a file and name data=array (not "does not exist")."""
    np.save(tmp_path / "x.npy", np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"x\.npy is a file, not a folder of images: .*data=array"):
        gd.folder(tmp_path / "x.npy")


def test_a_failed_download_leaves_no_empty_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline, a refused dataset leaves nothing behind: the root and dataset folders it made (empty) are removed;
    a root that was there before stays."""
    import torchvision.datasets.mnist as tvm

    def offline(url: str, *a, **k) -> None:  # type: ignore[no-untyped-def]
        raise URLError("no network")

    monkeypatch.setattr(tvm, "download_and_extract_archive", offline)
    with pytest.raises(DatasetNotFoundError, match="download failed"):
        gd.mnist(tmp_path / "new_root", download=True)
    assert not (tmp_path / "new_root").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(DatasetNotFoundError):
        gd.mnist(tmp_path / "kept", download=True)
    assert (tmp_path / "kept").is_dir() and list((tmp_path / "kept").iterdir()) == []
