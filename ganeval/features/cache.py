"""Content-addressed feature cache: `<cache_dir>/<key>.npz` with the features and their checksum.

The key hashes the input content, the extractor identity (name, options, weights hash) and the cache
format. A file that is unreadable, truncated or whose checksum does not match is reported in the log
and treated as a miss; writes are atomic, so a crash never leaves a half-written entry.

Caches of older versions: identities used to hold the weights hash cut short (Inception 8, DINOv2/CLIP 16 hex
digits), so their entries sit under other keys. `find_cached` falls back to that key on a miss (the features of the
same content by the same weights file, the hash's prefix being today's): the entry is read only, never rewritten,
moved or copied; new entries are written under today's key. (The chunks of a streamed extraction an older version
was stopped in, `partial/` under its key, are not resumed: computed again.)
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from ganeval.common import atomic_np_save
from ganeval.hashing import array_checksum, stable_hash

log = logging.getLogger(__name__)
CACHE_FORMAT = 1


def cache_key(content_hash: str, identity: dict[str, Any]) -> str:
    """The cache key of features of content `content_hash` made by an extractor of `identity`."""
    return stable_hash({"content": content_hash, "extractor": identity, "format": CACHE_FORMAT}, 32)


def cache_path(cache_dir: str | os.PathLike, key: str) -> Path:
    """The file that holds the entry `key`."""
    return Path(cache_dir) / f"{key}.npz"


def find_cached(cache_dir: str | os.PathLike, content_hash: str, identity: dict[str, Any],
                legacy: dict[str, Any] | None, n: int | None = None) -> tuple[Path, np.ndarray | None, Path]:
    """(the entry's file under today's key, the cached features or None, the file they were read from): today's
    key first, then on a miss the key of `legacy` (`Extractor.legacy_identity()`, the identity older versions wrote
    entries under), read only."""
    path = cache_path(cache_dir, cache_key(content_hash, identity))
    feats = load_cached(path, n)
    if feats is not None or legacy is None:
        return path, feats, path
    old = cache_path(cache_dir, cache_key(content_hash, legacy))
    feats = load_cached(old, n)
    if feats is not None:
        log.info("feature cache entry %s written by an older ganeval (short weights hash) used as it is", old)
        return path, feats, old
    return path, None, path


def load_cached(path: str | os.PathLike, n: int | None = None) -> np.ndarray | None:
    """The cached features at `path`, or None when absent or invalid (an invalid file is logged).

    Raises `ValueError` when the entry is not a file: it could be neither read nor replaced.
    """
    path = Path(path)
    if not path.exists():
        return None
    if not path.is_file():  # recomputing could never store the entry: say what to remove
        raise ValueError(f"feature cache entry {path} is not a file (a directory?): remove it, or choose another "
                         "cache_dir")
    try:
        with np.load(path, allow_pickle=False) as z:
            feats = np.array(z["features"])
            checksum = str(z["checksum"])
        if checksum != array_checksum(feats):
            raise ValueError("checksum mismatch")
        if feats.ndim != 2 or (n is not None and feats.shape[0] != n):
            raise ValueError(f"features of shape {feats.shape}, expected {n} rows")
    except Exception as e:  # zip/format errors, missing keys, truncation, checksum mismatch
        log.warning("feature cache file %s is corrupted (%s: %s); recomputing", path, type(e).__name__, e)
        return None
    return feats


def save_cached(path: str | os.PathLike, features: np.ndarray, meta: dict[str, Any]) -> None:
    """Write features, their checksum and a JSON description atomically to `path`."""
    atomic_np_save(
        path,
        features=features,
        checksum=np.array(array_checksum(features)),
        meta=np.array(json.dumps(meta, sort_keys=True, default=str)),
    )
