"""How a run that is stopped from outside ends: Ctrl-C, SIGTERM and a full disk give one line saying what is stored.

One job: turn an interruption of the run loop into a message ("stopped: N of M runs stored in DIR, rerun the same
command to resume") and a full disk into "free space in …, then rerun", instead of a traceback. The stored runs are
whole either way (every write is atomic), so the next call resumes them.
"""

from __future__ import annotations

import errno
import signal
from pathlib import Path
from typing import Any

NO_SPACE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


class Stopped(KeyboardInterrupt):
    """The run loop was interrupted (Ctrl-C or SIGTERM); its message says how many runs are stored."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main process by `terminate_as_interrupt`'s handler."""


def stopped(exc: BaseException, done: int, runs: int, directory: Path | None) -> Stopped:
    """The `Stopped` for an interruption `exc` after `done` of `runs` runs were stored in `directory` (None: none)."""
    how = "by SIGTERM" if isinstance(exc, Terminated) else "(Ctrl-C)" if not isinstance(exc, Stopped) else ""
    if directory is None:
        out = Stopped(f"stopped {how} after {done} of {runs} runs (no results_dir: nothing is stored)")
    else:
        out = Stopped(f"stopped {how}: {done} of {runs} runs stored in {directory}, rerun the same command to resume")
    out.terminated = by_sigterm(exc)  # type: ignore[attr-defined]
    return out


def by_sigterm(e: BaseException) -> bool:
    """Whether an interruption came from SIGTERM (`Terminated`, or a `Stopped` made from one)."""
    return isinstance(e, Terminated) or bool(getattr(e, "terminated", False))


def exit_status(e: BaseException) -> int:
    """A stopped command's exit status: 128 + the signal's number (143 for SIGTERM, 130 for Ctrl-C's SIGINT)."""
    return 128 + (signal.SIGTERM if by_sigterm(e) else signal.SIGINT)


def no_space(e: BaseException) -> str | None:
    """The one-line message for a full disk (or quota), or None when `e` is something else."""
    if not isinstance(e, OSError) or e.errno not in NO_SPACE:
        return None
    where = Path(e.filename).parent if e.filename else "the results and cache folders"
    return (f"no space left on the device ({e.strerror}) writing {e.filename or 'a file'}: free space in {where}, "
            "then rerun the same command: the stored runs resume (every file is written whole or not at all)")


def terminate_as_interrupt() -> Any:
    """Make SIGTERM raise `Terminated` in this (main) process, so a terminated run logs why it stopped; returns the
    previous handler."""
    def on_term(signum: int, frame: Any) -> None:
        raise Terminated("terminated (SIGTERM)")

    return signal.signal(signal.SIGTERM, on_term)
