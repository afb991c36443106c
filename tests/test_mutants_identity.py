"""(issue #56) A callable generator's identity changes with everything that decides its output: the five planted bugs
of the audit in `ganeval.gan.code_digest` and `ganeval.gan.code` that no test caught (each test names its bug)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ganeval.gan.code_digest import callable_digest

REPO = Path(__file__).resolve().parents[1]
SCALE56 = 2.0  # a global read only inside nested code (below)


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *extra.pop("path", "").split(os.pathsep)]),
            "OMP_NUM_THREADS": "1", **extra}


def test_keyword_only_defaults_are_in_the_digest() -> None:
    """Bug: `fn.__kwdefaults__` left out. One factory, two keyword-only defaults: two digests."""

    def factory(k: int):
        def f(n: int, seed: int, *, m: int = k) -> np.ndarray:
            return np.full((n, 2), m)
        return f

    assert factory(3).__kwdefaults__ == {"m": 3} and factory(3).__closure__ is None  # only the default differs
    assert callable_digest(factory(3)) == callable_digest(factory(3))
    assert callable_digest(factory(3)) != callable_digest(factory(4))


def test_bytecode_is_in_the_digest() -> None:
    """Bug: `co_code` left out. `n + 1` and `n - 1` have the same names, constants and variables."""
    plus = lambda n, seed: n + 1  # noqa: E731 - a lambda is the case under test
    minus = lambda n, seed: n - 1  # noqa: E731 - a lambda is the case under test
    assert plus.__code__.co_consts == minus.__code__.co_consts and plus.__code__.co_names == minus.__code__.co_names
    assert callable_digest(plus) != callable_digest(minus)


def test_globals_read_only_in_nested_code_are_in_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: the globals of nested code objects (comprehensions, inner lambdas) left out: changing SCALE56, which
    only they read, must change the digest."""
    comprehension = lambda n, seed: [SCALE56 * i for i in range(n)]  # noqa: E731 - a lambda is the case under test
    inner = lambda n, seed: (lambda: SCALE56 * n)()  # noqa: E731, PLC3002 - nested code on every Python version
    assert "SCALE56" not in inner.__code__.co_names
    before = [callable_digest(comprehension), callable_digest(inner)]
    monkeypatch.setattr(sys.modules[__name__], "SCALE56", 3.0)
    after = [callable_digest(comprehension), callable_digest(inner)]
    assert before[0] != after[0] and before[1] != after[1]


SET_DIGEST = """
import json
from ganeval.gan.code_digest import callable_digest

def make():
    names = {"alpha", "beta", "gamma", "delta", "epsilon"}
    return lambda n, seed: sorted(names)[:n]

fn = make()
print(json.dumps([callable_digest(fn)["sha256"], list(fn.__closure__[0].cell_contents)]))
"""


def test_a_captured_set_digests_alike_whatever_its_iteration_order() -> None:
    """Bug: sets digested in iteration order, which for strings changes with PYTHONHASHSEED: one closure over one
    set must give one digest in every interpreter."""
    got = []
    for seed in ("0", "1", "2", "3"):
        done = subprocess.run([sys.executable, "-c", SET_DIGEST], capture_output=True, text=True, timeout=300, check=False,
                              env=_env(PYTHONHASHSEED=seed))
        assert done.returncode == 0, done.stderr[-2000:]
        got.append(json.loads(done.stdout))
    assert len({tuple(order) for _, order in got}) > 1  # the interpreters did iterate the set in other orders
    assert len({digest for digest, _ in got}) == 1


IDENTITY = ("import json; from ganeval.gan.generators import CallableGenerator as C; "
            "print(json.dumps(C('pkg56.gen:sample', points=True).identity()))")


def test_a_helper_module_beside_the_package_is_in_the_identity(tmp_path: Path) -> None:
    """Bug: a package's root taken as the package's own folder instead of the folder holding it, so a helper module
    the package imports from beside it is not the callable's code: changing it must change the identity."""
    (tmp_path / "pkg56").mkdir()
    (tmp_path / "pkg56" / "__init__.py").write_text("")
    (tmp_path / "pkg56" / "gen.py").write_text(textwrap.dedent("""
        import numpy as np
        import helper56

        def sample(n, seed):
            return np.random.default_rng(seed).normal(size=(n, 4)).astype(np.float32) * helper56.SCALE
        """))
    (tmp_path / "helper56.py").write_text("SCALE = 1.0\n")

    def identity() -> dict:
        done = subprocess.run([sys.executable, "-c", IDENTITY], capture_output=True, text=True, timeout=300, check=False,
                              cwd=tmp_path, env=_env(path=str(tmp_path)))
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    first = identity()
    assert "helper56.py" in first.get("modules", {}), first
    (tmp_path / "helper56.py").write_text("SCALE = 2.0\n")
    second = identity()
    assert second["modules"]["helper56.py"] != first["modules"]["helper56.py"] and second != first
