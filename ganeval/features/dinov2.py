"""DINOv2 ViT features (FD_DINOv2, Stein et al. 2023) through timm, preprocessed as dgm-eval does.

Preprocessing (dgm-eval): each uint8 image resized to 224×224 with PIL's bicubic filter, gray -> 3
equal channels, x/255, ImageNet mean/std normalisation; the feature is the class token after the final
norm (timm `num_classes=0`, the same vector as DINOv2's `x_norm_clstoken`). The network is timm's DINOv2
built at 224 px (timm resamples the 518-px position embedding once at load; DINOv2's own hub code
interpolates it at every forward, so values can differ slightly from dgm-eval's).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from ganeval.features import normtable
from ganeval.features.base import register
from ganeval.features.pretrained import (
    PretrainedExtractor, check_weights_file, import_extra, resolve_hub_weights, weights_identity,
)
from ganeval.features.resize import pil_resize_batch, pixels_255, tf1_bilinear

ARCHS = {
    "vits14": "vit_small_patch14_dinov2.lvd142m",
    "vitb14": "vit_base_patch14_dinov2.lvd142m",
    "vitl14": "vit_large_patch14_dinov2.lvd142m",
    "vitg14": "vit_giant_patch14_dinov2.lvd142m",
}
DIMS = {"vits14": 384, "vitb14": 768, "vitl14": 1024, "vitg14": 1536}  # class-token width per arch
WEIGHTS_ENV = "GANEVAL_DINOV2_WEIGHTS"
HUB_FILES = ("model.safetensors", "pytorch_model.bin")
SIZE = 224
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
RESIZE_MODES = {
    "pil": f"PIL bicubic {SIZE}x{SIZE}, gray->rgb, x/255, ImageNet mean/std; class token",  # dgm-eval's (default)
    "torch": f"gray->rgb, TF1 bilinear {SIZE}x{SIZE} on [0, 255] (torch-fidelity's), ImageNet mean/std ×255; "
             "class token",
}


def timm_name(arch: str) -> str:
    """timm's model name of a DINOv2 size (vits14, vitb14, vitl14, vitg14)."""
    if arch not in ARCHS:
        raise ValueError(f"arch must be one of {sorted(ARCHS)}, got {arch!r}")
    return ARCHS[arch]


def build(arch: str, weights: str | os.PathLike | None = None) -> torch.nn.Module:
    """timm's DINOv2 at 224 px without a head (random weights when `weights` is None), in eval mode."""
    timm = import_extra("timm", "dinov2", "features=dinov2")
    kw: dict[str, Any] = {"img_size": SIZE, "num_classes": 0}
    if weights is not None:
        kw.update(pretrained=True, pretrained_cfg_overlay={"file": str(weights)})
    return timm.create_model(timm_name(arch), **kw).eval().requires_grad_(False)


def resolve_weights(arch: str, weights: str | os.PathLike | None = None, download: bool = True) -> Path:
    """The DINOv2 weights file: argument, $GANEVAL_DINOV2_WEIGHTS, the hub cache, then timm's download."""
    timm = import_extra("timm", "dinov2", "features=dinov2")
    name = timm_name(arch)
    repo = timm.models.get_pretrained_cfg(name).hf_hub_id
    path = resolve_hub_weights(f"DINOv2 {arch} ({name})", repo, HUB_FILES, WEIGHTS_ENV,
                               f"import timm; timm.create_model('{name}', pretrained=True)", weights, download)
    fix = (f"give timm's {name} weights ({HUB_FILES[0]} from https://huggingface.co/{repo}) with "
           f"features.weights=FILE or ${WEIGHTS_ENV}")
    check_weights_file(path, f"DINOv2 {arch}", "patch_embed.proj.weight", (DIMS[arch], 3, 14, 14), fix)
    return path


def normalise(x: torch.Tensor) -> torch.Tensor:
    """uint8 N×3×H×W -> float32 (x/255 - mean) / std with ImageNet's mean/std (`ganeval.features.normtable`)."""
    return normtable.normalise(x, MEAN, STD)


