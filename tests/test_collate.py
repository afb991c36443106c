"""`ganeval-collate`: a sweep's jobs merged into one summary, differing protocols and bad records refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from ganeval.results import RunRecord
from ganeval.app.collate import main
from ganeval.results.collate import collate, collate_levels
from ganeval.results.seeds import COVERS_SEEDS

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "quickstart"


def _sweep(root: Path, **per_job: dict[str, object]) -> Path:
    """Job directories under `root`, each the reference quickstart with its record's fields changed."""
    base = RunRecord.read(REFERENCE / "summary.json")
    one_seed = pd.read_csv(REFERENCE / "summary_seeds.csv")  # the reference's seed 0, as a one-seed job writes it
    one_seed = one_seed[one_seed.train_seed == 0].drop(columns="train_seed")
    for job, changes in per_job.items():
        (root / job).mkdir(parents=True)
        one_seed.to_csv(root / job / "summary.csv", index=False)
        dataclasses.replace(base, **changes).write(root / job / "summary.json")
    return root


def test_collate_adds_the_varying_overrides_as_columns(tmp_path: Path) -> None:
    root = _sweep(tmp_path / "sweep", a={"overrides": ["progress=false", "gan.epochs=10"]},
                  b={"overrides": ["progress=false", "gan.epochs=20"]})
    merged = collate(root)
    assert list(merged.columns[:3]) == ["gan.epochs", "data", "model"]
    assert sorted(merged["gan.epochs"].unique()) == ["10", "20"]
    assert main([str(root)]) == 0
    table = (root / "table.md").read_text()
    assert table.count("| IMD |") == 1 and "nothing is bold: no paired comparison of the models was made" in table and "comparison.csv" not in table


def test_collate_a_seed_sweep_gives_the_two_level_summary(tmp_path: Path) -> None:
    shifts = {"a": 0.0, "b": 3.0, "c": -1.0}  # WGAN's per-seed offsets; WGAN-GP the same in every job
    root = _sweep(tmp_path / "sweep", **{j: {"overrides": ["progress=false", f"seed={i}"]} for i, j in enumerate(shifts)})
    for job, shift in shifts.items():
        s = pd.read_csv(root / job / "summary.csv")
        moved = (s.model == "wgan") & s.metric.isin(["imd", "fid"])  # KID: the same difference in every job
        s.loc[moved, "mean"] += shift * s.loc[moved, "mean"] / 10
        s.to_csv(root / job / "summary.csv", index=False)
    levels = collate_levels(root)
    assert list(levels.seeds.columns[:3]) == ["train_seed", "data", "model"]
    assert "train_seed" not in levels.summary.columns and set(levels.summary.n_seeds) == {3}
    assert set(levels.summary.covers) == {COVERS_SEEDS}
    imd = levels.seeds[(levels.seeds.model == "wgan") & (levels.seeds.metric == "imd")]["mean"]
    row = levels.summary[(levels.summary.model == "wgan") & (levels.summary.metric == "imd")].iloc[0]
    assert row["mean"] == pytest.approx(imd.mean()) and row["std"] == pytest.approx(imd.std(ddof=1))
    assert set(levels.comparison.n_seeds) == {3}
    # IMD and FID move by 0 %, +30 %, −10 % of WGAN's mean over the seeds: not significant with 2 dof; KID's
    # difference is the same in every seed, so significant
    assert dict(zip(levels.comparison.metric, levels.comparison.better)) == {"imd": "", "fid": "", "kid": "wgan"}
    assert main([str(root)]) == 0
    assert {"summary_seeds.csv", "comparison.csv"} <= {p.name for p in root.iterdir()}
    table = (root / "table.md").read_text()
    assert "Mean over 3 training seeds" in table and "(by training seed)" in table
    assert [ln.split(" | ")[0] for ln in table.splitlines() if "**" in ln] == ["| KID×10³"]


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
