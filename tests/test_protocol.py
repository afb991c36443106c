"""The subsample protocol: documented draws, pairing, determinism, resuming, refusing, validation."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from ganeval import evaluate
from ganeval.metrics import fid, imd, kid
from ganeval.metrics import Metrics
from ganeval.metrics.streams import metric_generator
from ganeval.protocol import ConfigMismatchError, evaluate_detailed

METRICS = {"imd": {"nv": 10, "m": 8}, "fid": {}, "kid": {"subsets": 5, "subset_size": 30}}
N = 60


def _sets(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    real = rng.normal(size=(150, 6)).astype(np.float32)
    a = rng.normal(size=(120, 6)).astype(np.float32)
    b = (1.5 * rng.normal(size=(130, 6)) + 0.5).astype(np.float32)
    return real, a, b


def _call(real, fake, **kw):  # type: ignore[no-untyped-def]
    args = dict(runs=3, sample_size=N, metrics=METRICS, seed=7, progress=False)
    args.update(kw)
    return evaluate_detailed(real, fake, **args)


def test_run_draws_follow_the_documented_protocol() -> None:
    real, a, _ = _sets()
    ev = _call(real, a)
    opts = Metrics(METRICS)
    for r in range(3):
        rng = np.random.default_rng([7, r])
        x = real[rng.choice(len(real), N, replace=False)]
        y = a[rng.choice(len(a), N, replace=False)]
        want = {  # each metric's random choices from its own stream, default_rng([7, r, stream_key(metric)])
            "imd": imd(x, y, k=5, m=8, nv=10, seed=metric_generator("imd", 7, r)),
            "fid": fid(x, y),
            "kid": kid(x, y, subsets=5, subset_size=30, seed=metric_generator("kid", 7, r))[0],
        }
        got = ev.runs[ev.runs.run == r].set_index("metric")["value"]
        assert got["imd"] == pytest.approx(want["imd"], rel=1e-4, abs=1e-6)
        assert got["fid"] == pytest.approx(want["fid"], rel=1e-4, abs=1e-6)
        assert got["kid"] == pytest.approx(want["kid"], rel=1e-3, abs=1e-6)
    assert opts["imd"]["k"] == 5 and set(ev.runs.columns) == {"run", "model", "metric", "value"}


def test_summary_columns_and_values() -> None:
    real, a, _ = _sets()
    s = evaluate(real, a, runs=3, sample_size=N, metrics=METRICS, seed=7, progress=False)
    assert list(s.columns) == ["model", "metric", "mean", "std", "ci_low", "ci_high", "half_width",
                               "n_runs", "sample_size", "confidence"]
    assert list(s.metric) == ["imd", "fid", "kid"] and (s.n_runs == 3).all() and (s.sample_size == N).all()
    assert ((s.ci_low < s["mean"]) & (s["mean"] < s.ci_high)).all()


def test_adding_a_model_changes_no_other_numbers_and_pairs_runs() -> None:
    real, a, b = _sets()
    alone = _call(real, {"a": a}).runs
    both = _call(real, {"a": a, "b": b})
    pd.testing.assert_frame_equal(both.runs[both.runs.model == "a"].reset_index(drop=True), alone)
    cmp_ = both.comparison
    assert set(cmp_.metric) == {"imd", "fid", "kid"} and (cmp_.a == "a").all() and (cmp_.b == "b").all()
    fid_row = cmp_[cmp_.metric == "fid"].iloc[0]
    assert fid_row["ci_high"] < 0 and fid_row["better"] == "a"  # b is shifted and scaled: clearly worse


def test_deterministic() -> None:
    real, a, _ = _sets()
    pd.testing.assert_frame_equal(_call(real, a).runs, _call(real, a).runs)
    other = _call(real, a, seed=8).runs
    assert not np.allclose(other["value"], _call(real, a).runs["value"])


def test_resume_extends_and_matches_uninterrupted(tmp_path) -> None:
    real, a, b = _sets()
    fresh = _call(real, {"a": a, "b": b}, runs=4, results_dir=tmp_path / "fresh")
    d = tmp_path / "resumed"
    part = _call(real, {"a": a, "b": b}, runs=2, results_dir=d)
    assert sorted(pd.read_csv(d / "runs.csv")["run"].unique()) == [0, 1]
    stored = pd.read_csv(d / "runs.csv")
    assert len(stored) == len(part.runs)
    done = _call(real, {"a": a, "b": b}, runs=4, results_dir=d)
    pd.testing.assert_frame_equal(done.summary, fresh.summary)
    pd.testing.assert_frame_equal(done.runs, fresh.runs)
    meta = json.loads((d / "runs.meta.json").read_text())
    assert meta["identity"]["sample_size"] == N and len(meta["config_hash"]) == 16


def test_resume_reads_stored_rows_instead_of_recomputing(tmp_path) -> None:
    real, a, _ = _sets()
    _call(real, a, runs=2, results_dir=tmp_path)
    rows = pd.read_csv(tmp_path / "runs.csv")
    rows.loc[(rows.run == 0) & (rows.metric == "fid"), "value"] = 123.0  # mark a stored value
    rows.to_csv(tmp_path / "runs.csv", index=False)
    meta = json.loads((tmp_path / "runs.meta.json").read_text())  # sign the edit, as ganeval's writer would
    meta["runs_sha256"] = hashlib.sha256((tmp_path / "runs.csv").read_bytes()).hexdigest()
    (tmp_path / "runs.meta.json").write_text(json.dumps(meta))
    again = _call(real, a, runs=3, results_dir=tmp_path).runs
    assert again[(again.run == 0) & (again.metric == "fid")]["value"].iloc[0] == 123.0
    assert sorted(again.run.unique()) == [0, 1, 2]


def test_changed_config_is_refused_then_overwritten(tmp_path) -> None:
    real, a, _ = _sets()
    _call(real, a, runs=2, results_dir=tmp_path)
    with pytest.raises(ConfigMismatchError, match="choose another out or pass overwrite=True"):
        _call(real, a, runs=2, results_dir=tmp_path, sample_size=N - 1)
    with pytest.raises(ConfigMismatchError):
        _call(real, a * 2, runs=2, results_dir=tmp_path)  # other data, same settings
    ev = _call(real, a, runs=2, results_dir=tmp_path, sample_size=N - 1, overwrite=True)
    assert (ev.summary.sample_size == N - 1).all()
    assert json.loads((tmp_path / "runs.meta.json").read_text())["identity"]["sample_size"] == N - 1


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"sample_size": 200}, "sample_size=200 is larger than the real pool"),
        ({"sample_size": 125}, "larger than the generated pool"),
        ({"metrics": {"kid": {"subset_size": 100}}}, r"metrics=\{\"kid\": \{\"subset_size\": 100\}\} exceeds sample_size"),
        ({"metrics": {"imd": {"kk": 3}}}, "unknown option 'kk'"),
        ({"metrics": ("imd", "is")}, "unknown metric 'is'"),
        ({"runs": 0}, "runs must be an integer ≥ 1"),
        ({"confidence": 99}, "confidence must lie strictly between 0 and 1"),
    ],
)
def test_bad_input_is_refused_before_work(kw, match) -> None:  # type: ignore[no-untyped-def]
    real, a, _ = _sets()
    with pytest.raises(ValueError, match=match):
        _call(real, a, **kw)


def test_feature_shape_checks() -> None:
    real, a, _ = _sets()
    with pytest.raises(ValueError, match="need features of one dimension, but the real set has 6 features and the "
                                         "generated set fake has 4"):
        _call(real, a[:, :4])
    with pytest.raises(ValueError, match="N×D feature array"):
        _call(real[0], a)


@pytest.mark.slow
def test_parallel_workers_give_the_same_rows(tmp_path) -> None:
    real, a, b = _sets()
    one = _call(real, {"a": a, "b": b}, runs=4).runs
    two = _call(real, {"a": a, "b": b}, runs=4, workers=2, results_dir=tmp_path).runs
    pd.testing.assert_frame_equal(one, two)
    assert len(pd.read_csv(tmp_path / "runs.csv")) == len(one)


@pytest.mark.gpu
def test_cuda_matches_cpu() -> None:
    real, a, b = _sets()
    cpu = _call(real, {"a": a, "b": b}, device="cpu").runs
    gpu = _call(real, {"a": a, "b": b}, device="cuda").runs
    pd.testing.assert_frame_equal(cpu.drop(columns="value"), gpu.drop(columns="value"))
    np.testing.assert_allclose(gpu["value"], cpu["value"], rtol=1e-3, atol=1e-5)


def test_cpu_pools_are_indexed_in_place_never_uploaded(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On a CPU, DeviceRows indexes a pool where it is (a memory-mapped .npy stays mapped: only the drawn rows are
    read; a tensor pool gives a tensor): the whole-pool upload of the GPU path is never taken."""
    import torch

    import ganeval.common
    from ganeval.protocol.draws import DeviceRows

    def no_upload(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a CPU pool was uploaded")

    monkeypatch.setattr(ganeval.common, "upload", no_upload)
    pool = np.arange(40, dtype=np.float32).reshape(10, 4)
    np.save(tmp_path / "pool.npy", pool)
    mapped = np.load(tmp_path / "pool.npy", mmap_mode="r")
    idx = np.array([7, 2, 5])
    rows = DeviceRows("cpu")
    np.testing.assert_array_equal(rows(mapped, idx), pool[idx])
    got = rows(torch.from_numpy(pool), idx)
    assert isinstance(got, torch.Tensor) and torch.equal(got, torch.from_numpy(pool[idx]))
