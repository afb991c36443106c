"""Training throughput: critic iterations per second of one architecture/trainer, and the time of one paper epoch.

Runs `ganeval.gan.train` on random uint8 images of the architecture's size (speed does not depend on
the pixels) for `--iters` critic iterations after `--warmup` untimed ones, timing with CUDA
synchronisation, and converts the rate into the time one epoch of the paper's dataset takes
(an epoch = one critic pass over the data, batch 64, last partial batch dropped).

    python scripts/bench_training.py --device cuda --arch cifar10 --gan wgan_gp
    python scripts/bench_training.py --device cpu --arch digits --gan wgan_gp_quick --iters 50
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np
import torch

from ganeval.gan import build_generator, gan_config, train

DATASET_SIZES = {"mnist": 60000, "fashion_mnist": 60000, "cifar10": 50000, "celeba": 202599, "digits": 1797}
ARCH_DATA = {"mnist_wgan": "mnist", "mnist28": "mnist", "cifar10": "cifar10", "celeba": "celeba", "digits": "digits"}


def bench(arch: str, gan: str, device: str, iters: int, warmup: int, batch_size: int, seed: int = 0) -> dict:
    """Time `iters` critic iterations (after `warmup`) of a fresh training; returns the rates."""
    dev = torch.device(device)
    shape = build_generator(arch).output_shape
    if len(shape) != 3:
        raise ValueError(f"--arch {arch!r} is not an image architecture")
    total = warmup + iters
    x = np.random.default_rng(seed).integers(0, 256, (total * batch_size, *shape), dtype=np.uint8)
    marks: dict[int, float] = {}

    def callback(state: dict[str, int]) -> None:
        if state["critic_step"] in (warmup, total):
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            marks[state["critic_step"]] = time.perf_counter()

    with tempfile.TemporaryDirectory() as out:
        train(x, arch=arch, gan=gan, out_dir=out, epochs=1, batch_size=batch_size, seed=seed, device=dev,
              checkpoint_every=10**9, sample_every=0, progress=False, callback=callback)  # fmt: skip
    seconds = marks[total] - marks[warmup]
    rate = iters / seconds
    n_critic = gan_config(gan).n_critic
    data = ARCH_DATA.get(arch, "cifar10")
    per_epoch = DATASET_SIZES[data] // 64
    return {
        "arch": arch,
        "gan": gan,
        "device": str(dev) if dev.type == "cpu" else torch.cuda.get_device_name(dev),
        "batch_size": batch_size,
        "timed_critic_iterations": iters,
        "critic_iterations_per_s": round(rate, 2),
        "generator_steps_per_s": round(rate / n_critic, 2),
        "paper_epoch": {"dataset": data, "critic_iterations": per_epoch, "seconds": round(per_epoch / rate, 1)},
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--arch", default="cifar10")
    ap.add_argument("--gan", default="wgan_gp")
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--cudnn-benchmark", action="store_true", help="let cuDNN pick the fastest kernels")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    result = bench(args.arch, args.gan, args.device, args.iters, args.warmup, args.batch_size)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
