"""Issue #47: content that moves under the reader (files overwritten during an extraction; the digest memo's trust
rule), inputs spelled another way, outputs inside inputs, and the small ones."""

from __future__ import annotations

import math
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from ganeval.data.sources import ImageSource
from ganeval.data.sources import file_digests as fd
from ganeval.features import extract_with_info
from test_sources import make_images


# --------------------------------------------------------------------------- 1. files overwritten during extraction
def _overwrite_during(monkeypatch: pytest.MonkeyPatch, target: Path, after_batches: int = 1) -> None:
    """Overwrite `target` (new pixels, a valid PNG) once the extraction has taken `after_batches` batches."""
    real = ImageSource.batches

    def batches(self: ImageSource, *a: Any, **kw: Any):  # type: ignore[no-untyped-def]
        for k, b in enumerate(real(self, *a, **kw)):
            if k == after_batches:
                shape = np.asarray(Image.open(target)).shape
                Image.fromarray(np.full(shape, 7, np.uint8)).save(target)
            yield b

    monkeypatch.setattr(ImageSource, "batches", batches)


@pytest.mark.parametrize("cached", [True, False])
def test_a_file_overwritten_during_extraction_is_refused_and_nothing_is_cached_for_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bool) -> None:
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "4")
    data = make_images(tmp_path / "imgs", 12, (6, 6, 3))
    cache = tmp_path / "cache" if cached else None
    _overwrite_during(monkeypatch, data / "0010.png")  # in the last chunk, overwritten while chunk 0 is extracted
    with pytest.raises(ValueError, match=r"0010\.png changed while ganeval was reading .*nothing of it is scored"):
        extract_with_info(ImageSource(data), "pixels", batch_size=4, cache_dir=cache, progress=False)
    if cached:
        assert not list((tmp_path / "cache" / "sources").glob("*.json"))  # no files key -> content memo
        assert not list((tmp_path / "cache").glob("*.npz"))  # no entry
        chunks = sorted(p.name for p in (tmp_path / "cache" / "partial").rglob("chunk-*.npz"))
        assert chunks == ["chunk-000000.npz", "chunk-000001.npz"]  # the chunks of unchanged files only


