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
import re
import sys
from typing import Any

from ganeval.app import resolvers, run_files, schema
from ganeval.app.errors import say, unwrapped, user_errors
from ganeval.app.paths import config_dir

log = logging.getLogger("ganeval")
resolvers.register()  # the root config's ${ganeval.*} interpolations: before Hydra composes it
schema.register()  # the root config's schema (`ganeval_base`, first in its defaults)


def run_app(cfg: Any) -> Any:
    """config -> plan (`ganeval.app.validate.build_plan`) -> the experiment's `run(plan)` -> results; return its
    summary (with dry_run=true: print the plan, do no work, and return what was checked, see `validate.dry_run`)."""
    from hydra.core.hydra_config import HydraConfig

    target = cfg.run_experiment.get("_target_") if cfg.get("run_experiment") is not None else None
    schema.unknown_keys(cfg, schema.experiment_keys(HydraConfig.get(), target))  # before any heavy import

    from hydra.utils import instantiate

    from ganeval.app.pipeline import write_report
    from ganeval.app.validate import build_plan

    if cfg.get("run_experiment") is None:
        options = sorted(p.stem for p in (config_dir() / "experiment").glob("*.yaml"))
        raise ValueError("the config has no run_experiment node (what runs); pick an experiment with "
                         f"experiment={'|'.join(options)}, or set run_experiment={{_target_: "
                         "ganeval.studies.gan_table.run, _partial_: true}")
    run = instantiate(cfg.run_experiment)
    plan = build_plan(cfg)  # every check that needs no input's content; the study never sees the raw config
    if plan.dry_run:
        from ganeval.app.validate import dry_run

        return dry_run(plan)
    run_files.forget()  # a refusal undoes this job's folder only (an earlier job in this process may have crashed)
    run_files.begin(plan.results_dir, cfg)  # the command's record and its log: from here on, in results_dir
    try:
        log.info("experiment %s (%s) -> %s on %s", plan.name, plan.study, plan.results_dir, plan.device)
        summary = run(plan)
        write_report(plan)  # again: with the figures an experiment writes after its tables (blur.png, torus.png, ...)
    except user_errors():
        run_files.undo()  # a refused run leaves the folder as it found it
        raise
    finally:
        run_files.close()
    from ganeval.results.verdict import terminal_summary

    end = terminal_summary(plan.results_dir)  # the run ends with its table and its result in words
    if end:
        print(end, flush=True)
    return summary


def report(e: BaseException) -> int:
    """Log a user error as one message (the traceback too with HYDRA_FULL_ERROR=1); the exit status, 2. Missing
    Inception weights get the one line that names this command's keys (features.weights=FILE, features=pixels)."""
    full = os.environ.get(TRACEBACK, os.environ.get("HYDRA_FULL_ERROR", "0")) == "1"
    from ganeval.features.inception import WeightsNotFoundError

    e = unwrapped(e)
    text: Any = e
    if isinstance(e, WeightsNotFoundError):
        from ganeval.app.score_print import APP_WORDS
        from ganeval.features.missing_weights import weights_message

        text = weights_message(e, "download disabled" not in str(e), APP_WORDS)
    log.error("%s%s", text, "" if full else "  (HYDRA_FULL_ERROR=1 for the traceback)", exc_info=e if full else None)
    return 2


def refused(e: BaseException | str) -> int:
    """Report a refusal (`report`; a string: one line as it is) and take back the command's record and log from the
    results folder when they are all it wrote there (`run_files.undo`); the exit status, 2."""
    if isinstance(e, BaseException):
        status = report(e)
    else:
        log.error("%s", e)
        status = 2
    run_files.undo()
    return status


TRACEBACK = "GANEVAL_TRACEBACK"  # the user's HYDRA_FULL_ERROR, kept while `main` sets it for Hydra


