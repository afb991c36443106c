"""Guards for files ganeval writes into folders it does not own: never follow a link, never write through a folder.

One job: open (or check) a path ganeval is about to write so that a symlink planted there, or a folder in its
place, is refused with one line naming the path, instead of truncating whatever the link points to.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class UnsafePathError(ValueError):
    """A path ganeval would write is a link, a folder or another non-regular file."""


def check_own_file(path: str | os.PathLike, what: str) -> None:
    """Refuse `path` when it exists and is not a regular file (a symlink, even to a file, counts as not)."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(f"{what} {p} is a symbolic link (to {os.readlink(p)}); ganeval never writes through "
                              "a link: remove the link or choose another results_dir")
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise UnsafePathError(f"{what} {p} is {kind}; remove it or choose another results_dir")


def open_own_file(path: str | os.PathLike, what: str, flags: int = os.O_RDWR | os.O_CREAT) -> int:
    """`os.open` of a regular file that is not followed through a link (O_NOFOLLOW); UnsafePathError otherwise."""
    check_own_file(path, what)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | nofollow, 0o644)
    except OSError as e:  # ELOOP: a link planted between the check and the open; EISDIR: a folder
        raise UnsafePathError(f"{what} {path} cannot be opened safely ({e.strerror}); remove it or choose another "
                              "results_dir") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePathError(f"{what} {path} is not a regular file; remove it or choose another results_dir")
    return fd
