"""Small helpers shared by every layer: device resolution, array conversion, atomic writes.

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
