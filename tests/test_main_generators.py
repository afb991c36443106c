"""A generator defined in `__main__` (a script run as `python file.py`, `python -c`, stdin, a notebook cell) is scored
as docs/scoring.md shows (issue 45), and its identity is its code and captured values by content
(`ganeval.gan.code_digest`): different captured values differ, a captured array is hashed once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ganeval.gan import code_digest
from ganeval.gan.code_digest import callable_digest
from ganeval.gan.generators import CallableGenerator

ROOT = Path(__file__).resolve().parents[1]

# The user's first generator: a lambda over their own sampler, scored on pixels (docs/scoring.md's second line).
SCRIPT = """\
import numpy as np
import ganeval

def my_sampler(n, seed):
    return np.random.default_rng(seed).integers(0, 256, (n, 32, 32), dtype=np.uint8)

r = ganeval.score("digits", lambda n, seed: my_sampler(n, seed), n_generated=300, features="pixels", metrics="fid")
direct = ganeval.score("digits", my_sampler(300, 0), features="pixels", metrics="fid")
print("FID", repr(r.to_dict()["results"][0]["value"]), repr(direct.to_dict()["results"][0]["value"]))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _fids(out: str) -> tuple[float, float]:
    line = [x for x in out.splitlines() if x.startswith("FID ")][-1]
    a, b = line.split()[1:]
    return float(a), float(b)


@pytest.mark.parametrize("how", ["file", "-c", "stdin"])
def test_a_lambda_in_main_is_scored_as_its_samples(how: str, tmp_path: Path) -> None:
    script = tmp_path / "my_script.py"
    script.write_text(SCRIPT)
    cmd, stdin = {"file": ([sys.executable, str(script)], None), "-c": ([sys.executable, "-c", SCRIPT], None),
                  "stdin": ([sys.executable, "-"], SCRIPT)}[how]
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    via_generator, via_array = _fids(done.stdout)
    assert via_generator == via_array and via_generator > 0


def test_a_lambda_in_a_notebook_cell_is_scored(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = SCRIPT.split("\n\n")  # three cells: imports, the sampler, the scores
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    old = dict(os.environ)
    os.environ.update(_env())
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    out = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stdout")
    via_generator, via_array = _fids(out)
    assert via_generator == via_array and via_generator > 0


IDENTITY = """\
import json, numpy as np
from ganeval.gan.generators import CallableGenerator
offsets = {}
for k in (1, 2):
    offsets[k] = CallableGenerator(lambda n, seed: np.full((n, 8, 8), k, np.uint8)).identity()
again = CallableGenerator(lambda n, seed: np.full((n, 8, 8), k, np.uint8)).identity()
print(json.dumps([offsets[1], offsets[2], again]))
"""


def test_identity_of_a_main_lambda_is_its_code_and_captured_values() -> None:
    done = subprocess.run([sys.executable, "-c", IDENTITY], capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    one, two, again = json.loads(done.stdout)
    assert one["qualname"] == "__main__.<lambda>" and one["code_sha256"] is None  # no file: -c
    assert one["code"]["sha256"] != two["code"]["sha256"]  # k = 1 and k = 2: other pools, other identities
    assert again["code"]["sha256"] == two["code"]["sha256"]  # the same code and k = 2


def test_digest_sees_closures_globals_defaults_and_nested_code() -> None:
    def make(k: int, scale: float = 1.0):  # noqa: ANN202
        return lambda n, seed: np.full((n, 2), k * scale)

    assert callable_digest(make(1)) == callable_digest(make(1))
    assert callable_digest(make(1)) != callable_digest(make(2))
    assert callable_digest(make(1, 2.0)) != callable_digest(make(1))

    def f(n: int, seed: int, m: int = 3) -> int:
        return n + m

    def g(n: int, seed: int, m: int = 4) -> int:
        return n + m

    assert callable_digest(f) != callable_digest(g)  # defaults
    data = {"w": np.zeros(3)}

    def h(n: int, seed: int) -> np.ndarray:
        return data["w"][:n]

    before = callable_digest(h)
    data["w"] = np.ones(3)  # a global the code names, changed by content
    assert callable_digest(h) != before


def test_a_captured_large_array_is_hashed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    big = np.zeros((256, 1024, 64), np.uint8)  # 16 MiB, referenced twice
    calls: list[int] = []
    real = code_digest.array_identity

    def counting(a, *args):  # noqa: ANN001, ANN202
        calls.append(a.nbytes)
        return real(a, *args)

    monkeypatch.setattr(code_digest, "array_identity", counting)
    gen = CallableGenerator(lambda n, seed: big[:n] + big[:n])
    first = gen.identity()
    assert gen.identity() == first  # a second identity() (the run keys, the record) hashes nothing again
    assert calls == [big.nbytes]
    assert first["code"]["sha256"] != CallableGenerator(lambda n, seed: big[:n] + big[:n] + 1).identity()["code"]["sha256"]


def test_an_object_that_cannot_be_pickled_is_named_unseen() -> None:
    import threading

    lock = threading.Lock()
    d = callable_digest(lambda n, seed: (lock, n))
    assert d["unseen"] == ["_thread.lock"]
