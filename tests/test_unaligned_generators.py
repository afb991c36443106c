"""Sets whose dimension a generator or an extractor tells (issue 43's last entry point): the app knows a generated
set's dimension before any training, sampling or extraction wherever the generator declares its sample shape and the
extractor its feature dimension, and narrows the default metrics (or refuses chosen ones) then; where either declares
nothing, the default metrics are narrowed once extraction tells the dimensions, and a rerun resumes."""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
import torch

from apphelp import no_work, run_inprocess
from ganeval.app import pipeline
from ganeval.app.score import main
from ganeval.features import extract
from ganeval.features.base import REGISTRY, Extractor, register
from ganeval.features.simple import PixelsExtractor
from ganeval.gan import CallableGenerator, CheckpointGenerator, ModuleGenerator, SampleGenerator, train
from ganeval.gan.train_data import trained_sample_shape
from ganeval.protocol.api import evaluate_detailed
from ganeval.protocol.store import ConfigMismatchError

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = {"latent_dim": 8, "dim": 4}
FAST = ["sample_size=100", "runs=2", "n_generated=150", "metrics.imd.nv=20", "metrics.kid.subset_size=50",
        "progress=false", "plots=false"]


# A callable generator addressed as "test_unaligned_generators:grey16" (pytest puts the tests folder on sys.path).
def grey16(n: int, seed: int) -> np.ndarray:
    """n grey 16×16 uint8 images (N×H×W), seeded."""
    return np.random.default_rng(seed).integers(0, 256, (n, 16, 16), dtype=np.uint8)


# An extractor that declares no `feature_dim`: the mean of each image row (H features, so the dimension depends on the
# images' height and is known only after extraction); registered by a module the app imports (plugins=[...]).
PLUGIN = textwrap.dedent('''
    import torch

    from ganeval.data.images import images_to_float
    from ganeval.features.base import Extractor, register


    @register("row_means_late")
    class RowMeans(Extractor):
        images = True
        cacheable = False

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            return images_to_float(batch).mean(dim=(1, 3))
''')


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("late_plugin")
    (root / "lateplugin.py").write_text(PLUGIN)
    (root / "configs" / "features").mkdir(parents=True)
    (root / "configs" / "features" / "row_means_late.yaml").write_text("_target_: lateplugin.RowMeans\n")
    sys.path.insert(0, str(root))
    import lateplugin  # noqa: F401  registers the extractor

    yield str(root)
    sys.path.remove(str(root))
    REGISTRY.pop("row_means_late", None)
    sys.modules.pop("lateplugin", None)


def _images(n: int, side: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 1, side, side), dtype=np.uint8)


def _app(tmp_path: Path, real: np.ndarray, *extra: str) -> list[str]:
    np.save(tmp_path / "real.npy", real)
    return ["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}",
            f"results_dir={tmp_path / 'res'}", f"models_dir={tmp_path / 'models'}", *FAST, *extra]


class Opened(Exception):
    """Raised in place of opening the results directory: the metrics the run had settled on by then."""


def _metrics_when_opened(monkeypatch: pytest.MonkeyPatch, overrides: list[str]) -> tuple[list[str], bool]:
    """(the metrics, narrowable) a run holds when it opens its results directory, before any training, sampling or
    extraction (reaching those fails the test)."""
    seen: dict[str, Any] = {}

    def opened(plan: Any, protocol: bool = True, narrowable: bool = False, clear: bool = True) -> None:
        seen.update(metrics=list(plan.settings.metrics), narrowable=narrowable)
        raise Opened

    with monkeypatch.context() as m:
        m.setattr(pipeline, "open_results", opened)
        no_work(m)
        with pytest.raises(Opened):
            run_inprocess(overrides)
    return seen["metrics"], seen["narrowable"]


