"""Mutation testing of ganeval/: do the tests catch small bugs?

Draws mutants (scripts/mutants.py: operator swaps, comparison flips, `and`↔`or`, a dropped `not` or minus, n → n+1,
x → 2x, True↔False, any↔all, min↔max), each named by file, function, change and the expression around it, from
every module of ganeval/ (each site equally likely) with --seed, and runs them in an order shuffled by the seed
(a run stopped early has run a random part of the draw); for each one writes the mutated module into a
copy of the tree and runs there the tests that run the mutant's function (the map of scripts/mutate_map.py, at
results/reference/mutation/test_map.json; for a test file the map does not know, the whole file if it imports the
module), `-m "not slow"`, fastest first, stopping at the first failure, under a timeout of --timeout-factor times
their seconds in the map plus --timeout-base (and for each test, the same of the slowest one's seconds), --jobs at
a time. With --slow, a mutant those leave alive then meets the slow-marked tests of the files that name its module or
hold its tests (CI runs them too; the map knows fast tests only). Killed: a test fails (and passes again on the
original: else the mutant is counted `flaky`) or the run times out. Survived: every test passes, or no test runs the
function.
Writes one JSON line per mutant to --log (an existing log is resumed: its mutants are not run again) and prints
the score by package; mutants named in --equivalent (a JSON object, name → why) count as equivalent, not survived.

    nice -n 10 python scripts/mutate.py --count 160 --seed 5601 --log results/reference/mutation/sample_5601.jsonl
    python scripts/mutate.py --count 160 --seed 5603 --slow --jobs 2 --log results/reference/mutation/sample_5603.jsonl
    python scripts/mutate.py --changed main --jobs 2   # before a merge: mutants in the lines changed since main
    python scripts/mutate.py --list --count 20         # the drawn mutants only, nothing run
    python scripts/mutate.py --only "ganeval/metrics/kid.py:mmd2_from_sums:'-'→'+'@\\"m - 1\\""
    python scripts/mutate.py --score results/reference/mutation/sample_5601.jsonl   # a log's score again
    nice -n 10 python scripts/mutate.py --map          # the test map again (every test file; or name some)
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutants as mut
import mutate_map

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "results" / "reference" / "mutation" / "test_map.json"
EQUIVALENT = ROOT / "results" / "reference" / "mutation" / "equivalent.json"
PACKAGE = "ganeval"


def modules(root: Path = ROOT) -> list[str]:
    """Every module of the package, as paths relative to `root`."""
    return sorted(p.relative_to(root).as_posix() for p in (root / PACKAGE).rglob("*.py"))


def all_sites(root: Path, names: list[str]) -> list[mut.Mutant]:
    return [m for name in names for m in mut.sites((root / name).read_text(), name)]


def draw(pool: list[mut.Mutant], count: int, seed: int) -> list[mut.Mutant]:
    """`count` mutants of `pool`, each equally likely, drawn without replacement with `seed`, in source order."""
    chosen = random.Random(seed).sample(range(len(pool)), min(count, len(pool)))
    return [pool[i] for i in sorted(chosen)]


def changed_lines(rev: str, root: Path = ROOT) -> dict[str, set[int]]:
    """module -> the lines (of the file as it is now, uncommitted edits included) added or changed since this
    branch left `rev` (their merge base: what `rev` changed since is not this branch's), for every module changed."""
    base = subprocess.run(["git", "merge-base", rev, "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()
    diff = subprocess.run(["git", "diff", "--unified=0", "--no-color", base, "--", PACKAGE], cwd=root,
                          capture_output=True, text=True, check=True).stdout
    out: dict[str, set[int]] = {}
    module = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:].removeprefix("b/")
            module = name if name.endswith(".py") and (root / name).is_file() else None
            if module:
                out.setdefault(module, set())
        elif line.startswith("@@") and module:
            found = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            assert found is not None, line
            start, n = int(found.group(1)), int(found.group(2) or 1)
            out[module].update(range(start, start + n))
    return out


def changed_pool(rev: str, root: Path = ROOT) -> list[mut.Mutant]:
    """The mutants on the lines changed since `rev`; where a changed module has none there, all of its mutants."""
    pool = []
    for module, lines in sorted(changed_lines(rev, root).items()):
        sites = mut.sites((root / module).read_text(), module)
        pool += [m for m in sites if m.line in lines] or sites
    return pool


def named(root: Path, names: list[str]) -> list[mut.Mutant]:
    """The mutants called `names` (as --list prints them)."""
    out = []
    for name in names:
        module = name.split(":", 1)[0]
        if not (root / module).is_file():
            raise SystemExit(f"--only: no module {module!r} (a name starts with its file, e.g. ganeval/fid.py:…)")
        try:
            out.append(mut.find((root / module).read_text(), module, name))
        except KeyError:
            raise SystemExit(f"--only: {module} has no mutant {name!r} (--list --count 100000 prints them all)") from None
    return out


def _imports(test: Path) -> frozenset[str]:
    """The package's modules a test file names: its imports and dotted names in its text (monkeypatch targets)."""
    return _names_in(test.read_text())


@functools.lru_cache(maxsize=None)
def _names_in(text: str) -> frozenset[str]:  # parsed once per text: every mutant asks of every test file
    names = set(re.findall(rf"\b{PACKAGE}(?:\.\w+)+", text))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == PACKAGE:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return frozenset(names)


def naming_tests(root: Path, module: str) -> list[str]:
    """The test files that name `module` (import it or a name in it, or spell its dotted name)."""
    dotted = module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return [test.relative_to(root).as_posix() for test in sorted((root / "tests").glob("test_*.py"))
            if any(n == dotted or n.startswith(dotted + ".") for n in _imports(test))]


def select(test_map: dict, root: Path, m: mut.Mutant) -> list[tuple[str, float | None]]:
    """(test, seconds in the map) to run for `m`: the map's tests that ran its function; else (a class body, module
    level, a function no test ran) those that ran a function of its class, else of its module; else every test
    file that names the module. A mutant at module level or in a function's defaults or decorators also runs the
    files that name the module whole (run at import: a test may read a constant or a default without running any
    function). Test files the map does not know or that changed since (new tests) run whole when
    they name the module, as does a changed file of the map's tests (they may have been renamed; their seconds: None,
    unknown: the timeout is then 30 min); a deleted file's tests are dropped. Those of the files that name the
    module come first, each part fastest first."""
    functions = test_map["covers"].get(m.module, {})
    idx = set(functions.get(m.function, []))
    if not idx:
        prefix = "" if m.function == "<module>" else m.function + "."
        idx = {i for f, ids in functions.items() if f.startswith(prefix) for i in ids}
    if not idx:
        idx = {i for ids in functions.values() for i in ids}
    tests = [(t, s) for t, s in (test_map["tests"][i] for i in idx)]
    naming = naming_tests(root, m.module)
    mapped = {t.split("::")[0] for t, _ in tests}
    gone = {f for f in mapped if not (root / f).is_file()}
    stale = sorted(f for f in (mapped - gone) | set(naming) if test_map["files"].get(f) != mutate_map.sha(root / f))
    whole = stale if tests else naming  # a changed file's tests may have been renamed: it runs whole
    if m.header or m.function == "<module>":  # run at import, read by callers, signatures and importers
        whole = sorted(set(whole) | set(naming))
    tests = [(t, s) for t, s in tests if t.split("::")[0] not in whole and t.split("::")[0] not in gone]
    tests += [(f, None if f in stale or f not in test_map["files"] else mutate_map.file_seconds(test_map, f))
              for f in whole]  # None: seconds unknown
    near = set(naming)  # the module's own test files first: the likeliest to fail, so the quickest verdict
    return sorted(tests, key=lambda ts: (ts[0].split("::")[0] not in near, ts[1] or 0.0, ts[0]))


def _pytest(tree: Path, tests: list[str], timeout: float, per_test: float | None = None,
            marks: str = "not slow") -> tuple[str, float, str]:
    """(outcome: 'passed' | 'failed' (rc 1; or 2, or 4 with "found no collectors": a collection error; a test past
    `per_test` seconds fails) |
    'no test runs it' (rc 5: all deselected) | 'timeout' (the whole run past `timeout`) | 'error (rc N)', seconds,
    the first failed test or file) of the tests of `tests` that `marks` selects."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-rfE", "-p", "no:cacheprovider", "-m", marks,
           "-p", "no:randomly", "-p", "no:random_order", "-o", "addopts=", "--timeout", str(int(per_test or timeout))]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # its own process group: the commands tests start end with it
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "timeout", time.perf_counter() - t0, ""
    seconds = time.perf_counter() - t0
    # the summary's "FAILED id" / "ERROR file" (one space), not a captured log record ("ERROR    logger:file:line")
    first = re.search(r"^(?:FAILED|ERROR) (\S.*?)(?: - .*)?$", out, re.MULTILINE)
    outcome = {0: "passed", 1: "failed", 2: "failed", 5: "no test runs it"}.get(  # 5: every test deselected (slow)
        proc.returncode, f"error (rc {proc.returncode})")
    if proc.returncode == 4 and first and re.search(r"^ERROR: found no collectors for ", out, re.MULTILINE):
        outcome = "failed"  # a test id in a file that no longer imports: pytest says "usage error" (4), it is a failure
    return outcome, seconds, first.group(1) if first else ""


def copy_tree(root: Path, dest: Path) -> None:
    """The files git tracks or would track (not ignored) of `root`, copied to `dest`."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (root / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, dest / rel)


def _write(path: Path, text: str) -> None:
    """Write a module and drop its compiled copy (a same-size edit within one second could otherwise reuse it)."""
    path.write_text(text)
    Path(importlib.util.cache_from_source(str(path))).unlink(missing_ok=True)


SLOW_TIMEOUT = 1800.0  # seconds for one slow-marked test (tests/conftest.py's SLOW_TIMEOUT) and for the slow stage


def slow_files(root: Path, m: mut.Mutant, tests: list[tuple[str, float | None]]) -> list[str]:
    """The test files whose slow-marked tests may run `m`'s function (the map holds fast tests only): those that name
    its module and those of its fast tests."""
    files = {t.split("::")[0] for t, _ in tests} | set(naming_tests(root, m.module))
    return sorted(f for f in files if (root / f).is_file())


def run_one(tree: Path, m: mut.Mutant, tests: list[tuple[str, float | None]], factor: float, base: float,
            slow: bool = False) -> dict:
    """Run `m` against `tests` in `tree` (`-m "not slow"`); with `slow`, a mutant they leave alive then meets the
    slow-marked tests of `slow_files` too, as CI runs them: a slow test past SLOW_TIMEOUT fails (as in CI), while
    the whole slow stage running long is not a kill ('slow stage timed out', counted as not run). The module is
    restored after."""
    rec: dict = {"name": m.name, "module": m.module, "function": m.function, "line": m.line, "before": m.before,
                 "after": m.after, "tests": len(tests)}
    later = slow_files(tree, m, tests) if slow else []
    if not tests and not later:
        return {**rec, "outcome": "no test runs it", "killed": False, "killed_by": "", "seconds": 0.0}
    path = tree / m.module
    original = path.read_text()
    seconds = [s for _, s in tests if s is not None]  # a test of 0.0 s is known (fast); None is not known
    unknown = len(seconds) < len(tests)
    timeout = max(base + factor * sum(seconds), 1800.0) if unknown else base + factor * sum(seconds)
    per_test = None if unknown or not seconds else base + factor * max(seconds)  # a hung test fails at its own timeout
    stage, marks = "fast", "not slow"
    _write(path, mut.apply(original, m))
    try:
        outcome, seconds, first = (_pytest(tree, [t for t, _ in tests], timeout, per_test) if tests else
                                   ("no test runs it", 0.0, ""))
        if later and outcome in ("passed", "no test runs it"):  # CI runs the slow tests too: they may catch it
            stage, marks = "slow", "slow"
            fast = outcome
            outcome, more, first = _pytest(tree, later, SLOW_TIMEOUT * (1 + len(later)), SLOW_TIMEOUT, marks)
            outcome = {"no test runs it": fast,  # no slow test there: the fast verdict
                       "timeout": "slow stage timed out"}.get(outcome, outcome)  # long, not hung: each test has its own
            seconds += more
    finally:
        _write(path, original)
    if outcome == "failed":  # the failing test must pass on the original: else it is not this mutant's
        again, _, _ = _pytest(tree, [first] if first else ([t for t, _ in tests] if stage == "fast" else later),
                              max(timeout, 300.0) if stage == "fast" else SLOW_TIMEOUT, marks=marks)
        outcome = outcome if again in ("passed", "no test runs it") else "flaky"  # a file's tests all slow: none ran
    killed = outcome in ("failed", "timeout")
    out = {**rec, "outcome": outcome, "killed": killed, "killed_by": first, "seconds": round(seconds, 1),
           "timeout": round(timeout)}
    return {**out, "stage": stage, "slow_files": len(later)} if slow else out


def package(module: str) -> str:
    parts = module.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else PACKAGE


def score(records: list[dict], equivalent: dict[str, str]) -> list[str]:
    """The score by package: killed, survived, equivalent, not run; killed as a share of killed + survived."""
    table: dict[str, list[int]] = {}
    for r in records:
        row = table.setdefault(package(r["module"]), [0, 0, 0, 0])
        if r["name"] in equivalent:
            row[2] += 1
        elif r["killed"]:
            row[0] += 1
        elif r["outcome"] in ("passed", "no test runs it"):
            row[1] += 1
        else:
            row[3] += 1
    table["all"] = [sum(col) for col in zip(*table.values())] if table else [0, 0, 0, 0]
    lines = ["| package | killed | survived | equivalent | not run | killed / (killed + survived) |",
             "|---|---|---|---|---|---|"]
    for name, (k, s, e, n) in table.items():
        lines.append(f"| {name} | {k} | {s} | {e} | {n} | {100 * k / max(k + s, 1):.1f} % |")
    return lines


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=150, help="mutants drawn (default 150)")
    ap.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0)")
    ap.add_argument("--modules", nargs="+", metavar="PATH", help="draw only from these modules (default: all)")
    ap.add_argument("--changed", metavar="REV", help="draw from the lines this branch changed since it left REV "
                    "(git diff from their merge base, uncommitted edits included; all of a changed module's mutants "
                    "where none is on them); --count defaults to 10 then")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run these mutants (as --list names them)")
    ap.add_argument("--list", action="store_true", help="print the drawn mutants and their tests' count; run none")
    ap.add_argument("--log", type=Path, help="a JSON line per mutant, appended as each finishes")
    ap.add_argument("--score", type=Path, metavar="LOG", help="print the score of a log and stop")
    ap.add_argument("--equivalent", type=Path, default=EQUIVALENT, help="JSON object: mutant name -> why it is "
                    "equivalent (default results/reference/mutation/equivalent.json)")
    ap.add_argument("--map", nargs="*", metavar="TEST_FILE", help="run these test files (default: all) under "
                    "coverage and store which tests run each function in --map-file; nothing else")
    ap.add_argument("--map-file", type=Path, default=MAP, help="the test map (default %(default)s)")
    ap.add_argument("--timeout-factor", type=float, default=3.0, help="a mutant's timeout: this times its tests' "
                    "seconds in the map, plus --timeout-base (default 3)")
    ap.add_argument("--timeout-base", type=float, default=60.0, help="seconds (default 60: pytest's start)")
    ap.add_argument("--slow", action="store_true", help="a mutant the fast tests leave alive then meets the "
                    "slow-marked tests of the files that name its module or hold its tests (CI runs them too; the "
                    "map knows fast tests only): the suite as CI runs it, at the cost of a slow stage per survivor")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own copy of the tree "
                    "(default 1; more only with a core free for each: a test's timeout is measured alone)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.changed and "--count" not in (argv if argv is not None else sys.argv):
        args.count = 10
    return args


