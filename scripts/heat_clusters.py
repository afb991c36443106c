"""Make results/reference/heat_clusters: the paper's "dh̃(t)/dt reflects the approximate number of clusters" on
digit class subsets (classes 0..k−1, k = 1..10, `--per-class` rows of every class), exact ER-normalised heat traces;
then its verdict (`ganeval.studies.heat_clusters`; `scripts/regenerate_references.py heat_clusters` remakes the
derived files).

    PYTHONPATH=. python scripts/heat_clusters.py [--runs 20] [--per-class 150] [--out results/reference/heat_clusters]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ganeval.studies.heat_clusters import K, PER_CLASS, measure, write

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--per-class", type=int, default=PER_CLASS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "results" / "reference"
                    / "heat_clusters")
    a = ap.parse_args()
    if a.out.exists() and any(a.out.iterdir()):
        raise SystemExit(f"{a.out} is not empty: choose another --out")
    start = time.perf_counter()
    rows = measure(a.per_class, a.runs, a.seed)
    a.out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(a.out / "runs.csv", index=False)
    config = {"runs": a.runs, "per_class": a.per_class, "seed": a.seed, "k": K, "confidence": 0.99,
              "command": f"python scripts/heat_clusters.py --runs {a.runs} --per-class {a.per_class} --seed {a.seed}"}
    write(a.out, rows, config)
    print(f"{len(rows)} rows in {time.perf_counter() - start:.0f} s; wrote {a.out}")
    print((a.out / "verdict.md").read_text().split("---")[0])
