"""Input checks shared by the metrics: raised before any heavy work, naming the argument and the fix."""

from __future__ import annotations

import numpy as np
import torch

from ganeval.common import ArrayLike


def shape_of(a: ArrayLike, name: str) -> tuple[int, ...]:
    """The shape of an array-like input, or a ValueError if it is not an array or tensor."""
    if not isinstance(a, (np.ndarray, torch.Tensor)):
        raise ValueError(f"{name} must be a numpy array or torch tensor of shape N×D, got {type(a).__name__}")
    return tuple(a.shape)


def check_features(a: ArrayLike, name: str, min_rows: int = 1) -> tuple[int, int]:
    """Check that `a` is a finite, non-empty N×D array with at least `min_rows` rows; return (N, D)."""
    shape = shape_of(a, name)
    if len(shape) != 2:
        raise ValueError(
            f"{name} must be 2-D (N samples × D features), got shape {shape}; "
            "flatten images first, e.g. x.reshape(len(x), -1)"
        )
    n, d = shape
    if n == 0 or d == 0:
        raise ValueError(f"{name} is empty (shape {shape}); pass at least {max(min_rows, 1)} samples with D ≥ 1")
    if a.dtype in (np.bool_, torch.bool) or (isinstance(a, np.ndarray) and a.dtype.kind not in "fiu"):
        raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if n < min_rows:
        raise ValueError(f"{name} has {n} samples but at least {min_rows} are needed; pass more samples")
    if not (a.dtype.is_floating_point if isinstance(a, torch.Tensor) else a.dtype.kind == "f"):
        return n, d  # integers are finite
    with np.errstate(over="ignore", invalid="ignore"):
        if bool(np.isfinite(float(a.sum()))):  # NaN and inf survive a sum: one fast pass clears clean data
            return n, d
    # a NaN/inf entry, or finite values whose sum overflowed: count the rows that are really bad
    finite = torch.isfinite(a).all(dim=1) if isinstance(a, torch.Tensor) else np.isfinite(a).all(axis=1)
    bad = int((~finite).sum())
    if bad:
        raise ValueError(
            f"{name} has {bad} row(s) with NaN or inf values (of {n}); remove or fix them before scoring"
        )
    return n, d


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
