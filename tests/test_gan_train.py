"""Training: the trainers do what they claim, outputs are written, resume is exact, other configs are refused."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from ganeval.gan import PRESETS, GanConfig, gan_config, load_checkpoint, train
from ganeval.gan.steps import critic_step


pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = {"latent_dim": 8, "dim": 4}


def _images(n: int = 96, seed: int = 0) -> np.ndarray:
    """Bright squares at random positions on black: a simple, learnable image distribution."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 1, 32, 32), dtype=np.uint8)
    for i, (r, c) in enumerate(rng.integers(4, 20, size=(n, 2))):
        x[i, 0, r : r + 8, c : c + 8] = 255
    return x


def _weights(path: Path) -> dict[str, torch.Tensor]:
    ckpt = load_checkpoint(path)
    return {**{f"g.{k}": v for k, v in ckpt["generator"].items()}, **{f"d.{k}": v for k, v in ckpt["critic"].items()}}


def _assert_bitwise_equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), f"{k} differs"


# ------------------------------------------------------------------------------------------------
# Trainers
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("gan", ["wgan", "wgan_gp"])
def test_image_trainers_run_write_outputs_and_keep_losses_finite(tmp_path: Path, gan: str) -> None:
    ckpt = train(_images(), arch="digits", gan=gan, out_dir=tmp_path, epochs=2, batch_size=16, seed=0,
                 checkpoint_every=4, sample_every=1, progress=False, arch_kwargs=TINY)  # fmt: skip
    assert ckpt == tmp_path / "checkpoint.pt"
    for name in ("losses.csv", "losses.png", "samples_final.png", "samples_epoch0001.png", "config.json"):
        assert (tmp_path / name).stat().st_size > 0, name
    rows = list(csv.DictReader(open(tmp_path / "losses.csv")))
    n_critic = gan_config(gan).n_critic
    assert len(rows) == (2 * (96 // 16)) // n_critic  # one row per generator step
    assert [int(r["critic_step"]) for r in rows] == [n_critic * (i + 1) for i in range(len(rows))]
    for r in rows:
        for col in ("loss_critic", "loss_gen", "critic_gap", "grad_penalty"):
            assert np.isfinite(float(r[col]))
    state = load_checkpoint(ckpt)
    assert state["done"] and state["epoch"] == 2 and state["critic_step"] == 12 and state["gen_step"] == len(rows)
    if gan == "wgan":  # weight clipping holds after every critic step
        assert max(v.abs().max().item() for v in state["critic"].values()) <= 0.01 + 1e-7
        assert all(float(r["grad_penalty"]) == 0 for r in rows)
    else:
        assert any(float(r["grad_penalty"]) > 0 for r in rows)


@pytest.mark.parametrize("gan", ["wgan", "wgan_gp", "gan"])
def test_critic_steps_against_a_fixed_generator_separate_real_from_fake(gan: str) -> None:
    torch.manual_seed(0)
    from ganeval.gan import build

    gen, critic = build("mlp", out_dim=2, latent_dim=2, hidden=16, layers=2)
    cfg = gan_config(gan, lr_d=1e-3 if gan != "wgan" else 5e-3)
    opt = torch.optim.Adam(critic.parameters(), lr=cfg.lr_d) if cfg.optimizer == "adam" else torch.optim.RMSprop(
        critic.parameters(), lr=cfg.lr_d)  # fmt: skip
    noise = torch.Generator().manual_seed(0)
    real = torch.randn(256, 2) * 0.1 + 3.0  # far from the generator's outputs
    gaps = [critic_step(gen, critic, opt, cfg, real, noise)[1].item() for _ in range(60)]
    assert np.isfinite(gaps).all()
    # The critic learns to score real above fake (step 0 is skipped: WGAN's first clipping shrinks the scale).
    assert gaps[-1] > 0 and np.mean(gaps[-5:]) > 1.5 * max(gaps[1:4])


def test_vanilla_gan_on_points_moves_toward_the_data(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    pts = (rng.normal(size=(512, 3)) * 0.05 + 2.0).astype(np.float32)
    from ganeval.gan import CheckpointGenerator, build_generator

    torch.manual_seed(0)
    kw = {"latent_dim": 4, "hidden": 32, "layers": 2}
    gen0 = build_generator("mlp", out_dim=3, **kw)
    ckpt = train(pts, arch="mlp", gan="gan", out_dir=tmp_path, epochs=20, batch_size=64, seed=0,
                 progress=False, arch_kwargs=kw, sample_every=0, lr_g=2e-3, lr_d=2e-3)  # fmt: skip
    after = CheckpointGenerator(ckpt).sample(500, seed=1)
    with torch.no_grad():
        before = gen0(torch.randn(500, 4)).numpy()
    assert after.dtype == np.float32 and after.shape == (500, 3)
    dist = lambda p: np.linalg.norm(p.mean(0) - pts.mean(0))  # noqa: E731
    assert dist(after) < 0.5 * dist(before)
    assert (tmp_path / "samples_final.png").stat().st_size > 0


# ------------------------------------------------------------------------------------------------
# Resume and config guard
# ------------------------------------------------------------------------------------------------
def test_continuing_to_more_epochs_equals_one_long_run(tmp_path: Path) -> None:
    kw = dict(arch="digits", gan="wgan_gp", batch_size=16, seed=3, progress=False, arch_kwargs=TINY, sample_every=0)
    x = _images(80)
    train(x, out_dir=tmp_path / "a", epochs=1, **kw)
    a = train(x, out_dir=tmp_path / "a", epochs=3, **kw)
    b = train(x, out_dir=tmp_path / "b", epochs=3, **kw)
    _assert_bitwise_equal(_weights(a), _weights(b))
    assert np.array_equal(load_checkpoint(a)["history"].numpy(), load_checkpoint(b)["history"].numpy())


def test_finished_run_is_returned_without_training_again(tmp_path: Path) -> None:
    kw = dict(arch="digits", gan="wgan", batch_size=16, seed=0, progress=False, arch_kwargs=TINY, sample_every=0)
    first = train(_images(), out_dir=tmp_path, epochs=1, **kw)
    before = _weights(first)
    raw = first.read_bytes()
    steps: list[int] = []
    again = train(_images(), out_dir=tmp_path, epochs=1, callback=lambda s: steps.append(s["critic_step"]), **kw)
    assert again == first and steps == []
    _assert_bitwise_equal(before, _weights(again))
    assert again.read_bytes() == raw  # not rewritten: the file's sha256 identifies the generator


@pytest.mark.parametrize(
    "change, field",
    [({"gan": "wgan_gp"}, "gan."), ({"lr_d": 1e-3}, "gan.lr_d"), ({"seed": 1}, "seed"),
     ({"batch_size": 8}, "batch_size"), ({"arch_kwargs": {"latent_dim": 8, "dim": 5}}, "arch_kwargs.dim"),
     ({"data": "other"}, "data.sha256"), ({"threads": 2}, "threads")],
)  # fmt: skip
def test_checkpoint_of_another_config_is_refused(tmp_path: Path, change: dict, field: str) -> None:
    base = dict(arch="digits", gan="wgan", batch_size=16, seed=0, progress=False, arch_kwargs=TINY, sample_every=0)
    train(_images(), out_dir=tmp_path, epochs=1, **base)
    before = (tmp_path / "checkpoint.pt").read_bytes()
    x = _images(seed=1) if change.get("data") else _images()
    kw = {**base, **{k: v for k, v in change.items() if k != "data"}}
    with pytest.raises(ValueError, match="different training config") as err:
        train(x, out_dir=tmp_path, epochs=2, **kw)
    assert field in str(err.value)
    assert (tmp_path / "checkpoint.pt").read_bytes() == before  # nothing overwritten


def test_cpu_training_runs_on_one_thread_and_restores_torchs_setting(tmp_path: Path) -> None:
    seen: list[int] = []
    before = torch.get_num_threads()
    train(_images(), out_dir=tmp_path, arch="digits", gan="wgan", epochs=1, batch_size=16, progress=False,
          arch_kwargs=TINY, sample_every=0, callback=lambda state: seen.append(torch.get_num_threads()))
    assert set(seen) == {1} and torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        train(_images(), out_dir=tmp_path / "b", arch="digits", gan="wgan", epochs=1, threads=0, progress=False)


def test_more_epochs_done_than_asked_is_refused(tmp_path: Path) -> None:
    kw = dict(arch="digits", gan="wgan", batch_size=16, seed=0, progress=False, arch_kwargs=TINY, sample_every=0)
    train(_images(), out_dir=tmp_path, epochs=2, **kw)
    with pytest.raises(ValueError, match="already trained 2 epochs"):
        train(_images(), out_dir=tmp_path, epochs=1, **kw)


def test_checkpoint_holds_everything_needed_and_loads_weights_only(tmp_path: Path) -> None:
    ckpt = train(_images(), arch="digits", gan="wgan_gp", out_dir=tmp_path, epochs=1, batch_size=16,
                 progress=False, arch_kwargs=TINY, sample_every=0)  # fmt: skip
    state = torch.load(ckpt, map_location="cpu", weights_only=True)
    for key in ("generator", "critic", "opt_g", "opt_d", "critic_step", "gen_step", "epoch", "rng", "config_hash",
                "arch", "arch_kwargs", "history"):  # fmt: skip
        assert key in state, key
    assert set(state["rng"]) >= {"torch", "numpy", "python", "noise"}
    assert state["arch"] == "digits" and state["arch_kwargs"] == {**TINY, "channels": 1}
    assert state["opt_d"]["state"]  # Adam moments are stored


RESUME_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    import numpy as np, torch
    torch.set_num_threads(1)
    from ganeval.gan import train
    out, kill_at = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(0)
    x = (rng.random((48, 1, 32, 32)) * 255).astype(np.uint8)
    def cb(state):
        if state["critic_step"] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    train(x, arch="digits", gan=sys.argv[3], out_dir=out, epochs=3, batch_size=8, seed=5, checkpoint_every=4,
          sample_every=0, progress=False, arch_kwargs={"latent_dim": 8, "dim": 4}, callback=cb if kill_at else None)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("gan", ["wgan", "wgan_gp"])
def test_sigkilled_training_resumes_to_the_same_weights(tmp_path: Path, gan: str) -> None:
    script = tmp_path / "run.py"
    script.write_text(RESUME_SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def run(out: str, kill_at: int) -> int:
        return subprocess.run([sys.executable, str(script), str(tmp_path / out), str(kill_at), gan], env=env,
                              capture_output=True, timeout=120).returncode  # fmt: skip

    # 6 batches per epoch, checkpoints every 4 critic steps: killed at step 11, the last checkpoint is step 8
    # (epoch 1, batch 2, in the middle of a 5-step critic cycle), so steps 9-11 are lost and redone.
    assert run("killed", 11) == -signal.SIGKILL
    state = load_checkpoint(tmp_path / "killed" / "checkpoint.pt")
    assert (state["critic_step"], state["epoch"], state["batch"], state["done"]) == (8, 1, 2, False)
    assert run("killed", 0) == 0
    # The uninterrupted run, in this process (one torch thread here and in the children, see the fixture).
    rng = np.random.default_rng(0)
    x = (rng.random((48, 1, 32, 32)) * 255).astype(np.uint8)
    b = train(x, arch="digits", gan=gan, out_dir=tmp_path / "straight", epochs=3, batch_size=8, seed=5,
              checkpoint_every=4, sample_every=0, progress=False, arch_kwargs={"latent_dim": 8, "dim": 4})  # fmt: skip
    a = tmp_path / "killed" / "checkpoint.pt"
    _assert_bitwise_equal(_weights(a), _weights(b))
    assert np.array_equal(load_checkpoint(a)["history"].numpy(), load_checkpoint(b)["history"].numpy())
    assert (tmp_path / "killed" / "losses.csv").read_text() == (tmp_path / "straight" / "losses.csv").read_text()


# ------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x, kw, match",
    [
        (np.zeros((20, 1, 32, 32), np.float32), {}, "uint8 images"),
        (np.zeros((20, 32, 32), np.uint8), {}, "uint8 images"),
        (np.zeros((20, 3, 32, 32), np.uint8), {"arch_kwargs": {"channels": 1}}, "channels=1"),
        (np.zeros((20, 1, 32, 32), np.uint8), {"batch_size": 64}, "larger than the data"),
        (np.zeros((20, 1, 32, 32), np.uint8), {"epochs": 0}, "epochs"),
        (np.zeros((20, 1, 32, 32), np.uint8), {"gan": "wgan-gp"}, "not a preset"),
        (np.zeros((20, 1, 32, 32), np.uint8), {"lr": 1e-3}, "unknown gan settings"),
        (np.zeros((20, 1, 32, 32), np.uint8), {"arch": "dcgan"}, "known architecture"),
        (np.zeros((20, 1, 32, 32), np.uint8), {"arch": "mlp"}, "float points"),
        (np.full((20, 3), np.nan, np.float32), {"arch": "mlp"}, "NaN"),
        (np.zeros((20, 1, 32, 32), np.uint8), {"seed": -1}, "seed"),
        (np.zeros((20, 1, 32, 32), np.uint8), {"checkpoint_every": 0}, "checkpoint_every"),
    ],
)  # fmt: skip
def test_bad_training_input_raises_before_writing(tmp_path: Path, x: np.ndarray, kw: dict, match: str) -> None:
    args = {"arch": "digits", "gan": "wgan", "epochs": 1, "batch_size": 8, "progress": False, **kw}
    with pytest.raises(ValueError, match=match):
        train(x, out_dir=tmp_path / "out", **args)
    assert not (tmp_path / "out").exists()


def test_gan_config_presets_and_overrides() -> None:
    # the presets' values are pinned: trained generators (and the quickstart's numbers) depend on them
    assert PRESETS == {
        "wgan": GanConfig("wgan", "wasserstein", "rmsprop", 5e-5, 5e-5, (0.9, 0.999), 5, 0.01, 0.0),
        "wgan_gp": GanConfig("wgan_gp", "wasserstein", "adam", 1e-4, 1e-4, (0.9, 0.999), 5, None, 10.0),
        "gan": GanConfig("gan", "nonsaturating", "adam", 2e-4, 2e-4, (0.5, 0.999), 1, None, 0.0),
        "wgan_quick": GanConfig("wgan_quick", "wasserstein", "rmsprop", 1e-3, 1e-3, (0.9, 0.999), 2, 0.02, 0.0),
        "wgan_gp_quick": GanConfig("wgan_gp_quick", "wasserstein", "adam", 1e-3, 1e-3, (0.5, 0.9), 2, None, 10.0),
    }
    assert all(gan_config(name) == preset for name, preset in PRESETS.items())
    assert gan_config({"name": "wgan", "lr_d": 1e-3}).lr_d == 1e-3
    assert gan_config({"name": "gan"}, n_critic=2).n_critic == 2
    with pytest.raises(ValueError, match="nonsaturating"):
        gan_config("gan", clip=0.1)
    with pytest.raises(ValueError, match="n_critic"):
        gan_config("wgan", n_critic=0)
    with pytest.raises(ValueError, match=r"'wgan_fast' is not a preset; choose one of \['gan', 'wgan', 'wgan_gp', "):
        gan_config("wgan_fast")
    with pytest.raises(ValueError, match=r"unknown gan settings \['_target_'\]"):
        gan_config({"_target_": "ganeval.gan.GanConfig", "name": "wgan"})


def test_images_are_resized_to_the_architecture(tmp_path: Path) -> None:
    x = np.zeros((16, 1, 28, 40), np.uint8)
    x[:, :, :, 6:34] = 200  # the centre 28x28 square is bright: the crop keeps it
    from ganeval.gan.train_data import resize

    y = resize(torch.from_numpy(x), (32, 32))
    assert y.shape == (16, 1, 32, 32) and y.dtype == torch.uint8 and int(y.min()) == 200
    ckpt = train(x, arch="digits", gan="wgan", out_dir=tmp_path, epochs=1, batch_size=8, progress=False,
                 arch_kwargs=TINY, sample_every=0)  # fmt: skip
    assert load_checkpoint(ckpt)["output_shape"] == [1, 32, 32]


@pytest.mark.gpu
@pytest.mark.parametrize("gan", ["wgan", "wgan_gp"])
def test_training_and_sampling_on_cuda(tmp_path: Path, gan: str) -> None:
    from ganeval.gan import CheckpointGenerator

    x = _images(64)
    kw = dict(arch="digits", gan=gan, batch_size=16, seed=0, progress=False, arch_kwargs=TINY, sample_every=0)
    train(x, out_dir=tmp_path, epochs=1, device="cuda", **kw)
    ckpt = train(x, out_dir=tmp_path, epochs=2, device="cuda", **kw)  # resumes on the device
    state = load_checkpoint(ckpt)
    assert state["device"].startswith("cuda") and state["critic_step"] == 8
    assert all(torch.isfinite(v).all() for v in state["generator"].values() if v.is_floating_point())
    g = CheckpointGenerator(ckpt)
    on_gpu, on_cpu = g.sample(50, seed=0, device="cuda"), g.sample(50, seed=0, device="cpu")
    assert np.abs(on_gpu.astype(int) - on_cpu.astype(int)).max() <= 2  # same latents, same weights
