"""PIL resizing of image batches, as dgm-eval and open_clip preprocess (per image, on uint8)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from ganeval.data.images import images_to_float, to_nchw, to_rgb


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
    out = [np.asarray(im.resize((size, size), Image.Resampling.BICUBIC)) for im in to_pil(batch)]
    return torch.from_numpy(np.stack(out).transpose(0, 3, 1, 2).copy())


def tf1_bilinear(x: torch.Tensor, size: int) -> torch.Tensor:
    """Bilinear resize of float N×C×H×W to size×size as TensorFlow 1.x computes it (align_corners=False: source
    coordinate = output index × in/out, no half-pixel shift, no antialias): the FID graph's own resize, as
    torch-fidelity's `interpolate_bilinear_2d_like_tensorflow1x` (method='slow') computes it, bit for bit on CPU."""
    if not x.is_floating_point():
        raise ValueError(f"tf1_bilinear takes float images, got {x.dtype}")
    h, w = x.shape[-2:]

    def grid(n_in: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        g = torch.arange(0, size, 1, dtype=x.dtype, device=x.device) * torch.tensor(n_in / size, dtype=torch.float32)
        lo = g.long()
        return lo, (lo + 1).clamp_max(n_in - 1), g - lo.float()

    xlo, xhi, dx = grid(w)
    ylo, yhi, dy = grid(h)
    top, bottom = x[:, :, ylo, :], x[:, :, yhi, :]
    in_0 = top[:, :, :, xlo] + (top[:, :, :, xhi] - top[:, :, :, xlo]) * dx.view(1, 1, 1, size)
    in_1 = bottom[:, :, :, xlo] + (bottom[:, :, :, xhi] - bottom[:, :, :, xlo]) * dx.view(1, 1, 1, size)
    return in_0 + (in_1 - in_0) * dy.view(1, 1, size, 1)


def antialiased_bilinear(x: torch.Tensor, size: int) -> torch.Tensor:
    """torch's bilinear resize with antialias (align_corners=False) of float N×C×H×W to size×size: what
    torchmetrics' FrechetInceptionDistance feeds its Inception by default (`antialias=True`). Not TF1's resize: on
    upsampling too its weights differ from `tf1_bilinear`'s (features ~1 % apart)."""
    if not x.is_floating_point():
        raise ValueError(f"antialiased_bilinear takes float images, got {x.dtype}")
    return F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False, antialias=True)


def pil_float_bicubic(batch: torch.Tensor, size: int) -> torch.Tensor:
    """clean-fid's 'clean' resize: each channel of each uint8 image as a float32 PIL image ('F' mode), bicubic
    (antialiased) to size×size, clipped to [0, 255]; N×3×size×size float32 in [0, 255] on the CPU (gray repeated).
    The same values as `cleanfid.resize.make_resizer("PIL", False, "bicubic", (size, size))`."""
    batch = to_nchw(batch)
    if batch.dtype != torch.uint8:
        batch = images_to_float(batch).mul(255).round_().clamp_(0, 255).to(torch.uint8)
    a = batch.cpu().numpy()
    if a.shape[1] == 1:
        a = np.repeat(a, 3, axis=1)
    out = np.empty((a.shape[0], 3, size, size), dtype=np.float32)
    for i, img in enumerate(a):
        for c in range(3):
            im = Image.fromarray(img[c].astype(np.float32), mode="F").resize((size, size), Image.Resampling.BICUBIC)
            out[i, c] = np.asarray(im).clip(0, 255)
    return torch.from_numpy(out)


def pixels_255(batch: torch.Tensor) -> torch.Tensor:
    """N×3×H×W float32 pixel values in [0, 255]: uint8 exactly, [0, 1] floats ×255; gray repeated."""
    x = to_nchw(batch)
    x = x.float() if x.dtype == torch.uint8 else images_to_float(x).mul(255)
    return to_rgb(x)
