"""Sweep 6 (features/data): P-mode transparency note, DecodedImages.decode's checked re-read, save_reference's
content hash for non-array input, streaming's files-partial folder name and chunk constants."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image

from ganeval.data import files as gfiles
from ganeval.data.sources.containers import Container
from ganeval.data.sources.images import DecodedImages
from ganeval.features import streaming
from ganeval.hashing import stable_hash


def _png(a: np.ndarray) -> bytes:
    b = io.BytesIO()
    Image.fromarray(a).save(b, format="PNG")
    return b.getvalue()


# ------------------------------------------------------------------------------------------ files.eight_bit (P mode)


def test_eight_bit_notes_alpha_of_p_image_with_transparency(caplog: pytest.LogCaptureFixture) -> None:
    gfiles._NOTED.clear()
    try:
        im = Image.new("P", (1, 1))
        im.info["transparency"] = 0
        with caplog.at_level(logging.WARNING, logger="ganeval.data.files"):
            out = gfiles.eight_bit(im, "t.png")
        assert out is im
        msgs = [r.getMessage() for r in caplog.records]
        assert sum("t.png has an alpha channel (P)" in m for m in msgs) == 1
    finally:
        gfiles._NOTED.clear()


def test_eight_bit_says_nothing_for_plain_p_or_rgb_with_transparency(caplog: pytest.LogCaptureFixture) -> None:
    gfiles._NOTED.clear()
    try:
        rgb = Image.new("RGB", (1, 1))
        rgb.info["transparency"] = (0, 0, 0)  # not P: no alpha note
        with caplog.at_level(logging.WARNING, logger="ganeval.data.files"):
            gfiles.eight_bit(rgb, "r.png")
            gfiles.eight_bit(Image.new("P", (1, 1)), "p.png")
        assert caplog.records == []
    finally:
        gfiles._NOTED.clear()


# ----------------------------------------------------------------------------------- images.DecodedImages.decode


class _FakeContainer(Container):
    """Members whose `raw` bytes (unchecked unless `raw_checked`) differ from `read`'s; calls counted."""

    def __init__(self, names: list[str], raw: bytes, read: bytes, raw_checked: bool = False) -> None:
        super().__init__(Path("/nowhere/arch.zip"))
        self.names = names
        self._raw, self._read, self._raw_checked = raw, read, raw_checked
        self.reads = 0
        self.raws = 0

    def read(self, name: str) -> bytes:
        self.reads += 1
        return self._read

    def raw(self, name: str) -> tuple[bytes, bool]:
        self.raws += 1
        return self._raw, self._raw_checked


def test_decode_reads_again_with_check_when_libspng_declines_unchecked_bytes() -> None:
    # 16-bit PNGs: libspng's fast path declines them (None); the unchecked bytes must be replaced by `read`'s
    raw16 = _png(np.array([[257 * 10, 257 * 20]], dtype=np.uint16))
    read16 = _png(np.array([[257 * 30, 257 * 40]], dtype=np.uint16))
    c = _FakeContainer(["a.png"], raw16, read16)
    a = DecodedImages(c, 1, None, (1, 2)).decode(0)
    assert a.tolist() == [[30, 40]]
    assert (c.raws, c.reads) == (1, 1)


def test_decode_keeps_checked_bytes_and_libspng_pixels_without_reading_again() -> None:
    rgb = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    c = _FakeContainer(["a.png"], _png(rgb), _png(np.zeros((2, 2, 3), np.uint8)), raw_checked=False)
    assert DecodedImages(c, 3, None, (2, 2)).decode(0).tolist() == rgb.tolist()
    assert c.reads == 0  # libspng decoded it (CRCs checked): no second read
    raw16 = _png(np.array([[257 * 10, 257 * 20]], dtype=np.uint16))
    c2 = _FakeContainer(["a.png"], raw16, _png(np.array([[257 * 30, 257 * 40]], dtype=np.uint16)), raw_checked=True)
    assert DecodedImages(c2, 1, None, (1, 2)).decode(0).tolist() == [[10, 20]]
    assert c2.reads == 0  # already checked: not read again


def test_decode_reads_non_png_once_checked() -> None:
    b = io.BytesIO()
    Image.fromarray(np.array([[5, 6]], dtype=np.uint8)).save(b, format="BMP")
    c = _FakeContainer(["a.bmp"], b"", b.getvalue())
    assert DecodedImages(c, 1, None, (1, 2)).decode(0).tolist() == [[5, 6]]
    assert (c.raws, c.reads) == (0, 1)


def test_decode_rejects_pixels_of_another_shape() -> None:
    c = _FakeContainer(["a.png"], _png(np.zeros((2, 3), np.uint8)), b"")
    with pytest.raises(ValueError, match=r"a.png decodes to 3×2, but its header said 2×3"):
        DecodedImages(c, 1, None, (3, 2)).decode(0)
    assert DecodedImages(c, 1, None, (2, 3)).decode(0).shape == (2, 3)


# ------------------------------------------------------------------------------------------------ save_reference


def test_save_reference_hashes_content_only_of_arrays(tmp_path: Path) -> None:
    from ganeval.features.reference import save_reference
    from ganeval.hashing import StreamHasher

    imgs = np.random.default_rng(0).integers(0, 256, size=(4, 3, 4, 4), dtype=np.uint8)
    save_reference(torch.from_numpy(imgs), tmp_path / "t.npz", features="pixels", progress=False)
    meta_t = _meta(tmp_path / "t.npz")
    assert meta_t.get("content_hash", meta_t.get("content")) is None
    save_reference(imgs, tmp_path / "a.npz", features="pixels", progress=False)
    meta_a = _meta(tmp_path / "a.npz")
    h = StreamHasher()
    h.update(imgs)
    assert h.hexdigest() in {str(v) for v in meta_a.values()}


def _meta(p: Path) -> dict[str, Any]:
    import json

    with np.load(p, allow_pickle=False) as z:
        m = z["meta"]
    return json.loads(str(m.item() if m.shape == () else m.tobytes().decode()))


# ----------------------------------------------------------------------------------------------- streaming helpers


class _Src:
    def files_key(self, cache_dir: Any) -> str:
        return f"files-of:{cache_dir}"


class _Ex:
    def identity(self) -> dict[str, Any]:
        return {"name": "pixels", "dims": 3}


def test_files_partial_folder_name(tmp_path: Path) -> None:
    key = stable_hash({"files": f"files-of:{tmp_path}", "extractor": {"name": "pixels", "dims": 3}}, 32)
    assert len(key) == 32
    got = streaming._files_partial(_Src(), _Ex(), 7, 11, tmp_path)  # type: ignore[arg-type]
    assert got == tmp_path / "partial" / f"files-{key}-b7-c11"


def test_streaming_constants() -> None:
    assert streaming.CHUNK_SIZE == 2048
    assert streaming.THREADED_HASH is True
