"""Feature extraction: FID Inception pool3 (pytorch-fid's network), DINOv2 (timm), CLIP (open_clip), raw
pixels, identity; cached.

`extract(images, "inception", weights=..., cache_dir=...)` turns any image source into N×D float32
features; extractors are registered by name and selectable from `ganeval/configs/features/*.yaml`.
"""

from __future__ import annotations

from ganeval.features.base import REGISTRY, Extractor, get_extractor, register
from ganeval.features.clip import ClipExtractor
from ganeval.features.dinov2 import DinoV2Extractor
from ganeval.features.extraction import extract, extract_with_info
from ganeval.features.inception import (
    InceptionExtractor,
    WeightsNotFoundError,
    check_weights_available,
    resolve_weights,
)
from ganeval.features.simple import IdentityExtractor, PixelsExtractor
from ganeval.features import variants  # noqa: F401  (registers inception_spatial, inception_logits, clip_l14_336)

__all__ = [
    "extract", "extract_with_info", "Extractor", "REGISTRY", "get_extractor", "register",
    "InceptionExtractor", "DinoV2Extractor", "ClipExtractor", "PixelsExtractor", "IdentityExtractor",
    "WeightsNotFoundError", "resolve_weights", "check_weights_available",
]
