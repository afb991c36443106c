"""`ganeval.hashing`: the values are pinned, because caches, checkpoints and result stores on disk are keyed by them.

The expected hex strings were computed with the code before `ganeval.hashing` existed (commit e48e877:
`common.stable_hash`/`sha256_file`, `protocol.array_identity`, `gan.training._fingerprint`,
`gan.generators._folder_identity`, `features.sources.ContentHasher`, `features.cache.features_checksum`
and `cache_key`) on the same inputs. A change here orphans users' caches, checkpoints and results.
"""

from __future__ import annotations

import hashlib

from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
import torch

from ganeval.features.cache import cache_key
from ganeval.hashing import (
    StreamHasher,
    array_checksum,
    array_identity,
    sha256_file,
    sha256_folder,
    stable_hash,
    state_dict_sha256,
)

F64 = np.arange(24, dtype=np.float64).reshape(6, 4) / 7
U8 = (np.arange(5 * 1 * 3 * 2) * 37 % 256).astype(np.uint8).reshape(5, 1, 3, 2)


def test_stable_hash_pinned() -> None:
    assert stable_hash({"b": [1, 2.5, None], "a": "x", "p": Path("/x/y")}) == "072770ce5bd977da"
    obj = {"content": "abc", "extractor": {"name": "pixels"}, "format": 1}
    assert stable_hash(obj, 32) == "4ff809c73621bd50479c69bf0bd51b5e"
    assert stable_hash(obj, 32) == stable_hash(dict(reversed(list(obj.items()))), 32)  # key order is irrelevant
    # cache format 2 (issue #37): format 1's key of the same entry was 5f0407122e80a3d67545978a7b31d771
    assert cache_key("abc", {"name": "pixels", "size": None}) == stable_hash(
        {"content": "abc", "extractor": {"name": "pixels", "size": None}, "format": 2}, 32)
    assert cache_key("abc", {"name": "pixels", "size": None}) == "1330040624b16243fe4729c70263d139"


