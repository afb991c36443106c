"""(issue #56) Files that change while ganeval reads them, and the digest memo's trust rule: the planted bugs of the
audit that no test caught (each test names its bug)."""

from __future__ import annotations

import json
import math
import os
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from test_sources import make_images, zip_of

from ganeval.data.sources import ImageSource
from ganeval.data.sources import file_digests as fd
from ganeval.features import extract_with_info


def _during(monkeypatch: pytest.MonkeyPatch, after_batches: int, action: Callable[[], None]) -> None:
    """Run `action` once the extraction has taken `after_batches` batches (those are decoded already)."""
    real = ImageSource.batches

    def batches(self: ImageSource, *a: Any, **kw: Any):  # type: ignore[no-untyped-def]
        for k, b in enumerate(real(self, *a, **kw)):
            if k == after_batches:
                action()
            yield b

    monkeypatch.setattr(ImageSource, "batches", batches)


def _overwrite(path: Path) -> Callable[[], None]:
    def action() -> None:
        shape = np.asarray(Image.open(path)).shape
        Image.fromarray(np.full(shape, 7, np.uint8)).save(path)
    return action


@pytest.mark.parametrize("name", ["0007.png", "0011.png"])
def test_the_last_file_of_a_chunk_is_checked_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Bug: each chunk's last file left unchecked. Chunks of 4: 0007.png ends chunk 1 (overwritten once it was
    decoded), 0011.png ends the last chunk (overwritten before it is decoded)."""
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "4")
    data = make_images(tmp_path / "imgs", 12, (6, 6, 3))
    _during(monkeypatch, 1, _overwrite(data / name))
    with pytest.raises(ValueError, match=rf"{name.replace('.', '[.]')} changed while ganeval was reading"):
        extract_with_info(ImageSource(data), "pixels", batch_size=4, cache_dir=tmp_path / "cache", progress=False)


def test_a_file_deleted_mid_chunk_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: a member whose file is gone (stat raises) taken as unchanged. 0001.png, in the middle of chunk 0, is
    deleted after its batch was decoded, before the chunk is checked."""
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "4")
    data = make_images(tmp_path / "imgs", 8, (6, 6, 3))
    _during(monkeypatch, 1, (data / "0001.png").unlink)  # batches of 2: batch 1 is 0002-0003, chunk 0 not checked
    with pytest.raises(ValueError, match=r"0001[.]png changed while ganeval was reading"):
        extract_with_info(ImageSource(data), "pixels", batch_size=2, progress=False)


def test_a_zip_rewritten_during_extraction_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: an archive's change during extraction not seen (no test rewrote one). Its bytes are written again
    unchanged: its times move, and what was decoded before may differ from what follows."""
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "4")
    archive = zip_of(make_images(tmp_path / "imgs", 12, (6, 6, 3)), tmp_path / "imgs.zip")
    time.sleep(0.01)  # a later time than the archive's own, on any clock granularity of note
    _during(monkeypatch, 1, lambda: archive.write_bytes(archive.read_bytes()))
    with pytest.raises(ValueError, match=r"imgs[.]zip:0004[.]png changed while ganeval was reading"):
        extract_with_info(ImageSource(archive), "pixels", batch_size=4, cache_dir=tmp_path / "cache", progress=False)
    assert not list((tmp_path / "cache").glob("*.npz"))  # nothing of it kept


def _hashed_at(monkeypatch: pytest.MonkeyPatch, seconds_later: float) -> None:
    """The memo's clock: `seconds_later` after now."""
    now = time.time_ns()
    monkeypatch.setattr(fd, "time", types.SimpleNamespace(time_ns=lambda: now + int(seconds_later * 1e9)))


def _remembered(memo: Path) -> dict[str, Any]:
    (f,) = memo.glob("*.json")
    return dict(json.loads(f.read_text())["files"])


@pytest.mark.skipif(math.isinf(fd.RACY_SECONDS), reason="periodic writeback is off here: nothing is ever remembered")
def test_a_file_whose_mtime_was_set_back_is_not_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: the age rule on the mtime alone. A file written now with its mtime set an hour back (as tar, `rsync -t`
    and `cp -p` do) was changed now: its ctime says so, and the memo must not trust its stat yet."""
    (tmp_path / "d").mkdir()
    f = tmp_path / "d" / "a.bin"
    f.write_bytes(b"x" * 100)
    hour_ago = time.time() - 3600
    os.utime(f, (hour_ago, hour_ago))
    assert os.stat(f).st_mtime_ns < time.time_ns() - int(2 * fd.RACY_SECONDS * 1e9) < os.stat(f).st_ctime_ns
    _hashed_at(monkeypatch, 10)
    fd.digests(tmp_path / "d", ["a.bin"], tmp_path / "memo")
    assert _remembered(tmp_path / "memo") == {}
    _hashed_at(monkeypatch, fd.RACY_SECONDS + 1)  # its ctime, too, is then older than the margin: remembered
    fd.digests(tmp_path / "d", ["a.bin"], tmp_path / "memo")
    assert list(_remembered(tmp_path / "memo")) == ["a.bin"]
