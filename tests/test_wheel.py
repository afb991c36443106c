"""The built wheel carries its configs, its licence and its metadata: installed (not editable) in a fresh venv, `ganeval` runs from any directory."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{args} exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_runs_ganeval(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    # build from a copy of the sources, so no stale build/ of the checkout can slip files into the wheel
    src = tmp_path / "src"
    shutil.copytree(ROOT / "ganeval", src / "ganeval", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "README_PACKAGE.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", tmp_path / "dist", src], tmp_path, env)
    (wheel,) = (tmp_path / "dist").glob("ganeval-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    configs = {str(p.relative_to(ROOT)) for p in (ROOT / "ganeval" / "configs").rglob("*.yaml")}
    assert "ganeval/configs/config.yaml" in configs and configs <= shipped
    assert {"ganeval/results/templates/report.html.j2", "ganeval/results/templates/report.css"} <= shipped
    # the MIT licence text ships in the wheel (PEP 639: .dist-info/licenses/), and the metadata names it
    (licence,) = [n for n in shipped if n.endswith(".dist-info/licenses/LICENSE")]
    with zipfile.ZipFile(wheel) as z:
        assert z.read(licence).decode() == (ROOT / "LICENSE").read_text()
        (meta_name,) = [n for n in shipped if n.endswith(".dist-info/METADATA")]
        meta = z.read(meta_name).decode()
    assert "License-Expression: MIT" in meta and "License-File: LICENSE" in meta
    assert "Author: ganeval developers" in meta and "Classifier: Intended Audience :: Science/Research" in meta
    assert meta.split("\n\n", 1)[1].strip() == (ROOT / "README_PACKAGE.md").read_text().strip()  # the index page

    # a fresh venv that sees this environment's packages (torch, hydra, ...) through a path line in a .pth,
    # which does not run that directory's own .pth files: an editable ganeval there stays invisible
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path, env)
    python = venv / "bin" / "python"
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        tmp_path, env).stdout.strip())
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (purelib / "parent_env.pth").write_text("".join(p + "\n" for p in parents))
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "-q", wheel], tmp_path, env)
    where = _run([python, "-c", "import ganeval; print(ganeval.__file__)"], tmp_path, env).stdout.strip()
    assert Path(where).is_relative_to(venv), where

    # the console script, from an empty directory outside the repository, with no environment variable
    rng = np.random.default_rng(0)
    data = tmp_path / "data"
    data.mkdir()
    np.save(data / "real.npy", rng.normal(size=(300, 8)).astype(np.float32))
    np.save(data / "fake.npy", (rng.normal(size=(300, 8)) + 0.3).astype(np.float32))
    work = tmp_path / "work"
    work.mkdir()
    _run([venv / "bin" / "ganeval", "runs=2", "experiment=benchmark", "data=array", f"data.path={data / 'real.npy'}",
          "generator=samples", f"generator.path={data / 'fake.npy'}", "features=identity", "sample_size=100",
          "metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=50", "progress=false",
          "plots=false"], work, env)
    (summary,) = (work / "results" / "benchmark").glob("*/summary.csv")  # results/benchmark/<data>-vs-<models>-<hash>
    assert set(pd.read_csv(summary).metric) == {"imd", "fid", "kid"}
