"""Sweep 5 (gan + common): exact pins of argument edges, defaults, branches and constants of the generator
sources, chunk planning, training helpers and the small common modules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from ganeval.gan import chunked
from ganeval.gan.chunked import Call, plan
from ganeval.gan.generators import CallableGenerator, CheckpointGenerator, ModuleGenerator
from ganeval.gan.sampling import latent


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
class Recorder(nn.Module):
    """Images (n, C, 2, 2) in [-1, 1] from the latent's first entries; records every batch of latents it sees."""

    def __init__(self, channels: int = 1, ndim: int = 4, fixed_rows: int | None = None) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))
        self.seen: list[torch.Tensor] = []
        self.channels, self.ndim, self.fixed_rows = channels, ndim, fixed_rows

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        self.seen.append(z.detach().clone())
        n = len(z) if self.fixed_rows is None else self.fixed_rows
        v = torch.tanh(z.reshape(len(z), -1)[:, :1]) * self.w
        v = v[:1].expand(n, 1) if self.fixed_rows is not None else v
        if self.ndim == 2:
            return v.expand(n, 3)
        if self.ndim == 3:
            return v[:, :, None].expand(n, 2, 2)
        return v[:, :, None, None].expand(n, self.channels, 2, 2)


def _points(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, 3))


# ------------------------------------------------------------------------------------------------
# _Base._check_request
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,seed,bs,ok", [
    (1, 0, 1, True), (0, 0, 1, False), (1, -1, 1, False), (1, 0, 0, False),
    (np.int64(1), np.int64(0), np.int64(1), True), (True, 0, 1, False), (1, 0, 1.0, False),
])  # fmt: skip
def test_check_request_least_legal_and_first_illegal(n: Any, seed: Any, bs: Any, ok: bool) -> None:
    g = CallableGenerator(_points, points=True)
    if ok:
        g._check_request(n, seed, bs)
    else:
        with pytest.raises(ValueError, match="must be an int >="):
            g._check_request(n, seed, bs)


def test_check_request_names_the_bound() -> None:
    g = CallableGenerator(_points, points=True)
    for args, text in (((0, 0, 1), "n must be an int >= 1"), ((1, -1, 1), "seed must be an int >= 0"),
                       ((1, 0, 0), "batch_size must be an int >= 1")):
        with pytest.raises(ValueError, match=text):
            g._check_request(*args)


def test_base_name_and_replicas() -> None:
    g = CallableGenerator(_points, points=True)
    assert g.name == "_points" and g.replicas is None
    g = CallableGenerator(_points, name="x", points=True, replicas=(1, 2))
    assert g.name == "x" and g.replicas == [1, 2]
    assert CallableGenerator(lambda n, s: 0, name="").name == "<lambda>"
    assert CallableGenerator("math:floor").name == "math:floor"


# ------------------------------------------------------------------------------------------------
# ModuleGenerator
# ------------------------------------------------------------------------------------------------
def test_module_generator_defaults_and_ranges() -> None:
    g = ModuleGenerator(Recorder(), [1])
    assert g.output_range == (-1.0, 1.0) and g.strict is True and g.state_dict_path is None
    assert ModuleGenerator(Recorder(), [1], output_range=(0, 1)).output_range == (0.0, 1.0)
    assert ModuleGenerator(Recorder(), [1], output_range=(2, 5)).output_range == (2.0, 5.0)
    assert ModuleGenerator(Recorder(), [1], output_range=None).output_range is None
    for bad in ((1, 1), (1, 0)):
        with pytest.raises(ValueError, match="output_range must be"):
            ModuleGenerator(Recorder(), [1], output_range=bad)
    assert ModuleGenerator(Recorder(), [1], output_range=(0.0, 1e-9)).output_range == (0.0, 1e-9)


@pytest.mark.parametrize("shape,ok", [([1], True), ([1, 1, 1], True), ([], False), ([0], False), ([2, 0], False),
                                      ([0, 2], False), ([-1], False)])
def test_module_generator_latent_shape_edges(shape: list[int], ok: bool) -> None:
    if ok:
        assert ModuleGenerator(Recorder(), shape).latent_shape == tuple(shape)
    else:
        with pytest.raises(ValueError, match="latent_shape must be positive"):
            ModuleGenerator(Recorder(), shape)


def test_module_generator_validate_draws_two_latents_of_seed_0() -> None:
    m = Recorder()
    g = ModuleGenerator(m, [3])
    g.validate()
    assert len(m.seen) == 1
    assert torch.equal(m.seen[0], latent(2, (3,), 0))
    assert g._shape == (1, 2, 2)
    assert g.sample_shape() == (1, 2, 2)
    assert len(m.seen) == 1  # sample_shape after validate does not run the module again


def test_module_generator_sample_shape_validates_once() -> None:
    m = Recorder(channels=3)
    g = ModuleGenerator(m, [2])
    assert g.sample_shape() == (3, 2, 2)
    assert len(m.seen) == 1 and torch.equal(m.seen[0], latent(2, (2,), 0))
    assert g.sample_shape() == (3, 2, 2) and len(m.seen) == 1


def test_module_generator_sample_uses_the_seed_and_batches_of_500() -> None:
    m = Recorder()
    g = ModuleGenerator(m, [1])
    out = g.sample(501, seed=3)
    assert [len(z) for z in m.seen] == [500, 1]
    assert torch.equal(torch.cat(m.seen), latent(501, (1,), 3))
    z = latent(501, (1,), 3)[:, 0].double()
    want = np.clip(np.round((np.tanh(z.numpy()) + 1) / 2 * 255), 0, 255)
    assert out.dtype == np.uint8 and out.shape == (501, 1, 2, 2)
    assert np.abs(out[:, 0, 0, 0].astype(int) - want.astype(int)).max() <= 1
    assert g._module is m


def test_module_generator_sample_batches_default_and_offsets() -> None:
    m = Recorder()
    g = ModuleGenerator(m, [1])
    batches = list(g.sample_batches(501, seed=2))
    assert [len(b) for b in batches] == [500, 1]
    assert torch.equal(torch.cat(m.seen), latent(501, (1,), 2))
    m2 = Recorder(ndim=2)
    g2 = ModuleGenerator(m2, [1], output_range=None)
    parts = list(g2.sample_batches(5, seed=1, batch_size=2))
    assert [len(p) for p in parts] == [2, 2, 1]
    assert torch.equal(torch.cat(m2.seen), latent(5, (1,), 1))
    assert all(p.dtype == np.float32 for p in parts)
    whole = ModuleGenerator(Recorder(ndim=2), [1], output_range=None).sample(5, seed=1, batch_size=2)
    assert np.array_equal(np.concatenate(parts), whole)
    assert whole.shape == (5, 3)
    imgs = list(ModuleGenerator(Recorder(), [1]).sample_batches(3, seed=1, batch_size=2))
    assert [b.dtype for b in imgs] == [np.uint8, np.uint8] and imgs[1].shape == (1, 1, 2, 2)


def test_module_generator_points_and_output_checks() -> None:
    g = ModuleGenerator(Recorder(ndim=2), [1], output_range=None)
    pts = g.sample(3, seed=0)
    assert pts.shape == (3, 3) and pts.dtype == np.float32
    assert np.allclose(pts[:, 0], np.tanh(latent(3, (1,), 0)[:, 0].numpy()), rtol=1e-6, atol=0)
    with pytest.raises(ValueError, match=r"expected points of shape \(3, D\)"):
        ModuleGenerator(Recorder(ndim=4), [1], output_range=None).sample(3, 0)
    with pytest.raises(ValueError, match=r"expected points of shape \(3, D\)"):
        ModuleGenerator(Recorder(ndim=2, fixed_rows=4), [1], output_range=None).sample(3, 0)
    # 3-D images get a channel axis
    im = ModuleGenerator(Recorder(ndim=3), [1]).sample(2, 0)
    assert im.shape == (2, 1, 2, 2)
    assert ModuleGenerator(Recorder(channels=3), [1]).sample(2, 0).shape == (2, 3, 2, 2)
    for m in (Recorder(channels=2), Recorder(channels=4), Recorder(ndim=2), Recorder(fixed_rows=3)):
        with pytest.raises(ValueError, match=r"expected images of shape \(2, 1 or 3, H, W\)"):
            ModuleGenerator(m, [1]).sample(2, 0)


