"""Sweep of ganeval/features/ (streaming, extraction, normtable, sources, cache, batches, missing_weights, variants,
reference): exact values at every edge, default and constant, against values computed here independently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ganeval.features import cache as fcache
from ganeval.features import normtable, sources, streaming
from ganeval.hashing import array_checksum, stable_hash

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def _normalise_np(x: np.ndarray) -> np.ndarray:
    """x/255 - mean, / std per channel in float32, as torch's CPU ops round them."""
    f = x.astype(np.float32) / np.float32(255)
    m = np.asarray(MEAN, dtype=np.float32).reshape(1, 3, 1, 1)
    s = np.asarray(STD, dtype=np.float32).reshape(1, 3, 1, 1)
    return (f - m) / s


# ----------------------------------------------------------------------------------------------- normtable


def test_normalise_is_bytes_over_255_minus_mean_over_std_exactly() -> None:
    x = torch.arange(2 * 3 * 2 * 4, dtype=torch.int64).mul_(5).remainder_(256).to(torch.uint8).view(2, 3, 2, 4)
    got = normtable.normalise(x, MEAN, STD)
    assert got.dtype == torch.float32 and tuple(got.shape) == (2, 3, 2, 4)
    np.testing.assert_array_equal(got.numpy(), _normalise_np(x.numpy()))


def test_table_holds_every_channel_and_byte() -> None:
    t = normtable.table(MEAN, STD)
    assert tuple(t.shape) == (3, 256) and t.dtype == torch.float32
    every = np.broadcast_to(np.arange(256, dtype=np.uint8).reshape(1, 1, 1, 256), (1, 3, 1, 256))
    np.testing.assert_array_equal(t.numpy(), _normalise_np(every).reshape(3, 256))


def test_lookup_picks_each_channels_row_of_the_table() -> None:
    values = torch.arange(3 * 256, dtype=torch.float32).view(3, 256)  # value = 256 c + byte
    x = torch.tensor([[[[0, 255]], [[7, 1]], [[200, 3]]], [[[9, 8]], [[0, 0]], [[255, 254]]]], dtype=torch.uint8)
    got = normtable.lookup(x, values)
    expect = x.numpy().astype(np.float32) + np.array([0, 256, 512], dtype=np.float32).reshape(1, 3, 1, 1)
    assert tuple(got.shape) == (2, 3, 1, 2)
    np.testing.assert_array_equal(got.numpy(), expect)
    np.testing.assert_array_equal(normtable.lookup(x, normtable.table(MEAN, STD)).numpy(), _normalise_np(x.numpy()))


def test_normalise_on_the_cpu_does_not_use_the_table() -> None:
    x = torch.tensor([[[[3]], [[4]], [[250]]]], dtype=torch.uint8)
    got = normtable.normalise_on(x, MEAN, STD, torch.zeros(3, 256))
    np.testing.assert_array_equal(got.numpy(), _normalise_np(x.numpy()))


# ----------------------------------------------------------------------------------------------- sources


def test_item_to_array_takes_the_first_element_of_a_tuple() -> None:
    a = np.zeros((2, 2), dtype=np.uint8)
    assert sources.item_to_array((a, 5)) is a
    assert sources.item_to_array([a, np.ones(1)]) is a
    t = torch.ones(2)
    assert sources.item_to_array(t) is t
    with pytest.raises(ValueError, match="empty tuple"):
        sources.item_to_array(())


def test_item_to_array_needs_both_mode_and_size_for_a_pil_image() -> None:
    from PIL import Image

    img = Image.fromarray(np.full((2, 3, 3), 7, dtype=np.uint8))
    np.testing.assert_array_equal(sources.item_to_array(img), np.full((2, 3, 3), 7, dtype=np.uint8))

    class OnlyMode:
        mode = "RGB"

    class OnlySize:
        size = (1, 1)

    for thing in (OnlyMode(), OnlySize()):
        with pytest.raises(ValueError, match="dataset items must be"):
            sources.item_to_array(thing)


def test_collate_items_one_shape_and_mixed_kinds() -> None:
    a = np.full((2, 2), 3, dtype=np.uint8)
    t = torch.full((2, 2), 4, dtype=torch.uint8)
    got = sources.collate_items([a, t])
    assert tuple(got.shape) == (2, 2, 2)
    np.testing.assert_array_equal(got.numpy(), np.stack([a, t.numpy()]))
    single = sources.collate_items([a])
    assert tuple(single.shape) == (1, 2, 2)
    tt = sources.collate_items([t, t])
    assert tuple(tt.shape) == (2, 2, 2)
    with pytest.raises(ValueError, match="different shapes"):
        sources.collate_items([a, np.zeros((3, 2), dtype=np.uint8)])


def test_as_batch_takes_images_of_an_images_labels_pair() -> None:
    a = np.arange(6, dtype=np.uint8).reshape(2, 3)
    b = np.zeros((2, 3), dtype=np.uint8)
    np.testing.assert_array_equal(sources._as_batch((a, b)).numpy(), a)
    np.testing.assert_array_equal(sources._as_batch([a, [0, 1]]).numpy(), a)
    t = torch.ones(2)
    assert sources._as_batch(t) is t
    for bad in ((), [], [1, 2], (None, a), "x"):
        with pytest.raises(ValueError, match="each streamed batch"):
            sources._as_batch(bad)


def test_make_source_of_a_tensor_batches_in_order() -> None:
    t = torch.arange(15).view(5, 3)
    src = sources.make_source(t, 2)
    got = list(src.batches())
    assert [b.tolist() for b in got] == [t[0:2].tolist(), t[2:4].tolist(), t[4:5].tolist()]
    assert src.n == 5 and src.reiterable is True and src.array is t
    one_d = sources.make_source(torch.arange(3), 3)
    assert one_d.n == 3 and [b.tolist() for b in one_d.batches()] == [[0, 1, 2]]
    with pytest.raises(ValueError, match="leading sample axis"):
        sources.make_source(torch.tensor(1.0), 1)
    a = np.arange(4, dtype=np.float32).reshape(4, 1)
    assert sources.make_source(a, 4).n == 4
    with pytest.raises(ValueError, match="object array"):
        sources.make_source(np.array([[1], [2]], dtype=object), 1)


class _Items(torch.utils.data.Dataset):
    """Items i: a 1-element array [i], +100 when read in a DataLoader worker."""

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int) -> Any:
        extra = 100 if torch.utils.data.get_worker_info() is not None else 0
        return np.array([i + extra], dtype=np.int64), i


def test_make_source_of_a_dataset_reads_in_order_in_this_process_by_default() -> None:
    src = sources.make_source(_Items(), 6)
    assert src.n == 6 and src.reiterable is True and src.array is None
    batches = list(src.batches())
    assert len(batches) == 1 and batches[0].view(-1).tolist() == [0, 1, 2, 3, 4, 5]


