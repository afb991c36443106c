"""Sweep 5 (studies and results): exact values for the scalability rules, the torus search's log and the results
helpers, each against a hand-computed or float64 ground truth."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

# ---------------------------------------------------------------- studies/scalability.py


def _scal_rows(slopes: dict[str, list[float]], sizes: tuple[int, ...] = (100, 200, 400)) -> pd.DataFrame:
    """Times exactly n**slope per metric and repeat (so each log–log slope is exact)."""
    rows = []
    for m, ss in slopes.items():
        for r, s in enumerate(ss):
            for n in sizes:
                rows.append({"metric": m, "n": n, "repeat": r, "seconds": float(n) ** s * 1e-4})
    return pd.DataFrame(rows)


def _t(x: list[float], conf: float) -> tuple[float, float, float]:
    a = np.asarray(x, dtype=np.float64)
    half = stats.t.ppf(0.5 + conf / 2, a.size - 1) * a.std(ddof=1) / math.sqrt(a.size)
    return float(a.mean()), float(a.mean() - half), float(a.mean() + half)


def test_scalability_thresholds_values_and_ranges() -> None:
    from ganeval.studies import scalability as sc

    assert (sc.QUADRATIC.value, sc.QUADRATIC.low, sc.QUADRATIC.high) == (1.8, 1.6, 1.9)
    assert (sc.SUBQUADRATIC.value, sc.SUBQUADRATIC.low, sc.SUBQUADRATIC.high) == (1.5, 1.3, 1.7)
    assert (sc.CONSTANT.value, sc.CONSTANT.low, sc.CONSTANT.high) == (0.3, 0.2, 0.5)


def test_scalability_slopes_exact_and_in_first_seen_order() -> None:
    from ganeval.studies.scalability import slopes

    s = slopes(_scal_rows({"kid_full": [2.0, 2.1], "fid": [0.25, 0.5]}))
    assert list(s.metric) == ["kid_full", "kid_full", "fid", "fid"]
    assert list(s.repeat) == [0, 1, 0, 1]
    np.testing.assert_allclose(s.slope.to_numpy(), [2.0, 2.1, 0.25, 0.5], rtol=1e-9, atol=1e-9)


SCAL = {"kid_full": [2.0, 2.01, 2.02], "imd_approx": [1.5, 1.55, 1.6], "fid": [1.0, 1.0, 1.0]}


def test_scalability_decide_all_claims_and_between_numbers() -> None:
    from ganeval.results.verdicts import CONTRADICTED, DEPENDS, HOLDS
    from ganeval.studies.scalability import decide

    claims, table = decide(_scal_rows(SCAL), 0.95)
    assert [c.name for c in claims] == ["KID's cost is quadratic in n", "IMD with approximate k-NN breaks O(n²)",
                                        "FID's time appears constant in n", "IMD's time stands between FID's and KID's"]
    kid, imd, fid, between = claims
    assert kid.verdict == HOLDS and kid.detectable == ""
    m, lo, hi = _t(SCAL["kid_full"], 0.95)
    assert kid.evidence == f"slope {m:.2f} [{lo:.2f}, {hi:.2f}]"
    assert "over 3 repeats above the threshold" in kid.rule
    assert imd.verdict == DEPENDS  # [1.38, 1.72] against 1.3–1.7
    assert fid.verdict == CONTRADICTED and fid.detectable == ""
    assert between.verdict == HOLDS and between.detectable == ""
    d1, l1, h1 = _t([0.5, 0.46, 0.42], 0.95)
    d2, l2, h2 = _t([0.5, 0.55, 0.6], 0.95)
    assert between.evidence == f"KID − IMD {d1:+.2f} [{l1:+.2f}, {h1:+.2f}], IMD − FID {d2:+.2f} [{l2:+.2f}, {h2:+.2f}]"
    assert "over 3 repeats" in between.rule
    assert list(table.metric.unique()) == ["kid_full", "imd_approx", "fid"]
    assert list(table.columns) == ["metric", "n", "median", "min", "max", "slope_mean"]
    np.testing.assert_allclose(table.slope_mean.to_numpy()[::3], [2.01, 1.55, 1.0], rtol=1e-9)


def test_scalability_band_claim_names_half_width_when_not_testable() -> None:
    from ganeval.results.verdicts import NOT_TESTABLE
    from ganeval.studies.scalability import decide

    claims, _ = decide(_scal_rows({"imd_approx": [1.0, 1.6, 2.2]}), 0.95)
    assert len(claims) == 1 and claims[0].verdict == NOT_TESTABLE
    m, lo, hi = _t([1.0, 1.6, 2.2], 0.95)
    assert claims[0].detectable.startswith(f"an interval clear of the threshold (measured half-width {(hi - m):.2g}")


def test_scalability_decide_each_metric_alone_and_no_between_without_all_three() -> None:
    from ganeval.studies.scalability import decide

    for m, name in (("kid_full", "KID's cost is quadratic in n"), ("fid", "FID's time appears constant in n")):
        claims, _ = decide(_scal_rows({m: SCAL[m]}), 0.95)
        assert [c.name for c in claims] == [name]
    claims, _ = decide(_scal_rows({"kid_full": SCAL["kid_full"], "fid": SCAL["fid"]}), 0.95)
    assert len(claims) == 2


def test_scalability_between_contradicted_and_not_testable() -> None:
    from ganeval.results.verdicts import NOT_TESTABLE
    from ganeval.studies.scalability import between_claim, slopes

    s = slopes(_scal_rows({"kid_full": [2.0, 2.1, 2.2], "imd_approx": [1.5, 2.2, 2.9], "fid": [1.0, 1.0, 1.0]}))
    c = between_claim(s, 0.95, 3)
    assert c.verdict == NOT_TESTABLE
    hw = max(_t([0.5, -0.1, -0.7], 0.95)[2] - _t([0.5, -0.1, -0.7], 0.95)[0],
             _t([0.5, 1.2, 1.9], 0.95)[2] - _t([0.5, 1.2, 1.9], 0.95)[0])
    assert c.detectable.startswith(f"slope differences beyond ±{hw:.2g} (the half-widths over 3 repeats")


def test_scalability_write_table_and_verdict(tmp_path: Path) -> None:
    from ganeval.results.verdict import claim_sentences
    from ganeval.studies.scalability import decide, write

    rows = _scal_rows(SCAL)
    cfg = {"confidence": 0.95, "repeats": 3, "sizes": [100, 200, 400], "d": 8, "cpu": "cpu", "threads": 1, "load": 0.5}
    write(tmp_path, rows, cfg)
    md = (tmp_path / "verdict.md").read_text()
    assert "| metric | n = 100 | n = 200 | n = 400 | slope |\n|---|---|---|---|---|\n| kid_full |" in md
    assert md.index("| kid_full |") < md.index("| imd_approx |") < md.index("| fid |")
    claims, _ = decide(rows, 0.95)
    assert all(line in md for line in claim_sentences(claims, 0.95, rule=True))
    rec = json.loads((tmp_path / "summary.json").read_text())
    assert rec["config"] == cfg and len(rec["claims"]) == 4


def test_scalability_plot_figure_properties(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ganeval.results.plots as plots
    from ganeval.studies.scalability import plot

    seen: dict[str, Any] = {}

    def fake_save(fig: Any, path: Any) -> Path:
        seen["fig"] = fig
        return Path(path)

    monkeypatch.setattr(plots, "_save", fake_save)
    plot(_scal_rows({"kid_full": [2.0, 2.1], "fid": [0.25, 0.5]}), tmp_path / "x.png")
    fig = seen["fig"]
    assert tuple(fig.get_size_inches()) == (5.5, 4.0)
    ax = fig.axes[0]
    leg = ax.get_legend()
    assert [t.get_text() for t in leg.get_texts()] == ["kid_full", "fid"]
    assert leg.get_texts()[0].get_fontsize() == 8
    assert [c.get_alpha() for c in ax.collections] == [0.2, 0.2]
    import matplotlib.pyplot as plt
    plt.close(fig)


# ---------------------------------------------------------------- studies/torus_search_log.py


def _trec(name: str, fid_good: float, fid_bad: float, hole_good: list[float], hole_bad: list[float],
          near: bool = True, imd_good: float = 9.0, imd_bad: float = 14.0, diff_p: float = 0.01,
          overlaps: tuple[bool, bool, bool] = (True, True, False), paper_claim: bool = False) -> dict[str, Any]:
    def metric(g: float, b: float, ov: bool, p: float) -> dict[str, Any]:
        return {"good": {"mean": g, "half_width": g / 10}, "bad": {"mean": b, "half_width": b / 20},
                "intervals_overlap": ov, "diff_p": p}

    return {"candidate": name, "varies": f"varies {name}", "wall_s": 12.4,
            "metrics": {"fid": metric(fid_good, fid_bad, overlaps[0], 0.3), "kid": metric(0.0017, 0.0026, overlaps[1], 0.4),
                        "imd": metric(imd_good, imd_bad, overlaps[2], diff_p)},
            "hole_fraction": {"good": hole_good, "bad": hole_bad},
            "criteria": {"fid_overlap": overlaps[0], "kid_overlap": overlaps[1], "imd_separates": not overlaps[2],
                         "good_fid_near_paper": near, "holds": False, "paper_claim": paper_claim,
                         "per_seed_paper_claim": [True, False, False]},
            "per_seed": [{"overlap": {"fid": True, "kid": False, "imd": False}},
                         {"overlap": {"fid": True, "kid": True, "imd": False}},
                         {"overlap": {"fid": True, "kid": True, "imd": True}}],
            "protocol": {"train_seeds": [0, 1, 2], "runs": 5, "sample_size": 100, "confidence": 0.95}}


def test_torus_log_logged_and_append(tmp_path: Path) -> None:
    from ganeval.studies.torus_search_log import append, logged

    path = tmp_path / "a" / "b" / "search.log"
    assert logged(path) == set()
    append(path, {"key": "k1", "z": 1, "a": 2})
    append(path, {"key": "k2"})
    assert path.read_text() == '{"key": "k1", "z": 1, "a": 2}\n{"key": "k2"}\n'
    path.write_text(path.read_text() + "\n  \n")
    assert logged(path) == {"k1", "k2"}


def test_torus_log_describe_exact() -> None:
    from ganeval.studies.torus_search_log import describe

    rec = _trec("c1", 0.0053, 0.0063, [0.12345, 0.12345], [0.5, 0.25])
    rec["criteria"]["per_seed_paper_claim"] = [True]
    assert describe(rec) == ("c1: fid 0.0053±0.00053 vs 0.0063±0.00032 ov; kid 0.0017±0.00017 vs 0.0026±0.00013 ov; "
                             "imd 9±0.9 vs 14±0.7 SEP; hole {'good': 0.123, 'bad': 0.375}; holds=False; per seed "
                             "(subsample intervals) [True] (12 s)")


def test_torus_log_closeness_exact() -> None:
    from ganeval.studies.torus_search_log import closeness

    rec = _trec("c", 0.005, 0.006, [0.1], [0.2], diff_p=0.037)
    assert closeness(rec) == (-4, 0.037)
    rec["metrics"]["imd"]["bad"]["mean"] = 9.0  # equal: not higher
    assert closeness(rec) == (-4, 2.0)
    rec["criteria"]["good_fid_near_paper"] = False
    assert closeness(rec) == (-3, 2.0)


def test_torus_log_constants_and_fid_ratio() -> None:
    from ganeval.studies import torus_search_log as ts

    assert ts.BLIND_FID_RATIO == (1.2, 2.0)
    assert ts.PAPER_FID_RATIO == 0.00627 / 0.00529
    assert ts.fid_ratio(_trec("c", 0.004, 0.005, [0.1], [0.2])) == 0.005 / 0.004


def test_torus_log_blind_criterion_edges() -> None:
    from ganeval.studies.torus_search_log import blind_criterion

    assert blind_criterion(_trec("c", 1.0, 1.2, [0.1], [0.2]))  # ratio exactly the lower edge
    assert blind_criterion(_trec("c", 1.0, 2.0, [0.1], [0.2]))  # exactly the upper edge
    assert blind_criterion(_trec("c", 1.0, 1.9, [0.1], [0.2]))
    assert not blind_criterion(_trec("c", 1.0, 2.01, [0.1], [0.2]))
    assert not blind_criterion(_trec("c", 1.0, 1.19, [0.1], [0.2]))
    assert not blind_criterion(_trec("c", 1.0, 2.5, [0.1], [0.2]))
    assert not blind_criterion(_trec("c", 1.0, 1.5, [0.1, 0.3], [0.2, 0.2]))  # equal hole means
    assert not blind_criterion(_trec("c", 1.0, 1.5, [0.1], [0.2], near=False))


def test_torus_log_blind_choice_nearest_the_papers_ratio(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.studies import torus_search_log as ts

    recs = [_trec("z", 1.0, 1.9, [0.1], [0.2]), _trec("b", 1.0, 1.3, [0.1], [0.2]),
            _trec("a", 1.0, 1.3, [0.1], [0.2]), _trec("no", 1.0, 1.5, [0.3], [0.2])]
    assert [r["candidate"] for r in ts.blind_choice(recs)] == ["a", "b", "z"]
    monkeypatch.setattr(ts, "BLIND_FID_RATIO", (0.5, 2.0))
    recs = [_trec("lo", 1.0, 1.0, [0.1], [0.2]), _trec("hi", 1.0, 1.3, [0.1], [0.2])]
    # |log(1.0 / 1.1853)| = 0.170 > |log(1.3 / 1.1853)| = 0.092
    assert [r["candidate"] for r in ts.blind_choice(recs)] == ["hi", "lo"]


def test_torus_log_blind_section_none_and_chosen() -> None:
    from ganeval.studies.torus_search_log import blind_section

    none = blind_section([_trec("x", 1.0, 3.0, [0.1], [0.2])])
    assert none[-1] == "No logged candidate meets it." and len(none) == 6
    assert "is 1.2–2× the good one's (the paper's: 1.19×)" in none[3]
    lines = blind_section([_trec("far", 1.0, 1.9, [0.1], [0.2]), _trec("near", 0.005, 0.006, [0.125, 0.25],
                                                                          [0.5, 0.5], paper_claim=True)])
    assert lines[5:7] == ["| candidate | FID bad/good | hole good / bad | FID: across seeds, per seed | KID | IMD | "
                          "per seed: paper's pattern |", "|---|---|---|---|---|---|---|"]
    assert lines[7] == "| near | 1.20 | 0.188 / 0.500 | o (p 0.3), 0/3 | o (p 0.4), 1/3 | s (p 0.01), 2/3 | 1/3 |"
    assert lines[8].startswith("| far | 1.90 | 0.100 / 0.200 |")
    assert lines[9] == "" and len(lines) == 11
    assert lines[10].startswith("Chosen: **near** (varies near; FID ratio 1.20). By the across-seed intervals IMD "
                                "separates good from bad where FID and KID do not: IMD good 9 ± 0.9 vs bad 14 ± 0.7")
    assert lines[10].endswith("Per seed (subsample intervals) FID separates them in 0/3 seeds, KID in 1/3, IMD in "
                              "2/3; the paper's pattern in 1/3.")


def test_torus_log_summarize_empty_and_order(tmp_path: Path) -> None:
    from ganeval.studies.torus_search_log import summarize_log

    p = tmp_path / "log"
    p.write_text("\n")
    text = summarize_log(p)
    assert ("0 candidates, each model trained with training seeds [], 0 runs of 0 points per model and seed, 0% t "
            "intervals across seeds.") in text
    assert text.endswith("No logged candidate meets it.\n")
    far = _trec("far", 1.0, 1.9, [0.1], [0.2], overlaps=(False, False, True))
    far["protocol"] = {**far["protocol"], "runs": 7}
    near = _trec("near", 0.005, 0.006, [0.1], [0.2])
    p.write_text(json.dumps(far) + "\n" + json.dumps(near) + "\n")
    text = summarize_log(p)
    assert ("2 candidates, each model trained with training seeds [0, 1, 2], 5 runs of 100 points per model and "
            "seed, 95% t intervals across seeds.") in text
    assert text.index("| near | varies near |") < text.index("| far | varies far |")
    assert "| 4/4 | 0.01 | 1/3 |" in text and "| 1/4 | 0.01 | 1/3 |" in text
    assert "## A bad model chosen without looking at IMD" in text and "Chosen: **near**" in text


# ---------------------------------------------------------------- studies/paper_numbers.py

PAPER_TABLE_BY_HAND = {  # (mean, half-width) per metric, dataset: (wgan, wgan_gp), typed again from the paper
    "imd": {"mnist": ((57.74, 0.47), (10.77, 0.42)), "fashion_mnist": ((118.14, 0.52), (13.45, 0.54)),
            "cifar10": ((18.10, 0.36), (10.84, 0.42)), "celeba": ((10.11, 0.33), (2.84, 0.31))},
    "kid": {"mnist": ((47.26, 0.07), (5.53, 0.03)), "fashion_mnist": ((119.93, 0.14), (25.49, 0.07)),
            "cifar10": ((93.89, 0.09), (59.59, 0.09)), "celeba": ((217.28, 0.14), (92.71, 0.08))},
    "fid": {"mnist": ((31.75, 0.07), (8.95, 0.03)), "fashion_mnist": ((152.44, 0.12), (35.31, 0.07)),
            "cifar10": ((101.43, 0.09), (80.65, 0.09)), "celeba": ((205.63, 0.09), (85.55, 0.08))},
}


def test_paper_numbers_every_cell_and_protocol() -> None:
    from ganeval.studies import paper_numbers as pn

    want = {(d, mod, met): cells[i] for met, per in PAPER_TABLE_BY_HAND.items() for d, cells in per.items()
            for i, mod in enumerate(("wgan", "wgan_gp"))}
    assert {k: tuple(v) for k, v in pn.PAPER_TABLE.items()} == want
    assert pn.PAPER_PROTOCOL == {"sample_size": 10000, "runs": 100, "confidence": 0.99,
                                 "features": "Inception pool3 (2048-d)"}
    assert pn.PAPER_SCALE == {"imd": 1.0, "kid": 1000.0, "fid": 1.0}
    assert list(pn.PAPER_DATASETS) == ["mnist", "fashion_mnist", "cifar10", "celeba"]
    assert list(pn.PAPER_MODELS) == ["wgan", "wgan_gp"] and pn.PAPER_METRICS == ("imd", "kid", "fid")


def test_paper_better_lower_mean_and_tie(monkeypatch: pytest.MonkeyPatch) -> None:
    from ganeval.studies import paper_numbers as pn

    assert all(pn.paper_better(d, m) == "wgan_gp" for d in pn.PAPER_DATASETS for m in pn.PAPER_METRICS)
    monkeypatch.setitem(pn.PAPER_TABLE, ("mnist", "wgan", "imd"), pn.PaperCell(10.77, 0.1))  # a tie: not lower
    assert pn.paper_better("mnist", "imd") == "wgan_gp"
    monkeypatch.setitem(pn.PAPER_TABLE, ("mnist", "wgan", "imd"), pn.PaperCell(10.76, 0.1))
    assert pn.paper_better("mnist", "imd") == "wgan"


# ---------------------------------------------------------------- studies/torus_seeds.py


def _seed_cmp(better: dict[str, list[str | None]], conf: float = 0.9) -> pd.DataFrame:
    return pd.DataFrame([{"metric": m, "better": b, "confidence": conf} for m, bs in better.items() for b in bs])


def test_torus_seed_separation_counts() -> None:
    from ganeval.studies.torus_seeds import seed_separation

    assert seed_separation(None) == {}
    assert seed_separation(_seed_cmp({})) == {}
    cmp = _seed_cmp({"kid": ["good", None, ""], "fid": [None, None, None], "imd": ["bad", "good", None]})
    sep = seed_separation(cmp)
    assert sep == {"kid": (1, 3), "fid": (0, 3), "imd": (2, 3)} and list(sep) == ["kid", "fid", "imd"]


def _seeds(rows: list[tuple[str, int, str, float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model", "train_seed", "metric", "mean", "ci_low", "ci_high"])


def _pattern_seeds(fid_bad: tuple[float, float] = (0.5, 1.5), imd_bad: tuple[float, float] = (2.0, 3.0),
                   imd_bad_mean: float = 2.5, kid_bad: tuple[float, float] = (0.5, 1.5)) -> pd.DataFrame:
    return _seeds([("g", 0, "fid", 1.0, 0.0, 1.0), ("b", 0, "fid", sum(fid_bad) / 2, *fid_bad),
                   ("g", 0, "kid", 1.0, 0.0, 1.0), ("b", 0, "kid", sum(kid_bad) / 2, *kid_bad),
                   ("g", 0, "imd", 0.5, 0.0, 1.0), ("b", 0, "imd", imd_bad_mean, *imd_bad)])


def test_torus_seed_pattern_edges() -> None:
    from ganeval.studies.torus_seeds import pattern

    assert pattern(_pattern_seeds(), "g", "b", 0)
    assert not pattern(_pattern_seeds(imd_bad=(1.0, 2.0)), "g", "b", 0)  # touching intervals: not separate
    assert not pattern(_pattern_seeds(imd_bad=(-2.0, -1.0), imd_bad_mean=0.5), "g", "b", 0)  # separate below, equal mean
    assert not pattern(_pattern_seeds(imd_bad=(-2.0, 0.0), imd_bad_mean=-1.0), "g", "b", 0)  # touching from below
    assert not pattern(_pattern_seeds(imd_bad=(-2.0, -1.0), imd_bad_mean=-1.5), "g", "b", 0)
    assert not pattern(_pattern_seeds(fid_bad=(2.0, 3.0)), "g", "b", 0)  # FID separates
    assert not pattern(_pattern_seeds(kid_bad=(-3.0, -2.0)), "g", "b", 0)  # KID separates (below)
    assert pattern(_pattern_seeds(fid_bad=(1.0, 2.0), kid_bad=(-1.0, 0.0)), "g", "b", 0)  # touching: overlap


def test_torus_seed_sentence_words() -> None:
    from ganeval.studies.torus_seeds import seed_sentence

    cmp = _seed_cmp({"fid": [None, "g"], "imd": ["g", "b"]}, conf=0.9)
    cmp.loc[0, "confidence"] = 0.9
    cmp.loc[1:, "confidence"] = 0.5
    seeds = pd.concat([_pattern_seeds(), _pattern_seeds(fid_bad=(2.0, 3.0)).assign(train_seed=1)])
    out = seed_sentence(cmp, seeds, "g", "b")
    assert out == ["torus: g vs b per training seed (one trained pair each, paired by run, 90% intervals over "
                   "subsamples): FID: g better in 1, b better in 0, no significant difference in 1 of 2 pairs; IMD: g "
                   "better in 1, b better in 1, no significant difference in 0 of 2 pairs; the paper's pattern (FID "
                   "and KID overlap, IMD separates, bad higher) in 1 of 2"]
    assert seed_sentence(None, seeds, "g", "b") == [] and seed_sentence(cmp, None, "g", "b") == []
    assert seed_sentence(cmp, seeds.drop(columns="train_seed"), "g", "b") == []
    assert seed_sentence(_seed_cmp({}), seeds, "g", "b") == []


def test_torus_per_seed_comparison_needs_the_seed_column() -> None:
    from ganeval.results import compare_runs
    from ganeval.studies.torus_seeds import per_seed_comparison

    rng = np.random.default_rng(0)
    rows = pd.DataFrame([{"model": mo, "train_seed": s, "run": r, "metric": "fid", "value": float(v)}
                         for mo in ("g", "b") for s in (0, 1) for r, v in enumerate(rng.normal(size=4))])
    assert per_seed_comparison(rows.drop(columns="train_seed"), 0.9) is None
    got = per_seed_comparison(rows, 0.9)
    pd.testing.assert_frame_equal(got, compare_runs(rows, 0.9))


# ---------------------------------------------------------------- studies/stored.py and results/files.py


def test_stored_relative_paths_cuts_the_root() -> None:
    from ganeval.studies.stored import relative_paths

    v = {"a": "/tmp/x/out/f.csv", "b": ["/tmp/x", "/tmp/xy", 3], "c": "other"}
    assert relative_paths(v, "/tmp/x/") == {"a": "out/f.csv", "b": [".", "/tmp/xy", 3], "c": "other"}


def test_stored_read_runs_keeps_na_strings_and_claims_record(tmp_path: Path) -> None:
    from ganeval.results.verdicts import HOLDS, Claim
    from ganeval.studies.stored import read_runs, write_claims_record

    (tmp_path / "runs.csv").write_text("model,value,note\nNA,1.5,\nNaN,2.0,x\n")
    runs = read_runs(tmp_path)
    assert list(runs.model) == ["NA", "NaN"] and runs.note.isna().tolist() == [True, False]
    c = Claim("név", "s", HOLDS, "r", "t")
    write_claims_record(tmp_path, {"k": 1}, [c])
    text = (tmp_path / "summary.json").read_text()
    assert text == json.dumps({"config": {"k": 1}, "claims": [c.record()]}, indent=2, ensure_ascii=False) + "\n"
    assert "név" in text


def test_files_json_text_and_csv(tmp_path: Path) -> None:
    from ganeval.results.files import json_dumps, json_text, write_csv

    assert json_text({"b": float("nan"), "a": [np.float32(np.inf), 1]}) == '{\n  "a": [\n    null,\n    1\n  ],\n  "b": null\n}\n'
    assert json_dumps({"x": Path("p")}) == '{"x": "p"}'
    write_csv(pd.DataFrame({"a": [1, 2]}, index=[5, 6]), tmp_path / "f.csv")
    assert (tmp_path / "f.csv").read_text() == "a\n1\n2\n"


# ---------------------------------------------------------------- results/summary.py


def _tiv(x: list[float], conf: float) -> dict[str, float]:
    a = np.asarray(x, dtype=np.float64)
    half = stats.t.ppf(0.5 + conf / 2, a.size - 1) * a.std(ddof=1) / math.sqrt(a.size)
    return {"mean": a.mean(), "ci_low": a.mean() - half, "ci_high": a.mean() + half}


def test_summary_group_columns_and_summary_group_columns() -> None:
    from ganeval.results.summary import group_columns, summary_group_columns

    rows = pd.DataFrame(columns=["model", "run", "metric", "value", "seed"])
    assert group_columns(rows) == ["model", "seed"]
    s = pd.DataFrame(columns=["model", "metric", "mean", "std", "ci_low", "ci_high", "half_width", "n_runs",
                              "sample_size", "confidence", "n_seeds", "covers", "share_seed", "share_subsample",
                              "share_probe", "fid_full", "se", "extra"])
    assert summary_group_columns(s) == ["model", "extra"]


def test_summarize_runs_order_nan_groups_floor_and_values() -> None:
    from ganeval.results.summary import summarize_runs

    rows = pd.DataFrame({"model": ["b", "b", "b", "a", "a", "a", None, None],
                         "run": [2, 0, 1, 0, 1, 2, 0, 1], "metric": ["fid"] * 3 + ["kid"] * 3 + ["imd"] * 2,
                         "value": [0.3, 0.1, -0.1, 0.0, 0.2, 0.7, 1.0, 3.0]})
    s = summarize_runs(rows, 0.9, 64)
    assert list(s.model.fillna("NA")) == ["b", "a", "NA"] and list(s.metric) == ["fid", "kid", "imd"]
    fid, kid = _tiv([0.1, -0.1, 0.3], 0.9), _tiv([0.0, 0.2, 0.7], 0.9)
    assert s.loc[0, "mean"] == pytest.approx(fid["mean"], rel=1e-12)
    assert fid["ci_low"] < 0 and s.loc[0, "ci_low"] == 0.0  # FID floored at 0
    assert s.loc[0, "ci_high"] == pytest.approx(fid["ci_high"], rel=1e-12)
    assert kid["ci_low"] < 0 and s.loc[1, "ci_low"] == pytest.approx(kid["ci_low"], rel=1e-12)  # KID is not floored
    assert s.loc[0, "n_runs"] == 3 and s.loc[0, "sample_size"] == 64 and s.loc[0, "confidence"] == 0.9
    assert "se" not in s.columns


def test_summarize_runs_standard_errors_only_with_one_run() -> None:
    from ganeval.results.summary import summarize_runs

    rows = pd.DataFrame({"model": ["a", "b"], "run": [0, 0], "metric": ["imd", "imd"], "value": [1.0, 2.0]})
    rows.attrs["se"] = [{"model": "b", "metric": "imd", "se": 0.25}]
    s = summarize_runs(rows, 0.9, 10)
    assert s.se.isna().tolist() == [True, False] and s.se.iloc[1] == 0.25
    two = pd.DataFrame({"model": ["a", "a"], "run": [0, 1], "metric": ["imd", "imd"], "value": [1.0, 2.0]})
    two.attrs["se"] = [{"model": "a", "metric": "imd", "se": 0.25}]
    assert "se" not in summarize_runs(two, 0.9, 10).columns
    with pytest.raises(ValueError):
        summarize_runs(rows.iloc[:0], 0.9, 10)


def _pair_rows(metric: str = "fid") -> pd.DataFrame:
    a = [1.0, 2.0, 3.0]
    b = [2.0, 2.5, 4.1]
    c = [1.1, 2.2, 2.9]
    return pd.DataFrame([{"model": m, "run": r, "metric": metric, "value": v} for m, vs in (("a", a), ("b", b), ("c", c))
                         for r, v in enumerate(vs)])


def test_compare_runs_pairs_default_lower_is_better_and_flip() -> None:
    from ganeval.results.summary import compare_runs

    cmp = compare_runs(_pair_rows(), 0.9)
    assert list(zip(cmp.a, cmp.b)) == [("a", "b"), ("a", "c"), ("b", "c")]
    d = np.array([1.0, 2.0, 3.0]) - np.array([2.0, 2.5, 4.1])
    iv = _tiv(list(d), 0.9)
    assert cmp.loc[0, "diff_mean"] == pytest.approx(d.mean(), rel=1e-12)
    assert cmp.loc[0, "ci_high"] == pytest.approx(iv["ci_high"], rel=1e-12) and iv["ci_high"] < 0
    assert cmp.loc[0, "better"] == "a" and cmp.loc[0, "n_runs"] == 3
    assert cmp.loc[2, "better"] == "c"  # b − c > 0: c lower
    assert compare_runs(_pair_rows(), 0.9, lower_is_better=False).loc[0, "better"] == "b"
    assert compare_runs(_pair_rows("precision"), 0.9).loc[0, "better"] == "b"  # higher is better for precision
    assert list(cmp.columns).index("mde_holm") == list(cmp.columns).index("mde") + 1
    assert list(cmp.columns)[-2:] == ["better", "confidence"]


def test_paired_differences_first_value_missing_pairs_and_count() -> None:
    from ganeval.results.summary import paired_differences

    rows = pd.DataFrame({"g": ["x"] * 6, "model": ["a", "a", "a", "b", "b", "c"], "run": [0, 1, 2, 0, 1, 5],
                         "value": [1.0, 2.0, 5.0, 3.0, 5.0, 1.0]})
    out = paired_differences(rows, ["g"], "model", "run", "value", 0.9, count="pairs")
    assert list(zip(out.a, out.b)) == [("a", "b")]  # a and c, b and c share no run
    assert out.loc[0, "pairs"] == 2 and out.loc[0, "diff_mean"] == -2.5  # runs 0 and 1 only
    assert out.loc[0, "diff_std"] == pytest.approx(math.sqrt(0.5), rel=1e-12)
    assert out.loc[0, "better"] == ""  # 2 pairs: the interval holds 0
    with pytest.raises(ValueError):
        paired_differences(rows, ["g"], "nope", "run", "value", 0.9)


def test_holm_level_steps() -> None:
    from ganeval.results.summary import holm_level

    c = pd.DataFrame({"p_value": [0.1, np.nan, 0.2, 0.3], "confidence": [0.95, 0.5, 0.5, 0.5]})
    level, tests = holm_level(c)
    assert tests == 3 and level == pytest.approx(1.0 - 0.05 / 3, rel=1e-14)
    level, tests = holm_level(pd.DataFrame({"p_value": [np.nan], "confidence": [0.9]}))
    assert tests == 1 and level == pytest.approx(0.9, rel=1e-14)


# ---------------------------------------------------------------- results/collate.py

from test_collate import REFERENCE as QUICKSTART, _sweep as _jobs  # noqa: E402  (the reference quickstart; its job folders)


def test_collate_override_dict_and_same_protocol() -> None:
    from ganeval.results import RunRecord
    from ganeval.results.collate import _override_dict, _same_protocol

    rec = RunRecord.read(QUICKSTART / "summary.json")
    rec.overrides = ["+a=1", "~b=x=y", "flag", "c=2"]
    assert _override_dict(rec) == {"a": "1", "b": "x=y", "c": "2"}
    rec.overrides = None
    assert _override_dict(rec) == {}
    h = "0123456789abcdef" * 4
    a = {"name": "inception", "weights": h[:16]}
    b = {"name": "inception", "weights": h}
    assert _same_protocol("extractor", a, b) and _same_protocol("extractor", b, a)
    assert not _same_protocol("other", a, b)
    assert not _same_protocol("extractor", {"name": "x", "weights": h}, b)
    assert not _same_protocol("extractor", {"name": "inception", "hash": h[:16]}, {"name": "inception", "hash": h})
    assert not _same_protocol("extractor", {"name": "inception", "weights": h[:16], "x": 1}, b)
    assert _same_protocol("extractor", dict(b), b) and _same_protocol("n", 3, 3) and not _same_protocol("n", 3, 4)


def test_collate_find_jobs_refusals(tmp_path: Path) -> None:
    from ganeval.results.collate import find_jobs

    with pytest.raises(ValueError, match="is not a directory"):
        find_jobs(tmp_path / "missing")
    with pytest.raises(ValueError, match="no job results"):
        find_jobs(tmp_path)
    (tmp_path / "summary.json").write_text("{}")
    (tmp_path / "summary.csv").write_text("")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "summary.json").write_text("{}")
    with pytest.raises(ValueError, match="no job results"):
        find_jobs(tmp_path)
    (tmp_path / "j" / "k").mkdir(parents=True)
    (tmp_path / "j" / "k" / "summary.json").write_text("{}")
    (tmp_path / "j" / "k" / "summary.csv").write_text("")
    assert find_jobs(tmp_path) == [tmp_path / "j" / "k"]


def test_collate_identical_overrides_keep_jobs_apart(tmp_path: Path) -> None:
    from ganeval.results.collate import collate

    root = _jobs(tmp_path, a={"overrides": ["x=1"]}, b={"overrides": ["x=1"]}, c={"overrides": ["x=1"]})
    first = pd.read_csv(root / "a" / "summary.csv")
    first.assign(data="NA").to_csv(root / "a" / "summary.csv", index=False)  # the string "NA" stays a name
    merged = collate(root)
    n = len(first)
    assert merged.data.iloc[0] == "NA"
    assert list(merged.columns[:1]) == ["job"] and list(merged.job) == ["a"] * n + ["b"] * n + ["c"] * n
    assert list(merged.index) == list(range(3 * n))


def test_collate_refuses_a_third_jobs_protocol_and_two_seed_keys(tmp_path: Path) -> None:
    from ganeval.results.collate import collate

    other = {"overrides": ["x=1"], "config": {**json.loads((QUICKSTART / "summary.json").read_text())["config"],
                                               "sample_size": 7}}
    for odd in ("a", "b", "c"):  # the first, second or third job's protocol differs
        root = _jobs(tmp_path / f"p{odd}", **{j: (other if j == odd else {"overrides": ["x=1"]}) for j in "abc"})
        with pytest.raises(ValueError, match="different protocols"):
            collate(root)
    root = _jobs(tmp_path / "s", a={"overrides": ["seed=1", "train_seed=1"]}, b={"overrides": ["seed=2", "train_seed=2"]})
    with pytest.raises(ValueError, match="vary"):
        collate(root)


def test_collate_seed_sweep_with_another_varying_key(tmp_path: Path) -> None:
    from ganeval.results.collate import collate

    def add_n_seeds(root: Path) -> Path:
        for job in ("a", "b"):
            s = pd.read_csv(root / job / "summary.csv")
            s.assign(n_seeds=1).to_csv(root / job / "summary.csv", index=False)
        return root

    root = add_n_seeds(_jobs(tmp_path / "one", a={"overrides": ["seed=1", "lr=0.1"]},
                             b={"overrides": ["seed=2", "lr=0.2"]}))
    merged = collate(root)
    assert list(merged.columns[:2]) == ["lr", "train_seed"] and "job" not in merged.columns
    assert "n_seeds" not in merged.columns and list(merged.train_seed.unique()) == ["1", "2"]
    root2 = add_n_seeds(_jobs(tmp_path / "two", a={"overrides": ["lr=0.1"]}, b={"overrides": ["lr=0.2"]}))
    assert "n_seeds" in collate(root2).columns


# ---------------------------------------------------------------- studies/stability_claims.py


def _stab_cmp() -> pd.DataFrame:
    rows = [
        # kind, metric, knn, n, pair, diff_mean, ci_low, ci_high, p_value, mde, half_width, diff_std, n_runs
        ("different - same", "imd", "exact", 200, "", 1.5, 0.5, 2.5, 0.001, 0.25, 1.0, 0.4, 10),
        ("different - same", "imd", "exact", 100, "", -1.0, -2.0, -0.5, 0.002, 0.3, 0.75, 0.5, 10),
        ("different - same", "fid", "", 100, "", 0.1, 0.0, 0.2, 0.3, 0.35, 0.1, 0.6, 10),
        ("approx - exact", "imd", "", 100, "same", 0.01, -0.01, 0.03, 0.2, 0.02, 0.02, 0.1, 10),
        ("approx - exact", "imd", "", 400, "same", 0.05, 0.01, 0.09, 0.04, 0.03, 0.04, 0.2, 10),
        ("approx - exact", "imd", "", 100, "different", 0.0, -0.1, 0.1, float("nan"), 0.5, 0.1, float("nan"), 10),
    ]
    cols = ["kind", "metric", "knn", "n", "pair", "diff_mean", "ci_low", "ci_high", "p_value", "mde", "half_width",
            "diff_std", "n_runs"]
    df = pd.DataFrame(rows, columns=cols)
    df["var_ratio_high"] = [np.nan, np.nan, np.nan, 1.2, 1.456, 0.9]
    return df


def test_stability_separation_claims_exact() -> None:
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE
    from ganeval.studies.stability_claims import _separation

    out = _separation(_stab_cmp(), pd.DataFrame())
    assert [c.name for c in out] == ["separation/fid/n=100", "separation/imd/exact/n=100", "separation/imd/exact/n=200"]
    assert [c.verdict for c in out] == [NOT_TESTABLE, CONTRADICTED, HOLDS]
    assert out[2].statement == "IMD (exact kNN) puts the different pair above the same pair at n = 200"
    assert out[2].evidence == "different − same 1.5 [0.5, 2.5]" and out[2].p_value == 0.001
    assert out[2].detectable == "0.25"
    assert _separation(_stab_cmp().drop(columns="kind"), pd.DataFrame()) == []


def test_stability_diverges_claims_exact() -> None:
    from ganeval.results.verdicts import AS_STATED, BETTER, CONTRADICTED, HOLDS, NO_COMPARISON, NOT_TESTABLE
    from ganeval.studies.stability_claims import _EQUAL, _diverges

    by = {"approx/diverges_further/same": {"holds": True, "detail": "d"},
          "approx/diverges_further/different": {"holds": None, "detail": "x the approximate graph is the exact one"}}
    out = _diverges(_stab_cmp(), by)
    assert [c.name for c in out] == ["approx/diverges_further/same", "approx/diverges_further/different"]
    same, diff = out
    assert same.verdict == HOLDS and same.vs_paper == AS_STATED and same.p_value == 0.04
    assert same.evidence == "approx − exact at n = 400: +0.05 ± 0.04" and same.detectable == "0.03"
    assert "at n = 400 (> 0)" in same.rule
    assert diff.verdict == NOT_TESTABLE and diff.vs_paper == NO_COMPARISON and math.isnan(diff.p_value)
    assert diff.detectable == f"0.5 ({_EQUAL})"
    by["approx/diverges_further/same"]["holds"] = False
    c = _diverges(_stab_cmp(), {"approx/diverges_further/same": by["approx/diverges_further/same"]})
    assert [x.verdict for x in c] == [CONTRADICTED] and c[0].vs_paper == BETTER
    assert _diverges(_stab_cmp().drop(columns="kind"), by) == []


def test_stability_agrees_claims_bonferroni() -> None:
    from ganeval.results.verdicts import CONTRADICTED, NOT_TESTABLE
    from ganeval.studies.stability_claims import _EQUAL, _agrees

    by = {"approx/agrees/same": {"holds": False, "detail": "differs"},
          "approx/agrees/different": {"holds": None, "detail": "the approximate graph is the exact one"}}
    same, diff = _agrees(_stab_cmp(), by)
    assert same.name == "approx/agrees/same" and same.verdict == CONTRADICTED
    assert same.p_value == pytest.approx(2 * 0.04, rel=1e-12)  # Bonferroni: the smallest p × 2 sizes
    assert same.detectable == "up to 0.03 (the largest n's paired t: 0.03)"
    assert "(Bonferroni over the 2 sizes)" in same.rule
    assert same.statement == "IMD's exact and approximate intervals agree (same pair)"
    assert diff.verdict == NOT_TESTABLE and math.isnan(diff.p_value) and diff.detectable == _EQUAL
    big = _stab_cmp()
    big.loc[3, "p_value"] = 0.7
    big.loc[4, "p_value"] = 0.9
    assert _agrees(big, {"approx/agrees/same": {"holds": None, "detail": "d"}})[0].p_value == 1.0
    big.loc[3, "mde"] = 0.06
    assert _agrees(big, {"approx/agrees/same": {"holds": None, "detail": "d"}})[0].detectable == \
        "up to 0.06 (the largest n's paired t: 0.03)"


def test_stability_ruled_claims_and_straddle() -> None:
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE
    from ganeval.studies.stability_claims import _EQUAL, _ruled

    by = {"diverge/imd/x": {"holds": None, "detail": "d", "straddles": [100, 400]},
          "interval/imd": {"holds": True, "detail": "i"},
          "approx/no_added_variance": {"holds": None, "detail": "v"},
          "separation/imd": {"holds": True, "detail": "s"}}
    out = _ruled(by, _stab_cmp())
    assert [c.name for c in out] == ["diverge/imd/x", "interval/imd", "approx/no_added_variance"]
    div, iv, var = out
    assert div.detectable == "relative intervals clear of the axis' ends at n = 100, 400 (more runs there)"
    assert div.statement == "IMD of the different pair does not diverge too much with n" and div.verdict == NOT_TESTABLE
    assert iv.verdict == HOLDS and iv.detectable == "" and iv.threshold == "narrower"
    assert var.detectable == "a variance ratio up to ×1.46 (the widest interval's upper bound)"
    assert var.threshold == "ratio ≤ 1.5 counts as no added variance"
    by2 = {"approx/no_added_variance": {"holds": False, "detail": "v"},
           "diverge/imd": {"holds": None, "detail": "the approximate graph is the exact one"}}
    a, b = _ruled(by2, _stab_cmp().drop(columns="kind"))
    assert a.verdict == CONTRADICTED and a.detectable == "" and b.detectable == _EQUAL
    c = _ruled({"approx/no_added_variance": {"holds": None, "detail": "v"}}, _stab_cmp().drop(columns="kind"))
    assert c[0].detectable == "–"
    assert _ruled({"diverge/x": {"holds": None, "detail": "d"}}, _stab_cmp()) == []


def test_stability_at_level_restates_mde() -> None:
    from ganeval.results.intervals import paired_t_mde
    from ganeval.studies.stability_claims import at_level

    cmp = _stab_cmp()
    out = at_level(cmp, 0.9)
    assert out.mde.iloc[0] == paired_t_mde(0.4, 10, 0.9) and math.isnan(out.mde.iloc[5])
    assert at_level(cmp.drop(columns="mde"), 0.9).equals(cmp.drop(columns="mde"))
    assert at_level(cmp.iloc[:0], 0.9).empty


# ---------------------------------------------------------------- results/outputs.py


def test_outputs_manifest_and_record_detection(tmp_path: Path) -> None:
    from ganeval.results.outputs import MANIFEST, _manifest, is_ganeval_dir

    assert _manifest(tmp_path) is None and not is_ganeval_dir(tmp_path)
    (tmp_path / MANIFEST).write_text(json.dumps({"files": ["a.csv", "", ".", "..", "d/e", 3, "b.md"]}))
    assert _manifest(tmp_path) == ["a.csv", "b.md"] and is_ganeval_dir(tmp_path)
    (tmp_path / MANIFEST).write_text(json.dumps({"other": 1}))
    assert _manifest(tmp_path) is None and not is_ganeval_dir(tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps({"config": {}}))
    assert not is_ganeval_dir(tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps({"config_hash": "x"}))
    assert is_ganeval_dir(tmp_path)
    (tmp_path / "summary.json").unlink()
    (tmp_path / "runs.meta.json").write_text("{}")
    assert is_ganeval_dir(tmp_path)


def test_outputs_foreign_files_and_refusals(tmp_path: Path) -> None:
    from ganeval.results.outputs import check_foreign, check_system_dir, foreign_files

    assert foreign_files(tmp_path / "none") == []
    for n in (".hydra", "ganeval.log", ".ganeval.lock", ".a.tmp", ".b", "c.tmp", "d1", "d2", "d3"):
        (tmp_path / n).write_text("")
    assert foreign_files(tmp_path) == [".b", "c.tmp", "d1", "d2", "d3"]
    with pytest.raises(ValueError, match=r"\(\.b, c\.tmp, d1, d2, d3\) and holds"):
        check_foreign(tmp_path, False)
    (tmp_path / "d4").write_text("")
    with pytest.raises(ValueError, match=r"\(\.b, c\.tmp, d1, d2, d3, \.\.\.\) and holds"):
        check_foreign(tmp_path, False)
    check_foreign(tmp_path, True)
    check_foreign(tmp_path / "empty", False)
    (tmp_path / "runs.meta.json").write_text("{}")
    check_foreign(tmp_path, False)
    for bad in ("/etc", "/", str(Path.home())):
        with pytest.raises(ValueError, match="system or home directory"):
            check_system_dir(bad)
    check_system_dir(tmp_path)


def test_outputs_clear_this_run_and_manifest(tmp_path: Path) -> None:
    from ganeval.common import atomic_write_text, forget_written
    from ganeval.results.outputs import MANIFEST, clear_outputs, this_run, write_manifest

    d = tmp_path / "r"
    assert clear_outputs(d) == []
    d.mkdir()
    (d / "x.csv").write_text("")
    assert clear_outputs(d) == []  # not ganeval's
    forget_written(d)
    try:
        assert this_run(d) is None
        (d / MANIFEST).write_text(json.dumps({"files": ["x.csv", "sub", "gone.csv", "mine.csv", "ganeval.log"]}))
        (d / "sub").mkdir()
        (d / "ganeval.log").write_text("")
        atomic_write_text(d / "mine.csv", "m")
        assert this_run(d) == {"x.csv", "sub", "gone.csv", "mine.csv", "ganeval.log"}
        assert clear_outputs(d) == ["x.csv"]
        assert not (d / "x.csv").exists() and (d / "sub").is_dir() and (d / "mine.csv").exists()
        assert not (d / MANIFEST).exists()
        write_manifest(d)
        assert (d / MANIFEST).read_text() == '{\n "files": [\n  "mine.csv"\n ]\n}\n'
        assert this_run(d) == {"mine.csv", MANIFEST}
        (d / "runs.csv").write_text("")
        (d / "summary.png").write_text("")
        forget_written(d)
        (d / MANIFEST).unlink()
        (d / "runs.meta.json").write_text("{}")
        assert sorted(clear_outputs(d)) == ["runs.csv", "runs.meta.json", "summary.png"]
        assert clear_outputs(d) == []
    finally:
        forget_written(d)


# ---------------------------------------------------------------- studies/gan_table.py


def test_gan_table_dataset_specs_branches() -> None:
    from omegaconf import OmegaConf

    from ganeval.studies.gan_table import dataset_specs

    cfg = OmegaConf.create({"data": {"x": 1}, "generators": {"g": {"p": 1}}, "generator": None})
    assert dataset_specs(cfg) == {"data": {"data": cfg.data, "generators": {"g": cfg.generators.g}, "given": None}}
    cfg = OmegaConf.create({"data": {"x": 1}, "generators": None, "generator": {"k": 2}})
    out = dataset_specs(cfg, "mine")
    assert list(out) == ["mine"] and out["mine"]["generators"] == {} and out["mine"]["given"] == cfg.generator
    with pytest.raises(ValueError, match="dataset data has no generator"):
        dataset_specs(OmegaConf.create({"data": {"x": 1}, "generators": None, "generator": None}))
    cfg = OmegaConf.create({"datasets": {"a": {"data": {"i": 1}, "generators": {"g": {}}},
                                         "b": {"data": {"i": 2}, "generators": {"h": {}}}}, "include": ["b"],
                            "generator": {"k": 2}})
    out = dataset_specs(cfg)
    assert list(out) == ["b"] and out["b"]["given"] is None and list(out["b"]["generators"]) == ["h"]
    cfg.include = None
    assert list(dataset_specs(cfg)) == ["a", "b"]
    cfg.include = ["a", "zz"]
    with pytest.raises(ValueError, match=r"include names \['zz'\]"):
        dataset_specs(cfg)
    cfg.include = ["a"]
    cfg.datasets.a.generators = None
    with pytest.raises(ValueError, match="dataset a has no generator"):
        dataset_specs(cfg)


def test_gan_table_verdict_records_nan_as_null() -> None:
    from ganeval.studies.gan_table import verdict_records

    df = pd.DataFrame({"a": [1.5, float("nan")], "b": ["x", "y"]})
    assert verdict_records(df) == [{"a": 1.5, "b": "x"}, {"a": None, "b": "y"}]


# ---------------------------------------------------------------- results/report.py


def test_report_cell_text_records_table_and_readable() -> None:
    from ganeval.results.report import cell_text, meta_rows, readable, records_table

    assert cell_text(None) == ("", False) and cell_text(True) == ("True", False)
    assert cell_text(0.123456) == ("0.123", True) and cell_text(7) == ("7", True) and cell_text("x") == ("x", False)
    t = records_table([{"a": 1, "b": None}, {"c": 0.5, "a": False}])
    assert t == {"columns": ["a", "b", "c"], "rows": [[("1", True), ("", False), ("", False)],
                                                       [("False", False), ("", False), ("0.5", True)]]}
    assert readable({"b": {"y": 0.123456, "x": None}, "a": [1, 2.5]}) == "a: 1, 2.5\nb: (x: none, y: 0.123)"
    assert readable({"k": 1}) == "k: 1" and readable(0.98765) == "0.988" and readable(None) == "none"
    assert readable([{"k": 1}]) == "(k: 1)"
    assert meta_rows([("a", None), ("b", {"k": 1}), (3, 0.5)]) == [("b", "k: 1"), ("3", "0.5")]


def test_report_inline_svg_prefixes_ids_longest_first() -> None:
    from ganeval.results.report import inline_svg

    assert inline_svg("<svg><g/></svg>", "p") == "<svg><g/></svg>"
    svg = '<svg><clipPath id="c1"/><clipPath id="c12"/><use href="#c12"/><g clip-path="url(#c1)"/></svg>'
    assert inline_svg(svg, "f") == ('<svg><clipPath id="f-c1"/><clipPath id="f-c12"/><use href="#f-c12"/>'
                                    '<g clip-path="url(#f-c1)"/></svg>')


def test_report_sample_grids_at_most_and_files_only(tmp_path: Path) -> None:
    import base64
    import dataclasses

    from ganeval.results import RunRecord
    from ganeval.results.report import sample_grids

    gens = {}
    for i in range(26):
        d = tmp_path / f"g{i:02d}"
        d.mkdir()
        (d / "samples_final.png").write_bytes(bytes([i]))
        gens[f"k{i:02d}"] = {"path": str(d / "model.pt")}
    gens["a_nopath"] = {"name": "x"}
    gens["b_str"] = "ident"
    rec = dataclasses.replace(RunRecord.read(QUICKSTART / "summary.json"), generators=gens)
    out = sample_grids(rec)
    assert len(out) == 24 and out[0] == {"key": "k00", "data": base64.b64encode(bytes([0])).decode("ascii")}
    assert out[-1]["key"] == "k23"
    assert [g["key"] for g in sample_grids(rec, most=2)] == ["k00", "k01"]
    (tmp_path / "g00" / "samples_final.png").unlink()
    (tmp_path / "g00" / "samples_final.png").symlink_to(tmp_path / "g01" / "samples_final.png")
    assert sample_grids(rec, most=1)[0]["key"] == "k01"
    assert sample_grids(dataclasses.replace(rec, generators=None)) == []
