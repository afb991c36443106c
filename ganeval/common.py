"""Small helpers shared by every layer: device resolution, array conversion, atomic writes, a writable check.

With `ganeval.hashing`, the ganeval modules that `metrics`, `features`, `data` and `gan` may import.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import torch

ArrayLike = Any  # numpy array or torch tensor


def resolve_device(device: str | torch.device | None, *arrays: ArrayLike) -> torch.device:
    """The device to compute on: `device` if given, else the first tensor input's device, else CPU."""
    if device is not None:
        return torch.device(device)
    for a in arrays:
        if isinstance(a, torch.Tensor):
            return a.device
    return torch.device("cpu")


def resolve_device_name(device: str | None) -> str:
    """A device name from a config: None/""/"auto" -> "cuda" when available, else "cpu"; others are checked."""
    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    name = str(device)
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={name!r} but CUDA is not available here; use device=cpu")
    try:
        torch.device(name)
    except RuntimeError as e:
        raise ValueError(f"device={name!r} is not a device torch knows ({e}); use cpu, cuda or cuda:N") from None
    return name


def as_tensor(a: ArrayLike, device: torch.device, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Convert a numpy array or tensor to a tensor on `device` (no copy when nothing changes)."""
    t = a if isinstance(a, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(a))
    return t.to(device=device, dtype=dtype or t.dtype)


_WRITTEN: dict[Path, set[str]] = {}  # folder -> names of the files this process wrote there (see `written_in`)


def written_in(directory: str | os.PathLike) -> set[str]:
    """Names of the files this process has written into `directory` through `atomic_path`."""
    return set(_WRITTEN.get(Path(directory).absolute(), ()))


def forget_written(directory: str | os.PathLike) -> None:
    """Start a new record of the files this process writes into `directory` (a new run begins there)."""
    _WRITTEN.pop(Path(directory).absolute(), None)


STAGING_BYTES = 1 << 26  # one pinned staging buffer (two alternate) of a host-to-device upload


def upload(a: ArrayLike, device: str | torch.device) -> torch.Tensor:
    """`a` (a numpy array, memory map or tensor) on `device` in its own dtype, copied once.

    A host array goes to a GPU through two alternating pinned staging buffers of STAGING_BYTES, so the
    copy runs at the link's speed without pinning (or first copying) the whole array; a tensor already on
    `device` is returned as is."""
    device = torch.device(device)
    src = a if isinstance(a, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(a))
    if device.type != "cuda" or src.device.type != "cpu" or src.numel() == 0:
        return src.to(device)
    src = src.contiguous()
    out = torch.empty(src.shape, dtype=src.dtype, device=device)
    row_bytes = max(1, src[0].numel() * src.element_size()) if src.ndim else src.element_size()
    rows = max(1, STAGING_BYTES // row_bytes)
    flat_src, flat_out = (src, out) if src.ndim else (src.reshape(1), out.reshape(1))
    buffers = [torch.empty((min(rows, len(flat_src)), *flat_src.shape[1:]), dtype=src.dtype, pin_memory=True)
               for _ in range(2)]
    done: list[torch.cuda.Event | None] = [None, None]
    with torch.cuda.device(device):
        for j, s in enumerate(range(0, len(flat_src), rows)):
            e, slot = min(s + rows, len(flat_src)), j % 2
            if done[slot] is not None:
                done[slot].synchronize()  # type: ignore[union-attr]  # its previous copy has left the buffer
            buffers[slot][: e - s].copy_(flat_src[s:e])
            flat_out[s:e].copy_(buffers[slot][: e - s], non_blocking=True)
            done[slot] = torch.cuda.Event()
            done[slot].record()  # type: ignore[union-attr]
        for event in done:
            if event is not None:
                event.synchronize()  # the buffers may be freed once this returns
    return out


class IndexUploader:
    """Index vectors (int64 numpy) to a GPU without a pageable copy: through a small ring of pinned buffers,
    each reused only once its previous copy has finished (no synchronisation of the device)."""

    def __init__(self, device: str | torch.device, slots: int = 4) -> None:
        self.device = torch.device(device)
        self._slots: list[tuple[torch.Tensor, torch.cuda.Event] | None] = [None] * slots
        self._next = 0

    def __call__(self, idx: np.ndarray) -> torch.Tensor:
        src = torch.from_numpy(np.ascontiguousarray(idx, dtype=np.int64))
        if self.device.type != "cuda":
            return src.to(self.device)
        i, self._next = self._next, (self._next + 1) % len(self._slots)
        slot = self._slots[i]
        if slot is None or slot[0].numel() < src.numel():
            buf = torch.empty(max(src.numel(), 1), dtype=torch.int64, pin_memory=True)
        else:
            buf = slot[0]
            slot[1].synchronize()
        buf[: src.numel()].copy_(src)
        with torch.cuda.device(self.device):
            out = buf[: src.numel()].to(self.device, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
        self._slots[i] = (buf, event)
        return out


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    from ganeval.safety import check_own_file

    check_own_file(path, "the file to write")  # a link or folder in its place is refused, never replaced
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual permissions
        os.replace(tmp, path)
        _WRITTEN.setdefault(path.parent.absolute(), set()).add(path.name)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write bytes to `path` atomically (temporary file, fsync, rename)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write text to `path` atomically."""
    atomic_write_bytes(path, text.encode())


def atomic_torch_save(obj: Any, path: str | os.PathLike) -> None:
    """`torch.save` to `path` atomically."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    atomic_write_bytes(path, buf.getvalue())


def atomic_np_save(path: str | os.PathLike, **arrays: np.ndarray) -> None:
    """Save arrays as an uncompressed `.npz` atomically."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def check_writable(path: Path, key: str) -> None:
    """Refuse a directory that cannot be created or written, before any work (probed on its nearest existing part)."""
    existing = path.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{key}={path} cannot be made: {existing} is a file; choose another {key}")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as e:
        raise ValueError(f"{key}={path} is not writable ({existing}: {e.strerror}); choose another {key} "
                         "or make it writable") from None
