"""Redraw results/reference/torus/torus.png from the reference's own samples, without training (issue #26).

The reference's checkpoints are not kept, and a retrain on another CPU gives other models (on the Intel Xeon the
default command's seed-0 good GAN put 3.0 % of its samples in the hole, the reference's 0.8 %), so a rerun cannot
redraw the reference's figure. tests/data/torus_pools.npz holds the first 2 000 samples of each reference model's
pool (`scripts/torus_test_pools.py`, made from the reference's checkpoints): this draws the real points (the data
config of the reference's record, made again) beside training seed `--seed`'s good and bad samples, each panel
titled with that seed's own hole fraction from the record (`hole_fraction_per_seed`, of its whole pool), as
`ganeval experiment=torus` titles a fresh run's figure (`ganeval.studies.torus.plot_samples`).

    PYTHONPATH=. python scripts/torus_figure.py              # -> results/reference/torus/torus.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=Path, default=ROOT / "results" / "reference" / "torus")
    p.add_argument("--pools", type=Path, default=ROOT / "tests" / "data" / "torus_pools.npz")
    p.add_argument("--seed", type=int, default=0, help="training-seed index whose samples are drawn")
    p.add_argument("--out", type=Path, default=None, help="default: torus.png in --results")
    args = p.parse_args(argv)
    from hydra.utils import instantiate

    from ganeval.studies.torus import plot_samples, seed_labels

    rec = json.loads((args.results / "summary.json").read_text())
    per_seed = rec["hole_fraction_per_seed"]
    import pandas as pd

    models = list(dict.fromkeys(pd.read_csv(args.results / "summary.csv").model))  # the good model first
    if not 0 <= args.seed < len(per_seed[models[0]]):
        print(f"--seed {args.seed}: the record has {len(per_seed[models[0]])} training seeds", file=sys.stderr)
        return 2
    real = np.asarray(instantiate(rec["config"]["data"]), dtype=np.float32)
    pools = np.load(args.pools)
    shown = {k: pools[f"{k}{args.seed}"] for k in models}
    label = seed_labels(rec["config"], len(per_seed[models[0]]))[args.seed]
    n_pool = int(rec["config"]["n_generated"])
    out = plot_samples(real, shown, {k: float(per_seed[k][args.seed]) for k in models},
                       args.out or args.results / "torus.png", f"training seed {label}, ",
                       f"first {len(shown[models[0]])} of its {n_pool} samples shown")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
