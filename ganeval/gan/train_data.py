"""The real data of a training run: checked before any work, resized once, batched in a seeded order.

The data order of epoch e is a permutation drawn from (seed, e) alone (`epoch_order`), so a run resumed from a
checkpoint sees exactly the batches the uninterrupted run would have seen.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, cast

import numpy as np
import torch
import torch.nn.functional as F

from ganeval.gan.architectures import _Generator, get_architecture, resolve_arch_kwargs


def check_inputs(
    x: Any, arch: str, arch_kwargs: Mapping[str, Any] | None, epochs: int, batch_size: int,
    checkpoint_every: int, sample_every: int,
) -> tuple[np.ndarray, dict[str, Any]]:  # fmt: skip
    """Validate everything cheap before any work; returns the data array and the full arch kwargs."""
    spec = get_architecture(arch)
    limits = (("epochs", epochs, 1), ("batch_size", batch_size, 1), ("checkpoint_every", checkpoint_every, 1),
              ("sample_every", sample_every, 0))  # fmt: skip
    for name, v, lo in limits:
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < lo:
            raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    if not isinstance(x, np.ndarray):
        raise ValueError(f"images_or_points must be a numpy array, got {type(x).__name__}")
    kw = dict(arch_kwargs or {})
    points = "out_dim" in spec.defaults
    if points:
        if x.ndim != 2 or not np.issubdtype(x.dtype, np.floating):
            raise ValueError(f"arch={arch!r} trains on float points N×D; got {x.dtype} array of shape {x.shape}")
        if not np.isfinite(x).all():
            raise ValueError("images_or_points contains NaN or inf; clean the points first")
        kw.setdefault("out_dim", int(x.shape[1]))
        if kw["out_dim"] != x.shape[1]:
            raise ValueError(f"arch_kwargs out_dim={kw['out_dim']} but the points have D={x.shape[1]}")
    else:
        if x.ndim != 4 or x.dtype != np.uint8:
            raise ValueError(
                f"arch={arch!r} trains on uint8 images N×C×H×W; got {x.dtype} array of shape {x.shape} "
                "(convert floats with ganeval.data.to_uint8, add a channel axis to N×H×W)"
            )
        kw.setdefault("channels", int(x.shape[1]))
        if kw["channels"] != x.shape[1]:
            raise ValueError(f"arch_kwargs channels={kw['channels']} but the images have C={x.shape[1]}")
    if len(x) < batch_size:
        raise ValueError(f"batch_size={batch_size} is larger than the data ({len(x)} rows); lower batch_size")
    return x, resolve_arch_kwargs(arch, kw)


def trained_sample_shape(x: Any, arch: str, arch_kwargs: Mapping[str, Any] | None = None) -> tuple[int, ...]:
    """One sample's shape of a generator of `arch` trained on `x`, before training: the architecture's output for
    this data's channels (or D), at its own resolution (training resizes the data to it)."""
    _, kw = check_inputs(x, arch, arch_kwargs, 1, 1, 1, 0)
    return tuple(int(d) for d in get_architecture(arch).generator(**kw).output_shape)


def prepare_data(x: np.ndarray, gen: _Generator, dev: torch.device) -> torch.Tensor:
    """Real data as a tensor: images resized to the generator's resolution (still uint8), points float32.

    On CUDA the data lives on the device when it takes under a quarter of the free memory, else
    in pinned host memory (batches are then copied with non_blocking=True).
    """
    if gen.output_range is None:
        t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    else:
        t = resize(torch.from_numpy(np.ascontiguousarray(x)), cast("tuple[int, int]", tuple(gen.output_shape[1:])))
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return t.to(dev) if t.numel() * t.element_size() < free // 4 else t.pin_memory()
    return t


def resize(x: torch.Tensor, size: tuple[int, int], chunk: int = 2048) -> torch.Tensor:
    """Centre-crop uint8 images to a square when the target is square, then resize (bilinear, antialiased)."""
    h, w = x.shape[-2:]
    if (h, w) == size:
        return x
    if size[0] == size[1] and h != w:
        s = min(h, w)
        top, left = (h - s) // 2, (w - s) // 2
        x = x[..., top : top + s, left : left + s]
    out = torch.empty((len(x), x.shape[1], *size), dtype=torch.uint8)
    for i in range(0, len(x), chunk):
        y = F.interpolate(x[i : i + chunk].float(), size=size, mode="bilinear", antialias=True, align_corners=False)
        out[i : i + chunk] = y.round_().clamp_(0, 255).to(torch.uint8)
    return out


def to_float(batch: torch.Tensor, gen: _Generator, dev: torch.device) -> torch.Tensor:
    """A data batch on `dev` as float in the generator's output range (points pass through)."""
    batch = batch.to(dev, non_blocking=True)
    if gen.output_range is None:
        return batch
    lo, hi = gen.output_range
    return batch.float().mul_((hi - lo) / 255.0).add_(lo)


def epoch_order(n: int, seed: int, epoch: int) -> torch.Tensor:
    """The data order of one epoch: a permutation depending only on (seed, epoch)."""
    s = int(np.random.SeedSequence([int(seed), int(epoch)]).generate_state(1)[0])
    return torch.randperm(n, generator=torch.Generator().manual_seed(s))


def seed_everything(seed: int) -> None:
    """Seed torch's, numpy's and Python's global generators (the weights' initialisation draws from torch's)."""
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)
