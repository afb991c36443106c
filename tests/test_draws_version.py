"""`DRAWS_VERSION` pinned by a committed results folder of this version (tests/data/draws_v2/, its README says how it
was made): it resumes without a run recomputed, a further run extends it, and its runs recomputed afresh are its
numbers. A new version number refuses it (older draws are never extended); new draws under the old number change
its numbers: either way, this fails until the folder is made again under the new draws."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ganeval
from ganeval.protocol import task as task_module
from ganeval.protocol.draws import DRAWS_VERSION

DATA = Path(__file__).resolve().parent / "data" / "draws_v2"
METRICS = {"fid": {}, "kid": {"subset_size": 16, "subsets": 4}}


def _evaluate(out: Path, runs: int) -> pd.DataFrame:
    real, fake = np.load(DATA / "real.npy"), np.load(DATA / "fake.npy")
    return ganeval.evaluate(real, {"g": fake}, runs=runs, sample_size=32, metrics=METRICS, device="cpu",
                            progress=False, out=out)


def _stored(tmp_path: Path) -> Path:
    out = tmp_path / "res"
    out.mkdir()
    for name in ("runs.csv", "runs.meta.json"):
        shutil.copyfile(DATA / name, out / name)
    return out


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    ran: list[int] = []
    real_call = task_module.MetricTask.__call__

    def call(self, r: int):  # type: ignore[no-untyped-def]
        ran.append(r)
        return real_call(self, r)

    monkeypatch.setattr(task_module.MetricTask, "__call__", call)
    return ran


def test_the_committed_folder_is_of_this_draws_version() -> None:
    import json

    assert DRAWS_VERSION == 2  # the folder's version: a new one must come with a new folder (and this test's name)
    assert json.loads((DATA / "runs.meta.json").read_text())["identity"]["draws"] == DRAWS_VERSION


def test_a_folder_of_this_draws_version_resumes_without_recomputing(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    out = _stored(tmp_path)
    ran = _counting(monkeypatch)
    got = _evaluate(out, runs=3)
    assert ran == []  # every run read back
    stored = pd.read_csv(DATA / "runs.csv").groupby("metric")["value"].mean()
    assert dict(zip(got.metric, got["mean"])) == pytest.approx(stored.to_dict(), rel=1e-12)
    _evaluate(out, runs=4)  # a fourth run extends it: the only one computed
    assert ran == [3]
    assert pd.read_csv(out / "runs.csv").iloc[:6].equals(pd.read_csv(DATA / "runs.csv"))


def test_the_committed_runs_are_what_these_draws_give(tmp_path: Path) -> None:
    """The same runs computed afresh: new draws kept under the old version number would change these numbers."""
    _evaluate(tmp_path / "fresh", runs=3)
    fresh = pd.read_csv(tmp_path / "fresh" / "runs.csv")
    stored = pd.read_csv(DATA / "runs.csv")
    assert fresh[["run", "model", "metric"]].equals(stored[["run", "model", "metric"]])
    np.testing.assert_allclose(fresh["value"], stored["value"], rtol=1e-9)
