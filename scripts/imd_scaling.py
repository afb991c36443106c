"""IMD of two large pool3-like sets: time and peak memory by size, each size in a fresh process.

    python scripts/imd_scaling.py --sizes 10000 20000 50000 100000            # CPU, 2048-d, the default search
    python scripts/imd_scaling.py --sizes 150000 --d 256 --modes one-pass streamed   # the two candidate searches
    python scripts/imd_scaling.py --device cuda --sizes 100000 200000 500000 1000000  # docs/performance.md's GPU numbers

Each row is one `imd(x, y)` call (exact k-NN, k = 5, SLQ with the defaults) on x, y = two different
pool3-like sets (`ganeval.metrics.synthetic.pool3_like`, generated before the clock starts), plus the
k-NN search of x alone timed separately. Peak memory is the process's VmHWM (CPU) or torch's peak
allocated device memory (CUDA), with the two sets' own size listed beside it. `--modes` picks the
exact search's candidate stage: `auto` (the library's choice by memory), `one-pass` (the head-bound filter,
holding its pairs until one merge) or `streamed` (the pairs merged strip by strip; memory bounded by a few
strips and n×k). `--predict` prints `knn_candidates.held_pairs_bytes`, the one-pass filter's estimate.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

MODES = {"auto": None, "one-pass": False, "streamed": True}


def child(n: int, d: int, mode: str, device: str, seed: int, knn_alone: bool = True, precision: str = "float32",
          generate: str = "numpy") -> dict:
    """(In a fresh process) one k-NN search and one IMD call at n×d; their times and the peak memory."""
    import torch

    from ganeval.metrics import imd
    from ganeval.metrics import knn as knn_module
    from ganeval.metrics import knn_candidates
    from ganeval.metrics.synthetic import pool3_like
    from bench_metrics import peak_rss_mb

    dev = torch.device(device)
    if generate == "device":  # torch draws on the device: seconds instead of minutes at 1M (other rows)
        from ganeval.metrics.synthetic import pool3_like_on

        x = pool3_like_on(dev, n, d, seed=seed, distribution_seed=0)
        y = pool3_like_on(dev, n, d, seed=seed + 1, distribution_seed=1)
    else:
        x = pool3_like(n, d, seed=seed, distribution_seed=0)
        y = pool3_like(n, d, seed=seed + 1, distribution_seed=1)
    if MODES[mode] is not None:  # force the candidate stage for imd() too
        knn_candidates.STREAM_ABOVE_BYTES = 0 if MODES[mode] else 1 << 62
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    knn_s = float("nan")
    if knn_alone:
        xt = torch.as_tensor(x).to(dev)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        knn_module.exact_knn(xt, 5, precision=precision)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        knn_s = time.perf_counter() - t
        del xt
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    value = imd(x, y, seed=seed, device=device, knn_precision=precision)
    imd_s = time.perf_counter() - t
    peak = torch.cuda.max_memory_allocated() / 2**20 if dev.type == "cuda" else peak_rss_mb()
    return {"n": n, "d": d, "mode": mode, "knn_s": knn_s, "imd_s": imd_s, "imd": value, "peak_mib": peak,
            "sets_mib": 2 * n * d * 4 / 2**20, "precision": precision}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 20000, 50000, 100000])
    ap.add_argument("--d", type=int, default=2048)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--modes", nargs="+", choices=sorted(MODES), default=["auto"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=None, help="seconds per size and mode (skip the rest)")
    ap.add_argument("--no-knn-alone", action="store_true", help="time imd() only (not also one set's k-NN)")
    ap.add_argument("--precision", default="float32", help="knn_precision: float32 | bfloat16 | tf32 | auto")
    ap.add_argument("--generate", choices=["numpy", "device"], default="numpy",
                    help="numpy: pool3_like (the CPU tables); device: pool3_like_on, drawn by torch on the device")
    ap.add_argument("--_child", nargs=3, metavar=("N", "MODE", "D"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a._child:
        print(json.dumps(child(int(a._child[0]), int(a._child[2]), a._child[1], a.device, a.seed, not a.no_knn_alone,
                               a.precision, a.generate)))
        return
    import torch

    from ganeval.studies.stability import cpu_model
    from ganeval.metrics.knn_candidates import held_pairs_bytes
    from ganeval.metrics.linalg import strip_height

    dev = torch.device(a.device)
    where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"{cpu_model()}, {torch.get_num_threads()} threads"
    print(f"imd_scaling: {where}; torch {torch.__version__}; pool3-like {a.d}-d sets, exact 5-NN, SLQ defaults")
    print(f"{'n':>8} {'mode':>9} {'knn_s':>8} {'imd_s':>8} {'peak_MiB':>9} {'sets_MiB':>9} {'one_pass_pairs_MiB':>19} {'imd':>10}")
    for n in a.sizes:
        for mode in a.modes:
            cmd = [sys.executable, __file__, "--_child", str(n), mode, str(a.d), "--device", a.device, "--seed", str(a.seed)]
            cmd += ["--no-knn-alone"] if a.no_knn_alone else []
            cmd += ["--precision", a.precision, "--generate", a.generate]
            try:
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, check=False)
            except subprocess.TimeoutExpired:
                print(f"{n:>8} {mode:>9}  timed out after {a.timeout:.0f} s", flush=True)
                continue
            if res.returncode != 0:
                print(f"{n:>8} {mode:>9}  failed (exit {res.returncode}): {res.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            r = json.loads(res.stdout.strip().splitlines()[-1])
            held = held_pairs_bytes(n, 10, strip_height(n, dev)) / 2**20
            print(f"{n:>8} {mode:>9} {r['knn_s']:8.2f} {r['imd_s']:8.2f} {r['peak_mib']:9.0f} {r['sets_mib']:9.0f} "
                  f"{held:19.0f} {r['imd']:10.5g} {r['precision']}", flush=True)


if __name__ == "__main__":
    main()
