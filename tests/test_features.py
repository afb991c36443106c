"""Feature extraction: pytorch-fid parity, weights resolution, cache, inputs, configs."""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest
import torch

import ganeval.features as gf
from ganeval.app.main import config_dir
from ganeval.features import inception as inc
from ganeval.features.base import Extractor

CONFIGS = config_dir()


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random-init FID Inception weights, saved like the real file."""
    return inc.save_random_weights(tmp_path_factory.mktemp("w") / "random_inception.pth", seed=0)


@pytest.fixture(scope="module")
def reference():
    """pytorch-fid's inception module (its download is replaced per use in `_pfid_features`)."""
    import pytorch_fid.inception as pfi

    return pfi


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def _pfid_features(pfi, images01: torch.Tensor, blocks: list[int], resize: bool, weights: Path) -> list[np.ndarray]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pfi, "load_state_dict_from_url", lambda *a, **k: torch.load(weights, weights_only=True))
        net = pfi.InceptionV3(blocks, resize_input=resize).eval()
    with torch.no_grad():
        outs = net(images01)
    feats = []
    for y in outs:  # pytorch-fid's get_activations: average-pool maps that are not 1×1
        if y.shape[2] != 1 or y.shape[3] != 1:
            y = torch.nn.functional.adaptive_avg_pool2d(y, (1, 1))
        feats.append(y.flatten(1).numpy())
    return feats


# --------------------------------------------------------------------------- parity
@pytest.mark.slow
def test_pool3_parity_with_pytorch_fid_through_299_resize(weights: Path, reference) -> None:
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (3, 3, 32, 32), dtype=np.uint8)
    gray = rng.integers(0, 256, (2, 28, 28), dtype=np.uint8)  # N×H×W grayscale
    ours_rgb = gf.extract(rgb.transpose(0, 2, 3, 1), weights=weights, batch_size=2, progress=False)  # NHWC
    ours_gray = gf.extract(gray, weights=weights, batch_size=2, progress=False)
    ref_rgb = _pfid_features(reference, torch.from_numpy(rgb).float() / 255, [3], True, weights)[0]
    gray3 = (torch.from_numpy(gray).float() / 255)[:, None].expand(-1, 3, -1, -1).contiguous()  # PIL "RGB"
    ref_gray = _pfid_features(reference, gray3, [3], True, weights)[0]
    assert ours_rgb.shape == (3, 2048) and ours_rgb.dtype == np.float32
    assert ours_gray.shape == (2, 2048)
    assert np.abs(ref_rgb).max() > 1e-2  # the stand-in weights give non-degenerate features
    assert _rel(ours_rgb, ref_rgb) < 1e-4
    assert _rel(ours_gray, ref_gray) < 1e-4


@pytest.mark.slow
def test_lower_blocks_parity_without_resize(weights: Path, reference) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (2, 3, 75, 75), dtype=np.uint8)
    refs = _pfid_features(reference, torch.from_numpy(x).float() / 255, [0, 1, 2], False, weights)
    for dims, ref in zip((64, 192, 768), refs):
        ours = gf.extract(x, weights=weights, dims=dims, resize=False, progress=False)
        assert ours.shape == (2, dims)
        assert _rel(ours, ref) < 1e-4


def test_float_images_equal_uint8_over_255(weights: Path) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(0, 256, (2, 3, 75, 75), dtype=np.uint8)
    a = gf.extract(x, weights=weights, dims=192, resize=False, progress=False)
    b = gf.extract(torch.from_numpy(x).float() / 255, weights=weights, dims=192, resize=False, progress=False)
    np.testing.assert_array_equal(a, b)


def test_inception_identity_and_option_errors(weights: Path) -> None:
    ex = gf.InceptionExtractor(weights=weights, dims=768)
    ident = ex.identity()
    assert ident["weights"] == inc.weights_sha256(weights) and ident["block"] == 2 and ident["resize"] == 299
    with pytest.raises(ValueError, match="dims"):
        gf.InceptionExtractor(dims=100)
    with pytest.raises(ValueError, match="autocast"):
        gf.InceptionExtractor(autocast="int8")
    with pytest.raises(ValueError, match="75"):
        gf.extract(np.zeros((1, 3, 32, 32), np.uint8), weights=weights, resize=False, progress=False)
    bad = weights.parent / "bad.pth"
    torch.save({"conv.weight": torch.zeros(1)}, bad)
    with pytest.raises(ValueError, match="FID Inception state dict"):
        gf.extract(np.zeros((1, 3, 75, 75), np.uint8), weights=bad, resize=False, progress=False)


