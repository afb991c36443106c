"""CLIP image-tower features (Kynkäänniemi et al. 2023) through open_clip: ViT-L/14 (OpenAI) by default.

Preprocessing is open_clip's own for the model (PIL bicubic resize of the short side, centre crop,
CLIP mean/std), applied to each uint8 image (gray -> 3 equal channels); the feature is
`encode_image`'s embedding, not normalised.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ganeval.features import normtable
from ganeval.features.base import register
from ganeval.features.pretrained import (
    PretrainedExtractor, check_weights_file, import_extra, resolve_hub_weights, weights_identity,
)
from ganeval.features.resize import to_pil

WEIGHTS_ENV = "GANEVAL_CLIP_WEIGHTS"
HUB_FILES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")
TO_TENSOR = ("ToTensor", "MaybeToTensor")  # the transforms open_clip ends with before Normalize (uint8 -> x/255)


def pretrained_cfg(arch: str, tag: str) -> dict[str, Any]:
    """open_clip's record of a pretrained tag (hub id, quick_gelu, ...); a clear error for unknown pairs."""
    open_clip = import_extra("open_clip", "clip", "features=clip")
    if arch not in open_clip.list_models():
        raise ValueError(f"arch must be an open_clip model name (open_clip.list_models()), got {arch!r}")
    cfg = open_clip.get_pretrained_cfg(arch, tag)
    if not cfg:
        tags = sorted(t for a, t in open_clip.list_pretrained() if a == arch)
        raise ValueError(f"pretrained={tag!r} is not a tag of {arch} in open_clip; its tags: {tags}")
    return dict(cfg)


def build(arch: str, tag: str, weights: str | os.PathLike | None = None) -> tuple[torch.nn.Module, Any]:
    """(model, preprocess) through open_clip: random weights when `weights` is None, else that file
    (with the tag's activation: OpenAI's models use QuickGELU)."""
    open_clip = import_extra("open_clip", "clip", "features=clip")
    quick = bool(pretrained_cfg(arch, tag).get("quick_gelu", False))
    model, _, preprocess = open_clip.create_model_and_transforms(
        arch, pretrained=None if weights is None else str(weights), force_quick_gelu=quick,
    )
    return model.eval().requires_grad_(False), preprocess


def resolve_weights(arch: str, tag: str, weights: str | os.PathLike | None = None, download: bool = True) -> Path:
    """The CLIP weights file: argument, $GANEVAL_CLIP_WEIGHTS, the hub cache, then open_clip's hub download."""
    cfg = pretrained_cfg(arch, tag)
    repo = str(cfg.get("hf_hub", "")).rstrip("/")
    if not repo:
        raise ValueError(f"open_clip has no Hugging Face hub id for {arch}/{tag}; pass the weights file as `weights=`")
    path = resolve_hub_weights(f"CLIP {arch} ({tag})", repo, HUB_FILES, WEIGHTS_ENV,
                               f"import open_clip; open_clip.create_model('{arch}', pretrained='{tag}')", weights,
                               download)
    fix = (f"give open_clip's {arch} ({tag}) weights ({HUB_FILES[0]} from https://huggingface.co/{repo}) with "
           f"features.weights=FILE or ${WEIGHTS_ENV}")
    check_weights_file(path, f"CLIP {arch}", "logit_scale", (), fix)  # every open_clip CLIP model has it
    return path


@register("clip", dims=(768,), weights=True,
          help="CLIP ViT-L/14 OpenAI image embeddings (open_clip; pip install 'ganeval[clip]'), FD_CLIP")
class ClipExtractor(PretrainedExtractor):
    """CLIP image embeddings (ViT-L/14 OpenAI by default: 768-d) with open_clip's preprocessing."""

    def __init__(self, arch: str = "ViT-L-14", pretrained: str = "openai",
                 weights: str | os.PathLike | None = None, download: bool = True) -> None:
        pretrained_cfg(arch, pretrained)
        self.arch = arch
        self.pretrained = pretrained
        self.weights = weights
        self.download = bool(download)
        self._preprocess: Any = None
        self._table: torch.Tensor | None = None

    def feature_dim(self, shape: tuple[int, ...]) -> int:
        """The embedding width of its open_clip model."""
        return int(import_extra("open_clip", "clip", "features=clip").get_model_config(self.arch)["embed_dim"])

    def resolve(self) -> Path:
        return resolve_weights(self.arch, self.pretrained, self.weights, self.download)

    def build(self) -> torch.nn.Module:
        model, self._preprocess = build(self.arch, self.pretrained, self.weights_path())
        return model

    def identity(self) -> dict[str, Any]:
        return {
            "name": "clip",
            "model": f"{self.arch}/{self.pretrained}",
            "weights": weights_identity(self.weights_path()),
            "preprocess": "open_clip's eval transform per image (gray->rgb); encode_image, not normalised",
        }

    def _split(self) -> tuple[Any, tuple[float, ...], tuple[float, ...]] | None:
        """(the PIL part of open_clip's transform, mean, std) when it ends in ToTensor + Normalize (so the host
        stage can stop at uint8 and `normtable` finish it on the device, the same bits), else None."""
        from torchvision import transforms as T

        steps = list(getattr(self._preprocess, "transforms", []))
        if len(steps) < 2 or type(steps[-1]) is not T.Normalize or type(steps[-2]).__name__ not in TO_TENSOR:
            return None
        mean, std = tuple(float(v) for v in steps[-1].mean), tuple(float(v) for v in steps[-1].std)
        return (T.Compose(steps[:-2]), mean, std) if len(mean) == len(std) == 3 else None

    def host_stage(self, batch: torch.Tensor) -> torch.Tensor:
        """open_clip's PIL transform per image on the host (overlapping the device's forward in extraction; DataLoader
        workers run it) up to uint8 RGB, a quarter of the float batch; its ToTensor + Normalize run in device_stage."""
        if self._preprocess is None:  # the transform comes with the network
            self._model = self.build()
        split = self._split()
        images = to_pil(batch)
        if split is not None:
            out = [np.asarray(split[0](im)) for im in images]
            if all(a.dtype == np.uint8 and a.ndim == 3 and a.shape[2] == 3 for a in out):
                return torch.from_numpy(np.stack(out).transpose(0, 3, 1, 2).copy())
        return torch.stack([self._preprocess(im) for im in images])

    def device_stage(self, x: torch.Tensor) -> torch.Tensor:
        """ToTensor + Normalize of a uint8 host-stage batch on its device (`normtable`: the CPU's bits), the forward."""
        if x.dtype == torch.uint8:
            split = self._split()
            assert split is not None, "a uint8 batch comes only from a host stage that stops at uint8"
            if self._table is None:
                self._table = normtable.table(split[1], split[2])
            x = normtable.normalise_on(x, split[1], split[2], self._table)
        return super().device_stage(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert self._model is not None
        model: Any = self._model  # an open_clip CLIP, whose `encode_image` nn.Module's type does not know
        return model.encode_image(x)


__all__ = ["ClipExtractor", "build", "resolve_weights", "pretrained_cfg"]
