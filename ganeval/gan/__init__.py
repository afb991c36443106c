"""GAN architectures of the paper, WGAN / WGAN-GP / vanilla GAN training, and generators from anywhere.

`train(...)` trains and resumes; `GanConfig` / `gan_config` are the trainer settings (the `gan`
config group); `CheckpointGenerator`, `ModuleGenerator`, `CallableGenerator`, `SampleGenerator`
are the `generator` config group's options.
"""

from __future__ import annotations

from ganeval.gan.architectures import ARCHITECTURES, build, build_generator, get_architecture
from ganeval.gan.checkpoint import load_checkpoint
from ganeval.gan.config import PAPER_EPOCHS, PRESETS, GanConfig, gan_config, paper_setup
from ganeval.gan.generators import (
    CallableGenerator,
    CheckpointGenerator,
    ModuleGenerator,
    SampleGenerator,
)
from ganeval.gan.training import train

__all__ = [
    "ARCHITECTURES",
    "PAPER_EPOCHS",
    "PRESETS",
    "CallableGenerator",
    "CheckpointGenerator",
    "GanConfig",
    "ModuleGenerator",
    "SampleGenerator",
    "build",
    "build_generator",
    "gan_config",
    "get_architecture",
    "load_checkpoint",
    "paper_setup",
    "train",
]