def test_make_source_of_a_dataset_does_not_pin_by_default() -> None:
    import warnings

    src = sources.make_source(_Items(), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [b.view(-1).tolist() for b in src.batches()]
    assert got == [[0, 1, 2], [3, 4, 5]]


def test_make_source_of_an_iterable_dataset_has_no_length() -> None:
    class It(torch.utils.data.IterableDataset):
        def __iter__(self) -> Any:
            return iter([np.zeros(2), np.ones(2)])

    src = sources.make_source(It(), 2)
    assert src.n is None and src.reiterable is True


def test_make_source_of_batches_counts_and_reiterability() -> None:
    bs = [np.zeros((2, 3), dtype=np.uint8), np.ones((3, 3), dtype=np.uint8)]
    src = sources.make_source(bs, 99)
    assert src.n == 5 and src.reiterable is True and src.array is None
    assert [tuple(b.shape) for b in src.batches()] == [(2, 3), (3, 3)]
    gen = (b for b in bs)
    src2 = sources.make_source(gen, 99)
    assert src2.n is None and src2.reiterable is False
    for bad in ("abc", b"abc", object(), 5):
        with pytest.raises(ValueError, match="images must be"):
            sources.make_source(bad, 1)


# ----------------------------------------------------------------------------------------------- cache


def test_cache_key_and_path_are_pinned() -> None:
    ident = {"name": "pixels", "options": {"a": 1}}
    key = fcache.cache_key("abc", ident)
    assert key == stable_hash({"content": "abc", "extractor": ident, "format": 2}, 32)
    assert len(key) == 32
    assert fcache.cache_path("/x/y", key) == Path("/x/y") / f"{key}.npz"
    assert fcache.entry_meta("c", ident, 4) == {"content": "c", "extractor": ident, "n": 4}


def test_cache_round_trip_and_refusals(tmp_path: Path) -> None:
    feats = np.arange(12, dtype=np.float32).reshape(3, 4)
    meta = {"z": 1, "a": [1, 2]}
    path = tmp_path / "e.npz"
    fcache.save_cached(path, feats, meta)
    with np.load(path) as z:
        assert str(z["meta"]) == '{"a": [1, 2], "z": 1}'
        assert str(z["checksum"]) == array_checksum(feats)
    got = fcache.load_cached(path, 3, {"a": [1, 2], "z": 1})
    assert got is not None
    np.testing.assert_array_equal(got, feats)
    assert fcache.load_cached(path, 3, {"a": [1, 2], "z": 2}) is None  # another entry
    assert fcache.load_cached(path, 4, meta) is None  # other rows
    assert fcache.load_cached(tmp_path / "absent.npz", 3, meta) is None
    (tmp_path / "dir.npz").mkdir()
    with pytest.raises(ValueError, match="not a file"):
        fcache.load_cached(tmp_path / "dir.npz", 3, meta)


def test_cache_refuses_a_bad_checksum_and_wrong_shapes(tmp_path: Path) -> None:
    feats = np.arange(12, dtype=np.float32).reshape(3, 4)
    bad = tmp_path / "bad.npz"
    np.savez(bad, features=feats, checksum=np.array("0" * 16), meta=np.array(json.dumps({})))
    assert fcache.load_cached(bad, 3, {}) is None
    flat = np.arange(3, dtype=np.float32)
    one_d = tmp_path / "flat.npz"
    fcache.save_cached(one_d, flat, {})
    assert fcache.load_cached(one_d, 3, {}) is None  # 3 rows but not 2-D
    assert fcache.load_cached(tmp_path / "x.npz", 3, {}) is None
    wide = tmp_path / "wide.npz"
    fcache.save_cached(wide, feats, {})
    assert fcache.load_cached(wide, 4, {}) is None  # 4 columns, 3 rows
    assert fcache.load_cached(wide, 3, {}) is not None


def test_find_cached_finds_the_entry_saved_under_its_key(tmp_path: Path) -> None:
    ident = {"name": "x"}
    feats = np.ones((2, 2), dtype=np.float32)
    path, got = fcache.find_cached(tmp_path, "c", ident, 2)
    assert got is None and path == tmp_path / f"{fcache.cache_key('c', ident)}.npz"
    fcache.save_cached(path, feats, fcache.entry_meta("c", ident, 2))
    path2, got2 = fcache.find_cached(tmp_path, "c", ident, 2)
    assert path2 == path and got2 is not None and got2.tolist() == feats.tolist()


def test_short_meta_cut_at_160_characters() -> None:
    assert fcache._short({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'
    at = "a" * 158  # json: 160 characters
    assert fcache._short(at) == '"' + at + '"'
    over = "a" * 159  # 161
    assert fcache._short(over) == '"' + "a" * 156 + "..."
    assert len(fcache._short(over)) == 160


# ----------------------------------------------------------------------------------------------- missing weights


class _Missing(Exception):
    pass


WORDS = {"weights": "WEIGHTS=", "weights_arg": "THE-ARG", "no_download": "NO-DL", "pixels": "PIX"}


def test_weights_message_for_a_missing_given_file() -> None:
    from ganeval.features.inception import WEIGHTS_ENV, WEIGHTS_FILENAME, WEIGHTS_URL
    from ganeval.features.missing_weights import weights_message

    err = _Missing("weights not found\n  - no such file: /w.pth (the `weights` argument)")
    got = weights_message(err, True, WORDS)
    assert got == (f"no FID Inception weights (no such file: /w.pth (THE-ARG)): pass the file with WEIGHTS= or set "
                   f"{WEIGHTS_ENV}=FILE ({WEIGHTS_FILENAME} from {WEIGHTS_URL}), or score without Inception: PIX")


def test_weights_message_when_not_set_and_download_disabled() -> None:
    from ganeval.features.inception import hub_weights_path
    from ganeval.features.missing_weights import weights_message

    err = _Missing("weights not found\n  - no such file: env not set")
    got = weights_message(err, False, WORDS)
    assert f"(not in {hub_weights_path()}; download disabled (NO-DL))" in got
    one_line = weights_message(_Missing("weights not found"), False, WORDS)
    assert f"(not in {hub_weights_path()}; download disabled (NO-DL))" in one_line
    other = weights_message(_Missing("weights not found\n  - somewhere else"), False, WORDS)
    assert f"(not in {hub_weights_path()}; download disabled (NO-DL))" in other


def test_weights_message_says_why_the_download_failed() -> None:
    from ganeval.features.missing_weights import weights_message

    plain = weights_message(_Missing("not found\n  - x"), True, WORDS)
    assert "; the download failed (offline?))" in plain
    unreachable = _Missing("not found\n  - x\n  url unreachable (offline?) (OSError: no route)")
    assert "; the download failed: no route)" in weights_message(unreachable, True, WORDS)
    hub = _Missing("not found\n  - x\n  HF_HUB_OFFLINE=1 (OSError: offline mode)")
    assert "; the download failed: offline mode)" in weights_message(hub, True, WORDS)


def test_weights_message_of_a_hub_model() -> None:
    from ganeval.features.missing_weights import weights_message

    err = _Missing("not found\n  - x")
    err.what, err.env, err.url = "DINOv2", "DINO_ENV", "facebook/dinov2"  # type: ignore[attr-defined]
    got = weights_message(err, False, WORDS)
    assert got == ("no DINOv2 weights (not in the Hugging Face hub cache; download disabled (NO-DL)): pass the file "
                   "with WEIGHTS= or set DINO_ENV=FILE (facebook/dinov2), or score without weights: PIX")


# ----------------------------------------------------------------------------------------------- variants


def test_variants_are_registered_with_their_dims_and_weights() -> None:
    import ganeval.features.variants  # noqa: F401
    from ganeval.features.base import REGISTRY

    assert REGISTRY["inception_spatial"].dims == (2023,) and REGISTRY["inception_spatial"].weights is True
    assert REGISTRY["inception_logits"].dims == (1008,) and REGISTRY["inception_logits"].weights is True
    assert REGISTRY["clip_l14_336"].dims == (768,) and REGISTRY["clip_l14_336"].weights is True


# ----------------------------------------------------------------------------------------------- streaming helpers


def test_chunk_size_default_and_its_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GANEVAL_CHUNK_SIZE", raising=False)
    assert streaming.chunk_size_default() == 2048
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "")
    assert streaming.chunk_size_default() == 2048
    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "1")
    assert streaming.chunk_size_default() == 1
    for bad in ("0", "-3", "x", "1.5"):
        monkeypatch.setenv("GANEVAL_CHUNK_SIZE", bad)
        with pytest.raises(ValueError, match="GANEVAL_CHUNK_SIZE"):
            streaming.chunk_size_default()


def test_chunk_file_and_meta() -> None:
    assert streaming._chunk_file(Path("/p"), 3) == Path("/p/chunk-000003.npz")
    assert streaming._chunk_meta(Path("/a/part"), 1, [(0, 2), (2, 5)]) == {"partial": "part", "chunk": 1,
                                                                          "rows": [2, 5]}


def test_rows_fill_and_copy_in_chunks_from_disk() -> None:
    rows = streaming.Rows(5)
    rows.put(0, np.ones((2, 3), dtype=np.float32))
    done = {0: rows.array[0:2], 1: np.full((3, 3), 2.0, dtype=np.float32)}  # type: ignore[index]
    whole = rows.whole(done, [(0, 2), (2, 5)])
    assert whole.dtype == np.float32 and whole.tolist() == [[1.0] * 3] * 2 + [[2.0] * 3] * 3
    fresh = streaming.Rows(3)
    got = fresh.whole({0: np.zeros((1, 2)), 1: np.ones((2, 2))}, [(0, 1), (1, 3)])
    assert got.tolist() == [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]


class _HostEx:
    def __init__(self, work: bool) -> None:
        self.work = work

    def host_work(self) -> bool:
        return self.work


def test_host_stage_in_workers_needs_workers_and_host_work() -> None:
    assert streaming.host_stage_in_workers(_HostEx(True), 1) is True
    assert streaming.host_stage_in_workers(_HostEx(True), 0) is False
    assert streaming.host_stage_in_workers(_HostEx(False), 1) is False


def test_new_hasher_is_threaded_by_default() -> None:
    h = streaming._new_hasher()
    try:
        assert h._thread is not None
    finally:
        h.close()


# ----------------------------------------------------------------------------------------------- pretrained


def test_hub_cached_skips_names_not_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    from ganeval.features.pretrained import hub_cached

    real = tmp_path / "b.bin"
    real.write_bytes(b"x")
    hits = {"a": str(tmp_path / "missing.bin"), "b": str(real), "c": object()}
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda repo, name: hits.get(name))
    assert hub_cached("r", ("a", "b")) == real
    assert hub_cached("r", ("a",)) is None
    assert hub_cached("r", ("c",)) is None


