"""Under a named protocol the output carries the number the protocol's papers report beside ganeval's intervals:
the FID of each whole generated pool against the whole real pool (`fid_full`), in summary.csv/json, table.md and
the terminal table. The value is checked against pytorch-fid's formula written out with scipy.linalg.sqrtm."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ganeval.results.tables import md_unescape
import scipy.linalg
from omegaconf import open_dict

from apphelp import compose_config
from ganeval.app.protocols import check_protocol
from ganeval.protocol import Block
from ganeval.protocol.reported import attach_full_set, full_set_values

FAST = ["metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=50", "progress=false", "plots=false"]


def scipy_fid(x: np.ndarray, y: np.ndarray) -> float:
    """pytorch-fid's calculate_frechet_distance on the two sets' float64 moments (np.cov, ddof=1), scipy sqrtm."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    mu1, mu2, s1, s2 = x.mean(0), y.mean(0), np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = scipy.linalg.sqrtm(s1 @ s2).real
    return float((mu1 - mu2) @ (mu1 - mu2) + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def points(n: int, seed: int, shift: float, d: int = 8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) * 0.5 + shift).astype(np.float32)


def test_full_set_values_equal_the_sqrtm_formula() -> None:
    real, a, b = points(400, 0, 0.0, 16), points(300, 1, 0.3, 16), points(250, 2, 1.0, 16)
    values = full_set_values([Block(real, [({"model": "a"}, a), ({"model": "b"}, b)], {"data": "toy"})])
    assert list(values.columns) == ["data", "model", "fid_full"] and list(values.model) == ["a", "b"]
    for model, fake in (("a", a), ("b", b)):
        got = float(values.loc[values.model == model, "fid_full"].iloc[0])
        assert got == pytest.approx(scipy_fid(real, fake), rel=1e-9)
    assert values.fid_full.iloc[0] != values.fid_full.iloc[1]


def test_attached_to_fid_rows_only_and_per_seed() -> None:
    summary = pd.DataFrame({"data": ["d"] * 4, "model": ["a", "a", "b", "b"], "metric": ["fid", "kid"] * 2,
                            "mean": [1.0, 2.0, 3.0, 4.0]})
    values = pd.DataFrame({"data": ["d", "d"], "model": ["a", "b"], "fid_full": [0.5, 0.7]})
    out = attach_full_set(summary, values)
    assert out.fid_full.tolist()[0] == 0.5 and out.fid_full.tolist()[2] == 0.7
    assert out.fid_full.isna().tolist() == [False, True, False, True]
    # several training seeds: one value per (model, seed) in the per-seed summary, none at the model level
    seeded = pd.DataFrame({"data": ["d"] * 2, "model": ["a"] * 2, "train_seed": [0, 1], "fid_full": [0.5, 0.6]})
    seeds = pd.DataFrame({"data": ["d"] * 2, "model": ["a"] * 2, "train_seed": [0.0, 1.0], "metric": ["fid"] * 2})
    assert attach_full_set(seeds, seeded).fid_full.tolist() == [0.5, 0.6]
    assert attach_full_set(summary[summary.model == "a"], seeded).fid_full.isna().all()


def protocol_config(real: Path, fake: Path, out: Path, *extra: str):  # type: ignore[no-untyped-def]
    """A benchmark on arrays under a small protocol node of the shipped protocols' shape (name, reports, fixed)."""
    cfg = compose_config(["experiment=benchmark", "data=array", f"data.path={real}", "generator=samples",
                          f"generator.path={fake}", "features=identity", "sample_size=100", "runs=3",
                          f"results_dir={out}", f"cache_dir={out.parent / 'cache'}", *FAST, *extra])
    with open_dict(cfg):
        cfg.protocol = {"name": "toy_400", "reports": "FID of every generated row against every real row",
                        "fixed": {"features._target_": "ganeval.features.IdentityExtractor", "seed": 0}}
    return cfg


def run_config(cfg) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    from hydra.core.hydra_config import HydraConfig

    from ganeval.app.main import run_app

    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]
    return run_app(cfg)


