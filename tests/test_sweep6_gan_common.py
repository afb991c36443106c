"""Sweep 6 (gan + common): exact pins left by sweep 5 — `hash_threads`'s fallbacks, the callable digest's
byte rules, and the survivors of the screened gan/common modules."""

from __future__ import annotations

import fractions
import hashlib
import json
import os
import pickle
from typing import Any

import pytest

from ganeval import hashing
from ganeval.gan.code_digest import _filled, callable_digest


def _tags(*parts: tuple[Any, ...]) -> str:
    """The digest `_Digest.tag` builds from these tag tuples, written out."""
    h = hashlib.sha256()
    for p in parts:
        h.update(json.dumps(list(p), default=str).encode() + b"\0")
    return h.hexdigest()


# ------------------------------------------------------------------------------------------------
# ganeval/hashing.py: hash_threads
# ------------------------------------------------------------------------------------------------
def test_hash_threads_asks_affinity_of_this_process() -> None:
    seen: list[int] = []

    def affinity(pid: int) -> set[int]:
        seen.append(pid)
        return {0, 1, 2}

    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(os, "sched_getaffinity", affinity, raising=False)
        mp.setattr(os, "cpu_count", lambda: 7)
        assert hashing.hash_threads() == 3
        assert seen == [0]
    finally:
        mp.undo()


@pytest.mark.parametrize("count, want", [(None, 1), (1, 1), (2, 2), (5, 5), (8, 8), (9, 8), (64, 8)])
def test_hash_threads_without_affinity_uses_cpu_count(
    monkeypatch: pytest.MonkeyPatch, count: int | None, want: int
) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: count)
    assert hashing.hash_threads() == want


# ------------------------------------------------------------------------------------------------
# ganeval/gan/code_digest.py
# ------------------------------------------------------------------------------------------------
def test_digest_of_scalars_and_back_references_exactly() -> None:
    assert callable_digest(3) == {"sha256": _tags(("v", "int", "3"))}
    x: list[Any] = []
    assert callable_digest([x, x]) == {"sha256": _tags(("list", 2), ("list", 0), ("ref", 1))}
    assert callable_digest([[], []]) == {"sha256": _tags(("list", 2), ("list", 0), ("list", 0))}
    d = {"a": x}
    assert callable_digest((d, x)) == {
        "sha256": _tags(("tuple", 2), ("dict", 1), ("v", "str", "'a'"), ("list", 0), ("ref", 2))
    }


def test_digest_of_a_pickled_value_uses_protocol_4() -> None:
    f = fractions.Fraction(1, 3)
    sha = hashlib.sha256(pickle.dumps(f, protocol=4)).hexdigest()
    assert callable_digest(f) == {"sha256": _tags(("pickle", "fractions.Fraction", sha))}
    assert hashlib.sha256(pickle.dumps(f, protocol=5)).hexdigest() != sha


def test_digest_of_an_unpicklable_value_names_it() -> None:
    import threading

    lock = threading.Lock()
    name = f"{type(lock).__module__}.{type(lock).__qualname__}"
    assert callable_digest(lock) == {"sha256": _tags(("unseen", name)), "unseen": [name]}


def test_filled_cells() -> None:
    def outer() -> tuple[Any, Any]:
        def inner() -> Any:
            return later

        empty = inner.__closure__[0]  # type: ignore[index]
        later = 1
        return empty, inner

    cell, inner = outer()
    assert _filled(cell) is True  # filled once `later` was assigned
    k = 5

    def g() -> int:
        return k

    assert _filled(g.__closure__[0]) is True  # type: ignore[index]

    def outer2() -> Any:
        def inner2() -> Any:
            return never

        res = (_filled(inner2.__closure__[0]), callable_digest(inner2))  # type: ignore[index]
        never = 2
        return res

    ok, d = outer2()
    assert ok is False and set(d) == {"sha256"}


def _make(k: Any) -> Any:
    def f(n: int) -> Any:
        return (k, n)

    return f


def test_closure_values_and_globals_enter_the_digest() -> None:
    assert callable_digest(_make(1)) == callable_digest(_make(1))
    assert callable_digest(_make(1)) != callable_digest(_make(2))

    def plain(n: int) -> int:
        return n + 1

    assert set(callable_digest(plain)) == {"sha256"}  # no closure: digested, no error
    g1: dict[str, Any] = {"SCALE": 2}
    g2: dict[str, Any] = {"SCALE": 3}
    src = "def f(n):\n    return len([SCALE]) * n\n"
    exec(src, g1)
    exec(src, g2)
    assert callable_digest(g1["f"]) != callable_digest(g2["f"])  # a global it names (and a builtin it lacks)
    g2["SCALE"] = 2
    assert callable_digest(g1["f"]) == callable_digest(g2["f"])
