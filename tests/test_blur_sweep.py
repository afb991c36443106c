"""experiment=blur_sweep: the digit-class data option, the normalisation (reference = 1, delta-method interval),
the pass test and verdict, and the paper's question answered end to end at reduced size on the embedded digits."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from apphelp import compose_config, run_inprocess
from ganeval.studies import blur_sweep as bs
from ganeval.app.plan import settings_from_config
from ganeval.results.intervals import t_interval

PAPER_SETUP = ["experiment=blur_sweep", "data=cifar10", "data@second=cifar100", "data@reference.b=mnist",
               "features=inception", "sample_size=10000", "runs=100", "metrics.kid.subset_size=1000"]


# --------------------------------------------------------------------------- data
def test_digits_classes_splits_the_digits_by_class_at_8px() -> None:
    from sklearn.datasets import load_digits

    import ganeval.data as gd

    target = load_digits().target
    low, high = gd.digits_classes([0, 1, 2, 3, 4]), gd.digits_classes([5, 6, 7, 8, 9])
    assert low.shape == (901, 1, 8, 8) and high.shape == (896, 1, 8, 8) and low.dtype == np.uint8
    np.testing.assert_array_equal(low, gd.digits(8)[target < 5])
    np.testing.assert_array_equal(high, gd.digits(8)[target >= 5])
    np.testing.assert_array_equal(gd.digits_classes([3], size=32), gd.digits(32)[target == 3])
    for bad in ([], [10], [1, 1], "01", [1.0], [True]):
        with pytest.raises(ValueError, match="classes"):
            gd.digits_classes(bad)  # type: ignore[arg-type]


def test_default_config_is_8px_digits_halves_and_8px_patches() -> None:
    cfg = compose_config(["experiment=blur_sweep"])
    assert cfg.data._target_ == cfg.second._target_ == "ganeval.data.digits_classes"
    assert list(cfg.data.classes) == [0, 1, 2, 3, 4] and list(cfg.second.classes) == [5, 6, 7, 8, 9]
    assert cfg.data.size == cfg.second.size == cfg.reference.b.size == 8
    assert cfg.reference.b._target_ == "ganeval.data.patches" and cfg.features._target_.endswith("PixelsExtractor")
    assert cfg.sample_size <= 896 and cfg.metrics.kid.subset_size <= cfg.sample_size
    assert compose_config(["experiment=blur_sweep", "second=null"]).second is None


def test_paper_setup_composes_and_validates() -> None:
    cfg = compose_config(PAPER_SETUP)
    assert (cfg.data._target_, cfg.second._target_, cfg.reference.b._target_) == (
        "ganeval.data.cifar10", "ganeval.data.cifar100", "ganeval.data.mnist")
    assert "size" not in cfg.data and "classes" not in cfg.second  # nothing of the offline default leaks in
    s = settings_from_config(cfg)
    assert s.sample_size == 10000 and s.runs == 100 and s.metrics["kid"]["subset_size"] == 1000


def test_paper_setup_runs_until_the_missing_data(tmp_path: Path) -> None:
    # offline the paper's setting passes every other check and its plan stops at the absent data, naming what to fill
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "GANEVAL_DATA": str(tmp_path / "data")}
    p = subprocess.run([sys.executable, "-m", "ganeval", *PAPER_SETUP, "data.download=false",
                        "second.download=false", "reference.b.download=false", f"results_dir={tmp_path / 'res'}"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stderr
    out = p.stderr + p.stdout
    assert f"data: the dataset is not under {tmp_path / 'data'}" in out and "data.download=true" in out, out


# --------------------------------------------------------------------------- normalisation
def test_ratio_interval_is_the_delta_method_paired_by_run() -> None:
    rng = np.random.default_rng(0)
    y = 10 + rng.normal(size=40)
    x = 3 + 0.2 * y + rng.normal(scale=0.5, size=40)
    r = bs.ratio_interval(x, y, 0.99)
    assert r["mean"] == pytest.approx(x.mean() / y.mean(), rel=1e-12)
    z = (x - r["mean"] * y) / y.mean()  # the linearised per-run values
    assert r["half_width"] == pytest.approx(t_interval(z, 0.99)["half_width"], rel=1e-12)
    assert r["ci_low"] == pytest.approx(r["mean"] - r["half_width"]) and r["ci_high"] > r["mean"]
    # a constant reference: the raw interval divided by it
    raw = t_interval(x, 0.99)
    const = bs.ratio_interval(x, np.full(40, 4.0), 0.99)
    assert const["half_width"] == pytest.approx(raw["half_width"] / 4.0, rel=1e-12)
    # an independent noisy reference widens the interval: its noise is carried
    noisy = bs.ratio_interval(x, 4.0 + rng.normal(scale=0.8, size=40), 0.99)
    assert noisy["half_width"] > 1.5 * const["half_width"]
    # the reference against itself is 1 exactly, with no width
    assert bs.ratio_interval(y, y, 0.99) == {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "half_width": 0.0}
    with pytest.raises(ValueError, match="reference pair's mean distance"):
        bs.ratio_interval(x, -np.abs(y), 0.99)


def test_ratio_interval_covers_the_ratio_of_means() -> None:
    # coverage over repeated experiments: the 90% interval contains μx/μy about 90% of the time
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        y = 5 + rng.normal(size=30)
        x = 2 + 0.3 * (y - 5) + rng.normal(scale=0.4, size=30)
        r = bs.ratio_interval(x, y, 0.90)
        hits += r["ci_low"] <= 2 / 5 <= r["ci_high"]
    assert 0.85 <= hits / 400 <= 0.95


def _rows(values: dict[tuple[str, float], list[float]], ref: list[float], metric: str = "fid") -> pd.DataFrame:
    """Per-run rows as the protocol writes them: blur rows (role, σ), a second row (σ NaN) and a reference row."""
    out = []
    for (role, sigma), vals in values.items():
        model = "digits" if role == "blur" else "other"
        out += [{"run": r, "data": "digits", "role": role, "model": model, "sigma": sigma, "metric": metric,
                 "value": v} for r, v in enumerate(vals)]
    out += [{"run": r, "data": "digits", "role": "reference", "model": "patches", "sigma": np.nan, "metric": metric,
             "value": v} for r, v in enumerate(ref)]
    return pd.DataFrame(out)


def test_normalized_summary_sets_the_reference_to_one_exactly() -> None:
    rng = np.random.default_rng(2)
    ref = list(20 + rng.normal(size=6))
    rows = _rows({("blur", 0.0): list(rng.normal(1, 0.1, 6)), ("blur", 1.0): list(rng.normal(8, 0.5, 6)),
                  ("second", np.nan): list(rng.normal(5, 0.2, 6))}, ref)
    s = bs.normalized_summary(rows, 0.99, 100)
    r = s[s.role == "reference"].iloc[0]
    assert r.normalized_mean == 1.0 and r.normalized_half_width == 0.0 and r.reference_mean == pytest.approx(np.mean(ref))
    for _, row in s.iterrows():
        g = rows[(rows.role == row.role) & ((rows.sigma == row.sigma) | (rows.sigma.isna() & pd.isna(row.sigma)))]
        expect = bs.ratio_interval(g.value.to_numpy(), np.array(ref), 0.99)
        assert row.normalized_mean == pytest.approx(g.value.mean() / np.mean(ref), rel=1e-12)
        assert row.normalized_half_width == pytest.approx(expect["half_width"], rel=1e-12)


# --------------------------------------------------------------------------- the pass test and the verdict
def _summary_and_rows(blur: dict[float, list[float]], second: list[float], metric: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = _rows({**{("blur", s): v for s, v in blur.items()}, ("second", np.nan): second},
                 [100.0 + 0.1 * i for i in range(len(second))], metric)
    return rows, bs.normalized_summary(rows, 0.99, 100)


def test_first_passes_reads_the_intervals() -> None:
    rng = np.random.default_rng(3)
    n = 12

    def noisy(m: float, sd: float = 0.1) -> list[float]:
        return list(m + rng.normal(scale=sd, size=n))

    # fid: passes at 1 and stays; kid: passes at 2 only (falls back at 3); imd: never
    parts = [_summary_and_rows({0.0: noisy(0), 1.0: noisy(6), 2.0: noisy(9), 3.0: noisy(12)}, noisy(5), "fid"),
             _summary_and_rows({0.0: noisy(0), 1.0: noisy(5), 2.0: noisy(8), 3.0: noisy(5)}, noisy(5), "kid"),
             _summary_and_rows({0.0: noisy(0), 1.0: noisy(1), 2.0: noisy(2), 3.0: noisy(4.9)}, noisy(5), "imd")]
    rows = pd.concat([p[0] for p in parts], ignore_index=True)
    summary = pd.concat([p[1] for p in parts], ignore_index=True)
    p = bs.first_passes(summary, rows, 0.99).set_index("metric")
    assert list(p.index) == ["imd", "kid", "fid"]  # the registry's order (ganeval.metrics.registry.metric_order)
    assert p.loc["fid", "first_sigma"] == 1.0 and p.loc["fid", "stays_above"]
    assert p.loc["kid", "first_sigma"] == 2.0 and not p.loc["kid", "stays_above"]
    assert math.isnan(p.loc["imd", "first_sigma"]) and not p.loc["imd", "stays_above"]
    assert p.loc["fid", "first_sigma_paired"] == 1.0 and p.loc["imd", "paper_first_sigma"] == 2.0
    assert bs.ordering_holds(p.reset_index()) is True  # IMD never passing counts as beyond the grid


def reversed_order(imd_unblurred: float = 0.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, passes) where IMD passes first (σ = 1), FID and KID only at σ = 2: the paper's order reversed; IMD's
    unblurred mean `imd_unblurred` (its similar-dataset distance is 5)."""
    rng = np.random.default_rng(4)

    def noisy(m: float) -> list[float]:
        return list(m + rng.normal(scale=0.1, size=10))

    parts = [_summary_and_rows({0.0: noisy(imd_unblurred), 1.0: noisy(6), 2.0: noisy(9)}, noisy(5), "imd"),
             _summary_and_rows({0.0: noisy(0), 1.0: noisy(4), 2.0: noisy(9)}, noisy(5), "fid"),
             _summary_and_rows({0.0: noisy(0), 1.0: noisy(4), 2.0: noisy(120)}, noisy(5), "kid")]
    rows = pd.concat([p[0] for p in parts], ignore_index=True)
    summary = pd.concat([p[1] for p in parts], ignore_index=True)
    return summary, bs.first_passes(summary, rows, 0.99)


