"""The protocol's settings and draws (ganeval/protocol/settings.py, draws.py) at every edge and default."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from ganeval.metrics.registry import Metrics
from ganeval.protocol import draws as D
from ganeval.protocol.settings import DEFAULT_METRICS, Settings, fit_kid_subset, kid_subset_chosen


def test_the_defaults_are_the_papers_protocol() -> None:
    """100 runs of 10 000 rows at 99 % (the paper's Table 1 protocol), IMD, FID and KID, seed 0, one CPU worker."""
    s = Settings()
    assert (s.runs, s.sample_size, s.seed, s.confidence, s.workers, s.probe_repeats) == (100, 10000, 0, 0.99, 1, 0)
    assert DEFAULT_METRICS == ("imd", "fid", "kid") and list(s.metrics) == ["imd", "fid", "kid"]
    assert s.progress is True and s.subsamples is True and s.device == "cpu"
    assert s.identity() == {"sample_size": 10000, "metrics": Metrics(DEFAULT_METRICS).as_dict(), "seed": 0,
                            "device": "cpu", "draws": 2}


@pytest.mark.parametrize("field, lowest", [("runs", 1), ("sample_size", 2), ("seed", 0), ("workers", 1),
                                           ("probe_repeats", 0)])
def test_each_count_is_checked_at_its_edge(field: str, lowest: int) -> None:
    kw = {"metrics": ["fid"], "sample_size": 3} | ({"metrics": ["imd"], "sample_size": 20} if field == "probe_repeats"
                                                   else {})
    assert getattr(Settings(**{**kw, field: lowest}), field) == lowest  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=field):
        Settings(**{**kw, field: lowest - 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=field):
        Settings(**{**kw, field: True})  # type: ignore[arg-type]


def test_numbers_are_stored_as_plain_ints_and_floats() -> None:
    s = Settings(runs=np.int64(2), sample_size=np.int32(5), seed=np.int64(3), confidence=np.float32(0.5),  # type: ignore[arg-type]
                 metrics=["fid"])
    assert [type(v) for v in (s.runs, s.sample_size, s.seed, s.confidence)] == [int, int, int, float]
    assert isinstance(s.metrics, Metrics)


def test_kids_subset_follows_the_sample_size_below_its_default() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = Settings(sample_size=1000, metrics=["kid"])  # the default fits: no note
    assert s.metrics["kid"]["subset_size"] == 1000
    with pytest.warns(UserWarning, match=r"KID's subsets hold 999 rows \(sample_size=999; the default is 1000\)"):
        small = Settings(sample_size=999, metrics=["kid"])
    assert small.metrics["kid"]["subset_size"] == 999
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen = Settings(sample_size=50, metrics={"kid": {"subset_size": 20}})
        Settings(sample_size=50, metrics=["fid"])
        full = Settings(sample_size=50, metrics=["kid", "fid"], subsamples=False)
    assert chosen.metrics["kid"]["subset_size"] == 20 and full.metrics["kid"]["subset_size"] == 1000


def test_which_kid_subsets_count_as_chosen() -> None:
    assert kid_subset_chosen(Metrics(["kid"]))
    assert kid_subset_chosen({"kid": {"subset_size": 5}})
    assert not kid_subset_chosen({"kid": {"degree": 3}}) and not kid_subset_chosen({"kid": None})
    assert not kid_subset_chosen(["kid"]) and not kid_subset_chosen({"fid": {}})
    assert fit_kid_subset(["kid"], 1) == (["kid"], None)  # fewer than 2 rows: refused where the settings are made
    assert fit_kid_subset(["nope"], 5) == (["nope"], None)
    got, note = fit_kid_subset(["kid", "fid"], 2, "rows")
    assert got["kid"]["subset_size"] == 2 and got["fid"] == dict(Metrics(["fid"])["fid"])
    assert note is not None and note.startswith("note: KID's subsets hold 2 rows (rows; the default is 1000)")


def test_settings_refuse_what_cannot_run() -> None:
    with pytest.raises(ValueError, match=r"^probe_repeats=2 repeats IMD's probe draw, but IMD is not among the metrics"):
        Settings(probe_repeats=2, metrics=["fid"], sample_size=3)
    assert Settings(probe_repeats=2, metrics=["imd"], sample_size=20).identity()["probe_repeats"] == 2
    with pytest.raises(ValueError, match=r"^metrics: "):
        Settings(metrics=["nope"], sample_size=3)
    with pytest.raises(ValueError, match="confidence"):
        Settings(confidence=1.0, metrics=["fid"], sample_size=3)


def test_a_pool_smaller_than_the_sample_is_named() -> None:
    s = Settings(sample_size=5, metrics=["fid"])
    s.check_pools({"real": 5, "fake": 7})
    with pytest.raises(ValueError, match=r"^sample_size=5 is larger than fake \(4 rows\)"):
        s.check_pools({"real": 5, "fake": 4})


def test_the_identity_leaves_out_the_run_count_and_the_device_index() -> None:
    a, b = Settings(runs=2, sample_size=3, metrics=["fid"]), Settings(runs=9, sample_size=3, metrics=["fid"])
    assert a.identity() == b.identity() and "probe_repeats" not in a.identity()
    assert Settings(sample_size=4, metrics=["fid"]).identity() != a.identity()
    assert Settings(seed=1, sample_size=3, metrics=["fid"]).identity() != a.identity()


# ------------------------------------------------------------------------------------------------------------------
# Draws (ganeval/protocol/draws.py)
# ------------------------------------------------------------------------------------------------------------------
def test_each_runs_rows_come_from_its_documented_generator() -> None:
    assert D.PROBE_KEY == 1 << 20 and D.DRAWS_KEY == "draws"
    want = np.random.default_rng([4, 2, 1]).choice(50, 7, replace=False)
    assert np.array_equal(D.draw_rows(50, 7, D.run_generator(4, 2, 1)), want)
    assert np.array_equal(D.draw_rows(50, 7, D.run_generator(4, 2)), np.random.default_rng([4, 2]).choice(50, 7, replace=False))
    rows = D.draw_rows(7, 7, D.run_generator(0, 0))
    assert sorted(rows.tolist()) == list(range(7))


def test_a_probe_draw_is_imds_stream_under_the_probe_key() -> None:
    from ganeval.metrics.streams import metric_draws

    a, b = D.probe_draws(3, 1, 2), metric_draws(3, 1, 2, 1 << 20)
    assert a("imd").integers(1 << 30, size=4).tolist() == b("imd").integers(1 << 30, size=4).tolist()
    assert D.probe_draws(3, 1, 2)("imd").random() != metric_draws(3, 1, 2)("imd").random()


def test_a_branch_is_an_independent_copy() -> None:
    rng = np.random.default_rng(1)
    rng.random()
    copy = D.branch(rng)
    assert copy is not rng and copy.random() == rng.random()
    copy.random()
    assert copy.random() != rng.random()


def test_cpu_rows_are_indexed_in_place() -> None:
    rows = D.DeviceRows("cpu")
    pool = np.arange(12).reshape(6, 2)
    idx = np.array([4, 0, 4])
    assert np.array_equal(rows(pool, idx), pool[idx])
    t = torch.from_numpy(pool)
    got = rows(t, idx)
    assert isinstance(got, torch.Tensor) and torch.equal(got, t[[4, 0, 4]])
