"""(issue #56) What a Python caller is told, and sets of different dimension: the planted bugs of the audit in
Python's words and the unaligned-data code that no test caught (each test names its bug)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ganeval


def _features(path: Path, d: int, seed: int) -> str:
    np.save(path, np.random.default_rng(seed).normal(size=(200, d)).astype(np.float32))
    return str(path)


@pytest.mark.parametrize("overwrite, said", [
    (False, 'save_ref="{ref}" exists; remove it or pass overwrite=True'),
    (True, ('save_ref="{ref}" is an input of this command ({ref}): an output never replaces an input, with or '
            "without overwrite=True; give another path")),
], ids=["exists", "overwrite"])
def test_save_ref_onto_reals_own_file_is_refused_in_pythons_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   overwrite: bool, said: str) -> None:
    """Bug: `--overwrite` left in the message a Python caller reads (`save_ref=` naming REAL's own reference)."""
    monkeypatch.chdir(tmp_path)
    ganeval.score(_features(tmp_path / "real.npy", 8, 0), save_ref="ref.npz", progress=False)
    fake = _features(tmp_path / "fake.npy", 8, 1)
    with pytest.raises(ValueError) as got:
        ganeval.score("ref.npz", fake, save_ref="ref.npz", overwrite=overwrite, progress=False)
    assert str(got.value) == said.format(ref="ref.npz")
    assert "--" not in str(got.value)


def test_python_error_says_a_failed_download_by_default() -> None:
    """Bug: `python_error`'s `download` defaulting to False (every caller then told downloads were disabled)."""
    from ganeval.app.python_words import PY_WORDS, python_error
    from ganeval.features.missing_weights import weights_message
    from ganeval.features.inception import WeightsNotFoundError

    missing = WeightsNotFoundError("FID Inception weights not found")
    said = str(python_error(missing))
    assert said == weights_message(missing, True, PY_WORDS) and "the download failed (offline?)" in said
    assert "download disabled" not in said
    assert "download disabled (download=False)" in str(python_error(missing, download=False))


def test_the_left_out_note_is_recorded_in_pythons_words(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Bug: the note on the metrics left out (sets of different dimension) recorded in the command's words (REAL,
    FAKE) for a Python caller, though logged in Python's."""
    real, fake = _features(tmp_path / "r8.npy", 8, 0), _features(tmp_path / "f16.npy", 16, 1)
    with caplog.at_level(logging.WARNING):
        result = ganeval.score(real, fake, runs=2, sample_size=100, progress=False)
    assert result is not None
    note = result.record.left_out
    assert note == (f"note: real {real} has 8 features and fakes {fake} has 16: FID, KID need one dimension and are "
                    "left out; scoring IMD")
    assert note in caplog.text and result.to_dict()["left_out"] == note


def test_dims_unknown_when_any_set_waits_for_its_dimension() -> None:
    """Bug: `dims_unknown` true only when *every* dimension is unknown (`all` for `any`): one set whose dimension
    is known only after extraction already lets the default metrics narrow late."""
    from ganeval.app.generators import dims_unknown
    from ganeval.protocol import Settings

    with pytest.warns(UserWarning, match="KID's subsets"):
        metrics = Settings(runs=2, sample_size=10, progress=False).metrics
    plan = SimpleNamespace(choices={}, settings=SimpleNamespace(metrics=metrics))
    shape = (8,)
    one = {"data": {"real": (shape, 8), "gan": (shape, None)}}
    assert dims_unknown(plan, one)  # type: ignore[arg-type]
    assert dims_unknown(plan, {"data": {"real": (shape, None), "gan": (shape, None)}})  # type: ignore[arg-type]
    assert not dims_unknown(plan, {"data": {"real": (shape, 8), "gan": (shape, 16)}})  # type: ignore[arg-type]
    plan.choices = {"metrics": "imd,fid"}  # chosen metrics are refused, never narrowed
    assert not dims_unknown(plan, one)  # type: ignore[arg-type]


def test_a_vec_header_of_dimension_zero_is_refused(tmp_path: Path) -> None:
    """Bug: a `.vec` header "N 0" read as N words of no values."""
    from ganeval.data.wordvectors import WordVectorsError, read_word_vectors

    (tmp_path / "z.vec").write_text("2 0\na\nb\n")
    with pytest.raises(WordVectorsError, match=r"z\.vec: line 1: .*dimension 0"):
        read_word_vectors(tmp_path / "z.vec")
