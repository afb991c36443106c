"""Streaming image sources (folder, zip, tar): same pixels, order, hashes and features as `ganeval.data.folder`;
bad archives refused with one line naming the member; resumable chunked extraction (kill -9); torchrun sharding."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ganeval.data import folder, list_images
from ganeval.data.sources import ImageSource
from ganeval.features import extract_with_info
from ganeval.hashing import StreamHasher, array_identity, sha256_folder
from ganeval.app.score import main

# the decoded-pixel hashes of the folder `make_folder` writes, as ganeval.data.folder gave them before streaming
# sources existed: the feature-cache content key (StreamHasher) and the results identity (array_identity)
PINNED_SHA256 = "9ff9808dec226ffb84b292816de5d87abcdbd3d33ad23f0da9e7ebe27f1a593c"
PINNED_STREAM = "67dc26e02b80387b98678a6baaed5d868130ee5cc1d75e156e6ceb96013a6149"


def make_folder(root: Path) -> Path:
    """5 colour 7×6 PNGs (two in a subfolder) and one grey one: read as 6×3×6×7 RGB."""
    rng = np.random.default_rng(24)
    (root / "b").mkdir(parents=True)
    for i in range(5):
        Image.fromarray(rng.integers(0, 256, (6, 7, 3), dtype=np.uint8)).save(root / ("b" if i % 2 else "") / f"{i}.png")
    Image.fromarray(rng.integers(0, 256, (6, 7), dtype=np.uint8), "L").save(root / "g.png")
    return root


def make_images(root: Path, n: int, shape: tuple[int, ...] = (12, 12, 3), seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True)
    for i in range(n):
        Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).save(root / f"{i:04d}.png")
    return root


def zip_of(src: Path, dst: Path, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(dst, "w") as z:
        for f in list_images(src):
            z.write(f, f.relative_to(src).as_posix())
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return dst


def tar_of(src: Path, dst: Path) -> Path:
    with tarfile.open(dst, "w") as t:
        for f in list_images(src):
            t.add(f, f.relative_to(src).as_posix())
    return dst


def test_folder_hashes_are_pinned(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "f")
    a = folder(root)
    h = StreamHasher()
    h.update(a)
    assert (array_identity(a)["sha256"], h.hexdigest()) == (PINNED_SHA256, PINNED_STREAM)
    src = ImageSource(root)
    c = src.content(batch_size=4)
    assert (c["sha256"], c["stream"], c["shape"]) == (PINNED_SHA256, PINNED_STREAM, [6, 3, 6, 7])
    assert src.array_identity() == array_identity(a, 16)
    assert src.container.file_hash() == sha256_folder(root, list_images(root))


@pytest.mark.parametrize("kind", ["folder", "zip", "tar"])
@pytest.mark.parametrize("size", [None, 5])
def test_same_pixels_and_order_as_folder(tmp_path: Path, kind: str, size: int | None) -> None:
    root = make_folder(tmp_path / "f")
    path = {"folder": root, "zip": zip_of(root, tmp_path / "f.zip"), "tar": tar_of(root, tmp_path / "f.tar")}[kind]
    src = ImageSource(path, size=size)
    want = folder(root, size=size)
    assert src.shape == want.shape
    for workers in (0, 2):
        got = src.read_all(batch_size=4, num_workers=workers)
        assert got.dtype == np.uint8 and np.array_equal(got, want)
    assert src.container.file_hash() == sha256_folder(root, list_images(root))  # names and bytes, as for folders


def test_grey_folder_stays_one_channel(tmp_path: Path) -> None:
    root = make_images(tmp_path / "g", 5, (9, 8))
    src = ImageSource(root)
    assert src.shape == (5, 1, 9, 8)
    assert np.array_equal(src.read_all(2), folder(root))


def test_same_features_and_cache_entry_as_the_array(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "f")
    want, info_a = extract_with_info(folder(root), "pixels", size=4, cache_dir=tmp_path / "c1", progress=False)
    got, info_s = extract_with_info(ImageSource(zip_of(root, tmp_path / "f.zip")), "pixels", size=4, batch_size=4,
                                    cache_dir=tmp_path / "c2", progress=False, num_workers=1)
    assert np.array_equal(got, want)
    assert info_s["content_hash"] == info_a["content_hash"] == PINNED_STREAM
    assert Path(info_s["cache_file"]).name == Path(info_a["cache_file"]).name  # one key for one content
    again, info = extract_with_info(ImageSource(root), "pixels", size=4, cache_dir=tmp_path / "c1", progress=False)
    assert info["cache_hit"] and np.array_equal(again, want)  # the array's cache entry serves the folder


def png(rng: np.random.Generator, shape: tuple[int, ...] = (8, 8, 3)) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def bad_zip(tmp_path: Path, case: str) -> tuple[Path, str]:
    """A zip with one bad member and the member's name (what the one-line error must say)."""
    rng = np.random.default_rng(1)
    good = {f"{i}.png": png(rng) for i in range(3)}
    path = tmp_path / f"{case}.zip"
    members = dict(good)
    bad = {"nonimage": "notes.txt", "nested": "inner.zip", "dotdot": "../evil.png", "absolute": "/etc/evil.png",
           "mixed": "big.png", "corrupt": "1.png", "undecodable": "junk.png", "truncated": "cut.png", "bomb": "zeros.png",
           "declared": "2.png"}[case]
    if case in ("nonimage", "nested", "dotdot", "absolute"):
        members[bad] = png(rng)
    elif case == "mixed":
        members[bad] = png(rng, (9, 8, 3))
    elif case == "undecodable":
        members[bad] = png(rng)[:40]  # half a header
    elif case == "truncated":
        members[bad] = png(rng)[:100]  # a whole header, then half the pixel data: fails in decoding only
    elif case == "bomb":
        members[bad] = bytes(4 << 20)  # 4 MiB of zeros deflate ~1000:1
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED if case == "bomb" else zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    raw = bytearray(path.read_bytes())
    if case == "corrupt":  # flip one byte of the member's pixel data: its CRC no longer matches
        at = raw.index(members[bad]) + len(members[bad]) - 20
        raw[at] ^= 0xFF
    if case == "declared":  # the central directory claims 2 GB for a small member
        cd = raw.index(b"PK\x01\x02")
        for _ in range(2):
            cd = raw.index(b"PK\x01\x02", cd + 1)
        raw[cd + 24 : cd + 28] = (0x7FFFFFF0).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    return path, bad


