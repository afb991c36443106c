"""Recall and time of ganeval's approximate kNN (pynndescent) against exact float64 brute force.

Prints, for each data set and each parameter choice tried, the recall of the true k-NN (tie-aware:
a found neighbour counts if it is no farther than the true k-th one) and the build time. Data sets:
pool3-like 2048-d features (ganeval.metrics.synthetic.pool3_like), scikit-learn digit pixels
(64-d, all 1797 images) and an easy low-dimensional set (3-d swiss roll). For N above
--exact-queries the truth is computed for that many random query points only. "chosen" is
DEFAULT_PARAMS; it runs twice (same seed: the deterministic column) and its time is the faster call.

    python scripts/knn_recall.py                 # N = 10000, the parameter grid
    python scripts/knn_recall.py --n 10000 50000 --grid chosen
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from ganeval.metrics.knn_approx import DEFAULT_PARAMS, approx_knn, brute_force_knn, knn_recall
from ganeval.metrics.synthetic import pool3_like

# Parameter choices tried (each overrides DEFAULT_PARAMS); "chosen" is DEFAULT_PARAMS itself.
GRID: dict[str, dict[str, object]] = {
    "chosen": {},
    "nn10-mc10": {"n_neighbors_factor": 2, "n_neighbors_min": 10, "max_candidates": 10},
    "nn15-mc30": {"n_neighbors_factor": 3, "n_neighbors_min": 15, "max_candidates": 30},
    "nn20-mc20": {"n_neighbors_factor": 4, "n_neighbors_min": 20, "max_candidates": 20},
    "nn20-mc40": {"n_neighbors_factor": 4, "n_neighbors_min": 20, "max_candidates": 40},
    "nn20-mc60": {"n_neighbors_factor": 4, "n_neighbors_min": 20, "max_candidates": 60},
    "nn20-mc60-d0": {"n_neighbors_factor": 4, "n_neighbors_min": 20, "max_candidates": 60, "delta": 0.0},
    "nn30-mc30": {"max_candidates": 30},
    "nn40-mc40": {"n_neighbors_factor": 8, "n_neighbors_min": 40, "max_candidates": 40},
    "nn30-trees4": {"n_trees": 4},
    "nn30-iters3": {"n_iters": 3},
}


def _digits(n: int, seed: int) -> np.ndarray:
    from sklearn.datasets import load_digits

    return load_digits().data.astype(np.float32)  # 1797×64: n is ignored, all images are used


def _swiss_roll(n: int, seed: int) -> np.ndarray:
    from sklearn.datasets import make_swiss_roll

    return make_swiss_roll(n, noise=0.05, random_state=seed)[0].astype(np.float32)


DATASETS: dict[str, Callable[[int, int], np.ndarray]] = {
    "pool3_like-2048d": lambda n, seed: pool3_like(n, 2048, seed=seed),
    "digits-64d": _digits,
    "swiss_roll-3d": _swiss_roll,
}


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, warm numba up, then print one line per (data set, N, parameter choice)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[10000], help="set sizes (digits always uses its 1797)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", nargs="+", default=["all"], choices=["all", *GRID], help="parameter choices to try")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--exact-queries", type=int, default=10000, help="max query points for the exact truth")
    ap.add_argument("--n-jobs", type=int, default=1, help="pynndescent threads (1: deterministic; 0: all numba threads)")
    args = ap.parse_args(argv)
    n_jobs = None if args.n_jobs == 0 else args.n_jobs

    t0 = time.perf_counter()
    approx_knn(np.random.default_rng(0).standard_normal((300, 16)).astype(np.float32), args.k)
    print(f"numba compile + first call (300x16): {time.perf_counter() - t0:.1f} s (paid once per process)")
    print(f"DEFAULT_PARAMS = {DEFAULT_PARAMS}")
    grid = GRID if "all" in args.grid else {label: GRID[label] for label in args.grid}
    print(f"{'dataset':<18} {'N':>7} {'params':<12} {'recall':>7} {'time_s':>7} {'exact_s':>7}  deterministic")
    done_digits = False
    for n in args.n:
        for name in args.datasets:
            if name == "digits-64d" and done_digits:
                continue
            x = DATASETS[name](n, args.seed)
            done_digits |= name == "digits-64d"
            rows = None
            if x.shape[0] > args.exact_queries:
                rows = np.sort(np.random.default_rng(args.seed).choice(x.shape[0], args.exact_queries, replace=False))
            t = time.perf_counter()
            true = brute_force_knn(x, args.k, rows=rows)
            t_exact = time.perf_counter() - t
            for label, params in grid.items():
                t = time.perf_counter()
                found = approx_knn(x, args.k, seed=args.seed, n_jobs=n_jobs, params=params)
                dt = time.perf_counter() - t
                sel = found if rows is None else found[rows]
                rec = knn_recall(sel, true, x=x, rows=rows)
                det = ""
                if label == "chosen":  # run twice: determinism, and the time without first-call costs
                    t = time.perf_counter()
                    again = approx_knn(x, args.k, seed=args.seed, n_jobs=n_jobs, params=params)
                    dt = min(dt, time.perf_counter() - t)
                    det = str(bool(np.array_equal(found, again)))
                print(f"{name:<18} {x.shape[0]:>7} {label:<12} {rec:>7.4f} {dt:>7.2f} {t_exact:>7.2f}  {det}", flush=True)


if __name__ == "__main__":
    main()
