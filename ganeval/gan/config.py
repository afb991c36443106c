"""Trainer settings (loss, optimiser, critic steps) and their named presets: the one place they live.

`gan_config("wgan")` gives a preset (PRESETS); an experiment's train spec names one
(`train: {arch: digits, gan: wgan_quick, epochs: 40}`) and may override any GanConfig field next to
it (e.g. `lr_d: 1e-4`). What each experiment trains (architecture, epochs, batch size) is in its
config file, ganeval/configs/experiment/*.yaml.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

LOSSES = ("wasserstein", "nonsaturating")
OPTIMIZERS = ("rmsprop", "adam")


@dataclass(frozen=True)
class GanConfig:
    """How to train a generator/critic pair: loss, optimiser and its settings, critic steps, constraints.

    loss: "wasserstein" (critic maximises D(real) - D(fake)) or "nonsaturating" (vanilla GAN, the
    critic output is a logit). clip: weight clipping bound after each critic step (WGAN), None for
    none. gp_weight: gradient penalty λ (WGAN-GP), 0 for none. n_critic: critic steps per
    generator step. betas are used by Adam only.
    """

    name: str = "wgan_gp"
    loss: str = "wasserstein"
    optimizer: str = "adam"
    lr_g: float = 1e-4
    lr_d: float = 1e-4
    betas: tuple[float, float] = (0.9, 0.999)
    n_critic: int = 5
    clip: float | None = None
    gp_weight: float = 10.0

    def __post_init__(self) -> None:
        betas = tuple(float(b) for b in self.betas)
        object.__setattr__(self, "betas", betas)
        for key in ("lr_g", "lr_d", "gp_weight"):
            object.__setattr__(self, key, float(getattr(self, key)))
        if self.clip is not None:
            object.__setattr__(self, "clip", float(self.clip))
        if self.loss not in LOSSES:
            raise ValueError(f"gan.loss={self.loss!r} is not known; choose one of {LOSSES}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"gan.optimizer={self.optimizer!r} is not known; choose one of {OPTIMIZERS}")
        if not (self.lr_g > 0 and self.lr_d > 0):
            raise ValueError(f"gan.lr_g and gan.lr_d must be > 0, got {self.lr_g}, {self.lr_d}")
        if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"gan.betas must be two numbers in [0, 1), got {self.betas!r}")
        if not isinstance(self.n_critic, int) or self.n_critic < 1:
            raise ValueError(f"gan.n_critic must be an int >= 1, got {self.n_critic!r}")
        if self.clip is not None and self.clip <= 0:
            raise ValueError(f"gan.clip must be > 0 or null, got {self.clip}")
        if self.gp_weight < 0:
            raise ValueError(f"gan.gp_weight must be >= 0, got {self.gp_weight}")
        if self.loss == "nonsaturating" and (self.clip is not None or self.gp_weight > 0):
            raise ValueError("gan.loss='nonsaturating' takes no clip or gp_weight; set clip=null, gp_weight=0")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-able) of every field: what the training config hash covers."""
        d = dataclasses.asdict(self)
        d["betas"] = list(self.betas)
        return d


PRESETS: dict[str, GanConfig] = {
    # Paper, appendix C: RMSprop lr 5e-5, clipping 0.01, 5 critic steps (Arjovsky et al.).
    "wgan": GanConfig("wgan", "wasserstein", "rmsprop", 5e-5, 5e-5, (0.9, 0.999), 5, 0.01, 0.0),
    # Paper, appendix C: Adam lr 1e-4, betas (0.9, 0.999), λ = 10, 5 critic steps.
    "wgan_gp": GanConfig("wgan_gp", "wasserstein", "adam", 1e-4, 1e-4, (0.9, 0.999), 5, None, 10.0),
    # Vanilla non-saturating GAN for the torus (DCGAN's Adam settings).
    "gan": GanConfig("gan", "nonsaturating", "adam", 2e-4, 2e-4, (0.5, 0.999), 1, None, 0.0),
    # Quickstart (not the paper): fast settings so the `digits` models (ganeval/configs/experiment/quickstart.yaml)
    # draw recognisable digits in < 2 min on 2 CPU cores. WGAN: the paper's RMSprop lr 5e-5 still draws
    # noise after 120 s there, so lr 1e-3, clipping 0.02, 2 critic steps; WGAN-GP: Adam lr 1e-3 with the
    # WGAN-GP authors' betas (0.5, 0.9), λ = 10, 2 critic steps.
    "wgan_quick": GanConfig("wgan_quick", "wasserstein", "rmsprop", 1e-3, 1e-3, (0.9, 0.999), 2, 0.02, 0.0),
    "wgan_gp_quick": GanConfig("wgan_gp_quick", "wasserstein", "adam", 1e-3, 1e-3, (0.5, 0.9), 2, None, 10.0),
}


def gan_config(gan: str | Mapping[str, Any] | GanConfig, **overrides: Any) -> GanConfig:
    """Resolve a preset name, a mapping (optionally naming a preset in `name`) or a GanConfig, plus overrides.

    A mapping whose `name` is a preset starts from that preset, any other from GanConfig's defaults.
    """
    if isinstance(gan, GanConfig):
        base = gan
        fields: dict[str, Any] = {}
    elif isinstance(gan, str):
        if gan not in PRESETS:
            raise ValueError(f"gan={gan!r} is not a preset; choose one of {sorted(PRESETS)} or pass a dict")
        base, fields = PRESETS[gan], {}
    elif isinstance(gan, Mapping):
        fields = {str(k): v for k, v in gan.items()}
        base = PRESETS.get(str(fields.get("name", "")), GanConfig())
    else:
        raise ValueError(f"gan must be a preset name, a mapping or a GanConfig, got {type(gan).__name__}")
    fields.update(overrides)
    valid = {f.name for f in dataclasses.fields(GanConfig)}
    unknown = set(fields) - valid
    if unknown:
        raise ValueError(f"unknown gan settings {sorted(unknown)}; valid: {sorted(valid)}")
    if "betas" in fields:
        fields["betas"] = tuple(fields["betas"])
    return dataclasses.replace(base, **fields)
