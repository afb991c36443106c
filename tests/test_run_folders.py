"""Where a run writes: Hydra's own files inside the results directory (nothing under outputs/), a default results
directory per benchmark's inputs, sweeps under results_dir; and the one config hash that log, refusal,
runs.meta.json and summary.json show."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from apphelp import run_inprocess
from ganeval.hashing import stable_hash
from ganeval.protocol.store import defining, identity_hash

FAST = ["metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=50", "progress=false", "plots=false",
        "sample_size=100", "runs=2", "features=identity"]


@pytest.fixture()
def arrays(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    for name, shift, n in (("real", 0.0, 300), ("fake", 0.3, 200), ("other", 1.0, 200)):
        np.save(tmp_path / f"{name}.npy", (rng.normal(size=(n, 8)) + shift).astype(np.float32))
    return tmp_path


def _bench(fake: str, *extra: str) -> list[str]:
    return ["experiment=benchmark", "data=array", "data.path=real.npy", "generator=samples",
            f"generator.path={fake}", "cache_dir=cache", *FAST, *extra]


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "ganeval", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_one_config_hash_in_log_refusal_and_both_files(arrays, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(arrays)
    caplog.set_level(logging.INFO, logger="ganeval")
    out = arrays / "r"
    run_inprocess(_bench("fake.npy", f"results_dir={out}"))
    meta = json.loads((out / "runs.meta.json").read_text())
    record = json.loads((out / "summary.json").read_text())
    logged = re.findall(r"config hash ([0-9a-f]{16}) \(", caplog.text)
    assert logged == [meta["config_hash"]] == [record["config_hash"]]  # logged once, when first known
    # what it hashes, readable: the identity without the inputs' paths, which it keeps as provenance (#47)
    assert meta["config_hash"] == identity_hash(meta["identity"]) == stable_hash(defining(meta["identity"]))
    assert meta["identity"]["data"]["config"]["generator"]["path"] == "fake.npy"
    assert "path" not in defining(meta["identity"])["data"]["config"]["generator"]
    caplog.clear()
    with pytest.raises(ValueError) as err:
        run_inprocess(_bench("fake.npy", f"results_dir={out}", "seed=1"))
    (now,) = re.findall(r"config hash ([0-9a-f]{16}) \(", caplog.text)
    assert f"(config hash {meta['config_hash']}, now {now})" in str(err.value)
    assert "data.config.seed: 0 -> 1" in str(err.value)  # the refusal names the config key that differs


def test_console_refuses_an_unwritable_results_dir_with_its_message(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("")
    p = _cli(["results_dir=a_file/res", "dry_run=true"], tmp_path)  # Hydra's run folder cannot be made there either
    assert p.returncode == 2, p.stderr[-3000:]
    assert "results_dir=a_file/res cannot be made" in p.stderr + p.stdout and "Traceback" not in p.stderr


@pytest.mark.slow
def test_console_runs_write_inside_their_results_dir_and_benchmarks_coexist(arrays) -> None:  # type: ignore[no-untyped-def]
    first = _cli(_bench("fake.npy"), arrays)
    assert first.returncode == 0, first.stderr[-3000:]
    second = _cli(_bench("other.npy"), arrays)
    assert second.returncode == 0, second.stderr[-3000:]  # another benchmark: its own folder, no overwrite needed
    dirs = sorted(p.name for p in (arrays / "results" / "benchmark").iterdir())
    assert len(dirs) == 2 and dirs[0].startswith("real-vs-fake-") and dirs[1].startswith("real-vs-other-")
    assert not (arrays / "outputs").exists() and not (arrays / "multirun").exists()
    for d in dirs:
        folder = arrays / "results" / "benchmark" / d
        assert (folder / "summary.json").exists() and (folder / "ganeval.log").exists()
        assert (folder / ".hydra" / "config.yaml").exists() and (folder / ".hydra" / "overrides.yaml").exists()
        meta = json.loads((folder / "runs.meta.json").read_text())
        assert f"config hash {meta['config_hash']}" in (folder / "ganeval.log").read_text()
    again = _cli(_bench("fake.npy", "runs=3"), arrays)  # the same benchmark finds its folder and extends it
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(list((arrays / "results" / "benchmark").iterdir())) == 2
    folder = arrays / "results" / "benchmark" / dirs[0]
    assert json.loads((folder / "summary.json").read_text())["runs"] == 3
