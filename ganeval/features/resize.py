"""PIL resizing of image batches, as dgm-eval and open_clip preprocess (per image, on uint8)."""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image

from ganeval.data.images import images_to_float


def to_pil(batch: torch.Tensor) -> list[Image.Image]:
    """N×C×H×W uint8 (or [0, 1] float, rounded to uint8) images as RGB PIL images (gray repeated)."""
    if batch.dtype != torch.uint8:
        batch = images_to_float(batch).mul(255).round_().clamp_(0, 255).to(torch.uint8)
    a = batch.cpu().numpy()
    if a.shape[1] == 1:
        a = np.repeat(a, 3, axis=1)
    return [Image.fromarray(np.ascontiguousarray(img.transpose(1, 2, 0)), mode="RGB") for img in a]


def pil_resize_batch(batch: torch.Tensor, size: int) -> torch.Tensor:
    """Each image resized to size×size with PIL's bicubic filter: N×3×size×size uint8 on the CPU."""
    out = [np.asarray(im.resize((size, size), Image.BICUBIC)) for im in to_pil(batch)]
    return torch.from_numpy(np.stack(out).transpose(0, 3, 1, 2).copy())
