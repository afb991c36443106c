"""Sample grids of `ganeval-score`'s image inputs: a few images of REAL and of each FAKE, drawn with the run's seed,
one PNG per input in `--out` (so report.html shows them, as the app's report shows each trained model's samples).

The draw is `numpy.random.default_rng([seed, GRID_STREAM]).choice(N, min(N, count), replace=False)`, sorted: its
own stream, so it never moves a protocol draw. Files go through `ganeval.common.atomic_write_bytes` (atomic; a
link or folder in their place is refused, never written through). `--no-samples` turns them off.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

GRID_SAMPLES = 16  # images per input (a 4×4 grid)
GRID_STREAM = 0x6772  # the grid draw's seed stream ("gr"), apart from the protocol's [seed, run] draws
TILE_MAX = 128  # a larger image is shrunk to fit TILE_MAX×TILE_MAX in the grid (the grid stays small)


def sample_indices(n: int, seed: int, count: int = GRID_SAMPLES) -> np.ndarray:
    """The sorted rows of an n-image set a grid shows: `count` of them (all when n ≤ count), drawn with `seed`."""
    rng = np.random.default_rng([int(seed), GRID_STREAM])
    return np.sort(rng.choice(n, size=min(n, count), replace=False))


def grid_name(position: int, name: str) -> str:
    """The grid's file name: 'samples_0_real_NAME.png' for REAL (position 0), 'samples_K_NAME.png' for the K-th FAKE; the
    position keeps two inputs of one name apart, and characters other than letters, digits, '.', '_', '-' become '_'."""
    return f"samples_{position}_{re.sub(r'[^A-Za-z0-9._-]+', '_', name).strip('._') or 'set'}.png"


def sample_images(s: Any, rows: np.ndarray) -> np.ndarray:
    """Rows `rows` of input `s` (`ganeval.app.score_inputs.InputSet` holding images) as uint8 N×C×H×W; a streamed
    folder, zip or tar decodes only those files."""
    from ganeval.data.images import as_uint8_images

    if s.stream is not None:  # decode gives H×W or H×W×3 (the stream's batches transpose it the same way)
        decoded = [s.stream.dataset.decode(int(i)) for i in rows]
        return np.stack([a[None] if a.ndim == 2 else a.transpose(2, 0, 1) for a in decoded])
    return as_uint8_images(np.asarray(s.array[rows]), s.arg)


def fit_tiles(images: np.ndarray, most: int = TILE_MAX) -> np.ndarray:
    """uint8 N×C×H×W images shrunk (PIL bilinear, aspect kept) to fit most×most; smaller ones as they are."""
    n, c, h, w = images.shape
    if max(h, w) <= most:
        return images
    from PIL import Image

    scale = most / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    out = []
    for im in images:
        pil = Image.fromarray(im[0] if c == 1 else im.transpose(1, 2, 0))
        a = np.asarray(pil.resize(size, Image.Resampling.BILINEAR), dtype=np.uint8)
        out.append(a[None] if c == 1 else a.transpose(2, 0, 1))
    return np.stack(out)


def write_sample_grids(out_dir: str | Path, sets: Sequence[Any], seed: int, count: int = GRID_SAMPLES) -> list[Path]:
    """One grid PNG per image input of `sets` (REAL first, then the FAKEs) into `out_dir`; inputs holding features
    (arrays, references) have none. Returns the paths written."""
    from ganeval.gan.plots import save_image_grid

    written = []
    for position, s in enumerate(sets):
        if not s.images or (s.stream is None and s.array is None) or len(s) == 0:
            continue
        tiles = fit_tiles(sample_images(s, sample_indices(len(s), seed, count)))
        path = Path(out_dir) / grid_name(position, f"real_{s.name}" if position == 0 else s.name)
        save_image_grid(path, tiles, nrow=int(np.ceil(np.sqrt(len(tiles)))), scale=2 if tiles.shape[-1] <= 32 else 1)
        written.append(path)
    return written