def test_a_file_overwritten_after_its_chunk_cannot_change_the_number(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Its old bytes were decoded and checked: the features, the content and the memo are all of the old files."""
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "4")
    data = make_images(tmp_path / "imgs", 12, (6, 6, 3))
    clean, _ = extract_with_info(ImageSource(data), "pixels", batch_size=4, progress=False)
    content = ImageSource(data).content()
    _overwrite_during(monkeypatch, data / "0001.png", after_batches=2)
    got, info = extract_with_info(ImageSource(data), "pixels", batch_size=4, cache_dir=tmp_path / "c", progress=False)
    np.testing.assert_array_equal(got, clean)
    assert info["content_hash"] == content["stream"]


# --------------------------------------------------------------------------- 3. the digest memo's trust rule
def _written(root: Path, n: int = 3) -> list[str]:
    root.mkdir()
    for i in range(n):
        (root / f"{i}.bin").write_bytes(bytes([i]) * 100)
    return [f"{i}.bin" for i in range(n)]


def _hashed_at(monkeypatch: pytest.MonkeyPatch, seconds_later: float) -> None:
    """The memo's clock: `seconds_later` after now (the files were written now)."""
    import time

    now = time.time_ns()
    monkeypatch.setattr(fd, "time", types.SimpleNamespace(time_ns=lambda: now + int(seconds_later * 1e9)))


def _remembered(memo: Path) -> dict[str, Any]:
    import json

    (f,) = memo.glob("*.json")
    return json.loads(f.read_text())["files"]


def test_the_memo_never_remembers_a_file_changed_within_the_writeback_delay(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A write through a shared mmap to a dirty page moves no time until writeback (35 s by default on Linux): a
    file changed 10 s before it was hashed may still change under an unchanged stat, so it is read again later."""
    assert fd.RACY_SECONDS > 35  # Linux's default delay (expiry 30 s + interval 5 s), doubled: 70 s
    names = _written(tmp_path / "d")
    _hashed_at(monkeypatch, 10)
    fd.digests(tmp_path / "d", names, tmp_path / "memo")
    assert _remembered(tmp_path / "memo") == {}
    if math.isinf(fd.RACY_SECONDS):
        return  # this machine's periodic writeback is off: nothing is ever remembered
    _hashed_at(monkeypatch, fd.RACY_SECONDS + 1)  # left alone long enough: written back, a later write moves its times
    fd.digests(tmp_path / "d", names, tmp_path / "memo")
    assert sorted(_remembered(tmp_path / "memo")) == names


def test_the_writeback_margin_follows_the_kernels_settings(tmp_path: Path) -> None:
    vm = tmp_path / "vm"
    vm.mkdir()
    for expire, every, want in ((3000, 500, 70.0), (100, 0, math.inf), (50, 10, 2.0), (6000, 1000, 140.0)):
        (vm / "dirty_expire_centisecs").write_text(f"{expire}\n")
        (vm / "dirty_writeback_centisecs").write_text(f"{every}\n")
        assert fd.writeback_margin(str(vm)) == want
    assert fd.writeback_margin(str(tmp_path / "none")) == 70.0  # unknown: Linux's defaults


def test_no_digest_is_remembered_when_writeback_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fd, "RACY_SECONDS", math.inf)
    names = _written(tmp_path / "d")
    _hashed_at(monkeypatch, 10**6)
    fd.digests(tmp_path / "d", names, tmp_path / "memo")
    assert _remembered(tmp_path / "memo") == {}


# --------------------------------------------------------------------------- CLI helpers
def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from ganeval.app.score import main

    code = main([*args, "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


def _refused(args: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code, _, err = _cli(args, capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def _fid(args: list[str], capsys: pytest.CaptureFixture[str]) -> float:
    import json

    code, out, err = _cli([*args, "--metrics", "fid", "--json"], capsys)
    assert code == 0, err
    return float(json.loads(out)["results"][0]["value"])


def _feature_sets(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    d = 6
    mix = rng.standard_normal((d, d))
    np.save(tmp_path / "real.npy", (rng.standard_normal((200, d)) @ mix).astype(np.float32))
    np.save(tmp_path / "fake.npy", (rng.standard_normal((150, d)) @ mix * 0.8 + 0.3).astype(np.float32))
    return tmp_path / "real.npy", tmp_path / "fake.npy"


# --------------------------------------------------------------------------- 4. a sigma-only .npz
def test_a_sigma_only_npz_as_real_is_refused_not_read_as_rows(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    real, fake = _feature_sets(tmp_path)
    x = np.load(real).astype(np.float64)
    np.savez(tmp_path / "sigma.npz", sigma=np.cov(x, rowvar=False))
    _refused([str(tmp_path / "sigma.npz"), str(fake)], capsys, "sigma.npz holds sigma", "statistics file")
    np.savez(tmp_path / "mu.npz", mu=x.mean(0))
    _refused([str(tmp_path / "mu.npz"), str(fake)], capsys, "mu.npz holds mu")


# --------------------------------------------------------------------------- 6. the small ones
def test_mu_sigma_and_a_count_are_read_as_moments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real, fake = _feature_sets(tmp_path)
    x = np.load(real).astype(np.float64)
    mu, sigma = x.mean(0), np.cov(x, rowvar=False)
    np.savez(tmp_path / "plain.npz", mu=mu, sigma=sigma)
    np.savez(tmp_path / "counted.npz", mu=mu, sigma=sigma, n=np.array(200))
    np.savez(tmp_path / "sampled.npz", mu=mu, sigma=sigma, num_samples=np.array(200))
    want = _fid([str(tmp_path / "plain.npz"), str(fake)], capsys)
    assert _fid([str(tmp_path / "counted.npz"), str(fake)], capsys) == want
    assert _fid([str(tmp_path / "sampled.npz"), str(fake)], capsys) == want
    assert want == pytest.approx(_fid([str(real), str(fake)], capsys), rel=1e-9)


def test_save_stats_with_pixels_reads_back_with_pixels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(1)
    np.save(tmp_path / "real.npy", rng.integers(0, 256, (60, 3, 4, 4), dtype=np.uint8))
    np.save(tmp_path / "fake.npy", rng.integers(20, 230, (50, 3, 4, 4), dtype=np.uint8))
    real, fake, stats = (str(tmp_path / n) for n in ("real.npy", "fake.npy", "s.npz"))
    direct = _fid([real, fake, "--features", "pixels", "--save-stats", stats], capsys)
    with np.load(stats) as z:
        assert set(z.files) == {"mu", "sigma", "extractor"} and str(z["extractor"]) == "pixels"
    assert _fid([stats, fake, "--features", "pixels"], capsys) == pytest.approx(direct, rel=1e-9)
    _refused([stats, fake, "--features", "inception"], capsys, "pixels")  # not taken for Inception's


# --------------------------------------------------------------------------- 5. --out inside an input folder
def _image_folders(tmp_path: Path) -> tuple[Path, Path]:
    return (make_images(tmp_path / "real", 10, (4, 4, 3), seed=0),
            make_images(tmp_path / "fake", 10, (4, 4, 3), seed=1))


@pytest.mark.parametrize("inside", ["fake/eval", "fake", "real/a/b", "link/eval"])
def test_out_inside_an_input_folder_is_refused_by_ganeval_score(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch, inside: str) -> None:
    real, fake = _image_folders(tmp_path)
    (tmp_path / "link").symlink_to(fake)
    monkeypatch.chdir(tmp_path)
    _refused(["real", "fake/", "--features", "pixels", "--out", inside, "--overwrite"], capsys, f"--out={inside} is",
             "input folder", "outside every input")
    assert not (tmp_path / "fake" / "eval").exists() and not (tmp_path / "real" / "a").exists()
    assert sorted(p.name for p in fake.iterdir()) == [f"{i:04d}.png" for i in range(10)]  # nothing written


def test_out_inside_an_input_folder_is_refused_by_the_python_api(tmp_path: Path) -> None:
    import ganeval

    real, fake = _image_folders(tmp_path)
    with pytest.raises(ValueError, match=r"^out=.*fake/eval is inside the input folder .*; choose out outside every "
                                         r"input$"):  # Python's words (issue #45), not --out
        ganeval.score(real, fake, features="pixels", out=fake / "eval", progress=False)
    assert not (fake / "eval").exists()


def test_results_dir_inside_an_input_folder_is_refused_by_the_app(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from apphelp import run_inprocess

    real, fake = _image_folders(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"results_dir=fake/eval is inside the input folder fake"):
        run_inprocess(["experiment=benchmark", "data=folder", "data.path=real", "generator=samples",
                       "generator.path=fake", "features=pixels", "results_dir=fake/eval", "dry_run=true"])
    assert not (fake / "eval").exists()


# --------------------------------------------------------------------------- 2. the same inputs spelled another way
def _runs_csv(out: Path) -> bytes:
    return (out / "runs.csv").read_bytes()


def test_score_out_resumes_for_the_same_inputs_spelled_or_placed_otherwise(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import shutil

    make_images(tmp_path / "real", 30, (2, 2, 3), seed=0)
    make_images(tmp_path / "fake", 30, (2, 2, 3), seed=1)
    monkeypatch.chdir(tmp_path)
    common = ["--features", "pixels", "--metrics", "fid", "--runs", "3", "--sample-size", "20", "--no-plots",
              "--no-samples", "--out", "res"]
    code, _, err = _cli(["real", "fake", *common], capsys)
    assert code == 0, err
    first = _runs_csv(tmp_path / "res")
    meta = json.loads((tmp_path / "res" / "runs.meta.json").read_text())
    shutil.move(tmp_path / "real", tmp_path / "moved")  # moved with identical bytes (REAL's name is no row label)
    (tmp_path / "elsewhere").mkdir()
    shutil.move(tmp_path / "fake", tmp_path / "elsewhere" / "fake")
    for spelling in (["moved/", "./elsewhere/fake/"], [str(tmp_path / "moved"), "elsewhere/fake"],
                     ["./moved", str(tmp_path / "elsewhere" / "fake") + "/"]):
        code, _, err = _cli([*spelling, *common, "--runs", "3"], capsys)
        assert code == 0, (spelling, err)  # resumed: not "holds runs made by another config"
        assert _runs_csv(tmp_path / "res") == first
    again = json.loads((tmp_path / "res" / "runs.meta.json").read_text())
    assert again["config_hash"] == meta["config_hash"]  # one hash for every spelling
    code, _, err = _cli(["moved", "elsewhere/fake", *common[:-2], "--seed", "1", "--out", "res"], capsys)
    assert code == 2 and "another config" in err and "seed" in err  # what defines the runs still does


def test_results_dir_resumes_for_the_same_inputs_spelled_or_placed_otherwise(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import shutil

    from apphelp import run_inprocess

    rng = np.random.default_rng(0)
    for name, shift, n in (("real", 0.0, 120), ("fake", 0.3, 100)):
        np.save(tmp_path / f"{name}.npy", (rng.normal(size=(n, 4)) + shift).astype(np.float32))
    monkeypatch.chdir(tmp_path)
    fast = ["experiment=benchmark", "data=array", "generator=samples", "features=identity", "metrics.imd.nv=10",
            "metrics.kid.subsets=5", "metrics.kid.subset_size=50",
            "progress=false", "plots=false", "sample_size=50", "runs=2", "results_dir=res"]
    run_inprocess([*fast, "data.path=real.npy", "generator.path=fake.npy"])
    first = (tmp_path / "res" / "runs.csv").read_bytes()
    meta = json.loads((tmp_path / "res" / "runs.meta.json").read_text())
    (tmp_path / "in").mkdir()
    shutil.move(tmp_path / "fake.npy", tmp_path / "in" / "fake.npy")
    run_inprocess([*fast, f"data.path={tmp_path / 'real.npy'}", "generator.path=./in/fake.npy"])
    assert (tmp_path / "res" / "runs.csv").read_bytes() == first
    assert json.loads((tmp_path / "res" / "runs.meta.json").read_text())["config_hash"] == meta["config_hash"]


def test_a_meta_device_tensor_is_refused_in_one_line() -> None:
    import torch

    import ganeval
    from ganeval.features import extract
    from ganeval.metrics import fid

    meta, x = torch.empty(20, 4, device="meta"), torch.randn(20, 4)
    for call in (lambda: ganeval.score(meta, x, metrics="fid", progress=False),
                 lambda: ganeval.score(x, meta, metrics="fid", progress=False),
                 lambda: extract(meta, "identity", progress=False), lambda: fid(x, meta)):
        with pytest.raises(ValueError, match=r"is a tensor on the meta device \(shape \(20, 4\), no values\)"):
            call()


def test_float_images_one_ulp_above_one_show_their_real_range(tmp_path: Path) -> None:
    import ganeval
    from ganeval.data.images import check_unit_range

    a = np.full((6, 3, 4, 4), 0.5, np.float32)
    a[0, 0, 0, 0] = np.nextafter(np.float32(1), np.float32(2))
    with pytest.raises(ValueError, match=r"values in \[0\.5, 1\.0000001192092896\]"):
        ganeval.score(a, a, features="pixels", metrics="fid", progress=False)
    with pytest.raises(ValueError, match=r"got values in \[0\.5, 1\.0000001192092896\]"):
        check_unit_range(a)
    a[0, 0, 0, 0] = -1e-30
    with pytest.raises(ValueError, match=r"got values in \[-1e-30, 0\.5\]"):
        check_unit_range(a)


def test_the_16_bit_grey_note_comes_once_per_run_not_once_per_worker(tmp_path: Path) -> None:
    import logging

    from ganeval.data import files

    root = tmp_path / "grey16"
    root.mkdir()
    rng = np.random.default_rng(0)
    for i in range(8):
        Image.fromarray(rng.integers(0, 65536, (4, 4), dtype=np.uint16)).save(root / f"{i}.png")
    log_file = tmp_path / "log.txt"
    handler = logging.FileHandler(log_file)  # inherited by the forked workers: their notes land here too
    files.log.addHandler(handler)
    files._NOTED.clear()
    try:
        got = np.concatenate([b.numpy() for b in ImageSource(root).batches(2, num_workers=2)])
    finally:
        files.log.removeHandler(handler)
        handler.close()
    assert got.shape == (8, 1, 4, 4)
    assert log_file.read_text().count("(16-bit) image: scaled to 8 bits") == 1


def test_fid_of_a_set_against_itself_is_never_negative(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The round-off of tr Σ + tr Σ − 2 tr √(ΣΣ) (~1e-15 of it, either sign) is reported as 0 when below 0."""
    import torch

    from ganeval.metrics.fid import FidStatistics, fid, fid_from_statistics

    rng = np.random.default_rng(0)
    negative = 0
    for _ in range(12):
        x = rng.standard_normal((500, 64)) @ rng.standard_normal((64, 64)) * rng.uniform(0.01, 100)
        x = x.astype(np.float32)
        v = fid(x, x)
        assert v >= 0.0 and v < 1e-12 * 2 * float(np.trace(np.cov(x.astype(np.float64), rowvar=False)))
        negative += v == 0.0
    assert negative  # some came out below 0 before: those are 0 now
    np.save(tmp_path / "x.npy", x)
    assert _fid([str(tmp_path / "x.npy"), str(tmp_path / "x.npy")], capsys) >= 0.0
    # a value below the round-off bound is not hidden: √(Σ₁Σ₂)'s trace made 1e-9 of the total too large
    import importlib

    fid_module = importlib.import_module("ganeval.metrics.fid")  # the module (the package exports the function)

    sigma = torch.eye(3, dtype=torch.float64)
    stats = FidStatistics(torch.zeros(3, dtype=torch.float64), sigma)
    for excess, want in ((1e-14, 0.0), (1e-9, -6e-9)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(fid_module, "trace_sqrt_product", lambda a, b, f, e=excess: torch.tensor(3.0 * (1 + e), dtype=torch.float64))
            assert fid_from_statistics(stats, stats) == pytest.approx(want, abs=1e-20, rel=1e-6)


def test_numpy_masked_arrays_are_refused_not_scored_with_their_masked_values() -> None:
    import ganeval
    from ganeval.features import extract
    from ganeval.metrics import fid

    rng = np.random.default_rng(0)
    x = rng.standard_normal((30, 4))
    masked = np.ma.masked_array(x, mask=np.zeros_like(x, bool))
    masked.mask[:5] = True
    for call in (lambda: ganeval.score(masked, x, metrics="fid", progress=False),
                 lambda: ganeval.score(x, masked, metrics="fid", progress=False),
                 lambda: extract(masked, "identity", progress=False), lambda: fid(masked, x)):
        with pytest.raises(ValueError, match="is a numpy masked array: ganeval would score its masked values"):
            call()