# --------------------------------------------------------------------------- sample shapes, before sampling
def test_every_generator_declares_the_shape_it_samples(tmp_path: Path) -> None:
    """`sample_shape()` of each generator kind is the shape `sample` returns per row, and a train spec's
    (`trained_sample_shape`) is that of the generator training makes."""
    from PIL import Image

    x = _images(32, 32, 0)
    ckpt = train(x, arch="digits", gan="wgan", out_dir=tmp_path / "ckpt", epochs=1, batch_size=16, progress=False,
                 arch_kwargs=TINY, sample_every=0)
    np.save(tmp_path / "nhwc.npy", np.random.default_rng(1).integers(0, 256, (5, 6, 7, 3), dtype=np.uint8))
    np.save(tmp_path / "points.npy", np.random.default_rng(2).normal(size=(5, 9)))
    (tmp_path / "folder").mkdir()
    Image.fromarray(np.zeros((10, 12), np.uint8)).save(tmp_path / "folder" / "a.png")
    Image.fromarray(np.zeros((10, 12, 3), np.uint8)).save(tmp_path / "folder" / "b.png")  # one colour file: RGB
    (tmp_path / "w.vec").write_text("3 4\na 1 2 3 4\nb 1 2 3 4\nc 1 2 3 4\n")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.ConvTranspose2d(5, 3, 4), torch.nn.Sigmoid())  # z: 5×1×1 -> 3×4×4
    gens = {
        "checkpoint": CheckpointGenerator(ckpt),
        "module": ModuleGenerator(net, latent_shape=[5, 1, 1], output_range=[0, 1]),
        "module points": ModuleGenerator(torch.nn.Linear(4, 6), latent_shape=[4], output_range=None),
        "callable": CallableGenerator("test_unaligned_generators:grey16"),
        "samples nhwc": SampleGenerator(tmp_path / "nhwc.npy"),
        "samples points": SampleGenerator(tmp_path / "points.npy"),
        "samples folder": SampleGenerator(tmp_path / "folder"),
        "word vectors": SampleGenerator(tmp_path / "w.vec", vocab=2),
    }
    want = {"checkpoint": (1, 32, 32), "module": (3, 4, 4), "module points": (6,), "callable": (1, 16, 16),
            "samples nhwc": (3, 6, 7), "samples points": (9,), "samples folder": (3, 10, 12), "word vectors": (4,)}
    for name, gen in gens.items():
        gen.validate()
        assert gen.sample_shape() == want[name], name
        assert gen.sample(2, seed=3).shape[1:] == want[name], name
    assert trained_sample_shape(x, "digits", TINY) == (1, 32, 32)
    assert trained_sample_shape(_images(40, 8, 1), "mnist28", TINY) == (1, 28, 28)  # trained at its own size
    assert trained_sample_shape(np.zeros((40, 5), np.float32), "mlp") == (5,)


# --------------------------------------------------------------------------- the app: known before any work
def test_app_callable_of_another_size_narrows_the_default_metrics_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """8×8 real images and a callable's 16×16 through pixels (64-d and 256-d): IMD only, decided before sampling,
    the same number as IMD of those features; FID chosen is refused before any work, with no results folder."""
    real = _images(200, 8, 2)
    args = _app(tmp_path, real, "generator=callable", "generator.function=test_unaligned_generators:grey16", "generator.name=grey16",
                "features=pixels")
    assert _metrics_when_opened(monkeypatch, args) == (["imd"], False)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        s = run_inprocess(args)
    assert list(s.metric) == ["imd"]
    assert caplog.text.count("note: array (real) has 64 features and array/grey16 has 256: FID, KID need one "
                             "dimension and are left out; scoring IMD") == 1
    record = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert record["dims"] == {"array (real)": 64, "array/grey16": 256} and list(record["config"]["metrics"]) == ["imd"]
    assert record["left_out"].endswith("FID, KID need one dimension and are left out; scoring IMD")
    pool = CallableGenerator("test_unaligned_generators:grey16").sample(150, seed=0)
    fx, fy = extract(real, PixelsExtractor(), progress=False), extract(pool, PixelsExtractor(), progress=False)
    alone = evaluate_detailed(fx, fy, runs=2, sample_size=100, metrics={"imd": {"nv": 20}}, progress=False)
    assert s["mean"].iloc[0] == alone.summary["mean"].iloc[0]
    chosen = [a.replace(str(tmp_path / "res"), str(tmp_path / "r2")) for a in args if not a.startswith("metrics.kid")]
    with pytest.raises(ValueError, match=r"^FID needs features of one dimension .*: array/grey16 has 256-d features but "
                                         r"its real data 64-d"):
        run_inprocess([*chosen, "metrics=imd", "+metrics.fid={}"])
    assert not (tmp_path / "r2").exists()