def make_map(args: argparse.Namespace) -> int:
    files = args.map or sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("test_*.py"))
    old = json.loads(args.map_file.read_text()) if args.map_file.exists() else None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="ganeval-mutate-") as tmp:
        tree = Path(tmp)
        copy_tree(ROOT, tree)
        for i, test_file in enumerate(files, 1):
            t0 = time.perf_counter()
            found = {test_file: mutate_map.collect_file(tree, test_file, 1800.0)}
            old = mutate_map.merge(old, found, tree, commit)
            args.map_file.parent.mkdir(parents=True, exist_ok=True)
            args.map_file.write_text(json.dumps(old, separators=(",", ":")) + "\n")
            got = found[test_file]["tests"]
            print(f"[{i}/{len(files)}] {test_file}: {len(got)} tests, "
                  f"{sum(r['outcome'] == 'passed' for r in got.values())} passed, "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    equivalent = json.loads(args.equivalent.read_text()) if args.equivalent.exists() else {}
    if args.score:
        print("\n".join(score([json.loads(x) for x in args.score.read_text().splitlines() if x], equivalent)))
        return 0
    if args.map is not None:
        return make_map(args)
    if args.only:
        chosen = named(ROOT, args.only)
    else:
        pool = changed_pool(args.changed) if args.changed else all_sites(ROOT, args.modules or modules())
        chosen = draw(pool, args.count, args.seed)
    test_map = json.loads(args.map_file.read_text()) if args.map_file.exists() else \
        {"files": {}, "tests": [], "covers": {}}
    if args.list:
        for m in chosen:
            print(f"{m.name}  (line {m.line}; {len(select(test_map, ROOT, m))} tests)")
        return 0
    return run(args, chosen, test_map, equivalent)


def run(args: argparse.Namespace, chosen: list[mut.Mutant], test_map: dict, equivalent: dict[str, str]) -> int:
    """Run the mutants of `chosen` not yet in the log, `args.jobs` at a time (each in its own copy of the tree), in
    the seed's shuffled order; print and log each as it ends, then the score."""
    done = {}  # a log that exists is resumed: the mutants it records are not run again
    if args.log and args.log.exists():
        done = {r["name"]: r for r in map(json.loads, filter(None, args.log.read_text().splitlines()))}
    records = [done[m.name] for m in chosen if m.name in done]
    order = random.Random(f"order {args.seed}").sample(chosen, len(chosen))  # a run stopped early: a random part
    place = {m.name: i for i, m in enumerate(order, 1)}
    jobs = max(1, int(getattr(args, "jobs", 1)))
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="ganeval-mutate-") as tmp:
        free = []
        for j in range(jobs):
            (tree := Path(tmp) / str(j)).mkdir()
            copy_tree(ROOT, tree)
            free.append(tree)

        def one(m: mut.Mutant) -> None:
            with lock:
                tree = free.pop()
            try:
                rec = run_one(tree, m, select(test_map, tree, m), args.timeout_factor, args.timeout_base,
                              slow=bool(getattr(args, "slow", False)))
            finally:
                with lock:
                    free.append(tree)
            with lock:
                records.append(rec)
                word = "killed  " if rec["killed"] else "SURVIVED" if rec["outcome"] == "passed" else rec["outcome"]
                word += " (by a slow test)" if rec.get("stage") == "slow" and rec["killed"] else ""
                print(f"[{place[m.name]}/{len(chosen)}] {word} {m.name} ({rec['tests']} tests, {rec['seconds']:.0f} s)",
                      flush=True)
                if args.log:
                    args.log.parent.mkdir(parents=True, exist_ok=True)
                    with args.log.open("a") as f:
                        f.write(json.dumps(rec, ensure_ascii=False) + "\n")

        pool = ThreadPoolExecutor(jobs)
        try:
            list(pool.map(one, [m for m in order if m.name not in done]))  # list(): a worker's exception is raised
        finally:  # on Ctrl-C: the mutants running end (their modules restored), the rest are not started
            pool.shutdown(wait=True, cancel_futures=True)
    print("\n" + "\n".join(score(records, equivalent)))
    for r in records:
        if not r["killed"] and r["name"] not in equivalent:
            print(f"  {r['outcome']}: {r['name']} (line {r['line']}: {r['before']} -> {r['after']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
