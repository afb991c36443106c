"""The `ganeval` command (a Hydra app; `python -m ganeval` is the same). No arguments: experiment=quickstart.

    ganeval experiment=blur_sweep runs=20
    ganeval experiment=benchmark data=array data.path=real.npy generator=samples generator.path=fake.npy features=identity
    ganeval -m hydra/launcher=joblib seed=0,1      # a sweep; merge with ganeval-collate multirun/DATE/TIME
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger("ganeval")


def config_dir() -> Path:
    """The Hydra config directory shipped inside the package (`ganeval/configs/`)."""
    return Path(__file__).resolve().parent / "configs"


def make_context(cfg: Any) -> Any:
    """Resolve the run's name, results_dir, device and config hash (fails early on bad values)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    from ganeval.experiments.common import Context, config_hash
    from ganeval.protocol import resolve_device_name

    hc = HydraConfig.get()
    name = hc.runtime.choices.get("experiment") or "custom"
    if cfg.results_dir:
        results_dir = Path(str(cfg.results_dir))
    elif hc.mode == RunMode.MULTIRUN:
        results_dir = Path(hc.runtime.output_dir)  # each sweep job in its own job directory
    else:
        results_dir = Path("results") / name
    device = resolve_device_name(cfg.device)
    if int(cfg.workers) > 1 and device != "cpu":
        raise ValueError(f"workers={cfg.workers} needs device=cpu; set workers=1 on a GPU")
    for key in ("runs", "sample_size", "workers", "batch_size"):
        if int(cfg[key]) < 1:
            raise ValueError(f"{key} must be at least 1, got {cfg[key]}")
    config = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(config, dict)
    config["device"] = device
    ctx = Context(cfg=cfg, name=name, results_dir=results_dir, device=device, config=config,
                  config_hash=config_hash(config),
                  choices={str(k): str(v) for k, v in hc.runtime.choices.items() if v is not None})
    ctx.extra["overrides"] = list(hc.overrides.task)
    ctx.extra["command"] = "ganeval " + " ".join(hc.overrides.task)
    return ctx


def run_app(cfg: Any) -> Any:
    """Instantiate the config's `run_experiment` node and call it with the run's context; return its summary."""
    from hydra.utils import instantiate

    if cfg.get("run_experiment") is None:
        options = sorted(p.stem for p in (config_dir() / "experiment").glob("*.yaml"))
        raise ValueError("the config has no run_experiment node (what runs); pick an experiment with "
                         f"experiment={'|'.join(options)}, or set run_experiment={{_target_: "
                         "ganeval.experiments.gan_table.run, _partial_: true}")
    run = instantiate(cfg.run_experiment)
    ctx = make_context(cfg)
    log.info("experiment %s (%s) -> %s on %s, config %s", ctx.name, cfg.run_experiment._target_, ctx.results_dir,
             ctx.device, ctx.config_hash)
    return run(ctx)


def main() -> None:
    """Console entry point: compose ganeval/configs/config.yaml with the command line and run the experiment."""
    import hydra
    from hydra.errors import InstantiationException

    @hydra.main(config_path=str(config_dir()), config_name="config", version_base="1.3")
    def _app(cfg: Any) -> None:
        try:
            run_app(cfg)
        except (ValueError, FileNotFoundError, InstantiationException) as e:
            # A config that cannot work: say what to change, without a traceback.
            log.error("%s", e)
            raise SystemExit(2) from e

    _app()


if __name__ == "__main__":
    sys.exit(main())
