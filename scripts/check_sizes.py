"""Modules of 450 lines or more and functions over 80 lines in ganeval/, scripts/ and tests/ (the style bar of
issue 21), measured on the syntax tree; plotting is exempt (modules named plots*.py, functions named plot,
plot_* or draw_*). A warning, not a failure: a module is split by job, not by size.

    python scripts/check_sizes.py     # one warning line for each; exit 0
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("ganeval", "scripts", "tests")
MODULE_LINES = 450  # a module must stay under this many lines
FUNCTION_LINES = 80  # a function (or method), from its `def` line to its last, at most this many


def plotting(path: Path, name: str | None = None) -> bool:
    """Whether a module (name None) or one of its functions draws figures: exempt from the limits."""
    if path.name.startswith("plots"):
        return True
    return name is not None and (name == "plot" or name.startswith(("plot_", "draw_")))


def oversized(root: Path = ROOT) -> dict[str, int]:
    """Each module at or over MODULE_LINES (key: its path) and function over FUNCTION_LINES (key: path:name,
    methods path:Class.name), with its line count."""
    found: dict[str, int] = {}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            if len(text.splitlines()) >= MODULE_LINES and not plotting(path):
                found[rel] = len(text.splitlines())
            for qualname, lines in _functions(ast.parse(text)):
                if lines > FUNCTION_LINES and not plotting(path, qualname.rsplit(".", 1)[-1]):
                    found[f"{rel}:{qualname}"] = lines
    return found


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    """(qualified name, lines from `def` to the last line) of every function in the tree, nested ones too."""
    out = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((prefix + node.name, node.end_lineno - node.lineno + 1))  # type: ignore[operator]
            out += _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            out += _functions(node, f"{prefix}{node.name}.")
        else:
            out += _functions(node, prefix)
    return out


def warning_lines(found: dict[str, int]) -> list[str]:
    """One line for each module or function over the bar, sorted by name."""
    return [f"warning: {key} has {lines} lines" for key, lines in sorted(found.items())]


def count_line(found: dict[str, int]) -> str:
    return f"{len(found)} over the bar (modules >= {MODULE_LINES} lines, functions > {FUNCTION_LINES}): a warning"


def main() -> int:
    found = oversized()
    for line in warning_lines(found) + [count_line(found)]:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
