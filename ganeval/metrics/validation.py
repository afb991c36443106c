"""Input checks shared by the metrics: raised before any heavy work, naming the argument and the fix.

Every public metric function and `suite.prepare_set` load their feature arrays through `load_features`:
one pass proves the values finite and finds their largest magnitude, from which each metric's `reach`
(the largest number it will form) decides the precision: float16, bfloat16 and integer features are
computed in float32, float32 ones in float64 only where float32 could overflow, and values too large
even for float64 are refused with a ValueError. A reach may also say whether the metric keeps its precision
at the other end, values so small that its terms fall below a precision's normal range or vanish beside a
constant (FID's eigenvalues ~ peak⁴, KID's x·y/D beside coef0): float32 input is then computed in float64,
and a scale too small even for float64 is refused the same way. Large scales lose nothing: FID is exactly
scale-covariant (tests/test_scale.py checks it bit for bit against the scaled value and against mpmath).
`finite_result` is the last guard: no metric returns NaN or inf without raising.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, as_tensor, check_plain

FLOAT32_MAX = float(torch.finfo(torch.float32).max)
FLOAT64_MAX = float(torch.finfo(torch.float64).max)
RESCALE = "rescale the features (e.g. divide them by their standard deviation) before scoring"

FLOAT32_TINY = float(torch.finfo(torch.float32).tiny)  # smallest normal numbers
FLOAT64_TINY = float(torch.finfo(torch.float64).tiny)

# (peak, N, D) -> (largest magnitude a metric forms in its working precision, largest it forms in float64)
# or, for metrics that lose precision at small scales, those two and (whether it keeps its precision if the
# working precision is float32, whether it keeps it in float64)
ReachBounds = tuple[float, float] | tuple[float, float, bool, bool]
Reach = Callable[[float, int, int], ReachBounds]


@dataclass(frozen=True)
class FeatureInfo:
    """What the checks learnt of an N×D input: its shape, its largest |value|, and `exact`, the narrower
    of float32 and float64 that holds all its values exactly (float64 for float64 input and for
    integers beyond 2²⁴)."""

    n: int
    d: int
    peak: float
    exact: torch.dtype


def shape_of(a: ArrayLike, name: str) -> tuple[int, ...]:
    """The shape of an array-like input, or a ValueError if it is not an array or tensor."""
    if not isinstance(a, (np.ndarray, torch.Tensor)):
        raise ValueError(f"{name} must be a numpy array or torch tensor of shape N×D, got {type(a).__name__}")
    check_plain(a, name)
    return tuple(a.shape)


def detached(a: ArrayLike) -> ArrayLike:
    """A tensor cut from autograd (a view: metrics are numbers, not graphs), or the numpy array itself."""
    return a.detach() if isinstance(a, torch.Tensor) else a


# numpy dtypes torch can view without a copy
NATIVE = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8))


def extremes(a: ArrayLike) -> tuple[float, float]:
    """(min, max) of a numeric array in one pass (NaN if any entry is NaN): torch's fused reduction, on
    a zero-copy view of numpy arrays where torch can take one."""
    if isinstance(a, np.ndarray) and not (a.flags.c_contiguous and a.flags.writeable and a.dtype in NATIVE):
        return float(a.min()), float(a.max())
    lo, hi = torch.aminmax(torch.from_numpy(a) if isinstance(a, np.ndarray) else a.detach())
    return float(lo), float(hi)


def peak_of(a: ArrayLike, name: str) -> float:
    """The largest |value| of a finite numeric array; ValueError counting the rows with NaN or inf."""
    lo, hi = extremes(a)
    if math.isfinite(lo) and math.isfinite(hi):
        return max(-lo, hi)
    rows = detached(a).reshape(len(a), -1) if a.ndim > 1 else detached(a).reshape(-1, 1)
    finite = torch.isfinite(rows).all(dim=1) if isinstance(rows, torch.Tensor) else np.isfinite(rows).all(axis=1)
    bad = int((~finite).sum())
    raise ValueError(
        f"{name} has {bad} row(s) with NaN or inf values (of {len(rows)}); remove or fix them before scoring"
    )


def inspect_features(a: ArrayLike, name: str, min_rows: int = 1) -> FeatureInfo:
    """Check that `a` is a finite, non-empty N×D real array with at least `min_rows` rows; return what
    the checks learnt (one pass over the values)."""
    shape = shape_of(a, name)
    if len(shape) != 2:
        raise ValueError(
            f"{name} must be 2-D (N samples × D features), got shape {shape}; "
            "flatten images first, e.g. x.reshape(len(x), -1)"
        )
    n, d = shape
    if n == 0 or d == 0:
        raise ValueError(f"{name} is empty (shape {shape}); pass at least {max(min_rows, 1)} samples with D ≥ 1")
    if a.dtype in (np.bool_, torch.bool) or (isinstance(a, np.ndarray) and a.dtype.kind not in "fiu") or (
        isinstance(a, torch.Tensor) and a.is_complex()
    ):
        raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if n < min_rows:
        raise ValueError(f"{name} has {n} samples but at least {min_rows} are needed; pass more samples")
    peak = peak_of(a, name)
    if isinstance(a, torch.Tensor):
        wide = a.dtype == torch.float64 or (not a.is_floating_point() and peak > 2**24)
    else:
        wide = a.dtype.itemsize >= 8 if a.dtype.kind == "f" else peak > 2**24
    return FeatureInfo(n, d, peak, torch.float64 if wide else torch.float32)


def check_features(a: ArrayLike, name: str, min_rows: int = 1) -> tuple[int, int]:
    """Check that `a` is a finite, non-empty N×D array with at least `min_rows` rows; return (N, D)."""
    info = inspect_features(a, name, min_rows)
    return info.n, info.d


def working_dtype(info: FeatureInfo, name: str, reaches: Sequence[tuple[str, Reach]] = (),
                  base: torch.dtype | None = None) -> torch.dtype:
    """The precision the metrics compute this input in: `base` (default: `info.exact`, so float16,
    bfloat16 and integers are computed in float32 and never overflow in their own precision), float64
    where a metric's reach overflows float32, and a ValueError where it would overflow even float64."""
    dtype = base or info.exact
    for what, reach in reaches:
        working, wide, *precise = reach(info.peak, info.n, info.d)
        if not max(working, wide) <= FLOAT64_MAX:
            raise ValueError(
                f"{name} has values up to {info.peak:.3g}: {what} would form numbers beyond float64's range "
                f"(~1.8e308); {RESCALE}"
            )
        if precise and not precise[1]:
            raise ValueError(
                f"{name} has values no larger than {info.peak:.3g}: at so small a scale {what} would lose most of "
                f"its precision even in float64 (its terms underflow or vanish beside a constant); {RESCALE}"
            )
        if not working <= FLOAT32_MAX or (precise and not precise[0]):
            dtype = torch.float64
    return dtype


