"""The everyday job (issue #34): `ganeval-score A B --metrics fid` on two image folders gives pytorch-fid's FID on the
same folders and the same stand-in Inception weights, each tool loading them from where it looks (the torch hub
cache)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ganeval.app.score import main as score_main
from ganeval.features import inception as inc


def folder(root: Path, n: int, seed: int, blur: bool, side: int = 32) -> Path:
    """n PNGs of side² RGB: smooth random images (upsampled 8² noise), the second set blurred and brighter."""
    from PIL import ImageFilter

    root.mkdir()
    rng = np.random.default_rng(seed)
    for i in range(n):
        img = Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).resize((side, side), Image.BICUBIC)
        if blur:
            img = Image.fromarray(np.minimum(np.asarray(img.filter(ImageFilter.GaussianBlur(2)), np.int16) + 30,
                                             255).astype(np.uint8))
        img.save(root / f"{i:03d}.png")
    return root


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two folders of 80 PNGs and a private torch home whose hub cache holds the stand-in FID Inception under
    pytorch-fid's file name."""
    root = tmp_path_factory.mktemp("everyday")
    home = root / "torch"
    inc.save_random_weights(home / "hub" / "checkpoints" / inc.WEIGHTS_FILENAME, seed=0)
    return folder(root / "real", 80, 0, False), folder(root / "fake", 80, 1, True), home


