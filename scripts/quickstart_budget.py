"""How long the quickstart's GANs must train: sample quality against epochs, and the seconds it costs.

Trains each quickstart trainer (its train spec from ganeval/configs/experiment/quickstart.yaml, epochs
replaced) on the embedded digits, continuing one run through the listed epoch counts (a continued run
equals one long run), and scores 1000 samples at each with `digits_quality.py`'s SVM: mean top-class
probability and the classes present. The quickstart's epochs are the fewest whose samples are
recognisable digits of every class; its run count then fills the rest of the 5-minute budget.

    python scripts/quickstart_budget.py --epochs 5 10 15 20 30
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digits_quality import classifier, quickstart_setups, score  # noqa: E402

from ganeval.data import digits  # noqa: E402
from ganeval.gan import CheckpointGenerator  # noqa: E402
from ganeval.gan.training import train  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, nargs="+", default=[5, 10, 15, 20, 30])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    real = digits(size=32)
    clf, _, _ = classifier(real, args.seed)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads by default (training uses 1)")
    print("trainer        epochs  train s  mean confidence  classes present")
    for name, spec in quickstart_setups().items():
        spec = {k: v for k, v in spec.items() if k != "epochs"}
        with tempfile.TemporaryDirectory() as tmp:
            spent = 0.0
            for epochs in sorted(args.epochs):
                t = time.perf_counter()
                path = train(real, out_dir=tmp, epochs=epochs, seed=args.seed, progress=False, sample_every=0, **spec)
                spent += time.perf_counter() - t
                q = score(clf, CheckpointGenerator(path).sample(1000, seed=0))
                print(f"{name:<14} {epochs:>6}  {spent:>7.1f}  {q['mean_confidence']:>15.3f}  {q['classes_present']:>15}",
                      flush=True)


if __name__ == "__main__":
    main()
