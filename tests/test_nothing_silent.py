"""Issue #37's small ones: a killed save's temporaries removed, FD∞'s points bounded, undecodable file names hashed,
a link at a cache entry refused naming the cache, images of formats ganeval does not read noted."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ganeval.common import atomic_write_bytes


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_killed_saves_temporaries_are_removed_by_the_next_save(tmp_path: Path) -> None:
    import socket

    host = socket.gethostname()
    dead = tmp_path / f".x.npz.{host}~{_dead_pid()}~abc.tmp"  # a save killed after its temporary was made
    live = tmp_path / f".x.npz.{host}~{os.getpid()}~def.tmp"  # one being written now: kept
    elsewhere = tmp_path / f".x.npz.{host}.other~{_dead_pid()}~ghi.tmp"  # another host's writer: unknown, kept
    old_form = tmp_path / ".x.npz.k2j3h4g5.tmp"  # an older version's name: no writer known
    fresh_old_form = tmp_path / ".x.npz.z9y8x7w6.tmp"
    other_file = tmp_path / ".y.npz.abc.tmp"  # another file's: not this save's business
    for f in (dead, live, elsewhere, old_form, fresh_old_form, other_file):
        f.write_bytes(b"partial")
    day_ago = time.time() - 25 * 3600
    os.utime(old_form, (day_ago, day_ago))
    atomic_write_bytes(tmp_path / "x.npz", b"whole")
    assert (tmp_path / "x.npz").read_bytes() == b"whole"
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {"x.npz", live.name, elsewhere.name, fresh_old_form.name, other_file.name}


def test_fd_inf_points_are_bounded() -> None:
    from ganeval.metrics.fd_inf import MAX_POINTS, fd_inf

    x = np.random.default_rng(0).standard_normal((40, 3))
    with pytest.raises(ValueError, match=f"points must be an integer from 2 to {MAX_POINTS}, got 1000000"):
        fd_inf(x, x + 1, points=10**6)
    assert np.isfinite(fd_inf(x, x + 1, points=MAX_POINTS)["value"])


def test_other_image_formats_in_a_folder_are_noted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from ganeval.data import list_images

    rng = np.random.default_rng(0)
    for name in ("a.png", "b.gif", "sub/c.GIF", "d.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)).save(tmp_path / name, format="PNG" if
                                                                                  name.endswith("png") else "GIF")
    with caplog.at_level(logging.WARNING):
        files = list_images(tmp_path)
    assert [f.name for f in files] == ["a.png"]
    assert "2 image file(s) under" in caplog.text and "b.gif" in caplog.text and "convert them to PNG" in caplog.text


def test_an_undecodable_file_name_is_hashed_with_a_cache(tmp_path: Path) -> None:
    """A name that is not UTF-8 (bytes kept by the OS as surrogates) no longer stops the files' identity."""
    from ganeval.data import folder
    from ganeval.data.sources import ImageSource
    from ganeval.features import extract_with_info

    root = tmp_path / "imgs"
    root.mkdir()
    rng = np.random.default_rng(0)
    for name in (b"a.png", b"b\xff.png"):
        Image.fromarray(rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)).save(os.fsdecode(os.path.join(
            os.fsencode(root), name)), format="PNG")
    got, info = extract_with_info(ImageSource(root), "pixels", cache_dir=tmp_path / "c", progress=False)
    np.testing.assert_array_equal(got, extract_with_info(folder(root), "pixels", progress=False)[0])
    again, info = extract_with_info(ImageSource(root), "pixels", cache_dir=tmp_path / "c", progress=False)
    assert info["cache_hit"]


def test_a_link_at_a_cache_entry_is_refused_naming_the_cache(tmp_path: Path) -> None:
    from ganeval.features import extract_with_info

    rng = np.random.default_rng(0)
    x1, x2 = (rng.integers(0, 256, (4, 3, 5, 5), dtype=np.uint8) for _ in range(2))
    cache = tmp_path / "c"
    _, i1 = extract_with_info(x1, "pixels", cache_dir=cache, progress=False)
    _, i2 = extract_with_info(x2, "pixels", cache_dir=cache, progress=False)
    entry = Path(i2["cache_file"])
    entry.unlink()
    entry.symlink_to(i1["cache_file"])  # x1's features where x2's belong
    with pytest.raises(ValueError, match="feature cache entry .* is a symbolic link.*choose another cache_dir"):
        extract_with_info(x2, "pixels", cache_dir=cache, progress=False)


