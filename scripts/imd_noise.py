"""IMD's own noise against the noise of subsampling, and the cost of one IMD call, for each control variate.

For each set size n: `--runs` runs each draw fresh sets (a swiss roll in 64-d against a noisier one; and at
n ≤ 1797 scikit-learn's digits against the same digits plus N(0, 2²), subsampled) and score them with a probe draw
of their own: the per-run variance the protocol's interval measures. On `--sets` fixed pairs of sets, `--seeds`
probe draws give the probes' own variance. probe share = probe variance / per-run variance (the issue's target:
≤ 0.10). Each control variate ("paper": the reference's, the default before; "chebyshev": ours) is timed per IMD
call in the same loop on the same sets. With `--baseline PATH` (a checkout of an older ganeval) its default
`imd()` is timed too, in a subprocess on the same arrays.

    python scripts/imd_noise.py --sizes 1000 5000 10000 --log results/reference/bench/imd_noise_cpu.log
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from sklearn.datasets import load_digits, make_swiss_roll

from ganeval.metrics.imd import imd, imd_over_seeds

CONTROLS = ("paper", "chebyshev")
ROTATION = np.linalg.qr(np.random.default_rng(99).normal(size=(64, 3)))[0]


def swiss_roll(n: int, noise: float, seed: int) -> np.ndarray:
    """n points of a swiss roll (3-d, with `noise`) rotated into 64 dimensions."""
    x, _ = make_swiss_roll(n, noise=noise, random_state=seed)
    return (x @ ROTATION.T).astype(np.float32)


def digits(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n digits and n other digits with N(0, 2²) noise (both subsampled from the 1797)."""
    rng = np.random.default_rng(seed)
    data = load_digits().data.astype(np.float32)
    a, b = rng.choice(len(data), n, replace=False), rng.choice(len(data), n, replace=False)
    return data[a], data[b] + rng.normal(0, 2, (n, 64)).astype(np.float32)


