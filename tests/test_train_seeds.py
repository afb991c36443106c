"""Training seeds through the pipeline: train_seeds, replicas of given generators, one block per seed index,
repeated probe draws, and the two-level results they give (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from apphelp import run_inprocess
from ganeval.app.plan import numeric_config
from ganeval.gan import load_checkpoint
from ganeval.gan.checkpoint import checkpoint_config
from ganeval.protocol import Block, Settings
from ganeval.protocol.api import evaluate_detailed
from ganeval.protocol.draws import run_generator
from ganeval.protocol.task import MetricTask

FAST = ["metrics.imd.nv=10", "metrics.imd.m=6", "metrics.kid.subsets=4", "progress=false", "plots=false"]
TINY_METRICS = {"imd": {"nv": 8, "m": 5}, "fid": {}, "kid": {"subsets": 3, "subset_size": 20}}


def _dirs(tmp_path: Path, res: str = "res") -> list[str]:
    return [f"results_dir={tmp_path / res}", f"cache_dir={tmp_path / 'cache'}", f"models_dir={tmp_path / 'models'}"]


def _quick(seeds: str | None) -> list[str]:
    """The quickstart at a few seconds, with `train_seeds` when given."""
    out = ["experiment=quickstart", "runs=3", "sample_size=100", "n_generated=150", "train_epochs=1",
           "metrics.kid.subset_size=50", "probe_repeats=0", *FAST]
    for g in ("wgan", "wgan_gp"):
        out += [f"generators.{g}.train.arch_kwargs.latent_dim=8", f"generators.{g}.train.arch_kwargs.dim=4",
                f"generators.{g}.train.batch_size=512"]
    return out + [f"train_seeds={seeds or 'null'}"]


def _points(tmp_path: Path) -> dict[str, Path]:
    """A real 8-d point set and three generated ones (replicas of one model), as .npy files."""
    rng = np.random.default_rng(3)
    files = {"real": rng.normal(size=(300, 8))}
    files.update({name: rng.normal(size=(200, 8)) + 0.3 + 0.05 * i for i, name in enumerate("abc")})
    out = {}
    for name, arr in files.items():
        out[name] = tmp_path / f"{name}.npy"
        np.save(out[name], arr.astype(np.float32))
    return out


def test_block_without_draw_gives_todays_draws() -> None:
    """draw=() keeps the documented keys: rows from default_rng([seed, r]), metric m from [seed, r, stream_key(m)]."""
    rng = np.random.default_rng(7)
    real = rng.normal(size=(120, 6)).astype(np.float32)
    fake = (rng.normal(size=(90, 6)) + 0.2).astype(np.float32)
    metrics = {**TINY_METRICS, "imd": {**TINY_METRICS["imd"], "variance_reduction": "paper"}}  # IMD's estimator then
    ev = evaluate_detailed(real, {"a": fake}, runs=2, sample_size=40, metrics=metrics, progress=False)
    before = [56.4788936748364, 1.3552620867922531, 0.3051642526032632,  # measured at draws version 2 (AMD EPYC;
              25.074692620715155, 1.9787518300676847, 0.9669951082530776]  # FID, which draws nothing, as at 5e74512)
    # other draws would move every value by far more than another CPU's float32 BLAS rounding (KID: 2e-7 on a Xeon)
    np.testing.assert_allclose(ev.runs["value"].tolist(), before, rtol=1e-6)
    assert run_generator(5, 2).random() == np.random.default_rng([5, 2]).random()
    assert run_generator(5, 2, 1).random() == np.random.default_rng([5, 2, 1]).random()
    settings = Settings(runs=1, sample_size=40, metrics=metrics, progress=False)
    plain = MetricTask([Block(real, [({"model": "a"}, fake)])], settings)(1)
    drawn = MetricTask([Block(real, [({"model": "a"}, fake)], draw=(1,))], settings)(1)
    assert [r["value"] for r in plain] == ev.runs["value"].tolist()[3:]
    assert not np.allclose([r["value"] for r in drawn], before[3:], rtol=1e-3)  # another seed index: other subsamples


def test_probe_repeats_rows_and_row_spec() -> None:
    rng = np.random.default_rng(1)
    real, fake = rng.normal(size=(80, 4)), rng.normal(size=(80, 4)) + 0.1
    settings = Settings(runs=3, sample_size=30, metrics=TINY_METRICS, progress=False, probe_repeats=2)
    task = MetricTask([Block(real, [({"model": "a"}, fake)], {"data": "d"})], settings)
    spec = task.row_spec()
    assert [len(spec.rows(r)) for r in range(3)] == [4, 4, 3]  # IMD once more in the first probe_repeats runs
    rows = [pd.DataFrame(task(r)) for r in range(3)]
    assert [list(df.columns) for df in rows] == [["run", "data", "model", "probe_draw", "metric", "value"]] * 3
    assert rows[0].probe_draw.tolist() == [0, 0, 0, 1] and rows[2].probe_draw.tolist() == [0, 0, 0]
    again = rows[0][rows[0].probe_draw == 1].iloc[0]
    first = rows[0][(rows[0].probe_draw == 0) & (rows[0].metric == "imd")].iloc[0]
    assert again.metric == "imd" and again.value != first.value  # same subsamples, other probes
    plain = MetricTask(task.blocks, Settings(runs=3, sample_size=30, metrics=TINY_METRICS, progress=False))(0)
    assert [r["value"] for r in plain] == rows[0].value.tolist()[:3]  # the ordinary values do not change
    assert "probe_draw" not in plain[0] and Settings(probe_repeats=0).identity() == Settings().identity()
    with pytest.raises(ValueError, match="probe_repeats"):
        Settings(metrics=["fid"], probe_repeats=1)
    with pytest.raises(ValueError, match="probe_repeats"):
        Settings(probe_repeats=-1)


def test_neutral_keys_keep_the_identity() -> None:
    base = {"runs": 3, "seed": 0, "generator": {"path": "a.npy", "name": None}}
    same = {**base, "train_seeds": None, "probe_repeats": 0, "generator": {**base["generator"], "replicas": None}}
    assert numeric_config(same) == numeric_config(base)
    assert numeric_config({**base, "train_seeds": [0, 1]}) != numeric_config(base)
    assert numeric_config({**base, "probe_repeats": 2}) != numeric_config(base)


@pytest.mark.slow
def test_two_training_seeds_train_and_resume_per_seed(tmp_path: Path) -> None:
    """train_seeds=[0, 1]: every model trained once per seed (own checkpoint, other weights), one block per seed
    index, two-level results; [0, 1, 2] later reuses the first two checkpoints and trains only the third."""
    s = run_inprocess([*_quick("[0,1]"), *_dirs(tmp_path)])
    res = tmp_path / "res"
    ckpts = sorted((tmp_path / "models" / "digits").glob("*/checkpoint.pt"))
    assert len(ckpts) == 4
    for model in ("wgan", "wgan_gp"):
        pair = [load_checkpoint(p) for p in ckpts if p.parent.name.startswith(f"digits-{model}-seed")]
        assert sorted(checkpoint_config(c)["seed"] for c in pair) == [0, 1]
        assert not all(torch.equal(pair[0]["generator"][k], pair[1]["generator"][k]) for k in pair[0]["generator"])
    runs = pd.read_csv(res / "runs.csv")
    assert list(runs.columns) == ["run", "data", "model", "train_seed", "metric", "value"]
    assert sorted(runs.train_seed.unique()) == [0, 1] and len(runs) == 3 * 2 * 2 * 3
    assert set(s.n_seeds) == {2} and set(s.covers) == {"training seeds and subsamples"}
    seeds = pd.read_csv(res / "summary_seeds.csv")
    assert len(seeds) == 2 * 2 * 3 and set(seeds.train_seed) == {0, 1}
    rec = json.loads((res / "summary.json").read_text())
    assert "across training seeds" in rec["interval_covers"] and rec["variance_shares"]
    assert {"digits/wgan/train_seed=0", "digits/wgan_gp/train_seed=1"} <= set(rec["generators"])
    assert "n_seeds" in pd.read_csv(res / "comparison.csv").columns
    stamps = {p: p.stat().st_mtime_ns for p in ckpts}
    again = run_inprocess([*_quick("[0,1,2]"), *_dirs(tmp_path, "res3")])
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())  # seeds 0 and 1 reused, not retrained
    assert len(list((tmp_path / "models" / "digits").glob("*/checkpoint.pt"))) == 6 and set(again.n_seeds) == {3}
    # seed index 0 keeps today's draws: its rows equal those of a run with train_seeds=[0, 1] for seeds 0 and 1
    runs3 = pd.read_csv(tmp_path / "res3" / "runs.csv")
    pd.testing.assert_frame_equal(runs3[runs3.train_seed < 2].reset_index(drop=True), runs)


@pytest.mark.slow
def test_one_training_seed_writes_todays_files(tmp_path: Path) -> None:
    """train_seeds=[0] (the default seed) gives byte for byte the runs.csv and summary.csv of no train_seeds."""
    run_inprocess([*_quick(None), *_dirs(tmp_path, "plain")])
    run_inprocess([*_quick("[0]"), *_dirs(tmp_path, "one")])
    for name in ("runs.csv", "summary.csv", "comparison.csv", "table.md"):
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    assert not (tmp_path / "one" / "summary_seeds.csv").exists()
    assert len(list((tmp_path / "models" / "digits").glob("*/checkpoint.pt"))) == 2  # the same checkpoints


def test_replicas_of_samples_files_give_two_levels(tmp_path: Path) -> None:
    f = _points(tmp_path)
    s = run_inprocess(["experiment=benchmark", "data=array", f"data.path={f['real']}", "features=identity",
                       "generator=samples", f"generator.replicas=[{f['a']},{f['b']},{f['c']}]", "runs=3",
                       "sample_size=100", "metrics.kid.subset_size=50", "probe_repeats=2", *FAST, *_dirs(tmp_path)])
    res = tmp_path / "res"
    assert set(s.model) == {"samples"} and set(s.n_seeds) == {3}
    summary = pd.read_csv(res / "summary.csv")
    assert {"n_seeds", "share_seed", "share_subsample", "share_probe", "covers"} <= set(summary.columns)
    imd = summary[summary.metric == "imd"].iloc[0]
    assert imd.share_probe > 0 and abs(imd.share_seed + imd.share_subsample + imd.share_probe - 1) < 1e-9
    seeds = pd.read_csv(res / "summary_seeds.csv")
    assert sorted(seeds.train_seed.unique()) == [0, 1, 2] and set(seeds.n_runs) == {3}
    runs = pd.read_csv(res / "runs.csv")
    assert len(runs[runs.probe_draw == 1]) == 2 * 3  # two runs per seed index, IMD only
    rec = json.loads((res / "summary.json").read_text())
    assert len(rec["variance_shares"]) == 3 and {r["metric"] for r in rec["variance_shares"]} == {"imd", "fid", "kid"}
    meta = json.loads((res / "runs.meta.json").read_text())["identity"]["data"]["content"]["generators"]
    assert [meta[f"array/samples/train_seed={i}"]["path"] for i in range(3)] == [str(f[k]) for k in "abc"]
    # the replicas' content is the results' identity: another file under one name is refused
    np.save(f["b"], np.load(f["b"]) + 1)
    with pytest.raises(ValueError, match="another config"):
        run_inprocess(["experiment=benchmark", "data=array", f"data.path={f['real']}", "features=identity",
                       "generator=samples", f"generator.replicas=[{f['a']},{f['b']},{f['c']}]", "runs=3",
                       "sample_size=100", "metrics.kid.subset_size=50", "probe_repeats=2", *FAST, *_dirs(tmp_path)])


def test_replicas_of_a_callable_pass_their_seeds(tmp_path: Path) -> None:
    f = _points(tmp_path)
    common = ["experiment=benchmark", "data=array", f"data.path={f['real']}", "features=identity",
              "generator=callable", "generator.function=apphelp:toy_points", "generator.points=true", "runs=2",
              "sample_size=100", "n_generated=150", "metrics.kid.subset_size=50", *FAST]
    run_inprocess([*common, "generator.replicas=[4,9]", *_dirs(tmp_path)])
    rec = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert [rec["generators"][f"array/apphelp:toy_points/train_seed={i}"]["seed"] for i in (0, 1)] == [4, 9]
    seeds = pd.read_csv(tmp_path / "res" / "summary_seeds.csv")
    a, b = (seeds[(seeds.metric == "fid") & (seeds.train_seed == i)]["mean"].iloc[0] for i in (0, 1))
    assert a != b


@pytest.mark.parametrize("extra, match", [
    (["train_seeds=[0,0]"], "repeats a seed"),
    (["train_seeds=[]"], "non-empty list"),
    (["train_seeds=[-1]"], r"train_seeds\[0\]"),
    (["train_seeds=[0,1]", "+generators.wgan.train.seed=5"], "sets its own seed"),
    (["probe_repeats=-1"], "probe_repeats"),
])
def test_bad_seed_settings_fail_before_any_work(tmp_path: Path, extra: list[str], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        run_inprocess([*_quick(None), *extra, *_dirs(tmp_path)])
    assert not (tmp_path / "models").exists() and not (tmp_path / "res" / "runs.csv").exists()


def test_unequal_seed_counts_are_refused(tmp_path: Path) -> None:
    f = _points(tmp_path)
    with pytest.raises(ValueError, match="different numbers of training seeds"):
        run_inprocess(["experiment=benchmark", "data=array", f"data.path={f['real']}", "features=identity",
                       "generator=samples", f"generator.replicas=[{f['a']},{f['b']}]",
                       f"+generators.other={{_target_: ganeval.gan.SampleGenerator, path: {f['c']}}}",
                       "runs=2", "sample_size=100", "metrics.kid.subset_size=50", *FAST, *_dirs(tmp_path)])
    with pytest.raises(ValueError, match="replicas must be a non-empty list"):
        run_inprocess(["experiment=benchmark", "data=array", f"data.path={f['real']}", "features=identity",
                       "generator=samples", "generator.replicas=[]", "runs=2", "sample_size=100",
                       "metrics.kid.subset_size=50", *FAST, *_dirs(tmp_path)])


@pytest.mark.slow
def test_torus_with_two_training_seeds(tmp_path: Path) -> None:
    s = run_inprocess(["experiment=torus", "runs=2", "sample_size=100", "n_generated=200", "data.n=300",
                       "train_epochs=1", "train_seeds=[0,1]", "metrics.kid.subset_size=50", *FAST,
                       *_dirs(tmp_path)])
    res = tmp_path / "res"
    assert set(s.model) == {"good", "bad"} and set(s.n_seeds) == {2}
    assert set(pd.read_csv(res / "summary_seeds.csv").train_seed) == {0, 1}
    assert set(pd.read_csv(res / "verdict.csv").metric) == {"imd", "fid", "kid"}
    assert len(list((tmp_path / "models" / "torus").glob("*/checkpoint.pt"))) == 4
