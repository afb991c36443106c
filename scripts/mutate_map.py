"""Which tests run each function of ganeval/ (scripts/mutate.py runs a mutant's tests only): each test file is run
alone (`-m "not slow"`) under coverage with a context per test — the test's node id, also in the subprocesses
and worker processes it starts — and every line a test ran inside a function body counts that function as run by
the test. Code run outside any test (collection) counts for the whole file. A test that failed or was skipped
there is left out (it cannot tell a mutant from the original). The map is stored as JSON:

    {"commit": …, "files": {test file: sha256 of its text}, "tests": [[node id or file, seconds], …],
     "failed": [node id, …], "covers": {module: {function's qualified name: [index into tests, …]}}}
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

RCFILE = """[run]
parallel = True
data_file = ${MUT_COVER_DATA}
source_pkgs = ganeval
context = ${MUT_COVER_TEST}
concurrency = thread, multiprocessing
sigterm = True
patch = _exit
"""
# a pytest plugin: the running test's node id as coverage's context here and in the environment (which the
# subprocesses' coverage, started by coverage's .pth from COVERAGE_PROCESS_START, reads as its static context)
PLUGIN = '''
import json, os
import coverage
import pytest

_seen = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cov = coverage.Coverage.current()
    os.environ["MUT_COVER_TEST"] = item.nodeid
    if cov is not None:
        cov.switch_context(item.nodeid)
    yield
    os.environ["MUT_COVER_TEST"] = ""
    if cov is not None:
        cov.switch_context("")


def pytest_runtest_logreport(report):
    rec = _seen.setdefault(report.nodeid, {"seconds": 0.0, "outcome": "passed"})
    rec["seconds"] += report.duration
    if report.failed:
        rec["outcome"] = "failed"
    elif report.skipped and rec["outcome"] == "passed":
        rec["outcome"] = "skipped"


def pytest_sessionfinish(session):
    with open(os.environ["MUT_MAP_TESTS"], "w") as f:
        json.dump(_seen, f)
'''


def function_lines(source: str) -> dict[int, str]:
    """line -> qualified name of the innermost function whose body holds it (lines outside any body: absent)."""
    out: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                for line in range(child.body[0].lineno, child.end_lineno + 1):  # type: ignore[operator]
                    out[line] = name
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def _covers(tree: Path, data_dir: Path, test_file: str) -> dict[str, dict[str, set[str]]]:
    """module -> function -> the node ids (or `test_file`, for code run outside a test) that ran it."""
    import coverage

    cov = coverage.Coverage(data_file=str(data_dir / ".cov"), config_file=False)
    cov.combine([str(data_dir)], keep=False)
    data = cov.get_data()
    out: dict[str, dict[str, set[str]]] = {}
    for measured in data.measured_files():
        path = Path(measured).resolve()
        if tree.resolve() not in path.parents or not path.is_file():
            continue
        module = path.relative_to(tree.resolve()).as_posix()
        lines = function_lines(path.read_text())
        for line, contexts in data.contexts_by_lineno(measured).items():
            if line not in lines:
                continue
            for context in contexts:
                test = context.strip("|").split("|")[-1] or test_file
                out.setdefault(module, {}).setdefault(lines[line], set()).add(test)
    return out


def collect_file(tree: Path, test_file: str, timeout: float) -> dict:
    """Run one test file (relative to `tree`) under coverage: its tests' outcomes and seconds, and what each ran."""
    with tempfile.TemporaryDirectory(prefix="ganeval-map-") as tmp:
        work = Path(tmp)
        (work / "mutate_cover_plugin.py").write_text(PLUGIN)
        (work / "coveragerc").write_text(RCFILE)
        data = work / "data"
        data.mkdir()
        env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{work}", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "COVERAGE_PROCESS_START": str(work / "coveragerc"),
               "MUT_COVER_DATA": str(data / ".cov"), "MUT_COVER_TEST": "", "MUT_MAP_TESTS": str(work / "tests.json")}
        cmd = [sys.executable, "-m", "pytest", test_file, "-q", "-m", "not slow", "-p", "no:cacheprovider",
               "-p", "no:randomly", "-p", "no:random_order", "-o", "addopts=", "-p", "mutate_cover_plugin"]
        try:
            subprocess.run(cmd, cwd=tree, env=env, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            pass  # the tests it finished are kept (the plugin writes nothing: none then)
        tests = json.loads((work / "tests.json").read_text()) if (work / "tests.json").exists() else {}
        covers = _covers(tree, data, test_file)
    return {"tests": tests, "covers": {m: {f: sorted(t) for f, t in fs.items()} for m, fs in covers.items()}}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def merge(old: dict | None, found: dict[str, dict], tree: Path, commit: str) -> dict:
    """The map `old` with the test files of `found` (file -> collect_file's answer) replaced by their new runs.
    `tests` holds every test that passed (with its seconds) and each file that ran code outside its tests."""
    old = old or {"files": {}, "tests": [], "failed": [], "covers": {}}

    def kept(test: str) -> bool:
        return test.split("::")[0] not in found

    tests = {t: s for t, s in old["tests"] if kept(t)}
    failed = {t for t in old["failed"] if kept(t)}
    covers: dict[str, dict[str, set[str]]] = {}
    for module, functions in old["covers"].items():
        for function, idx in functions.items():
            ran = {old["tests"][i][0] for i in idx} & set(tests)
            if ran:
                covers.setdefault(module, {})[function] = ran
    for test_file, got in found.items():
        tests.update({t: round(r["seconds"], 2) for t, r in got["tests"].items() if r["outcome"] == "passed"})
        failed |= {t for t, r in got["tests"].items() if r["outcome"] == "failed"}
        for module, functions in got["covers"].items():
            for function, ran in functions.items():
                if test_file in ran:
                    tests[test_file] = round(sum(r["seconds"] for r in got["tests"].values()), 2)
                ran = {t for t in ran if t in tests}
                if ran:
                    covers.setdefault(module, {}).setdefault(function, set()).update(ran)
    order = sorted(tests)
    index = {t: i for i, t in enumerate(order)}
    files = {**old["files"], **{f: sha(tree / f) for f in found}}
    return {"commit": commit, "files": dict(sorted(files.items())), "tests": [[t, tests[t]] for t in order],
            "failed": sorted(failed),
            "covers": {m: {f: sorted(index[t] for t in ts) for f, ts in sorted(fs.items())}
                       for m, fs in sorted(covers.items())}}


def file_seconds(test_map: dict, test_file: str) -> float:
    """The seconds of a test file's passing tests in the map (0.0 if it has none there)."""
    return sum(s for t, s in test_map["tests"] if t.startswith(test_file + "::"))