def test_hub_reachable_host_port_and_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from huggingface_hub import constants

    from ganeval.features.pretrained import hub_reachable

    calls: list[tuple[Any, float]] = []

    class Conn:
        def close(self) -> None:
            pass

    def connect(addr: Any, timeout: float) -> Conn:
        calls.append((addr, timeout))
        return Conn()

    monkeypatch.setattr(socket, "create_connection", connect)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    for endpoint, addr in (("https://hub.example", ("hub.example", 443)), ("http://hub.example", ("hub.example", 80)),
                           ("https://hub.example:8443", ("hub.example", 8443))):
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
        assert hub_reachable() is None
        assert calls[-1] == (addr, 3.0)
    assert hub_reachable(1.5) is None and calls[-1][1] == 1.5

    def refuse(addr: Any, timeout: float) -> Conn:
        raise OSError(101, "No route")

    monkeypatch.setattr(socket, "create_connection", refuse)
    assert hub_reachable() == "hub.example unreachable (offline?): No route"
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert hub_reachable() == "HF_HUB_OFFLINE is set"


def test_hub_download_stops_at_once_when_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    from ganeval.features import pretrained

    monkeypatch.setattr(pretrained, "hub_reachable", lambda: "no net")
    with pytest.raises(OSError, match="^no net$"):
        pretrained.hub_download("r", ("a",))
    monkeypatch.setattr(pretrained, "hub_reachable", lambda: None)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda repo, name: f"/cache/{repo}/{name}")
    assert pretrained.hub_download("r", ("a", "b")) == Path("/cache/r/a")


def _fail() -> Path:
    raise OSError("boom")


def test_resolve_library_weights_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.features.inception import WeightsNotFoundError
    from ganeval.features.pretrained import resolve_library_weights

    monkeypatch.delenv("SWEEP5_W", raising=False)
    given = tmp_path / "w.pt"
    given.write_bytes(b"w")
    fetched = tmp_path / "f.pt"
    assert resolve_library_weights("X", given, "SWEEP5_W", lambda: None, _fail, "m") == given
    # download on by default
    assert resolve_library_weights("X", None, "SWEEP5_W", lambda: None, lambda: fetched, "m") == fetched
    assert resolve_library_weights("X", "", "SWEEP5_W", lambda: None, lambda: fetched, "m") == fetched
    assert resolve_library_weights("X", None, "SWEEP5_W", lambda: given, _fail, "m") == given
    with pytest.raises(WeightsNotFoundError, match="no such file"):
        resolve_library_weights("X", tmp_path / "nope", "SWEEP5_W", lambda: None, lambda: fetched, "m")
    with pytest.raises(WeightsNotFoundError, match="download: disabled"):
        resolve_library_weights("X", None, "SWEEP5_W", lambda: None, lambda: fetched, "m", download=False)
    with pytest.raises(WeightsNotFoundError, match="download failed \\(OSError: boom\\)"):
        resolve_library_weights("X", None, "SWEEP5_W", lambda: None, _fail, "m")
    monkeypatch.setenv("SWEEP5_W", str(given))
    assert resolve_library_weights("X", None, "SWEEP5_W", lambda: None, _fail, "m") == given


