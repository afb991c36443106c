"""Sweep 6 of `ganeval.app.scoring`: the "late dims" path (an extractor that declares no `feature_dim`), the
precomputed-REAL extractor choice, the config hash with and without `out`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
import torch

import ganeval
from ganeval.features.base import REGISTRY, Extractor, register
from ganeval.metrics import frechet_distance

NAME = "row_means_sweep6"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in a scratch folder: nothing a call might write lands in the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture()
def row_means() -> Iterator[str]:
    """Per-row means of images, declaring no `feature_dim` (registered for the test only)."""
    from ganeval.data.images import images_to_float

    @register(NAME)
    class RowMeans(Extractor):
        images = True
        cacheable = False

        def __call__(self, batch: torch.Tensor) -> torch.Tensor:
            return images_to_float(batch).mean(dim=(1, 3))

    yield NAME
    del REGISTRY[NAME]


def _images(n: int, side: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 1, side, side), dtype=np.uint8)


def _row_means(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float64) / 255.0).mean(axis=(1, 3))


def _fd(x: np.ndarray, y: np.ndarray) -> float:
    return float(frechet_distance(x.mean(0), np.cov(x, rowvar=False), y.mean(0), np.cov(y, rowvar=False)))


def test_late_dims_default_metrics_narrowed_to_imd_with_paths(tmp_path: Path, row_means: str) -> None:
    """8- and 16-d features known only after extraction: the default metrics narrowed to IMD, the note naming REAL
    and FAKE by their paths, the dims recorded; with `out` the files are written and the grids too."""
    np.save(tmp_path / "real.npy", _images(60, 8, 5))
    np.save(tmp_path / "fake.npy", _images(50, 16, 6))
    out = tmp_path / "res"
    r = ganeval.score(str(tmp_path / "real.npy"), str(tmp_path / "fake.npy"), features=row_means, out=out,
                      progress=False, plots=False)
    assert list(r.summary["metric"]) == ["imd"]
    assert r.record.dims == {"real": 8, "fake": 16}
    assert r.record.left_out == (f"note: real {tmp_path / 'real.npy'} has 8 features and fakes {tmp_path / 'fake.npy'} "
                                 "has 16: FID, KID need one dimension and are left out; scoring IMD")
    assert list(r.record.config["metrics"]) == ["imd"]
    assert r.extracted == 110
    rec = json.loads((out / "summary.json").read_text())
    assert list(rec["config"]["metrics"]) == ["imd"]
    assert sorted(p.name for p in out.glob("samples_*.png")) != []


def test_late_dims_chosen_metric_refused_and_folder_removed(tmp_path: Path, row_means: str) -> None:
    """Chosen FID through an extractor that declares no dimension: refused once the features disagree, naming both
    sets and dimensions; the folder the call made is removed."""
    real, fake = _images(60, 8, 5), _images(50, 16, 6)
    out = tmp_path / "res"
    with pytest.raises(ValueError) as e:
        ganeval.score(real, fake, features=row_means, metrics="imd,fid", out=out, progress=False, plots=False)
    assert str(e.value) == ("FID needs features of one dimension, but real has 8 features and fakes has 16: to compare "
                            "sets of different dimension choose only dimension-free metrics (IMD, Vendi)")
    assert not out.exists()


def test_late_dims_same_dimension_scores_every_default_metric(row_means: str) -> None:
    """Both sets 8-d through the late extractor: nothing left out, FID exact against float64 row means."""
    real, fake = _images(60, 8, 5), _images(50, 8, 6)
    r = ganeval.score(real, fake, features=row_means, progress=False)
    assert sorted(r.summary["metric"]) == ["fid", "imd", "kid"]
    assert r.record.left_out is None
    assert r.record.dims == {"real": 8, "fake": 8}
    assert r["fid"] == pytest.approx(_fd(_row_means(real), _row_means(fake)), rel=1e-4)
    assert r.extracted == 110


def test_late_dims_chosen_fid_same_dimension_is_scored(row_means: str) -> None:
    real, fake = _images(60, 8, 5), _images(50, 8, 6)
    r = ganeval.score(real, fake, features=row_means, metrics="fid", progress=False)
    assert list(r.summary["metric"]) == ["fid"]
    assert r["fid"] == pytest.approx(_fd(_row_means(real), _row_means(fake)), rel=1e-4)


def test_config_hash_same_with_and_without_out(tmp_path: Path) -> None:
    """A full-set call's config hash is the plan's identity both ways (with `out`: opened as not the protocol)."""
    rng = np.random.default_rng(1)
    real = rng.normal(size=(40, 3)).astype(np.float32)
    fake = (real + 0.5).astype(np.float32)
    a = ganeval.score(real, fake, metrics="fid", progress=False)
    b = ganeval.score(real, fake, metrics="fid", progress=False, out=tmp_path / "res", plots=False)
    assert a.record.config_hash == b.record.config_hash
    c = ganeval.score(real, fake, metrics="fid", progress=False, runs=2, sample_size=20)
    d = ganeval.score(real, fake, metrics="fid", progress=False, runs=2, sample_size=20, out=tmp_path / "r2",
                      plots=False)
    assert c.record.config_hash == d.record.config_hash != a.record.config_hash


def test_precomputed_real_reference_with_image_fakes(tmp_path: Path) -> None:
    """A reference holding pixel features against image fakes through `pixels`: FAKE's extractor made from the fakes
    alone (REAL holds features), FD exact."""
    real, fake = _images(30, 4, 1), _images(25, 4, 2)
    ref = tmp_path / "ref.npz"
    ganeval.score(real, features="pixels", save_ref=str(ref), progress=False)
    r = ganeval.score(str(ref), fake, features="pixels", metrics="fid", progress=False)
    x = real.reshape(30, -1).astype(np.float64) / 255.0
    y = fake.reshape(25, -1).astype(np.float64) / 255.0
    assert r["fid"] == pytest.approx(_fd(x, y), rel=1e-3)
    assert r.extracted == 25


# --------------------------------------------------------------------------- extractor_requests, time_line
def test_real_features_equal_to_the_default_is_no_own_extractor() -> None:
    """--real-features identity on feature rows names the default extractor: no extractor of REAL's own."""
    rng = np.random.default_rng(0)
    real = rng.normal(size=(30, 3)).astype(np.float32)
    r = ganeval.score(real, real + 0.5, metrics="fid", real_features="identity", progress=False)
    assert "real_features" not in r.record.config
    assert r["fid"] == pytest.approx(0.75, rel=1e-5)


