"""Sweep of `ganeval.app.scoring` (and the score app's helpers): exact values of `ganeval.score`'s result, its
defaults as recorded, each argument check's least legal and first illegal value, `stage_times`, `ScoreResult`'s
lookup and views, the save-only and moments-only paths' edges."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ganeval
from ganeval.app.scoring import stage_times
from ganeval.metrics import frechet_distance


def _sets() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    real = rng.normal(size=(40, 4)).astype(np.float32)
    return real, (real + 0.3).astype(np.float32), (real * 1.2).astype(np.float32)


def _fd(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x.astype(np.float64), y.astype(np.float64)
    return float(frechet_distance(x.mean(0), np.cov(x, rowvar=False), y.mean(0), np.cov(y, rowvar=False)))


def test_defaults_are_recorded_in_the_config() -> None:
    """runs=1, seed=0, confidence=0.99, overwrite=False, plots=True, progress=True when not given."""
    real, a, _ = _sets()
    r = ganeval.score(real, a, metrics="fid")
    c = r.record.config
    assert c["runs"] == 1 and c["full_sets"] is True and c["sample_size"] is None
    assert c["seed"] == 0 and c["confidence"] == 0.99
    assert c["overwrite"] is False and c["plots"] is True and c["progress"] is True
    assert "size" not in c and "layout" not in c and "vocab" not in c and "real_features" not in c
    assert r.record.command is None
    assert list(r.summary["confidence"]) == [0.99]
    assert r.fakes[0].name == "fake" and r.extracted == 0 and r.from_cache == 0
    assert r.record.dims == {"real": 4, "fake": 4}
    assert r["fid"] == pytest.approx(_fd(real, a), rel=1e-5)


def test_getitem_picks_the_named_set_and_refuses_ambiguity() -> None:
    real, a, b = _sets()
    r = ganeval.score(real, {"a": a, "b": b}, metrics="fid", progress=False)
    va, vb = r["a", "fid"], r["b", "fid"]
    assert type(va) is float and type(vb) is float
    assert va == pytest.approx(_fd(real, a), rel=1e-5) and vb == pytest.approx(_fd(real, b), rel=1e-5)
    assert abs(va - vb) > 0.01
    with pytest.raises(KeyError, match=r"2 generated sets: give one, e.g. r\['a', 'fid'\]"):
        r["fid"]
    with pytest.raises(KeyError, match="no metric 'kid'"):
        r["kid"]
    with pytest.raises(KeyError, match="no generated set 'c'.*'a', 'b'"):
        r["c", "fid"]
    assert r.record.dims == {"real": 4, "a": 4, "b": 4}
    assert [f.name for f in r.fakes] == ["a", "b"]


def test_getitem_one_set_and_imd_se() -> None:
    """One set: the metric alone is enough; IMD's value carries its se, FID's is a plain float."""
    real, a, _ = _sets()
    r = ganeval.score(real, {"mine": a}, metrics="imd,fid", progress=False)
    fid_v = r["fid"]
    assert type(fid_v) is float and fid_v == r["mine", "fid"]
    imd_v = r["imd"]
    assert hasattr(imd_v, "se") and math.isfinite(imd_v.se)
    row = r.summary[r.summary["metric"] == "imd"].iloc[0]
    assert float(imd_v) == float(row["mean"])


def test_unlabelled_list_is_named_fake_i() -> None:
    real, a, b = _sets()
    r = ganeval.score(real, [a, b], metrics="fid", progress=False)
    assert [f.name for f in r.fakes] == ["fake_0", "fake_1"]
    assert r["fake_1", "fid"] == pytest.approx(_fd(real, b), rel=1e-5)


def test_stage_times_exact() -> None:
    plan = SimpleNamespace(stage_seconds={"hash": 1.5, "features": 2.0, "runs": 3.0, "full sets": 0.25,
                                          "writing": 4.0})
    assert stage_times(plan) == {"scan": 0.0, "hash": 1.5, "features": 2.0, "metrics": 3.25, "writing": 4.0}
    assert stage_times(SimpleNamespace(stage_seconds={}), 7.0) == {
        "scan": 7.0, "hash": 0.0, "features": 0.0, "metrics": 0.0, "writing": 0.0}
    assert stage_times(SimpleNamespace(stage_seconds={"full sets": 0.5})) == {
        "scan": 0.0, "hash": 0.0, "features": 0.0, "metrics": 0.5, "writing": 0.0}
    assert stage_times(SimpleNamespace(stage_seconds={"runs": 0.5})) == {
        "scan": 0.0, "hash": 0.0, "features": 0.0, "metrics": 0.5, "writing": 0.0}


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"batch_size": 0}, "batch_size must be at least 1, got 0"),
    ({"num_workers": -1}, "num_workers must be at least 0, got -1"),
    ({"size": 0}, "size must be at least 1, got 0"),
    ({"pixels_size": -1}, "pixels_size must be at least 0"),
])
def test_first_illegal_argument_is_refused(kwargs: dict, words: str) -> None:
    real, a, _ = _sets()
    with pytest.raises(ValueError, match=words):
        ganeval.score(real, a, metrics="fid", progress=False, **kwargs)


def test_least_legal_arguments_are_taken() -> None:
    """batch_size=1, num_workers=0, pixels_size=0 pass their checks; size=1 passes its own (then an in-memory
    input is refused for another reason)."""
    real, a, _ = _sets()
    with pytest.raises(ValueError, match="size resizes image files") as e:
        ganeval.score(real, a, metrics="fid", progress=False, size=1)
    assert "at least" not in str(e.value)
    with pytest.raises(ValueError, match="pixels_size sizes") as e:
        ganeval.score(real, a, metrics="fid", progress=False, pixels_size=0)
    assert "at least" not in str(e.value)
    r = ganeval.score(real, a, metrics="fid", progress=False, batch_size=1, num_workers=0)
    assert r.record.config["batch_size"] == 1
    assert r["fid"] == pytest.approx(_fd(real, a), rel=1e-5)


def test_subsample_protocol_records_sample_size_and_seconds_per_run() -> None:
    real, a, _ = _sets()
    r = ganeval.score(real, a, metrics="fid", runs=2, sample_size=30, progress=False, layout="nhwc",
                      command="ganeval-score x")
    c = r.record.config
    assert c["runs"] == 2 and c["sample_size"] == 30 and c["full_sets"] is False and c["layout"] == "nhwc"
    assert r.record.command == "ganeval-score x"
    assert r.record.seconds_per_run == pytest.approx(r.stages["metrics"] / 2, rel=1e-9)
    assert list(r.summary["n_runs"]) == [2] and list(r.summary["sample_size"]) == [30]


def test_save_only_result(tmp_path: Path) -> None:
    real, _, _ = _sets()
    ref = tmp_path / "ref.npz"
    r = ganeval.score(real, save_ref=str(ref), progress=False)
    assert r is not None and r.fakes == [] and r.saved == [ref] and ref.is_file()
    assert r.extracted == 0 and r.from_cache == 0 and r.stages == {}
    assert r.lines == [] and r.sentences == []
    assert repr(r) == f"ScoreResult(nothing scored; wrote {ref})"
    assert r._repr_html_() == f"<p>ScoreResult(nothing scored; wrote {ref})</p>"
    with np.load(ref) as z:
        assert np.allclose(z["mu"], real.astype(np.float64).mean(0), atol=1e-6) if "mu" in z else True


def test_save_ref_and_stats_same_file_refused(tmp_path: Path) -> None:
    real, _, _ = _sets()
    p = str(tmp_path / "same.npz")
    with pytest.raises(Exception, match="name the same file"):
        ganeval.score(real, save_ref=p, save_stats=p, progress=False)
    two = ganeval.score(real, save_ref=str(tmp_path / "r.npz"), save_stats=str(tmp_path / "s.npz"), progress=False)
    assert two.saved == [tmp_path / "r.npz", tmp_path / "s.npz"]


def test_nothing_to_do_refused() -> None:
    real, _, _ = _sets()
    with pytest.raises(ValueError, match="give at least one fakes set"):
        ganeval.score(real, progress=False)


@pytest.fixture()
def stats(tmp_path: Path) -> Path:
    real, _, _ = _sets()
    p = tmp_path / "stats.npz"
    ganeval.score(real, save_stats=str(p), progress=False)
    return p


def test_moments_only_exact_and_defaults(stats: Path) -> None:
    real, a, b = _sets()
    r = ganeval.score(stats, {"a": a, "b": b[:30]}, progress=False)
    assert r.record.config["reference"]["moments_only"] is True and r.record.config["runs"] == 1
    assert r.record.config["sample_size"] is None and r.record.config["full_sets"] is True
    assert r.extracted == 0 and r.from_cache == 0 and r.extras == {}
    assert r.record.command is None
    assert list(r.summary["metric"]) == ["fid", "fid"]
    assert r["a", "fid"] == pytest.approx(_fd(real, a), rel=1e-4)
    assert r["b", "fid"] == pytest.approx(_fd(real, b[:30]), rel=1e-4)


def test_moments_only_protocol(stats: Path) -> None:
    real, a, b = _sets()
    r = ganeval.score(stats, {"a": a, "b": b[:30]}, runs=2, sample_size=30, progress=False)
    assert r.record.config["sample_size"] == 30 and r.record.config["full_sets"] is False
    assert r.record.seconds_per_run == pytest.approx(r.stages["metrics"] / 2, rel=1e-9)
    assert list(r.summary["n_runs"]) == [2, 2]


@pytest.mark.parametrize(("fakes", "kwargs", "words"), [
    (lambda a: a, {"runs": 2}, "--runs 2 draws subsamples|runs=2 draws subsamples"),
    (lambda a: a, {"sample_size": 10}, "applies to the subsample protocol"),
    (lambda a: a[:1], {}, "has 1 rows: FID needs at least 2"),
    (lambda a: a[:5], {"runs": 2, "sample_size": 6}, "has 5 rows: FID needs at least 2 and .*6 at most 5"),
    (lambda a: a, {"runs": 0, "sample_size": 3}, "runs"),
])
def test_moments_only_refusals(stats: Path, fakes, kwargs: dict, words: str) -> None:  # type: ignore[no-untyped-def]
    _, a, _ = _sets()
    with pytest.raises(ValueError, match=words):
        ganeval.score(stats, fakes(a), progress=False, **kwargs)


def test_moments_only_least_legal_sizes(stats: Path) -> None:
    """Two rows are enough; sample_size equal to the smallest set is taken; runs=1 is legal."""
    real, a, _ = _sets()
    r = ganeval.score(stats, a[:2], progress=False)
    assert r["fid"] == pytest.approx(_fd(real, a[:2]), rel=1e-4)
    r2 = ganeval.score(stats, a[:5], runs=2, sample_size=5, progress=False)
    assert list(r2.summary["sample_size"]) == [5]
    # the full sets: every run of a 5-row sample of 5 rows is the set itself
    assert r2["fid"] == pytest.approx(_fd(real, a[:5]), rel=1e-4)


def test_moments_only_refuses_save(stats: Path, tmp_path: Path) -> None:
    _, a, _ = _sets()
    with pytest.raises(ValueError, match="holds moments only"):
        ganeval.score(stats, a, save_stats=str(tmp_path / "x.npz"), progress=False)
    with pytest.raises(ValueError, match="holds moments only"):
        ganeval.score(stats, a, save_ref=str(tmp_path / "y.npz"), progress=False)


def test_score_result_views_with_fakes() -> None:
    real, a, _ = _sets()
    r = ganeval.score(real, {"a": a}, metrics="fid", progress=False)
    assert repr(r) == str(r) and r.lines and r.lines[0].startswith("a  ")
    assert r._repr_html_().startswith("<") and "<p>ScoreResult" not in r._repr_html_()
    assert isinstance(r.sentences, list)
    t = r.table()
    assert t.equals(r.summary) and t is not r.summary


# ---- ganeval.app.score_inputs ----

from ganeval.app import score_inputs as si  # noqa: E402


def _set(arg: str, name: str | None = None, labelled: bool = False) -> si.InputSet:
    return si.InputSet(arg, name or arg, "array", np.zeros((3, 2), np.float32), False, labelled=labelled)


def test_inputset_shape_dtype_len_named() -> None:
    s = si.InputSet("x", "x", "array", np.zeros((5, 3), np.float16), False)
    assert s.shape == (5, 3) and len(s) == 5 and s.dtype == np.float16 and s.labelled is False
    assert s.named(True) == "REAL x" and s.named(False) == "FAKE x"
    s.said = "fakes['x']"
    assert s.named(True) == "fakes['x']"
    st = si.InputSet("d", "d", "folder", None, True, stream=SimpleNamespace(shape=(7, 3, 8, 8)))
    assert st.shape == (7, 3, 8, 8) and len(st) == 7 and st.dtype == np.uint8


def test_given_input_arrays_and_tensors() -> None:
    import torch

    s = si.given_input(np.zeros((4, 3), np.float32), "lab")
    assert (s.arg, s.name, s.source, s.images, s.labelled) == ("lab", "lab", "array", False, False)
    t = si.given_input(torch.ones(4, 3), "t")
    assert isinstance(t.array, np.ndarray) and t.array.shape == (4, 3) and t.images is False
    nhwc = si.given_input(np.zeros((2, 8, 8, 3), np.uint8), "im")
    assert nhwc.images is True and nhwc.shape == (2, 8, 8, 3)
    with pytest.raises(ValueError, match="lab is a dict"):
        si.given_input({"a": 1}, "lab")
    with pytest.raises(ValueError, match="in-memory input"):
        si.given_input(np.zeros((4, 3)), "lab", size=8)
    with pytest.raises(ValueError, match="--vocab"):
        si.given_input(np.zeros((4, 3)), "lab", vocab=5)


def test_given_input_generators_default_seed_and_n() -> None:
    seen: list[tuple[int, int]] = []

    def fn(n: int, seed: int) -> np.ndarray:
        seen.append((n, seed))
        return np.arange(n * 3, dtype=np.float32).reshape(n, 3)

    s = si.given_input(fn, "g", n_generated=2)
    assert seen[-1] == (2, 0) and s.source == "generator" and s.shape == (2, 3) and s.images is False

    class Sampler:  # not callable itself: its `sample` is used
        def sample(self, n: int, seed: int) -> np.ndarray:
            seen.append((n, seed))
            return np.ones((n, 2), np.float32)

    s2 = si.given_input(Sampler(), "h", n_generated=3, seed=5)
    assert seen[-1] == (3, 5) and s2.shape == (3, 2)
    for bad in (None, 1, True, 2.0):
        with pytest.raises(ValueError):
            si.given_input(fn, "g", n_generated=bad)  # type: ignore[arg-type]


def test_fake_inputs_forms() -> None:
    a = np.zeros((3, 2))
    assert si.fake_inputs(a)[0] == [None] and si.fake_inputs(a)[2] == ["fakes"]
    labels, sets, said = si.fake_inputs([a, a])
    assert labels == [None, None] and len(sets) == 2 and said == ["fakes[0]", "fakes[1]"]
    labels, _, said = si.fake_inputs({"x": a, "y": a})
    assert labels == ["x", "y"] and said == ["fakes['x']", "fakes['y']"]
    for bad in ({"": a}, {3: a}, {"ok": a, 4: a}):
        with pytest.raises(ValueError, match="non-empty strings"):
            si.fake_inputs(bad)


@pytest.mark.parametrize(("arr", "images"), [
    (np.zeros((3, 5), np.int64), False),
    (np.zeros((3, 5), np.float32), False),
    (np.zeros((2, 8, 8), np.uint8), True),
    (np.zeros((2, 3, 8, 8), np.uint8), True),
    (np.linspace(0.0, 1.0, 2 * 3 * 8 * 8).reshape(2, 3, 8, 8).astype(np.float32), True),
    (np.full((2, 8, 8), 0.5, np.float32), True),
])
def test_classify_images_or_features(arr: np.ndarray, images: bool) -> None:
    s = si.classify(si.InputSet("a", "a", "array", arr, not images))
    assert s.images is images


@pytest.mark.parametrize(("arr", "words"), [
    (np.zeros((0, 4), np.float32), "a is empty"),
    (np.zeros((3, 2), bool), "features must be numbers"),
    (np.full((2, 3, 8, 8), 1.5, np.float32), "float array"),
    (np.full((2, 3, 8, 8), -0.25, np.float32), "float array"),
    (np.linspace(0.0, 1.001, 2 * 64).reshape(2, 8, 8).astype(np.float32), "float array"),
    (np.zeros((2, 3, 8, 8, 1), np.uint8), "neither N×D features nor images"),
    (np.zeros((3,), np.float32), "neither N×D features nor images"),
    (np.zeros((2, 3, 8, 8), np.int32), "neither N×D features nor images"),
])
def test_classify_refusals(arr: np.ndarray, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        si.classify(si.InputSet("a", "a", "array", arr, False))


def test_label_sets_rules() -> None:
    s = [_set("p/a", "a"), _set("q/a", "a")]
    si.label_sets(s)
    assert [x.name for x in s] == ["p/a", "q/a"]
    s = [_set("p/real", "real"), _set("b")]
    si.label_sets(s)
    assert [x.name for x in s] == ["p/real", "b"]
    s = [_set("x", "a"), _set("y", "b")]
    si.label_sets(s)
    assert [x.name for x in s] == ["a", "b"]
    kept = [_set("p/a", "a", labelled=True), _set("q/b", "b", labelled=True)]
    si.label_sets(kept)
    assert [x.name for x in kept] == ["a", "b"]
    with pytest.raises(ValueError, match="FAKE x is given 2 times"):
        si.label_sets([_set("x"), _set("x")])
    with pytest.raises(ValueError, match="labelled 'real'"):
        si.label_sets([_set("p", "real", labelled=True)])
    with pytest.raises(ValueError, match="two generated sets are labelled 'a'"):
        si.label_sets([_set("p", "a", labelled=True), _set("q", "a", labelled=True)])
    mixed = [_set("p", "a", labelled=True), _set("q", "a")]
    si.label_sets(mixed)
    assert [x.name for x in mixed] == ["a", "q"]


def test_reference_moments_choice() -> None:
    m1, m2 = object(), object()
    ref = SimpleNamespace(moments={"inception": m1})
    assert si.reference_moments(ref, SimpleNamespace(name="inception"), "r") is m1  # type: ignore[arg-type]
    assert si.reference_moments(ref, SimpleNamespace(name="identity"), "r") is m1  # type: ignore[arg-type]
    with pytest.raises(si.ReferenceError, match="give --features inception"):
        si.reference_moments(ref, SimpleNamespace(name="dinov2"), "r")  # type: ignore[arg-type]
    two = SimpleNamespace(moments={"inception": m1, "dinov2": m2})
    assert si.reference_moments(two, SimpleNamespace(name="dinov2"), "r") is m2  # type: ignore[arg-type]
    with pytest.raises(si.ReferenceError, match="inception or dinov2"):
        si.reference_moments(two, SimpleNamespace(name="identity"), "r")  # type: ignore[arg-type]


def test_precomputed_and_fake_reference_refusal() -> None:
    s = _set("x")
    assert si.precomputed(s) is False
    s.reference = SimpleNamespace(features=np.zeros((2, 2)), moments_only=False, layout="ganeval")
    assert si.precomputed(s) is True
    si.refuse_fake_references([s])
    s.reference = SimpleNamespace(features=None, moments_only=True, layout="pytorch-fid")
    assert si.precomputed(s) is False
    with pytest.raises(si.ReferenceError, match="pytorch-fid statistics file"):
        si.refuse_fake_references([_set("y"), s])


def test_same_made() -> None:
    full = "ab" * 32
    assert si.same_made("dims", 2048, 2048, {}) is True
    assert si.same_made("dims", 2048, 768, {}) is False
    assert si.same_made("weights", full, full, {}) is True
    assert si.same_made("weights", full[:16], full, {}) is True
    assert si.same_made("weights", full[:16], full, {"weights_sha256": full}) is True
    assert si.same_made("weights", full[:16], full, {"weights_sha256": "cd" * 32}) is False
    assert si.same_made("weights", "cd" * 8, full, {}) is False
    assert si.same_made("name", full[:16], full, {}) is False


def test_score_signature_defaults_reach_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every default of `ganeval.score` as the request carries it (score_sets replaced by a capture)."""
    from ganeval.app import scoring

    got: list = []
    monkeypatch.setattr(scoring, "score_sets", lambda request: got.append(request))
    real, a, _ = _sets()
    scoring.score(real, a, metrics="fid")
    q = got[0]
    assert (q.runs, q.sample_size, q.seed, q.confidence, q.layout) == (1, None, 0, 0.99, "auto")
    assert q.download is True and q.overwrite is False and q.plots is True and q.samples is True
    assert q.progress is True and q.command == "" and q.default_metrics is False
    assert q.out is None and q.labels == [None] and q.said == ["fakes"]
    scoring.score(real, {"k": a}, out=Path("some/where"))
    assert got[1].out == "some/where" and got[1].default_metrics is True and got[1].labels == ["k"]


