"""Does the blur sweep's verdict depend on the blurred and real subsamples sharing images?

experiment=blur_sweep draws the real and the blurred subsample of a run from the same 901 digits (classes 0–4),
so about 800/901 of the blurred digits are blurred copies of digits on the real side, while the similar set
(classes 5–9) shares none. Here the real pool and the blurred pool are disjoint random halves of classes 0–4
(450 and 451 images) and everything else is the experiment's (pixels, 8×8, the same σ grid, similar set and
reference pair, 99 % intervals, the same pass test); it prints the first σ each metric passes and the table.

    PYTHONPATH=. python scripts/blur_overlap_check.py --sample-size 400 --runs 40
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ganeval.data import digits_classes, gaussian_blur, patches
from ganeval.data.images import to_rgb
from ganeval.studies import blur_sweep as bs
from ganeval.protocol import Block, Settings
from ganeval.protocol.api import run_blocks

SIGMAS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)


def pixels(images: np.ndarray) -> np.ndarray:
    """The experiment's features: RGB pixels in [0, 1], flattened."""
    return to_rgb(images).reshape(len(images), -1).astype(np.float32) / 255


def main() -> None:
    """Score the disjoint-halves sweep and print its verdict and normalised table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample-size", type=int, default=400)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    data = to_rgb(digits_classes([0, 1, 2, 3, 4]))
    order = np.random.default_rng(123).permutation(len(data))
    real, other = data[order[: len(data) // 2]], data[order[len(data) // 2:]]
    fakes = [({"role": "blur", "model": "digits_classes", "sigma": s}, pixels(gaussian_blur(other, s))) for s in SIGMAS]
    fakes.append(({"role": "second", "model": "digits_classes_other", "sigma": np.nan},
                   pixels(digits_classes([5, 6, 7, 8, 9]))))
    ref = [({"role": "reference", "model": "patches8", "sigma": np.nan}, pixels(patches(2000, 8, 0)))]
    n = args.sample_size
    settings = Settings(args.runs, n, {"imd": {}, "fid": {}, "kid": {"subset_size": n}}, args.seed, 0.99, "cpu",
                        1, True)
    t0 = time.perf_counter()
    rows = run_blocks([Block(pixels(real), fakes, {"data": "half"}), Block(pixels(real), ref, {"data": "half"})],
                      settings)
    summary = bs.normalized_summary(rows, 0.99, n)
    print(f"{args.runs} runs of {n} vs {n} in {time.perf_counter() - t0:.0f} s")
    print(bs.first_passes(summary, rows, 0.99).to_string(index=False))
    print(bs.table_text(summary, "Blur sweep, disjoint halves", "digits_classes", "digits_classes_other", "patches8"))


if __name__ == "__main__":
    main()
