"""The image layout and conversion rules every layer shares (data sources, features, GAN sampling, experiments).

Images are batches in one of three layouts, N×H×W (grey), N×C×H×W or N×H×W×C with C in {1, 3}
(a 4-D shape with C in {1, 3} on axis 1 is read as N×C×H×W first), and are uint8 pixels or floats
in [0, 1]. Everything here works on numpy arrays and torch tensors alike unless its signature says
otherwise, and needs nothing but numpy and torch. Errors are `ValueError`s naming the input (`what`)
and what to do.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import torch

ImageArray = TypeVar("ImageArray", np.ndarray, torch.Tensor)
CONVERT_HINT = "convert with ganeval.data.to_uint8(images, value_range=...)"


def _prefix(what: str | None) -> str:
    """'what: ' to start an error message with the input's name, or nothing."""
    return f"{what}: " if what else ""


def image_layout(shape: tuple[int, ...], what: str | None = None) -> str:
    """'NHW', 'NCHW' or 'NHWC' for an image batch shape; `ValueError` if it is none of them."""
    if len(shape) == 3:
        return "NHW"
    if len(shape) == 4:
        if shape[1] in (1, 3):
            return "NCHW"
        if shape[3] in (1, 3):
            return "NHWC"
    raise ValueError(
        f"{_prefix(what)}images must be N×H×W, N×C×H×W or N×H×W×C with a channel axis of size 1 or 3, "
        f"got shape {tuple(shape)}"
    )


LAYOUTS = ("auto", "nchw", "nhwc")


