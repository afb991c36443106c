"""Sweep of ganeval.features (inception, resize, simple, base, dinov2, clip): exact values against pytorch-fid's
network, independent float64 formulas, the peers' published constants, and every argument check's edges."""

from __future__ import annotations

import hashlib
import logging
import math
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ganeval.features import inception as inc

G = torch.Generator


def _u8(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    return torch.randint(0, 256, shape, generator=G().manual_seed(seed), dtype=torch.uint8)


# --------------------------------------------------------------------------- shared (module) fixtures
@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Iterator[None]:
    """The networks here are small runs: one thread is far faster than two on a busy 2-core machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def sd() -> dict[str, torch.Tensor]:
    """Random FID Inception weights (ganeval's stand-in), with a non-zero classifier bias so logits show it."""
    d = inc.random_state_dict(0)
    d["fc.bias"] = torch.randn(1008, generator=G().manual_seed(5))
    return d


@pytest.fixture(scope="module")
def wfile(sd: dict[str, torch.Tensor], tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("sweep_w") / "w.pth"
    torch.save(sd, p)
    return p


@pytest.fixture(scope="module")
def pfid(sd: dict[str, torch.Tensor]) -> Any:
    """pytorch-fid's own InceptionV3 (blocks 0-3, no resize) with `sd` loaded strictly (its loader is
    `load_state_dict_from_url`, replaced here: nothing is downloaded)."""
    import pytorch_fid.inception as pfi

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pfi, "load_state_dict_from_url", lambda *a, **k: sd)
        net = pfi.InceptionV3([0, 1, 2, 3], resize_input=False, normalize_input=True).eval()
    return net


# --------------------------------------------------------------------------- the architecture against pytorch-fid's
def test_state_dict_has_pytorch_fids_keys_and_shapes(sd: dict[str, torch.Tensor]) -> None:
    """Every channel count, kernel size and block of the FID Inception equals pytorch-fid's `fid_inception_v3`."""
    import pytorch_fid.inception as pfi

    captured: dict[str, Any] = {}

    def fake(*a: Any, **k: Any) -> dict[str, torch.Tensor]:
        return sd

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pfi, "load_state_dict_from_url", fake)
        ref = pfi.fid_inception_v3()  # load_state_dict(strict=True): any missing/extra key or shape fails here
    captured = {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    assert {k: tuple(v.shape) for k, v in sd.items()} == captured
    assert not any(k.startswith("AuxLogits") for k in sd)
    assert captured["fc.weight"] == (1008, 2048)
    ours = inc.fid_inception_architecture()
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == captured
    for name in ("Mixed_5b", "Mixed_5c", "Mixed_5d", "Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e", "Mixed_7b",
                 "Mixed_7c"):  # pytorch-fid's patched blocks (their forward differs from torchvision's)
        assert type(getattr(ours, name)) is type(getattr(ref, name))
    # torch's default init (pytorch-fid's init_weights=False), not torchvision's truncated normal of std 0.1
    assert float(ours.fc.weight.detach().abs().max()) <= 2048 ** -0.5


def test_every_block_equals_pytorch_fids_on_75px_images(wfile: Path, pfid: Any) -> None:
    """dims 64/192/768/2048 are pytorch-fid's blocks 0-3 (pooled to one vector), input 2x/255 - 1."""
    x = _u8((1, 3, 75, 75), 1)
    with torch.no_grad():
        refs = [F.adaptive_avg_pool2d(y, (1, 1)).flatten(1) for y in pfid(x.float() / 255)]
    for dims, ref in zip((64, 192, 768, 2048), refs):
        ex = inc.InceptionExtractor(dims=dims, weights=wfile, resize=False)
        with torch.no_grad():
            got = ex(x)
        assert got.shape == (1, dims) and got.dtype == torch.float32 and ex.feature_dim((1, 3, 75, 75)) == dims
        torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-5)
        assert float(ref.abs().max()) > 1e-2


def test_inception_blocks_is_frozen_eval_and_ends_in_a_1x1_pool(sd: dict[str, torch.Tensor]) -> None:
    m = inc.inception_blocks(sd)  # block 3 by default
    assert not m.training and not any(p.requires_grad for p in m.parameters())
    with torch.no_grad():
        y = m(torch.zeros(1, 3, 75, 75))
    assert y.shape == (1, 2048, 1, 1)
    assert len(inc.inception_blocks(sd, 0)) == 4 and len(inc.inception_blocks(sd, 1)) == 7
    assert len(inc.inception_blocks(sd, 2)) == 15 and len(m) == 19


def test_spatial_features_are_mixed_6d_branch1x1s_first_7_channels_hwc(wfile: Path, pfid: Any) -> None:
    """sFID's features: Mixed_6d.branch1x1 (TF mixed_6/conv) at 17×17, channels 0..6, flattened (h, w, c)."""
    x = torch.rand(1, 3, 299, 299, generator=G().manual_seed(2)) * 2 - 1
    b = pfid.blocks
    with torch.no_grad():
        y = b[2][6].branch1x1(b[2][:6](b[1](b[0](x))))
    assert y.shape == (1, 192, 17, 17)
    want = y[0, :7].permute(1, 2, 0).reshape(-1)
    ex = inc.InceptionExtractor(weights=wfile, output="spatial")
    assert ex.outputs == "spatial" and ex.feature_dim((1, 3, 8, 8)) == 2023
    with torch.no_grad():
        got = ex.forward(x)
    assert got.shape == (1, 2023)
    torch.testing.assert_close(got[0], want, rtol=1e-4, atol=1e-5)
    m = inc.inception_spatial(torch.load(wfile, weights_only=True))
    assert not m.training and not any(p.requires_grad for p in m.parameters())


def test_spatial_cut_orders_height_width_channel() -> None:
    x = torch.arange(2 * 9 * 3 * 5, dtype=torch.float32).reshape(2, 9, 3, 5)
    got = inc.SpatialCut()(x)
    assert got.shape == (2, 3 * 5 * 7)
    assert torch.equal(got[1], x[1, :7].permute(1, 2, 0).reshape(-1))
    assert got[0, :3].tolist() == [0.0, 15.0, 30.0]  # (h0, w0) of channels 0, 1, 2


def test_logits_are_pool3_times_fc_plus_bias_or_without_it(wfile: Path, sd: dict[str, torch.Tensor],
                                                           pfid: Any) -> None:
    x = _u8((2, 3, 75, 75), 3)
    with torch.no_grad():
        pool3 = pfid(x.float() / 255)[3].flatten(1).double()
    w, bias = sd["fc.weight"].double(), sd["fc.bias"].double()
    for output, want in (("logits", pool3 @ w.T + bias), ("logits_unbiased", pool3 @ w.T)):
        ex = inc.InceptionExtractor(weights=wfile, resize=False, output=output)
        assert ex.outputs == "logits" and ex.feature_dim((2, 3, 75, 75)) == 1008
        with torch.no_grad():
            got = ex(x)
        assert got.shape == (2, 1008)
        torch.testing.assert_close(got.double(), want, rtol=1e-4, atol=1e-4)
    m = inc.inception_logits(sd)  # bias by default
    assert not m.training and not any(p.requires_grad for p in m.parameters())
    with torch.no_grad():
        torch.testing.assert_close(m(2 * x.float() / 255 - 1).double(), pool3 @ w.T + bias, rtol=1e-4, atol=1e-4)
    lg = inc.Logits(torch.nn.Linear(4, 2))  # bias by default
    with torch.no_grad():
        lg.fc.bias.copy_(torch.tensor([1.0, -2.0]))
        lg.fc.weight.zero_()
    assert lg(torch.zeros(3, 4, 1, 1)).tolist() == [[1.0, -2.0]] * 3


@pytest.mark.parametrize("hw", [(75, 75), (75, 11), (11, 75), (15, 11), (11, 15)])
def test_forward_averages_every_block0_map_that_is_not_1x1(wfile: Path, pfid: Any, hw: tuple[int, int]) -> None:
    """pytorch-fid's get_activations pools any map that is not 1×1 (17×1, 1×17, 2×1 and 1×2 too)."""
    x = torch.rand(1, 3, *hw, generator=G().manual_seed(4)) * 2 - 1
    with torch.no_grad():
        y = pfid.blocks[0](x)
    want = y.mean(dim=(2, 3))
    ex = inc.InceptionExtractor(dims=64, weights=wfile, resize=False)
    with torch.no_grad():
        got = ex.forward(x)
    assert got.shape == (1, 64)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_setup_once_per_device_and_nhwc_on_cpu_by_default(wfile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.zeros(1, 3, 75, 75)
    for channels_last, nhwc in ((None, True), (True, True), (False, False)):
        ex = inc.InceptionExtractor(dims=64, weights=wfile, resize=False, channels_last=channels_last)
        calls: list[torch.device] = []
        real = ex.setup
        monkeypatch.setattr(ex, "setup", lambda d, real=real, calls=calls: (calls.append(d), real(d))[1])
        with torch.no_grad():
            ex.forward(x)
            ex.forward(x)
        assert calls == [torch.device("cpu")]
        assert ex._nhwc is nhwc and ex._device == torch.device("cpu")
        w = next(ex._model.parameters())  # type: ignore[union-attr]
        assert w.is_contiguous(memory_format=torch.channels_last) is nhwc


# --------------------------------------------------------------------------- preprocessing
def _stub(ex: inc.InceptionExtractor) -> inc.InceptionExtractor:
    ex.forward = lambda x: x  # type: ignore[method-assign]  # the network's input itself
    return ex


def test_preprocess_maps_0_64_255_exactly_in_every_mode() -> None:
    x = torch.tensor([0, 64, 255], dtype=torch.uint8).view(3, 1, 1, 1).expand(3, 3, 20, 20).contiguous()
    tf = {"legacy_tensorflow": [-1.0, -0.5, 127 / 128], "torchmetrics": [-1.0, -0.5, 127 / 128],
          "clean": [-1.0, -0.5, 127 / 128], "legacy_pytorch": [-1.0, 128 / 255 - 1, 1.0]}
    for mode, want in tf.items():
        ex = _stub(inc.InceptionExtractor(resize=mode))
        y = ex.preprocess(x)
        assert y.shape == (3, 3, 299, 299), mode
        for i, v in enumerate(want):
            torch.testing.assert_close(y[i], torch.full_like(y[i], v), rtol=0, atol=2e-6, msg=mode)
        z = ex.device_stage(ex.host_stage(x))  # the extraction path: host stage on the CPU, then the device
        torch.testing.assert_close(z, y, rtol=0, atol=1e-6)
        assert ex.host_work() is (mode == "clean")
        assert (ex.host_stage(x) is x) is (mode != "clean")


def test_preprocess_modes_use_their_own_resize() -> None:
    from ganeval.features.resize import antialiased_bilinear, pil_float_bicubic, tf1_bilinear

    x = _u8((1, 3, 23, 31), 6)
    f = x.double()
    want = {
        "legacy_pytorch": 2 * F.interpolate(f / 255, size=(299, 299), mode="bilinear", align_corners=False) - 1,
        "legacy_tensorflow": (tf1_bilinear(f, 299) - 128) / 128,
        "torchmetrics": (antialiased_bilinear(f, 299) - 128) / 128,
        "clean": (pil_float_bicubic(x, 299).double() - 128) / 128,
    }
    for mode, w in want.items():
        got = inc.InceptionExtractor(resize=mode).preprocess(x)
        torch.testing.assert_close(got.double(), w, rtol=0, atol=1e-5, msg=mode)
    assert inc.InceptionExtractor().resize_mode == "legacy_pytorch"  # the default


def test_without_resize_images_of_75_px_pass_and_74_are_refused() -> None:
    ex = inc.InceptionExtractor(resize=False)
    x = _u8((1, 3, 75, 76), 7)
    torch.testing.assert_close(ex.preprocess(x), 2 * x.float() / 255 - 1, rtol=0, atol=1e-6)
    for hw in ((74, 80), (80, 74)):
        with pytest.raises(ValueError, match="at least 75×75"):
            ex.preprocess(_u8((1, 3, *hw), 8))
    gray = _u8((1, 1, 75, 75), 9)
    assert ex.preprocess(gray).shape == (1, 3, 75, 75)


def test_resize_mode_values() -> None:
    assert inc.resize_mode(True) == "legacy_pytorch" and inc.resize_mode(False) is None
    for m in inc.RESIZE_MODES:
        assert inc.resize_mode(m) == m
    for bad in ("bilinear", 1, 0, None, "True"):
        with pytest.raises(ValueError, match="resize must be one of"):
            inc.resize_mode(bad)  # type: ignore[arg-type]
    assert inc.RESIZE == 299


# --------------------------------------------------------------------------- the extractor's options
def test_extractor_defaults_and_option_edges() -> None:
    ex = inc.InceptionExtractor()
    assert (ex.dims, ex.block, ex.resize, ex.resize_mode, ex.download, ex.weights, ex.channels_last, ex.autocast,
            ex.output, ex.outputs, ex._nhwc) == (2048, 3, True, "legacy_pytorch", True, None, None, None, "features",
                                                 "features", False)
    assert ex.feature_dim((1, 3, 5, 5)) == 2048
    assert [inc.InceptionExtractor(dims=d).block for d in (64, 192, 768, 2048)] == [0, 1, 2, 3]
    assert inc.InceptionExtractor(resize=False).resize is False
    for output in ("logits", "logits_unbiased", "spatial"):
        assert inc.InceptionExtractor(output=output).dims == 2048
        with pytest.raises(ValueError, match="leave dims at 2048"):
            inc.InceptionExtractor(dims=768, output=output)
    assert inc.InceptionExtractor(dims=768, output="features").dims == 768
    for bad in (65, 2049, 0):
        with pytest.raises(ValueError, match="dims must be one of"):
            inc.InceptionExtractor(dims=bad)
    with pytest.raises(ValueError, match="output must be one of"):
        inc.InceptionExtractor(output="pool")
    for ac in (None, "float16", "bfloat16"):
        assert inc.InceptionExtractor(autocast=ac).autocast == ac
    with pytest.raises(ValueError, match="autocast"):
        inc.InceptionExtractor(autocast="float32")
    for cl in (None, True, False):
        assert inc.InceptionExtractor(channels_last=cl).channels_last is cl
    with pytest.raises(ValueError, match="channels_last"):
        inc.InceptionExtractor(channels_last="yes")  # type: ignore[arg-type]


def test_registry_entry_of_inception() -> None:
    from ganeval.features.base import extractor_entry

    e = extractor_entry("inception")
    assert e.cls is inc.InceptionExtractor and e.dims == (2048, 64, 192, 768) and e.weights is True
    assert e.resize == ("legacy_pytorch", "legacy_tensorflow", "clean", "torchmetrics")


def test_identity_names_mode_and_output_only_when_not_the_default(tmp_path: Path) -> None:
    w = tmp_path / "w.pth"
    w.write_bytes(b"not really weights")
    sha = hashlib.sha256(b"not really weights").hexdigest()
    base = {"name": "inception", "dims": 2048, "block": 3, "resize": 299,
            "preprocess": inc.RESIZE_MODES["legacy_pytorch"], "weights": sha, "autocast": None}
    assert inc.InceptionExtractor(weights=w).identity() == base
    assert inc.InceptionExtractor(weights=w, resize=False).identity() == {**base, "resize": None}
    assert inc.InceptionExtractor(weights=w, resize="clean").identity() == {
        **base, "preprocess": inc.RESIZE_MODES["clean"], "resize_mode": "clean"}
    assert inc.InceptionExtractor(weights=w, output="logits_unbiased", autocast="bfloat16").identity() == {
        **base, "output": "logits_unbiased", "autocast": "bfloat16"}
    assert inc.InceptionExtractor(weights=w, dims=64).identity() == {**base, "dims": 64, "block": 0}


def test_weights_path_warns_only_for_unpublished_weights(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    w = tmp_path / "w.pth"
    w.write_bytes(b"x")
    ex = inc.InceptionExtractor(weights=w)
    with caplog.at_level(logging.WARNING, logger="ganeval.features.inception"):
        assert ex.weights_path() == w
    assert "not the published FID weights" in caplog.text
    w.unlink()  # resolved once: not looked up again
    assert ex.weights_path() == w
    caplog.clear()
    w.write_bytes(b"x")
    monkeypatch.setattr(inc, "weights_sha256", lambda p: inc.PUBLISHED_SHA256_PREFIX + "0" * 56)
    with caplog.at_level(logging.WARNING, logger="ganeval.features.inception"):
        assert inc.InceptionExtractor(weights=w).weights_path() == w
    assert "not the published" not in caplog.text


# --------------------------------------------------------------------------- weights files
@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path / "hub"))
    monkeypatch.delenv(inc.WEIGHTS_ENV, raising=False)
    return tmp_path / "hub" / "checkpoints" / inc.WEIGHTS_FILENAME


def test_hub_path_and_download_into_a_new_folder(hub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert inc.hub_weights_path() == hub
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(torch.hub, "download_url_to_file", lambda url, dst, progress: calls.append((url, dst, progress)))
    inc._download("http://x/y", hub)  # two folders to create
    assert hub.parent.is_dir() and calls == [("http://x/y", str(hub), True)]
    inc._download("http://x/y", hub)  # the folder exists already
    assert len(calls) == 2


def test_resolve_weights_branches(hub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    downloads: list[Path] = []
    writes = [True]

    def fake(url: str, dst: Path) -> None:
        downloads.append(dst)
        if writes[0]:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(b"w")

    monkeypatch.setattr(inc, "_download", fake)
    with pytest.raises(inc.WeightsNotFoundError, match="download disabled"):
        inc.resolve_weights(download=False)
    assert downloads == []
    writes[0] = False
    with pytest.raises(inc.WeightsNotFoundError, match="download wrote nothing"):
        inc.resolve_weights()
    writes[0] = True
    assert inc.check_weights_available() == hub and downloads == [hub, hub]  # download by default
    assert inc.resolve_weights("") == hub and inc.resolve_weights(None) == hub
    arg = tmp_path / "arg.pth"
    arg.write_bytes(b"a")
    assert inc.resolve_weights(arg) == arg and inc.resolve_weights(str(arg)) == arg
    with pytest.raises(inc.WeightsNotFoundError, match="the `weights` argument"):
        inc.resolve_weights(tmp_path / "missing.pth")
    assert len(downloads) == 2


def test_weights_sha256_is_the_files_and_memoised(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    p.write_bytes(b"abc")
    want = hashlib.sha256(b"abc").hexdigest()
    assert inc.weights_sha256(p) == want and inc.weights_sha256(str(p)) == want


def test_load_state_dict_refuses_what_is_not_weights(tmp_path: Path) -> None:
    fix = inc.WRONG_WEIGHTS_FIX
    empty = tmp_path / "empty.pth"
    empty.write_bytes(b"")
    with pytest.raises(ValueError) as e:
        inc.load_state_dict(empty)
    assert str(e.value) == f"weights file {empty} cannot be read as PyTorch weights (EOFError): {fix}"
    zipbad = tmp_path / "zip.pth"
    zipbad.write_bytes(b"PK\x03\x04" + b"x" * 50)
    try:
        torch.load(zipbad, map_location="cpu", weights_only=True)
    except RuntimeError as err:
        first = str(err).strip().splitlines()[0]
    assert len(first) > 121
    with pytest.raises(ValueError) as e:
        inc.load_state_dict(zipbad)
    assert str(e.value) == f"weights file {zipbad} cannot be read as PyTorch weights ({first[:120]}): {fix}"
    obj = tmp_path / "obj.pth"
    torch.save({"w": torch.zeros(1), "f": Fraction(1, 2)}, obj)  # not loadable weights-only
    with pytest.raises(ValueError, match="not a weights-only torch.save file"):
        inc.load_state_dict(obj)
    lst = tmp_path / "list.pth"
    torch.save([torch.zeros(1)], lst)
    with pytest.raises(ValueError, match="does not hold a state dict"):
        inc.load_state_dict(lst)
    ok = tmp_path / "ok.pth"
    torch.save({"a": torch.arange(3)}, ok)
    assert inc.load_state_dict(ok)["a"].tolist() == [0, 1, 2]
    assert inc.load_state_dict(ok, mmap=True)["a"].tolist() == [0, 1, 2]


def test_loaded_architecture_refuses_foreign_state_dicts(sd: dict[str, torch.Tensor]) -> None:
    with pytest.raises(ValueError, match="not a FID Inception state dict"):
        inc.loaded_architecture({"conv.weight": torch.zeros(1)})
    net = inc.loaded_architecture(sd)
    assert not any(t.is_meta for t in net.parameters())
    assert torch.equal(net.Conv2d_1a_3x3.conv.weight, sd["Conv2d_1a_3x3.conv.weight"])
    no_fc = {k: v for k, v in sd.items() if not k.startswith("fc.")}
    with pytest.raises(ValueError, match="not a FID Inception state dict"):
        inc.loaded_architecture(no_fc)


def test_random_state_dict_draws_he_normal_convs_and_unit_batch_norms(sd: dict[str, torch.Tensor]) -> None:
    """The first draws of the seed's generator are Conv2d_1a's He-normal weights (fan-in 27), then its batch norm's
    bias (0.1·N(0, 1)); batch norms are the identity in scale; the classifier is N(0, 1/2048), bias 0."""
    g = G().manual_seed(0)
    w = torch.randn((32, 3, 3, 3), generator=g) * math.sqrt(2 / 27)
    b = 0.1 * torch.randn(32, generator=g)
    torch.testing.assert_close(sd["Conv2d_1a_3x3.conv.weight"], w, rtol=1e-6, atol=0)
    torch.testing.assert_close(sd["Conv2d_1a_3x3.bn.bias"], b, rtol=1e-6, atol=0)
    for k, v in sd.items():
        if k.endswith("bn.weight") or k.endswith("running_var"):
            assert torch.equal(v, torch.ones_like(v)), k
        elif k.endswith("running_mean"):
            assert torch.equal(v, torch.zeros_like(v)), k
    big = sd["Mixed_7c.branch3x3dbl_1.conv.weight"]  # 448×2048×1×1
    assert big.std().item() == pytest.approx(math.sqrt(2 / 2048), rel=0.02)
    assert sd["fc.weight"].std().item() == pytest.approx(2048 ** -0.5, rel=0.02)
    assert sd["Mixed_7c.branch_pool.bn.bias"].std().item() == pytest.approx(0.1, rel=0.2)


def test_random_and_saved_weights_use_seed_0_by_default(tmp_path: Path) -> None:
    saved = torch.load(inc.save_random_weights(tmp_path / "r.pth"), weights_only=True)
    again = inc.random_state_dict()
    g = G().manual_seed(0)
    w = torch.randn((32, 3, 3, 3), generator=g) * math.sqrt(2 / 27)
    for d in (saved, again):
        torch.testing.assert_close(d["Conv2d_1a_3x3.conv.weight"], w, rtol=1e-6, atol=0)
        assert torch.equal(d["fc.bias"], torch.zeros(1008))


# --------------------------------------------------------------------------- resize.py
def test_to_pil_of_uint8_float_and_gray_batches() -> None:
    from ganeval.features.resize import to_pil

    x = _u8((2, 3, 4, 5), 10)
    ims = to_pil(x)
    assert [im.size for im in ims] == [(5, 4)] * 2 and all(im.mode == "RGB" for im in ims)
    assert np.array_equal(np.asarray(ims[1]), x[1].permute(1, 2, 0).numpy())
    f = torch.rand(1, 3, 4, 5, generator=G().manual_seed(11))
    f[0, 0, 0, 0] = 0.0
    f[0, 1, 0, 0] = 1.0
    want = np.round(f[0].double().numpy() * 255).astype(np.uint8).transpose(1, 2, 0)
    assert np.array_equal(np.asarray(to_pil(f)[0]), want)
    gray = _u8((1, 1, 4, 5), 12)
    assert np.array_equal(np.asarray(to_pil(gray)[0]), np.repeat(gray[0].permute(1, 2, 0).numpy(), 3, axis=2))


def test_pil_resize_batch_is_pils_bicubic_per_image() -> None:
    from PIL import Image

    from ganeval.features.resize import pil_resize_batch

    x = _u8((2, 3, 6, 9), 13)
    got = pil_resize_batch(x, 4)
    assert got.shape == (2, 3, 4, 4) and got.dtype == torch.uint8
    for i in range(2):
        im = Image.fromarray(np.ascontiguousarray(x[i].permute(1, 2, 0).numpy())).resize((4, 4), Image.Resampling.BICUBIC)
        assert np.array_equal(got[i].permute(1, 2, 0).numpy(), np.asarray(im))


def _tf1_reference(x: np.ndarray, size: int) -> np.ndarray:
    """TF1 bilinear written out in float64: source = i·in/out, neighbours floor and floor+1 (clamped)."""
    h, w = x.shape[-2:]
    out = np.empty((*x.shape[:-2], size, size))
    for i in range(size):
        sy = i * h / size
        y0 = int(math.floor(sy))
        y1, fy = min(y0 + 1, h - 1), sy - y0
        for j in range(size):
            sx = j * w / size
            x0 = int(math.floor(sx))
            x1, fx = min(x0 + 1, w - 1), sx - x0
            top = x[..., y0, x0] + (x[..., y0, x1] - x[..., y0, x0]) * fx
            bot = x[..., y1, x0] + (x[..., y1, x1] - x[..., y1, x0]) * fx
            out[..., i, j] = top + (bot - top) * fy
    return out


@pytest.mark.parametrize(("hw", "size"), [((2, 3), 4), ((5, 7), 3), ((3, 2), 5)])
def test_tf1_bilinear_against_the_formula(hw: tuple[int, int], size: int) -> None:
    from ganeval.features.resize import tf1_bilinear

    x = torch.rand(2, 3, *hw, generator=G().manual_seed(14), dtype=torch.float64) * 255
    got = tf1_bilinear(x, size)
    assert got.shape == (2, 3, size, size)
    np.testing.assert_allclose(got.numpy(), _tf1_reference(x.numpy(), size), rtol=0, atol=1e-4)


def test_tf1_bilinear_of_a_2x2_upsampled_to_4() -> None:
    from ganeval.features.resize import tf1_bilinear

    x = torch.tensor([[0.0, 8.0], [16.0, 24.0]]).view(1, 1, 2, 2)
    row = [[0, 4, 8, 8], [8, 12, 16, 16], [16, 20, 24, 24], [16, 20, 24, 24]]
    assert tf1_bilinear(x, 4)[0, 0].tolist() == row


def test_resizes_refuse_integer_images() -> None:
    from ganeval.features.resize import antialiased_bilinear, tf1_bilinear

    for fn in (tf1_bilinear, antialiased_bilinear):
        with pytest.raises(ValueError, match="takes float images"):
            fn(torch.zeros(1, 3, 4, 4, dtype=torch.uint8), 2)
        assert fn(torch.zeros(1, 3, 4, 4), 2).shape == (1, 3, 2, 2)


def test_antialiased_bilinear_is_torchs_antialiased_half_pixel_resize() -> None:
    from ganeval.features.resize import antialiased_bilinear

    x = torch.rand(1, 3, 12, 9, generator=G().manual_seed(15)) * 255
    for size in (4, 17):
        want = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False, antialias=True)
        assert torch.equal(antialiased_bilinear(x, size), want)
        for other in (dict(align_corners=True, antialias=True), dict(align_corners=False, antialias=False)):
            if size == 4 or other["align_corners"]:
                assert not torch.allclose(F.interpolate(x, size=(size, size), mode="bilinear", **other), want)


def test_pil_float_bicubic_is_clean_fids_resize_clipped() -> None:
    from cleanfid.resize import make_resizer

    from ganeval.features.resize import pil_float_bicubic

    x = torch.zeros(2, 3, 8, 10, dtype=torch.uint8)
    x[:, :, :, 5:] = 255  # a step: bicubic over/undershoots, clipped to exactly 0 and 255
    x[1, 1] = _u8((8, 10), 16)
    got = pil_float_bicubic(x, 13)
    assert got.shape == (2, 3, 13, 13) and got.dtype == torch.float32
    assert float(got.min()) == 0.0 and float(got.max()) == 255.0
    resize = make_resizer("PIL", False, "bicubic", (13, 13))
    for i in range(2):
        want = resize(x[i].permute(1, 2, 0).numpy())  # H×W×3 in, H×W×3 float32 out
        np.testing.assert_array_equal(got[i].permute(1, 2, 0).numpy(), want)
    gray = _u8((1, 1, 8, 10), 17)
    g = pil_float_bicubic(gray, 5)
    assert g.shape == (1, 3, 5, 5) and torch.equal(g[0, 0], g[0, 2])
    f = torch.rand(1, 3, 8, 10, generator=G().manual_seed(18))
    f[0, :, 0, 0] = 0.0
    f[0, :, 0, 1] = 1.0
    u = torch.from_numpy(np.round(f.double().numpy() * 255).astype(np.uint8))
    assert torch.equal(pil_float_bicubic(f, 6), pil_float_bicubic(u, 6))
    assert torch.equal(pil_float_bicubic(u.permute(0, 2, 3, 1), 6), pil_float_bicubic(u, 6))  # NHWC


def test_pixels_255_values() -> None:
    from ganeval.features.resize import pixels_255

    x = torch.arange(256, dtype=torch.uint8).view(1, 1, 16, 16).expand(1, 3, 16, 16)
    assert torch.equal(pixels_255(x), x.float())
    f = torch.rand(1, 3, 4, 4, generator=G().manual_seed(19))
    torch.testing.assert_close(pixels_255(f), f * 255, rtol=1e-6, atol=0)
    g = pixels_255(torch.full((2, 1, 3, 3), 7, dtype=torch.uint8))
    assert g.shape == (2, 3, 3, 3) and bool((g == 7).all())


# --------------------------------------------------------------------------- simple.py
def test_pixels_options_edges() -> None:
    from ganeval.features.simple import PixelsExtractor

    for name in ("size", "max_size"):
        assert getattr(PixelsExtractor(**{name: 1}), name) == 1
        for bad in (0, -1, True, 2.0, "4"):
            with pytest.raises(ValueError, match=f"{name} must be a positive int or None"):
                PixelsExtractor(**{name: bad})
    ex = PixelsExtractor()
    assert (ex.size, ex.max_size, ex.channels) == (None, None, None)
    with pytest.raises(ValueError, match="not both"):
        PixelsExtractor(size=4, max_size=4)
    for c in (None, 1, 3):
        assert PixelsExtractor(channels=c).channels == c
    for bad in (0, 2, 4):
        with pytest.raises(ValueError, match="channels must be None, 1 or 3"):
            PixelsExtractor(channels=bad)


def test_pixels_identity_side_and_feature_dim() -> None:
    from ganeval.features.simple import PixelsExtractor

    assert PixelsExtractor().identity() == {"name": "pixels", "size": None, "channels": None, "scale": "x/255"}
    assert PixelsExtractor(max_size=5, channels=1).identity() == {
        "name": "pixels", "size": None, "channels": 1, "scale": "x/255", "max_size": 5}
    s, m, n = PixelsExtractor(size=8), PixelsExtractor(max_size=20), PixelsExtractor()
    assert (s.side(8, 8), s.side(8, 9), s.side(4, 4)) == (None, 8, 8)
    assert (m.side(20, 20), m.side(21, 5), m.side(10, 30), m.side(3, 4)) == (None, 20, 20, None)
    assert n.side(100, 7) is None
    assert n.feature_dim((10, 3, 8, 6)) == 144 and n.feature_dim((10, 8, 6, 3)) == 144  # NCHW and NHWC
    assert n.feature_dim((10, 8, 6)) == 48  # gray N×H×W
    assert PixelsExtractor(channels=1).feature_dim((10, 3, 8, 6)) == 48
    assert PixelsExtractor(channels=3).feature_dim((10, 8, 6)) == 144
    assert s.feature_dim((10, 3, 5, 7)) == 192 and m.feature_dim((2, 1, 30, 10)) == 400


def test_pixels_values_channels_and_resize() -> None:
    from ganeval.features.simple import PixelsExtractor

    x = _u8((2, 3, 6, 10), 20)
    f = x.double() / 255
    np.testing.assert_allclose(PixelsExtractor()(x).numpy(), f.reshape(2, -1).numpy(), rtol=0, atol=1e-7)
    one = PixelsExtractor(channels=1)(x)
    np.testing.assert_allclose(one.numpy(), f.mean(1).reshape(2, -1).numpy(), rtol=0, atol=1e-6)
    gray = _u8((2, 1, 6, 10), 21)
    assert torch.equal(PixelsExtractor(channels=1)(gray), PixelsExtractor()(gray))
    three = PixelsExtractor(channels=3)(gray)
    assert three.shape == (2, 180) and torch.equal(three[:, :60], three[:, 120:])
    for ex, side in ((PixelsExtractor(size=4, channels=1), 4), (PixelsExtractor(max_size=5), 5)):
        src = f.mean(1, keepdim=True) if ex.channels == 1 else f
        want = F.interpolate(src.float(), size=(side, side), mode="bilinear", align_corners=False, antialias=True)
        got = ex(x)
        assert got.shape == (2, want[0].numel()) and got.dtype == torch.float32
        torch.testing.assert_close(got, want.reshape(2, -1), rtol=0, atol=1e-6)


def test_identity_extractor_rows_dtypes_and_float32_range() -> None:
    from ganeval.features.base import Extractor
    from ganeval.features.simple import IdentityExtractor

    ex = IdentityExtractor()
    assert ex.images is False and ex.cacheable is False and ex.outputs is None and Extractor.images is True
    ex.check_input((5, 2), torch.float32)  # rows, not images
    assert ex.feature_dim((10, 2, 3)) == 6 and ex.feature_dim((4, 7)) == 7
    x = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4)
    got = ex(x)
    assert got.shape == (2, 12) and got.dtype == torch.float32 and got[1, 0].item() == 12.0
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16):
        assert ex(torch.ones(2, 3, dtype=dt)).tolist() == [[1.0] * 3] * 2
    for dt in (torch.bool, torch.complex64):
        with pytest.raises(ValueError, match="features must be numeric"):
            ex(torch.ones(2, 3, dtype=dt))
    with pytest.raises(ValueError, match="beyond float32's range"):
        ex(torch.tensor([[1e39, 1.0]], dtype=torch.float64))
    assert ex(torch.tensor([[math.inf, 1.0]], dtype=torch.float64))[0, 0].item() == math.inf  # already not finite
    assert ex(torch.zeros(2, 0, dtype=torch.float64)).shape == (2, 0)


# --------------------------------------------------------------------------- base.py
class _Rows(Extractor_ := __import__("ganeval.features.base", fromlist=["Extractor"]).Extractor):  # type: ignore[misc]
    images = False

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        return batch.float()


def test_extractor_defaults_check_input_and_host_work() -> None:
    from ganeval.features.base import Extractor

    class Plain(Extractor):
        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            return batch.float()

    class Hosted(Plain):
        def host_stage(self, batch: torch.Tensor) -> torch.Tensor:
            return batch

    p = Plain()
    assert p.images is True and p.cacheable is True and p.outputs == "features" and p.feature_dim((1, 2)) is None
    assert p.host_work() is False and Hosted().host_work() is True
    assert p.identity() == {"name": "extractor"}
    b = torch.zeros(2, 3, 4, 4)
    assert p.host_stage(b) is b and torch.equal(p.device_stage(b), b)
    p.check_input((2, 3, 4, 4), torch.uint8)
    r = _Rows()
    r.check_input((5, 1), torch.float32)  # one feature per row: the least legal rank
    with pytest.raises(ValueError, match="features must be N×D"):
        r.check_input((5,), torch.float32)


def test_registry_entries_and_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from ganeval.features import base
    from ganeval.features.simple import PixelsExtractor

    monkeypatch.setattr(base, "REGISTRY", dict(base.REGISTRY))
    spaces = dict(base.FEATURE_SPACES)
    monkeypatch.setattr(base, "FEATURE_SPACES", spaces)

    @base.register("sweep_plain")
    class Plain(_Rows):
        pass

    @base.register("sweep_named", weights=True, dims=[3.0], resize=["a", "b"])  # type: ignore[list-item]
    class Named(_Rows):
        fd_name = "CustomSpace"

    e = base.extractor_entry("sweep_plain")
    assert (e.cls, e.options, e.dims, e.resize, e.weights, e.help) == (Plain, {}, (), (), False, "")
    assert Plain.name == "sweep_plain" and spaces["sweep_plain"] == "sweep_plain"
    n = base.extractor_entry("sweep_named")
    assert (n.dims, n.resize, n.weights) == ((3,), ("a", "b"), True) and spaces["sweep_named"] == "CustomSpace"
    with pytest.raises(dataclasses.FrozenInstanceError):
        n.weights = False  # type: ignore[misc]
    assert base.ExtractorEntry("x", Plain).weights is False
    base.add_variant("sweep_variant", PixelsExtractor)
    v = base.extractor_entry("sweep_variant")
    assert v.options == {} and v.weights is False and isinstance(v.make(size=3), PixelsExtractor)
    base.add_variant("sweep_p4", PixelsExtractor, {"size": 4})
    assert base.get_extractor("sweep_p4").size == 4  # type: ignore[attr-defined]
    for bad in ("nope", 5, None):
        with pytest.raises(ValueError, match="extractor must be one of"):
            base.extractor_entry(bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="extractor must be one of"):
            base.get_extractor(bad)  # type: ignore[arg-type]


def test_get_extractor_names_and_instances() -> None:
    from ganeval.features.base import get_extractor
    from ganeval.features.simple import PixelsExtractor

    px = PixelsExtractor()
    assert get_extractor(px) is px
    with pytest.raises(ValueError, match="only when the extractor is given by name"):
        get_extractor(px, weights="w.pth")
    with pytest.raises(ValueError, match="only when the extractor is given by name"):
        get_extractor(px, size=3)
    assert isinstance(get_extractor("pixels"), PixelsExtractor)
    assert get_extractor("pixels", size=3).size == 3  # type: ignore[attr-defined]
    assert get_extractor("inception", weights="w.pth").weights == "w.pth"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="bad options for extractor 'pixels'"):
        get_extractor("pixels", weights="w.pth")


