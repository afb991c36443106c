"""One critic step and one generator step against a direct float64 computation of the same losses, and the
sampling helpers at their edges."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from ganeval.gan import GanConfig
from ganeval.gan.sampling import generate, generate_batches, latent
from ganeval.gan.steps import critic_step, generator_step, make_optimizer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class _Gen(nn.Module):
    """2-d latents to 1×2×2 images: the smallest generator with an image's four axes."""

    latent_shape = (2,)
    output_shape = (1, 2, 2)

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 4)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.lin(z).view(-1, 1, 2, 2)


class _Critic(nn.Module):
    """A nonlinear critic, so the penalty's gradient depends on where between real and fake it is taken."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 3), nn.Linear(3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x.flatten(1)))).view(-1)


def _pair(seed: int = 0) -> tuple[_Gen, _Critic]:
    torch.manual_seed(seed)
    return _Gen(), _Critic()


def _expected_critic(gen: _Gen, critic: _Critic, cfg: GanConfig, real: torch.Tensor,
                     seed: int) -> tuple[float, float, float, dict[str, torch.Tensor]]:
    """The critic step's loss, gap, penalty and plain-SGD update, in float64 from the same draws."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn((len(real), 2), generator=g)
    alpha = torch.rand((len(real), 1, 1, 1), generator=g) if cfg.gp_weight > 0 else None
    gen64 = _Gen().double()
    gen64.load_state_dict(gen.state_dict())
    c64 = _Critic().double()
    c64.load_state_dict(critic.state_dict())
    real64 = real.double()
    fake = gen64(z.double()).detach()
    d_real, d_fake = c64(real64), c64(fake)
    gap = d_real.mean() - d_fake.mean()
    if cfg.loss == "wasserstein":
        loss = -gap
    else:
        loss = torch.log1p(torch.exp(-d_real)).mean() + torch.log1p(torch.exp(d_fake)).mean()
    gp = torch.zeros((), dtype=torch.float64)
    if alpha is not None:
        mix = (alpha.double() * real64 + (1 - alpha.double()) * fake).requires_grad_(True)
        (grad,) = torch.autograd.grad(c64(mix).sum(), mix, create_graph=True)
        norms = torch.sqrt((grad.reshape(len(real), -1) ** 2).sum(dim=1))
        gp = ((norms - 1.0) ** 2).mean()
        loss = loss + cfg.gp_weight * gp
    grads = torch.autograd.grad(loss, list(c64.parameters()))
    new = {k: (p - 0.1 * gr).detach() for (k, p), gr in zip(c64.named_parameters(), grads)}
    if cfg.clip is not None:
        new = {k: v.clamp(-cfg.clip, cfg.clip) for k, v in new.items()}
    return loss.item(), gap.item(), gp.item(), new


@pytest.mark.parametrize("cfg", [
    GanConfig("wgan_gp", gp_weight=10.0),
    GanConfig("wgan_gp_half", gp_weight=0.5),
    GanConfig("wgan", optimizer="rmsprop", clip=0.05, gp_weight=0.0),
    GanConfig("gan", loss="nonsaturating", gp_weight=0.0),
], ids=lambda c: c.name)
def test_a_critic_step_is_the_losses_written_out(cfg: GanConfig) -> None:
    gen, critic = _pair()
    real = torch.randn(5, 1, 2, 2, generator=torch.Generator().manual_seed(9))
    loss, gap, gp, new = _expected_critic(gen, critic, cfg, real, seed=3)
    opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    got = critic_step(gen, critic, opt, cfg, real, torch.Generator().manual_seed(3))
    assert got.shape == (3,) and not got.requires_grad
    np.testing.assert_allclose(got.numpy(), [loss, gap, gp], rtol=1e-5, atol=1e-7)
    for k, p in critic.named_parameters():
        np.testing.assert_allclose(p.detach().numpy(), new[k].numpy(), rtol=1e-5, atol=1e-7, err_msg=k)
    if cfg.clip is not None:
        assert max(p.abs().max().item() for p in critic.parameters()) == pytest.approx(cfg.clip)


