"""The `ganeval` Hydra app and `ganeval-collate`: end to end on array files, failures before work,
resume after SIGKILL, refusal under a changed config, determinism, a joblib sweep."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ganeval.app.collate import main as collate_main
from ganeval.results.collate import collate
from apphelp import run_inprocess

FAST = ["metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=50", "progress=false", "plots=false"]


@pytest.fixture()
def arrays(tmp_path: Path) -> dict[str, str]:
    rng = np.random.default_rng(0)
    paths = {}
    for name, shift, n in (("real", 0.0, 400), ("fake", 0.3, 300), ("other", 1.0, 300)):
        p = tmp_path / f"{name}.npy"
        np.save(p, (rng.normal(size=(n, 8)) + shift).astype(np.float32))
        paths[name] = str(p)
    return paths


def _bench(arrays: dict[str, str], tmp_path: Path, *extra: str) -> list[str]:
    return ["experiment=benchmark", "data=array", f"data.path={arrays['real']}", "generator=samples",
            f"generator.path={arrays['fake']}", "features=identity", "sample_size=100", "runs=3",
            f"cache_dir={tmp_path / 'cache'}", *FAST, *extra]


def _cli(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "ganeval", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, **kw)


def test_benchmark_on_array_files(arrays, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "res"
    summary = run_inprocess(_bench(arrays, tmp_path, f"results_dir={out}", "+generators.other={_target_: "
                                   f"ganeval.gan.SampleGenerator, path: {arrays['other']}}}"))
    assert set(summary.model) == {"fake", "other"} and set(summary.metric) == {"imd", "fid", "kid"}
    for f in ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "comparison.csv", "table.md", "table.tex"):
        assert (out / f).exists(), f
    cmp_ = pd.read_csv(out / "comparison.csv")
    assert cmp_[cmp_.metric == "fid"]["better"].iloc[0] == "fake"  # shifted by 0.3 beats shifted by 1.0
    import json

    rec = json.loads((out / "summary.json").read_text())
    import torch

    assert rec["extractor"] == {"name": "identity"} and rec["knn"] == "exact"
    assert rec["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert {"load data", "features", "runs"} <= set(rec["stage_seconds"]) and rec["config"]["sample_size"] == 100


def test_benchmark_with_a_callable_generator(arrays, tmp_path) -> None:  # type: ignore[no-untyped-def]
    args = [a for a in _bench(arrays, tmp_path, f"results_dir={tmp_path / 'c'}") if not a.startswith("generator")]
    s = run_inprocess(args + ["generator=callable", "generator.function=apphelp:toy_points", "generator.points=true",
                              "n_generated=250"])
    assert set(s.model) == {"apphelp:toy_points"}  # the callable generator names itself
    import json

    rec = json.loads((tmp_path / "c" / "summary.json").read_text())
    assert list(rec["generators"].values())[0]["kind"] == "callable"


def test_deterministic_same_command_same_numbers(arrays, tmp_path) -> None:  # type: ignore[no-untyped-def]
    a = run_inprocess(_bench(arrays, tmp_path, f"results_dir={tmp_path / 'a'}"))
    b = run_inprocess(_bench(arrays, tmp_path, f"results_dir={tmp_path / 'b'}"))
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a" / "runs.csv"), pd.read_csv(tmp_path / "b" / "runs.csv"))


def test_changed_config_refused_and_overwrite(arrays, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = f"results_dir={tmp_path / 'r'}"
    run_inprocess(_bench(arrays, tmp_path, out))
    with pytest.raises(ValueError, match="choose another results_dir or pass overwrite=true"):
        run_inprocess(_bench(arrays, tmp_path, out, "seed=1"))
    with pytest.raises(ValueError, match="overwrite=true"):
        run_inprocess(_bench(arrays, tmp_path, out, "metrics.imd.k=4"))
    s = run_inprocess(_bench(arrays, tmp_path, out, "seed=1", "overwrite=true"))
    assert len(s) == 3
    # more runs under the same config extend the stored ones instead of refusing
    s = run_inprocess(_bench(arrays, tmp_path, out, "seed=1", "runs=4"))
    assert (s.n_runs == 4).all()


@pytest.mark.parametrize(
    "extra, match",
    [
        (["sample_size=350"], "sample_size=350 is larger than the generated pool"),
        (["generator.path=/nonexistent/fake.npy"], "does not exist"),
        (["metrics.kid.subset_size=500"], "metrics.kid.subset_size=500 exceeds sample_size"),
        (["workers=0"], "workers must be an integer ≥ 1"),
        (["metrics.imd.k=true"], "metrics.imd.k must be an integer ≥ 1, got True"),
        (["metrics.kid.subset_size=1"], "metrics.kid.subset_size must be an integer ≥ 2"),
    ],
)
def test_config_that_cannot_work_fails_before_work(arrays, tmp_path, extra, match) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "never"
    with pytest.raises(ValueError, match=match):
        run_inprocess(_bench(arrays, tmp_path, f"results_dir={out}", *extra))
    assert not (out / "runs.csv").exists()


def test_missing_inception_weights_fail_before_training(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GANEVAL_INCEPTION_WEIGHTS", str(tmp_path / "missing.pth"))
    models = tmp_path / "models"
    with pytest.raises(Exception, match="(?i)weights"):
        run_inprocess(["features=inception", "features.download=false", f"models_dir={models}",
                       f"results_dir={tmp_path / 'r'}", f"cache_dir={tmp_path / 'c'}", *FAST])
    assert not models.exists()  # nothing trained


def test_missing_weights_one_line_in_the_apps_keys(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The app's refusal names its own keys (features.weights=FILE, features=pixels), not ganeval-score's flags or
    the Python argument `weights=` (an unknown top-level key)."""
    missing = tmp_path / "missing.pth"
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1", "GANEVAL_INCEPTION_WEIGHTS": str(missing)}
    r = subprocess.run([sys.executable, "-m", "ganeval", "features=inception", "features.download=false",
                        f"models_dir={tmp_path / 'm'}", f"results_dir={tmp_path / 'r'}", *FAST], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    errors = [ln for ln in (r.stdout + r.stderr).splitlines() if "ERROR" in ln or "Traceback" in ln]
    assert r.returncode == 2 and len(errors) == 1, r.stdout + r.stderr
    assert f"no FID Inception weights ({missing} ($GANEVAL_INCEPTION_WEIGHTS): no such file)" in errors[0]
    assert "pass the file with features.weights=FILE" in errors[0] and "features=pixels" in errors[0]
    assert "--weights" not in errors[0] and "`weights=`" not in errors[0]
    assert not (tmp_path / "m").exists()  # refused before training


def test_cli_unknown_option_lists_what_exists(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = _cli(["experiment=nosuch"], tmp_path)
    assert r.returncode == 2
    assert "experiment=nosuch: no such option; experiment is one of" in r.stderr and "quickstart" in r.stderr
    r = _cli(["runz=3"], tmp_path)
    assert r.returncode == 2 and "runz" in r.stderr


@pytest.mark.parametrize(
    "args, line",
    [
        (["sample_szie=500"], "sample_szie: no such key (did you mean sample_size?)"),
        pytest.param(["+sample_szie=500"], "sample_szie: no such key, nothing would read it (did you mean "
                     "sample_size?)", marks=pytest.mark.slow),  # 66–68 s each on the 2-core machine (issue #56)
        pytest.param(["experiment=torus", "+halvings=3"], "halvings: no such key, nothing would read it",
                     marks=pytest.mark.slow),
        (["metrics.imd.kk=3"], "metrics.imd.kk: no such key (did you mean k?)"),
        (["data.sizee=8"], "data.sizee: no such key (did you mean size?)"),
        (["runs=2.5"], "runs: Value '2.5' of type 'float' could not be converted to Integer"),
        (["seed=x"], "seed: Value 'x' of type 'str' could not be converted to Integer"),
        (["train_seeds=[0,1.5]"], "train_seeds[1]: Value '1.5' of type 'float' could not be converted to Integer"),
        (["runs=null"], "runs: field 'runs' is not Optional"),
        (["train_seeds=3"], "train_seeds: Invalid value assigned: int is not a ListConfig, list or tuple; give a list, "
                            "e.g. train_seeds=[0,1,2]"),
        (["overwrite=no"], "overwrite must be true or false, got 'no'"),
        (["experiment=blur_swep"], "experiment=blur_swep: no such option (did you mean blur_sweep?); experiment is one "
                                   "of benchmark, blur_sweep,"),
        (["features=pixel"], "features=pixel: no such option (did you mean pixels?)"),
        (["~metrics.fd"], "~metrics.fd: no such key to delete; `ganeval --cfg job` shows the composed config"),
        (["-m", "plots=true,1"], "plots must be true or false, got 1"),
    ],
)
def test_a_bad_key_or_type_exits_2_with_one_line_and_writes_nothing(tmp_path, args, line) -> None:  # type: ignore[no-untyped-def]
    # the schema (ganeval.app.schema) refuses these while Hydra composes, before any experiment code runs
    r = _cli([*args, "dry_run=true"], tmp_path)
    lines = [x for x in (r.stdout + r.stderr).splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and line in lines[0] and "Traceback" not in r.stderr, lines
    assert not (tmp_path / "results").exists() and not (tmp_path / "multirun").exists()
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "HYDRA_FULL_ERROR": "1"}
    r = subprocess.run([sys.executable, "-m", "ganeval", *args, "dry_run=true"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "Traceback" in r.stdout + r.stderr


def test_experiment_keys_and_plugin_metrics_stay_open() -> None:
    # an experiment's own keys (the schema does not declare them) and a registered metric's options compose
    from apphelp import compose_config

    cfg = compose_config(["experiment=stability", "halvings=2", "+metrics.mean_gap={weight: 2.0}"])
    assert cfg.halvings == 2 and cfg.metrics.mean_gap.weight == 2.0


@pytest.mark.slow
def test_resume_after_sigkill_gives_the_uninterrupted_summary(arrays, tmp_path) -> None:  # type: ignore[no-untyped-def]
    runs = 40
    args = _bench(arrays, tmp_path, f"results_dir={tmp_path / 'killed'}", f"runs={runs}", "sample_size=250",
                  "metrics.imd.nv=40", "device=cpu")
    proc = subprocess.Popen([sys.executable, "-m", "ganeval", *args], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"})
    runs_csv = tmp_path / "killed" / "runs.csv"
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        if runs_csv.exists() and pd.read_csv(runs_csv)["run"].nunique() >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = pd.read_csv(runs_csv)["run"].nunique()
    assert 3 <= done_before < runs, "the kill must land mid-way"
    r = _cli(args, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    resumed = pd.read_csv(tmp_path / "killed" / "summary.csv")
    ref_args = [a for a in args if not a.startswith("results_dir=")] + [f"results_dir={tmp_path / 'ref'}"]
    reference = run_inprocess(ref_args)
    pd.testing.assert_frame_equal(resumed, reference, check_exact=False, rtol=1e-6)
    assert (resumed.n_runs == runs).all()


@pytest.mark.slow
def test_joblib_sweep_and_collate(arrays, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sweep = tmp_path / "sweep"
    args = ["-m"] + [a for a in _bench(arrays, tmp_path) if a != "runs=3"] + [
        "runs=2", "hydra/launcher=local", "seed=0,1", f"hydra.sweep.dir={sweep}"]
    r = _cli(args, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (sweep / "0" / "summary.csv").exists() and (sweep / "1" / "summary.csv").exists()
    merged = collate(sweep)
    # a sweep over seed is a sweep over training seeds: it becomes the train_seed level
    assert list(merged.columns[:1]) == ["train_seed"] and sorted(map(str, merged.train_seed.unique())) == ["0", "1"]
    assert collate_main([str(sweep)]) == 0
    assert (sweep / "table.md").read_text().count("| IMD |") == 1
    # a sweep over a protocol setting is refused
    other = tmp_path / "other"
    (other / "a").mkdir(parents=True)
    (other / "b").mkdir(parents=True)
    for job, size in (("a", 100), ("b", 200)):
        src = sweep / "0"
        (other / job / "summary.csv").write_text((src / "summary.csv").read_text())
        text = (src / "summary.json").read_text().replace('"sample_size": 100', f'"sample_size": {size}')
        (other / job / "summary.json").write_text(text)
    with pytest.raises(ValueError, match="different protocols.*sample_size"):
        collate(other)
    assert collate_main([str(other)]) == 2


@pytest.mark.slow
def test_benchmark_on_images_with_inception_features(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The Inception path end to end, with random weights loaded through the real loading code."""
    from ganeval.features.inception import save_random_weights

    weights = save_random_weights(tmp_path / "w.pth", seed=0)
    rng = np.random.default_rng(0)
    np.save(tmp_path / "real.npy", rng.integers(0, 256, size=(30, 3, 32, 32), dtype=np.uint8))
    np.save(tmp_path / "fake.npy", rng.integers(0, 128, size=(30, 3, 32, 32), dtype=np.uint8))
    out = tmp_path / "res"
    s = run_inprocess(["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
                       f"generator.path={tmp_path / 'fake.npy'}", "features=inception", f"features.weights={weights}",
                       "features.download=false", "sample_size=20", "runs=2", "batch_size=30",
                       f"cache_dir={tmp_path / 'cache'}", f"results_dir={out}", "metrics.imd.k=3", *FAST,
                       "metrics.kid.subset_size=10"])
    assert set(s.metric) == {"imd", "fid", "kid"} and np.isfinite(s["mean"]).all()
    import json

    ident = json.loads((out / "summary.json").read_text())["extractor"]
    assert ident["name"] == "inception" and ident["dims"] == 2048 and len(ident["weights"]) == 64
