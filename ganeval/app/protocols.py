"""Named protocols (`protocol=cifar10_train_50k`, ...): the config group `configs/protocol/` sets the extractor,
its preprocessing mode, the image counts, the real data and the seed that a published number was made with, and
`check_protocol` refuses (at dry_run as at a real run) a config whose values depart from what the protocol fixes.

A protocol file records what it fixes under `protocol.fixed` (dotted config keys -> values); command-line
overrides are applied after it, so a departure shows as a value that differs and is named with the fix."""

from __future__ import annotations

from typing import Any

RESIZE_DEFAULTS = {True: "legacy_pytorch"}  # features.resize: true means pytorch-fid's mode


def _normal(key: str, value: Any) -> Any:
    if key.endswith("resize") and value is True:
        return RESIZE_DEFAULTS[True]
    return value


def check_protocol(cfg: Any) -> dict[str, Any] | None:
    """The protocol's fixed values when the config names one and keeps them all; ValueError naming the first
    departure (key, the protocol's value, the given value) and how to fix it; None without a protocol."""
    from omegaconf import DictConfig, OmegaConf

    node = cfg.get("protocol") if isinstance(cfg, DictConfig) else None
    if node is None:
        return None
    name = str(node.get("name"))
    fixed = OmegaConf.to_container(node.get("fixed") or {}, resolve=True)
    assert isinstance(fixed, dict)
    for key, want in fixed.items():
        got = OmegaConf.select(cfg, str(key), default=None)
        if _normal(str(key), got) != _normal(str(key), want):
            raise ValueError(f"protocol={name} fixes {key}={want} ({node.get('reports')}), but this command gives "
                             f"{key}={got}: drop that override to report the protocol's number, or drop protocol={name} "
                             "to run your own (its numbers are then not comparable with the protocol's)")
    return fixed


__all__ = ["check_protocol"]
