"""The protocol on a GPU: the cost of one run, numpy against CUDA-tensor inputs, and where the time goes.

For each input kind (numpy pools, the same pools as CUDA tensors) and sample size it times
`evaluate_detailed` (IMD + FID + KID, no results directory) with R runs and with 1 run after a warm-up,
and reports the fixed cost (checks, upload, first run) and the marginal cost of one more run,
(t_R − t_1) / (R − 1), which is what 100 runs pay per run. `--profile` adds a torch.profiler table of a few
runs: host time by operator, device kernels, and the count of synchronisations and copies.

    python scripts/gpu_protocol.py --device cuda                    # 10k and 50k, numpy and cuda inputs
    python scripts/gpu_protocol.py --device cuda --profile          # plus the profile of 3 runs at 10k
    PYTHONPATH=baseline python scripts/gpu_protocol.py --device cuda --inputs numpy   # an older tree

Pools: `ganeval.metrics.synthetic.pool3_like`, 2048-d, real 50k and generated 50k (two distributions),
cached as .npy under --cache so two trees timed one after the other score the same arrays.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pools(cache: str, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Two pool3-like pools of n×d (made once, then read from `cache`)."""
    from ganeval.metrics.synthetic import pool3_like

    out = []
    for i in range(2):
        path = Path(cache) / f"pool{i}_{n}x{d}.npy"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path.with_suffix(".tmp.npy"), pool3_like(n, d, seed=i, distribution_seed=i))
            os.replace(path.with_suffix(".tmp.npy"), path)
        out.append(np.load(path))
    return out[0], out[1]


METRICS: dict = {"imd": {}, "fid": {}, "kid": {}}


def timed(real, fake, runs: int, size: int, device: str) -> tuple[float, object]:
    from ganeval.protocol import evaluate_detailed

    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t = time.perf_counter()
    ev = evaluate_detailed(real, fake, runs=runs, sample_size=size, metrics=METRICS, seed=0, device=device,
                           progress=False)
    return time.perf_counter() - t, ev


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    p.add_argument("--runs", type=int, default=20, help="R: runs of the longer call per size (10k); 50k uses R/4")
    p.add_argument("--inputs", nargs="+", default=["numpy", "cuda"], choices=["numpy", "cuda"])
    p.add_argument("--pool", type=int, default=50000)
    p.add_argument("--d", type=int, default=2048)
    p.add_argument("--cache", default="/tmp/ganeval-gpu-pools")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--label", default=os.environ.get("TREE_LABEL", "this tree"))
    p.add_argument("--imd-precision", default=None, help="metrics.imd.knn_precision (default: the library's)")
    a = p.parse_args(argv)
    if a.imd_precision:
        METRICS["imd"] = {"knn_precision": a.imd_precision}
    real_np, fake_np = pools(a.cache, a.pool, a.d)
    name = torch.cuda.get_device_name() if a.device.startswith("cuda") else "cpu"
    print(f"gpu_protocol [{a.label}]: {name}, torch {torch.__version__}, pools {a.pool}×{a.d}, metrics {METRICS}")
    rows = []
    for kind in a.inputs:
        real, fake = (real_np, fake_np) if kind == "numpy" else (torch.from_numpy(real_np).to(a.device),
                                                                 torch.from_numpy(fake_np).to(a.device))
        for size in a.sizes:  # warm-up: kernels, cuBLAS/cuSOLVER handles, the allocator's pool (excluded)
            timed(real, fake, 1, size, a.device)
        for size in a.sizes:
            runs = max(2, a.runs if size <= 10000 else a.runs // 4)
            t1, _ = timed(real, fake, 1, size, a.device)
            tr, ev = timed(real, fake, runs, size, a.device)
            marginal = (tr - t1) / (runs - 1)
            means = ev.summary.set_index("metric")["mean"].to_dict()
            rows.append({"inputs": kind, "n": size, "runs": runs, "t1": t1, "tR": tr, "per_run": marginal,
                         "imd": means.get("imd"), "fid": means.get("fid"), "kid": means.get("kid")})
            print(f"  {kind:5s} n={size:>6d}: 1 run {t1:6.3f} s, {runs} runs {tr:6.2f} s -> {marginal:6.4f} s per "
                  f"further run; 100 runs ≈ {t1 + 99 * marginal:5.1f} s   (IMD {means.get('imd'):.4f}, FID "
                  f"{means.get('fid'):.4f})", flush=True)
        del real, fake
    print("RESULT " + json.dumps({"label": a.label, "device": name, "rows": rows}))
    if a.profile and a.device.startswith("cuda"):
        from torch.profiler import ProfilerActivity, profile

        real, fake = torch.from_numpy(real_np).to(a.device), torch.from_numpy(fake_np).to(a.device)
        timed(real, fake, 1, 10000, a.device)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            timed(real, fake, 3, 10000, a.device)
        ka = prof.key_averages()
        print("\nprofile of 3 runs at 10k (CUDA inputs): host time by operator")
        print(ka.table(sort_by="self_cpu_time_total", row_limit=22, max_name_column_width=48))
        print("device time by kernel")
        print(ka.table(sort_by="self_device_time_total", row_limit=18, max_name_column_width=60))
        counts = {e.key: (e.count, e.self_cpu_time_total / 1e3) for e in ka
                  if any(s in e.key for s in ("Synchronize", "Memcpy", "synchronize", "item", "_local_scalar_dense"))}
        print("syncs and copies (count, host ms):", json.dumps(counts))


if __name__ == "__main__":
    main()