def load_features(a: ArrayLike, name: str, device: torch.device, min_rows: int = 1,
                  reaches: Sequence[tuple[str, Reach]] = (), pool: FeatureInfo | None = None) -> torch.Tensor:
    """`a` checked (`inspect_features`), detached and on `device` in its working precision (`working_dtype`):
    ordinary float32/float64 input comes back as is (no copy on its own device).

    `pool`: what the checks learnt of a finite pool that `a` is a subsample of. Where its peak already leaves
    every reach in `a`'s exact precision, so does the subsample's (reaches grow with the peak and the row
    count), and the pass over `a` (a device synchronisation) is skipped with the same result; otherwise `a`
    is checked as without it."""
    if pool is not None and len(shape_of(a, name)) == 2 and min_rows <= a.shape[0] <= pool.n and a.shape[1] == pool.d:
        known = FeatureInfo(int(a.shape[0]), int(a.shape[1]), pool.peak, pool.exact)
        try:
            if working_dtype(known, name, reaches) == known.exact and a.dtype in (torch.float32, np.float32):
                return as_tensor(detached(a), device, known.exact)
        except ValueError:
            pass  # the subsample itself may be within range: check it below
    info = inspect_features(a, name, min_rows)
    return as_tensor(detached(a), device, working_dtype(info, name, reaches))


def check_scale(name: str, a: ArrayLike, reaches: Sequence[tuple[str, Reach]] = (), n: int | None = None) -> None:
    """Refuse float features (finite, N×D or more axes) whose magnitude the metrics cannot hold: beyond float32
    (features are passed on as float32) or so large that a metric's numbers overflow float64 (`working_dtype`);
    the message names `name` (a file or config key) and says to rescale. Integer and empty inputs pass."""
    arr = detached(a)
    kind_float = arr.is_floating_point() if isinstance(arr, torch.Tensor) else np.asarray(arr).dtype.kind == "f"
    if not kind_float or arr.ndim < 2 or len(arr) == 0:
        return
    lo, hi = extremes(arr)
    peak = max(-lo, hi)
    if not math.isfinite(peak):
        return  # NaN or inf: the finiteness check names the rows
    if peak > FLOAT32_MAX:
        raise ValueError(f"{name} has values up to {peak:.3g}, beyond float32's range (~3.4e38) that features are "
                         f"computed in; {RESCALE}")
    d = int(np.prod(arr.shape[1:]))
    working_dtype(FeatureInfo(n or len(arr), d, peak, torch.float64), name, reaches)


def power(base: float, exponent: int) -> float:
    """base**exponent for a magnitude bound, inf on overflow (Python's ** raises instead)."""
    try:
        return float(base) ** exponent
    except OverflowError:
        return math.inf


def finite_result(value: ArrayLike, metric: str) -> ArrayLike:
    """`value` (a number, array or tensor) if every entry is finite, else a ValueError: a metric never
    returns NaN or inf, whatever overflowed or went wrong inside it."""
    ok = bool(torch.isfinite(value).all()) if isinstance(value, torch.Tensor) else bool(np.all(np.isfinite(value)))
    if not ok:
        raise ValueError(
            f"{metric} came out non-finite ({value!r:.80}) although its inputs are finite: a numerical overflow or "
            f"breakdown inside it; {RESCALE}, and check them for extreme values"
        )
    return value


def check_same_dim(dx: int, dy: int, metric: str) -> None:
    """FID and KID compare two sets in one feature space: both must have the same D."""
    if dx != dy:
        raise ValueError(
            f"{metric}: x has D={dx} features but y has D={dy}; both sets must come from the same "
            "feature extractor (IMD alone can compare sets of different dimension)"
        )


def check_subset_size(subset_size: int, n: int, name: str) -> None:
    """A subset drawn without replacement cannot be larger than the set it is drawn from."""
    if subset_size < 2:
        raise ValueError(f"subset_size must be at least 2, got {subset_size}")
    if subset_size > n:
        raise ValueError(
            f"subset_size={subset_size} is larger than {name}, which has {n} samples; "
            f"pass subset_size <= {n} or more samples"
        )