def test_check_weights_file_shapes_and_names(tmp_path: Path) -> None:
    from ganeval.features.pretrained import check_weights_file

    good = tmp_path / "good.pt"
    torch.save({"pos": torch.zeros(1, 5, 3), "other": torch.zeros(2)}, good)
    check_weights_file(good, "DINO", "pos", (1, None, 3), "FIX")
    check_weights_file(good, "DINO", "pos", (1, 5, 3), "FIX")
    with pytest.raises(ValueError) as e:
        check_weights_file(good, "DINO", "pos", (1, None, 4), "FIX")
    assert str(e.value) == f"weights file {good} does not hold DINO weights (its pos has shape [1, 5, 3], DINO's [1, 'any', 4]): FIX"
    with pytest.raises(ValueError, match="has shape"):
        check_weights_file(good, "DINO", "pos", (2, None, 3), "FIX")
    with pytest.raises(ValueError, match="has shape"):
        check_weights_file(good, "DINO", "pos", (1, 5), "FIX")
    with pytest.raises(ValueError, match="has shape"):
        check_weights_file(good, "DINO", "pos", (1, 5, 3, 1), "FIX")
    incep = tmp_path / "incep.pt"
    torch.save({"Mixed_5b.w": torch.zeros(1), "Conv2d_1a.w": torch.zeros(1), "zz": torch.zeros(1)}, incep)
    with pytest.raises(ValueError) as e:
        check_weights_file(incep, "DINO", "pos", (1,), "FIX")
    assert str(e.value) == (f"weights file {incep} does not hold DINO weights (it has no tensor pos (its tensors are "
                            "named like Conv2d_1a.w, Mixed_5b.w: the FID Inception's)): FIX")
    other = tmp_path / "other.pt"
    torch.save({"a": torch.zeros(1), "b": torch.zeros(1), "Mixed_x": torch.zeros(1)}, other)
    with pytest.raises(ValueError) as e:
        check_weights_file(other, "DINO", "pos", (1,), "FIX")
    assert "named like Mixed_x, a: the FID Inception's)): FIX" in str(e.value)
    plain = tmp_path / "plain.pt"
    torch.save({"a": torch.zeros(1), "b": torch.zeros(1), "c": torch.zeros(1)}, plain)
    with pytest.raises(ValueError) as e:
        check_weights_file(plain, "DINO", "pos", (1,), "FIX")
    assert str(e.value).endswith("(it has no tensor pos (its tensors are named like a, b)): FIX")


def test_tensor_shapes_refuses_a_damaged_safetensors_file(tmp_path: Path) -> None:
    from ganeval.features.pretrained import tensor_shapes

    bad = tmp_path / "w.safetensors"
    bad.write_bytes(b"not safetensors")
    with pytest.raises(ValueError, match="cannot be read as safetensors .*: FIX"):
        tensor_shapes(bad, "FIX")


