"""Cost and accuracy of the heat-trace methods on the heat_traces experiment's graphs (patches, pixels, k=5).

    python scripts/heat_trace_accuracy.py --sizes 1000 2000 5000 10000 --steps 10 20 30 40 60
    python scripts/heat_trace_accuracy.py --sizes 10000 --no-bias     # timings only (no eigenvectors)
    python scripts/heat_trace_accuracy.py --device cuda               # the biases, fast

Per N: the seconds of the exact method (dense Laplacian + eigvalsh, what heat_trace(method="exact") adds
to the k-NN search) and of an m-step SLQ (nv=100), and SLQ's relative bias against the exact trace at the
worst t of the plotted grid (64 log points on [1, 100]). The bias is the Lanczos part alone, measured
per probe against the exact quadratic form of the same probe (full eigendecomposition), so it is not
hidden by the probes' noise: mean over the nv probes with its 99 % Student-t interval. The CPU model and
the load average are printed with the timings (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    from ganeval.data.embedded import patches
    from ganeval.features.simple import PixelsExtractor
    from ganeval.metrics.knn import exact_knn
    from ganeval.metrics.laplacian import dense_laplacian
    from ganeval.metrics.slq_error import exact_forms, slq_forms, spectrum
    from ganeval.results import t_interval

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000])
    ap.add_argument("--steps", type=int, nargs="+", default=[10, 20, 30, 40, 60])
    ap.add_argument("--nv", type=int, default=100)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-bias", action="store_true", help="timings only: skip the eigenvectors and the biases")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--crop", type=int, default=32, help="patch size (32: the experiment's; 8 makes the k-NN search "
                    "16× cheaper for timing runs, where the graph does not matter)")
    args = ap.parse_args()
    dev = torch.device(args.device)

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    t = torch.from_numpy(np.logspace(0, 2, 64)).to(dev)
    gpu = f", GPU {torch.cuda.get_device_name(dev)}" if dev.type == "cuda" else ""
    print(f"CPU {cpu_model()}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}{gpu}; "
          f"patches {args.crop}×{args.crop}, k={args.k}, nv={args.nv}")
    print("N,what,m,seconds,worst_t,bias_pct,ci_low_pct,ci_high_pct,load1")
    for n in args.sizes:
        x = PixelsExtractor()(torch.from_numpy(patches(n, args.crop, args.seed))).to(dev)
        t0 = time.perf_counter()
        nbrs = exact_knn(x, args.k)
        sync()
        print(f"{n},knn,,{time.perf_counter() - t0:.2f},,,,,{os.getloadavg()[0]:.1f}", flush=True)
        t0 = time.perf_counter()
        torch.linalg.eigvalsh(dense_laplacian(nbrs))
        sync()
        print(f"{n},exact (eigvalsh),,{time.perf_counter() - t0:.2f},,,,,{os.getloadavg()[0]:.1f}", flush=True)
        probes = torch.from_numpy(np.random.default_rng([args.seed, n]).standard_normal((n, args.nv))).to(dev)
        if args.no_bias:
            for m in args.steps:
                t0 = time.perf_counter()
                slq_forms(nbrs, probes, t, m)
                sync()
                print(f"{n},slq,{m},{time.perf_counter() - t0:.2f},,,,,{os.getloadavg()[0]:.1f}", flush=True)
            continue
        t0 = time.perf_counter()
        spec = spectrum(nbrs)
        sync()
        print(f"{n},eigh (vectors, for the bias),,{time.perf_counter() - t0:.2f},,,,,{os.getloadavg()[0]:.1f}", flush=True)
        exact = exact_forms(spec, probes, t).q
        truth = spec.trace(t)
        for m in args.steps:
            t0 = time.perf_counter()
            q = slq_forms(nbrs, probes, t, m).q
            sync()
            dt = time.perf_counter() - t0
            rel = (n * (q - exact) / truth[None, :]).cpu().numpy()  # per probe, per t: Lanczos error / trace
            stats = [t_interval(rel[:, j], 0.99) for j in range(len(t))]
            j = int(np.argmax([abs(s["mean"]) for s in stats]))
            s = stats[j]
            print(f"{n},slq,{m},{dt:.2f},{float(t[j]):.1f},{100 * s['mean']:+.3f},{100 * s['ci_low']:+.3f},"
                  f"{100 * s['ci_high']:+.3f},{os.getloadavg()[0]:.1f}", flush=True)
        del spec, exact


if __name__ == "__main__":
    main()