def apply_layout(a: ImageArray, layout: str | None, what: str, how: str, strict: bool = True) -> ImageArray:
    """`a` read in the stated layout: "nhwc" becomes an N×C×H×W view, "nchw" is kept; "auto" (or None) refuses a 4-D
    shape that fits both (axes 1 and 3 both of size 1 or 3, e.g. 200×3×8×3), where the first rule above would read it
    silently one way. A stated layout must fit (its channel axis of size 1 or 3). `how` tells the user how to say
    which; `strict`: a stated layout for a batch that is not 4-D is refused (else left to the other rules)."""
    chosen = (layout or "auto").lower()
    if chosen not in LAYOUTS:
        raise ValueError(f"{what}: layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    shape = tuple(a.shape)
    if chosen == "auto":
        if len(shape) == 4 and shape[1] in (1, 3) and shape[3] in (1, 3):
            raise ValueError(f"{what} holds images of shape {shape}, which fits both N×C×H×W ({shape[2]}×{shape[3]} "
                             f"images, {shape[1]} channels) and N×H×W×C ({shape[1]}×{shape[2]} images, {shape[3]} "
                             f"channels): say which with {how}")
        return a
    if len(shape) != 4:
        if strict:
            raise ValueError(f"layout={chosen} given but {what} holds a {len(shape)}-D array of shape {shape}; drop it")
        return a
    axis = 3 if chosen == "nhwc" else 1
    if shape[axis] not in (1, 3):
        raise ValueError(f"layout={chosen} given but {what} of shape {shape} has {shape[axis]} on its channel axis "
                         f"(axis {axis}; 1 or 3 expected): it is not {chosen.upper()}; say the layout it has with {how}")
    if chosen == "nhwc":
        return a.permute(0, 3, 1, 2) if isinstance(a, torch.Tensor) else a.transpose(0, 3, 1, 2)
    return a


def describe(shape: tuple[int, ...]) -> str:
    """What one item of a batch of `shape` is, for messages: 'H×W images with C channel(s)' or 'rows of shape ...'."""
    try:
        layout = image_layout(shape)
    except ValueError:
        return f"rows of shape {tuple(shape[1:])}"
    channels = 1 if layout == "NHW" else shape[1] if layout == "NCHW" else shape[3]
    h, w = shape[2:4] if layout == "NCHW" else shape[1:3]
    return f"{h}×{w} images with {channels} channel{'s' if channels > 1 else ''}"


def check_image_dtype(dtype: Any, what: str | None = None) -> None:
    """Images are uint8 or floating point (in [0, 1]); any other numpy or torch dtype is a `ValueError`."""
    if isinstance(dtype, torch.dtype):
        ok = dtype == torch.uint8 or dtype.is_floating_point
    else:
        dt = np.dtype(dtype)
        ok = dt == np.uint8 or np.issubdtype(dt, np.floating)
    if not ok:
        raise ValueError(f"{_prefix(what)}images must be uint8 or floats in [0, 1], got dtype {dtype}; {CONVERT_HINT}")


def check_unit_range(images: np.ndarray | torch.Tensor, what: str | None = None, atol: float = 0.0) -> None:
    """Float images must lie in [0, 1] (within `atol`) and hold no NaN; `ValueError` with their range otherwise."""
    if (images.numel() if isinstance(images, torch.Tensor) else images.size) == 0:
        return
    if isinstance(images, torch.Tensor):
        lo, hi = (float(v) for v in images.aminmax())
    else:
        lo, hi = float(images.min()), float(images.max())
    if lo != lo or hi != hi:  # NaN: min and max propagate it; say so, not "a range of [nan, nan]"
        bad = int(torch.isnan(images).sum()) if isinstance(images, torch.Tensor) else int(np.isnan(images).sum())
        raise ValueError(f"{_prefix(what)}images hold {bad} NaN value(s): remove or fix those samples")
    if not (lo >= -atol and hi <= 1 + atol):  # False for NaN too: min and max propagate it
        raise ValueError(f"{_prefix(what)}float images must lie in [0, 1], got values in {unit_range_text(lo, hi, atol)}; "
                         f"{CONVERT_HINT}")


def unit_range_text(lo: float, hi: float, atol: float = 0.0) -> str:
    """'[lo, hi]' in 4 digits each, or in full where 4 digits would round a value outside [0, 1] (within `atol`) into
    it: 1 + 1 ulp is shown as 1.0000001192092896, not 1."""
    def shown(v: float) -> str:
        short = f"{v:.4g}"
        inside = -atol <= v <= 1 + atol
        return short if inside or not -atol <= float(short) <= 1 + atol else repr(v)

    return f"[{shown(lo)}, {shown(hi)}]"


def to_nchw(images: ImageArray, what: str | None = None) -> ImageArray:
    """A view of an image batch in N×C×H×W layout (N×H×W gets a channel axis, N×H×W×C is permuted)."""
    layout = image_layout(tuple(images.shape), what)
    if layout == "NHW":
        return images[:, None]
    if layout == "NHWC":
        return images.permute(0, 3, 1, 2) if isinstance(images, torch.Tensor) else images.transpose(0, 3, 1, 2)
    return images


def images_to_float(batch: torch.Tensor) -> torch.Tensor:
    """N×C×H×W float32 in [0, 1]: uint8 divided by 255 (as torchvision's ToTensor), floats checked."""
    check_image_dtype(batch.dtype)
    x = to_nchw(batch)
    if x.dtype == torch.uint8:
        return x.float().div_(255)  # in place: a 50k extraction's batches are hundreds of MB as floats
    x = x.float()
    check_unit_range(x)
    return x


def to_uint8(images: Any, value_range: tuple[float, float] = (-1.0, 1.0)) -> np.ndarray:
    """Map float images in `value_range` to uint8 (affine to [0, 255], round half to even, clip).

    Accepts a numpy array or torch tensor of any shape (typically N×C×H×W) and returns a numpy
    uint8 array of the same shape; uint8 input is returned unchanged (as numpy). Values outside
    `value_range` are clipped, NaN is rejected.
    """
    lo, hi = (float(v) for v in value_range)
    if not hi > lo:
        raise ValueError(f"value_range must be (low, high) with high > low, got {value_range!r}")
    if isinstance(images, torch.Tensor):
        t = images.detach()
        if t.dtype == torch.uint8:
            return t.cpu().numpy()
        if not (t.is_floating_point() or t.dtype in (torch.int16, torch.int32, torch.int64)):
            raise ValueError(f"images must be a float or integer tensor, got dtype {t.dtype}")
        t = t.to(torch.float32) if t.dtype != torch.float64 else t
        if torch.isnan(t).any():
            raise ValueError("images contain NaN; check the generator output before converting")
        out = ((t - lo) * (255.0 / (hi - lo))).round_().clamp_(0, 255)
        return out.to(torch.uint8).cpu().numpy()
    a = np.asarray(images)
    if a.dtype == np.uint8:
        return a
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"images must be a float or integer array, got dtype {a.dtype}")
    a = a.astype(np.float32) if a.dtype != np.float64 else a
    if np.isnan(a).any():
        raise ValueError("images contain NaN; check the generator output before converting")
    out = np.clip(np.rint((a - lo) * (255.0 / (hi - lo))), 0, 255)
    return out.astype(np.uint8)


def to_rgb(images: ImageArray) -> ImageArray:
    """Grey N×1×H×W images with the channel repeated 3 times (others unchanged), so unlike sets share a layout.

    A tensor gets an expanded view, a numpy array a copy; inputs that are not N×1×H×W (colour images,
    N×D points) are returned as they are.
    """
    if images.ndim != 4 or images.shape[1] != 1:
        return images
    if isinstance(images, torch.Tensor):
        return images.expand(-1, 3, -1, -1)
    return np.repeat(images, 3, axis=1)


def as_uint8_images(a: np.ndarray, what: str, n: int | None = None) -> np.ndarray:
    """Generator output in any layout (uint8, or floats in [0, 1]) as contiguous uint8 N×C×H×W.

    `n`, when given, is the number of images expected; every error names `what` (the generator).
    """
    if n is not None and (a.ndim < 3 or len(a) != n):
        raise ValueError(
            f"{what}: expected {n} images (N×H×W, N×H×W×C or N×C×H×W), got an array of shape {a.shape}"
        )
    a = to_nchw(a, what)
    check_image_dtype(a.dtype, what)
    if a.dtype == np.uint8:
        return np.ascontiguousarray(a)
    check_unit_range(a, what, atol=1e-6)  # float rounding slack; to_uint8 clips it away
    return to_uint8(a, value_range=(0.0, 1.0))
