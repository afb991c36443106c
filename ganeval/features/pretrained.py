"""Weights of library-built extractors (DINOv2 through timm, CLIP through open_clip), resolved as
Inception's are: the `weights` argument, then an environment variable, then the library's own cache
(the Hugging Face hub cache), then the library's download — and a clear error naming each place."""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path
from types import ModuleType
from typing import Callable

import torch

from ganeval.features.base import Extractor
from ganeval.features.inception import WeightsNotFoundError, weights_sha256

log = logging.getLogger(__name__)


def import_extra(module: str, extra: str, what: str) -> ModuleType:
    """Import an optional library, or say which ganeval extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"{what} needs the '{module}' package, an optional dependency: pip install 'ganeval[{extra}]'"
        ) from e


def hub_cached(repo_id: str, filenames: tuple[str, ...]) -> Path | None:
    """The first of `filenames` of a Hugging Face hub repository already in the local cache, else None."""
    from huggingface_hub import try_to_load_from_cache

    for name in filenames:
        hit = try_to_load_from_cache(repo_id, name)
        if isinstance(hit, str) and Path(hit).is_file():
            return Path(hit)
    return None


def hub_reachable(timeout: float = 3.0) -> str | None:
    """None when the Hugging Face hub's host answers a TCP connection within `timeout` seconds; else why not
    (offline mode set, no name resolution, no route): checked once, so an offline machine is told in seconds
    instead of after the hub client's retries (about a minute per file)."""
    import socket
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    url = urlsplit(constants.ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        return f"{host} unreachable (offline?): {e.strerror or type(e).__name__}"
    return None


def hub_download(repo_id: str, filenames: tuple[str, ...]) -> Path:
    """Download the first of `filenames` that the hub repository has (into the hub cache); an OSError at once when
    the hub cannot be reached (`hub_reachable`)."""
    from huggingface_hub import hf_hub_download

    offline = hub_reachable()
    if offline is not None:
        raise OSError(offline)
    errors = []
    for name in filenames:
        try:
            return Path(hf_hub_download(repo_id, name))
        except Exception as e:  # missing file in the repo, or no network: try the next, then report all
            errors.append(f"{name}: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
    raise OSError("; ".join(errors))


def resolve_library_weights(
    what: str,
    weights: str | os.PathLike | None,
    env: str,
    cached: Callable[[], Path | None],
    fetch: Callable[[], Path],
    manual: str,
    download: bool = True,
    url: str = "",
) -> Path:
    """The weights file for `what`: `weights`, then $`env`, then `cached()`, then `fetch()` if `download`.

    A path given explicitly (argument or environment) must exist: it is never silently replaced.
    Raises `WeightsNotFoundError` (naming `what`, `env` and the file's `url`) listing where it looked and `manual`
    (how to place the file by hand).
    """
    def fail(looked: list[str]) -> WeightsNotFoundError:
        where = "\n".join(f"  - {w}" for w in looked)
        return WeightsNotFoundError(f"{what} weights not found. Looked in:\n{where}\n{manual}", what, env, url)

    for given, source in ((weights, "the `weights` argument"), (os.environ.get(env, ""), f"${env}")):
        if given is not None and str(given) != "":
            p = Path(given).expanduser()
            if p.is_file():
                return p
            raise fail([f"{p} ({source}): no such file"])
    looked = [f"the `weights` argument and ${env}: not set"]
    hit = cached()
    if hit is not None:
        return hit
    looked.append("the Hugging Face hub cache ($HF_HOME, default ~/.cache/huggingface): not there")
    if not download:
        looked.append("download: disabled (download=false)")
        raise fail(looked)
    try:
        log.info("downloading %s weights", what)
        return fetch()
    except Exception as e:  # no network, HTTP error, disk error: all end the same way
        looked.append(f"download failed ({type(e).__name__}: {e})")
        raise fail(looked) from e


def resolve_hub_weights(what: str, repo: str, files: tuple[str, ...], env: str, fill_cache: str,
                        weights: str | os.PathLike | None, download: bool) -> Path:
    """`resolve_library_weights` for weights published on the Hugging Face hub as `repo`/`files`; `fill_cache` is
    the Python statement that downloads them into the cache on a machine with internet access."""
    manual = (
        f"On a machine with internet access run `python -c \"{fill_cache}\"` and copy its Hugging Face cache "
        f"(~/.cache/huggingface) here, or download https://huggingface.co/{repo}/resolve/main/{files[0]} and pass "
        f"its path as `weights=` (config key features.weights) or in ${env}."
    )
    return resolve_library_weights(what, weights, env, lambda: hub_cached(repo, files),
                                   lambda: hub_download(repo, files), manual, download,
                                   f"https://huggingface.co/{repo}/resolve/main/{files[0]}")


def tensor_shapes(path: Path, fix: str) -> dict[str, tuple[int, ...]]:
    """Name -> shape of the tensors a weights file holds, read without loading them where the format allows
    (safetensors' header, a zip torch.save file memory-mapped); ValueError naming the file and `fix` otherwise."""
    if path.suffix == ".safetensors":
        try:
            from safetensors import safe_open

            with safe_open(str(path), framework="pt") as f:
                return {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
        except Exception as e:  # a damaged or foreign file: one line, not the reader's traceback
            raise ValueError(f"weights file {path} cannot be read as safetensors ({type(e).__name__}): {fix}") from None
    from ganeval.features.inception import WRONG_WEIGHTS_FIX, load_state_dict

    try:
        try:
            sd = load_state_dict(path, mmap=True)
        except ValueError:  # a legacy (non-zip) torch.save file cannot be mapped: read it
            sd = load_state_dict(path)
    except ValueError as e:
        raise ValueError(str(e).replace(WRONG_WEIGHTS_FIX, fix)) from None
    return {k: tuple(v.shape) for k, v in sd.items() if isinstance(v, torch.Tensor)}


def check_weights_file(path: Path, what: str, key: str, shape: tuple[int | None, ...], fix: str) -> None:
    """Refuse, in one line before any network is built, a weights file that is not `what`'s: its tensor `key` must
    exist with `shape` (None: any size on that axis). An Inception .pth given for DINOv2 is named as such."""
    shapes = tensor_shapes(path, fix)
    got = shapes.get(key)
    if got is not None and len(got) == len(shape) and all(s is None or s == g for s, g in zip(shape, got)):
        return
    if got is not None:
        found = f"its {key} has shape {list(got)}, {what}'s {[s if s is not None else 'any' for s in shape]}"
    else:
        names = sorted(shapes)[:2]
        found = f"it has no tensor {key} (its tensors are named like {', '.join(names) or 'nothing'}"
        found += ": the FID Inception's)" if any(n.startswith(("Conv2d_1a", "Mixed_")) for n in shapes) else ")"
    raise ValueError(f"weights file {path} does not hold {what} weights ({found}): {fix}")


def weights_identity(path: Path) -> str:
    """The recorded identity of a weights file: its full SHA-256 (older versions recorded the first 16 hex digits)."""
    return weights_sha256(path)


class PretrainedExtractor(Extractor):
    """A library's pretrained network as an extractor: its weights file resolved once, the network built on first
    use and moved to the batches' device, preprocessing on the host (`host_stage`) and the forward on the device
    (`device_stage`). Subclasses say how to resolve the weights (`resolve`), build (`build`) and run (`forward`)."""

    _path: Path | None = None
    _model: torch.nn.Module | None = None
    _device: torch.device | None = None

    def resolve(self) -> Path:  # pragma: no cover - abstract
        raise NotImplementedError

    def build(self) -> torch.nn.Module:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def weights_path(self) -> Path:
        """The resolved weights file (resolved once per instance)."""
        if self._path is None:
            self._path = self.resolve()
        return self._path

    def setup(self, device: torch.device) -> None:
        if self._model is None:
            self._model = self.build()
        if self._device != device:
            self._model = self._model.to(device)
            self._device = device

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        return self.device_stage(self.host_stage(batch.cpu()).to(batch.device))

    def device_stage(self, x: torch.Tensor) -> torch.Tensor:
        if self._model is None or self._device != x.device:
            self.setup(x.device)
        with torch.inference_mode():
            return self.forward(x).float()