# --------------------------------------------------------------------------- dinov2.py
def test_dinov2_widths_and_patches_are_timms() -> None:
    """DIMS and the weights check's patch-embedding shape are timm's own models' (built on the meta device)."""
    timm = pytest.importorskip("timm")
    from ganeval.features import dinov2

    with torch.device("meta"):
        for arch, name in dinov2.ARCHS.items():
            m = timm.create_model(name, img_size=224, num_classes=0)
            assert dinov2.DIMS[arch] == m.num_features, arch
            assert tuple(m.patch_embed.proj.weight.shape) == (dinov2.DIMS[arch], 3, 14, 14)
    assert dinov2.timm_name("vitb14") == "vit_base_patch14_dinov2.lvd142m"
    with pytest.raises(ValueError, match="arch must be one of"):
        dinov2.timm_name("vitx14")


def test_dinov2_preprocessing_of_constant_images_uses_timms_mean_and_std() -> None:
    timm = pytest.importorskip("timm")
    from ganeval.features import dinov2

    cfg = timm.models.get_pretrained_cfg(dinov2.ARCHS["vitl14"])
    mean, std = np.array(cfg.mean), np.array(cfg.std)
    x = torch.tensor([0, 255, 51], dtype=torch.uint8).view(3, 1, 1, 1).expand(3, 3, 30, 20).contiguous()
    for fn in (dinov2.preprocess, dinov2.preprocess_torch):
        y = fn(x)
        assert y.shape == (3, 3, 224, 224) and y.dtype == torch.float32
        for i, v in enumerate((0.0, 1.0, 0.2)):
            want = (v - mean) / std
            np.testing.assert_allclose(y[i].mean((1, 2)).numpy(), want, rtol=0, atol=2e-5)
            np.testing.assert_allclose(y[i].std((1, 2)).numpy(), 0, atol=2e-5)


