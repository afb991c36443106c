"""Training seeds as a level: model-level intervals across seeds, seed-paired comparisons, variance shares,
bold only when significant, one seed as today (synthetic two-level data, no training)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from ganeval.results import RunRecord, plot_summary, write_results
from ganeval.results.intervals import COVERAGE_NOTE
from ganeval.results.seeds import (
    COVERS_SEEDS,
    COVERS_SUBSAMPLES,
    compare_seeds,
    coverage_note,
    summarize_levels,
    variance_record,
)
from ganeval.results.summary import compare_runs, summarize_runs
from ganeval.results.tables import table_markdown

MU = 10.0


def _rows(rng: np.random.Generator, sims: int, seeds: int, runs: int, sd_seed: float, sd_run: float = 2.0,
          models: dict[str, float] | None = None, sd_shared: float = 0.0) -> pd.DataFrame:
    """Long-form rows: value = model mean + seed offset N(0, sd_seed²) + run noise N(0, sd_run²) + a run effect
    N(0, sd_shared²) shared by the models at one (seed, run) (their common real subsample); `sim` as a group column."""
    models = models or {"a": MU}
    shape = (sims, len(models), seeds, runs)
    mu = np.array(list(models.values())).reshape(1, -1, 1, 1)
    v = (mu + rng.normal(0, sd_seed, shape[:3] + (1,)) + rng.normal(0, sd_run, shape)
         + rng.normal(0, sd_shared, (sims, 1, seeds, runs)))
    i = np.indices(shape).reshape(4, -1)
    return pd.DataFrame({"sim": i[0], "model": np.array(list(models))[i[1]], "train_seed": i[2], "run": i[3],
                         "metric": "imd", "value": v.ravel()})


def _covers(summary: pd.DataFrame) -> float:
    return float(((summary.ci_low <= MU) & (MU <= summary.ci_high)).mean())


def test_model_interval_covers_the_true_model_mean_across_seeds() -> None:
    rows = _rows(np.random.default_rng(0), sims=400, seeds=5, runs=20, sd_seed=1.0)
    levels = summarize_levels(rows, 0.99, 100)
    model = levels.summary
    assert len(model) == 400 and set(model.n_seeds) == {5} and set(model.covers) == {COVERS_SEEDS}
    assert _covers(model) >= 0.97
    # the subsample interval over all runs of a model ignores training variation and misses far more often
    pooled = summarize_runs(rows.drop(columns="train_seed"), 0.99, 100)
    assert _covers(pooled) < 0.85


def test_without_seed_variance_it_behaves_like_the_subsample_interval() -> None:
    rows = _rows(np.random.default_rng(1), sims=400, seeds=5, runs=20, sd_seed=0.0)
    model = summarize_levels(rows, 0.99, 100).summary
    pooled = summarize_runs(rows.drop(columns="train_seed"), 0.99, 100)
    assert _covers(model) >= 0.97 and _covers(pooled) >= 0.97
    # same spread estimated, only the t quantile differs: 4 dof across seeds vs 99 over runs
    ratio = np.median(model.half_width.to_numpy() / pooled.half_width.to_numpy())
    assert ratio == pytest.approx(sps.t.ppf(0.995, 4) / sps.t.ppf(0.995, 99), rel=0.15)


def _seed_summary(rng: np.random.Generator, sims: int, seeds: int, diff: float) -> pd.DataFrame:
    """Per-(model, seed) means of two models whose true means differ by `diff`, with seed variance 1 and a run
    effect shared by the models (which pairing by seed cancels)."""
    rows = _rows(rng, sims, seeds, runs=10, sd_seed=1.0, models={"a": MU + diff, "b": MU}, sd_shared=3.0)
    g = rows.groupby(["sim", "model", "train_seed", "metric"], sort=False)["value"]
    out = g.agg(mean="mean", std="std", n_runs="size").reset_index()
    return out.assign(sample_size=100, confidence=0.99)


def test_seed_paired_comparison_false_positive_rate() -> None:
    c = compare_seeds(_seed_summary(np.random.default_rng(2), sims=1000, seeds=5, diff=0.0), 0.99)
    assert len(c) == 1000 and set(c.n_seeds) == {5}
    assert (c.better != "").mean() <= 0.015
    power = compare_seeds(_seed_summary(np.random.default_rng(3), sims=100, seeds=5, diff=4.0), 0.99)
    assert (power.better == "b").mean() > 0.5 and (power.better == "a").sum() == 0


def test_variance_shares_recover_known_components() -> None:
    rng = np.random.default_rng(4)
    seeds, runs, var_seed, var_sub, var_probe = 60, 40, 1.0, 3.0, 1.0
    sub = rng.normal(0, var_sub**0.5, (seeds, runs))
    offset = rng.normal(0, var_seed**0.5, (seeds, 1))
    draw0 = MU + offset + sub + rng.normal(0, var_probe**0.5, (seeds, runs))
    draw1 = MU + offset + sub + rng.normal(0, var_probe**0.5, (seeds, runs))  # same subsample, new probes
    i = np.indices((seeds, runs)).reshape(2, -1)
    base = pd.DataFrame({"model": "a", "train_seed": i[0], "run": i[1], "metric": "imd"})
    again = base.assign(value=draw1.ravel(), probe_draw=1)[i[1] < 10]  # a few runs per seed
    rows = pd.concat([base.assign(value=draw0.ravel(), probe_draw=0), again], ignore_index=True)
    levels = summarize_levels(rows, 0.99, 100)
    shares = levels.summary.iloc[0][["share_seed", "share_subsample", "share_probe"]].to_numpy(float)
    np.testing.assert_allclose(shares, [0.2, 0.6, 0.2], atol=0.06)
    assert shares.sum() == pytest.approx(1.0) and levels.variance.iloc[0]["n_probe_pairs"] == 600
    assert levels.summary.iloc[0]["n_runs"] == runs  # the repeated-probe rows are not runs
    rec = variance_record(levels.variance)
    assert rec[0]["var_probe"] == pytest.approx(var_probe, rel=0.15) and rec[0]["model"] == "a"


def _one_seed_rows(diff: float) -> pd.DataFrame:
    rows = _rows(np.random.default_rng(5), sims=1, seeds=1, runs=30, sd_seed=0.0,
                 models={"a": MU + diff, "b": MU, "c": MU + abs(diff)}, sd_shared=3.0)
    return rows.drop(columns=["sim", "train_seed"]).assign(data="d")[["run", "data", "model", "metric", "value"]]


def test_one_seed_keeps_todays_summary_and_comparison_with_the_covers_note() -> None:
    rows = _one_seed_rows(0.5)
    levels = summarize_levels(rows, 0.99, 100)
    today = summarize_runs(rows, 0.99, 100)
    assert list(levels.summary.columns) == [*today.columns[:-2], "n_seeds", *today.columns[-2:], "covers",
                                            "share_seed", "share_subsample", "share_probe"]
    pd.testing.assert_frame_equal(levels.summary[today.columns], today)
    pd.testing.assert_frame_equal(levels.seeds, today)
    pd.testing.assert_frame_equal(levels.comparison, compare_runs(rows, 0.99))
    assert set(levels.summary.covers) == {COVERS_SUBSAMPLES} and coverage_note(levels.summary) == COVERAGE_NOTE
    assert not levels.summary[["share_seed", "share_subsample", "share_probe"]].isna().any().any()
    assert set(levels.summary.share_seed) == {0.0} and set(levels.summary.share_subsample) == {1.0}


def _bold_models(md: str) -> list[str]:
    header = next(ln for ln in md.splitlines() if ln.startswith("| metric"))
    names = [c.strip() for c in header.strip("|").split("|")]
    row = next(ln for ln in md.splitlines() if ln.startswith("| IMD"))
    return [n for n, c in zip(names, row.strip("|").split("|")) if c.strip().startswith("**")]


@pytest.mark.parametrize("diff, bold", [(0.05, []), (-3.0, ["d / a"])])
def test_bold_only_when_significantly_best(diff: float, bold: list[str]) -> None:
    rows = _one_seed_rows(diff)  # a vs b: not significant at 0.05, significant at -3 (c is worse still)
    levels = summarize_levels(rows, 0.99, 100)
    md = table_markdown(levels.summary, levels.comparison)
    assert _bold_models(md) == bold
    lowest = levels.summary.sort_values("mean").model.iloc[0]
    assert diff > 0 or lowest == "a"  # the lowest mean is not bold unless significant
    assert "bold: significantly best at 99%" in md and "(by run)" in md


def test_bold_needs_every_pair_significant() -> None:
    rows = _one_seed_rows(-3.0)
    # c: a's values ± 0.5 by run, so a - c has mean 0 exactly: a beats b but not c (nor c a)
    rows.loc[rows.model == "c", "value"] = rows.loc[rows.model == "a", "value"].to_numpy() + 0.5 * (-1.0) ** np.arange(30)
    levels = summarize_levels(rows, 0.99, 100)
    assert levels.comparison.query("a == 'a' and b == 'b'").better.iloc[0] == "a"
    assert levels.comparison.query("a == 'a' and b == 'c'").better.iloc[0] == ""
    assert _bold_models(table_markdown(levels.summary, levels.comparison)) == []


def test_seed_level_files_record_and_plot(tmp_path: Path) -> None:
    rows = _rows(np.random.default_rng(6), sims=1, seeds=3, runs=20, sd_seed=1.0,
                 models={"a": MU, "b": MU + 5})
    levels = summarize_levels(rows.drop(columns="sim"), 0.99, 100)
    assert set(levels.comparison.n_seeds) == {3}
    rec = RunRecord(config_hash="x", config={}, seed=0, device="cpu", interval_covers=coverage_note(levels.summary),
                    variance_shares=variance_record(levels.variance))
    rec.set_results(levels.summary, {})
    paths = write_results(tmp_path, levels.summary, levels.comparison, rec, title="seeds", seeds=levels.seeds)
    assert {p.name for p in paths} == {"summary.csv", "summary.json", "comparison.csv", "summary_seeds.csv",
                                       "table.md", "table.tex"}
    back = RunRecord.read(tmp_path / "summary.json")
    assert back == rec and back.results[0]["covers"] == COVERS_SEEDS and len(back.variance_shares or []) == 2
    md = (tmp_path / "table.md").read_text()
    assert "Mean over 3 training seeds" in md and "(2 degrees of freedom)" in md and "(by training seed)" in md
    assert "share_seed" in pd.read_csv(tmp_path / "summary.csv").columns
    png = plot_summary(levels.summary, tmp_path / "summary.png", "seeds", seeds=levels.seeds)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_seed_variance_of_unbalanced_seeds_uses_the_anova_n0() -> None:
    """Seeds with 2, 5 and 20 runs: var_seed = (MSB - MSW) / n0 with n0 = (N - Σnᵢ²/N) / (S - 1) (≈ 5.56 here, not
    N/S = 9), worked out by hand from the runs."""
    rng = np.random.default_rng(11)
    values = [10.0 + rng.normal(0, 1, n) for n in (2, 5, 20)]
    values[1] += 3.0  # a seed effect well above the noise
    rows = pd.DataFrame([{"model": "a", "train_seed": s, "run": r, "metric": "imd", "value": v}
                         for s, vs in enumerate(values) for r, v in enumerate(vs)])
    n = np.array([len(v) for v in values], float)
    big_n, seeds = n.sum(), len(values)
    grand = np.concatenate(values).mean()
    msb = sum(len(v) * (v.mean() - grand) ** 2 for v in values) / (seeds - 1)
    msw = sum(((v - v.mean()) ** 2).sum() for v in values) / (big_n - seeds)
    n0 = (big_n - (n**2).sum() / big_n) / (seeds - 1)
    assert n0 == pytest.approx(5.5556, abs=1e-4)
    got = summarize_levels(rows, 0.99, 100).variance.iloc[0]
    assert got["var_seed"] == pytest.approx((msb - msw) / n0, rel=1e-9)
    assert got["var_subsample"] == pytest.approx(msw, rel=1e-9)
