"""(issue #56) Holm's family: one comparison is stated at its own level (never "the Holm level of its 1 tests"), and
a stand-in claim, which tests nothing, is not counted in the family's size (each test names its bug)."""

from __future__ import annotations

import pytest
from test_verdict import seed_summary

from ganeval.results import verdicts
from ganeval.results.power import pairs_needed_range
from ganeval.results.seeds import compare_seeds
from ganeval.results.tables import comparison_notes
from ganeval.results.verdict import comparison_sentences, decimals_for, signed
from ganeval.results.verdicts import (
    HOLDS,
    STAND_IN,
    Claim,
    claims_table,
    holm,
    holm_family,
)

FID = [-4.0, -2.0, -6.3]  # an undecided difference over 3 seeds
KID = [0.001, -0.002, 0.0005]


def test_one_comparison_needs_its_count_at_its_own_level() -> None:
    """Bugs: a family of 1 said as "at the Holm level of its 1 tests (0.01/1)", or counted as 2."""
    comp = compare_seeds(seed_summary({"fid": FID}), 0.99)
    [sentence] = comparison_sentences(comp, "pixels")
    r = comp.iloc[0]
    need, fewest, most = pairs_needed_range(r["diff_mean"], r["diff_std"], 3, 0.99, tests=1)
    assert (need, fewest, most) == (7, 4, None)
    assert sentence == ("b vs a: no significant difference on any metric at 99 % (3 training seeds); the largest "
                        f"effect, FD_pixels {signed(r['diff_mean'], decimals_for(r['half_width']))}, would need about "
                        "7 (4 to unbounded) training seeds to resolve (an estimate from the measured spread; the range "
                        "from its effect size's 99 % interval, which reaches zero: no number is sure to suffice)")


def test_two_comparisons_need_their_count_at_the_holm_level_of_two() -> None:
    comp = compare_seeds(seed_summary({"fid": FID, "kid": KID}), 0.99)
    [sentence] = comparison_sentences(comp, "pixels")
    r = comp[comp.metric == "fid"].iloc[0]
    need, fewest, _ = pairs_needed_range(r["diff_mean"], r["diff_std"], 3, 0.99, tests=2)
    assert f"would need about {need} ({fewest} to unbounded) training seeds to resolve at the Holm level of its 2 " \
           "tests (0.01/2)" in sentence
    assert need > 7  # stricter than one comparison's


@pytest.mark.parametrize("diffs, at", [({"fid": FID}, "t at 99% (comparison.csv: mde) finds"),
                                       ({"fid": FID, "kid": KID}, "t at the Holm level of the 2 comparisons (0.01/2; "
                                        "comparison.csv: mde_holm")])
def test_the_tables_note_states_the_detectable_effect_at_the_familys_level(diffs: dict, at: str) -> None:
    """Bug: one comparison's smallest detectable effect said (and computed) at a Holm level of 1 or 2."""
    from ganeval.results.power import paired_t_mde

    comp = compare_seeds(seed_summary(diffs), 0.99)
    intro, items = comparison_notes(comp, "pixels")
    assert at in intro
    r = comp[comp.metric == "fid"].iloc[0]
    level = 1 - 0.01 / len(diffs)
    mde = paired_t_mde(float(r["diff_std"]), 3, level)
    assert any(f"smallest detectable {mde:.3g} (3 training seeds)" in item for item in items)


def _claims(stand_p: float) -> list[Claim]:
    return [Claim("stand", "y", STAND_IN, "paired t", "any", p_value=stand_p, detectable="2.0"),
            Claim("real", "x", HOLDS, "paired t", "any", p_value=0.006, detectable="1.0")]


@pytest.mark.parametrize("stand_p", [0.001, 0.5])
def test_a_stand_in_claim_is_not_in_the_familys_size(stand_p: float) -> None:
    """Bugs: a stand-in claim (with a p-value of its own, below or above the real one's) counted in the Holm
    family: its size 2, the real p-value corrected as one of 2, the detectable effects stated at 0.01/2, the table
    saying 2 p-values."""
    assert verdicts.tests_in(_claims(stand_p)) == 1
    text = claims_table(holm(_claims(stand_p), 0.99), 0.99)
    assert "The 1 p-value of this experiment is corrected together" in text
    assert "a paired t at 99% with 80% power" in text and "Holm level" not in text
    seen: list[float] = []

    def build(confidence: float) -> list[Claim]:
        seen.append(confidence)
        return _claims(stand_p)

    out = holm_family(build, 0.99)
    assert seen == [0.99]  # a family of one: built once, its detectable effect at the confidence itself
    assert out[1].p_holm == pytest.approx(0.006, rel=1e-12) and out[1].verdict == HOLDS  # counted: 0.012 > 0.01
    assert out[0].verdict == STAND_IN and out[0].p_holm != out[0].p_holm  # NaN: it tests nothing


def test_two_tests_and_a_stand_in_make_a_family_of_two() -> None:
    claims = [*_claims(0.001), Claim("other", "z", HOLDS, "paired t", "any", p_value=0.002, detectable="1.0")]
    assert verdicts.tests_in(claims) == 2
    text = claims_table(holm(claims, 0.99), 0.99)
    assert "The 2 p-values of this experiment are corrected together" in text
    assert "a paired t at the family's Holm level 0.01/2 = 0.005" in text
    seen: list[float] = []
    holm_family(lambda c: seen.append(c) or claims, 0.99)  # type: ignore[func-returns-value]
    assert seen == [0.99, pytest.approx(0.995)]