def test_sentences_name_the_feature_space() -> None:
    rng = np.random.default_rng(3)
    real = rng.normal(size=(60, 4)).astype(np.float32)
    r = ganeval.score(real, {"a": real + 0.05, "b": real * 2.0}, metrics="fid", runs=3, sample_size=40,
                      progress=False)
    assert len(r.sentences) == 1 and r.sentences[0].startswith("a vs b: a better on FD_features")
    assert str(r) == "\n".join([*r.lines, *r.sentences])


def test_imd_over_runs_is_a_plain_float() -> None:
    real, a, _ = _sets()
    r = ganeval.score(real, a, metrics="imd", runs=2, sample_size=30, progress=False)
    assert type(r["imd"]) is float


def test_protocol_fills_options_and_refuses_departures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Options left out take the protocol's values; one given otherwise is refused; REAL must be a path or name."""
    from ganeval.app import scoring

    got: list = []
    monkeypatch.setattr(scoring, "score_sets", lambda request: got.append(request))
    _, a, _ = _sets()
    scoring.score("cifar10", a, metrics="fid", protocol="cifar10_test_10k")
    q = got[0]
    assert (q.features, q.dims, q.resize, q.seed, q.protocol) == (
        "inception", 2048, "legacy_tensorflow", 0, "cifar10_test_10k")
    scoring.score("cifar10", a, metrics="fid", protocol="cifar10_test_10k", dims=2048, seed=0)
    assert got[1].dims == 2048
    with pytest.raises(ValueError, match="fixes seed=0"):
        scoring.score("cifar10", a, metrics="fid", protocol="cifar10_test_10k", seed=1)
    with pytest.raises(ValueError, match="fixes features.dims=2048"):
        scoring.score("cifar10", a, metrics="fid", protocol="cifar10_test_10k", dims=768)
    with pytest.raises(ValueError, match="fixes the real data"):
        scoring.score(np.zeros((3, 2)), a, metrics="fid", protocol="cifar10_test_10k")
    assert len(got) == 2


