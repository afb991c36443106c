"""The library's refusals in a Python caller's words: the config keys the `ganeval` app shares with the library
(`metrics.kid.subset_size=N`, `results_dir`, `overwrite=true`) written as the arguments of `ganeval.evaluate`,
`ganeval.score` and `ganeval.torchmetrics` (`metrics={"kid": {"subset_size": N}}`, `out`, `overwrite=True`).
The command's flags are `ganeval.app.python_words`' (`ganeval.app.score_print.in_flags` writes the reverse)."""

from __future__ import annotations

import functools
import re
import sys
from typing import Any, Callable, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_METRIC = r"(imd|fid|kid|precision|recall|density|coverage|inception_score|cmmd|sfid|fd_inf|vendi|authenticity|mifid)"
KEY_WORDS: tuple[tuple[str, str], ...] = (
    (r"\bmetrics\.(\w+)\.(\w+)=([^\s),;:]+)", r"""metrics={"\1": {"\2": \3}}"""),
    (r"\bmetrics\.(\w+)\.(\w+)\b", r"""metrics={"\1": {"\2": ...}}"""),
    (r"\b(lower|raise|set) " + _METRIC + r"\.(\w+)\b(?!=)", r"""\1 metrics={"\2": {"\3": ...}}"""),
    (r"\boverwrite=true\b", "overwrite=True"),
    (r"(?<![-.\w])results_dir\b", "out"),
)


def in_python_keys(message: str) -> str:
    """`message` with the library's config keys written as Python arguments (see the module doc)."""
    for pattern, repl in KEY_WORDS:
        message = re.sub(pattern, repl, message)
    return message


def reworded(error: BaseException, text: str) -> BaseException:
    """`error` with the message `text`: the same class when it can be built from a message, else a ValueError."""
    if text == str(error):
        return error
    try:
        new = type(error)(text)
    except Exception:  # noqa: BLE001 - a class that takes other arguments: the message as a ValueError
        return ValueError(text)
    return new


def did_you_mean(word: Any, choices: Any, shown: str = "{!r}") -> str:
    """' (did you mean X?)' naming the choice closest to a misspelt `word` (`shown` formats it, e.g. "--features {}"),
    or '' when none is close."""
    import difflib

    near = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {shown.format(near[0])}?)" if near else ""


def python_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` raising its ValueErrors in Python's words (`in_python_keys`), one line, without the library's chain."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except ValueError as e:
            new = reworded(e, in_python_keys(str(e)))
            if new is e:
                raise
            raise new from None

    return wrapper


def renamed(new: str, value: Any, old: str, old_value: Any, unset: Any) -> Any:
    """The value of argument `new`, given either as `new` or by its former name `old` (a DeprecationWarning);
    ValueError when both are given. `unset` marks an argument not given."""
    if old_value is unset:
        return value
    if value is not unset:
        raise ValueError(f"give {new}= only: {old}= is its former name")
    import warnings

    warnings.warn(f"{old}= is now {new}= (the name ganeval.score, ganeval.evaluate and ganeval.torchmetrics share)",
                  DeprecationWarning, stacklevel=caller_stacklevel())
    return old_value


LIBRARIES = ("ganeval", "torchmetrics", "lightning", "pytorch_lightning")  # frames a warning never points at


def caller_stacklevel() -> int:
    """The `stacklevel` that makes `warnings.warn`, called in the function calling this, point at the first frame
    outside ganeval and the training libraries that call it (torchmetrics, Lightning): the caller's own line (a
    script's, a notebook cell's), not ganeval's, however many ganeval frames lie between."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] in LIBRARIES:
        frame, level = frame.f_back, level + 1
    return level


class _Unset:
    """An argument not given (distinct from None, which some arguments take)."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()
