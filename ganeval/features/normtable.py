"""Mean/std normalisation of uint8 images, exact on any device: `normalise` on the CPU, a 3×256 table elsewhere.

`normalise(x, mean, std)` is torchvision's ToTensor + Normalize (and dgm-eval's DINOv2 input): x/255, minus mean,
over std, in float32. Its value depends on (channel, byte) alone, so `lookup` in a table of all 3×256 values
computed by `normalise` itself on the CPU gives the same bits on a GPU (where x / 255 is a multiplication by 1/255,
another rounding). Extractors send uint8 batches from their DataLoader workers (a quarter of float32's bytes) and
normalise on the device with this.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def normalise(x: torch.Tensor, mean: Sequence[float], std: Sequence[float]) -> torch.Tensor:
    """uint8 N×3×H×W -> float32 (x/255 - mean) / std per channel, in place in one float buffer."""
    x = x.float().div_(255)
    m = torch.tensor(mean, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    s = torch.tensor(std, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    return x.sub_(m).div_(s)


def table(mean: Sequence[float], std: Sequence[float]) -> torch.Tensor:
    """`normalise` of every (channel, byte), 3×256 float32, computed on the CPU."""
    every = torch.arange(256, dtype=torch.uint8).view(1, 1, 1, 256).expand(1, 3, 1, 256)
    return normalise(every, mean, std).reshape(3, 256)


def lookup(x: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """`values[c, x[n, c, h, w]]` for uint8 x N×3×H×W on x's device (int32 indices, one gather)."""
    index = x.to(torch.int32).add_(torch.arange(0, 3 * 256, 256, dtype=torch.int32, device=x.device).view(1, 3, 1, 1))
    return values.to(x.device).reshape(-1).index_select(0, index.reshape(-1)).view(x.shape)


def normalise_on(x: torch.Tensor, mean: Sequence[float], std: Sequence[float], values: torch.Tensor) -> torch.Tensor:
    """`normalise(x)` of the CPU, bit for bit, on x's device: normalise itself on the CPU, else `lookup`."""
    return normalise(x, mean, std) if x.device.type == "cpu" else lookup(x, values)
