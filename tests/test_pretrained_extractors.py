"""DINOv2 (timm) and CLIP (open_clip) extractors: parity with the library's own forward on the same
random-weight model loaded through the real loading path, weight resolution and identity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from ganeval.features import WeightsNotFoundError, extract, get_extractor
from ganeval.features.pretrained import resolve_library_weights

pytestmark = pytest.mark.slow  # builds ViT-S/14 and ViT-B/32 with random weights (~30 s quiet)

timm = pytest.importorskip("timm")
open_clip = pytest.importorskip("open_clip")


def images(n: int, c: int, h: int, w: int, seed: int) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).integers(0, 256, (n, c, h, w), dtype=np.uint8))


SHAPES = [(1, 8, 8), (3, 32, 32), (3, 40, 56)]  # gray 8 px (sklearn digits), CIFAR-like, non-square


@pytest.fixture(scope="module")
def dinov2_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, torch.nn.Module]:
    torch.manual_seed(0)
    model = timm.create_model("vit_small_patch14_dinov2.lvd142m", img_size=224, num_classes=0).eval()
    path = tmp_path_factory.mktemp("dinov2") / "random_vits14.pth"
    torch.save(model.state_dict(), path)
    return path, model


@pytest.fixture(scope="module")
def clip_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, torch.nn.Module, object]:
    torch.manual_seed(0)
    model, _, preprocess = open_clip.create_model_and_transforms("ViT-B-32", force_quick_gelu=True)
    path = tmp_path_factory.mktemp("clip") / "random_vitb32.pt"
    torch.save(model.state_dict(), path)
    return path, model.eval(), preprocess


def pil_images(x: torch.Tensor) -> list:
    from PIL import Image

    a = x.numpy()
    if a.shape[1] == 1:
        a = np.repeat(a, 3, axis=1)
    return [Image.fromarray(np.ascontiguousarray(im.transpose(1, 2, 0))) for im in a]


@pytest.mark.parametrize("shape", SHAPES)
def test_dinov2_equals_timm_forward(dinov2_file: tuple[Path, torch.nn.Module], shape: tuple[int, int, int]) -> None:
    from torchvision import transforms as T

    path, model = dinov2_file
    x = images(3, *shape, seed=shape[1])
    ex = get_extractor("dinov2", arch="vits14", weights=str(path))
    ours = ex(x)
    # the extraction loop splits the work (host stage: resizing; device stage: forward): the same features
    staged = torch.from_numpy(extract(x, ex, batch_size=2, device="cpu", progress=False))
    # dgm-eval's recipe, written independently: PIL bicubic to 224×224, to [0, 1], ImageNet mean/std
    ref_t = T.Compose([T.Resize((224, 224), interpolation=T.InterpolationMode.BICUBIC), T.ToTensor(),
                       T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    with torch.inference_mode():
        ref = model(torch.stack([ref_t(im) for im in pil_images(x)]))
    assert ours.shape == (3, 384) and ours.dtype == torch.float32
    torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(staged, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES)
def test_clip_equals_open_clip_forward(clip_file: tuple[Path, torch.nn.Module, object], shape: tuple[int, int, int]) -> None:
    path, model, preprocess = clip_file
    x = images(3, *shape, seed=10 + shape[1])
    ex = get_extractor("clip", arch="ViT-B-32", pretrained="openai", weights=str(path))
    ours = ex(x)
    staged = torch.from_numpy(extract(x, ex, batch_size=2, device="cpu", progress=False))
    with torch.inference_mode():
        ref = model.encode_image(torch.stack([preprocess(im) for im in pil_images(x)]))
    assert ours.shape == (3, 512)
    torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(staged, ref, rtol=1e-5, atol=1e-5)


def test_float_images_match_their_uint8(dinov2_file: tuple[Path, torch.nn.Module]) -> None:
    path, _ = dinov2_file
    x = images(2, 3, 16, 16, seed=3)
    ex = get_extractor("dinov2", arch="vits14", weights=str(path))
    torch.testing.assert_close(ex(x.float() / 255), ex(x), rtol=0, atol=0)


def test_identity_names_model_and_weights(dinov2_file: tuple[Path, torch.nn.Module], tmp_path: Path) -> None:
    from ganeval.hashing import sha256_file

    path, model = dinov2_file
    ident = get_extractor("dinov2", arch="vits14", weights=str(path)).identity()
    assert ident["name"] == "dinov2" and ident["model"] == "vit_small_patch14_dinov2.lvd142m"
    assert ident["weights"] == sha256_file(path)  # full SHA-256 (16 digits before)
    other = tmp_path / "other.pth"
    sd = {k: v.clone() for k, v in model.state_dict().items()}
    sd["norm.weight"] += 1
    torch.save(sd, other)
    assert get_extractor("dinov2", arch="vits14", weights=str(other)).identity()["weights"] != ident["weights"]


def test_default_models_exist_in_the_libraries() -> None:
    from ganeval.features.clip import ClipExtractor, pretrained_cfg
    from ganeval.features.dinov2 import DinoV2Extractor, timm_name

    assert timm_name(DinoV2Extractor().arch) in timm.list_models(pretrained=True)
    cfg = pretrained_cfg(ClipExtractor().arch, ClipExtractor().pretrained)
    assert cfg["hf_hub"] and cfg.get("quick_gelu") is True  # OpenAI's CLIP uses QuickGELU


def test_missing_weights_say_where_they_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GANEVAL_DINOV2_WEIGHTS", raising=False)
    monkeypatch.setattr("ganeval.features.pretrained.hub_cached", lambda repo, files: None)
    ex = get_extractor("dinov2", arch="vits14", download=False)
    with pytest.raises(WeightsNotFoundError, match="GANEVAL_DINOV2_WEIGHTS") as e:
        ex.identity()
    assert "download: disabled" in str(e.value) and "timm.create_model" in str(e.value)
    with pytest.raises(WeightsNotFoundError, match="no such file"):
        get_extractor("clip", weights=str(tmp_path / "absent.bin")).identity()
    monkeypatch.setenv("GANEVAL_CLIP_WEIGHTS", str(tmp_path / "absent.bin"))
    with pytest.raises(WeightsNotFoundError, match="GANEVAL_CLIP_WEIGHTS"):
        get_extractor("clip").identity()


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arg, env, cached, fetched = (tmp_path / n for n in ("arg", "env", "cached", "fetched"))
    for p in (arg, env, cached, fetched):
        p.write_bytes(b"w")
    monkeypatch.setenv("X_W", str(env))

    def resolve(weights: object, hit: Path | None, download: bool = True) -> Path:
        return resolve_library_weights("X", weights, "X_W", lambda: hit, lambda: fetched, "manual", download)

    assert resolve(arg, cached) == arg
    assert resolve(None, cached) == env
    monkeypatch.delenv("X_W")
    assert resolve(None, cached) == cached
    assert resolve(None, None) == fetched
    with pytest.raises(WeightsNotFoundError, match="manual"):
        resolve(None, None, download=False)

    def offline() -> Path:
        raise OSError("no network")

    with pytest.raises(WeightsNotFoundError, match="download failed.*no network"):
        resolve_library_weights("X", None, "X_W", lambda: None, offline, "manual")


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="arch must be one of"):
        get_extractor("dinov2", arch="vitx99")
    with pytest.raises(ValueError, match="not a tag"):
        get_extractor("clip", arch="ViT-L-14", pretrained="no-such-tag")


def test_dinov2_table_normalisation_is_exact(dinov2_file: tuple[Path, torch.nn.Module]) -> None:
    """The uint8 host stage + table lookup on the device gives the float input of before bit for bit, so the
    features are those of the network on `preprocess(x)` (the float host stage workers used to pass on)."""
    from ganeval.features.dinov2 import SIZE, normalise, normalise_by_table, normalise_table, preprocess

    every = torch.arange(256, dtype=torch.uint8).repeat(3 * 4 * 4 * 2)[: 2 * 3 * 16 * 16].view(2, 3, 16, 16)
    every = torch.cat([every, torch.randint(0, 256, (5, 3, 16, 16), dtype=torch.uint8,
                                            generator=torch.Generator().manual_seed(1))])
    assert torch.equal(normalise_by_table(every), normalise(every))  # the GPU's path, run here
    assert torch.equal(normalise_table(every), normalise(every))
    x = every.float().div(255)  # the formula of before, out of place: the same bits as the in-place one
    assert torch.equal(normalise(every), (x - torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
                       / torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
    path, model = dinov2_file
    ex = get_extractor("dinov2", arch="vits14", weights=str(path))
    x = images(4, 3, 40, 30, seed=7)
    host = ex.host_stage(x)
    assert host.dtype == torch.uint8 and host.shape == (4, 3, SIZE, SIZE)
    with torch.inference_mode():
        want = model(preprocess(x)).float()
        halves = torch.cat([model(preprocess(x[:2])), model(preprocess(x[2:]))])
    assert torch.equal(ex(x), want)
    assert torch.equal(torch.from_numpy(extract(x, ex, batch_size=2, device="cpu", progress=False)), halves)


def test_clip_uint8_host_stage_is_exact(clip_file: tuple[Path, torch.nn.Module, object]) -> None:
    """CLIP's workers stop at uint8 224² (open_clip's PIL steps), ToTensor + Normalize by `normtable` on the device:
    the network's input is open_clip's transform output bit for bit, by the CPU path and by the table."""
    from ganeval.features import normtable

    path, model, preprocess = clip_file
    ex = get_extractor("clip", arch="ViT-B-32", pretrained="openai", weights=str(path))
    x = images(3, 3, 40, 56, seed=21)
    host = ex.host_stage(x)
    assert host.dtype == torch.uint8 and host.shape == (3, 3, 224, 224)
    want = torch.stack([preprocess(im) for im in pil_images(x)])
    _, mean, std = ex._split()
    assert torch.equal(normtable.normalise(host, mean, std), want)
    assert torch.equal(normtable.lookup(host, normtable.table(mean, std)), want)  # the GPU's path, run here
    with torch.inference_mode():
        ref = model.encode_image(want).float()
    assert torch.equal(ex(x), ref)
