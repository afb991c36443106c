"""Make results/reference/paper_checks: the paper's measurable statements no other study answers (the moment-matched
counterexample, "k = 5 yields connected graphs", the scale factor's mass, Rademacher against Gaussian probes, the
Lanczos bound's tightness and "m = 10 suffices", the Taylor control variate for t ≤ 1, the empty-graph normalisation),
then their verdicts (`ganeval.studies.paper_checks`; `scripts/regenerate_references.py paper_checks` remakes the
derived files).

    PYTHONPATH=. python scripts/paper_checks.py [--runs 20] [--n 1000] [--batches 40] [--probes 5] [--out FOLDER]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 1797, 4000, 10000])
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--probes", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "results" / "reference"
                    / "paper_checks")
    a = ap.parse_args()
    if a.out.exists() and any(a.out.iterdir()):
        raise SystemExit(f"{a.out} is not empty: choose another --out")
    if a.runs < 2 or a.batches < 2 or a.probes < 1 or a.n < 100:
        raise SystemExit("need --runs ≥ 2, --batches ≥ 2, --probes ≥ 1 and --n ≥ 100")
    from ganeval.studies.paper_checks import measure, plot, write

    start = time.perf_counter()
    rows = measure(a.runs, a.n, a.sizes, a.batches, a.probes, a.seed,
                   stage=lambda s: print(f"[{time.perf_counter() - start:6.0f} s] {s}", flush=True))
    a.out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(a.out / "runs.csv", index=False)
    config = {"runs": a.runs, "n": a.n, "sizes": a.sizes, "batches": a.batches, "probes": a.probes, "seed": a.seed,
              "confidence": 0.99, "command": f"python scripts/paper_checks.py --runs {a.runs} --n {a.n} --sizes "
              + " ".join(map(str, a.sizes)) + f" --batches {a.batches} --probes {a.probes} --seed {a.seed}"}
    write(a.out, rows, config)
    plot(rows, a.out / "paper_checks.png")
    print(f"{len(rows)} rows in {time.perf_counter() - start:.0f} s; wrote {a.out}")
    print((a.out / "verdict.md").read_text().split("---")[0])
