"""Every example of README.md, docs/scoring.md, docs/metrics.md and docs/training.md run as a user runs it (issue
45): a Python block written verbatim to a file and executed with `python file.py`, a shell block's commands run as
written, each page's blocks in order in one fresh folder (a page's later block may use what an earlier one wrote);
and each page's Python blocks as the cells of one notebook executed headless (nbclient).
Where a block uses names the page leaves to the reader (`real`, `fake`, `batches`), a short prelude the test writes
defines them with small synthetic data before the block's unchanged text. A block that needs what is not available
offline or cannot run in a test's time is skipped BY NAME with the reason (SKIP); every other block runs, and a new
block is run as soon as it is written (the list of blocks is read from the pages)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", "docs/scoring.md", "docs/metrics.md", "docs/training.md"]
CODE = ("python", "bash", "sh", "shell", "console")  # fenced blocks of other languages (bibtex, text) are not code
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

# A block by its page and ordinal among the page's code blocks (0-based) -> why it is not run.
SKIP = {
    "README.md#0": "creates a venv and installs from PyPI (network)",
    "README.md#1": "creates a venv, installs from PyPI (network) and runs the whole test suite",
    "docs/metrics.md#0": "ganeval.score with the default Inception features needs the FID Inception weights (not "
                         "offline) and evaluate(runs=100, sample_size=10000) takes minutes on CPU; its metric lines "
                         "are checked by test_commands.py::test_readme_library_example_gives_the_numbers_it_shows",
    "docs/training.md#0": "IMD(features='inception') needs the FID Inception weights (not offline) and "
                          "sample_size=5000 needs 5000 images a side through Inception (minutes on CPU)",
    "docs/metrics.md#2": "evaluate's defaults (runs=100, sample_size=10000) need 10 000 rows a side and take minutes "
                         "of PRDC on CPU; prdc and inception_score are checked against their peers in "
                         "test_prdc_metrics.py and test_inception_score.py",
}

# A block's prelude: the names its page leaves to the reader, as small synthetic data (the block follows unchanged).
_POOLS = """import numpy as np
rng = np.random.default_rng(1)
real = rng.normal(size=(400, 8)).astype(np.float32)
fake = (1.1 * rng.normal(size=(400, 8)) + 0.2).astype(np.float32)
"""
PRELUDE = {
    "docs/metrics.md#3": _POOLS,
    "docs/training.md#2": "import lightning as L\nfrom ganeval.torchmetrics import IMD, Protocol\n",
}
NEEDS = {"docs/training.md#2": "lightning"}  # a block's optional package (the page says to install its extra)


def code_blocks(page: str) -> list[tuple[str, str, str]]:
    """(name, language, text) of each code block of a page, in order; name is `page#ordinal`."""
    text = (ROOT / page).read_text(encoding="utf-8")
    blocks = [(m.group(1), m.group(2)) for m in FENCE.finditer(text) if m.group(1) in CODE]
    return [(f"{page}#{i}", lang, body) for i, (lang, body) in enumerate(blocks)]


def shell_commands(body: str) -> list[str]:
    """A shell block's commands: one a line (backslash continuations joined), `# comment` tails kept for the shell."""
    return [c for c in body.replace("\\\n", " ").splitlines() if c.strip() and not c.lstrip().startswith("#")]


def env() -> dict[str, str]:
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
             OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
    e.pop("GANEVAL_INCEPTION_WEIGHTS", None)  # the examples meet what a new user meets
    return e


# a warning attributed to ganeval's own line (not the caller's: `ganeval.words.caller_stacklevel`) or tqdm's
# "IProgress not found": warnings the reader did not cause (issue 57)
UNCAUSED = re.compile(r"/ganeval/[\w/]+\.py:\d+: \w*Warning|IProgress not found")


def run_block(name: str, lang: str, body: str, cwd: Path) -> None:
    if lang == "python":
        script = cwd / f"example_{re.sub(r'[^a-z0-9]+', '_', name.lower())}.py"
        script.write_text(PRELUDE.get(name, "") + body, encoding="utf-8")
        done = subprocess.run([sys.executable, script.name], cwd=cwd, env=env(), capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{name} (python {script.name}) failed:\n{done.stderr[-3000:]}"
        assert not UNCAUSED.search(done.stderr), f"{name} warns what the reader did not cause:\n{done.stderr[-3000:]}"
        return
    for command in shell_commands(body):
        argv = shlex.split(command, comments=True)
        exe = Path(sys.executable).parent / argv[0]  # the console scripts of this environment
        argv[0] = str(exe) if exe.exists() else argv[0]
        done = subprocess.run(argv, cwd=cwd, env=env(), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{name}: `{command}` exited {done.returncode}:\n{done.stderr[-3000:]}"


def test_the_skip_list_and_preludes_name_existing_blocks() -> None:
    names = {name for page in PAGES for name, _, _ in code_blocks(page)}
    assert set(SKIP) <= names and set(PRELUDE) <= names and set(NEEDS) <= names
    assert not set(SKIP) & set(PRELUDE)
    runs = {page: [n for n in names if n.startswith(page + "#") and n not in SKIP] for page in PAGES[1:]}
    assert all(runs.values()), runs  # each docs page has examples that run


BLOCKS = [block for page in PAGES for block in code_blocks(page)]


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name, _, _ in BLOCKS])
def test_the_example_runs_as_written(name: str, tmp_path: Path) -> None:
    """The block runs in a fresh folder after the page's earlier blocks that run (what a reader has done by then)."""
    if name in SKIP:
        pytest.skip(f"{name}: {SKIP[name]}")
    page = name.split("#")[0]
    for earlier, lang, body in code_blocks(page):
        if earlier in SKIP:
            continue
        if earlier in NEEDS:
            pytest.importorskip(NEEDS[earlier])
        run_block(earlier, lang, body, tmp_path)
        if earlier == name:
            return


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if any(lang == "python" and name not in SKIP
                                                          for name, lang, _ in code_blocks(p))])
def test_the_pages_python_examples_run_as_one_notebook(page: str, tmp_path: Path) -> None:
    """The page's Python blocks that run, each a cell (its prelude a cell before it), in order in one kernel executed
    headless (nbclient), as a reader pasting the page into a notebook does."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = []
    for name, lang, body in code_blocks(page):
        if lang != "python" or name in SKIP:
            continue
        if name in NEEDS:
            pytest.importorskip(NEEDS[name])
        cells += [nbformat.v4.new_code_cell(c) for c in (PRELUDE.get(name), body) if c]
    nb = nbformat.v4.new_notebook(cells=cells)
    old = dict(os.environ)
    os.environ.update(env())
    os.environ.pop("GANEVAL_INCEPTION_WEIGHTS", None)
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    streams = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream")
    assert not UNCAUSED.search(streams), streams[-3000:]
