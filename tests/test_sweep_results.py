"""A sweep of ganeval.results (power, tables, intervals, thresholds, verdicts, seeds) and app.score_request: argument
checks at their edges, defaults called without the argument, thresholds hit exactly, and exact values against scipy,
float64 numpy or hand-counted examples."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq

import pandas as pd

if TYPE_CHECKING:
    from ganeval.app.score_inputs import InputSet

# ---------------------------------------------------------------------------------------------------------------
# ganeval.results.power — ground truth from scipy.stats directly (lower tail by nct.cdf, not the module's sf route)


def sp_power(effect: float, n: int, alpha: float) -> float:
    """P(T > c) + P(T < −c), T ~ nct(n − 1, |effect|·√n), c the two-sided t critical value (scipy directly)."""
    crit = stats.t.ppf(1 - alpha / 2, n - 1)
    nc = abs(effect) * math.sqrt(n)
    lower = float(stats.nct.cdf(-crit, n - 1, nc))
    return float(stats.nct.sf(crit, n - 1, nc)) + (lower if math.isfinite(lower) else 0.0)  # NaN: far, ~0


def sp_mde_effect(n: int, alpha: float, power: float) -> float:
    hi = 0.125
    while sp_power(hi, n, alpha) < power:
        hi *= 1.5
    return float(brentq(lambda e: sp_power(e, n, alpha) - power, 1e-9, hi, xtol=1e-14, rtol=1e-14))


def scan_n(effect: float, alpha: float, power: float) -> int:
    """The fewest pairs (≥ 2) with that power, by a plain linear scan."""
    n = 2
    while sp_power(effect, n, alpha) < power:
        n += 1
    return n


@pytest.mark.parametrize("effect, n, alpha", [(0.7, 2, 0.05), (1.3, 3, 0.01), (-0.4, 12, 0.1), (0.25, 40, 0.3)])
def test_power_equals_scipys_noncentral_t(effect: float, n: int, alpha: float) -> None:
    from ganeval.results.power import paired_t_power

    assert paired_t_power(effect, n, alpha) == pytest.approx(sp_power(effect, n, alpha), rel=1e-10, abs=1e-14)
    assert paired_t_power(-effect, n, alpha) == paired_t_power(effect, n, alpha)


def test_power_argument_edges() -> None:
    from ganeval.results.power import paired_t_power

    assert paired_t_power(0.0, 2, 0.05) == pytest.approx(0.05, rel=1e-9)  # two pairs: the fewest legal
    with pytest.raises(ValueError, match="at least 2 pairs"):
        paired_t_power(1.0, 1, 0.05)
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="alpha must lie in"):
            paired_t_power(1.0, 5, bad)
    assert paired_t_power(0.0, 5, 0.999) == pytest.approx(0.999, rel=1e-9)
    with pytest.raises(ValueError, match="not finite"):
        paired_t_power(float("nan"), 5, 0.05)
    assert paired_t_power(60.0, 5, 0.01) == 1.0


@pytest.mark.parametrize("n, alpha, power", [(2, 0.05, 0.8), (5, 0.01, 0.9), (30, 0.05, 0.8), (60, 0.2, 0.5)])
def test_mde_effect_has_exactly_the_power(n: int, alpha: float, power: float) -> None:
    from ganeval.results.power import paired_t_mde_effect

    e = paired_t_mde_effect(n, alpha, power)
    assert e == pytest.approx(sp_mde_effect(n, alpha, power), rel=1e-9)
    assert sp_power(e, n, alpha) == pytest.approx(power, abs=1e-9)


def test_mde_effect_default_power_and_edges() -> None:
    from ganeval.results.power import paired_t_mde_effect

    assert paired_t_mde_effect(30, 0.05) == pytest.approx(sp_mde_effect(30, 0.05, 0.8), rel=1e-9)  # below 1
    assert paired_t_mde_effect(4, 0.01) == pytest.approx(sp_mde_effect(4, 0.01, 0.8), rel=1e-9)  # above 1
    assert math.isnan(paired_t_mde_effect(1, 0.05)) and math.isfinite(paired_t_mde_effect(2, 0.05))
    for bad in (0.05, 0.01, 1.0, 1.2):
        with pytest.raises(ValueError, match="power must lie in"):
            paired_t_mde_effect(5, 0.05, bad)
    assert paired_t_mde_effect(5, 0.05, 0.0501) > 0


def test_paired_t_mde_defaults_and_edges() -> None:
    from ganeval.results.power import paired_t_mde

    assert paired_t_mde(2.5, 6) == pytest.approx(2.5 * sp_mde_effect(6, 0.01, 0.8), rel=1e-9)  # 99 %, 80 %
    assert paired_t_mde(0.5, 20, 0.9, 0.6) == pytest.approx(0.5 * sp_mde_effect(20, 0.1, 0.6), rel=1e-9)
    assert paired_t_mde(3.0, 2, 0.95) == pytest.approx(3.0 * sp_mde_effect(2, 0.05, 0.8), rel=1e-9)
    assert math.isnan(paired_t_mde(1.0, 1)) and math.isnan(paired_t_mde(math.inf, 5))
    assert math.isnan(paired_t_mde(math.nan, 5))
    for bad in (0.0, 1.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="confidence must lie strictly"):
            paired_t_mde(1.0, 5, bad)


def test_one_sided_mde() -> None:
    from ganeval.results.power import one_sided_mde

    assert one_sided_mde(2.0, 8, 0.05) == pytest.approx(2.0 * sp_mde_effect(8, 0.1, 0.8), rel=1e-9)
    assert one_sided_mde(1.0, 5, 0.3, 0.9) == pytest.approx(sp_mde_effect(5, 0.6, 0.9), rel=1e-9)
    for bad in (0.5, 0.6, 0.0):
        with pytest.raises(ValueError, match="alpha must lie in"):
            one_sided_mde(1.0, 5, bad)


@pytest.mark.parametrize("mean, std, confidence, power", [(1.0, 1.0, 0.95, 0.8), (0.5, 0.5, 0.99, 0.8),
                                                          (-0.3, 0.4, 0.9, 0.7), (3.0, 1.0, 0.99, 0.95),
                                                          (0.4, 2.0, 0.8, 0.5), (20.0, 1.0, 0.95, 0.8)])
def test_pairs_needed_is_the_linear_scans_count(mean: float, std: float, confidence: float, power: float) -> None:
    from ganeval.results.power import pairs_needed

    assert pairs_needed(mean, std, confidence, power) == scan_n(abs(mean) / std, 1 - confidence, power)


def test_pairs_needed_defaults_and_edges() -> None:
    from ganeval.results.power import pairs_needed

    assert pairs_needed(1.0, 1.0, 0.95) == scan_n(1.0, 0.05, 0.8)
    assert pairs_needed(0.5, 0.0, 0.99) == 2 and pairs_needed(0.5, -1.0, 0.99) == 2  # no spread: two pairs
    assert pairs_needed(0.0, 1.0, 0.99) is None
    assert pairs_needed(math.inf, 1.0, 0.99) is None and pairs_needed(1.0, math.nan, 0.99) is None
    for conf, pw in ((0.0, 0.8), (1.0, 0.8), (0.9, 0.0), (0.9, 1.0), (1.0, 1.0)):
        with pytest.raises(ValueError, match="confidence and power must lie"):
            pairs_needed(1.0, 1.0, conf, pw)
    assert pairs_needed(1.0, 1.0, 0.5, 0.5) == scan_n(1.0, 0.5, 0.5)


def test_pairs_needed_stops_at_most_pairs() -> None:
    """An effect that 100 001 pairs detect with 80 % power but 100 000 do not: None (beyond MOST)."""
    from ganeval.results.power import pairs_needed

    MOST, alpha = 100_000, 0.05  # the documented bound (not the module's constant, so a changed one shows)
    e = float(brentq(lambda x: sp_power(x, MOST + 1, alpha) - 0.8, 1e-4, 0.1, xtol=1e-17, rtol=1e-15)) * (1 + 1e-9)
    assert sp_power(e, MOST + 1, alpha) >= 0.8 > sp_power(e, MOST, alpha)
    assert pairs_needed(e, 1.0, 1 - alpha) is None
    e2 = e * 1.01  # a bit larger: a count below MOST, still exact
    n2 = pairs_needed(e2, 1.0, 1 - alpha)
    assert n2 is not None and sp_power(e2, n2, alpha) >= 0.8 > sp_power(e2, n2 - 1, alpha)


def sf_below(tobs: float, df: int, lam: float) -> float:
    return 1.0 - float(stats.nct.sf(tobs, df, lam))


@pytest.mark.parametrize("mean, std, n, confidence", [(4.0, 2.0, 3, 0.99), (0.05, 1.0, 4, 0.99), (-3.0, 1.0, 2, 0.99),
                                                      (0.6, 1.1, 30, 0.9), (-0.2, 0.5, 5, 0.95), (1.0, 1.0, 2, 0.5),
                                                      (-8.0, 1.0, 5, 0.9), (-8.0, 1.0, 3, 0.9999)])
def test_effect_size_interval_ends_solve_their_tails(mean: float, std: float, n: int, confidence: float) -> None:
    from ganeval.results.power import effect_size_interval

    lo, hi = effect_size_interval(mean, std, n, confidence)
    tobs, tail = mean / std * math.sqrt(n), (1 - confidence) / 2
    assert lo < mean / std < hi
    assert sf_below(tobs, n - 1, lo * math.sqrt(n)) == pytest.approx(1 - tail, abs=1e-8)
    assert sf_below(tobs, n - 1, hi * math.sqrt(n)) == pytest.approx(tail, abs=1e-8)
    mlo, mhi = effect_size_interval(-mean, std, n, confidence)
    assert (mlo, mhi) == pytest.approx((-hi, -lo), abs=1e-7)


def test_effect_size_interval_edges() -> None:
    from ganeval.results.power import effect_size_interval

    for args in ((1.0, 1.0, 1), (1.0, 0.0, 5), (1.0, -1.0, 5), (math.nan, 1.0, 5), (1.0, math.inf, 5),
                 (math.inf, 1.0, 5), (1.0, 0.0, 1)):
        lo, hi = effect_size_interval(*args, 0.95)
        assert math.isnan(lo) and math.isnan(hi), args
    lo, hi = effect_size_interval(1.0, 0.5, 2, 0.95)  # two pairs, std below 1: finite
    assert math.isfinite(lo) and math.isfinite(hi)


def test_pairs_needed_range_defaults_and_levels() -> None:
    from ganeval.results.power import effect_size_interval, pairs_needed_range

    mean, std, n = 0.6, 1.0, 40
    lo, hi = effect_size_interval(mean, std, n, 0.95)
    assert 0 < lo < hi < 1  # both ends positive, their product below 1
    assert pairs_needed_range(mean, std, n, 0.95) == (scan_n(0.6, 0.05, 0.8), scan_n(hi, 0.05, 0.8),
                                                      scan_n(lo, 0.05, 0.8))
    # a family of 4 tests: the Holm level 0.05/4, power 0.9
    assert pairs_needed_range(mean, std, n, 0.95, 0.9, 4) == (scan_n(0.6, 0.0125, 0.9), scan_n(hi, 0.0125, 0.9),
                                                              scan_n(lo, 0.0125, 0.9))
    assert pairs_needed_range(mean, std, n, 0.95, tests=1) == pairs_needed_range(mean, std, n, 0.95)
    with pytest.raises(ValueError, match="tests must be at least 1"):
        pairs_needed_range(mean, std, n, 0.95, tests=0)


def test_pairs_needed_range_across_zero_and_undefined() -> None:
    from ganeval.results.power import effect_size_interval, pairs_needed_range

    lo, hi = effect_size_interval(-0.5, 1.0, 4, 0.9)
    assert lo < 0 < hi and abs(lo) > abs(hi)
    assert pairs_needed_range(-0.5, 1.0, 4, 0.9) == (scan_n(0.5, 0.1, 0.8), scan_n(abs(lo), 0.1, 0.8), None)
    # below the level's own power every count would do, yet an end across zero is still unbounded
    assert pairs_needed_range(-0.5, 1.0, 4, 0.9, power=0.05) == (2, 2, None)
    assert pairs_needed_range(1.0, 1.0, 1, 0.9) == (scan_n(1.0, 0.1, 0.8), None, None)  # one pair: no interval


def test_needed_text_every_form() -> None:
    from ganeval.results.power import needed_text

    assert needed_text(None, 3, 4) == "" and needed_text(None, None, None) == ""
    assert needed_text(7, None, None) == "about 7"
    assert needed_text(7, 4, None) == "about 7 (4 to unbounded)"
    assert needed_text(7, None, 9) == "about 7 (unbounded to 9)"
    assert needed_text(5, 100, 101) == "about 5 (100 to more than 100)"
    assert needed_text(150, 3, 100) == "about 150 (3 to 100)"


# ---------------------------------------------------------------------------------------------------------------
# ganeval.results.tables — a hand-made summary (4 columns over 2 datasets, one metric missing in one cell) and its
# comparison, rendered in full; each cell checked by hand: decimals_for(0.0456) = 3, KID×10³ 0.56 → 2 decimals, ...


def tbl_summary() -> "pd.DataFrame":
    import pandas as pd

    cells = {("mnist", "a"): {"imd": (1.2345, 0.0456), "kid": (0.01234, 0.00056), "fid": (30.5, 2.51),
                              "precision": (0.75, 0.012)},
             ("mnist", "b"): {"imd": (2.5, 0.31), "kid": (0.0201, 0.0011), "fid": (41.25, 0.125),
                              "precision": (0.5, 0.03)},
             ("mnist", "c"): {"imd": (2.0, 0.2), "kid": (0.015, 0.002), "fid": (35.0, 1.5)},
             ("cifar", "a"): {"imd": (3.0, 0.2), "kid": (0.05, 0.003), "fid": (60.0, 5.5), "precision": (0.6, 0.05)}}
    rows = [dict(data=d, model=m, metric=k, mean=v, std=h, ci_low=v - h, ci_high=v + h, half_width=h, n_runs=5,
                 sample_size=500, confidence=0.99) for (d, m), mm in cells.items() for k, (v, h) in mm.items()]
    return pd.DataFrame(rows)


def tbl_comparison() -> "pd.DataFrame":
    """mnist's pairs: a beats b and c on IMD and FID; on KID a vs c is undecided (so a is not bold there)."""
    import pandas as pd

    win = {("imd", "a", "b"): "a", ("imd", "a", "c"): "a", ("imd", "b", "c"): "c", ("kid", "a", "b"): "a",
           ("kid", "a", "c"): "", ("kid", "b", "c"): "c", ("fid", "a", "b"): "a", ("fid", "a", "c"): "a",
           ("fid", "b", "c"): "c", ("precision", "a", "b"): "a"}
    rows = [dict(data="mnist", metric=k, a=a, b=b, diff_mean=-0.5, diff_std=0.25, ci_low=-0.75, ci_high=-0.25,
                 half_width=0.25, p_value=0.001, mde=0.4, n_runs=5, better=w, confidence=0.99)
            for (k, a, b), w in win.items()]
    return pd.DataFrame(rows)