def test_verdict_says_when_the_claim_does_not_hold() -> None:
    summary, passes = reversed_order()
    text = bs.verdict_text(summary, passes, "a", "b", "ref", (8, 8))
    assert "**Verdict: the paper's claim is contradicted here**" in text  # (#26: the common vocabulary)
    assert "| IMD | 1 | yes | 1 | 2 |" in text and "| FID | 2 | yes | 2 | 1 |" in text
    assert "| 1 | 0.060 ± " in text and " **passes** | " in text  # IMD at σ = 1: 6 / 100 of the reference, passing
    assert "σ = 1 is as wide against the image as σ = 4" in text
    assert "the interval of KID reaches 1" in text  # KID at σ = 2 is 1.2 of the reference
    assert "cannot be answered" in bs.verdict_text(summary[summary.role != "second"], None, "a", "b", "ref")


def test_ordering_holds_cases() -> None:
    def frame(fid: float, kid: float, imd: float) -> pd.DataFrame:
        return pd.DataFrame({"metric": ["imd", "fid", "kid"], "first_sigma": [imd, fid, kid]})

    nan = math.nan
    assert bs.ordering_holds(frame(1, 1, 2)) is True
    assert bs.ordering_holds(frame(1, 1.5, nan)) is True  # IMD beyond the grid
    assert bs.ordering_holds(frame(1, 2, 2)) is False  # KID no earlier than IMD
    assert bs.ordering_holds(frame(2, 1, 1)) is False
    assert bs.ordering_holds(frame(1, nan, 2)) is False  # KID never passes, IMD does
    assert bs.ordering_holds(frame(nan, nan, 2)) is None
    assert bs.ordering_holds(frame(1, 1, 2).iloc[1:]) is None


