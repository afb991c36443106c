"""FID Inception (pytorch-fid's network) as a feature extractor, and the resolution of its weights.

The network is pytorch-fid's FID Inception architecture, built with random initialisation and then
loaded from a resolved state-dict file with `torch.load(weights_only=True)`; nothing here downloads
except `resolve_weights`, and only as its last resort.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ganeval.data.images import images_to_float, to_rgb
from ganeval.features.base import Extractor, register
from ganeval.features.resize import antialiased_bilinear, pil_float_bicubic, pixels_255, tf1_bilinear
from ganeval.hashing import sha256_file, short_hash

log = logging.getLogger(__name__)

WEIGHTS_FILENAME = "pt_inception-2015-12-05-6726825d.pth"
WEIGHTS_URL = (
    "https://github.com/mseitzer/pytorch-fid/releases/download/fid_weights/" + WEIGHTS_FILENAME
)
WEIGHTS_ENV = "GANEVAL_INCEPTION_WEIGHTS"
PUBLISHED_SHA256_PREFIX = "6726825d"
BLOCK_BY_DIMS = {64: 0, 192: 1, 768: 2, 2048: 3}
RESIZE = 299
OUTPUTS = ("features", "logits", "logits_unbiased", "spatial")  # pool features, the 1008-way classifier's logits,
# or the ADM evaluator's spatial features (sFID)
# Preprocessing modes (the names are clean-fid's): how a uint8 image becomes the network's 299×299 input
RESIZE_MODES = {
    "legacy_pytorch": "x/255, gray->rgb, bilinear(align_corners=False), 2x-1",  # pytorch-fid's (the default)
    "legacy_tensorflow": "gray->rgb, TF1 bilinear (torch-fidelity's) on [0, 255], (x-128)/128",
    "clean": "gray->rgb, PIL float bicubic per channel (clean-fid's), clip [0, 255], (x-128)/128",
    # torchmetrics' FrechetInceptionDistance by default (antialias=True); with antialias=False it is legacy_tensorflow
    "torchmetrics": "gray->rgb, torch bilinear with antialias on [0, 255] (torchmetrics'), (x-128)/128",
}
DEFAULT_RESIZE_MODE = "legacy_pytorch"


def resize_mode(resize: bool | str) -> str | None:
    """The preprocessing mode of a `resize` option: True -> the default (legacy_pytorch), False -> None (no
    resize, images fed at their size), or one of RESIZE_MODES by name."""
    if resize is True:
        return DEFAULT_RESIZE_MODE
    if resize is False:
        return None
    if isinstance(resize, str) and resize in RESIZE_MODES:
        return resize
    raise ValueError(f"resize must be one of {', '.join(RESIZE_MODES)} (or true/false), got {resize!r}")


class WeightsNotFoundError(RuntimeError):
    """An extractor's weights file could not be found or downloaded: `what` names the network (the FID Inception
    unless said), `env` its environment variable and `url` where the file is published."""

    def __init__(self, message: str, what: str = "FID Inception", env: str = WEIGHTS_ENV,
                 url: str = WEIGHTS_URL) -> None:
        super().__init__(message)
        self.what, self.env, self.url = what, env, url


def hub_weights_path() -> Path:
    """Where torch hub (and pytorch-fid) keep the downloaded FID Inception weights."""
    return Path(torch.hub.get_dir()) / "checkpoints" / WEIGHTS_FILENAME


def _how_to_place(looked: list[str]) -> str:
    where = "\n".join(f"  - {w}" for w in looked)
    return (
        f"FID Inception weights '{WEIGHTS_FILENAME}' not found. Looked in:\n{where}\n"
        f"Download it from {WEIGHTS_URL} on a machine with internet access and either put it at "
        f"{hub_weights_path()} or anywhere and pass its path as `weights=` "
        f"(config key features.weights) or in the environment variable {WEIGHTS_ENV}."
    )


def _download(url: str, dst: Path) -> None:
    """Download `url` to `dst` (torch hub writes a temporary file and renames it)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    torch.hub.download_url_to_file(url, str(dst), progress=True)