def test_module_generator_builds_from_target_and_reports_identity(tmp_path: Path) -> None:
    spec = {"_target_": "torch.nn.Linear", "in_features": 2, "out_features": 3}
    g = ModuleGenerator(spec, [2], output_range=None, name="lin")
    ident = g.identity()
    assert ident == {"kind": "module", "name": "lin", "target": "torch.nn.Linear", "latent_shape": [2],
                     "output_range": None, "kwargs": {"in_features": 2, "out_features": 3}}
    g.validate()
    assert isinstance(g._module, nn.Linear) and g.sample_shape() == (3,)
    ident = g.identity()
    assert ident["class"] == "torch.nn.modules.linear.Linear" and len(ident["weights_sha256"]) == 64
    # a wrapped state dict {"state_dict": ...} is unwrapped; the file is named in the identity
    lin = nn.Linear(2, 3)
    p = tmp_path / "sd.pt"
    torch.save({"state_dict": lin.state_dict()}, p)
    g2 = ModuleGenerator(spec, [2], output_range=None, state_dict=p)
    assert torch.equal(g2._build().weight, lin.weight)
    ident2 = g2.identity()
    assert ident2["state_dict"]["path"] == str(p) and len(ident2["state_dict"]["sha256"]) == 64
    assert "state_dict" not in ModuleGenerator(nn.Linear(2, 3), [2], output_range=None).identity()
    assert ModuleGenerator(nn.Linear(2, 3), [2], output_range=(0, 1)).identity()["output_range"] == [0.0, 1.0]


def test_module_generator_build_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="module must be an nn.Module or a mapping with _target_"):
        ModuleGenerator({"in_features": 2}, [2])._build()
    with pytest.raises(ValueError, match="expected a torch.nn.Module"):
        ModuleGenerator({"_target_": "builtins.dict"}, [2])._build()
    with pytest.raises(ValueError, match="does not exist"):
        ModuleGenerator(nn.Linear(2, 3), [2], state_dict=tmp_path / "missing.pt")._build()
    p = tmp_path / "pickled.pt"
    torch.save({"weight": Path("x")}, p)  # not loadable with weights_only=True
    with pytest.raises(ValueError, match="is not a readable state dict"):
        ModuleGenerator(nn.Linear(2, 3), [2], state_dict=p)._build()
    extra = nn.Linear(2, 3).state_dict()
    extra["other"] = torch.zeros(1)
    q = tmp_path / "extra.pt"
    torch.save(extra, q)
    with pytest.raises(ValueError, match="does not fit module"):
        ModuleGenerator(nn.Linear(2, 3), [2], state_dict=q)._build()  # strict by default
    assert isinstance(ModuleGenerator(nn.Linear(2, 3), [2], state_dict=q, strict=False)._build(), nn.Linear)


# ------------------------------------------------------------------------------------------------
# CheckpointGenerator (without training: the loaded module stubbed)
# ------------------------------------------------------------------------------------------------
def test_checkpoint_generator_name_from_folder(tmp_path: Path) -> None:
    assert CheckpointGenerator(tmp_path / "run7" / "last.pt").name == "run7"
    assert CheckpointGenerator("last.pt").name == "last"
    assert CheckpointGenerator(tmp_path / "a.pt", name="n").name == "n"


def test_checkpoint_generator_default_batch_size_and_identity_of_missing_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.gan.generators as gens

    seen: dict[str, Any] = {}

    def fake_generate(module: Any, z: torch.Tensor, **kw: Any) -> np.ndarray:
        seen.update(kw, z=z)
        return np.zeros((len(z), 1, 2, 2), np.uint8)

    def fake_batches(module: Any, z: torch.Tensor, **kw: Any) -> Any:
        seen.update(kw, z=z)
        yield np.zeros((len(z), 1, 2, 2), np.uint8)

    monkeypatch.setattr(gens, "generate", fake_generate)
    monkeypatch.setattr(gens, "generate_batches", fake_batches)
    m = Recorder()
    m.latent_shape = (2,)  # type: ignore[assignment]
    m.output_range = (-1.0, 1.0)  # type: ignore[assignment]
    g = CheckpointGenerator(tmp_path / "missing.pt")
    g._module = m  # type: ignore[assignment]
    g.sample(3, seed=5)
    assert seen["batch_size"] == 500 and seen["output_range"] == (-1.0, 1.0)
    assert torch.equal(seen["z"], latent(3, (2,), 5))
    seen.clear()
    list(g.sample_batches(2, seed=1))
    assert seen["batch_size"] == 500 and torch.equal(seen["z"], latent(2, (2,), 1))
    assert g.identity() == {"kind": "checkpoint", "name": "tmp_path" if False else g.name,
                            "path": str(tmp_path / "missing.pt"), "sha256": None}


# ------------------------------------------------------------------------------------------------
# CallableGenerator
# ------------------------------------------------------------------------------------------------
class Calls:
    """A recording callable: uint8 images (n, 1, 2, 2) whose pixel is the global row index + seed."""

    def __init__(self, offset: bool = False) -> None:
        self.calls: list[tuple[int, int, dict[str, int]]] = []
        self.__name__ = "calls"
        self.__qualname__ = "Calls"
        if offset:
            self.__call__ = None  # type: ignore[assignment]

    def __call__(self, n: int, seed: int) -> np.ndarray:
        self.calls.append((n, seed, {}))
        return (np.arange(n, dtype=np.uint8)[:, None, None, None] + seed).repeat(2, 2).repeat(2, 3)


def _offset_fn_factory() -> tuple[Any, list[tuple[int, int, int]]]:
    calls: list[tuple[int, int, int]] = []

    def fn(n: int, seed: int, offset: int = 0) -> np.ndarray:
        calls.append((n, seed, offset))
        rows = np.arange(offset, offset + n, dtype=np.uint8) + np.uint8(seed)
        return np.broadcast_to(rows[:, None, None, None], (n, 1, 2, 2)).copy()

    return fn, calls


def test_callable_validate_draws_seed_0_and_checks_offset_rows() -> None:
    fn, calls = _offset_fn_factory()
    g = CallableGenerator(fn)
    g.validate()
    assert g._shape == (1, 2, 2)
    # sample(2, 0): the probe fn(1, 0, offset=0), the chunk fn(2, 0, offset=0); then fn(3, 0) and fn(1, 0, offset=2)
    assert calls == [(1, 0, 0), (2, 0, 0), (3, 0, 0), (1, 0, 2)]


def test_callable_validate_refuses_a_broken_offset_promise() -> None:
    def fn(n: int, seed: int, offset: int = 0) -> np.ndarray:
        return np.full((n, 1, 2, 2), offset, np.uint8)  # ignores the rows before offset

    with pytest.raises(ValueError, match="differs from row 2"):
        CallableGenerator(fn).validate()

    def good(n: int, seed: int, offset: int = 0) -> np.ndarray:  # row r holds r (seed ignored)
        return np.broadcast_to(np.arange(offset, offset + n, dtype=np.uint8)[:, None, None, None], (n, 1, 2, 2)).copy()

    CallableGenerator(good).validate()