# ---- ganeval.app.score_print / ganeval.app.protocols ----

from ganeval.app import score_print as spr  # noqa: E402


def test_number_and_pd_notna() -> None:
    assert spr.number(None) is None and spr.number(float("nan")) is None
    assert spr.number(2) == 2.0 and type(spr.number(2)) is float and spr.number(0.0) == 0.0
    assert spr.pd_notna(None) is False and spr.pd_notna(float("nan")) is False
    assert spr.pd_notna(0.0) is True and spr.pd_notna(3) is True


@pytest.mark.parametrize(("noise", "value", "want"), [
    (2.3, 10.0, 0), (0.04, 1.0, 2), (0.5, 1.0, 1), (1.0, 1.0, 0), (10.0, 5.0, 0),
    (0.0, 39.25, 4), (-1.0, 39.25, 4), (float("nan"), 0.012, 7), (float("inf"), 123456.0, 0),
    (0.0, 0.0, 6), (0.0, 1.0, 5), (0.0, -250.0, 3), (0.0, 3e6, 0),
])
def test_significant_decimals(noise: float, value: float, want: int) -> None:
    assert spr.significant_decimals(noise, value) == want


def test_imd_and_kid_texts() -> None:
    assert spr.imd_text(39.251234, None, 8) == "39.2512"
    assert spr.imd_text(39.251234, 0.053, 8) == "39.25 ± 0.053  (the standard error of its 8 random probes)"
    assert spr.kid_std_text(0.01234, 10, {"real": 10, "fake": 10}) == (
        "  (one subset = both whole sets of 10: no spread over subsets to show)")
    assert spr.kid_std_text(0.01234, 10, {"real": 10, "fake": 11}) == "  (std over subsets 0.0123)"
    assert spr.kid_std_text(0.01234, 10, {"real": 12, "fake": 11}) == "  (std over subsets 0.0123)"