def resolve_weights(weights: str | os.PathLike | None = None, *, download: bool = True) -> Path:
    """The FID Inception weights file: `weights`, then $GANEVAL_INCEPTION_WEIGHTS, then the torch hub
    cache, then a download from pytorch-fid's release URL into that cache.

    A path given explicitly (argument or environment) must exist: it is never silently replaced.
    Raises `WeightsNotFoundError` saying where it looked and how to place the file by hand.
    """
    looked: list[str] = []
    if weights is not None and str(weights) != "":
        p = Path(weights).expanduser()
        if p.is_file():
            return p
        raise WeightsNotFoundError(_how_to_place([f"{p} (the `weights` argument): no such file"]))
    env = os.environ.get(WEIGHTS_ENV, "")
    if env:
        p = Path(env).expanduser()
        if p.is_file():
            return p
        raise WeightsNotFoundError(_how_to_place([f"{p} (${WEIGHTS_ENV}): no such file"]))
    looked.append(f"the `weights` argument and ${WEIGHTS_ENV}: not set")
    hub = hub_weights_path()
    if hub.is_file():
        return hub
    looked.append(f"{hub} (torch hub cache): no such file")
    if not download:
        looked.append(f"{WEIGHTS_URL}: download disabled")
        raise WeightsNotFoundError(_how_to_place(looked))
    try:
        log.info("downloading FID Inception weights from %s to %s", WEIGHTS_URL, hub)
        _download(WEIGHTS_URL, hub)
    except Exception as e:  # no network, HTTP error, disk error: all end the same way
        looked.append(f"{WEIGHTS_URL}: download failed ({type(e).__name__}: {e})")
        raise WeightsNotFoundError(_how_to_place(looked)) from e
    if not hub.is_file():
        looked.append(f"{WEIGHTS_URL}: download wrote nothing")
        raise WeightsNotFoundError(_how_to_place(looked))
    return hub


def check_weights_available(weights: str | os.PathLike | None = None, *, download: bool = True) -> Path:
    """Resolve the weights now (downloading if needed and allowed), so a pipeline fails before any
    expensive step; returns the path."""
    return resolve_weights(weights, download=download)


_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def weights_sha256(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a weights file, memoised by path, size and mtime."""
    st = os.stat(path)
    key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        _SHA_CACHE[key] = sha256_file(path)
    return _SHA_CACHE[key]


def fid_inception_architecture() -> nn.Module:
    """pytorch-fid's FID Inception v3 (torchvision Inception with pytorch-fid's patched blocks),
    randomly initialised and without downloading anything."""
    import torchvision
    from pytorch_fid.inception import FIDInceptionA, FIDInceptionC, FIDInceptionE_1, FIDInceptionE_2

    net = torchvision.models.inception_v3(
        weights=None, aux_logits=False, num_classes=1008, init_weights=False
    )
    net.Mixed_5b = FIDInceptionA(192, pool_features=32)
    net.Mixed_5c = FIDInceptionA(256, pool_features=64)
    net.Mixed_5d = FIDInceptionA(288, pool_features=64)
    net.Mixed_6b = FIDInceptionC(768, channels_7x7=128)
    net.Mixed_6c = FIDInceptionC(768, channels_7x7=160)
    net.Mixed_6d = FIDInceptionC(768, channels_7x7=160)
    net.Mixed_6e = FIDInceptionC(768, channels_7x7=192)
    net.Mixed_7b = FIDInceptionE_1(1280)
    net.Mixed_7c = FIDInceptionE_2(2048)
    return net


WRONG_WEIGHTS_FIX = (f"give the FID Inception weights ({WEIGHTS_FILENAME}) with features.weights=FILE, "
                     "or score without Inception: features=pixels")


def load_state_dict(path: str | os.PathLike, mmap: bool = False) -> dict[str, torch.Tensor]:
    """Read a weights file safely (`weights_only=True`) onto the CPU (`mmap`: mapped, not read); a file that is not
    one (an array, a damaged download, a pickle of something else) is a ValueError naming it and the fix, not
    torch's traceback."""
    import pickle

    try:
        sd = torch.load(path, map_location="cpu", weights_only=True, mmap=mmap or None)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as e:
        first = ("not a weights-only torch.save file" if isinstance(e, pickle.UnpicklingError)  # torch's text is long
                 else (str(e).strip().splitlines() or [type(e).__name__])[0][:120])
        raise ValueError(f"weights file {path} cannot be read as PyTorch weights ({first}): {WRONG_WEIGHTS_FIX}") from e
    if not isinstance(sd, dict):
        raise ValueError(f"weights file {path} does not hold a state dict (got {type(sd).__name__}): {WRONG_WEIGHTS_FIX}")
    return sd