@pytest.mark.parametrize("loss_kind", ["wasserstein", "nonsaturating"])
def test_a_generator_step_moves_the_generator_only(loss_kind: str) -> None:
    cfg = GanConfig(loss=loss_kind, gp_weight=0.0 if loss_kind == "nonsaturating" else 10.0)
    gen, critic = _pair(1)
    before = {k: v.clone() for k, v in critic.state_dict().items()}
    g64, c64 = _Gen().double(), _Critic().double()
    g64.load_state_dict(gen.state_dict()), c64.load_state_dict(critic.state_dict())
    z = torch.randn((4, 2), generator=torch.Generator().manual_seed(5)).double()
    score = c64(g64(z))
    want = -score.mean() if loss_kind == "wasserstein" else torch.log1p(torch.exp(-score)).mean()
    grads = torch.autograd.grad(want, list(g64.parameters()))
    opt = torch.optim.SGD(gen.parameters(), lr=0.1)
    got = generator_step(gen, critic, opt, cfg, 4, torch.Generator().manual_seed(5))
    assert got.item() == pytest.approx(want.item(), rel=1e-5) and not got.requires_grad
    for (_, p), (_, p0), gr in zip(gen.named_parameters(), g64.named_parameters(), grads):
        np.testing.assert_allclose(p.detach().numpy(), (p0 - 0.1 * gr).detach().numpy(), rtol=1e-5, atol=1e-7)
    assert all(torch.equal(v, before[k]) for k, v in critic.state_dict().items())
    assert all(p.requires_grad and p.grad is None for p in critic.parameters())


def test_the_optimiser_is_the_configs() -> None:
    params = [nn.Parameter(torch.zeros(2))]
    rms = make_optimizer(GanConfig(optimizer="rmsprop", gp_weight=0.0, clip=0.01), params, 5e-5)
    assert type(rms) is torch.optim.RMSprop and rms.param_groups[0]["lr"] == 5e-5
    adam = make_optimizer(GanConfig(betas=(0.5, 0.9)), params, 1e-3)
    assert type(adam) is torch.optim.Adam
    assert adam.param_groups[0]["lr"] == 1e-3 and adam.param_groups[0]["betas"] == (0.5, 0.9)


# ------------------------------------------------------------------------------------------------------------------
# Sampling (ganeval/gan/sampling.py)
# ------------------------------------------------------------------------------------------------------------------
def test_latents_are_the_seeds_standard_normal_draw() -> None:
    want = torch.randn((3, 2, 1), generator=torch.Generator().manual_seed(4))
    assert torch.equal(latent(3, (2, 1), 4), want)
    assert torch.equal(latent(np.int64(3), [np.int64(2), 1], np.int64(4)), want)  # type: ignore[arg-type]


class _Counting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []
        self.modes: list[bool] = []

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        self.calls.append(len(z))
        self.modes.append(self.training)
        return z * 2.0


@pytest.mark.parametrize("training", [True, False])
def test_generate_batches_in_eval_mode_and_restores_the_mode(training: bool) -> None:
    m = _Counting().train(training)
    z = torch.linspace(-1, 1, 1002).reshape(501, 2)
    out = generate(m, z, output_range=None)  # default batch_size: 500
    assert m.calls == [500, 1] and m.modes == [False, False] and m.training is training
    assert out.dtype == np.float32 and np.array_equal(out, (z * 2.0).numpy())
    m.calls.clear()
    assert generate(m, z[:3], output_range=None, batch_size=1).shape == (3, 2) and m.calls == [1, 1, 1]


