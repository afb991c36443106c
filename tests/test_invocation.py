"""A refused `ganeval` command leaves nothing behind (issue #22): Hydra writes nothing, no scratch folder survives it,
and the results folder is as the command found it (the `.hydra/` record and `ganeval.log` the app wrote once the plan
was built, taken back), never through a link."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from apphelp import app_config
from ganeval.app import run_files

REPO = Path(__file__).resolve().parents[1]


def _bench(tmp_path: Path, res: Path, *extra: str) -> list[str]:
    rng = np.random.default_rng(0)
    for name in ("real", "fake"):
        if not (tmp_path / f"{name}.npy").exists():
            np.save(tmp_path / f"{name}.npy", rng.normal(size=(120, 8)).astype(np.float32))
    return ["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
            f"generator.path={tmp_path / 'fake.npy'}", "features=identity", "sample_size=50", "runs=1",
            "metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=40", "progress=false", "plots=false", f"results_dir={res}", f"cache_dir={tmp_path / 'cache'}",
            *extra]


def _ganeval(tmp_path: Path, *args: str) -> tuple[int, str]:
    """Run the CLI with its own temporary directory (so scratch folders of other processes do not count)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(scratch), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "ganeval", *args], env=env, cwd=tmp_path, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    return proc.returncode, proc.stdout


def _state(d: Path) -> dict[str, bytes | str]:
    """Every path under d: a file's bytes, a link's target, '<dir>' for a folder."""
    out: dict[str, bytes | str] = {}
    for p in sorted(d.rglob("*")):
        rel = str(p.relative_to(d))
        out[rel] = os.readlink(p) if p.is_symlink() else "<dir>" if p.is_dir() else p.read_bytes()
    return out


@pytest.mark.parametrize("extra", [[], ["dry_run=true"]])
def test_no_scratch_folder_survives_an_unwritable_results_dir(tmp_path: Path, extra: list[str]) -> None:
    (tmp_path / "afile").write_text("x")
    rc, out = _ganeval(tmp_path, *_bench(tmp_path, tmp_path / "afile" / "res", *extra))
    assert rc == 2 and "afile is a file" in out, out
    assert list((tmp_path / "tmp").iterdir()) == []  # before: tmp/ganeval-hydra-*/{.hydra/,ganeval.log}


def test_no_scratch_folder_survives_a_dry_run(tmp_path: Path) -> None:
    rc, out = _ganeval(tmp_path, *_bench(tmp_path, tmp_path / "res", "dry_run=true"))
    assert rc == 0, out
    assert list((tmp_path / "tmp").iterdir()) == [] and not (tmp_path / "res").exists()


@pytest.mark.parametrize("refusal", ["runs=0", "data.path=missing.npy"])  # in make_context / when loading the data
def test_a_refused_command_leaves_no_new_results_folder(tmp_path: Path, refusal: str) -> None:
    res = tmp_path / "new" / "a" / "res"
    rc, out = _ganeval(tmp_path, *_bench(tmp_path, res), refusal)
    assert rc == 2, out
    assert not (tmp_path / "new").exists()  # before: new/a/res/{.hydra/*.yaml, ganeval.log}


@pytest.mark.slow  # over 30 s on the 2-core development machine (issue #56)
def test_a_refused_command_leaves_an_existing_results_folder_byte_for_byte(tmp_path: Path) -> None:
    res = tmp_path / "res"
    rc, out = _ganeval(tmp_path, *_bench(tmp_path, res))
    assert rc == 0, out
    before = _state(res)
    assert {".hydra/config.yaml", ".hydra/overrides.yaml", "ganeval.log", "runs.csv"} <= set(before)
    for refusal in ("runs=0", "data.path=missing.npy"):
        rc, out = _ganeval(tmp_path, *_bench(tmp_path, res), refusal)
        assert rc == 2, out
        assert _state(res) == before  # before: .hydra/ rewritten for the refused command, the refusal in the log
    rc, out = _ganeval(tmp_path, *_bench(tmp_path, res, "runs=2"))
    assert rc == 0 and "resuming: 1 of 2" in out, out


def test_a_link_planted_at_hydras_files_is_refused_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    res = tmp_path / "res"
    (res / ".hydra").mkdir(parents=True)
    (res / ".hydra" / "config.yaml").symlink_to(victim)
    rc, out = _ganeval(tmp_path, *_bench(tmp_path, res))
    assert rc == 2 and "symbolic link" in out and "Traceback" not in out, out
    assert victim.read_text() == "keep me\n" and (res / ".hydra" / "config.yaml").is_symlink()


# ------------------------------------------------------------------------------------------------
# `run_files` itself: what `undo` restores and what it leaves alone
# ------------------------------------------------------------------------------------------------
def _old_run(res: Path, text: str) -> None:
    (res / ".hydra").mkdir(parents=True, exist_ok=True)
    for name in run_files.HYDRA_FILES:
        (res / ".hydra" / name).write_text(text)
    with open(res / "ganeval.log", "a") as f:
        f.write(f"an earlier command: {text}\n")


def _begin(res: Path) -> None:
    """`run_files.begin` as the app calls it (after forgetting what an earlier run in this process recorded), for a
    composed config, then one line logged."""
    run_files.forget()
    run_files.begin(res, app_config([f"results_dir={res}"]))
    logging.getLogger("ganeval").warning("this command's line")


def test_begin_writes_the_record_and_the_log(tmp_path: Path) -> None:
    res = tmp_path / "new" / "res"
    try:
        _begin(res)
    finally:
        run_files.forget()
    assert yaml.safe_load((res / ".hydra" / "config.yaml").read_text())["results_dir"] == str(res)
    assert yaml.safe_load((res / ".hydra" / "overrides.yaml").read_text()) == [f"results_dir={res}"]
    assert yaml.safe_load((res / ".hydra" / "hydra.yaml").read_text())["hydra"]["job"]["name"] == "ganeval"
    assert (res / "ganeval.log").read_text().endswith("[ganeval][WARNING] - this command's line\n")


def test_undo_restores_hydras_files_and_cuts_the_log(tmp_path: Path) -> None:
    res = tmp_path / "res"
    _old_run(res, "old")
    (res / "runs.csv").write_text("a\n")
    before = _state(res)
    try:
        _begin(res)
        assert _state(res) != before
        assert run_files.undo()
    finally:
        run_files.forget()
    assert _state(res) == before


def test_undo_removes_the_folders_it_made(tmp_path: Path) -> None:
    try:
        _begin(tmp_path / "new" / "a" / "res")
        assert run_files.undo()
    finally:
        run_files.forget()
    assert list(tmp_path.iterdir()) == []


def test_undo_keeps_everything_when_the_command_wrote_anything_else(tmp_path: Path) -> None:
    res = tmp_path / "res"
    try:
        _begin(res)
        (res / "runs.csv").write_text("a run stored before the refusal\n")
        assert not run_files.undo()  # .hydra/ then describes the command that stored it
    finally:
        run_files.forget()
    assert "results_dir" in (res / ".hydra" / "config.yaml").read_text() and (res / "runs.csv").exists()


def test_undo_never_touches_a_link_planted_after_begin(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    res = tmp_path / "res"
    try:
        _begin(res)
        (res / ".hydra" / "hydra.yaml").unlink()
        (res / ".hydra" / "hydra.yaml").symlink_to(victim)
        assert run_files.undo()
    finally:
        run_files.forget()
    assert victim.read_text() == "keep me\n" and (res / ".hydra" / "hydra.yaml").is_symlink()
    assert set(_state(res)) == {".hydra", ".hydra/hydra.yaml"}  # the other files and the log removed