# --------------------------------------------------------------------------- weights resolution
@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty torch hub directory and no $GANEVAL_INCEPTION_WEIGHTS."""
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path / "hub"))
    monkeypatch.delenv(inc.WEIGHTS_ENV, raising=False)
    return tmp_path / "hub" / "checkpoints" / inc.WEIGHTS_FILENAME


def test_weights_resolution_order(hub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    downloads: list[tuple[str, Path]] = []

    def fake_download(url: str, dst: Path) -> None:
        downloads.append((url, dst))
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(b"downloaded")

    monkeypatch.setattr(inc, "_download", fake_download)
    arg, env = tmp_path / "arg.pth", tmp_path / "env.pth"
    arg.write_bytes(b"a")
    env.write_bytes(b"e")
    # nothing anywhere: download into the hub cache
    assert gf.resolve_weights() == hub and downloads == [(inc.WEIGHTS_URL, hub)]
    # hub cache present: used, no second download
    assert gf.resolve_weights() == hub and len(downloads) == 1
    # environment beats the hub cache, the argument beats the environment
    monkeypatch.setenv(inc.WEIGHTS_ENV, str(env))
    assert gf.resolve_weights() == env
    assert gf.resolve_weights(arg) == arg
    assert gf.check_weights_available(arg) == arg
    assert len(downloads) == 1


def test_weights_offline_error_says_where_and_how(hub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(url: str, dst: Path) -> None:
        raise URLError("Temporary failure in name resolution")

    monkeypatch.setattr(inc, "_download", offline)
    with pytest.raises(gf.WeightsNotFoundError) as e:
        gf.check_weights_available()
    msg = str(e.value)
    for part in (inc.WEIGHTS_FILENAME, str(hub), inc.WEIGHTS_URL, inc.WEIGHTS_ENV, "weights=", "URLError"):
        assert part in msg
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(gf.WeightsNotFoundError, match="download disabled"):
        gf.resolve_weights(download=False)
    # the error comes before any image is looked at
    with pytest.raises(gf.WeightsNotFoundError):
        gf.extract(np.zeros((1, 3, 8, 8), np.uint8), progress=False)


def test_explicit_missing_weights_never_fall_back(hub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(inc, "_download", lambda url, dst: calls.append(url))
    hub.parent.mkdir(parents=True)
    hub.write_bytes(b"cached")
    with pytest.raises(gf.WeightsNotFoundError, match="the `weights` argument"):
        gf.resolve_weights(tmp_path / "typo.pth")
    monkeypatch.setenv(inc.WEIGHTS_ENV, str(tmp_path / "typo_env.pth"))
    with pytest.raises(gf.WeightsNotFoundError, match="typo_env.pth"):
        gf.resolve_weights()
    assert calls == []


# --------------------------------------------------------------------------- cache
class CountingPixels(gf.PixelsExtractor):
    """Pixels extractor that counts the batches it processes."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.calls = 0

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return super().__call__(batch)


def _images(n: int = 10, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 3, 6, 6), dtype=np.uint8)


def test_cache_hit_miss_and_changed_pixel(tmp_path: Path) -> None:
    x = _images()
    ex = CountingPixels()
    a = gf.extract(x, ex, cache_dir=tmp_path, batch_size=4, progress=False)
    assert ex.calls == 3 and len(list(tmp_path.glob("*.npz"))) == 1
    ex.calls = 0
    b, info = gf.extract_with_info(x.copy(), ex, cache_dir=tmp_path, batch_size=7, progress=False)
    assert ex.calls == 0 and info["cache_hit"]
    np.testing.assert_array_equal(a, b)
    y = x.copy()
    y[7, 1, 2, 3] ^= 1
    c = gf.extract(y, ex, cache_dir=tmp_path, progress=False)
    assert ex.calls > 0 and len(list(tmp_path.glob("*.npz"))) == 2
    assert not np.array_equal(a[7], c[7]) and np.array_equal(a[:7], c[:7])
    # a different extractor identity (option) is a different entry
    gf.extract(x, "pixels", size=3, cache_dir=tmp_path, progress=False)
    assert len(list(tmp_path.glob("*.npz"))) == 3