def test_generate_maps_the_output_range_to_uint8() -> None:
    m = _Counting()
    z = torch.tensor([[-0.5, 0.0, 0.25, 0.5]])  # ×2: -1, 0, 0.5, 1 on a (-1, 1) range
    got = generate(m, z, output_range=(-1, 1))
    assert got.dtype == np.uint8 and got.tolist() == [[0, 128, 191, 255]]
    assert generate(m, z, output_range=(0.0, 2.0)).tolist() == [[0, 0, 64, 128]]


def test_generate_of_no_latents_is_empty_of_the_right_kind() -> None:
    z = torch.zeros(0, 2)
    assert generate(_Counting(), z, output_range=(0, 1)).dtype == np.uint8
    assert generate(_Counting(), z, output_range=None).dtype == np.float32
    assert generate(_Counting(), z, output_range=None).shape == (0,)


def test_batch_sizes_below_one_are_refused() -> None:
    for fn in (generate, lambda *a, **k: list(generate_batches(*a, **k))):
        with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
            fn(_Counting(), torch.zeros(2, 2), output_range=None, batch_size=0)


def test_generate_batches_yields_generates_rows_batch_by_batch() -> None:
    m = _Counting()
    z = torch.arange(1004.0).reshape(502, 2)
    parts = list(generate_batches(m, z, output_range=None))  # default batch_size: 500
    assert [len(p) for p in parts] == [500, 2]
    assert np.array_equal(np.concatenate(parts), generate(_Counting(), z, output_range=None))
    assert [len(p) for p in generate_batches(m, z[:5], output_range=None, batch_size=2)] == [2, 2, 1]


# ------------------------------------------------------------------------------------------------------------------
# The real data of a run (ganeval/gan/train_data.py)
# ------------------------------------------------------------------------------------------------------------------
def _images(n: int = 4, c: int = 1, h: int = 8, w: int = 8) -> np.ndarray:
    return np.arange(n * c * h * w, dtype=np.int64).reshape(n, c, h, w).astype(np.uint8)


def test_training_counts_are_checked_at_their_edges() -> None:
    from ganeval.gan.train_data import check_inputs

    x = _images()
    _, kw = check_inputs(x, "digits", None, 1, 1, 1, 0)
    assert kw == {"latent_dim": 32, "dim": 16, "channels": 1}
    assert check_inputs(x, "digits", {}, np.int64(2), 4, np.int32(3), 5)[0] is x  # type: ignore[arg-type]
    for i, (name, lo) in enumerate((("epochs", 1), ("batch_size", 1), ("checkpoint_every", 1), ("sample_every", 0))):
        for bad in (lo - 1, True, float(lo + 1)):
            args = [1, 1, 1, 0]
            args[i] = bad  # type: ignore[call-overload]
            with pytest.raises(ValueError, match=rf"^{name} must be an int >= {lo}, got {bad!r}$"):
                check_inputs(x, "digits", None, *args)
    with pytest.raises(ValueError, match=r"batch_size=5 is larger than the data \(4 rows\)"):
        check_inputs(x, "digits", None, 1, 5, 1, 0)


def test_training_data_kinds_are_checked() -> None:
    from ganeval.gan.train_data import check_inputs

    got, kw = check_inputs(torch.from_numpy(_images(c=3)), "cifar10", None, 1, 2, 1, 0)
    assert isinstance(got, np.ndarray) and kw["channels"] == 3
    pts = np.zeros((3, 5), dtype=np.float32)
    assert check_inputs(pts, "mlp", None, 1, 3, 1, 0)[1]["out_dim"] == 5
    assert check_inputs(pts, "mlp", {"out_dim": 5}, 1, 3, 1, 0)[1]["out_dim"] == 5
    cases = [
        (pts, "mlp", {"out_dim": 4}, "arch_kwargs out_dim=4 but the points have D=5"),
        (pts.astype(np.int64), "mlp", None, "trains on float points"),
        (pts[:, :, None], "mlp", None, "trains on float points"),
        (np.full((3, 5), np.inf), "mlp", None, "contains NaN or inf"),
        (_images().astype(np.float32), "digits", None, "trains on uint8 images"),
        (_images()[:, 0], "digits", None, "add a channel axis"),
        (_images(c=3), "digits", {"channels": 1}, "arch_kwargs channels=1 but the images have C=3"),
        ([[1, 2]], "digits", None, "must be a numpy array, got list"),
    ]
    for x, arch, kw, match in cases:
        with pytest.raises(ValueError, match=match):
            check_inputs(x, arch, kw, 1, 1, 1, 0)