TABLE_MD = """\
### GAN table

| metric | mnist / a | mnist / b | mnist / c | cifar / a |
|---|---|---|---|---|
| IMD | **1.234 ± 0.046** | 2.50 ± 0.31 | 2.00 ± 0.20 | 3.00 ± 0.20 |
| KID×10³ | 12.34 ± 0.56 | 20.1 ± 1.1 | 15.0 ± 2.0 | 50.0 ± 3.0 |
| FID | **30.5 ± 2.5** | 41.25 ± 0.12 | 35.0 ± 1.5 | 60.0 ± 5.5 |
| Precision | 0.750 ± 0.012 | 0.500 ± 0.030 | – | 0.600 ± 0.050 |

Columns: data / model. Mean ± half-width of the 99% Student-t interval over 5 runs of 500 samples per set. Higher \
is better for Precision, lower for IMD, KID×10³, FID; bold: significantly best at 99%: the interval of every paired \
difference (by run) with the other models of its dataset excludes 0 (the differences and their intervals: \
comparison.csv).

Paired differences a − b, 99% interval; *smallest detectable*: the true difference a paired t at the Holm level of \
the 10 comparisons (0.01/10; comparison.csv: mde_holm, where mde is at 99% for one comparison alone) finds with 80 % \
power, from the measured spread of the differences over the runs paired:

- mnist, IMD: a − b = -0.5 \\[-0.75, -0.25\\], smallest detectable 1.19 (5 runs): a better
- mnist, IMD: a − c = -0.5 \\[-0.75, -0.25\\], smallest detectable 1.19 (5 runs): a better
- mnist, IMD: b − c = -0.5 \\[-0.75, -0.25\\], smallest detectable 1.19 (5 runs): c better
- mnist, KID×10³: a − b = -500 \\[-750, -250\\], smallest detectable 1.19e+03 (5 runs): a better
- mnist, KID×10³: a − c = -500 \\[-750, -250\\], smallest detectable 1.19e+03 (5 runs): undecided
- mnist, KID×10³: b − c = -500 \\[-750, -250\\], smallest detectable 1.19e+03 (5 runs): c better
- mnist, FID: a − b = -0.5 \\[-0.75, -0.25\\], smallest detectable 1.19 (5 runs): a better
- mnist, FID: a − c = -0.5 \\[-0.75, -0.25\\], smallest detectable 1.19 (5 runs): a better
- mnist, FID: b − c = -0.5 \\[-0.75, -0.25\\], smallest detectable 1.19 (5 runs): c better
- mnist, Precision: a − b = -0.5 \\[-0.75, -0.25\\], smallest detectable 1.19 (5 runs): a better

Each interval is a Student-t confidence interval of the mean over runs; it covers the variation over random \
subsamples of the real and generated pools and over IMD's random probes, not the variation over training seeds or \
over the pools themselves.
"""

TABLE_TEX = r"""% needs \usepackage{booktabs} (\toprule, \midrule, \cmidrule, \bottomrule)
\begin{table}[t]
\centering
\small
\caption{Mean $\pm$ half-width of the 99\% Student-t interval over 5 runs of 500 samples per set.}
\begin{tabular}{lcccc}
\toprule
 & \multicolumn{3}{c}{\textbf{mnist}} & \multicolumn{1}{c}{\textbf{cifar}} \\
\cmidrule(lr){2-4}\cmidrule(lr){5-5}
\textbf{Metric} & a & b & c & a \\
\midrule
IMD & $\mathbf{1.234} \pm 0.046$ & $2.50 \pm 0.31$ & $2.00 \pm 0.20$ & $3.00 \pm 0.20$ \\
KID $\times 10^3$ & $12.34 \pm 0.56$ & $20.1 \pm 1.1$ & $15.0 \pm 2.0$ & $50.0 \pm 3.0$ \\
FID & $\mathbf{30.5} \pm 2.5$ & $41.25 \pm 0.12$ & $35.0 \pm 1.5$ & $60.0 \pm 5.5$ \\
Precision & $0.750 \pm 0.012$ & $0.500 \pm 0.030$ & -- & $0.600 \pm 0.050$ \\
\bottomrule
\end{tabular}
\end{table}
"""


def test_table_markdown_whole_text() -> None:
    from ganeval.results.tables import table_markdown

    md = table_markdown(tbl_summary(), tbl_comparison(), title="GAN table")
    assert md == TABLE_MD
    # the smallest detectable difference: the paired t at the Holm level 0.01/10 over 5 pairs, std 0.25 (scipy)
    assert f"{0.25 * sp_mde_effect(5, 0.001, 0.8):.3g}" == "1.19"
    assert table_markdown(tbl_summary(), tbl_comparison()) == TABLE_MD.split("\n", 2)[2]  # no title: no heading


def test_table_latex_whole_text() -> None:
    from ganeval.results.tables import table_latex

    assert table_latex(tbl_summary(), tbl_comparison()) == TABLE_TEX
    assert table_latex(tbl_summary(), tbl_comparison(), caption="GAN table.").split("\n")[4] == (
        r"\caption{GAN table. Mean $\pm$ half-width of the 99\% Student-t interval over 5 runs of 500 samples per "
        r"set.}")


def test_tables_of_one_group_level() -> None:
    """One group column: no multicolumn row, the column's values as the header."""
    from ganeval.results.tables import table_latex

    s = tbl_summary()
    one = s[s.data == "mnist"].drop(columns="data")
    tex = table_latex(one).splitlines()
    assert tex[6:10] == [r"\toprule", r"\textbf{Metric} & a & b & c \\", r"\midrule",
                         r"IMD & $1.234 \pm 0.046$ & $2.50 \pm 0.31$ & $2.00 \pm 0.20$ \\"]
    only = s[(s.data == "cifar") & (s.metric == "fid")].drop(columns="data")  # one group, one row
    assert table_latex(only).splitlines()[7:10] == [r"\textbf{Metric} & a \\", r"\midrule", r"FID & $60.0 \pm 5.5$ \\"]


def test_a_table_without_group_columns() -> None:
    from ganeval.results.tables import paper_table, table_latex, table_markdown

    s = tbl_summary()
    single = s[(s.data == "cifar")].drop(columns=["data", "model"])
    t = paper_table(single)
    assert t.columns_note.startswith("Columns: value. Mean ± half-width")
    assert t.rows[0] == [("IMD", False), ("3.00 ± 0.20", False)] and len(t.header) == 2
    assert table_markdown(single).splitlines()[2] == "| IMD | 3.00 ± 0.20 |"
    assert table_latex(single).splitlines()[9] == r"IMD & $3.00 \pm 0.20$ \\"


def test_a_table_without_group_columns_names_its_column_value() -> None:
    """Bug (found by this sweep): pandas keys the one column of a summary without groups `((),)`, which the headers
    printed as "()"."""
    from ganeval.results.tables import paper_table, table_latex, table_markdown

    s = tbl_summary()
    single = s[(s.data == "cifar")].drop(columns=["data", "model"])
    assert paper_table(single).header == ["metric", "value"]
    assert table_markdown(single).splitlines()[0] == "| metric | value |"
    assert table_latex(single).splitlines()[7] == r"\textbf{Metric} & value \\"


def test_a_columns_header_keeps_falsy_group_values() -> None:
    from ganeval.results.tables import group_label

    assert group_label((0, "a")) == "0 / a" and group_label((0.0,)) == "0" and group_label(("", "b")) == " / b"
    assert group_label(((),)) == "value" and group_label(()) == "value" and group_label((False,)) == "False"


def no_interval_summary() -> "pd.DataFrame":
    """One value per cell (the full sets: one run, no interval)."""
    s = tbl_summary()
    return s.assign(n_runs=1, half_width=np.nan, ci_low=np.nan, ci_high=np.nan, std=np.nan)


def test_values_without_interval_use_the_default_two_decimals() -> None:
    from ganeval.results.tables import paper_table, table_cells, table_latex, table_markdown

    s = no_interval_summary()
    assert table_cells(s).loc["imd", ("mnist", "a")] == "1.23"
    assert table_cells(s, digits=3).loc["imd", ("mnist", "a")] == "1.234"
    assert table_cells(s).loc["kid", ("mnist", "b")] == "20.10"  # KID×10³
    assert paper_table(s).rows[2][2] == ("41.25", False)
    note = paper_table(s).columns_note
    assert "Higher is better for Precision, lower for IMD, KID×10³, FID; nothing is bold" in note
    assert "| FID | 30.50 | 41.25 | 35.00 | 60.00 |" in table_markdown(s)
    assert "| Precision | 0.75 | 0.50 | – | 0.60 |" in table_markdown(s)
    assert r"FID & 30.50 & 41.25 & 35.00 & 60.00 \\" in table_latex(s)
    md = table_markdown(s)
    assert "One value per cell, on the full sets (no interval)." in md and "Each interval is" not in md
    assert md.endswith("comparison.csv).\n") is False and md.endswith("so none is declared better.\n")


def test_full_set_row_after_fid() -> None:
    from ganeval.results.tables import full_set_sentence, table_cells, table_markdown

    s = tbl_summary()
    s["fid_full"] = np.nan
    s.loc[(s.metric == "fid") & (s.model == "a") & (s.data == "mnist"), "fid_full"] = 28.126
    s.loc[(s.metric == "fid") & (s.model == "c"), "fid_full"] = 33.0
    s.loc[(s.metric == "imd") & (s.model == "b"), "fid_full"] = 99.0  # not FID's row: not its full-set value
    t = table_cells(s)
    assert list(t.index) == ["imd", "kid", "fid", "fid_full", "precision"]
    assert list(t.loc["fid_full"]) == ["28.13", "–", "33.00", "–"]
    assert list(table_cells(s, digits=1).loc["fid_full"]) == ["28.1", "–", "33.0", "–"]
    assert "| FID, full sets | 28.13 | – | 33.00 | – |" in table_markdown(s)
    sentence = full_set_sentence(s)
    assert sentence.startswith("FID, full sets: the Fréchet distance of the whole generated pool against the whole "
                               "real pool, one value without interval")
    assert full_set_sentence(s, "dinov2").startswith("FD_DINOv2, full sets: the Fréchet distance")
    assert full_set_sentence(tbl_summary()) == "" and full_set_sentence(s.assign(fid_full=np.nan)) == ""
    no_fid = s[s.metric != "fid"]
    assert list(table_cells(no_fid).index) == ["imd", "kid", "precision", "fid_full"]
    assert list(table_cells(no_fid).loc["fid_full"]) == ["–"] * 4


