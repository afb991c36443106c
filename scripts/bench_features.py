"""Feature-extraction throughput: end-to-end images/s from a uint8 array vs the bare network forward.

    python scripts/bench_features.py --device cuda --batch-size 256 --n 10000 --random-weights
    python scripts/bench_features.py --extractor dinov2 --device cuda --batch-size 256 --n 10240 --random-weights

Both rates are measured in the same run with the same options (batch size, channels_last, autocast).
The bare forward feeds an already-preprocessed float batch resident on the device to the library's own
network (Inception 3×299×299; `--extractor dinov2`: timm's DINOv2 forward at 3×224×224, ViT-L/14 unless
`--arch`; `--extractor clip`: open_clip's `encode_image`); the end-to-end figure is
`ganeval.features.extract` on a uint8 N×3×S×S numpy array in host memory (transfer, resizing — on the host
with PIL for DINOv2 and CLIP, overlapping the device's forward of the previous batch — forward, copy back),
with a warm extractor (network built once beforehand, as in a pipeline that extracts several sets).
`--cache-dir` adds content hashing and the cache write. Random weights (`--random-weights`) time the same
network as the real ones (saved to a file and loaded through the extractor's own loading path).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bare_forward_rate(ex, device: torch.device, batch_size: int, batches: int, warmup: int, side: int) -> float:
    """Images/s of the library's network alone on a resident, preprocessed batch (same options as `ex`)."""
    ex.setup(device)
    model = ex._model
    forward = model.encode_image if hasattr(model, "encode_image") else model  # open_clip: the image tower
    x = torch.rand(batch_size, 3, side, side, device=device) * 2 - 1
    if getattr(ex, "channels_last", False):
        x = x.contiguous(memory_format=torch.channels_last)
    autocast = getattr(ex, "autocast", None)
    ctx = (torch.autocast(device_type=device.type, dtype=getattr(torch, autocast))
           if autocast else torch.autocast(device_type=device.type, enabled=False))
    with torch.inference_mode(), ctx:
        for _ in range(warmup):
            forward(x)
        _sync(device)
        t0 = time.perf_counter()
        for _ in range(batches):
            forward(x)
        _sync(device)
    return batches * batch_size / (time.perf_counter() - t0)


def make_extractor(a: argparse.Namespace, tmp: str):
    """(extractor, input side of its network, feature width) for the options, random weights written to `tmp`."""
    import ganeval.features as gf
    from ganeval.features import inception as inc

    if a.extractor == "inception":
        weights = inc.save_random_weights(Path(tmp) / "random_inception.pth", seed=a.seed) if a.random_weights else a.weights
        return gf.InceptionExtractor(weights=weights, channels_last=a.channels_last, autocast=a.autocast), 299, 2048
    if a.channels_last or a.autocast:
        raise SystemExit("--channels-last/--autocast are Inception options")
    if a.extractor == "dinov2":
        from ganeval.features import dinov2

        arch = a.arch or "vitl14"
        weights = a.weights
        if a.random_weights:
            weights = Path(tmp) / f"random_dinov2_{arch}.pth"
            torch.save(dinov2.build(arch).state_dict(), weights)
        ex = gf.get_extractor("dinov2", arch=arch, weights=weights)
        ex.setup(torch.device("cpu"))
        return ex, dinov2.SIZE, ex._model.num_features
    from ganeval.features import clip

    arch = a.arch or "ViT-L-14"
    weights = a.weights
    if a.random_weights:
        model, _ = clip.build(arch, "openai")
        weights = Path(tmp) / f"random_clip_{arch}.pt"
        torch.save(model.state_dict(), weights)
    ex = gf.get_extractor("clip", arch=arch, pretrained="openai", weights=weights)
    ex.setup(torch.device("cpu"))
    return ex, ex._model.visual.image_size[0], ex._model.visual.output_dim


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark and print (and return) the rates."""
    import ganeval.features as gf

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n", type=int, default=2048, help="images in the end-to-end set")
    p.add_argument("--size", type=int, default=32, help="side of the uint8 input images (CIFAR: 32)")
    p.add_argument("--forward-batches", type=int, default=10, help="timed batches for the bare forward")
    p.add_argument("--warmup", type=int, default=2, help="untimed warm-up batches")
    p.add_argument("--extractor", choices=["inception", "dinov2", "clip"], default="inception")
    p.add_argument("--arch", default=None, help="dinov2: vits14/vitb14/vitl14/vitg14 (default vitl14); "
                   "clip: an open_clip architecture (default ViT-L-14)")
    p.add_argument("--weights", default=None, help="the extractor's weights file (default: resolved)")
    p.add_argument("--random-weights", action="store_true", help="random-init weights (timing only)")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--autocast", choices=["float16", "bfloat16"], default=None)
    p.add_argument("--num-threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--cache-dir", default=None, help="also hash and write the cache (fresh dir)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="also write the result to this JSON file")
    a = p.parse_args(argv)
    if a.batch_size < 1 or a.n < 1 or a.size < 1:
        p.error("--batch-size, --n and --size must be positive")
    device = torch.device(a.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda but CUDA is not available")
    if a.num_threads:
        torch.set_num_threads(a.num_threads)
    torch.manual_seed(a.seed)

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ex, side, width = make_extractor(a, tmp)
        ex.setup(device)
        build_s = time.perf_counter() - t0
        fwd = bare_forward_rate(ex, device, a.batch_size, a.forward_batches, a.warmup, side)

        images = np.random.default_rng(a.seed).integers(0, 256, (a.n, 3, a.size, a.size), dtype=np.uint8)
        if a.warmup:  # warm-up (allocator, cuDNN autotune)
            gf.extract(images[: a.batch_size * a.warmup], ex, batch_size=a.batch_size, device=device, progress=False)
        _sync(device)
        cache_dir = Path(a.cache_dir) if a.cache_dir else None
        t0 = time.perf_counter()
        feats = gf.extract(images, ex, batch_size=a.batch_size, device=device, progress=False,
                           cache_dir=cache_dir)
        _sync(device)
        e2e_s = time.perf_counter() - t0
        assert feats.shape == (a.n, width)

    result = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "extractor": a.extractor, "arch": getattr(ex, "arch", None),
        "torch_threads": torch.get_num_threads(),
        "batch_size": a.batch_size, "n": a.n, "size": a.size,
        "channels_last": a.channels_last, "autocast": a.autocast, "cache": bool(cache_dir),
        "random_weights": a.random_weights,
        "network_build_s": round(build_s, 3),
        "forward_img_per_s": round(fwd, 1),
        "end_to_end_img_per_s": round(a.n / e2e_s, 1),
        "end_to_end_over_forward": round(a.n / e2e_s / fwd, 3),
    }
    print(f"{a.extractor} {result['arch'] or ''} on {result['device']}, batch {a.batch_size}, {a.n} uint8 images "
          f"{a.size}×{a.size}")
    print(f"  bare forward   : {result['forward_img_per_s']:10.1f} images/s")
    print(f"  end to end     : {result['end_to_end_img_per_s']:10.1f} images/s "
          f"({100 * result['end_to_end_over_forward']:.0f}% of the forward rate)")
    print(json.dumps(result))
    if a.json:
        from ganeval.common import atomic_write_text

        atomic_write_text(a.json, json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
