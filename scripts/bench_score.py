"""Time `ganeval-score` (IMD, FID, KID on the full sets, the default --runs 1) on two inputs:

- two folders of 1000 digit PNGs each (scikit-learn's digits at 32×32, as `data=digits` loads them: images
  0–999 and 797–1796), raw-pixel features (`--features pixels`, 1024-d);
- two 10k×2048 float32 feature arrays (`ganeval.metrics.synthetic.pool3_like`, two distributions), identity.

Each case is timed as a subprocess (`python -m ganeval.app.score ...`, wall clock: Python start-up, imports,
loading, features, metrics) and in-process (`ganeval.app.score.main`, imports already done), `--repeats` times.
The CPU model, core count and load average are printed with the numbers, and the CPU seconds (user + system)
beside each wall time: on a shared machine the wall time follows the load, the CPU time much less.

    python scripts/bench_score.py                 # both cases, 2 repeats, CPU
    python scripts/bench_score.py --repeats 3 --device cuda
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (or platform's), with the number of cores this process may use."""
    name = platform.processor() or "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    return f"{name}, {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores"


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def digit_folders(root: Path) -> tuple[Path, Path]:
    """Two folders of 1000 digit PNGs (32×32 grey): digits 0–999 and 797–1796."""
    from PIL import Image

    from ganeval.data import digits

    d = digits(size=32)
    out = []
    for name, rows in (("digits_a", range(0, 1000)), ("digits_b", range(797, 1797))):
        folder = root / name
        folder.mkdir()
        for i in rows:
            Image.fromarray(d[i, 0]).save(folder / f"{i:04d}.png")
        out.append(folder)
    return out[0], out[1]


def feature_arrays(root: Path) -> tuple[Path, Path]:
    """Two 10k×2048 float32 pool3-like arrays from two distributions, as .npy files."""
    from ganeval.metrics.synthetic import pool3_like

    a, b = root / "real_10k.npy", root / "fake_10k.npy"
    np.save(a, pool3_like(10000, 2048, seed=0, distribution_seed=0).astype(np.float32))
    np.save(b, pool3_like(10000, 2048, seed=1, distribution_seed=1).astype(np.float32))
    return a, b


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def subprocess_seconds(args: list[str]) -> tuple[float, float, str]:
    """Wall-clock and CPU seconds of `python -m ganeval.app.score ARGS`, and its stdout."""
    t, c = time.perf_counter(), children_cpu()
    done = subprocess.run([sys.executable, "-m", "ganeval.app.score", *args], capture_output=True, text=True, check=False)
    dt, dc = time.perf_counter() - t, children_cpu() - c
    if done.returncode != 0:
        raise SystemExit(f"ganeval-score failed ({done.returncode}): {done.stderr[-2000:]}")
    return dt, dc, done.stdout


def inprocess_seconds(args: list[str]) -> tuple[float, float, str]:
    """Wall-clock and CPU seconds of `ganeval.app.score.main(ARGS)` in this process (imports done), what it printed."""
    from ganeval.app.score import main

    buf = io.StringIO()
    t, c = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(buf):
        rc = main(args)
    dt, dc = time.perf_counter() - t, time.process_time() - c
    if rc != 0:
        raise SystemExit(f"ganeval-score failed ({rc})")
    return dt, dc, buf.getvalue()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--cases", nargs="+", default=["digits", "features"], choices=["digits", "features"])
    args = p.parse_args()
    import torch

    import ganeval

    print(f"CPU: {cpu_model()}; torch {torch.__version__} ({torch.get_num_threads()} threads); ganeval "
          f"{ganeval.__version__}; python {platform.python_version()}; device {args.device}")
    t, c = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, "-c", "import ganeval.app.score, ganeval.app.scoring, torch"], check=True)
    print(f"python start-up + imports (subprocess): wall {time.perf_counter() - t:.2f} s, CPU {children_cpu() - c:.1f} s; "
          f"load average {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases = {}
        if "digits" in args.cases:
            a, b = digit_folders(root)
            cases["two folders of 1000 digit PNGs, --features pixels (1024-d)"] = [str(a), str(b), "--features",
                                                                                   "pixels"]
        if "features" in args.cases:
            a, b = feature_arrays(root)
            cases["two 10k×2048 float32 .npy feature arrays (identity)"] = [str(a), str(b)]
        for title, base in cases.items():
            cmd = [*base, "--quiet", "--device", args.device]
            print(f"\n== {title}\n   ganeval-score {' '.join(Path(x).name if '/' in x else x for x in cmd)}")
            for r in range(args.repeats):
                before = load()
                dt_sub, cpu_sub, out = subprocess_seconds(cmd)
                dt_in, cpu_in, out_in = inprocess_seconds(cmd)
                if out != out_in:
                    raise SystemExit(f"the subprocess and in-process runs printed different values:\n{out}\n{out_in}")
                print(f"   repeat {r}: subprocess wall {dt_sub:.2f} s (CPU {cpu_sub:.1f} s), in-process wall {dt_in:.2f} s "
                      f"(CPU {cpu_in:.1f} s); load average before: {before}; after: {load()}", flush=True)
            print("   " + out.strip().replace("\n", "\n   "))
    return 0


if __name__ == "__main__":
    sys.exit(main())
