"""Sweep of `ganeval.data.sources` and `ganeval.data.files`: argument edges, exact thresholds (pixel and archive bomb
limits, PNG header fields), defaults and exact decoded pixels, on tiny files built in tmp_path."""

from __future__ import annotations

import io
import json
import logging
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from ganeval.data import files as gfiles
from ganeval.data.sources import containers as gc
from ganeval.data.sources import images as gi
from ganeval.data.sources import is_streamable, png
from ganeval.data.sources.content_hash import ContentHasher


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _ihdr(w: int, h: int, depth: int = 8, colour: int = 2, comp: int = 0, filt: int = 0, inter: int = 0) -> bytes:
    return png.SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, comp, filt, inter))


def _png_bytes(a: np.ndarray, mode: str | None = None) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(a, mode=mode).save(buf, format="PNG")
    return buf.getvalue()


def _save(path: Path, a: np.ndarray, fmt: str = "PNG", mode: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(a, mode=mode).save(path, format=fmt)
    return path


def _rgb(h: int = 3, w: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _grey(h: int = 3, w: int = 4, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w), dtype=np.uint8)


# ---------------------------------------------------------------- png.py


def test_png_header_reads_exact_fields_at_least_33_bytes() -> None:
    assert png.header(_ihdr(5, 7)) == ("RGB", (5, 7))
    assert png.header(_ihdr(5, 7, colour=0)) == ("L", (5, 7))
    assert len(_ihdr(5, 7)) == 33
    assert png.header(_ihdr(5, 7)[:32]) is None
    assert png.header(_ihdr(5, 7, inter=1)) == ("RGB", (5, 7))  # Adam7 is legal


@pytest.mark.parametrize("kw", [dict(depth=16), dict(depth=9), dict(colour=3), dict(colour=6), dict(colour=4),
                                dict(comp=1), dict(filt=1), dict(inter=2), dict(w=0), dict(h=0)])
def test_png_header_refuses_every_other_field(kw: dict) -> None:
    w, h = kw.pop("w", 5), kw.pop("h", 7)
    assert png.header(_ihdr(w, h, **kw)) is None


def test_png_header_refuses_bad_signature_chunk_and_crc() -> None:
    good = _ihdr(5, 7)
    assert png.header(b"\x00" + good[1:]) is None
    assert png.header(good[:12] + b"IHDX" + good[16:]) is None
    assert png.header(good[:-1] + bytes([good[-1] ^ 1])) is None


def test_png_intact_edges() -> None:
    iend = _chunk(b"IEND", b"")
    assert png.intact(png.SIGNATURE + iend)  # exactly 8 + 12 bytes
    data = _png_bytes(_rgb())
    assert png.intact(data)
    assert not png.intact(data + b"\x00")  # trailing byte after IEND
    assert not png.intact(data[:-1])
    assert not png.intact(png.SIGNATURE)
    assert not png.intact(_ihdr(2, 2))  # no IEND
    bad = bytearray(data)
    bad[20] ^= 1  # inside IHDR
    assert not png.intact(bytes(bad))


def test_png_decode_and_version() -> None:
    a = _rgb(5, 6)
    assert np.array_equal(png.decode(_png_bytes(a)), a)
    g = _grey(4, 3)
    out = png.decode(_png_bytes(g))
    assert out is not None and out.shape == (4, 3) and np.array_equal(out, g)
    assert png.decode(_png_bytes(np.zeros((2, 2, 4), np.uint8))) is None  # RGBA
    data = bytearray(_png_bytes(a))
    data[-5] ^= 1  # IEND CRC
    assert png.decode(bytes(data)) is None
    import pyspng

    assert png.available() is True
    assert png.version() == pyspng.__version__


# ---------------------------------------------------------------- files.py


def test_grey_16bit_scales_by_65535_and_rounds() -> None:
    im = Image.fromarray(np.array([[0, 128, 257, 385, 65535]], dtype=np.uint16))
    out = gfiles._grey_16bit(im)
    assert out.mode == "L"
    assert np.asarray(out).tolist() == [[0, 0, 1, 1, 255]]  # 128*255/65535=0.498, 385/257=1.498


def test_grey_16bit_mode_i_boundary_65535_and_above() -> None:
    a = np.array([[0, 65535, 257]], dtype=np.int32)
    assert np.asarray(gfiles._grey_16bit(Image.fromarray(a))).tolist() == [[0, 255, 1]]
    top = 2**32 - 1
    b = np.array([[0, 65536, 2**31 - 1]], dtype=np.int32)
    want = np.rint(b.astype(np.float64) * (255.0 / top)).astype(np.uint8).tolist()
    assert want == [[0, 0, 127]]
    assert np.asarray(gfiles._grey_16bit(Image.fromarray(b))).tolist() == want


def test_grey_16bit_refuses_negative_but_not_zero() -> None:
    with pytest.raises(ValueError, match="negative pixel values"):
        gfiles._grey_16bit(Image.fromarray(np.array([[-1, 5]], dtype=np.int32)))
    assert np.asarray(gfiles._grey_16bit(Image.fromarray(np.array([[0, 0]], dtype=np.int32)))).tolist() == [[0, 0]]


def test_grey_16bit_big_endian_and_empty() -> None:
    im = Image.frombytes("I;16B", (2, 1), b"\x01\x01\xff\xfe")  # 257, 65534
    assert np.asarray(gfiles._grey_16bit(im)).tolist() == [[1, 255]]
    empty = gfiles._grey_16bit(Image.new("I", (0, 0)))
    assert empty.mode == "L" and empty.size == (0, 0)


def test_eight_bit_scales_16bit_and_keeps_others(caplog: pytest.LogCaptureFixture) -> None:
    gfiles._NOTED.clear()
    try:
        im = Image.fromarray(np.array([[65535, 0]], dtype=np.uint16))
        with caplog.at_level(logging.WARNING, logger="ganeval.data.files"):
            out = gfiles.eight_bit(im, "f.png")
            gfiles.eight_bit(im, "g.png")
        assert out.mode == "L" and np.asarray(out).tolist() == [[255, 0]]
        assert sum("f.png is a I;16" in r.getMessage() for r in caplog.records) == 1
        assert not any("g.png" in r.getMessage() for r in caplog.records)
        rgb = Image.new("RGB", (2, 2))
        assert gfiles.eight_bit(rgb, "x") is rgb
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="ganeval.data.files"):
            gfiles.eight_bit(Image.new("RGBA", (1, 1)), "a.png")
        assert any("a.png has an alpha channel (RGBA)" in r.getMessage() for r in caplog.records)
        gfiles._NOTED.clear()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="ganeval.data.files"):
            gfiles.eight_bit(Image.new("L", (1, 1)), "l.png")
            gfiles.eight_bit(Image.new("P", (1, 1)), "p.png")  # no transparency: nothing said
        assert caplog.records == []
    finally:
        gfiles._NOTED.clear()


def test_noted_claims_once_per_kind() -> None:
    n = gfiles._Noted()
    assert n.claim("alpha") and not n.claim("alpha")
    assert n.claim("16bit") and not n.claim("16bit")
    n.clear()
    assert n.claim("16bit")


