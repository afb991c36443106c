"""A first (cold) cached extraction of a streamed source hashes the content on its own decoding pass: each image
decoded once; the same features, cache entry, memo and info as the two-pass path; resumable; corrupt members
refused with no memo and no entry."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ganeval.data.sources import ImageSource
from ganeval.data.sources.images import DecodedImages
from ganeval.features import PixelsExtractor, extract_with_info
from test_sources import bad_zip, make_images, zip_of


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The member indices `DecodedImages.decode` was called with (in this process: num_workers=0)."""
    calls: list[int] = []
    real = DecodedImages.decode

    def counted(self: DecodedImages, i: int) -> np.ndarray:
        calls.append(i)
        return real(self, i)

    monkeypatch.setattr(DecodedImages, "decode", counted)
    return calls


def run(data: Path, cache: Path, ex: Any = "pixels") -> tuple[np.ndarray, dict[str, Any]]:
    return extract_with_info(ImageSource(data), ex, batch_size=4, cache_dir=cache, progress=False, num_workers=0)


def same_entry(a: Path, b: Path) -> None:
    """Every stored array of two cache entries, byte for byte (the zip container itself carries write times)."""
    assert a.name == b.name
    with np.load(a) as x, np.load(b) as y:
        assert sorted(x.files) == sorted(y.files)
        for k in x.files:
            assert x[k].dtype == y[k].dtype and x[k].tobytes() == y[k].tobytes()


def memo_text(cache: Path) -> str:
    (memo,) = (cache / "sources").glob("*.json")
    return memo.read_text()


def test_cold_run_decodes_once_and_equals_the_two_pass_path(tmp_path: Path, decodes: list[int],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "8")
    data = make_images(tmp_path / "imgs", 19, (7, 9, 3))
    two = tmp_path / "two"
    ImageSource(data).content(cache_dir=two)  # memo first: the extraction below takes the two-pass path
    decodes.clear()
    want, info_two = run(data, two)
    assert decodes == list(range(19))  # the hashing pass happened above, then one extraction pass
    decodes.clear()
    got, info = run(data, tmp_path / "one")
    assert decodes == list(range(19))  # cold: every image decoded exactly once, hash and features together
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    same_entry(Path(info["cache_file"]), Path(info_two["cache_file"]))
    assert memo_text(tmp_path / "one") == memo_text(two)
    assert {k: v for k, v in info.items() if k not in ("cache_file", "seconds")} == \
        {k: v for k, v in info_two.items() if k not in ("cache_file", "seconds")}
    assert not list((tmp_path / "one" / "partial").glob("*/*"))  # the chunks removed
    decodes.clear()
    again, info_warm = run(data, tmp_path / "one")  # warm: memo and entry there, nothing decoded
    assert decodes == [] and info_warm["cache_hit"] and again.tobytes() == want.tobytes()


def test_cold_run_finds_an_entry_of_the_same_pixels(tmp_path: Path) -> None:
    """Other files with the same pixels (a zip of the folder): the memo is missing, the entry is not; it serves."""
    data = make_images(tmp_path / "imgs", 6, (7, 9, 3))
    want, first = run(data, tmp_path / "c")
    entry = Path(first["cache_file"])
    before = entry.stat().st_mtime_ns
    copy = zip_of(data, tmp_path / "imgs.zip")  # the same pixels from another container (another memo)
    got, info = run(copy, tmp_path / "c")
    assert info["cache_hit"] and Path(info["cache_file"]) == entry and entry.stat().st_mtime_ns == before
    assert got.tobytes() == want.tobytes() and len(list((tmp_path / "c" / "sources").glob("*.json"))) == 2


class Failing(PixelsExtractor):
    """Pixels features that raise at batch `fail_at` (a run stopped part-way, its finished chunks on disk)."""

    fail_at: int | None = None

    def __init__(self) -> None:
        super().__init__(size=5)
        self.calls = 0

    def __call__(self, batch: Any) -> Any:
        self.calls += 1
        if self.fail_at is not None and self.calls > self.fail_at:
            raise RuntimeError("stopped")
        return super().__call__(batch)


