"""KID's subset size follows one rule at every entry point (issue 45): without a chosen `subset_size`, the subsets
hold min(1000, the rows each run scores per set), with a note, and the size is recorded with the numbers; a chosen
size larger than the sample is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import ganeval
from ganeval.protocol.settings import fit_kid_subset

RNG = np.random.default_rng(0)
REAL, FAKE = RNG.normal(size=(700, 6)), RNG.normal(size=(700, 6)) + 0.2


def test_evaluate_shrinks_kid_subsets_to_the_sample_size_with_a_note() -> None:
    with pytest.warns(UserWarning, match=r"KID's subsets hold 600 rows \(sample_size=600.*metrics=\{'kid': \{'subset_size': N\}\}"):
        shrunk = ganeval.evaluate(REAL, FAKE, runs=2, sample_size=600, metrics=["kid"], progress=False)
    chosen = ganeval.evaluate(REAL, FAKE, runs=2, sample_size=600, metrics={"kid": {"subset_size": 600}}, progress=False)
    assert shrunk["mean"].tolist() == chosen["mean"].tolist()  # the same number as choosing 600
    assert shrunk.attrs["metrics"]["kid"]["subset_size"] == 600  # recorded with the numbers


def test_a_chosen_subset_larger_than_the_sample_is_refused() -> None:
    with pytest.raises(ValueError, match=r'"subset_size": 650}} exceeds sample_size=600'):
        ganeval.evaluate(REAL, FAKE, runs=2, sample_size=600, metrics={"kid": {"subset_size": 650}}, progress=False)


def test_the_default_stays_1000_when_it_fits() -> None:
    assert fit_kid_subset(["imd", "kid"], 1000) == (["imd", "kid"], None)
    assert fit_kid_subset({"kid": {"subset_size": 50}}, 10) == ({"kid": {"subset_size": 50}}, None)  # chosen: kept
    metrics, note = fit_kid_subset(("imd", "kid"), 300)
    assert metrics["kid"]["subset_size"] == 300 and note is not None


def test_protocol_on_pools_under_1000_rows_scores_kid_as_evaluate_does() -> None:
    pytest.importorskip("torchmetrics")
    from ganeval.torchmetrics import Protocol

    p = Protocol(["imd", "fid", "kid"], feature="identity")
    p.update(torch.from_numpy(REAL[:500]).float(), real=True)
    p.update(torch.from_numpy(FAKE[:500]).float(), real=False)
    with pytest.warns(UserWarning, match="KID's subsets hold 500 rows"):
        out = p.compute()
    want = ganeval.evaluate(REAL[:500].astype(np.float32), FAKE[:500].astype(np.float32), runs=1, sample_size=500,
                            metrics={"imd": None, "fid": None, "kid": {"subset_size": 500}}, progress=False)
    assert {k: float(v) for k, v in out.items() if not k.endswith("_se")} == dict(zip(want.metric, want["mean"]))
    assert float(out["imd_se"]) == float(want.set_index("metric").loc["imd", "se"])  # IMD's probe standard error


def test_the_app_fits_the_default_subset_and_records_it(tmp_path: Path) -> None:
    """The Hydra app follows the same rule: KID at the metrics group's default (1000) with sample_size=100 runs with
    subsets of 100 and a note, the config recording the size used; the number is evaluate's with subset_size=100."""
    import json

    from apphelp import run_inprocess

    real, fake = REAL[:300].astype(np.float32), FAKE[:300].astype(np.float32)  # as the app holds features
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    s = run_inprocess(["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
                       f"generator.path={tmp_path / 'fake.npy'}", "features=identity", "metrics=default",
                       "metrics.imd=null", "metrics.fid=null", "sample_size=100", "runs=2", "progress=false",
                       f"results_dir={tmp_path / 'res'}"])
    want = ganeval.evaluate(real, fake, runs=2, sample_size=100, metrics={"kid": {"subset_size": 100}},
                            progress=False)
    assert s.set_index("metric").loc["kid", "mean"] == want.set_index("metric").loc["kid", "mean"]
    record = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert record["config"]["metrics"]["kid"]["subset_size"] == 100


def test_a_training_loop_gets_the_kid_note_once_at_its_own_line() -> None:
    """A metric computed at every step warns KID's subset note once (not at each compute()), and the warning points
    at the caller's line (this file), not ganeval's or torchmetrics' (issue 57). Kills: the note warned from
    `Settings` at every compute(), or with a fixed stacklevel that lands inside ganeval."""
    pytest.importorskip("torchmetrics")
    import warnings

    from ganeval.torchmetrics import Protocol

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # every emission counted (no deduplication by location)
        p = Protocol(["kid"], features="identity", runs=2, sample_size=50)
        for _step in range(3):  # three steps of a training loop
            p.update(torch.from_numpy(REAL[:60]).float(), real=True)
            p.update(torch.from_numpy(FAKE[:60]).float(), real=False)
            p.compute()
            p.reset()
    notes = [w for w in seen if "KID's subsets hold" in str(w.message)]
    assert len(notes) == 1 and notes[0].filename == __file__, [(w.filename, w.lineno, str(w.message)) for w in seen]


def test_evaluate_points_the_kid_note_at_the_callers_line() -> None:
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ganeval.evaluate(REAL, FAKE, runs=2, sample_size=600, metrics=["kid"], progress=False)
    notes = [w for w in seen if "KID's subsets hold" in str(w.message)]
    assert [w.filename for w in notes] == [__file__]
