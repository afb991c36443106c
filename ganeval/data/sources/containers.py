"""Where image files live: a folder (recursive), a `.zip` or an uncompressed `.tar`, listed and checked up front.

A container lists its image members in one order (sorted by relative path, as `ganeval.data.list_images`),
reads one member's bytes (from any worker process: archive handles are reopened per process) and hashes
names and bytes. An archive is refused, naming the member, when a member path is absolute or climbs out
with `..`, is itself an archive, is not an image file, or declares a decompressed size that is huge or far
above its compressed size (a zip bomb): all from the archive's index, before anything is decoded.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from ganeval.data.files import IMAGE_EXTENSIONS, list_images

ARCHIVE_EXTENSIONS = (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".lz4", ".npz")
ALLOWED_OTHER = ("dataset.json",)  # the labels file of StyleGAN/EDM dataset_tool zips, at the root: not an image
MAX_MEMBER_BYTES = 256 << 20  # one image file larger than this (decompressed) is refused as a bomb
MAX_RATIO = 200  # declared size / compressed size above this (and above 1 MiB) is refused as a bomb


class Container:
    """The image members of a folder or archive: `names` (sorted), `read(name)`, `file_hash()`."""

    kind = "container"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: list[str] = []

    def read(self, name: str) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError

    def head(self, name: str, n: int) -> bytes:
        """At least the first `n` bytes of a member (its header), with every check `read` makes: the whole member
        where only the whole can be checked (an archive member's CRC)."""
        return self.read(name)

    def raw(self, name: str) -> tuple[bytes, bool]:
        """(bytes, checked): a member's bytes, maybe without the archive's own check (False: the caller verifies
        them some other way, e.g. a PNG's chunk CRCs, or calls `read`)."""
        return self.read(name), True

    def describe(self, name: str) -> str:
        """How messages name a member: 'ARCHIVE:member' or the file's path."""
        return f"{self.path}:{name}"

    def file_hash(self, memo_dir: str | os.PathLike | None = None) -> str:
        """`ganeval.hashing.FilesHasher` over the members in order (so a folder and a zip of it hash alike); with
        `memo_dir`, remembered by the archive's stat (`ganeval.data.sources.file_digests`)."""
        from ganeval.data.sources.file_digests import digests

        return digests(self.path.parent, [self.path.name], memo_dir, kind=f"{self.kind}-members",
                       compute=lambda _: bytes.fromhex(self._members_hash()))[0].hex()

    def stats(self) -> list[list[int]]:
        """The stat keys (`file_digests.stat_key`) of the files the members are read from (here: the archive's)."""
        from ganeval.data.sources.file_digests import stat_key

        return [stat_key(self.path)]

    def changed(self, stats: list[list[int]], names: Sequence[str]) -> str | None:
        """The first of `names` whose file's stat is no longer in `stats` (as `stats()` gave it), else None."""
        from ganeval.data.sources.file_digests import stat_key

        try:
            same = stat_key(self.path) == stats[0]
        except OSError:
            same = False
        return names[0] if names and not same else None

    def _members_hash(self) -> str:
        from ganeval.hashing import FilesHasher

        h = FilesHasher()
        for name in self.names:
            h.add(name, self.read(name))
        return h.hexdigest()


class FolderContainer(Container):
    """Image files under a folder, recursive, in `list_images` order."""

    kind = "folder"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.names = [p.relative_to(path).as_posix() for p in list_images(path)]
        self._index: dict[str, int] | None = None  # name -> position in `names` (made when first needed)

    def describe(self, name: str) -> str:
        return str(self.path / name)

    def read(self, name: str) -> bytes:
        with open(os.path.join(self.path, name), "rb") as f:  # not pathlib: its joins cost as much as a small read
            return f.read()

    def head(self, name: str, n: int) -> bytes:
        with open(os.path.join(self.path, name), "rb") as f:
            return f.read(n)

    def stats(self) -> list[list[int]]:
        """Each member file's stat key, in `names` order."""
        from ganeval.data.sources.file_digests import stat_key

        return [stat_key(os.path.join(self.path, n)) for n in self.names]

    def changed(self, stats: list[list[int]], names: Sequence[str]) -> str | None:
        from ganeval.data.sources.file_digests import stat_key

        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.names)}
        where = self._index
        for n in names:
            try:
                if stat_key(os.path.join(self.path, n)) != stats[where[n]]:
                    return n
            except OSError:
                return n
        return None

    def file_hash(self, memo_dir: str | os.PathLike | None = None) -> str:
        """`ganeval.hashing.sha256_folder` of the files; with `memo_dir`, each file's digest remembered by its stat
        (`ganeval.data.sources.file_digests`)."""
        from ganeval.data.sources.file_digests import digests
        from ganeval.hashing import files_digest

        names = sorted(self.names)
        return files_digest(zip(names, digests(self.path, names, memo_dir)))


def _check_name(archive: Path, name: str) -> None:
    """Refuse absolute member paths, `..` components and drive letters (names are never used as paths, but such
    an archive was not made for reading, and a later extraction of it would escape)."""
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or (len(name) > 1 and name[1] == ":"):
        raise ValueError(f"{archive}: member {name!r} has an absolute path or '..': refusing the archive; "
                         "repack it with relative member paths")