def test_sha256_file_pinned(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(b"ganeval\n" * 1000)
    full = "11c877d1998c6f7e7c773b9c5ede3e16413ef1a069bc8b7127f9b3f9a440ad09"
    assert sha256_file(tmp_path / "w.bin") == full
    assert sha256_file(str(tmp_path / "w.bin"), 8) == full[:8]


def test_array_identity_pinned() -> None:
    """The stored-run identity (first 16 hex) and the training-data fingerprint (full digest)."""
    assert array_identity(F64, 16) == {"shape": [6, 4], "dtype": "float64", "sha256": "332ff93e46b9bf21"}
    assert array_identity(F64.T, 16)["sha256"] == "49ec8aa75db2d569"  # C order of what is seen
    assert array_identity(F64[::2], 16)["sha256"] == "e4ba13a48acf5f05"
    assert array_identity(np.arange(12, dtype=np.float32).reshape(3, 4), 16)["sha256"] == "29e1889124dc651e"
    assert array_identity(U8) == {
        "shape": [5, 1, 3, 2], "dtype": "uint8",
        "sha256": "3e32c4e4cedba52b4760ce2f2e06b09ba354a879d6283ec2fe5fc42b13d602e9"}  # fmt: skip
    assert array_identity(U8[:, :, ::-1])["sha256"] == "b03bb269a9f190d1abc295918947239ae2d43f74b7cd895a6a55a3744507bdfb"
    pts = "26f40bb29fc782387011db207e621cd0e342a7c72567e43b4f078dbf68c01923"
    assert array_identity(F64.astype(np.float32))["sha256"] == pts
    assert array_identity(torch.from_numpy(F64.astype(np.float32)))["sha256"] == pts


def test_array_checksum_pinned() -> None:
    want = "5caab2683d724c673de0ffa7a1cfb4f2008c14da905d8e052ac9109f6086ce0a"
    assert array_checksum(F64.astype(np.float32)) == want
    assert array_checksum(F64.astype(np.float32).reshape(4, 6)) != want  # shape is part of it


def test_stream_hasher_pinned_and_batch_independent() -> None:
    want = "3551a26d647a4c2578ada8b2c6212cb419d780fe6f898699b24453f0779178d4"
    whole, parts = StreamHasher(), StreamHasher()
    whole.update(U8)
    parts.update(U8[:2])
    parts.update(torch.from_numpy(U8[2:]))
    assert whole.hexdigest() == parts.hexdigest() == want
    assert (parts.n, parts.item_shape, parts.dtype) == (5, (1, 3, 2), "uint8")
    f32 = StreamHasher()
    f32.update(F64.astype(np.float32))
    assert f32.hexdigest() == "76faeeb7860e9a0373eb6566647af3952b63fdc4729a12847c9e10617e3ec4ab"
    with pytest.raises(ValueError, match="batches disagree"):
        parts.update(U8[:1, :, :2])


def _files_digest(named: list[tuple[str, bytes]]) -> str:
    """The folder identity's rule written out: a format tag, then per file its name's length, name, SHA-256."""
    h = hashlib.sha256(b"ganeval-files/2\0")
    for name, data in named:
        h.update(len(name.encode()).to_bytes(8, "little") + name.encode() + hashlib.sha256(data).digest())
    return h.hexdigest()


def test_sha256_folder_pinned(tmp_path: Path) -> None:
    """The samples-folder identity: image files by relative name (sorted), each name's length, name and digest."""
    from ganeval.data import list_images
    from ganeval.gan import SampleGenerator

    (tmp_path / "sub").mkdir()
    (tmp_path / "b.png").write_bytes(b"\x89PNG fake b" * 10)
    (tmp_path / "sub" / "a.JPG").write_bytes(b"jpeg a")
    (tmp_path / "a.png").write_bytes(b"")
    (tmp_path / "note.txt").write_bytes(b"not an image")
    files = list_images(tmp_path)
    want = _files_digest([("a.png", b""), ("b.png", b"\x89PNG fake b" * 10), ("sub/a.JPG", b"jpeg a")])
    assert want == "3812a0bea2c922ef3361eda9f536147a4895be0b15f2f7db4e9a1166ccea60b3"
    assert sha256_folder(tmp_path, files) == want
    assert sha256_folder(tmp_path, files[::-1], 8) == want[:8]  # order given does not matter
    ident = SampleGenerator(tmp_path).identity()
    assert (ident["files"], ident["sha256"]) == (3, want)
    # format 1 (name, NUL, bytes) gave c988ee01...: an older results folder never matches today's identity (#37)
    assert not want.startswith("c988ee01")
    (tmp_path / "sub" / "a.JPG").rename(tmp_path / "sub" / "c.JPG")
    assert sha256_folder(tmp_path, list_images(tmp_path)) != want  # names count, not only bytes


def test_sha256_folder_is_injective_where_format_1_collided(tmp_path: Path) -> None:
    """(issue #37) bytes moved across a file boundary, with the next name, no longer give the same identity."""
    p1, p2, p3 = b"first", b"second", b"third"
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir(), b.mkdir()
    (a / "a.png").write_bytes(p1 + b"b.png\0" + p2)
    (a / "c.png").write_bytes(p3)
    (b / "a.png").write_bytes(p1)
    (b / "b.png").write_bytes(p2 + b"c.png\0" + p3)
    old = [hashlib.sha256(b"".join(f.name.encode() + b"\0" + f.read_bytes() for f in sorted(d.iterdir()))).hexdigest()
           for d in (a, b)]
    assert old[0] == old[1]  # the collision of format 1
    got = [sha256_folder(d, sorted(d.iterdir())) for d in (a, b)]
    assert got[0] != got[1]
    assert got == [_files_digest([(f.name, f.read_bytes()) for f in sorted(d.iterdir())]) for d in (a, b)]


def test_state_dict_sha256() -> None:
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    sd = net.state_dict()
    h = state_dict_sha256(sd)
    assert len(h) == 64 and state_dict_sha256(sd, 8) == h[:8]
    assert state_dict_sha256(OrderedDict(reversed(list(sd.items())))) == h  # key order is irrelevant
    assert state_dict_sha256({k: v.clone() for k, v in sd.items()}) == h
    changed = {k: v.clone() for k, v in sd.items()}
    changed["0.bias"][0] += 1
    assert state_dict_sha256(changed) != h
    assert state_dict_sha256({**sd, "0.bias": sd["0.bias"].double()}) != h  # dtype counts
    assert state_dict_sha256({"w": torch.zeros(2, dtype=torch.bfloat16), "extra": {"v": 1}})
    # pinned (= sha256 of '["w", [2, 2], "torch.float32"]' then the float32 bytes), so a change of the rule shows
    assert state_dict_sha256({"w": torch.arange(4, dtype=torch.float32).reshape(2, 2)}, 16) == "39ff183c7dd6eed6"


def test_identities_are_stored_full_and_shown_short() -> None:
    """(issue 22) The report shows every hash of an input's identity short, nested ones too; the stored one is full."""
    from ganeval.hashing import shown_identity

    full = "ab" * 32
    ident = {"kind": "samples", "sha256": full, "train": {"data": {"sha256": full}}, "files": [{"code_sha256": full}],
             "name": "f" * 64}
    shown = shown_identity(ident)
    assert shown == {"kind": "samples", "sha256": full[:8], "train": {"data": {"sha256": full[:8]}},
                     "files": [{"code_sha256": full[:8]}], "name": "f" * 64}  # only hashes, by their key
    assert ident["sha256"] == full  # the stored identity is untouched
