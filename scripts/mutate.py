"""Mutation testing of ganeval.metrics, ganeval.results and ganeval.protocol: do the tests catch small bugs?

Generates mutants from the AST of each module in TARGETS (operator swaps + ↔ -, * ↔ /, comparison flips < ↔ <=,
== ↔ !=, `and` ↔ `or`, a dropped `not` or unary minus, integer constants n → n + 1, float constants x → 2x),
draws --per-module of them per module with --seed, and for each one writes the mutated module into a copy of the
tree, runs the module's covering test files (TARGETS) there under a timeout, and restores it. A mutant is killed
when the tests fail (or time out), survives when they pass. Before any mutant, each group of test files runs on
the copy with the modules only re-printed by `ast.unparse` (the form the mutants are written in): a group that
fails there is reported and its mutants skipped. Writes one JSON line per mutant to --log, and prints the score
and the survivors (each to be killed by a new test or explained as equivalent: docs/development.md).

    nice -n 10 python scripts/mutate.py --per-module 4 --log results/reference/mutation/run.jsonl
    python scripts/mutate.py --list                      # the drawn mutants only, nothing run
    python scripts/mutate.py --only ganeval/metrics/knn.py#18   # one mutant again
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module -> the test files that cover it (the ones run for each of its mutants)
TARGETS: dict[str, tuple[str, ...]] = {
    "ganeval/metrics/fid.py": ("tests/test_fid.py",),
    "ganeval/metrics/kid.py": ("tests/test_kid.py",),
    "ganeval/metrics/imd.py": ("tests/test_imd.py",),
    "ganeval/metrics/slq.py": ("tests/test_slq_accuracy.py", "tests/test_lanczos_queued.py"),
    "ganeval/metrics/laplacian.py": ("tests/test_slq_accuracy.py", "tests/test_imd.py"),
    "ganeval/metrics/knn.py": ("tests/test_imd.py", "tests/test_knn_precision.py"),
    "ganeval/metrics/prdc.py": ("tests/test_prdc_metrics.py",),
    "ganeval/results/intervals.py": ("tests/test_intervals.py",),
    "ganeval/results/power.py": ("tests/test_power.py",),
    "ganeval/results/seeds.py": ("tests/test_seeds.py",),
    "ganeval/results/summary.py": ("tests/test_summary.py", "tests/test_tables.py"),
    "ganeval/results/verdicts.py": ("tests/test_verdicts.py", "tests/test_study_verdicts.py"),
    "ganeval/protocol/draws.py": ("tests/test_protocol.py", "tests/test_train_seeds.py"),
    "ganeval/protocol/task.py": ("tests/test_protocol.py", "tests/test_store.py", "tests/test_metric_streams.py"),
    "ganeval/protocol/store.py": ("tests/test_store.py", "tests/test_run_folders.py", "tests/test_metric_streams.py"),
}
SWAPS: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.And: ast.Or, ast.Or: ast.And,
}


@dataclass(frozen=True)
class Mutant:
    """The `index`-th mutable site of `module` (in `_sites` order), at `line`: `before` becomes `after`."""

    module: str
    index: int
    line: int
    before: str
    after: str


def _skipped(tree: ast.Module) -> set[int]:
    """ids of the nodes not worth mutating: docstrings, annotations, f-string parts, `if TYPE_CHECKING` blocks."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        parts: list[ast.AST] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts += [a.annotation for a in node.args.args + node.args.kwonlyargs if a.annotation] + (
                [node.returns] if node.returns else [])
        if isinstance(node, ast.AnnAssign):
            parts.append(node.annotation)
        if isinstance(node, ast.JoinedStr):
            parts.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            parts.append(node)
        for part in parts:
            skip.update(id(n) for n in ast.walk(part))
    return skip