def _check_member(archive: Path, name: str, size: int, packed: int | None) -> bool:
    """True for an image member; refuse nested archives, non-image files and bombs (False: skip, e.g. dataset.json)."""
    _check_name(archive, name)
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in ARCHIVE_EXTENSIONS:
        raise ValueError(f"{archive}: member {name!r} is itself an archive; nested archives are not read: "
                         "unpack it and give its images directly")
    if suffix not in IMAGE_EXTENSIONS:
        if name in ALLOWED_OTHER:
            return False
        raise ValueError(f"{archive}: member {name!r} is not an image file ({', '.join(IMAGE_EXTENSIONS)}); "
                         "an image archive holds images only (and at most a dataset.json): remove it")
    if size > MAX_MEMBER_BYTES or (packed is not None and size > 1 << 20 and size > MAX_RATIO * max(packed, 1)):
        raise ValueError(f"{archive}: member {name!r} declares {size} bytes decompressed"
                         + (f" from {packed} compressed" if packed is not None else "")
                         + ": refusing a possible archive bomb; repack the archive with plain image files")
    return True


class ZipContainer(Container):
    """Image members of a `.zip` file (directories skipped), read through one handle per process."""

    kind = "zip"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._zip: zipfile.ZipFile | None = None
        self._pid = -1
        try:
            with zipfile.ZipFile(path) as z:
                infos = z.infolist()
        except (zipfile.BadZipFile, OSError) as e:
            raise ValueError(f"{path} is not a readable zip archive ({e}); write or copy it again") from None
        seen: set[str] = set()
        names = []
        self._stored = {i.filename: (i.header_offset, i.file_size) for i in infos
                        if i.compress_type == zipfile.ZIP_STORED and not i.flag_bits & 0x1}
        for info in infos:
            if info.is_dir():
                _check_name(path, info.filename)
                continue
            if info.filename in seen:
                raise ValueError(f"{path}: member {info.filename!r} appears twice; repack the archive")
            seen.add(info.filename)
            if info.flag_bits & 0x1:
                raise ValueError(f"{path}: member {info.filename!r} is encrypted; repack the archive without a password")
            if _check_member(path, info.filename, info.file_size, info.compress_size):
                names.append(info.filename)
        self.names = sorted(names)

    def _handle(self) -> zipfile.ZipFile:
        if self._zip is None or self._pid != os.getpid():  # DataLoader workers: never share a file offset
            self._zip = zipfile.ZipFile(self.path)
            self._pid = os.getpid()
        return self._zip

    def read(self, name: str) -> bytes:
        try:
            return self._handle().read(name)  # checks the CRC and the declared size
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as e:
            raise ValueError(f"{self.describe(name)}: corrupt archive member ({type(e).__name__}: {e}); "
                             "write or copy the archive again") from None

    def raw(self, name: str) -> tuple[bytes, bool]:
        """A stored member's bytes read by offset, without zipfile's CRC (False); others through `read` (True)."""
        where = self._stored.get(name)
        if where is None:
            return self.read(name), True
        f = self._handle().fp  # the archive's file object (ZipFile reads members only through open(), as read() does)
        assert f is not None
        f.seek(where[0])
        local = f.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            return self.read(name), True  # zipfile says what is wrong
        f.seek(where[0] + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little"))
        data = f.read(where[1])
        return (data, False) if len(data) == where[1] else (self.read(name), True)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_zip": None, "_pid": -1}


class TarContainer(Container):
    """Image members of an uncompressed `.tar` (regular files; links refused), read by offset."""

    kind = "tar"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._offsets: dict[str, tuple[int, int]] = {}
        self._file: BinaryIO | None = None
        self._pid = -1
        try:
            with tarfile.open(path, mode="r:") as t:  # "r:": uncompressed only (random access by offset)
                members = t.getmembers()
        except tarfile.ReadError as e:
            raise ValueError(f"{path} is not a readable uncompressed tar archive ({e}); a compressed tar (.tar.gz) "
                             "cannot be read image by image: unpack it, or pack the images as .zip or plain .tar") from None
        for m in members:
            if m.isdir():
                _check_name(path, m.name)
                continue
            if not m.isfile():
                raise ValueError(f"{path}: member {m.name!r} is a link or device, not a file; repack with plain files")
            if m.name in self._offsets:
                raise ValueError(f"{path}: member {m.name!r} appears twice; repack the archive")
            if _check_member(path, m.name, m.size, None):
                self._offsets[m.name] = (m.offset_data, m.size)
        self.names = sorted(self._offsets)
        total = path.stat().st_size
        for name, (off, size) in self._offsets.items():
            if off + size > total:
                raise ValueError(f"{self.describe(name)}: member runs past the end of the archive (truncated); "
                                 "write or copy the archive again")

    def read(self, name: str) -> bytes:
        if self._file is None or self._pid != os.getpid():
            self._file = open(self.path, "rb")  # noqa: SIM115 - kept open for the process's reads
            self._pid = os.getpid()
        off, size = self._offsets[name]
        self._file.seek(off)
        data = self._file.read(size)
        if len(data) != size:
            raise ValueError(f"{self.describe(name)}: corrupt archive member (short read); write or copy it again")
        return data

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_file": None, "_pid": -1}


def open_container(path: str | os.PathLike) -> Container:
    """The container at `path`: a folder, a `.zip` or a `.tar` (by suffix); `ValueError` otherwise."""
    p = Path(path).expanduser()
    if p.is_dir():
        return FolderContainer(p)
    if not p.is_file():
        raise FileNotFoundError(f"image source {p} does not exist (give a folder, a .zip or a .tar)")
    suffix = p.suffix.lower()
    if suffix == ".zip":
        return ZipContainer(p)
    if suffix == ".tar":
        return TarContainer(p)
    if p.name.lower().endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
        raise ValueError(f"{p} is a compressed tar, which cannot be read image by image: unpack it, or pack the images "
                         "as .zip or plain .tar")
    raise ValueError(f"{p} is not an image folder, .zip or .tar")
