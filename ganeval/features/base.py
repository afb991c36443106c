"""The extractor interface and the name -> extractor registry (image rules: `ganeval.data.images`)."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import torch

from ganeval.data.images import check_image_dtype, image_layout
from ganeval.metrics.registry import FEATURE_SPACES

REGISTRY: dict[str, type["Extractor"]] = {}
E = TypeVar("E", bound=type["Extractor"])


def register(name: str) -> Callable[[E], E]:
    """Class decorator: make an extractor selectable by `name` in `extract` and in configs."""

    def deco(cls: E) -> E:
        cls.name = name
        REGISTRY[name] = cls
        FEATURE_SPACES[name] = cls.fd_name or name  # FID's label on these features (results' tables)
        return cls

    return deco


class Extractor:
    """Maps a batch tensor (on the compute device) to an N×D float32 tensor.

    `identity()` names everything that changes the numbers (the cache key and result metadata use
    it); `images` says whether inputs are images (layout N×H×W, N×H×W×C or N×C×H×W, C in {1, 3},
    uint8 or floats in [0, 1]) or already feature vectors. `outputs` says what its rows are for the
    metrics ("features", or "logits" of a classifier, which the Inception Score takes; None: whatever
    the given arrays are), so a metric is refused on rows it cannot score before any work.
    """

    name: str = "extractor"
    fd_name: str | None = None  # FID's name on these features: FD_<fd_name> (None: the extractor's name; Inception: FID)
    images: bool = True
    cacheable: bool = True
    outputs: str | None = "features"
    legacy_weights_digits: int | None = None  # hex digits of the weights hash older versions kept in the identity

    def identity(self) -> dict[str, Any]:
        """Everything that determines the features besides the input (JSON-serialisable)."""
        return {"name": self.name}

    def legacy_identity(self) -> dict[str, Any] | None:
        """`identity()` as older ganeval versions recorded it (its full "weights" SHA-256 cut to
        `legacy_weights_digits`): the feature-cache keys they wrote. None when no older form differs."""
        ident = self.identity()
        weights, digits = ident.get("weights"), self.legacy_weights_digits
        if digits is None or not isinstance(weights, str) or len(weights) <= digits:
            return None
        return {**ident, "weights": weights[:digits]}

    def check_input(self, shape: tuple[int, ...], dtype: Any) -> None:
        """Raise `ValueError` if a whole input of this shape/dtype cannot be processed."""
        if self.images:
            image_layout(shape)
            check_image_dtype(dtype)
        elif len(shape) < 2:
            raise ValueError(f"features must be N×D (one row per sample), got an array of shape {shape}; if each "
                             "sample really is one number, reshape it to N×1 (a[:, None]) and save it again")

    def setup(self, device: torch.device) -> None:
        """Build whatever the extractor needs on `device` (e.g. load a network); called lazily."""

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def host_stage(self, batch: torch.Tensor) -> torch.Tensor:
        """The CPU part of the work on a raw batch (on the host), done by extraction before the batch goes to
        the device, so that it overlaps the device's work on the previous batch; none by default."""
        return batch

    def device_stage(self, batch: torch.Tensor) -> torch.Tensor:
        """The rest of the work on a `host_stage` output moved to the device: ex(b) ==
        ex.device_stage(ex.host_stage(b.cpu()).to(b.device)); the whole call by default."""
        return self(batch)


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
