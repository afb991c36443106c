"""The schema of an input node (data, features, generator): its `_target_`'s signature. A node's keys must be
arguments the target takes and their values of the annotated types, checked while the plan is built, before any
input is read, with the key's path in the message. An option is declared once, as a parameter of the function or
class the config names (no dataclass to keep beside it).
"""

from __future__ import annotations

import collections.abc
import inspect
import os
import types
import typing
from pathlib import Path
from typing import Any, Mapping

_PATHS = (os.PathLike, Path)


def check_node(where: str, node: Mapping[str, Any]) -> None:
    """Refuse a key the node's target does not take, or a value not of its annotated type; ValueError naming it."""
    target = str(node.get("_target_") or "")
    parameters, hints, open_kwargs = _signature(target)
    if parameters is None:
        return  # not introspectable (a C function, a builtin): its call will say
    for key, value in node.items():
        key = str(key)
        if key.startswith("_") or (isinstance(value, str) and value == "???"):
            continue
        if key not in parameters:
            if open_kwargs:
                continue
            from ganeval.app.schema import closest

            known = [p for p in parameters if p != "self"]
            raise ValueError(f"{where}.{key}: {target} takes no argument {key!r}{closest(key, known)} (it takes: "
                             f"{', '.join(known)})")
        hint = hints.get(key)
        if hint is not None and not matches(value, hint):
            raise ValueError(f"{where}.{key}={value!r}: {target} takes {words(hint)} there")


def _signature(target: str) -> tuple[dict[str, inspect.Parameter] | None, dict[str, Any], bool]:
    """(parameters, type hints, whether it takes **kwargs) of the target's function or class constructor."""
    from hydra.utils import get_object

    try:
        obj = get_object(target)
        signature = inspect.signature(obj)
    except Exception:  # an unknown target (check_targets names it) or one without a signature
        return None, {}, True
    function = obj.__init__ if inspect.isclass(obj) else obj
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # an annotation that does not evaluate here: check the names alone
        hints = {}
    kinds = {p.kind for p in signature.parameters.values()}
    return dict(signature.parameters), hints, inspect.Parameter.VAR_KEYWORD in kinds


def matches(value: Any, hint: Any) -> bool:
    """Whether a config value (plain containers) can be the argument annotated `hint`; unknown kinds pass."""
    if hint is Any:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(matches(value, a) for a in args)
    if hint is type(None):
        return value is None
    if isinstance(value, Mapping) and "_target_" in value:
        return True  # a nested node, instantiated into the object
    if value is None:
        return False
    if origin is typing.Literal:
        return value in args
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint in _PATHS or (inspect.isclass(hint) and issubclass(hint, _PATHS)):
        return isinstance(value, str)
    container = origin or hint
    if container in (list, tuple, collections.abc.Sequence):
        if not isinstance(value, (list, tuple)):
            return False
        inner = [a for a in args if a is not Ellipsis]
        return len(inner) != 1 or all(matches(v, inner[0]) for v in value)
    if container in (dict, collections.abc.Mapping):
        return isinstance(value, Mapping)
    if container is collections.abc.Callable:
        return isinstance(value, str) or callable(value)
    return True  # a class the config cannot spell (an array, a module): its call checks it


def words(hint: Any) -> str:
    """A type annotation in words: 'an integer', 'true or false', 'a path or null', ..."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        named = [words(a) for a in args if a is not type(None)]
        named = list(dict.fromkeys(named))
        return " or ".join(named) + (" or null" if type(None) in args else "")
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    simple = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    if hint in simple:
        return simple[hint]
    if hint in _PATHS or (inspect.isclass(hint) and issubclass(hint, _PATHS)):
        return "a path"
    container = origin or hint
    if container in (list, tuple, collections.abc.Sequence):
        return "a list"
    if container in (dict, collections.abc.Mapping):
        return "a mapping"
    return getattr(hint, "__name__", str(hint))
