"""Content hashing: the one place that turns configs, files, folders, arrays and tensors into SHA-256 hex.

Every key that guards reuse is made here (config hashes, feature-cache keys and checksums, the training
data fingerprint, generator file/folder identities, stored-run identities), so the byte rules are
written once. Values are part of what is on disk: changing a rule orphans existing caches,
checkpoints and results. Importable by every layer (numpy, torch and the standard library only).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import numpy as np
import torch

_CHUNK = 1 << 24  # bytes fed to SHA-256 at a time: bounded extra memory for huge arrays and files


def _cut(digest: str, length: int | None) -> str:
    """The first `length` hex characters of `digest` (all of it when `length` is None)."""
    return digest[:length] if length else digest


SHOWN = 8  # hex digits of a content hash where one is displayed (logs, tables, report); stored hashes are full
SHORTEST_STORED = 8  # the shortest content hash older versions stored (generators' files, Inception's weights)
_HEX = frozenset("0123456789abcdef")


def short_hash(digest: str) -> str:
    """A stored hash as it is displayed: its first SHOWN hex digits (what older versions stored, so both read alike)."""
    return digest[:SHOWN]


def shown_extractor(identity: Any) -> Any:
    """An extractor identity as displayed (report, messages): its "weights" hash short; what is stored keeps it full."""
    if isinstance(identity, Mapping) and isinstance(identity.get("weights"), str):
        return {**identity, "weights": short_hash(identity["weights"])}
    return identity


def shown_identity(identity: Any) -> Any:
    """An input's identity as displayed (report): every hex hash under a key ending in "sha256" short, nested too;
    what is stored keeps them full."""
    if isinstance(identity, Mapping):
        return {k: (short_hash(v) if str(k).endswith("sha256") and isinstance(v, str) and set(v) <= _HEX
                    else shown_identity(v)) for k, v in identity.items()}
    if isinstance(identity, list):
        return [shown_identity(v) for v in identity]
    return identity


def cut_short_form(stored: Any, now: Any) -> bool:
    """Whether `stored` is `now` as an older ganeval stored it: hex of SHORTEST_STORED or more digits that is a proper
    prefix of the current (longer) hex hash `now`. What lets results, caches and references of older versions be used."""
    return (isinstance(stored, str) and isinstance(now, str) and SHORTEST_STORED <= len(stored) < len(now)
            and set(stored) <= _HEX and set(now) <= _HEX and now.startswith(stored))


def _numpy(a: np.ndarray | torch.Tensor) -> np.ndarray:
    """A numpy view (or CPU copy) of an array or tensor, whose bytes are what gets hashed."""
    return a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)


def _update_array(h: Any, a: np.ndarray) -> None:
    """Feed the array's bytes in C order (a copy only if it is not C-contiguous) to `h`."""
    flat = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    for i in range(0, flat.size, _CHUNK):
        h.update(flat[i : i + _CHUNK].data)


def _update_file(h: Any, path: str | os.PathLike) -> None:
    """Feed a file's bytes to `h` in chunks."""
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)


def stable_hash(obj: Any, length: int = 16) -> str:
    """Hash of a JSON-serialisable object with sorted keys (others by str()): the identity of a config."""
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return _cut(hashlib.sha256(text.encode()).hexdigest(), length)


def sha256_file(path: str | os.PathLike, length: int | None = None) -> str:
    """SHA-256 of a file's bytes (a checkpoint, weights or samples file), cut to `length` hex characters."""
    h = hashlib.sha256()
    _update_file(h, path)
    return _cut(h.hexdigest(), length)


FILES_FORMAT = 2  # the rule of `FilesHasher`; format 1 (name, NUL, bytes: not injective) is never matched


class FilesHasher:
    """SHA-256 over named files in the order added: a format tag, then per file the name's length and name, and the
    SHA-256 of its bytes. Lengths and per-file digests make it injective (no byte can move from one file to the
    next, as it could under format 1's name + NUL + bytes); the one rule of folder and archive identities."""

    def __init__(self) -> None:
        self._h = hashlib.sha256(f"ganeval-files/{FILES_FORMAT}\0".encode())

    def add(self, name: str, data: bytes | None = None, path: str | os.PathLike | None = None) -> None:
        """Add one file, named `name`, from `data` or else from the file at `path`."""
        h = hashlib.sha256()
        if data is not None:
            h.update(data)
        else:
            assert path is not None
            _update_file(h, path)
        self.add_digest(name, h.digest())

    def add_digest(self, name: str, digest: bytes) -> None:
        """Add one file, named `name`, by the SHA-256 digest of its bytes (computed elsewhere, e.g. in parallel)."""
        encoded = name.encode("utf-8", "surrogateescape")  # undecodable names (bytes kept by os) still hash
        self._h.update(len(encoded).to_bytes(8, "little") + encoded + digest)

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def hash_threads() -> int:
    """Threads reading and hashing files at once (file reads and hashlib release the GIL): the CPU cores this
    process may use, at most 8."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(8, cores))


def file_sha256(path: str | os.PathLike) -> bytes:
    """The raw SHA-256 digest of one file's bytes."""
    h = hashlib.sha256()
    _update_file(h, path)
    return h.digest()


PathT = TypeVar("PathT", bound="str | os.PathLike")