def _timed(stages: dict, extracted: int = 0, from_cache: int = 0) -> SimpleNamespace:
    return SimpleNamespace(stages=stages, extracted=extracted, from_cache=from_cache)


def test_time_line() -> None:
    st = {"scan": 0.04, "features": 2.0, "metrics": 0.5}
    assert spr.time_line(_timed(st, extracted=100), 3.0) == (
        "ganeval-score: 3.0 s in all: scan 0.0 s, features 2.0 s (100 images at 50.0 images/s), metrics 0.5 s")
    assert spr.time_line(_timed({"features": 0.0}, extracted=100), 1.0) == "ganeval-score: 1.0 s in all: features 0.0 s"
    assert spr.time_line(_timed({"features": 1.0}, from_cache=7), 1.0) == (
        "ganeval-score: 1.0 s in all: features 1.0 s (from the cache)")
    assert spr.time_line(_timed({"features": 1.0}), 1.0) == "ganeval-score: 1.0 s in all: features 1.0 s"
    assert spr.time_line(_timed({"features": 0.0}, extracted=3, from_cache=7), 1.0) == (
        "ganeval-score: 1.0 s in all: features 0.0 s")
    assert spr.time_line(_timed({"writing": 1.0}, extracted=5, from_cache=7), 2.0) == (
        "ganeval-score: 2.0 s in all: writing 1.0 s")