def _fake_dinov2_file(path: Path, width: int, patch: int = 14) -> Path:
    torch.save({"patch_embed.proj.weight": torch.zeros(width, 3, patch, patch), "cls_token": torch.zeros(1)}, path)
    return path


def test_dinov2_weights_check_and_default_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("timm")
    from ganeval.features import dinov2

    good = _fake_dinov2_file(tmp_path / "s.pth", 384)
    assert dinov2.resolve_weights("vits14", good) == good
    for bad in (_fake_dinov2_file(tmp_path / "b.pth", 384, 15), _fake_dinov2_file(tmp_path / "l.pth", 1024)):
        with pytest.raises(ValueError, match="does not hold DINOv2 vits14 weights"):
            dinov2.resolve_weights("vits14", bad)
    seen: list[bool] = []
    monkeypatch.setattr(dinov2, "resolve_hub_weights", lambda *a: (seen.append(a[-1]), good)[1])
    assert dinov2.resolve_weights("vits14") == good and seen == [True]


def test_dinov2_build_is_a_frozen_headless_timm_model_loading_the_file(tmp_path: Path) -> None:
    timm = pytest.importorskip("timm")
    from ganeval.features import dinov2

    torch.manual_seed(0)
    m = dinov2.build("vits14")
    assert not m.training and not any(p.requires_grad for p in m.parameters())
    with torch.no_grad():
        assert m(torch.zeros(1, 3, 224, 224)).shape == (1, 384)  # num_classes=0: the class token, no head
    sd = timm.create_model(dinov2.ARCHS["vits14"], img_size=224, num_classes=0).state_dict()
    f = tmp_path / "w.pth"
    torch.save(sd, f)
    loaded = dinov2.build("vits14", f)
    assert torch.equal(loaded.state_dict()["blocks.0.attn.qkv.weight"], sd["blocks.0.attn.qkv.weight"])