def test_callable_plain_validate_and_probe_calls() -> None:
    rec = Calls()
    g = CallableGenerator(rec)
    assert g.sample_shape() == (1, 2, 2)
    assert [c[:2] for c in rec.calls] == [(1, 0), (2, 0)]
    assert g.sample_shape() == (1, 2, 2) and len(rec.calls) == 2
    rec.calls.clear()
    out = g.sample(1, seed=4)
    assert [c[:2] for c in rec.calls] == [(1, 4)] and out[0, 0, 0, 0] == 4  # one row: no probe
    rec.calls.clear()
    out = g.sample(3, seed=4)
    assert [c[:2] for c in rec.calls] == [(1, 4), (3, 4)]
    assert out[:, 0, 0, 0].tolist() == [4, 5, 6] and out.shape == (3, 1, 2, 2)


def test_callable_fixed_seed_replaces_the_request_seed_and_is_checked() -> None:
    rec = Calls()
    g = CallableGenerator(rec, seed=7)
    assert g.sample(2, seed=0)[:, 0, 0, 0].tolist() == [7, 8]
    assert g.identity()["seed"] == 7
    assert "seed" not in CallableGenerator(Calls()).identity()
    assert CallableGenerator(Calls(), seed=0).seed == 0
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        CallableGenerator(Calls(), seed=-1)


def test_callable_spec_and_layout_checks() -> None:
    assert CallableGenerator(Calls(), layout="NHWC").layout == "nhwc"
    assert "layout" not in CallableGenerator(Calls()).identity()
    assert CallableGenerator(Calls(), layout="nchw").identity()["layout"] == "nchw"
    with pytest.raises(ValueError, match="layout must be one of auto, nchw, nhwc"):
        CallableGenerator(Calls(), layout="hwc")
    assert CallableGenerator("math:floor").function == "math:floor"
    for bad in ("math.floor", "a:b:c", ":floor", "math:", ":"):
        with pytest.raises(ValueError, match="must look like 'package.module:function'"):
            CallableGenerator(bad)
    with pytest.raises(ValueError, match="has no attribute 'nope'"):
        CallableGenerator("math:nope")._resolve()
    with pytest.raises(ValueError, match="is not callable"):
        CallableGenerator("math:pi")._resolve()
    assert CallableGenerator("os.path:join")._resolve() is __import__("os").path.join
    assert CallableGenerator("math:floor")._module_name() == "math"
    assert CallableGenerator(_points)._module_name() == __name__
    f = Calls()
    f.__module__ = ""  # type: ignore[misc]
    assert CallableGenerator(f)._module_name() == "__main__"


def test_callable_points_default_false_refuses_rows() -> None:
    with pytest.raises(ValueError):
        CallableGenerator(_points).sample(2, 0)
    assert CallableGenerator(_points).points is False
    assert CallableGenerator(_points, points=True).sample(2, 0).shape == (2, 3)


def test_callable_points_none_reads_2d_as_feature_rows() -> None:
    g = CallableGenerator(lambda n, s: np.arange(n * 2, dtype=np.int64).reshape(n, 2), points=None)
    assert g.sample(3, 0).tolist() == [[0, 1], [2, 3], [4, 5]]
    g = CallableGenerator(lambda n, s: np.ones((n, 2), np.float32), points=None)
    assert g.sample(2, 0).dtype == np.float32
    with pytest.raises(ValueError, match=r"expected feature rows of shape \(2, D\)"):
        CallableGenerator(lambda n, s: np.ones((n + 1, 2)), points=None).sample(2, 0)
    with pytest.raises(ValueError, match="holding numbers"):
        CallableGenerator(lambda n, s: np.ones((n, 2), bool), points=None).sample(2, 0)
    img = CallableGenerator(lambda n, s: np.zeros((n, 1, 2, 2), np.uint8), points=None).sample(2, 0)
    assert img.shape == (2, 1, 2, 2)


def test_callable_points_true_checks() -> None:
    for fn in (lambda n, s: np.ones((n, 2), np.int64), lambda n, s: np.ones((n, 2, 1)),
               lambda n, s: np.ones((n + 1, 2))):
        with pytest.raises(ValueError, match="expected float points of shape"):
            CallableGenerator(fn, points=True).sample(2, 0)
    t = CallableGenerator(lambda n, s: torch.ones(n, 2), points=True).sample(2, 0)
    assert isinstance(t, np.ndarray) and t.dtype == np.float32 and t.shape == (2, 2)


def test_callable_mixed_kinds_across_chunks_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 16)

    def fn(n: int, seed: int, offset: int = 0) -> np.ndarray:
        return np.zeros((n, 2), np.float64) if offset == 0 else np.zeros((n, 1, 2, 2), np.uint8)

    with pytest.raises(ValueError, match="one call returned feature rows and another"):
        CallableGenerator(fn, points=None).sample(4, 0)

    def same(n: int, seed: int, offset: int = 0) -> np.ndarray:
        return np.arange(offset, offset + n, dtype=np.float64)[:, None].repeat(2, 1)

    out = CallableGenerator(same, points=None).sample(5, 0)  # 16 bytes a row: chunks of one row
    assert out[:, 0].tolist() == [0, 1, 2, 3, 4]
    assert [len(b) for b in CallableGenerator(same, points=None).sample_batches(5, 0, batch_size=2)] == [2, 2, 1]


def test_callable_probe_row_bytes_decide_the_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 64)
    calls: list[tuple[int, int]] = []

    def fn(n: int, seed: int, offset: int = 0) -> torch.Tensor:
        calls.append((n, offset))
        return torch.arange(offset, offset + n, dtype=torch.float64)[:, None].repeat(1, 2)  # 16 bytes a row

    out = CallableGenerator(fn, points=True).sample(9, 0)
    assert calls == [(1, 0), (4, 0), (4, 4), (1, 8)]
    assert out[:, 0].tolist() == list(range(9))
    calls.clear()
    CallableGenerator(fn, points=True).sample(1, 0)
    assert calls == [(1, 0), (1, 0)]  # offset-aware: the probe even for one row


def test_callable_identity_is_cached() -> None:
    g = CallableGenerator(_points, points=True)
    a = g.identity()
    assert a["function"] == f"{__name__}:_points" and a["points"] is True and a["kind"] == "callable"
    sentinel = {"qualname": "cached"}
    g._code = sentinel
    assert g.identity()["qualname"] == "cached"


# ------------------------------------------------------------------------------------------------
# chunked
# ------------------------------------------------------------------------------------------------
def test_chunk_constants() -> None:
    assert chunked.WHOLE_BYTES == 2 * 1024**3 and chunked.CHUNK_BYTES == 256 * 1024**2


def test_plan_exact_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 10)
    monkeypatch.setattr(chunked, "WHOLE_BYTES", 20)
    assert plan(7, 3, 3, True) == [Call(3, 3, 0), Call(3, 3, 3), Call(1, 3, 6)]
    assert plan(5, 3, 4, False) == [Call(5, 3)]  # 20 bytes: whole
    cs = plan(7, 3, 3, False)  # 21 bytes > 20: chunks of 3 rows with derived seeds
    assert cs == [Call(3, chunked.chunk_seed(3, 0)), Call(3, chunked.chunk_seed(3, 1)), Call(1, chunked.chunk_seed(3, 2))]
    assert plan(2, 0, 11, True) == [Call(1, 0, 0), Call(1, 0, 1)]  # at least one row per chunk
    assert plan(2, 0, 10, True) == [Call(1, 0, 0), Call(1, 0, 1)]
    assert plan(2, 0, 1, True) == [Call(2, 0, 0)]
    with pytest.raises(ValueError, match="row_bytes must be >= 1, got 0"):
        plan(2, 0, 0, True)


