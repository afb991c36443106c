"""Issue #37, items 1 and 2: a set's content identity cannot collide, and a feature-cache entry or a partial chunk is
used only for the key it carries (a file copied over another's name is refused, with a note, and recomputed)."""

from __future__ import annotations

import io
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from ganeval.data import folder
from ganeval.data.sources import ImageSource
from ganeval.features import PixelsExtractor, extract_with_info


def _png(seed: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(seed).integers(0, 256, (8, 8, 3), dtype=np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def _colliding(root: Path) -> tuple[Path, Path]:
    """Folders A and B whose format-1 identities (name, NUL, bytes) were equal though their pixels differ: PNG
    readers ignore the bytes after a PNG's end."""
    p1, p2, p3 = _png(1), _png(2), _png(3)
    a, b = root / "A", root / "B"
    a.mkdir(), b.mkdir()
    (a / "a.png").write_bytes(p1 + b"b.png\0" + p2)
    (a / "c.png").write_bytes(p3)
    (b / "a.png").write_bytes(p1)
    (b / "b.png").write_bytes(p2 + b"c.png\0" + p3)
    for d in (a, b):
        for i in range(4):
            (d / f"s{i}.png").write_bytes(_png(10 + i))
    return a, b


@pytest.mark.parametrize("archive", [False, True])
def test_colliding_folders_get_their_own_features(tmp_path: Path, archive: bool) -> None:
    """B scored after A with one cache gets B's features (format 1 gave it A's: the memo of A's files matched)."""
    import zipfile

    a, b = _colliding(tmp_path)
    if archive:  # the archive hash is the same rule
        for d in (a, b):
            with zipfile.ZipFile(d.with_suffix(".zip"), "w") as z:
                for f in sorted(d.iterdir()):
                    z.write(f, f.name)
        a, b = a.with_suffix(".zip"), b.with_suffix(".zip")
    assert ImageSource(a).container.file_hash() != ImageSource(b).container.file_hash()
    cache = tmp_path / "cache"
    fa, _ = extract_with_info(ImageSource(a), "pixels", cache_dir=cache, progress=False)
    fb, info = extract_with_info(ImageSource(b), "pixels", cache_dir=cache, progress=False)
    want_b = extract_with_info(folder(tmp_path / "B"), "pixels", progress=False)[0]
    assert not np.array_equal(fa, fb) and not info["cache_hit"]
    np.testing.assert_array_equal(fb, want_b)


def test_an_entry_copied_over_another_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rng = np.random.default_rng(0)
    x1, x2 = (rng.integers(0, 256, (4, 3, 5, 5), dtype=np.uint8) for _ in range(2))
    cache = tmp_path / "c"
    f1, i1 = extract_with_info(x1, "pixels", cache_dir=cache, progress=False)
    f2, i2 = extract_with_info(x2, "pixels", cache_dir=cache, progress=False)
    shutil.copyfile(i1["cache_file"], i2["cache_file"])  # entry 1 under entry 2's name
    with caplog.at_level(logging.WARNING):
        got, info = extract_with_info(x2, "pixels", cache_dir=cache, progress=False)
    assert not info["cache_hit"] and "holds another entry" in caplog.text and i2["cache_file"] in caplog.text
    np.testing.assert_array_equal(got, f2)
    again, info = extract_with_info(x2, "pixels", cache_dir=cache, progress=False)
    assert info["cache_hit"]  # recomputed and stored again under its key
    np.testing.assert_array_equal(again, f2)


class _Stops(PixelsExtractor):
    """Pixels that raise at the `stop`-th batch: a run stopped with some chunks on disk."""

    def __init__(self, stop: int) -> None:
        super().__init__()
        self.stop, self.calls = stop, 0

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls == self.stop:
            raise KeyboardInterrupt
        return super().__call__(batch)


def _stopped(path: Path, cache: Path, stop: int) -> Path:
    """Run a cached extraction of `path` stopped at batch `stop`; its partial folder."""
    with pytest.raises(KeyboardInterrupt):
        extract_with_info(ImageSource(path), _Stops(stop), batch_size=2, cache_dir=cache, progress=False)
    (partial,) = (cache / "partial").iterdir()
    return partial


@pytest.mark.parametrize("where", ["same run, another index", "another run"])
def test_a_chunk_copied_over_another_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture, where: str) -> None:
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "2")
    a, b = _colliding(tmp_path)
    want = extract_with_info(folder(a), "pixels", progress=False)[0]
    cache = tmp_path / "cache"
    partial = _stopped(a, cache, 3)  # chunks 0 and 1 on disk
    assert sorted(p.name for p in partial.iterdir()) == ["chunk-000000.npz", "chunk-000001.npz"]
    if where == "another run":
        other = _stopped(b, tmp_path / "other", 3)
        shutil.copyfile(other / "chunk-000001.npz", partial / "chunk-000001.npz")
    else:
        shutil.copyfile(partial / "chunk-000000.npz", partial / "chunk-000001.npz")
    with caplog.at_level(logging.INFO):
        got, _ = extract_with_info(ImageSource(a), "pixels", batch_size=2, cache_dir=cache, progress=False)
    assert "holds another entry" in caplog.text and "1 of 3 chunks on disk" in caplog.text
    np.testing.assert_array_equal(got, want)