@pytest.mark.parametrize("extractor, expected", [
    (None, ("FID", 1.0, "FID")), ("inception", ("FID", 1.0, "FID")),
    ({"name": "dinov2", "resize_mode": "clean"}, ("FD_DINOv2 (clean)", 1.0, r"FD$_\text{DINOv2}$ (clean)")),
    ({"name": "inception", "resize_mode": "clean"}, ("FID (clean)", 1.0, "FID (clean)")),
    ({"name": "my_net"}, ("FD_my_net", 1.0, r"FD$_\text{my\_net}$")),
    ({"resize_mode": "legacy_tf"}, ("FID (legacy_tf)", 1.0, r"FID (legacy\_tf)")),
])
def test_fid_label_with_each_kind_of_extractor(extractor: object, expected: tuple) -> None:
    from ganeval.results.tables import metric_label

    assert metric_label("fid", extractor) == expected


def test_metric_labels_of_other_metrics_and_feature_names() -> None:
    from ganeval.results.tables import fd_name, metric_label

    assert metric_label("kid", {"name": "dinov2", "resize_mode": "clean"}) == (
        "KID×10³", 1000.0, r"KID $\times 10^3$")
    assert metric_label("my_metric") == ("my_metric", 1.0, r"my\_metric")
    assert metric_label("fid_full") == ("FID, full sets", 1.0, "FID, full sets")
    assert metric_label("fid_full", "dinov2") == ("FD_DINOv2, full sets", 1.0, r"FD$_\text{DINOv2}$, full sets")
    assert fd_name(None) is None and fd_name("inception") is None and fd_name({"name": "inception"}) is None
    assert fd_name("dinov2") == "DINOv2" and fd_name({"name": "clip"}) == "CLIP" and fd_name({}) is None


def test_direction_sentence_and_better_word_every_branch() -> None:
    from ganeval.results.tables import better_word, direction_sentence

    assert direction_sentence(["fid", "zzz"]) == "Lower is better"  # an unknown metric: lower
    assert direction_sentence(["precision", "precision"]) == "Higher is better for Precision"
    assert direction_sentence(["fid", "precision", "fid", "kid"]) == (
        "Higher is better for Precision, lower for FID, KID×10³")
    assert direction_sentence(["fid", "precision"], True) == (
        "Distances between the real set and each given set (not a generator's samples); FID: lower is closer to the "
        "real set; Precision: higher is closer to the real set")
    assert direction_sentence(["kid"], given_sets=True).endswith("samples); KID×10³: lower is closer to the real set")
    assert [better_word(m) for m in ("fid", "precision", "zzz")] == [
        "(lower is better)", "(higher is better)", "(lower is better)"]
    assert [better_word(m, True) for m in ("fid", "precision", "zzz")] == ["(distance)", "(higher: closer)",
                                                                           "(distance)"]


def test_fmt_of_group_values() -> None:
    from ganeval.results.tables import _fmt

    assert [_fmt(3.0), _fmt(np.float64(-2.0)), _fmt(2.5), _fmt(7), _fmt("mnist"), _fmt(None)] == [
        "3", "-2", "2.5", "7", "mnist", "None"]
    assert _fmt(999_999_999_999_999.0) == "999999999999999" and _fmt(-999_999_999_999_999.0) == "-999999999999999"
    assert _fmt(1e15) == "1000000000000000.0" and _fmt(-1e15) == "-1000000000000000.0" and _fmt(1e16) == "1e+16"


def test_check_one_protocol_edges() -> None:
    from ganeval.results.tables import check_one_protocol

    s = tbl_summary()
    check_one_protocol(s)
    check_one_protocol(s.drop(columns=["sample_size", "confidence"]))
    for col, other in (("sample_size", 1000), ("confidence", np.nan), ("confidence", 0.95)):
        mixed = s.copy()
        mixed[col] = mixed[col].astype(float)
        mixed.loc[0, col] = other
        with pytest.raises(ValueError, match=f"summary mixes protocols: {col} takes values"):
            check_one_protocol(mixed)


def test_significantly_best_edges() -> None:
    from ganeval.results.tables import significantly_best

    s, c = tbl_summary(), tbl_comparison()
    assert significantly_best(s, c) == {("imd", ("mnist", "a")), ("fid", ("mnist", "a"))}
    assert significantly_best(s, None) == set() and significantly_best(s, c.iloc[:0]) == set()
    assert significantly_best(s, c, model_column="size") == set()
    with pytest.raises(ValueError, match="different confidence levels"):
        significantly_best(s, c.assign(confidence=0.95))
    # the model as the first group column, the dataset second: the same cells, keyed (model, data)
    swapped = s[["model", "data", *[k for k in s.columns if k not in ("model", "data")]]]
    assert significantly_best(swapped, c) == {("imd", ("a", "mnist")), ("fid", ("a", "mnist"))}
    # a model that loses every comparison is never bold; one alone in its dataset is never bold
    lose = c.assign(better=c["better"].replace({"a": "b"}))
    assert ("imd", ("mnist", "a")) not in significantly_best(s, lose)
    assert not any(g == ("cifar", "a") for _, g in significantly_best(s, c))


def test_interval_sentence_every_form() -> None:
    from ganeval.results.tables import interval_sentence, no_interval

    s = tbl_summary()
    s.loc[3, "n_runs"] = 3  # the most runs is said
    assert interval_sentence(s) == ("Mean ± half-width of the 99% Student-t interval over 5 runs of 500 samples per "
                                    "set.")
    assert interval_sentence(s.iloc[:1]) == ("Mean ± half-width of the 99% Student-t interval over 5 runs of 500 "
                                             "samples per set.")
    assert interval_sentence(s.assign(n_seeds=1)) == interval_sentence(s)
    assert interval_sentence(s.assign(n_seeds=3)) == (
        "Mean over 3 training seeds ± half-width of the 99% Student-t interval across seeds (2 degrees of freedom) of "
        "the per-seed means over 5 runs of 500 samples per set.")
    mixed = s.assign(n_seeds=[1, 2, 4] * 5)
    assert interval_sentence(mixed) == (
        "Mean ± half-width of the 99% Student-t interval: across seeds (S − 1 degrees of freedom) of the per-seed "
        "means for models with several training seeds (S = 2, 4), over runs for models with one seed; 5 runs of 500 "
        "samples per set.")
    full = no_interval_summary()
    assert no_interval(full) and interval_sentence(full) == "One value per cell, on the full sets (no interval)."
    assert interval_sentence(full.assign(n_seeds=1)) == "One value per cell, on the full sets (no interval)."
    assert interval_sentence(full.assign(n_seeds=2)).startswith("Mean over 2 training seeds")
    assert not no_interval(full.assign(n_runs=2)) and not no_interval(s.assign(n_runs=1))
    assert not no_interval(full.assign(half_width=[0.1] + [np.nan] * 14))


def test_bold_sentence_every_form() -> None:
    from ganeval.results.tables import _bold_sentence, _one_model_per_dataset

    s, c = tbl_summary(), tbl_comparison()
    lower = "Higher is better for Precision, lower for IMD, KID×10³, FID"
    assert _bold_sentence(s, None) == (f"{lower}; nothing is bold: no paired comparison of the models was made (their "
                                       "runs were not paired), so none is declared better.")
    one = s[s.model == "a"]
    assert _bold_sentence(one, c.iloc[:0]) == f"{lower}; nothing is bold: each dataset has one model, so there is " \
                                              "nothing to compare."
    assert _bold_sentence(one, None, True).endswith("nothing is bold: each dataset has one set, so there is nothing "
                                                    "to compare.")
    assert _bold_sentence(s, c, True).startswith("Distances between the real set") and (
        "bold: significantly closest to the real set at 99%: the interval of every paired difference (by run)"
        in _bold_sentence(s, c, True))
    assert "(by training seed)" in _bold_sentence(s, c.rename(columns={"n_runs": "n_seeds"}))
    assert _one_model_per_dataset(s.drop(columns="model")) and _one_model_per_dataset(one)
    assert not _one_model_per_dataset(s) and not _one_model_per_dataset(s[s.data == "mnist"].drop(columns="data"))
    assert _one_model_per_dataset(s[s.model == "b"].drop(columns="data"))
    nan_data = s.assign(data=[np.nan] * 8 + ["x"] * 3 + ["y"] * 4)  # the two models of a missing dataset: still two
    assert not _one_model_per_dataset(nan_data)
    assert _one_model_per_dataset(s, model_column="data") is False


def test_comparison_notes_every_form() -> None:
    from ganeval.results.tables import comparison_notes

    c = tbl_comparison()
    assert comparison_notes(None) == ("", []) and comparison_notes(c.iloc[:0]) == ("", [])
    assert comparison_notes(c.drop(columns="mde")) == ("", [])
    one = c.iloc[:1].assign(mde_holm=7.0, better=np.nan)
    intro, items = comparison_notes(one)
    assert intro == ("Paired differences a − b, 99% interval; *smallest detectable*: the true difference a paired t "
                     "at 99% (comparison.csv: mde) finds with 80 % power, from the measured spread of the differences "
                     "over the runs paired:")
    assert items == ["mnist, IMD: a − b = -0.5 [-0.75, -0.25], smallest detectable 7 (5 runs): undecided"]
    two = c.iloc[:2].rename(columns={"n_runs": "n_seeds"}).assign(n_seeds=3, mde_holm=[np.nan, 0.123456])
    intro, items = comparison_notes(two, "dinov2")
    assert "at the Holm level of the 2 comparisons (0.01/2; comparison.csv: mde_holm" in intro
    assert intro.endswith("over the training seeds paired:")
    assert items == ["mnist, IMD: a − b = -0.5 [-0.75, -0.25], smallest detectable – (3 training seeds): a better",
                     "mnist, IMD: a − c = -0.5 [-0.75, -0.25], smallest detectable 0.123 (3 training seeds): "
                     "a better"]
    fid = c.iloc[[6]].drop(columns="data").assign(mde_holm=1.0)  # no group column; FID on DINOv2 features
    assert comparison_notes(fid, "dinov2")[1] == [
        "FD_DINOv2: a − b = -0.5 [-0.75, -0.25], smallest detectable 1 (5 runs): a better"]


def test_md_escape_unescape_and_leading_markers() -> None:
    from ganeval.results.tables import md_escape, md_unescape

    assert md_escape("12) x") == r"12\) x" and md_escape("  + x") == r"  \+ x" and md_escape("1. a") == r"1\. a"
    assert md_escape("- a - b") == r"\- a - b" and md_escape("a_b|c") == r"a\_b\|c"
    assert md_unescape(r"a\_b \| c \- d") == r"a_b \| c - d"
    assert md_unescape(r"a\_b \| c", keep="") == "a_b | c"


def test_write_tables_defaults(tmp_path: "Path") -> None:
    from ganeval.results.tables import table_latex, table_markdown, write_tables

    s, c = tbl_summary(), tbl_comparison()
    paths = write_tables(s, tmp_path, c, "GAN table")
    assert paths == [tmp_path / "table.md", tmp_path / "table.tex"]
    assert paths[0].read_text() == TABLE_MD == table_markdown(s, c, "GAN table")
    assert paths[1].read_text() == table_latex(s, c, "GAN table")


# ---------------------------------------------------------------------------------------------------------------
# ganeval.results.intervals — scipy's t quantiles and paired t-test as ground truth


@pytest.mark.parametrize("half, decimals", [(0.0456, 3), (0.5, 2), (0.99, 2), (1.0, 1), (9.99, 1), (10.0, 0),
                                            (250.0, 0), (0.001, 4), (0.0, 3), (-1.0, 3), (math.nan, 3), (math.inf, 3)])
def test_decimals_for_each_decade_and_the_undefined(half: float, decimals: int) -> None:
    from ganeval.results.intervals import decimals_for

    assert decimals_for(half) == decimals


def test_check_confidence_edges() -> None:
    from ganeval.results.intervals import check_confidence

    for ok in (0.5, np.float64(0.99), np.float32(0.25), 1e-9, 1 - 1e-9):
        check_confidence(ok)
    for bad in (0.0, 1.0, 1, 0, -0.5, 99, True, False, "0.9", None, np.int64(1)):
        with pytest.raises(ValueError, match="confidence must lie strictly between 0 and 1"):
            check_confidence(bad)


@pytest.mark.parametrize("values, confidence", [([1.0, 2.0, 4.0], 0.99), ([3.0, 5.0], 0.9), ([0.1, -0.2, 0.4, 0.0, 0.3],
                                                                                              0.5)])