def test_chunk_seed_is_seed_sequence() -> None:
    assert chunked.chunk_seed(5, 2) == int(np.random.SeedSequence([5, 2]).generate_state(1)[0])
    assert chunked.chunk_seed(5, 2) != chunked.chunk_seed(5, 3)


def test_takes_offset_kinds() -> None:
    def a(n: int, seed: int, offset: int = 0) -> None: ...
    def b(n: int, seed: int, *, offset: int = 0) -> None: ...
    def c(n: int, seed: int, **offset: int) -> None: ...
    def d(n: int, seed: int) -> None: ...
    assert chunked.takes_offset(a) and chunked.takes_offset(b)
    assert not chunked.takes_offset(c) and not chunked.takes_offset(d)
    assert not chunked.takes_offset(len) or chunked.takes_offset(len) is False


def test_rebatch_exact_batches() -> None:
    chunks = [np.arange(0, 3), np.arange(3, 4), np.arange(4, 9), np.arange(9, 10)]
    out = list(chunked.rebatch(iter(chunks), 4))
    assert [b.tolist() for b in out] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    out = list(chunked.rebatch(iter([np.arange(4), np.arange(4, 8)]), 4))
    assert [b.tolist() for b in out] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    out = list(chunked.rebatch(iter([np.arange(2), np.arange(2, 3), np.arange(3, 7)]), 3))
    assert [b.tolist() for b in out] == [[0, 1, 2], [3, 4, 5], [6]]


# ------------------------------------------------------------------------------------------------
# common
# ------------------------------------------------------------------------------------------------
def test_check_plain_refuses_meta_and_masked_only() -> None:
    from ganeval.common import check_plain

    check_plain(torch.zeros(2), "x")
    check_plain(np.zeros(2), "x")
    check_plain([1, 2], "x")
    with pytest.raises(ValueError, match="x is a tensor on the meta device"):
        check_plain(torch.zeros(2, device="meta"), "x")
    with pytest.raises(ValueError, match="y is a numpy masked array"):
        check_plain(np.ma.masked_array([1.0, 2.0]), "y")


def test_resolve_device_rules() -> None:
    from ganeval.common import resolve_device, resolve_device_name

    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(None, np.zeros(1), torch.zeros(1, device="meta")) == torch.device("meta")
    assert resolve_device(None, np.zeros(1)) == torch.device("cpu")
    assert resolve_device(None) == torch.device("cpu")
    auto = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device_name(None) == resolve_device_name("") == resolve_device_name("auto") == auto
    assert resolve_device_name("cpu") == "cpu" and resolve_device_name("meta") == "meta"
    with pytest.raises(ValueError, match="is not a device torch knows"):
        resolve_device_name("gpu7")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available here"):
            resolve_device_name("cuda:0")


def test_as_tensor_keeps_or_changes_dtype() -> None:
    from ganeval.common import as_tensor

    a = np.arange(3, dtype=np.int16)
    assert as_tensor(a, torch.device("cpu")).dtype == torch.int16
    t = as_tensor(a, torch.device("cpu"), torch.float64)
    assert t.dtype == torch.float64 and t.tolist() == [0.0, 1.0, 2.0]
    x = torch.ones(2)
    assert as_tensor(x, torch.device("cpu")) is x


def test_upload_and_index_uploader_on_cpu() -> None:
    from ganeval.common import STAGING_BYTES, IndexUploader, upload

    assert STAGING_BYTES == 64 * 1024 * 1024
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = upload(a, "cpu")
    assert t.dtype == torch.float32 and t.tolist() == a.tolist()
    x = torch.arange(3)
    assert upload(x, "cpu") is x
    u = IndexUploader("cpu")
    assert u._slots == [None, None, None, None] and u._next == 0
    assert len(IndexUploader("cpu", slots=2)._slots) == 2
    out = u(np.array([3, 1], dtype=np.int32))
    assert out.dtype == torch.int64 and out.tolist() == [3, 1] and u._next == 0


def test_atomic_writes_defaults_modes_and_written_record(tmp_path: Path) -> None:
    import os

    from ganeval.common import atomic_np_save, atomic_path, atomic_write_bytes, forget_written, written_in

    target = tmp_path / "new" / "deep" / "f.bin"
    atomic_write_bytes(target, b"one")
    atomic_write_bytes(target, b"two")  # replace by default
    assert target.read_bytes() == b"two"
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(FileExistsError, match="not replaced"):
        atomic_write_bytes(target, b"three", replace=False)
    assert target.read_bytes() == b"two"
    assert written_in(target.parent) == {"f.bin"}
    forget_written(target.parent)
    assert written_in(target.parent) == set()
    npz = tmp_path / "a.npz"
    atomic_np_save(npz, x=np.arange(2))
    atomic_np_save(npz, x=np.arange(3))
    assert np.load(npz)["x"].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="boom"):
        with atomic_path(tmp_path / "never.txt") as tmp:
            tmp.write_text("x")
            raise ValueError("boom")
    assert not (tmp_path / "never.txt").exists() and not list(tmp_path.glob(".never.txt*"))


def test_stale_temporaries_rule(tmp_path: Path) -> None:
    import os
    import time

    from ganeval import common

    assert common.STALE_SECONDS == 86400
    name = "f.txt"
    dead = 2**22 + 12345  # above pid_max's default: no such process
    while common._alive(dead):
        dead += 1
    files = {
        "dead": tmp_path / f".{name}.{common._HOST}~{dead}~a.tmp",
        "live": tmp_path / f".{name}.{common._HOST}~{os.getpid()}~b.tmp",
        "other_host": tmp_path / f".{name}.elsewhere~{dead}~c.tmp",
        "old": tmp_path / f".{name}.oldstyle.tmp",
        "young": tmp_path / f".{name}.young.tmp",
        "nonnumeric": tmp_path / f".{name}.{common._HOST}~x{dead}~d.tmp",
    }
    for p in files.values():
        p.write_text("x")
    now = time.time()
    os.utime(files["old"], (now - 86400 - 60, now - 86400 - 60))
    os.utime(files["young"], (now - 86400 + 60, now - 86400 + 60))
    os.utime(files["nonnumeric"], (now - 86400 - 60, now - 86400 - 60))
    common._remove_stale_temporaries(tmp_path / name)
    left = {k for k, p in files.items() if p.exists()}
    assert left == {"live", "other_host", "young"}


def test_alive() -> None:
    import os

    from ganeval.common import _alive

    assert _alive(os.getpid()) is True
    assert _alive(2**22 + 99991) is False
    assert _alive(1) is True  # exists (PermissionError when not root)


# ------------------------------------------------------------------------------------------------
# hashing
# ------------------------------------------------------------------------------------------------
def test_hashing_constants_and_short_forms() -> None:
    from ganeval import hashing as h

    assert h._CHUNK == 1 << 24 and h.SHOWN == 8 and h.SHORTEST_STORED == 8 and h.FILES_FORMAT == 2
    d = "0123456789abcdef" * 4
    assert h.short_hash(d) == "01234567"
    assert h._cut(d, None) == d and h._cut(d, 5) == "01234" and h._cut(d, 0) == d
    assert h.shown_extractor({"weights": d, "name": "x"}) == {"weights": "01234567", "name": "x"}
    assert h.shown_extractor({"weights": 3}) == {"weights": 3} and h.shown_extractor("a") == "a"
    ident = {"sha256": d, "code_sha256": d, "other": d, "sub": [{"file_sha256": d}], "x_sha256": "XYZ"}
    assert h.shown_identity(ident) == {"sha256": d[:8], "code_sha256": d[:8], "other": d,
                                       "sub": [{"file_sha256": d[:8]}], "x_sha256": "XYZ"}
    assert h.cut_short_form(d[:8], d) and h.cut_short_form(d[:63], d)
    assert not h.cut_short_form(d[:7], d) and not h.cut_short_form(d, d)
    assert not h.cut_short_form(d[:8], "1" + d[1:]) and not h.cut_short_form("0123456g", d[:7] + "g" + d[8:])
    assert not h.cut_short_form(d[:8].upper(), d.upper()) and not h.cut_short_form(None, d)
    assert not h.cut_short_form(d[:8], None)


