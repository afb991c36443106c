"""The number a named protocol's papers report, beside ganeval's intervals: the FID of each whole generated pool
against the whole real pool (one value, as pytorch-fid's `calculate_frechet_distance` and clean-fid compute it
from all rows), attached to the summary's FID rows as the column `fid_full`.

ganeval's mean ± interval over subsamples estimates the FID of subsamples of `sample_size` rows, which is biased
upward against the full-set value (FID's bias falls like 1/N); `fid_full` is the one number a paper of the protocol
prints, so the two stand side by side and neither is passed off as the other.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from ganeval.protocol.task import as_array
from ganeval.results.summary import FULL_SET_COLUMN

FULL_SET_METRIC = "fid"  # the summary rows the full-set value sits on
FULL_SET_MEANS = ("FID of the whole generated pool against the whole real pool (every row of each, float64 moments, "
                  "tr √(Σ₁Σ₂) as pytorch-fid's scipy.linalg.sqrtm formula): one value, no interval, the number the "
                  "protocol's papers report; the mean ± interval beside it is ganeval's over subsamples")


def full_set_values(blocks: Iterable[Any], device: Any = None) -> pd.DataFrame:
    """One row per generated pool of `blocks` (`ganeval.protocol.Block`): the block's group columns, the pool's
    labels (model, train_seed) and `fid_full` = `ganeval.metrics.fid(real pool, generated pool)`."""
    from ganeval.metrics import fid

    rows = []
    for block in blocks:
        real = as_array(block.real)
        for labels, fake in block.fakes:
            rows.append({**block.groups, **labels, FULL_SET_COLUMN: fid(real, as_array(fake), device=device)})
    return pd.DataFrame(rows)


def attach_full_set(summary: pd.DataFrame, values: pd.DataFrame) -> pd.DataFrame:
    """`summary` with a `fid_full` column: on each FID row the value of the pool its group columns name, NaN on
    other metrics' rows and where they name several pools (a model-level row over several training seeds: its
    seeds' values are in the per-seed summary)."""
    out = summary.copy()
    out[FULL_SET_COLUMN] = np.nan
    if values.empty or "metric" not in out.columns:
        return out
    keys = [c for c in values.columns if c != FULL_SET_COLUMN and c in out.columns]
    lookup: dict[tuple[str, ...], list[float]] = {}
    for _, v in values.iterrows():
        lookup.setdefault(tuple(_key(v[k]) for k in keys), []).append(float(v[FULL_SET_COLUMN]))
    for i, row in out.iterrows():
        if str(row["metric"]) != FULL_SET_METRIC:
            continue
        found = lookup.get(tuple(_key(row[k]) for k in keys), [])
        if len(found) == 1:
            out.at[i, FULL_SET_COLUMN] = found[0]
    return out


def _key(value: Any) -> str:
    """A group value as a matching key: 0, 0.0 and np.int64(0) alike (a seed column may come back as floats)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and \
            float(value).is_integer():
        return str(int(value))
    return str(value)


__all__ = ["FULL_SET_MEANS", "FULL_SET_METRIC", "attach_full_set", "full_set_values"]
