"""The extractor interface and the name -> extractor registry (image rules: `ganeval.data.images`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, TypeVar

import torch

from ganeval.data.images import check_image_dtype, image_layout
from ganeval.metrics.registry import FEATURE_SPACES
from ganeval.words import did_you_mean

E = TypeVar("E", bound=type["Extractor"])


@dataclass(frozen=True)
class ExtractorEntry:
    """What the registry declares of one extractor name (the one home of it: `extract`, `ganeval-score`'s
    `--features`/`--resize`/`--dims` and help, the checks of `ganeval/configs/features/NAME.yaml` and the docs table
    read it): its class and preset options (a variant: the class under another name, e.g. `inception_spatial` =
    Inception with output="spatial"), the feature dimension(s) it gives (several: chosen by its `dims` option;
    none: the input's, e.g. pixels give C·H·W), its preprocessing modes (the default first), whether it takes a
    weights file (`weights=`, `download=`), and one line of help.

    Attributes:
        name: The name it is chosen by (`features="name"`, `--features name`).
        cls: The `Extractor` class.
        options: Preset options (a variant's).
        dims: The feature dimension(s) it gives; several: chosen by its `dims` option; none: the input's.
        resize: Its preprocessing modes, the default first.
        weights: Whether it takes a weights file.
        help: One line for `--help` and the docs.

    Examples:
        >>> from ganeval.features.base import extractor_entry
        >>> entry = extractor_entry("inception")
        >>> entry.dims, entry.resize[0], entry.weights
        ((2048, 64, 192, 768), 'legacy_pytorch', True)
    """

    name: str
    cls: type["Extractor"]
    options: Mapping[str, Any] = field(default_factory=dict)
    dims: tuple[int, ...] = ()
    resize: tuple[str, ...] = ()
    weights: bool = False
    help: str = ""

    def make(self, **options: Any) -> "Extractor":
        """An instance with the preset options, then `options`."""
        return self.cls(**{**self.options, **options})


REGISTRY: dict[str, ExtractorEntry] = {}


def register(name: str, *, dims: Sequence[int] = (), resize: Sequence[str] = (), weights: bool = False,
             help: str = "") -> Callable[[E], E]:
    """Class decorator: make an extractor selectable by `name` (in `extract`, configs and `ganeval-score
    --features`), declaring what `ExtractorEntry` holds.

    Args:
        name: The name it will be chosen by.
        dims: The feature dimension(s) it gives (several: chosen by its `dims` option; none: the input's).
        resize: Its preprocessing modes, the default first.
        weights: Whether it takes a weights file (`weights=`, `download=`).
        help: One line for `--help` and the docs.

    Returns:
        The decorator, which registers the class and returns it.

    Examples:
        >>> import torch
        >>> from ganeval.features import Extractor, extract, register
        >>> @register("half_means", help="each image's mean over its left and its right half")
        ... class HalfMeans(Extractor):
        ...     def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        ...         x, w = batch.float(), batch.shape[-1] // 2
        ...         return torch.stack([x[..., :w].mean((1, 2, 3)), x[..., w:].mean((1, 2, 3))], dim=1)
        >>> extract(torch.full((4, 3, 8, 8), 255, dtype=torch.uint8), "half_means", progress=False).shape
        (4, 2)
    """

    def deco(cls: E) -> E:
        cls.name = name
        add_variant(name, cls, dims=dims, resize=resize, weights=weights, help=help)
        FEATURE_SPACES[name] = cls.fd_name or FEATURE_SPACES.get(name, name)  # FID's label on these features
        return cls

    return deco


def add_variant(name: str, cls: type["Extractor"], options: Mapping[str, Any] | None = None, *,
                dims: Sequence[int] = (), resize: Sequence[str] = (), weights: bool = False, help: str = "") -> None:
    """Register a registered class under another name with preset `options` (its identity keeps the class's
    name: the options it records tell the variants apart).

    Args:
        name: The variant's name.
        cls: The registered `Extractor` class.
        options: The options preset for the variant.
        dims: See `register`.
        resize: See `register`.
        weights: See `register`.
        help: See `register`.

    Examples:
        >>> from ganeval.features import InceptionExtractor
        >>> from ganeval.features.base import add_variant, extractor_entry
        >>> add_variant("inception_768", InceptionExtractor, {"dims": 768}, resize=("legacy_pytorch",), weights=True)
        >>> extractor_entry("inception_768").options
        {'dims': 768}
    """
    REGISTRY[name] = ExtractorEntry(name, cls, dict(options or {}), tuple(int(d) for d in dims), tuple(resize),
                                    bool(weights), help)


def extractor_entry(name: str) -> ExtractorEntry:
    """The registry's entry of `name`; ValueError naming the registered ones.

    Args:
        name: A registered extractor's name.

    Returns:
        Its `ExtractorEntry`.

    Raises:
        ValueError: No extractor of that name (naming the closest one and the registered ones).

    Examples:
        >>> from ganeval.features.base import extractor_entry
        >>> extractor_entry("pixel")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: extractor must be one of ..., got 'pixel' (did you mean 'pixels'?)
    """
    if not isinstance(name, str) or name not in REGISTRY:
        raise ValueError(f"extractor must be one of {', '.join(REGISTRY)}, got {name!r}{did_you_mean(name, REGISTRY)}")
    return REGISTRY[name]


class Extractor:
    """Maps a batch tensor (on the compute device) to an N×D float32 tensor.

    `identity()` names everything that changes the numbers (the cache key and result metadata use
    it); `images` says whether inputs are images (layout N×H×W, N×H×W×C or N×C×H×W, C in {1, 3},
    uint8 or floats in [0, 1]) or already feature vectors. `outputs` says what its rows are for the
    metrics ("features", or "logits" of a classifier, which the Inception Score takes; None: whatever
    the given arrays are), so a metric is refused on rows it cannot score before any work.

    Subclass it, implement `__call__` (and `identity()` when options change the numbers) and `register` it.

    Attributes:
        name: Its registered name (set by `register`).
        fd_name: FID's name on its features, FD_<fd_name> (None: as `FEATURE_SPACES` declares it, else the name).
        images: Whether its inputs are images (else feature rows, taken as they are).
        cacheable: Whether its features may be cached in `cache_dir`.
        outputs: What its rows are for the metrics: "features", "logits" (the Inception Score's) or None.

    Examples:
        >>> from ganeval.features import get_extractor
        >>> ex = get_extractor("pixels")
        >>> ex.images, ex.feature_dim((10, 3, 8, 8))
        (True, 192)
    """

    name: str = "extractor"
    fd_name: str | None = None  # FID's name on these features: FD_<fd_name> (None: as FEATURE_SPACES declares it, else
    # the extractor's name); the built-in extractors' are declared in ganeval.metrics.registry.FEATURE_SPACES
    images: bool = True
    cacheable: bool = True
    outputs: str | None = "features"

    def identity(self) -> dict[str, Any]:
        """Everything that determines the features besides the input (JSON-serialisable)."""
        return {"name": self.name}

    def check_input(self, shape: tuple[int, ...], dtype: Any) -> None:
        """Raise `ValueError` if a whole input of this shape/dtype cannot be processed."""
        if self.images:
            image_layout(shape)
            check_image_dtype(dtype)
        elif len(shape) < 2:
            raise ValueError(f"features must be N×D (one row per sample), got an array of shape {shape}; if each "
                             "sample really is one number, reshape it to N×1 (a[:, None]) and save it again")

    def feature_dim(self, shape: tuple[int, ...]) -> int | None:
        """The dimension of the features of an input of `shape`, known before extracting; None (what an extractor
        that declares none gives) when it is known only after: the checks that need it then wait for the features."""
        return None

    def setup(self, device: torch.device) -> None:
        """Build whatever the extractor needs on `device` (e.g. load a network); called lazily."""

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def host_stage(self, batch: torch.Tensor) -> torch.Tensor:
        """The CPU part of the work on a raw batch (on the host), done by extraction before the batch goes to
        the device, so that it overlaps the device's work on the previous batch; none by default."""
        return batch

    def host_work(self) -> bool:
        """Whether `host_stage` does any work (then it may run in the DataLoader workers); by default, whether the
        class overrides it."""
        return type(self).host_stage is not Extractor.host_stage

    def device_stage(self, batch: torch.Tensor) -> torch.Tensor:
        """The rest of the work on a `host_stage` output moved to the device: ex(b) ==
        ex.device_stage(ex.host_stage(b.cpu()).to(b.device)); the whole call by default."""
        return self(batch)


def get_extractor(extractor: str | Extractor, weights: Any = None, **options: Any) -> Extractor:
    """An extractor instance from a registered name (with its options) or the instance itself.

    Args:
        extractor: A registered name (`"inception"`, `"pixels"`, ...) or an `Extractor` instance.
        weights: The weights file of an extractor that takes one (by name only).
        **options: The extractor's options (by name only), e.g. `resize="clean"`, `dims=768`.

    Returns:
        The `Extractor`.

    Raises:
        ValueError: An unknown name, or options for an instance.

    Examples:
        >>> from ganeval.features import get_extractor
        >>> get_extractor("pixels", max_size=16).identity()["max_size"]
        16
    """
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
            + did_you_mean(extractor, REGISTRY)
        )
    entry = REGISTRY[extractor]
    if weights is not None:
        options["weights"] = weights
    try:
        return entry.make(**options)
    except TypeError as e:
        raise ValueError(f"bad options for extractor {extractor!r}: {e}") from e
