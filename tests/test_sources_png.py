"""The PNG fast path (`ganeval.data.sources.png`): libspng's pixels equal PIL's on every kind of 8-bit grey/RGB PNG
(each row filter, transparency and gamma chunks, several compression levels), other PNGs are left to PIL, a corrupt
file is an error, and channels-last batches hold the same images as contiguous ones (also through extraction)."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from ganeval.data.sources import ImageSource, png

pytestmark = pytest.mark.skipif(not png.available(), reason="pyspng is not installed")


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def filtered_png(a: np.ndarray, extra: bytes = b"") -> bytes:
    """An 8-bit PNG of `a` (H×W grey or H×W×3 RGB) whose row r uses filter type r % 5 (none, sub, up, average,
    Paeth), written here so that every filter is exercised (PIL's writer picks its own); `extra` chunks before IDAT."""
    h, w = a.shape[:2]
    c = 1 if a.ndim == 2 else 3
    rows = a.reshape(h, w * c).astype(np.int64)
    raw = bytearray()
    for r in range(h):
        kind, x = r % 5, rows[r]
        up = rows[r - 1] if r else np.zeros_like(x)
        left = np.concatenate([np.zeros(c, np.int64), x[:-c]])
        upleft = np.concatenate([np.zeros(c, np.int64), up[:-c]])
        pred = [np.zeros_like(x), left, up, (left + up) // 2,
                np.array([_paeth(*v) for v in zip(left, up, upleft)], np.int64)][kind]
        raw += bytes([kind]) + ((x - pred) % 256).astype(np.uint8).tobytes()
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0 if c == 1 else 2, 0, 0, 0)
    return png.SIGNATURE + chunk(b"IHDR", ihdr) + extra + chunk(b"IDAT", zlib.compress(bytes(raw), 6)) + chunk(b"IEND", b"")


def pil_pixels(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        im.load()
        return np.asarray(im)


@pytest.mark.parametrize("shape", [(9, 11), (9, 11, 3), (1, 1, 3), (64, 3)])
@pytest.mark.parametrize("extra", [b"", chunk(b"gAMA", struct.pack(">I", 45455)), chunk(b"tRNS", b"\x00\x07" * 3)])
def test_every_filter_decodes_to_pils_pixels(shape: tuple[int, ...], extra: bytes) -> None:
    a = np.random.default_rng(len(shape) + len(extra)).integers(0, 256, shape, dtype=np.uint8)
    if extra[4:8] == b"tRNS" and len(shape) == 2:
        extra = chunk(b"tRNS", b"\x00\x07")  # grey transparency is one sample
    data = filtered_png(a, extra)
    mode = "L" if len(shape) == 2 else "RGB"
    assert png.header(data) == (mode, (shape[1], shape[0]))
    got = png.decode(data)
    assert got is not None and got.dtype == np.uint8
    np.testing.assert_array_equal(got, pil_pixels(data))
    np.testing.assert_array_equal(got, a)  # and the pixels written


@pytest.mark.parametrize("level", [0, 1, 6, 9])
def test_pil_written_pngs_decode_alike(tmp_path: Path, level: int) -> None:
    rng = np.random.default_rng(level)
    smooth = np.asarray(Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).resize((40, 30)))
    for arr in (smooth, smooth[..., 1], rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)):
        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, format="PNG", compress_level=level, optimize=level == 9)
        np.testing.assert_array_equal(png.decode(buf.getvalue()), pil_pixels(buf.getvalue()))


def _saved(im: Image.Image, **kw: object) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG", **kw)
    return buf.getvalue()


def test_other_files_are_left_to_pil() -> None:
    rng = np.random.default_rng(1)
    rgb = Image.fromarray(rng.integers(0, 256, (5, 6, 3), dtype=np.uint8))
    others = {
        "RGBA": _saved(rgb.convert("RGBA")),
        "palette": _saved(rgb.convert("P")),
        "16-bit grey": _saved(Image.fromarray(rng.integers(0, 65535, (5, 6), dtype=np.uint16))),
        "1-bit": _saved(rgb.convert("1")),
        "JPEG": (lambda b: (rgb.save(b, format="JPEG"), b.getvalue())[1])(io.BytesIO()),
    }
    interlaced = bytearray(filtered_png(np.zeros((4, 4, 3), np.uint8)))
    interlaced[28] = 1  # the IHDR's interlace byte (Adam7); CRC then wrong as well
    others["interlaced"] = bytes(interlaced)
    for what, data in others.items():
        assert png.header(data) is None, what
        assert png.decode(data) is None, what