def test_dinov2_extractor_options_identity_and_stages(tmp_path: Path) -> None:
    pytest.importorskip("timm")
    from ganeval.features import dinov2
    from ganeval.features.base import extractor_entry

    e = extractor_entry("dinov2")
    assert e.dims == (1024,) and e.weights is True and e.resize == ("pil", "torch")
    ex = dinov2.DinoV2Extractor()
    assert (ex.arch, ex.weights, ex.download, ex.resize_mode) == ("vitl14", None, True, "pil")
    assert ex.feature_dim((1, 3, 8, 8)) == 1024
    with pytest.raises(ValueError, match="resize must be one of pil, torch"):
        dinov2.DinoV2Extractor(resize="clean")
    with pytest.raises(ValueError, match="arch must be one of"):
        dinov2.DinoV2Extractor(arch="vit")
    w = _fake_dinov2_file(tmp_path / "w.pth", 384)
    base = {"name": "dinov2", "model": dinov2.ARCHS["vits14"], "weights": inc.weights_sha256(w),
            "preprocess": dinov2.RESIZE_MODES["pil"]}
    pil = dinov2.DinoV2Extractor("vits14", weights=w)
    tor = dinov2.DinoV2Extractor("vits14", weights=w, resize="torch")
    assert pil.identity() == base
    assert tor.identity() == {**base, "preprocess": dinov2.RESIZE_MODES["torch"], "resize_mode": "torch"}
    x = _u8((2, 3, 20, 30), 22)
    for ex, want in ((pil, dinov2.preprocess(x)), (tor, dinov2.preprocess_torch(x))):
        ex._model, ex._device = torch.nn.Identity(), torch.device("cpu")  # the network's input itself
        h = ex.host_stage(x)
        if ex is tor:
            assert h is x  # torch mode: everything on the device
        else:
            assert h.dtype == torch.uint8 and torch.equal(h, dinov2.pil_resize_batch(x, 224))
        assert torch.equal(ex.device_stage(h), want)
        assert torch.equal(ex(x), want)


