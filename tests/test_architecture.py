"""The house's rules that a tool keeps: the layers and no import circles (the import-linter contracts in
pyproject.toml, the layers of docs/architecture.md, imports inside functions included), and the size bar of issue 21
(modules under 450 lines, functions at most 80, plotting exempt), a warning, not a failure."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def lint_imports(root: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the `ganeval` package under `root` with root's pyproject.toml (no cache), every contract or
    those whose ids are given."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    only = [a for c in contracts for a in ("--contract", c)]
    return subprocess.run([sys.executable, "-c", LINT, "--no-cache", "--no-logo", *only, str(root / "pyproject.toml")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_the_import_contracts_hold() -> None:
    """Every contract of pyproject.toml is kept: layers, no circles, no Hydra below the app."""
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and done.stdout.count(" KEPT") == 3, done.stdout


@pytest.fixture(scope="module")
def broken_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package and its pyproject.toml, to break."""
    root = tmp_path_factory.mktemp("house")
    shutil.copytree(ROOT / "ganeval", root / "ganeval", ignore=shutil.ignore_patterns("__pycache__", "configs"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize("contract,module,line,named", [
    # an upward import inside a function: the metrics reaching up into the app
    ("layers", "metrics/kid.py", "def _upward() -> None:\n    from ganeval.app import plan  # noqa: F401\n",
     "ganeval.metrics.kid -> ganeval.app.plan"),
    # a new circle between two modules of one package (results.tables imports results.summary), inside a function
    ("acyclic", "results/summary.py", "def _circle() -> None:\n    from ganeval.results import tables  # noqa: F401\n",
     "No cycles are allowed in ganeval.results."),
    # Hydra below the app
    ("no-hydra", "data/images.py", "def _hydra() -> None:\n    import omegaconf  # noqa: F401\n",
     "ganeval.data.images -> omegaconf"),
])
def test_a_broken_contract_fails(broken_copy: Path, contract: str, module: str, line: str, named: str) -> None:
    """Each contract fails on the violation it forbids, added to a copy of the package, naming it."""
    path = broken_copy / "ganeval" / module
    kept = path.read_text()
    assert named not in lint_imports(broken_copy, contract).stdout
    try:
        path.write_text(kept + "\n\n" + line)
        done = lint_imports(broken_copy, contract)
    finally:
        path.write_text(kept)
    assert done.returncode != 0 and " BROKEN" in done.stdout and named in done.stdout, done.stdout


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
    named by their path, plotting exempt; what exceeds them is a warning (exit 0), each named."""
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
    expected = {"ganeval/long.py": 450, "scripts/s.py:over": 81, "scripts/s.py:C.method": 81,
                "scripts/s.py:outer": 83, "scripts/s.py:outer.inner": 82}
    assert found == expected
    assert sizes.warning_lines(found) == [f"warning: {k} has {v} lines" for k, v in sorted(expected.items())]


def test_sizes_over_the_bar_are_a_warning() -> None:
    """scripts/check_sizes.py names what exceeds the bar and exits 0; the same list shows as a pytest warning."""
    sizes = check_sizes()
    found = sizes.oversized()
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_sizes.py")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == sizes.warning_lines(found) + [sizes.count_line(found)]
    for line in sizes.warning_lines(found):
        warnings.warn(line, stacklevel=1)