# --------------------------------------------------------------------------- end to end
REDUCED = ["experiment=blur_sweep", "runs=10", "sample_size=400", "sigmas=[0,1,2,3]", "metrics.kid.subset_size=400",
           "metrics.kid.subsets=20", "progress=false"]


def _dirs(tmp_path: Path) -> list[str]:
    return [f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}"]


@pytest.mark.slow
def test_blur_sweep_answers_the_papers_question_on_digits(tmp_path: Path) -> None:
    s = run_inprocess([*REDUCED, *_dirs(tmp_path)])
    res = tmp_path / "res"
    ref = s[s.role == "reference"]
    assert (ref.normalized_mean == 1.0).all() and (ref.normalized_half_width == 0.0).all()
    blur = s[s.role == "blur"]
    assert sorted(blur.sigma.unique()) == [0.0, 1.0, 2.0, 3.0]
    for m in ("fid", "kid"):
        assert blur[blur.metric == m].sort_values("sigma")["mean"].is_monotonic_increasing, m
    fid = blur[blur.metric == "fid"]
    np.testing.assert_allclose(fid.normalized_mean, fid["mean"] / ref[ref.metric == "fid"]["mean"].iloc[0], rtol=1e-12)
    assert set(s[s.role == "second"].model) == {"digits_classes_other"}
    # the verdict that holds on 8×8 digits: FID and KID pass the similar (other classes) distance at σ = 1, IMD
    # only later (at this reduced size, 10 runs of 400, its 99 % intervals pass within the grid at neither σ = 2 nor 3
    # under draws version 2; the reference, 50 runs of 800, passes at σ = 2.5)
    rows = pd.read_csv(res / "runs.csv")
    p = bs.first_passes(s, rows, 0.99).set_index("metric")
    assert p.loc["fid", "first_sigma"] == 1.0 and p.loc["kid", "first_sigma"] == 1.0
    assert not p.loc["imd", "first_sigma"] <= 1.0
    verdict = (res / "verdict.md").read_text()
    assert "| FID | 1 | yes |" in verdict and "| KID | 1 | yes |" in verdict
    table = (res / "table.md").read_text()
    assert "| σ (blur of digits_classes) | IMD | KID | FID |" in table
    assert "| reference: digits_classes vs patches8 | 1.000 ± 0.000 | 1.000 ± 0.000 | 1.000 ± 0.000 |" in table
    sec = s[s.role == "second"].set_index("metric")
    cells = " | ".join(_cell(sec.loc[m, "normalized_mean"], sec.loc[m, "normalized_half_width"]) for m in ("imd", "kid", "fid"))
    assert f"| similar: digits_classes vs digits_classes_other | {cells} |" in table
    assert (res / "blur.png").stat().st_size > 1000
    # a second call resumes the stored runs and gives the same numbers
    pd.testing.assert_frame_equal(run_inprocess([*REDUCED, *_dirs(tmp_path)]), s)


