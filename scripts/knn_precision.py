"""Time the exact k-NN search with float32 and with certified bfloat16 candidate products, and count the
rows the bfloat16 certificate could not decide (searched again in float32); checks the graphs agree.

    python scripts/knn_precision.py [--n 3000] [--d 512] [--k 5] [--device cuda]

On CUDA it also times TF32 candidate products (float32, bfloat16 and tf32 side by side).
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

import ganeval.metrics.knn as knn
import ganeval.metrics.knn_precision as knn_precision
from ganeval.metrics.synthetic import pool3_like


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    dev = torch.device(args.device)
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")),
               platform.processor())
    where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"CPU: {cpu}, {torch.get_num_threads()} threads"
    print(f"{where}; torch {torch.__version__}")
    precisions = ("float32", "bfloat16", "tf32") if dev.type == "cuda" else ("float32", "bfloat16")
    print(f"knn_precision=auto picks {knn_precision.measure_precision(dev)} here (start-up product {knn_precision.PROBE_SHAPE})")

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    again: list[int] = []
    search_again = knn._row_candidates

    def counted(x, sq, rows, kk, chunk=512):  # type: ignore[no-untyped-def]
        again.append(rows.shape[0])
        return search_again(x, sq, rows, kk, chunk)

    knn._row_candidates = counted
    rng = np.random.default_rng(0)
    n, d = args.n, args.d
    cases = {
        f"|N(0,1)| {n}x{d} (pool3-like, non-negative)": np.abs(rng.standard_normal((n, d))),
        f"10 clusters {n}x{d}": (rng.standard_normal((10, d)) * 3)[rng.integers(0, 10, n)] + rng.standard_normal((n, d)),
        f"synthetic.pool3_like {n}x{d}": pool3_like(n, d, seed=0),
    }
    for name, a in cases.items():
        x = torch.from_numpy(a.astype(np.float32)).to(dev)
        times, graphs = {}, {}
        if dev.type == "cuda":
            knn.exact_knn(x[:512], args.k)  # warm-up: CUDA context, kernels
        for p in precisions:
            again.clear()
            sync()
            t = time.perf_counter()
            graphs[p] = knn.exact_knn(x, args.k, precision=p).cpu()
            times[p] = time.perf_counter() - t
            print(f"{name}: {p:8s} {times[p]:6.2f} s, rows searched again {sum(again)} of {n}", flush=True)
        for p in precisions[1:]:
            same = all(set(u) == set(v) for u, v in zip(graphs["float32"].tolist(), graphs[p].tolist()))
            print(f"{name}: {p}/float32 time ratio {times[p] / times['float32']:.2f}, same graph: {same}")


if __name__ == "__main__":
    main()
