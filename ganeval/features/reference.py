"""`save_reference`: a real set's features, moments and provenance as ganeval's reference file (and its
moments as pytorch-fid's `{mu, sigma}` .npz) from the Python API, as `ganeval-score --save-ref/--save-stats` does."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ganeval.data.references import Moments, check_file_writable, moments_of, stats_meta, write_reference, write_stats
from ganeval.features.base import Extractor, get_extractor
from ganeval.words import UNSET, renamed


def reference_meta(extractor: Extractor, n: int, content_hash: str | None, source: str | None = None) -> dict[str, Any]:
    """The provenance of a reference: extractor identity, full weights SHA-256, preprocessing mode, count, content."""
    from ganeval.features.inception import weights_sha256

    weights = extractor.weights_path() if hasattr(extractor, "weights_path") else None
    meta = stats_meta(extractor.identity(), weights_sha256(weights) if weights is not None else None, n, content_hash)
    if source is not None:
        meta["source"] = source
    return meta


def write_outputs(features: np.ndarray, meta: dict[str, Any], path: str | os.PathLike | None,
                  stats: str | os.PathLike | None, overwrite: bool = False) -> Moments:
    """Write ganeval's reference to `path` and pytorch-fid's statistics to `stats` (either may be None); an existing
    file (one another process wrote meanwhile included) is replaced only with `overwrite`."""
    mom = moments_of(features)
    if path is not None:
        write_reference(Path(path).expanduser(), features, meta, overwrite)
    if stats is not None:
        write_stats(Path(stats).expanduser(), mom, overwrite, (meta.get("extractor") or {}).get("name"))
    return mom


def save_reference(images: Any, path: str | os.PathLike | None = None, *, stats: str | os.PathLike | None = None,
                   features: str | Extractor = UNSET, overwrite: bool = False, batch_size: int = 50,
                   device: Any = None, cache_dir: str | os.PathLike | None = None, progress: bool = True,
                   extractor: str | Extractor = UNSET, **options: Any) -> Moments:
    """Extract `images`' features and write them with their moments and provenance to `path` (ganeval's reference
    .npz: `features`, `mu`, `sigma`, `meta`), and/or the moments alone to `stats` (pytorch-fid's .npz); returns the
    moments. Existing files are replaced only with `overwrite`; links never.

    Args:
        images: The real images (or N×D rows with `features="identity"`), in any form `extract` takes.
        path: Where to write ganeval's reference (features, moments, provenance); `ganeval.score` and
            `ganeval-score` take it as the real set.
        stats: Where to write the moments alone as pytorch-fid's statistics .npz (pytorch-fid and clean-fid read it).
        features: The extractor, as `ganeval.score` names it (default "inception").
        overwrite: Replace existing files (never a link).
        batch_size: Images per forward pass.
        device: Where the network runs (default: the images' device, else the CPU).
        cache_dir: A folder caching the features.
        progress: False: no progress bar.
        extractor: The former name of `features` (kept, with a DeprecationWarning).
        **options: The extractor's options (`weights=`, `resize=`, `dims=`, ...).

    Returns:
        The moments written: `.mu` (D) and `.sigma` (D×D).

    Raises:
        ValueError: Neither `path` nor `stats`, a file in the way without `overwrite`, or unusable images.

    Examples:
        >>> import numpy as np
        >>> import ganeval
        >>> images = np.random.default_rng(0).integers(0, 256, size=(50, 8, 8, 3), dtype=np.uint8)
        >>> m = ganeval.save_reference(images, "real_ref.npz", features="pixels", progress=False)
        >>> m.mu.shape, sorted(np.load("real_ref.npz").files)
        ((192,), ['features', 'meta', 'mu', 'sigma'])
    """
    from ganeval.features.extraction import extract_with_info
    from ganeval.hashing import StreamHasher

    features = renamed("features", features, "extractor", extractor, UNSET)
    features = "inception" if features is UNSET else features

    if path is None and stats is None:
        raise ValueError("save_reference: give path= (ganeval's reference) and/or stats= (pytorch-fid's {mu, sigma})")
    for p, what in ((path, "path"), (stats, "stats")):
        if p is not None:
            check_file_writable(p, what, overwrite)
    ex = get_extractor(features, **options)
    feats, info = extract_with_info(images, ex, batch_size=batch_size, device=device, cache_dir=cache_dir,
                                    progress=progress)
    content = info.get("content_hash")
    if content is None and isinstance(images, np.ndarray):
        h = StreamHasher()
        h.update(images)
        content = h.hexdigest()
    return write_outputs(feats, reference_meta(ex, len(feats), content), path, stats, overwrite)


__all__ = ["save_reference", "reference_meta", "write_outputs"]
