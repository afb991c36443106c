"""Named protocols (configs/protocol/): each composes with what it fixes, and a command that departs from it is
refused at dry_run, naming the key, the protocol's value and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from apphelp import compose_config, run_inprocess
from ganeval.app.main import config_dir
from ganeval.app.protocols import check_protocol

PROTOCOLS = sorted(p.stem for p in (config_dir() / "protocol").glob("*.yaml"))


def test_the_named_protocols_exist() -> None:
    assert PROTOCOLS == ["cifar10_test_10k", "cifar10_train_50k", "ffhq256_50k", "imagenet256_adm"]


@pytest.mark.parametrize("name", PROTOCOLS)
def test_each_protocol_composes_with_its_fixed_values(name: str) -> None:
    cfg = compose_config(["experiment=benchmark", f"protocol={name}"])
    fixed = check_protocol(cfg)
    assert fixed and cfg.protocol.name == name
    for key, value in fixed.items():
        assert OmegaConf.select(cfg, key) == value, key
    assert cfg.features.resize == "legacy_tensorflow" and cfg.features._target_.endswith("InceptionExtractor")


@pytest.mark.parametrize("override,key", [("features.resize=clean", "features.resize"),
                                          ("features=pixels", "features._target_"),
                                          ("n_generated=1000", "n_generated"), ("seed=3", "seed"),
                                          ("data.train=false", "data.train"), ("features.dims=768", "features.dims")])
def test_a_departure_is_refused(override: str, key: str) -> None:
    cfg = compose_config(["experiment=benchmark", "protocol=cifar10_train_50k", override])
    with pytest.raises(ValueError, match=f"protocol=cifar10_train_50k fixes {key}="):
        check_protocol(cfg)


def test_refused_at_dry_run_and_allowed_when_kept(tmp_path: Path) -> None:
    base = ["experiment=benchmark", "protocol=cifar10_test_10k", "generator=samples",
            f"generator.path={tmp_path / 'fake.npy'}", f"results_dir={tmp_path / 'out'}", "dry_run=true",
            f"cache_dir={tmp_path / 'cache'}", "sample_size=1000", "runs=2"]
    with pytest.raises(ValueError, match="fixes features.resize=legacy_tensorflow"):
        run_inprocess([*base, "features.resize=true"])
    assert run_inprocess(base)  # the checks of a dry run, without a departure


def test_no_protocol_changes_nothing() -> None:
    cfg = compose_config(["experiment=benchmark"])
    assert check_protocol(cfg) is None and "protocol" not in cfg
