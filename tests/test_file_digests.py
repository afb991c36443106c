"""Files' digests read in parallel and remembered by stat (`ganeval.data.sources.file_digests`): the same digests as
reading every file, a remembered one used only while its file's stat is unchanged and old enough, and the folder
identity (`file_hash`) unchanged by the memo."""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from ganeval.data.sources import file_digests as fd
from ganeval.data.sources.containers import FolderContainer, open_container
from ganeval.hashing import sha256_folder
from ganeval.safety import UnsafePathError


def _files(root: Path, n: int = 70) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(n):
        (root / f"{i:03d}.bin").write_bytes(os.urandom(100 + i))
        names.append(f"{i:03d}.bin")
    return names


@pytest.fixture
def old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written a moment ago count as old enough to remember (RACY_SECONDS < 0)."""
    monkeypatch.setattr(fd, "RACY_SECONDS", -60.0)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = fd.file_sha256

    def spy(path):  # type: ignore[no-untyped-def]
        read.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(fd, "file_sha256", spy)
    return read


def test_digests_are_each_files_sha256_in_order(tmp_path: Path) -> None:
    names = _files(tmp_path / "d")
    got = fd.digests(tmp_path / "d", names[::-1])
    assert got == [hashlib.sha256((tmp_path / "d" / n).read_bytes()).digest() for n in names[::-1]]


def test_a_remembered_digest_is_used_while_the_stat_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  old_enough: None) -> None:
    names = _files(tmp_path / "d")
    memo = tmp_path / "memo"
    first = fd.digests(tmp_path / "d", names, memo)
    read = _counting(monkeypatch)
    assert fd.digests(tmp_path / "d", names, memo) == first and read == []  # nothing read again
    target = tmp_path / "d" / names[5]
    size, mtime = target.stat().st_size, target.stat().st_mtime_ns
    target.write_bytes(b"x" * size)  # same size, mtime put back: the ctime still moves
    os.utime(target, ns=(mtime, mtime))
    again = fd.digests(tmp_path / "d", names, memo)
    assert read == [names[5]]
    assert again[5] == hashlib.sha256(b"x" * size).digest() and again[:5] == first[:5] and again[6:] == first[6:]


def test_a_digest_taken_right_after_a_change_is_not_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = _files(tmp_path / "d", 3)  # written now: within RACY_SECONDS of the hashing
    memo = tmp_path / "memo"
    fd.digests(tmp_path / "d", names, memo)
    read = _counting(monkeypatch)
    fd.digests(tmp_path / "d", names, memo)
    assert sorted(read) == names  # every one read again


def test_a_memo_that_is_a_link_or_garbage_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      old_enough: None) -> None:
    names = _files(tmp_path / "d", 4)
    memo = tmp_path / "memo"
    fd.digests(tmp_path / "d", names, memo)
    (path,) = memo.glob("*.json")
    path.write_text("{not json")
    read = _counting(monkeypatch)
    fd.digests(tmp_path / "d", names, memo)
    assert sorted(read) == names
    elsewhere = tmp_path / "other.json"
    elsewhere.write_text("theirs")
    path.unlink()
    path.symlink_to(elsewhere)
    with pytest.raises(UnsafePathError, match="symbolic link"):  # never read, never written through
        fd.digests(tmp_path / "d", names, memo)
    assert elsewhere.read_text() == "theirs" and path.is_symlink()


def test_the_folder_identity_is_the_same_with_and_without_the_memo(tmp_path: Path, old_enough: None) -> None:
    names = _files(tmp_path / "d", 80)
    for n in names:
        os.rename(tmp_path / "d" / n, tmp_path / "d" / n.replace(".bin", ".png"))
    c = FolderContainer(tmp_path / "d")
    plain = c.file_hash()
    assert plain == sha256_folder(tmp_path / "d", [tmp_path / "d" / n for n in c.names])
    assert c.file_hash(tmp_path / "memo") == plain == c.file_hash(tmp_path / "memo")


def test_an_archive_is_remembered_by_its_own_stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  old_enough: None) -> None:
    from PIL import Image

    z = tmp_path / "a.zip"
    with zipfile.ZipFile(z, "w") as f:
        for i in range(3):
            img = tmp_path / f"{i}.png"
            Image.new("RGB", (8, 8), (i, 0, 0)).save(img)
            f.write(img, f"{i}.png")
    c = open_container(z)
    plain = c.file_hash()
    assert c.file_hash(tmp_path / "memo") == plain
    calls: list[int] = []
    monkeypatch.setattr(type(c), "_members_hash", lambda self: calls.append(1) or plain)
    assert open_container(z).file_hash(tmp_path / "memo") == plain and calls == []


def test_one_file_hashed_two_ways_with_one_memo_gets_each_kinds_digest(tmp_path: Path, old_enough: None) -> None:
    """The memo is kept per kind: a file's SHA-256 remembered never answers for its digest of another kind (e.g. an
    archive's over its members), nor the other way round, whichever is computed first."""
    names = _files(tmp_path / "d", 3)
    memo = tmp_path / "memo"

    def other(path: str) -> bytes:
        return hashlib.sha256(b"members of " + Path(path).read_bytes()).digest()

    want_sha = [hashlib.sha256((tmp_path / "d" / n).read_bytes()).digest() for n in names]
    want_other = [other(str(tmp_path / "d" / n)) for n in names]
    for _ in range(2):  # the second round reads both kinds from the memo
        assert fd.digests(tmp_path / "d", names, memo) == want_sha
        assert fd.digests(tmp_path / "d", names, memo, kind="members", compute=other) == want_other
    memo2 = tmp_path / "memo2"  # the other kind first
    assert fd.digests(tmp_path / "d", names, memo2, kind="members", compute=other) == want_other
    assert fd.digests(tmp_path / "d", names, memo2) == want_sha