_TABLE = normtable.table(MEAN, STD)  # normalise() of every (channel, byte), for an exact lookup on other devices


def normalise_table(x: torch.Tensor) -> torch.Tensor:
    """`normalise(x)` of the CPU for uint8 x on x's device, bit for bit (on the CPU normalise itself)."""
    return normtable.normalise_on(x, MEAN, STD, _TABLE)


def normalise_by_table(x: torch.Tensor) -> torch.Tensor:
    """The table lookup `normalise_table` does off the CPU, on any device (testable on the CPU)."""
    return normtable.lookup(x, _TABLE)


def preprocess(batch: torch.Tensor) -> torch.Tensor:
    """uint8 (or [0, 1] float) images N×C×H×W -> the network's normalised 224×224 float input."""
    return normalise(pil_resize_batch(batch, SIZE))


def preprocess_torch(batch: torch.Tensor) -> torch.Tensor:
    """torch-fidelity's DINOv2 preprocessing, on the batch's device: TF1 bilinear to 224×224 on [0, 255] values,
    then (x - 255·mean) / (255·std)."""
    x = tf1_bilinear(pixels_255(batch), SIZE)
    mean = torch.tensor([255 * m for m in MEAN], dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor([255 * s for s in STD], dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    return (x - mean) / std


@register("dinov2", dims=(DIMS["vitl14"],), resize=tuple(RESIZE_MODES), weights=True,
          help="DINOv2 ViT-L/14 class token (timm; pip install 'ganeval[dinov2]'), FD_DINOv2")
class DinoV2Extractor(PretrainedExtractor):
    """DINOv2 class-token features (ViT-L/14 by default: 1024-d), dgm-eval's preprocessing."""

    def __init__(self, arch: str = "vitl14", weights: str | os.PathLike | None = None, download: bool = True,
                 resize: str = "pil") -> None:
        timm_name(arch)
        if resize not in RESIZE_MODES:
            raise ValueError(f"resize must be one of {', '.join(RESIZE_MODES)} for DINOv2, got {resize!r}")
        self.resize_mode = resize
        self.arch = arch
        self.weights = weights
        self.download = bool(download)

    def resolve(self) -> Path:
        return resolve_weights(self.arch, self.weights, self.download)

    def build(self) -> torch.nn.Module:
        return build(self.arch, self.weights_path())

    def feature_dim(self, shape: tuple[int, ...]) -> int:
        """The class token's width of its arch."""
        return DIMS[self.arch]

    def identity(self) -> dict[str, Any]:
        ident = {
            "name": "dinov2",
            "model": timm_name(self.arch),
            "weights": weights_identity(self.weights_path()),
            "preprocess": RESIZE_MODES[self.resize_mode],
        }
        if self.resize_mode != "pil":  # the default keeps the identity (and cache keys) it always had
            ident["resize_mode"] = self.resize_mode
        return ident

    def host_stage(self, batch: torch.Tensor) -> torch.Tensor:
        """pil: PIL resizing on the host (overlapping the device's forward in extraction; DataLoader workers run it)
        to uint8 224×224, a quarter of the float batch each worker would otherwise hold and pass on; torch: nothing
        (it runs on the device)."""
        return pil_resize_batch(batch, SIZE) if self.resize_mode == "pil" else batch

    def device_stage(self, x: torch.Tensor) -> torch.Tensor:
        """pil: `normalise` by table on the device (the values `preprocess` gives); torch: torch-fidelity's
        preprocessing; then the forward."""
        return super().device_stage(preprocess_torch(x) if self.resize_mode == "torch" else normalise_table(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert self._model is not None
        return self._model(x)


__all__ = ["DinoV2Extractor", "ARCHS", "DIMS", "RESIZE_MODES", "build", "resolve_weights", "preprocess",
           "preprocess_torch", "normalise", "normalise_table", "normalise_by_table", "timm_name"]
