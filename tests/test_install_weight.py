"""The install's weight: a core without Hydra or numba (the metrics, `ganeval.score`, `ganeval-score`, the report),
the `ganeval` app and approximate k-NN as extras that the README's commands install, and `import ganeval.metrics`
loading nothing beyond torch, numpy and scipy (docs/performance.md, install weight)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP_ONLY = ("hydra", "pynndescent", "numba", "llvmlite")  # what the core install does not hold
# a finder that makes the app-only packages absent, as in an install without the extras
BLOCK = ("import importlib.abc, sys\n"
         "class Absent(importlib.abc.MetaPathFinder):\n"
         "    def find_spec(self, name, path, target=None):\n"
         f"        if name.split('.')[0] in {APP_ONLY!r}:\n"
         "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
         "sys.meta_path.insert(0, Absent())\n")


def _names(deps: list[str]) -> set[str]:
    return {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0].lower() for d in deps}


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


def test_core_dependencies_leave_the_app_to_extras_that_the_readme_installs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core, extras = _names(project["dependencies"]), project["optional-dependencies"]
    assert not core & {"hydra-core", "hydra-joblib-launcher", "pynndescent"}
    assert {"hydra-core", "hydra-joblib-launcher"} <= _names(extras["app"]) and "ganeval" in _names(extras["app"])
    assert "ganeval[approx]" in extras["app"] and _names(extras["approx"]) == {"pynndescent"}
    assert "ganeval[app]" in extras["dev"]  # the README's test command and CI install everything
    readme = (ROOT / "README.md").read_text()
    assert '-e ".[app]" && ganeval' in readme and '-e ".[dev]" && python -m pytest' in readme
    assert '-e ".[dev]"' in (ROOT / ".ci" / "run").read_text()
    assert project["scripts"]["ganeval"] == "ganeval.app.entry:main"


def test_import_ganeval_metrics_loads_no_app_package(tmp_path: Path) -> None:
    done = _python("import sys, ganeval.metrics, ganeval.metrics.fid\n"
                   "print(sorted({m.split('.')[0] for m in sys.modules}))", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(eval(done.stdout.strip().splitlines()[-1]))  # noqa: S307 (our own print of a list of names)
    assert not loaded & {"hydra", "omegaconf", "pandas", "matplotlib", "sklearn", "pynndescent", "numba", "PIL"}


def test_the_core_scores_and_the_app_names_its_extra(tmp_path: Path) -> None:
    """Without Hydra and pynndescent: ganeval-score runs and writes its report, `python -m ganeval` says in one line
    which extra installs the app, and knn='approx' which one installs pynndescent."""
    code = BLOCK + (
        "import numpy as np, ganeval\n"
        "from ganeval.app.score import main\n"
        "rng = np.random.default_rng(0)\n"
        "np.save('r.npy', rng.normal(size=(200, 6)).astype(np.float32))\n"
        "np.save('f.npy', (rng.normal(size=(200, 6)) + 0.5).astype(np.float32))\n"
        "assert main(['r.npy', 'f.npy', '--runs', '2', '--sample-size', '100', '--metrics', 'fid,kid', '--option',\n"
        "             'kid.subset_size=50', '--quiet', '--out', 'out']) == 0\n"
        "import pathlib; assert '<svg' in pathlib.Path('out/report.html').read_text()\n"
        "from ganeval.metrics import imd\n"
        "try:\n"
        "    imd(rng.normal(size=(60, 4)), rng.normal(size=(60, 4)), knn='approx')\n"
        "except ImportError as e:\n"
        "    print('APPROX:', e)\n"
        "from ganeval.app.entry import main as app\n"
        "print('APP:', app())\n"
        "assert not {m.split('.')[0] for m in sys.modules} & set(%r)\n" % (APP_ONLY,))
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "APPROX: knn='approx' needs pynndescent, an optional dependency: pip install 'ganeval[approx]'" in done.stdout
    assert "APP: 1" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == (
        "ganeval: the config-driven app needs Hydra, an optional dependency: pip install 'ganeval[app]' "
        "(ganeval-score and the Python API work without it)")