def _cell(mean: float, half: float) -> str:
    return f"{mean:.3f} ± {half:.3f}"


@pytest.mark.slow
def test_blur_sweep_without_a_similar_dataset_says_it_cannot_answer(tmp_path: Path) -> None:
    s = run_inprocess(["experiment=blur_sweep", "runs=2", "sample_size=150", "sigmas=[0,2]", "second=null",
                       "metrics.kid.subset_size=50", "metrics.kid.subsets=4", "metrics.imd.nv=10", "progress=false",
                       *_dirs(tmp_path)])
    assert set(s.role) == {"blur", "reference"}
    assert "the question cannot be answered" in (tmp_path / "res" / "verdict.md").read_text()
    assert "| similar:" not in (tmp_path / "res" / "table.md").read_text()


BLUR_REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "blur_sweep"


def test_imd_more_robust_claims_from_the_stored_runs() -> None:
    """(issues #36, #46) "IMD is more robust to noise": per run, each metric's rise from σ = 0 divided by its own
    signal on a real change (mean of similar − unblurred), the other metric's rise − IMD's paired by run, and IMD's
    signal > 0 (not insensitive); recomputed here with scipy's paired t: holds against FID and KID. The same rises
    ÷ the stand-in reference pair's mean are shown, not decided on (KID's straddles 0 at σ = 1.5)."""
    from scipy import stats

    from ganeval.results.verdicts import HOLDS
    from ganeval.studies.blur_verdict import robust_claims

    rows = pd.read_csv(BLUR_REFERENCE / "runs.csv")
    blur = rows[rows.role == "blur"]
    ref = rows[rows.role == "reference"].groupby("metric")["value"].mean()
    sec = rows[rows.role == "second"]

    def wide(m: str) -> pd.DataFrame:
        return blur[blur.metric == m].pivot(index="run", columns="sigma", values="value")

    def signal(m: str) -> pd.Series:
        return sec[sec.metric == m].set_index("run")["value"] - wide(m)[0.0]

    def rise(m: str, scale: float) -> pd.DataFrame:
        w = wide(m)
        return w.sub(w[0.0], axis=0).drop(columns=0.0) / scale

    def shown(x: np.ndarray) -> str:
        hw = stats.t.ppf(0.995, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
        return f"{x.mean():+.3f} [{x.mean() - hw:+.3f}, {x.mean() + hw:+.3f}]"

    claims = {c.name: c for c in robust_claims(rows, 0.99)}
    assert stats.ttest_1samp(signal("imd"), 0).statistic > 0
    for m in ("fid", "kid"):
        c = claims[f"IMD more robust to blur than {m.upper()}"]
        d = rise(m, signal(m).mean()) - rise("imd", signal("imd").mean())
        for s in d.columns:
            assert f"σ = {s:g}: {shown(d[s].to_numpy())}" in c.evidence
        assert c.verdict == HOLDS
        ps = [stats.ttest_1samp(d[s], 0).pvalue for s in d.columns] + [stats.ttest_1samp(signal("imd"), 0).pvalue]
        assert c.p_value == pytest.approx(max(ps), rel=1e-9)  # intersection–union: the largest p
        stand_in = rise(m, ref[m]) - rise("imd", ref["imd"])
        assert "reference set patches8 is a stand-in" in c.evidence
        assert f"σ = 1.5: {shown(stand_in[1.5].to_numpy())}" in c.evidence
    kid_stand_in = (rise("kid", ref["kid"]) - rise("imd", ref["imd"]))[1.5].to_numpy()
    assert shown(kid_stand_in) == "-0.025 [-0.062, +0.012]"  # the old rule's straddle of 0, stated beside


def test_an_insensitive_metric_is_not_called_robust() -> None:
    """(issue #46) An IMD that moves neither under blur nor on the similar dataset rises less than FID, but its signal
    is not above 0: "more robust" is not shown (not testable here), where a rise test alone would say holds."""
    from ganeval.results.verdicts import NOT_TESTABLE
    from ganeval.studies.blur_verdict import robust_claims

    rng = np.random.default_rng(0)
    out = []
    for run in range(12):
        for metric, blurred, similar in (("imd", lambda s: 5.0, 5.0), ("fid", lambda s: 1.0 + 4 * s, 2.0),
                                         ("kid", lambda s: 0.1 + 0.4 * s, 0.2)):
            for sigma in (0.0, 1.0, 2.0):
                out.append({"run": run, "role": "blur", "model": "d", "sigma": sigma, "metric": metric,
                            "value": blurred(sigma) + rng.normal(0, 0.05)})
            out.append({"run": run, "role": "second", "model": "o", "sigma": np.nan, "metric": metric,
                        "value": similar + rng.normal(0, 0.05)})
            out.append({"run": run, "role": "reference", "model": "ref", "sigma": np.nan, "metric": metric,
                        "value": 10.0 + rng.normal(0, 0.05)})
    claims = robust_claims(pd.DataFrame(out), 0.99)
    assert len(claims) == 2 and all(c.verdict == NOT_TESTABLE and c.detectable for c in claims)


def test_match_mnist_is_not_tested_against_a_stand_in() -> None:
    """(issue #36) "FID/KID match MNIST" is decided only against MNIST itself: against patches8 it is not tested
    (its numbers shown), and the same numbers against a reference set named mnist are decided (contradicted here)."""
    from ganeval.results.verdicts import CONTRADICTED, STAND_IN
    from ganeval.studies.blur_verdict import order_claims

    rows = pd.read_csv(BLUR_REFERENCE / "runs.csv")
    summary = pd.read_csv(BLUR_REFERENCE / "summary.csv")
    passes = bs.first_passes(summary, rows, 0.99)
    got = {c.name: c for c in order_claims(rows, summary, passes, 0.99)}
    assert got["FID matches MNIST at σ = 3"].verdict == STAND_IN and "patches8, not MNIST" in got[
        "FID matches MNIST at σ = 3"].evidence
    mnist = rows.assign(model=rows.model.where(rows.role != "reference", "mnist"))
    again = {c.name: c for c in order_claims(mnist, summary, passes, 0.99)}
    assert again["KID matches MNIST at σ = 3"].verdict == CONTRADICTED
    text = (BLUR_REFERENCE / "verdict.md").read_text()
    assert "FID matches MNIST at σ = 3: not tested: stand-in data" in text and "as the paper" not in text
