"""A callable's code and captured values by content, for callables no module file describes (docs/data.md).

A function defined in `python -c`, stdin or a notebook cell has no source file to hash, and one defined in a loop
(a lambda over `k`) shares its file with its siblings. Its digest covers what decides its output besides its
arguments: its bytecode, constants and names (nested functions too), its defaults, the values its closure
captured and the globals its code names (functions recursively; arrays and tensors by dtype, shape and bytes;
modules by name; `nn.Module`s by class and weights; other values by their pickle). Each object is digested once
per digest, whatever the number of references to it (a captured gigabyte array is read once). A value that can be
neither walked nor pickled is named, by type, under "unseen" (as data files the code reads are not seen).
"""

from __future__ import annotations

import functools
import hashlib
import json
import pickle
import types
from typing import Any

import numpy as np
import torch
from torch import nn

from ganeval.hashing import array_identity, state_dict_sha256

_SCALARS = (type(None), bool, int, float, complex, str, bytes)


class _Digest:
    """One digest: a SHA-256 fed in a fixed order, a memo of the objects already fed (by id), the unseen types."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.memo: dict[int, int] = {}  # id(obj) -> the order it was first fed in (a back-reference afterwards)
        self.keep: list[Any] = []  # the objects memoised: alive while the digest runs, so their ids stay theirs
        self.unseen: set[str] = set()

    def tag(self, *parts: Any) -> None:
        self.h.update(json.dumps(parts, default=str).encode() + b"\0")

    def feed(self, obj: Any) -> None:
        if isinstance(obj, _SCALARS):
            self.tag("v", type(obj).__name__, repr(obj))
            return
        if id(obj) in self.memo:  # fed already (a cycle, or a second reference): a back-reference, not its bytes
            self.tag("ref", self.memo[id(obj)])
            return
        self.memo[id(obj)] = len(self.memo)
        self.keep.append(obj)
        self._walk(obj)

    def _walk(self, obj: Any) -> None:  # noqa: C901 - one branch per kind of value, in one place
        if isinstance(obj, (np.ndarray, torch.Tensor)):
            self.tag("array", array_identity(obj))
        elif isinstance(obj, types.ModuleType):
            self.tag("module", obj.__name__)
        elif isinstance(obj, functools.partial):
            self.tag("partial")
            for part in (obj.func, obj.args, obj.keywords):
                self.feed(part)
        elif isinstance(obj, types.MethodType):
            self.tag("method")
            self.feed(obj.__func__)
            self.feed(obj.__self__)
        elif isinstance(obj, types.FunctionType):
            self._function(obj)
        elif isinstance(obj, types.CodeType):
            self._code(obj)
        elif isinstance(obj, nn.Module):
            self.tag("nn.Module", f"{type(obj).__module__}.{type(obj).__qualname__}", state_dict_sha256(obj.state_dict()))
        elif isinstance(obj, (list, tuple, set, frozenset)):
            items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
            self.tag(type(obj).__name__, len(items))
            for x in items:
                self.feed(x)
        elif isinstance(obj, dict):
            self.tag("dict", len(obj))
            for k, v in obj.items():
                self.feed(k)
                self.feed(v)
        elif isinstance(obj, type):
            self.tag("class", f"{obj.__module__}.{obj.__qualname__}")
        elif isinstance(obj, types.BuiltinFunctionType):
            self.tag("builtin", getattr(obj, "__module__", None), obj.__qualname__)
        else:
            self._other(obj)

    def _function(self, fn: types.FunctionType) -> None:
        self.tag("function", fn.__qualname__)
        self._code(fn.__code__)
        self.feed(fn.__defaults__)
        self.feed(fn.__kwdefaults__)
        cells = [c.cell_contents if _filled(c) else "<empty cell>" for c in (fn.__closure__ or ())]
        self.feed(tuple(cells))
        names = _global_names(fn.__code__)
        self.feed({n: fn.__globals__[n] for n in sorted(names) if n in fn.__globals__})

    def _code(self, code: types.CodeType) -> None:
        self.tag("code", code.co_name, code.co_argcount, code.co_kwonlyargcount, code.co_names, code.co_varnames)
        self.h.update(code.co_code)
        self.feed(tuple(code.co_consts))  # nested code objects (lambdas, comprehensions) walk in here

    def _other(self, obj: Any) -> None:
        try:
            data = pickle.dumps(obj, protocol=4)
        except Exception:  # noqa: BLE001 - any object that refuses pickling: named, not guessed
            self.unseen.add(f"{type(obj).__module__}.{type(obj).__qualname__}")
            self.tag("unseen", f"{type(obj).__module__}.{type(obj).__qualname__}")
            return
        self.tag("pickle", f"{type(obj).__module__}.{type(obj).__qualname__}", hashlib.sha256(data).hexdigest())


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _global_names(code: types.CodeType) -> set[str]:
    """The names `code` and its nested code objects look up (globals among them)."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def callable_digest(obj: Any) -> dict[str, Any]:
    """{"sha256": the digest of `obj`'s code and captured values (see the module doc), "unseen": [types] if any}."""
    d = _Digest()
    d.feed(obj)
    out: dict[str, Any] = {"sha256": d.h.hexdigest()}
    if d.unseen:
        out["unseen"] = sorted(d.unseen)
    return out
