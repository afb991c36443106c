"""The paper's generator/critic pairs (appendix C) plus small pairs for the embedded digits and point clouds.

Every generator maps z ~ N(0, I) of shape (N, latent_dim) to a batch and carries three attributes the
rest of ganeval relies on: `latent_shape` (tuple), `output_shape` ((C, H, W) or (D,)) and
`output_range` ((low, high) of image pixels, or None for unbounded points). Architectures are
registered by name; `build(name, **kwargs)` returns a fresh (generator, critic) pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import nn


class _Generator(nn.Module):
    latent_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    output_range: tuple[float, float] | None


# --------------------------------------------------------------------------------------------------
# MNIST WGAN (paper: ConvGenerator / ConvDiscriminator), 32x32, sigmoid output in [0, 1].
# --------------------------------------------------------------------------------------------------
class ConvGenerator(_Generator):
    """MNIST WGAN generator of the paper: 32×32 images in [0, 1] (sigmoid)."""

    def __init__(self, latent_dim: int = 100, dim: int = 16, channels: int = 1) -> None:
        super().__init__()
        self.latent_shape, self.output_shape, self.output_range = (latent_dim,), (channels, 32, 32), (0.0, 1.0)
        self.dim = dim
        self.latent_to_features = nn.Sequential(nn.Linear(latent_dim, 8 * dim * 2 * 2), nn.ReLU())
        layers: list[nn.Module] = []
        for c_in, c_out in ((8 * dim, 4 * dim), (4 * dim, 2 * dim), (2 * dim, dim)):
            layers += [nn.ConvTranspose2d(c_in, c_out, 4, 2, 1), nn.ReLU(), nn.BatchNorm2d(c_out)]
        layers += [nn.ConvTranspose2d(dim, channels, 4, 2, 1), nn.Sigmoid()]
        self.features_to_image = nn.Sequential(*layers)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        x = self.latent_to_features(z).view(-1, 8 * self.dim, 2, 2)
        return self.features_to_image(x)


class ConvDiscriminator(nn.Module):
    """MNIST WGAN critic of the paper (with its sigmoid on the score, as listed)."""

    def __init__(self, dim: int = 16, channels: int = 1) -> None:
        super().__init__()
        self.image_to_features = nn.Sequential(
            nn.Conv2d(channels, dim, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(dim, 2 * dim, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(2 * dim, 4 * dim, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(4 * dim, 8 * dim, 4, 2, 1), nn.Sigmoid(),
        )  # fmt: skip
        self.features_to_prob = nn.Sequential(nn.Linear(8 * dim * 2 * 2, 1), nn.Sigmoid())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features_to_prob(self.image_to_features(x).flatten(1)).view(-1)


# --------------------------------------------------------------------------------------------------
# 28x28 pair: MNIST WGAN-GP and both FashionMNIST models (sigmoid output in [0, 1]).
# --------------------------------------------------------------------------------------------------
class MNISTGenerator(_Generator):
    """28×28 generator of the paper (MNIST WGAN-GP, FashionMNIST): images in [0, 1] (sigmoid).

    block1 gives 8×8; it is cropped to 7×7 (as the public WGAN-GP PyTorch ports do) so that block2
    (11×11) and the stride-2 8×8 deconvolution land exactly on 28×28.
    """

    def __init__(self, latent_dim: int = 128, dim: int = 64, channels: int = 1) -> None:
        super().__init__()
        self.latent_shape, self.output_shape, self.output_range = (latent_dim,), (channels, 28, 28), (0.0, 1.0)
        self.dim = dim
        self.block1 = nn.Sequential(nn.ConvTranspose2d(4 * dim, 2 * dim, 5), nn.ReLU(True))
        self.block2 = nn.Sequential(nn.ConvTranspose2d(2 * dim, dim, 5), nn.ReLU(True))
        self.deconv_out = nn.ConvTranspose2d(dim, channels, 8, stride=2)
        self.preprocess = nn.Sequential(nn.Linear(latent_dim, 4 * 4 * 4 * dim), nn.ReLU(True))
        self.sigmoid = nn.Sigmoid()

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        x = self.preprocess(z).view(-1, 4 * self.dim, 4, 4)
        x = self.block1(x)[:, :, :7, :7]
        return self.sigmoid(self.deconv_out(self.block2(x)))


class MNISTDiscriminator(nn.Module):
    """28×28 critic of the paper (no normalisation layers, so the gradient penalty is well defined)."""

    def __init__(self, dim: int = 64, channels: int = 1) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(channels, dim, 5, 2, 2), nn.ReLU(True),
            nn.Conv2d(dim, 2 * dim, 5, 2, 2), nn.ReLU(True),
            nn.Conv2d(2 * dim, 4 * dim, 5, 2, 2), nn.ReLU(True),
        )  # fmt: skip
        self.output = nn.Linear(4 * 4 * 4 * dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.main(x).flatten(1)).view(-1)


# --------------------------------------------------------------------------------------------------
# CIFAR-10 pair, 32x32x3, tanh output in [-1, 1].
# --------------------------------------------------------------------------------------------------
class CIFARGenerator(_Generator):
    """CIFAR-10 generator of the paper: 32×32×3 images in [-1, 1] (tanh)."""

    def __init__(self, latent_dim: int = 128, dim: int = 64, channels: int = 3) -> None:
        super().__init__()
        self.latent_shape, self.output_shape, self.output_range = (latent_dim,), (channels, 32, 32), (-1.0, 1.0)
        self.dim = dim
        self.preprocess = nn.Sequential(
            nn.Linear(latent_dim, 4 * 4 * 4 * dim), nn.BatchNorm1d(4 * 4 * 4 * dim), nn.ReLU(True)
        )
        self.block1 = nn.Sequential(
            nn.ConvTranspose2d(4 * dim, 2 * dim, 2, stride=2), nn.BatchNorm2d(2 * dim), nn.ReLU(True)
        )
        self.block2 = nn.Sequential(nn.ConvTranspose2d(2 * dim, dim, 2, stride=2), nn.BatchNorm2d(dim), nn.ReLU(True))
        self.deconv_out = nn.ConvTranspose2d(dim, channels, 2, stride=2)
        self.tanh = nn.Tanh()

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        x = self.preprocess(z).view(-1, 4 * self.dim, 4, 4)
        return self.tanh(self.deconv_out(self.block2(self.block1(x))))


class CIFARDiscriminator(nn.Module):
    """CIFAR-10 critic of the paper."""

    def __init__(self, dim: int = 64, channels: int = 3) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(channels, dim, 3, 2, 1), nn.LeakyReLU(0.01),
            nn.Conv2d(dim, 2 * dim, 3, 2, 1), nn.LeakyReLU(0.01),
            nn.Conv2d(2 * dim, 4 * dim, 3, 2, 1), nn.LeakyReLU(0.01),
        )  # fmt: skip
        self.linear = nn.Linear(4 * 4 * 4 * dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.main(x).flatten(1)).view(-1)


# --------------------------------------------------------------------------------------------------
# CelebA pair, 64x64x3, tanh output in [-1, 1].
# --------------------------------------------------------------------------------------------------
def _up(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.ConvTranspose2d(c_in, c_out, 5, 2, 2, output_padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True)
    )


class CelebaGenerator(_Generator):
    """CelebA generator of the paper: 64×64×3 images in [-1, 1] (tanh)."""

    def __init__(self, latent_dim: int = 128, dim: int = 64, channels: int = 3) -> None:
        super().__init__()
        self.latent_shape, self.output_shape, self.output_range = (latent_dim,), (channels, 64, 64), (-1.0, 1.0)
        self.dim = dim
        self.preprocess = nn.Sequential(
            nn.Linear(latent_dim, 4 * 4 * 8 * dim), nn.BatchNorm1d(4 * 4 * 8 * dim), nn.ReLU(True)
        )
        self.block1, self.block2, self.block3 = _up(8 * dim, 4 * dim), _up(4 * dim, 2 * dim), _up(2 * dim, dim)
        self.deconv_out = nn.ConvTranspose2d(dim, channels, 5, 2, 2, output_padding=1)
        self.tanh = nn.Tanh()

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        x = self.preprocess(z).view(-1, 8 * self.dim, 4, 4)
        return self.tanh(self.deconv_out(self.block3(self.block2(self.block1(x)))))


class CelebaDiscriminator(nn.Module):
    """CelebA critic of the paper (a final 4×4 convolution gives the score)."""

    def __init__(self, dim: int = 64, channels: int = 3) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for c_in, c_out in ((channels, dim), (dim, 2 * dim), (2 * dim, 4 * dim), (4 * dim, 8 * dim)):
            layers += [nn.Conv2d(c_in, c_out, 5, 2, 2), nn.LeakyReLU(0.01)]
        layers.append(nn.Conv2d(8 * dim, 1, 4, 1))
        self.main = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.main(x).view(-1)


# --------------------------------------------------------------------------------------------------
# Small pairs (not in the paper): embedded 32x32 digits, and point clouds.
# --------------------------------------------------------------------------------------------------
class DigitsGenerator(_Generator):
    """Small DCGAN-style generator for the embedded 32×32 digits: images in [-1, 1] (tanh)."""

    def __init__(self, latent_dim: int = 32, dim: int = 16, channels: int = 1) -> None:
        super().__init__()
        self.latent_shape, self.output_shape, self.output_range = (latent_dim,), (channels, 32, 32), (-1.0, 1.0)
        self.dim = dim
        self.preprocess = nn.Sequential(
            nn.Linear(latent_dim, 4 * dim * 4 * 4), nn.BatchNorm1d(4 * dim * 4 * 4), nn.ReLU(True)
        )
        self.main = nn.Sequential(
            nn.ConvTranspose2d(4 * dim, 2 * dim, 4, 2, 1), nn.BatchNorm2d(2 * dim), nn.ReLU(True),
            nn.ConvTranspose2d(2 * dim, dim, 4, 2, 1), nn.BatchNorm2d(dim), nn.ReLU(True),
            nn.ConvTranspose2d(dim, channels, 4, 2, 1), nn.Tanh(),
        )  # fmt: skip

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.main(self.preprocess(z).view(-1, 4 * self.dim, 4, 4))


class DigitsDiscriminator(nn.Module):
    """Small critic for the embedded 32×32 digits (no normalisation layers)."""

    def __init__(self, dim: int = 16, channels: int = 1) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(channels, dim, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(dim, 2 * dim, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(2 * dim, 4 * dim, 4, 2, 1), nn.LeakyReLU(0.2),
        )  # fmt: skip
        self.linear = nn.Linear(4 * dim * 4 * 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.main(x).flatten(1)).view(-1)


def _mlp(sizes: list[int], act: Callable[[], nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(act())
    return nn.Sequential(*layers)


class MLPGenerator(_Generator):
    """MLP generator for point clouds (the paper's torus experiment): unbounded float points."""

    def __init__(self, latent_dim: int = 8, out_dim: int = 3, hidden: int = 128, layers: int = 3) -> None:
        super().__init__()
        self.latent_shape, self.output_shape, self.output_range = (latent_dim,), (out_dim,), None
        self.net = _mlp([latent_dim] + [hidden] * layers + [out_dim], lambda: nn.ReLU(True))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)