def _sites(tree: ast.Module) -> list[tuple[ast.AST, str]]:
    """Every (node, how) that can be mutated, in a fixed order (ast.walk's)."""
    skip = _skipped(tree)
    out: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in SWAPS:
            out.append((node, "op"))
        elif isinstance(node, ast.BoolOp):
            out.append((node, "op"))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAPS:
            out.append((node, "cmp"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            out.append((node, "unary"))
        elif (isinstance(node, ast.Constant) and type(node.value) in (int, float)
              and not isinstance(node.value, bool)):
            out.append((node, "const"))
    return out


def _mutate(source: str, index: int) -> tuple[str, int, str, str]:
    """(mutated module text, line, the site before, after) for site `index` of `source`."""
    tree = ast.parse(source)
    node, how = _sites(tree)[index]
    before = ast.unparse(node)
    line = node.lineno
    if how == "op":
        node.op = SWAPS[type(node.op)]()  # type: ignore[attr-defined]
    elif how == "cmp":
        node.ops = [SWAPS[type(node.ops[0])]()]  # type: ignore[attr-defined]
    elif how == "const":
        v = node.value  # type: ignore[attr-defined]
        node.value = v + 1 if isinstance(v, int) else (2 * v if v else 1.0)  # type: ignore[attr-defined]
    if how == "unary":  # `not x` -> `x`, `-x` -> `x`: replace the node in its parent
        operand = node.operand  # type: ignore[attr-defined]
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, operand)
                elif isinstance(value, list):
                    value[:] = [operand if v is node else v for v in value]
        after = ast.unparse(operand)
    else:
        after = ast.unparse(node)
    return ast.unparse(tree) + "\n", line, before, after


def draw(per_module: int, seed: int) -> list[Mutant]:
    """`per_module` mutants of each target module, drawn without replacement with `seed`."""
    rng = random.Random(seed)
    out = []
    for module in TARGETS:
        source = (ROOT / module).read_text()
        n = len(_sites(ast.parse(source)))
        for index in sorted(rng.sample(range(n), min(per_module, n))):
            _, line, before, after = _mutate(source, index)
            out.append(Mutant(module, index, line, before, after))
    return out


def _named(spec: str) -> Mutant:
    """The mutant MODULE#INDEX (as --list prints them)."""
    module, _, index = spec.partition("#")
    if module not in TARGETS or not index.isdigit():
        raise SystemExit(f"--only takes MODULE#INDEX with MODULE one of {', '.join(TARGETS)}, got {spec!r}")
    _, line, before, after = _mutate((ROOT / module).read_text(), int(index))
    return Mutant(module, int(index), line, before, after)


def _run_tests(tree: Path, files: tuple[str, ...], timeout: float) -> tuple[str, float]:
    """('passed' | 'failed' | 'timeout' | 'error (rc N)', seconds) of the test files run in the copy `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "pytest", *files, "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow",
           "-p", "no:randomly", "-p", "no:random_order", "-o", "addopts=", "--timeout", str(int(timeout))]
    t0 = time.perf_counter()
    try:
        rc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    return {0: "passed", 1: "failed"}.get(rc, f"error (rc {rc})"), seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-module", type=int, default=4, help="mutants drawn per module (default 4)")
    ap.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for one mutant's tests (default 600)")
    ap.add_argument("--log", type=Path, help="a JSON line per mutant, appended as each finishes")
    ap.add_argument("--list", action="store_true", help="print the drawn mutants and stop")
    ap.add_argument("--only", nargs="+", metavar="MODULE#INDEX", help="run these mutants instead of a draw "
                    "(e.g. ganeval/metrics/knn.py#18: a survivor again, after a new test)")
    args = ap.parse_args(argv)
    mutants = draw(args.per_module, args.seed) if not args.only else [_named(s) for s in args.only]
    if args.list:
        for m in mutants:
            print(f"{m.module}#{m.index} (line {m.line}): {m.before} -> {m.after}")
        return 0
    results = []
    with tempfile.TemporaryDirectory(prefix="ganeval-mutate-") as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(".git", "__pycache__", ".venv", "*_cache"))
        originals = {m: (tree / m).read_text() for m in TARGETS}
        for m, text in originals.items():  # the baseline: every module as ast.unparse prints it
            (tree / m).write_text(ast.unparse(ast.parse(text)) + "\n")
        broken = set()
        for files in sorted({TARGETS[m.module] for m in mutants}):
            outcome, seconds = _run_tests(tree, files, args.timeout)
            print(f"baseline {' '.join(files)}: {outcome} in {seconds:.0f} s", flush=True)
            if outcome != "passed":
                broken.add(files)
        for i, m in enumerate(mutants, 1):
            files = TARGETS[m.module]
            path = tree / m.module
            if files in broken:
                outcome, seconds = "skipped (baseline fails)", 0.0
            else:
                path.write_text(_mutate(originals[m.module], m.index)[0])
                try:
                    outcome, seconds = _run_tests(tree, files, args.timeout)
                finally:
                    path.write_text(ast.unparse(ast.parse(originals[m.module])) + "\n")
            killed = outcome in ("failed", "timeout")
            rec = {**m.__dict__, "tests": list(files), "outcome": outcome, "killed": killed,
                   "seconds": round(seconds, 1)}
            results.append(rec)
            print(f"[{i}/{len(mutants)}] {'killed ' if killed else 'SURVIVED' if outcome == 'passed' else outcome}"
                  f" {m.module}:{m.line} {m.before} -> {m.after} ({seconds:.0f} s)", flush=True)
            if args.log:
                args.log.parent.mkdir(parents=True, exist_ok=True)
                with args.log.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
    run = [r for r in results if r["outcome"] in ("passed", "failed", "timeout")]
    killed = sum(r["killed"] for r in run)
    print(f"\nscore: {killed}/{len(run)} killed ({100 * killed / max(len(run), 1):.1f} %); "
          f"{len(results) - len(run)} not run")
    for r in run:
        if not r["killed"]:
            print(f"  survived: {r['module']}#{r['index']} (line {r['line']}): {r['before']} -> {r['after']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
