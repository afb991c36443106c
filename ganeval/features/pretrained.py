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


def hub_download(repo_id: str, filenames: tuple[str, ...]) -> Path:
    """Download the first of `filenames` that the hub repository has (into the hub cache)."""
    from huggingface_hub import hf_hub_download

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
) -> Path:
    """The weights file for `what`: `weights`, then $`env`, then `cached()`, then `fetch()` if `download`.

    A path given explicitly (argument or environment) must exist: it is never silently replaced.
    Raises `WeightsNotFoundError` listing where it looked and `manual` (how to place the file by hand).
    """
    def fail(looked: list[str]) -> WeightsNotFoundError:
        where = "\n".join(f"  - {w}" for w in looked)
        return WeightsNotFoundError(f"{what} weights not found. Looked in:\n{where}\n{manual}")

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
                                   lambda: hub_download(repo, files), manual, download)


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
