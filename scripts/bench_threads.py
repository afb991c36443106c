"""Training speed on CPU against torch's thread count, on a quiet machine and beside CPU-bound processes.

Each cell times `--iters` critic iterations of the quickstart's WGAN-GP (digits architecture) in a fresh
subprocess with `torch.set_num_threads(threads)`, while `load` busy-loop processes run beside it. The
ratio column says how much faster one thread is than the machine's default; it is what ganeval's
choice of training threads (`ganeval.gan.training.cpu_threads`) rests on.

    python scripts/bench_threads.py                  # threads 1 and default, load 0 and 2
    python scripts/bench_threads.py --loads 0 1 2 4 --iters 100
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def busy(n: int) -> list[subprocess.Popen]:
    """`n` processes that spin on one core each until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def rate(threads: int, iters: int) -> float:
    """Critic iterations per second of `bench_training.py` with `threads` torch threads (a fresh process)."""
    out = subprocess.run(
        [sys.executable, str(HERE / "bench_training.py"), "--device", "cpu", "--arch", "digits", "--gan",
         "wgan_gp_quick", "--iters", str(iters), "--warmup", "10", "--threads", str(threads)],
        capture_output=True, text=True, check=True,
    ).stdout
    return float(json.loads(out[out.index("{"):])["critic_iterations_per_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, nargs="+", default=[0, 2], help="busy processes beside the benchmark")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    ap.add_argument("--iters", type=int, default=80)
    args = ap.parse_args()
    print(f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"critic iterations/s of the quickstart's WGAN-GP")
    print("load  " + "  ".join(f"threads={t:<3d}" for t in args.threads) + "  one thread / default")
    for load in args.loads:
        procs = busy(load)
        try:
            time.sleep(1.0)
            rates = [rate(t, args.iters) for t in args.threads]
        finally:
            for p in procs:
                p.kill()
        print(f"{load:<4d}  " + "  ".join(f"{r:<11.2f}" for r in rates) + f"  {rates[0] / rates[-1]:.2f}×")


if __name__ == "__main__":
    main()
