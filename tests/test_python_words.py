"""The Python face speaks Python (issue 45): one vocabulary across `ganeval.score`, `ganeval.evaluate`,
`ganeval.save_reference` and `ganeval.torchmetrics` (`features=`, `out=`, `fakes`; the former names kept with a
DeprecationWarning), refusals and notes naming Python arguments, never the command's flags or the app's keys, and a
bad generator refused in one line with nothing written in `out=`."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import ganeval
from ganeval.app.python_words import in_python
from ganeval.words import in_python_keys

RNG = np.random.default_rng(0)
REAL, FAKE = RNG.normal(size=(300, 6)), RNG.normal(size=(300, 6)) + 0.3


def _python_words(text: str) -> None:
    assert "\n" not in text and "--" not in text and "metrics." not in text and "results_dir" not in text, text
    assert "overwrite=true" not in text and "config 'generator/" not in text, text


def test_in_python_rewrites_flags_and_keys() -> None:
    assert in_python("--runs 10 --sample-size M (M at most the smallest set); --features pixels, --out results/x") == (
        'runs=10 sample_size=M (M at most the smallest set); features="pixels", out="results/x"')
    assert in_python("choose it with --option kid.subset_size=N") == 'choose it with metrics={"kid": {"subset_size": N}}'
    assert in_python("--features must be one of a, b") == "features must be one of a, b"  # a word is not a value
    assert in_python("but x is not one: drop --vocab") == "but x is not one: drop vocab="  # the argument to leave out
    assert in_python("drop --real-features, or give --features identity") == (
        'drop real_features=, or give features="identity"')
    assert in_python_keys("metrics.kid.subset_size=1000 exceeds sample_size=600: lower metrics.kid.subset_size") == (
        'metrics={"kid": {"subset_size": 1000}} exceeds sample_size=600: lower metrics={"kid": {"subset_size": ...}}')
    assert in_python_keys("choose another results_dir or pass overwrite=true") == (
        "choose another out or pass overwrite=True")


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"runs": 3}, "give their size with sample_size=M"),
    ({"runs": 1, "sample_size": 100}, "sample_size applies to the subsample protocol (runs > 1)"),
    ({"metrics": {"kid": {"subset_size": 5000}}}, 'lower metrics={"kid": {"subset_size": ...}}'),
    ({"batch_size": 0}, "batch_size must be at least 1"),
    ({"runs": 3, "sample_size": 400}, "sample_size=400 is larger than"),
])
def test_score_refusals_name_python_arguments(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError) as e:
        ganeval.score(REAL, FAKE, progress=False, **kwargs)
    assert words in str(e.value), str(e.value)
    _python_words(str(e.value))


def test_evaluate_refusals_name_python_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as e:
        ganeval.evaluate(REAL, FAKE, runs=2, sample_size=100, metrics={"kid": {"subset_size": 200}}, progress=False)
    assert 'metrics={"kid": {"subset_size": 200}} exceeds sample_size=100' in str(e.value)
    _python_words(str(e.value))
    ganeval.evaluate(REAL, FAKE, runs=2, sample_size=100, metrics=["fid"], progress=False, out=tmp_path)
    with pytest.raises(ValueError) as e:
        ganeval.evaluate(REAL, FAKE * 2, runs=2, sample_size=100, metrics=["fid"], progress=False, out=tmp_path)
    assert "choose another out or pass overwrite=True" in str(e.value)
    _python_words(str(e.value))


def test_score_notes_name_python_arguments(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ganeval"):
        ganeval.score(REAL, FAKE, metrics=["kid"], progress=False)
    notes = [r.getMessage() for r in caplog.records if "KID's subsets" in r.getMessage()]
    assert notes and 'metrics={"kid": {"subset_size": N}}' in notes[0]
    _python_words(notes[0])


def test_missing_inception_weights_are_one_line_with_the_pixels_way_out(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    from ganeval.features.inception import WeightsNotFoundError

    monkeypatch.delenv("GANEVAL_INCEPTION_WEIGHTS", raising=False)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    images = RNG.integers(0, 256, (20, 3, 16, 16), dtype=np.uint8)
    with pytest.raises(WeightsNotFoundError) as e:
        ganeval.score(images, images, download=False, progress=False)
    text = str(e.value)
    assert "\n" not in text and 'features="pixels"' in text and "weights=FILE" in text and "download=False" in text
    assert "--" not in text


def test_former_names_still_work_with_a_deprecation_warning(tmp_path: Path) -> None:
    new = ganeval.evaluate(REAL, fakes=FAKE, runs=2, sample_size=100, metrics=["fid"], progress=False,
                           out=tmp_path / "a")
    with pytest.warns(DeprecationWarning, match="fake= is now fakes="):
        old = ganeval.evaluate(REAL, fake=FAKE, runs=2, sample_size=100, metrics=["fid"], progress=False)
    with pytest.warns(DeprecationWarning, match="results_dir= is now out="):
        ganeval.evaluate(REAL, FAKE, runs=2, sample_size=100, metrics=["fid"], progress=False, results_dir=tmp_path / "b")
    assert new["mean"].tolist() == old["mean"].tolist()
    assert (tmp_path / "a" / "runs.csv").read_text() == (tmp_path / "b" / "runs.csv").read_text()
    with pytest.raises(ValueError, match="give fakes= only: fake= is its former name"):
        ganeval.evaluate(REAL, FAKE, fake=FAKE, progress=False)

    pytest.importorskip("torchmetrics")
    from ganeval.torchmetrics import IMD, Protocol

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Protocol(["fid"], features="identity")  # the new name: no warning
    with pytest.warns(DeprecationWarning, match="feature= is now features="):
        old_metric = Protocol(["fid"], feature="identity")
    assert old_metric._extractor.name == "identity"  # noqa: SLF001
    with pytest.warns(DeprecationWarning, match="feature_options= is now features_options="):
        Protocol(["fid"], features="pixels", feature_options={})
    assert IMD(features="identity")._extractor.name == "identity"  # noqa: SLF001

    images = RNG.integers(0, 256, (10, 3, 8, 8), dtype=np.uint8)
    with pytest.warns(DeprecationWarning, match="extractor= is now features="):
        a = ganeval.save_reference(images, stats=tmp_path / "s1.npz", extractor="pixels", progress=False)
    b = ganeval.save_reference(images, stats=tmp_path / "s2.npz", features="pixels", progress=False)
    assert np.array_equal(a.mu, b.mu)


@pytest.mark.parametrize("case", ["raises", "raises_third", "fewer", "nan_after_1000", "dtype_changes"])
def test_a_bad_generator_is_one_line_and_writes_nothing(case: str, tmp_path: Path) -> None:
    calls = {"n": 0}

    def gen(n: int, seed: int) -> np.ndarray:
        calls["n"] += 1
        if case == "raises" or (case == "raises_third" and calls["n"] >= 3):
            raise RuntimeError(f"boom on call {calls['n']}")
        if case == "fewer":
            return np.zeros((max(1, n - 5), 32, 32), np.uint8)
        if case == "nan_after_1000":
            a = np.random.default_rng(seed).random((n, 32, 32))
            a[1000:] = np.nan
            return a
        if case == "dtype_changes" and calls["n"] >= 2:
            return np.zeros((n, 32, 32), np.int32)
        return np.random.default_rng(seed).integers(0, 256, (n, 32, 32), dtype=np.uint8)

    out = tmp_path / "out"
    cache = tmp_path / "cache"
    if case == "raises_third":  # two calls (the row probe, the pool) then the third: a second score call
        ganeval.score("digits", gen, n_generated=1500, features="pixels", metrics="fid", progress=False)
    with pytest.raises(ValueError) as e:
        ganeval.score("digits", gen, n_generated=1500, features="pixels", metrics="fid", progress=False, out=out,
                      cache_dir=str(cache))
    text = str(e.value)
    assert "\n" not in text and text.startswith("generator 'fake'"), text
    assert {"raises": "RuntimeError: boom on call 1", "raises_third": "RuntimeError: boom on call 3",
            "fewer": "expected 1500 images", "nan_after_1000": "images hold 512000 NaN value(s)",
            "dtype_changes": "int32"}[case] in text, text
    _python_words(text)
    assert not out.exists() and (not cache.exists() or not any(cache.rglob("*.np*")))


def test_nan_in_protocol_pixels_images_is_said_as_nan() -> None:
    pytest.importorskip("torchmetrics")
    from ganeval.torchmetrics import Protocol

    m = Protocol(["fid"], features="pixels")
    x = torch.rand(4, 3, 8, 8)
    x[0, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"^x: images hold 1 NaN value\(s\)"):
        m.update(x, real=True)


def test_a_result_is_indexed_by_metric_with_one_key_whatever_runs() -> None:
    one = ganeval.score(REAL, FAKE, metrics=["fid", "kid"], progress=False)
    assert one["fid"] == one.to_dict()["results"][0]["value"] and isinstance(one["fid"], float)
    many = ganeval.score(REAL, {"a": FAKE, "b": FAKE + 1}, metrics=["fid"], runs=3, sample_size=200, progress=False)
    rows = many.to_dict()["results"]
    assert all(r["value"] == r["mean"] for r in rows)  # "value" at any runs; "mean" kept at runs > 1
    assert many["b", "fid"] == rows[1]["value"] and many["a", "fid"] == rows[0]["value"]
    with pytest.raises(KeyError, match="scored for 2 generated sets: give one"):
        many["fid"]  # noqa: B018
    with pytest.raises(KeyError, match="no metric 'imd'"):
        one["imd"]  # noqa: B018


def test_a_module_as_features_refuses_uint8_after_floats() -> None:
    pytest.importorskip("torchmetrics")
    from torch import nn

    from ganeval.torchmetrics import Protocol

    m = Protocol(["fid"], features=nn.Flatten())
    m.update(torch.rand(4, 1, 4, 4), real=True)
    with pytest.raises(ValueError, match=r"^x is uint8 but earlier updates were floating-point: an nn.Module"):
        m.update(torch.zeros(4, 1, 4, 4, dtype=torch.uint8), real=False)
    assert len(m.fake_features) == 0  # nothing kept
    m.update(torch.rand(4, 1, 4, 4), real=False)  # the same kind: taken


def test_an_interval_of_a_non_negative_metric_stays_at_or_above_0() -> None:
    import pandas as pd

    from ganeval.results import summarize_runs
    from ganeval.results.intervals import t_interval

    values = [0.1, 9.0, 0.2]  # a t-interval of these reaches far below 0
    rows = pd.DataFrame([{"model": "m", "metric": m, "run": r, "value": v}
                         for m in ("imd", "fid", "kid") for r, v in enumerate(values)])
    s = summarize_runs(rows, 0.99, 100).set_index("metric")
    plain = t_interval(np.array(values), 0.99)
    assert plain["ci_low"] < 0
    assert s.loc["imd", "ci_low"] == s.loc["fid", "ci_low"] == 0.0  # cut at the least value they can give
    assert s.loc["imd", "ci_high"] == plain["ci_high"] and s.loc["imd", "half_width"] == plain["half_width"]
    assert s.loc["kid", "ci_low"] == plain["ci_low"]  # KID's unbiased estimates go below 0: its interval is kept
