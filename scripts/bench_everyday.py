"""The everyday job end to end: one FID of two image folders, by ganeval-score and by the tools people use today.

Makes two folders of N PNGs of 256² (random crops of scikit-learn's two sample photos; the second set degraded:
blurred and noisy), gives every tool the same stand-in FID Inception (the real architecture, random weights from
`ganeval.features.inception.save_random_weights`) where that tool loads its weights from:
  pytorch-fid     pt_inception-2015-12-05-6726825d.pth in the torch hub cache ($TORCH_HOME/hub/checkpoints)
  clean-fid       the same file (mode="legacy_pytorch" loads pytorch-fid's URL through the torch hub cache)
  torch-fidelity  its own file, `--feature-extractor-weights-path` (its InceptionV3 loads the same state dict
                  strictly; checked before any timing, else the tool is refused by name)
  ganeval-score   the same hub file (--no-download: never other weights)
$TORCH_HOME is a private folder under --dir, so nothing of the user's is read or replaced; a tool that cannot be given
the stand-in is refused by name, never timed with other weights. Then, in alternating rounds (the order rotates
each round), it times as subprocesses
  python -m pytorch_fid A B
  fidelity --fid --input1 A --input2 B
  cleanfid.fid.compute_fid(A, B, mode="legacy_pytorch")
  ganeval-score A B --metrics fid   cold (an empty --cache-dir), then cached (the same --cache-dir again)
  ganeval-score A B                 the default metrics (IMD, FID, KID), cold
and prints each one's wall time, peak RSS (of its largest process, from wait4, as /usr/bin/time reports it) and the
peak PSS of its process tree (DataLoader workers included, sampled every 0.5 s), its FID, the ratios to pytorch-fid
(best wall of the rounds, largest memory), and ganeval's stage times (scan, hash, decode + forward, metrics,
writing, from the line ganeval-score ends with) with their share of its wall time.

    python scripts/bench_everyday.py --n 200 --rounds 2                   # CPU, a size that finishes on 2 cores
    python scripts/bench_everyday.py --n 50000 --rounds 1 --device cuda   # a GPU machine
    python scripts/bench_everyday.py --peers-python /tmp/peers/bin/python ...   # peers from another venv
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIDE = 256
TOOLS = ("pytorch-fid", "torch-fidelity", "clean-fid", "ganeval fid", "ganeval default")
STAGES = ("scan", "hash", "features", "metrics", "writing")


# --------------------------------------------------------------------------- the two folders
def _crop(args: tuple[str, int, bool]) -> None:
    """One PNG: a random square crop (160–427 px) of a sample photo, resized to 256², flipped at random; `degraded`:
    Gaussian blur (radius 1.5) and noise (σ 12)."""
    from PIL import Image, ImageFilter
    from sklearn.datasets import load_sample_images

    dst, i, degraded = args
    photos = _crop.photos if hasattr(_crop, "photos") else load_sample_images().images  # type: ignore[attr-defined]
    _crop.photos = photos  # type: ignore[attr-defined]
    rng = np.random.default_rng([i, int(degraded)])
    photo = photos[i % len(photos)]
    s = int(rng.integers(160, min(photo.shape[:2]) + 1))
    y, x = (int(rng.integers(0, photo.shape[k] - s + 1)) for k in (0, 1))
    img = Image.fromarray(photo[y:y + s, x:x + s]).resize((SIDE, SIDE), Image.BILINEAR)
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    if degraded:
        img = img.filter(ImageFilter.GaussianBlur(1.5))
        a = np.asarray(img, np.float32) + rng.normal(0, 12, (SIDE, SIDE, 3))
        img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    img.save(Path(dst) / f"{i:06d}.png", compress_level=1)


def make_folders(root: Path, n: int) -> tuple[Path, Path]:
    """root/real and root/fake with n PNGs each (reused when they already hold n)."""
    out = []
    for name, degraded in (("real", False), ("fake", True)):
        folder = root / name
        if not (folder.is_dir() and len(list(folder.glob("*.png"))) == n):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            with mp.get_context("fork").Pool(os.cpu_count() or 1) as pool:
                for _ in pool.imap_unordered(_crop, [(str(folder), i, degraded) for i in range(n)], chunksize=32):
                    pass
        out.append(folder)
    return out[0], out[1]


# --------------------------------------------------------------------------- the stand-in weights
def place_weights(root: Path) -> tuple[Path, dict[str, str]]:
    """The stand-in FID Inception in a private torch hub cache (root/torch/hub/checkpoints/<pytorch-fid's name>) and
    the environment that points every tool there (no $GANEVAL_INCEPTION_WEIGHTS: ganeval finds it where pytorch-fid
    does)."""
    from ganeval.features import inception as inc

    home = root / "torch"
    weights = home / "hub" / "checkpoints" / inc.WEIGHTS_FILENAME
    weights.parent.mkdir(parents=True, exist_ok=True)
    inc.save_random_weights(weights, seed=0)
    env = {**os.environ, "TORCH_HOME": str(home), "XDG_CACHE_HOME": str(root / "xdg"), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop(inc.WEIGHTS_ENV, None)
    return weights, env


def refusals(tools: list[str], weights: Path, env: dict[str, str], python: str) -> dict[str, str]:
    """Why a tool cannot be given the stand-in weights (tool -> reason), checked by loading them its own way."""
    checks = {
        "pytorch-fid": "import pytorch_fid.inception as m; m.fid_inception_v3()",
        "clean-fid": "import cleanfid.inception_pytorch as m; m.fid_inception_v3()",
        "torch-fidelity": "from torch_fidelity.feature_extractor_inceptionv3 import FeatureExtractorInceptionV3 as F; "
                          f"F('inception-v3-compat', ['2048'], feature_extractor_weights_path={str(weights)!r})",
    }
    out = {}
    for tool in tools:
        if tool not in checks:
            continue
        # the tool's own loading path with downloads impossible: it must find the stand-in where it looks
        code = "import torch.hub as h; h.download_url_to_file = None\n" + checks[tool]
        done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            out[tool] = f"{tool} cannot load the stand-in weights from {weights} ({last}): not timed"
    return out


# --------------------------------------------------------------------------- one timed run
def _tree_pss(pid: int) -> int:
    """Proportional resident bytes of a process and all its descendants (PSS: shared pages counted once)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                total += next(int(line.split()[1]) * 1024 for line in f if line.startswith("Pss:"))
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError, StopIteration):
            continue
    return total


