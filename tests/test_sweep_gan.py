"""The gan package pinned at every constant: each architecture's layers as the paper lists them (kernel, stride,
padding, slope, bias, in-place), each class's own defaults, and every trainer-setting check at its edge."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from ganeval.gan import ARCHITECTURES, PRESETS, GanConfig, build, gan_config
from ganeval.gan.architectures import resolve_arch_kwargs

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _layer(x: nn.Module) -> str:
    """One leaf module in a few words: every setting that changes what it computes or how."""
    if isinstance(x, (nn.Conv2d, nn.ConvTranspose2d)):
        s = f"{type(x).__name__[:-2]} {x.in_channels}>{x.out_channels} k{x.kernel_size} s{x.stride} p{x.padding}"
        if isinstance(x, nn.ConvTranspose2d):
            s += f" op{x.output_padding}"
        return s + (" nobias" if x.bias is None else "")
    if isinstance(x, nn.Linear):
        return f"Linear {x.in_features}>{x.out_features}" + (" nobias" if x.bias is None else "")
    if isinstance(x, (nn.BatchNorm1d, nn.BatchNorm2d)):
        return f"{type(x).__name__} {x.num_features} eps{x.eps} m{x.momentum}"
    if isinstance(x, nn.LeakyReLU):
        return f"LeakyReLU {x.negative_slope}" + (" inplace" if x.inplace else "")
    if isinstance(x, nn.ReLU):
        return "ReLU" + (" inplace" if x.inplace else "")
    return type(x).__name__


def _layers(m: nn.Module) -> list[str]:
    return [_layer(x) for x in m.modules() if not list(x.children())]


def _convs(kind: str, pairs: list[tuple[int, int]], k: int, s: int, p: int, after: list[str], op: int | None = None,
           bias: bool = True) -> list[str]:
    tail = "" if op is None else f" op({op}, {op})"
    out: list[str] = []
    for c_in, c_out in pairs:
        out.append(f"{kind} {c_in}>{c_out} k({k}, {k}) s({s}, {s}) p({p}, {p}){tail}" + ("" if bias else " nobias"))
        out += [a.format(c=c_out) for a in after]
    return out


def _bn(kind: str, c: int) -> str:
    return f"BatchNorm{kind} {c} eps1e-05 m0.1"


BN2 = "BatchNorm2d {c} eps1e-05 m0.1"  # after a convolution of c output channels


# Appendix C's listings (paper pairs) and ours for the digits and points, layer by layer.
SPEC: dict[str, tuple[list[str], list[str]]] = {
    "mnist_wgan": (
        ["Linear 100>512", "ReLU"]
        + _convs("ConvTranspose", [(128, 64), (64, 32), (32, 16)], 4, 2, 1, ["ReLU", BN2], op=0)
        + _convs("ConvTranspose", [(16, 1)], 4, 2, 1, ["Sigmoid"], op=0),
        _convs("Conv", [(1, 16), (16, 32), (32, 64)], 4, 2, 1, ["LeakyReLU 0.2"])
        + _convs("Conv", [(64, 128)], 4, 2, 1, ["Sigmoid"]) + ["Linear 512>1", "Sigmoid"],
    ),
    "mnist28": (
        _convs("ConvTranspose", [(256, 128), (128, 64)], 5, 1, 0, ["ReLU inplace"], op=0)
        + _convs("ConvTranspose", [(64, 1)], 8, 2, 0, [], op=0) + ["Linear 128>4096", "ReLU inplace", "Sigmoid"],
        _convs("Conv", [(1, 64), (64, 128), (128, 256)], 5, 2, 2, ["ReLU inplace"]) + ["Linear 4096>1"],
    ),
    "cifar10": (
        ["Linear 128>4096", _bn("1d", 4096), "ReLU inplace"]
        + _convs("ConvTranspose", [(256, 128), (128, 64)], 2, 2, 0, [BN2,
                                                                      "ReLU inplace"], op=0)
        + _convs("ConvTranspose", [(64, 3)], 2, 2, 0, ["Tanh"], op=0),
        _convs("Conv", [(3, 64), (64, 128), (128, 256)], 3, 2, 1, ["LeakyReLU 0.01"]) + ["Linear 4096>1"],
    ),
    "celeba": (
        ["Linear 128>8192", _bn("1d", 8192), "ReLU inplace"]
        + _convs("ConvTranspose", [(512, 256), (256, 128), (128, 64)], 5, 2, 2,
                 [BN2, "ReLU inplace"], op=1, bias=False)
        + _convs("ConvTranspose", [(64, 3)], 5, 2, 2, ["Tanh"], op=1),
        _convs("Conv", [(3, 64), (64, 128), (128, 256), (256, 512)], 5, 2, 2, ["LeakyReLU 0.01"])
        + _convs("Conv", [(512, 1)], 4, 1, 0, []),
    ),
    "digits": (
        ["Linear 32>1024", _bn("1d", 1024), "ReLU inplace"]
        + _convs("ConvTranspose", [(64, 32), (32, 16)], 4, 2, 1, [BN2,
                                                                   "ReLU inplace"], op=0)
        + _convs("ConvTranspose", [(16, 1)], 4, 2, 1, ["Tanh"], op=0),
        _convs("Conv", [(1, 16), (16, 32), (32, 64)], 4, 2, 1, ["LeakyReLU 0.2"]) + ["Linear 1024>1"],
    ),
    "mlp": (
        ["Linear 8>128", "ReLU inplace", "Linear 128>128", "ReLU inplace", "Linear 128>128", "ReLU inplace",
         "Linear 128>3"],
        ["Linear 3>128", "LeakyReLU 0.2", "Linear 128>128", "LeakyReLU 0.2", "Linear 128>128", "LeakyReLU 0.2",
         "Linear 128>1"],
    ),
}  # fmt: skip


def test_every_architecture_is_specified() -> None:
    assert set(SPEC) == set(ARCHITECTURES)


@pytest.mark.parametrize("name", sorted(SPEC))
def test_each_layer_is_the_listed_one(name: str) -> None:
    gen, critic = build(name)
    assert (_layers(gen), _layers(critic)) == SPEC[name]


@pytest.mark.parametrize("name", sorted(SPEC))
def test_each_class_alone_builds_its_registered_defaults(name: str) -> None:
    """The classes' own defaults are the registry's: a caller building one directly gets the listed network."""
    arch = ARCHITECTURES[name]
    gen, critic = arch.generator(), arch.critic()
    assert (_layers(gen), _layers(critic)) == SPEC[name]
    want = build(name)[0]
    assert (gen.latent_shape, gen.output_shape, gen.output_range) == (
        want.latent_shape, want.output_shape, want.output_range)


@pytest.mark.parametrize("name", sorted(SPEC))
def test_a_one_image_batch_keeps_its_own_axis(name: str) -> None:
    """Batch size 1 in eval mode: the forward's reshapes keep the batch axis (a `view(-1, ...)` fixed to 2 or 0
    would not)."""
    torch.manual_seed(0)
    gen, critic = build(name)
    gen.eval(), critic.eval()
    with torch.no_grad():
        one = gen(torch.randn(1, *gen.latent_shape))
        two = gen(torch.randn(2, *gen.latent_shape))
        assert one.shape == (1, *gen.output_shape) and two.shape == (2, *gen.output_shape)
        assert critic(one).shape == (1,) and critic(two).shape == (2,)


def test_the_registry_cannot_be_changed_by_accident() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ARCHITECTURES["digits"].name = "other"  # type: ignore[misc]


def test_architecture_sizes_are_checked_at_their_edge() -> None:
    assert resolve_arch_kwargs("digits", {"dim": 1})["dim"] == 1
    assert resolve_arch_kwargs("digits") == ARCHITECTURES["digits"].defaults
    assert resolve_arch_kwargs("digits", None) == {"latent_dim": 32, "dim": 16, "channels": 1}
    for bad in (0, -1, True, 2.0, "4"):
        with pytest.raises(ValueError, match=r"arch_kwargs\['dim'\] must be a positive int for arch='digits'"):
            resolve_arch_kwargs("digits", {"dim": bad})
    with pytest.raises(ValueError, match=r"\['width'\] not accepted by arch='mlp'"):
        resolve_arch_kwargs("mlp", {"width": 3, "hidden": 4})
    gen, critic = build("mlp", hidden=2, layers=1, out_dim=1, latent_dim=1)
    assert _layers(gen) == ["Linear 1>2", "ReLU inplace", "Linear 2>1"]
    assert _layers(critic) == ["Linear 1>2", "LeakyReLU 0.2", "Linear 2>1"]


# ------------------------------------------------------------------------------------------------------------------
# Trainer settings (ganeval/gan/config.py)
# ------------------------------------------------------------------------------------------------------------------
def test_the_default_settings_are_the_papers_wgan_gp() -> None:
    """Appendix C: "For WGAN-GP we use Adam optimizer with learning rate of 10^-4, β1=0.9, β2=0.999"; λ = 10 and
    5 critic steps as Gulrajani et al."""
    assert GanConfig() == PRESETS["wgan_gp"]
    assert GanConfig().to_dict() == {"name": "wgan_gp", "loss": "wasserstein", "optimizer": "adam", "lr_g": 1e-4,
                                     "lr_d": 1e-4, "betas": [0.9, 0.999], "n_critic": 5, "clip": None,
                                     "gp_weight": 10.0}


def test_each_setting_is_checked_at_its_edge() -> None:
    ok = [dict(lr_g=1e-12), dict(lr_d=1e-12), dict(betas=(0.0, 0.0)), dict(betas=[0.999999, 0.5]),
          dict(n_critic=1), dict(gp_weight=0.0), dict(clip=1e-9, gp_weight=0.0),
          dict(loss="nonsaturating", clip=None, gp_weight=0.0), dict(optimizer="rmsprop")]
    for kw in ok:
        cfg = GanConfig(**kw)  # type: ignore[arg-type]
        for k, v in kw.items():
            assert getattr(cfg, k) == (tuple(v) if k == "betas" else v)
    bad = {
        "lr_g and gan.lr_d must be > 0": [dict(lr_g=0.0), dict(lr_d=0.0), dict(lr_g=-1.0)],
        r"betas must be two numbers in \[0, 1\)": [dict(betas=(1.0, 0.5)), dict(betas=(0.5, 1.0)),
                                                   dict(betas=(-1e-9, 0.5)), dict(betas=(0.5,)),
                                                   dict(betas=(0.1, 0.2, 0.3))],
        "n_critic must be an int >= 1": [dict(n_critic=0), dict(n_critic=2.0)],
        "clip must be > 0 or null": [dict(clip=0.0, gp_weight=0.0), dict(clip=-0.5, gp_weight=0.0)],
        "gp_weight must be >= 0": [dict(gp_weight=-1e-9)],
        "takes no clip or gp_weight": [dict(loss="nonsaturating", gp_weight=1e-9),
                                       dict(loss="nonsaturating", clip=0.1, gp_weight=0.0)],
        "gan.loss='hinge' is not known": [dict(loss="hinge")],
        "gan.optimizer='sgd' is not known": [dict(optimizer="sgd")],
    }
    for message, cases in bad.items():
        for kw in cases:
            with pytest.raises(ValueError, match=message):
                GanConfig(**kw)  # type: ignore[arg-type]


def test_numbers_are_stored_as_floats() -> None:
    cfg = GanConfig(lr_g=1, lr_d=2, gp_weight=3, betas=[0, 0], clip=None)  # type: ignore[arg-type]
    assert [type(v) for v in (cfg.lr_g, cfg.lr_d, cfg.gp_weight, *cfg.betas)] == [float] * 5
    assert type(GanConfig(clip=1, gp_weight=0).clip) is float  # type: ignore[arg-type]


def test_gan_config_resolves_each_kind_of_spec() -> None:
    assert gan_config(PRESETS["gan"]) is not None and gan_config(PRESETS["gan"]) == PRESETS["gan"]
    assert gan_config(PRESETS["gan"], n_critic=3).n_critic == 3
    assert gan_config({"lr_g": 2e-4}) == dataclasses.replace(GanConfig(), lr_g=2e-4)
    assert gan_config({"name": "mine", "lr_g": 2e-4}) == dataclasses.replace(GanConfig(), name="mine", lr_g=2e-4)
    assert gan_config({"name": "wgan"}, betas=[0.5, 0.9]).betas == (0.5, 0.9)
    assert gan_config("wgan_gp_quick", betas=[0.0, 0.9]).betas == (0.0, 0.9)
    with pytest.raises(ValueError, match=r"unknown gan settings \['lr'\]"):
        gan_config("wgan", lr=1.0)
    with pytest.raises(ValueError, match=r"unknown gan settings \['lr'\]"):
        gan_config({"lr": 1.0, "lr_g": 1.0})
    with pytest.raises(ValueError, match="gan must be a preset name, a mapping or a GanConfig, got int"):
        gan_config(3)  # type: ignore[arg-type]