def test_a_trained_samples_shape_is_known_before_training() -> None:
    from ganeval.gan.train_data import trained_sample_shape

    assert trained_sample_shape(_images(n=1, c=3), "digits") == (3, 32, 32)
    assert trained_sample_shape(_images(n=1, c=1, h=50, w=20), "celeba") == (1, 64, 64)
    assert trained_sample_shape(np.zeros((1, 7), np.float32), "mlp") == (7,)


def test_resize_crops_the_centre_square_then_interpolates() -> None:
    import torch.nn.functional as F

    from ganeval.gan.train_data import resize

    x = torch.from_numpy(np.random.default_rng(0).integers(0, 256, (3, 2, 9, 6), dtype=np.uint8))
    crop = x[..., 1:7, :]  # top (9 - 6) // 2 = 1
    want = F.interpolate(crop.double(), size=(4, 4), mode="bilinear", antialias=True, align_corners=False)
    want = want.round().clamp(0, 255).to(torch.uint8)
    got = resize(x, (4, 4))
    assert got.dtype == torch.uint8 and torch.equal(got, want)
    assert torch.equal(resize(x, (4, 4), chunk=1), want)
    wide = x.transpose(-1, -2)  # 6 × 9: left (9 - 6) // 2 = 1
    assert torch.equal(resize(wide, (4, 4)), want.transpose(-1, -2))
    assert resize(x, (9, 6)) is x
    plain = F.interpolate(x.float(), size=(3, 2), mode="bilinear", antialias=True, align_corners=False)
    assert torch.equal(resize(x, (3, 2)), plain.round().clamp(0, 255).to(torch.uint8))  # not square: no crop


def test_prepared_data_and_batches_are_in_the_generators_range() -> None:
    from ganeval.gan.architectures import build_generator
    from ganeval.gan.train_data import prepare_data, to_float

    gen = build_generator("digits")
    t = prepare_data(np.array([[[[0, 255], [51, 102]]]], dtype=np.uint8), gen, torch.device("cpu"))
    assert t.dtype == torch.uint8 and t.shape == (1, 1, 32, 32)
    batch = torch.tensor([[0, 51, 255]], dtype=torch.uint8)
    assert torch.allclose(to_float(batch, gen, torch.device("cpu")), torch.tensor([[-1.0, -0.6, 1.0]]))
    assert torch.allclose(to_float(batch, build_generator("mnist28"), torch.device("cpu")),
                          torch.tensor([[0.0, 0.2, 1.0]]))
    pts = prepare_data(np.ones((2, 3), np.float64), build_generator("mlp"), torch.device("cpu"))
    assert pts.dtype == torch.float32
    assert to_float(pts, build_generator("mlp"), torch.device("cpu")) is pts


def test_epoch_order_and_seeding_are_their_formulas() -> None:
    import random

    from ganeval.gan.train_data import epoch_order, seed_everything

    s = int(np.random.SeedSequence([7, 2]).generate_state(1)[0])
    assert torch.equal(epoch_order(10, 7, 2), torch.randperm(10, generator=torch.Generator().manual_seed(s)))
    seed_everything(2**32 + 5)
    got = (torch.rand(1).item(), np.random.rand(), random.random())
    torch.manual_seed(2**32 + 5)
    np.random.seed(5)
    random.seed(2**32 + 5)
    assert got == (torch.rand(1).item(), np.random.rand(), random.random())