class MLPDiscriminator(nn.Module):
    """MLP critic for point clouds."""

    def __init__(self, out_dim: int = 3, hidden: int = 128, layers: int = 3) -> None:
        super().__init__()
        self.net = _mlp([out_dim] + [hidden] * layers + [1], lambda: nn.LeakyReLU(0.2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).view(-1)


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Architecture:
    """A registered generator/critic pair: its classes, default kwargs and which kwargs each side takes."""

    name: str
    generator: type[_Generator]
    critic: type[nn.Module]
    defaults: dict[str, Any] = field(default_factory=dict)
    critic_keys: tuple[str, ...] = ("dim", "channels")
    description: str = ""


ARCHITECTURES: dict[str, Architecture] = {
    a.name: a
    for a in (
        Architecture("mnist_wgan", ConvGenerator, ConvDiscriminator, {"latent_dim": 100, "dim": 16, "channels": 1},
                     description="paper MNIST WGAN pair, 32x32, output [0, 1]"),
        Architecture("mnist28", MNISTGenerator, MNISTDiscriminator, {"latent_dim": 128, "dim": 64, "channels": 1},
                     description="paper MNIST WGAN-GP / FashionMNIST pair, 28x28, output [0, 1]"),
        Architecture("cifar10", CIFARGenerator, CIFARDiscriminator, {"latent_dim": 128, "dim": 64, "channels": 3},
                     description="paper CIFAR-10 pair, 32x32x3, output [-1, 1]"),
        Architecture("celeba", CelebaGenerator, CelebaDiscriminator, {"latent_dim": 128, "dim": 64, "channels": 3},
                     description="paper CelebA pair, 64x64x3, output [-1, 1]"),
        Architecture("digits", DigitsGenerator, DigitsDiscriminator, {"latent_dim": 32, "dim": 16, "channels": 1},
                     description="small pair for the embedded 32x32 digits, output [-1, 1]"),
        Architecture("mlp", MLPGenerator, MLPDiscriminator,
                     {"latent_dim": 8, "out_dim": 3, "hidden": 128, "layers": 3},
                     critic_keys=("out_dim", "hidden", "layers"), description="MLP pair for point clouds, unbounded"),
    )  # fmt: skip
}


def get_architecture(name: str) -> Architecture:
    """The registered architecture `name`; ValueError listing the known names otherwise."""
    if name not in ARCHITECTURES:
        raise ValueError(f"arch={name!r} is not a known architecture; choose one of {sorted(ARCHITECTURES)}")
    return ARCHITECTURES[name]


def resolve_arch_kwargs(name: str, kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The architecture's defaults updated with `kwargs` (ValueError on unknown keys or non-positive sizes)."""
    arch = get_architecture(name)
    kwargs = dict(kwargs or {})
    unknown = set(kwargs) - set(arch.defaults)
    if unknown:
        raise ValueError(
            f"arch_kwargs {sorted(unknown)} not accepted by arch={name!r}; valid: {sorted(arch.defaults)}"
        )
    full = {**arch.defaults, **kwargs}
    for k, v in full.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"arch_kwargs[{k!r}] must be a positive int for arch={name!r}, got {v!r}")
    return full


def build(name: str, **kwargs: Any) -> tuple[_Generator, nn.Module]:
    """A fresh (generator, critic) pair of architecture `name` with `kwargs` overriding its defaults."""
    arch = get_architecture(name)
    full = resolve_arch_kwargs(name, kwargs)
    gen = arch.generator(**full)
    critic = arch.critic(**{k: v for k, v in full.items() if k in arch.critic_keys})
    return gen, critic


def build_generator(name: str, **kwargs: Any) -> _Generator:
    """Only the generator of architecture `name` (what sampling from a checkpoint needs)."""
    return get_architecture(name).generator(**resolve_arch_kwargs(name, kwargs))
