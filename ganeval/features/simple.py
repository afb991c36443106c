"""Extractors without a network: raw pixels (flattened, optionally resized) and identity (features)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ganeval.data.images import images_to_float, to_nchw, to_rgb
from ganeval.features.base import Extractor, register


@register("pixels", help="the images themselves, [0, 1] floats flattened to C·H·W (no network, offline)")
class PixelsExtractor(Extractor):
    """The image itself as a vector: [0, 1] floats, converted to `channels` (3: repeat gray, 1: average RGB),
    resized (bilinear, antialiased) to `size`×`size`, or, with `max_size`, to `max_size`×`max_size` only when a
    side is larger (smaller images kept as they are), then flattened C·H·W. Without either, every pixel of the
    image is a feature: 256² RGB gives 196 608-d rows, more than FID's covariance fits in memory."""

    def __init__(self, size: int | None = None, channels: int | None = None, max_size: int | None = None) -> None:
        for name, value in (("size", size), ("max_size", max_size)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a positive int or None, got {value!r}")
        if size is not None and max_size is not None:
            raise ValueError(f"give size (every image resized) or max_size (larger images resized), not both: "
                             f"size={size}, max_size={max_size}")
        if channels not in (None, 1, 3):
            raise ValueError(f"channels must be None, 1 or 3, got {channels!r}")
        self.size = size
        self.channels = channels
        self.max_size = max_size

    def identity(self) -> dict[str, Any]:
        ident: dict[str, Any] = {"name": "pixels", "size": self.size, "channels": self.channels, "scale": "x/255"}
        if self.max_size is not None:  # without it the identity (and cache keys) stay those of native pixels
            ident["max_size"] = self.max_size
        return ident

    def side(self, height: int, width: int) -> int | None:
        """The side images of `height`×`width` are resized to (None: kept as they are)."""
        if self.size is not None:
            return None if (height, width) == (self.size, self.size) else self.size
        if self.max_size is not None and max(height, width) > self.max_size:
            return self.max_size
        return None

    def feature_dim(self, shape: tuple[int, ...]) -> int:
        """C·H·W of the features of images of `shape` (any image layout), after `channels` and resizing."""
        c, h, w = to_nchw(np.empty((1, *shape[1:]), np.uint8)).shape[1:]
        side = self.side(h, w)
        return (self.channels or c) * (side * side if side is not None else h * w)

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        x = images_to_float(batch)
        if self.channels == 3:
            x = to_rgb(x)
        elif self.channels == 1 and x.shape[1] == 3:
            x = x.mean(dim=1, keepdim=True)
        side = self.side(*x.shape[-2:])
        if side is not None:
            x = F.interpolate(x, size=(side, side), mode="bilinear", align_corners=False, antialias=True)
        return x.reshape(x.shape[0], -1).float()


@register("identity", help="feature arrays (N×D) as they are")
class IdentityExtractor(Extractor):
    """Inputs that already are features (N×D; more axes are flattened), returned as float32."""

    images = False
    cacheable = False
    outputs = None  # the given arrays: features or logits, as the user made them

    def identity(self) -> dict[str, Any]:
        return {"name": "identity"}

    def feature_dim(self, shape: tuple[int, ...]) -> int:
        """D of an N×D array (the product of the axes after the first, which are flattened)."""
        return int(math.prod(shape[1:]))

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
