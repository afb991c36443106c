"""The overhead of ganeval.torchmetrics' Protocol over `ganeval.evaluate` on the same arrays, and the memory its
states hold (issue 33).

Pools: `ganeval.metrics.synthetic.pool3_like` (2048-d, pool3-like), a real and a generated one of --n rows each.
Protocol is fed --batch rows per `update` (feature="identity"), then `compute()`; evaluate runs on the same numpy
arrays with the same runs, sample size (the whole pool), metrics and seed. Both must give the same numbers (checked).

    python scripts/bench_torchmetrics.py                       # 10k vs 10k, 2048-d, runs=10, IMD+FID+KID, CPU
    python scripts/bench_torchmetrics.py --n 2000 --runs 3 --metrics fid kid
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np
import torch

from ganeval.metrics.synthetic import pool3_like
from ganeval.protocol import evaluate
from ganeval.torchmetrics import Protocol


def rss_mb() -> float:
    """This process's resident memory (Linux /proc), MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 1e6


def fed(real: np.ndarray, fake: np.ndarray, args: argparse.Namespace) -> tuple[Protocol, float, int, float]:
    """A Protocol fed both pools --batch rows at a time: (it, seconds, bytes its states hold, RSS growth in MB)."""
    metric = Protocol(args.metrics, features="identity", runs=args.runs, sample_size=args.n, seed=args.seed)
    metric = metric.to(args.device)
    before = rss_mb()
    t = time.perf_counter()
    for pool, is_real in ((real, True), (fake, False)):
        for i in range(0, args.n, args.batch):
            metric.update(torch.from_numpy(pool[i : i + args.batch]).to(args.device), real=is_real)
    seconds = time.perf_counter() - t
    held = sum(s.numel() * s.element_size() for s in (*metric.real_features, *metric.fake_features))
    return metric, seconds, held, rss_mb() - before


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10000, help="rows of each pool (the sample size too)")
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--metrics", nargs="+", default=["imd", "fid", "kid"])
    p.add_argument("--batch", type=int, default=500, help="rows per update")
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=1, help="alternate evaluate and Protocol this often; the best times")
    p.add_argument("--json", help="also write the numbers here")
    args = p.parse_args()
    real = pool3_like(args.n, args.dim, seed=args.seed, distribution_seed=0)
    fake = pool3_like(args.n, args.dim, seed=args.seed + 1, distribution_seed=1)
    settings = dict(runs=args.runs, sample_size=args.n, metrics=args.metrics, seed=args.seed)

    t_evaluate, t_update, t_compute = [], [], []
    for _ in range(args.rounds):  # alternated, so a change of load on a shared machine reaches both sides
        t = time.perf_counter()
        want = evaluate(real, fake, **settings, device=args.device, progress=False)
        t_evaluate.append(time.perf_counter() - t)
        metric, t_fed, held, held_rss = fed(real, fake, args)
        t = time.perf_counter()
        got = metric.compute()
        t_compute.append(time.perf_counter() - t)
        t_update.append(t_fed)
        del metric
    t_evaluate, t_update, t_compute = min(t_evaluate), min(t_update), min(t_compute)  # the best of the rounds

    same = all(got[m].item() == v for m, v in zip(want["metric"], want["mean"]))
    total = t_update + t_compute
    per_10k = held / (2 * args.n) * 10000 / 1e6
    out = {"n": args.n, "dim": args.dim, "runs": args.runs, "metrics": args.metrics, "batch": args.batch,
           "rounds": args.rounds,
           "evaluate_s": t_evaluate, "update_s": t_update, "compute_s": t_compute, "protocol_s": total,
           "ratio_protocol_over_evaluate": total / t_evaluate, "ratio_compute_over_evaluate": t_compute / t_evaluate,
           "state_mb_per_10k_features": per_10k, "rss_growth_mb_during_updates": held_rss, "same_numbers": same}
    print(f"{args.n} vs {args.n}, {args.dim}-d, runs={args.runs}, {'+'.join(args.metrics)}, {args.device}, "
          f"best of {args.rounds} round(s)")
    print(f"  evaluate                 {t_evaluate:8.2f} s")
    print(f"  Protocol update ({args.batch}/batch) {t_update:8.3f} s   compute {t_compute:8.2f} s   "
          f"together {total:8.2f} s")
    print(f"  ratio Protocol / evaluate {total / t_evaluate:7.3f}   (compute alone {t_compute / t_evaluate:.3f})")
    print(f"  state held: {per_10k:.1f} MB per 10k features ({held / 1e6:.1f} MB in all; RSS grew {held_rss:.1f} MB)")
    print(f"  same numbers as evaluate: {same}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    if not same:
        raise SystemExit("Protocol's numbers differ from evaluate's")


if __name__ == "__main__":
    main()