def test_hashes_against_hashlib(tmp_path: Path) -> None:
    import hashlib
    import json

    from ganeval import hashing as h

    obj = {"b": 1, "a": [1, 2], "p": Path("x")}
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    full = hashlib.sha256(text.encode()).hexdigest()
    assert h.stable_hash(obj) == full[:16] and h.stable_hash(obj, None) == full
    f = tmp_path / "f"
    f.write_bytes(b"abc" * 1000)
    assert h.sha256_file(f) == hashlib.sha256(b"abc" * 1000).hexdigest()
    assert h.sha256_file(f, 8) == hashlib.sha256(b"abc" * 1000).hexdigest()[:8]
    assert h.file_sha256(f) == hashlib.sha256(b"abc" * 1000).digest()
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    want = hashlib.sha256(a.tobytes()).hexdigest()
    assert h.array_identity(a) == {"shape": [3, 4], "dtype": "int32", "sha256": want}
    assert h.array_identity(torch.from_numpy(a)) == {"shape": [3, 4], "dtype": "int32", "sha256": want}
    assert h.array_identity(a.T)["sha256"] == hashlib.sha256(np.ascontiguousarray(a.T).tobytes()).hexdigest()
    assert h.array_identity(a, 4)["sha256"] == want[:4]
    chk = hashlib.sha256(a.tobytes() + json.dumps([[3, 4], "int32"]).encode()).hexdigest()
    assert h.array_checksum(a) == chk == h.array_checksum(torch.from_numpy(a))
    e = np.zeros((0, 2), np.float32)
    assert h.array_identity(torch.from_numpy(e))["sha256"] == hashlib.sha256(b"").hexdigest()


def test_chunked_feeding_is_whole(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import hashlib

    from ganeval import hashing as h

    monkeypatch.setattr(h, "_CHUNK", 5)
    a = np.arange(13, dtype=np.uint8)
    want = hashlib.sha256(a.tobytes()).hexdigest()
    assert h.array_identity(a)["sha256"] == want
    assert h.array_identity(torch.from_numpy(a))["sha256"] == want
    f = tmp_path / "g"
    f.write_bytes(a.tobytes())
    assert h.sha256_file(f) == want


def test_files_hasher_rule(tmp_path: Path) -> None:
    import hashlib

    from ganeval import hashing as h

    ref = hashlib.sha256(b"ganeval-files/2\0")
    for name, data in (("a.png", b"xy"), ("\u00e9", b"")):
        enc = name.encode()
        ref.update(len(enc).to_bytes(8, "little") + enc + hashlib.sha256(data).digest())
    fh = h.FilesHasher()
    fh.add("a.png", b"xy")
    p = tmp_path / "e"
    p.write_bytes(b"")
    fh.add("\u00e9", path=p)
    assert fh.hexdigest() == ref.hexdigest()
    assert h.files_digest([("a.png", hashlib.sha256(b"xy").digest()), ("\u00e9", hashlib.sha256(b"").digest())]) == ref.hexdigest()
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b").write_bytes(b"2")
    (tmp_path / "d" / "a").write_bytes(b"1")
    (tmp_path / "d" / "c").write_bytes(b"3")
    ref2 = h.files_digest([(n, hashlib.sha256(v).digest()) for n, v in (("a", b"1"), ("b", b"2"), ("c", b"3"))])
    files = [tmp_path / "d" / n for n in "cba"]
    assert h.sha256_folder(tmp_path / "d", files) == ref2 and h.sha256_folder(tmp_path / "d", files, 8) == ref2[:8]
    assert h.file_digests([]) == [] and h.file_digests([files[0]]) == [hashlib.sha256(b"3").digest()]
    assert h.file_digests(files, lambda p: p.name.encode()) == [b"c", b"b", b"a"]


def test_hash_threads_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from ganeval import hashing as h

    for cores, want in ((0, 1), (1, 1), (3, 3), (8, 8), (9, 8), (40, 8)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid, c=cores: set(range(c)), raising=False)
        assert h.hash_threads() == want


def test_state_dict_and_stream_hashes() -> None:
    import hashlib
    import json

    from ganeval import hashing as h

    t = torch.arange(4, dtype=torch.float32)
    state = {"w": t, "a": 3}
    ref = hashlib.sha256()
    ref.update(json.dumps(["a", 3], sort_keys=True, default=str).encode())
    ref.update(json.dumps(["w", [4], "torch.float32"]).encode())
    ref.update(t.numpy().tobytes())
    assert h.state_dict_sha256(state) == ref.hexdigest() and h.state_dict_sha256(state, 10) == ref.hexdigest()[:10]
    s = h.StreamHasher()
    a = np.arange(10, dtype=np.int16).reshape(5, 2)
    s.update(a[:2])
    s.update(torch.from_numpy(a[2:]))
    assert s.n == 5 and s.item_shape == (2,) and s.dtype == "int16"
    assert s.bytes_hexdigest() == hashlib.sha256(a.tobytes()).hexdigest()
    assert s.hexdigest() == hashlib.sha256(a.tobytes() + json.dumps([5, [2], "int16"]).encode()).hexdigest()
    with pytest.raises(ValueError, match="batches disagree"):
        s.update(np.zeros((1, 3), np.int16))
    with pytest.raises(ValueError, match="batches disagree"):
        s.update(np.zeros((1, 2), np.int32))


# ------------------------------------------------------------------------------------------------
# training (a tiny MLP on 12 points: 3 batches of 4 an epoch, a generator step every 2 critic steps)
# ------------------------------------------------------------------------------------------------
TINY_MLP = {"latent_dim": 2, "hidden": 4, "layers": 2}


def _points12() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(12, 2)).astype(np.float32)


def _touch(path: Path, *args: Any, **kw: Any) -> None:
    Path(path).write_bytes(b"")


def _train(out: Path, **kw: Any) -> Path:
    """Train the tiny MLP; the plots (matplotlib, slow) are only touched as empty files."""
    from ganeval.gan import plots, train

    args: dict[str, Any] = dict(arch="mlp", gan="wgan_quick", out_dir=out, epochs=2, batch_size=4, progress=False,
                                arch_kwargs=TINY_MLP, sample_every=0)
    args.update(kw)
    with pytest.MonkeyPatch.context() as mp:
        for name in ("save_points_plot", "save_image_grid", "plot_losses"):
            mp.setattr(plots, name, _touch)
        return train(_points12(), **args)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, int]], list[tuple[int, bool]]]:
    from ganeval.gan import training

    states: list[dict[str, int]] = []
    saves: list[tuple[int, bool]] = []
    orig = training._save

    def spy(job: Any, run: Any, done: bool) -> None:
        saves.append((run.state["critic_step"], done))
        orig(job, run, done)

    mp = pytest.MonkeyPatch()
    mp.setattr(training, "_save", spy)
    try:
        ckpt = _train(tmp_path_factory.mktemp("train") / "run", checkpoint_every=2, sample_every=1,
                      callback=states.append)
    finally:
        mp.undo()
    return ckpt, states, saves