def test_time_line_under_one_second_of_features() -> None:
    """0 < seconds ≤ 1 with images extracted still gives the rate."""
    from types import SimpleNamespace

    from ganeval.app.score_print import time_line

    r = SimpleNamespace(stages={"features": 0.5}, extracted=10, from_cache=0)
    assert time_line(r, 0.5) == "ganeval-score: 0.5 s in all: features 0.5 s (10 images at 20.0 images/s)"
    r = SimpleNamespace(stages={"features": 1.0}, extracted=10, from_cache=0)
    assert time_line(r, 1.0) == "ganeval-score: 1.0 s in all: features 1.0 s (10 images at 10.0 images/s)"


# --------------------------------------------------------------------------- score_inputs
def test_in_memory_takes_torch_tensors_only_with_detach() -> None:
    from ganeval.app.score_inputs import in_memory

    t = torch.arange(6, dtype=torch.float32).reshape(3, 2)
    assert np.array_equal(in_memory(t, "x"), t.numpy())

    class Detachable:
        def detach(self) -> "Detachable":
            return self

    for obj, kind in ((Detachable(), "Detachable"), (torch.float32, "dtype")):
        with pytest.raises(ValueError, match=rf"^x is a {kind}: give a folder"):
            in_memory(obj, "x")


def _classify(a: np.ndarray):  # type: ignore[no-untyped-def]
    from ganeval.app.score_inputs import InputSet, classify

    return classify(InputSet("arr", "arr", "array", a, False))


