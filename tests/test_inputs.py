"""Bad inputs and changed inputs: a results directory is keyed by the content of what its numbers come from,
checks run before any expensive work, and user errors end with one message and exit status 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf, open_dict

from apphelp import compose_config, no_work, run_inprocess
from ganeval.app.main import report, run_app, user_errors
from ganeval.app import generators, pipeline

FAST = ["metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=50", "progress=false", "plots=false"]


def _save(path: Path, a: np.ndarray) -> str:
    np.save(path, a)
    return str(path)


def _points(n: int, d: int, shift: float, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).normal(size=(n, d)) + shift).astype(np.float32)


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    """real (400×8), fake and fake2 (300×8, different content) as .npy files."""
    return {"real": _save(tmp_path / "real.npy", _points(400, 8, 0.0, 0)),
            "fake": _save(tmp_path / "fake.npy", _points(300, 8, 0.3, 1)),
            "fake2": _save(tmp_path / "fake2.npy", _points(300, 8, 1.0, 2))}


def _bench(tmp_path: Path, real: str, fake: str, *extra: str) -> list[str]:
    return ["experiment=benchmark", "data=array", f"data.path={real}", "generator=samples", f"generator.path={fake}",
            "features=identity", "sample_size=100", "runs=2", f"cache_dir={tmp_path / 'cache'}",
            f"results_dir={tmp_path / 'res'}", f"models_dir={tmp_path / 'models'}", *FAST, *extra]


def _run_cfg(overrides: list[str], edit: dict[str, Any]) -> Any:
    """Like run_inprocess, with config nodes replaced by `edit` (for keys the command line cannot spell)."""
    from hydra.core.hydra_config import HydraConfig

    cfg = compose_config(overrides)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]
        for key, value in edit.items():
            cfg[key] = OmegaConf.create(value)
    return run_app(cfg)


# ------------------------------------------------------------------------------------------------
# 1. a results directory is the protocol plus the content of its inputs
# ------------------------------------------------------------------------------------------------
def test_same_path_new_generator_content_is_refused_before_work(files, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    g = tmp_path / "g.npy"
    shutil.copy(files["fake"], g)
    run_inprocess(_bench(tmp_path, files["real"], str(g)))
    shutil.copy(files["fake2"], g)  # the recipe: same path, another generator's samples
    with monkeypatch.context() as m:
        no_work(m)
        with pytest.raises(ValueError, match=r"overwrite=true.*what differs: .*generators\.array/g\.sha256"):
            run_inprocess(_bench(tmp_path, files["real"], str(g), "runs=4"))
    assert pd.read_csv(tmp_path / "res" / "runs.csv")["run"].nunique() == 2  # nothing written, nothing mixed
    # overwrite=true discards the old runs: the numbers are those of a fresh directory
    s = run_inprocess(_bench(tmp_path, files["real"], str(g), "overwrite=true"))
    fresh = run_inprocess(_bench(tmp_path, files["real"], files["fake2"], f"results_dir={tmp_path / 'fresh'}"))
    pd.testing.assert_frame_equal(s.drop(columns="model"), fresh.drop(columns="model"))
    # the same content again resumes (the early check and the run loop agree), more runs extend it
    s = run_inprocess(_bench(tmp_path, files["real"], str(g), "runs=3"))
    assert (s.n_runs == 3).all()


def test_same_path_new_real_data_is_refused(files, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = tmp_path / "r.npy"
    shutil.copy(files["real"], real)
    run_inprocess(_bench(tmp_path, str(real), files["fake"]))
    np.save(real, _points(400, 8, 0.0, 7))
    no_work(monkeypatch)
    with pytest.raises(ValueError, match=r"what differs: .*data of array\.sha256"):
        run_inprocess(_bench(tmp_path, str(real), files["fake"]))


def test_trained_generator_is_identified_by_its_spec_and_data(files, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ganeval.gan import CallableGenerator

    spec = "+generators.t={train: {arch: mlp, gan: gan, epochs: 1, arch_kwargs: {out_dim: 8}}}"
    trained: list[dict[str, Any]] = []

    def fake_train(ctx, real, spec, data, model):  # type: ignore[no-untyped-def]
        trained.append(spec)
        return CallableGenerator("apphelp:toy_points", points=True)

    real = tmp_path / "r.npy"
    shutil.copy(files["real"], real)
    with monkeypatch.context() as m:
        m.setattr(generators, "train_generator", fake_train)
        run_inprocess(_bench(tmp_path, str(real), files["fake"], spec, "train_epochs=2"))
    assert trained == [{"arch": "mlp", "gan": "gan", "epochs": 2, "arch_kwargs": {"out_dim": 8}, "seed": 0}]
    meta = (tmp_path / "res" / "runs.meta.json").read_text()
    assert '"train"' in meta and '"epochs": 2' in meta
    np.save(real, _points(400, 8, 0.0, 7))  # same spec, other data: another model would be trained
    no_work(monkeypatch)
    with pytest.raises(ValueError, match=r"what differs: .*generators\.array/t\.data"):
        run_inprocess(_bench(tmp_path, str(real), files["fake"], spec, "train_epochs=2"))


def test_callable_generator_code_change_is_refused(files, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    mod = tmp_path / "mygen_inputs.py"
    mod.write_text("import numpy as np\n\ndef sample(n, seed):\n"
                   "    return np.random.default_rng(seed).normal(size=(n, 8)).astype(np.float32)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    args = [a for a in _bench(tmp_path, files["real"], files["fake"]) if not a.startswith("generator")]
    args += ["generator=callable", "generator.function=mygen_inputs:sample", "generator.points=true"]
    run_inprocess(args)
    mod.write_text(mod.read_text() + "# edited: the numbers may differ now\n")
    with pytest.raises(ValueError, match=r"what differs: .*code_sha256"):
        run_inprocess(args)


def test_inception_weights_content_is_part_of_the_identity(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ganeval.features.inception import save_random_weights

    weights = save_random_weights(tmp_path / "w.pth", seed=0)
    rng = np.random.default_rng(0)
    real = _save(tmp_path / "real.npy", rng.integers(0, 256, size=(30, 3, 8, 8), dtype=np.uint8))
    fake = _save(tmp_path / "fake.npy", rng.integers(0, 128, size=(30, 3, 8, 8), dtype=np.uint8))
    # features stand in for the network here: only the identity (with the weights' hash) is under test
    monkeypatch.setattr(pipeline, "features", lambda ctx, images, ex, what: images.reshape(len(images), -1)[:, :16]
                        .astype(np.float32) + np.arange(16, dtype=np.float32))
    args = [a for a in _bench(tmp_path, real, fake) if a != "features=identity"]
    args += ["features=inception", f"features.weights={weights}", "features.download=false", "sample_size=20",
             "metrics.kid.subset_size=10", "metrics.imd.k=3"]
    run_inprocess(args)
    save_random_weights(weights, seed=1)  # other weights at the same path
    with pytest.raises(ValueError, match=r"what differs: .*extractor\.weights"):
        run_inprocess(args)


def test_unwritable_results_dir_fails_before_loading(files, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(pipeline, "load_data", lambda *a: pytest.fail("data loaded"))
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(ValueError, match="results_dir=.*a_file is a file; choose another results_dir"):
        run_inprocess(_bench(tmp_path, files["real"], files["fake"], f"results_dir={blocker / 'res'}"))
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    if os.geteuid() == 0:  # root writes anyway: let the probe meet what anyone else would
        import tempfile

        real_tempfile = tempfile.TemporaryFile

        def denied(*args: Any, dir: Any = None, **kwargs: Any) -> Any:  # noqa: A002 - tempfile's name
            if dir is not None and Path(dir) == ro:
                raise PermissionError(13, "Permission denied")
            return real_tempfile(*args, dir=dir, **kwargs)

        monkeypatch.setattr(tempfile, "TemporaryFile", denied)
    with pytest.raises(ValueError, match="results_dir=.* is not writable"):
        run_inprocess(_bench(tmp_path, files["real"], files["fake"], f"results_dir={ro / 'res'}"))


# ------------------------------------------------------------------------------------------------
# 2. checks before work
# ------------------------------------------------------------------------------------------------
def test_non_finite_rows_named_at_load(files, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    x = _points(400, 8, 0.0, 0)
    x[[3, 250], 1] = np.nan
    x[9, 0] = np.inf
    bad = _save(tmp_path / "bad.npy", x)
    with monkeypatch.context() as m:
        no_work(m)
        with pytest.raises(ValueError, match=r"data of array has 3 row\(s\) with NaN or inf values \(of 400; "
                                             r"rows 3, 9, 250\)"):
            run_inprocess(_bench(tmp_path, bad, files["fake"]))
    # a generated pool: refused by the protocol's check of every pool, before any run
    fake = _save(tmp_path / "badfake.npy", x[:300])
    with pytest.raises(ValueError, match=r"generated pool \{'model': 'badfake'\} has 3 row\(s\).*rows 3, 9, 250"):
        run_inprocess(_bench(tmp_path, files["real"], fake))
    assert not (tmp_path / "res" / "runs.csv").exists()
    from ganeval import evaluate

    with pytest.raises(ValueError, match=r"the real pool 0 has 3 row\(s\)"):
        evaluate(x, _points(300, 8, 0.0, 1), runs=1, sample_size=100, metrics=["fid"], progress=False)


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "true"])
def test_train_epochs_refused_before_loading(files, tmp_path, monkeypatch, value) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(pipeline, "load_data", lambda *a: pytest.fail("data loaded"))
    if value in ("1.5", "true"):  # not an integer: the schema refuses it while Hydra composes, naming the key
        from hydra.errors import ConfigCompositionException

        with pytest.raises(ConfigCompositionException) as e:
            run_inprocess(_bench(tmp_path, files["real"], files["fake"], f"train_epochs={value}"))
        assert "train_epochs" in str(e.value.__cause__) and "Integer" in str(e.value.__cause__)
        return
    with pytest.raises(ValueError, match="train_epochs must be an integer ≥ 1"):
        run_inprocess(_bench(tmp_path, files["real"], files["fake"], f"train_epochs={value}"))


def test_model_and_dataset_labels_that_collide_are_refused(files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval import evaluate

    x = _points(200, 8, 0.0, 0)
    with pytest.raises(ValueError, match=r"fakes has the models 1 and '1' both become the label '1'"):
        evaluate(x, {1: x, "1": x + 1}, runs=1, sample_size=100, metrics=["fid"], progress=False)
    gen = {"_target_": "ganeval.gan.SampleGenerator", "path": files["fake"]}
    over = [a for a in _bench(tmp_path, files["real"], files["fake"]) if not a.startswith("generator")]
    with pytest.raises(ValueError, match=r"generators has the keys 1 and '1' both become the label '1'"):
        _run_cfg(over, {"generators": {1: gen, "1": gen}})
    data = {"_target_": "ganeval.data.array", "path": files["real"]}
    with pytest.raises(ValueError, match=r"datasets has the keys 7 and '7' both become the label '7'"):
        _run_cfg(over, {"datasets": {7: {"data": data, "generators": {"a": gen}},
                                     "7": {"data": data, "generators": {"a": gen}}}})


# ------------------------------------------------------------------------------------------------
# 3. user errors: exit 2, one message; the traceback only with HYDRA_FULL_ERROR=1
# ------------------------------------------------------------------------------------------------
def _cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    return subprocess.run([sys.executable, "-m", "ganeval", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1", **env})


def test_cli_missing_weights_and_missing_data_path_exit_2(files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = _cli([a for a in _bench(tmp_path, files["real"], files["fake"]) if a != "features=identity"]
             + ["features=inception", f"features.weights={tmp_path / 'none.pth'}", "features.download=false"], tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 2, out[-2000:]
    assert "Traceback" not in out and "FID Inception weights" in out and "none.pth" in out
    assert len(out.splitlines()) < 15
    args = [a for a in _bench(tmp_path, files["real"], files["fake"]) if not a.startswith("data.path")]
    r = _cli(args, tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "Traceback" not in out
    assert "data.path must be given: add data.path=... to the command line" in out
    r = _cli(args, tmp_path, HYDRA_FULL_ERROR="1")
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "Traceback" in out and "data.path must be given" in out


@pytest.mark.parametrize(
    "extra, match",
    [
        (["device=bogus"], "device='bogus' is not a device torch knows"),
        (["train_epochs=0"], "train_epochs must be an integer ≥ 1, got 0"),
    ],
)
def test_config_errors_are_user_errors(files, tmp_path, extra, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(user_errors(), match=match) as e:
        run_inprocess(_bench(tmp_path, files["real"], files["fake"], *extra))
    assert report(e.value) == 2


def test_damaged_array_files_name_the_file_and_the_fault(files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = Path(files["fake"]).read_bytes()
    trunc = tmp_path / "trunc.npy"
    trunc.write_bytes(data[: len(data) // 2])
    junk = tmp_path / "junk.npy"
    junk.write_bytes(b"not an array" * 20)
    # as the generator: validation maps the file (the mmap error named nothing before)
    with pytest.raises(user_errors(), match=r"generator 'trunc'.*trunc\.npy is truncated: its header says \(300, 8\)"):
        run_inprocess(_bench(tmp_path, files["real"], str(trunc)))
    # as the real data (loaded, not mapped): named, and not blamed on pickle
    with pytest.raises(user_errors(), match=r"trunc\.npy is truncated"):
        run_inprocess(_bench(tmp_path, str(trunc), files["fake"]))
    with pytest.raises(user_errors(), match=r"junk\.npy is not a readable \.npy file") as e:
        run_inprocess(_bench(tmp_path, str(junk), files["fake"]))
    assert "pickle" not in str(e.value)
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"obj\.npy holds Python objects"):
        run_inprocess(_bench(tmp_path, str(obj), files["fake"]))


def test_feature_cache_entry_that_is_a_directory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval.features import extract, extract_with_info

    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (150, 1, 8, 8), dtype=np.uint8)
    _, info = extract_with_info(x, "pixels", cache_dir=tmp_path / "cache", progress=False)
    entry = Path(info["cache_file"])
    entry.unlink()
    entry.mkdir()
    with pytest.raises(ValueError, match=r"feature cache entry .* is not a file .*remove it, or choose another cache_dir"):
        extract(x, "pixels", cache_dir=tmp_path / "cache", progress=False)
    # through the app: the real data's entry is that directory
    real = _save(tmp_path / "real.npy", x)
    fake = _save(tmp_path / "fake.npy", rng.integers(0, 256, (150, 1, 8, 8), dtype=np.uint8))
    args = [a for a in _bench(tmp_path, real, fake) if a != "features=identity"] + ["features=pixels"]
    with pytest.raises(user_errors(), match=r"feature cache entry .* is not a file") as e:
        run_inprocess(args)
    assert report(e.value) == 2


# ------------------------------------------------------------------------------------------------
# 4. messages that say what is actually wrong
# ------------------------------------------------------------------------------------------------
def test_one_dimensional_arrays_are_refused(files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ganeval.features import extract

    flat = _save(tmp_path / "flat.npy", np.arange(400, dtype=np.float32))
    with pytest.raises(ValueError, match=r"data of array is an array of shape \(400,\).*reshape it to N×1"):
        run_inprocess(_bench(tmp_path, flat, files["fake"]))
    with pytest.raises(ValueError, match=r"generator 'flat'.*shape \(400,\) float32; expected float points N×D"):
        run_inprocess(_bench(tmp_path, files["real"], flat))
    with pytest.raises(ValueError, match=r"features must be N×D .*shape \(400,\)"):
        extract(np.arange(400, dtype=np.float32), "identity", progress=False)


def test_feature_dimensions_that_differ_name_the_input_shapes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    real = _save(tmp_path / "r64.npy", _points(400, 64, 0.0, 0))
    fake = _save(tmp_path / "f32.npy", _points(300, 32, 0.0, 1))
    chosen = [a for a in _bench(tmp_path, real, fake) if not a.startswith("metrics.kid")]  # FID chosen: refused
    with pytest.raises(ValueError, match=r"array/f32 has 32-d features but its real data 64-d.*real: rows of shape "
                                         r"\(64,\).*generated: rows of shape \(32,\)") as e:
        run_inprocess([*chosen, "metrics=imd", "+metrics.fid={}"])
    assert "same extractor for both" not in str(e.value)


def test_one_colour_image_in_a_grey_folder(tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    from PIL import Image

    rng = np.random.default_rng(0)
    real, fake = tmp_path / "real", tmp_path / "fake"
    for folder, n in ((real, 120), (fake, 120)):
        folder.mkdir()
        for i in range(n):
            Image.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8), "L").save(folder / f"{i:03d}.png")
    Image.fromarray(rng.integers(0, 256, (8, 8, 4), dtype=np.uint8), "RGBA").save(fake / "050.png")
    args = ["experiment=benchmark", "data=folder", f"data.path={real}", "generator=samples",
            f"generator.path={fake}", "features=pixels", "sample_size=100", "runs=1",
            f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}", "progress=false", "plots=false"]
    # the default metrics: the sets now differ in dimension, so only IMD compares them, and both notes say why
    s = run_inprocess([*args, *FAST])
    assert list(s.metric) == ["imd"]
    assert "1 of the 120 images under" in caplog.text and "050.png" in caplog.text
    assert "folder (real) has 64 features and folder/fake has 192: FID, KID need one dimension" in caplog.text
    with pytest.raises(ValueError, match=r"192-d features but its real data 64-d.*real: 8×8 images with 1 channel, "
                                         r"shape \(120, 1, 8, 8\); generated: 8×8 images with 3 channels"):
        run_inprocess([*args, "metrics=imd", "+metrics.fid={}", f"results_dir={tmp_path / 'r2'}"])  # chosen: refused early
    assert not (tmp_path / "r2").exists()


def test_five_dimensional_array_reports_its_own_shape(files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    five = _save(tmp_path / "five.npy", np.zeros((30, 2, 3, 4, 5), np.float32))
    with pytest.raises(ValueError, match=r"generator 'five'.*got shape \(30, 2, 3, 4, 5\)"):
        run_inprocess(_bench(tmp_path, files["real"], five))


def test_pool_too_small_message(files, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"sample_size=350 is larger than the generated pool of array/fake "
                                         r"\(n_generated\) \(300 rows\): lower sample_size or give that pool more rows"):
        run_inprocess(_bench(tmp_path, files["real"], files["fake"], "sample_size=350"))


def test_an_error_inside_a_target_is_one_line(tmp_path, caplog, capsys) -> None:  # type: ignore[no-untyped-def]
    """A dataset absent offline raises inside Hydra's instantiate: the refusal is the dataset's own message on one
    line (Hydra's "Error in call to target ...", the repr and "full_key:" made it three), in both commands."""
    from hydra.utils import instantiate

    from ganeval.app.score_print import refusal

    node = OmegaConf.create({"_target_": "ganeval.data.datasets.cifar10", "root": str(tmp_path / "d"),
                             "download": False})
    with pytest.raises(user_errors()) as e:
        instantiate(node)
    caplog.clear()
    assert report(e.value) == 2
    (line,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert "\n" not in line and line.startswith("CIFAR10 not found under") and "Error in call" not in line, line
    text = refusal(e.value, download=True)
    assert "\n" not in text and text.startswith("CIFAR10 not found under"), text
