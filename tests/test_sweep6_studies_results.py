"""Round-2 sweep: stability_claims.decide and its edges, summarize_runs' floor with two group columns,
clear_outputs on a foreign folder."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd


# ---------------------------------------------------------------- studies/stability_claims.py


def _cmp_rows(rows: list[tuple]) -> pd.DataFrame:
    cols = ["kind", "metric", "knn", "n", "pair", "diff_mean", "ci_low", "ci_high", "p_value", "mde", "half_width",
            "diff_std", "n_runs"]
    return pd.DataFrame(rows, columns=cols)


def test_separation_interval_touching_zero_is_not_testable() -> None:
    """ci_high exactly 0 is neither above nor below: not testable (not contradicted); ci_low exactly 0 likewise."""
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE
    from ganeval.studies.stability_claims import _separation

    c = _cmp_rows([("different - same", "fid", "", 100, "", -0.1, -0.2, 0.0, 0.3, 0.35, 0.1, 0.6, 10),
                   ("different - same", "fid", "", 200, "", 0.1, 0.0, 0.2, 0.3, 0.35, 0.1, 0.6, 10),
                   ("different - same", "fid", "", 300, "", -0.1, -0.2, -1e-9, 0.3, 0.35, 0.1, 0.6, 10),
                   ("different - same", "fid", "", 400, "", 0.5, 0.5, 0.9, 0.3, 0.35, 0.1, 0.6, 10),
                   ("different - same", "fid", "", 500, "", -0.5, -0.9, -0.5, 0.3, 0.35, 0.1, 0.6, 10),
                   ("approx - exact", "imd", "", 100, "same", 0.5, 0.5, 0.9, 0.3, 0.35, 0.1, 0.6, 10)])
    out = _separation(c, pd.DataFrame())
    assert [x.name for x in out] == [f"separation/fid/n={n}" for n in (100, 200, 300, 400, 500)]
    assert [x.verdict for x in out] == [NOT_TESTABLE, NOT_TESTABLE, CONTRADICTED, HOLDS, CONTRADICTED]


def test_diverges_takes_the_largest_n_of_three() -> None:
    """With three sizes, the claim's evidence and p-value are the largest n's (the last after sorting)."""
    from ganeval.studies.stability_claims import _diverges

    c = _cmp_rows([("approx - exact", "imd", "", 400, "same", 0.05, 0.01, 0.09, 0.04, 0.03, 0.04, 0.2, 10),
                   ("approx - exact", "imd", "", 100, "same", 0.01, -0.01, 0.03, 0.2, 0.02, 0.02, 0.1, 10),
                   ("approx - exact", "imd", "", 200, "same", 0.02, -0.01, 0.05, 0.1, 0.07, 0.03, 0.1, 10)])
    (same,) = _diverges(c, {"approx/diverges_further/same": {"holds": True, "detail": "d"}})
    assert same.p_value == 0.04 and same.detectable == "0.03"
    assert same.evidence == "approx − exact at n = 400: +0.05 ± 0.04"
    assert _diverges(c, {}) == []


def _decide_rows() -> pd.DataFrame:
    """FID separated at both n, KID separated at 100 and reversed at 400, IMD separated at 100 only."""
    rng = np.random.default_rng(1)
    shift = {("fid", ""): {100: 1.0, 400: 1.0}, ("kid", ""): {100: 1.0, 400: -1.0},
             ("imd", "exact"): {100: 1.0, 400: 0.0}}
    out = []
    for (m, k), sh in shift.items():
        for n in (100, 400):
            for r in range(8):
                noise = rng.normal(0, 0.01, 2)
                out.append({"run": r, "n": n, "pair": "same", "knn": k, "metric": m, "value": 10 / n + noise[0]})
                out.append({"run": r, "n": n, "pair": "different", "knn": k, "metric": m,
                            "value": 10 / n + sh[n] + noise[1]})
    return pd.DataFrame(out)


def test_decide_marks_follow_the_holm_decisions() -> None:
    """Each separation line: holds only where every n holds, False where one n is contradicted, else None; its
    per-n Holm p-values keyed by n; the ruled claims' marks follow their decisions (True/False/None)."""
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, holm_adjust
    from ganeval.studies import stability
    from ganeval.studies.stability_claims import decide

    rows = _decide_rows()
    s, c = stability.summarize(rows, 0.99), stability.compare(rows, 0.99)
    claims, decided = decide(s, c)
    by = {x["claim"]: x for x in claims}
    dec = {d.name: d for d in decided}
    assert by["separation/fid"]["holds"] is True
    assert by["separation/kid"]["holds"] is False
    assert by["separation/imd/exact"]["holds"] is None
    assert dec["separation/kid/n=400"].verdict == CONTRADICTED
    assert dec["separation/imd/exact/n=400"].verdict == NOT_TESTABLE
    assert [d.verdict for n, d in dec.items() if n.startswith("separation/fid/")] == [HOLDS, HOLDS]
    for line in ("separation/fid", "separation/kid", "separation/imd/exact"):
        assert by[line]["holm"] == {"100": dec[line + "/n=100"].p_holm, "400": dec[line + "/n=400"].p_holm}
    assert "at every n" in by["separation/fid"]["detail"]
    assert "except at n = 400 " in by["separation/kid"]["detail"]
    assert "except at n = 400 " in by["separation/imd/exact"]["detail"]
    assert by["separation/imd/exact"]["detail"].startswith("IMD (exact kNN):")
    assert by["separation/fid"]["detail"].startswith("FID:")
    # the separation lines' detail lists only their own line's sizes
    imd = c[(c.kind == "different - same") & (c.metric == "imd")]
    assert len(imd) == 2 and by["separation/imd/exact"]["detail"].count("n=") == 3  # 2 sizes + n=400's mde
    assert by["separation/fid"]["detail"].count("n=") == 2 and "undecided" not in by["separation/fid"]["detail"]
    assert by["separation/imd/exact"]["detail"].endswith("where undecided: n=400: " + dec[
        "separation/imd/exact/n=400"].detectable)
    # ruled claims: no Holm p-value, marks equal to the decided verdicts
    mark = {HOLDS: True, CONTRADICTED: False, NOT_TESTABLE: None}
    ruled = [d for d in decided if not d.name.startswith("separation/")]
    assert ruled and {d.verdict for d in ruled} >= {HOLDS, CONTRADICTED}
    for d in ruled:
        assert by[d.name]["holds"] is mark[d.verdict] and "holm" not in by[d.name], d.name
    assert by["interval/kid/different"]["holds"] is True and by["interval/fid/same"]["holds"] is False
    # the whole family's p-values are Holm's adjustment of every finite one
    raw = np.array([d.p_value for d in decided])
    fin = np.isfinite(raw)
    assert fin.sum() == 6
    np.testing.assert_allclose([d.p_holm for d in decided if math.isfinite(d.p_value)], holm_adjust(raw[fin]),
                               rtol=1e-12)
    assert [d.name for d in decided][:6] == ["separation/fid/n=100", "separation/fid/n=400",
                                             "separation/imd/exact/n=100", "separation/imd/exact/n=400",
                                             "separation/kid/n=100", "separation/kid/n=400"]


