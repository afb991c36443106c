"""`ganeval-collate`: a sweep's jobs merged into one summary, differing protocols and bad records refused."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ganeval.results import RunRecord
from ganeval.results.collate import collate, main

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "quickstart"


def _sweep(root: Path, **per_job: dict[str, object]) -> Path:
    """Job directories under `root`, each the reference quickstart with its record's fields changed."""
    base = RunRecord.read(REFERENCE / "summary.json")
    for job, changes in per_job.items():
        (root / job).mkdir(parents=True)
        shutil.copy(REFERENCE / "summary.csv", root / job / "summary.csv")
        dataclasses.replace(base, **changes).write(root / job / "summary.json")
    return root


def test_collate_adds_the_varying_overrides_as_columns(tmp_path: Path) -> None:
    root = _sweep(tmp_path / "sweep", a={"overrides": ["progress=false", "seed=0"]},
                  b={"overrides": ["progress=false", "seed=1"]})
    merged = collate(root)
    assert list(merged.columns[:3]) == ["seed", "data", "model"] and sorted(merged.seed.unique()) == ["0", "1"]
    assert main([str(root)]) == 0
    assert (root / "table.md").read_text().count("| IMD |") == 1


def test_collate_refuses_jobs_of_different_protocols(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _sweep(tmp_path / "sweep", a={}, b={"knn": "approx"})
    with pytest.raises(ValueError, match=r"different protocols.*\(knn: 'exact' in a vs 'approx' in b\)"):
        collate(root)
    assert main([str(root)]) == 2
    assert "never put in one table" in capsys.readouterr().err


def test_collate_refuses_a_job_whose_record_is_garbage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _sweep(tmp_path / "sweep", a={}, b={})
    bad = root / "b" / "summary.json"
    bad.write_text('{"results": []}\n')
    with pytest.raises(ValueError, match="missing keys"):
        collate(root)
    assert main([str(root)]) == 2
    assert str(bad) in capsys.readouterr().err


def test_collate_keeps_reruns_apart_by_job(tmp_path: Path) -> None:
    merged = collate(_sweep(tmp_path / "sweep", a={}, b={}))
    assert sorted(merged.job.unique()) == ["a", "b"] and len(merged) == 2 * len(pd.read_csv(REFERENCE / "summary.csv"))