@dataclass
class Run:
    """One timed command: wall and CPU seconds (user + system, reaped workers included), peak RSS of its largest
    process, peak PSS of its tree, stdout and stderr."""

    wall: float
    cpu: float
    max_rss: int
    tree_pss: int
    stdout: str
    stderr: str
    fid: float = float("nan")
    stages: dict[str, float] = field(default_factory=dict)
    failure: str = ""  # why it gave no number: killed at its time limit, or its exit status and last line

    @property
    def finished(self) -> bool:
        return not self.failure


def timed(cmd: list[str], env: dict[str, str], log: Path, limit: float = float("inf")) -> Run:
    """Run `cmd`, measuring wall time, ru_maxrss (wait4) and the tree's peak PSS; stdout/stderr kept in `log`.*.
    A run still going after `limit` seconds is killed with its process group; a run killed or failed is returned with
    its `failure` (the benchmark goes on with the other tools)."""
    with open(log.with_suffix(".out"), "w") as out, open(log.with_suffix(".err"), "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, start_new_session=True)
        peak, stop = [0], threading.Event()
        killer = threading.Timer(limit, lambda: os.killpg(proc.pid, signal.SIGKILL)) if limit < float("inf") else None
        if killer:
            killer.start()

        def sample() -> None:
            while not stop.wait(0.5):
                peak[0] = max(peak[0], _tree_pss(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        stop.set()
        sampler.join()
        if killer:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = log.with_suffix(".out").read_text(), log.with_suffix(".err").read_text()
    failure = ""
    if proc.returncode == -signal.SIGKILL and wall >= limit:
        failure = f"did not finish in {wall:.0f} s: killed"
    elif proc.returncode != 0:
        failure = f"failed (exit {proc.returncode}): {(stderr.strip().splitlines() or ['no message'])[-1][:300]}"
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, peak[0], stdout, stderr, failure=failure)


def last_float(pattern: str, text: str) -> float:
    """The number after the last match of `pattern` in `text` (NaN when absent)."""
    found = re.findall(pattern + r"\s*([-+0-9.eE]+)", text)
    return float(found[-1]) if found else float("nan")


def ganeval_stages(stderr: str) -> dict[str, float]:
    """Stage seconds from ganeval-score's closing time line (scan, hash, features, metrics, writing)."""
    line = next((x for x in reversed(stderr.splitlines()) if " in all: " in x), "")
    return {k: float(v) for k, v in re.findall(r"\b(" + "|".join(STAGES) + r") ([0-9.]+) s", line)}


def commands(tool: str, a: Path, b: Path, args: argparse.Namespace,
             cache: Path) -> tuple[list[str], Callable[[Run], float]]:
    """The command line of a tool and how its FID is read from what it printed."""
    peers, dev = args.peers_python, args.device
    if tool == "pytorch-fid":
        return [peers, "-m", "pytorch_fid", str(a), str(b), "--device", dev], lambda r: last_float("FID:", r.stdout)
    if tool == "torch-fidelity":
        return ([peers, "-m", "torch_fidelity.fidelity", "--fid", "--json", "--input1", str(a), "--input2", str(b),
                 "--no-cache", "--feature-extractor-weights-path", str(args.weights_file),
                 *(["--cpu"] if dev == "cpu" else ["--gpu", dev.partition(":")[2] or "0"])],
                lambda r: float(json.loads(r.stdout[r.stdout.index("{"):])["frechet_inception_distance"]))
    if tool == "clean-fid":
        code = ("import sys, torch; from cleanfid import fid; print('FID', fid.compute_fid(sys.argv[1], sys.argv[2], "
                f"mode='legacy_pytorch', device=torch.device({dev!r}), verbose=False))")
        return [peers, "-c", code, str(a), str(b)], lambda r: last_float("FID", r.stdout)
    cmd = [sys.executable, "-m", "ganeval.app.score", str(a), str(b), "--device", dev, "--no-download", "--quiet",
           "--cache-dir", str(cache), "--json"]  # --json: the FID to every digit (the plain line rounds it)
    if tool == "ganeval fid":
        cmd += ["--metrics", "fid"]
    return cmd, lambda r: next(float(x["value"]) for x in json.loads(r.stdout)["results"] if x["metric"] == "fid")


# --------------------------------------------------------------------------- the report
def header(args: argparse.Namespace) -> list[str]:
    """Machine, load, commit and command: what the numbers were measured on."""
    import torch

    cpu = platform.processor() or "unknown CPU"
    if Path("/proc/cpuinfo").is_file():
        cpu = next((x.split(":", 1)[1].strip() for x in Path("/proc/cpuinfo").read_text().splitlines()
                    if x.startswith("model name")), cpu)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"
    gpu = f"; GPU {torch.cuda.get_device_name()}" if args.device.startswith("cuda") else ""
    return [f"# machine: {cpu}, {cores} cores{gpu}; torch {torch.__version__}; python {platform.python_version()}",
            f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; commit {commit}; "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            f"# command: python scripts/bench_everyday.py {' '.join(sys.argv[1:])}"]


def ratio(v: float, ref: float | None) -> str:
    """v / ref to two decimals (blank without a reference)."""
    return f"{v / ref:7.2f}x" if ref else " " * 8


def report(runs: dict[str, list[Run]], n: int) -> list[str]:
    """Per tool: best wall and least CPU of the rounds, largest memory, FID, ratios to pytorch-fid; ganeval's stage
    times with their shares of its wall time."""
    gib = 2.0 ** 30
    base = [r for r in runs.get("pytorch-fid", []) if r.finished] or None
    bw, bc, brss, bpss = ((min(r.wall for r in base), min(r.cpu for r in base), max(r.max_rss for r in base),
                           max(r.tree_pss for r in base)) if base else (None,) * 4)
    lines = [f"\n{n} + {n} PNGs of {SIDE}², best wall and least CPU of {max(len(v) for v in runs.values())} round(s), "
             "the largest memory; ratios to pytorch-fid",
             f"{'tool':<20}{'wall s':>8}{'':>8}{'CPU s':>8}{'':>8}{'RSS GiB':>8}{'':>8}{'tree PSS GiB':>13}{'':>8}"
             "  FID"]
    for tool, rs in runs.items():
        if not rs:
            continue
        if not all(r.finished for r in rs):
            lines.append(f"{tool:<20}{next(r.failure for r in rs if not r.finished)}")
            continue
        wall, cpu = min(r.wall for r in rs), min(r.cpu for r in rs)
        rss, pss = max(r.max_rss for r in rs), max(r.tree_pss for r in rs)
        rel = (f"  ({abs(rs[-1].fid - base[-1].fid) / abs(base[-1].fid):.1e} rel. to pytorch-fid's)"
               if base and tool != "pytorch-fid" else "")
        lines.append(f"{tool:<20}{wall:8.1f}{ratio(wall, bw)}{cpu:8.1f}{ratio(cpu, bc)}{rss / gib:8.2f}"
                     f"{ratio(rss, brss)}{pss / gib:13.2f}{ratio(pss, bpss)}  {rs[-1].fid:.12g}{rel}")
    for tool, rs in runs.items():
        if tool.startswith("ganeval") and rs and all(r.finished for r in rs):
            lines.append(stage_line(tool, min(rs, key=lambda r: r.wall)))
    return lines


def stage_line(tool: str, run: Run) -> str:
    """ganeval's stage seconds in one run with their share of its wall time (the rest: start-up, imports, loading)."""
    if not run.stages:
        return f"{tool}: no stage line in its output"
    parts = [f"{k} {v:.1f} s ({v / run.wall:.0%})" for k, v in run.stages.items()]
    rest = run.wall - sum(run.stages.values())
    return (f"{tool} stages ({run.wall:.1f} s wall): {', '.join(parts)}, start-up/imports/other {rest:.1f} s "
            f"({rest / run.wall:.0%})")


def batch_sweep(sizes: list[int], a: Path, b: Path, args: argparse.Namespace, env: dict[str, str], root: Path,
                n: int) -> list[str]:
    """`ganeval-score A B --metrics fid` cold at each --batch-size: wall, CPU per image, features images/s, memory."""
    lines = ["\nganeval-score --metrics fid, cold, by --batch-size (images/s: the features stage's)",
             f"{'batch':>6}{'wall s':>8}{'CPU ms/img':>12}{'images/s':>10}{'RSS GiB':>9}{'tree PSS GiB':>13}"]
    print("\n".join(lines), flush=True)
    for k in sizes:
        cache = root / "cache" / f"sweep_{k}"
        shutil.rmtree(cache, ignore_errors=True)
        cmd, _ = commands("ganeval fid", a, b, args, cache)
        run = timed([*cmd, "--batch-size", str(k)], env, root / "logs" / f"sweep_{k}")
        feats = ganeval_stages(run.stderr).get("features", run.wall)  # no stage line: the whole run
        lines.append(f"{k:6d}{run.wall:8.1f}{1000 * run.cpu / (2 * n):12.0f}{2 * n / feats:10.1f}"
                     f"{run.max_rss / 2**30:9.2f}{run.tree_pss / 2**30:13.2f}")
        print(lines[-1], flush=True)
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=200, help="PNGs per folder (default 200)")
    p.add_argument("--rounds", type=int, default=2, help="rounds, every tool once a round (default 2)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K for every tool (default cpu)")
    p.add_argument("--dir", default="/tmp/bench_everyday", help="folders, weights, caches and logs (kept)")
    p.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated subset of {', '.join(TOOLS)}; empty: "
                   "none (with --batch-sizes)")
    p.add_argument("--batch-sizes", default="", help="also time ganeval-score --metrics fid cold at these "
                   "comma-separated --batch-size values (images/s and memory by batch size)")
    p.add_argument("--peers-python", default=sys.executable, help="the Python with pytorch-fid, clean-fid and "
                   "torch-fidelity (their `peers` extra pins scipy<1.18 for pytorch-fid 0.3.0)")
    p.add_argument("--timeout", type=float, default=float("inf"), help="seconds one run may take before it is "
                   "killed and reported as not finished (default: no limit)")
    p.add_argument("--budget", type=float, default=float("inf"), help="seconds for all timed runs: none starts "
                   "after it is spent, and a run is killed when it runs out (default: no limit)")
    p.add_argument("--log", default=None, help="also write the report to this file")
    args = p.parse_args()
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    if bad := [t for t in tools if t not in TOOLS]:
        p.error(f"unknown tool(s) {', '.join(bad)}: choose from {', '.join(TOOLS)}")
    try:
        sizes = [int(k) for k in args.batch_sizes.split(",") if k.strip()]
    except ValueError:
        p.error(f"--batch-sizes takes comma-separated integers, got {args.batch_sizes!r}")
    if args.n < 2 or args.rounds < 1 or any(k < 1 for k in sizes):
        p.error("--n must be at least 2, --rounds and every --batch-sizes value at least 1")
    root = Path(args.dir).expanduser().resolve()
    lines = header(args)
    print("\n".join(lines), flush=True)
    a, b = make_folders(root, args.n)
    args.weights_file, env = place_weights(root)
    (root / "logs").mkdir(exist_ok=True)
    for tool, why in refusals(tools, args.weights_file, env, args.peers_python).items():
        print(why, flush=True)
        lines.append(why)
        tools.remove(tool)
    runs: dict[str, list[Run]] = {t: [] for t in tools}
    if "ganeval fid" in tools:
        runs["ganeval fid cached"] = []
    end = time.perf_counter() + args.budget
    for r in range(args.rounds if tools else 0):
        order = tools[r % len(tools):] + tools[:r % len(tools)]
        for tool in order:
            if time.perf_counter() >= end:
                lines.append(f"round {r + 1}: {tool:<20} not started: --budget of {args.budget:.0f} s spent")
                print(lines[-1], flush=True)
                continue
            cache = root / "cache" / tool.replace(" ", "_")
            shutil.rmtree(cache, ignore_errors=True)  # cold: an empty feature cache
            cmd, read_fid = commands(tool, a, b, args, cache)
            for label in [tool, "ganeval fid cached"] if tool == "ganeval fid" else [tool]:
                before = " ".join(f"{x:.2f}" for x in os.getloadavg())  # the cached run: the same command again
                limit = min(args.timeout, end - time.perf_counter())
                run = timed(cmd, env, root / "logs" / f"{label.replace(' ', '_')}_{r}", limit)
                runs[label].append(run)
                if not run.finished:
                    lines.append(f"round {r + 1}: {label:<20} {run.failure}")
                    print(lines[-1], flush=True)
                    break
                run.fid = read_fid(run)
                run.stages = ganeval_stages(run.stderr) if label.startswith("ganeval") else {}
                lines.append(f"round {r + 1}: {label:<20} {run.wall:8.1f} s wall, CPU {run.cpu:7.1f} s, RSS "
                             f"{run.max_rss / 2**30:5.2f} GiB, tree PSS {run.tree_pss / 2**30:5.2f} GiB, FID "
                             f"{run.fid:.12g} (load before {before})")
                print(lines[-1], flush=True)
    out = report(runs, args.n) if tools else []
    print("\n".join(out), flush=True)
    if sizes:
        out += batch_sweep(sizes, a, b, args, env, root, args.n)
    out.append(f"# load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(out[-1])
    if args.log:
        from ganeval.common import atomic_write_text

        atomic_write_text(Path(args.log), "\n".join(lines + out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