# --------------------------------------------------------------------------- clip.py
def test_clip_pretrained_cfg_and_its_errors() -> None:
    open_clip = pytest.importorskip("open_clip")
    from ganeval.features import clip

    cfg = clip.pretrained_cfg("ViT-L-14", "openai")
    assert cfg["quick_gelu"] is True and cfg["mean"] == open_clip.constants.OPENAI_DATASET_MEAN
    with pytest.raises(ValueError, match="arch must be an open_clip model name"):
        clip.pretrained_cfg("ViT-Q-99", "openai")
    tags = sorted(t for a, t in open_clip.list_pretrained() if a == "ViT-B-32")
    with pytest.raises(ValueError) as e:
        clip.pretrained_cfg("ViT-B-32", "nope")
    assert str(e.value) == f"pretrained='nope' is not a tag of ViT-B-32 in open_clip; its tags: {tags}"
    with pytest.raises(ValueError, match="not a tag of ViT-L-14"):
        clip.ClipExtractor(pretrained="laion2b_nope")


def test_clip_build_passes_open_clip_the_tags_activation_and_file(monkeypatch: pytest.MonkeyPatch) -> None:
    open_clip = pytest.importorskip("open_clip")
    from ganeval.features import clip

    calls: list[tuple[str, dict[str, Any]]] = []
    net = torch.nn.Linear(2, 2).train()

    def fake(arch: str, **kw: Any) -> tuple[Any, Any, Any]:
        calls.append((arch, kw))
        return net, None, "pre"

    monkeypatch.setattr(open_clip, "create_model_and_transforms", fake)
    model, pre = clip.build("ViT-L-14", "openai")
    assert model is net and pre == "pre" and not net.training and not any(p.requires_grad for p in net.parameters())
    clip.build("ViT-B-32", "laion2b_s34b_b79k", Path("/x/w.bin"))
    assert calls == [("ViT-L-14", {"pretrained": None, "force_quick_gelu": True}),
                     ("ViT-B-32", {"pretrained": "/x/w.bin", "force_quick_gelu": False})]