# ------------------------------------------------------------------------------------------------------------------
# Training outputs (ganeval/gan/plots.py)
# ------------------------------------------------------------------------------------------------------------------
def test_the_loss_csv_is_one_exact_row_per_generator_step(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval.gan.plots import LOSS_COLUMNS, write_loss_csv

    history = np.array([[1, 5, 0, -0.5, 0.25, 1.5, 0.0], [2.0, 10.0, 1.0, 1e-3, -2.0, 0.1, 3.0]])
    write_loss_csv(tmp_path / "l.csv", history)
    assert (tmp_path / "l.csv").read_text() == (
        ",".join(LOSS_COLUMNS) + "\n1,5,0,-0.5,0.25,1.5,0.0\n2,10,1,0.001,-2.0,0.1,3.0\n")
    assert LOSS_COLUMNS == ("gen_step", "critic_step", "epoch", "loss_critic", "loss_gen", "critic_gap",
                            "grad_penalty")


def test_smoothing_is_a_trailing_mean_over_len_by_400_rows() -> None:
    from ganeval.gan.plots import _smooth

    y = np.random.default_rng(1).normal(size=1200)
    w = 3  # 1200 // 400
    padded = np.concatenate([np.full(w - 1, y[0]), y])
    want = np.array([padded[i : i + w].mean() for i in range(len(y))])
    np.testing.assert_allclose(_smooth(y), want, rtol=1e-12)
    assert _smooth(y[:799]) is not None and np.array_equal(_smooth(y[:799]), y[:799])  # 799 // 400 = 1: as is
    np.testing.assert_allclose(_smooth(y[:10], points=5), [np.mean(np.r_[y[0], y[:10]][i : i + 2]) for i in range(10)])


def test_image_grid_places_each_image_in_reading_order() -> None:
    from ganeval.gan.plots import image_grid

    imgs = (np.arange(5, dtype=np.uint8)[:, None, None, None] + 1) * np.ones((1, 1, 2, 3), np.uint8)
    grid = image_grid(imgs)  # nrow = ceil(sqrt(5)) = 3 per row, 2 rows, pad 2
    assert grid.shape == (2 * (2 + 2) + 2, 3 * (3 + 2) + 2, 1)
    for i in range(5):
        r, q = divmod(i, 3)
        y, x = 2 + r * 4, 2 + q * 5
        assert (grid[y : y + 2, x : x + 3] == i + 1).all()
    assert (grid > 0).sum() == 5 * 6
    two = image_grid(imgs, nrow=5, pad=0)
    assert two.shape == (2, 15, 1) and two[0, ::3, 0].tolist() == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("channels", [1, 3])
def test_the_grid_png_holds_the_grid_upscaled(tmp_path, channels: int) -> None:  # type: ignore[no-untyped-def]
    from PIL import Image

    from ganeval.gan.plots import image_grid, save_image_grid

    imgs = np.random.default_rng(2).integers(0, 256, (3, channels, 2, 2), dtype=np.uint8)
    save_image_grid(tmp_path / "g.png", imgs, nrow=2, scale=3)
    got = np.asarray(Image.open(tmp_path / "g.png"))
    want = image_grid(imgs, 2).repeat(3, axis=0).repeat(3, axis=1)
    assert np.array_equal(got, want[:, :, 0] if channels == 1 else want)
    save_image_grid(tmp_path / "h.png", imgs)
    assert np.asarray(Image.open(tmp_path / "h.png")).shape[:2] == image_grid(imgs).shape[:2]


def _captured(monkeypatch: pytest.MonkeyPatch) -> list:  # type: ignore[type-arg]
    from ganeval.gan import plots

    figs: list = []  # type: ignore[type-arg]
    monkeypatch.setattr(plots, "_save_fig", lambda fig, path: figs.append(fig))
    return figs


def test_the_loss_plot_draws_the_three_smoothed_curves(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.gan import plots

    figs = _captured(monkeypatch)
    h = np.random.default_rng(3).normal(size=(900, 7))
    plots.plot_losses("unused.png", h, title="run_1")
    ax = figs[0].axes[0]
    assert [ln.get_label() for ln in ax.lines] == ["critic loss", "generator loss", "critic gap D(real)-D(fake)"]
    for ln, col in zip(ax.lines, (3, 4, 5)):
        assert np.array_equal(ln.get_xdata(), h[:, 0])
        np.testing.assert_allclose(ln.get_ydata(), plots._smooth(h[:, col]))
    assert ax.get_xlabel() == "generator step" and ax.get_legend() is not None
    plots.plot_losses("unused.png", np.zeros((0, 7)))
    assert len(figs[1].axes[0].lines) == 0 and figs[1].axes[0].get_legend() is None


@pytest.mark.parametrize("dim", [1, 2, 3, 4])
def test_the_points_plot_shows_real_under_generated(monkeypatch: pytest.MonkeyPatch, dim: int) -> None:
    from ganeval.gan import plots

    figs = _captured(monkeypatch)
    rng = np.random.default_rng(dim)
    pts, real = rng.normal(size=(5, dim)), rng.normal(size=(6, dim))
    plots.save_points_plot("unused.png", pts, real)
    ax = figs[0].axes[0]
    assert [c.get_label() for c in ax.collections] == ["real", "generated"]
    if dim < 3:
        want = np.c_[pts[:, 0], pts[:, 1] if dim == 2 else np.zeros(5)]
        assert np.array_equal(ax.collections[1].get_offsets(), want)
        assert ax.name == "rectilinear"
    else:
        assert ax.name == "3d"
        np.testing.assert_allclose(np.array(ax.collections[1]._offsets3d), pts[:, :3].T)  # type: ignore[attr-defined]
    plots.save_points_plot("unused.png", pts)
    assert [c.get_label() for c in figs[1].axes[0].collections] == ["generated"]


# ------------------------------------------------------------------------------------------------------------------
# Checkpoints (ganeval/gan/checkpoint.py)
# ------------------------------------------------------------------------------------------------------------------
def test_every_rng_state_comes_back_mid_gaussian_pair() -> None:
    """numpy and Python keep the second of a Gaussian pair between calls: that cached value must come back too."""
    import random

    from ganeval.gan.checkpoint import capture_rng, restore_rng

    np.random.seed(3)
    random.seed(3)
    torch.manual_seed(3)
    noise = torch.Generator().manual_seed(4)
    np.random.standard_normal(3)  # an odd count: one Gaussian cached
    random.gauss(0, 1)
    state = capture_rng(noise)
    assert state["numpy"]["has_gauss"] == 1 and state["numpy"]["pos"] == np.random.get_state()[2]
    assert state["python"]["gauss"] is not None

    def draws() -> tuple:  # type: ignore[type-arg]
        return (np.random.standard_normal(3).tolist(), np.random.rand(), random.gauss(0, 1), random.random(),
                torch.rand(2).tolist(), torch.rand(2, generator=noise).tolist())

    want = draws()
    np.random.seed(99), random.seed(99), torch.manual_seed(99), noise.manual_seed(99)
    restore_rng(state, noise)
    assert draws() == want


def _checkpoint(tmp_path, **change):  # type: ignore[no-untyped-def]
    from ganeval.gan.checkpoint import FORMAT, VERSION

    ckpt = {"format": FORMAT, "version": VERSION, "arch": "digits", "arch_kwargs": {}, "generator": {},
            "config_hash": "h", "config_json": '{"seed": 3, "gan": {"name": "wgan"}}', **change}
    ckpt = {k: v for k, v in ckpt.items() if v is not None}
    path = tmp_path / "c.pt"
    torch.save(ckpt, path)
    return path


def test_a_checkpoint_is_checked_before_it_is_used(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval.gan.checkpoint import FORMAT, REQUIRED_KEYS, VERSION, checkpoint_config, load_checkpoint

    assert (FORMAT, VERSION) == ("ganeval-gan-checkpoint", 1)  # the format this ganeval writes and reads
    assert REQUIRED_KEYS == ("format", "version", "arch", "arch_kwargs", "generator", "config_hash", "config_json")
    ok = load_checkpoint(_checkpoint(tmp_path))
    assert checkpoint_config(ok) == {"seed": 3, "gan": {"name": "wgan"}}
    assert load_checkpoint(_checkpoint(tmp_path, version=VERSION - 1))["version"] == VERSION - 1
    with pytest.raises(ValueError, match=rf"^mine: checkpoint version {VERSION + 1} is newer than this ganeval"):
        load_checkpoint(_checkpoint(tmp_path, version=VERSION + 1), what="mine")
    for key in REQUIRED_KEYS[2:]:
        with pytest.raises(ValueError, match=rf"lacks \['{key}'\]; it is truncated"):
            load_checkpoint(_checkpoint(tmp_path, **{key: None}))
    with pytest.raises(ValueError, match="is not a ganeval GAN checkpoint"):
        load_checkpoint(_checkpoint(tmp_path, format="other"))
    torch.save([1, 2], tmp_path / "list.pt")
    with pytest.raises(ValueError, match="is not a ganeval GAN checkpoint"):
        load_checkpoint(tmp_path / "list.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"^checkpoint: .*junk.pt' is not a readable torch checkpoint \("):
        load_checkpoint(tmp_path / "junk.pt")
    with pytest.raises(ValueError, match="does not exist; train one with ganeval.gan.train"):
        load_checkpoint(tmp_path / "none.pt")
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(tmp_path)  # a folder is not a file


def test_cuda_rng_states_come_back_only_to_as_many_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint's CUDA generator states are restored where the device count matches (faked here: no GPU)."""
    from ganeval.gan.checkpoint import capture_rng, restore_rng

    noise = torch.Generator().manual_seed(0)
    state = capture_rng(noise)
    restored: list = []  # type: ignore[type-arg]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", lambda states: restored.append(list(states)))
    for count, calls in ((1, 1), (2, 0)):
        restored.clear()
        monkeypatch.setattr(torch.cuda, "device_count", lambda count=count: count)
        restore_rng({**state, "cuda": [torch.zeros(3, dtype=torch.uint8)]}, noise)
        assert len(restored) == calls
    restored.clear()
    restore_rng(state, noise)  # saved without CUDA: nothing to restore
    assert restored == []


def test_the_loss_plot_grid_is_faint(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.gan import plots

    figs = _captured(monkeypatch)
    plots.plot_losses("unused.png", np.zeros((2, 7)), title="t")
    ax = figs[0].axes[0]
    assert ax.xaxis.get_gridlines()[0].get_alpha() == 0.3 and ax.get_title() == "t"
    assert ax.get_legend().get_texts()[0].get_fontsize() == 8 and ax.lines[0].get_linewidth() == 1
    assert figs[0].get_size_inches() == pytest.approx((7, 4))


class _Payload:
    """An object a weights-only load must refuse to rebuild (unpickling it would run code)."""


def test_a_checkpoint_holding_code_is_refused_unread(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval.gan.checkpoint import FORMAT, VERSION, load_checkpoint

    path = tmp_path / "evil.pt"
    torch.save({"format": FORMAT, "version": VERSION, "arch": "digits", "arch_kwargs": {}, "generator": {},
                "config_hash": "h", "config_json": "{}", "extra": _Payload()}, path)
    with pytest.raises(ValueError, match=r"is not a readable torch checkpoint \(UnpicklingError: "):
        load_checkpoint(path)
