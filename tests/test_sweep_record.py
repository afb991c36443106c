"""The run record (ganeval/results/record.py): which runs compare given sets, what makes runs comparable, and
reading a summary.json back with every check at its edge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ganeval.results.record import RunRecord, _accepted, package_versions


def _rec(**kw: object) -> RunRecord:
    return RunRecord(config_hash="h", config={}, seed=0, device="cpu", packages={"python": "3"}, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("generators, dims, config, want", [
    (None, None, {}, False),
    ({"a": {"source": "word vectors"}, "b": {"source": "word vectors"}}, None, {}, True),
    ({"a": {"source": "word vectors"}, "b": {"kind": "module"}}, None, {}, False),  # one a generator's samples
    ({"a": {"source": "file"}}, {"real": 5, "a": 5}, {}, False),
    ({"a": {"source": "file"}}, {"real": 5, "a": 7}, {}, True),  # another dimension: another layer
    ({"a": {"source": "file"}}, {"real": 5, "a": 5}, {"real_features": "dinov2"}, True),
    ({"a": {"source": "generator"}}, {"real": 5, "a": 7}, {}, False),
    ({"a": {"source": "word vectors"}, "b": {"source": "generator"}}, None, {}, False),
    ({"a": "not a dict"}, {"real": 1, "a": 2}, {}, False),
])
def test_which_runs_compare_given_sets(generators: dict | None, dims: dict | None, config: dict,  # type: ignore[type-arg]
                                       want: bool) -> None:
    r = _rec(generators=generators, dims=dims)
    r.config = config
    assert r.between_given_sets() is want


def test_the_protocol_is_what_makes_numbers_comparable() -> None:
    r = _rec(extractor={"name": "x"}, knn="exact")
    r.config = {"sample_size": 5, "confidence": 0.9, "metrics": {"fid": {}}, "runs": 3}
    assert r.protocol() == {"sample_size": 5, "confidence": 0.9, "extractor": {"name": "x"},
                            "metrics": {"fid": {}}, "knn": "exact"}


def test_none_fields_are_left_out_and_read_back(tmp_path: Path) -> None:
    import pandas as pd

    r = _rec(runs=3)
    r.set_results(pd.DataFrame({"metric": ["fid"], "mean": [1.5]}), {"extract": 1.23456, "score": 2})
    doc = r.to_dict()
    assert "experiment" not in doc and doc["runs"] == 3 and doc["stage_seconds"] == {"extract": 1.235, "score": 2.0}
    assert doc["results"] == [{"metric": "fid", "mean": 1.5}]
    assert json.loads(r.to_json()) == doc
    path = r.write(tmp_path / "summary.json")
    assert RunRecord.read(path) == r
    assert set(package_versions()) == {"python", "ganeval", "torch", "numpy", "scipy", "pandas", "hydra-core",
                                       "pynndescent"}


def test_a_summary_json_is_checked_when_read(tmp_path: Path) -> None:
    good = _rec().to_dict()
    with pytest.raises(ValueError, match=r"^s is not a run record: it holds a JSON list, not an object$"):
        RunRecord.from_dict([], "s")
    with pytest.raises(ValueError, match=r"missing keys \['seed'\], unknown keys \['zz'\]; give a summary.json"):
        RunRecord.from_dict({**{k: v for k, v in good.items() if k != "seed"}, "zz": 1}, "s")
    with pytest.raises(ValueError, match=r"^s: seed must be int, got str '0'$"):
        RunRecord.from_dict({**good, "seed": "0"}, "s")
    with pytest.raises(ValueError, match=r"^s: seed must be int, got bool True$"):
        RunRecord.from_dict({**good, "seed": True}, "s")
    assert RunRecord.from_dict({**good, "seconds_per_run": 2}, "s").seconds_per_run == 2  # an int where a float is
    with pytest.raises(ValueError, match=r"runs must be int or NoneType, got float"):
        RunRecord.from_dict({**good, "runs": 2.5}, "s")
    assert RunRecord.from_dict({**good, "runs": None}, "s").runs is None
    with pytest.raises(ValueError, match=r"^cannot read the run record .*none.json: No such file"):
        RunRecord.read(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match=r"^the run record .*bad.json is not JSON \("):
        RunRecord.read(tmp_path / "bad.json")
    assert _accepted(float | None) == (float, type(None), int) and _accepted(dict[str, int]) == (dict,)
