"""The `features=` argument of ganeval's torchmetrics metrics: how `update(x, real)` turns a batch into N×D float32
feature rows, with every check of `x` and of the rows made before anything is kept.

As torchmetrics takes it: "inception" or an int (64, 192, 768, 2048: FID Inception's block, ganeval's extractor on
uint8 images or floats in [0, 1]) or an `nn.Module` returning N×D; plus ganeval's extractor names ("dinov2", "clip",
"identity" for features given directly, N×D) or an `Extractor` instance.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch
from torch import nn

from ganeval.data.images import check_image_dtype, check_unit_range, image_layout
from ganeval.features.base import REGISTRY, Extractor, get_extractor
from ganeval.features.inception import BLOCK_BY_DIMS, InceptionExtractor, WeightsNotFoundError
from ganeval.features.missing_weights import weights_message

FeatureArg = str | int | nn.Module | Extractor
# `weights_message`'s words for the metrics' constructors: an extractor's options go in `features_options`
WORDS = {"weights": 'features_options={"weights": FILE}', "weights_arg": 'features_options["weights"]',
         "no_download": 'features_options={"download": False}',
         "pixels": 'features="pixels" (or features= an nn.Module of your own)'}
_INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def extractor_of(feature: FeatureArg, options: Mapping[str, Any] | None = None) -> Extractor | nn.Module:
    """The extractor or module that `feature` names (ValueError naming `feature` otherwise); its weights resolved now,
    so a missing file is said at construction, not at the first update."""
    options = dict(options or {})
    if isinstance(feature, bool) or not isinstance(feature, (str, int, nn.Module, Extractor)):
        raise ValueError(f"features must be an extractor name ({', '.join(sorted(REGISTRY))}), an int "
                         f"({', '.join(map(str, BLOCK_BY_DIMS))}: Inception's block), an nn.Module or an Extractor, "
                         f"got {type(feature).__name__}")
    if isinstance(feature, nn.Module):
        if options:
            raise ValueError("features_options apply to an extractor given by name or int; configure the nn.Module "
                             "itself")
        return feature
    try:
        if isinstance(feature, int):
            made: Extractor = InceptionExtractor(dims=feature, **options)
        else:
            made = get_extractor(feature, **options)
    except (TypeError, ValueError) as e:
        raise ValueError(f"features={feature!r}: {e}") from None
    if hasattr(made, "weights_path"):
        try:
            made.weights_path()
        except WeightsNotFoundError as e:  # one line, in the constructor's words, with the way to go on offline
            raise WeightsNotFoundError(weights_message(e, bool(options.get("download", True)), WORDS),
                                       e.what, e.env, e.url) from None
    return made


def _check_batch(x: Any, extractor: Extractor | nn.Module) -> None:
    """Refuse a batch the extractor cannot take (shape, dtype, NaN/inf, empty), naming `x`."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim == 0 or len(x) == 0:
        raise ValueError(f"x is empty or a scalar (shape {tuple(x.shape)}): give a batch of at least one sample")
    if isinstance(extractor, Extractor) and extractor.images:
        image_layout(tuple(x.shape), "x")
        check_image_dtype(x.dtype, "x")
        if x.is_floating_point():
            check_unit_range(x, "x")  # NaN included
        return
    if isinstance(extractor, Extractor):  # features given directly
        if x.ndim != 2:
            raise ValueError(f"x must be N×D features for features='{extractor.name}', got shape {tuple(x.shape)}")
        if x.dtype == torch.bool or x.is_complex() or not (x.is_floating_point() or x.dtype in _INTEGERS):
            raise ValueError(f"x must hold real numbers (floats or integers), got dtype {x.dtype}")
    if x.is_floating_point() and not bool(torch.isfinite(x).all()):
        raise ValueError("x has NaN or inf values: remove or fix those samples before update")


def features_of(x: Any, extractor: Extractor | nn.Module) -> torch.Tensor:
    """`x`'s N×D float32 feature rows (no gradient), or ValueError naming `x` when it or its rows are unfit."""
    _check_batch(x, extractor)
    with torch.no_grad():
        try:
            out = extractor(x)
        except ValueError as e:
            raise ValueError(f"x: {e}") from None
    if not isinstance(out, torch.Tensor) or out.ndim != 2 or len(out) != len(x):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"features gave {shape} for x of {len(x)} samples: it must return one row per sample (N×D)")
    if not (out.is_floating_point() or out.dtype in _INTEGERS):
        raise ValueError(f"features gave dtype {out.dtype} for x: it must return real numbers")
    out = out.detach().float()
    if out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        out = out.clone()  # the rows are kept: a batch buffer the caller refills must not change them
    if not bool(torch.isfinite(out).all()):
        raise ValueError("x gives features with NaN or inf values (the feature network overflowed or x is unfit)")
    return out
