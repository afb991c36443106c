"""Workers exit promptly when their parent is killed, even while they start up (issue #22: they lived ~10-25 s,
importing torch before they set up the watch on their parent)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
GONE_WITHIN_S = 5.0  # "gone": polled, a generous bound (before the fix: 10-25 s)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _marked(marker: str, exclude: int = -1, cmd: bytes = b"") -> list[int]:
    """Live (not zombie) processes but `exclude` whose environment holds `marker` and command line `cmd`."""
    pids = []
    for p in Path("/proc").iterdir():
        try:
            if not p.name.isdigit() or int(p.name) == exclude or marker.encode() not in (p / "environ").read_bytes():
                continue
            if cmd in (p / "cmdline").read_bytes() and (p / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                pids.append(int(p.name))
        except OSError:
            continue
    return pids


def _gone(marker: str, deadline_s: float) -> list[int]:
    deadline = time.monotonic() + deadline_s
    while (left := _marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


WORKERS = textwrap.dedent(
    """
    import sys, numpy as np
    from ganeval import evaluate
    g = np.random.default_rng(0)
    real, fake = g.normal(size=(600, 8)).astype(np.float32), g.normal(size=(600, 8)).astype(np.float32)
    evaluate(real, fake, runs=1000, sample_size=200, metrics=("fid",), workers=2, device="cpu", progress=False,
             results_dir=sys.argv[1])
    """
)


def test_run_loop_workers_killed_parent_during_start_up(tmp_path: Path) -> None:
    marker = f"GANEVAL_LIFELINE_TEST_{uuid.uuid4().hex}"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", WORKERS, str(tmp_path / "res")],
                            env={**ENV, "TMPDIR": str(tmp), marker: "1"}, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while not _marked(marker, proc.pid, b"spawn_main") and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert proc.poll() is None and _marked(marker, proc.pid, b"spawn_main"), "no worker was started"
        assert not (tmp_path / "res" / "runs.csv").exists()  # still starting up: no run finished yet
    finally:
        proc.send_signal(signal.SIGKILL)  # a worker has just been spawned: it is importing, not yet running
        proc.wait()
    assert _gone(marker, GONE_WITHIN_S) == [], "workers outlived their parent, killed while they started"
    assert [p.name for p in tmp.iterdir() if p.name.startswith("ganeval-shared-")] == []


FORKED = textwrap.dedent(
    """
    import os, sys, time
    from ganeval.lifeline import init_loader_worker
    parent = os.getpid()
    if os.fork() == 0:
        init_loader_worker(parent, 0)  # what a forked DataLoader worker runs first
        time.sleep(120)
        os._exit(0)
    open(sys.argv[1], "w").close()
    time.sleep(120)
    """
)


def test_forked_loader_worker_exits_with_its_parent(tmp_path: Path) -> None:
    marker = f"GANEVAL_LIFELINE_TEST_{uuid.uuid4().hex}"
    ready = tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-c", FORKED, str(ready)], env={**ENV, marker: "1"})
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert len(_marked(marker)) == 2  # the parent and its forked child
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _gone(marker, GONE_WITHIN_S) == [], "the forked worker outlived its parent (torch's watchdog: 5 s)"


def test_a_worker_whose_parent_is_already_gone_exits_at_once() -> None:
    code = "from ganeval.lifeline import die_with_parent\nimport time\ndie_with_parent(1)\ntime.sleep(60)\n"
    r = subprocess.run([sys.executable, "-c", code], env=ENV, timeout=60)  # pid 1 is not its parent
    assert r.returncode == 1


def test_loader_workers_are_given_the_lifeline() -> None:
    from functools import partial

    from ganeval.data.sources.images import ImageSource
    from ganeval.lifeline import init_loader_worker

    src = ImageSource.__new__(ImageSource)
    src.dataset = []  # type: ignore[attr-defined]
    fn = src.loader([[0]], num_workers=2).worker_init_fn
    assert isinstance(fn, partial) and fn.func is init_loader_worker and fn.args == (os.getpid(),)