def test_clip_weights_check_and_default_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("open_clip")
    from ganeval.features import clip
    from ganeval.features.base import extractor_entry

    good = tmp_path / "c.pth"
    torch.save({"logit_scale": torch.tensor(1.0)}, good)
    assert clip.resolve_weights("ViT-L-14", "openai", good) == good
    bad = tmp_path / "b.pth"
    torch.save({"visual.proj": torch.zeros(2)}, bad)
    with pytest.raises(ValueError, match="does not hold CLIP ViT-L-14 weights"):
        clip.resolve_weights("ViT-L-14", "openai", bad)
    seen: list[tuple[Any, ...]] = []
    monkeypatch.setattr(clip, "resolve_hub_weights", lambda *a: (seen.append(a), good)[1])
    assert clip.resolve_weights("ViT-L-14", "openai") == good
    assert seen[0][1] == "timm/vit_large_patch14_clip_224.openai" and seen[0][-1] is True
    ex = clip.ClipExtractor()
    assert (ex.arch, ex.pretrained, ex.weights, ex.download) == ("ViT-L-14", "openai", None, True)
    assert ex.feature_dim((1, 3, 8, 8)) == 768
    e = extractor_entry("clip")
    assert e.dims == (768,) and e.weights is True


class _Encoder(torch.nn.Module):
    def encode_image(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1)


