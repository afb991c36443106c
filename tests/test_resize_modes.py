"""Inception and DINOv2 preprocessing modes: parity of the resizes with clean-fid's and torch-fidelity's own
functions on uint8 images of several sizes (no weights needed), the mode in the identity (cache key) and the
FID label, the default unchanged, and features independent of the batch size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from ganeval.features import InceptionExtractor, extract
from ganeval.features import cache as fcache
from ganeval.features import inception as inc
from ganeval.features.resize import pil_float_bicubic, pixels_255, tf1_bilinear
from ganeval.results.tables import metric_label

SIZES = [(8, 8), (28, 28), (32, 32), (40, 56), (64, 64), (300, 310)]


def uint8_images(n: int, c: int, h: int, w: int, seed: int = 0) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).integers(0, 256, (n, c, h, w), dtype=np.uint8))


@pytest.mark.parametrize("hw", SIZES)
def test_tf1_bilinear_equals_torch_fidelity(hw: tuple[int, int]) -> None:
    from torch_fidelity.interpolate_compat_tensorflow import interpolate_bilinear_2d_like_tensorflow1x

    x = uint8_images(2, 3, *hw).float()
    ours = tf1_bilinear(x, 299)
    theirs = interpolate_bilinear_2d_like_tensorflow1x(x, size=(299, 299), align_corners=False)
    assert torch.equal(ours, theirs)
    assert ours.shape == (2, 3, 299, 299)


@pytest.mark.parametrize("hw", SIZES)
def test_clean_resize_equals_clean_fid(hw: tuple[int, int]) -> None:
    from cleanfid.resize import build_resizer

    x = uint8_images(2, 3, *hw, seed=1)
    ours = pil_float_bicubic(x, 299).numpy()
    fn = build_resizer("clean")
    for i in range(len(x)):
        theirs = fn(x[i].numpy().transpose(1, 2, 0))  # clean-fid takes H×W×3 uint8
        np.testing.assert_array_equal(ours[i], theirs.transpose(2, 0, 1))


def test_legacy_pytorch_equals_clean_fid_legacy_pytorch_resize() -> None:
    """The default mode's resize is clean-fid's legacy_pytorch resizer (on [0, 255] instead of [0, 1])."""
    from cleanfid.resize import build_resizer

    x = uint8_images(1, 3, 32, 32, seed=2)
    fn = build_resizer("legacy_pytorch")
    theirs = fn(x[0].numpy().transpose(1, 2, 0).astype(np.float32)).transpose(2, 0, 1)
    ours = torch.nn.functional.interpolate(x.float() / 255, size=(299, 299), mode="bilinear", align_corners=False)
    np.testing.assert_allclose(ours[0].numpy() * 255, theirs, rtol=0, atol=1e-4)


def test_gray_and_float_inputs() -> None:
    g = uint8_images(2, 1, 16, 16, seed=3)
    assert torch.equal(pixels_255(g), g.float().expand(-1, 3, -1, -1))
    assert torch.equal(pil_float_bicubic(g, 20), pil_float_bicubic(g.expand(-1, 3, -1, -1), 20))
    f = g.float() / 255  # [0, 1] floats of the same images give the same clean resize
    assert torch.equal(pil_float_bicubic(f, 20), pil_float_bicubic(g, 20))


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return inc.save_random_weights(tmp_path_factory.mktemp("w") / "random_inception.pth", seed=0)


def test_mode_is_in_identity_cache_key_and_label(weights: Path) -> None:
    default = InceptionExtractor(weights=weights)
    assert InceptionExtractor(weights=weights, resize="legacy_pytorch").identity() == default.identity()
    assert "resize_mode" not in default.identity()  # the default keeps its identity, so no cache key moves
    keys = {fcache.cache_key("c", default.identity())}
    for mode in ("legacy_tensorflow", "clean", "torchmetrics"):
        ident = InceptionExtractor(weights=weights, resize=mode).identity()
        assert ident["resize_mode"] == mode
        keys.add(fcache.cache_key("c", ident))
        assert metric_label("fid", ident)[0] == f"FID ({mode})"
        assert metric_label("kid", ident)[0] == "KID×10³"
    assert len(keys) == 4
    assert metric_label("fid", default.identity())[0] == "FID"
    assert metric_label("fid", {"name": "dinov2", "resize_mode": "torch"})[0] == "FD_DINOv2 (torch)"
    with pytest.raises(ValueError, match="resize must be one of"):
        InceptionExtractor(weights=weights, resize="bicubic")


def test_modes_feed_the_network_what_the_peers_feed(weights: Path) -> None:
    x = uint8_images(2, 3, 32, 32, seed=4)
    tf = InceptionExtractor(weights=weights, resize="legacy_tensorflow").preprocess(x)
    from torch_fidelity.interpolate_compat_tensorflow import interpolate_bilinear_2d_like_tensorflow1x

    want = (interpolate_bilinear_2d_like_tensorflow1x(x.float(), size=(299, 299), align_corners=False) - 128) / 128
    assert torch.equal(tf, want)
    clean = InceptionExtractor(weights=weights, resize="clean")
    from cleanfid.resize import build_resizer

    # clean-fid's preprocessing: its "clean" resizer on H×W×3 uint8, then its Inception's own input scaling
    # (cleanfid/inception_torchscript.py: (x - 128) / 128 on [0, 255])
    theirs = np.stack([build_resizer("clean")(img.numpy().transpose(1, 2, 0)).transpose(2, 0, 1) for img in x])
    np.testing.assert_array_equal(clean.preprocess(x).numpy(), (theirs - 128) / 128)
    # the extraction path (host stage, then device stage) gives the same features as a direct call
    a = extract(x, clean, batch_size=2, device="cpu", progress=False)
    np.testing.assert_array_equal(a, clean(x).numpy())


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy_pytorch", "legacy_tensorflow", "clean"])
def test_features_do_not_depend_on_batch_size(weights: Path, mode: str) -> None:
    x = uint8_images(6, 3, 32, 32, seed=5)
    ex = InceptionExtractor(weights=weights, resize=mode)
    a = extract(x, ex, batch_size=6, device="cpu", progress=False)
    b = extract(x, ex, batch_size=1, device="cpu", progress=False)
    c = extract(x, ex, batch_size=4, device="cpu", progress=False)
    scale = np.abs(a).max()
    for other in (b, c):
        np.testing.assert_allclose(other, a, rtol=0, atol=1e-5 * scale)


def test_modes_give_different_features(weights: Path) -> None:
    x = uint8_images(2, 3, 32, 32, seed=6)
    feats = {m: InceptionExtractor(weights=weights, resize=m)(x).numpy() for m in inc.RESIZE_MODES}
    assert not np.allclose(feats["legacy_pytorch"], feats["clean"], rtol=1e-3)
    assert not np.allclose(feats["legacy_pytorch"], feats["legacy_tensorflow"], rtol=1e-3)


def test_dinov2_torch_mode_equals_torch_fidelity_preprocessing() -> None:
    from ganeval.features.dinov2 import MEAN, STD, preprocess_torch
    from torch_fidelity.interpolate_compat_tensorflow import interpolate_bilinear_2d_like_tensorflow1x

    x = uint8_images(2, 3, 40, 56, seed=7)
    y = interpolate_bilinear_2d_like_tensorflow1x(x.float(), size=(224, 224), align_corners=False)
    want = (y - torch.tensor([255 * m for m in MEAN]).view(1, 3, 1, 1)) / torch.tensor([255 * s for s in STD]).view(1, 3, 1, 1)
    torch.testing.assert_close(preprocess_torch(x), want, rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_dinov2_torch_mode_through_the_extractor(tmp_path: Path) -> None:
    """resize='torch' feeds timm's network torch-fidelity's preprocessing; the default keeps its identity."""
    timm = pytest.importorskip("timm")
    from ganeval.features import DinoV2Extractor
    from ganeval.features.dinov2 import preprocess_torch

    torch.manual_seed(0)
    model = timm.create_model("vit_small_patch14_dinov2.lvd142m", img_size=224, num_classes=0).eval()
    torch.save(model.state_dict(), tmp_path / "w.pth")
    x = uint8_images(2, 3, 40, 56, seed=8)
    ex = DinoV2Extractor(arch="vits14", weights=tmp_path / "w.pth", resize="torch")
    got = extract(x, ex, batch_size=1, device="cpu", progress=False)
    with torch.no_grad():
        want = model(preprocess_torch(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    default = DinoV2Extractor(arch="vits14", weights=tmp_path / "w.pth")
    assert "resize_mode" not in default.identity() and ex.identity()["resize_mode"] == "torch"
    assert metric_label("fid", ex.identity())[0] == "FD_DINOv2 (torch)"


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["legacy_pytorch", "legacy_tensorflow", "clean", "torchmetrics"])
def test_modes_on_cuda_match_the_cpu(weights: Path, mode: str) -> None:
    """Each mode's preprocessing runs where its stage says (clean: PIL on the host, the others on the device) and
    gives the CPU's features up to float32/TF32 rounding, whatever the batch size."""
    x = uint8_images(6, 3, 32, 32, seed=9)
    ex = InceptionExtractor(weights=weights, resize=mode)
    cpu = extract(x, ex, batch_size=6, device="cpu", progress=False)
    ex_gpu = InceptionExtractor(weights=weights, resize=mode)
    for bs in (1, 4, 6):
        gpu = extract(x, ex_gpu, batch_size=bs, device="cuda", progress=False)
        np.testing.assert_allclose(gpu, cpu, rtol=0, atol=2e-3 * np.abs(cpu).max())