def test_t_interval_equals_scipys(values: list[float], confidence: float) -> None:
    from ganeval.results.intervals import t_interval

    x = np.asarray(values)
    n, mean, std = x.size, x.mean(), x.std(ddof=1)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * std / math.sqrt(n)
    got = t_interval(values, confidence)
    assert got == pytest.approx({"mean": mean, "std": std, "ci_low": mean - half, "ci_high": mean + half,
                                 "half_width": half, "n_runs": n}, rel=1e-12)
    lo, hi = stats.t.interval(confidence, n - 1, loc=mean, scale=stats.sem(x))
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((lo, hi), rel=1e-12)


def test_t_interval_default_and_edges() -> None:
    from ganeval.results.intervals import t_interval

    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert t_interval(x)["half_width"] == pytest.approx(stats.t.ppf(0.995, 3) * x.std(ddof=1) / 2.0, rel=1e-12)
    one = t_interval([5.0])
    assert one["mean"] == 5.0 and one["n_runs"] == 1
    assert all(math.isnan(one[k]) for k in ("std", "ci_low", "ci_high", "half_width"))
    with pytest.raises(ValueError, match="values is empty"):
        t_interval([])
    for bad in ([1.0, math.nan], [math.inf, 1.0]):
        with pytest.raises(ValueError, match="NaN or infinity"):
            t_interval(bad)
    with pytest.raises(ValueError, match="confidence must lie"):
        t_interval([1.0, 2.0], 1.0)


def test_intervals_paired_t_mde_defaults() -> None:
    from ganeval.results.intervals import paired_t_mde

    assert paired_t_mde(2.0, 5) == pytest.approx(2.0 * sp_mde_effect(5, 0.01, 0.8), rel=1e-9)
    assert paired_t_mde(1.0, 7, 0.9, 0.6) == pytest.approx(sp_mde_effect(7, 0.1, 0.6), rel=1e-9)
    with pytest.raises(ValueError, match="confidence must lie"):
        paired_t_mde(1.0, 5, True)


