"""Precision, recall, density and coverage: equal to the `prdc` package on the same features (tie-free data and
an explicit tie case), to an independent float64 reference, through `evaluate` with intervals, sharing one pass."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from ganeval import evaluate
from ganeval.metrics import Metrics, get_metric, prdc
from ganeval.metrics.streams import metric_draws
from ganeval.metrics.suite import prepare_set, score_pair
from ganeval.protocol.api import evaluate_detailed

prdc_module = importlib.import_module("ganeval.metrics.prdc")
NAMES = ("precision", "recall", "density", "coverage")
PAPERS = {"precision": 3, "recall": 3, "density": 5, "coverage": 5}


def reference(real: np.ndarray, fake: np.ndarray, k: dict[str, int]) -> dict[str, float]:
    """The four metrics by their definitions on exact float64 distances (scipy's cdist: direct differences)."""
    real, fake = real.astype(np.float64), fake.astype(np.float64)

    def radii(a: np.ndarray, kk: int) -> np.ndarray:
        d = cdist(a, a, "sqeuclidean")
        np.fill_diagonal(d, np.inf)  # self excluded by index
        return np.sort(d, axis=1)[:, kk - 1]

    d = cdist(real, fake, "sqeuclidean")
    inside_real = {kk: d < radii(real, kk)[:, None] for kk in set(k.values())}
    return {
        "precision": float(inside_real[k["precision"]].any(axis=0).mean()),
        "recall": float((d < radii(fake, k["recall"])[None, :]).any(axis=1).mean()),
        "density": float(inside_real[k["density"]].sum(axis=0).mean() / k["density"]),
        "coverage": float(inside_real[k["coverage"]].any(axis=1).mean()),
    }


def peer(real: np.ndarray, fake: np.ndarray, nearest_k: int) -> dict[str, float]:
    compute_prdc = pytest.importorskip("prdc").compute_prdc
    return {name: float(v) for name, v in compute_prdc(real, fake, nearest_k).items()}


def sets(n: int, m: int, d: int, dtype: type, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)).astype(dtype), (1.2 * rng.normal(size=(m, d)) + 0.3).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nearest_k", [1, 3, 5])
def test_equal_to_the_prdc_package_on_tie_free_data(dtype: type, nearest_k: int) -> None:
    real, fake = sets(400, 350, 24, dtype, seed=nearest_k)
    ours, theirs = prdc(real, fake, nearest_k), peer(real, fake, nearest_k)
    assert set(ours) == set(NAMES)
    for name in NAMES:  # counts over the same rows: the values are equal, not merely close
        assert ours[name] == pytest.approx(theirs[name], abs=1e-15), name
    assert 0 < ours["precision"] < 1 and 0 < ours["recall"] < 1  # not a trivial case


