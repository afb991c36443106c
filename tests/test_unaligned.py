"""Unaligned sets of different dimension through every entry point: dimension-free metrics (IMD, Vendi) compare them,
metrics needing one space are refused when chosen and left out (with a note) when they came with the defaults."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
import torch

import ganeval
from ganeval.app.score import main
from ganeval.features.base import REGISTRY, Extractor, register
from ganeval.metrics import imd
from ganeval.metrics.dims import dimension_free, fit_metrics
from ganeval.metrics.registry import REGISTRY as METRICS
from ganeval.metrics.registry import Metrics
from ganeval.protocol.api import evaluate_detailed

# from the registry: FID, KID, PRDC, CMMD, sFID, FD∞, authenticity, MiFID (metrics of feature pairs)
SAME_DIM = sorted(n for n, m in METRICS.items() if m.same_dim and m.input != "logits")


def _pair(n: int = 240, m: int = 220, dx: int = 16, dy: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, dx)).astype(np.float32), rng.normal(size=(m, dy)).astype(np.float32)


def _pad(x: np.ndarray, d: int) -> np.ndarray:
    """`x` with zero columns up to `d`: the same pairwise distances, so the same k-NN graph and the same IMD."""
    return np.concatenate([x, np.zeros((len(x), d - x.shape[1]), x.dtype)], axis=1)


def test_the_registry_declares_which_metrics_need_one_space() -> None:
    assert {"imd", "vendi"} <= set(dimension_free())
    assert {"fid", "kid", "precision", "recall", "density", "coverage", "cmmd", "sfid", "fd_inf", "authenticity",
            "mifid"} <= set(SAME_DIM)
    assert not set(dimension_free()) & set(SAME_DIM)


def test_fit_metrics_keeps_one_dimension_and_narrows_only_defaults() -> None:
    m = Metrics(["imd", "fid", "kid"])
    assert fit_metrics(m, {"a": 8, "b": 8}, chosen=True) == (m, None)
    kept, note = fit_metrics(m, {"a": 8, "b": 3}, chosen=False)
    assert list(kept) == ["imd"] and note == ("note: a has 8 features and b has 3: FID, KID need one dimension and "
                                              "are left out; scoring IMD")
    with pytest.raises(ValueError, match=r"^FID, KID need features of one dimension, but a has 8 features and b has "
                                          r"3: .*\(IMD, Vendi\)$"):
        fit_metrics(m, {"a": 8, "b": 3}, chosen=True)
    with pytest.raises(ValueError, match="FID needs features of one dimension"):  # nothing dimension-free left
        fit_metrics(Metrics(["fid"]), {"a": 8, "b": 3}, chosen=False)


# --------------------------------------------------------------------------- ganeval.evaluate
def test_evaluate_scores_imd_of_sets_of_different_dimension_exactly() -> None:
    """IMD of a 16-d and a 40-d set equals IMD of the 16-d set zero-padded to 40-d (same distances, same graph)."""
    x, y = _pair()
    opts = {"imd": {"nv": 20}, "vendi": {}}
    ev = evaluate_detailed(x, {"a": y, "b": y[:, :30]}, runs=3, sample_size=200, metrics=opts, progress=False)
    same = evaluate_detailed(_pad(x, 40), {"a": y, "b": _pad(y[:, :30], 40)}, runs=3, sample_size=200,
                             metrics={"imd": {"nv": 20}}, progress=False)
    assert ev.dims == {"real": 16, "a": 40, "b": 30} and ev.summary.attrs["dims"] == ev.dims and not ev.notes
    got = ev.runs[ev.runs.metric == "imd"].sort_values(["model", "run"])["value"].to_numpy()
    want = same.runs.sort_values(["model", "run"])["value"].to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert set(ev.summary.metric) == {"imd", "vendi"} and len(ev.comparison) == 2  # paired comparison as usual


def test_evaluate_default_metrics_score_imd_and_say_what_was_left_out(caplog: pytest.LogCaptureFixture) -> None:
    x, y = _pair()
    with caplog.at_level(logging.WARNING):
        ev = evaluate_detailed(x, y, runs=2, sample_size=200, progress=False)
    note = ("note: the real set has 16 features and the generated set fake has 40: FID, KID need one dimension and "
            "are left out; scoring IMD")
    assert ev.notes == [note] and note in caplog.text
    assert list(ev.summary.metric) == ["imd"] and ev.dims == {"real": 16, "fake": 40}
    alone = evaluate_detailed(x, y, runs=2, sample_size=200, metrics=["imd"], progress=False)
    assert list(ev.runs["value"]) == list(alone.runs["value"])  # the same numbers as IMD chosen alone


@pytest.mark.parametrize("name", SAME_DIM)
def test_evaluate_refuses_chosen_metrics_needing_one_space(tmp_path: Path, name: str) -> None:
    x, y = _pair()
    out = tmp_path / "out"
    with pytest.raises(ValueError) as e:
        chosen = {"imd": None, name: {"subset_size": 100} if name == "kid" else None}
        ganeval.evaluate(x, y, runs=2, sample_size=200, metrics=chosen, results_dir=out, progress=False)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{METRICS[name].unscaled_label} needs features of one dimension")
    assert "the real set has 16 features" in msg and "has 40" in msg
    assert not out.exists()  # refused before any run: no result folder


# --------------------------------------------------------------------------- ganeval-score / ganeval.score
def _score(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    assert main([*args, "--json"]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*args, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ganeval-score: "), err
    return err.strip()


def test_score_two_npy_of_different_widths(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           caplog: pytest.LogCaptureFixture) -> None:
    x, y = _pair()
    np.save(tmp_path / "r16.npy", x)
    np.save(tmp_path / "f40.npy", y)
    args = [str(tmp_path / "r16.npy"), str(tmp_path / "f40.npy"), "--option", "imd.nv=20"]
    with caplog.at_level(logging.WARNING):
        doc, _ = _score(args, capsys)  # default metrics: IMD, and a note
    assert "has 16 features and FAKE " in caplog.text
    assert "f40.npy has 40: FID, KID need one dimension and are left out; scoring IMD" in caplog.text
    assert [(r["metric"], r["value"]) for r in doc["results"]] == [("imd", imd(x, y, nv=20, seed=0))]
    assert doc["dims"] == {"real": 16, "f40": 40}
    doc, _ = _score([*args, "--metrics", "imd,vendi", "--runs", "3", "--sample-size", "200", "--quiet"], capsys)
    assert {r["metric"] for r in doc["results"]} == {"imd", "vendi"}
    out = tmp_path / "res"
    err = _refused([*args[:2], "--metrics", "imd,fid,kid", "--out", str(out)], capsys)
    assert "FID, KID need features of one dimension" in err and "gives 16" in err and "gives 40" in err
    assert not out.exists()


def _vec(path: Path, words: list[str], v: np.ndarray) -> None:
    rows = [f"{w} " + " ".join(repr(float(a)) for a in row) for w, row in zip(words, v)]
    path.write_text(f"{len(words)} {v.shape[1]}\n" + "\n".join(rows) + "\n", encoding="utf-8")


def test_score_two_languages_word_vectors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x, y = _pair(260, 250, 12, 5)
    _vec(tmp_path / "en.vec", [f"w{i}" for i in range(260)], x)
    _vec(tmp_path / "fr.vec", [f"m{i}" for i in range(250)], y)
    doc, _ = _score([str(tmp_path / "en.vec"), str(tmp_path / "fr.vec"), "--vocab", "200", "--metrics", "imd",
                     "--option", "imd.nv=20", "--quiet"], capsys)
    assert doc["results"][0]["value"] == imd(x[:200], y[:200], nv=20, seed=0)  # the 200 most frequent words
    assert doc["dims"] == {"real": 12, "fr": 5} and doc["real"]["rows"] == 200
    r = ganeval.score(str(tmp_path / "en.vec"), {"fr": str(tmp_path / "fr.vec")}, vocab=200, metrics="imd",
                      progress=False)
    assert r.record.dims == {"real": 12, "fr": 5} and r.record.config["vocab"] == 200


def test_score_word_vector_and_vocab_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x, y = _pair(260, 250, 12, 5)
    _vec(tmp_path / "en.vec", [f"w{i}" for i in range(260)], x)
    (tmp_path / "bad.vec").write_text("3 5\na 1 2 3 4 5\nb 1 2 3 4\nc 1 2 3 4 5\n")
    out = tmp_path / "res"
    err = _refused([str(tmp_path / "en.vec"), str(tmp_path / "bad.vec"), "--metrics", "imd", "--out", str(out)], capsys)
    assert err.endswith("bad.vec: line 3: 4 values, but the header says dimension 5") and not out.exists()
    err = _refused([str(tmp_path / "en.vec"), str(tmp_path / "en.vec"), "--vocab", "1000", "--metrics", "imd"], capsys)
    assert "line 1: the file has 260 words, fewer than --vocab 1000" in err  # the command's words (issue 57)
    np.save(tmp_path / "a.npy", x)
    err = _refused([str(tmp_path / "a.npy"), str(tmp_path / "en.vec"), "--vocab", "10", "--metrics", "imd"], capsys)
    assert "--vocab reads the most frequent words of a word-vector file" in err and "a.npy" in err


def _bin(path: Path, words: list[str], v: np.ndarray, header_dim: int) -> None:
    """word2vec.c's binary layout (a newline after each vector) under a header of `header_dim`."""
    path.write_bytes(f"{len(words)} {header_dim}\n".encode() + b"".join(
        w.encode() + b" " + row.astype("<f4").tobytes() + b"\n" for w, row in zip(words, v)))