def test_paired_comparison_equals_scipys_paired_t() -> None:
    from ganeval.results.intervals import paired_comparison

    a, b = np.array([3.0, 5.0, 4.5, 6.0]), np.array([2.0, 4.8, 4.0, 5.1])
    got = paired_comparison(a, b)  # default 99 %
    d = a - b
    half = stats.t.ppf(0.995, 3) * d.std(ddof=1) / 2.0
    assert got["diff_mean"] == pytest.approx(d.mean(), rel=1e-12) and got["diff_mean"] > 0
    assert got["diff_std"] == pytest.approx(d.std(ddof=1), rel=1e-12)
    assert (got["ci_low"], got["ci_high"], got["half_width"]) == pytest.approx((d.mean() - half, d.mean() + half, half),
                                                                               rel=1e-12)
    assert got["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-10)
    assert got["mde"] == pytest.approx(d.std(ddof=1) * sp_mde_effect(4, 0.01, 0.8), rel=1e-9)
    assert got["n_runs"] == 4
    small = paired_comparison([1.0, 1.2], [0.0, 0.5], 0.9)  # two runs, spread below 1
    assert small["p_value"] == pytest.approx(stats.ttest_rel([1.0, 1.2], [0.0, 0.5]).pvalue, rel=1e-10)
    with pytest.raises(ValueError, match="same length"):
        paired_comparison([1.0, 2.0], [1.0])


def test_paired_comparison_without_spread_or_with_one_run() -> None:
    from ganeval.results.intervals import paired_comparison

    assert paired_comparison([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])["p_value"] == 0.0  # always 1 better: no spread
    assert paired_comparison([1.0, 2.0], [1.0, 2.0])["p_value"] == 1.0  # identical
    assert paired_comparison([1.0, 2.0], [0.5, 1.5])["p_value"] == 0.0  # two runs, no spread
    one = paired_comparison([1.0], [0.25], 0.95)
    assert one["diff_mean"] == 0.75 and one["n_runs"] == 1 and math.isnan(one["p_value"]) and math.isnan(one["mde"])


# ---------------------------------------------------------------------------------------------------------------
# ganeval.results.thresholds


def test_threshold_checks_at_their_edges() -> None:
    import dataclasses

    from ganeval.results.thresholds import Threshold

    Threshold("cv", 0.1, 0.1, 0.3, "ours: a round number")
    Threshold("cv", 0.3, 0.1, 0.3, "the paper: “below 0.3”")
    for source in ("mine", "Ours", "paper"):
        with pytest.raises(ValueError, match="its source must start with"):
            Threshold("cv", 0.2, 0.1, 0.3, source)
    for value in (0.0999, 0.3001):
        with pytest.raises(ValueError, match="lies outside its range"):
            Threshold("cv", value, 0.1, 0.3, "ours: x")
    names = ("a", "b", "c")
    Threshold("layer", 0, 0, 2, "ours: x", names=names)
    for low, high in ((-1, 1), (0, 3), (-1, 3)):
        with pytest.raises(ValueError, match="outside"):
            Threshold("layer", 0, low, high, "ours: x", names=names)
    th = Threshold("cv", 0.2, 0.1, 0.3, "ours: x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        th.value = 0.25  # type: ignore[misc]


def test_threshold_show_span_text() -> None:
    from ganeval.results.thresholds import Threshold

    th = Threshold("cv", 0.2, 0.1, 0.3, "ours: x")  # defaults: scale 1, 3 significant digits, no unit
    assert th.show(0.123456) == "0.123" and th.show(1.0) == "1" and th.show(0.0) == "0" and th.show(-0.5) == "−0.5"
    pct = Threshold("share", 0.2, 0.1, 0.3, "the paper: “20 %”", unit="%", scale=100.0, digits=2)
    assert pct.show(0.123) == "12%" and pct.show(0.123, unit=False) == "12" and pct.show(-0.05) == "−5%"
    assert pct.span(0.1, 0.3) == "10–30%" and pct.span(0.2, 0.2) == "20%"
    assert pct.text() == "share 20% (the paper: “20 %”; declared range 10–30%)"
    assert Threshold("cv", 0.2, 0.2, 0.2, "ours: x").text() == "cv 0.2 (ours: x)"
    named = Threshold("layer", 1, 0, 2, "ours: x", names=("conv", "pool", "fc"))
    assert named.show(1.0) == "pool" and named.show(1.6) == "fc" and named.span(0, 2) == "conv–fc"


def test_across_verdict_and_text() -> None:
    import dataclasses

    from ganeval.results.thresholds import Across, Threshold
    from ganeval.results.verdicts import DEPENDS

    th = Threshold("share", 0.2, 0.1, 0.3, "ours: x", unit="%", scale=100.0)
    one = Across(th, (("holds", 0.1, 0.3),))
    assert one.verdict == "holds" and one.text() == "holds for all of 10–30%"
    two = Across(th, (("holds", 0.1, 0.15), ("contradicted", 0.15, 0.3)))
    assert two.verdict == DEPENDS and two.text() == "holds for 10–15%; contradicted for 15–30%"
    same_start = Across(th, (("holds", 0.1, 0.1), ("contradicted", 0.1, 0.3)))
    assert same_start.verdict == DEPENDS
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.segments = ()  # type: ignore[misc]
    same_label = Across(th, (("holds", 0.1, 0.2), ("holds", 0.2, 0.3)))
    assert same_label.verdict == "holds" and same_label.text() == "holds for 10–20%; holds for 20–30%"


def test_across_named_positions() -> None:
    from ganeval.results.thresholds import Threshold, across

    th = Threshold("layer", 2, 1, 3, "ours: x", names=("l0", "l1", "l2", "l3", "l4"))
    seen: list[float] = []

    def rule(x: float) -> str:
        seen.append(x)
        return "A" if x < 2.5 else "B"

    got = across(rule, th)
    assert seen == [1.0, 2.0, 3.0]
    assert got.segments == (("A", 1.0, 2.0), ("B", 3.0, 3.0))
    assert across(lambda x: "A", th).segments == (("A", 1.0, 3.0),)
    assert across(lambda x: "AB"[int(x) % 2], th).segments == (("B", 1.0, 1.0), ("A", 2.0, 2.0), ("B", 3.0, 3.0))


def test_across_a_range_grid_and_cuts() -> None:
    from ganeval.results.thresholds import Threshold, across

    th = Threshold("cv", 0.2, 0.1, 0.3, "ours: x")
    calls: list[float] = []
    flat = across(lambda x: calls.append(x) or "holds", th)  # type: ignore[func-returns-value]
    assert len(calls) == 201 and calls[0] == 0.1 and calls[-1] == 0.3 and flat.segments == (("holds", 0.1, 0.3),)
    for points, count in ((1, 2), (0, 2), (2, 2), (5, 5)):
        calls.clear()
        across(lambda x: calls.append(x) or "holds", th, points)  # type: ignore[func-returns-value]
        assert len(calls) == count
    point = Threshold("cv", 0.2, 0.2, 0.2, "ours: x")
    assert across(lambda x: f"at {x}", point).segments == (("at 0.2", 0.2, 0.2),)

    c1, c2 = 0.1234567, 0.2468013

    def three(x: float) -> str:
        return "holds" if x <= c1 else "not testable here" if x <= c2 else "contradicted"

    segs = across(three, th).segments
    assert [s[0] for s in segs] == ["holds", "not testable here", "contradicted"]
    assert segs[0][1] == 0.1 and segs[2][2] == 0.3 and segs[0][2] == segs[1][1] and segs[1][2] == segs[2][1]
    assert segs[0][2] == pytest.approx(c1, abs=5e-10) and segs[1][2] == pytest.approx(c2, abs=5e-10)
    coarse = across(three, th, points=3)  # grid 0.1, 0.2, 0.3: each cut found between two of them
    assert coarse.segments[0][2] == pytest.approx(c1, abs=5e-10)
    assert coarse.segments[1][2] == pytest.approx(c2, abs=5e-10)


@pytest.mark.parametrize("low, high, tau, side, label", [
    (0.0, 0.99, 1.0, "below", "holds"), (0.0, 1.0, 1.0, "below", "not testable here"),
    (1.0, 2.0, 1.0, "below", "not testable here"), (1.01, 2.0, 1.0, "below", "contradicted"),
    (1.01, 2.0, 1.0, "above", "holds"), (1.0, 2.0, 1.0, "above", "not testable here"),
    (0.0, 1.0, 1.0, "above", "not testable here"), (0.0, 0.99, 1.0, "above", "contradicted"),
    (-0.5, 0.5, 1.0, "within", "holds"), (-1.0, 0.5, 1.0, "within", "not testable here"),
    (-0.5, 1.0, 1.0, "within", "not testable here"), (-3.0, 0.5, 1.0, "within", "not testable here"),
    (-1.5, 0.5, 1.0, "within", "not testable here"), (1.0, 2.0, 1.0, "within", "not testable here"),
    (1.01, 2.0, 1.0, "within", "contradicted"), (-2.0, -1.0, 1.0, "within", "not testable here"),
    (-2.0, -1.01, 1.0, "within", "contradicted"), (-2.0, 2.0, 1.0, "within", "not testable here"),
    (math.nan, 0.5, 1.0, "below", "not testable here"), (0.0, math.inf, 1.0, "above", "not testable here"),
    (-math.inf, 0.5, 1.0, "within", "not testable here"),
])
def test_interval_label_at_each_edge(low: float, high: float, tau: float, side: str, label: str) -> None:
    from ganeval.results.thresholds import interval_label

    assert interval_label(low, high, tau, side) == label


def test_interval_label_refuses_an_unknown_side_and_all_hold() -> None:
    from ganeval.results.thresholds import all_hold, interval_label
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE

    with pytest.raises(ValueError, match="side must be"):
        interval_label(0.0, 1.0, 1.0, "beside")
    assert all_hold([]) == HOLDS and all_hold([HOLDS, HOLDS]) == HOLDS
    assert all_hold([HOLDS, NOT_TESTABLE]) == NOT_TESTABLE and all_hold([NOT_TESTABLE, NOT_TESTABLE]) == NOT_TESTABLE
    assert all_hold([HOLDS, CONTRADICTED, NOT_TESTABLE]) == CONTRADICTED and all_hold([CONTRADICTED]) == CONTRADICTED


# ---------------------------------------------------------------------------------------------------------------
# ganeval.results.verdicts — Holm by hand, scipy's one-sample t, the claims table in full


def test_vs_paper_and_one_sided_p() -> None:
    from ganeval.results.verdicts import AS_STATED, CONTRADICTED, HOLDS, NO_COMPARISON, NOT_TESTABLE, WORSE, \
        one_sided_p, vs_paper

    assert [vs_paper(v) for v in (HOLDS, CONTRADICTED, NOT_TESTABLE)] == [AS_STATED, WORSE, NO_COMPARISON]
    x = [0.3, -0.1, 0.5, 0.2]
    assert one_sided_p(x) == pytest.approx((stats.ttest_1samp(x, 0.0, alternative="greater").pvalue,
                                            stats.ttest_1samp(x, 0.0, alternative="less").pvalue), rel=1e-12)
    assert one_sided_p([2.0, 2.0, 2.0]) == (0.0, 1.0) and one_sided_p([-2.0, -2.0]) == (1.0, 0.0)
    assert one_sided_p([0.5, 0.5]) == (0.0, 1.0) and one_sided_p([0.0, 0.0, 0.0]) == (1.0, 1.0)
    assert one_sided_p([1e6, 1e6 + 1e-7]) == (0.0, 1.0)  # a spread of rounding, relative to the mean: none
    tiny = [-1e-12, 2.5e-12]  # a spread above 1e-12 near 0: a t-test
    assert one_sided_p(tiny) == pytest.approx((stats.ttest_1samp(tiny, 0.0, alternative="greater").pvalue,
                                               stats.ttest_1samp(tiny, 0.0, alternative="less").pvalue), rel=1e-9)
    assert one_sided_p([-1e-12, 1e-12]) == (1.0, 1.0)  # a spread of exactly 1e-12: none


def test_sign_label_at_the_level() -> None:
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, sign_label

    assert sign_label([2.0, 2.0], 1.0) == (HOLDS, 0.0)  # p = alpha = 0: holds
    assert sign_label([-2.0, -2.0], 1.0) == (CONTRADICTED, 0.0)
    x = [0.3, -0.1, 0.5, 0.2]
    up = stats.ttest_1samp(x, 0.0, alternative="greater").pvalue
    assert 0.01 < up < 0.2
    assert sign_label(x, 0.99) == (NOT_TESTABLE, pytest.approx(up, rel=1e-12))
    assert sign_label(x, 0.8) == (HOLDS, pytest.approx(up, rel=1e-12))
    neg = [-v for v in x]
    assert sign_label(neg, 0.8) == (CONTRADICTED, pytest.approx(up, rel=1e-12))


def test_claim_checks_label_and_record() -> None:
    import dataclasses

    from ganeval.results.verdicts import DEPENDS, HOLDS, NOT_TESTABLE, Claim

    for kw, msg in (({"verdict": "maybe"}, "verdict must be one of"), ({"vs_paper": "better"}, "vs_paper must be"),
                    ({"verdict": NOT_TESTABLE}, "say the smallest effect"), ({"verdict": DEPENDS}, "say where each")):
        with pytest.raises(ValueError, match=msg):
            Claim(**{"name": "c", "statement": "s", "verdict": HOLDS, "rule": "r", "threshold": "t", **kw})
    Claim("c", "s", NOT_TESTABLE, "r", "t", detectable="0.3")
    Claim("c", "s", DEPENDS, "r", "t", across="holds for 1–2; contradicted for 2–3")
    c = Claim("c", "s", HOLDS, "r", "t", p_value=0.01)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.verdict = NOT_TESTABLE  # type: ignore[misc]
    assert c.label() == "holds" and dataclasses.replace(c, selected="best of 3").label() == (
        "holds on selected data (best of 3)")
    assert c.record() == {"name": "c", "statement": "s", "verdict": "holds", "rule": "r", "threshold": "t",
                          "vs_paper": "–", "evidence": "", "p_value": 0.01, "p_holm": None, "detectable": ""}
    rec = dataclasses.replace(c, selected="best of 3", across="holds for all of 1–2").record()
    assert rec["selected"] == "best of 3" and rec["across"] == "holds for all of 1–2" and rec["p_holm"] is None


def test_holm_adjust_by_hand() -> None:
    from ganeval.results.verdicts import holm_adjust

    got = holm_adjust([0.01, 0.04, 0.03, math.nan, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, max(0.06, 0.04)
    np.testing.assert_allclose(got, [0.03, 0.06, 0.06, np.nan, 0.02], rtol=1e-15)
    np.testing.assert_array_equal(holm_adjust([0.6, 0.7]), [1.0, 1.0])
    assert holm_adjust([0.03]).tolist() == [0.03]
    assert np.isnan(holm_adjust([math.nan, math.nan])).all() and holm_adjust([]).shape == (0,)


def holm_claims() -> list:
    from ganeval.results.verdicts import AS_STATED, BETTER, CONTRADICTED, HOLDS, NOT_TESTABLE, STAND_IN, WORSE, Claim

    return [Claim("c1", "s1", HOLDS, "r1", "t1", vs_paper=AS_STATED, p_value=0.004, detectable="0.3",
                  across="holds for all of 1–2"),
            Claim("c2", "s2", CONTRADICTED, "r2", "t2", vs_paper=WORSE, p_value=0.02, detectable="0.5",
                  selected="best of 3"),
            Claim("c3", "s3", STAND_IN, "r3", "t3", p_value=0.001),
            Claim("c4", "s4", HOLDS, "r4", "t4"),
            Claim("c5", "s5", NOT_TESTABLE, "r5", "t5", vs_paper=BETTER, p_value=0.001, detectable="0.1")]


def test_holm_decisions() -> None:
    from ganeval.results.verdicts import BETTER, HOLDS, NO_COMPARISON, NOT_TESTABLE, STAND_IN, holm

    out = holm(holm_claims(), 0.99)
    # the family: c1, c2, c5 (c3 a stand-in, c4 no p-value): sorted 0.001, 0.004, 0.02 → 0.003, 0.008, 0.02
    assert [c.p_holm for c in out[:2]] == pytest.approx([0.008, 0.02], rel=1e-12)
    assert out[4].p_holm == pytest.approx(0.003, rel=1e-12)
    assert math.isnan(out[2].p_holm) and math.isnan(out[3].p_holm)
    assert [c.verdict for c in out] == [HOLDS, NOT_TESTABLE, STAND_IN, HOLDS, NOT_TESTABLE]
    assert out[1].vs_paper == NO_COMPARISON and out[4].vs_paper == BETTER and out[0].vs_paper == "as stated"
    assert out[2] == holm_claims()[2] and out[3] == holm_claims()[3]


def test_holm_at_exactly_the_level_and_without_detectable() -> None:
    from ganeval.results.verdicts import CONTRADICTED, HOLDS, NOT_TESTABLE, Claim, holm

    claims = [Claim("a", "s", HOLDS, "r", "t", p_value=0.125), Claim("b", "s", HOLDS, "r", "t", p_value=0.2)]
    out = holm(claims, 0.75)  # alpha = 0.25 exactly: 2·0.125 = 0.25 is not above it
    assert [c.p_holm for c in out] == [0.25, 0.25] and [c.verdict for c in out] == [HOLDS, HOLDS]
    stated = [Claim(c.name, "s", HOLDS, "r", "t", p_value=c.p_value, detectable="0.1") for c in claims]
    assert [c.verdict for c in holm(stated, 0.76)] == [NOT_TESTABLE, NOT_TESTABLE]  # alpha 0.24: just missed
    with pytest.raises(ValueError, match="no detectable effect to state"):
        holm([Claim("a", "s", CONTRADICTED, "r", "t", p_value=0.3)], 0.99)
    assert holm([Claim("a", "s", CONTRADICTED, "r", "t", p_value=0.3, detectable="1")], 0.99)[0].verdict == NOT_TESTABLE


def test_tests_in_holm_confidence_and_family() -> None:
    from ganeval.results.verdicts import HOLDS, Claim, holm_confidence, holm_family, tests_in

    assert tests_in(holm_claims()) == 3 and tests_in([]) == 0
    assert holm_confidence(0.99, 4) == pytest.approx(0.9975, abs=1e-15) and holm_confidence(0.99, 1) == 0.99
    assert holm_confidence(0.99, 0) == 0.99 and holm_confidence(0.9, 2) == pytest.approx(0.95, abs=1e-15)
    for ps, calls_expected in (([0.001], [0.99]), ([0.001, 0.002], [0.99, 0.995]), ([], [0.99]),
                               ([0.001, 0.002, 0.003], [0.99, 1 - 0.01 / 3])):
        calls: list[float] = []

        def build(conf: float, ps: list = ps) -> list:
            calls.append(conf)
            return [Claim(f"c{i}", "s", HOLDS, "r", "t", p_value=p) for i, p in enumerate(ps)]

        out = holm_family(build, 0.99)
        assert calls == pytest.approx(calls_expected, abs=1e-15) and len(out) == len(ps)
        assert all(math.isfinite(c.p_holm) for c in out)


def test_p_formatting() -> None:
    from ganeval.results.verdicts import _p

    assert [_p(math.nan), _p(0.05), _p(1e-4), _p(9.9e-5), _p(0.00015), _p(1.0)] == [
        "–", "0.05", "0.0001", "<1e-4", "0.00015", "1"]


CLAIMS_TABLE = """\
| claim | verdict | rule | practical threshold | label across the declared range | vs the paper | p (Holm) | smallest \
detectable |
|---|---|---|---|---|---|---|---|
| c1 | **holds** | r1 | t1 | holds for all of 1–2 | as stated | 0.004 (0.008) | 0.3 |
| c2 | **not testable here on selected data (best of 3)** | r2 | t2 | – | – | 0.02 (0.02) | 0.5 |
| c3 | **not tested: stand-in data** | r3 | t3 | – | – | 0.001 (–) | – |
| c4 | **holds** | r4 | t4 | – | – | – | – |

Verdicts: *holds*, *contradicted*, *not testable here* (the test had no power; the last column says the smallest \
effect it could have detected, a paired t at the family's Holm level 0.01/2 = 0.005 with 80% power where a t test \
decided), *not tested: stand-in data* (the claim is about data or weights this run did not use: its numbers are \
shown, and decide nothing), *depends on the threshold* (the label changes inside the declared range of reasonable \
thresholds: not decided; the column beside the threshold gives the range where each label holds). The 2 p-values of \
this experiment are corrected together by Holm's step-down method before being compared with 0.01; a claim whose \
corrected p-value misses it is *not testable here*. *vs the paper*: whether the measured effect is better or worse \
than the paper's statement says. *on selected data*: a search chose the data for this claim's outcome, so the \
verdict shows what such data can give, not an independent test.
"""


def test_claims_table_whole_text() -> None:
    from ganeval.results.verdicts import claims_table, holm

    assert claims_table(holm(holm_claims()[:4], 0.99), 0.99) == CLAIMS_TABLE


def test_claims_table_of_one_test_and_of_none() -> None:
    from ganeval.results.verdicts import claims_table

    c1, _, _, c4, _ = holm_claims()
    one = claims_table([c4, c1], 0.95)
    assert one.splitlines()[0] == ("| claim | verdict | rule | practical threshold | label across the declared range | "
                                   "vs the paper | p (Holm) | smallest detectable |")
    assert "| c1 | **holds** | r1 | t1 | holds for all of 1–2 | as stated | 0.004 (–) | 0.3 |" in one
    assert "| c4 | **holds** | r4 | t4 | – | – | – | – |" in one
    assert "a paired t at 95% with 80% power where a t test decided" in one
    assert "The 1 p-value of this experiment is corrected together by Holm's step-down method before being compared " \
           "with 0.05;" in one and "*on selected data*" not in one
    none = claims_table([c4], 0.99)
    assert none.splitlines()[:3] == ["| claim | verdict | rule | practical threshold | vs the paper | p (Holm) | "
                                     "smallest detectable |", "|---|---|---|---|---|---|---|",
                                     "| c4 | **holds** | r4 | t4 | – | – | – |"]
    assert "No claim of this experiment rests on a p-value, so none is Holm-corrected." in none
    assert "*depends on the threshold*" not in none and "a paired t at 99% with 80% power" in none


# ---------------------------------------------------------------------------------------------------------------
# ganeval.results.seeds — a one-way random-effects ANOVA written out in float64 numpy on hand-made runs

SEED_RUNS = {  # (model, data): {seed: values of its runs}; b first (first-appearance order), a's dataset missing
    ("b", "x"): {0: [10.0, 11.0, 12.5], 1: [14.0, 13.0], 2: [9.0, 10.5, 11.0, 12.0]},
    ("a", None): {0: [5.0, 6.0], 1: [7.5, 8.0, 9.0]},
    ("c", "x"): {0: [3.0, 4.0, 3.5]},
    ("d", "x"): {0: [1.0], 1: [2.0]},
}
PROBE_AGAIN = {("b", 0, 0): 10.4, ("b", 1, 1): 12.5, ("b", 2, 3): 12.3}  # (model, seed, run): a second probe draw


def seed_rows(probe: bool = False) -> "pd.DataFrame":
    recs = []
    for (model, data), seeds in SEED_RUNS.items():
        for seed, values in seeds.items():
            for run, v in enumerate(values):
                recs.append({"model": model, "data": data if data else np.nan, "train_seed": seed, "run": run,
                             "metric": "fid", "value": v, "probe_draw": 0})
                if probe and (model, seed, run) in PROBE_AGAIN:
                    recs.append({**recs[-1], "value": PROBE_AGAIN[(model, seed, run)], "probe_draw": 1})
    rows = pd.DataFrame(recs)
    return rows if probe else rows.drop(columns="probe_draw")


def anova(seeds: dict[int, list[float]], var_probe: float = 0.0) -> dict[str, float]:
    """var_seed, var_subsample, var_probe and shares of one model, written out (unbalanced n0)."""
    groups = [np.asarray(v) for v in seeds.values()]
    S, N = len(groups), sum(g.size for g in groups)
    grand = np.concatenate(groups).mean()
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (N - S) if N > S else np.nan
    msb = sum(g.size * (g.mean() - grand) ** 2 for g in groups) / max(S - 1, 1)
    n0 = (N - sum(g.size ** 2 for g in groups) / N) / max(S - 1, 1)
    var_seed = max(0.0, (msb - msw) / n0) if S > 1 else 0.0
    vp = min(var_probe, msw)
    total = var_seed + msw
    return {"n_seeds": S, "var_seed": var_seed, "var_subsample": msw - vp, "var_probe": vp,
            "share_seed": var_seed / total, "share_subsample": (msw - vp) / total, "share_probe": vp / total}


def test_split_probe_draws() -> None:
    from ganeval.results.seeds import split_probe_draws

    rows = seed_rows(probe=True)
    runs, extra = split_probe_draws(rows)
    assert len(runs) == 19 and len(extra) == 3 and "probe_draw" not in runs.columns
    assert sorted(extra["value"]) == sorted(PROBE_AGAIN.values())
    nan = rows.assign(probe_draw=rows["probe_draw"].astype(float))
    nan.loc[0, "probe_draw"] = np.nan  # a missing draw number is a run's own row
    nan.loc[2, "probe_draw"] = 2.0
    runs, extra = split_probe_draws(nan)
    assert len(runs) == 18 and len(extra) == 4
    plain = seed_rows()
    runs, extra = split_probe_draws(plain)
    assert runs is plain and extra.empty and list(extra.columns) == list(plain.columns)


def test_probe_variance_by_hand() -> None:
    from ganeval.results.seeds import probe_variance, split_probe_draws

    runs, extra = split_probe_draws(seed_rows(probe=True))
    pv = probe_variance(runs, extra)
    d2 = [(10.4 - 10.0) ** 2 / 2, (12.5 - 13.0) ** 2 / 2, (12.3 - 12.0) ** 2 / 2]
    assert pv.columns.tolist() == ["model", "data", "metric", "var_probe", "n_probe_pairs"]
    assert pv["model"].tolist() == ["b"] and pv["n_probe_pairs"].tolist() == [3]
    assert pv["var_probe"].iloc[0] == pytest.approx(np.mean(d2), rel=1e-12)
    empty = probe_variance(runs, extra.iloc[:0])
    assert empty.empty and empty.columns.tolist() == ["model", "data", "metric", "var_probe", "n_probe_pairs"]


def test_probe_variance_keeps_order_and_missing_keys() -> None:
    """Two models with probe rows, the later-named first and one of a missing dataset: both kept, in their order."""
    from ganeval.results.seeds import probe_variance, split_probe_draws

    rows = seed_rows(probe=True)
    again = rows[(rows.model == "a") & (rows.train_seed == 1) & (rows.run == 2)].assign(value=8.0, probe_draw=1)
    runs, extra = split_probe_draws(pd.concat([rows, again], ignore_index=True))
    pv = probe_variance(runs, extra)
    assert pv["model"].tolist() == ["b", "a"] and pv["n_probe_pairs"].tolist() == [3, 1]
    assert pv["var_probe"].iloc[1] == pytest.approx((8.0 - 9.0) ** 2 / 2, rel=1e-12)


def test_variance_components_equal_the_written_out_anova() -> None:
    from ganeval.results.seeds import probe_variance, split_probe_draws, variance_components
    from ganeval.results.summary import summarize_runs

    runs, extra = split_probe_draws(seed_rows(probe=True))
    seeds = summarize_runs(runs, 0.99, 100)
    var = variance_components(seeds, probe_variance(runs, extra))
    assert var.columns.tolist() == ["model", "data", "metric", "n_seeds", "share_seed", "share_subsample",
                                    "share_probe", "var_seed", "var_subsample", "var_probe", "n_probe_pairs"]
    assert var["model"].tolist() == ["b", "a", "c", "d"]  # first-appearance order; a's missing dataset kept
    assert pd.isna(var["data"].iloc[1])
    vp = np.mean([(10.4 - 10.0) ** 2 / 2, (12.5 - 13.0) ** 2 / 2, (12.3 - 12.0) ** 2 / 2])
    cols = ["n_seeds", "var_seed", "var_subsample", "var_probe", "share_seed", "share_subsample", "share_probe"]
    for i, (key, probe) in enumerate(((("b", "x"), vp), (("a", None), 0.0), (("c", "x"), 0.0))):
        expected = anova(SEED_RUNS[key], probe)
        assert var[cols].iloc[i].to_dict() == pytest.approx(expected, rel=1e-10, abs=1e-15), key
    assert var["n_probe_pairs"].tolist() == [3, 0, 0, 0]
    assert var["var_seed"].iloc[0] > 0 and var["var_seed"].iloc[2] == 0.0  # c: one seed
    d = var.iloc[3]  # one run per seed: no within-seed variance, shares undefined
    assert d["n_seeds"] == 2 and math.isnan(d["var_subsample"]) and math.isnan(d["share_seed"])
    no_probe = variance_components(seeds)
    assert no_probe["var_probe"].tolist()[:3] == [0.0, 0.0, 0.0] and no_probe["n_probe_pairs"].tolist() == [0] * 4
    assert no_probe["share_subsample"].iloc[2] == 1.0


def test_variance_components_without_any_spread() -> None:
    """Every run of every seed the same value: total 0, the shares 0 / 1 / 0 (all subsampling, by convention)."""
    from ganeval.results.seeds import variance_components
    from ganeval.results.summary import summarize_runs

    rows = seed_rows()
    flat = summarize_runs(rows.assign(value=5.0)[rows.model == "b"], 0.99, 100)
    var = variance_components(flat)
    assert var[["share_seed", "share_subsample", "share_probe", "var_seed"]].iloc[0].tolist() == [0.0, 1.0, 0.0, 0.0]


def test_variance_components_probe_capped_at_the_within_variance() -> None:
    from ganeval.results.seeds import variance_components
    from ganeval.results.summary import summarize_runs

    seeds = summarize_runs(seed_rows(), 0.99, 100)
    big = pd.DataFrame({"model": ["b"], "data": ["x"], "metric": ["fid"], "var_probe": [1e6], "n_probe_pairs": [2]})
    var = variance_components(seeds, big)
    expected = anova(SEED_RUNS[("b", "x")], 1e6)
    assert var["var_probe"].iloc[0] == pytest.approx(expected["var_probe"], rel=1e-12)
    assert var["var_subsample"].iloc[0] == 0.0 and var["share_subsample"].iloc[0] == 0.0
    assert var["share_probe"].iloc[0] == pytest.approx(expected["share_probe"], rel=1e-12)
    assert var["n_probe_pairs"].tolist() == [2, 0, 0, 0]


def test_summarize_seeds_by_hand() -> None:
    from ganeval.results.seeds import COVERS_SEEDS, COVERS_SUBSAMPLES, summarize_seeds
    from ganeval.results.summary import summarize_runs

    seeds = summarize_runs(seed_rows(), 0.95, 100)
    model = summarize_seeds(seeds, 0.95)
    assert model["model"].tolist() == ["b", "a", "c", "d"]
    b = model.iloc[0]
    means = np.array([np.mean(v) for v in SEED_RUNS[("b", "x")].values()])
    half = stats.t.ppf(0.975, 2) * means.std(ddof=1) / math.sqrt(3)
    assert (b["mean"], b["std"], b["half_width"]) == pytest.approx((means.mean(), means.std(ddof=1), half), rel=1e-12)
    assert (b["ci_low"], b["ci_high"]) == pytest.approx((means.mean() - half, means.mean() + half), rel=1e-12)
    assert b["n_runs"] == 2 and b["n_seeds"] == 3 and b["covers"] == COVERS_SEEDS and b["sample_size"] == 100
    assert b["confidence"] == 0.95
    assert b["share_seed"] == pytest.approx(anova(SEED_RUNS[("b", "x")])["share_seed"], rel=1e-10)
    c = model.iloc[2]
    row = seeds[seeds.model == "c"].iloc[0]
    assert c["covers"] == COVERS_SUBSAMPLES and c["n_seeds"] == 1 and c["n_runs"] == 3
    assert (c["mean"], c["std"], c["half_width"]) == (row["mean"], row["std"], row["half_width"])
    assert pd.isna(model["data"].iloc[1]) and model["n_seeds"].iloc[1] == 2
    one = summarize_seeds(seeds.iloc[[0]], 0.95)
    assert len(one) == 1 and one["covers"].iloc[0] == COVERS_SUBSAMPLES and one["sample_size"].iloc[0] == 100
    with pytest.raises(ValueError, match="seed_summary is empty"):
        summarize_seeds(seeds.iloc[:0], 0.95)


def two_model_rows() -> "pd.DataFrame":
    """Models a (better: lower) and b over 3 seeds, 3 runs each."""
    recs = []
    for model, base in (("b", 20.0), ("a", 10.0)):
        for seed in range(3):
            for run in range(3):
                recs.append({"model": model, "train_seed": seed, "run": run, "metric": "fid",
                             "value": base + seed * 0.5 + run * 0.25 + (0.3 if model == "a" and seed == 1 else 0.0)})
    return pd.DataFrame(recs)


def test_compare_seeds_default_and_its_pairs() -> None:
    from ganeval.results.seeds import compare_seeds
    from ganeval.results.summary import summarize_runs

    seeds = summarize_runs(two_model_rows(), 0.99, 100)
    comp = compare_seeds(seeds, 0.99)
    assert len(comp) == 1 and comp["a"].iloc[0] == "b" and comp["b"].iloc[0] == "a"
    assert comp["better"].iloc[0] == "a" and comp["n_seeds"].iloc[0] == 3 and "train_seed" not in comp.columns
    d = np.array([10.0 - 0.0, 10.0 - 0.3, 10.0])  # b − a per seed
    assert comp["diff_mean"].iloc[0] == pytest.approx(d.mean(), rel=1e-12)
    assert comp["p_value"].iloc[0] == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-9)
    assert compare_seeds(seeds, 0.99, lower_is_better=False)["better"].iloc[0] == "b"
    with pytest.raises(ValueError, match="has no column 'train_seed'"):
        compare_seeds(seeds.drop(columns="train_seed"), 0.99)


def test_several_seeds_summarize_levels_and_coverage_note() -> None:
    from ganeval.results.intervals import COVERAGE_NOTE
    from ganeval.results.seeds import COVERS_SEEDS, COVERS_SUBSAMPLES, SEEDS_COVERAGE_NOTE, coverage_note, \
        several_seeds, summarize_levels

    rows = two_model_rows()
    assert several_seeds(rows[rows.train_seed < 2]) and not several_seeds(rows[rows.train_seed == 0])
    assert several_seeds(rows) and not several_seeds(
        rows.drop(columns="train_seed"))
    lv = summarize_levels(rows, 0.99, 100)
    assert len(lv.seeds) == 6 and lv.summary["model"].tolist() == ["b", "a"] and "n_seeds" in lv.comparison.columns
    assert lv.comparison["better"].tolist() == ["a"] and lv.variance["n_seeds"].tolist() == [3, 3]
    one_seed = summarize_levels(rows[rows.train_seed == 0], 0.99, 100)
    assert "n_runs" in one_seed.comparison.columns and "n_seeds" not in one_seed.comparison.columns
    assert one_seed.comparison["better"].tolist() == ["a"]
    assert summarize_levels(rows[rows.model == "a"], 0.99, 100).comparison.empty
    assert summarize_levels(rows, 0.99, 100, between="size").comparison.empty
    with_probe = rows.assign(probe_draw=0)
    again = with_probe.iloc[[0]].assign(value=20.1, probe_draw=1)
    lvp = summarize_levels(pd.concat([with_probe, again], ignore_index=True), 0.99, 100)
    assert len(lvp.seeds) == 6 and lvp.variance["n_probe_pairs"].tolist() == [1, 0]
    assert lvp.variance["var_probe"].iloc[0] == pytest.approx(0.1 ** 2 / 2, rel=1e-9)
    seeds_only = pd.DataFrame({"covers": [COVERS_SEEDS, COVERS_SEEDS]})
    assert coverage_note(seeds_only) == SEEDS_COVERAGE_NOTE
    assert coverage_note(pd.DataFrame({"covers": [COVERS_SUBSAMPLES]})) == COVERAGE_NOTE
    assert coverage_note(pd.DataFrame({"x": [1]})) == COVERAGE_NOTE
    assert coverage_note(pd.DataFrame({"covers": [COVERS_SEEDS, COVERS_SUBSAMPLES]})) == (
        f"Rows with several training seeds: {SEEDS_COVERAGE_NOTE} Rows with one training seed: {COVERAGE_NOTE}")


# ---------------------------------------------------------------------------------------------------------------
# ganeval.app.score_request — the request's checks at their edges, its defaults, its notes word for word


def test_default_metrics_of_each_kind_of_real(tmp_path: Path) -> None:
    from ganeval.app.score_request import default_metrics

    assert default_metrics(np.zeros((4, 3))) == "imd,fid,kid"
    assert default_metrics(str(tmp_path / "missing.npz")) == "imd,fid,kid"
    assert default_metrics(tmp_path) == "imd,fid,kid"  # a folder: images
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a reference")
    assert default_metrics(junk) == "imd,fid,kid"


def test_parse_and_given_metrics_edges() -> None:
    from ganeval.app.score_request import given_metrics, parse_metrics

    assert parse_metrics(" imd , fid,") == {"imd": {}, "fid": {}}
    for bad in ("", " , ,"):
        with pytest.raises(ValueError, match="--metrics is empty"):
            parse_metrics(bad)
    with pytest.raises(ValueError, match="names a metric twice"):
        parse_metrics("imd,fid,imd")
    assert given_metrics("kid") == {"kid": {}} and given_metrics(["imd", "kid"]) == {"imd": {}, "kid": {}}
    assert given_metrics(("fid",)) == {"fid": {}}
    for names in (["imd", 3], [None]):
        with pytest.raises(ValueError, match="give names"):
            given_metrics(names)  # type: ignore[arg-type]
    assert given_metrics({"kid": {"subset_size": 50}, "fid": None}) == {"kid": {"subset_size": 50}, "fid": {}}
    with pytest.raises(ValueError, match="fid's options must be a mapping"):
        given_metrics({"fid": 5})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="^metrics: "):
        given_metrics({"kid": {"subset_size": -3}})


@pytest.mark.parametrize("cores, workers", [(1, 0), (2, 2), (8, 8), (9, 8), (16, 8)])
def test_default_workers_from_the_cores(monkeypatch: pytest.MonkeyPatch, cores: int, workers: int) -> None:
    import os

    from ganeval.app.score_request import default_workers

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)) if pid == 0 else set(), raising=False)
    assert default_workers(None) == workers
    assert default_workers(3) == 3 and default_workers(0) == 0