def test_training_counters_checkpoints_and_outputs(trained: Any) -> None:
    ckpt, states, saves = trained
    assert states == [
        {"epoch": 0, "batch": 1, "critic_step": 1, "gen_step": 0},
        {"epoch": 0, "batch": 2, "critic_step": 2, "gen_step": 1},
        {"epoch": 1, "batch": 0, "critic_step": 3, "gen_step": 1},
        {"epoch": 1, "batch": 1, "critic_step": 4, "gen_step": 2},
        {"epoch": 1, "batch": 2, "critic_step": 5, "gen_step": 2},
        {"epoch": 2, "batch": 0, "critic_step": 6, "gen_step": 3},
    ]
    assert saves == [(2, False), (4, False), (6, True)]  # every 2 critic steps, not at the end; then the final one
    assert ckpt.name == "checkpoint.pt"
    files = {p.name for p in ckpt.parent.iterdir()}
    assert {"checkpoint.pt", "config.json", "losses.csv", "losses.png", "samples_final.png",
            "samples_epoch0001.png"} <= files
    assert "samples_epoch0002.png" not in files
    c = torch.load(ckpt, weights_only=True)
    assert (c["epoch"], c["batch"], c["critic_step"], c["gen_step"], c["epochs"], c["done"]) == (2, 0, 6, 3, 2, True)
    assert c["arch"] == "mlp" and c["arch_kwargs"]["out_dim"] == 2 and c["output_range"] is None
    assert c["latent_shape"] == [2] and c["output_shape"] == [2] and c["device"] == "cpu"
    h = c["history"].numpy()
    assert h.shape == (3, 7)
    assert h[:, :3].tolist() == [[1, 2, 0], [2, 4, 1], [3, 6, 1]]
    assert np.all(h[:, 6] == 0)  # no gradient penalty in WGAN
    import json

    cfg = json.loads((ckpt.parent / "config.json").read_text())
    assert cfg["threads"] == 1 and cfg["batch_size"] == 4 and cfg["seed"] == 0 and cfg["arch"] == "mlp"
    assert cfg["config_hash"] == c["config_hash"] and cfg["data"]["shape"] == [12, 2]
    assert json.loads(c["config_json"]) == {k: v for k, v in cfg.items() if k != "config_hash"}


def test_checkpoint_generator_identity_of_a_trained_file(trained: Any) -> None:
    ckpt = trained[0]
    g = CheckpointGenerator(ckpt)
    ident = g.identity()
    assert ident["kind"] == "checkpoint" and ident["name"] == "run" and ident["arch"] == "mlp"
    assert (ident["epoch"], ident["gen_step"], ident["done"]) == (2, 3, True) and len(ident["sha256"]) == 64
    assert g.sample_shape() == (2,)
    pts = g.sample(3, seed=1, batch_size=2)
    assert pts.shape == (3, 2) and np.array_equal(np.concatenate(list(g.sample_batches(3, 1, 2))), pts)
    missing = CheckpointGenerator(ckpt.parent / "none.pt")
    assert missing.identity() == {"kind": "checkpoint", "name": "run", "path": str(ckpt.parent / "none.pt"),
                                  "sha256": None}


def test_training_resume_refusals_and_noop(trained: Any, tmp_path: Path) -> None:
    import shutil

    ckpt = trained[0]
    out = tmp_path / "copy"
    shutil.copytree(ckpt.parent, out)
    before = (out / "checkpoint.pt").read_bytes()
    calls: list[dict[str, int]] = []
    assert _train(out, callback=calls.append) == out / "checkpoint.pt"  # finished: nothing to do
    assert calls == [] and (out / "checkpoint.pt").read_bytes() == before
    with pytest.raises(ValueError, match="already trained 2 epochs, more than epochs=1"):
        _train(out, epochs=1)
    with pytest.raises(ValueError, match=r"differs in batch_size: 4 -> 6"):
        _train(out, batch_size=6)
    _train(out, epochs=3, callback=calls.append)  # resumed: continues at critic step 7
    assert [s["critic_step"] for s in calls] == [7, 8, 9] and calls[-1]["epoch"] == 3 and calls[-1]["gen_step"] == 4


def test_train_seed_and_device_checks(tmp_path: Path) -> None:
    for bad in (-1, True, 1.0):
        with pytest.raises(ValueError, match="seed must be an int >= 0"):
            _train(tmp_path, seed=bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available here"):
            _train(tmp_path, device="cuda")


def test_train_seed_0_is_legal_and_one_epoch_one_checkpoint(tmp_path: Path) -> None:
    states: list[dict[str, int]] = []
    ckpt = _train(tmp_path, seed=0, epochs=1, checkpoint_every=500, callback=states.append, gan="gan", n_critic=1)
    assert [s["gen_step"] for s in states] == [1, 2, 3]
    c = torch.load(ckpt, weights_only=True)
    assert c["history"].numpy()[:, :3].tolist() == [[1, 1, 0], [2, 2, 0], [3, 3, 0]]


def test_cpu_threads_and_torch_threads() -> None:
    from ganeval.gan.training import CPU_THREADS, GRID_SAMPLES, cpu_threads, torch_threads

    assert CPU_THREADS == 1 and GRID_SAMPLES == 64
    assert cpu_threads(None) == 1 and cpu_threads(1) == 1 and cpu_threads(np.int64(3)) == 3
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="threads must be a positive integer"):
            cpu_threads(bad)
    before = torch.get_num_threads()
    with torch_threads(None):
        assert torch.get_num_threads() == before
    with torch_threads(2):
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == before


def test_flush_columns_and_postfix() -> None:
    from ganeval.gan.training import _flush, _postfix

    h0 = np.zeros((0, 7))
    assert _flush(h0, []) is h0
    pending = [(1, 2, 0, torch.tensor([10.0, 11.0, 12.0, 13.0])), (2, 4, 1, torch.tensor([20.0, 21.0, 22.0, 23.0]))]
    h = _flush(h0, pending)
    assert pending == []
    assert h.tolist() == [[1, 2, 0, 10, 13, 11, 12], [2, 4, 1, 20, 23, 21, 22]]
    assert _flush(h, [(3, 6, 1, torch.tensor([1.0, 2.0, 3.0, 4.0]))]).tolist()[-1] == [3, 6, 1, 1, 4, 2, 3]
    rows = np.array([[0, 0, 0, i, 2 * i, 3 * i, 0] for i in range(25)], dtype=float)
    assert _postfix(rows) == {"D": f"{np.mean(range(5, 25)):.3g}", "G": f"{2 * np.mean(range(5, 25)):.3g}",
                              "gap": f"{3 * np.mean(range(5, 25)):.3g}"}


def test_diff_lists_changed_leaves() -> None:
    from ganeval.gan.training import _diff

    assert _diff({"a": 1, "b": {"c": 2, "d": 3}}, {"a": 1, "b": {"c": 5}, "e": 0}) == [
        "b.c: 2 -> 5", "b.d: 3 -> None", "e: None -> 0"]
    assert _diff(1, 1) == [] and _diff(1, 2) == [": 1 -> 2"]


# ------------------------------------------------------------------------------------------------
# generators: code identity
# ------------------------------------------------------------------------------------------------
def test_code_identity_adds_a_code_digest_only_when_the_file_is_not_enough() -> None:
    from ganeval.gan.generators import _code_identity
    from ganeval.hashing import sha256_file

    plain = _code_identity(_points)
    assert plain == {"qualname": f"{__name__}._points", "code_sha256": sha256_file(__file__)}
    k = 3

    def closure(n: int, seed: int) -> int:
        return n + k

    ident = _code_identity(closure)
    assert ident["code_sha256"] == sha256_file(__file__) and "code" in ident
    main = _points.__class__(_points.__code__, _points.__globals__, "m")
    main.__module__ = "__main__"
    assert "code" in _code_identity(main)
    built = _code_identity(len)
    assert built["code_sha256"] is None and built["qualname"] == "builtins.len" and "code" in built


