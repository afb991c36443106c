"""Named protocols (`protocol=cifar10_train_50k`, ...): the config group `configs/protocol/` sets the extractor,
its preprocessing mode, the image counts, the real data and the seed that a published number was made with, and
`check_protocol` refuses (at dry_run as at a real run) a config whose values depart from what the protocol fixes.

A protocol file records what it fixes under `protocol.fixed` (dotted config keys -> values); command-line
overrides are applied after it, so a departure shows as a value that differs and is named with the fix. A protocol
reports FID, so `metrics.fid` must be kept; `add_full_set` puts the full-set FID (the number the protocol's papers
print, `ganeval.protocol.reported`) beside the intervals in summary.csv/json and the table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import pandas as pd

    from ganeval.app.plan import Plan

RESIZE_DEFAULTS = {True: "legacy_pytorch"}  # features.resize: true means pytorch-fid's mode


def normal_value(key: str, value: Any) -> Any:
    """A fixed value as compared: `features.resize: true` is pytorch-fid's mode, legacy_pytorch."""
    if key.endswith("resize") and value is True:
        return RESIZE_DEFAULTS[True]
    return value


def protocol_table() -> dict[str, dict[str, Any]]:
    """name -> {name, reports, fixed, images (channels and size of every image)} of every protocol file (`ganeval/configs/protocol/NAME.yaml`, whose
    `protocol` node the Hydra app composes): the one table both `protocol=NAME` and `ganeval-score --protocol`
    read."""
    from omegaconf import OmegaConf

    from ganeval.app.paths import config_dir

    table = {}
    for path in sorted((config_dir() / "protocol").glob("*.yaml")):
        node = OmegaConf.to_container(OmegaConf.load(path).protocol, resolve=True)
        assert isinstance(node, dict) and node["name"] == path.stem, path
        table[path.stem] = {"name": path.stem, "reports": str(node["reports"]), "fixed": dict(node["fixed"]),
                            "images": dict(node.get("images") or {})}
    return table


def check_protocol(cfg: Any) -> dict[str, Any] | None:
    """The protocol's fixed values when the config names one and keeps them all; ValueError naming the first
    departure (key, the protocol's value, the given value) and how to fix it; None without a protocol."""
    from omegaconf import DictConfig, OmegaConf

    node = cfg.get("protocol") if isinstance(cfg, DictConfig) else None
    if node is None:
        return None
    name = str(node.get("name"))
    fixed = cast("dict[str, Any]", OmegaConf.to_container(node.get("fixed") or {}, resolve=True))
    assert isinstance(fixed, dict)
    for key, want in fixed.items():
        got = OmegaConf.select(cfg, str(key), default=None)
        if normal_value(str(key), got) != normal_value(str(key), want):
            raise ValueError(f"protocol={name} fixes {key}={want} ({node.get('reports')}), but this command gives "
                             f"{key}={got}: drop that override to report the protocol's number, or drop protocol={name} "
                             "to run your own (its numbers are then not comparable with the protocol's)")
    metrics = cfg.get("metrics")
    if metrics is None or metrics.get("fid") is None:
        raise ValueError(f"protocol={name} reports FID ({node.get('reports')}), but this command drops metrics.fid: "
                         f"keep it (drop ~metrics.fid / metrics.fid=null), or drop protocol={name}")
    return fixed


def add_full_set(plan: "Plan", blocks: list[Any], summary: "pd.DataFrame",
                 seeds: "pd.DataFrame | None") -> "tuple[pd.DataFrame, pd.DataFrame | None]":
    """Under a named protocol: (summary, per-seed summary) with the `fid_full` column (the FID of each whole
    generated pool against the whole real pool, `ganeval.protocol.reported`), recorded in the run record too;
    without a protocol both come back unchanged."""
    node = plan.params.get("protocol") if plan.params is not None else None
    if node is None:
        return summary, seeds
    from ganeval.protocol.reported import FULL_SET_MEANS, attach_full_set, full_set_values
    import json

    from ganeval.results.summary import FULL_SET_COLUMN

    with plan.stage("full sets", "(FID of the whole pools, as the protocol's papers report it)"):
        values = full_set_values(blocks, plan.device)
    plan.record.full_set = {"protocol": str(node.get("name")), "reports": str(node.get("reports")),
                           "column": FULL_SET_COLUMN, "means": FULL_SET_MEANS,
                           "values": json.loads(values.to_json(orient="records"))}
    return attach_full_set(summary, values), (attach_full_set(seeds, values) if seeds is not None else None)


__all__ = ["add_full_set", "check_protocol", "normal_value", "protocol_table"]
