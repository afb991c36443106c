"""Run the `ganeval` Hydra app in-process (compose + run), for fast end-to-end tests."""

from __future__ import annotations

from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.hydra_config import HydraConfig
from omegaconf import open_dict

from ganeval.app.main import config_dir, run_app


def compose_config(overrides: list[str]) -> Any:
    """The composed config (with its hydra node) for `overrides`, as `ganeval` would see it."""
    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=True)


def app_config(overrides: list[str]) -> Any:
    """The config the `ganeval` command hands its app for `overrides` (Hydra's node set aside, as Hydra does)."""
    cfg = compose_config(overrides)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg


def run_inprocess(overrides: list[str]) -> Any:
    """Compose the config like the `ganeval` command and run it; return the experiment's summary. A real run must
    write nothing its plan does not list (`Plan.outputs`): checked here for every in-process run of the tests."""
    from ganeval.app.validate import build_plan

    try:
        plan = build_plan(app_config(overrides))
    except Exception as refused:  # a refused config: the run must refuse it too (the caller checks how)
        run_app(app_config(overrides))
        raise AssertionError(f"build_plan refused {overrides} ({type(refused).__name__}: {refused}), yet the run went "
                             "ahead, unchecked against a plan") from refused
    planned = None if plan.dry_run else (plan.results_dir, set(plan.outputs))
    out = run_app(app_config(overrides))
    if planned is not None:
        check_outputs(*planned)
    return out


def check_outputs(results_dir: Any, planned: set[str]) -> None:
    """The files a run wrote (its manifest) are among those its plan lists."""
    import json
    from pathlib import Path

    manifest = Path(results_dir) / ".ganeval-outputs.json"
    if manifest.is_file():
        written = set(json.loads(manifest.read_text())["files"])
        assert written <= planned, f"written but not in the plan's outputs: {sorted(written - planned)}"


def toy_points(n: int, seed: int) -> Any:
    """A callable generator for tests (the README's example shape): n float32 8-d points from `seed`."""
    import numpy as np

    return (np.random.default_rng(seed).normal(size=(n, 8)) + 0.3).astype(np.float32)


def no_work(monkeypatch: Any) -> None:
    """Make training, sampling and extraction fail the test if reached (a check that must come before them)."""
    from ganeval.app import generators, pipeline

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("expensive work started before the check")

    monkeypatch.setattr(pipeline, "features", boom)
    for name in ("generated_pool", "generated_features", "train_generator"):
        monkeypatch.setattr(generators, name, boom)