@pytest.mark.parametrize("count, workers", [(None, 0), (1, 0), (4, 4), (32, 8)])
def test_default_workers_without_affinity(monkeypatch: pytest.MonkeyPatch, count: int | None, workers: int) -> None:
    import os

    from ganeval.app.score_request import default_workers

    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: count)
    assert default_workers(None) == workers


def test_score_request_defaults() -> None:
    from ganeval.app.score_request import KID_SUBSET_DEFAULT, PIXELS_SIZE, ScoreRequest

    r = ScoreRequest("real", ["fake"])
    assert (r.runs, r.sample_size, r.confidence, r.seed, r.num_workers, r.layout) == (1, None, 0.99, 0, 0, "auto")
    assert (r.download, r.overwrite, r.plots, r.samples, r.progress, r.default_metrics) == (
        True, False, True, True, True, False)
    assert r.metrics == {"imd": {}, "fid": {}, "kid": {}} and r.metrics is not ScoreRequest("a", []).metrics
    assert (r.features, r.weights, r.dims, r.resize, r.pixels_size, r.out) == (None,) * 6
    assert PIXELS_SIZE == 32 and KID_SUBSET_DEFAULT == 1000


def test_input_files_and_outputs_not_inputs(tmp_path: Path) -> None:
    import os

    from ganeval.app.score_request import ScoreRequest, check_out_not_input, check_outputs_not_inputs, input_files

    real = tmp_path / "real"
    real.mkdir()
    fake = tmp_path / "fake.npz"
    fake.write_bytes(b"x")
    req = ScoreRequest(str(real), [f"{fake}:arr_0", np.zeros((2, 2)), "cifar10", str(tmp_path / "gone:zz"), fake])
    assert input_files(req) == [real, fake, fake]
    check_outputs_not_inputs(req)  # no outputs
    other = tmp_path / "other.npz"
    other.write_bytes(b"y")
    check_outputs_not_inputs(ScoreRequest(str(real), [str(fake)], save_ref=str(other),
                                          save_stats=str(tmp_path / "new.npz")))
    with pytest.raises(ValueError, match="--save-stats .* is an input of this command"):
        check_outputs_not_inputs(ScoreRequest(str(real), [str(fake)], save_stats=str(fake)))
    link = tmp_path / "hard.npz"
    os.link(fake, link)  # another name of the same file: still an input
    with pytest.raises(ValueError, match="--save-ref .* is an input of this command"):
        check_outputs_not_inputs(ScoreRequest(str(real), [str(fake)], save_ref=str(link)))
    check_out_not_input(ScoreRequest(str(real), [str(fake)]))
    check_out_not_input(ScoreRequest(str(real), [str(fake)], out=str(tmp_path / "results")))
    with pytest.raises(ValueError):
        check_out_not_input(ScoreRequest(str(real), [str(fake)], out=str(real / "results")))


