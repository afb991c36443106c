"""Each committed reference's derived files equal what today's code makes from its stored runs, so a reference
can never disagree with the code that claims it (scripts/regenerate_references.py rewrites them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ganeval.studies.stored import REGENERATORS, relative_paths

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference"
DERIVED = ("verdict.md", "verdict.csv", "table.md", "summary.json", "summary.csv", "comparison.csv",
           "summary_seeds.csv")


@pytest.mark.parametrize("name", sorted(REGENERATORS))
def test_reference_derived_files_are_what_the_code_makes(name: str, tmp_path: Path) -> None:
    src = REFERENCE / name
    REGENERATORS[name](src, tmp_path)
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made, "the regenerator wrote nothing"
    compared = [f for f in made if f in DERIVED]
    assert "verdict.md" in compared and "summary.json" in compared
    for f in compared:  # timings, paths and machine fields come from the stored record, so whole files compare
        assert (tmp_path / f).read_text() == (src / f).read_text(), f"{name}/{f} differs from what the code makes"
    assert "/tmp/" not in (src / "summary.json").read_text()  # no scratch folder of the machine that made it


def test_relative_paths_cuts_the_scratch_folder() -> None:
    doc = {"a": "/tmp/x/cache", "b": ["/tmp/x/models/m.pt", 3], "c": "/tmp/x", "d": "/tmp/xy/z"}
    assert relative_paths(doc, "/tmp/x") == {"a": "cache", "b": ["models/m.pt", 3], "c": ".", "d": "/tmp/xy/z"}


def test_torus_seeds_are_labelled_by_their_own_values() -> None:
    """With train_seeds=[3, 4, 5] the verdict names seeds 3, 4, 5 (not their positions 0, 1, 2)."""
    from ganeval.studies.stored import read_record, read_runs, summarize_stored
    from ganeval.studies.torus import verdict_files

    src = REFERENCE / "torus"
    record, rows = read_record(src), read_runs(src)
    record.config = {**record.config, "train_seeds": [3, 4, 5]}
    summary, comparison, seeds = summarize_stored(rows, record)
    text = verdict_files(record, rows, summary, comparison, seeds)["verdict.md"]
    assert "seed 3: 9.7 ± 6.3 vs 70.1 ± 8.8 (separate); seed 4:" in text and "seed 0:" not in text
    assert "per training seed 3, 4, 5: good 0.008, 0.042, 0.012" in text


def test_heat_traces_config_hash_is_what_its_config_and_inputs_give() -> None:
    """(issue #26) heat_traces' record names the hash today's code keys its config and inputs by: its resolved config
    less the number-neutral keys, the datasets' content hashes and the extractor's identity, hashed here again."""
    from hydra.utils import instantiate

    from ganeval.app.plan import numeric_config
    from ganeval.hashing import array_identity
    from ganeval.protocol.store import identity_hash
    from ganeval.studies.stored import read_record

    record = read_record(REFERENCE / "heat_traces")
    cfg = record.config
    data = {f"datasets.{k}": array_identity(instantiate(v), 16) for k, v in cfg["datasets"].items()}
    content = {"data": data, "extractor": instantiate(cfg["features"]).identity(), "generators": {}}
    assert record.config_hash == identity_hash({"config": numeric_config(cfg), "content": content}) == "f97e5062e7932411"
    assert cfg["run_experiment"]["_target_"] == "ganeval.studies.heat_traces.run"  # the module today's code runs