def test_a_killed_dataloader_worker_is_one_line_and_the_chunks_stay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """(issue #37, 11) a worker SIGKILLed as the OOM killer does: exit 2 with one line naming --num-workers; the
    chunks finished before it stay in the cache, and the rerun resumes from them."""
    import signal

    from ganeval.app.score import main
    from ganeval.data.sources import images

    rng = np.random.default_rng(0)
    for d in ("real", "fake"):
        (tmp_path / d).mkdir()
        for i in range(8):
            Image.fromarray(rng.integers(0, 256, (6, 6, 3), dtype=np.uint8)).save(tmp_path / d / f"{i}.png")
    real_decode = images.DecodedImages.decode

    def dies(self, i):  # type: ignore[no-untyped-def]
        import torch.utils.data

        if i >= 6 and torch.utils.data.get_worker_info() is not None:  # the last chunk of the first set
            time.sleep(1.0)  # the finished chunks reach the main process first
            os.kill(os.getpid(), signal.SIGKILL)
        return real_decode(self, i)

    monkeypatch.setattr(images.DecodedImages, "decode", dies)
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "2")
    args = [str(tmp_path / "real"), str(tmp_path / "fake"), "--features", "pixels", "--batch-size", "2",
            "--num-workers", "2", "--cache-dir", str(tmp_path / "c"), "--quiet"]
    assert main(args) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "a worker process decoding" in err[0] and "fewer --num-workers" in err[0], err
    assert len(list((tmp_path / "c").glob("partial/*/chunk-*.npz"))) >= 2
    monkeypatch.setattr(images.DecodedImages, "decode", real_decode)
    assert main(args) == 0


SLOW_PIXELS = """
import time
from ganeval.features import simple
real = simple.PixelsExtractor.__call__
def slow(self, batch):
    time.sleep(0.5)
    return real(self, batch)
simple.PixelsExtractor.__call__ = slow
"""


def test_a_killed_torchrun_launcher_leaves_one_line_per_rank(tmp_path: Path) -> None:
    """(issue #37, 12) torchrun's launcher SIGKILLed mid-extraction: each surviving rank ends with one line saying
    the group broke and how to go on (not a DistNetworkError traceback); the finished chunks stay in the cache."""
    import signal

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SLOW_PIXELS)  # every rank's extraction slowed down
    rng = np.random.default_rng(0)
    for d in ("real", "fake"):
        (tmp_path / d).mkdir()
        for i in range(16):
            Image.fromarray(rng.integers(0, 256, (6, 6, 3), dtype=np.uint8)).save(tmp_path / d / f"{i}.png")
    env = {**os.environ, "GANEVAL_CHUNK_SIZE": "2", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cache = tmp_path / "c"
    launcher = subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
                                 "2", "-m", "ganeval.app.score", str(tmp_path / "real"), str(tmp_path / "fake"),
                                 "--features", "pixels", "--quiet", "--device", "cpu", "--num-workers", "0",
                                 "--batch-size", "2", "--cache-dir", str(cache)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not list(cache.glob("partial/*/chunk-*.npz")):
            time.sleep(0.05)
        assert list(cache.glob("partial/*/chunk-*.npz")), "no chunk was written"
        ranks = [int(p) for p in subprocess.run(["pgrep", "-P", str(launcher.pid)], capture_output=True,
                                                text=True).stdout.split()]
        assert len(ranks) == 2
    finally:
        launcher.send_signal(signal.SIGKILL)
    _, err = launcher.communicate(timeout=240)  # the pipes close once both orphaned ranks have ended
    lines = [line for line in err.splitlines() if "ganeval-score:" in line]
    assert "Traceback" not in err and "DistNetworkError" in err, err[-3000:]
    assert len(lines) == 2 and all("the torchrun group broke" in line and "rerun the torchrun command" in line
                                   for line in lines), err[-3000:]
    assert list(cache.glob("partial/*/chunk-*.npz"))
