"""scripts/mutate.py (the mutation testing of docs/development.md), on a tiny fixture package: its mutants are the
documented small changes, each named by what it changes (the name survives unrelated edits) and applied to the
site's tokens only; a mutant runs the tests the map says run its function; a killing test must pass on the
original; `--changed` draws from the changed lines; the map attributes code run in a subprocess to its test."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("mutate_script", ROOT / "scripts" / "mutate.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  (its dataclasses look their module up)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


SOURCE = '''def f(a: int = 5, b: float = 0.5) -> bool:
    """Docstring 7."""
    x = f"{a + 1:.3f}" + "text"
    return not (a + b < 3 and -a == 2.5)


class C:
    LIMIT = 4

    def g(self, xs):
        return any(x > self.LIMIT for x in xs) or min(xs) is None
'''


def test_each_site_gets_one_small_change_named_by_what_it_changes() -> None:
    mut = _script().mut
    got = {(m.name, m.before, m.after) for m in mut.sites(SOURCE, "p/m.py")}
    assert got == {
        ("p/m.py:f:5→6@\"a: int=5, b: float=0.5\"", "5", "6"),
        ("p/m.py:f:0.5→1.0@\"a: int=5, b: float=0.5\"", "0.5", "1.0"),
        ("p/m.py:f:'not'→''@\"not (a + b < 3 and -a == 2.5)\"", "not (a + b < 3 and -a == 2.5)", "a + b < 3 and -a == 2.5"),
        ("p/m.py:f:'and'→'or'@\"a + b < 3 and -a == 2.5\"", "a + b < 3 and -a == 2.5", "a + b < 3 or -a == 2.5"),
        ("p/m.py:f:'<'→'<='@\"a + b < 3\"", "a + b < 3", "a + b <= 3"),
        ("p/m.py:f:'+'→'-'@\"a + b\"", "a + b", "a - b"),
        ("p/m.py:f:3→4@\"a + b < 3\"", "3", "4"),
        ("p/m.py:f:'=='→'!='@\"-a == 2.5\"", "-a == 2.5", "-a != 2.5"),
        ("p/m.py:f:'-'→''@\"-a\"", "-a", "a"),
        ("p/m.py:f:2.5→5.0@\"-a == 2.5\"", "2.5", "5.0"),
        ("p/m.py:C:4→5@\"LIMIT = 4\"", "4", "5"),
        ("p/m.py:C.g:'or'→'and'@\"any((x > self.LIMIT for x in xs)) or min(xs) is None\"",
         "any((x > self.LIMIT for x in xs)) or min(xs) is None", "any((x > self.LIMIT for x in xs)) and min(xs) is None"),
        ("p/m.py:C.g:'any'→'all'@\"any((x > self.LIMIT for x in xs))\"", "any((x > self.LIMIT for x in xs))",
         "all((x > self.LIMIT for x in xs))"),
        ("p/m.py:C.g:'>'→'>='@\"x > self.LIMIT\"", "x > self.LIMIT", "x >= self.LIMIT"),
        ("p/m.py:C.g:'min'→'max'@\"min(xs)\"", "min(xs)", "max(xs)"),
        ("p/m.py:C.g:'is'→'is not'@\"min(xs) is None\"", "min(xs) is None", "min(xs) is not None"),
    }  # not the annotations, the docstring, the f-string, nor a `+` joining text


def test_a_mutant_changes_only_its_sites_tokens() -> None:
    mut = _script().mut
    lines = SOURCE.splitlines()
    for m in mut.sites(SOURCE, "p/m.py"):
        text = mut.apply(SOURCE, m)
        changed = [i for i, (a, b) in enumerate(zip(lines, text.splitlines())) if a != b]
        assert len(text.splitlines()) == len(lines) and changed == [m.line - 1], m.name
        assert ast.dump(ast.parse(text)) != ast.dump(ast.parse(SOURCE))


def test_and_or_swaps_keep_the_grouping() -> None:
    mut = _script().mut
    source = "def h(a, b, c):\n    return a and b or c\n"
    texts = {m.name.split(":")[2]: mut.apply(source, m) for m in mut.sites(source, "m.py")}
    assert texts["'or'→'and'@\"a and b or c\""] == "def h(a, b, c):\n    return ((a and b) and c)\n"
    assert texts["'and'→'or'@\"a and b\""] == "def h(a, b, c):\n    return (a or b) or c\n"


def test_names_survive_unrelated_edits_and_twins_are_numbered() -> None:
    mut = _script().mut
    source = "def f(n):\n    if n < 2:\n        return 0\n    return n < 2\n"
    before = {m.name for m in mut.sites(source, "m.py")}
    assert "m.py:f:'<'→'<='@\"n < 2\"#1" in before and "m.py:f:'<'→'<='@\"n < 2\"#2" in before
    edited = "import os\n\n\ndef g(x):\n    return x * 2\n\n\n" + source.replace("return 0", "return  0")
    after = {m.name for m in mut.sites(edited, "m.py")}
    assert before <= after and after - before == {"m.py:g:'*'→'/'@\"x * 2\"", "m.py:g:2→3@\"x * 2\""}
    m = mut.find(edited, "m.py", "m.py:f:'<'→'<='@\"n < 2\"#2")
    assert mut.apply(edited, m).splitlines()[-1] == "    return n <= 2"


def test_select_runs_the_tests_of_the_mutants_function(tmp_path: Path) -> None:
    m = _script()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_new.py").write_text("from ganeval.tiny import f\n")  # not in the map: run whole
    (tmp_path / "tests" / "test_old.py").write_text("import ganeval.other\nimport ganeval.tiny\n")  # known: by test
    test_map = {"files": {"tests/test_old.py": m.mutate_map.sha(tmp_path / "tests" / "test_old.py")},
                "tests": [["tests/test_old.py::a", 1.0], ["tests/test_old.py::b", 2.0], ["tests/test_old.py::c", 0.5]],
                "covers": {"ganeval/tiny.py": {"f": [1], "C.g": [0], "C.h": [2]}}}

    def picked(function: str, module: str = "ganeval/tiny.py") -> list[str]:
        mutant = m.mut.Mutant(module, "name", function, 1, "a", "b", 0)
        return [t for t, _ in m.select(test_map, tmp_path, mutant)]

    assert picked("f") == ["tests/test_new.py", "tests/test_old.py::b"]  # its own tests, fastest first
    seconds = dict(m.select(test_map, tmp_path, m.mut.Mutant("ganeval/tiny.py", "name", "f", 1, "a", "b", 0)))
    assert seconds == {"tests/test_new.py": None, "tests/test_old.py::b": 2.0}  # not in the map: seconds unknown
    assert picked("C") == ["tests/test_new.py", "tests/test_old.py::c", "tests/test_old.py::a"]  # its methods'
    assert picked("<module>") == ["tests/test_new.py", "tests/test_old.py"]  # import time: the naming files whole
    assert picked("g", "ganeval/other.py") == ["tests/test_old.py"]  # no test ran it: the files naming it
    (tmp_path / "tests" / "test_far.py").write_text("def test_renamed():\n    pass\n")  # names no module of ours
    test_map["tests"].append(["tests/test_far.py::test_old_name", 0.1])
    test_map["files"]["tests/test_far.py"] = "the sha of an older text"
    test_map["covers"]["ganeval/tiny.py"]["f"].append(3)
    assert picked("f") == ["tests/test_new.py", "tests/test_old.py::b", "tests/test_far.py"]  # changed: run whole
    (tmp_path / "tests" / "test_far.py").unlink()
    assert picked("f") == ["tests/test_new.py", "tests/test_old.py::b"]  # deleted: dropped


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


def test_changed_draws_from_the_lines_changed_since_a_revision(tmp_path: Path) -> None:
    m = _script()
    pkg = tmp_path / "ganeval"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * 2\n")
    (pkg / "b.py").write_text("def h(x):\n    return x - 1\n")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "one")
    _git(tmp_path, "checkout", "-qb", "other")  # a branch that moved on after ours left: not our change
    (pkg / "b.py").write_text("def h(x):\n    return x - 2\n")
    _git(tmp_path, "commit", "-qam", "theirs")
    _git(tmp_path, "checkout", "-q", "main")
    (pkg / "a.py").write_text("def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * 3 < 7\n")  # ours, not committed
    assert m.changed_lines("HEAD", tmp_path) == {"ganeval/a.py": {6}}
    assert m.changed_lines("other", tmp_path) == {"ganeval/a.py": {6}}
    assert {x.name for x in m.changed_pool("HEAD", tmp_path)} == {
        "ganeval/a.py:g:'*'→'/'@\"x * 3\"", "ganeval/a.py:g:3→4@\"x * 3\"", "ganeval/a.py:g:'<'→'<='@\"x * 3 < 7\"",
        "ganeval/a.py:g:7→8@\"x * 3 < 7\""}


TINY = '''def double(x):
    return 2 * x


def spin(n):
    while n < 3:
        n = n - 1
    return n
'''
TINY_TESTS = '''from ganeval.tiny import double, spin


def test_double():
    assert double(3) == 6


def test_spin():
    assert spin(5) == 5
'''


def _tiny_tree(root: Path) -> Path:
    (root / "ganeval").mkdir(parents=True)
    (root / "ganeval" / "__init__.py").write_text("")
    (root / "ganeval" / "tiny.py").write_text(TINY)
    (root / "tests").mkdir()
    (root / "tests" / "test_tiny.py").write_text(TINY_TESTS)
    return root


def test_a_mutant_is_killed_by_a_failing_test_that_passes_on_the_original(tmp_path: Path) -> None:
    m = _script()
    tree = _tiny_tree(tmp_path)
    by = {x.name: x for x in m.mut.sites(TINY, "ganeval/tiny.py")}
    killed = m.run_one(tree, by["ganeval/tiny.py:double:2→3@\"2 * x\""], [("tests/test_tiny.py::test_double", 0.1)],
                       3.0, 60.0)
    assert killed["outcome"] == "failed" and killed["killed"] and killed["killed_by"] == "tests/test_tiny.py::test_double"
    assert (tree / "ganeval" / "tiny.py").read_text() == TINY  # restored
    survived = m.run_one(tree, by["ganeval/tiny.py:double:2→3@\"2 * x\""], [("tests/test_tiny.py::test_spin", 0.1)],
                         3.0, 60.0)
    assert survived["outcome"] == "passed" and not survived["killed"]
    endless = m.run_one(tree, by["ganeval/tiny.py:spin:'-'→'+'@\"n - 1\""], [("tests/test_tiny.py::test_spin", 0.1)],
                        1.0, 0.0)  # n < 3 never ends: its timeout is 1 × 0.1 s + 0
    assert endless["outcome"] == "timeout" and endless["killed"]
    (tree / "tests" / "test_tiny.py").write_text(TINY_TESTS + "\n\ndef test_broken():\n    assert False\n")
    flaky = m.run_one(tree, by["ganeval/tiny.py:double:2→3@\"2 * x\""], [("tests/test_tiny.py::test_broken", 0.1)],
                      3.0, 60.0)
    assert flaky["outcome"] == "flaky" and not flaky["killed"]  # it fails on the original too: not this mutant's
    assert m.run_one(tree, by["ganeval/tiny.py:double:2→3@\"2 * x\""], [], 3.0, 60.0)["outcome"] == "no test runs it"


def test_the_map_attributes_code_run_in_a_subprocess_to_its_test(tmp_path: Path) -> None:
    pytest.importorskip("coverage")
    m = _script()
    tree = _tiny_tree(tmp_path)
    (tree / "tests" / "test_tiny.py").write_text(TINY_TESTS + textwrap.dedent('''
        import os, subprocess, sys

        def test_in_a_child():
            code = "from ganeval.tiny import spin; assert spin(4) == 4"
            subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))
        '''))
    found = m.mutate_map.collect_file(tree, "tests/test_tiny.py", 300.0)
    assert {t: r["outcome"] for t, r in found["tests"].items()} == {
        "tests/test_tiny.py::test_double": "passed", "tests/test_tiny.py::test_spin": "passed",
        "tests/test_tiny.py::test_in_a_child": "passed"}
    assert found["covers"]["ganeval/tiny.py"] == {
        "double": ["tests/test_tiny.py::test_double"],
        "spin": ["tests/test_tiny.py::test_in_a_child", "tests/test_tiny.py::test_spin"]}
    merged = m.mutate_map.merge(None, {"tests/test_tiny.py": found}, tree, "abc")
    assert [t for t, _ in merged["tests"]] == sorted(found["tests"])
    assert {f: [merged["tests"][i][0] for i in ids] for f, ids in merged["covers"]["ganeval/tiny.py"].items()} == \
        found["covers"]["ganeval/tiny.py"]


def test_list_prints_the_draw_by_name() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "scripts/mutate.py", "--list", "--count", "5", "--seed", "1",
                          "--modules", "ganeval/metrics/kid.py"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True, env=env).stdout.splitlines()
    assert len(out) == 5
    for line in out:
        found = re.fullmatch(r"(ganeval/metrics/kid\.py:\S+:.+→.*@\".*\"(?:#\d+)?)  \(line \d+; \d+ tests\)", line)
        assert found is not None, line
    again = subprocess.run([sys.executable, "scripts/mutate.py", "--list", "--only", out[0].split("  (")[0]],
                           cwd=ROOT, capture_output=True, text=True, timeout=300, check=True, env=env).stdout
    assert again.splitlines() == out[:1]


def test_score_counts_equivalent_mutants_apart(tmp_path: Path) -> None:
    m = _script()
    records = [{"name": "a", "module": "ganeval/metrics/x.py", "killed": True, "outcome": "failed"},
               {"name": "b", "module": "ganeval/metrics/x.py", "killed": False, "outcome": "passed"},
               {"name": "c", "module": "ganeval/common.py", "killed": False, "outcome": "no test runs it"},
               {"name": "d", "module": "ganeval/common.py", "killed": False, "outcome": "passed"},
               {"name": "e", "module": "ganeval/common.py", "killed": False, "outcome": "flaky"}]
    lines = m.score(records, {"d": "a timeout's length"})
    assert "| ganeval/metrics | 1 | 1 | 0 | 0 | 50.0 % |" in lines
    assert "| ganeval | 0 | 1 | 1 | 1 | 0.0 % |" in lines and "| all | 1 | 2 | 1 | 1 | 33.3 % |" in lines
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "eq.json").write_text(json.dumps({"d": "why"}))
    out = subprocess.run([sys.executable, "scripts/mutate.py", "--score", str(log), "--equivalent",
                          str(tmp_path / "eq.json")], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         check=True).stdout
    assert "| all | 1 | 2 | 1 | 1 | 33.3 % |" in out


def _killed(mutant) -> dict:  # type: ignore[no-untyped-def]
    """The record `run_one` gives a mutant a test killed."""
    return {"name": mutant.name, "module": mutant.module, "line": mutant.line, "before": mutant.before,
            "after": mutant.after, "killed": True, "outcome": "failed", "tests": 0, "seconds": 0.0}


def _fake_runs(m, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, run_one) -> Path:  # type: ignore[no-untyped-def]
    """`m.run` on the tiny tree with `run_one` standing in for running each mutant; the log's path."""
    monkeypatch.setattr(m, "run_one", run_one)
    monkeypatch.setattr(m, "ROOT", _tiny_tree(tmp_path / "tree"))
    monkeypatch.setattr(m, "copy_tree", lambda root, dest: None)
    return tmp_path / "log.jsonl"