# ------------------------------------------------------------------------------------------------
# words, stops, safety, pool, package
# ------------------------------------------------------------------------------------------------
def test_in_python_keys_each_rule() -> None:
    from ganeval.words import in_python_keys

    assert in_python_keys("set metrics.kid.subset_size=50, now") == 'set metrics={"kid": {"subset_size": 50}}, now'
    assert in_python_keys("metrics.kid.subset_size is") == 'metrics={"kid": {"subset_size": ...}} is'
    assert in_python_keys("lower kid.subset_size or") == 'lower metrics={"kid": {"subset_size": ...}} or'
    assert in_python_keys("raise fid.x=") == "raise fid.x="
    assert in_python_keys("pass overwrite=true") == "pass overwrite=True"
    assert in_python_keys("results_dir x") == "out x" and in_python_keys("--results_dir") == "--results_dir"


def test_reworded_and_python_errors() -> None:
    from ganeval.words import python_errors, reworded

    e = KeyError("a")
    assert reworded(e, str(e)) is e
    r = reworded(ValueError("x"), "y")
    assert type(r) is ValueError and str(r) == "y"

    class Odd(Exception):
        def __init__(self, a: int, b: int) -> None:
            super().__init__(a, b)

    r2 = reworded(Odd(1, 2), "z")
    assert type(r2) is ValueError and str(r2) == "z"

    @python_errors
    def f(msg: str) -> int:
        raise ValueError(msg)

    with pytest.raises(ValueError, match="^out$") as info:
        f("results_dir")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    err = ValueError("plain")
    with pytest.raises(ValueError) as info2:
        python_errors(lambda: (_ for _ in ()).throw(err))()
    assert info2.value is err
    assert python_errors(lambda: 5)() == 5


def test_did_you_mean_and_renamed() -> None:
    import warnings

    from ganeval.words import UNSET, did_you_mean, renamed

    assert did_you_mean("fidd", ["fid", "kid"]) == " (did you mean 'fid'?)"
    assert did_you_mean("fidd", ["fid"], "--features {}") == " (did you mean --features fid?)"
    assert did_you_mean("zzzz", ["fid"]) == ""
    assert repr(UNSET) == "<unset>"
    assert renamed("out", 1, "results_dir", UNSET, UNSET) == 1
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert renamed("out", UNSET, "results_dir", 2, UNSET) == 2
    assert len(w) == 1 and w[0].category is DeprecationWarning and "results_dir= is now out=" in str(w[0].message)
    assert w[0].filename == __file__
    with pytest.raises(ValueError, match="give out= only: results_dir= is its former name"):
        renamed("out", 1, "results_dir", 2, UNSET)


def test_caller_stacklevel_counts_library_frames() -> None:
    from ganeval.words import caller_stacklevel

    assert caller_stacklevel() == 1
    g = {"__name__": "ganeval.fake", "caller_stacklevel": caller_stacklevel}
    exec("def inner():\n    return caller_stacklevel()\n", g)
    g2 = {"__name__": "torchmetrics.x", "inner": g["inner"]}
    exec("def outer():\n    return inner()\n", g2)
    assert g["inner"]() == 2  # inner (ganeval) -> this test
    assert g2["outer"]() == 3  # inner (ganeval) -> outer (torchmetrics) -> this test


def test_stops_messages_and_status() -> None:
    import errno
    import signal

    from ganeval import stops

    assert stops.NO_SPACE[0] == errno.ENOSPC
    s = stops.stopped(KeyboardInterrupt(), 2, 5, Path("d"))
    assert str(s) == "stopped (Ctrl-C): 2 of 5 runs stored in d, rerun the same command to resume"
    assert s.terminated is False and stops.exit_status(s) == 128 + signal.SIGINT
    t = stops.stopped(stops.Terminated(), 0, 3, None)
    assert str(t) == "stopped by SIGTERM after 0 of 3 runs (no results_dir: nothing is stored)"
    assert t.terminated is True and stops.by_sigterm(t) and stops.exit_status(t) == 143
    assert str(stops.stopped(s, 1, 1, None)) == "stopped  after 1 of 1 runs (no results_dir: nothing is stored)"
    assert stops.by_sigterm(stops.stopped(t, 1, 1, None))
    assert stops.exit_status(KeyboardInterrupt()) == 130
    assert stops.no_space(ValueError()) is None and stops.no_space(OSError(errno.EACCES, "x")) is None
    msg = stops.no_space(OSError(errno.ENOSPC, "No space", "/a/b.npz"))
    assert msg is not None and msg.startswith("no space left on the device (No space) writing /a/b.npz: free space in /a,")
    msg2 = stops.no_space(OSError(errno.ENOSPC, "full"))
    assert msg2 is not None and "writing a file: free space in the results and cache folders" in msg2


def test_terminate_as_interrupt_raises_terminated() -> None:
    import signal

    from ganeval import stops

    prev = stops.terminate_as_interrupt()
    try:
        handler = signal.getsignal(signal.SIGTERM)
        with pytest.raises(stops.Terminated, match="terminated"):
            handler(signal.SIGTERM, None)  # type: ignore[operator]
    finally:
        signal.signal(signal.SIGTERM, prev)


def test_safety_checks(tmp_path: Path) -> None:
    import os

    from ganeval.safety import UnsafePathError, check_own_file, open_own_file

    f = tmp_path / "f"
    check_own_file(f, "x")  # missing: fine
    fd = open_own_file(f, "x")
    os.close(fd)
    check_own_file(f, "x")
    (tmp_path / "link").symlink_to(f)
    with pytest.raises(UnsafePathError, match="is a symbolic link"):
        check_own_file(tmp_path / "link", "x")
    with pytest.raises(UnsafePathError, match="x .* is a folder"):
        check_own_file(tmp_path, "x")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UnsafePathError, match="is not a regular file"):
        check_own_file(tmp_path / "fifo", "x")
    assert oct(f.stat().st_mode & 0o777) != "" and f.is_file()


def test_pool_stream() -> None:
    from ganeval.gan.pool import PoolStream

    g = CallableGenerator(_points, points=True)
    p = PoolStream(g, 5, 3, 2)
    assert len(p) == 5 and p.shape == (5, 3) and p.dtype == np.float64 and p.nbytes == 5 * 3 * 8
    parts = list(p)
    assert [len(b) for b in parts] == [2, 2, 1]
    assert np.array_equal(np.concatenate(parts), _points(5, 3)) and np.array_equal(np.concatenate(list(p)), _points(5, 3))
    with pytest.raises(ValueError, match="cannot stream its samples"):
        PoolStream(object(), 1, 0, 1)


def test_package_lazy_attributes() -> None:
    import ganeval

    assert ganeval.__version__ == "0.1.0"
    from ganeval.protocol import evaluate

    assert ganeval.evaluate is evaluate
    from ganeval.features.reference import save_reference

    assert ganeval.save_reference is save_reference
    from ganeval.app.scoring import score

    assert ganeval.score is score
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        ganeval.nope  # noqa: B018


