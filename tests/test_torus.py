"""The torus experiment's verdict at reduced size, on the default models' samples (tests/data/torus_pools.npz).

Training the default good and bad GANs (3 training seeds each) takes minutes on 2 cores, so the test scores the
samples those models generated in the reference run (scripts/torus_test_pools.py: the first 2000 rows of each
pool) with fewer runs, through the experiment itself (given generators with one replica per training seed).
The verdict it pins is the one the full reference run gave (results/reference/torus/verdict.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from apphelp import run_inprocess
from ganeval.studies.torus import PAPER, claim, paper_table, verdict

POOLS = Path(__file__).parent / "data" / "torus_pools.npz"


def _given(name: str, seeds: int) -> str:
    replicas = ",".join(f"{{key: {name}{i}}}" for i in range(seeds))
    return f"{{_target_: ganeval.gan.SampleGenerator, path: '{POOLS}', replicas: [{replicas}]}}"


def test_claim_reads_overlaps_and_paired_differences() -> None:
    v = pd.DataFrame([
        {"metric": "fid", "good_mean": 1.0, "bad_mean": 1.1, "intervals_overlap": True, "paired_better": "",
         "paired_p_value": 0.5},
        {"metric": "kid", "good_mean": 1.0, "bad_mean": 1.1, "intervals_overlap": True, "paired_better": "good",
         "paired_p_value": 0.001},
        {"metric": "imd", "good_mean": 9.0, "bad_mean": 14.0, "intervals_overlap": False, "paired_better": "good",
         "paired_p_value": 0.001},
    ])
    assert claim(v, "good", "bad") == {"paper": True, "strict": False}  # KID's paired difference is significant
    v.loc[2, ["good_mean", "bad_mean"]] = [14.0, 9.0]  # IMD separates the wrong way round: not the paper's claim
    assert claim(v, "good", "bad")["paper"] is False


def test_paper_table_sits_beside_the_papers_numbers() -> None:
    rows = [{"model": m, "metric": k, "mean": PAPER[k][m][0], "half_width": PAPER[k][m][1], "n_runs": 100,
             "n_seeds": 1, "sample_size": 1000, "confidence": 0.99,
             "ci_low": PAPER[k][m][0] - PAPER[k][m][1], "ci_high": PAPER[k][m][0] + PAPER[k][m][1]}
            for m in ("good", "bad") for k in ("fid", "kid", "imd")]
    summary = pd.DataFrame(rows)
    comparison = pd.DataFrame([{"metric": k, "better": "good" if k == "imd" else "", "p_value": 0.01}
                               for k in ("fid", "kid", "imd")])
    v = verdict(summary, comparison, "good", "bad")
    assert list(v.intervals_overlap) == [True, True, False]  # the paper's own table: FID, KID overlap, IMD does not
    table = paper_table(summary, v, "good", "bad")
    assert "| FID | 0.00529 ± 0.00070 | 0.00627 ± 0.00076 | yes | 0.00529 ± 0.00070 | 0.00627 ± 0.00076 | yes |" in table
    assert "| IMD | 9.0 ± 1.5 | 14.1 ± 2.2 | no | 9.0 ± 1.5 | 14.1 ± 2.2 | no |" in table


@pytest.mark.slow
def test_default_models_verdict_at_reduced_size(tmp_path: Path) -> None:
    with np.load(POOLS) as z:
        keys = sorted(z.files)
    seeds = sum(k.startswith("good") for k in keys)
    assert seeds >= 3 and keys == sorted([f"good{i}" for i in range(seeds)] + [f"bad{i}" for i in range(seeds)])
    over = ["experiment=torus", "~generators", f"+generators={{good: {_given('good', seeds)}, "
            f"bad: {_given('bad', seeds)}}}", "runs=5", "n_generated=2000", "progress=false",
            f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}", f"models_dir={tmp_path / 'models'}"]
    s = run_inprocess(over)
    res = tmp_path / "res"
    assert set(s.n_seeds) == {seeds} and set(s.n_runs) == {5}
    v = pd.read_csv(res / "verdict.csv", keep_default_na=False).set_index("metric")
    rec = json.loads((res / "summary.json").read_text())
    # the pinned verdict (results/reference/torus/verdict.md): the paper's claim holds across training seeds ...
    assert list(v.loc[["fid", "kid", "imd"], "intervals_overlap"]) == [True, True, False]
    assert claim(v.reset_index(), "good", "bad") == {"paper": True, "strict": True}
    assert rec["hole_fraction"]["real"] == 0.0 and rec["hole_fraction"]["bad"] > rec["hole_fraction"]["good"]
    text = (res / "verdict.md").read_text()
    # (issue #26: the headline says what each kind of interval reproduces, in the common verdict vocabulary)
    assert "**Across the 3 training seeds" in text and "the paper's pattern appears** — FID's intervals overlap" in text
    assert "**With the paper's kind of interval" in text and "not reproduced.**" in text
    # at 5 runs per seed Holm's correction leaves IMD's across-seed p-value (~0.006) short of 0.01: "not testable
    # here"; per trained pair IMD separates (p ~0.0004: with the Chebyshev control variate its probes no longer
    # widen the runs' spread; with the paper's estimator this read "not testable here" too)
    # (issue #46: the across-seed claims were read on data a search selected for IMD separating: the label says so)
    assert "| IMD separates (across 3 training seeds) | **not testable here on selected data (chosen by" in text
    assert "| IMD separates (per trained pair) | **holds** |" in text
    assert text.count("| **not testable here") == 5 and "Holm" in text
    # ... while every seed pair is told apart by FID, with subsample intervals alone; KID orders every pair (its
    # 5-run intervals of seed 1 overlap: 0.00481 vs 0.00458; IMD's are too wide to pin; at 20 runs they separate)
    seeds_ = pd.read_csv(res / "summary_seeds.csv").set_index(["model", "train_seed", "metric"])
    for i in range(seeds):
        assert seeds_.loc[("good", i, "fid"), "ci_high"] < seeds_.loc[("bad", i, "fid"), "ci_low"], i
        assert seeds_.loc[("good", i, "kid"), "mean"] < seeds_.loc[("bad", i, "kid"), "mean"], i
    assert "FID separate the two models at every training seed" in text
    table = (res / "table.md").read_text()
    assert "| IMD |" in table and "| 9.0 ± 1.5 | 14.1 ± 2.2 | no |" in table
