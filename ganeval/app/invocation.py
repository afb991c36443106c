"""What one `ganeval` invocation writes before its work begins, so that a refused one leaves nothing behind.

Hydra makes its run folder (the results directory), writes `.hydra/{config,hydra,overrides}.yaml` there and opens
`ganeval.log` before the app can check anything. So the `${ganeval.results_dir:}` resolver, which runs before all
that, notes here what the folder held (`note`); when the app then refuses the command (exit 2) and the invocation
wrote nothing else there, `undo` puts the folder back as it was: Hydra's files removed or their old bytes restored,
the refusal's lines cut from an older `ganeval.log`, the folders Hydra made removed when empty. Only those names are
touched, never through a link (a link planted at them is left alone). Scratch folders made for Hydra when the
results directory cannot be written (or for a dry run) are removed when the command ends (`end`).
Light: no torch, so a refusal stays fast.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

HYDRA_DIR = ".hydra"
HYDRA_FILES = ("config.yaml", "hydra.yaml", "overrides.yaml")
LOG = "ganeval.log"
Entry = tuple[str, int, int, int, int]  # relative path, mode, size, mtime_ns, inode


@dataclass(frozen=True)
class Before:
    """A results folder as the resolver found it, before Hydra wrote to it."""

    made: Path | None  # the topmost folder Hydra will create for it (None: it existed)
    hydra: dict[str, bytes] | None  # Hydra's files there and their bytes (None: no .hydra folder)
    log_size: int | None  # ganeval.log's size (None: none)
    tree: frozenset[Entry]  # everything else in it


_BEFORE: dict[Path, Before] = {}
_SCRATCH: list[Path] = []


def _regular(p: Path) -> os.stat_result | None:
    """lstat of `p` when it is a regular file (not a link), else None."""
    try:
        st = os.lstat(p)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _is_dir(p: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(p).st_mode)
    except OSError:
        return False


def _tree(d: Path) -> frozenset[Entry]:
    """Every entry under `d` but Hydra's files and the log (links listed, never followed)."""
    out: set[Entry] = set()
    for root, dirs, files in os.walk(d, followlinks=False):
        rel = os.path.relpath(root, d)
        if rel == ".":
            dirs[:] = [n for n in dirs if n != HYDRA_DIR]
        for name in dirs + files:
            if rel == "." and name == LOG:
                continue
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            out.add((os.path.join(rel, name), st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino))
    return frozenset(out)


def note(path: Path) -> None:
    """Record what the results folder `path` holds, once per process (the resolver may run more than once)."""
    path = path.absolute()
    if path in _BEFORE:
        return
    made = None
    probe = path
    while not os.path.lexists(probe):
        made, probe = probe, probe.parent
    for p in (path / HYDRA_DIR, *(path / HYDRA_DIR / n for n in HYDRA_FILES), path / LOG):
        if os.path.islink(p):  # Hydra would write through it
            raise ValueError(f"{p} is a symbolic link (to {os.readlink(p)}); ganeval never writes through a link: "
                             "remove the link or choose another results_dir")
    hydra = None
    if _is_dir(path / HYDRA_DIR):
        hydra = {n: (path / HYDRA_DIR / n).read_bytes() for n in HYDRA_FILES if _regular(path / HYDRA_DIR / n)}
    log = _regular(path / LOG)
    _BEFORE[path] = Before(made, hydra, log.st_size if log else None, _tree(path) if _is_dir(path) else frozenset())


def scratch_dir() -> str:
    """A scratch folder for Hydra's run folder (one per command, however often the resolver runs), removed when the
    command ends (`end`)."""
    if not _SCRATCH:
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="ganeval-hydra-")))
    return str(_SCRATCH[0])


def _close_logs_under(d: Path) -> None:
    """Detach and close the root logger's file handlers that write under `d` (the refusal is on the console)."""
    root = logging.getLogger()
    for h in list(root.handlers):
        name = getattr(h, "baseFilename", None)
        if name is not None and Path(name).absolute().is_relative_to(d):
            root.removeHandler(h)
            h.close()


def _write_back(p: Path, data: bytes) -> None:
    """Put `data` back at `p` atomically (a temporary file renamed over it: a link there is replaced, not followed)."""
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _restore_hydra(d: Path, before: dict[str, bytes] | None) -> None:
    hd = d / HYDRA_DIR
    if not _is_dir(hd):
        return
    for name in HYDRA_FILES:
        p = hd / name
        if before is not None and name in before:
            if _regular(p) is None or p.read_bytes() != before[name]:
                _write_back(p, before[name])
        elif _regular(p) is not None:
            p.unlink()
    if before is None:
        try:
            hd.rmdir()  # only when empty: nothing else was put there
        except OSError:
            pass


def _restore_log(p: Path, size: int | None) -> None:
    st = _regular(p)
    if st is None:
        return
    if size is None:
        p.unlink()
    elif st.st_size > size:
        fd = os.open(p, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)


def undo(path: Path) -> bool:
    """After a refusal: put the results folder `path` back as `note` found it, when Hydra's files and the log are all
    this invocation wrote there (anything else new or changed: keep Hydra's record of the command that did it).
    Returns whether it did."""
    path = path.absolute()
    before = _BEFORE.get(path)
    if before is None or not _is_dir(path) or _tree(path) != before.tree:
        return False
    _close_logs_under(path)
    _restore_hydra(path, before.hydra)
    _restore_log(path / LOG, before.log_size)
    if before.made is not None:
        d = path
        while True:
            try:
                d.rmdir()  # the folders Hydra made, when empty
            except OSError:
                break
            if d == before.made:
                break
            d = d.parent
    return True


def end() -> None:
    """The command ends: remove the scratch folders made for Hydra (after closing the log files in them; links
    inside are removed, never followed) and forget what `note` recorded."""
    while _SCRATCH:
        d = _SCRATCH.pop()
        _close_logs_under(d)
        shutil.rmtree(d, ignore_errors=True)
    _BEFORE.clear()
