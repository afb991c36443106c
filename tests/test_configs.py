"""Every config file composes; every option that can be instantiated offline is instantiated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from apphelp import compose_config
from ganeval.__main__ import config_dir
from ganeval.experiments.gan_table import dataset_specs
from ganeval.protocol import normalize_metrics

CONFIGS = config_dir()
OFFLINE_DATA = {"digits", "patches", "sphere", "swiss_roll", "torus"}
DOWNLOADED_DATA = {"mnist", "fashion_mnist", "cifar10", "cifar100", "celeba"}


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


def test_every_group_has_its_options() -> None:
    assert set(_options("experiment")) == {"quickstart", "paper_table", "blur_sweep", "torus", "heat_traces", "benchmark"}
    assert {"default", "imd", "approx"} <= set(_options("metrics"))
    assert {"local", "submitit_slurm", "ray"} <= set(_options("hydra/launcher"))
    assert {"pixels", "identity", "inception"} <= set(_options("features"))
    assert {"checkpoint", "module", "callable", "samples"} <= set(_options("generator"))
    assert not (CONFIGS / "gan").exists()  # trainer presets live in ganeval/gan/config.py only
    assert OFFLINE_DATA | DOWNLOADED_DATA <= set(_options("data"))


def test_root_config_defaults() -> None:
    cfg = compose_config([])
    assert cfg.hydra.runtime.choices.experiment == "quickstart"
    assert cfg.run_experiment._target_ == "ganeval.experiments.gan_table.run"
    for key, value in {"runs": 100, "sample_size": 1000, "confidence": 0.99, "seed": 0, "device": None,
                       "results_dir": None, "cache_dir": ".cache/ganeval"}.items():
        assert cfg[key] == value, key
    plain = compose_config(["experiment=benchmark"])
    assert plain.runs == 100 and plain.sample_size == 10000 and plain.n_generated is None
    assert OmegaConf.to_container(plain.metrics) == {
        "imd": {"k": 5, "m": 10, "nv": 100, "normalization": "empty", "knn": "exact", "rademacher": False},
        "fid": {}, "kid": {"subsets": 100, "subset_size": 1000}}


@pytest.mark.parametrize("name", sorted(OFFLINE_DATA))
def test_offline_data_instantiate(name: str) -> None:
    cfg = compose_config([f"data={name}"] + ([f"data.n=50"] if name not in ("digits",) else []))
    arr = instantiate(cfg.data)
    assert isinstance(arr, np.ndarray) and len(arr) > 0


@pytest.mark.parametrize("name", sorted(DOWNLOADED_DATA))
def test_downloaded_data_compose_and_target_exists(name: str) -> None:
    cfg = compose_config([f"data={name}"])
    target = cfg.data._target_
    mod, fn = target.rsplit(".", 1)
    assert callable(getattr(__import__(mod, fromlist=[fn]), fn))


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
    from ganeval.experiments.common import check_train_spec
    from ganeval.gan import PRESETS

    specs = _train_specs(OmegaConf.to_container(compose_config([f"experiment={name}"]), resolve=False))
    for where, spec in specs.items():
        assert spec["gan"] in PRESETS, where
        check_train_spec(np.zeros((1000, 2), np.float32), spec, where)
    assert bool(specs) == (name in {"quickstart", "paper_table", "torus"})  # the experiments that train


def test_a_wrong_preset_name_lists_the_presets() -> None:
    from ganeval.experiments.common import check_train_spec

    spec = compose_config(["generators.wgan.train.gan=wgan_fast"]).generators.wgan.train
    with pytest.raises(ValueError, match=r"digits/wgan.train: gan='wgan_fast' is not a preset; choose one of \['gan', "):
        check_train_spec(np.zeros((1000, 2), np.float32), OmegaConf.to_container(spec), "digits/wgan")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", _options("metrics"))
def test_metric_options_are_valid(name: str) -> None:
    cfg = compose_config([f"metrics={name}"])
    opts = normalize_metrics(OmegaConf.to_container(cfg.metrics))  # type: ignore[arg-type]
    assert "imd" in opts


def test_launchers_compose_and_local_instantiates() -> None:
    cfg = compose_config(["hydra/launcher=local"])
    assert cfg.hydra.launcher.n_jobs == 2
    launcher = instantiate(cfg.hydra.launcher)
    assert type(launcher).__name__ == "JoblibLauncher"
    assert compose_config(["hydra/launcher=submitit_slurm"]).hydra.launcher.gpus_per_node == 1
    assert compose_config(["hydra/launcher=ray"]).hydra.launcher.ray.remote.num_gpus == 1  # composed, not instantiated


@pytest.mark.parametrize("name", _options("experiment"))
def test_experiments_compose_and_validate(name: str) -> None:
    cfg = compose_config([f"experiment={name}"])
    run = instantiate(cfg.run_experiment)
    assert callable(run) and run.func.__name__ == "run" and run.func.__module__.startswith("ganeval.experiments.")
    opts = normalize_metrics(OmegaConf.to_container(cfg.metrics))  # type: ignore[arg-type]
    if "kid" in opts and name != "heat_traces":
        assert opts["kid"]["subset_size"] <= cfg.sample_size  # the defaults must be runnable
    if run.func.__module__.endswith(".gan_table") and name != "benchmark":
        specs = dataset_specs(cfg, "digits")
        assert all(len(s["generators"]) == 2 for s in specs.values())
    if name in ("quickstart", "blur_sweep", "torus"):
        assert instantiate(cfg.data) is not None  # offline default data
    if name == "paper_table":
        assert set(cfg.datasets) == {"mnist", "fashion_mnist", "cifar10", "celeba"}
        assert cfg.sample_size == 10000 and cfg.runs == 100 and cfg.confidence == 0.99
        assert cfg.features._target_.endswith("InceptionExtractor")


def test_benchmark_without_generator_says_what_to_do() -> None:
    with pytest.raises(ValueError, match="generator=checkpoint"):
        dataset_specs(compose_config(["experiment=benchmark"]), "digits")
