"""Time the whole protocol (subsampling, IMD + FID + KID, per-run rows, summary) against the peers.

Features: `ganeval.metrics.synthetic.pool3_like` — relu(offset + low-rank Gaussian factors + diagonal
noise), 2048-d, non-negative and correlated like Inception pool3 (see that module). A real pool of
50k and a generated pool of 20k (two different distributions); each run draws 10k from each, through
`ganeval.protocol.evaluate_detailed`, the code path the `ganeval` command uses, writing runs.csv.
Nothing derived from one run's subsample is reused in another.

Peers: one run's subsample (the same rows as our run 0) scored by piq's MSID, pytorch-fid's statistics
+ `calculate_frechet_distance` and torch-fidelity's KID (100×1000); run this script in an environment
with the `peers` extra (e.g. .venv-peers) or pass --skip-peers.

    python scripts/bench_protocol.py --runs 100                 # the paper's protocol, CPU
    python scripts/bench_protocol.py --device cuda --runs 100 --skip-peers
    python scripts/bench_protocol.py --runs 0 --scaling 1000 5000 10000 50000 --approx 50000 200000
    python scripts/bench_protocol.py --runs 0 --memory          # peak RSS of a 10k run (subprocess)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ganeval.metrics.synthetic import pool3_like  # noqa: E402
from ganeval.protocol import evaluate_detailed  # noqa: E402

METRICS = {"imd": {}, "fid": {}, "kid": {}}


def pools(n_real: int, n_fake: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A real and a generated pool from two different pool3-like distributions."""
    return (pool3_like(n_real, d, seed=seed, distribution_seed=0),
            pool3_like(n_fake, d, seed=seed + 1, distribution_seed=1))


def ours(real: np.ndarray, fake: np.ndarray, runs: int, sample_size: int, device: str, seed: int,
         metrics: dict | None = None) -> tuple[float, object]:
    """Seconds for `runs` protocol runs (results written to a temporary results_dir), and the result."""
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        ev = evaluate_detailed(real, fake, runs=runs, sample_size=sample_size, metrics=metrics or METRICS,
                               seed=seed, device=device, results_dir=tmp, progress=False)
        return time.perf_counter() - t, ev


def peers_one_run(real: np.ndarray, fake: np.ndarray, sample_size: int, seed: int) -> dict[str, float]:
    """Seconds each peer takes on run 0's subsample (the rows our run 0 draws)."""
    from bench_metrics import peers  # the peer wrappers of the metrics benchmark

    rng = np.random.default_rng([seed, 0])
    x = np.ascontiguousarray(real[rng.choice(len(real), sample_size, replace=False)])
    y = np.ascontiguousarray(fake[rng.choice(len(fake), sample_size, replace=False)])
    funcs = peers(seed)
    small = (x[:300], y[:300])
    out = {}
    for name, f in funcs.items():
        f(*small)  # warm-up: imports, numba, thread pools
        t = time.perf_counter()
        f(x, y)
        out[name] = time.perf_counter() - t
    return out


