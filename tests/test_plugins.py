"""Adding a metric or an extractor is one module, one registry entry and one config: both go through
`evaluate` and through `ganeval` like the built-in ones."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd
import pytest

from apphelp import run_inprocess
from ganeval import evaluate

PLUGIN = textwrap.dedent('''
    """A toy plugin: a metric (squared distance of the means, times `weight`) and an extractor (row means)."""
    import torch

    from ganeval.features.base import Extractor, register
    from ganeval.metrics import function_metric, option, register_metric
    from ganeval.metrics.registry import real


    def mean_gap(x: torch.Tensor, y: torch.Tensor, rng, weight: float) -> float:
        return weight * float(((x.mean(0) - y.mean(0)) ** 2).sum())


    register_metric(function_metric("mean_gap", mean_gap, [option("weight", 1.0, real())], label="Mean gap"))


    def run_toy(plan):
        """A toy experiment: its own key `toy_scale`, read from the plan's params."""
        return {"toy_scale": float(plan.params.toy_scale), "runs": plan.settings.runs, "results_dir": plan.results_dir}


    @register("row_mean")
    class RowMean(Extractor):
        images = False
        cacheable = False

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            return batch.float().reshape(len(batch), 4, -1).mean(dim=2)
''')


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("plugin")
    (root / "toyplugin.py").write_text(PLUGIN)
    (root / "configs" / "features").mkdir(parents=True)  # the one config file, in the user's own config dir
    (root / "configs" / "features" / "row_mean.yaml").write_text("_target_: toyplugin.RowMean\n")
    (root / "configs" / "experiment").mkdir()  # an experiment: one file declares its keys and what runs
    (root / "configs" / "experiment" / "toy.yaml").write_text(
        "# @package _global_\n# A toy experiment.\nrun_experiment: {_target_: toyplugin.run_toy, _partial_: true}\n"
        "toy_scale: 1.0\n")
    sys.path.insert(0, str(root))
    import toyplugin  # noqa: F401  registers both

    yield str(root)
    sys.path.remove(str(root))


def _sets() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(300, 16)).astype(np.float32), (rng.normal(size=(300, 16)) + 0.5).astype(np.float32)


def test_a_registered_metric_runs_through_evaluate(plugin: str) -> None:
    real, fake = _sets()
    s = evaluate(real, fake, runs=4, sample_size=200, metrics={"mean_gap": {"weight": 2.0}, "fid": {}},
                 seed=1, progress=False)
    gap = s.set_index("metric").loc["mean_gap"]
    assert gap["n_runs"] == 4 and 2 * 16 * 0.5**2 * 0.5 < gap["mean"] < 2 * 16 * 0.5**2 * 1.5
    with pytest.raises(ValueError, match=r"metrics=\{\"mean_gap\": \{\"weight\": \.\.\.\}\} must be a finite number, got .x."):
        evaluate(real, fake, runs=2, sample_size=200, metrics={"mean_gap": {"weight": "x"}}, progress=False)


def test_a_registered_metric_and_extractor_run_through_ganeval(plugin: str, tmp_path: Path) -> None:
    real, fake = _sets()
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    s = run_inprocess([
        "experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
        f"generator.path={tmp_path / 'fake.npy'}", f"hydra.searchpath=[file://{plugin}/configs]",
        "features=row_mean", "plugins=[toyplugin]",
        "~metrics.imd", "~metrics.kid", "+metrics.mean_gap={weight: 1.0}", "runs=3", "sample_size=200",
        "progress=false", "plots=false", f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}",
    ])
    assert list(s.metric) == ["fid", "mean_gap"] and (s.n_runs == 3).all()
    table = (tmp_path / "res" / "table.md").read_text()
    assert "Mean gap" in table
    rows = pd.read_csv(tmp_path / "res" / "runs.csv")
    assert set(rows.metric) == {"fid", "mean_gap"}


def test_an_experiment_is_one_file_and_its_keys_are_checked(plugin: str, tmp_path: Path) -> None:
    args = [f"hydra.searchpath=[file://{plugin}/configs]", "experiment=toy", "plugins=[toyplugin]", "runs=4",
            f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}"]
    s = run_inprocess([*args, "toy_scale=2.5"])
    assert s["toy_scale"] == 2.5 and s["runs"] == 4
    with pytest.raises(ValueError, match=r"toy_scalr: no such key, nothing would read it \(did you mean toy_scale\?\)"):
        run_inprocess([*args, "+toy_scalr=2.5"])
    with pytest.raises(Exception, match="runs"):  # the schema types the shared keys for it too
        run_inprocess([*args, "runs=many"])


def test_registering_a_taken_name_is_refused(plugin: str) -> None:
    from ganeval.metrics import function_metric, register_metric

    with pytest.raises(ValueError, match="already registered"):
        register_metric(function_metric("mean_gap", lambda x, y, rng: 0.0))
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        evaluate(*_sets(), runs=2, sample_size=100, metrics=["nope"], progress=False)