@pytest.mark.parametrize("case", ["nonimage", "nested", "dotdot", "absolute", "mixed", "corrupt", "undecodable",
                                  "truncated", "bomb", "declared"])
def test_bad_archive_exits_2_naming_the_member(tmp_path: Path, case: str, capsys: pytest.CaptureFixture) -> None:
    path, member = bad_zip(tmp_path, case)
    real = make_images(tmp_path / "real", 4, (8, 8, 3))
    cache = tmp_path / "cache"
    code = main([str(real), str(path), "--features", "pixels", "--metrics", "fid", "--quiet", "--cache-dir", str(cache),
                 "--num-workers", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and member in err[0] and err[0].startswith("ganeval-score: "), err
    # no cache entry of the bad set: only REAL's may be there (extracted first when its content was not known)
    good = ImageSource(real).content()["stream"]
    for entry in cache.glob("*.npz"):
        with np.load(entry) as z:
            assert json.loads(str(z["meta"]))["content"] == good


def test_dataset_json_is_allowed_and_mixed_sizes_need_size(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rng = np.random.default_rng(2)
    path = tmp_path / "edm.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("dataset.json", b'{"labels": null}')
        z.writestr("00000/img0.png", png(rng, (8, 8, 3)))
        z.writestr("00000/img1.png", png(rng, (10, 6, 3)))
    with pytest.raises(ValueError, match="img1.png is 6×10.*--size"):
        ImageSource(path)
    assert ImageSource(path, size=4).shape == (2, 3, 4, 4)
    code = main([str(path), str(path), "--features", "pixels", "--metrics", "fid", "--size", "4", "--quiet"])
    assert code == 0


def test_tar_with_dotdot_member_is_refused(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    path = tmp_path / "t.tar"
    with tarfile.open(path, "w") as t:
        data = png(rng)
        info = tarfile.TarInfo("../up.png")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    with pytest.raises(ValueError, match=r"'\.\./up\.png'.*'\.\.'"):
        ImageSource(path)


SCRIPT = """
import logging, sys, time
logging.basicConfig(level=logging.INFO)
from ganeval.data.sources import ImageSource
from ganeval.features import PixelsExtractor, extract_with_info

class Slow(PixelsExtractor):
    def __call__(self, batch):
        time.sleep(float(sys.argv[3]))
        return super().__call__(batch)

feats, info = extract_with_info(ImageSource(sys.argv[1]), Slow(size=5), batch_size=4, cache_dir=sys.argv[2],
                                progress=False, num_workers=1)
print(info["cache_file"])
"""


def run_script(tmp_path: Path, data: Path, cache: Path, delay: float, wait: bool = True) -> subprocess.Popen:
    script = tmp_path / "extract.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "GANEVAL_CHUNK_SIZE": "8"}
    p = subprocess.Popen([sys.executable, str(script), str(data), str(cache), str(delay)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if wait:
        p.wait(timeout=300)
    return p


def test_killed_extraction_resumes_to_the_same_entry(tmp_path: Path) -> None:
    data = make_images(tmp_path / "imgs", 64, (7, 9, 3))
    ref = run_script(tmp_path, data, tmp_path / "ref", 0.0)
    assert ref.returncode == 0, ref.stderr.read()  # type: ignore[union-attr]
    ref_file = Path(ref.stdout.read().strip())  # type: ignore[union-attr]
    cache = tmp_path / "cache"
    p = run_script(tmp_path, data, cache, 0.2, wait=False)
    deadline = time.time() + 240
    while time.time() < deadline and len(list(cache.glob("partial/*/chunk-*.npz"))) < 2:
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    done = len(list(cache.glob("partial/*/chunk-*.npz")))
    assert 2 <= done < 8 and not list(cache.glob("*.npz"))  # killed mid-way: chunks on disk, no entry
    again = run_script(tmp_path, data, cache, 0.0)
    assert again.returncode == 0
    assert f"{done} of 8 chunks on disk" in again.stderr.read()  # type: ignore[union-attr]
    out = Path(again.stdout.read().strip())  # type: ignore[union-attr]
    assert out.name == ref_file.name and not list(cache.glob("partial/*/chunk-*"))
    with np.load(out) as a, np.load(ref_file) as b:
        assert sorted(a.files) == sorted(b.files)
        for k in a.files:  # every stored array, byte for byte (the zip container itself carries write times)
            assert a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes()


def test_torchrun_two_ranks_gloo_equals_one_process(tmp_path: Path) -> None:
    real = make_images(tmp_path / "real", 24, (10, 10, 3), seed=5)
    fake = zip_of(make_images(tmp_path / "fake", 20, (10, 10, 3), seed=6), tmp_path / "fake.zip")
    args = [str(real), str(fake), "--features", "pixels", "--metrics", "fid,kid", "--option", "kid.subset_size=10",
            "--json", "--quiet", "--device", "cpu", "--num-workers", "0", "--batch-size", "3"]
    env = {**os.environ, "GANEVAL_CHUNK_SIZE": "6", "OMP_NUM_THREADS": "1"}
    one = subprocess.run([sys.executable, "-m", "ganeval.app.score", *args, "--cache-dir", str(tmp_path / "c1")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                          "-m", "ganeval.app.score", *args, "--cache-dir", str(tmp_path / "c2")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr
    a, b = json.loads(one.stdout), json.loads(two.stdout)  # rank 0 alone prints
    for x, y in zip(a["results"], b["results"]):
        assert x["metric"] == y["metric"] and x["value"] == pytest.approx(y["value"], rel=1e-6, abs=1e-9)
    entries = {p.name: p for p in (tmp_path / "c1").glob("*.npz")}
    assert len(entries) == 2 and set(entries) == {p.name for p in (tmp_path / "c2").glob("*.npz")}
    for name, p in entries.items():
        with np.load(p) as x, np.load(tmp_path / "c2" / name) as y:
            assert np.array_equal(x["features"], y["features"])


@pytest.mark.slow
def test_dinov2_host_stage_in_workers_equals_the_array_path(tmp_path: Path) -> None:
    timm = pytest.importorskip("timm")
    import torch

    from ganeval.features import DinoV2Extractor

    torch.manual_seed(0)
    model = timm.create_model("vit_small_patch14_dinov2.lvd142m", img_size=224, num_classes=0).eval()
    weights = tmp_path / "random_vits14.pth"
    torch.save(model.state_dict(), weights)
    root = make_images(tmp_path / "imgs", 6, (40, 30, 3))
    ex = DinoV2Extractor(arch="vits14", weights=weights, download=False)
    want = extract_with_info(folder(root), ex, batch_size=4, progress=False)[0]
    got = extract_with_info(ImageSource(root), ex, batch_size=4, num_workers=2, progress=False)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_score_options_for_streamed_sets(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from ganeval.app.score_inputs import load_input
    from ganeval.app.score_request import ScoreRequest, make_extractor
    from ganeval.features import ClipExtractor, DinoV2Extractor

    root = make_images(tmp_path / "imgs", 3, (8, 8, 3))
    s = load_input(str(root))
    assert s.stream is not None and s.array is None and len(s) == 3 and s.shape == (3, 3, 8, 8)
    for name, cls in (("dinov2", DinoV2Extractor), ("clip", ClipExtractor)):
        if name == "clip":
            pytest.importorskip("open_clip")
        ex = make_extractor(ScoreRequest(real=str(root), fakes=[str(root)], features=name, weights="w.pt"), [s])
        assert isinstance(ex, cls) and str(ex.weights) == "w.pt"
    np.save(tmp_path / "a.npy", np.zeros((4, 8, 8, 3), np.uint8))
    for extra, words in ((["--size", "4"], "--size resizes image files"), (["--num-workers", "-1"], "--num-workers")):
        assert main([str(tmp_path / "a.npy"), str(tmp_path / "a.npy"), "--quiet", *extra]) == 2
        assert words in capsys.readouterr().err


def test_workers_fork_with_the_parent_frozen_then_gc_is_restored(tmp_path: Path) -> None:
    """`started` freezes the parent's objects only while the DataLoader forks its workers (gc.freeze: their pages
    stay shared); afterwards nothing is left frozen, and the batches are those of the worker-free path."""
    import gc

    from ganeval.data.sources import images as source_images

    root = make_images(tmp_path / "imgs", 5, (8, 8, 3))
    src = ImageSource(root)
    seen: list[int] = []
    real_iter = source_images.DataLoader.__iter__

    def spy(self):  # type: ignore[no-untyped-def]
        seen.append(gc.get_freeze_count())
        return real_iter(self)

    source_images.DataLoader.__iter__ = spy  # type: ignore[method-assign]
    try:
        got = [b.clone() for b in src.batches(2, num_workers=2)]
        plain = [b.clone() for b in src.batches(2, num_workers=0)]
    finally:
        source_images.DataLoader.__iter__ = real_iter  # type: ignore[method-assign]
    assert seen[0] > 0 and seen[1] == 0  # frozen while the workers fork; not for the worker-free loader
    assert gc.get_freeze_count() == 0
    assert all(np.array_equal(a, b) for a, b in zip(got, plain)) and len(got) == 3


def test_streamed_reader_names_the_member_in_its_notes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The member's name reaches a conversion note (formatted only when one is written: `Described`)."""
    from PIL import Image

    from ganeval.data import files

    files._NOTED.clear()
    (tmp_path / "imgs").mkdir()
    Image.fromarray(np.full((8, 8, 4), 7, np.uint8)).save(tmp_path / "imgs" / "a.png")  # RGBA
    with caplog.at_level("WARNING", logger="ganeval.data.files"):
        out = ImageSource(tmp_path / "imgs").read_all()
    assert out.shape == (1, 3, 8, 8) and (out == 7).all()
    assert [r.getMessage() for r in caplog.records if "alpha" in r.getMessage()][0].startswith(
        f"{tmp_path / 'imgs' / 'a.png'} has an alpha channel")
