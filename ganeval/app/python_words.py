"""A refusal reworded for a Python caller (`ganeval.score`, `ganeval.save_reference`): the command's flags and the
library's config keys replaced by the Python arguments, so a message never names `--runs` or `metrics.kid.subset_size`
to someone who typed `runs=` and `metrics={...}` (`ganeval.app.score_print.in_flags` is the command's mirror)."""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, ParamSpec, TypeVar

from ganeval.words import in_python_keys, reworded

P = ParamSpec("P")
R = TypeVar("R")

PY_WORDS = {"weights": "weights=FILE", "weights_arg": "weights", "no_download": "download=False",
            "pixels": 'features="pixels"'}  # `weights_message`'s words for a Python caller

_PLACEHOLDERS = {"N", "M", "K", "FILE", "DIR", "MODE", "NAME", "PATH"}
_STRING = {"features", "layout", "resize", "metrics", "device", "protocol", "out", "cache_dir", "weights", "save_ref",
           "save_stats", "real_features", "real_weights"}  # score()'s arguments whose values are strings (quoted in a message)


_NUMBERS = ("runs", "sample-size", "confidence", "seed", "batch-size", "num-workers", "size", "pixels-size", "dims",
            "vocab")
_TEXTS = ("features", "resize", "layout", "protocol", "metrics", "device", "weights", "cache-dir", "out", "save-ref",
          "save-stats", "plugins", "real-features", "real-weights")


@functools.lru_cache(maxsize=1)
def _flags() -> dict[str, tuple[str, tuple[str, ...] | None]]:
    """ganeval-score's value flags (`ganeval.app.score.parser`): "--sample-size" -> ("sample_size", the values it
    takes when they are a list, else None)."""
    from ganeval.data.images import LAYOUTS
    from ganeval.features.base import REGISTRY

    choices = {"features": tuple(REGISTRY), "real-features": tuple(REGISTRY), "layout": tuple(LAYOUTS),
               "resize": tuple(dict.fromkeys(m for e in REGISTRY.values() for m in e.resize))}
    return {f"--{f}": (f.replace("-", "_"), choices.get(f)) for f in (*_NUMBERS, *_TEXTS)}


def _flag(match: re.Match[str]) -> str:
    """`--flag value` as `arg=value` when `value` is one (a number, a choice, a path, a placeholder), else `arg`."""
    flag, value = match.group(1), match.group(2)
    if flag not in _flags():
        return match.group(0)
    arg, choices = _flags()[flag]
    numeric = re.fullmatch(r"-?\d[\d.e+-]*", value or "") is not None
    is_value = value is not None and (value in _PLACEHOLDERS or numeric or (choices is not None and value in choices)
                                      or (choices is None and arg in _STRING and re.search(r"[/._\d]", value) is not None))
    if not is_value:
        return arg + (f" {value}" if value is not None else "")
    return f'{arg}="{value}"' if arg in _STRING and value not in _PLACEHOLDERS else f"{arg}={value}"


def _dropped(match: re.Match[str]) -> str:
    """`drop --flag` as `drop flag=`: the keyword argument to leave out of the call."""
    flag = f"--{match.group(1)}"
    return f"drop {_flags()[flag][0]}=" if flag in _flags() else match.group(0)


PYTHON_WORDS: tuple[tuple[str, Any], ...] = (
    (r"--option (\w+)\.(\w+)=(\S+?)(?=[),;:]|$|\s)", r"""metrics={"\1": {"\2": \3}}"""),
    (r"--option (\w+)\.(\w+)", r"""metrics={"\1": {"\2": ...}}"""),
    (r"--option METRIC\.OPTION=VALUE", r"""metrics={"METRIC": {"OPTION": VALUE}}"""),
    (r"--no-download\b", "download=False"),
    (r"\bdrop --([a-z][a-z0-9-]*)(?![\w-]| [\w./-]*\w)", _dropped),
    (r"--overwrite\b", "overwrite=True"),
    (r"--no-plots\b", "plots=False"),
    (r"--no-samples\b", "samples=False"),
    (r"--quiet\b", "progress=False"),
    (r"(--[a-z][a-z0-9-]*)(?: ([\w./-]*\w))?", _flag),
    (r"(?<![-.\w])features\.weights=FILE\b", "weights=FILE"),
    (r" \(\+generator\.layout=\w+, or \+generators\.NAME\.layout=\w+, in a config\)", ""),
    (r"\(config 'generator/(\w+)'\)", r"(a \1 generator)"),
    (r"\bREAL\b", "real"),
    (r"\bFAKE\b", "fakes"),
)


def in_python(message: str) -> str:
    """`message` with the command's flags and the library's config keys written as Python arguments."""
    for pattern, repl in PYTHON_WORDS:
        message = re.sub(pattern, repl, message)
    return in_python_keys(message)


def python_error(error: BaseException, download: bool = True) -> BaseException:
    """The error a Python call raises for a user error: one line in Python's words (missing weights: every way out,
    `features="pixels"` among them), of the same class when it can be rebuilt from a message, else ValueError."""
    from ganeval.app.errors import unwrapped
    from ganeval.features.inception import WeightsNotFoundError
    from ganeval.features.missing_weights import weights_message

    inner = unwrapped(error)
    if isinstance(inner, WeightsNotFoundError):
        return WeightsNotFoundError(weights_message(inner, download, PY_WORDS),
                                    *(getattr(inner, k) for k in ("what", "env", "url")))
    return reworded(inner, in_python(" ".join(str(inner).split())))


def speaks_python(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` (a Python entry point the command shares) raising its user errors in Python's words (`python_error`);
    a call with `command=` set (the command's own) keeps the command's words."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs.get("command"):
            return fn(*args, **kwargs)
        from ganeval.app.errors import user_errors

        try:
            return fn(*args, **kwargs)
        except user_errors() as e:
            raise python_error(e, bool(kwargs.get("download", True))) from None

    return wrapper