def test_folder_size_edges_and_values(tmp_path: Path) -> None:
    a = _rgb(3, 4)
    _save(tmp_path / "d" / "a.png", a)
    with pytest.raises(ValueError, match="positive int"):
        gfiles.folder(tmp_path / "d", size=0)
    out = gfiles.folder(tmp_path / "d", size=1)
    want = np.asarray(Image.fromarray(a).resize((1, 1), Image.Resampling.BILINEAR))
    assert out.shape == (1, 3, 1, 1) and np.array_equal(out[0].transpose(1, 2, 0), want)
    assert np.array_equal(gfiles.folder(tmp_path / "d")[0], a.transpose(2, 0, 1))
    with pytest.raises(ValueError, match="no image files"):
        (tmp_path / "e").mkdir()
        gfiles.folder(tmp_path / "e")


def test_folder_mixed_grey_colour_warns_with_counts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    g, c = _grey(2, 2), _rgb(2, 2)
    _save(tmp_path / "a.png", g)
    _save(tmp_path / "b.png", c)
    with caplog.at_level(logging.WARNING, logger="ganeval.data.files"):
        out = gfiles.folder(tmp_path)
    assert out.shape == (2, 3, 2, 2)
    assert np.array_equal(out[0], np.stack([g, g, g]))
    assert any("1 of the 2 images" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ganeval.data.files"):
        (tmp_path / "a.png").unlink()
        gfiles.folder(tmp_path)
    assert not any("in colour" in r.getMessage() for r in caplog.records)


def test_folder_differing_sizes_refused(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _grey(2, 2))
    _save(tmp_path / "b.png", _grey(2, 3))
    with pytest.raises(ValueError, match=r"a.png is 2×2, .*b.png is 3×2"):
        gfiles.folder(tmp_path)
    assert gfiles.folder(tmp_path, size=2).shape == (2, 1, 2, 2)


def test_list_images_order_and_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    for n in ["b/x.PNG", "a.jpg", "c.webp", "z.txt"]:
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_bytes(b"x")
    assert [p.relative_to(tmp_path).as_posix() for p in gfiles.list_images(tmp_path)] == ["a.jpg", "b/x.PNG", "c.webp"]
    assert caplog.records == []
    (tmp_path / "q.gif").write_bytes(b"x")
    (tmp_path / "p.tif").write_bytes(b"x")
    with caplog.at_level(logging.WARNING, logger="ganeval.data.files"):
        gfiles.list_images(tmp_path)
    assert any(r.getMessage().startswith("2 image file(s)") and "p.tif" in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError, match="is a file"):
        gfiles.list_images(tmp_path / "a.jpg")
    with pytest.raises(FileNotFoundError):
        gfiles.list_images(tmp_path / "nope")


def test_check_npy_truncation_exact_edge(tmp_path: Path) -> None:
    p = tmp_path / "a.npy"
    np.save(p, np.arange(6, dtype=np.int16))
    gfiles._check_npy(p)  # exactly complete
    p.write_bytes(p.read_bytes()[:-1])
    with pytest.raises(ValueError, match=r"\(12 bytes of data\) but it holds 11"):
        gfiles._check_npy(p)


def test_load_array_npz_and_keys(tmp_path: Path) -> None:
    p = tmp_path / "a.npz"
    np.savez(p, x=np.arange(3))
    assert gfiles.load_array(p).tolist() == [0, 1, 2]
    np.savez(p, x=np.arange(3), y=np.arange(2))
    with pytest.raises(ValueError, match="pass key="):
        gfiles.load_array(p)
    assert gfiles.load_array(p, key="y").tolist() == [0, 1]
    with pytest.raises(ValueError, match="no array 'z'"):
        gfiles.load_array(p, key="z")
    q = tmp_path / "b.npy"
    np.save(q, np.arange(2))
    with pytest.raises(ValueError, match="drop key"):
        gfiles.load_array(q, key="x")
    m = gfiles.load_array(q, mmap=True)
    assert isinstance(m, np.memmap) and not m.flags.writeable
    assert not isinstance(gfiles.load_array(q), np.memmap)


# ---------------------------------------------------------------- containers.py


def test_check_member_size_limits_exact() -> None:
    a = Path("a.zip")
    assert gc._check_member(a, "x.png", 256 << 20, None) is True
    with pytest.raises(ValueError, match=f"declares {(256 << 20) + 1} bytes decompressed: refusing"):
        gc._check_member(a, "x.png", (256 << 20) + 1, None)
    assert gc._check_member(a, "x.png", 1 << 20, 0) is True  # not above 1 MiB
    with pytest.raises(ValueError, match=f"declares {(1 << 20) + 1} bytes decompressed from 0 compressed"):
        gc._check_member(a, "x.png", (1 << 20) + 1, 0)
    assert gc._check_member(a, "x.png", 200 * 6000, 6000) is True  # exactly the ratio
    with pytest.raises(ValueError, match="bomb"):
        gc._check_member(a, "x.png", 200 * 6000 + 1, 6000)
    assert gc._check_member(a, "dataset.json", 10, 10) is False
    with pytest.raises(ValueError, match="not an image file"):
        gc._check_member(a, "sub/dataset.json", 10, 10)
    with pytest.raises(ValueError, match="itself an archive"):
        gc._check_member(a, "x.TAR", 10, 10)


@pytest.mark.parametrize("name", ["/a.png", "a/../b.png", "C:x.png", "C:", "a\\..\\b.png", ".."])
def test_check_name_refuses(name: str) -> None:
    with pytest.raises(ValueError, match="absolute path"):
        gc._check_name(Path("a.zip"), name)


@pytest.mark.parametrize("name", ["a", "a.png", "ab:c.png", "..a.png", "a/b..png"])
def test_check_name_allows(name: str) -> None:
    gc._check_name(Path("a.zip"), name)


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as t:
        for n, b in members.items():
            info = tarfile.TarInfo(n)
            info.size = len(b)
            t.addfile(info, io.BytesIO(b))
    return path


def test_tar_container_reads_and_pid_state(tmp_path: Path) -> None:
    a, b = _png_bytes(_rgb()), _png_bytes(_grey())
    c = gc.open_container(_tar(tmp_path / "x.TAR", {"b.png": b, "a.png": a}))
    assert isinstance(c, gc.TarContainer) and c.kind == "tar"
    assert c._pid == -1 and c._file is None
    assert c.names == ["a.png", "b.png"]
    assert c.read("a.png") == a and c.read("b.png") == b
    assert c.head("b.png", 3) == b
    assert c.raw("a.png") == (a, True)
    state = c.__getstate__()
    assert state["_pid"] == -1 and state["_file"] is None
    c._file.close()
    assert c.describe("a.png") == f"{tmp_path / 'x.TAR'}:a.png"


def test_tar_member_ending_exactly_at_end_is_accepted(tmp_path: Path) -> None:
    data = b"\x01" * 512
    p = _tar(tmp_path / "x.tar", {"a.png": data})
    raw = p.read_bytes()
    off = 512
    assert raw[off:off + 512] == data
    p.write_bytes(raw[:off + 512])  # no end-of-archive blocks: member ends exactly at the file's end
    c = gc.TarContainer(p)
    assert c.read("a.png") == data
    c._file.close()


def test_tar_refuses_links_and_duplicates(tmp_path: Path) -> None:
    p = tmp_path / "l.tar"
    with tarfile.open(p, "w") as t:
        info = tarfile.TarInfo("a.png")
        info.type = tarfile.SYMTYPE
        info.linkname = "b.png"
        t.addfile(info)
    with pytest.raises(ValueError, match="is a link or device"):
        gc.TarContainer(p)
    q = tmp_path / "d.tar"
    with tarfile.open(q, "w") as t:
        for _ in range(2):
            info = tarfile.TarInfo("a.png")
            info.size = 1
            t.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(ValueError, match="appears twice"):
        gc.TarContainer(q)


def test_zip_container_raw_stored_and_deflated(tmp_path: Path) -> None:
    a, b = _png_bytes(_rgb()), _png_bytes(_grey())
    p = tmp_path / "x.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr(zipfile.ZipInfo("d/"), b"")
        z.writestr("d/s.png", a, compress_type=zipfile.ZIP_STORED)
        z.writestr("c.png", b, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("dataset.json", b"{}")
    c = gc.open_container(p)
    assert isinstance(c, gc.ZipContainer) and c.kind == "zip" and c._pid == -1
    assert c.names == ["c.png", "d/s.png"]
    assert c.raw("d/s.png") == (a, False)
    assert c.raw("c.png") == (b, True)
    assert c.read("d/s.png") == a
    st = c.__getstate__()
    assert st["_pid"] == -1 and st["_zip"] is None
    c._zip.close()


def test_open_container_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        gc.open_container(tmp_path / "none.zip")
    for n in ["a.tar.gz", "a.tgz", "a.tar.bz2", "a.tar.xz"]:
        (tmp_path / n).write_bytes(b"x")
        with pytest.raises(ValueError, match="is a compressed tar"):
            gc.open_container(tmp_path / n)
    (tmp_path / "a.gz").write_bytes(b"x")
    with pytest.raises(ValueError, match="is not an image folder, .zip or .tar"):
        gc.open_container(tmp_path / "a.gz")
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable zip"):
        gc.open_container(tmp_path / "bad.zip")


def test_folder_container_changed_and_stats(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _grey())
    _save(tmp_path / "b.png", _grey(seed=3))
    c = gc.open_container(tmp_path)
    assert c.kind == "folder" and c.names == ["a.png", "b.png"]
    st = c.stats()
    assert len(st) == 2
    assert c.changed(st, c.names) is None
    (tmp_path / "b.png").write_bytes((tmp_path / "b.png").read_bytes() + b"xx")
    assert c.changed(st, ["a.png"]) is None
    assert c.changed(st, c.names) == "b.png"
    (tmp_path / "a.png").unlink()
    assert c.changed(st, c.names) == "a.png"


def test_archive_changed(tmp_path: Path) -> None:
    p = _tar(tmp_path / "x.tar", {"a.png": b"1", "b.png": b"2"})
    c = gc.TarContainer(p)
    st = c.stats()
    assert len(st) == 1
    assert c.changed(st, c.names) is None
    assert c.changed([[0]], c.names) == "a.png"
    assert c.changed([[0]], []) is None
    p.unlink()
    assert c.changed(st, ["b.png"]) == "b.png"


def test_is_streamable(tmp_path: Path) -> None:
    (tmp_path / "a.ZIP").write_bytes(b"")
    (tmp_path / "a.tar").write_bytes(b"")
    (tmp_path / "a.npz").write_bytes(b"")
    assert is_streamable(str(tmp_path)) and is_streamable(str(tmp_path / "a.ZIP"))
    assert is_streamable(str(tmp_path / "a.tar"))
    assert not is_streamable(str(tmp_path / "a.npz")) and not is_streamable(str(tmp_path / "b.zip"))


# ---------------------------------------------------------------- images.py


@pytest.mark.parametrize("size", [0, -1, True, 1.0, "2"])
def test_image_source_refuses_size(tmp_path: Path, size: object) -> None:
    _save(tmp_path / "a.png", _grey())
    with pytest.raises(ValueError, match="size must be a positive int"):
        gi.ImageSource(tmp_path, size=size)  # type: ignore[arg-type]


def test_image_source_size_one_is_legal(tmp_path: Path) -> None:
    a = _rgb(3, 4)
    _save(tmp_path / "a.png", a)
    s = gi.ImageSource(tmp_path, size=1)
    assert s.shape == (1, 3, 1, 1) and len(s) == 1
    want = np.asarray(Image.fromarray(a).resize((1, 1), Image.Resampling.BILINEAR))
    assert np.array_equal(s.read_all()[0].transpose(1, 2, 0), want)


def test_image_source_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no image files under"):
        gi.ImageSource(tmp_path)


def test_scan_pixel_limit_exact(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(_ihdr(1 << 14, 1 << 14, colour=0))  # exactly MAX_PIXELS: header accepted
    s = gi.ImageSource(tmp_path)
    assert s.shape == (1, 1, 1 << 14, 1 << 14)
    (tmp_path / "a.png").write_bytes(_ihdr((1 << 28) + 1, 1))
    with pytest.raises(ValueError, match="declares 268435457×1 pixels"):
        gi.ImageSource(tmp_path)
    (tmp_path / "a.png").write_bytes(_ihdr(1 << 15, 1 << 14))  # 2**29 pixels, w/h small and h*h at the limit
    with pytest.raises(ValueError, match="decompression bomb"):
        gi.ImageSource(tmp_path)
    (tmp_path / "a.png").write_bytes(_ihdr(1 << 14, 1 << 15))
    with pytest.raises(ValueError, match="decompression bomb"):
        gi.ImageSource(tmp_path)


def test_scan_shape_channels_and_describe(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _save(tmp_path / "a.png", _grey(2, 5))
    _save(tmp_path / "b.bmp", _rgb(2, 5), fmt="BMP")
    with caplog.at_level(logging.WARNING, logger="ganeval.data.sources.images"):
        s = gi.ImageSource(tmp_path)
    assert s.shape == (2, 3, 2, 5) and s.channels == 3
    assert s.describe() == f"{tmp_path} (2 images of 2×5, 3 channel(s))"
    msgs = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("1 of the 2 images") and m.endswith(f"(first: {tmp_path / 'b.bmp'}), so all are read "
                                                                 "as RGB (3 channels)") for m in msgs)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ganeval.data.sources.images"):
        (tmp_path / "a.png").unlink()
        s2 = gi.ImageSource(tmp_path)
    assert s2.shape == (1, 3, 2, 5)
    assert not any("in colour" in r.getMessage() for r in caplog.records)


def test_scan_grey_only_and_sizes(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _grey(2, 3))
    _save(tmp_path / "b.bmp", _grey(2, 3), fmt="BMP")
    s = gi.ImageSource(tmp_path)
    assert s.shape == (2, 1, 2, 3)
    _save(tmp_path / "c.png", _grey(3, 2))
    with pytest.raises(ValueError, match=r"differ in size \(.*a.png is 3×2, .*c.png is 2×3\)"):
        gi.ImageSource(tmp_path)
    assert gi.ImageSource(tmp_path, size=4).shape == (3, 1, 4, 4)


def _reference(paths: list[Path], size: int | None, channels: int) -> np.ndarray:
    out = []
    for p in paths:
        with Image.open(p) as im:
            im.load()
            im = im.convert("L" if im.mode in ("L", "1", "LA") else "RGB")
            if size is not None and im.size != (size, size):
                im = im.resize((size, size), Image.Resampling.BILINEAR)
            if channels == 3:
                im = im.convert("RGB")
            a = np.asarray(im, dtype=np.uint8)
            out.append(a[None] if a.ndim == 2 else a.transpose(2, 0, 1))
    return np.stack(out)


@pytest.mark.parametrize("size", [None, 3, 4])
def test_read_all_equals_pil_reference(tmp_path: Path, size: int | None) -> None:
    paths = [_save(tmp_path / "a.png", _grey(4, 4)), _save(tmp_path / "b.png", _rgb(4, 4)),
             _save(tmp_path / "c.bmp", _grey(4, 4, seed=5), fmt="BMP"),
             _save(tmp_path / "d.bmp", _rgb(4, 4, seed=6), fmt="BMP")]
    s = gi.ImageSource(tmp_path, size=size)
    got = s.read_all()
    assert got.dtype == np.uint8
    assert np.array_equal(got, _reference(paths, size, 3))
    assert np.array_equal(got, gfiles.folder(tmp_path, size=size))


@pytest.mark.parametrize("size", [None, 2])
def test_read_all_grey_set(tmp_path: Path, size: int | None) -> None:
    paths = [_save(tmp_path / "a.png", _grey(3, 3)), _save(tmp_path / "b.bmp", _grey(3, 3, seed=2), fmt="BMP")]
    got = gi.ImageSource(tmp_path, size=size).read_all()
    assert got.shape == (2, 1, size or 3, size or 3)
    assert np.array_equal(got, _reference(paths, size, 1))


def test_16bit_png_source(tmp_path: Path) -> None:
    a = np.array([[0, 257], [65535, 514]], dtype=np.uint16)
    Image.fromarray(a).save(tmp_path / "a.png")
    s = gi.ImageSource(tmp_path)
    assert s.shape == (1, 1, 2, 2)
    assert s.read_all()[0, 0].tolist() == [[0, 1], [255, 2]]


def _batches_of(s: gi.ImageSource, **kw: object) -> list[np.ndarray]:
    return [b.numpy().copy() for b in s.batches(**kw)]  # type: ignore[arg-type]


def test_batches_split_and_order(tmp_path: Path) -> None:
    imgs = [_rgb(2, 2, seed=i) for i in range(5)]
    for i, a in enumerate(imgs):
        _save(tmp_path / f"{i}.png", a)
    s = gi.ImageSource(tmp_path)
    got = _batches_of(s, batch_size=2)
    assert [len(b) for b in got] == [2, 2, 1]
    assert np.array_equal(np.concatenate(got), np.stack([a.transpose(2, 0, 1) for a in imgs]))
    assert [len(b) for b in _batches_of(s, batch_size=5)] == [5]
    assert [len(b) for b in _batches_of(s, batch_size=7)] == [5]
    sel = _batches_of(s, batch_size=1, batch_sampler=[[4, 0], [2]])
    assert np.array_equal(sel[0], np.stack([imgs[4].transpose(2, 0, 1), imgs[0].transpose(2, 0, 1)]))
    assert np.array_equal(sel[1][0], imgs[2].transpose(2, 0, 1))


def test_batches_channels_last_and_transform(tmp_path: Path) -> None:
    imgs = [_rgb(2, 3, seed=i) for i in range(3)]
    for i, a in enumerate(imgs):
        _save(tmp_path / f"{i}.png", a)
    s = gi.ImageSource(tmp_path)
    want = np.stack([a.transpose(2, 0, 1) for a in imgs])
    (b,) = list(s.batches(3, channels_last=True))
    assert tuple(b.shape) == (3, 3, 2, 3) and not b.is_contiguous()
    assert b.stride() == (18, 1, 9, 3)
    assert np.array_equal(b.numpy(), want)
    (b,) = list(s.batches(3))
    assert b.is_contiguous() and np.array_equal(b.numpy(), want)
    (t,) = list(s.batches(3, transform=lambda x: x.float() * 2))
    assert t.dtype == torch.float32 and torch.equal(t, torch.from_numpy(want).float() * 2)


def test_batches_empty_index_list(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _rgb(2, 3))
    s = gi.ImageSource(tmp_path)
    for cl in (False, True):
        b, err = gi.Batches(s.dataset, channels_last=cl)([]) if False else gi.Batches(s.dataset, cl)[[]]
        assert err is None and tuple(b.shape) == (0, 3, 2, 3)
    got = list(s.batches(1, batch_sampler=[[], [0]]))
    assert [tuple(x.shape) for x in got] == [(0, 3, 2, 3), (1, 3, 2, 3)]


def test_batches_defaults_and_grey(tmp_path: Path) -> None:
    g = _grey(2, 3)
    _save(tmp_path / "a.png", g)
    s = gi.ImageSource(tmp_path)
    bt = gi.Batches(s.dataset)
    assert bt.channels_last is False and bt.shared is True
    b, err = bt[[0, 0]]
    assert err is None and b.is_contiguous() and b.numpy().tolist() == [[g.tolist()], [g.tolist()]]


def test_batches_error_for_bad_file(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _rgb(2, 2))
    s = gi.ImageSource(tmp_path)
    (tmp_path / "a.png").write_bytes((tmp_path / "a.png").read_bytes()[:40])
    b, err = gi.Batches(s.dataset)[[0]]
    assert b is None and err is not None and err.startswith(f"cannot read image file {tmp_path / 'a.png'}")
    with pytest.raises(ValueError, match="cannot read image file"):
        s.read_all()


def test_decode_shape_mismatch(tmp_path: Path) -> None:
    _save(tmp_path / "a.bmp", _grey(2, 2), fmt="BMP")
    _save(tmp_path / "b.png", _grey(2, 2))
    c = gc.open_container(tmp_path)
    d = gi.DecodedImages(c, 1, None, (2, 3))
    for i in (0, 1):
        with pytest.raises(ValueError, match="decodes to 2×2, but its header said 3×2"):
            d.decode(i)
    a, err = d[0]
    assert a is None and "header said 3×2" in err
    ok = gi.DecodedImages(c, 1, None, (2, 2))
    assert ok[1][1] is None and ok.decode(1).shape == (2, 2)
    assert len(ok) == 2


def test_decoded_pil_paths(tmp_path: Path) -> None:
    g = _grey(3, 3)
    _save(tmp_path / "a.png", g)
    c = gc.open_container(tmp_path)
    as_rgb = gi.DecodedImages(c, 3, None, (3, 3)).decode(0)
    assert as_rgb.shape == (3, 3, 3) and np.array_equal(as_rgb, np.stack([g] * 3, axis=2))
    same = gi.DecodedImages(c, 1, 3, (3, 3)).decode(0)
    assert np.array_equal(same, g)
    small = gi.DecodedImages(c, 1, 2, (2, 2)).decode(0)
    assert np.array_equal(small, np.asarray(Image.fromarray(g).resize((2, 2), Image.Resampling.BILINEAR)))
    rgb = _rgb(3, 3)
    _save(tmp_path / "a.png", rgb)
    assert np.array_equal(gi.DecodedImages(c, 3, 3, (3, 3)).decode(0), rgb)


def test_zip_source_with_bad_stored_crc_is_refused(tmp_path: Path) -> None:
    """A stored, non-PNG member read through zipfile (its CRC checked); a stored PNG with a flipped byte in its
    pixels fails its own chunk CRC, and then zipfile's check names the member."""
    a = _rgb(2, 2)
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, format="BMP")
    p = tmp_path / "x.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("a.bmp", buf.getvalue(), compress_type=zipfile.ZIP_STORED)
        z.writestr("b.png", _png_bytes(a), compress_type=zipfile.ZIP_STORED)
    s = gi.ImageSource(p)
    assert np.array_equal(s.read_all(), np.stack([a.transpose(2, 0, 1)] * 2))
    bad = bytearray(_png_bytes(a))
    bad[-20] ^= 0xFF  # inside IDAT's data: its chunk CRC fails, the zip's CRC (of these bytes) holds
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("b.png", bytes(bad), compress_type=zipfile.ZIP_STORED)
    s2 = gi.ImageSource(p)
    assert s2.shape == (1, 3, 2, 2)
    with pytest.raises(ValueError, match=r"cannot read image file .*x.zip:b.png: "):
        s2.read_all()


def test_finish() -> None:
    t = torch.ones(2)
    assert gi.Finish()((t, None))[0] is t
    f = gi.Finish(lambda x: x + 1)
    assert torch.equal(f((t, None))[0], t + 1) and f((t, None))[1] is None
    assert f((None, "bad")) == (None, "bad")


def test_worker_lost_message() -> None:
    e = RuntimeError("DataLoader worker (pid 3)\n is killed")
    one = gi.worker_lost(Path("/d"), 1, e)
    assert "rerun with --num-workers 0 or a smaller" in one
    assert "died (DataLoader worker (pid 3) is killed)" in one
    two = gi.worker_lost(Path("/d"), 2, e)
    assert "rerun with fewer --num-workers (num_workers=; now 2) or" in two


def test_batches_worker_lost_and_other_runtime_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _save(tmp_path / "a.png", _grey())
    s = gi.ImageSource(tmp_path)

    def boom(msg: str):  # type: ignore[no-untyped-def]
        def started(loader):  # type: ignore[no-untyped-def]
            raise RuntimeError(msg)
        return started

    monkeypatch.setattr(gi, "started", boom("DataLoader worker (pid 9) is killed by signal"))
    with pytest.raises(gi.WorkerLost, match="now 3"):
        list(s.batches(1, num_workers=3))
    monkeypatch.setattr(gi, "started", boom("other"))
    with pytest.raises(RuntimeError, match="^other$"):
        list(s.batches(1))


def test_loader_defaults(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _grey())
    s = gi.ImageSource(tmp_path)
    ld = s.loader([[0]])
    assert ld.num_workers == 0 and ld.pin_memory is False and ld.worker_init_fn is None
    assert ld.multiprocessing_context is None
    assert ld.dataset.channels_last is False and ld.dataset.shared is True
    assert s.loader([[0]], transform=lambda x: x).dataset.shared is False
    assert s.loader([[0]], pin_memory=True).pin_memory is torch.cuda.is_available()
    ld2 = s.loader([[0]], num_workers=2)
    assert ld2.worker_init_fn is not None and ld2.multiprocessing_context is not None
    assert isinstance(gi.started(ld), type(iter(ld)))


def test_files_key_fields(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _grey())
    s = gi.ImageSource(tmp_path)
    k = s.files_key()
    import PIL

    assert k["kind"] == "folder" and k["size"] is None and k["resize"] is None and k["format"] == 2
    assert k["pillow"] == PIL.__version__ and k["pyspng"] == png.version()
    assert s.files_key() is k
    assert gi.ImageSource(tmp_path, size=3).files_key()["resize"] == "PIL bilinear"
    s2 = gi.ImageSource(tmp_path)
    s2.files_key(tmp_path / "cache")
    assert len(list((tmp_path / "cache" / "files").glob("*.json"))) == 1
    assert not (tmp_path / "files").exists()


def test_content_memo_roundtrip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "d"
    a = _rgb(2, 2)
    _save(d / "a.png", a)
    cache = tmp_path / "cache"
    s = gi.ImageSource(d)
    assert s.memoised(cache) is None and s.memoised(None) is None
    got = s.content(cache_dir=cache)
    h = ContentHasher()
    h.update(torch.from_numpy(a.transpose(2, 0, 1)[None].copy()))
    assert got == h.content((1, 3, 2, 2))
    assert s.content() is got and s.memoised(None) is got
    memo = s._memo(cache)
    assert memo.parent == cache / "sources"
    assert memo.read_text() == json.dumps(got, sort_keys=True)
    s2 = gi.ImageSource(d)
    monkeypatch.setattr(gi.ImageSource, "batches", lambda *a, **k: (_ for _ in ()).throw(AssertionError("decoded")))
    assert s2.content(cache_dir=cache) == got
    assert s2.array_identity(cache_dir=cache) == {"shape": [1, 3, 2, 2], "dtype": "uint8", "sha256": got["sha256"][:16]}
    assert s2.array_identity(length=None, cache_dir=cache)["sha256"] == got["sha256"]
    # a memo of another shape is not used
    memo.write_text(json.dumps({**got, "shape": [2, 3, 2, 2]}))
    assert gi.ImageSource(d).memoised(cache) is None
    memo.write_text("{not json")
    assert gi.ImageSource(d).memoised(cache) is None
    # a symlinked memo is not read
    real = tmp_path / "real.json"
    real.write_text(json.dumps(got))
    memo.unlink()
    memo.symlink_to(real)
    assert gi.ImageSource(d).memoised(cache) is None


def test_remember_without_cache_and_memo_parents(tmp_path: Path) -> None:
    _save(tmp_path / "d" / "a.png", _grey())
    s = gi.ImageSource(tmp_path / "d")
    c = {"shape": [1, 1, 3, 4], "x": 1}
    assert s.remember(c, None) is c and s.memoised(tmp_path / "nocache") is c
    assert not (tmp_path / "nocache").exists()
    deep = tmp_path / "a" / "b"
    s2 = gi.ImageSource(tmp_path / "d")
    s2.remember(c, deep)
    assert gi.ImageSource(tmp_path / "d").memoised(deep) == c


def test_content_progress_default_off(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _save(tmp_path / "a.png", _grey())
    gi.ImageSource(tmp_path).content()
    assert capsys.readouterr().err == ""


def test_check_unchanged_ranges(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _grey())
    _save(tmp_path / "b.png", _grey(seed=4))
    s = gi.ImageSource(tmp_path)
    s.snapshot()
    first = s._stats
    s.snapshot()
    assert s._stats is first
    s.check_unchanged()
    (tmp_path / "a.png").write_bytes((tmp_path / "a.png").read_bytes() + b"zz")
    s.check_unchanged(1)
    s.check_unchanged(1, 2)
    with pytest.raises(ValueError, match=r"a.png changed while ganeval was reading"):
        s.check_unchanged()
    with pytest.raises(ValueError, match="changed"):
        s.check_unchanged(0, 1)


def test_header_errors_named(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"not an image at all" * 3)
    with pytest.raises(ValueError, match=r"cannot read image file .*a.png: not an image format PIL can read"):
        gi.ImageSource(tmp_path)
    c = gc.open_container(tmp_path)
    _save(tmp_path / "a.png", _rgb(2, 3))
    assert gi._header(c, "a.png") == ("RGB", (3, 2))
    _save(tmp_path / "a.png", np.zeros((2, 3, 4), np.uint8))  # RGBA: PIL's header
    assert gi._header(c, "a.png") == ("RGBA", (3, 2))


def test_why_and_described(tmp_path: Path) -> None:
    assert gi._why(OSError("a\n  b")) == "OSError: a b"
    _save(tmp_path / "a.png", _grey())
    c = gc.open_container(tmp_path)
    assert str(gi.Described(c, "a.png")) == str(tmp_path / "a.png")


# ---------------------------------------------------------------- datasets.py


def test_data_root_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.data import datasets as gd

    monkeypatch.setenv("GANEVAL_DATA", str(tmp_path / "env"))
    assert gd.data_root(tmp_path / "x") == tmp_path / "x"
    assert gd.data_root("") == tmp_path / "env" and gd.data_root() == tmp_path / "env"
    monkeypatch.setenv("GANEVAL_DATA", "")
    assert gd.data_root(None) == Path("data")


def test_md5_files_and_unverified() -> None:
    import torchvision.datasets as tvd

    from ganeval.data import datasets as gd

    c10 = gd._md5_files(tvd.CIFAR10)
    assert c10 == [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch", "batches.meta"]
    cel = gd._md5_files(tvd.CelebA)
    assert "img_align_celeba.zip" not in cel and "list_eval_partition.txt" in cel and len(cel) == len(tvd.CelebA.file_list) - 1
    u = gd.unverified(tvd.CIFAR10)
    assert issubclass(u, tvd.CIFAR10) and u.__name__ == "CIFAR10"
    assert [m for _, m in u.train_list + u.test_list] == [None] * 6 and u.meta["md5"] is None
    assert [n for n, _ in u.train_list] == [n for n, _ in tvd.CIFAR10.train_list]
    assert tvd.CIFAR10.meta["md5"] is not None
    uc = gd.unverified(tvd.CelebA)
    assert [m for _, m, _ in uc.file_list] == [None] * len(tvd.CelebA.file_list)
    assert [n for _, _, n in uc.file_list] == [n for _, _, n in tvd.CelebA.file_list]


def test_check_checksums_args() -> None:
    from ganeval.data import datasets as gd

    gd._check_checksums_args(True, True)
    gd._check_checksums_args(True, False)
    gd._check_checksums_args(False, False)
    with pytest.raises(ValueError, match="a download is always checked"):
        gd._check_checksums_args(False, True)
    with pytest.raises(ValueError, match="checksums must be true or false, got 1"):
        gd._check_checksums_args(1, False)  # type: ignore[arg-type]


def test_present(tmp_path: Path) -> None:
    import torchvision.datasets as tvd

    from ganeval.data import datasets as gd

    for n in gd._md5_files(tvd.CIFAR10)[:-1]:
        (tmp_path / n).write_bytes(b"x")
    assert not gd._present(tvd.CIFAR10, tmp_path)
    (tmp_path / "batches.meta").write_bytes(b"x")
    assert gd._present(tvd.CIFAR10, tmp_path)
    for n in gd._md5_files(tvd.CelebA):
        (tmp_path / n).write_bytes(b"x")
    assert not gd._present(tvd.CelebA, tmp_path)
    (tmp_path / "img_align_celeba").mkdir()
    assert gd._present(tvd.CelebA, tmp_path)


def test_remove_if_empty(tmp_path: Path) -> None:
    from ganeval.data import datasets as gd

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "f").write_bytes(b"")
    gd._remove_if_empty([tmp_path / "a" / "b", tmp_path / "a", tmp_path / "c", tmp_path / "gone"])
    assert not (tmp_path / "a").exists() and (tmp_path / "c" / "f").exists()


def _cifar_files(folder: Path, n: int) -> np.ndarray:
    import pickle

    folder.mkdir(parents=True)
    x = np.random.default_rng(3).integers(0, 256, (5 * n + n, 32, 32, 3), dtype=np.uint8)
    for i, name in enumerate([f"data_batch_{b}" for b in range(1, 6)] + ["test_batch"]):
        part = x[i * n:(i + 1) * n]
        entry = {"data": np.ascontiguousarray(part.transpose(0, 3, 1, 2)).reshape(n, 3072), "labels": [0] * n}
        (folder / name).write_bytes(pickle.dumps(entry, protocol=2))
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": ["a"] * 10}, protocol=2))
    return x


def test_cifar10_checksums_false_reads_and_true_refuses(tmp_path: Path) -> None:
    from ganeval.data import datasets as gd

    x = _cifar_files(tmp_path / "cifar-10-batches-py", 2)
    got = gd.cifar10(tmp_path, download=False, checksums=False)
    assert got.shape == (10, 3, 32, 32) and got.flags.c_contiguous
    assert np.array_equal(got, x[:10].transpose(0, 3, 1, 2))
    assert np.array_equal(gd.cifar10(tmp_path, train=False, download=False, checksums=False),
                          x[10:].transpose(0, 3, 1, 2))
    with pytest.raises(gd.DatasetNotFoundError, match="present under .* but fail torchvision's MD5 checksums"):
        gd.cifar10(tmp_path, download=False)
    with pytest.raises(ValueError, match="a download is always checked"):
        gd.cifar10(tmp_path, checksums=False)  # download defaults to True


def test_cifar_absent_says_download_false(tmp_path: Path) -> None:
    from ganeval.data import datasets as gd

    with pytest.raises(gd.DatasetNotFoundError, match=r"CIFAR100 not found under .*cifar-100-python \(download=False: "):
        gd.cifar100(tmp_path / "r", download=False, checksums=False)
    assert not (tmp_path / "r").exists()


def test_crop_resize_edges(tmp_path: Path) -> None:
    from ganeval.data import datasets as gd

    img = np.random.default_rng(0).integers(0, 256, (7, 6, 3), dtype=np.uint8)
    Image.fromarray(img).save(tmp_path / "a.png")
    p = str(tmp_path / "a.png")
    assert np.array_equal(gd._crop_resize(p, 6, 6), img[0:6, 0:6].transpose(2, 0, 1))  # round(0.5)=0 (banker's)
    assert np.array_equal(gd._crop_resize(p, 4, 4), img[2:6, 1:5].transpose(2, 0, 1))  # round(1.5)=2, round(1)=1
    assert np.array_equal(gd._crop_resize(p, 3, 3), img[2:5, 2:5].transpose(2, 0, 1))  # round(2)=2, round(1.5)=2
    want = np.asarray(Image.fromarray(img[2:6, 1:5]).resize((2, 2), Image.Resampling.BILINEAR)).transpose(2, 0, 1)
    assert np.array_equal(gd._crop_resize(p, 4, 2), want)
    with pytest.raises(ValueError, match=r"is 6×7, smaller than the crop 7"):
        gd._crop_resize(p, 7, 7)


def _celeba(root: Path, n: int) -> list[np.ndarray]:
    folder = root / "celeba"
    (folder / "img_align_celeba").mkdir(parents=True)
    names = [f"{i + 1:06d}.jpg" for i in range(n)]
    imgs = []
    for i, name in enumerate(names):
        a = np.full((9, 8, 3), 20 * i, np.uint8)
        Image.fromarray(a).save(folder / "img_align_celeba" / name, format="PNG")  # lossless, named .jpg
        imgs.append(a)
    (folder / "list_eval_partition.txt").write_text("".join(f"{f} 0\n" for f in names))
    (folder / "identity_CelebA.txt").write_text("".join(f"{f} 1\n" for f in names))
    (folder / "list_bbox_celeba.txt").write_text(f"{n}\nimage_id x_1 y_1 width height\n"
                                                 + "".join(f"{f} 1 1 1 1\n" for f in names))
    (folder / "list_landmarks_align_celeba.txt").write_text(f"{n}\nlefteye_x lefteye_y righteye_x righteye_y nose_x "
                                                            "nose_y leftmouth_x leftmouth_y rightmouth_x rightmouth_y\n"
                                                            + "".join(f"{f} " + " ".join(["1"] * 10) + "\n" for f in names))
    attrs = " ".join(f"a{i}" for i in range(40))
    (folder / "list_attr_celeba.txt").write_text(f"{n}\n{attrs}\n" + "".join(f"{f} " + " ".join(["1"] * 40) + "\n" for f in names))
    return imgs


def test_celeba_limit_and_crop(tmp_path: Path) -> None:
    from ganeval.data import datasets as gd

    imgs = _celeba(tmp_path, 3)
    out = gd.celeba(tmp_path, download=False, checksums=False, crop=6, size=6, limit=1, num_workers=0)
    assert out.shape == (1, 3, 6, 6) and np.array_equal(out[0], imgs[0][2:8, 1:7].transpose(2, 0, 1) * 0 + imgs[0][0, 0, 0])
    assert gd.celeba(tmp_path, download=False, checksums=False, crop=6, size=6).shape == (3, 3, 6, 6)
    with pytest.raises(ValueError, match="limit must be a positive int or None, got 0"):
        gd.celeba(tmp_path, download=False, checksums=False, limit=0)
    with pytest.raises(ValueError, match="smaller than the crop 108"):
        gd.celeba(tmp_path, download=False, checksums=False, limit=1)  # crop default 108
    with pytest.raises(ValueError, match="download is always checked"):
        gd.celeba(tmp_path, checksums=False)
    with pytest.raises(gd.DatasetNotFoundError, match="fail torchvision's MD5"):
        gd.celeba(tmp_path, download=False, limit=1)


def test_celeba_default_size_64(tmp_path: Path) -> None:
    from ganeval.data import datasets as gd

    folder = tmp_path / "celeba"
    _celeba(tmp_path, 1)
    a = np.random.default_rng(2).integers(0, 256, (110, 109, 3), dtype=np.uint8)
    Image.fromarray(a).save(folder / "img_align_celeba" / "000001.jpg", format="PNG")
    out = gd.celeba(tmp_path, split="all", download=False, checksums=False)
    want = np.asarray(Image.fromarray(a[1:109, 0:108]).resize((64, 64), Image.Resampling.BILINEAR)).transpose(2, 0, 1)
    assert out.shape == (1, 3, 64, 64) and np.array_equal(out[0], want)


def test_known_rows() -> None:
    from ganeval.data import datasets as gd

    assert gd.known_rows("ganeval.data.digits", {}) == 1797
    assert gd.known_rows("ganeval.data.digits_classes", {}) == 178 + 182 + 177 + 183 + 181
    assert gd.known_rows("x.digits_classes", {"classes": [9, 9, 0]}) == 180 + 178
    assert gd.known_rows("x.digits_classes", {"classes": [10]}) is None
    assert gd.known_rows("x.mnist", {}) == 60000 and gd.known_rows("x.mnist", {"train": False}) == 10000
    assert gd.known_rows("x.cifar100", {"train": True}) == 50000
    assert gd.known_rows("x.celeba", {}) == 162770
    assert gd.known_rows("x.celeba", {"split": "valid", "limit": 5}) == 5
    assert gd.known_rows("x.celeba", {"split": "test", "limit": 10**6}) == 19962
    assert gd.known_rows("x.celeba", {"split": "dev"}) is None
    assert gd.known_rows("x.celeba", {"limit": "many"}) is None
    assert gd.known_rows("x.gaussian", {"n": 7}) == 7
    assert gd.known_rows("x.gaussian", {"n": True}) is None and gd.known_rows("x.gaussian", {"n": 7.0}) is None
    assert gd.known_rows("x.gaussian", {}) is None


# ---------------------------------------------------------------- file_digests.py and content_hash.py


def _vm(tmp_path: Path, expire: str, every: str) -> str:
    (tmp_path / "dirty_expire_centisecs").write_text(expire)
    (tmp_path / "dirty_writeback_centisecs").write_text(every)
    return str(tmp_path)


def test_writeback_margin_formula_and_edges(tmp_path: Path) -> None:
    from ganeval.data.sources import file_digests as fd

    assert fd.writeback_margin(_vm(tmp_path, "3000\n", "500\n")) == 70.0
    assert fd.writeback_margin(_vm(tmp_path, "3000", "1")) == 2 * 3001 / 100
    assert fd.writeback_margin(_vm(tmp_path, "100", "1")) == 2.02
    assert fd.writeback_margin(_vm(tmp_path, "0", "1")) == 2.0
    assert fd.writeback_margin(_vm(tmp_path, "99", "1")) == 2.0
    assert fd.writeback_margin(_vm(tmp_path, "3000", "0")) == float("inf")
    assert fd.writeback_margin(_vm(tmp_path, "3000", "-5")) == float("inf")
    assert fd.writeback_margin(_vm(tmp_path, "x", "5")) == 70.0
    assert fd.writeback_margin(str(tmp_path / "none")) == 70.0
    assert fd.writeback_margin.__defaults__ == ("/proc/sys/vm",)


def test_stat_key_fields(tmp_path: Path) -> None:
    import os

    from ganeval.data.sources import file_digests as fd

    p = tmp_path / "a"
    p.write_bytes(b"12345")
    st = os.stat(p)
    assert fd.stat_key(p) == [5, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


class _Clock:
    def __init__(self, ns: int) -> None:
        self.ns = ns

    def time_ns(self) -> int:
        return self.ns


def _memo_files(memo_dir: Path) -> dict:
    (memo,) = list(memo_dir.glob("*.json"))
    found = json.loads(memo.read_text())
    assert found["format"] == 1 and found["kind"] == "sha256"
    return found["files"]


def test_digests_racy_boundary_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from ganeval.data.sources import file_digests as fd

    root = tmp_path / "r"
    root.mkdir()
    (root / "a").write_bytes(b"abc")
    st = fd.stat_key(root / "a")
    last = max(st[1], st[2])
    want = hashlib.sha256(b"abc").digest()
    monkeypatch.setattr(fd, "RACY_SECONDS", 1.0)
    for now, kept in [(last + 10**9, False), (last + 10**9 + 1, True), (last + 1_500_000_000, True)]:
        memo_dir = tmp_path / f"m{now}"
        monkeypatch.setattr(fd, "time", _Clock(now))
        assert fd.digests(root, ["a"], memo_dir) == [want]
        files = _memo_files(memo_dir)
        assert (files == {"a": [*st, want.hex()]}) if kept else (files == {})
    monkeypatch.setattr(fd, "RACY_SECONDS", float("inf"))
    monkeypatch.setattr(fd, "time", _Clock(last + 10**18))
    fd.digests(root, ["a"], tmp_path / "inf")
    assert _memo_files(tmp_path / "inf") == {}


def test_digests_memo_used_only_for_same_stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.data.sources import file_digests as fd

    root = tmp_path / "r"
    root.mkdir()
    (root / "a").write_bytes(b"abc")
    (root / "b").write_bytes(b"de")
    monkeypatch.setattr(fd, "RACY_SECONDS", -60.0)
    memo_dir = tmp_path / "m"
    first = fd.digests(root, ["a", "b"], memo_dir)
    memo = fd._memo_path(memo_dir, root, "sha256")
    data = json.loads(memo.read_text())
    data["files"]["a"][-1] = "00" * 32  # a remembered digest is taken as it is while the stat matches
    memo.write_text(json.dumps(data))
    assert fd.digests(root, ["a", "b"], memo_dir) == [bytes(32), first[1]]
    data["files"]["b"][0] += 1  # another size: computed again
    data["files"]["b"][-1] = "11" * 32
    memo.write_text(json.dumps(data))
    assert fd.digests(root, ["b"], memo_dir) == [first[1]]
    assert fd._load(memo)["b"][-1] == first[1].hex()
    data["format"] = 2
    memo.write_text(json.dumps(data))
    assert fd._load(memo) == {}
    memo.write_text(json.dumps({"format": 1}))
    assert fd._load(memo) == {}
    assert fd._load(tmp_path / "none.json") == {}
    assert fd.digests(root, ["b", "a"]) == [first[1], first[0]]
    assert fd.digests(root, ["a"], compute=lambda p: b"x" + Path(p).read_bytes()) == [b"xabc"]


def test_content_hasher_counts_and_threads() -> None:
    from ganeval.hashing import StreamHasher

    a = torch.arange(2 * 3 * 2 * 2, dtype=torch.uint8).reshape(2, 3, 2, 2)
    ref = StreamHasher()
    ref.update(a)
    for threaded in (False, True):
        h = ContentHasher(threaded=threaded)
        assert list(h.wrap(iter([a[:1], a[1:]]))) and True
        got = h.content((2, 3, 2, 2))
        assert got == {"stream": ref.hexdigest(), "sha256": ref.bytes_hexdigest(), "shape": [2, 3, 2, 2],
                       "dtype": "uint8"}
    h = ContentHasher()
    h.update(a)
    with pytest.raises(RuntimeError, match="saw 2 images, expected 3"):
        h.content((3, 3, 2, 2))
    cl = ContentHasher()
    cl.update(a.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2))  # channels-last view: same identity
    assert cl.content((2, 3, 2, 2))["sha256"] == ref.bytes_hexdigest()
    assert ContentHasher()._queue is None and ContentHasher(threaded=True, depth=3)._queue.maxsize == 3


def test_content_hasher_threaded_error_is_raised() -> None:
    h = ContentHasher(threaded=True)
    h.update("not a tensor")  # type: ignore[arg-type]
    h.update(torch.zeros(1, 1, 1, 1, dtype=torch.uint8))
    with pytest.raises(AttributeError):
        h.content((1, 1, 1, 1))
    h.close()


def test_batches_in_the_main_process_are_not_shared(tmp_path: Path) -> None:
    _save(tmp_path / "a.png", _grey())
    s = gi.ImageSource(tmp_path)
    b, _ = gi.Batches(s.dataset)[[0]]
    assert not b.is_shared()
    (b2,) = list(s.batches(1))
    assert not b2.is_shared()


class _FakeLoader:
    def __init__(self, n: int) -> None:
        self.num_workers = n

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter([gc_is_frozen()])


def gc_is_frozen() -> int:
    import gc

    return gc.get_freeze_count()


def test_started_freezes_only_with_workers() -> None:
    import gc

    before = gc.get_freeze_count()
    assert list(gi.started(_FakeLoader(0))) == [before]
    if before == 0:
        assert next(gi.started(_FakeLoader(2))) > 0
    assert gc.get_freeze_count() == 0 or gc.get_freeze_count() == before


def test_read_all_and_content_default_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _save(tmp_path / "a.png", _grey())
    s = gi.ImageSource(tmp_path)
    calls: list[tuple] = []
    real = gi.ImageSource.batches

    def spy(self, batch_size, num_workers=0, *a, **k):  # type: ignore[no-untyped-def]
        calls.append((batch_size, num_workers))
        return real(self, batch_size, 0, *a, **k)

    monkeypatch.setattr(gi.ImageSource, "batches", spy)
    s.read_all()
    s.content()
    assert calls == [(256, 0), (256, 0)]
    seen: list[tuple] = []
    real_loader = gi.ImageSource.loader

    def loader_spy(self, sampler, num_workers, pin_memory, transform, channels_last):  # type: ignore[no-untyped-def]
        seen.append((list(map(list, sampler)), num_workers, pin_memory, transform, channels_last))
        return real_loader(self, sampler, num_workers, pin_memory, transform, channels_last)

    monkeypatch.setattr(gi.ImageSource, "batches", real)
    monkeypatch.setattr(gi.ImageSource, "loader", loader_spy)
    list(s.batches(4))
    assert seen == [([[0]], 0, False, None, False)]


def test_grey_like_modes_are_converted_to_l(tmp_path: Path) -> None:
    """A 1-bit and a grey+alpha PNG in a grey set: converted to 'L' (0/255, alpha dropped), as PIL's convert does."""
    bits = np.array([[0, 1, 1], [1, 0, 1]], dtype=bool)
    Image.fromarray(bits).save(tmp_path / "a.png")
    la = np.stack([_grey(2, 3), np.full((2, 3), 7, np.uint8)], axis=2)
    Image.fromarray(la, mode="LA").save(tmp_path / "b.png")
    s = gi.ImageSource(tmp_path)
    assert s.shape == (2, 1, 2, 3)
    got = s.read_all()
    assert got[0, 0].tolist() == (bits.astype(np.uint8) * 255).tolist()
    assert np.array_equal(got[1, 0], la[..., 0])


def test_grey_16bit_rounding_pins_each_divisor() -> None:
    """Values whose rounding tells 65535 from 65536 and 2**32-1 from 2**32+1; a max of exactly 65536 is 32-bit."""
    im = Image.fromarray(np.array([[33025, 0]], dtype=np.uint16))
    assert np.asarray(gfiles._grey_16bit(im)).tolist() == [[129, 0]]  # 33025*255/65535 = 128.502
    i32 = Image.fromarray(np.array([[33025, 65536]], dtype=np.int32))
    assert np.asarray(gfiles._grey_16bit(i32)).tolist() == [[0, 0]]  # max above 65535: divided by 2**32-1
    i16 = Image.fromarray(np.array([[33025, 65535]], dtype=np.int32))
    assert np.asarray(gfiles._grey_16bit(i16)).tolist() == [[129, 255]]
    big = Image.fromarray(np.array([[1086374081]], dtype=np.int32))
    assert np.asarray(gfiles._grey_16bit(big)).tolist() == [[65]]  # 64.50000001 with 2**32-1
