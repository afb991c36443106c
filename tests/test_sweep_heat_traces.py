"""The heat-trace study's helpers and statements (ganeval/studies/heat_traces.py) on hand-made summaries: each rule
at its edge and the numbers it states."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from ganeval.studies import heat_traces as H


def test_the_temperature_grid_and_its_checks() -> None:
    cfg = OmegaConf.create({"t_min": 0.01, "t_max": 100.0, "n_t": 5})
    np.testing.assert_allclose(H.t_grid(cfg), [0.01, 0.1, 1.0, 10.0, 100.0])
    assert len(H.t_grid(OmegaConf.create({"t_min": 1, "t_max": 2, "n_t": 2}))) == 2
    for bad in ({"t_min": 0, "t_max": 1, "n_t": 3}, {"t_min": 1, "t_max": 1, "n_t": 3},
                {"t_min": 2, "t_max": 1, "n_t": 3}, {"t_min": 1, "t_max": 2, "n_t": 1}):
        with pytest.raises(ValueError, match=r"^need 0 < t_min < t_max and n_t ≥ 2"):
            H.t_grid(OmegaConf.create(bad))


def test_the_trace_method_is_checked_against_the_size() -> None:
    from ganeval.metrics.imd import EXACT_MAX_N

    assert H.TRACE_METHODS == ("exact", "slq") and H.SCALE == 1e6
    assert H.check_trace_method(OmegaConf.create({"trace_method": "exact"}), EXACT_MAX_N) == "exact"
    assert H.check_trace_method(OmegaConf.create({"trace_method": "slq"}), EXACT_MAX_N + 1) == "slq"
    with pytest.raises(ValueError, match=rf"^trace_method=exact needs a dense {EXACT_MAX_N + 1}×"):
        H.check_trace_method(OmegaConf.create({"trace_method": "exact"}), EXACT_MAX_N + 1)
    with pytest.raises(ValueError, match=r"^trace_method must be one of \('exact', 'slq'\), got 'dense'"):
        H.check_trace_method(OmegaConf.create({"trace_method": "dense"}), 10)
    with pytest.raises(ValueError, match="got None"):
        H.check_trace_method(OmegaConf.create({}), 10)


def test_nearest_temperatures_in_log_without_repeats() -> None:
    grid = np.array([0.1, 1.0, 10.0, 100.0])
    assert H.nearest_t(grid, [3.0, 0.3, 9.0, 1000.0, 0.05]) == [1.0, 0.1, 10.0]  # outside the grid: left out
    assert H.nearest_t(grid, [0.3]) == [0.1]  # |log 0.3 − log 0.1| = 1.10 < |log 0.3 − log 1| = 1.20
    assert H.nearest_t(grid, [0.1, 100.0]) == [0.1, 100.0]  # the grid's own ends count as inside
    assert H.nearest_t(grid, [3.2]) == [10.0]  # log-nearer to 10 than to 1


def test_traces_are_summarised_per_dataset_and_t() -> None:
    from ganeval.results.intervals import t_interval

    rows = pd.DataFrame({"data": ["b", "b", "a", "a", "b", "b"], "t": [1.0, 1.0, 1.0, 1.0, 2.0, 2.0],
                         "value": [1.0, 3.0, 5.0, 6.0, 2.0, 2.0]})
    s = H.summarize_traces(rows, 0.9, 50, "slq", steps=7)
    assert list(zip(s.data, s.t)) == [("b", 1.0), ("a", 1.0), ("b", 2.0)]  # in the rows' order
    want = t_interval(np.array([1.0, 3.0]), 0.9)
    assert s.iloc[0]["mean"] == want["mean"] and s.iloc[0]["half_width"] == want["half_width"]
    assert set(s.metric) == {"heat_trace"} and set(s.sample_size) == {50} and set(s.lanczos_steps) == {7}
    assert H.summarize_traces(rows, 0.9, 50, "exact", steps=7).lanczos_steps.isna().all()


def test_the_trace_table_in_units_of_a_million() -> None:
    summary = pd.DataFrame({"data": ["x", "x", "y", "y"], "t": [1.0, 10.0, 1.0, 10.0],
                            "mean": [1.5e6, 2e6, 3e6, 4e6], "half_width": [1e4, 2e4, 3e4, 4e4]})
    assert H.trace_table(summary, [1.0, 10.0], "T", "P") == (
        "# T\n\nP\n\n| data | t = 1 | t = 10 |\n|---|---|---|\n| x | 1.5000 ± 0.0100 | 2.0000 ± 0.0200 |\n"
        "| y | 3.0000 ± 0.0300 | 4.0000 ± 0.0400 |\n")


def _at(names_means: dict, t: float = 10.0, half: float = 0.01) -> pd.DataFrame:  # type: ignore[type-arg]
    rows = []
    for name, m in names_means.items():
        rows.append({"data": name, "t": t, "mean": m * 1e6, "ci_low": (m - half) * 1e6, "ci_high": (m + half) * 1e6})
    return pd.DataFrame(rows)


def test_celeba_farthest_from_the_random_graph_at_t10() -> None:
    got = H.statements(_at({"celeba": 1.5, "mnist": 1.2, "cifar10": 0.95}), 0.99)
    quote, verdict, why, line = got[0]
    assert quote.startswith("For t=10, i.e., at a medium scale, CelebA is most different") and verdict == "holds"
    assert why == ("On these data at t = 10, the farthest from the random graph (|trace/ER − 1|) is celeba (0.500), "
                   "then mnist (0.200); their 99% intervals separate.")
    assert line == "Holds: " + why
    close = H.statements(_at({"celeba": 1.5, "mnist": 1.49, "cifar10": 0.95}, half=0.01), 0.99)[0]
    assert close[1] == "not testable here" and close[2].endswith("their 99% intervals overlap.")
    other = H.statements(_at({"celeba": 1.2, "mnist": 1.5}), 0.99)[0]
    assert other[1] == "contradicted"
    near = H.statements(_at({"celeba": 1.495, "mnist": 1.5}), 0.99)[0]
    assert near[1] == "not testable here"
    below = H.statements(_at({"celeba": 1.2, "mnist": 0.5}), 0.99)[0]  # |0.5 − 1| = 0.5 is farther than 0.2
    assert below[1] == "contradicted" and "farthest from the random graph (|trace/ER − 1|) is mnist (0.500)" in below[2]
    stand = H.statements(_at({"mnist": 1.5, "fmnist": 1.2}), 0.99)[0]
    assert stand[1] == "not tested: stand-in data" and stand[2].startswith("no CelebA; on these data at t = 10")
    assert stand[3].startswith("Not tested: stand-in data (no CelebA). On these data")
    assert len(H.statements(_at({"mnist": 1.5}), 0.99)) == 1  # one dataset: nothing to order


def test_cifar100_close_to_cifar10_at_the_largest_t() -> None:
    frame = pd.concat([_at({"cifar10": 1.3, "cifar100": 1.31}, t=1.0), _at({"cifar10": 1.3, "cifar100": 1.32}, t=50.0)])
    got = H.statements(frame, 0.9)
    assert got[0][1] == "not tested: stand-in data"  # t = 10 lies in [1, 50] but CelebA is missing
    c = got[1]
    assert c[1] == "holds" and c[2] == "At t = 50: CIFAR-10 1.3000, CIFAR-100 1.3200; intervals overlap (close)."
    apart = pd.concat([_at({"cifar10": 1.3, "cifar100": 1.2}, t=50.0)])
    assert H.statements(apart, 0.9)[-1][1] == "contradicted" and len(H.statements(apart, 0.9)) == 1  # no t = 10
    none = H.statements(_at({"mnist": 1.3}), 0.9)
    assert none[-1][1] == "not tested: stand-in data" and none[-1][3] == ("Not tested: stand-in data (needs CIFAR-10 and CIFAR-100: "
                                                          "the paper's setting in the config's comment).")
    lines = H.paper_statements(_at({"mnist": 1.3}), 0.9)
    assert lines[0] == '> "Surprisingly, CIFAR-100 comes close to CIFAR-10 for large t values"' and lines[1] == ""


def test_the_accuracy_results_read_each_worst_temperature() -> None:
    acc = pd.DataFrame({"data": ["a", "a", "a", "b"], "lanczos_steps": [5, 5, 10, 5], "t": [1.0, 10.0, 1.0, 1.0],
                        "bias_mean": [0.001, -0.004, 0.0, 0.02], "bias_ci_low": [0.0, -0.009, -0.001, 0.019],
                        "bias_ci_high": [0.002, 0.001, 0.001, 0.021]})
    got = H.accuracy_results(acc, 0.01, 0.99)
    assert [(n, m, w) for n, m, w, _ in got] == [("a", 5, True), ("a", 10, True), ("b", 5, False)]
    assert got[0][3] == "worst at t = 10: bias -0.400 %, 99 % interval [-0.900, +0.100] %"
    assert H.accuracy_results(acc, 0.009, 0.99)[0][2] is False  # |−0.009| is not below 0.009
    assert H.accuracy_results(None, 0.01, 0.99) == [] and H.accuracy_results(acc.iloc[:0], 0.01, 0.99) == []


# ------------------------------------------------------------------------------------------------------------------
# The blur sweep's figure data and example grid (ganeval/studies/blur_sweep.py)
# ------------------------------------------------------------------------------------------------------------------
def test_the_blur_curves_add_the_similar_set_as_a_flat_line() -> None:
    from ganeval.studies.blur_sweep import blur_curves

    summary = pd.DataFrame({"role": ["blur", "blur", "second", "reference"], "metric": ["imd", "imd", "imd", "imd"],
                            "sigma": [0.5, 2.0, np.nan, np.nan], "mean": [1.0, 2.0, 1.5, 9.0]})
    got = blur_curves(summary, "cifar", "c100", [0.5, 1.0, 2.0])
    assert got["line"].tolist() == ["cifar (blurred)"] * 2 + ["c100 (similar)"] * 2
    assert got["sigma"].tolist() == [0.5, 2.0, 0.5, 2.0] and got["mean"].tolist() == [1.0, 2.0, 1.5, 1.5]
    assert len(blur_curves(summary[summary.role != "second"], "a", "b", [1.0])) == 2


def test_the_example_grid_blurs_each_image_at_each_sigma(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval.data import gaussian_blur
    from ganeval.results import plots
    from ganeval.studies.blur_sweep import plot_examples

    figs: list = []  # type: ignore[type-arg]
    monkeypatch.setattr(plots, "_save", lambda fig, path: figs.append(fig) or path)
    images = np.random.default_rng(0).integers(0, 256, (2, 3, 8, 8), dtype=np.uint8)
    plot_examples(images, [0.0, 1.5, 3.0], tmp_path / "e.png")
    fig = figs[0]
    assert len(fig.axes) == 6 and fig.get_size_inches() == pytest.approx((0.8 * 3, 0.8 * 2))
    top = fig.axes[:3]  # row 0 (subplots are row-major)
    assert [ax.get_title() for ax in top] == ["σ=0", "σ=1.5", "σ=3"] and top[0].title.get_fontsize() == 8
    want = gaussian_blur(images, 1.5).transpose(0, 2, 3, 1)[1]
    shown = fig.axes[3 + 1].images[0]
    assert np.array_equal(np.asarray(shown.get_array()), want) and shown.get_clim() == (0, 255)
    assert list(fig.axes[0].get_xticks()) == [] and list(fig.axes[0].get_yticks()) == []
    grey = np.random.default_rng(1).integers(0, 256, (1, 1, 8, 8), dtype=np.uint8)
    plot_examples(grey, [1.0], tmp_path / "g.png")
    img = figs[1].axes[0].images[0]
    assert np.asarray(img.get_array()).shape == (8, 8) and img.get_cmap().name == "gray"
    plots._plt().close("all")