def pair(kind: str, n: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    if kind == "digits":
        return digits(n, r)
    return swiss_roll(n, 0.0, 2 * r), swiss_roll(n, 1.0, 2 * r + 1)


BASELINE = """
import json, sys, time, numpy as np
from ganeval.metrics import imd
for line in sys.stdin:
    d = np.load(line.strip())
    c0, t0 = time.process_time(), time.perf_counter()
    v = imd(d["x"], d["y"], seed=int(d["r"]))
    print(json.dumps([time.perf_counter() - t0, time.process_time() - c0, float(v)]), flush=True)
"""


class Baseline:
    """An older ganeval's default imd() in an interpreter of its own (cwd and PYTHONPATH its tree), timed per call."""

    def __init__(self, tree: str, tmp: str) -> None:
        self.tmp = tmp
        self.proc = subprocess.Popen([sys.executable, "-c", BASELINE], cwd=tree, env={**os.environ, "PYTHONPATH": tree},
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def __call__(self, x: np.ndarray, y: np.ndarray, r: int) -> tuple[float, float, float]:
        path = os.path.join(self.tmp, f"{r}.npz")
        np.savez(path, x=x, y=y, r=r)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(path + "\n")
        self.proc.stdin.flush()
        wall, cpu, value = json.loads(self.proc.stdout.readline())
        return wall, cpu, value

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def timed(fn: Callable[[], float]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of this process, value) of one call."""
    c0, t0 = time.process_time(), time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, time.process_time() - c0, value


def measure(kind: str, n: int, runs: int, n_sets: int, seeds: int, baseline: str | None) -> list[str]:
    """The lines of one (data, n): per control, per-run sd, probe sd, share, mean standard error, time per call (wall
    and CPU, median over the runs; the controls, and the baseline, called in turn on each run's sets)."""
    sets = [pair(kind, n, r) for r in range(runs)]
    imd(*pair(kind, 200, 999))  # warm-up
    names = list(CONTROLS) + (["baseline"] if baseline else [])
    calls: dict[str, list[tuple[float, float, float]]] = {c: [] for c in names}
    with tempfile.TemporaryDirectory() as tmp:
        old = Baseline(baseline, tmp) if baseline else None
        if old is not None:
            old(*pair(kind, 200, 999), 999)  # its warm-up
        for r, (x, y) in enumerate(sets):
            for c in (names if r % 2 == 0 else names[::-1]):  # alternate which goes first
                if c == "baseline":
                    calls[c].append(old(x, y, r))  # type: ignore[misc]
                else:
                    calls[c].append(timed(lambda: float(imd(x, y, seed=r, variance_reduction=c))))
        if old is not None:
            old.close()
    lines = []
    for c in CONTROLS:
        values = [v for _, _, v in calls[c]]
        within, errors = [], []
        for x, y in sets[:n_sets]:
            draws = imd_over_seeds(x, y, range(1000, 1000 + seeds), variance_reduction=c)
            within.append(np.var(draws, ddof=1))
            errors += [v.se for v in draws]
        var_run, var_probe = float(np.var(values, ddof=1)), float(np.mean(within))
        lines.append(f"{kind:<11} {n:>6} {c:<10} {np.mean(values):>9.3f} {np.sqrt(var_run):>10.4g} "
                     f"{np.sqrt(var_probe):>10.4g} {np.mean(errors):>10.4g} {var_probe / var_run:>8.2g} "
                     f"{np.median([w for w, _, _ in calls[c]]):>8.3f} {np.median([u for _, u, _ in calls[c]]):>8.3f}")

    def ratio(a: str, b: str) -> str:
        return (f"{np.median([w for w, _, _ in calls[a]]) / np.median([w for w, _, _ in calls[b]]):.3f} wall, "
                f"{np.median([u for _, u, _ in calls[a]]) / np.median([u for _, u, _ in calls[b]]):.3f} CPU")

    lines.append(f"{'':<11} {n:>6} time per call, chebyshev / paper: {ratio('chebyshev', 'paper')}")
    if baseline:
        same = max(abs(v - p) for (_, _, v), (_, _, p) in zip(calls["baseline"], calls["paper"]))
        lines.append(f"{'':<11} {n:>6} chebyshev / the baseline's default ({baseline}): {ratio('chebyshev', 'baseline')}; "
                     f"its values against paper's here: max |diff| {same:.3g}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000])
    ap.add_argument("--runs", type=int, default=20, help="runs, each with fresh sets and its own probes")
    ap.add_argument("--sets", type=int, default=3, help="fixed pairs of sets for the probe variance")
    ap.add_argument("--seeds", type=int, default=10, help="probe draws on each fixed pair")
    ap.add_argument("--baseline", help="a checkout of an older ganeval whose default imd() is timed beside")
    ap.add_argument("--log", type=Path, help="also write the output here")
    a = ap.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor()) if os.path.exists("/proc/cpuinfo") else platform.processor()
    out = [f"# scripts/imd_noise.py {' '.join(sys.argv[1:])}",
           f"# {cpu}, {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), "
           f"load average {os.getloadavg()[0]:.1f} at the start, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
           "# sd_run: sd over runs (fresh sets and probes each); sd_probe: sd over probe draws on fixed sets; se: the "
           "mean standard error the values carry; share = sd_probe² / sd_run²; wall s, CPU s: median seconds per imd() call (CPU: this process's, all "
           "threads)",
           f"{'data':<11} {'n':>6} {'control':<10} {'mean':>9} {'sd_run':>10} {'sd_probe':>10} {'se':>10} "
           f"{'share':>8} {'wall s':>8} {'CPU s':>8}"]
    print("\n".join(out), flush=True)
    for n in a.sizes:
        for kind in (["digits"] if n <= 1797 else []) + ["swiss_roll"]:
            lines = measure(kind, n, a.runs, a.sets, a.seeds, a.baseline)
            print("\n".join(lines), flush=True)
            out += lines
    out.append(f"# load average {os.getloadavg()[0]:.1f} at the end")
    print(out[-1])
    if a.log:
        a.log.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
