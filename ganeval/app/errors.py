"""What counts as a user error of the apps (exit 2 with one line, no traceback), the error inside Hydra's
wrapper, and how the line is written: light, so `ganeval` and `ganeval-score` share it without importing each other."""

from __future__ import annotations

import sys


def say(line: str) -> None:
    """One line on stderr in one write: the lines of torchrun's ranks, which share the stream, never interleave."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the config or an input cannot work" (exit 2 with the message, no traceback)."""
    from hydra.errors import InstantiationException
    from omegaconf.errors import OmegaConfBaseException

    from ganeval.features.inception import WeightsNotFoundError

    return (ValueError, FileNotFoundError, InstantiationException, OmegaConfBaseException, WeightsNotFoundError)


def unwrapped(e: BaseException) -> BaseException:
    """The error raised inside a `_target_` (a dataset absent offline, a bad file), not Hydra's wrapper around it,
    whose text adds "Error in call to target ...", the cause's repr and "full_key:" on three lines."""
    from hydra.errors import InstantiationException

    while isinstance(e, InstantiationException) and isinstance(e.__cause__, Exception):
        e = e.__cause__
    return e