def test_takes_and_option_refusal_words() -> None:
    from ganeval.app.score_request import option_refusal, takes
    from ganeval.features.base import REGISTRY

    inc, ident, pix, dino = REGISTRY["inception"], REGISTRY["identity"], REGISTRY["pixels"], REGISTRY["dinov2"]
    assert takes(inc, "weights", "w.pt") and not takes(ident, "weights", "w.pt")
    assert takes(inc, "resize", "clean") and not takes(inc, "resize", "pil") and takes(dino, "resize", "pil")
    assert takes(inc, "dims", 768) and not takes(inc, "dims", 1024) and takes(dino, "dims", 1024)
    assert takes(pix, "pixels_size", 16) and not takes(ident, "pixels_size", 16) and not takes(inc, "pixels_size", 1)
    assert option_refusal("dims", 768, "identity") == (
        "--dims 768 is a dimension of --features inception, clip or clip_l14_336, not of identity: drop it")
    assert option_refusal("dims", 1024, "pixels") == (
        "--dims 1024 is a dimension of --features dinov2, not of pixels: drop it")
    assert option_refusal("dims", 7, "pixels") == "--dims 7 is a dimension of no extractor: drop it"
    assert option_refusal("weights", "w.pt", "identity") == (
        "--weights is for --features inception, clip, dinov2, inception_spatial, inception_logits or clip_l14_336, "
        "not identity")
    assert option_refusal("resize", "pil", "inception") == (
        "--resize pil is not a preprocessing mode of --features inception (one of legacy_pytorch, legacy_tensorflow, "
        "clean, torchmetrics)")
    assert option_refusal("resize", "clean", "pixels") == (
        "--resize clean is not a preprocessing mode of --features pixels (it resizes nothing)")
    assert option_refusal("resize", "clean", "pixels (--real-features) or identity (--features)") == (
        "--resize clean is not a preprocessing mode of --features pixels (--real-features) or identity (--features)")
    assert option_refusal("pixels_size", 16, "identity") == (
        "--pixels-size sizes --features pixels, not identity: drop it, or use --size N to resize every image file")


def image_set(arg: str = "imgs", n: int = 4, side: int = 8) -> "InputSet":
    from ganeval.app.score_inputs import InputSet

    return InputSet(arg, arg, "array", np.zeros((n, side, side, 3), np.uint8), True)


def feature_set(arg: str = "feats", n: int = 4, dim: int = 5) -> "InputSet":
    from ganeval.app.score_inputs import InputSet

    return InputSet(arg, arg, "array", np.zeros((n, dim), np.float32), False)


def test_make_extractor_defaults_and_refusals() -> None:
    from ganeval.app.score_request import ScoreRequest, make_extractor

    ex = make_extractor(ScoreRequest("r", ["f"]), [feature_set(), feature_set("f2")])
    assert ex.name == "identity"
    pix = make_extractor(ScoreRequest("r", ["f"], features="pixels"), [image_set(), image_set("b")])
    assert pix.name == "pixels" and pix.identity()["max_size"] == 32
    assert make_extractor(ScoreRequest("r", ["f"], features="pixels", pixels_size=16), [image_set()]).identity()[
        "max_size"] == 16
    assert make_extractor(ScoreRequest("r", ["f"], features="pixels", pixels_size=0), [image_set()]).max_size is None
    with pytest.raises(ValueError, match="holds images but feats .* holds features"):
        make_extractor(ScoreRequest("r", ["f"]), [image_set(), feature_set()])
    with pytest.raises(ValueError, match="holds images but feats .* holds features"):
        make_extractor(ScoreRequest("r", ["f"]), [feature_set(), image_set()])
    with pytest.raises(ValueError, match="--features must be one of"):
        make_extractor(ScoreRequest("r", ["f"], features="pixel"), [image_set()])
    with pytest.raises(ValueError, match="--features pixels extracts features from images, but the inputs are feature"):
        make_extractor(ScoreRequest("r", ["f"], features="pixels"), [feature_set()])
    for option, value, msg in (("weights", "w.pt", "--weights is for"), ("resize", "clean", "--resize clean is not"),
                               ("dims", 64, "--dims 64 is a dimension"), ("pixels_size", 16, "--pixels-size sizes")):
        with pytest.raises(ValueError, match=msg):
            make_extractor(ScoreRequest("r", ["f"], **{option: value}), [feature_set()])
    with pytest.raises(ValueError, match="metrics.inception_score scores class logits"):
        make_extractor(ScoreRequest("r", ["f"], features="pixels", metrics={"inception_score": None}), [image_set()])
    assert make_extractor(ScoreRequest("r", ["f"], features="pixels", metrics=None),  # type: ignore[arg-type]
                          [image_set()]).name == "pixels"


def test_side_requests_route_each_option() -> None:
    from ganeval.app.score_request import ScoreRequest, side_requests

    fake, real = side_requests(ScoreRequest("r", ["f"], pixels_size=16, resize="clean"), "inception", "pixels")
    assert (fake.pixels_size, fake.resize, fake.features) == (None, "clean", None)
    assert (real.pixels_size, real.resize, real.features, real.real_weights) == (16, None, "pixels", None)
    fake, real = side_requests(ScoreRequest("r", ["f"], weights="w.pt", real_weights="r.pt"), "inception", "dinov2")
    assert (fake.weights, real.weights, fake.real_weights, real.real_weights) == ("w.pt", "r.pt", None, None)
    fake, real = side_requests(ScoreRequest("r", ["f"], weights="w.pt"), "inception", "pixels")
    assert (fake.weights, real.weights) == ("w.pt", None)
    with pytest.raises(ValueError, match="both load a weights file"):
        side_requests(ScoreRequest("r", ["f"], weights="w.pt"), "inception", "dinov2")
    with pytest.raises(ValueError, match=r"--dims 7 is a dimension of no extractor"):
        side_requests(ScoreRequest("r", ["f"], dims=7), "inception", "pixels")
    with pytest.raises(ValueError, match="^--real-weights is for --real-features inception, .* not pixels$"):
        side_requests(ScoreRequest("r", ["f"], real_weights="r.pt"), "inception", "pixels")


def test_default_kid_subset_notes() -> None:
    from ganeval.app.score_request import default_kid_subset

    m: dict = {"kid": {}, "fid": {}}
    note = default_kid_subset(m, {"REAL r": 500, "FAKE f": 800}, 1, None)
    assert note == ("note: KID's subsets hold 500 rows (the smallest set; the default is 1000): KID is comparable only "
                    "with KID at the same subset size; choose it with --option kid.subset_size=N")
    assert m == {"kid": {"subset_size": 500}, "fid": {}}
    m = {"kid": None}
    assert "hold 200 rows (--sample-size; the default" in default_kid_subset(m, {"a": 500, "b": 800}, 3, 200)
    assert m == {"kid": {"subset_size": 200}}
    m = {"kid": {}}
    assert "hold 500 rows (the smallest set;" in default_kid_subset(m, {"a": 500, "b": 800}, 3, None)
    for sizes, expected in (({"a": 999}, 999), ({"a": 2}, 2)):
        m = {"kid": {}}
        assert default_kid_subset(m, sizes, 1, None) is not None and m["kid"] == {"subset_size": expected}
    for sizes in ({"a": 1000}, {"a": 1}, {"a": 5000}):
        m = {"kid": {}}
        assert default_kid_subset(m, sizes, 1, None) is None and m == {"kid": {}}
    assert default_kid_subset({"fid": {}}, {"a": 10}, 1, None) is None
    kept = {"kid": {"subset_size": 7}}
    assert default_kid_subset(kept, {"a": 10}, 1, None) is None and kept == {"kid": {"subset_size": 7}}