def test_decide_uses_the_summary_confidence_and_mde_at_holm_level() -> None:
    """Not-testable claims state the smallest detectable effect at the Holm level for the family of 6 tests."""
    from ganeval.results.intervals import paired_t_mde
    from ganeval.results.verdicts import holm_confidence
    from ganeval.studies import stability
    from ganeval.studies.stability_claims import decide

    rows = _decide_rows()
    s, c = stability.summarize(rows, 0.99), stability.compare(rows, 0.99)
    _, decided = decide(s, c)
    d = next(x for x in decided if x.name == "separation/imd/exact/n=400")
    r = c[(c.kind == "different - same") & (c.metric == "imd") & (c.n == 400)].iloc[0]
    want = paired_t_mde(float(r.diff_std), int(r.n_runs), holm_confidence(0.99, 6))
    assert d.detectable == f"{want:.2g}"
    assert d.detectable != f"{paired_t_mde(float(r.diff_std), int(r.n_runs), 0.99):.2g}"


def test_at_level_restates_mde_and_leaves_frames_without_it() -> None:
    from ganeval.results.intervals import paired_t_mde
    from ganeval.studies.stability_claims import at_level

    c = pd.DataFrame({"diff_std": [0.5, float("nan")], "n_runs": [10, 10], "mde": [9.0, 9.0]})
    out = at_level(c, 0.95)
    assert out.mde.iloc[0] == paired_t_mde(0.5, 10, 0.95) and math.isnan(out.mde.iloc[1])
    no = pd.DataFrame({"diff_std": [0.5], "n_runs": [10]})
    assert at_level(no, 0.95) is no
    empty = c.iloc[:0]
    assert at_level(empty, 0.95) is empty


# ---------------------------------------------------------------- results/summary.py


def test_summarize_runs_floors_by_metric_with_two_group_columns() -> None:
    """The floor is the metric's (the key's last part), also with two group columns before it."""
    from ganeval.results.intervals import t_interval
    from ganeval.results.summary import summarize_runs

    rows = pd.DataFrame({"model": ["a"] * 6, "seed": ["s"] * 3 + ["fid"] * 3, "run": [0, 1, 2] * 2,
                         "metric": ["fid"] * 3 + ["kid"] * 3, "value": [0.1, -0.1, 0.3, 0.0, 0.2, -0.3]})
    s = summarize_runs(rows, 0.9, 8)
    assert list(s.columns[:3]) == ["model", "seed", "metric"]
    fid, kid = t_interval(np.array([0.1, -0.1, 0.3]), 0.9), t_interval(np.array([0.0, 0.2, -0.3]), 0.9)
    assert fid["ci_low"] < 0 and s.loc[0, "ci_low"] == 0.0
    assert kid["ci_low"] < 0 and s.loc[1, "ci_low"] == kid["ci_low"]  # KID, though its seed column reads "fid"


# ---------------------------------------------------------------- results/outputs.py


def test_clear_outputs_leaves_a_foreign_folder_with_standard_names(tmp_path: Path) -> None:
    """A folder that is not ganeval's keeps even files named like ganeval's outputs."""
    from ganeval.results.outputs import clear_outputs

    (tmp_path / "runs.csv").write_text("x")
    (tmp_path / "summary.csv").write_text("y")
    assert clear_outputs(tmp_path) == []
    assert (tmp_path / "runs.csv").read_text() == "x" and (tmp_path / "summary.csv").read_text() == "y"


def test_clear_outputs_standard_names_without_a_manifest(tmp_path: Path) -> None:
    """A ganeval folder (runs.meta.json) without a manifest: the standard names go, other files and folders stay."""
    from ganeval.results.outputs import MANIFEST, clear_outputs

    d = tmp_path / "res"
    d.mkdir()
    for name in ("runs.meta.json", "runs.csv", "table.md", "notes.txt", "ganeval.log"):
        (d / name).write_text("{}")
    (d / "summary.csv").mkdir()
    assert clear_outputs(d) == ["runs.csv", "runs.meta.json", "table.md"]
    assert sorted(p.name for p in d.iterdir()) == ["ganeval.log", "notes.txt", "summary.csv"]
    assert not (d / MANIFEST).exists()
    assert clear_outputs(d) == []  # no longer ganeval's
