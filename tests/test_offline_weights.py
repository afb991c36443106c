"""DINOv2 and CLIP weights offline (issue #39): an unreachable hub is found in seconds, without the hub client's
minute of retries, the error names the extractor (not the FID Inception), and a file of another network given as
the weights is refused in one line before any network is built."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ganeval.features import WeightsNotFoundError
from ganeval.features import pretrained
from ganeval.features.inception import save_random_weights

timm = pytest.importorskip("timm")
huggingface_hub = pytest.importorskip("huggingface_hub")


@pytest.fixture
def unreachable_hub(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The hub's endpoint on a local port that refuses connections, the hub client itself replaced by a recorder."""
    from huggingface_hub import constants

    calls: list[str] = []
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda repo, name, **k: calls.append(name))
    monkeypatch.setattr(pretrained, "hub_cached", lambda repo, files: None)
    monkeypatch.delenv("GANEVAL_DINOV2_WEIGHTS", raising=False)
    return calls


def test_unreachable_hub_is_refused_without_trying_each_file(unreachable_hub: list[str]) -> None:
    from ganeval.features.dinov2 import resolve_weights

    with pytest.raises(WeightsNotFoundError) as e:
        resolve_weights("vitl14", None, download=True)
    assert unreachable_hub == []  # the hub client (with its retries) never ran
    assert e.value.what == "DINOv2 vitl14 (vit_large_patch14_dinov2.lvd142m)" and e.value.env == "GANEVAL_DINOV2_WEIGHTS"
    assert e.value.url == "https://huggingface.co/timm/vit_large_patch14_dinov2.lvd142m/resolve/main/model.safetensors"
    assert "127.0.0.1 unreachable (offline?)" in str(e.value)


def test_offline_mode_is_honoured(unreachable_hub: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert pretrained.hub_reachable() == "HF_HUB_OFFLINE is set"


def test_inception_file_given_as_dinov2_weights_is_named(tmp_path: Path) -> None:
    """An Inception .pth as DINOv2 weights: one line naming the file, what it holds and the fix (today: a timm
    traceback when the network was built, after the first batch was decoded)."""
    from ganeval.features import get_extractor

    weights = save_random_weights(tmp_path / "pt_inception.pth", seed=0)
    ex = get_extractor("dinov2", weights=str(weights))
    with pytest.raises(ValueError) as e:
        ex.weights_path()
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"weights file {weights} does not hold DINOv2 vitl14 weights (it has no "
                                              "tensor patch_embed.proj.weight")
    assert "the FID Inception's" in msg and "features.weights=FILE or $GANEVAL_DINOV2_WEIGHTS" in msg


@pytest.mark.slow  # builds ViT-S/14 with random weights
def test_dinov2_file_of_another_size_is_named_and_its_own_size_passes(tmp_path: Path) -> None:
    from ganeval.features import get_extractor

    torch.manual_seed(0)
    model = timm.create_model("vit_small_patch14_dinov2.lvd142m", img_size=224, num_classes=0)
    path = tmp_path / "vits14.pth"
    torch.save(model.state_dict(), path)
    assert get_extractor("dinov2", arch="vits14", weights=str(path)).weights_path() == path
    with pytest.raises(ValueError, match=r"does not hold DINOv2 vitl14 weights \(its patch_embed.proj.weight has "
                                         r"shape \[384, 3, 14, 14\], DINOv2 vitl14's \[1024, 3, 14, 14\]\)"):
        get_extractor("dinov2", arch="vitl14", weights=str(path)).weights_path()


def test_inception_file_given_as_clip_weights_is_named(tmp_path: Path) -> None:
    pytest.importorskip("open_clip")
    from ganeval.features import get_extractor

    weights = save_random_weights(tmp_path / "pt_inception.pth", seed=0)
    with pytest.raises(ValueError, match=r"does not hold CLIP ViT-L-14 weights \(it has no tensor logit_scale"):
        get_extractor("clip", weights=str(weights)).weights_path()