@pytest.mark.parametrize("damage", ["truncate", "garbage", "tamper"])
def test_corrupted_cache_is_logged_and_recomputed(tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str) -> None:
    x = _images()
    ex = CountingPixels()
    a = gf.extract(x, ex, cache_dir=tmp_path, progress=False)
    (path,) = tmp_path.glob("*.npz")
    raw = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00" * 100)
    else:  # valid file, features changed behind the checksum's back
        with np.load(path, allow_pickle=False) as z:
            parts = {k: z[k] for k in z.files}
        parts["features"] = parts["features"] + 1
        np.savez(path, **parts)
    ex.calls = 0
    with caplog.at_level(logging.WARNING, logger="ganeval.features.cache"):
        b = gf.extract(x, ex, cache_dir=tmp_path, progress=False)
    assert ex.calls > 0 and "corrupted" in caplog.text and path.name in caplog.text
    np.testing.assert_array_equal(a, b)
    ex.calls = 0  # rewritten: a clean hit now
    np.testing.assert_array_equal(gf.extract(x, ex, cache_dir=tmp_path, progress=False), a)
    assert ex.calls == 0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_streaming_inputs_hash_like_the_array(tmp_path: Path) -> None:
    x = _images(11)
    ex = CountingPixels()
    a = gf.extract(x, ex, cache_dir=tmp_path, progress=False)
    ex.calls = 0
    # a list of batches split differently: same content, a hit
    b = gf.extract([x[:3], torch.from_numpy(x[3:])], ex, cache_dir=tmp_path, progress=False)
    assert ex.calls == 0
    np.testing.assert_array_equal(a, b)
    # a one-shot generator is hashed while computing; its result then serves the array
    other = tmp_path / "other"
    g = gf.extract((x[i : i + 4] for i in range(0, 11, 4)), ex, cache_dir=other, progress=False)
    assert ex.calls == 3
    np.testing.assert_array_equal(g, a)
    ex.calls = 0
    gf.extract(x, ex, cache_dir=other, progress=False)
    assert ex.calls == 0
    with pytest.raises(ValueError, match="batches disagree"):
        gf.extract([x[:3], x[3:, :, :5]], ex, cache_dir=tmp_path / "x", progress=False)


class PairDataset(torch.utils.data.Dataset):
    """(image, label) items as torch tensors, like a torchvision dataset with ToTensor-free output."""

    def __init__(self, x: np.ndarray) -> None:
        self.x = x

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int):
        return torch.from_numpy(self.x[i]), i % 3


def test_dataset_input_and_cache(tmp_path: Path) -> None:
    x = _images(9)
    a = gf.extract(x, "pixels", progress=False)
    ex = CountingPixels()
    b = gf.extract(PairDataset(x), ex, batch_size=4, cache_dir=tmp_path, progress=False)
    np.testing.assert_array_equal(a, b)
    ex.calls = 0
    gf.extract(x, ex, cache_dir=tmp_path, progress=False)
    assert ex.calls == 0
    # decoded by a DataLoader worker process, and PIL images (H×W×C) as items
    np.testing.assert_array_equal(gf.extract(PairDataset(x), "pixels", num_workers=1, progress=False), a)
    np.testing.assert_array_equal(gf.extract(PilDataset(x), "pixels", batch_size=4, progress=False), a)


