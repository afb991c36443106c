"""The extractor interface, the name -> extractor registry, and the image layout/dtype rules."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import numpy as np
import torch

REGISTRY: dict[str, type["Extractor"]] = {}
E = TypeVar("E", bound=type["Extractor"])


def register(name: str) -> Callable[[E], E]:
    """Class decorator: make an extractor selectable by `name` in `extract` and in configs."""

    def deco(cls: E) -> E:
        cls.name = name
        REGISTRY[name] = cls
        return cls

    return deco


class Extractor:
    """Maps a batch tensor (on the compute device) to an N×D float32 tensor.

    `identity()` names everything that changes the numbers (the cache key and result metadata use
    it); `images` says whether inputs are images (layout N×H×W, N×H×W×C or N×C×H×W, C in {1, 3},
    uint8 or floats in [0, 1]) or already feature vectors.
    """

    name: str = "extractor"
    images: bool = True
    cacheable: bool = True

    def identity(self) -> dict[str, Any]:
        """Everything that determines the features besides the input (JSON-serialisable)."""
        return {"name": self.name}

    def check_input(self, shape: tuple[int, ...], dtype: Any) -> None:
        """Raise `ValueError` if a whole input of this shape/dtype cannot be processed."""
        if self.images:
            image_layout(shape)
            check_image_dtype(dtype)
        elif len(shape) < 1:
            raise ValueError(f"features must have a leading sample axis, got shape {shape}")

    def setup(self, device: torch.device) -> None:
        """Build whatever the extractor needs on `device` (e.g. load a network); called lazily."""

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError


def image_layout(shape: tuple[int, ...]) -> str:
    """'NHW', 'NCHW' or 'NHWC' for an image batch shape; `ValueError` if it is none of them."""
    if len(shape) == 3:
        return "NHW"
    if len(shape) == 4:
        if shape[1] in (1, 3):
            return "NCHW"
        if shape[3] in (1, 3):
            return "NHWC"
    raise ValueError(
        f"images must be N×H×W, N×C×H×W or N×H×W×C with C in {{1, 3}}, got shape {tuple(shape)}"
    )


def check_image_dtype(dtype: Any) -> None:
    """Images are uint8 or floating point (in [0, 1]); anything else is a `ValueError`."""
    if isinstance(dtype, torch.dtype):
        ok = dtype == torch.uint8 or dtype.is_floating_point
    else:
        dt = np.dtype(dtype)
        ok = dt == np.uint8 or np.issubdtype(dt, np.floating)
    if not ok:
        raise ValueError(
            f"images must be uint8 or floats in [0, 1], got dtype {dtype}; "
            "convert with ganeval.data.to_uint8(images, value_range=...)"
        )


def to_nchw(batch: torch.Tensor) -> torch.Tensor:
    """A view of an image batch in N×C×H×W layout."""
    layout = image_layout(tuple(batch.shape))
    if layout == "NHW":
        return batch.unsqueeze(1)
    if layout == "NHWC":
        return batch.permute(0, 3, 1, 2)
    return batch


def images_to_float(batch: torch.Tensor) -> torch.Tensor:
    """N×C×H×W float32 in [0, 1]: uint8 divided by 255 (as torchvision's ToTensor), floats checked."""
    check_image_dtype(batch.dtype)
    x = to_nchw(batch)
    if x.dtype == torch.uint8:
        return x.float().div(255)
    x = x.float()
    if x.numel() and (bool(x.min() < 0) or bool(x.max() > 1) or bool(torch.isnan(x).any())):
        raise ValueError(
            "float images must lie in [0, 1]; convert with ganeval.data.to_uint8(images, value_range=...)"
        )
    return x


def get_extractor(extractor: str | Extractor, weights: Any = None, **options: Any) -> Extractor:
    """An extractor instance from a registered name (with its options) or the instance itself."""
    if isinstance(extractor, Extractor):
        if weights is not None or options:
            raise ValueError(
                "weights/options apply only when the extractor is given by name; "
                "set them on the extractor instance instead"
            )
        return extractor
    if not isinstance(extractor, str) or extractor not in REGISTRY:
        raise ValueError(
            f"extractor must be one of {sorted(REGISTRY)} or an Extractor instance, got {extractor!r}"
        )
    cls = REGISTRY[extractor]
    if weights is not None:
        options["weights"] = weights
    try:
        return cls(**options)
    except TypeError as e:
        raise ValueError(f"bad options for extractor {extractor!r}: {e}") from e