def test_a_crc_error_goes_to_pil_and_a_bad_stream_is_an_error() -> None:
    """libspng ignores CRCs as pyspng sets it up: a file with a wrong CRC (or no IEND) is left to PIL, which refuses
    it; a broken deflate stream under right CRCs is libspng's RuntimeError."""
    a = np.random.default_rng(2).integers(0, 256, (16, 16, 3), dtype=np.uint8)
    data = filtered_png(a)
    assert png.intact(data)
    for pos in (33 + 8 + 100, len(data) // 2, len(data) - 20, len(data) - 14):  # IDAT data, its checksums, its CRC
        broken = bytearray(data)
        broken[pos] ^= 0xFF
        assert not png.intact(bytes(broken)) and png.decode(bytes(broken)) is None, pos
    assert png.decode(data[:-12]) is None  # no IEND
    assert png.decode(data + b"junk") is None  # bytes after IEND
    idat = data.index(b"IDAT") - 4
    stream = bytearray(zlib.compress(b"\x07" * 100))  # inflates, but not to 16 rows of 49 bytes
    crafted = data[:idat] + chunk(b"IDAT", bytes(stream)) + chunk(b"IEND", b"")
    assert png.intact(crafted)
    with pytest.raises(RuntimeError):
        png.decode(crafted)
    bad_ihdr = bytearray(data)
    bad_ihdr[20] ^= 1  # height changed, IHDR CRC wrong: not read here (PIL refuses it with its own message)
    assert png.header(bytes(bad_ihdr)) is None


def _write(root: Path, arrays: list[np.ndarray]) -> Path:
    root.mkdir()
    for i, a in enumerate(arrays):
        Image.fromarray(a).save(root / f"{i:02d}.png")
    return root


def _read(src: ImageSource, **kw: object) -> np.ndarray:
    return np.concatenate([b.numpy() for b in src.batches(3, **kw)])


@pytest.mark.parametrize("size", [None, 9])
def test_source_pixels_do_not_depend_on_the_decoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    size: int | None) -> None:
    """A folder of RGB and grey PNGs (grey made RGB, and resized when size is given): the same batches with libspng
    and with PIL alone, channels-last views holding the same images as contiguous batches."""
    rng = np.random.default_rng(3)
    arrays = [rng.integers(0, 256, (12, 12, 3), dtype=np.uint8) for _ in range(4)] + [
        rng.integers(0, 256, (12, 12), dtype=np.uint8)]
    src = ImageSource(_write(tmp_path / "f", arrays), size=size)
    fast = _read(src)
    last = [b for b in src.batches(3, channels_last=True)]
    assert not last[0].is_contiguous() and last[0].shape == (3, 3, size or 12, size or 12)
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in last]), fast)
    monkeypatch.setattr(png, "_spng", None)
    np.testing.assert_array_equal(_read(ImageSource(tmp_path / "f", size=size)), fast)
    if size is None:
        np.testing.assert_array_equal(fast[4], np.repeat(arrays[4][None], 3, axis=0))


def test_corrupt_member_names_the_file(tmp_path: Path) -> None:
    root = _write(tmp_path / "f", [np.zeros((8, 8, 3), np.uint8)] * 3)
    data = bytearray((root / "01.png").read_bytes())
    data[-20] ^= 0xFF
    (root / "01.png").write_bytes(bytes(data))
    src = ImageSource(root)  # the header is fine: found when decoding
    with pytest.raises(ValueError, match=r"cannot read image file .*01\.png"):
        _read(src)


@pytest.mark.gpu
def test_channels_last_extraction_on_cuda_equals_the_array(tmp_path: Path) -> None:
    """Streamed extraction (channels-last batches transposed on the GPU) gives the features of the decoded array."""
    from ganeval.features import extract
    from ganeval.features.inception import save_random_weights

    rng = np.random.default_rng(4)
    src = ImageSource(_write(tmp_path / "f", [rng.integers(0, 256, (64, 64, 3), dtype=np.uint8) for _ in range(10)]))
    weights = save_random_weights(tmp_path / "w.pth")
    streamed = extract(src, "inception", weights=weights, download=False, batch_size=4, device="cuda",
                       num_workers=2, progress=False)
    whole = extract(torch.from_numpy(src.read_all()), "inception", weights=weights, download=False, batch_size=4,
                    device="cuda", progress=False)
    np.testing.assert_array_equal(streamed, whole)
