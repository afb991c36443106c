"""Extractors without a network: raw pixels (flattened, optionally resized) and identity (features)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ganeval.data.images import images_to_float, to_nchw, to_rgb
from ganeval.features.base import Extractor, register


@register("pixels", help="the images themselves, [0, 1] floats flattened to C·H·W (no network, offline)")
class PixelsExtractor(Extractor):
    """The image itself as a vector: [0, 1] floats, optionally resized to `size`×`size` (bilinear,
    antialiased) and converted to `channels` (3: repeat gray, 1: average RGB), flattened C·H·W."""

    fd_name = "pixels"

    def __init__(self, size: int | None = None, channels: int | None = None) -> None:
        if size is not None and (not isinstance(size, int) or size < 1):
            raise ValueError(f"size must be a positive int or None, got {size!r}")
        if channels not in (None, 1, 3):
            raise ValueError(f"channels must be None, 1 or 3, got {channels!r}")
        self.size = size
        self.channels = channels

    def feature_dim(self, shape: tuple[int, ...]) -> int:
        """C·H·W of images of `shape` after its `size` and `channels`."""
        c, h, w = to_nchw(np.empty((1, *shape[1:]), np.uint8)).shape[1:]
        return int((self.channels or c) * (self.size or h) * (self.size or w))

    def identity(self) -> dict[str, Any]:
        return {"name": "pixels", "size": self.size, "channels": self.channels, "scale": "x/255"}

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        x = images_to_float(batch)
        if self.channels == 3:
            x = to_rgb(x)
        elif self.channels == 1 and x.shape[1] == 3:
            x = x.mean(dim=1, keepdim=True)
        if self.size is not None and tuple(x.shape[-2:]) != (self.size, self.size):
            x = F.interpolate(
                x, size=(self.size, self.size), mode="bilinear", align_corners=False, antialias=True
            )
        return x.reshape(x.shape[0], -1).float()


@register("identity", help="feature arrays (N×D) as they are")
class IdentityExtractor(Extractor):
    """Inputs that already are features (N×D; more axes are flattened), returned as float32."""

    fd_name = "features"

    images = False
    cacheable = False
    outputs = None  # the given arrays: features or logits, as the user made them

    def identity(self) -> dict[str, Any]:
        return {"name": "identity"}

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        if not (batch.dtype.is_floating_point or batch.dtype in (torch.uint8, torch.int8, torch.int16,
                                                                  torch.int32, torch.int64)):
            raise ValueError(f"features must be numeric, got dtype {batch.dtype}")
        out = batch.reshape(batch.shape[0], -1).float()
        if batch.dtype == torch.float64 and batch.numel() and not torch.isfinite(out).all() \
                and torch.isfinite(batch).all():
            raise ValueError(f"features have values up to {float(batch.abs().max()):.3g}, beyond float32's range "
                             "(~3.4e38) that features are computed in; rescale them (e.g. divide by their standard "
                             "deviation) before scoring")
        return out
