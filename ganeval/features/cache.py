"""Content-addressed feature cache: `<cache_dir>/<key>.npz` with the features, their checksum and the key's parts.

The key hashes the input content, the extractor identity (name, options, weights hash) and the cache
format. An entry carries the parts of its key (`meta`: content, extractor, rows; a partial chunk: its folder, index
and rows) and is used only for the key it is read for: a file copied over another entry's name is refused with a note
and recomputed, as is one that is unreadable, truncated or whose checksum does not match. Writes are atomic, so a
crash never leaves a half-written entry.

Format 2: image sets' content identities of format 1 could collide (`ganeval.hashing.FilesHasher`), so an entry of
format 1 may hold another set's features: entries of older versions are never read (their keys differ), only
computed again.
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
CACHE_FORMAT = 2  # in every key: entries of format 1 are not found (see the module doc)


def cache_key(content_hash: str, identity: dict[str, Any]) -> str:
    """The cache key of features of content `content_hash` made by an extractor of `identity`."""
    return stable_hash({"content": content_hash, "extractor": identity, "format": CACHE_FORMAT}, 32)


def cache_path(cache_dir: str | os.PathLike, key: str) -> Path:
    """The file that holds the entry `key`."""
    return Path(cache_dir) / f"{key}.npz"


def entry_meta(content_hash: str, identity: dict[str, Any], n: int) -> dict[str, Any]:
    """What an entry of `n` rows for (content, extractor) carries, and is checked against when read."""
    return {"content": content_hash, "extractor": identity, "n": n}


def find_cached(cache_dir: str | os.PathLike, content_hash: str, identity: dict[str, Any],
                n: int) -> tuple[Path, np.ndarray | None]:
    """(the entry's file, the cached features or None): the entry of (content, extractor, n rows), used only when
    it carries that key."""
    path = cache_path(cache_dir, cache_key(content_hash, identity))
    return path, load_cached(path, n, entry_meta(content_hash, identity, n))


def _same(stored: Any, expected: dict[str, Any]) -> bool:
    """Whether a stored `meta` is `expected` as JSON wrote it (tuples as lists, objects by str())."""
    return stable_hash(stored, 64) == stable_hash(expected, 64)


def load_cached(path: str | os.PathLike, n: int, expected: dict[str, Any]) -> np.ndarray | None:
    """The `n` rows of cached features at `path`, or None when absent or invalid (an invalid file is logged).
    `expected`: the `meta` the entry must carry (its key's parts); another one is refused (logged) as well.

    Raises `ValueError` when the entry is a link or not a file: it could be neither read nor replaced.
    """
    path = Path(path)
    if path.is_symlink():  # never followed, and recomputing could not replace it: say what to remove
        raise ValueError(f"feature cache entry {path} is a symbolic link: ganeval neither reads nor writes through "
                         "one; remove it, or choose another cache_dir")
    if not path.exists():
        return None
    if not path.is_file():  # recomputing could never store the entry: say what to remove
        raise ValueError(f"feature cache entry {path} is not a file (a directory?): remove it, or choose another "
                         "cache_dir")
    try:
        with np.load(path, allow_pickle=False) as z:
            feats = np.array(z["features"])
            checksum = str(z["checksum"])
            meta = json.loads(str(z["meta"]))
        if checksum != array_checksum(feats):
            raise ValueError("checksum mismatch")
        if feats.ndim != 2 or feats.shape[0] != n:
            raise ValueError(f"features of shape {feats.shape}, expected {n} rows")
    except Exception as e:  # zip/format errors, missing keys, truncation, checksum mismatch
        log.warning("feature cache file %s is corrupted (%s: %s); recomputing", path, type(e).__name__, e)
        return None
    if not _same(meta, expected):
        log.warning("feature cache file %s holds another entry (%s, not %s): refused; recomputing", path,
                    _short(meta), _short(expected))
        return None
    return feats


def _short(meta: Any) -> str:
    """A meta in one short line for a note."""
    text = json.dumps(meta, sort_keys=True, default=str)
    return text if len(text) <= 160 else text[:157] + "..."


def save_cached(path: str | os.PathLike, features: np.ndarray, meta: dict[str, Any]) -> None:
    """Write features, their checksum and a JSON description atomically to `path`."""
    atomic_np_save(
        path,
        features=features,
        checksum=np.array(array_checksum(features)),
        meta=np.array(json.dumps(meta, sort_keys=True, default=str)),
    )
