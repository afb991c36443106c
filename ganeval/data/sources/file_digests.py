"""SHA-256 digests of many files, read and hashed in parallel threads, remembered by their stat in a cache folder.

The identity of a folder of images is a digest over every file's bytes (`ganeval.hashing.FilesHasher`); reading
a 50k folder's 7 GB for it costs about as much as extracting its features on a GPU. Threads read and hash the files
at once (file reads and hashlib release the GIL). With a memo folder (`--cache-dir`'s `files/`), each file's digest is
kept with its stat — size, mtime and ctime in nanoseconds, inode and device — and used again while that stat is
unchanged, as git's index does.

What the memo trusts: that a file whose stat is unchanged holds the bytes it held when hashed, *provided its last
change (ctime and mtime) was at least `RACY_SECONDS` before it was hashed*. A write(2) moves the ctime at once, and
no tool can set a ctime back; but a write through a shared `mmap` to a page that is already dirty moves neither time
until the kernel writes that page back (Linux: within `vm.dirty_expire_centisecs` + `vm.dirty_writeback_centisecs`,
35 s by default), and two writes in one clock tick leave one time. So a digest is remembered only for a file whose
last change is older than twice that writeback delay (70 s by default; at least 2 s; never when periodic writeback
is off): its mmap'd pages were written back by then, and a later write through them moves its times again. A file
changed more recently is read again on every run until it has been left alone that long. Not covered: writeback
held back longer than that (a stalled device), and a file system whose times do not move on writes.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ganeval.hashing import file_digests, file_sha256, stable_hash

MEMO_FORMAT = 1


def writeback_margin(vm: str = "/proc/sys/vm") -> float:
    """Seconds a file must have been left alone before its digest is remembered: twice the kernel's longest delay
    before a dirty page is written back (expiry + writeback interval, `vm`'s centiseconds; 70 s where unknown), at
    least 2 s (one coarse clock tick); infinite when periodic writeback is off (dirty pages may stay unwritten)."""
    try:
        expire, every = (int(Path(vm, f).read_text()) for f in ("dirty_expire_centisecs",
                                                                   "dirty_writeback_centisecs"))
    except (OSError, ValueError):
        expire, every = 3000, 500
    if every <= 0:
        return math.inf
    return max(2.0, 2 * (expire + every) / 100)


RACY_SECONDS = writeback_margin()  # an entry hashed less than this after the file's last change is not trusted later


def stat_key(path: str | os.PathLike) -> list[int]:
    """What a remembered digest is checked against: size, mtime_ns, ctime_ns, inode, device."""
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _memo_path(memo_dir: Path, root: Path, kind: str) -> Path:
    key = stable_hash({"root": str(root.resolve()), "kind": kind, "format": MEMO_FORMAT}, 32)
    return memo_dir / f"{key}.json"


def _load(memo: Path) -> dict[str, list]:
    """name -> [stat key..., hex digest] from a memo file (empty when absent, a link, unreadable or of another
    format: the digests are computed again)."""
    if not memo.is_file() or memo.is_symlink():
        return {}
    try:
        found = json.loads(memo.read_text())
        return dict(found["files"]) if found.get("format") == MEMO_FORMAT else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def digests(root: str | os.PathLike, names: Sequence[str], memo_dir: str | os.PathLike | None = None, *,
            kind: str = "sha256", compute: Callable[[str], bytes] | None = None) -> list[bytes]:
    """The digest of each file `root/name`, in the order of `names`: from the memo where the file's stat is
    unchanged, else computed in threads (`ganeval.hashing.file_digests`); the memo (in `memo_dir`) then rewritten
    atomically.
    `kind` names what a digest is (memos of different kinds never mix): "sha256" of the file's bytes by default,
    else `compute(path)` (e.g. an archive's digest over its members)."""
    from ganeval.common import atomic_write_text

    base = Path(root)
    paths = [os.path.join(base, n) for n in names]
    memo = _memo_path(Path(memo_dir), base, kind) if memo_dir is not None else None
    known = _load(memo) if memo is not None else {}
    stats = [stat_key(p) for p in paths] if memo is not None else [None] * len(paths)  # serial: threads slow tiny calls
    out: list[bytes | None] = [None] * len(names)
    for i, (name, st) in enumerate(zip(names, stats)):
        entry = known.get(name)
        if entry is not None and entry[:-1] == st:
            out[i] = bytes.fromhex(entry[-1])
    todo = [i for i, d in enumerate(out) if d is None]
    started = time.time_ns()
    for i, d in zip(todo, file_digests([paths[i] for i in todo], compute or file_sha256)):
        out[i] = d
    if memo is not None and todo:
        racy = started - int(RACY_SECONDS * 1e9) if math.isfinite(RACY_SECONDS) else -1
        keep = {n: [*st, d.hex()] for n, st, d in zip(names, stats, out) if st is not None and d is not None
                and max(st[1], st[2]) < racy}  # left alone long enough (see the module doc): else read again
        memo.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(memo, json.dumps({"format": MEMO_FORMAT, "root": str(base.resolve()), "kind": kind,
                                            "files": keep}))
    return out  # type: ignore[return-value]