class RandomDataset(torch.utils.data.Dataset):
    """Different images on every pass, like sampling a generator with fresh noise."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> np.ndarray:
        return self.rng.integers(0, 256, (3, 6, 6), dtype=np.uint8)


def test_dataset_changing_between_passes_is_not_cached(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        f, info = gf.extract_with_info(RandomDataset(), "pixels", cache_dir=tmp_path, progress=False)
    assert f.shape == (4, 108) and info["cache_file"] is None and "not cached" in caplog.text
    assert not list(tmp_path.glob("*.npz"))


class PilDataset(PairDataset):
    """Items are PIL images, as torchvision datasets without a transform return them."""

    def __getitem__(self, i: int):
        from PIL import Image

        return Image.fromarray(self.x[i].transpose(1, 2, 0)), 0


def test_inception_cache_hit_builds_no_network(weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = []
    real = inc.inception_blocks
    monkeypatch.setattr(inc, "inception_blocks", lambda sd, block=3: built.append(block) or real(sd, block))
    x = np.random.default_rng(3).integers(0, 256, (2, 3, 75, 75), dtype=np.uint8)
    a = gf.extract(x, weights=weights, dims=64, resize=False, cache_dir=tmp_path, progress=False)
    assert built == [0]
    b, info = gf.extract_with_info(x, weights=weights, dims=64, resize=False, cache_dir=tmp_path, progress=False)
    assert built == [0] and info["cache_hit"] and info["extractor"]["weights"] == inc.weights_sha256(weights)
    np.testing.assert_array_equal(a, b)
    sd = torch.load(weights, weights_only=True)
    sd["Mixed_7c.branch_pool.bn.bias"] = sd["Mixed_7c.branch_pool.bn.bias"] + 1
    other = tmp_path / "other.pth"
    torch.save(sd, other)  # other weights: a miss
    gf.extract(x, weights=other, dims=64, resize=False, cache_dir=tmp_path, progress=False)
    assert built == [0, 0]


# --------------------------------------------------------------------------- inputs and extractors
def test_pixels_and_identity_extractors(tmp_path: Path) -> None:
    x = _images(4)
    p = gf.extract(x, "pixels", progress=False)
    np.testing.assert_allclose(p, x.reshape(4, -1) / 255, rtol=1e-6)
    np.testing.assert_array_equal(gf.extract(x.transpose(0, 2, 3, 1), "pixels", progress=False), p)
    assert gf.extract(x, "pixels", size=3, progress=False).shape == (4, 27)
    g = gf.extract(x[:, 0], "pixels", channels=3, progress=False)
    assert g.shape == (4, 108)
    feats = np.random.default_rng(0).normal(size=(7, 5))
    out = gf.extract(feats, "identity", cache_dir=tmp_path, progress=False)
    assert out.dtype == np.float32 and out.shape == (7, 5)
    np.testing.assert_allclose(out, feats, rtol=1e-6)
    assert not list(tmp_path.iterdir())  # identity is never cached


def test_bad_inputs_raise_value_errors() -> None:
    with pytest.raises(ValueError, match="extractor must be one of"):
        gf.extract(_images(2), "vgg")
    with pytest.raises(ValueError, match="N×H×W"):
        gf.extract(np.zeros((2, 5, 6, 6), np.uint8), "pixels", progress=False)
    with pytest.raises(ValueError, match="uint8 or floats"):
        gf.extract(np.zeros((2, 3, 6, 6), np.int16), "pixels", progress=False)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        gf.extract(np.full((2, 3, 6, 6), 2.0, np.float32), "pixels", progress=False)
    with pytest.raises(ValueError, match="batch_size"):
        gf.extract(_images(2), "pixels", batch_size=0)
    with pytest.raises(ValueError, match="empty"):
        gf.extract(np.zeros((0, 3, 6, 6), np.uint8), "pixels", progress=False)
    with pytest.raises(ValueError, match="options"):
        gf.extract(_images(2), gf.PixelsExtractor(), size=3)
    with pytest.raises(ValueError, match="bad options"):
        gf.extract(_images(2), "pixels", weights="w.pth")
    with pytest.raises(ValueError, match="iterable of batches"):
        gf.extract("images/", "pixels")


def test_feature_configs_instantiate(weights: Path) -> None:
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    classes = {"inception": gf.InceptionExtractor, "pixels": gf.PixelsExtractor, "identity": gf.IdentityExtractor}
    for name, cls in classes.items():
        ex = instantiate(OmegaConf.load(CONFIGS / "features" / f"{name}.yaml"))
        assert type(ex) is cls and isinstance(ex, Extractor) and ex.name == name
    ex = instantiate(OmegaConf.load(CONFIGS / "features" / "inception.yaml"), weights=str(weights), resize=False)
    assert gf.extract(np.zeros((1, 3, 75, 75), np.uint8), ex, progress=False).shape == (1, 2048)


@pytest.mark.gpu
def test_cuda_matches_cpu(weights: Path) -> None:
    x = np.random.default_rng(4).integers(0, 256, (5, 3, 32, 32), dtype=np.uint8)
    cpu = gf.extract(x, weights=weights, device="cpu", progress=False)
    gpu = gf.extract(x, weights=weights, device="cuda", batch_size=2, progress=False)
    assert _rel(gpu, cpu) < 1e-2  # TF32 convolutions on by default in cuDNN
    fast = gf.extract(x, weights=weights, device="cuda", channels_last=True, autocast="bfloat16", progress=False)
    assert _rel(fast, cpu) < 5e-2
    t = gf.extract(torch.from_numpy(x).cuda(), weights=weights, progress=False)  # device from the input
    assert _rel(t, cpu) < 1e-2