def test_whole_set_note_words() -> None:
    from ganeval.app.score_request import whole_set_note

    sizes = {"REAL r": 100, "FAKE f": 300}
    assert whole_set_note(sizes, 1, 100) is None and whole_set_note(sizes, 2, None) is None
    assert whole_set_note(sizes, 2, 50) is None
    assert whole_set_note(sizes, 2, 100) == (
        "note: --sample-size 100 is every row of REAL r: each run scores the same rows of it, so the intervals cover "
        "only what else varies (IMD's probes, KID's subsets, the other sets), not other samples; for intervals over "
        "subsamples draw fewer rows, e.g. --sample-size 50")
    both = whole_set_note({"REAL r": 3, "FAKE f": 3}, 5, 3)
    assert both == ("note: --sample-size 3 is every row of REAL r and FAKE f: each run scores the same rows of them, "
                    "so the intervals cover only what else varies (IMD's probes, KID's subsets), not other samples; "
                    "for intervals over subsamples draw fewer rows, e.g. --sample-size 2")
    assert whole_set_note({"REAL r": 7, "FAKE f": 9}, 2, 9).endswith("e.g. --sample-size 3")


def test_size_hint_memory_way_out_and_chw() -> None:
    from types import SimpleNamespace

    from ganeval.app.score_request import chw, memory_way_out, size_hint

    assert size_hint(("r", (3, 32, 32), True), ("f", (3, 64, 48), True)) == (
        ", or --size 32 (every image file resized to 32×32, REAL's size)")
    for real, fake in ((("r", (1, 32, 32), True), ("f", (3, 64, 64), True)),
                       (("r", (3, 32, 32), False), ("f", (3, 64, 64), True)),
                       (("r", (3, 32, 32), True), ("f", (3, 64, 64), False)),
                       (("r", (3, 32, 48), True), ("f", (3, 64, 64), True))):
        assert size_hint(real, fake) == ""
    assert memory_way_out(SimpleNamespace(name="pixels")) == (
        "give pixels a smaller size (--pixels-size 32, the default, resizes larger images to 32²) or --features "
        "inception")
    assert memory_way_out(SimpleNamespace(name="identity")) == (
        "score fewer rows (--runs N --sample-size M) or features of fewer dimensions")
    assert chw(image_set("x", 4, 8)) == ("x", (3, 8, 8), False)
    assert chw(SimpleNamespace(arg="s", shape=(9, 16, 12, 1), stream=object())) == ("s", (1, 16, 12), True)


def test_two_spaces_and_default_metrics_for_dims() -> None:
    from types import SimpleNamespace

    from ganeval.app.score_request import ScoreRequest, default_metrics_for_dims, two_spaces

    a, b = SimpleNamespace(name="dinov2"), SimpleNamespace(name="inception")
    free = ScoreRequest("r", ["f"], metrics={"imd": {}, "vendi": {}})
    assert two_spaces(free, a, b) is None and list(free.metrics) == ["imd", "vendi"]
    with pytest.raises(ValueError, match=r"^FID needs one feature space, but REAL goes through dinov2 and FAKE through "
                                         r"inception \(--real-features\): two feature spaces; choose only "
                                         r"dimension-free metrics \(IMD, Vendi\)$"):
        two_spaces(ScoreRequest("r", ["f"], metrics={"imd": {}, "fid": {}}), a, b)
    with pytest.raises(ValueError, match="^FID, KID need one feature space"):
        two_spaces(ScoreRequest("r", ["f"], metrics={"fid": {}, "kid": {}}, default_metrics=True), a, b)
    req = ScoreRequest("r", ["f"], default_metrics=True)
    assert two_spaces(req, a, b) == ("note: REAL goes through dinov2 and FAKE through inception (--real-features): two "
                                     "feature spaces: FID, KID need one and are left out; scoring IMD")
    assert req.metrics == {"imd": {}}
    one = ScoreRequest("r", ["f"], metrics={"imd": {}, "fid": {}}, default_metrics=True)
    assert two_spaces(one, a, b) == ("note: REAL goes through dinov2 and FAKE through inception (--real-features): two "
                                     "feature spaces: FID needs one and is left out; scoring IMD")

    dims = {"REAL r": 64, "FAKE f": 128}
    chosen = ScoreRequest("r", ["f"])
    assert default_metrics_for_dims(chosen, dims) is None and list(chosen.metrics) == ["imd", "fid", "kid"]
    unknown = ScoreRequest("r", ["f"], default_metrics=True)
    assert default_metrics_for_dims(unknown, {"REAL r": 64, "FAKE f": None}) is None
    assert list(unknown.metrics) == ["imd", "fid", "kid"]
    same = ScoreRequest("r", ["f"], default_metrics=True)
    assert default_metrics_for_dims(same, {"REAL r": 64, "FAKE f": 64}) is None and len(same.metrics) == 3
    differ = ScoreRequest("r", ["f"], default_metrics=True, metrics={"imd": None, "fid": {}, "kid": {}})
    note = default_metrics_for_dims(differ, dims)
    assert note is not None and "FID" in note and list(differ.metrics) == ["imd"]


def test_make_settings_checks_and_notes() -> None:
    from ganeval.app.score_request import ScoreRequest, make_settings

    real, fake = feature_set("r", 200, 4), feature_set("f", 300, 4)
    notes: list[str] = []
    s = make_settings(ScoreRequest("r", ["f"]), real, [fake], notes)
    assert (s.runs, s.sample_size, s.subsamples, s.confidence, s.seed) == (1, 200, False, 0.99, 0)
    assert notes == ["note: KID's subsets hold 200 rows (the smallest set; the default is 1000): KID is comparable "
                     "only with KID at the same subset size; choose it with --option kid.subset_size=N"]
    assert s.metrics["kid"]["subset_size"] == 200
    notes = ["earlier"]
    s = make_settings(ScoreRequest("r", ["f"], runs=2, sample_size=200, seed=5, confidence=0.9), real, [fake], notes)
    assert (s.runs, s.sample_size, s.subsamples, s.confidence, s.seed) == (2, 200, True, 0.9, 5)
    assert notes[0] == "earlier" and notes[1].startswith("note: KID's subsets hold 200 rows (--sample-size;")
    assert notes[2].startswith("note: --sample-size 200 is every row of REAL r: each run")
    with pytest.raises(ValueError, match="--runs 2 draws subsamples"):
        make_settings(ScoreRequest("r", ["f"], runs=2), real, [fake], [])
    with pytest.raises(ValueError, match="--sample-size applies to the subsample protocol"):
        make_settings(ScoreRequest("r", ["f"], sample_size=50), real, [fake], [])
    with pytest.raises(ValueError, match="--runs"):
        make_settings(ScoreRequest("r", ["f"], runs=0), real, [fake], [])
    with pytest.raises(ValueError):
        make_settings(ScoreRequest("r", ["f"], runs=2, sample_size=250), real, [fake], [])  # above REAL's 200 rows


def test_check_inputs_feature_dimensions_and_set_dims() -> None:
    from ganeval.app.score_request import ScoreRequest, check_inputs, check_inputs_fakes, make_extractor, \
        make_settings, set_dims

    real, f4, f5 = feature_set("r", 200, 4), feature_set("f", 300, 4), feature_set("g", 300, 5)
    ex = make_extractor(ScoreRequest("r", ["f"]), [real, f4])
    assert check_inputs_fakes([f4], ex) == 4 and check_inputs_fakes([f4, f4], ex) == 4
    with pytest.raises(ValueError, match=r"^the generated sets give features of dimensions \[4, 5\] through identity: "
                                         r"give sets of one shape$"):
        check_inputs_fakes([f4, f5], ex)
    assert set_dims(real, [f4, f5], ex, ex) == {"REAL r": 4, "FAKE f": 4, "FAKE g": 5}
    settings = make_settings(ScoreRequest("r", ["f"]), real, [f4], [])
    check_inputs(real, [f4], ex, settings)
    with pytest.raises(ValueError) as err:
        check_inputs(real, [f5], ex, settings)
    assert str(err.value) == ("FID, KID need features of one dimension, but REAL r (200×4 features) gives 4 and FAKE g "
                              "(300×5 features) gives 5: choose only dimension-free metrics (IMD, Vendi) to compare "
                              "them as they are")
    one = make_settings(ScoreRequest("r", ["f"], metrics={"imd": {}, "fid": {}}), real, [f4], [])
    with pytest.raises(ValueError, match="^FID needs features of one dimension"):
        check_inputs(real, [f5], ex, one)
    free = make_settings(ScoreRequest("r", ["f"], metrics={"imd": {}}), real, [f4], [])
    check_inputs(real, [f5], ex, free)  # a dimension-free metric compares them as they are


def test_check_inputs_of_images_through_pixels() -> None:
    from ganeval.app.score_request import ScoreRequest, check_inputs, make_extractor, make_settings

    real, small = image_set("r", 60, 8), image_set("f", 60, 4)
    ex = make_extractor(ScoreRequest("r", ["f"], features="pixels"), [real, small])
    settings = make_settings(ScoreRequest("r", ["f"], metrics={"fid": {}}), real, [small], [])
    with pytest.raises(ValueError) as err:
        check_inputs(real, [small], ex, settings)
    assert str(err.value) == (
        "FID needs features of one dimension, but through pixels REAL r (60 8×8 images with 3 channels) gives 192 "
        "and FAKE f (60 4×4 images with 3 channels) gives 48: choose only dimension-free metrics (IMD, Vendi) to "
        "compare them as they are, or give sets of one shape (images of one size and channel count), or --features "
        "inception, which resizes every image")


def test_variance_components_with_a_one_run_seed() -> None:
    """A seed with a single run adds nothing within seeds (its std is NaN): MSW over the other seeds' runs alone."""
    from ganeval.results.seeds import variance_components
    from ganeval.results.summary import summarize_runs

    runs = {0: [4.0], 1: [5.0, 6.5, 5.5], 2: [7.0, 6.0]}
    rows = pd.DataFrame([{"model": "e", "train_seed": s, "run": r, "metric": "fid", "value": v}
                         for s, values in runs.items() for r, v in enumerate(values)])
    var = variance_components(summarize_runs(rows, 0.99, 100))
    expected = anova(runs)
    assert var[list(expected)].iloc[0].to_dict() == pytest.approx(expected, rel=1e-10)
    small = {s: [v / 10 for v in values] for s, values in runs.items()}  # a total variance below 1: same shares
    var = variance_components(summarize_runs(rows.assign(value=rows["value"] / 10), 0.99, 100))
    assert var[list(expected)].iloc[0].to_dict() == pytest.approx(anova(small), rel=1e-10)
    assert 0 < anova(small)["var_seed"] + anova(small)["var_subsample"] < 1 and anova(small)["share_seed"] > 0
    flat = pd.DataFrame({"model": "f", "train_seed": 0, "run": [0, 1], "metric": "fid", "value": [2.0, 2.0]})
    one = variance_components(summarize_runs(flat, 0.99, 100)).iloc[0]  # one seed, no spread: no seed variance
    assert (one["var_seed"], one["var_subsample"], one["share_subsample"]) == (0.0, 0.0, 1.0)


def test_significantly_best_keys_each_dataset_by_its_own_columns() -> None:
    """Two datasets whose comparisons disagree (a wins on mnist, b on cifar), and a group column the comparison lacks
    (`size`): each dataset's cells from its own rows."""
    from ganeval.results.tables import significantly_best

    s = tbl_summary()
    extra = s[(s.data == "cifar")].assign(model="b", mean=lambda f: f["mean"] * 0.5)
    s = pd.concat([s, extra], ignore_index=True)
    c = tbl_comparison()
    cifar = pd.DataFrame([dict(c.iloc[0], data="cifar", metric=m, better="b") for m in ("imd", "fid")])
    c = pd.concat([c, cifar], ignore_index=True)
    best = {("imd", ("mnist", "a")), ("fid", ("mnist", "a")), ("imd", ("cifar", "b")), ("fid", ("cifar", "b"))}
    assert significantly_best(s, c) == best
    sized = s.assign(size="64")  # a group column of the summary only
    assert significantly_best(sized, c) == {(m, (d, mo, "64")) for m, (d, mo) in best}