def test_normal_value() -> None:
    from ganeval.app.protocols import normal_value

    assert normal_value("features.resize", True) == "legacy_pytorch"
    assert normal_value("features.resize", "clean") == "clean"
    assert normal_value("features.resize", False) is False
    assert normal_value("features.dims", True) is True
    assert normal_value("seed", 1) == 1


def test_plain_lines_pad_names_exactly() -> None:
    real, a, b = _sets()
    r = ganeval.score(real, {"a": a, "bbbbbbb": b}, metrics="fid", progress=False)
    va, vb = r["a", "fid"], r["bbbbbbb", "fid"]
    assert r.lines == [f"a        FD_features {va:.6g}", f"bbbbbbb  FD_features {vb:.6g}"]


def test_plain_lines_pad_labels_to_the_longest() -> None:
    real, a, b = _sets()
    r = ganeval.score(real, {"a": a, "bbbbbbb": b}, metrics={"fid": {}, "kid": {"subset_size": 20, "subsets": 5}},
                      progress=False)
    assert [line[:21] for line in r.lines] == ["a        FD_features ", "a        KID         ",
                                                "bbbbbbb  FD_features ", "bbbbbbb  KID         "]
    assert r.lines[1].endswith(f"  (std over subsets {r.extras[('a', 'kid')]['std']:.3g})")


