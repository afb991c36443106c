"""A first (cold) cached extraction of a streamed folder: one decoding pass (content hashed on the extraction pass,
in a background thread or in the main thread) against two (a hashing pass first, then the extraction: what
`ganeval.features.streaming` did before, and still does for a resumed, torchrun or DINOv2/CLIP-with-workers run).

Each round runs every mode once, in turn, on a fresh cache folder; the best time of each is kept; prints seconds,
images/s and the ratio to the two-pass form. Make the images with `scripts/bench_sources.py --keep`:

  python scripts/bench_sources.py --n 3000 --phases decode --dir /tmp/onepass_imgs --keep --no-zip
  python scripts/bench_cold_extraction.py /tmp/onepass_imgs/images --workers 2 --repeat 3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MODES = ("two-pass", "one-pass, hash thread", "one-pass, main thread")


def cold(folder: str, mode: str, workers: int, batch_size: int, extractor: str, **options: int) -> float:
    """Seconds of one cold cached extraction of `folder` in `mode` (a fresh cache folder, removed after)."""
    from ganeval.data.sources import ImageSource
    from ganeval.features import extract_with_info, streaming

    cache = Path(tempfile.mkdtemp(prefix="ganeval-cold-"))
    try:
        streaming.THREADED_HASH = mode != "one-pass, main thread"
        t0 = time.perf_counter()
        src = ImageSource(folder)
        if mode == "two-pass":  # the content hashed (and remembered) first: the extraction then finds it known
            src.content(batch_size=batch_size, num_workers=workers, cache_dir=cache)
        _, info = extract_with_info(src, extractor, batch_size=batch_size, cache_dir=cache, num_workers=workers,
                                    progress=False, device="cpu", **options)
        dt = time.perf_counter() - t0
        assert not info["cache_hit"] and Path(info["cache_file"]).is_file()
        return dt
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=250)
    p.add_argument("--extractor", default="pixels")
    p.add_argument("--pixels-size", type=int, default=16, help="pixels features resized to this side (default 16: "
                   "a 256² image's full pixels, 196608 floats each, would time the writing of the features)")
    p.add_argument("--repeat", type=int, default=3, help="rounds (every mode once per round); best kept")
    a = p.parse_args()
    from ganeval.data.sources import ImageSource

    n = len(ImageSource(a.folder))
    best = {m: float("inf") for m in MODES}
    for r in range(a.repeat):
        for m in MODES:
            t = cold(a.folder, m, a.workers, a.batch_size, a.extractor,
                     **({"size": a.pixels_size} if a.extractor == "pixels" else {}))
            best[m] = min(best[m], t)
            print(f"round {r + 1}: {m:24s} {t:7.2f} s", flush=True)
    print(f"\n{n} images, {a.extractor} (size {a.pixels_size}), {a.workers} workers, batch {a.batch_size}; best of {a.repeat}:")
    for m in MODES:
        print(f"  {m:24s} {best[m]:7.2f} s  {n / best[m]:7.1f} images/s  ({best['two-pass'] / best[m]:.2f}x the two-pass)")


if __name__ == "__main__":
    main()
