"""Make results/reference/er_normalisation: the paper's "c = 2 provides a tight approximation for random graphs" on
Erdős–Rényi graphs of growing size, then its verdict (`ganeval.studies.er_normalisation`;
`scripts/regenerate_references.py er_normalisation` remakes the derived files).

    PYTHONPATH=. python scripts/er_normalisation.py [--sizes 250 500 1000 2000] [--degrees 5 10 20] [--graphs 10]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ganeval.studies.er_normalisation import measure, plot, write

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    ap.add_argument("--degrees", type=float, nargs="+", default=[5, 10, 20])
    ap.add_argument("--graphs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "results" / "reference"
                    / "er_normalisation")
    a = ap.parse_args()
    if a.out.exists() and any(a.out.iterdir()):
        raise SystemExit(f"{a.out} is not empty: choose another --out")
    if a.graphs < 2 or min(a.sizes) < 10 or min(a.degrees) <= 1:
        raise SystemExit("need --graphs ≥ 2, sizes ≥ 10 and degrees > 1")
    start = time.perf_counter()
    rows = measure(a.sizes, a.degrees, a.graphs, a.seed)
    a.out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(a.out / "runs.csv", index=False)
    config = {"sizes": a.sizes, "degrees": a.degrees, "graphs": a.graphs, "seed": a.seed, "confidence": 0.99,
              "command": "python scripts/er_normalisation.py --sizes " + " ".join(map(str, a.sizes)) + " --degrees "
              + " ".join(f"{d:g}" for d in a.degrees) + f" --graphs {a.graphs} --seed {a.seed}"}
    write(a.out, rows, config)
    plot(rows, a.out / "er_normalisation.png")
    print(f"{len(rows)} rows in {time.perf_counter() - start:.0f} s; wrote {a.out}")
    print((a.out / "verdict.md").read_text().split("---")[0])
