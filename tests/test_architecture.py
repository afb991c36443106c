"""The style bar on sizes (issue 21): modules under 450 lines, functions at most 80, plotting exempt; an exception
must be listed in scripts/check_sizes.py's ALLOWED (empty today)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def check_sizes() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_sizes", ROOT / "scripts" / "check_sizes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_sizes"] = module
    spec.loader.exec_module(module)
    return module


def function(name: str, lines: int, indent: str = "") -> str:
    """A function of exactly `lines` lines (its def line included)."""
    return "\n".join([f"{indent}def {name}():"] + [f"{indent}    x = {i}" for i in range(lines - 1)]) + "\n"


def test_the_check_counts_lines_on_the_syntax_tree(tmp_path: Path) -> None:
    """Limits at their edges (449 vs 450 module lines, 80 vs 81 function lines), methods and nested functions
    named by their path, plotting exempt."""
    sizes = check_sizes()
    pkg = tmp_path / "ganeval"
    pkg.mkdir()
    for folder in ("scripts", "tests"):
        (tmp_path / folder).mkdir()
    (pkg / "short.py").write_text("x = 1\n" * 449)
    (pkg / "long.py").write_text("x = 1\n" * 450)
    (pkg / "plots_extra.py").write_text("x = 1\n" * 600 + function("helper", 90))
    (tmp_path / "scripts" / "figures.py").write_text(function("plot_big", 120) + function("draw_big", 120))
    body = function("fits", 80) + function("over", 81)
    body += "class C:\n" + function("method", 81, "    ")
    body += "def outer():\n" + function("inner", 82, "    ")
    (tmp_path / "scripts" / "s.py").write_text(body)
    found = sizes.oversized(tmp_path)
    assert found == {"ganeval/long.py": 450, "scripts/s.py:over": 81, "scripts/s.py:C.method": 81,
                     "scripts/s.py:outer": 83, "scripts/s.py:outer.inner": 82}


def test_nothing_new_exceeds_the_limits() -> None:
    """Every module and function over the limits is one already listed; a listed one that now fits is taken out."""
    sizes = check_sizes()
    found = sizes.oversized()
    new = {k: v for k, v in found.items() if k not in sizes.ALLOWED}
    assert not new, f"over the limits (modules >= 450 lines, functions > 80): {new}; split them"
    fixed = sizes.ALLOWED - set(found)
    assert not fixed, f"now within the limits: take {sorted(fixed)} out of scripts/check_sizes.py's ALLOWED"
