"""Generators from anywhere: the four sources give seeded, identical-per-seed samples and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ganeval.app.main import config_dir
from ganeval.gan import (
    CallableGenerator,
    CheckpointGenerator,
    ModuleGenerator,
    SampleGenerator,
    build_generator,
    train,
)
from ganeval.gan.sampling import latent


pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = {"latent_dim": 8, "dim": 4}


# Callables addressed as "test_gan_generators:<name>" (pytest puts the tests folder on sys.path).
def nhwc_floats(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, 16, 16, 3))


def gray_uint8(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 16, 16), dtype=np.uint8)


def out_of_range(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, 1, 8, 8))


def wrong_count(n: int, seed: int) -> np.ndarray:
    return np.zeros((n + 1, 1, 8, 8), np.uint8)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = np.random.default_rng(0).integers(0, 256, (32, 1, 32, 32), dtype=np.uint8)
    out = tmp_path_factory.mktemp("ckpt")
    return train(x, arch="digits", gan="wgan", out_dir=out, epochs=1, batch_size=16, progress=False,
                 arch_kwargs=TINY, sample_every=0)  # fmt: skip


# ------------------------------------------------------------------------------------------------
# checkpoint
# ------------------------------------------------------------------------------------------------
def test_checkpoint_generator_is_seeded_and_batch_size_free(checkpoint: Path) -> None:
    g = CheckpointGenerator(checkpoint, name="tiny")
    g.validate()
    a = g.sample(37, seed=4, batch_size=10)
    assert a.shape == (37, 1, 32, 32) and a.dtype == np.uint8
    assert np.array_equal(a, g.sample(37, seed=4, batch_size=37))
    assert np.array_equal(a, CheckpointGenerator(checkpoint).sample(37, seed=4))
    assert not np.array_equal(a, g.sample(37, seed=5))
    ident = g.identity()
    assert ident["kind"] == "checkpoint" and ident["arch"] == "digits" and len(ident["sha256"]) == 64


def test_checkpoint_generator_matches_the_trained_module(checkpoint: Path) -> None:
    from ganeval.gan import load_checkpoint

    ckpt = load_checkpoint(checkpoint)
    module = build_generator("digits", **ckpt["arch_kwargs"])
    module.load_state_dict(ckpt["generator"])
    module.eval()
    with torch.no_grad():
        ref = module(latent(5, (8,), 2))
    expected = np.clip(np.rint((ref.numpy() + 1) * 127.5), 0, 255).astype(np.uint8)
    assert np.array_equal(CheckpointGenerator(checkpoint).sample(5, seed=2), expected)


def test_checkpoint_generator_errors_name_the_config(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"generator 'x' \(config 'generator/checkpoint'\).*does not exist"):
        CheckpointGenerator(tmp_path / "none.pt", name="x").validate()
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable torch checkpoint"):
        CheckpointGenerator(bad).validate()
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a ganeval GAN checkpoint"):
        CheckpointGenerator(tmp_path / "other.pt").validate()


def test_checkpoint_with_wrong_weights_is_refused(checkpoint: Path, tmp_path: Path) -> None:
    state = torch.load(checkpoint, weights_only=True)
    state["arch_kwargs"] = {**state["arch_kwargs"], "dim": 6}
    torch.save(state, tmp_path / "edited.pt")
    with pytest.raises(ValueError, match="do not fit arch 'digits'"):
        CheckpointGenerator(tmp_path / "edited.pt").validate()


# ------------------------------------------------------------------------------------------------
# module
# ------------------------------------------------------------------------------------------------
def _module_config(tmp_path: Path, dim: int = 4) -> tuple[dict, Path]:
    torch.manual_seed(0)
    m = build_generator("digits", latent_dim=8, dim=4)
    path = tmp_path / "g.pt"
    torch.save(m.state_dict(), path)
    return {"_target_": "ganeval.gan.architectures.DigitsGenerator", "latent_dim": 8, "dim": dim}, path


def test_module_generator_loads_weights_and_is_seeded(tmp_path: Path) -> None:
    spec, path = _module_config(tmp_path)
    g = ModuleGenerator(spec, latent_shape=[8], output_range=[-1, 1], state_dict=path, name="mine")
    g.validate()
    a = g.sample(9, seed=1, batch_size=4)
    assert a.shape == (9, 1, 32, 32) and a.dtype == np.uint8
    assert np.array_equal(a, g.sample(9, seed=1))
    ref = build_generator("digits", latent_dim=8, dim=4)
    ref.load_state_dict(torch.load(path, weights_only=True))
    ref.eval()
    with torch.no_grad():
        expected = np.clip(np.rint((ref(latent(9, (8,), 1)).numpy() + 1) * 127.5), 0, 255).astype(np.uint8)
    assert np.array_equal(a, expected)
    assert g.identity()["target"] == spec["_target_"] and len(g.identity()["state_dict"]["sha256"]) == 64


def test_module_generator_accepts_a_module_with_4d_latents_and_01_range() -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.ConvTranspose2d(5, 3, 4), torch.nn.Sigmoid())  # z: 5×1×1 -> 3×4×4
    g = ModuleGenerator(net, latent_shape=[5, 1, 1], output_range=[0, 1])
    a = g.sample(6, seed=0)
    assert a.shape == (6, 3, 4, 4)
    with torch.no_grad():
        expected = np.rint(net(latent(6, (5, 1, 1), 0)).numpy() * 255).astype(np.uint8)
    assert np.array_equal(a, expected)
    # weights held in memory are named by their content
    before = g.identity()["weights_sha256"]
    assert len(before) == 64 and before == g.identity()["weights_sha256"]
    with torch.no_grad():
        net[0].bias.add_(1)
    assert g.identity()["weights_sha256"] != before


def test_module_generator_bad_inputs(tmp_path: Path) -> None:
    spec, path = _module_config(tmp_path)
    with pytest.raises(ValueError, match=r"generator 'module'.*does not fit module"):
        ModuleGenerator({**spec, "dim": 6}, latent_shape=[8], state_dict=path).validate()
    with pytest.raises(ValueError, match="does not exist"):
        ModuleGenerator(spec, latent_shape=[8], state_dict=tmp_path / "missing.pt").validate()
    with pytest.raises(ValueError, match="failed on latents of shape"):
        ModuleGenerator(spec, latent_shape=[7], state_dict=path).validate()
    with pytest.raises(ValueError, match="could not build module"):
        ModuleGenerator({"_target_": "ganeval.gan.architectures.Nope"}, latent_shape=[8]).validate()
    with pytest.raises(ValueError, match="output_range"):
        ModuleGenerator(spec, latent_shape=[8], output_range=[1, -1])
    with pytest.raises(ValueError, match="expected images"):
        ModuleGenerator(torch.nn.Linear(4, 10), latent_shape=[4], output_range=[0, 1]).validate()


# ------------------------------------------------------------------------------------------------
# callable
# ------------------------------------------------------------------------------------------------
def test_callable_generator_layouts_and_seeds() -> None:
    g = CallableGenerator("test_gan_generators:nhwc_floats")
    g.validate()
    a = g.sample(5, seed=3)
    assert a.shape == (5, 3, 16, 16) and a.dtype == np.uint8
    assert np.array_equal(a, np.rint(nhwc_floats(5, 3).transpose(0, 3, 1, 2) * 255).astype(np.uint8))
    assert np.array_equal(a, g.sample(5, seed=3)) and not np.array_equal(a, g.sample(5, seed=4))
    b = CallableGenerator(gray_uint8).sample(4, seed=0)
    assert b.shape == (4, 1, 16, 16) and np.array_equal(b[:, 0], gray_uint8(4, 0))
    name = "test_gan_generators:gray_uint8"
    assert CallableGenerator(name).identity()["function"] == name


@pytest.mark.parametrize(
    "function, match",
    [
        ("test_gan_generators:out_of_range", r"must lie in \[0, 1\]"),
        ("test_gan_generators:wrong_count", "expected 2 images"),
        ("test_gan_generators:missing", "has no attribute"),
        ("no_such_module_xyz:f", "cannot import module"),
    ],
)
def test_callable_generator_bad_output(function: str, match: str) -> None:
    with pytest.raises(ValueError, match=r"config 'generator/callable'.*" + match):
        CallableGenerator(function).validate()


def test_callable_generator_bad_spec() -> None:
    with pytest.raises(ValueError, match="package.module:function"):
        CallableGenerator("numpy.random.rand")


# ------------------------------------------------------------------------------------------------
# samples
# ------------------------------------------------------------------------------------------------
def test_samples_from_npy_npz_and_folder(tmp_path: Path) -> None:
    from PIL import Image

    imgs = np.random.default_rng(0).integers(0, 256, (12, 3, 8, 8), dtype=np.uint8)
    np.save(tmp_path / "s.npy", imgs)
    np.savez(tmp_path / "s.npz", samples=imgs.transpose(0, 2, 3, 1), other=np.zeros(3))
    folder = tmp_path / "imgs"
    folder.mkdir()
    for i, im in enumerate(imgs):
        Image.fromarray(im.transpose(1, 2, 0)).save(folder / f"{i:03d}.png")
    for g in (SampleGenerator(tmp_path / "s.npy"), SampleGenerator(tmp_path / "s.npz", key="samples"),
              SampleGenerator(folder)):  # fmt: skip
        g.validate()
        assert np.array_equal(g.sample(12, seed=0), imgs)  # all of them, in stored order
        a = g.sample(5, seed=7)
        assert np.array_equal(a, g.sample(5, seed=7)) and not np.array_equal(a, g.sample(5, seed=8))
        idx = np.sort(np.random.default_rng(7).choice(12, 5, replace=False))
        assert np.array_equal(a, imgs[idx])
    assert SampleGenerator(tmp_path / "s.npy").identity()["sha256"]
    before = SampleGenerator(folder).identity()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(folder / "000.png")
    after = SampleGenerator(folder).identity()
    assert before["files"] == after["files"] == 12 and before["sha256"] != after["sha256"]


def test_samples_points_pass_through(tmp_path: Path) -> None:
    pts = np.random.default_rng(0).normal(size=(20, 3)).astype(np.float32)
    np.save(tmp_path / "p.npy", pts)
    g = SampleGenerator(tmp_path / "p.npy")
    g.validate()
    assert np.array_equal(g.sample(20, seed=0), pts)


def test_samples_bad_inputs(tmp_path: Path) -> None:
    from PIL import Image

    with pytest.raises(ValueError, match="config 'generator/samples'.*does not exist"):
        SampleGenerator(tmp_path / "none.npy").validate()
    np.save(tmp_path / "few.npy", np.zeros((3, 1, 4, 4), np.uint8))
    with pytest.raises(ValueError, match="holds only 3"):
        SampleGenerator(tmp_path / "few.npy").sample(4, seed=0)
    np.save(tmp_path / "range.npy", np.full((3, 1, 4, 4), 2.0))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        SampleGenerator(tmp_path / "range.npy").validate()
    np.save(tmp_path / "layout.npy", np.zeros((3, 5, 4, 4), np.uint8))
    with pytest.raises(ValueError, match="channel axis"):
        SampleGenerator(tmp_path / "layout.npy").validate()
    np.savez(tmp_path / "two.npz", a=np.zeros((2, 4, 4), np.uint8), b=np.zeros((2, 4, 4), np.uint8))
    with pytest.raises(ValueError, match="key"):
        SampleGenerator(tmp_path / "two.npz").sample(1, seed=0)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(mixed / "a.png")
    Image.fromarray(np.zeros((9, 8), np.uint8)).save(mixed / "b.png")
    with pytest.raises(ValueError, match="differ in size"):
        SampleGenerator(mixed).validate()
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no image files"):
        SampleGenerator(tmp_path / "empty").validate()


@pytest.mark.parametrize("n, seed, batch_size", [(0, 0, 1), (2, -1, 1), (2, 0, 0)])
def test_bad_sample_requests(tmp_path: Path, n: int, seed: int, batch_size: int) -> None:
    np.save(tmp_path / "s.npy", np.zeros((3, 1, 4, 4), np.uint8))
    with pytest.raises(ValueError, match="must be an int"):
        SampleGenerator(tmp_path / "s.npy").sample(n, seed, batch_size)


# ------------------------------------------------------------------------------------------------
# configs
# ------------------------------------------------------------------------------------------------
CONFIGS = config_dir()


def _compose(group: str, option: str, overrides: list[str]):  # -> DictConfig
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIGS / group), version_base="1.3"):
        return compose(config_name=option, overrides=overrides)


def test_generator_configs_instantiate(checkpoint: Path, tmp_path: Path) -> None:
    from hydra.utils import instantiate

    spec, sd = _module_config(tmp_path)
    np.save(tmp_path / "s.npy", np.zeros((3, 1, 4, 4), np.uint8))
    cases = {
        "checkpoint": [f"path={checkpoint}"],
        "module": [f"module._target_={spec['_target_']}", "+module.latent_dim=8", "+module.dim=4", f"state_dict={sd}",
                   "latent_shape=[8]", "output_range=[-1,1]"],  # fmt: skip
        "callable": ["function=test_gan_generators:gray_uint8"],
        "samples": [f"path={tmp_path / 's.npy'}"],
    }
    assert {p.stem for p in (CONFIGS / "generator").glob("*.yaml")} == set(cases)
    for option, overrides in cases.items():
        g = instantiate(_compose("generator", option, overrides))
        g.validate()
        assert g.identity()["kind"] == option
        json.dumps(g.identity())  # plain data, so results can carry it
        assert g.sample(2, seed=0).dtype == np.uint8


def test_sample_batches_equal_sample_and_feed_extraction() -> None:
    from ganeval.features import extract_with_info

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.ConvTranspose2d(5, 3, 4), torch.nn.Tanh())
    g = ModuleGenerator(net, latent_shape=[5, 1, 1], output_range=[-1, 1])
    whole = g.sample(11, seed=3, batch_size=4)
    parts = list(g.sample_batches(11, seed=3, batch_size=4))
    assert [len(p) for p in parts] == [4, 4, 3] and np.array_equal(np.concatenate(parts), whole)
    want, a = extract_with_info(whole, "pixels", progress=False, cache_dir=None)
    got, b = extract_with_info(g.sample_batches(11, seed=3, batch_size=4), "pixels", progress=False)
    assert np.array_equal(got, want)