def test_score_word2vec_binary_whose_header_disagrees_with_its_rows(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A .bin whose header says 20 over rows of 19 values was read out of step under --vocab (IMD 352.8 for the
    true 73.47, docs/reliability.md): refused in one line naming both dimensions, by the command and by
    `ganeval.score`; under a true header the .bin scores exactly what the .vec of the same vectors scores."""
    x, y = _pair(300, 250, 19, 12)
    words = [f"word{i:04d}" for i in range(300)]
    _bin(tmp_path / "bad.bin", words, x, 20)
    _bin(tmp_path / "en.bin", words, x, 19)
    _vec(tmp_path / "en.vec", words, x)
    _vec(tmp_path / "fr.vec", [f"m{i}" for i in range(250)], y)
    common = ["--vocab", "200", "--metrics", "imd", "--option", "imd.nv=20"]
    err = _refused([str(tmp_path / "bad.bin"), str(tmp_path / "fr.vec"), *common], capsys)
    assert err.endswith("bad.bin: line 2: the rows have 19 values, but the header says dimension 20")
    with pytest.raises(ValueError, match=r"bad\.bin: line 2: the rows have 19 values, but the header says dimension 20$"):
        ganeval.score(str(tmp_path / "bad.bin"), str(tmp_path / "fr.vec"), vocab=200, metrics="imd", progress=False)
    doc_bin, _ = _score([str(tmp_path / "en.bin"), str(tmp_path / "fr.vec"), *common, "--quiet"], capsys)
    doc_vec, _ = _score([str(tmp_path / "en.vec"), str(tmp_path / "fr.vec"), *common, "--quiet"], capsys)
    assert doc_bin["results"][0]["value"] == doc_vec["results"][0]["value"] == imd(x[:200], y[:200], nv=20, seed=0)
    assert doc_bin["dims"]["real"] == 19


@pytest.fixture()
def half_pixels() -> object:
    """An image extractor of another space: the first half of each image's pixels (registered for the test only)."""

    @register("half_pixels_test")
    class HalfPixels(Extractor):
        images = True
        cacheable = False

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            flat = (batch.float() / 255.0).reshape(len(batch), -1)
            return flat[:, : flat.shape[1] // 2]

    yield HalfPixels
    del REGISTRY["half_pixels_test"]


def test_score_real_through_an_extractor_of_its_own(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    half_pixels: object) -> None:
    """REAL through pixels (64-d), FAKE through another extractor (32-d): IMD of exactly those features."""
    rng = np.random.default_rng(1)
    real = rng.integers(0, 256, (120, 1, 8, 8), dtype=np.uint8)
    fake = rng.integers(0, 256, (110, 1, 8, 8), dtype=np.uint8)
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    args = [str(tmp_path / "real.npy"), str(tmp_path / "fake.npy"), "--real-features", "pixels", "--features",
            "half_pixels_test", "--option", "imd.nv=20", "--quiet"]
    doc, _ = _score(args, capsys)
    fx = real.reshape(120, -1).astype(np.float32) / 255.0
    fy = fake.reshape(110, -1)[:, :32].astype(np.float32) / 255.0
    assert [r["metric"] for r in doc["results"]] == ["imd"] and doc["dims"] == {"real": 64, "fake": 32}
    np.testing.assert_allclose(doc["results"][0]["value"], imd(fx, fy, nv=20, seed=0), rtol=1e-6)
    assert doc["real_features"]["name"] == "pixels" and doc["features"]["name"] == "half_pixels_test"
    err = _refused([*args[:6], "--metrics", "imd,fid"], capsys)  # two spaces: FID refused even at one dimension
    assert err.endswith("FID needs one feature space, but REAL goes through pixels and FAKE through "
                        "half_pixels_test (--real-features): two feature spaces; choose only dimension-free metrics "
                        "(IMD, Vendi)")


# --------------------------------------------------------------------------- ganeval.torchmetrics
@pytest.fixture(scope="module")
def inception_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Stand-in FID Inception weights (random, through the real loading path: no network)."""
    from ganeval.features.inception import save_random_weights

    return save_random_weights(tmp_path_factory.mktemp("w") / "random_inception.pth", seed=0)


def _two_image_sets(tmp_path: Path) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    real = rng.integers(0, 256, (12, 3, 16, 16), dtype=np.uint8)
    fake = rng.integers(0, 256, (10, 3, 16, 16), dtype=np.uint8)
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    return real, fake


@pytest.mark.slow  # Inception on a CPU: about 60 images
def test_each_extractor_option_reaches_the_extractor_that_takes_it(tmp_path: Path, inception_file: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """With --real-features every extractor option was checked against both extractors ("--weights is for
    --features inception … not pixels"): now --weights, --dims go to inception and --pixels-size to pixels, on
    whichever side each is, in the command and in `ganeval.score`; IMD of exactly those features."""
    from ganeval.features import extract, get_extractor

    real, fake = _two_image_sets(tmp_path)
    paths = [str(tmp_path / "real.npy"), str(tmp_path / "fake.npy")]
    inc = get_extractor("inception", weights=str(inception_file))
    inc64 = get_extractor("inception", weights=str(inception_file), dims=64)
    pix4 = get_extractor("pixels", max_size=4)
    common = ["--metrics", "imd", "--option", "imd.nv=5", "--quiet"]
    # REAL through pixels (sized 4), FAKE through inception (its weights): the case
    doc, _ = _score([*paths, "--real-features", "pixels", "--features", "inception", "--weights", str(inception_file),
                     "--pixels-size", "4", *common], capsys)
    want = imd(extract(real, pix4), extract(fake, inc), nv=5, seed=0)
    assert doc["dims"] == {"real": 48, "fake": 2048} and doc["results"][0]["value"] == pytest.approx(want, rel=1e-6)
    assert doc["features"]["weights"] == inc.identity()["weights"] and doc["real_features"]["max_size"] == 4
    r = ganeval.score(paths[0], paths[1], real_features="pixels", features="inception", weights=str(inception_file),
                      pixels_size=4, metrics={"imd": {"nv": 5}}, progress=False)
    assert r.to_dict()["results"][0]["value"] == doc["results"][0]["value"]
    # the other way round: REAL through inception (its weights, its 64-d block), FAKE through pixels (sized 4)
    doc, _ = _score([*paths, "--real-features", "inception", "--features", "pixels", "--weights", str(inception_file),
                     "--dims", "64", "--pixels-size", "4", *common], capsys)
    want = imd(extract(real, inc64), extract(fake, pix4), nv=5, seed=0)
    assert doc["dims"] == {"real": 64, "fake": 48} and doc["results"][0]["value"] == pytest.approx(want, rel=1e-6)
    assert doc["real_features"]["weights"] == inc.identity()["weights"]


def test_weights_both_extractors_load_are_given_per_side(tmp_path: Path, inception_file: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The documented --real-features inception --features dinov2: both load a weights file, so --weights alone is
    refused naming --real-weights; --real-weights reaches REAL's inception, --weights then FAKE's dinov2. Options
    neither extractor takes are refused naming both, in the command's words and in Python's."""
    from ganeval.app.score_inputs import given_input
    from ganeval.app.score_request import ScoreRequest, make_extractor
    from ganeval.app.scoring import extractor_requests, real_extractor

    real, fake = _two_image_sets(tmp_path)
    paths = [str(tmp_path / "real.npy"), str(tmp_path / "fake.npy")]
    two = [*paths, "--real-features", "inception", "--features", "dinov2", "--metrics", "imd"]
    err = _refused([*two, "--weights", str(inception_file)], capsys)
    assert err.endswith(f"--weights {inception_file}: inception (--real-features, for REAL) and dinov2 (--features, "
                        "for FAKE) both load a weights file: give inception's with --real-weights FILE and dinov2's "
                        "with --weights FILE")
    with pytest.raises(ValueError, match=r"give inception's with real_weights=FILE and dinov2's with weights=FILE$"):
        ganeval.score(paths[0], paths[1], real_features="inception", features="dinov2", weights=str(inception_file),
                      metrics="imd", progress=False)
    s_real, s_fake = given_input(real, "real"), given_input(fake, "fake")
    for weights in (None, "dinov2.safetensors"):
        request = ScoreRequest(real=paths[0], fakes=[paths[1]], features="dinov2", real_features="inception",
                               real_weights=str(inception_file), weights=weights, metrics={"imd": {}})
        fake_request, real_request = extractor_requests(request, s_real)
        fake_ex = make_extractor(fake_request, [s_fake])
        real_ex = real_extractor(real_request, s_real, fake_ex)
        assert (real_ex.name, real_ex.weights, fake_ex.name, fake_ex.weights) == (
            "inception", str(inception_file), "dinov2", weights)
        assert real_ex.weights_path() == inception_file
    half = [*paths, "--real-features", "pixels", "--features", "inception", "--metrics", "imd"]
    for extra, end in [
        (["--real-weights", "w.pth"], "--real-weights is for --real-features inception, clip, dinov2, "
                                      "inception_spatial, inception_logits or clip_l14_336, not pixels"),
        (["--resize", "pil"], "--resize pil is not a preprocessing mode of --features inception (--features) or "
                              "pixels (--real-features)"),
        (["--dims", "768", "--features", "dinov2"], "--dims 768 is a dimension of --features inception, clip or "
                                                    "clip_l14_336, not of dinov2 (--features) or pixels "
                                                    "(--real-features): drop it"),
    ]:
        assert _refused([*half, *extra], capsys).endswith(end)
    for same in ([], ["--real-features", "pixels", "--features", "pixels"]):  # no extractor of REAL's own
        err = _refused([*paths, *same, "--real-weights", "w.pth", "--metrics", "imd"], capsys)
        assert err.endswith("--real-weights gives REAL's own extractor (--real-features NAME) its weights; without "
                            "one, REAL goes through --features too, whose weights --weights gives")
    with pytest.raises(ValueError, match=r"^resize=\"pil\" is not a preprocessing mode of features=\"inception\" "
                                         r"\(features\) or pixels \(real_features\)"):
        ganeval.score(paths[0], paths[1], real_features="pixels", features="inception", resize="pil", metrics="imd",
                      progress=False)


def test_torchmetrics_pools_of_their_own_widths_give_evaluates_numbers() -> None:
    from ganeval.torchmetrics import IMD, Protocol

    x, y = _pair(260, 240, 8, 20)
    real, fake = torch.from_numpy(x), torch.from_numpy(y)
    metric = IMD(feature="identity", runs=3, sample_size=200, options={"nv": 20})
    both = Protocol({"imd": {"nv": 20}, "vendi": {}}, feature="identity", runs=3, sample_size=200)
    for m in (metric, both):
        for i in range(0, 260, 64):
            m.update(real[i : i + 64], real=True)
        for i in range(0, 240, 64):
            m.update(fake[i : i + 64], real=False)
    want = ganeval.evaluate(x, y, runs=3, sample_size=200, metrics={"imd": {"nv": 20}, "vendi": {}}, progress=False)
    want = want.set_index("metric")
    got = metric.compute_interval()
    assert got["imd"].item() == want.loc["imd", "mean"] and got["imd_ci_low"].item() == want.loc["imd", "ci_low"]
    assert metric.compute().item() == want.loc["imd", "mean"]
    assert both.compute()["vendi"].item() == want.loc["vendi", "mean"]


# --------------------------------------------------------------------------- the Hydra app
def test_app_benchmark_of_sets_of_different_dimension(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from apphelp import run_inprocess

    x, y = _pair(260, 240, 16, 40)
    np.save(tmp_path / "real.npy", x)
    np.save(tmp_path / "fake.npy", y)
    out = tmp_path / "res"
    args = ["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
            f"generator.path={tmp_path / 'fake.npy'}", "features=identity", "sample_size=200", "runs=2",
            "metrics.imd.nv=20", "metrics.kid.subset_size=100", "progress=false"]
    with caplog.at_level(logging.WARNING):  # the default metrics: IMD scored, FID and KID left out with a note
        s = run_inprocess([*args, f"results_dir={out}"])
    assert list(s.metric) == ["imd"] and "FID, KID need one dimension and are left out; scoring IMD" in caplog.text
    record = json.loads((out / "summary.json").read_text())
    assert record["dims"] == {"array (real)": 16, "array/fake": 40}
    alone = evaluate_detailed(x, y, runs=2, sample_size=200, metrics={"imd": {"nv": 20}}, progress=False)
    np.testing.assert_allclose(s["mean"].iloc[0], alone.summary["mean"].iloc[0], rtol=1e-12)
    with pytest.raises(ValueError, match=r"^FID needs features of one dimension \(to compare sets of two dimensions "
                                         r"as they are, choose only dimension-free metrics, e\.g\. metrics=imd\): "
                                         r"array/fake has 40-d features but its real data 16-d"):
        run_inprocess([*args[:-2], "metrics=imd", "+metrics.fid={}", f"results_dir={tmp_path / 'r2'}"])
    assert not (tmp_path / "r2").exists()


def test_app_word_vectors_as_data(tmp_path: Path) -> None:
    from apphelp import run_inprocess

    x, y = _pair(300, 240, 12, 40)
    _vec(tmp_path / "en.vec", [f"w{i}" for i in range(300)], x)
    np.save(tmp_path / "fake.npy", y)
    s = run_inprocess(["experiment=benchmark", "data=wordvectors", f"data.path={tmp_path / 'en.vec'}", "data.vocab=250",
                       "generator=samples", f"generator.path={tmp_path / 'fake.npy'}", "features=identity",
                       "metrics=imd", "metrics.imd.nv=20", "sample_size=200", "runs=2", "progress=false",
                       f"results_dir={tmp_path / 'res'}"])
    alone = evaluate_detailed(x[:250], y, runs=2, sample_size=200, metrics={"imd": {"nv": 20}}, progress=False)
    np.testing.assert_allclose(s["mean"].iloc[0], alone.summary["mean"].iloc[0], rtol=1e-12)


def test_app_word_vectors_as_a_generator(tmp_path: Path) -> None:
    """generator=samples takes a word-vector file too (its `vocab` most frequent words), against data of another
    dimension: the same number as evaluate on the arrays; `vocab` on a file that holds no word vectors is refused."""
    from apphelp import run_inprocess

    x, y = _pair(300, 240, 12, 40)
    np.save(tmp_path / "real.npy", x)
    _vec(tmp_path / "de.vec", [f"w{i}" for i in range(240)], y)
    common = ["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
              "features=identity", "metrics=imd", "metrics.imd.nv=20", "sample_size=200", "runs=2", "progress=false"]
    s = run_inprocess([*common, f"generator.path={tmp_path / 'de.vec'}", "generator.vocab=220",
                       f"results_dir={tmp_path / 'res'}"])
    alone = evaluate_detailed(x, y[:220], runs=2, sample_size=200, metrics={"imd": {"nv": 20}}, progress=False)
    np.testing.assert_allclose(s["mean"].iloc[0], alone.summary["mean"].iloc[0], rtol=1e-12)
    np.save(tmp_path / "fake.npy", y)
    with pytest.raises(ValueError, match="vocab applies to word-vector files"):
        run_inprocess([*common, f"generator.path={tmp_path / 'fake.npy'}", "generator.vocab=220",
                       f"results_dir={tmp_path / 'res2'}"])
    assert not (tmp_path / "res2").exists()


# --------------------------------------------------------------------------- the docs' example, verbatim
ROOT = Path(__file__).resolve().parents[1]


def _section_blocks(page: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced block in the "Comparing unaligned data" section of docs/`page`."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    section = text.split("## Comparing unaligned data", 1)[1].split("\n## ", 1)[0]
    parts = section.split("```")
    return [(p.split("\n", 1)[0].strip(), p.split("\n", 1)[1]) for p in parts[1::2]]


@pytest.mark.parametrize("page", ["metrics.md", "scoring.md"])
def test_docs_unaligned_example_runs_verbatim(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import shlex

    monkeypatch.chdir(tmp_path)
    blocks = _section_blocks(page)
    assert blocks and blocks[0][0] == "python"
    commands = 0
    for lang, code in blocks:
        if lang == "python":
            exec(compile(code, f"docs/{page}", "exec"), {})
        else:
            assert lang == "bash"
            for line in code.splitlines():
                args = shlex.split(line, comments=True)
                assert args[0] == "ganeval-score"
                assert main([*args[1:], "--quiet"]) == 0, capsys.readouterr().err
                commands += 1
    out = capsys.readouterr().out
    if page == "metrics.md":
        assert "{'real': 16, 'fake': 40}" in out and "vendi" in out
    else:
        assert commands == 3 and out.count("IMD") >= 3 and "Vendi" in out
