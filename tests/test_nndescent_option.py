"""metrics.imd.nndescent (issue #26): pynndescent's build parameters for knn=approx, checked like every option,
reaching the graph IMD is computed on, and hashed only when not the defaults (no stored result changes its hash)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from apphelp import compose_config
from ganeval.app.plan import settings_from_config
from ganeval.metrics import Metrics, get_metric, imd
from ganeval.metrics.imd import default_t, imd_from_traces, trace_from_graph
from ganeval.metrics.knn_approx import DEFAULT_PARAMS, approx_knn, brute_force_knn, knn_recall
from ganeval.metrics.synthetic import pool3_like
from ganeval.protocol import Settings
from ganeval.protocol.store import identity_hash

LOW = {"n_neighbors_min": 10, "n_neighbors_factor": 1, "n_trees": 2, "n_iters": 5, "max_candidates": 20}
WEAK = {"n_neighbors_min": 10, "n_neighbors_factor": 1, "n_trees": 1, "n_iters": 1, "max_candidates": 10}


@pytest.mark.parametrize("value", [
    {"n_trees": 0}, {"n_trees": True}, {"n_trees": 2.0}, {"n_iters": 0}, {"delta": 1.0}, {"delta": "0.1"},
    {"trees": 2}, [2, 5], "fast", 3,
])
def test_bad_values_are_refused_naming_the_option(value: object) -> None:
    with pytest.raises(ValueError, match=r"metrics\.imd\.nndescent must be null \(the defaults\) or a mapping of "
                                         r"pynndescent build parameters.*got"):
        Metrics({"imd": {"nndescent": value}})


def test_values_are_completed_and_the_defaults_leave_no_trace() -> None:
    assert Metrics({"imd": {"nndescent": {"n_trees": 2}}})["imd"]["nndescent"] == {**DEFAULT_PARAMS, "n_trees": 2}
    assert Metrics({"imd": {"nndescent": {"n_iters": None, "delta": 0.001}}})["imd"]["nndescent"] is None  # defaults
    plain = Metrics(["imd", "fid"])
    assert "nndescent" not in plain.as_dict()["imd"] and plain["imd"]["nndescent"] is None
    assert Metrics({"imd": {"nndescent": dict(DEFAULT_PARAMS)}, "fid": None}).as_dict() == plain.as_dict()
    assert Metrics({"imd": {"nndescent": LOW}}).as_dict()["imd"]["nndescent"] == {**DEFAULT_PARAMS, **LOW}


def test_config_hash_moves_only_when_not_at_default() -> None:
    """The identity a results directory is keyed by is the one it was before the option existed, unless it is set."""
    base = Settings(runs=2, sample_size=50, metrics=["imd"], seed=0)
    before = {"sample_size": 50, "metrics": {"imd": {"k": 5, "m": 10, "nv": 100, "normalization": "empty",
              "knn": "exact", "knn_precision": "float32", "rademacher": False, "variance_reduction": "chebyshev"}},
              "seed": 0, "device": "cpu", "draws": 2}  # Settings.identity() without metrics.imd.nndescent
    assert base.identity() == before
    same = dataclasses.replace(base, metrics={"imd": {"nndescent": {"n_trees": 8, "max_candidates": 60}}})
    low = dataclasses.replace(base, metrics={"imd": {"knn": "approx", "nndescent": LOW}})
    approx = dataclasses.replace(base, metrics={"imd": {"knn": "approx"}})
    assert identity_hash(same.identity()) == identity_hash(base.identity())
    assert identity_hash(low.identity()) != identity_hash(approx.identity())


def test_hydra_override_reaches_the_settings() -> None:
    cfg = compose_config(["experiment=stability", "metrics.imd.nndescent={n_trees:2,n_iters:5}"])
    assert settings_from_config(cfg).metrics["imd"]["nndescent"] == {**DEFAULT_PARAMS, "n_trees": 2, "n_iters": 5}
    assert compose_config([]).metrics.imd.nndescent is None
    with pytest.raises(ValueError, match=r"metrics\.imd\.nndescent must be"):
        settings_from_config(compose_config(["metrics.imd.nndescent={n_trees:0}"]))


def test_library_refuses_nndescent_with_exact_knn() -> None:
    x = np.zeros((30, 3))
    with pytest.raises(ValueError, match="used only with knn='approx'"):
        imd(x, x, nndescent={"n_trees": 2})


@pytest.mark.slow  # over 30 s on the 2-core development machine (issue #56)
def test_parameters_reach_the_graph_imd_is_computed_on() -> None:
    """imd(knn='approx', nndescent=WEAK) equals IMD computed by hand on approx_knn(params=WEAK)'s graphs, which are
    not the exact ones (recall of the true 5-NN well below 1), unlike the default parameters' graphs."""
    x = pool3_like(1500, 64, seed=0)
    y = pool3_like(1500, 64, seed=1, distribution_seed=1)
    low = approx_knn(x, 5, params=WEAK)
    assert knn_recall(low, brute_force_knn(x, 5)) < 0.9
    assert knn_recall(approx_knn(x, 5), brute_force_knn(x, 5)) > 0.99
    rng = np.random.default_rng(3)
    ts = default_t()
    px, py = rng.standard_normal((1500, 100)), rng.standard_normal((1500, 100))
    by_hand = imd_from_traces(*(trace_from_graph(torch.from_numpy(approx_knn(a, 5, seed=3, params=WEAK)), ts, probes=p)
                                for a, p in ((x, px), (y, py))), ts)
    assert imd(x, y, seed=3, knn="approx", nndescent=WEAK) == pytest.approx(by_hand, rel=1e-12)
    assert imd(x, y, seed=3, knn="approx", nndescent=WEAK) != imd(x, y, seed=3, knn="approx")
    # the protocol's statistics stage (metrics.imd.nndescent in a config) builds the same graph
    opts = Metrics({"imd": {"knn": "approx", "nndescent": WEAK}})["imd"]
    graph = get_metric("imd").prepare(torch.from_numpy(x), opts, [], None)
    assert np.array_equal(graph.nbrs.numpy(), approx_knn(x, 5, seed=0, params=WEAK))


def test_ganeval_score_option_takes_a_mapping() -> None:
    """`ganeval-score --option imd.nndescent={n_trees: 2}` (YAML) reaches the option table like a config does."""
    from ganeval.app.score import parse_option

    chosen: dict = {"imd": {}}
    parse_option("imd.nndescent={n_trees: 2, n_iters: 5}", chosen)
    assert Metrics(chosen)["imd"]["nndescent"] == {**DEFAULT_PARAMS, "n_trees": 2, "n_iters": 5}