def loaded_architecture(state_dict: dict[str, torch.Tensor]) -> nn.Module:
    """The FID Inception with every tensor taken from `state_dict` (no random initialisation)."""
    with torch.device("meta"):  # no random init: every tensor comes from the state dict
        net = fid_inception_architecture()
    try:
        net.load_state_dict(state_dict, assign=True)
    except RuntimeError as e:
        raise ValueError(f"weights are not a FID Inception state dict: {str(e).splitlines()[0]}: {WRONG_WEIGHTS_FIX}") from e
    if any(t.is_meta for t in (*net.parameters(), *net.buffers())):
        raise ValueError(f"weights are not a FID Inception state dict: some tensors are missing: {WRONG_WEIGHTS_FIX}")
    return net


def inception_blocks(state_dict: dict[str, torch.Tensor], block: int = 3) -> nn.Sequential:
    """The FID Inception cut after `block` (0: 64-d, 1: 192-d, 2: 768-d, 3: 2048-d pool3), loaded
    with `state_dict`, in eval mode; the block layout is pytorch-fid's `InceptionV3`."""
    net: Any = loaded_architecture(state_dict)  # torchvision's Inception3 (untyped): its blocks by name
    stages: list[nn.Module] = [
        net.Conv2d_1a_3x3, net.Conv2d_2a_3x3, net.Conv2d_2b_3x3, nn.MaxPool2d(kernel_size=3, stride=2)
    ]
    if block >= 1:
        stages += [net.Conv2d_3b_1x1, net.Conv2d_4a_3x3, nn.MaxPool2d(kernel_size=3, stride=2)]
    if block >= 2:
        stages += [net.Mixed_5b, net.Mixed_5c, net.Mixed_5d, net.Mixed_6a,
                   net.Mixed_6b, net.Mixed_6c, net.Mixed_6d, net.Mixed_6e]
    if block >= 3:
        stages += [net.Mixed_7a, net.Mixed_7b, net.Mixed_7c, nn.AdaptiveAvgPool2d(output_size=(1, 1))]
    model = nn.Sequential(*stages).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


SPATIAL_CHANNELS = 7  # the ADM evaluator keeps mixed_6/conv[..., :7]


class SpatialCut(nn.Module):
    """N×C×17×17 -> N×(17·17·7): the first 7 channels, flattened in TensorFlow's (height, width, channel) order,
    as the ADM evaluator reshapes `mixed_6/conv:0[..., :7]`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :SPATIAL_CHANNELS].permute(0, 2, 3, 1).reshape(x.shape[0], -1)


def inception_spatial(state_dict: dict[str, torch.Tensor]) -> nn.Sequential:
    """The FID Inception up to the ADM evaluator's spatial features (sFID): `Mixed_6d.branch1x1` (TF
    `mixed_6/conv`, conv + batch norm + ReLU), its first 7 channels flattened (N×2023 at 299 px), eval mode."""
    net: Any = loaded_architecture(state_dict)  # torchvision's Inception3 (untyped): its blocks by name
    model = nn.Sequential(
        net.Conv2d_1a_3x3, net.Conv2d_2a_3x3, net.Conv2d_2b_3x3, nn.MaxPool2d(kernel_size=3, stride=2),
        net.Conv2d_3b_1x1, net.Conv2d_4a_3x3, nn.MaxPool2d(kernel_size=3, stride=2),
        net.Mixed_5b, net.Mixed_5c, net.Mixed_5d, net.Mixed_6a, net.Mixed_6b, net.Mixed_6c,
        net.Mixed_6d.branch1x1, SpatialCut(),
    ).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


class Logits(nn.Module):
    """The FID Inception's 1008-way classifier on pool3 features: x·Wᵀ + b, or x·Wᵀ alone (`bias=False`: the
    'logits_unbiased' torch-fidelity and the original TensorFlow Inception Score code use)."""

    def __init__(self, fc: nn.Linear, bias: bool = True) -> None:
        super().__init__()
        self.fc = fc
        self.bias = bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.flatten(x, 1)
        return F.linear(x, self.fc.weight, self.fc.bias if self.bias else None)


def inception_logits(state_dict: dict[str, torch.Tensor], bias: bool = True) -> nn.Sequential:
    """The FID Inception up to its classifier's logits (N×1008), loaded with `state_dict`, in eval mode."""
    blocks = inception_blocks(state_dict, 3)
    fc = nn.Linear(2048, 1008)
    try:
        fc.load_state_dict({"weight": state_dict["fc.weight"], "bias": state_dict["fc.bias"]})
    except (KeyError, RuntimeError) as e:
        raise ValueError(f"weights hold no 2048→1008 classifier (fc.weight, fc.bias) for logits: {e}") from e
    model = nn.Sequential(*blocks, Logits(fc, bias)).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def random_state_dict(seed: int = 0) -> dict[str, torch.Tensor]:
    """A randomly initialised FID Inception state dict (He-normal convolutions, so activations stay
    of order one): stand-in weights for tests and timing, never for reported numbers."""
    g = torch.Generator().manual_seed(seed)
    net = fid_inception_architecture()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.Conv2d):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.fill_(1.0)
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
                assert m.running_mean is not None and m.running_var is not None  # track_running_stats
                m.running_mean.zero_()
                m.running_var.fill_(1.0)
            elif isinstance(m, nn.Linear):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * m.weight.shape[1] ** -0.5)
                m.bias.zero_()
    return net.state_dict()


