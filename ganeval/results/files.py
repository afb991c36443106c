"""Result files written atomically: CSV frames and JSON documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ganeval.common import atomic_write_text


def json_text(obj: Mapping[str, Any]) -> str:
    """A JSON document as ganeval writes it: indented, sorted keys, non-JSON values as strings, final newline."""
    return json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n"


def write_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a DataFrame as CSV atomically (full float precision)."""
    atomic_write_text(path, df.to_csv(index=False))
    return Path(path)


def write_json(obj: Mapping[str, Any], path: str | Path) -> Path:
    """Write a JSON document atomically (see `json_text`)."""
    atomic_write_text(path, json_text(obj))
    return Path(path)
