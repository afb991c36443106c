"""One critic step and one generator step of WGAN, WGAN-GP and the vanilla GAN, and their optimisers.

`ganeval.gan.training.train` alternates them (`n_critic` critic steps per generator step); every random draw
comes from the run's `noise` generator, so a resumed run draws what the uninterrupted one would have.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import nn

from ganeval.gan.config import GanConfig

if TYPE_CHECKING:
    from ganeval.gan.architectures import _Generator


def critic_step(
    gen: _Generator, critic: nn.Module, opt: torch.optim.Optimizer, cfg: GanConfig, real: torch.Tensor,
    noise: torch.Generator,
) -> torch.Tensor:  # fmt: skip
    """One critic update; returns the detached [loss, D(real)-D(fake), gradient penalty]."""
    z = torch.randn((len(real), *gen.latent_shape), generator=noise, device=real.device)
    with torch.no_grad():
        fake = gen(z)
    d_real, d_fake = critic(real), critic(fake)
    gap = d_real.mean() - d_fake.mean()
    if cfg.loss == "wasserstein":
        loss = -gap
    else:
        loss = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
    gp = torch.zeros((), device=real.device)
    if cfg.gp_weight > 0:
        shape = (len(real),) + (1,) * (real.dim() - 1)
        alpha = torch.rand(shape, generator=noise, device=real.device)
        mix = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        (grad,) = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
        gp = ((grad.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        loss = loss + cfg.gp_weight * gp
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if cfg.clip is not None:
        with torch.no_grad():
            for p in critic.parameters():
                p.clamp_(-cfg.clip, cfg.clip)
    return torch.stack([loss.detach(), gap.detach(), gp.detach()])


def generator_step(
    gen: _Generator, critic: nn.Module, opt: torch.optim.Optimizer, cfg: GanConfig, batch_size: int,
    noise: torch.Generator,
) -> torch.Tensor:  # fmt: skip
    """One generator update against the current critic; returns the detached generator loss."""
    device = next(gen.parameters()).device
    z = torch.randn((batch_size, *gen.latent_shape), generator=noise, device=device)
    critic.requires_grad_(False)
    try:
        score = critic(gen(z))
        loss = -score.mean() if cfg.loss == "wasserstein" else F.softplus(-score).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    finally:
        critic.requires_grad_(True)
    return loss.detach()


def make_optimizer(cfg: GanConfig, params: Any, lr: float) -> torch.optim.Optimizer:
    """The trainer's optimiser (RMSprop for WGAN, Adam with the config's betas otherwise) over `params`."""
    if cfg.optimizer == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr)
    return torch.optim.Adam(params, lr=lr, betas=cfg.betas)