class _Net(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.double() * 2


def _pretrained() -> Any:
    from ganeval.features.pretrained import PretrainedExtractor

    class P(PretrainedExtractor):
        name = "p"

        def __init__(self) -> None:
            self.resolved = self.built = self.setups = 0

        def resolve(self) -> Path:
            self.resolved += 1
            return Path("/w")

        def build(self) -> torch.nn.Module:
            self.built += 1
            return _Net()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            assert self._model is not None
            return self._model(x)

        def setup(self, device: torch.device) -> None:
            self.setups += 1
            super().setup(device)

    return P()


def test_pretrained_extractor_resolves_and_builds_once() -> None:
    ex = _pretrained()
    assert ex.weights_path() == Path("/w") and ex.weights_path() == Path("/w") and ex.resolved == 1
    cpu = torch.device("cpu")
    y = ex.device_stage(torch.ones(2, 3))
    assert y.dtype == torch.float32 and y.tolist() == [[2.0] * 3] * 2
    assert ex.built == 1 and ex.setups == 1 and ex._device == cpu
    ex.device_stage(torch.ones(1, 1))
    assert ex.setups == 1 and ex.built == 1
    assert ex(torch.ones(1, 2)).tolist() == [[2.0, 2.0]]


def test_pretrained_extractor_moves_a_built_network_to_the_batches_device() -> None:
    ex = _pretrained()
    ex._model = _Net()
    ex.device_stage(torch.ones(1, 1))
    assert ex.setups == 1 and ex.built == 0 and ex._device == torch.device("cpu")
    fresh = _pretrained()
    fresh.setup(torch.device("cpu"))
    assert fresh._device == torch.device("cpu") and fresh.built == 1 and fresh._model is not None


# ----------------------------------------------------------------------------------------------- batches


class _Rec:
    """A duck-typed extractor recording its stages."""

    name = "rec"

    def __init__(self, out: Any = None) -> None:
        self.host: list[int] = []
        self.out = out
        self.set_up: list[torch.device] = []

    def setup(self, device: torch.device) -> None:
        self.set_up.append(device)

    def host_stage(self, b: torch.Tensor) -> torch.Tensor:
        self.host.append(int(b.shape[0]))
        return b + 1

    def device_stage(self, b: torch.Tensor) -> torch.Tensor:
        if self.out is not None:
            return self.out(b)
        return b.reshape(b.shape[0], -1).float()


def test_run_batches_host_stage_on_by_default_and_rows_in_order() -> None:
    from ganeval.features.batches import run_batches

    ex = _Rec()
    got: list[np.ndarray] = []
    batches = [torch.zeros(2, 3, dtype=torch.int64), torch.full((1, 3), 5, dtype=torch.int64)]
    run_batches(iter(batches), ex, torch.device("cpu"), got.append)  # type: ignore[arg-type]
    assert ex.host == [2, 1] and ex.set_up == [torch.device("cpu")]
    assert [g.tolist() for g in got] == [[[1.0] * 3] * 2, [[6.0] * 3]]
    ex2 = _Rec()
    got2: list[np.ndarray] = []
    run_batches(iter(batches), ex2, torch.device("cpu"), got2.append, host_stage=False)  # type: ignore[arg-type]
    assert ex2.host == [] and [g.tolist() for g in got2] == [[[0.0] * 3] * 2, [[5.0] * 3]]


def test_run_batches_refuses_outputs_of_the_wrong_shape() -> None:
    from ganeval.features.batches import run_batches

    b = [torch.zeros(2, 3)]
    for out in (lambda x: x[:, 0], lambda x: x[:1], lambda x: x.reshape(2, 3, 1), lambda x: x.reshape(3, 2)):
        with pytest.raises(RuntimeError, match="extractor rec returned shape"):
            run_batches(iter(b), _Rec(out), torch.device("cpu"), lambda o: None, host_stage=False)  # type: ignore[arg-type]
    seen: list[tuple[int, ...]] = []
    run_batches(iter([torch.zeros(2, 3)]), _Rec(lambda x: torch.zeros(2, 5)), torch.device("cpu"),  # type: ignore[arg-type]
                lambda o: seen.append(o.shape), host_stage=False)
    assert seen == [(2, 5)]


# ----------------------------------------------------------------------------------------------- extraction


def _rows_extractor() -> Any:
    from ganeval.features.base import Extractor

    class Rows(Extractor):
        """Feature rows ×2, recording batch sizes; cacheable."""

        name = "sweep5_rows"
        images = False
        cacheable = True

        def __init__(self) -> None:
            self.sizes: list[int] = []

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            self.sizes.append(int(batch.shape[0]))
            return batch.double().reshape(batch.shape[0], -1) * 2

    return Rows()


def test_default_batch_size_by_device() -> None:
    from ganeval.features.extraction import default_batch_size

    assert default_batch_size("cpu") == 32
    assert default_batch_size(torch.device("cpu")) == 32
    assert default_batch_size("cuda") == 250
    assert default_batch_size("meta") == 250


def test_extract_with_info_defaults_and_argument_edges() -> None:
    from ganeval.features.extraction import extract, extract_with_info

    a = np.arange(60 * 2, dtype=np.float32).reshape(60, 2)
    ex = _rows_extractor()
    feats, info = extract_with_info(a, ex, progress=False)
    assert ex.sizes == [50, 10]
    assert feats.dtype == np.float32 and feats.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(feats, a * 2)
    assert info["n"] == 60 and info["cache_hit"] is False and info["cache_file"] is None
    assert info["extractor"] == {"name": "sweep5_rows"}
    ex1 = _rows_extractor()
    extract(a[:3], ex1, batch_size=1, num_workers=0, progress=False)
    assert ex1.sizes == [1, 1, 1]
    for bad in (0, -1, 1.0, "2"):
        with pytest.raises(ValueError, match="batch_size must be a positive int"):
            extract(a, ex, batch_size=bad, progress=False)
    for bad in (-1, 0.0):
        with pytest.raises(ValueError, match="num_workers must be a non-negative int"):
            extract(a, ex, num_workers=bad, progress=False)
    with pytest.raises(ValueError, match="images is empty: no images"):
        extract(a[:0], ex, progress=False)
    with pytest.raises(ValueError, match="images is empty: no batches"):
        extract([], ex, progress=False)


def test_extract_checks_the_unit_range_of_float_images_only() -> None:
    from ganeval.features.extraction import extract

    rows = np.full((2, 3), 5.0, dtype=np.float32)
    np.testing.assert_array_equal(extract(rows, _rows_extractor(), progress=False), rows * 2)
    imgs = np.full((2, 4, 4, 3), 5.0, dtype=np.float32)
    with pytest.raises(ValueError):
        extract(imgs, "pixels", progress=False)
    ok = extract(np.full((2, 4, 4, 3), 255, dtype=np.uint8), "pixels", progress=False)
    assert ok.shape == (2, 48) and float(ok.min()) == 1.0


class _Bars:
    def __init__(self) -> None:
        self.kwargs: list[dict[str, Any]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.kwargs.append(kwargs)
        import tqdm

        return tqdm.tqdm(disable=True)


def test_extract_progress_bar_only_for_images_and_on_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.common
    from ganeval.features.extraction import extract

    bars = _Bars()
    monkeypatch.setattr(ganeval.common, "progress_bar", bars)
    imgs = np.zeros((3, 4, 4, 3), dtype=np.uint8)
    extract(imgs, "pixels")
    extract(imgs, "pixels", progress=False)
    extract(np.zeros((3, 2), dtype=np.float32), _rows_extractor())
    assert [k["disable"] for k in bars.kwargs] == [False, True, True]
    assert bars.kwargs[0]["total"] == 3


def test_extract_caches_under_the_content_key(tmp_path: Path) -> None:
    from ganeval.features.extraction import extract_with_info
    from ganeval.hashing import StreamHasher

    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    h = StreamHasher()
    h.update(a)
    content = h.hexdigest()
    ex = _rows_extractor()
    feats, info = extract_with_info(a, ex, cache_dir=tmp_path, batch_size=2, progress=False)
    path = fcache.cache_path(tmp_path, fcache.cache_key(content, {"name": "sweep5_rows"}))
    assert info["content_hash"] == content and info["cache_file"] == str(path) and info["cache_hit"] is False
    assert path.is_file() and info["n"] == 5
    ex2 = _rows_extractor()
    again, info2 = extract_with_info(a, ex2, cache_dir=tmp_path, batch_size=2, progress=False)
    assert ex2.sizes == [] and info2["cache_hit"] is True and info2["n"] == 5
    np.testing.assert_array_equal(again, feats)
    # a one-shot stream: hashed while computing, stored under the same key
    ex3 = _rows_extractor()
    gen = (b for b in (a[:3], a[3:]))
    streamed, info3 = extract_with_info(gen, ex3, cache_dir=tmp_path / "s", batch_size=2, progress=False)
    assert info3["content_hash"] == content and info3["cache_hit"] is False
    assert info3["cache_file"] == str(fcache.cache_path(tmp_path / "s", fcache.cache_key(content, {"name": "sweep5_rows"})))
    assert Path(info3["cache_file"]).is_file()
    np.testing.assert_array_equal(streamed, a * 2)


def test_extract_does_not_cache_a_set_that_changes_between_passes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from ganeval.features.extraction import extract_with_info

    class Changing:
        def __init__(self) -> None:
            self.k = 0

        def __iter__(self) -> Any:
            self.k += 1
            return iter([np.full((2, 2), self.k, dtype=np.float32)])

    with caplog.at_level("WARNING"):
        feats, info = extract_with_info(Changing(), _rows_extractor(), cache_dir=tmp_path, progress=False)
    assert "input changed between" in caplog.text
    assert info["cache_file"] is None and feats.tolist() == [[6.0, 6.0]] * 2  # third iteration (reiterable check, hash, compute)
    assert not list(tmp_path.glob("*.npz"))
    # the same set each pass (a reiterable list of batches): cached
    same = [np.ones((2, 2), dtype=np.float32)]
    _, info2 = extract_with_info(same, _rows_extractor(), cache_dir=tmp_path, progress=False)
    assert info2["cache_file"] is not None and Path(info2["cache_file"]).is_file()


def test_extract_never_caches_an_uncacheable_extractor(tmp_path: Path) -> None:
    from ganeval.features.extraction import extract_with_info

    _, info = extract_with_info(np.ones((2, 2), dtype=np.float32), "identity", cache_dir=tmp_path, progress=False)
    assert info["cache_file"] is None and "content_hash" not in info and not list(tmp_path.iterdir())


# ----------------------------------------------------------------------------------------------- extract_source


def _images(n: int = 5) -> np.ndarray:
    rng = np.random.default_rng(5)
    return rng.integers(0, 256, size=(n, 4, 4, 3), dtype=np.uint8)


def _folder(root: Path, imgs: np.ndarray, prefix: str = "im") -> Path:
    from PIL import Image

    root.mkdir(parents=True, exist_ok=True)
    for i, a in enumerate(imgs):
        Image.fromarray(a).save(root / f"{prefix}{i:02d}.png")
    return root


def _pixels_rows(imgs: np.ndarray) -> np.ndarray:
    from ganeval.features.extraction import extract

    return extract(imgs, "pixels", progress=False)


def test_extract_source_without_cache_equals_the_array_features(tmp_path: Path) -> None:
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor

    imgs = _images()
    src = ImageSource(_folder(tmp_path / "a", imgs))
    cpu = torch.device("cpu")
    feats, info = streaming.extract_source(src, get_extractor("pixels"), cpu, batch_size=1, num_workers=0,
                                           cache_dir=None, progress=False, chunk_size=2)
    assert feats is not None and feats.dtype == np.float32
    np.testing.assert_array_equal(feats, _pixels_rows(imgs))
    assert info["n"] == 5 and info["cache_hit"] is False and info["cache_file"] is None
    assert "content_hash" not in info
    one, _ = streaming.extract_source(ImageSource(tmp_path / "a"), get_extractor("pixels"), cpu, batch_size=3,
                                      num_workers=0, cache_dir=None, progress=False, chunk_size=1)
    np.testing.assert_array_equal(one, feats)
    for bad in (0, -1, "2", 2.0):
        with pytest.raises(ValueError, match="chunk_size must be a positive int"):
            streaming.extract_source(src, get_extractor("pixels"), cpu, batch_size=1, num_workers=0, cache_dir=None,
                                     progress=False, chunk_size=bad)


def test_extract_source_hash_content_on_the_way(tmp_path: Path) -> None:
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor

    imgs = _images()
    folder = _folder(tmp_path / "a", imgs)
    src = ImageSource(folder)
    feats, info = streaming.extract_source(src, get_extractor("pixels"), torch.device("cpu"), batch_size=2,
                                           num_workers=0, cache_dir=None, progress=False, chunk_size=3,
                                           hash_content=True)
    assert info["content_hash"] == ImageSource(folder).content()["stream"]
    np.testing.assert_array_equal(feats, _pixels_rows(imgs))


def test_extract_source_chunk_size_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor

    monkeypatch.setenv("GANEVAL_CHUNK_SIZE", "0")
    src = ImageSource(_folder(tmp_path / "a", _images(2)))
    with pytest.raises(ValueError, match="GANEVAL_CHUNK_SIZE"):
        streaming.extract_source(src, get_extractor("pixels"), torch.device("cpu"), batch_size=1, num_workers=0,
                                 cache_dir=None, progress=False)


def test_extract_source_progress_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.common
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor

    bars = _Bars()
    monkeypatch.setattr(ganeval.common, "progress_bar", bars)
    src = ImageSource(_folder(tmp_path / "a", _images(3)))
    for progress in (False, True):
        streaming.extract_source(src, get_extractor("pixels"), torch.device("cpu"), batch_size=2, num_workers=0,
                                 cache_dir=None, progress=progress, chunk_size=2)
    assert [k["disable"] for k in bars.kwargs] == [True, False]
    assert [(k["total"], k["initial"]) for k in bars.kwargs] == [(3, 0), (3, 0)]


def test_extract_source_caches_and_finds_the_entry(tmp_path: Path) -> None:
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor

    imgs = _images()
    folder = _folder(tmp_path / "a", imgs)
    cache = tmp_path / "cache"
    ex = get_extractor("pixels")
    feats, info = streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=2,
                                           num_workers=0, cache_dir=cache, progress=False, chunk_size=2)
    content = ImageSource(folder).content()["stream"]
    path = fcache.cache_path(cache, fcache.cache_key(content, ex.identity()))
    assert info["cache_hit"] is False and info["content_hash"] == content and info["cache_file"] == str(path)
    assert path.is_file() and not any((cache / "partial").iterdir())
    np.testing.assert_array_equal(feats, _pixels_rows(imgs))
    again, info2 = streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=2,
                                            num_workers=0, cache_dir=cache, progress=False, chunk_size=2)
    assert info2["cache_hit"] is True and info2["n"] == 5 and info2["cache_file"] == str(path)
    np.testing.assert_array_equal(again, feats)
    # the same pixels in other files: extracted in one pass, then the existing entry is found and used
    other = _folder(tmp_path / "b", imgs, prefix="other")
    third, info3 = streaming.extract_source(ImageSource(other), ex, torch.device("cpu"), batch_size=2,
                                            num_workers=0, cache_dir=cache, progress=False, chunk_size=2)
    assert info3["cache_hit"] is True and info3["content_hash"] == content
    np.testing.assert_array_equal(third, feats)