# ---- ganeval.app.score (the command) ----


def _cli_capture(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str], result: object = None
                 ) -> tuple[int, dict]:
    from ganeval.app import scoring
    from ganeval.app.score import run

    real, a, _ = _sets()
    np.save(tmp_path / "r.npy", real)
    np.save(tmp_path / "f.npy", a)
    got: dict = {}

    def fake_score(*args, **kwargs):  # type: ignore[no-untyped-def]
        got.update(kwargs, args=args)
        if isinstance(result, Exception):
            raise result
        return result

    monkeypatch.setattr(scoring, "score", fake_score)
    return run([str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), *argv]), got


def test_cli_defaults_reach_score(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ganeval.app.score_request import DefaultMetrics

    rc, got = _cli_capture(monkeypatch, tmp_path, [])
    assert rc == 0
    assert (got["runs"], got["confidence"], got["seed"], got["sample_size"]) == (1, 0.99, 0, None)
    assert got["download"] is True and got["plots"] is True and got["samples"] is True and got["progress"] is True
    assert isinstance(got["metrics"], DefaultMetrics)
    assert got["command"].startswith("ganeval-score ")


def test_cli_flags_reach_score(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ganeval.app.score_request import DefaultMetrics

    rc, got = _cli_capture(monkeypatch, tmp_path, ["--no-download", "--no-plots", "--no-samples", "--quiet",
                                                   "--metrics", "fid,kid", "--option", "kid.subset_size=20"])
    assert rc == 0
    assert got["download"] is False and got["plots"] is False and got["samples"] is False and got["progress"] is False
    assert not isinstance(got["metrics"], DefaultMetrics) and list(got["metrics"]) == ["fid", "kid"]
    assert got["metrics"]["kid"] == {"subset_size": 20}


def test_cli_refusal_exits_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                             ) -> None:
    rc, _ = _cli_capture(monkeypatch, tmp_path, ["--quiet"], result=ValueError("no good"))
    assert rc == 2 and "ganeval-score: no good" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "words"), [
    ("kid", "write METRIC.OPTION=VALUE"), ("kid=3", "write METRIC.OPTION=VALUE"),
    ("kid.=3", "write METRIC.OPTION=VALUE"), ("fid.x=3", r"fid is not among --metrics \(kid\)"),
])
def test_parse_option_refusals(text: str, words: str) -> None:
    from ganeval.app.score import parse_option

    with pytest.raises(ValueError, match=words):
        parse_option(text, {"kid": {}})


