"""Streaming image sources: decode rate, our input pipeline, extraction vs the bare forward, and peak memory.

Makes N PNGs of S×S (smooth colour images with noise, made in parallel), zips them (stored), then times:
  decode      bare decoding in a multiprocessing pool of W processes: PIL (open, load, convert to RGB, to numpy),
              and libspng (pyspng.load to numpy), the decoder the pipeline uses for 8-bit grey/RGB PNGs
  pipeline    our input pipeline: ImageSource(folder).batches(..., channels_last=True), as extraction reads it,
              through a DataLoader with W workers (batches in shared memory, transposed later on the device)
  pipeline    the same from the zip
  extract     extract_with_info(ImageSource(...), EXTRACTOR) from the folder and from the zip, no cache
  forward     the bare extractor on one batch resident on the device, repeated (inception, dinov2: random weights)
and prints images/s with the ratios (pipeline / decode, extract / forward), and the peak resident memory of the
whole process tree (PSS of the main process and DataLoader workers, sampled from /proc every --sample-every seconds,
1 by default: one sample of a process's smaps_rollup costs ~8 ms of CPU here, so sampling every 50 ms, as this script
did before, took about half a core of the 2 from the decoders it was timing) during each phase.

  python scripts/bench_sources.py --n 20000 --workers 2 --extractors pixels                # CPU, issue #24
  python scripts/bench_sources.py --n 50000 --workers 15 --device cuda --extractors inception,dinov2 --dinov2-n 5000
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _make_one(args: tuple[str, int, int]) -> int:
    from PIL import Image

    root, i, size = args
    rng = np.random.default_rng(i)
    small = Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)).resize((size, size), Image.BICUBIC)
    a = np.asarray(small, dtype=np.int16) + rng.integers(-6, 7, (size, size, 3))
    Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(path(root, i), compress_level=1)
    return i


def path(root: str | Path, i: int) -> Path:
    return Path(root) / f"{i // 1000:03d}" / f"{i:06d}.png"


def make_images(root: Path, n: int, size: int, procs: int, unique: int) -> None:
    """N PNGs of size×size under root/KKK/ (1000 a folder): `unique` made by `procs` processes, the rest copies of
    them (decoding costs the same; making 50k distinct PNGs would take minutes on a small machine)."""
    for k in range((n + 999) // 1000):
        (root / f"{k:03d}").mkdir(parents=True, exist_ok=True)
    u = min(n, unique)
    with mp.get_context("fork").Pool(procs) as pool:
        for _ in pool.imap_unordered(_make_one, [(str(root), i, size) for i in range(u)], chunksize=16):
            pass
    for i in range(u, n):
        shutil.copyfile(path(root, i % u), path(root, i))


def make_zip(root: Path, dst: Path) -> None:
    from ganeval.data import list_images

    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_STORED) as z:
        for f in list_images(root):
            z.write(f, f.relative_to(root).as_posix())


def _tree_rss() -> int:
    """Proportional resident bytes (PSS: pages shared between the forked workers counted once in all) of this
    process and all its descendants, from /proc."""
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


class PeakRss:
    """Peak resident memory (PSS) of the process tree while the block runs (sampled every `every` seconds)."""

    every = 1.0

    def __enter__(self) -> "PeakRss":
        self.peak = _tree_rss()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, _tree_rss())

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _tree_rss())


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its children that have ended (pool and DataLoader workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(label: str, n: int, fn: Callable[[], Any], results: dict[str, float]) -> Any:
    """Run fn, print its images/s, the CPU time of the process tree per image (the load of a shared machine moves
    wall rates, much less the CPU each image costs) and the tree's peak PSS; keep the best rate and the least CPU of
    repeated labels (results[label], results["cpu " + label])."""
    with PeakRss() as mem:
        c0, t0 = cpu_seconds(), time.perf_counter()
        out = fn()
        dt, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    results[label] = max(results.get(label, 0.0), n / dt)
    results["cpu " + label] = min(results.get("cpu " + label, float("inf")), cpu / n)
    print(f"{label:<34} {n / dt:9.1f} images/s  ({dt:7.2f} s, CPU {1000 * cpu / n:6.2f} ms/img, peak PSS of the "
          f"process tree {mem.peak / 2**30:5.2f} GiB)", flush=True)
    return out


def _decode_file(path: str) -> int:
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        a = np.asarray(im.convert("RGB"))
    return a.shape[0]


def _decode_spng(path: str) -> int:
    from ganeval.data.sources import png

    with open(path, "rb") as f:
        a = png.decode(f.read())
    if a is None:
        raise SystemExit(f"{path} is not an 8-bit grey/RGB PNG (or pyspng is missing)")
    return a.shape[0]


def bare_decode(files: list[str], workers: int, fn: Callable[[str], int] = _decode_file) -> None:
    if workers <= 0:
        for f in files:
            fn(f)
        return
    with mp.get_context("fork").Pool(workers) as pool:
        for _ in pool.imap(fn, files, chunksize=32):
            pass


def subset(root: Path, dst: Path, n: int, zipped: bool) -> list[tuple[str, Path]]:
    """The first n images of root as a folder of hard links (and a stored zip of it): the sources of an extractor
    timed on fewer images than the others."""
    if not dst.is_dir():
        for f in sorted(root.glob("*/*.png"))[:n]:
            (dst / f.parent.name).mkdir(parents=True, exist_ok=True)
            os.link(f, dst / f.parent.name / f.name)
    out = [("folder", dst)]
    if zipped:
        zpath = dst.with_suffix(".zip")
        if not zpath.is_file():
            make_zip(dst, zpath)
        out.append(("zip", zpath))
    return out


def drain(it: Any) -> int:
    n = 0
    for b in it:
        n += len(b)
    return n


def extractor(name: str, tmp: Path, dinov2_arch: str) -> Any:
    """pixels (resized to 32×32 so 50k rows fit in memory), or inception / dinov2 with random weights loaded through
    the real loading path."""
    import torch

    from ganeval.features import DinoV2Extractor, InceptionExtractor, PixelsExtractor

    if name == "pixels":
        return PixelsExtractor(size=32)
    if name == "inception":
        from ganeval.features.inception import save_random_weights

        return InceptionExtractor(weights=save_random_weights(tmp / "inception_random.pth"), download=False)
    if name == "dinov2":
        import timm

        from ganeval.features.dinov2 import timm_name

        torch.manual_seed(0)
        model = timm.create_model(timm_name(dinov2_arch), img_size=224, num_classes=0)
        path = tmp / f"dinov2_{dinov2_arch}_random.pth"
        torch.save(model.state_dict(), path)
        return DinoV2Extractor(arch=dinov2_arch, weights=path, download=False)
    raise SystemExit(f"--extractors: unknown {name!r} (pixels, inception, dinov2)")


def bare_forward(ex: Any, device: Any, size: int, batch_size: int) -> Callable[[int], None]:
    """The extractor's host stage once on a random batch, moved to the device and warmed up; returns run(n): its
    device stage on that resident batch, repeated to n images (synchronised)."""
    import torch

    x = torch.from_numpy(np.random.default_rng(0).integers(0, 256, (batch_size, 3, size, size), dtype=np.uint8))
    ex.setup(device)
    resident = ex.host_stage(x).to(device)

    def run(n: int) -> None:
        with torch.inference_mode():
            for _ in range(0, n, batch_size):
                ex.device_stage(resident)
            if device.type == "cuda":
                torch.cuda.synchronize(device)

    run(2 * batch_size)  # warm-up (cuDNN autotuning, lazy init)
    return run


def print_ratios(results: dict[str, float], kinds: list[str], extractors: list[str], w: int) -> None:
    """The ratios the targets are stated in: pipeline / bare decode (rate and CPU per image), extract / forward."""
    print("\nratios:")
    pil = results.get(f"decode, bare PIL, pool of {w}")
    spng = results.get(f"decode, bare libspng, pool of {w}")
    dec, which = (spng, "libspng") if spng else (pil, "PIL")  # the decoder the pipeline uses for these PNGs
    for kind in kinds:
        pipe = results.get(f"pipeline {kind}, {w} workers")
        if dec and pipe:
            print(f"  pipeline {kind} / bare decode ({which}, the pipeline's decoder): {pipe / dec:6.1%}")
            cd, cp = results[f"cpu decode, bare {which}, pool of {w}"], results[f"cpu pipeline {kind}, {w} workers"]
            print(f"  CPU per image, bare decode ({which}) / pipeline {kind}: {cd / cp:6.1%} (the rate ratio an idle "
                  "machine whose cores all decode would give)")
            if pil and which != "PIL":
                print(f"  pipeline {kind} / bare PIL decode: {pipe / pil:6.1%}")
        for name in extractors:
            fw, xt = results.get(f"forward {name}, resident batch"), results.get(f"extract {name} from {kind}")
            if fw and xt:
                print(f"  extract {name} from {kind} / bare forward: {xt / fw:6.1%}")
            if dec and xt and name == "pixels":
                print(f"  extract {name} from {kind} / bare decode ({which}): {xt / dec:6.1%}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=50000, help="images to make and read (default 50000)")
    p.add_argument("--size", type=int, default=256, help="image side (default 256)")
    p.add_argument("--workers", type=int, default=2, help="decoding processes (bare pool and DataLoader workers)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--extractors", default="pixels", help="comma-separated: pixels, inception, dinov2 (default pixels)")
    p.add_argument("--dinov2-arch", default="vitl14", help="DINOv2 size for --extractors dinov2 (default vitl14)")
    p.add_argument("--batch-size", type=int, default=250)
    p.add_argument("--repeat", type=int, default=1, help="decode and pipeline rounds, alternating; best kept")
    p.add_argument("--unique", type=int, default=2000, help="distinct images made; the rest are copies (default 2000)")
    p.add_argument("--forward-n", type=int, default=5000, help="images of the bare forward timing (default 5000)")
    p.add_argument("--dinov2-n", type=int, default=None, help="extract DINOv2 from the first N images only (it is "
                   "~20× slower than Inception; default: all)")
    p.add_argument("--dir", default=None, help="work folder (default: a temporary folder, removed at the end)")
    p.add_argument("--keep", action="store_true", help="keep the images (with --dir: reused when present)")
    p.add_argument("--no-zip", action="store_true", help="skip the zip (folder only)")
    p.add_argument("--phases", default="decode,pipeline,extract,forward", help="which phases to run")
    p.add_argument("--sample-every", type=float, default=1.0, help="seconds between memory samples (default 1)")
    args = p.parse_args()
    PeakRss.every = args.sample_every

    import torch

    from ganeval.data.sources import ImageSource, png
    from ganeval.features import extract_with_info

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"CPU: {cpu}; {len(os.sched_getaffinity(0))} cores usable; torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}; device {args.device}"
          + (f" ({torch.cuda.get_device_name()})" if args.device == "cuda" else ""), flush=True)
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench_sources_"))
    root, zpath = work / "images", work / "images.zip"
    results: dict[str, float] = {}
    phases = set(args.phases.split(","))
    try:
        if not (root.is_dir() and len(list(root.glob("*/*.png"))) == args.n):
            shutil.rmtree(root, ignore_errors=True)
            timed(f"make {args.n} PNGs ({os.cpu_count()} procs)", args.n,
                  lambda: make_images(root, args.n, args.size, os.cpu_count() or 1, args.unique), results)
        if not args.no_zip and not zpath.is_file():
            timed("zip them (stored)", args.n, lambda: make_zip(root, zpath), results)
        mb = sum(f.stat().st_size for f in root.glob("*/*.png")) / 2**20
        print(f"{args.n} PNGs of {args.size}×{args.size}: {mb:.0f} MiB ({mb * 1024 / args.n:.0f} KiB each)", flush=True)
        files = [str(f) for f in sorted(root.glob("*/*.png"))]
        sources = [("folder", root)] + ([] if args.no_zip else [("zip", zpath)])
        w = args.workers
        for _ in range(args.repeat):  # alternating, best of each: a shared machine's load moves between runs
            if "decode" in phases:
                timed(f"decode, bare PIL, pool of {w}", args.n, lambda: bare_decode(files, w), results)
                if png.available():
                    timed(f"decode, bare libspng, pool of {w}", args.n, lambda: bare_decode(files, w, _decode_spng),
                          results)
            if "pipeline" in phases:
                for kind, path in sources:
                    src = timed(f"headers+checks {kind}", args.n, lambda path=path: ImageSource(path), results)
                    timed(f"pipeline {kind}, {w} workers", args.n,
                          lambda src=src: drain(src.batches(args.batch_size, w, pin_memory=args.device == "cuda",
                                                            channels_last=True)), results)
        device = torch.device(args.device)
        for name in args.extractors.split(","):
            ex = extractor(name, work, args.dinov2_arch)
            if "forward" in phases:
                fn = -(-min(args.forward_n, args.n) // args.batch_size) * args.batch_size
                run = bare_forward(ex, device, args.size, args.batch_size)
                timed(f"forward {name}, resident batch", fn, lambda run=run, fn=fn: run(fn), results)
            if "extract" in phases:
                mine, count = sources, args.n
                if name == "dinov2" and args.dinov2_n and args.dinov2_n < args.n:
                    mine, count = subset(root, work / f"first{args.dinov2_n}", args.dinov2_n, not args.no_zip), args.dinov2_n
                for kind, path in mine:
                    src = ImageSource(path)
                    timed(f"extract {name} from {kind}", count,
                          lambda src=src, ex=ex: extract_with_info(src, ex, batch_size=args.batch_size, device=device,
                                                                   num_workers=w, progress=False), results)
        print_ratios(results, [kind for kind, _ in sources], args.extractors.split(","), w)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