def _open_clip_like_transform() -> Any:
    from torchvision import transforms as T

    def _convert_to_rgb(im: Any) -> Any:
        return im.convert("RGB")

    return T.Compose([T.Resize(6, interpolation=T.InterpolationMode.BICUBIC), T.CenterCrop(6), _convert_to_rgb,
                      T.ToTensor(), T.Normalize((0.48145466, 0.4578275, 0.40821073),
                                                (0.26862954, 0.26130258, 0.27577711))])


def test_clip_host_stops_at_uint8_and_device_normalises_as_the_transform(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("open_clip")
    from ganeval.features import clip, normtable
    from ganeval.features.resize import to_pil

    ex = clip.ClipExtractor()
    pre = _open_clip_like_transform()
    built: list[bool] = []

    def fake_build() -> torch.nn.Module:
        built.append(True)
        ex._preprocess = pre
        return _Encoder()

    monkeypatch.setattr(ex, "build", fake_build)
    x = _u8((2, 3, 9, 7), 23)
    h = ex.host_stage(x)  # builds the network (and its transform) first
    assert built == [True] and h.dtype == torch.uint8 and h.shape == (2, 3, 6, 6)
    want = torch.stack([pre(im) for im in to_pil(x)])
    for i, im in enumerate(to_pil(x)):
        assert np.array_equal(h[i].permute(1, 2, 0).numpy(), np.asarray(pre.transforms[1](pre.transforms[0](im))))
    ex.host_stage(x)
    assert built == [True]  # the transform is kept
    ex._device = torch.device("cpu")
    got = ex.device_stage(h)
    torch.testing.assert_close(got, want.flatten(1), rtol=0, atol=1e-6)
    assert ex._table is not None  # kept for devices other than the CPU: the transform's mean and std
    assert torch.equal(ex._table, normtable.table(pre.transforms[-1].mean, pre.transforms[-1].std))
    torch.testing.assert_close(ex.device_stage(want), want.flatten(1), rtol=0, atol=0)  # floats pass through
    split = ex._split()
    assert split is not None and split[1] == pre.transforms[-1].mean and split[2] == pre.transforms[-1].std
    assert len(split[0].transforms) == 3


def test_clip_split_refuses_transforms_that_do_not_end_in_to_tensor_and_3_channel_normalize() -> None:
    pytest.importorskip("open_clip")
    from torchvision import transforms as T

    from ganeval.features import clip

    ex = clip.ClipExtractor()
    n3 = T.Normalize((0.5, 0.5, 0.5), (0.2, 0.2, 0.2))
    for steps in ([T.CenterCrop(4), T.ToTensor(), n3, T.CenterCrop(2)], [T.CenterCrop(4), n3, T.ToTensor()],
                  [T.ToTensor(), T.Normalize((0.5,), (0.2,))], [n3]):
        ex._preprocess = T.Compose(steps)
        assert ex._split() is None
    ex._preprocess = T.Compose([T.ToTensor(), n3])
    assert ex._split() is not None


class ToTensor:
    """A to-tensor step (named as open_clip's) for a PIL part that ends in gray 'L' images: 3 equal channels."""

    def __call__(self, im: Any) -> torch.Tensor:
        t = torch.from_numpy(np.asarray(im, dtype=np.float32) / 255)
        return t.expand(3, *t.shape).contiguous()


def test_clip_host_stage_falls_back_to_the_whole_transform_when_its_pil_part_is_not_rgb() -> None:
    pytest.importorskip("open_clip")
    from torchvision import transforms as T

    from ganeval.features import clip
    from ganeval.features.resize import to_pil

    ex = clip.ClipExtractor()
    ex._preprocess = T.Compose([T.Grayscale(1), ToTensor(), T.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
    x = _u8((2, 3, 5, 4), 24)
    h = ex.host_stage(x)
    assert h.dtype == torch.float32 and h.shape == (2, 3, 5, 4)
    assert torch.equal(h, torch.stack([ex._preprocess(im) for im in to_pil(x)]))
