"""Training outputs a person looks at: the loss CSV, the loss plot and sample grids (all written atomically)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

import numpy as np

from ganeval.common import atomic_write_bytes, atomic_write_text
from ganeval.results.tables import mathtext_escape

LOSS_COLUMNS = ("gen_step", "critic_step", "epoch", "loss_critic", "loss_gen", "critic_gap", "grad_penalty")


def write_loss_csv(path: str | Path, history: np.ndarray) -> None:
    """One row per generator step: counters, mean critic loss since the previous one, generator loss, gap, penalty."""
    lines = [",".join(LOSS_COLUMNS)]
    for row in history:
        lines.append(",".join([str(int(v)) for v in row[:3]] + [repr(float(v)) for v in row[3:]]))
    atomic_write_text(path, "\n".join(lines) + "\n")


def plot_losses(path: str | Path, history: np.ndarray, title: str = "") -> None:
    """Plot critic loss, generator loss and the critic gap (D(real) - D(fake)) against generator steps."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    if len(history):
        step = history[:, 0]
        for col, label in ((3, "critic loss"), (4, "generator loss"), (5, "critic gap D(real)-D(fake)")):
            ax.plot(step, _smooth(history[:, col]), label=label, lw=1)
        ax.legend(loc="best", fontsize=8)
    ax.set_xlabel("generator step")
    ax.set_title(mathtext_escape(title))
    ax.grid(alpha=0.3)
    _save_fig(fig, path)


def _smooth(y: np.ndarray, points: int = 400) -> np.ndarray:
    """Moving average over ~len/points rows so long runs stay readable."""
    w = max(1, len(y) // points)
    if w == 1:
        return y
    kernel = np.ones(w) / w
    return np.convolve(np.pad(y, (w - 1, 0), mode="edge"), kernel, mode="valid")


def _save_fig(fig: "object", path: str | Path) -> None:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")  # type: ignore[attr-defined]
    plt.close(fig)  # type: ignore[arg-type]
    atomic_write_bytes(path, buf.getvalue())


def image_grid(images: np.ndarray, nrow: int | None = None, pad: int = 2) -> np.ndarray:
    """Tile uint8 N×C×H×W images into one H'×W'×C uint8 array (C = 1 or 3), padded with black."""
    n, c, h, w = images.shape
    nrow = nrow or int(np.ceil(np.sqrt(n)))
    ncol = int(np.ceil(n / nrow))
    grid = np.zeros((ncol * (h + pad) + pad, nrow * (w + pad) + pad, c), dtype=np.uint8)
    for i in range(n):
        r, q = divmod(i, nrow)
        y, x = pad + r * (h + pad), pad + q * (w + pad)
        grid[y : y + h, x : x + w] = images[i].transpose(1, 2, 0)
    return grid


def save_image_grid(path: str | Path, images: np.ndarray, nrow: int | None = None, scale: int = 1) -> None:
    """Save uint8 N×C×H×W images as one PNG grid (nearest-neighbour upscaled by `scale`)."""
    from PIL import Image

    grid = image_grid(images, nrow)
    if scale > 1:
        grid = grid.repeat(scale, axis=0).repeat(scale, axis=1)
    img = Image.fromarray(grid[:, :, 0] if grid.shape[2] == 1 else grid)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    atomic_write_bytes(path, buf.getvalue())


def save_points_plot(path: str | Path, points: np.ndarray, real: np.ndarray | None = None, title: str = "") -> None:
    """Scatter generated points (first two or three coordinates), optionally over real ones."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    three_d = points.shape[1] >= 3
    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(projection="3d" if three_d else None)
    sets: Sequence[tuple[np.ndarray, str, str]] = ([(real, "real", "tab:gray")] if real is not None else []) + [
        (points, "generated", "tab:red")
    ]
    for pts, label, color in sets:
        cols = [pts[:, i] for i in range(3 if three_d else min(2, pts.shape[1]))]
        if len(cols) == 1:
            cols.append(np.zeros_like(cols[0]))
        ax.scatter(*cols, s=2, alpha=0.5, label=label, color=color)  # type: ignore[misc]  # x, y (and z): never s
    ax.set_title(mathtext_escape(title))
    ax.legend(loc="best", fontsize=8)
    _save_fig(fig, path)
