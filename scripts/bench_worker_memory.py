"""Peak memory (PSS) of DINOv2 extraction from a folder with DataLoader workers: the main process and each worker.

Makes N PNGs of S×S (scripts/bench_sources.py's images), saves a random-weight DINOv2 and loads it through the
real loading path (`DinoV2Extractor(weights=FILE)`), then runs `extract_with_info(ImageSource(folder), ...)` with W
workers while a thread samples `/proc/<pid>/smaps_rollup` of this process and of every descendant every 20 ms. It
prints the peak of the summed PSS (pages shared between processes counted once in all), the main process's peak,
and each worker's peak PSS and Private_Dirty (what the worker itself allocated), with the CPU model.

With --consumer-delay SECONDS the forward is left out: the model is built in the main process as extraction builds
it, then the batches of the same DataLoader path (workers decoding and running the host stage) are taken one every
SECONDS, as from a device slower than decoding (DINOv2 ViT-L on a GPU: 275 img/s against 3 265 img/s of decoding on
16 cores), so every worker fills its prefetch queue: the workers' side at a larger scale in seconds.

  python scripts/bench_worker_memory.py --n 256 --workers 2 --batch-size 64 --arch vits14
  python scripts/bench_worker_memory.py --n 1024 --workers 4 --batch-size 128 --arch vits14 --consumer-delay 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

FIELDS = ("Pss:", "Private_Dirty:", "Pss_Shmem:")


def rollup(pid: int) -> dict[str, int]:
    """PSS, Private_Dirty and PSS of shared memory of one process in bytes ({} once it is gone)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key = line.split()[0] if line.strip() else ""
                if key in FIELDS:
                    out[key[:-1]] = int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return {}
    return out


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (from /proc/<pid>/task/*/children)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(c) for c in f.read().split()]
                found += kids
                todo += kids
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


class Sampler:
    """Peak summed PSS of the tree, and per process the peaks of its PSS and Private_Dirty, every 20 ms."""

    def __init__(self) -> None:
        self.total = 0
        self.per: dict[int, dict[str, int]] = {}
        self._stop = threading.Event()

    def sample(self) -> None:
        me = os.getpid()
        total = 0
        for pid in [me, *descendants(me)]:
            r = rollup(pid)
            if not r:
                continue
            total += r.get("Pss", 0)
            peak = self.per.setdefault(pid, {})
            for k, v in r.items():
                peak[k] = max(peak.get(k, 0), v)
        self.total = max(self.total, total)

    def __enter__(self) -> "Sampler":
        self.sample()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.sample()

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._t.join()
        self.sample()


def dinov2(tmp: Path, arch: str) -> Any:
    """A random-weight DINOv2 saved to a file and loaded as users load theirs (weights=FILE, no download)."""
    import timm
    import torch

    from ganeval.features import DinoV2Extractor
    from ganeval.features.dinov2 import timm_name

    torch.manual_seed(0)
    model = timm.create_model(timm_name(arch), img_size=224, num_classes=0)
    path = tmp / f"dinov2_{arch}_random.pth"
    torch.save(model.state_dict(), path)
    del model
    return DinoV2Extractor(arch=arch, weights=path, download=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=768)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--workers", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--arch", default="vits14")
    p.add_argument("--dir", default=None, help="work folder (images reused when present)")
    p.add_argument("--consumer-delay", type=float, default=None, help="seconds per batch instead of the forward")
    args = p.parse_args()

    import torch

    from bench_sources import make_images
    from ganeval.data.sources import ImageSource
    from ganeval.features import extract_with_info

    gib = 2**30
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"CPU: {cpu}; {len(os.sched_getaffinity(0))} cores; torch {torch.__version__}, threads "
          f"{torch.get_num_threads()}; load average {os.getloadavg()[0]:.2f}; code {Path(__file__).resolve().parents[1]}")
    work = Path(args.dir or tempfile.mkdtemp(prefix="bench_worker_memory_"))
    root = work / "images"
    if not (root.is_dir() and len(list(root.glob("*/*.png"))) == args.n):
        make_images(root, args.n, args.size, os.cpu_count() or 1, args.n)
    ex = dinov2(work, args.arch)
    src = ImageSource(root)
    with Sampler() as before:
        pass
    with Sampler() as mem:
        t0 = time.perf_counter()
        if args.consumer_delay is None:
            feats, _ = extract_with_info(src, ex, batch_size=args.batch_size, device="cpu", num_workers=args.workers,
                                         progress=False)
            what = f"{feats.shape} features"
        else:
            ex.setup(torch.device("cpu"))  # built before the workers fork, as extraction does
            rows = 0
            for b in src.batches(args.batch_size, args.workers, transform=ex.host_stage):
                rows += len(b)
                time.sleep(args.consumer_delay)
            what = f"{rows} host-stage rows {tuple(b.shape[1:])} {b.dtype} (no forward: one batch every " \
                   f"{args.consumer_delay} s)"
        dt = time.perf_counter() - t0
    me = os.getpid()
    workers = {pid: r for pid, r in mem.per.items() if pid != me}
    print(f"DINOv2 {args.arch} (random weights, loaded from file), {args.n} PNGs {args.size}², batch "
          f"{args.batch_size}, {args.workers} workers: {what} in {dt:.1f} s ({args.n / dt:.1f} img/s)")
    print(f"  before extraction: PSS {before.total / gib:.2f} GiB")
    print(f"  peak summed PSS of the tree: {mem.total / gib:.2f} GiB; main process peak PSS "
          f"{mem.per[me]['Pss'] / gib:.2f} GiB")
    print(f"  workers: sum of their peak PSS {sum(r.get('Pss', 0) for r in workers.values()) / gib:.2f} GiB, of their "
          f"peak Private_Dirty {sum(r.get('Private_Dirty', 0) for r in workers.values()) / gib:.2f} GiB")
    for pid, r in sorted(workers.items()):
        print(f"  worker {pid}: peak PSS {r.get('Pss', 0) / gib:.3f} GiB, Private_Dirty "
              f"{r.get('Private_Dirty', 0) / gib:.3f} GiB, PSS of shared memory {r.get('Pss_Shmem', 0) / gib:.3f} GiB")


if __name__ == "__main__":
    main()
