"""The run record (summary.json) and an experiment's result files: round trip, validation, the reference reproduced."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ganeval.results import RunRecord, write_results
from ganeval.results.seeds import Levels, summarize_levels, variance_record

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "quickstart"


def _reference() -> tuple[RunRecord, Levels]:
    """The reference quickstart's record, and its two-level summaries recomputed from its runs.csv."""
    rows = pd.read_csv(REFERENCE / "runs.csv", keep_default_na=False, na_values=[""])
    rec = RunRecord.read(REFERENCE / "summary.json")
    return rec, summarize_levels(rows, rec.config["confidence"], rec.config["sample_size"])


def test_reference_quickstart_files_reproduced_byte_for_byte(tmp_path: Path) -> None:
    rec, levels = _reference()
    summary = levels.summary
    again = dataclasses.replace(rec, results=[], variance_shares=None)
    again.set_results(summary, rec.stage_seconds)
    again.variance_shares = variance_record(levels.variance)
    assert again == rec  # the pipeline's record of these runs holds the committed numbers
    paths = write_results(tmp_path, summary, levels.comparison, again, title=rec.config["title"], seeds=levels.seeds)
    assert sorted(p.name for p in paths) == ["comparison.csv", "summary.csv", "summary.json", "summary_seeds.csv",
                                             "table.md", "table.tex"]
    for p in paths:
        assert p.read_bytes() == (REFERENCE / p.name).read_bytes(), p.name
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "summary.csv")["mean"], summary["mean"])  # full precision


def test_old_record_reads_into_typed_fields() -> None:
    rec = RunRecord.read(REFERENCE / "summary.json")
    assert rec.experiment == "quickstart" and rec.runs == 30 and rec.seed == 0 and rec.knn == "exact"
    assert rec.extractor == {"channels": None, "name": "pixels", "scale": "x/255", "size": None}
    assert set(rec.generators or {}) == {f"digits/{m}/train_seed={i}" for m in ("wgan", "wgan_gp") for i in range(3)}
    assert rec.overrides == ["progress=false"] and rec.hole_fraction is None
    assert "across training seeds" in rec.interval_covers and len(rec.variance_shares or []) == 6
    assert rec.protocol() == {"sample_size": 1000, "confidence": 0.99, "extractor": rec.extractor,
                              "metrics": rec.config["metrics"], "knn": "exact"}
    assert rec.to_json() == (REFERENCE / "summary.json").read_text()


def test_round_trip_write_read_equals(tmp_path: Path) -> None:
    summary = _reference()[1].summary
    rec = RunRecord(config_hash="abc", config={"runs": 10, "sample_size": 1000}, seed=3, device="cpu",
                    runs=10, command="ganeval seed=3", overrides=["seed=3"], extractor={"name": "identity"},
                    knn="approx", generators={"d/m": {"kind": "samples"}}, seconds_per_run=0.25,
                    hole_fraction={"real": 0.0, "bad": 0.125},
                    verdict=[{"metric": "imd", "intervals_overlap": False, "paired_better": "good"}])
    rec.set_results(summary, {"runs": 1.23456, "features": 2})
    assert rec.stage_seconds == {"runs": 1.235, "features": 2.0} and len(rec.results) == len(summary)
    path = rec.write(tmp_path / "summary.json")
    back = RunRecord.read(path)
    assert back == rec
    doc = json.loads(path.read_text())
    assert "experiment" not in doc and doc["packages"]["torch"]  # None fields are left out


VALID = RunRecord(config_hash="a", config={}, seed=0, device="cpu", packages={"python": "3.11"}).to_dict()


@pytest.mark.parametrize("text, match", [
    ("{not json", "is not JSON"),
    ("[1, 2]", "it holds a JSON list, not an object"),
    (json.dumps({k: v for k, v in VALID.items() if k != "packages"}), r"missing keys \['packages'\]"),
    (json.dumps({**VALID, "colour": "red"}), r"unknown keys \['colour'\]"),
    (json.dumps({**VALID, "seed": "0"}), "seed must be int, got str"),
    (json.dumps({**VALID, "runs": True}), "runs must be int or NoneType, got bool"),
])
def test_read_refuses_garbage_naming_the_path(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "summary.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=match) as err:
        RunRecord.read(path)
    assert str(path) in str(err.value)


def test_read_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"cannot read the run record {tmp_path / 'none.json'}"):
        RunRecord.read(tmp_path / "none.json")