def test_classify_unit_range_edges() -> None:
    """Floats exactly 0 and 1 are images; 2-D of any number dtype is features; one row is enough."""
    a = np.zeros((2, 4, 4), np.float32)
    a[0, 0, 0] = 1.0
    assert _classify(a).images is True
    assert _classify(np.zeros((1, 3), np.int64)).images is False
    assert _classify(np.zeros((1, 4, 4), np.uint8)).images is True
    assert _classify(np.zeros((1, 3, 4, 4), np.uint8)).images is True
    b = a.copy()
    b[1, 0, 0] = np.nextafter(np.float32(1), np.float32(2))
    with pytest.raises(ValueError, match="float array of shape"):
        _classify(b)
    c = a.copy()
    c[1, 0, 0] = -np.float32(1e-6)
    with pytest.raises(ValueError, match="float array of shape"):
        _classify(c)
    with pytest.raises(ValueError, match="^arr is empty$"):
        _classify(np.zeros((0, 3), np.float32))
    with pytest.raises(ValueError, match="holds bool values"):
        _classify(np.zeros((2, 3), bool))
    with pytest.raises(ValueError, match="neither N×D features nor images"):
        _classify(np.zeros((2, 4, 4), np.int32))
    with pytest.raises(ValueError, match="neither N×D features nor images"):
        _classify(np.zeros((2, 3, 4, 4, 1), np.uint8))


def _fake(arg: str, name: str, labelled: bool = False):  # type: ignore[no-untyped-def]
    from ganeval.app.score_inputs import InputSet

    s = InputSet(arg, name, "array", np.zeros((2, 2), np.float32), False)
    s.labelled = labelled
    return s


def test_label_sets_exact() -> None:
    from ganeval.app.score_inputs import label_sets

    a, b = _fake("x/a.npy", "a"), _fake("y/a.npy", "a")
    label_sets([a, b])
    assert (a.name, b.name) == ("x/a.npy", "y/a.npy")
    c = _fake("d/real.npy", "real")
    label_sets([c])
    assert c.name == "d/real.npy"
    one = _fake("one.npy", "one")
    label_sets([one])
    assert one.name == "one"
    with pytest.raises(ValueError, match="^FAKE p.npy is given 2 times: give each generated set once$"):
        label_sets([_fake("p.npy", "p"), _fake("p.npy", "p")])
    with pytest.raises(ValueError, match="labelled 'real'"):
        label_sets([_fake("q.npy", "real", labelled=True)])
    with pytest.raises(ValueError, match="^two generated sets are labelled 'm': give each its own label$"):
        label_sets([_fake("r.npy", "m", labelled=True), _fake("s.npy", "m", labelled=True)])
    lab, unl = _fake("t.npy", "t", labelled=True), _fake("u.npy", "t")
    label_sets([lab, unl])
    assert (lab.name, unl.name) == ("t", "u.npy")


def test_reference_moments_choice_exact() -> None:
    from types import SimpleNamespace

    from ganeval.app.score_inputs import reference_moments
    from ganeval.data.references import ReferenceError

    m1, m2 = object(), object()
    one = SimpleNamespace(moments={"inception": m1})
    two = SimpleNamespace(moments={"inception": m1, "dinov2": m2})
    assert reference_moments(two, SimpleNamespace(name="dinov2"), "f") is m2
    assert reference_moments(one, SimpleNamespace(name="identity"), "f") is m1
    with pytest.raises(ReferenceError, match="^REAL f holds moments of inception, dinov2 features, not identity's: give "
                                             "--features inception or dinov2"):
        reference_moments(two, SimpleNamespace(name="identity"), "f")
    with pytest.raises(ReferenceError, match="not clip's: give --features inception "):
        reference_moments(one, SimpleNamespace(name="clip"), "f")


def test_same_made_exact() -> None:
    from ganeval.app.score_inputs import same_made

    full = "ab" * 32
    assert same_made("dims", 1, 1, {}) is True
    assert same_made("dims", 1, 2, {}) is False
    assert same_made("weights", full, full, {}) is True
    assert same_made("weights", full[:8], full, {}) is True
    assert same_made("weights", full[:8], full, {"weights_sha256": full}) is True
    assert same_made("weights", full[:8], full, {"weights_sha256": "cd" * 32}) is False
    assert same_made("weights", "ff" * 4, full, {}) is False