def test_app_trained_generator_of_another_resolution_narrows_before_training(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """8×8 real images and a generator trained at the digits architecture's 32×32 through pixels (64-d, 1024-d): the
    default metrics narrowed to IMD before anything trains; through Inception-like fixed widths nothing changes."""
    args = _app(tmp_path, _images(200, 8, 3), "features=pixels",
                "+generators.g={train: {arch: digits, gan: wgan, epochs: 1, batch_size: 32, "
                "arch_kwargs: {latent_dim: 8, dim: 4}}}")
    assert _metrics_when_opened(monkeypatch, args) == (["imd"], False)
    assert _metrics_when_opened(monkeypatch, [*args, "features.size=16"]) == (["imd", "fid", "kid"], False)


# --------------------------------------------------------------------------- the app: known only after extraction
def test_app_extractor_without_feature_dim_narrows_after_extraction_and_resumes(
        plugin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Through an extractor that declares no dimension, the default metrics are narrowed once the features tell it
    (8-d and 16-d: IMD only); the store keyed by that narrower identity is this config's, so a rerun resumes and gives
    the same numbers, while another config's run in the folder is still refused before any work."""
    real = _images(200, 8, 4)
    args = _app(tmp_path, real, "generator=callable", "generator.function=test_unaligned_generators:grey16", "generator.name=grey16",
                f"hydra.searchpath=[file://{plugin}/configs]", "features=row_means_late", "plugins=[lateplugin]")
    assert _metrics_when_opened(monkeypatch, args) == (["imd", "fid", "kid"], True)  # not known yet
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        s = run_inprocess(args)
    assert list(s.metric) == ["imd"]
    assert caplog.text.count("array (real) has 8 features and array/grey16 has 16: FID, KID need one dimension") == 1
    record = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert record["dims"] == {"array (real)": 8, "array/grey16": 16} and list(record["config"]["metrics"]) == ["imd"]
    assert "array/grey16 has 16: FID, KID need one dimension and are left out" in record["left_out"]
    fx = real[:, 0].astype(np.float32).mean(axis=2) / 255.0
    fy = CallableGenerator("test_unaligned_generators:grey16").sample(150, seed=0)[:, 0].astype(np.float32)
    alone = evaluate_detailed(fx, fy.mean(axis=2) / 255.0, runs=2, sample_size=100, metrics={"imd": {"nv": 20}},
                              progress=False)
    np.testing.assert_allclose(s["mean"].iloc[0], alone.summary["mean"].iloc[0], rtol=1e-5)
    runs = (tmp_path / "res" / "runs.csv").read_text()
    again = run_inprocess(args)  # the same config: its runs are found and kept, none drawn again
    assert again["mean"].iloc[0] == s["mean"].iloc[0] and (tmp_path / "res" / "runs.csv").read_text() == runs
    with monkeypatch.context() as m, pytest.raises(ConfigMismatchError) as refused:
        no_work(m)
        run_inprocess([*args, "seed=1"])
    # what differs is said against the identity closest to the stored one: the seed, not the metrics left out
    assert str(refused.value).endswith("(what differs: data.config.seed: 0 -> 1; seed: 0 -> 1)")
    chosen = [a.replace(str(tmp_path / "res"), str(tmp_path / "r2")) for a in args if not a.startswith("metrics.kid")]
    with pytest.raises(ValueError, match=r"^FID needs features of one dimension .*array/grey16 has 16-d features but "
                                         r"its real data 8-d"):
        run_inprocess([*chosen, "metrics=imd", "+metrics.fid={}"])


# --------------------------------------------------------------------------- ganeval-score: known only after
@pytest.fixture()
def row_means() -> Iterator[type]:
    """Per-row means of images, declaring no `feature_dim` (registered in this process for the test only)."""
    from ganeval.data.images import images_to_float

    @register("row_means_score_test")
    class RowMeans(Extractor):
        images = True
        cacheable = False

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            return images_to_float(batch).mean(dim=(1, 3))

    yield RowMeans
    del REGISTRY["row_means_score_test"]


@pytest.fixture()
def quarter_means() -> Iterator[type]:
    """The docs' plugin example (docs/architecture.md): the mean of each quarter of a feature row, 4-d whatever D."""

    @register("quarter_means_test")
    class QuarterMeans(Extractor):
        images = False
        cacheable = False

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            return batch.float().reshape(len(batch), 4, -1).mean(dim=2)

    yield QuarterMeans
    del REGISTRY["quarter_means_test"]


def _score(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main([*args, "--json", "--quiet"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("runs", [["--runs", "2", "--sample-size", "100"], []], ids=["protocol", "full sets"])
def test_score_extractor_without_feature_dim_narrows_after_extraction_and_resumes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, row_means: type,
        runs: list[str]) -> None:
    """Through an extractor that declares no dimension, 8×8 and 16×16 images (8-d and 16-d features): the default
    metrics narrowed to IMD after extraction, recorded as scored (config and the note) and resumed by a rerun; a FAKE
    whose file is named real.npy keeps REAL's entries apart (it is labelled by its path)."""
    (tmp_path / "b").mkdir()
    np.save(tmp_path / "real.npy", _images(120, 8, 5))
    np.save(tmp_path / "b" / "real.npy", _images(110, 16, 6))
    out = tmp_path / "res"
    args = [str(tmp_path / "real.npy"), str(tmp_path / "b" / "real.npy"), "--features", "row_means_score_test",
            *runs, "--option", "imd.nv=20", "--out", str(out)]
    with caplog.at_level(logging.WARNING):
        doc = _score(args, capsys)
    fake = str(tmp_path / "b" / "real.npy")
    assert [r["metric"] for r in doc["results"]] == ["imd"] and doc["dims"] == {"real": 8, fake: 16}
    assert list(doc["metrics"]) == ["imd"] and doc["metrics"]["imd"]["nv"] == 20
    assert f"FAKE {fake} has 16: FID, KID need one dimension and are left out; scoring IMD" in caplog.text
    record = json.loads((out / "summary.json").read_text())
    assert list(record["config"]["metrics"]) == ["imd"] and record["left_out"] == doc["left_out"]
    runs_csv = (out / "runs.csv").read_text()
    again = _score(args, capsys)  # resumed: the store keyed by the narrowed identity is this command's
    assert [(r["metric"], r["value"]) for r in again["results"]] == [(r["metric"], r["value"]) for r in doc["results"]]
    assert (out / "runs.csv").read_text() == runs_csv


def test_score_chosen_metric_refused_after_extraction_leaves_no_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], row_means: type) -> None:
    """Chosen FID through an extractor that declares no dimension: refused in one line once the features disagree,
    before any run, and the folder the command made is gone (no record keyed to the refused config, no grids)."""
    np.save(tmp_path / "real.npy", _images(120, 8, 5))
    np.save(tmp_path / "fake.npy", _images(110, 16, 6))
    out = tmp_path / "res"
    args = [str(tmp_path / "real.npy"), str(tmp_path / "fake.npy"), "--features", "row_means_score_test",
            "--option", "imd.nv=20", "--out", str(out)]
    assert main([*args, "--metrics", "imd,fid", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.strip().endswith(
        f"FID needs features of one dimension, but REAL {tmp_path / 'real.npy'} has 8 features and FAKE "
        f"{tmp_path / 'fake.npy'} has 16: to compare sets of different dimension choose only dimension-free metrics "
        "(IMD, Vendi)"), err
    assert not out.exists()
    assert [r["metric"] for r in _score([*args, "--metrics", "imd"], capsys)["results"]] == ["imd"]
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert main([*args, "--metrics", "imd,fid", "--overwrite", "--quiet"]) == 2  # refused: the results it would
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # overwrite are all still there
    capsys.readouterr()
    nested = tmp_path / "n1" / "n2" / "res"
    assert main([*args[:-1], str(nested), "--metrics", "imd,fid", "--quiet"]) == 2
    assert not (tmp_path / "n1").exists()  # every folder the command made is gone


def test_score_labels_real_and_shared_are_refused_from_python(tmp_path: Path) -> None:
    """REAL's label in the results is "real": a FAKE labelled so in Python is refused, one given as a path named
    real.npy is labelled by its path."""
    import ganeval

    np.save(tmp_path / "real.npy", _images(60, 8, 5))
    (tmp_path / "b").mkdir()
    np.save(tmp_path / "b" / "real.npy", _images(60, 8, 6))
    real, other = str(tmp_path / "real.npy"), str(tmp_path / "b" / "real.npy")
    with pytest.raises(ValueError, match=r"^a generated set is labelled 'real', real's label in the results"):
        ganeval.score(real, {"real": other}, features="pixels", metrics="imd", progress=False)
    with pytest.raises(ValueError, match=r"^a generated set is labelled 'real'"):
        ganeval.score(real, {"real": np.zeros((60, 4), np.float32)}, metrics="imd", progress=False)
    with pytest.raises(ValueError, match=r"^a generated set is labelled 'real'"):  # before: an internal error
        ganeval.score(real, {"real": real, other: other}, features="pixels", metrics="imd", progress=False)
    r = ganeval.score(real, [real, other], features="pixels", metrics="imd", progress=False)  # unlabelled: by path
    assert list(r.record.dims) == ["real", real, other]


def test_score_extractor_without_feature_dim_keeps_every_default_metric_when_its_features_agree(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], quarter_means: type) -> None:
    """16-d and 40-d inputs become 4-d features each through the quarter means: nothing is left out (the inputs'
    widths are not the features')."""
    rng = np.random.default_rng(7)
    np.save(tmp_path / "r16.npy", rng.normal(size=(120, 16)).astype(np.float32))
    np.save(tmp_path / "f40.npy", rng.normal(size=(110, 40)).astype(np.float32))
    doc = _score([str(tmp_path / "r16.npy"), str(tmp_path / "f40.npy"), "--features", "quarter_means_test",
                  "--option", "imd.nv=20"], capsys)
    assert {r["metric"] for r in doc["results"]} == {"imd", "kid", "fid"} and doc["dims"] == {"real": 4, "f40": 4}