def test_ties_exact_on_integer_lattice_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ties stated explicitly: points of a small integer lattice, many duplicates, so radii of 0 and pairs at exactly
    the radius occur. On such data prdc's float64 distances are exact too, and "inside" is strictly closer than the
    radius in both (a pair at exactly the radius is outside; a duplicate is inside unless its ball has radius 0)."""
    rng = np.random.default_rng(3)
    real = rng.integers(0, 4, size=(300, 3)).astype(np.float64)
    fake = rng.integers(0, 5, size=(260, 3)).astype(np.float64)
    rechecks = []
    exact = prdc_module.Cross._exact_inside
    monkeypatch.setattr(prdc_module.Cross, "_exact_inside", lambda self, *a: rechecks.append(1) or exact(self, *a))
    for nearest_k in (1, 3, 5):
        ours, theirs = prdc(real, fake, nearest_k), peer(real, fake, nearest_k)
        want = reference(real, fake, {n: nearest_k for n in NAMES})
        for name in NAMES:
            assert ours[name] == theirs[name] == pytest.approx(want[name], abs=1e-15), (nearest_k, name)
    assert rechecks  # the comparisons at exactly the radius went through the float64 recheck


def test_large_offsets_decided_exactly_in_float32() -> None:
    """Features far from the origin: float32 Gram-based distances are off by more than the gaps between many
    distances and radii; the recheck in float64 still gives the exact counts of the definition."""
    real, fake = sets(300, 300, 16, np.float64, seed=5)
    real32, fake32 = (real + 300.0).astype(np.float32), (fake + 300.0).astype(np.float32)
    want = reference(real32, fake32, PAPERS)
    ours = prdc(real32, fake32, k=PAPERS)
    assert ours == pytest.approx(want, abs=1e-15)


def test_papers_k_and_partial_choice() -> None:
    real, fake = sets(300, 300, 8, np.float64, seed=9)
    assert prdc(real, fake, k=PAPERS) == pytest.approx(reference(real, fake, PAPERS), abs=1e-15)
    assert prdc(real, fake, k={"density": 2}) == pytest.approx({"density": reference(real, fake, {**PAPERS, "density": 2})["density"]})


def test_bad_input_is_refused() -> None:
    real, fake = sets(50, 50, 4, np.float64)
    with pytest.raises(ValueError, match="precision.k must be an integer ≥ 1, got 0"):
        prdc(real, fake, k={"precision": 0})
    with pytest.raises(ValueError, match="k must map some of"):
        prdc(real, fake, k={"fid": 3})
    with pytest.raises(ValueError, match="features"):
        prdc(real, fake[:, :3])
    with pytest.raises(ValueError, match="at least 6 are needed"):
        prdc(real[:5], fake, 5)
    for given, match in [({"precision": {"k": True}}, r"metrics.precision.k must be an integer ≥ 1, got True"),
                         ({"coverage": {"nearest_k": 5}}, r"coverage: unknown option 'nearest_k'")]:
        with pytest.raises(ValueError, match=match):
            Metrics(given)
    with pytest.raises(ValueError, match=r'metrics=\{"density": \{"k": 50\}\} must be below sample_size=50'):
        evaluate(real, fake, runs=2, sample_size=50, metrics={"density": {"k": 50}}, progress=False)


def test_registry_entries() -> None:
    for name in NAMES:
        m = get_metric(name)
        assert m.label == name.capitalize() and m.scale == 1.0 and m.higher_is_better and m.input == "features"
        assert m.defaults == {"k": PAPERS[name]}


def test_through_evaluate_each_run_equals_prdc_on_its_subsamples() -> None:
    real, fake = sets(900, 900, 12, np.float32, seed=2)
    ev = evaluate_detailed(real, fake, runs=4, sample_size=300, metrics=list(NAMES), seed=7, progress=False)
    s = ev.summary.set_index("metric")
    assert list(s.index) == list(NAMES) and (s["n_runs"] == 4).all()
    assert ((s["ci_low"] < s["mean"]) & (s["mean"] < s["ci_high"])).all()
    # run r's subsamples are the protocol's documented draws: default_rng([seed, r]), real rows then fake rows
    for r in range(4):
        rng = np.random.default_rng([7, r])
        ri = rng.choice(len(real), 300, replace=False)
        fi = rng.choice(len(fake), 300, replace=False)
        want = prdc(real[ri], fake[fi], k=PAPERS)
        got = ev.runs[ev.runs.run == r].set_index("metric")["value"]
        for name in NAMES:
            assert got[name] == pytest.approx(want[name], abs=1e-15), (r, name)


def test_better_model_is_the_higher_one() -> None:
    rng = np.random.default_rng(4)
    real = rng.normal(size=(600, 6))
    fakes = {"close": rng.normal(size=(600, 6)), "far": rng.normal(size=(600, 6)) + 1.5}
    ev = evaluate_detailed(real, fakes, runs=6, sample_size=300, metrics=["precision", "coverage", "fid"], seed=0,
                           progress=False)
    better = ev.comparison.set_index("metric")["better"]
    assert better["precision"] == better["coverage"] == better["fid"] == "close"


def test_one_pass_shared_and_other_metrics_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked with IMD (exact, k = 5) and KID (summing over every pair), the four reuse IMD's graph and KID's
    cross Gram strips: no k-NN search and no strip of their own; every value is the same as computed alone, and
    IMD, FID and KID are the same as without them."""
    real, fake = sets(400, 400, 10, np.float32, seed=8)
    kid = {"subsets": 50, "subset_size": 100}
    base = Metrics({"imd": {}, "fid": {}, "kid": kid})
    full = Metrics({"imd": {}, "fid": {}, "kid": kid, **{n: {} for n in NAMES}})
    alone = Metrics(list(NAMES))

    def scores(metrics: Metrics) -> dict[str, float]:
        sx, sy = prepare_set(real, metrics, "cpu"), prepare_set(fake, metrics, "cpu")
        return score_pair(sx, sy, metric_draws(1), metrics, "cpu")

    expected = scores(alone)
    assert expected == pytest.approx(prdc(real, fake, k=PAPERS), abs=1e-15)
    before = scores(base)
    searches, own_strips = [], []
    real_knn, real_job = prdc_module.exact_knn_graph, prdc_module.Cross.job
    monkeypatch.setattr(prdc_module, "exact_knn_graph", lambda *a, **kw: searches.append(1) or real_knn(*a, **kw))
    monkeypatch.setattr(prdc_module.Cross, "job", lambda self, *a: own_strips.append(1) or real_job(self, *a))
    both = scores(full)
    assert not searches and not own_strips
    assert {n: both[n] for n in before} == before
    assert {n: both[n] for n in NAMES} == expected
    # KID on its subset path (no cross strips) and IMD with a smaller k: the four make their own, same values
    other = Metrics({"imd": {"k": 3}, "kid": {"subsets": 2, "subset_size": 50}, **{n: {} for n in NAMES}})
    again = scores(other)
    assert len(searches) == 2 and own_strips
    assert {n: again[n] for n in NAMES} == expected


def test_metrics_config_lists_the_papers_choices() -> None:
    from apphelp import compose_config

    cfg = compose_config(["metrics=prdc"]).metrics
    assert {n: cfg[n]["k"] for n in NAMES} == PAPERS and cfg.imd.k == 5
    assert "precision" not in compose_config([]).metrics  # the default (quickstart) computes no new metric