def file_digests(paths: Sequence[PathT], digest: Callable[[PathT], bytes] = file_sha256) -> list[bytes]:
    """`digest` (by default `file_sha256`) of each file, in order, in `hash_threads()` threads."""
    if len(paths) < 2:
        return [digest(p) for p in paths]
    with ThreadPoolExecutor(hash_threads()) as pool:
        return list(pool.map(digest, paths))


def files_digest(named: Iterable[tuple[str, bytes]]) -> str:
    """The `FilesHasher` hex digest of (name, SHA-256 of its bytes) pairs, in the order given."""
    h = FilesHasher()
    for name, d in named:
        h.add_digest(name, d)
    return h.hexdigest()


def sha256_folder(root: str | os.PathLike, files: Iterable[str | os.PathLike], length: int | None = None) -> str:
    """The `FilesHasher` digest of `files` under `root`, sorted by relative path (the order given does not matter);
    the files read in parallel."""
    base = Path(root)
    named = sorted((Path(f).relative_to(base).as_posix(), Path(f)) for f in files)
    return _cut(files_digest(zip([n for n, _ in named], file_digests([f for _, f in named]))), length)


def _update_any(h: Any, a: np.ndarray | torch.Tensor) -> tuple[list[int], str]:
    """Feed an array's or tensor's C-order bytes to `h`; return its shape and (numpy-style) dtype name.

    A tensor is streamed through one buffer of _CHUNK bytes (pinned for a GPU tensor): SHA-256 runs on the
    host, but a pool is never copied there whole."""
    if not isinstance(a, torch.Tensor):
        arr = np.asarray(a)
        _update_array(h, arr)
        return list(arr.shape), str(arr.dtype)
    t = a.detach()
    shape, dtype = list(t.shape), str(t.dtype).removeprefix("torch.")
    flat = t.contiguous().reshape(-1).view(torch.uint8)
    buf = torch.empty(min(_CHUNK, flat.numel()), dtype=torch.uint8, pin_memory=flat.device.type == "cuda")
    for i in range(0, flat.numel(), _CHUNK):
        part = flat[i : i + _CHUNK]
        buf[: part.numel()].copy_(part)
        h.update(buf[: part.numel()].numpy().data)
    return shape, dtype


def array_identity(a: np.ndarray | torch.Tensor, length: int | None = None) -> dict[str, Any]:
    """Shape, dtype and SHA-256 of an array's C-order bytes: what data-dependent results are keyed on
    (the same for a numpy array and a tensor of the same values, wherever the tensor lives)."""
    h = hashlib.sha256()
    shape, dtype = _update_any(h, a)
    return {"shape": shape, "dtype": dtype, "sha256": _cut(h.hexdigest(), length)}


def array_checksum(a: np.ndarray | torch.Tensor) -> str:
    """SHA-256 of an array's bytes followed by its shape and dtype: one hex string that checks a stored array."""
    h = hashlib.sha256()
    shape, dtype = _update_any(h, a)
    h.update(json.dumps([shape, dtype]).encode())
    return h.hexdigest()


def state_dict_sha256(state: Mapping[str, Any], length: int | None = None) -> str:
    """SHA-256 of a state dict in key order: each tensor's name, shape, dtype and bytes (other entries as JSON).

    What identifies weights held in memory, the way `sha256_file` identifies a weights file.
    """
    h = hashlib.sha256()
    for name in sorted(state):
        value = state[name]
        if not isinstance(value, torch.Tensor):
            h.update(json.dumps([name, value], sort_keys=True, default=str).encode())
            continue
        t = value.detach().cpu().contiguous()
        h.update(json.dumps([name, list(t.shape), str(t.dtype)]).encode())
        _update_array(h, t.reshape(-1).view(torch.uint8).numpy())  # raw bytes: numpy has no bfloat16
    return _cut(h.hexdigest(), length)


class StreamHasher:
    """Incremental SHA-256 over the batches of one set: bytes in order, then the count, item shape and dtype.

    The digest depends only on the content, not on how it was split into batches.
    """

    def __init__(self) -> None:
        self._h = hashlib.sha256()
        self.n = 0
        self.item_shape: tuple[int, ...] | None = None
        self.dtype: str | None = None

    def update(self, batch: np.ndarray | torch.Tensor) -> None:
        """Add a batch (N×…); every batch must have the first one's item shape and dtype."""
        a = _numpy(batch)
        shape, dtype = tuple(a.shape[1:]), str(a.dtype)
        if self.item_shape is None:
            self.item_shape, self.dtype = shape, dtype
        elif (shape, dtype) != (self.item_shape, self.dtype):
            raise ValueError(
                f"batches disagree: items of shape {shape} {dtype} after {self.item_shape} {self.dtype}"
            )
        _update_array(self._h, a)
        self.n += a.shape[0]

    def bytes_hexdigest(self) -> str:
        """SHA-256 of the bytes added so far alone (without the count, shape and dtype): `hashlib.sha256` over the
        same bytes, which `array_identity` records, without hashing them a second time."""
        return self._h.hexdigest()

    def hexdigest(self) -> str:
        """The digest of everything added so far (more batches may still be added)."""
        h = self._h.copy()
        h.update(json.dumps([self.n, self.item_shape, self.dtype]).encode())
        return h.hexdigest()
