"""GAN architectures of the paper, WGAN / WGAN-GP / vanilla GAN training, and generators from anywhere.

`train(...)` trains and resumes; `GanConfig` / `gan_config` / `PRESETS` are the trainer settings
(what a train spec's `gan:` names); `CheckpointGenerator`, `ModuleGenerator`, `CallableGenerator`, `SampleGenerator`
are the `generator` config group's options.
"""

from __future__ import annotations

from ganeval.gan.architectures import ARCHITECTURES, build, build_generator, get_architecture
from ganeval.gan.checkpoint import load_checkpoint
from ganeval.gan.config import PRESETS, GanConfig, gan_config
from ganeval.gan.generators import CallableGenerator, CheckpointGenerator, ModuleGenerator
from ganeval.gan.stored_samples import SampleGenerator
from ganeval.gan.training import train

__all__ = [
    "ARCHITECTURES",
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
    "train",
]
