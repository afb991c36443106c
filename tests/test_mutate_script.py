"""scripts/mutate.py (the mutation-testing run of docs/development.md): its mutants are the documented small
changes, each a valid module that differs from the original at one site, and its draw is the documented one."""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("mutate_script", ROOT / "scripts" / "mutate.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  (its dataclass looks its module up)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_each_site_gets_one_small_change() -> None:
    m = _script()
    source = '''def f(a: int = 5, b: float = 0.5) -> bool:
    """Docstring 7."""
    x = f"{a:.3f}"
    return not (a + b < 3 and -a == 2.5)
'''
    sites = m._sites(ast.parse(source))
    got = {m._mutate(source, i)[2:] for i in range(len(sites))}
    assert got == {("not (a + b < 3 and -a == 2.5)", "a + b < 3 and -a == 2.5"),
                   ("a + b < 3 and -a == 2.5", "a + b < 3 or -a == 2.5"),
                   ("a + b < 3", "a + b <= 3"), ("-a == 2.5", "-a != 2.5"), ("a + b", "a - b"), ("3", "4"),
                   ("-a", "a"), ("2.5", "5.0"), ("5", "6"), ("0.5", "1.0")}  # not the annotation, docstring, f-string
    for i in range(len(sites)):
        text = m._mutate(source, i)[0]
        assert ast.dump(ast.parse(text)) != ast.dump(ast.parse(source))


def test_list_prints_the_draw() -> None:
    out = subprocess.run([sys.executable, "scripts/mutate.py", "--list", "--per-module", "2"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()
    m = _script()
    assert len(out) == 2 * len(m.TARGETS)
    for line in out:
        found = re.fullmatch(r"(\S+)#(\d+) \(line (\d+)\): (.+) -> (.+)", line)
        assert found is not None and found.group(1) in m.TARGETS and found.group(4) != found.group(5), line