def test_extract_source_resumes_a_stopped_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture) -> None:
    import ganeval.common
    from ganeval.features.simple import PixelsExtractor

    from ganeval.data.sources import ImageSource

    class Stops(PixelsExtractor):
        calls = 0

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            Stops.calls += 1
            if Stops.calls > 4:
                raise KeyboardInterrupt
            return super().__call__(batch)

    imgs = _images()
    folder = _folder(tmp_path / "a", imgs)
    cache = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        streaming.extract_source(ImageSource(folder), Stops(), torch.device("cpu"), batch_size=1, num_workers=0,
                                 cache_dir=cache, progress=False, chunk_size=2)
    chunks = sorted(p.name for p in (cache / "partial").rglob("chunk-*.npz"))
    assert chunks == ["chunk-000000.npz", "chunk-000001.npz"]
    bars = _Bars()
    monkeypatch.setattr(ganeval.common, "progress_bar", bars)
    ex = PixelsExtractor()
    with caplog.at_level("INFO", logger="ganeval.features.streaming"):
        feats, info = streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=1,
                                               num_workers=0, cache_dir=cache, progress=False, chunk_size=2)
    assert "2 of 3 chunks on disk" in caplog.text
    extraction_bar = [k for k in bars.kwargs if k.get("desc", "").startswith("features")]
    assert [(k["total"], k["initial"]) for k in extraction_bar] == [(5, 4)]
    np.testing.assert_array_equal(feats, _pixels_rows(imgs))
    content = ImageSource(folder).content()["stream"]
    assert info["cache_file"] == str(fcache.cache_path(cache, fcache.cache_key(content, ex.identity())))
    assert Path(info["cache_file"]).is_file() and not any((cache / "partial").iterdir())


def test_one_pass_only_while_the_content_is_unknown(tmp_path: Path) -> None:
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor

    folder = _folder(tmp_path / "a", _images(2))
    src = ImageSource(folder)
    ex = get_extractor("pixels")
    assert streaming.one_pass(src, ex, 0, tmp_path / "c") is True
    assert streaming.one_pass(src, ex, 2, tmp_path / "c") is True  # pixels has no host stage
    src.content(cache_dir=tmp_path / "c")
    assert streaming.one_pass(ImageSource(folder), ex, 0, tmp_path / "c") is False
    assert streaming.host_stage_in_workers(ex, 3) is False


# ----------------------------------------------------------------------------------------------- reference


def test_reference_meta_records_weights_and_source(tmp_path: Path) -> None:
    import hashlib

    from ganeval.features.base import get_extractor
    from ganeval.features.reference import reference_meta

    plain = reference_meta(get_extractor("pixels"), 7, "abc")
    assert plain["weights_sha256"] is None and plain["n"] == 7 and plain["content_hash"] == "abc"
    assert "source" not in plain
    assert reference_meta(get_extractor("pixels"), 7, None, "folder/x")["source"] == "folder/x"
    w = tmp_path / "w.bin"
    w.write_bytes(b"weights")
    ex = _rows_extractor()
    ex.weights_path = lambda: w
    meta = reference_meta(ex, 2, None)
    assert meta["weights_sha256"] == hashlib.sha256(b"weights").hexdigest()


def test_write_outputs_names_the_space_in_the_stats(tmp_path: Path) -> None:
    from ganeval.features.reference import write_outputs

    feats = np.arange(12, dtype=np.float64).reshape(4, 3)
    ref, stats = tmp_path / "r.npz", tmp_path / "s.npz"
    mom = write_outputs(feats, {"extractor": {"name": "pixels"}}, ref, stats)
    np.testing.assert_allclose(mom.mu, feats.mean(axis=0), rtol=1e-12)
    assert ref.is_file()
    with np.load(stats) as z:
        assert str(z["extractor"]) == "pixels"
        np.testing.assert_allclose(z["mu"], feats.mean(axis=0), rtol=1e-12)
    with pytest.raises(Exception, match="exists"):
        write_outputs(feats, {"extractor": {"name": "pixels"}}, None, stats)
    only = tmp_path / "only.npz"
    write_outputs(feats, {}, None, only)
    with np.load(only) as z:
        assert "extractor" not in z.files
    assert not (tmp_path / "none.npz").exists()
    write_outputs(feats, {}, tmp_path / "ref_only.npz", None)
    assert (tmp_path / "ref_only.npz").is_file()