def test_precomputed_exact() -> None:
    from types import SimpleNamespace

    from ganeval.app.score_inputs import precomputed

    assert precomputed(SimpleNamespace(reference=None)) is False
    assert precomputed(SimpleNamespace(reference=SimpleNamespace(features=None))) is False
    assert precomputed(SimpleNamespace(reference=SimpleNamespace(features=np.zeros((1, 1))))) is True


# --------------------------------------------------------------------------- score_protocol
FFHQ = "FID (legacy_tensorflow) of 50000 generated images against all FFHQ images at 256×256, one value"
C10 = "FID (legacy_tensorflow) of 10000 generated images against the 10000 CIFAR-10 test images, one value"


def _ns(**kw: object):  # type: ignore[no-untyped-def]
    import argparse

    d: dict = dict(protocol="ffhq256_50k", features=None, dims=None, resize=None, seed=0, size=None, metrics=None)
    d.update(kw)
    return argparse.Namespace(**d)


def test_apply_protocol_fills_every_option_exactly() -> None:
    from ganeval.app.score_protocol import apply_protocol

    a = _ns()
    assert apply_protocol(a, set())["name"] == "ffhq256_50k"
    assert vars(a) == {"protocol": "ffhq256_50k", "features": "inception", "dims": 2048, "resize": "legacy_tensorflow",
                       "seed": 0, "size": 256, "metrics": None}
    b = _ns(features="inception", dims=2048, resize="legacy_tensorflow", seed=0, size=256, metrics=" imd , fid")
    assert apply_protocol(b, {"features", "dims", "resize", "seed", "size", "metrics"})["name"] == "ffhq256_50k"
    assert (b.size, b.dims) == (256, 2048)
    c = _ns(protocol="cifar10_test_10k", size=None)
    apply_protocol(c, set())
    assert c.size is None and c.features == "inception"
    assert apply_protocol(_ns(protocol=None), {"seed"}) is None


@pytest.mark.parametrize("kw, given, words", [
    (dict(size=128), {"size"}, f"--protocol ffhq256_50k fixes data.size=256 ({FFHQ}), but this command gives --size 128: "
     "drop --size to report the protocol's number, or drop --protocol ffhq256_50k to run your own (its numbers are "
     "then not comparable with the protocol's)"),
    (dict(seed=1), {"seed"}, f"--protocol ffhq256_50k fixes seed=0 ({FFHQ}), but this command gives --seed 1: drop "
     "--seed to report the protocol's number, or drop --protocol ffhq256_50k to run your own (its numbers are then not "
     "comparable with the protocol's)"),
    (dict(dims=768), {"dims"}, f"--protocol ffhq256_50k fixes features.dims=2048 ({FFHQ}), but this command gives "
     "--dims 768: drop --dims to report"),
    (dict(metrics="imd"), set(), f"--protocol ffhq256_50k reports FID ({FFHQ}), but --metrics imd leaves it out: add "
     "fid, or drop --protocol"),
])
def test_apply_protocol_departures_exact(kw: dict, given: set, words: str) -> None:
    from ganeval.app.score_protocol import apply_protocol

    with pytest.raises(ValueError) as e:
        apply_protocol(_ns(**kw), given)
    assert str(e.value).startswith(words)


def test_apply_protocol_departure_not_given_is_overwritten() -> None:
    """A value not on the command line is the protocol's, whatever it was."""
    from ganeval.app.score_protocol import apply_protocol

    a = _ns(seed=5, size=64, dims=64)
    apply_protocol(a, set())
    assert (a.seed, a.size, a.dims) == (0, 256, 2048)