def test_stopped_cold_run_resumes_to_the_same_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture, decodes: list[int]) -> None:
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "8")
    data = make_images(tmp_path / "imgs", 30, (7, 9, 3))  # 4 chunks of 8, 8, 8, 6 in batches of 4
    _, ref = run(data, tmp_path / "ref", Failing())
    cache = tmp_path / "cache"
    monkeypatch.setattr(Failing, "fail_at", 5)  # chunks 0 and 1 finished (batches 1-4), batch 6 raises
    with pytest.raises(RuntimeError, match="stopped"):
        run(data, cache, Failing())
    (folder,) = (cache / "partial").iterdir()
    assert folder.name.startswith("files-") and len(list(folder.glob("chunk-*.npz"))) == 2
    assert not (cache / "sources").exists() and not list(cache.glob("*.npz"))  # no memo, no entry
    monkeypatch.setattr(Failing, "fail_at", None)
    decodes.clear()
    with caplog.at_level(logging.INFO, logger="ganeval.features.streaming"):
        _, info = run(data, cache, Failing())
    assert "2 of 4 chunks on disk" in caplog.text
    assert decodes == list(range(30)) + list(range(16, 30))  # the hash pass first, then the missing chunks
    same_entry(Path(info["cache_file"]), Path(ref["cache_file"]))
    assert memo_text(cache) == memo_text(tmp_path / "ref") and not list((cache / "partial").iterdir())


def test_corrupt_member_on_the_cold_path_leaves_no_memo_and_no_entry(tmp_path: Path) -> None:
    path, member = bad_zip(tmp_path, "truncated")  # its header reads, its pixels do not
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match=f"cannot read image file .*{member}"):
        run(path, cache)
    assert not (cache / "sources").exists() and not list(cache.glob("*.npz"))


def test_score_cold_run_decodes_each_image_once(tmp_path: Path, decodes: list[int],
                                                capsys: pytest.CaptureFixture) -> None:
    """ganeval-score: the plan needs the content of every set; on a cold run it comes from the extraction pass."""
    import json

    from ganeval.app.score import main

    real = make_images(tmp_path / "real", 12, (10, 10, 3), seed=1)
    fake = zip_of(make_images(tmp_path / "fake", 10, (10, 10, 3), seed=2), tmp_path / "fake.zip")
    args = [str(real), str(fake), "--features", "pixels", "--metrics", "fid", "--json", "--quiet", "--device", "cpu",
            "--num-workers", "0", "--batch-size", "4", "--no-samples"]
    two = tmp_path / "two"
    for s in (real, fake):  # memo first: the run below takes the two-pass path
        ImageSource(s).content(cache_dir=two)
    decodes.clear()
    assert main([*args, "--cache-dir", str(two), "--out", str(tmp_path / "o2")]) == 0
    want = json.loads(capsys.readouterr().out)
    assert len(decodes) == 22
    for cache in (tmp_path / "one", None):
        decodes.clear()
        extra = ["--cache-dir", str(cache)] if cache is not None else []
        assert main([*args, *extra, "--out", str(tmp_path / f"o-{cache is None}")]) == 0
        got = json.loads(capsys.readouterr().out)
        assert len(decodes) == 22 and sorted(decodes) == sorted(list(range(12)) + list(range(10)))  # once each
        assert [r["value"] for r in got["results"]] == [r["value"] for r in want["results"]]
        meta = [json.loads((tmp_path / d / "runs.meta.json").read_text()) for d in ("o2", f"o-{cache is None}")]
        assert meta[0]["identity"]["content"] == meta[1]["identity"]["content"]  # the same content identities
        assert meta[0]["config_hash"] == meta[1]["config_hash"]
    assert sorted(p.name for p in (tmp_path / "one").glob("*.npz")) == sorted(p.name for p in two.glob("*.npz"))


def test_out_holding_another_run_is_refused_before_extraction(tmp_path: Path, decodes: list[int],
                                                              capsys: pytest.CaptureFixture) -> None:
    """--out holding an earlier run of other inputs: the cold run hashes first (its own pass) and is refused before
    any feature is extracted (no cache entry), as without the one-pass path."""
    from ganeval.app.score import main

    sets = [make_images(tmp_path / n, 8, (10, 10, 3), seed=k) for k, n in enumerate(("a", "b", "c"))]
    args = ["--features", "pixels", "--metrics", "fid", "--quiet", "--device", "cpu", "--num-workers", "0",
            "--batch-size", "4", "--no-samples", "--no-plots", "--out", str(tmp_path / "out")]
    assert main([str(sets[0]), str(sets[1]), *args]) == 0
    capsys.readouterr()
    decodes.clear()
    assert main([str(sets[0]), str(sets[2]), *args, "--cache-dir", str(tmp_path / "cache")]) == 2
    assert "holds runs made by another config" in capsys.readouterr().err
    assert len(decodes) == 16  # the two content passes, no extraction pass
    assert not list((tmp_path / "cache").glob("*.npz")) and len(list((tmp_path / "cache" / "sources").glob("*"))) == 2
