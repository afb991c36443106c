"""ganeval-score on the README's offline path (issue #39): pixels of ordinary (256²) images at a usable size, a
metric that cannot fit refused before extraction, DINOv2 weights missing offline named as DINOv2's, the path's own
checks before --size's, and --json recording --size."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ganeval.app.score import main
from ganeval.features import extract
from ganeval.metrics import fid
from ganeval.metrics import memory

GIB = 1 << 30


def folder(path: Path, n: int, seed: int, side: int = 256) -> Path:
    path.mkdir()
    rng = np.random.default_rng(seed)
    for i in range(n):
        Image.fromarray(rng.integers(0, 256, (side, side, 3), dtype=np.uint8)).save(path / f"{i:03d}.png")
    return path


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("big")
    return folder(root / "real", 30, 0), folder(root / "fake", 30, 1)


def no_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.features as gf

    def fail(*a: object, **k: object) -> None:
        raise AssertionError("features were extracted")

    monkeypatch.setattr(gf, "extract_with_info", fail)


def test_pixels_of_256_images_are_scored_at_32(big: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The README's offline command on 256² RGB images: FID of the images resized to 32² (3072-d, PIL's bilinear),
    the size in the recorded identity (today: 196 608-d rows and a failed 288 GiB allocation)."""
    real, fake = big
    assert main([str(real), str(fake), "--features", "pixels", "--metrics", "fid", "--json", "--quiet",
                 "--num-workers", "0"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["features"] == {"name": "pixels", "size": None, "channels": None, "scale": "x/255", "max_size": 32}
    from ganeval.data import folder as read_folder

    x, y = (extract(read_folder(p), "pixels", size=32, progress=False) for p in big)
    assert x.shape == (30, 3072)
    assert doc["results"][0]["value"] == pytest.approx(fid(x, y), rel=1e-9)


def test_what_cannot_fit_is_refused_before_extraction(big: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """30 images at their own size (--pixels-size 0): FID's covariances need 576 GiB; one line, exit 2, nothing
    extracted (today: extraction, then a traceback allocating 288 GiB)."""
    monkeypatch.setattr(memory, "available_bytes", lambda device=None: 16 * GIB)
    no_extraction(monkeypatch)
    real, fake = big
    assert main([str(real), str(fake), "--features", "pixels", "--pixels-size", "0", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("ganeval-score: FID needs 576.0 GiB at once for 30 rows of 196608-d "
                                              "features (two 196608×196608 float64 covariances), but this machine has "
                                              "16.0 GiB available: give pixels a smaller size (--pixels-size 32")


def test_pixels_size_belongs_to_pixels(big: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    real, fake = big
    assert main([str(real), str(fake), "--features", "inception", "--pixels-size", "64", "--quiet"]) == 2
    assert "--pixels-size sizes --features pixels, not inception" in capsys.readouterr().err
    assert main([str(real), str(fake), "--features", "pixels", "--pixels-size", "-1", "--quiet"]) == 2
    assert "--pixels-size must be at least 0" in capsys.readouterr().err


def test_dinov2_offline_names_dinov2(big: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Offline, without DINOv2 weights (and with the Inception's variable set): one line naming DINOv2, --weights and
    its variable, in seconds; never "no FID Inception weights"."""
    pytest.importorskip("timm")
    from huggingface_hub import constants

    from ganeval.features import pretrained

    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(pretrained, "hub_cached", lambda repo, files: None)
    monkeypatch.setenv("GANEVAL_INCEPTION_WEIGHTS", "/nonexistent/pt_inception.pth")
    monkeypatch.delenv("GANEVAL_DINOV2_WEIGHTS", raising=False)
    no_extraction(monkeypatch)
    real, fake = big
    assert main([str(real), str(fake), "--features", "dinov2", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Inception" not in err
    assert err.startswith("ganeval-score: no DINOv2 vitl14 (vit_large_patch14_dinov2.lvd142m) weights (not in the "
                          "Hugging Face hub cache; the download failed: 127.0.0.1 unreachable (offline?)")
    assert "pass the file with --weights FILE or set GANEVAL_DINOV2_WEIGHTS=FILE (https://huggingface.co/timm/" in err


@pytest.mark.parametrize("which", ["missing", "one image"])
def test_path_checks_come_before_size(big: tuple[Path, Path], which: str, capsys: pytest.CaptureFixture[str]) -> None:
    real, fake = big
    arg = str(real.parent / "nowhere") if which == "missing" else str(real / "000.png")
    assert main([arg, str(fake), "--size", "64", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--size" not in err
    assert ("does not exist" in err) if which == "missing" else (f"{arg} is one image file" in err)


def test_size_refused_for_arrays_and_dataset_names(tmp_path: Path, big: tuple[Path, Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    np.save(tmp_path / "a.npy", np.zeros((30, 8, 8, 3), np.uint8))
    for arg in (str(tmp_path / "a.npy"), "digits"):
        assert main([arg, str(big[1]), "--size", "64", "--quiet"]) == 2
        assert f"--size resizes image files (folders, .zip, .tar), but {arg} is not one" in capsys.readouterr().err


def test_json_records_size_and_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real, fake = folder(tmp_path / "r", 12, 0, side=20), folder(tmp_path / "f", 12, 1, side=20)
    args = [str(real), str(fake), "--features", "pixels", "--metrics", "fid", "--json", "--quiet", "--num-workers", "0"]
    assert main([*args, "--size", "8"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["size"] == 8 and doc["layout"] == "auto" and doc["results"][0]["value"] is not None
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["size"] is None