def test_protocol_spec_and_extractor_name_exact() -> None:
    from ganeval.app.score_protocol import extractor_name, protocol_spec

    with pytest.raises(ValueError, match="^--protocol nope: no such protocol; the protocols are cifar10_test_10k, "
                                         "cifar10_train_50k, ffhq256_50k, imagenet256_adm$"):
        protocol_spec("nope")
    assert extractor_name("ganeval.features.InceptionExtractor") == "inception"
    assert extractor_name("ganeval.features.simple.PixelsExtractor") == "pixels"
    with pytest.raises(ValueError, match="^features._target_=nomodule has no --features name in ganeval-score$"):
        extractor_name("nomodule")


def _imgs(n: int, c: int, side: int, arg: str = "f"):  # type: ignore[no-untyped-def]
    from ganeval.app.score_inputs import InputSet

    s = InputSet(arg, arg, "array", np.zeros((n, c, side, side), np.uint8), False)
    s.images = True
    return s


def test_check_images_and_fakes_exact() -> None:
    from ganeval.app.score_protocol import check_fakes, check_images

    ok = _imgs(3, 3, 32)
    check_images("cifar10_test_10k", ok, [ok])
    check_images(None, _imgs(3, 1, 8), [])
    check_fakes(None, [ok])
    with pytest.raises(ValueError) as e:
        check_images("cifar10_test_10k", ok, [_imgs(3, 3, 16, "g")])
    assert str(e.value) == (f"--protocol cifar10_test_10k scores 32×32 images with 3 channels ({C10}), but FAKE g (3 "
                            "16×16 images with 3 channels): give images of that size, or drop --protocol")
    with pytest.raises(ValueError, match="^--protocol cifar10_test_10k scores 32×32 images with 3 channels .*but REAL r "):
        check_images("cifar10_test_10k", _imgs(3, 1, 32, "r"), [ok])
    feats = _fake("h.npy", "h")
    check_images("cifar10_test_10k", feats, [ok])  # feature rows are not checked
    with pytest.raises(ValueError) as e:
        check_fakes("cifar10_test_10k", [ok])
    assert str(e.value) == (f"--protocol cifar10_test_10k fixes n_generated=10000 ({C10}), but FAKE f (3 32×32 images "
                            "with 3 channels) has 3: give 10000 generated images, or drop --protocol")


def test_load_real_refusals_exact(tmp_path: Path) -> None:
    from ganeval.app.score_protocol import load_real

    with pytest.raises(ValueError, match=r"^--protocol cifar10_test_10k fixes the real data \(ganeval.data.cifar10, "
                                         r"data.train=False\): give REAL as cifar10, not foo, or drop --protocol"):
        load_real("cifar10_test_10k", "foo", None)
    np.save(tmp_path / "x.npy", np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"^--protocol ffhq256_50k fixes the real data \(ganeval.data.folder, "
                                         r"data.size=256\): give REAL as the folder, .zip or .tar of those images, not "):
        load_real("ffhq256_50k", str(tmp_path / "x.npy"), 256)
    adm = r"^--protocol imagenet256_adm fixes the real data \(ganeval.data.array, data.key=arr_0\): give REAL as the images "
    with pytest.raises(ValueError, match=adm + r"FILE.npz:arr_0 \(an ADM reference batch as it is\), not "):
        load_real("imagenet256_adm", str(tmp_path / "x.npy"), None)
    np.savez(tmp_path / "b.npz", arr_0=np.zeros((2, 4, 4, 3), np.uint8), other=np.zeros((2, 4, 4, 3), np.uint8))
    b = str(tmp_path / "b.npz")
    with pytest.raises(ValueError, match=adm + ".*b.npz:arr_0 .*, not .*b.npz:other$"):
        load_real("imagenet256_adm", b + ":other", None)
    s = load_real("imagenet256_adm", b + ":arr_0", None)
    assert s.images is True and len(s) == 2
    np.savez(tmp_path / "c.npz", images=np.zeros((2, 4, 4, 3), np.uint8))
    with pytest.raises(ValueError, match=adm + ".*c.npz:arr_0 .*, not .*c.npz$"):
        load_real("imagenet256_adm", str(tmp_path / "c.npz"), None)
