"""Architectures: shapes, output ranges, forward/backward, and layer sizes exactly as the paper lists them."""

from __future__ import annotations

import pytest
import torch

from ganeval.gan import ARCHITECTURES, build, build_generator, get_architecture
from ganeval.gan.architectures import resolve_arch_kwargs


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _conv(c_in: int, c_out: int, k: int, bias: bool = True) -> int:
    return c_in * c_out * k * k + (c_out if bias else 0)


def _lin(a: int, b: int) -> int:
    return a * b + b


def _bn(c: int) -> int:
    return 2 * c


# Parameter counts computed by hand from the lstlisting blocks of the paper's appendix C.
PAPER_COUNTS = {
    "mnist_wgan": (
        _lin(100, 512) + _conv(128, 64, 4) + _bn(64) + _conv(64, 32, 4) + _bn(32) + _conv(32, 16, 4) + _bn(16)
        + _conv(16, 1, 4),
        _conv(1, 16, 4) + _conv(16, 32, 4) + _conv(32, 64, 4) + _conv(64, 128, 4) + _lin(512, 1),
    ),
    "mnist28": (
        _conv(256, 128, 5) + _conv(128, 64, 5) + _conv(64, 1, 8) + _lin(128, 4096),
        _conv(1, 64, 5) + _conv(64, 128, 5) + _conv(128, 256, 5) + _lin(4096, 1),
    ),
    "cifar10": (
        _lin(128, 4096) + _bn(4096) + _conv(256, 128, 2) + _bn(128) + _conv(128, 64, 2) + _bn(64) + _conv(64, 3, 2),
        _conv(3, 64, 3) + _conv(64, 128, 3) + _conv(128, 256, 3) + _lin(4096, 1),
    ),
    "celeba": (
        _lin(128, 8192) + _bn(8192) + _conv(512, 256, 5, False) + _bn(256) + _conv(256, 128, 5, False) + _bn(128)
        + _conv(128, 64, 5, False) + _bn(64) + _conv(64, 3, 5),
        _conv(3, 64, 5) + _conv(64, 128, 5) + _conv(128, 256, 5) + _conv(256, 512, 5) + _conv(512, 1, 4),
    ),
}  # fmt: skip

EXPECTED_OUTPUT = {
    "mnist_wgan": ((1, 32, 32), (0.0, 1.0)),
    "mnist28": ((1, 28, 28), (0.0, 1.0)),
    "cifar10": ((3, 32, 32), (-1.0, 1.0)),
    "celeba": ((3, 64, 64), (-1.0, 1.0)),
    "digits": ((1, 32, 32), (-1.0, 1.0)),
    "mlp": ((3,), None),
}


def _count(m: torch.nn.Module) -> int:
    return sum(p.numel() for p in m.parameters())


@pytest.mark.parametrize("name", sorted(PAPER_COUNTS))
def test_paper_architectures_have_the_listed_layer_sizes(name: str) -> None:
    gen, critic = build(name)
    assert (_count(gen), _count(critic)) == PAPER_COUNTS[name]


def test_every_registered_architecture_is_checked() -> None:
    assert set(ARCHITECTURES) == set(EXPECTED_OUTPUT)


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_forward_backward_shapes_and_range(name: str) -> None:
    torch.manual_seed(0)
    gen, critic = build(name)
    shape, out_range = EXPECTED_OUTPUT[name]
    assert gen.output_shape == shape and gen.output_range == out_range
    z = torch.randn(3, *gen.latent_shape) * 3  # large latents push bounded outputs to their limits
    x = gen(z)
    assert x.shape == (3, *shape)
    if out_range is not None:
        assert out_range[0] <= x.min().item() and x.max().item() <= out_range[1]
    score = critic(x)
    assert score.shape == (3,)
    (score.sum() + x.square().mean()).backward()
    for m in (gen, critic):
        for pname, p in m.named_parameters():
            assert p.grad is not None and torch.isfinite(p.grad).all(), f"{name}: no gradient for {pname}"


def test_mnist28_crops_after_the_first_block() -> None:
    gen = build_generator("mnist28", dim=4)
    seen: list[tuple[int, ...]] = []
    gen.block2.register_forward_pre_hook(lambda _m, inp: seen.append(tuple(inp[0].shape)))
    gen(torch.randn(2, 128))
    assert seen == [(2, 8, 7, 7)]


def test_channels_and_sizes_are_configurable() -> None:
    gen, critic = build("cifar10", channels=1, dim=8)
    x = gen(torch.randn(2, 128))
    assert x.shape == (2, 1, 32, 32) and critic(x).shape == (2,)
    gen, critic = build("mlp", out_dim=5, latent_dim=2)
    assert gen(torch.randn(4, 2)).shape == (4, 5) and critic(torch.randn(4, 5)).shape == (4,)


def test_bad_architecture_arguments_raise() -> None:
    with pytest.raises(ValueError, match="known architecture"):
        get_architecture("resnet")
    with pytest.raises(ValueError, match="not accepted"):
        resolve_arch_kwargs("digits", {"width": 3})
    with pytest.raises(ValueError, match="positive int"):
        resolve_arch_kwargs("digits", {"dim": 0})
