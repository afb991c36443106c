"""Every option of every config group composes, and every `_target_` node in it instantiates (or imports)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
from hydra.utils import instantiate
from omegaconf import DictConfig, ListConfig, OmegaConf

from apphelp import compose_config
from ganeval.app.main import config_dir
from ganeval.studies.gan_table import dataset_specs
from ganeval.metrics import Metrics

CONFIGS = config_dir()
OFFLINE_DATA = {"digits", "patches", "sphere", "swiss_roll", "torus"}
DOWNLOADED_DATA = {"mnist", "fashion_mnist", "cifar10", "cifar100", "celeba"}
GROUPS = ("data", "features", "metrics", "generator", "experiment", "protocol", "hydra/launcher")
# launcher option -> (the Hydra plugin it extends, what installs that, one of the option's own settings)
LAUNCHER_PLUGINS = {"local": ("hydra_plugins.hydra_joblib_launcher", "hydra-joblib-launcher", ("n_jobs", 2)),
                    "slurm_gpu": ("hydra_plugins.hydra_submitit_launcher", "ganeval[slurm]", ("gpus_per_node", 1)),
                    "ray_gpu": ("hydra_plugins.hydra_ray_launcher", "ganeval[ray]", ("ray.remote.num_gpus", 1))}


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


def test_every_group_has_its_options() -> None:
    assert set(_options("experiment")) == {"quickstart", "paper_table", "blur_sweep", "torus", "heat_traces", "benchmark",
                                         "stability", "slq_accuracy", "nn_internals", "wordvec_dims",
                                         "language_manifolds"}
    assert {"default", "imd", "approx"} <= set(_options("metrics"))
    assert set(_options("hydra/launcher")) == set(LAUNCHER_PLUGINS)
    assert {"pixels", "identity", "inception"} <= set(_options("features"))
    assert {"checkpoint", "module", "callable", "samples"} <= set(_options("generator"))
    assert not (CONFIGS / "gan").exists()  # trainer presets live in ganeval/gan/config.py only
    assert OFFLINE_DATA | DOWNLOADED_DATA <= set(_options("data"))
    files = {str(p.relative_to(CONFIGS).with_suffix("")) for p in CONFIGS.rglob("*.yaml")}
    assert files == {"config"} | {f"{g}/{o}" for g in GROUPS for o in _options(g)}  # no group left untested


def _target_nodes(node: Any, where: str) -> Iterator[tuple[str, DictConfig]]:
    """(path, node) of every `_target_` node inside `node` whose target is given (not ???)."""
    if isinstance(node, DictConfig):
        if "_target_" in node and not OmegaConf.is_missing(node, "_target_"):
            yield where, node
        items: Any = ((k, node._get_node(k)) for k in node.keys())
    elif isinstance(node, ListConfig):
        items = enumerate(node)
    else:
        return
    for key, child in items:
        if isinstance(child, (DictConfig, ListConfig)) and not child._is_none():  # typed null: no children
            yield from _target_nodes(child, f"{where}.{key}")


def _check_targets(node: Any, where: str) -> int:
    """Instantiate every complete `_target_` node in `node`; only import those with ??? or a download."""
    n = 0
    for path, target_node in _target_nodes(node, where):
        module, name = str(target_node._target_).rsplit(".", 1)
        target = getattr(importlib.import_module(module), name)
        assert callable(target), path
        missing = OmegaConf.missing_keys(target_node)
        if not missing and module + "." + name not in {f"ganeval.data.{d}" for d in DOWNLOADED_DATA}:
            assert instantiate(target_node) is not None, path
        n += 1
    return n


@pytest.mark.parametrize("group,option", [(g, o) for g in GROUPS if g != "hydra/launcher" for o in _options(g)])
def test_every_option_composes_and_its_targets_instantiate(group: str, option: str) -> None:
    cfg = compose_config([f"{group}={option}"])
    glob = group in ("experiment", "protocol")  # `# @package _global_` files
    node = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]) if glob else cfg[group]
    n = _check_targets(node, group)
    assert n >= (0 if group == "metrics" else 1)  # every group but metrics is `_target_`-driven


@pytest.mark.parametrize("option", sorted(LAUNCHER_PLUGINS))
def test_every_launcher_composes_and_instantiates(option: str) -> None:
    plugin, install, (key, value) = LAUNCHER_PLUGINS[option]
    if importlib.util.find_spec(plugin) is None:
        pytest.skip(f"hydra/launcher={option} needs the plugin {plugin}, not installed here (pip install {install})")
    launcher = compose_config([f"hydra/launcher={option}"]).hydra.launcher
    assert not OmegaConf.missing_keys(launcher) and OmegaConf.select(launcher, key) == value
    assert type(instantiate(launcher)).__module__.startswith(plugin)


def test_a_config_without_run_experiment_exits_2_naming_the_key(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    p = subprocess.run([sys.executable, "-m", "ganeval", "~experiment"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 2, p.stderr
    assert "no run_experiment node" in p.stderr + p.stdout and "experiment=benchmark|blur_sweep|" in p.stderr + p.stdout


def test_root_config_defaults() -> None:
    cfg = compose_config([])
    assert cfg.hydra.runtime.choices.experiment == "quickstart"
    assert cfg.run_experiment._target_ == "ganeval.studies.gan_table.run"
    for key, value in {"runs": 30, "sample_size": 1000, "confidence": 0.99, "seed": 0, "device": None,
                       "results_dir": None, "cache_dir": ".cache/ganeval"}.items():
        assert cfg[key] == value, key
    plain = compose_config(["experiment=benchmark"])
    assert plain.runs == 100 and plain.sample_size == 10000 and plain.n_generated is None
    assert OmegaConf.to_container(plain.metrics) == {
        "imd": {"k": 5, "m": 10, "nv": 100, "normalization": "empty", "knn": "exact", "knn_precision": "float32",
                "rademacher": False, "variance_reduction": "chebyshev", "nndescent": None},
        "fid": {}, "kid": {"subsets": 100, "subset_size": 1000, "degree": 3, "coef0": 1.0}}


def test_file_data_instantiate(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.zeros((5, 3), np.float32))
    assert instantiate(compose_config(["data=array", f"data.path={tmp_path / 'a.npy'}"]).data).shape == (5, 3)
    cfg = compose_config(["data=folder", f"data.path={tmp_path}"])
    assert cfg.data._target_ == "ganeval.data.folder"


def test_features_instantiate(tmp_path: Path) -> None:
    from ganeval.features.inception import save_random_weights

    for name in ("pixels", "identity"):
        ex = instantiate(compose_config([f"features={name}"]).features)
        assert ex.identity()["name"] == name
    weights = save_random_weights(tmp_path / "w.pth", seed=0)
    ex = instantiate(compose_config(["features=inception", f"features.weights={weights}", "features.download=false"]).features)
    assert ex.identity()["name"] == "inception"


def test_generators_instantiate(tmp_path: Path) -> None:
    np.save(tmp_path / "s.npy", np.random.default_rng(0).random((20, 3)).astype(np.float32))
    g = instantiate(compose_config(["generator=samples", f"generator.path={tmp_path / 's.npy'}"]).generator)
    g.validate()
    assert g.sample(20, seed=0).shape == (20, 3)
    g = instantiate(compose_config(["generator=callable", "generator.function=numpy.random:default_rng"]).generator)
    assert type(g).__name__ == "CallableGenerator"
    cfg = compose_config(["generator=module", "generator.module._target_=torch.nn.Linear", "+generator.module.in_features=4",
                          "+generator.module.out_features=3", "generator.latent_shape=[4]", "generator.output_range=null"])
    g = instantiate(cfg.generator)
    g.validate()
    assert g.sample(6, seed=1).shape == (6, 3)
    g = instantiate(compose_config(["generator=checkpoint", f"generator.path={tmp_path / 'none.pt'}"]).generator)
    with pytest.raises(ValueError):
        g.validate()


def _train_specs(node: object, where: str = "") -> dict[str, dict]:
    """where -> every `train` spec inside a plain config container."""
    out: dict[str, dict] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "train" and isinstance(value, dict):
                out[where] = value
            else:
                out.update(_train_specs(value, f"{where}.{key}".lstrip(".")))
    return out


@pytest.mark.parametrize("name", _options("experiment"))
def test_train_specs_name_a_trainer_preset(name: str) -> None:
    from ganeval.app.generators import check_train_spec
    from ganeval.gan import PRESETS

    specs = _train_specs(OmegaConf.to_container(compose_config([f"experiment={name}"]), resolve=False))
    for where, spec in specs.items():
        assert spec["gan"] in PRESETS, where
        check_train_spec(np.zeros((1000, 2), np.float32), spec, where)
    assert bool(specs) == (name in {"quickstart", "paper_table", "torus"})  # the experiments that train


def test_a_wrong_preset_name_lists_the_presets() -> None:
    from ganeval.app.generators import check_train_spec

    spec = compose_config(["generators.wgan.train.gan=wgan_fast"]).generators.wgan.train
    with pytest.raises(ValueError, match=r"digits/wgan.train: gan='wgan_fast' is not a preset; choose one of \['gan', "):
        check_train_spec(np.zeros((1000, 2), np.float32), OmegaConf.to_container(spec), "digits/wgan")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", _options("metrics"))
def test_metric_options_are_valid(name: str) -> None:
    cfg = compose_config([f"metrics={name}"])
    opts = Metrics(OmegaConf.to_container(cfg.metrics))  # type: ignore[arg-type]
    assert "imd" in opts


@pytest.mark.parametrize("name", _options("experiment"))
def test_experiments_compose_and_validate(name: str) -> None:
    cfg = compose_config([f"experiment={name}"])
    run = instantiate(cfg.run_experiment)
    assert callable(run) and run.func.__name__ == "run" and run.func.__module__.startswith("ganeval.studies.")
    opts = Metrics(OmegaConf.to_container(cfg.metrics))  # type: ignore[arg-type]
    if "kid" in opts and name != "heat_traces":
        assert opts["kid"]["subset_size"] <= cfg.sample_size  # the defaults must be runnable
    if run.func.__module__.endswith(".gan_table") and name != "benchmark":
        specs = dataset_specs(cfg, "digits")
        assert all(len(s["generators"]) == 2 for s in specs.values())
    if name == "paper_table":
        assert set(cfg.datasets) == {"mnist", "fashion_mnist", "cifar10", "celeba"}
        assert cfg.sample_size == 10000 and cfg.runs == 100 and cfg.confidence == 0.99
        assert cfg.features._target_.endswith("InceptionExtractor")


def test_benchmark_without_generator_says_what_to_do() -> None:
    with pytest.raises(ValueError, match="generator=checkpoint"):
        dataset_specs(compose_config(["experiment=benchmark"]), "digits")