def save_random_weights(path: str | os.PathLike, seed: int = 0) -> Path:
    """Write `random_state_dict(seed)` to `path` (atomically) and return the path."""
    from ganeval.common import atomic_torch_save

    atomic_torch_save(random_state_dict(seed), path)
    return Path(path)


@register("inception", dims=(2048, 64, 192, 768), resize=tuple(RESIZE_MODES), weights=True,
          help="pytorch-fid's FID Inception, pool3 (--dims 64/192/768: an earlier block)")
class InceptionExtractor(Extractor):
    """pytorch-fid's FID Inception features (pool3 2048-d by default; 64/192/768 selectable).

    Preprocessing is pytorch-fid's: uint8 -> [0, 1] floats (x/255), grayscale -> 3 equal channels,
    bilinear resize to 299×299 (`align_corners=False`, no antialias), then 2x - 1. Lower blocks are
    average-pooled to one vector per image, as pytorch-fid does. `output="logits"` gives the network's
    1008-way class logits instead (from pool3, so `dims` must stay 2048), `"logits_unbiased"` the same
    without the classifier's bias (what the Inception Score uses, as in torch-fidelity); `features=inception_logits`.
    `output="spatial"` gives the ADM evaluator's 2023-d spatial features for sFID (`features=inception_spatial`).
    `resize=False` feeds the image at its own size (at least 75×75; for tests). `channels_last` runs the network on NHWC
    tensors (None, the default: on a CPU, where oneDNN's NHWC convolutions take ~0.6× the time; features agree with
    NCHW's to float rounding, ~1e-6 relative); `autocast` ("float16" or "bfloat16") speeds up GPU runs, changes the
    numbers and is recorded in the identity.
    """

    def __init__(
        self,
        dims: int = 2048,
        weights: str | os.PathLike | None = None,
        resize: bool | str = True,
        channels_last: bool | None = None,
        autocast: str | None = None,
        download: bool = True,
        output: str = "features",
    ) -> None:
        if dims not in BLOCK_BY_DIMS:
            raise ValueError(f"dims must be one of {sorted(BLOCK_BY_DIMS)}, got {dims!r}")
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")
        if output != "features" and dims != 2048:
            raise ValueError(f"output={output!r} is fixed by the network (pool3 logits or mixed_6/conv): leave dims at "
                             f"2048, got {dims}")
        self.output = output
        # what metrics may take (Metric.input)
        self.outputs = {"features": "features", "spatial": "spatial"}.get(output, "logits")
        if autocast not in (None, "float16", "bfloat16"):
            raise ValueError(f"autocast must be None, 'float16' or 'bfloat16', got {autocast!r}")
        self.dims = dims
        self.block = BLOCK_BY_DIMS[dims]
        self.weights = weights
        self.resize_mode = resize_mode(resize)
        self.resize = self.resize_mode is not None
        if channels_last not in (None, True, False):
            raise ValueError(f"channels_last must be None (on a CPU), True or False, got {channels_last!r}")
        self.channels_last = channels_last
        self._nhwc = False  # the layout the network was moved to in `setup`
        self.autocast = autocast
        self.download = download
        self._path: Path | None = None
        self._model: nn.Module | None = None
        self._device: torch.device | None = None

    def feature_dim(self, shape: tuple[int, ...]) -> int:
        """Its block's dimension, 1008 logits, or the 2023-d spatial features, whatever the image size."""
        return {"spatial": 17 * 17 * 7, "features": self.dims}.get(self.output, 1008)

    def weights_path(self) -> Path:
        """The resolved weights file (resolved once per instance)."""
        if self._path is None:
            self._path = resolve_weights(self.weights, download=self.download)
            sha = weights_sha256(self._path)
            if not sha.startswith(PUBLISHED_SHA256_PREFIX):
                log.warning(
                    "Inception weights %s have SHA-256 %s..., not the published FID weights (%s...): "
                    "features are not comparable with published FID numbers",
                    self._path, short_hash(sha), PUBLISHED_SHA256_PREFIX,
                )
        return self._path

    def identity(self) -> dict[str, Any]:
        ident = {
            "name": "inception",
            "dims": self.dims,
            "block": self.block,
            "resize": RESIZE if self.resize else None,
            "preprocess": RESIZE_MODES[self.resize_mode or DEFAULT_RESIZE_MODE],
            "weights": weights_sha256(self.weights_path()),  # full SHA-256 (older versions kept 8 digits)
            "autocast": self.autocast,
        }
        if self.resize_mode not in (None, DEFAULT_RESIZE_MODE):  # the default keeps the identity it always had
            ident["resize_mode"] = self.resize_mode
        if self.output != "features":  # pool features keep the identity (and cache keys) they always had
            ident["output"] = self.output
        return ident

    def setup(self, device: torch.device) -> None:
        if self._model is None:
            sd = load_state_dict(self.weights_path())
            if self.output == "features":
                self._model = inception_blocks(sd, self.block)
            elif self.output == "spatial":
                self._model = inception_spatial(sd)
            else:
                self._model = inception_logits(sd, bias=self.output == "logits")
        if self._device != device:
            self._nhwc = device.type == "cpu" if self.channels_last is None else self.channels_last
            fmt = torch.channels_last if self._nhwc else torch.contiguous_format
            self._model = self._model.to(device, memory_format=fmt)  # type: ignore[call-overload]  # torch's stub: no device with memory_format
            self._device = device

    def host_work(self) -> bool:
        """Only clean mode resizes on the host; the other modes' host stage passes the batch through."""
        return self.resize_mode == "clean"

    def host_stage(self, batch: torch.Tensor) -> torch.Tensor:
        """clean mode: clean-fid's PIL resize on the host (N×3×299×299 floats in [0, 255]); others: the batch."""
        return pil_float_bicubic(batch, RESIZE) if self.resize_mode == "clean" else batch

    def device_stage(self, batch: torch.Tensor) -> torch.Tensor:
        if self.resize_mode == "clean":
            return self.forward((batch - 128) / 128)
        return self(batch)

    def preprocess(self, batch: torch.Tensor) -> torch.Tensor:
        """Images -> the network's 299×299 input in [-1, 1], by the preprocessing mode."""
        if self.resize_mode == "clean":
            return (pil_float_bicubic(batch, RESIZE).to(batch.device) - 128) / 128
        if self.resize_mode == "legacy_tensorflow":
            return (tf1_bilinear(pixels_255(batch), RESIZE) - 128) / 128
        if self.resize_mode == "torchmetrics":
            return (antialiased_bilinear(pixels_255(batch), RESIZE) - 128) / 128
        x = to_rgb(images_to_float(batch))
        if self.resize:
            x = F.interpolate(x, size=(RESIZE, RESIZE), mode="bilinear", align_corners=False)
        elif min(x.shape[-2:]) < 75:
            raise ValueError(
                f"images of {x.shape[-2]}×{x.shape[-1]} are too small for Inception without resize; "
                "use resize=True (the default) or images of at least 75×75"
            )
        return 2 * x - 1

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        return self.forward(self.preprocess(batch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The network on a preprocessed input (pool features or logits), N×D float32."""
        if self._model is None or self._device != x.device:
            self.setup(x.device)
        assert self._model is not None
        if self._nhwc:
            x = x.contiguous(memory_format=torch.channels_last)
        if self.autocast is not None:
            with torch.autocast(device_type=x.device.type, dtype=getattr(torch, self.autocast)):
                y = self._model(x)
        else:
            y = self._model(x)
        if y.ndim == 4 and (y.shape[2] != 1 or y.shape[3] != 1):
            y = F.adaptive_avg_pool2d(y, output_size=(1, 1))
        return y.flatten(1).float()


__all__ = [
    "InceptionExtractor", "WeightsNotFoundError", "resolve_weights", "check_weights_available",
    "hub_weights_path", "inception_blocks", "inception_logits", "inception_spatial", "fid_inception_architecture",
    "random_state_dict", "save_random_weights", "load_state_dict", "weights_sha256", "WEIGHTS_URL", "WEIGHTS_FILENAME",
    "RESIZE_MODES", "resize_mode",
]