@pytest.mark.slow
def test_score_fid_equals_pytorch_fid_on_the_same_folders_and_weights(
        sets: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fid_score = pytest.importorskip("pytorch_fid.fid_score")
    real, fake, home = sets
    monkeypatch.setenv("TORCH_HOME", str(home))  # both tools find the stand-in in the hub cache, neither downloads
    monkeypatch.delenv(inc.WEIGHTS_ENV, raising=False)
    import torch.hub

    monkeypatch.setattr(torch.hub, "download_url_to_file", None)  # a download attempt would fail loudly
    # Inception's first block (64-d, the same weights file, every preprocessing step): 80 rows give full-rank
    # covariances, where pytorch-fid's scipy sqrtm is exact (of 2048-d pool3 it needs over 2048 images per set)
    want = fid_score.calculate_fid_given_paths([str(real), str(fake)], batch_size=50, device="cpu", dims=64,
                                               num_workers=0)
    assert score_main([str(real), str(fake), "--metrics", "fid", "--dims", "64", "--device", "cpu", "--num-workers",
                       "0", "--no-download", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["features"]["weights"] == inc.weights_sha256(home / "hub" / "checkpoints" / inc.WEIGHTS_FILENAME)
    (row,) = doc["results"]
    assert row["metric"] == "fid" and doc["real"]["rows"] == 80 and doc["fakes"][0]["rows"] == 80, doc
    assert want > 1e-3, want  # the stand-in gives the two sets distinct features
    assert row["value"] == pytest.approx(want, rel=1e-5), (row["value"], want)


def test_cpu_default_batch_is_32_and_a_given_one_is_kept(tmp_path: Path) -> None:
    """On a CPU, ganeval-score extracts in batches of 32 unless --batch-size says otherwise (250 held 2.5–3× the
    memory of pytorch-fid's 50 through Inception): the batch each extraction got, and the one recorded."""
    import ganeval.features as gf
    from ganeval.features import extraction

    assert extraction.default_batch_size("cpu") == 32 and extraction.default_batch_size("cuda:1") == 250
    rng = np.random.default_rng(0)
    for name in ("r", "f"):
        np.save(tmp_path / f"{name}.npy", rng.integers(0, 256, (120, 8, 8, 3), dtype=np.uint8))
    seen: list[int] = []
    original = gf.extract_with_info  # ganeval-score imports it from ganeval.features where it extracts

    def spy(images, extractor, **kw):  # type: ignore[no-untyped-def]
        seen.append(kw["batch_size"])
        return original(images, extractor, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gf, "extract_with_info", spy)
        for extra, want in (([], 32), (["--batch-size", "7"], 7)):
            out = tmp_path / f"out{want}"
            args = [str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), "--features", "pixels", "--metrics", "fid",
                    "--device", "cpu", "--quiet", "--no-plots", "--out", str(out), *extra]
            assert score_main(args) == 0
            assert seen[-2:] == [want, want]  # REAL's and FAKE's extraction
            assert json.loads((out / "summary.json").read_text())["config"]["batch_size"] == want


def test_the_closing_line_says_where_the_time_went(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cold run ends with the seconds of each stage and the extraction's images/s; a cached rerun says the
    features came from the cache."""
    import re

    real, fake = folder(tmp_path / "real", 12, 0, False), folder(tmp_path / "fake", 9, 1, True)
    args = [str(real), str(fake), "--features", "pixels", "--size", "8", "--metrics", "fid", "--device", "cpu",
            "--num-workers", "0", "--quiet", "--cache-dir", str(tmp_path / "cache")]
    lines = []
    for _ in range(2):
        assert score_main(args) == 0
        lines.append(capsys.readouterr().err.strip().splitlines()[-1])
    number = r"[0-9]+\.[0-9]"
    cold = (rf"ganeval-score: ({number}) s in all: scan {number} s, hash {number} s, features ({number}) s \(21 images "
            rf"at ({number}) images/s\), metrics {number} s, writing 0\.0 s")
    m = re.fullmatch(cold, lines[0])
    assert m, lines[0]
    assert float(m.group(2)) <= float(m.group(1))
    cached = (rf"ganeval-score: {number} s in all: scan {number} s, hash {number} s, features {number} s"
              rf"( \(from the cache\))?, metrics {number} s, writing 0\.0 s")
    assert re.fullmatch(cached, lines[1]) and "images/s" not in lines[1], lines[1]


@pytest.mark.slow  # over 30 s on the 2-core development machine (issue #56)
def test_inception_runs_channels_last_on_a_cpu_and_agrees_with_channels_first(sets: tuple[Path, Path, Path]) -> None:
    """On a CPU the network runs on NHWC tensors by default (oneDNN's faster convolutions); its pool3 features agree
    with the NCHW network's (pytorch-fid's layout, `channels_last=False`) to float rounding, and `channels_last=True`
    is the default's layout."""
    import torch

    weights = sets[2] / "hub" / "checkpoints" / inc.WEIGHTS_FILENAME
    x = torch.as_tensor(np.random.default_rng(0).integers(0, 256, (3, 3, 64, 64), dtype=np.uint8))
    auto, first, last = (inc.InceptionExtractor(weights=weights, channels_last=c) for c in (None, False, True))
    with torch.inference_mode():
        got, want, explicit = auto(x), first(x), last(x)
    assert auto._nhwc and not first._nhwc
    conv = next(m for m in auto._model.modules() if isinstance(m, torch.nn.Conv2d))
    assert conv.weight.is_contiguous(memory_format=torch.channels_last) and not conv.weight.is_contiguous()
    assert torch.equal(got, explicit)
    assert float((got - want).abs().max() / want.abs().max()) < 1e-5 and not torch.equal(got, want)
    with pytest.raises(ValueError, match="channels_last must be"):
        inc.InceptionExtractor(channels_last="yes")  # type: ignore[arg-type]


def test_an_inception_host_stage_that_does_nothing_stays_out_of_the_workers() -> None:
    """Only clean mode's PIL resize is host work: with the other modes the DataLoader workers hand over raw pixels, so
    a first run hashes the content on its extraction pass (no decoding pass of its own); DINOv2's resize is host work."""
    from ganeval.features.dinov2 import DinoV2Extractor
    from ganeval.features.streaming import host_stage_in_workers

    assert not host_stage_in_workers(inc.InceptionExtractor(), 4)
    assert host_stage_in_workers(inc.InceptionExtractor(resize="clean"), 4)
    assert not host_stage_in_workers(inc.InceptionExtractor(resize="clean"), 0)
    assert host_stage_in_workers(DinoV2Extractor(), 4)