def scaling(sizes: list[int], approx: list[int], d: int, device: str, seed: int, plot: str | None) -> None:
    """Seconds per run for growing N (pools of N, samples of N), exact and approximate kNN, as a table and plot."""
    rows = []
    for method, ns in (("exact", sizes), ("approx", approx)):
        if method == "approx" and ns:
            from ganeval.metrics.knn_approx import approx_knn

            t = time.perf_counter()
            approx_knn(pool3_like(200, 16, seed=0), 5)  # numba compiles once per process
            print(f"pynndescent first-call compilation: {time.perf_counter() - t:.1f} s (excluded)")
        for n in ns:
            real, fake = pools(n, n, d, seed)
            metrics = {"imd": {"knn": method}, "fid": {}, "kid": {"subset_size": min(1000, n)}}
            runs = 3 if n <= 10000 else 1
            secs, _ = ours(real, fake, runs, n, device, seed, metrics)
            rows.append((method, n, secs / runs))
            print(f"  {method:6s} N={n:>7d}: {secs / runs:8.2f} s per run ({runs} runs)", flush=True)
            del real, fake
    print("\nknn     N        s/run")
    for method, n, s in rows:
        print(f"{method:6s} {n:>8d} {s:9.2f}")
    if plot and rows:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.6))
        for method in ("exact", "approx"):
            pts = [(n, s) for m, n, s in rows if m == method]
            if pts:
                ax.loglog(*zip(*pts), marker="o", label=f"knn={method}")
        ax.set_xlabel("samples per set, N")
        ax.set_ylabel("seconds per run (IMD+FID+KID)")
        ax.set_title(f"Protocol run time vs N ({device})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        Path(plot).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(plot, dpi=120)
        print(f"plot: {plot}")


def memory_child(sample_size: int, d: int, device: str, seed: int) -> None:
    real, fake = pools(int(sample_size * 1.2), int(sample_size * 1.2), d, seed)
    from bench_metrics import peak_rss_mb

    ours(real, fake, 1, sample_size, device, seed)
    print(json.dumps({"peak_rss_mb": peak_rss_mb()}))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=100, help="protocol runs to time (0 skips)")
    p.add_argument("--real", type=int, default=50000)
    p.add_argument("--fake", type=int, default=20000)
    p.add_argument("--sample-size", type=int, default=10000)
    p.add_argument("--d", type=int, default=2048)
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-peers", action="store_true")
    p.add_argument("--scaling", type=int, nargs="*", default=[])
    p.add_argument("--approx", type=int, nargs="*", default=[])
    p.add_argument("--plot", default="results/bench/protocol_scaling.png")
    p.add_argument("--memory", action="store_true", help="peak RSS of one 10k run, in a subprocess")
    p.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.memory_child:
        return memory_child(a.sample_size, a.d, a.device, a.seed)
    import torch

    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, device {a.device}"
          + (f" ({torch.cuda.get_device_name()})" if a.device.startswith("cuda") else ""))
    if a.runs:
        real, fake = pools(a.real, a.fake, a.d, a.seed)
        ours(real[:2000], fake[:2000], 1, 1000, a.device, a.seed)  # warm-up (excluded)
        secs, ev = ours(real, fake, a.runs, a.sample_size, a.device, a.seed)
        per_run = secs / a.runs
        print(f"\nganeval: {a.runs} runs of {a.sample_size} vs {a.sample_size} from pools of {a.real} / {a.fake}, "
              f"{a.d}-d: {secs:.1f} s total, {per_run:.2f} s per run")
        print(ev.summary[["metric", "mean", "ci_low", "ci_high", "n_runs"]].to_string(index=False))
        if not a.skip_peers:
            theirs = peers_one_run(real, fake, a.sample_size, a.seed)
            total = sum(theirs.values())
            print("\npeers on run 0's subsample: " + ", ".join(f"{k} {v:.1f} s" for k, v in theirs.items()))
            print(f"{'':10s}{'s/run':>10s}{'100 runs':>12s}")
            print(f"{'peers':10s}{total:10.2f}{total * 100 / 60:10.1f} min")
            print(f"{'ganeval':10s}{per_run:10.2f}{per_run * 100 / 60:10.1f} min")
            print(f"ratio (peers / ganeval): {total / per_run:.1f}x")
        else:
            print(f"ganeval, 100 runs: {per_run * 100:.1f} s ({'measured' if a.runs == 100 else 'from ' + str(a.runs) + ' runs'})")
    if a.scaling or a.approx:
        scaling(a.scaling, a.approx, a.d, a.device, a.seed, a.plot)
    if a.memory:
        out = subprocess.run([sys.executable, __file__, "--memory-child", "--sample-size", str(a.sample_size),
                              "--d", str(a.d), "--device", a.device], capture_output=True, text=True, check=True)
        print(f"peak RSS of one {a.sample_size} vs {a.sample_size} run: {json.loads(out.stdout.splitlines()[-1])['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
