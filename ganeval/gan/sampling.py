"""Sampling a generator module: seeded latents and batched forward passes to uint8 images or float points."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Sequence

import numpy as np
import torch
from torch import nn

from ganeval.data.images import to_uint8


def latent(n: int, latent_shape: Sequence[int], seed: int) -> torch.Tensor:
    """z ~ N(0, I) of shape (n, *latent_shape), drawn on CPU from `seed` (the same on every device)."""
    g = torch.Generator(device="cpu").manual_seed(int(seed))
    return torch.randn((int(n), *(int(s) for s in latent_shape)), generator=g)


def generate(
    module: nn.Module,
    z: torch.Tensor,
    *,
    output_range: Sequence[float] | None,
    batch_size: int = 500,
    device: torch.device | str = "cpu",
) -> np.ndarray:
    """Run `module` on `z` in eval mode in batches; uint8 images via `to_uint8`, or float32 points if no range.

    The module's train/eval mode is restored afterwards.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    device = torch.device(device)
    was_training = module.training
    module.eval()
    out: list[np.ndarray] = []
    try:
        with torch.inference_mode():
            for start in range(0, len(z), batch_size):
                x = module(z[start : start + batch_size].to(device, non_blocking=True))
                if output_range is None:
                    out.append(x.float().cpu().numpy())
                else:
                    out.append(to_uint8(x, value_range=(float(output_range[0]), float(output_range[1]))))
    finally:
        module.train(was_training)
    if not out:
        return np.zeros((0,), dtype=np.uint8 if output_range is not None else np.float32)
    return np.concatenate(out)


def generate_batches(
    module: nn.Module,
    z: torch.Tensor,
    *,
    output_range: Sequence[float] | None,
    batch_size: int = 500,
    device: torch.device | str = "cpu",
) -> Iterator[np.ndarray]:
    """`generate`'s output batch by batch (the same rows, in order), so a consumer such as feature extraction never
    holds all N images: only `z` (N × latent) is drawn up front, exactly as `generate` is given it."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    for start in range(0, len(z), batch_size):
        yield generate(module, z[start : start + batch_size], output_range=output_range, batch_size=batch_size,
                       device=device)
