"""Fault injection: SIGKILL at random points of the run loop and of training, then resume, gives the bytes of an
uninterrupted run; a killed parent leaves no worker process and no scratch folder behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from ganeval.gan import load_checkpoint
from test_gan_train import _assert_bitwise_equal, _weights

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}

# A server that imports once, then forks a child per attempt (fast), kills it after a random delay and
# waits; the uninterrupted reference is a forked child too, so both run under identical thread settings.
FORK_SERVER = textwrap.dedent(
    """
    import json, os, signal, sys, time, traceback
    import numpy as np
    import torch
    torch.set_num_threads(1)
    out, kills, seed, fraction = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    {setup}

    def child(d):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                work(d)
            except BaseException:
                traceback.print_exc()
                code = 1
            os._exit(code)
        return pid

    def finish(pid):
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        assert code in (0, -signal.SIGKILL), f"a child failed (exit code {{code}})"
        return code

    t0 = time.perf_counter()
    assert finish(child(os.path.join(out, "ref"))) == 0
    full = time.perf_counter() - t0
    rng, landed = np.random.default_rng(seed), 0
    for _ in range(kills):
        pid = child(os.path.join(out, "killed"))
        time.sleep(rng.uniform(0, fraction * full))
        os.kill(pid, signal.SIGKILL)
        landed += finish(pid) == -signal.SIGKILL
    assert finish(child(os.path.join(out, "killed"))) == 0
    print(json.dumps({{"landed": landed, "full_s": full}}))
    """
)

EVALUATE = """
from ganeval.protocol import evaluate_detailed
g = np.random.default_rng(0)
real = g.normal(size=(300, 8)).astype(np.float32)
fakes = {"a": g.normal(size=(250, 8)).astype(np.float32), "b": (g.normal(size=(250, 8)) + 0.3).astype(np.float32)}
metrics = {"imd": {"nv": 10, "m": 8}, "fid": {}, "kid": {"subsets": 5, "subset_size": 50}}

def work(d):
    ev = evaluate_detailed(real, fakes, runs=30, sample_size=100, metrics=metrics, seed=3, progress=False,
                           results_dir=d)
    ev.summary.to_csv(os.path.join(d, "summary.csv"), index=False)
"""

TRAIN = """
from ganeval.gan import train
x = (np.random.default_rng(0).random((48, 1, 32, 32)) * 255).astype(np.uint8)

def work(d):
    train(x, arch="digits", gan="wgan_gp", out_dir=d, epochs=3, batch_size=8, seed=5, checkpoint_every=2,
          sample_every=0, progress=False, arch_kwargs={"latent_dim": 8, "dim": 4})
"""


def _serve(setup: str, out: Path, kills: int, seed: int, fraction: float) -> dict:
    script = out / "server.py"
    script.write_text(FORK_SERVER.format(setup=setup.strip()))
    r = subprocess.run([sys.executable, str(script), str(out), str(kills), str(seed), str(fraction)], env=ENV,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_run_loop_killed_at_random_points_resumes_to_the_uninterrupted_bytes(tmp_path: Path) -> None:
    got = _serve(EVALUATE, tmp_path, kills=15, seed=0, fraction=1 / 6)
    assert got["landed"] >= 5, got  # most kills hit a running loop (the rest came after it had finished)
    for name in ("runs.csv", "summary.csv"):
        assert (tmp_path / "killed" / name).read_bytes() == (tmp_path / "ref" / name).read_bytes(), name
    assert not [p.name for p in (tmp_path / "killed").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_training_killed_at_random_points_resumes_to_the_same_weights(tmp_path: Path) -> None:
    got = _serve(TRAIN, tmp_path, kills=3, seed=1, fraction=0.5)
    assert got["landed"] >= 1, got
    a, b = tmp_path / "killed" / "checkpoint.pt", tmp_path / "ref" / "checkpoint.pt"
    _assert_bitwise_equal(_weights(a), _weights(b))
    assert np.array_equal(load_checkpoint(a)["history"].numpy(), load_checkpoint(b)["history"].numpy())
    assert (tmp_path / "killed" / "losses.csv").read_bytes() == (tmp_path / "ref" / "losses.csv").read_bytes()


# ------------------------------------------------------------------------------------------------ workers
WORKERS = textwrap.dedent(
    """
    import sys, numpy as np
    from ganeval import evaluate
    g = np.random.default_rng(0)
    real, fake = g.normal(size=(3000, 32)).astype(np.float32), g.normal(size=(3000, 32)).astype(np.float32)
    evaluate(real, fake, runs=100000, sample_size=1000, metrics=("fid",), workers=2, device="cpu", progress=False,
             results_dir=sys.argv[1])
    """
)


def _marked(marker: str) -> list[int]:
    """Live (not zombie) processes whose environment holds `marker`."""
    pids = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and marker.encode() in (p / "environ").read_bytes():
                if (p / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    pids.append(int(p.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killing_the_parent_leaves_no_worker_and_no_scratch_folder(tmp_path: Path) -> None:
    marker = f"GANEVAL_FAULT_TEST_{uuid.uuid4().hex}"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    res = tmp_path / "res"
    proc = subprocess.Popen([sys.executable, "-c", WORKERS, str(res)], env={**ENV, "TMPDIR": str(tmp), marker: "1"},
                            stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:  # both workers have finished runs: they are set up
            if (res / "runs.csv").exists() and len((res / "runs.csv").read_text().splitlines()) > 4:
                break
            time.sleep(0.1)
        assert proc.poll() is None, (proc.stderr.read() or b"").decode()[-3000:]  # type: ignore[union-attr]
        assert len(_marked(marker)) >= 3  # the parent and its two workers
        assert [p.name for p in tmp.iterdir()] and all(p.name.startswith("ganeval-shared-") for p in tmp.iterdir())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.time() + 5
    while time.time() < deadline and (_marked(marker) or list(tmp.iterdir())):
        time.sleep(0.1)
    assert _marked(marker) == [], "worker processes outlived their killed parent"
    assert list(tmp.iterdir()) == [], "the scratch folder outlived the killed run"