def test_a_run_resumes_its_log_and_runs_the_rest_in_the_seeds_shuffled_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log that exists is resumed: its mutants are counted, not run again; the others run in an order shuffled by
    the seed (a run stopped early has run a random part of the draw), the same order for the same seed."""
    import argparse

    m = _script()
    chosen = m.mut.sites(TINY, "ganeval/tiny.py")
    assert len(chosen) >= 4
    ran: list[str] = []

    def fake_run_one(tree, mutant, tests, factor, base, slow=False):  # type: ignore[no-untyped-def]
        ran.append(mutant.name)
        return _killed(mutant)

    log = _fake_runs(m, monkeypatch, tmp_path, fake_run_one)
    first = chosen[1]
    log.write_text(json.dumps({"name": first.name, "module": first.module, "line": first.line, "before": "",
                               "after": "", "killed": False, "outcome": "passed"}) + "\n")
    args = argparse.Namespace(log=log, seed=7, timeout_factor=3.0, timeout_base=60.0)
    m.run(args, chosen, {"files": {}, "tests": [], "covers": {}}, {})
    assert first.name not in ran and sorted(ran) == sorted(x.name for x in chosen if x is not first)
    assert len(log.read_text().splitlines()) == len(chosen)  # the logged one kept, each other appended once
    again, ran[:] = list(ran), []
    log.unlink()
    m.run(args, chosen, {"files": {}, "tests": [], "covers": {}}, {})
    assert ran != [x.name for x in chosen]  # shuffled, not in source order (seed 7: one order of 6! = 720)
    assert [x for x in ran if x != first.name] == again  # the seed's order again


def test_jobs_run_each_mutant_once_each_in_a_tree_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs 2: two mutants at a time, never two in one copy of the tree (a mutant is written into its tree's
    module), every mutant run and logged once."""
    import argparse
    import threading
    import time

    m = _script()
    chosen = m.mut.sites(TINY, "ganeval/tiny.py")
    busy: dict[str, str] = {}
    seen: list[tuple[str, str]] = []
    most = [0]
    lock = threading.Lock()

    def fake_run_one(tree, mutant, tests, factor, base, slow=False):  # type: ignore[no-untyped-def]
        with lock:
            assert str(tree) not in busy, f"{mutant.name} given the tree {busy.get(str(tree))} is in"
            busy[str(tree)] = mutant.name
            most[0] = max(most[0], len(busy))
            seen.append((mutant.name, str(tree)))
        time.sleep(0.2)
        with lock:
            del busy[str(tree)]
        return _killed(mutant)

    log = _fake_runs(m, monkeypatch, tmp_path, fake_run_one)
    m.run(argparse.Namespace(log=log, seed=7, timeout_factor=3.0, timeout_base=60.0, jobs=2), chosen,
          {"files": {}, "tests": [], "covers": {}}, {})
    assert sorted(n for n, _ in seen) == sorted(x.name for x in chosen)
    assert most[0] == 2 and len({t for _, t in seen}) == 2
    assert sorted(json.loads(x)["name"] for x in log.read_text().splitlines()) == sorted(x.name for x in chosen)
    with pytest.raises(SystemExit):
        m._args(["--jobs", "0"])


