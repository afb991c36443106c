"""Every pair of several sets scored on shared draws (ganeval/studies/manifold_pairs.py), against the same draws
made by hand; the mean matrices and their heatmaps."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from ganeval.metrics import heat_trace, imd_from_traces
from ganeval.metrics.imd import temperatures
from ganeval.studies import manifold_pairs as M

OPTS = {"k": 3, "m": 4, "nv": 3}


def _sets() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"a": rng.normal(size=(14, 3)), "b": rng.normal(size=(12, 3)) + 1.0, "c": rng.normal(size=(13, 2))}


def _gap(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> float:
    return float(np.abs(x.mean() - y.mean())) + float(rng.random())


def test_each_pair_and_run_is_scored_on_its_own_draws() -> None:
    sets = _sets()
    rows = M.pairwise_rows(sets, runs=2, sample_size=10, seed=4, imd_options=OPTS, others={"gap": _gap})
    t = temperatures(None)
    want = []
    for r in range(2):
        subs, traces = {}, {}
        for i, n in enumerate(sets):
            rng = np.random.default_rng([4, r, i])
            idx = rng.choice(len(sets[n]), 10, replace=False)
            subs[n] = sets[n][np.sort(idx)].astype(np.float32)
            traces[n] = heat_trace(subs[n], t=t, seed=rng, **OPTS)
        for a, b in combinations(sets, 2):
            want.append({"run": r, "a": a, "b": b, "metric": "imd", "value": imd_from_traces(traces[a], traces[b], t)})
            if subs[a].shape[1] == subs[b].shape[1]:  # "gap" takes equal dimensions only
                want.append({"run": r, "a": a, "b": b, "metric": "gap",
                             "value": _gap(subs[a], subs[b], np.random.default_rng([4, r, 1000]))})
    pd.testing.assert_frame_equal(rows, pd.DataFrame(want))
    assert len(rows) == 2 * (3 + 1)


def test_an_any_dims_metric_scores_every_pair() -> None:
    def anyd(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> float:
        return float(x.shape[1] + y.shape[1])

    anyd.any_dims = True  # type: ignore[attr-defined]
    rows = M.pairwise_rows(_sets(), runs=1, sample_size=10, seed=0, imd_options=OPTS, others={"x": _gap, "d": anyd})
    d = rows[rows.metric == "d"]
    assert list(zip(d.a, d.b)) == [("a", "b"), ("a", "c"), ("b", "c")] and d.value.tolist() == [6.0, 5.0, 5.0]
    assert (rows.metric == "x").sum() == 1


def test_aligned_sets_share_one_draw_of_rows() -> None:
    sets = {"p": np.arange(24.0).reshape(12, 2), "q": np.arange(24.0).reshape(12, 2) * 2}
    seen: list[np.ndarray] = []

    def record(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> float:
        seen.extend([x, y])
        return 0.0

    M.pairwise_rows(sets, runs=1, sample_size=5, seed=2, imd_options=OPTS, others={"r": record}, aligned=True)
    idx = np.sort(np.random.default_rng([2, 0]).choice(12, 5, replace=False))
    assert np.array_equal(seen[0], sets["p"][idx]) and np.array_equal(seen[1], sets["q"][idx])


def test_a_set_smaller_than_the_sample_is_named() -> None:
    with pytest.raises(ValueError, match=r"^sample_size=13 is more than b \(12 rows\) hold: lower sample_size$"):
        M.pairwise_rows(_sets(), runs=1, sample_size=13, seed=0, imd_options=OPTS)
    assert len(M.pairwise_rows(_sets(), runs=1, sample_size=12, seed=0, imd_options=OPTS)) == 3


def test_the_mean_matrices_are_symmetric_with_blanks() -> None:
    rows = pd.DataFrame({"run": [0, 1, 0, 0], "a": ["x", "x", "x", "y"], "b": ["y", "y", "z", "z"],
                         "metric": ["imd", "imd", "imd", "fid"], "value": [1.0, 3.0, 5.0, 7.0]})
    mats = M.matrices(rows, ["x", "y", "z"])
    assert list(mats) == ["imd", "fid"]
    imd = mats["imd"]
    assert imd[0, 1] == imd[1, 0] == 2.0 and imd[0, 2] == imd[2, 0] == 5.0 and np.isnan(imd[1, 2])
    assert np.diag(imd).tolist() == [0.0, 0.0, 0.0]
    assert mats["fid"][1, 2] == 7.0 and np.isnan(mats["fid"][0, 1])


def test_the_heatmaps_show_each_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.results import plots

    figs: list = []  # type: ignore[type-arg]
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig) or path)
    mats = {"imd": np.array([[0.0, 1.0], [1.0, 0.0]]), "cosine": np.array([[0.0, np.nan], [np.nan, 0.0]])}
    M.plot_heatmaps(mats, ["en", "de"], "out.png", "Languages")
    fig = figs[0]
    heat = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in heat] == ["IMD", "cosine"]
    assert np.ma.is_masked(heat[1].images[0].get_array()[0, 1]) and heat[0].images[0].get_cmap().name == "viridis"
    assert [t.get_text() for t in heat[0].get_xticklabels()] == ["en", "de"]
    assert heat[0].get_xticklabels()[0].get_rotation() == 45 and heat[0].get_yticklabels()[0].get_fontsize() == 8
    assert fig._suptitle.get_text() == "Languages" and fig.get_size_inches() == pytest.approx((8.4, 3.8))
    plots._plt().close(fig)