def test_save_reference_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.common
    from ganeval.features.reference import save_reference
    from ganeval.hashing import StreamHasher

    rows = np.arange(120, dtype=np.float32).reshape(60, 2)
    ex = _rows_extractor()
    path = tmp_path / "ref.npz"
    save_reference(rows, path, features=ex)
    assert ex.sizes == [50, 10]
    h = StreamHasher()
    h.update(rows)
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
    assert meta["content_hash"] == h.hexdigest() and meta["n"] == 60
    with pytest.raises(Exception, match="exists"):
        save_reference(rows, path, features=_rows_extractor())
    save_reference(rows, path, features=_rows_extractor(), overwrite=True)
    with pytest.raises(ValueError, match="give path="):
        save_reference(rows, features=_rows_extractor())
    stats = tmp_path / "s.npz"
    save_reference(rows, stats=stats, features=_rows_extractor())
    assert stats.is_file()
    bars = _Bars()
    monkeypatch.setattr(ganeval.common, "progress_bar", bars)
    save_reference(np.zeros((2, 4, 4, 3), dtype=np.uint8), tmp_path / "p.npz", features="pixels")
    assert [k["disable"] for k in bars.kwargs] == [False]


# ----------------------------------------------------------------------------------------------- distributed (faked)


class _FakeDist:
    """torch.distributed's calls as `distributed` uses them, recorded, without a process group."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, available: bool, initialized: bool, rank: int = 0,
                 world: int = 1) -> None:
        import torch.distributed as dist

        self.calls: list[tuple[Any, ...]] = []
        monkeypatch.setattr(dist, "is_available", lambda: available)
        monkeypatch.setattr(dist, "is_initialized", lambda: initialized)
        monkeypatch.setattr(dist, "get_rank", lambda: rank)
        monkeypatch.setattr(dist, "get_world_size", lambda: world)
        monkeypatch.setattr(dist, "init_process_group", lambda backend: self.calls.append(("init", backend)))
        monkeypatch.setattr(dist, "destroy_process_group", lambda: self.calls.append(("destroy",)))
        monkeypatch.setattr(dist, "new_group", lambda backend: self.calls.append(("group", backend)) or "GROUP")

        def gather(parts: Any, out: Any, dst: int, group: Any) -> None:
            self.calls.append(("gather", dst, group, None if out is None else len(out)))
            if out is not None:
                out[0] = parts
                out[1] = {1: "one", 3: "three"}

        monkeypatch.setattr(dist, "gather_object", gather)


def test_rank_world_reads_the_group_only_when_initialized(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.features import distributed as fd

    _FakeDist(monkeypatch, True, False, rank=3, world=4)
    assert fd.rank_world() == (0, 1) and fd.is_main() is True
    _FakeDist(monkeypatch, False, True, rank=3, world=4)
    assert fd.rank_world() == (0, 1)
    _FakeDist(monkeypatch, True, True, rank=3, world=4)
    assert fd.rank_world() == (3, 4) and fd.is_main() is False
    _FakeDist(monkeypatch, True, True, rank=0, world=4)
    assert fd.is_main() is True


def test_init_from_env_joins_only_for_several_ranks(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.features import distributed as fd

    fake = _FakeDist(monkeypatch, True, False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert fd.init_from_env("cpu") == "cpu" and fd.init_from_env(None) is None
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert fd.init_from_env("dev") == "dev" and fake.calls == []
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert fd.init_from_env(None) is None and fake.calls == [("init", "gloo")]
    fake2 = _FakeDist(monkeypatch, True, True)
    assert fd.init_from_env("cpu") == "cpu" and fake2.calls == []


def test_init_from_env_takes_the_local_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.features import distributed as fd

    devices: list[int] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_device", lambda i: devices.append(i))
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    fake = _FakeDist(monkeypatch, True, False)
    assert fd.init_from_env(None) == "cuda:1" and fake.calls == [("init", "nccl")] and devices == [1]
    assert fd.init_from_env("cuda:0") == "cuda:1"
    fake2 = _FakeDist(monkeypatch, True, False)
    assert fd.init_from_env("cpu") == "cpu" and fake2.calls == [("init", "gloo")] and devices == [1, 1]
    monkeypatch.delenv("LOCAL_RANK")
    assert fd.init_from_env(None) == "cuda:0" and devices[-1] == 0


def test_init_from_env_without_cuda_uses_gloo_for_any_device(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.features import distributed as fd

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("WORLD_SIZE", "3")
    fake = _FakeDist(monkeypatch, True, False)
    assert fd.init_from_env("cuda:0") == "cuda:0" and fake.calls == [("init", "gloo")]


def test_leave_group_only_when_joined(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.features import distributed as fd

    fake = _FakeDist(monkeypatch, True, False)
    fd.leave_group()
    assert fake.calls == []
    fake2 = _FakeDist(monkeypatch, False, True)
    fd.leave_group()
    assert fake2.calls == []
    fake3 = _FakeDist(monkeypatch, True, True)
    fd.leave_group()
    assert fake3.calls == [("destroy",)]


def test_gather_to_main_merges_on_rank_0(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.features import distributed as fd

    monkeypatch.setattr(fd, "_GATHER_GROUP", None)
    parts = {0: "zero", 2: "two"}
    _FakeDist(monkeypatch, True, False)
    assert fd.gather_to_main(parts) is parts
    fake = _FakeDist(monkeypatch, True, True, rank=0, world=2)
    assert fd.gather_to_main(parts) == {0: "zero", 1: "one", 2: "two", 3: "three"}
    assert fake.calls == [("group", "gloo"), ("gather", 0, "GROUP", 2)]
    fake1 = _FakeDist(monkeypatch, True, True, rank=1, world=2)
    assert fd.gather_to_main(parts) is None
    assert fake1.calls == [("gather", 0, "GROUP", None)]  # the group made once


def test_extract_source_as_a_faked_torchrun_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """rank r of 2 computes chunks r, r+2, ...; rank 0 gets every chunk (the gather faked) in source order."""
    import ganeval.common
    import torch.distributed as dist
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor

    imgs = _images()
    expect = _pixels_rows(imgs)
    folder = _folder(tmp_path / "a", imgs)
    bounds = [(0, 2), (2, 4), (4, 5)]
    seen: dict[str, Any] = {}

    def gather(done: dict[int, np.ndarray], device: Any) -> Any:
        seen["mine"] = sorted(done)
        for i, part in done.items():
            np.testing.assert_array_equal(part, expect[bounds[i][0]:bounds[i][1]])
        return {**done, 1: expect[2:4]} if seen["rank"] == 0 else None

    monkeypatch.setattr(streaming, "gather_to_main", gather)
    bars = _Bars()
    monkeypatch.setattr(ganeval.common, "progress_bar", bars)
    content = ImageSource(folder).content()

    def broadcast(box: list[Any], src: int) -> None:
        seen["src"], seen["sent"] = src, box[0]
        if box[0] is None:
            box[0] = content

    monkeypatch.setattr(dist, "broadcast_object_list", broadcast)
    ex = get_extractor("pixels")
    for rank in (1, 0):
        bars.kwargs.clear()
        seen["rank"] = rank
        monkeypatch.setattr(streaming, "rank_world", lambda r=rank: (r, 2))
        cache = tmp_path / f"cache{rank}"
        feats, info = streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=1,
                                               num_workers=0, cache_dir=cache, progress=True, chunk_size=2)
        assert seen["mine"] == ([1] if rank == 1 else [0, 2]) and seen["src"] == 0
        assert seen["sent"] == (None if rank == 1 else content)
        hashing = [k for k in bars.kwargs if k.get("desc", "").startswith("hashing")]
        assert [k["disable"] for k in hashing] == ([] if rank == 1 else [False])
        assert info["content_hash"] == content["stream"] and info["n"] == 5
        path = fcache.cache_path(cache, fcache.cache_key(content["stream"], ex.identity()))
        if rank == 1:
            assert feats is None and not path.exists()
            assert bars.kwargs[-1]["disable"] is True and bars.kwargs[-1]["total"] == 2
        else:
            assert feats is not None and feats.flags["C_CONTIGUOUS"]
            np.testing.assert_array_equal(feats, expect)
            assert path.is_file() and info["cache_file"] == str(path)
            assert bars.kwargs[-1]["disable"] is False and bars.kwargs[-1]["total"] == 3
        bars.kwargs.clear()
        hit, info_hit = streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=1,
                                                 num_workers=0, cache_dir=cache, progress=True, chunk_size=2)
        if rank == 0:
            assert info_hit["cache_hit"] is True and hit is not None
            np.testing.assert_array_equal(hit, expect)
        else:
            assert hit is None and info_hit["cache_hit"] is False
    # rank 0, no progress: the hashing pass shows no bar either
    monkeypatch.setattr(streaming, "rank_world", lambda: (0, 2))
    bars.kwargs.clear()
    streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=1, num_workers=0,
                             cache_dir=tmp_path / "quiet", progress=False, chunk_size=2)
    assert [k["disable"] for k in bars.kwargs] == [True, True]
    # without a cache
    seen["rank"] = 0
    monkeypatch.setattr(streaming, "rank_world", lambda: (0, 2))
    feats, info = streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=2,
                                           num_workers=0, cache_dir=None, progress=False, chunk_size=2,
                                           hash_content=True)
    np.testing.assert_array_equal(feats, expect)
    assert seen["mine"] == [0, 2] and "content_hash" not in info


def test_extract_source_bar_and_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import ganeval.common
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor

    bars = _Bars()
    monkeypatch.setattr(ganeval.common, "progress_bar", bars)
    folder = _folder(tmp_path / "a", _images(3))
    for cache in (None, tmp_path / "c", tmp_path / "c"):
        t0 = time.perf_counter()
        _, info = streaming.extract_source(ImageSource(folder), get_extractor("pixels"), torch.device("cpu"),
                                           batch_size=2, num_workers=0, cache_dir=cache, progress=False, chunk_size=2)
        assert 0 <= info["seconds"] <= time.perf_counter() - t0
    assert info["cache_hit"] is True
    k = bars.kwargs[0]
    assert k["unit"] == "img" and k["unit_scale"] is True and k["smoothing"] == 0.1
    assert k["desc"] == "features[pixels] a"


def test_extract_source_hashes_on_the_way_only_when_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.data.sources import ImageSource
    from ganeval.features.base import get_extractor
    from ganeval.hashing import stable_hash

    calls: list[int] = []
    real = streaming.shared_content

    def counting(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(streaming, "shared_content", counting)
    folder = _folder(tmp_path / "a", _images(3))
    cache = tmp_path / "c"
    ex = get_extractor("pixels")
    made: list[str] = []
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *a: Any, **k: Any) -> None:
        if self.parent.name == "partial":
            made.append(self.name)
        real_mkdir(self, *a, **k)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    src = ImageSource(folder)
    streaming.extract_source(src, ex, torch.device("cpu"), batch_size=2, num_workers=0, cache_dir=cache,
                             progress=False, chunk_size=2)
    key = stable_hash({"files": src.files_key(cache), "extractor": ex.identity()}, 32)
    assert calls == [] and set(made) == {f"files-{key}-b2-c2"}
    streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=2, num_workers=0,
                             cache_dir=tmp_path / "c2", progress=False, chunk_size=2)
    assert calls == []
    _, info = streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=2, num_workers=0,
                                       cache_dir=cache, progress=False, chunk_size=2)
    assert calls == [1] and info["cache_hit"] is True
    # the content remembered, the entry gone: extracted into the key's folder
    Path(info["cache_file"]).unlink()
    made.clear()
    _, info2 = streaming.extract_source(ImageSource(folder), ex, torch.device("cpu"), batch_size=2, num_workers=0,
                                        cache_dir=cache, progress=False, chunk_size=3)
    assert calls == [1, 1] and info2["cache_hit"] is False
    assert set(made) == {f"{Path(info['cache_file']).stem}-b2-c3"} and Path(info2["cache_file"]).is_file()


def test_extract_defaults_read_a_dataset_in_this_process_unpinned() -> None:
    import warnings

    from ganeval.features.extraction import extract, extract_with_info

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = extract(_Items(), _rows_extractor(), progress=False)
        got2, _ = extract_with_info(_Items(), _rows_extractor(), progress=False)
    assert got.tolist() == [[2.0 * i] for i in range(6)] and got2.tolist() == got.tolist()
    a = np.arange(120, dtype=np.float32).reshape(60, 2)
    ex = _rows_extractor()
    extract(a, ex, progress=False)
    assert ex.sizes == [50, 10]


def test_extract_bar_and_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import ganeval.common
    from ganeval.features.extraction import extract_with_info

    bars = _Bars()
    monkeypatch.setattr(ganeval.common, "progress_bar", bars)
    imgs = np.zeros((3, 4, 4, 3), dtype=np.uint8)
    for cache in (None, tmp_path, tmp_path):
        t0 = time.perf_counter()
        _, info = extract_with_info(imgs, "pixels", cache_dir=cache, batch_size=2)
        assert 0 <= info["seconds"] <= time.perf_counter() - t0
    assert info["cache_hit"] is True
    k = bars.kwargs[0]
    assert k["unit"] == "img" and k["unit_scale"] is True and k["smoothing"] == 0.1 and k["total"] == 3
    assert k["desc"] == "features[pixels]"


def test_extract_progress_bar_counts_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.common
    from ganeval.features.extraction import extract

    counted: list[int] = []

    class Bar:
        def update(self, k: int) -> None:
            counted.append(k)

        def close(self) -> None:
            pass

    monkeypatch.setattr(ganeval.common, "progress_bar", lambda *a, **k: Bar())
    extract(np.zeros((5, 7), dtype=np.float32), _rows_extractor(), batch_size=2)
    assert counted == [2, 2, 1]


def test_cache_never_unpickles(tmp_path: Path) -> None:
    feats = np.ones((2, 2), dtype=np.float32)
    path = tmp_path / "pickled.npz"
    np.savez(path, features=feats, checksum=np.array(array_checksum(feats)), meta=np.array("{}", dtype=object))
    assert fcache.load_cached(path, 2, {}) is None


def test_extract_source_host_stage_sees_channels_last_unpinned_batches(tmp_path: Path) -> None:
    import warnings

    from ganeval.data.sources import ImageSource
    from ganeval.features.simple import PixelsExtractor

    seen: list[tuple[bool, bool]] = []

    class Host(PixelsExtractor):
        def host_stage(self, batch: torch.Tensor) -> torch.Tensor:
            seen.append((batch.is_contiguous(memory_format=torch.channels_last), batch.is_contiguous()))
            return batch

    imgs = _images(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        feats, _ = streaming.extract_source(ImageSource(_folder(tmp_path / "a", imgs)), Host(), torch.device("cpu"),
                                            batch_size=2, num_workers=0, cache_dir=None, progress=False,
                                            chunk_size=2)
    assert seen == [(True, False), (True, False)]
    np.testing.assert_array_equal(feats, _pixels_rows(imgs))