def test_a_fast_test_has_known_seconds_and_each_test_its_own_timeout(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A test the map timed at 0.0 s (under 5 ms) is known, not unknown: the run's timeout is 3 × the seconds + 60,
    not 30 min; each test's own timeout is 3 × the slowest + 60 (a mutant that hangs a test is judged at once).
    Only a test file of unknown seconds gives 30 min and no timeout of its own."""
    m = _script()
    tree = _tiny_tree(tmp_path)
    calls: list[tuple[float, float | None]] = []

    def fake_pytest(tree, tests, timeout, per_test=None):  # type: ignore[no-untyped-def]
        calls.append((timeout, per_test))
        return "passed", 0.1, ""

    monkeypatch.setattr(m, "_pytest", fake_pytest)
    mutant = m.mut.sites(TINY, "ganeval/tiny.py")[0]
    m.run_one(tree, mutant, [("tests/test_tiny.py::test_double", 0.0), ("tests/test_tiny.py::test_spin", 2.0)], 3.0, 60.0)
    m.run_one(tree, mutant, [("tests/test_tiny.py::test_double", 1.0), ("tests/test_new.py", None)], 3.0, 60.0)
    assert calls == [(66.0, 66.0), (1800.0, None)]


def test_the_documented_commands_parse_and_name_what_exists() -> None:
    """Each `scripts/mutate.py` command of docs/development.md's command block and of the script's help: its flags parse, the mutants it
    names (--only) and the files it reads (--score, --modules, the folder of --log) exist; --score runs verbatim.
    (The others run for minutes to hours: their parts are tested above on the tiny tree.)"""
    import shlex

    m = _script()
    text = (ROOT / "docs" / "development.md").read_text() + "\n" + (m.__doc__ or "")
    commands = [shlex.split(line, comments=True) for line in text.splitlines()
                if re.match(r"^    (nice -n \d+ )?python scripts/mutate\.py ", line)]
    assert len(commands) >= 10
    for words in commands:
        argv = words[words.index("scripts/mutate.py") + 1:]
        args = m._args(argv)
        if args.only:
            assert [x.name for x in m.named(ROOT, args.only)] == args.only
        for path in [args.score, *(args.modules or [])]:
            assert path is None or (ROOT / path).is_file(), (argv, path)
        assert args.log is None or (ROOT / args.log).parent.is_dir()
        if args.score:
            out = subprocess.run([sys.executable, "scripts/mutate.py", *argv], cwd=ROOT, capture_output=True,
                                 text=True, timeout=300, check=True).stdout
            assert "| all |" in out


def test_a_collection_error_in_a_file_of_slow_tests_only_is_a_kill(tmp_path: Path) -> None:
    """A mutant that breaks a test file at import is killed, though every test of that file is slow: on the original
    the file collects and runs nothing (pytest's exit code 5), which is no failure, so the kill is not `flaky`."""
    m = _script()
    tree = _tiny_tree(tmp_path)
    (tree / "tests" / "test_slow_only.py").write_text(
        "import pytest\nfrom ganeval.tiny import double\n\nassert double(1) == 2\n\n\n@pytest.mark.slow\n"
        "def test_later():\n    pass\n")
    by = {x.name: x for x in m.mut.sites(TINY, "ganeval/tiny.py")}
    got = m.run_one(tree, by["ganeval/tiny.py:double:2→3@\"2 * x\""], [("tests/test_slow_only.py", 0.1)], 3.0, 60.0)
    assert got["outcome"] == "failed" and got["killed"] and got["killed_by"] == "tests/test_slow_only.py"


def test_a_test_id_in_a_file_that_no_longer_imports_is_a_kill(tmp_path: Path) -> None:
    """A mutant that makes a test file fail at import, selected by test id beside other files: pytest finds no
    collector for the id and exits 4 ("usage error"), after naming the file's collection error; that is a kill."""
    m = _script()
    tree = _tiny_tree(tmp_path)
    (tree / "tests" / "test_import.py").write_text(
        "from ganeval.tiny import double\n\nassert double(1) == 2\n\n\ndef test_it():\n    pass\n")
    by = {x.name: x for x in m.mut.sites(TINY, "ganeval/tiny.py")}
    got = m.run_one(tree, by["ganeval/tiny.py:double:2→3@\"2 * x\""],
                    [("tests/test_tiny.py::test_spin", 0.1), ("tests/test_import.py::test_it", 0.1)], 3.0, 60.0)
    assert got["outcome"] == "failed" and got["killed"] and got["killed_by"] == "tests/test_import.py"


def test_the_failing_test_is_read_from_the_summary_not_from_a_captured_log(tmp_path: Path) -> None:
    """A failing test that logged an error: pytest prints the captured record ("ERROR    logger:file:line ...")
    before its summary line; the kill is the test's, which passes on the original, not `flaky`."""
    m = _script()
    tree = _tiny_tree(tmp_path)
    (tree / "tests" / "test_logs.py").write_text(
        "import logging\nfrom ganeval.tiny import double\n\n\ndef test_logged():\n"
        "    logging.getLogger('x').error('Error getting object')\n    assert double(1) == 2\n")
    by = {x.name: x for x in m.mut.sites(TINY, "ganeval/tiny.py")}
    got = m.run_one(tree, by["ganeval/tiny.py:double:2→3@\"2 * x\""], [("tests/test_logs.py::test_logged", 0.1)],
                    3.0, 60.0)
    assert got["outcome"] == "failed" and got["killed_by"] == "tests/test_logs.py::test_logged"


def test_the_slow_stage_meets_a_survivor_with_the_slow_tests_ci_runs(tmp_path: Path) -> None:
    """With `slow`, a mutant the fast tests leave alive is killed by a slow-marked test of a file that names its
    module (the map knows fast tests only); without it, or where no slow test catches it, it survives; a mutant the
    fast tests kill never meets the slow ones."""
    m = _script()
    tree = _tiny_tree(tmp_path)
    (tree / "tests" / "test_tiny_slow.py").write_text(
        "import pytest\nfrom ganeval.tiny import double\n\n\n@pytest.mark.slow\ndef test_double_slowly():\n"
        "    assert double(4) == 8\n\n\ndef test_fast_and_blind():\n    assert double(0) == 0\n")
    by = {x.name: x for x in m.mut.sites(TINY, "ganeval/tiny.py")}
    doubled, spun = by["ganeval/tiny.py:double:2→3@\"2 * x\""], by["ganeval/tiny.py:spin:'<'→'<='@\"n < 3\""]
    blind = [("tests/test_tiny.py::test_spin", 0.1)]
    assert m.run_one(tree, doubled, blind, 3.0, 60.0)["outcome"] == "passed"
    got = m.run_one(tree, doubled, blind, 3.0, 60.0, slow=True)
    assert got["killed"] and got["stage"] == "slow"
    assert got["killed_by"] == "tests/test_tiny_slow.py::test_double_slowly"
    alive = m.run_one(tree, spun, blind, 3.0, 60.0, slow=True)  # spin(5) never enters the loop; no slow test of it
    assert alive["outcome"] == "passed" and not alive["killed"] and alive["stage"] == "slow"
    fast = m.run_one(tree, doubled, [("tests/test_tiny.py::test_double", 0.1)], 3.0, 60.0, slow=True)
    assert fast["killed"] and fast["stage"] == "fast" and fast["killed_by"] == "tests/test_tiny.py::test_double"
    none = m.run_one(tree, doubled, [], 3.0, 60.0, slow=True)  # the map has no test of it: the slow files may
    assert none["killed"] and none["stage"] == "slow"
    assert (tree / "ganeval" / "tiny.py").read_text() == TINY


def test_a_default_or_decorator_mutant_runs_the_files_that_name_its_module(tmp_path: Path) -> None:
    """A default, a decorator or a module-level constant is evaluated when the module is imported and read by callers,
    signatures and importers, so a test may catch its mutant without running the function: such a mutant also runs
    the module's naming files whole."""
    m = _script()
    src = "import functools\n\n\n@functools.lru_cache(maxsize=4)\ndef f(n=1000, *, k=3):\n    return n + k\n"
    by = {x.name: x for x in m.mut.sites(src, "ganeval/tiny.py")}
    assert by["ganeval/tiny.py:f:1000→1001@\"n=1000, *, k=3\""].header
    assert by["ganeval/tiny.py:f:3→4@\"n=1000, *, k=3\""].header
    assert by["ganeval/tiny.py:f:4→5@\"maxsize=4\""].header
    assert not by["ganeval/tiny.py:f:'+'→'-'@\"n + k\""].header
    (tmp_path / "tests").mkdir()
    for name, text in (("test_sig.py", "import inspect\nfrom ganeval.tiny import f\n"), ("test_call.py", "import ganeval.tiny\n")):
        (tmp_path / "tests" / name).write_text(text)
    test_map = {"files": {f"tests/{n}": m.mutate_map.sha(tmp_path / "tests" / n) for n in ("test_sig.py", "test_call.py")},
                "tests": [["tests/test_call.py::test_f", 1.0]], "covers": {"ganeval/tiny.py": {"f": [0]}}}
    picked = [t for t, _ in m.select(test_map, tmp_path, by["ganeval/tiny.py:f:1000→1001@\"n=1000, *, k=3\""])]
    assert sorted(picked) == ["tests/test_call.py", "tests/test_sig.py"]
    assert [t for t, _ in m.select(test_map, tmp_path, by["ganeval/tiny.py:f:'+'→'-'@\"n + k\""])] == \
        ["tests/test_call.py::test_f"]
    [top] = m.mut.sites("LIMIT = 8\n", "ganeval/tiny.py")  # module level: run at import, read by importers
    assert sorted(t for t, _ in m.select(test_map, tmp_path, top)) == ["tests/test_call.py", "tests/test_sig.py"]
    [frozen] = m.mut.sites("@dataclass(frozen=True)\nclass C:\n    x: int = 1\n", "ganeval/tiny.py")[:1]
    assert frozen.header and frozen.function == "C"


def test_a_slow_stage_that_runs_long_is_not_a_kill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The slow stage's whole run past its timeout is no kill (slow tests may simply be many); only a test past its
    own timeout fails, as in CI."""
    m = _script()
    tree = _tiny_tree(tmp_path)
    by = {x.name: x for x in m.mut.sites(TINY, "ganeval/tiny.py")}
    real = m._pytest
    monkeypatch.setattr(m, "_pytest", lambda tree, tests, timeout, per_test=None, marks="not slow":
                        ("timeout", timeout, "") if marks == "slow" else real(tree, tests, timeout, per_test, marks))
    got = m.run_one(tree, by["ganeval/tiny.py:double:2→3@\"2 * x\""], [("tests/test_tiny.py::test_spin", 0.1)], 3.0,
                    60.0, slow=True)
    assert got["outcome"] == "slow stage timed out" and not got["killed"] and got["stage"] == "slow"
    assert m.score([got], {})[-1] == "| all | 0 | 0 | 0 | 1 | 0.0 % |"