def test_a_protocol_run_reports_the_full_set_fid(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    real, fake = points(400, 0, 0.0), points(300, 1, 0.3)
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    out = tmp_path / "res"
    cfg = protocol_config(tmp_path / "real.npy", tmp_path / "fake.npy", out)
    assert check_protocol(cfg) == {"features._target_": "ganeval.features.IdentityExtractor", "seed": 0}
    run_config(cfg)
    expected = scipy_fid(real, fake)
    summary = pd.read_csv(out / "summary.csv")
    fid = summary[summary.metric == "fid"].iloc[0]
    assert fid.fid_full == pytest.approx(expected, rel=1e-9)
    assert fid["mean"] != fid.fid_full  # the subsample mean is another number, kept beside it
    assert summary[summary.metric != "fid"].fid_full.isna().all()
    record = json.loads((out / "summary.json").read_text())
    assert record["full_set"]["protocol"] == "toy_400" and record["full_set"]["column"] == "fid_full"
    assert record["full_set"]["values"][0]["fid_full"] == pytest.approx(expected, rel=1e-9)
    row = next(r for r in record["results"] if r["metric"] == "fid")
    assert row["fid_full"] == pytest.approx(expected, rel=1e-9)
    assert all(r["fid_full"] is None for r in record["results"] if r["metric"] != "fid")
    table = (out / "table.md").read_text()
    line = next(ln for ln in table.splitlines() if "full sets |" in ln)
    assert f"| {expected:.2f} |" in line and "±" not in line
    assert "the number the protocol's papers report" in table
    printed = capsys.readouterr().out
    assert md_unescape(line) in printed  # the terminal table has the row (unescaped: FD_features, not FD\\_features)
    assert "full sets" in (out / "table.tex").read_text()


def test_no_protocol_no_full_set_column(tmp_path: Path) -> None:
    np.save(tmp_path / "real.npy", points(400, 0, 0.0))
    np.save(tmp_path / "fake.npy", points(300, 1, 0.3))
    out = tmp_path / "res"
    cfg = protocol_config(tmp_path / "real.npy", tmp_path / "fake.npy", out)
    with open_dict(cfg):
        del cfg["protocol"]
    run_config(cfg)
    assert "fid_full" not in pd.read_csv(out / "summary.csv").columns
    assert "full_set" not in json.loads((out / "summary.json").read_text())
    assert "full sets" not in (out / "table.md").read_text()


def test_a_protocol_without_fid_is_refused() -> None:
    cfg = compose_config(["experiment=benchmark", "protocol=cifar10_train_50k", "~metrics.fid"])
    with pytest.raises(ValueError, match="protocol=cifar10_train_50k reports FID .* drops metrics.fid"):
        check_protocol(cfg)


def test_replicas_get_one_full_set_value_per_seed(tmp_path: Path) -> None:
    """Three replicas (training seeds) of one model: summary_seeds.csv holds each seed's full-set FID, the
    model-level row none (it is not one pool), and summary.json's full_set lists all three."""
    real = points(400, 0, 0.0)
    np.save(tmp_path / "real.npy", real)
    fakes = [points(300, 10 + i, 0.2 * (i + 1)) for i in range(3)]
    for i, f in enumerate(fakes):
        np.save(tmp_path / f"f{i}.npy", f)
    out = tmp_path / "res"
    cfg = protocol_config(tmp_path / "real.npy", tmp_path / "f0.npy", out,
                          f"generator.replicas=[{tmp_path / 'f0.npy'},{tmp_path / 'f1.npy'},{tmp_path / 'f2.npy'}]")
    run_config(cfg)
    seeds = pd.read_csv(out / "summary_seeds.csv")
    fid = seeds[seeds.metric == "fid"].sort_values("train_seed")
    np.testing.assert_allclose(fid.fid_full.to_numpy(), [scipy_fid(real, f) for f in fakes], rtol=1e-9)
    summary = pd.read_csv(out / "summary.csv")
    assert summary.fid_full.isna().all()
    record = json.loads((out / "summary.json").read_text())
    assert [v["train_seed"] for v in record["full_set"]["values"]] == [0, 1, 2]
