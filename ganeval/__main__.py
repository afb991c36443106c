"""The `ganeval` command (a Hydra app; `python -m ganeval` is the same). No arguments: experiment=quickstart.

    ganeval experiment=blur_sweep runs=20
    ganeval experiment=benchmark data=array data.path=real.npy generator=samples generator.path=fake.npy features=identity
    ganeval -m hydra/launcher=joblib seed=0,1      # a sweep; merge with ganeval-collate multirun/DATE/TIME
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger("ganeval")


def config_dir() -> Path:
    """The `configs/` directory: $GANEVAL_CONFIG_DIR, else the one next to the package (source checkout)."""
    env = os.environ.get("GANEVAL_CONFIG_DIR")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent
    for cand in (here.parent / "configs", here / "configs"):
        if (cand / "config.yaml").exists():
            return cand
    raise FileNotFoundError(
        "ganeval cannot find its configs/ directory; set GANEVAL_CONFIG_DIR to the repository's configs/"
    )


def run_app(cfg: Any) -> Any:
    """Run the experiment `cfg.task` names; return its summary DataFrame."""
    from ganeval.experiments import get_task
    from ganeval.experiments.pipeline import make_context

    task = get_task(str(cfg.task))
    ctx = make_context(cfg)
    log.info("experiment %s (task %s) -> %s on %s, config %s", ctx.name, cfg.task, ctx.results_dir,
             ctx.device, ctx.config_hash)
    return task(ctx)


def main() -> None:
    """Console entry point: compose configs/config.yaml with the command line and run the experiment."""
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
