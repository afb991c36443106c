"""The `ganeval` command (a Hydra app; `python -m ganeval` is the same). No arguments: experiment=quickstart.

    ganeval --help                                 # the experiments and top-level keys, one line each
    ganeval experiment=blur_sweep runs=20
    ganeval experiment=benchmark data=array data.path=real.npy generator=samples generator.path=fake.npy features=identity
    ganeval experiment=paper_table dry_run=true    # check a command without doing any work
    ganeval -m hydra/launcher=joblib seed=0,1      # a sweep; merge with ganeval-collate multirun/DATE/TIME
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from ganeval.app import resolvers

log = logging.getLogger("ganeval")
resolvers.register()  # the root config's ${ganeval.*} interpolations: before Hydra composes it


def config_dir() -> Path:
    """The Hydra config directory shipped inside the package (`ganeval/configs/`)."""
    return Path(__file__).resolve().parent.parent / "configs"


def run_app(cfg: Any) -> Any:
    """Instantiate the config's `run_experiment` node and call it with the run's context; return its summary
    (with dry_run=true: check the config without any work and return the list of checks, see `validate`)."""
    from hydra.utils import instantiate

    from ganeval.app.pipeline import make_context, write_report

    if cfg.get("run_experiment") is None:
        options = sorted(p.stem for p in (config_dir() / "experiment").glob("*.yaml"))
        raise ValueError("the config has no run_experiment node (what runs); pick an experiment with "
                         f"experiment={'|'.join(options)}, or set run_experiment={{_target_: "
                         "ganeval.studies.gan_table.run, _partial_: true}")
    run = instantiate(cfg.run_experiment)
    ctx = make_context(cfg)
    if ctx.dry_run:
        from ganeval.app.validate import validate

        return validate(ctx)  # run_experiment instantiated above: its module imports
    log.info("experiment %s (%s) -> %s on %s", ctx.name, cfg.run_experiment._target_, ctx.results_dir, ctx.device)
    summary = run(ctx)
    write_report(ctx)  # again: with the figures an experiment writes after its tables (blur.png, torus.png, ...)
    from ganeval.results.verdict import terminal_summary

    end = terminal_summary(ctx.results_dir)  # the run ends with its table and its result in words
    if end:
        print(end, flush=True)
    return summary


def user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the config or an input cannot work" (exit 2 with the message, no traceback)."""
    from hydra.errors import InstantiationException
    from omegaconf.errors import OmegaConfBaseException

    from ganeval.features.inception import WeightsNotFoundError

    return (ValueError, FileNotFoundError, InstantiationException, OmegaConfBaseException, WeightsNotFoundError)


def report(e: BaseException) -> int:
    """Log a user error as one message (the traceback too with HYDRA_FULL_ERROR=1); the exit status, 2."""
    full = os.environ.get("HYDRA_FULL_ERROR") == "1"
    log.error("%s", e, exc_info=e if full else None)
    if not full:
        log.error("(set HYDRA_FULL_ERROR=1 for the traceback)")
    return 2


def main() -> None:
    """Console entry point: compose ganeval/configs/config.yaml with the command line and run the experiment."""
    import hydra

    @hydra.main(config_path=str(config_dir()), config_name="config", version_base="1.3")
    def _app(cfg: Any) -> None:
        from ganeval.stops import no_space

        try:
            run_app(cfg)
        except user_errors() as e:
            # A config or input that cannot work: say what to change, without a traceback.
            raise SystemExit(report(e)) from None
        except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: what is stored, one line (ganeval.stops)
            log.error("%s", str(e) or "stopped (Ctrl-C) before any run was stored")
            raise SystemExit(130) from None
        except OSError as e:
            if (message := no_space(e)) is None:
                raise
            log.error("%s", message)
            raise SystemExit(2) from None

    from ganeval.stops import terminate_as_interrupt

    terminate_as_interrupt()
    _app()


if __name__ == "__main__":
    sys.exit(main())
