"""Write tests/data/torus_pools.npz: the first rows of each default torus model's generated pool, per training seed.

tests/test_torus.py scores these samples (given generators with replicas) instead of training the default models,
which takes minutes on 2 cores. The pools are the ones `ganeval experiment=torus` scores: each trained checkpoint
(models_dir/torus/<model>-<key>/checkpoint.pt, found through results_dir/summary.json) sampled with the config's
seed; keys good0, good1, ..., bad0, ... (model name + training-seed index).

    PATH=/work/main/.venv/bin:$PATH PYTHONPATH=. python scripts/torus_test_pools.py \
        --results results/reference/torus --models models --rows 2000
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=Path, default=Path("results/reference/torus"), help="the default run's results_dir")
    p.add_argument("--rows", type=int, default=2000, help="rows kept per pool (the first ones)")
    p.add_argument("--out", type=Path, default=Path("tests/data/torus_pools.npz"))
    args = p.parse_args(argv)
    from ganeval.common import atomic_np_save
    from ganeval.gan import CheckpointGenerator

    rec = json.loads((args.results / "summary.json").read_text())
    seed, n_gen, batch = int(rec["config"]["seed"]), int(rec["config"]["n_generated"]), int(rec["config"]["batch_size"])
    arrays: dict[str, np.ndarray] = {}
    for key, ident in rec["generators"].items():  # "torus/good/train_seed=0" -> identity with the checkpoint path
        parts = key.split("/")
        index = int(parts[2].split("=")[1]) if len(parts) > 2 else 0
        pool = CheckpointGenerator(path=ident["path"]).sample(n_gen, seed=seed, batch_size=batch, device="cpu")
        arrays[f"{parts[1]}{index}"] = np.asarray(pool, dtype=np.float32)[: args.rows]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_np_save(args.out, **arrays)
    print(f"wrote {args.out}: {sorted(arrays)} ({args.out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