# ------------------------------------------------------------------------------------------------
# stored samples
# ------------------------------------------------------------------------------------------------
def test_stored_samples_choice_and_edges(tmp_path: Path) -> None:
    from ganeval.gan import SampleGenerator

    pts = np.random.default_rng(1).normal(size=(6, 2))
    p = tmp_path / "pts.npy"
    np.save(p, pts)
    g = SampleGenerator(p)
    assert g.name == "pts" and len(g) == 6 and g.sample_shape() == (2,)
    assert not isinstance(g._load(), np.memmap)
    g.validate()
    assert np.array_equal(g.sample(6, seed=3), pts)  # all of them: in stored order
    want = np.sort(np.random.default_rng(3).choice(6, 4, replace=False))
    assert np.array_equal(g.sample(4, seed=3), pts[want])
    assert np.array_equal(g.sample(1, seed=0, batch_size=1), pts[np.sort(np.random.default_rng(0).choice(6, 1, replace=False))])
    with pytest.raises(ValueError, match="asked for 7 samples but .* holds only 6"):
        g.sample(7, seed=0)
    ident = g.identity()
    assert ident == {"kind": "samples", "name": "pts", "path": str(p), "key": None,
                     "sha256": __import__("ganeval.hashing", fromlist=["x"]).sha256_file(p)}


def test_stored_samples_images_validate_rows_and_shapes(tmp_path: Path) -> None:
    from ganeval.gan import SampleGenerator

    imgs = np.zeros((3, 4, 5), np.float32)
    imgs[2] = 7.0  # a bad third row: validate reads only the first two
    p = tmp_path / "im.npy"
    np.save(p, imgs)
    g = SampleGenerator(p)
    g.validate()
    assert g.sample_shape() == (1, 4, 5)
    one = tmp_path / "one.npy"
    np.save(one, np.zeros((1, 4, 5), np.uint8))
    SampleGenerator(one).validate()
    assert SampleGenerator(one).sample(1, 0).shape == (1, 1, 4, 5)
    for bad in (np.zeros((3, 2), np.uint8), np.zeros((0, 1, 2, 2), np.uint8), np.zeros(4, np.float32)):
        q = tmp_path / "bad.npy"
        np.save(q, bad)
        with pytest.raises(ValueError, match="holds an array of shape"):
            SampleGenerator(q).validate()
    q = tmp_path / "ints.npy"
    np.save(q, np.zeros((3, 2), np.uint8))
    with pytest.raises(ValueError):
        SampleGenerator(q).sample(2, 0)
    assert SampleGenerator(p, layout="NCHW").identity()["layout"] == "nchw"
    assert "layout" not in SampleGenerator(p).identity()
    with pytest.raises(ValueError, match="layout must be one of"):
        SampleGenerator(p, layout="chw")


def test_stored_samples_sources_and_folders(tmp_path: Path) -> None:
    from PIL import Image

    from ganeval.gan import SampleGenerator

    with pytest.raises(ValueError, match="does not exist"):
        SampleGenerator(tmp_path / "none.npy").validate()
    t = tmp_path / "x.txt"
    t.write_text("x")
    with pytest.raises(ValueError, match="is neither an image folder"):
        SampleGenerator(t).validate()
    np.save(tmp_path / "a.npy", np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="vocab applies to word-vector files"):
        SampleGenerator(tmp_path / "a.npy", vocab=3).validate()
    d = tmp_path / "imgs"
    d.mkdir()
    with pytest.raises(ValueError, match="holds no image files"):
        SampleGenerator(d).validate()
    Image.fromarray(np.zeros((4, 6), np.uint8)).save(d / "a.png")
    Image.fromarray(np.full((4, 6), 9, np.uint8)).save(d / "b.png")
    g = SampleGenerator(d)
    g.validate()
    assert g.sample_shape() == (1, 4, 6) and g.name == "imgs"
    ident = g.identity()
    assert ident["files"] == 2 and len(ident["sha256"]) == 64
    out = g.sample(2, 0)
    assert out.shape == (2, 1, 4, 6) and out[:, 0, 0, 0].tolist() == [0, 9]
    assert g.sample_shape() == (1, 4, 6)
    Image.fromarray(np.zeros((5, 6), np.uint8)).save(d / "c.png")
    with pytest.raises(ValueError, match="differ in size"):
        SampleGenerator(d).validate()


# ------------------------------------------------------------------------------------------------
# code: the callable's own modules
# ------------------------------------------------------------------------------------------------
def test_own_modules_from_source_and_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import sysconfig

    from ganeval.gan import code
    from ganeval.hashing import sha256_file

    root = tmp_path / "proj"
    (root / "pkg_sw5g").mkdir(parents=True)
    (root / "pkg_sw5g" / "__init__.py").write_text("")
    (root / "pkg_sw5g" / "helper_sw5g.py").write_text("K = 2\n")
    (root / "mod_sw5g.py").write_text(
        "import numpy as np\n\ndef fn(n, seed):\n    from pkg_sw5g import helper_sw5g\n"
        "    return np.full((n, 3), float(helper_sw5g.K))\n")
    monkeypatch.syspath_prepend(str(root))
    names = ("mod_sw5g", "pkg_sw5g", "pkg_sw5g.helper_sw5g")
    try:
        assert code.root_of("mod_sw5g") == root.resolve() and code.root_of("pkg_sw5g.helper_sw5g") == root.resolve()
        g = CallableGenerator("mod_sw5g:fn", points=True)
        assert g.sample(2, 0).tolist() == [[2.0] * 3] * 2
        ident = g.identity()
        assert ident["modules"] == {"pkg_sw5g/__init__.py": sha256_file(root / "pkg_sw5g" / "__init__.py"),
                                    "pkg_sw5g/helper_sw5g.py": sha256_file(root / "pkg_sw5g" / "helper_sw5g.py")}
        assert ident["code_sha256"] == sha256_file(root / "mod_sw5g.py") and "code" not in ident
        assert code.own_modules("json") == {} or all(not k.startswith("json") for k in code.own_modules("json"))
    finally:
        for n in names:
            sys.modules.pop(n, None)
        code._LOADED.pop(root.resolve(), None)
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert code.root_of("json") == stdlib and code.root_of("no_such_module_sw5g") is None
    assert code.is_own(root / "x.py", root.resolve()) and not code.is_own(tmp_path / "x.py", root.resolve())
    assert not code.is_own(stdlib / "json" / "x.py", stdlib.parent) and code.is_own(stdlib / "x.py", stdlib)
    assert code._under(root, root) and code._under(root / "a", root) and not code._under(tmp_path, root)
    assert code.root_of("sys") is None


# ------------------------------------------------------------------------------------------------
# lifeline (os._exit replaced: nothing here ends the test process)
# ------------------------------------------------------------------------------------------------
class _Exit(Exception):
    pass


def _raise_exit(code: int) -> None:
    raise _Exit(code)


def test_die_with_parent_when_already_orphaned(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from ganeval import lifeline

    assert lifeline.PR_SET_PDEATHSIG == 1 and lifeline.POLL_S == 0.1
    monkeypatch.setattr(lifeline.os, "_exit", _raise_exit)
    cleaned: list[int] = []
    with pytest.raises(_Exit) as info:
        lifeline.die_with_parent(os.getppid() + 1, lambda: cleaned.append(1), kernel=False)
    assert info.value.args == (1,) and cleaned == [1]
    with pytest.raises(_Exit):
        lifeline._orphaned(lambda: 1 / 0)  # a failing cleanup still exits
    with pytest.raises(_Exit):
        lifeline.init_loader_worker(os.getppid() + 1, 0)


def test_init_protocol_worker_threads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ganeval import lifeline

    seen: list[tuple[int, Any]] = []
    monkeypatch.setattr(lifeline, "die_with_parent", lambda parent, cleanup=None, kernel=True: seen.append((parent, cleanup)))
    before = torch.get_num_threads()
    try:
        (tmp_path / "s").mkdir()
        lifeline.init_protocol_worker(0, 123, str(tmp_path / "s"))
        assert torch.get_num_threads() == 1 and seen[0][0] == 123
        seen[0][1]()
        assert not (tmp_path / "s").exists()
        lifeline.init_protocol_worker(2, 5, str(tmp_path / "s"))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
