"""Rules of swept modules at the edges the earlier sweep left: the torus headline's reading of the paper's pattern
and of each seed pair, the slq level claim's range ends, the blur verdict's protocol line and the reduced-precision
certificate's two comparisons at exact equality."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest
import torch
from scipy.stats import t as student_t

from ganeval.metrics import knn_precision as kp
from ganeval.results.power import paired_t_mde
from ganeval.studies import slq_claims as S
from ganeval.studies.blur_verdict import verdict_text
from ganeval.studies.torus import headline

METRICS = ("fid", "kid", "imd")


def _seeds(cells: dict[tuple[int, str], tuple[tuple[float, float], tuple[float, float]]]) -> pd.DataFrame:
    """Per (seed, metric): the good and the bad GAN's (ci_low, ci_high); the mean is the interval's middle."""
    rows = []
    for (i, m), cis in cells.items():
        for model, (lo, hi) in zip(("good", "bad"), cis):
            rows.append({"model": model, "train_seed": i, "metric": m, "ci_low": lo, "ci_high": hi,
                         "mean": (lo + hi) / 2})
    return pd.DataFrame(rows)


def _v(fid: bool, kid: bool, imd: bool) -> pd.DataFrame:
    return pd.DataFrame([{"metric": m, "intervals_overlap": o, "good_mean": 1.0, "bad_mean": 2.0,
                          "paired_better": "good" if m == "imd" else ""} for m, o in zip(METRICS, (fid, kid, imd))])


COMPARISON = pd.DataFrame([{"metric": "fid", "diff_std": 0.3, "diff_mean": -0.05},
                           {"metric": "kid", "diff_std": 0.02, "diff_mean": 0.004},
                           {"metric": "imd", "diff_std": 1.0, "diff_mean": -2.0}])


def _summary(n_seeds: int, confidence: float = 0.9) -> pd.DataFrame:
    return pd.DataFrame([{"model": g, "metric": m, "confidence": confidence, "n_seeds": n_seeds}
                         for g in ("good", "bad") for m in METRICS])


def _two_seeds() -> pd.DataFrame:
    """Seed 0 shows the paper's pattern (FID's intervals touch at 2.0: overlapping, since separation is strict);
    seed 1 separates FID (bad below good) and touches KID the other way round."""
    return _seeds({
        (0, "fid"): ((1.0, 2.0), (2.0, 3.0)), (0, "kid"): ((0.0, 1.0), (0.5, 1.5)), (0, "imd"): ((1.0, 2.0), (3.0, 4.0)),
        (1, "fid"): ((5.0, 6.0), (1.0, 4.0)), (1, "kid"): ((2.0, 3.0), (1.0, 2.0)), (1, "imd"): ((1.0, 2.0), (1.5, 2.5)),
    })


def test_the_torus_headline_counts_separated_seed_pairs_with_strict_comparisons() -> None:
    lines = headline(_summary(2), _v(True, True, False), _two_seeds(), COMPARISON, "good", "bad", ["a", "b"], 0.95)
    assert lines[0] == ("**With the paper's kind of interval (one trained pair, 90% intervals over subsamples): "
                        "not reproduced.** FID separates the good from the bad GAN in 1 of 2 training-seed pairs, KID "
                        "in 0 of 2, IMD in 1 of 2; the paper's pattern (FID and KID overlap, IMD separate, bad higher) "
                        "appears in 1 of 2 pairs (training seed a).")
    tq = float(student_t.ppf(0.5 + 0.9 / 2, 1))
    assert lines[1] == ""
    assert lines[2] == (
        f"**Across the 2 training seeds (90% t interval, 1 degrees of freedom, t = {tq:.2f}): the paper's pattern "
        "appears** — FID's intervals overlap, KID's overlap, IMD's separate; but an overlap there is a test without "
        "power: the smallest good − bad difference the paired t across seeds could detect at the claims' Holm level "
        f"0.05 is {paired_t_mde(0.3, 2, 0.95):.3g} for FID (measured 0.05) and {paired_t_mde(0.02, 2, 0.95):.3g} for "
        "KID (measured 0.004), and the overlap comes from the spread between training runs (see the per-seed lines), "
        "not from FID or KID missing the difference in a trained pair.")
    assert len(lines) == 3


@pytest.mark.parametrize("fid, kid, imd, appears", [
    (True, True, False, True), (True, False, False, False), (False, True, False, False), (True, True, True, False),
    (False, False, True, False),
])
def test_the_torus_headline_needs_fid_and_kid_overlapping_and_imd_separate(fid: bool, kid: bool, imd: bool,
                                                                          appears: bool) -> None:
    text = headline(_summary(2), _v(fid, kid, imd), _two_seeds(), COMPARISON, "good", "bad", [0, 1])[2]
    assert ("the paper's pattern appears**" in text) is appears
    assert ("the paper's pattern does not appear**" in text) is not appears
    word = {True: "overlap", False: "separate"}
    assert f"FID's intervals {word[fid]}, KID's {word[kid]}, IMD's {word[imd]}" in text
    assert ("Holm level 0.1 is" in text) is appears  # without power_confidence: the confidence itself


def test_the_torus_headline_with_one_seed_reads_the_paper_rule() -> None:
    v = _v(True, True, False)
    one = _summary(1)
    for seeds in (None, _two_seeds(), _two_seeds().drop(columns="train_seed")):
        lines = headline(one if seeds is not None else one.drop(columns="n_seeds"), v, seeds, COMPARISON, "good",
                         "bad", [0])
        assert lines == ["**By the paper's rule (overlapping 90% intervals over subsamples): reproduced** — FID's "
                         "intervals overlap, KID's intervals overlap, IMD's intervals do not overlap."]
    v.loc[2, "bad_mean"] = 1.0  # IMD equal for both: not higher for the bad GAN
    assert headline(one, v, None, COMPARISON, "good", "bad", [0]) == [
        "**By the paper's rule (overlapping 90% intervals over subsamples): not reproduced** — FID's intervals "
        "overlap, KID's intervals overlap, IMD's intervals do not overlap, IMD is not higher for bad."]


def _level_frame(lo: float, hi: float, plo: float, phi: float, lo1: float = 1e-4, hi1: float = 2e-4) -> pd.DataFrame:
    rows = []
    for t, (a, b), (c, d) in ((0.1, (lo, hi), (plo, phi)), (1.0, (lo1, hi1), (lo1, hi1))):
        rows.append({"figure": "m", "quantity": "rms_error", "t": t, "m": 7, "nv": 100, "value": (a + b) / 2,
                     "ci_low": a, "ci_high": b})
        rows.append({"figure": "m", "quantity": "rms_error_plain", "t": t, "m": 7, "nv": 100, "value": (c + d) / 2,
                     "ci_low": c, "ci_high": d})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("lo, hi, want", [
    (10 ** -3.5, 10 ** -2.5, True), (2.5e-4, 1e-3, None), (1e-4, 3e-4, False), (1e-3, 10 ** -2.5 * 1.01, None),
    (4e-3, 5e-3, False), (3.2e-4, 3.1e-3, True),
])
def test_the_level_claim_at_t_0_1_is_the_range_10_to_the_minus_3_5_to_minus_2_5(lo: float, hi: float,
                                                                                 want: bool | None) -> None:
    out = S._level_claims(_level_frame(lo, hi, lo, hi), SimpleNamespace(m=7, nv=100), [0.1, 1.0])
    assert [c["claim"] for c in out] == ["error_1e-3_at_nv100", "error_around_1e-3_at_t0.1"]
    around = out[1]
    assert around["per_t"][0][:2] == (0.1, want) and around["holds"] is want
    within = "within" if want is True else "outside"
    assert around["per_t"][0][2].endswith(f"{within} that range")
    assert "at t = 0.1 (m = 7, nv = 100)" in around["criterion"]


@pytest.mark.parametrize("hi, hi1, want", [
    (10 ** -2.5, 1e-3, True), (10 ** -2.5 * 1.001, 1e-3, None), (1e-3, 10 ** -2.5, True), (1e-3, 4e-3, None),
])
def test_the_level_claim_at_nv_100_is_at_or_below_10_to_the_minus_2_5(hi: float, hi1: float,
                                                                       want: bool | None) -> None:
    out = S._level_claims(_level_frame(1e-4, hi, 1e-4, hi, 1e-4, hi1), SimpleNamespace(m=7, nv=100), [0.1, 1.0])
    assert out[0]["holds"] is want
    above = S._level_claims(_level_frame(4e-3, 5e-3, 1e-4, 2e-4), SimpleNamespace(m=7, nv=100), [0.1, 1.0])
    assert above[0]["holds"] is False and above[0]["per_t"][0][1] is False


def test_the_level_claim_takes_the_temperature_nearest_0_1_on_a_log_scale() -> None:
    df = _level_frame(1e-3, 2e-3, 1e-3, 2e-3)
    df.loc[df.t == 1.0, "t"] = 0.02  # log distance 1.61 from 0.1: 0.3 (1.10) is nearer, though 0.02 is nearer in value
    extra = df[df.t == 0.02].assign(t=0.3, ci_low=5e-3, ci_high=6e-3, value=5.5e-3)
    out = S._level_claims(pd.concat([df, extra]), SimpleNamespace(m=7, nv=100), [0.02, 0.3])
    assert out[1]["per_t"][0][0] == 0.3 and out[1]["holds"] is False


def test_a_one_row_blur_summary_states_its_protocol() -> None:
    summary = pd.DataFrame([{"role": "blur", "sigma": 1.0, "metric": "imd", "n_runs": 7, "sample_size": 500,
                             "confidence": 0.95, "mean": 1.0}])
    text = verdict_text(summary, None, "digits", "faces", "digits")
    assert "Protocol: 7 runs of 500 vs 500, 95% Student-t intervals." in text
    assert "No similar dataset was given (`second=null`)" in text


def _line(monkeypatch: pytest.MonkeyPatch, coarse_err: float, tol: float) -> float:
    """Row 0 of 21 1-d integer points (0; 1, 1, 1; 3; 8; fourteen at 10; 14; mean 8, so every product is exact in
    bfloat16 and float32): k = 3, the k-th distance² is 1, the next 9; the coarse search keeps k + 16 = 19 of the
    20 others, so its horizon is the 19th distance², 100 (not the farthest, 196)."""
    x = torch.tensor([0.0, 1, 1, 1, 3, 8] + [10.0] * 14 + [14.0])[:, None]
    assert x.shape[0] == 21 and float(x.mean()) == 8.0

    def error(_x: torch.Tensor, sq: torch.Tensor, precision: str) -> torch.Tensor:
        return torch.full((sq.shape[0],), coarse_err if precision == "bfloat16" else tol, dtype=torch.float64)

    monkeypatch.setattr(kp, "distance_error", error)
    monkeypatch.setattr(kp, "centring_error", lambda sq_c: torch.zeros_like(sq_c, dtype=torch.float64))
    return kp.undecided_share(x, 3, "bfloat16", rows=1)


@pytest.mark.parametrize("coarse_err, tol, undecided", [
    (0.0, 3.5, 0.0), (0.0, 4.0, 1.0),  # gap to the next distance (8) must exceed twice the float32 bound strictly
    (97.0, 1.0, 0.0), (98.0, 1.0, 1.0),  # k-th distance + bound (2) must lie strictly inside 100 − coarse bound
])
def test_the_certificate_decides_a_row_only_strictly_inside_both_margins(monkeypatch: pytest.MonkeyPatch,
                                                                        coarse_err: float, tol: float,
                                                                        undecided: float) -> None:
    assert _line(monkeypatch, coarse_err, tol) == undecided
    assert not math.isnan(undecided)
