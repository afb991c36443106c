"""The documentation site builds without a warning (Zensical's strict build, the toolchain docs/development.md
chose), its API reference generated from the docstrings (a renamed or removed function fails the build), every
object on it with its parameters, return and a running example; every results CSV column documented. The build is
skipped where zensical or mkdocstrings is not installed (they are in the dev extra)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ZENSICAL = shutil.which("zensical", path=str(Path(sys.executable).parent)) or shutil.which("zensical")


def site_config(tmp: Path) -> Path:
    """mkdocs.yml as the project's, in `tmp` with a copy of docs/ (Zensical wants docs_dir within the config's
    folder), the site written there and mkdocstrings reading the sources of this checkout."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    shutil.copytree(ROOT / "docs", tmp / "docs")
    config["docs_dir"], config["site_dir"] = "docs", "site"
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(ROOT)]
    (tmp / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return tmp / "mkdocs.yml"


@pytest.mark.skipif(ZENSICAL is None or importlib.util.find_spec("mkdocstrings") is None,
                    reason="zensical or mkdocstrings is not installed")
def test_docs_build_strict(tmp_path: Path) -> None:
    """`zensical build --strict` of the site into a temporary folder: any warning (a broken link, an object
    mkdocstrings cannot collect, a signature it cannot format without ruff) fails it. The API page shows each
    public object's docstring, `r["fid"]`, and `score`'s signature one parameter a line (a phone's width)."""
    config = site_config(tmp_path)
    done = subprocess.run([str(ZENSICAL), "build", "--strict", "--clean", "-f", str(config)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    site = tmp_path / "site"
    assert (site / "index.html").is_file() and (site / "first-minutes" / "index.html").is_file()
    api = (site / "api" / "index.html").read_text()
    import html
    import re

    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", api)).split())
    import ganeval.app.scoring
    import ganeval.metrics
    import ganeval.protocol.api

    for obj in (ganeval.app.scoring.score, ganeval.app.scoring.ScoreResult, ganeval.protocol.api.evaluate,
                ganeval.metrics.fid, ganeval.metrics.imd, ganeval.metrics.register_metric):
        first = " ".join(obj.__doc__.split("\n\n")[0].split()).split("`")[0][:40]
        assert first in text, (obj, first)
    assert 'r["fid"]' in text and 'id="ganeval.app.scoring.ScoreResult.__getitem__"' in api
    signature = html.unescape(re.sub(r"<[^>]+>", "", api.split('id="ganeval.app.scoring.score"')[1].split("</pre>")[0]))
    assert "\n    sample_size=None,\n" in signature and max(map(len, signature.splitlines())) <= 50


def test_every_column_of_the_results_csvs_is_documented() -> None:
    """Each column of runs.csv, summary.csv, summary_seeds.csv and comparison.csv (the committed quickstart's, with
    training seeds and probe draws, and a fresh comparison's) is named in docs/experiments.md's table of columns, or
    is a group column the page names (issue 57: comparison.csv's `mde` was documented nowhere). Kills: a new column
    written without its line."""
    import re

    import numpy as np
    import pandas as pd

    from ganeval.results.summary import compare_runs, summarize_runs

    page = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in page.splitlines() if line.startswith("| ") and ".csv" in line.split("|")[1]]
    documented = {name for r in rows for name in re.findall(r"`([a-z_]+)`", r[2])}
    groups = {"model", "data", "train_seed"}  # the page's group columns (a study's own, e.g. sigma, besides)
    assert all(f"`{g}`" in page for g in groups)
    reference = ROOT / "results" / "reference" / "quickstart"
    columns = {c for name in ("runs", "summary", "summary_seeds", "comparison")
               for c in pd.read_csv(reference / f"{name}.csv", nrows=1).columns}
    rng = np.random.default_rng(0)
    runs = pd.DataFrame([{"run": r, "model": m, "metric": "fid", "value": rng.normal() + i}
                         for r in range(4) for i, m in enumerate("ab")])
    columns |= set(compare_runs(runs, 0.99).columns) | set(summarize_runs(runs, 0.99, 100).columns)
    assert columns - groups <= documented, sorted(columns - groups - documented)


# docs/api.md's objects exempt from the parameter and example checks (none)
API_EXEMPT: set[str] = set()


def api_objects() -> list[str]:
    """The functions and classes docs/api.md renders: each `::: path` (a module's listed `members` included; a
    class's listed members are its own, under it)."""
    import importlib
    import re

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    out = []
    for block in re.split(r"^(?=::: )", text, flags=re.M)[1:]:
        path = block.split()[1]
        members = re.search(r"members:\n((?:\s+- \S+\n)+)", block)
        parent, _, name = path.rpartition(".")
        module = not hasattr(importlib.import_module(parent), name) or isinstance(
            getattr(importlib.import_module(parent), name), type(importlib))
        if members and module:
            out += [f"{path}.{m}" for m in re.findall(r"- (\S+)", members.group(1)) if not m.startswith("_")]
        elif "members: false" not in block:
            out.append(path)
    return out


def griffe_object(path: str):  # type: ignore[no-untyped-def]
    import griffe

    package = griffe.load("ganeval", search_paths=[str(ROOT)], docstring_parser="google", resolve_aliases=False)
    return package[path.removeprefix("ganeval.")]


@pytest.mark.skipif(importlib.util.find_spec("griffe") is None, reason="griffe (mkdocstrings' reader) not installed")
def test_the_api_page_describes_every_parameter_its_return_and_an_example() -> None:
    """Each function and class on the API page (issue 57) has every parameter described in its docstring's Args (a
    class: its constructor's, or its fields as Attributes), a Returns section (functions that return something) and
    an Examples section; as mkdocstrings parses it (Google style). Kills: a parameter added without its line, `score`'s
    "the other arguments are the command's options"."""
    import griffe

    package = griffe.load("ganeval", search_paths=[str(ROOT)], docstring_parser="google", resolve_aliases=False)
    missing = []
    for path in api_objects():
        if path in API_EXEMPT:
            continue
        obj = package[path.removeprefix("ganeval.")]
        sections = obj.docstring.parse(griffe.Parser.google) if obj.docstring else []
        kinds = {s.kind.value for s in sections}
        described = {p.name for s in sections if s.kind.value in ("parameters", "attributes") for p in s.value
                     if str(p.description).strip()}
        function = obj if obj.is_function else obj.members.get("__init__") if obj.is_class else None
        params = [p.name for p in (function.parameters if function is not None else [])
                  if p.name not in ("self", "cls") and p.kind.value not in ("variadic positional",)]
        if obj.is_class and function is None:  # a dataclass: its fields
            params = [n for n, m in obj.members.items() if m.is_attribute and not n.startswith("_") and
                      m.labels & {"instance-attribute"}]
        for name in params:
            if name not in described and f"**{name}" not in described:
                missing.append(f"{path}: parameter {name}")
        if obj.is_function and str(obj.returns) not in ("None", "") and "returns" not in kinds:
            missing.append(f"{path}: Returns")
        if "examples" not in kinds:
            missing.append(f"{path}: Examples")
    assert not missing, "\n".join(missing)


API_DOCTESTS = """
import doctest, importlib, sys
failures = []
for path in sys.argv[1:]:
    module, _, name = path.rpartition(".")
    obj = getattr(importlib.import_module(module), name)
    for test in doctest.DocTestFinder(recurse=False).find(obj, path, globs={}):
        result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test, out=failures.append)
        print(path, result.attempted)
print("".join(failures), file=sys.stderr)
sys.exit(1 if failures else 0)
"""


@pytest.mark.slow
def test_the_api_pages_examples_run(tmp_path: Path) -> None:
    """Every Examples section on the API page runs as written (doctest: the printed output included) in a fresh
    interpreter in an empty folder, as a reader pasting it would (a registered example metric stays out of this
    process). Kills: an example that no longer matches the code; an object on the page without one."""
    import os

    paths = api_objects()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", API_DOCTESTS, *paths], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-6000:]
    attempted = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines() if line.strip())
    assert {p for p in paths if int(attempted.get(p, 0)) == 0} <= API_EXEMPT