def check_command_line(args: list[str]) -> None:
    """Refuse a top-level boolean given anything but true/false on the command line (`overwrite=no` would
    otherwise become false: OmegaConf converts yes/no/on/off/1/0), naming the key."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    overrides = [a for a in args if "=" in a and not a.startswith("-")]
    for o in OverridesParser.create().parse_overrides(overrides):
        if o.key_or_group not in schema.BOOLEAN_KEYS or o.is_delete():
            continue
        value: Any = o.value()
        for v in (value.list if hasattr(value, "list") else [value]):
            if not isinstance(v, bool):
                raise ValueError(f"{o.key_or_group} must be true or false, got {v!r}")


def one_line(e: BaseException) -> str:
    """A composition error as one line: the key's path, what is wrong, and for an unknown key the closest one."""
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

    cause = e.__cause__ if isinstance(e.__cause__, OmegaConfBaseException) else e
    if isinstance(cause, (ConfigKeyError, ConfigAttributeError)) and getattr(cause, "full_key", None):
        key = str(cause.full_key)
        parent = getattr(cause, "parent_node", None)
        known = [str(k) for k in parent.keys()] if parent is not None and hasattr(parent, "keys") else []
        leaf = key.rpartition(".")[2]
        hint = schema.closest(leaf, known)
        return f"{key}: no such key{hint}; `ganeval --help` lists the keys"
    if isinstance(cause, OmegaConfBaseException) and getattr(cause, "full_key", None):
        first = str(cause).splitlines()[0]
        if "is not a ListConfig" in first:  # train_seeds=3: say what a list looks like on the command line
            example = {"train_seeds": "[0,1,2]", "plugins": "[mymodule]"}.get(str(cause.full_key), "[a,b]")
            first = first.rstrip(".") + f"; give a list, e.g. {cause.full_key}={example}"
        return f"{cause.full_key}: {first}"
    text = str(e).partition("Config search path")[0]
    missing = re.search(r"Could not find '([\w/@.]+)/([^'/]+)'", text)
    listed = re.search(r"Available options in '[^']+':(.*)", text, re.S)
    if missing and listed:  # a config group given an option it does not have (experiment=blur_swep)
        options = listed.group(1).split()
        group, value = missing.groups()
        return (f"{group}={value}: no such option{schema.closest(value, options)}; {group} is one of "
                f"{', '.join(options)}")
    gone = re.search(r"Could not delete from config\. '([^']+)' does not exist", text)
    if gone:  # ~KEY of a key the config does not hold (~metrics.fd)
        return f"~{gone.group(1)}: no such key to delete; `ganeval --cfg job` shows the composed config"
    return " ".join(text.split())


def main() -> None:
    """Console entry point: compose ganeval/configs/config.yaml with the command line and run the experiment.
    A config that cannot compose (unknown key, wrong type) exits 2 with one line, before any heavy import."""
    import hydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    @hydra.main(config_path=str(config_dir()), config_name="config", version_base="1.3")
    def _app(cfg: Any) -> None:
        from ganeval.stops import no_space

        try:
            run_app(cfg)
        except ValueError as e:  # first: `user_errors()` imports torch, which a bad key need not wait for
            raise SystemExit(refused(e)) from None
        except user_errors() as e:
            # A config or input that cannot work: say what to change, without a traceback.
            raise SystemExit(refused(e)) from None
        except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: what is stored, one line (ganeval.stops)
            log.error("%s", str(e) or "stopped (Ctrl-C) before any run was stored")
            raise SystemExit(130) from None
        except OSError as e:
            if (message := no_space(e)) is None:
                raise
            raise SystemExit(refused(message)) from None

    from ganeval.stops import terminate_as_interrupt

    terminate_as_interrupt()

    full = os.environ.get("HYDRA_FULL_ERROR") == "1"
    os.environ.setdefault(TRACEBACK, "1" if full else "0")
    os.environ["HYDRA_FULL_ERROR"] = "1"  # composition errors reach the `except` below instead of exiting 1
    run_files.forget()  # nothing an earlier command in this process (tests) wrote counts for this one
    try:
        check_command_line(sys.argv[1:])
        _app()
    except (HydraException, OmegaConfBaseException, ValueError) as e:
        if os.environ[TRACEBACK] == "1":
            raise
        say(f"ganeval: error: {one_line(e)}")
        raise SystemExit(2) from None
    finally:
        run_files.forget()


if __name__ == "__main__":
    main()
