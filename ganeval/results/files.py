"""Result files written atomically: CSV frames and JSON documents."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ganeval.common import atomic_write_text


def json_safe(obj: Any) -> Any:
    """`obj` with every NaN or ±inf float (numpy's too) replaced by None, so the JSON written is valid (RFC 8259
    has no NaN or Infinity; Python would write them bare)."""
    if isinstance(obj, Mapping):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def json_dumps(obj: Any, **kwargs: Any) -> str:
    """`json.dumps` of `json_safe(obj)` that cannot emit NaN or Infinity (non-JSON values as strings)."""
    return json.dumps(json_safe(obj), allow_nan=False, default=str, **kwargs)


def json_text(obj: Mapping[str, Any]) -> str:
    """A JSON document as ganeval writes it: indented, sorted keys, non-JSON values as strings, null for non-finite
    numbers, final newline."""
    return json_dumps(obj, indent=2, sort_keys=True) + "\n"


def write_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a DataFrame as CSV atomically (full float precision)."""
    atomic_write_text(path, df.to_csv(index=False))
    return Path(path)


def write_json(obj: Mapping[str, Any], path: str | Path) -> Path:
    """Write a JSON document atomically (see `json_text`)."""
    atomic_write_text(path, json_text(obj))
    return Path(path)
