"""Make results/reference/scalability: wall time of IMD (exact and approximate k-NN), KID (all n rows, O(dn²)) and FID
against n, side by side on this machine, then the verdicts on the paper's scalability statements
(`ganeval.studies.scalability`; `scripts/regenerate_references.py scalability` remakes the derived files).

    PYTHONPATH=. python scripts/scalability.py [--sizes 1000 2000 4000 8000] [--d 512] [--repeats 4]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd


def timers() -> dict:
    from ganeval.metrics import fid, imd, kid

    return {"imd_exact": lambda x, y: imd(x, y, seed=0),
            "imd_approx": lambda x, y: imd(x, y, seed=0, knn="approx"),
            "kid_full": lambda x, y: kid(x, y, subsets=1, subset_size=len(x), seed=0),
            "fid": lambda x, y: fid(x, y)}


def cpu() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    name = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), platform.processor())
    return f"{name} ({os.cpu_count()} cores)"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "results" / "reference"
                    / "scalability")
    a = ap.parse_args()
    if a.out.exists() and any(a.out.iterdir()):
        raise SystemExit(f"{a.out} is not empty: choose another --out")
    if a.repeats < 2 or len(a.sizes) < 2:
        raise SystemExit("need --repeats ≥ 2 and at least two sizes")
    import torch

    from ganeval.studies.scalability import plot, write

    fns = timers()
    rng = np.random.default_rng(0)
    data = {n: (rng.standard_normal((n, a.d)).astype(np.float32), (rng.standard_normal((n, a.d)) + 0.1).astype(np.float32))
            for n in a.sizes}
    fns["imd_approx"](*data[a.sizes[0]])  # pynndescent's numba compilation, outside the clock
    load0 = os.getloadavg()[0]
    rows, names = [], list(fns)
    for r in range(a.repeats):
        for n in a.sizes:
            for m in names[r % len(names):] + names[:r % len(names)]:  # rotating order: no metric always first
                t0 = time.perf_counter()
                fns[m](*data[n])
                rows.append({"metric": m, "n": n, "repeat": r, "seconds": time.perf_counter() - t0})
                print(f"repeat {r} n {n} {m}: {rows[-1]['seconds']:.2f} s", flush=True)
    rows = pd.DataFrame(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(a.out / "runs.csv", index=False)
    config = {"sizes": a.sizes, "d": a.d, "repeats": a.repeats, "confidence": 0.99, "cpu": cpu(),
              "threads": torch.get_num_threads(), "load": f"{load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
              "command": f"python scripts/scalability.py --sizes {' '.join(map(str, a.sizes))} --d {a.d} --repeats {a.repeats}"}
    write(a.out, rows, config)
    plot(rows, a.out / "scalability.png")
    print((a.out / "verdict.md").read_text().split("---")[0])