def test_parse_option_reads_yaml_scalars() -> None:
    from ganeval.app.score import parse_option

    m: dict = {"kid": {}}
    parse_option("kid.subset_size=20", m)
    parse_option(" kid.subsets = 3", m)
    assert m == {"kid": {"subset_size": 20, "subsets": 3}}


def test_real_weights_need_real_features_and_rank_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """real_weights without real_features is refused at once; a torchrun rank other than 0 shows no progress."""
    from ganeval.app import scoring

    got: list = []
    monkeypatch.setattr(scoring, "score_sets", lambda request: got.append(request))
    real, a, _ = _sets()
    with pytest.raises(ValueError):
        scoring.score(real, a, metrics="fid", real_weights="w.pt")
    assert got == []
    scoring.score(real, a, metrics="fid", real_weights="w.pt", real_features="identity")
    assert got[0].real_weights == "w.pt" and got[0].progress is True
    monkeypatch.setattr("ganeval.features.distributed.is_main", lambda: False)
    scoring.score(real, a, metrics="fid")
    assert got[1].progress is False


def test_said_only_for_in_memory_fakes(tmp_path: Path) -> None:
    """A message names an in-memory FAKE as the caller wrote it (fakes['m']); a path FAKE keeps its path."""
    real, a, b = _sets()
    np.save(tmp_path / "p.npy", b)
    r = ganeval.score(real, {"m": a, "q": tmp_path / "p.npy"}, metrics="fid", progress=False)
    assert [f.said for f in r.fakes] == ["fakes['m']", None]
    assert [f.labelled for f in r.fakes] == [True, True] and [f.name for f in r.fakes] == ["m", "q"]
    assert r.real.said == "real"


@pytest.mark.parametrize("argv", [["missing_real.npy", "missing_fake.npy"],
                                  ["--plugins", "no_such_plugin_module", "a.npy", "b.npy"]])
def test_a_refusal_goes_out_as_one_line_in_one_write(argv: list[str], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """torchrun's ranks share stderr: each refusal is written with its newline at once, so two ranks' lines never
    run together (`print` writes the text and the newline apart)."""
    import sys

    from ganeval.app import score as command

    writes: list[str] = []

    class Stderr:
        def write(self, s: str) -> int:
            writes.append(s)
            return len(s)

        def flush(self) -> None:
            pass

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stderr", Stderr())
    assert command.run(argv) == 2
    assert len(writes) == 1, writes
    assert writes[0].startswith("ganeval-score: ") and writes[0].endswith("\n") and writes[0].count("\n") == 1
