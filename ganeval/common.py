"""Small helpers shared by every layer: device resolution, array conversion, atomic writes, a writable check.

With `ganeval.hashing`, the ganeval modules that `metrics`, `features`, `data` and `gan` may import.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator, cast

import numpy as np
import torch

ArrayLike = Any  # numpy array or torch tensor


def check_plain(a: Any, name: str) -> None:
    """ValueError (one line) for an input whose values ganeval cannot read as they are meant: a tensor on the meta
    device (a shape, no values) or a numpy masked array (its mask would be ignored: the masked values scored)."""
    if isinstance(a, torch.Tensor) and a.is_meta:
        raise ValueError(f"{name} is a tensor on the meta device (shape {tuple(a.shape)}, no values): give a tensor "
                         "that holds its data, on cpu or cuda")
    if isinstance(a, np.ma.MaskedArray):
        raise ValueError(f"{name} is a numpy masked array: ganeval would score its masked values too; drop the masked "
                         "rows (a[~a.mask.any(axis=1)]) or pass a.filled(...) / a.data, as you mean it")


def progress_bar(*args: Any, **kwargs: Any) -> Any:
    """A tqdm bar: the notebook widget where a Jupyter kernel runs and ipywidgets is installed, else tqdm's text bar
    (`tqdm.auto` without ipywidgets warns "IProgress not found" and falls back to text: the user caused nothing)."""
    if "ipykernel" in sys.modules:
        try:
            importlib.import_module("ipywidgets")  # tqdm.auto's widget needs it
        except ImportError:
            pass
        else:
            from tqdm.auto import tqdm as auto

            return auto(*args, **kwargs)
    from tqdm import tqdm

    return tqdm(*args, **kwargs)


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
def atomic_path(path: str | os.PathLike, replace: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to `path`; move it onto `path` only if the block succeeds. `replace=False`: never
    over an existing file, even one that appeared meanwhile (another process writing the same new path): it is
    hard-linked into place, which fails when the name exists (FileExistsError, naming the path)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    from ganeval.safety import check_own_file

    check_own_file(path, "the file to write")  # a link or folder in its place is refused, never replaced
    _remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_HOST}~{os.getpid()}~", suffix=".tmp", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual permissions
        if replace:
            os.replace(tmp, path)
        else:
            _create(Path(tmp), path)
        _WRITTEN.setdefault(path.parent.absolute(), set()).add(path.name)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


_HOST = socket.gethostname().replace("~", "-")  # in a temporary's name, with the writer's pid
STALE_SECONDS = 24 * 3600  # a temporary of no known writer (older versions' names) is removed after this


def _remove_stale_temporaries(path: Path) -> None:
    """Remove the temporaries of `path` that a killed save left (`.NAME.HOST~PID~*.tmp`): those whose writer on
    this host is gone, and those of no known writer older than STALE_SECONDS. A live writer's is kept."""
    import glob
    import time

    prefix = f".{path.name}."
    for tmp in path.parent.glob(f"{glob.escape(prefix)}*.tmp"):
        parts = tmp.name[len(prefix):].split("~")
        try:
            if len(parts) == 3 and parts[1].isdigit():
                if parts[0] != _HOST or _alive(int(parts[1])):
                    continue
            elif time.time() - tmp.lstat().st_mtime < STALE_SECONDS:
                continue
            tmp.unlink()
        except OSError:  # gone meanwhile, or not ours to remove
            pass


def _alive(pid: int) -> bool:
    """Whether process `pid` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _create(tmp: Path, path: Path) -> None:
    """Put the finished `tmp` at `path` only if no file is there: a hard link (atomic, fails on an existing name)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise FileExistsError(f"{path} exists (written meanwhile by another process?): not replaced; remove it or "
                              "pass --overwrite") from None


def atomic_write_bytes(path: str | os.PathLike, data: bytes, replace: bool = True) -> None:
    """Write bytes to `path` atomically (temporary file, fsync, rename); `replace=False`: never over an existing file."""
    with atomic_path(path, replace) as tmp:
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


def atomic_np_save(path: str | os.PathLike, replace: bool = True, **arrays: np.ndarray) -> None:
    """Save arrays as an uncompressed `.npz` atomically (`replace=False`: never over an existing file)."""
    buf = io.BytesIO()
    np.savez(buf, **cast(dict[str, Any], arrays))  # numpy's stub types **kwds as its own keyword `allow_pickle`
    atomic_write_bytes(path, buf.getvalue(), replace)
