"""The fused per-run path gives the public functions' values for the same draws."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from ganeval.metrics import fid, imd, kid
from ganeval.metrics.imd import draw_probes
from ganeval.metrics.registry import Metrics
from ganeval.metrics.streams import metric_draws, metric_generator
from ganeval.metrics.suite import prepare_set, score_pair

kid_module = importlib.import_module("ganeval.metrics.kid")
PER_SUBSET = {"imd": {"nv": 30}, "fid": {}, "kid": {"subsets": 7, "subset_size": 60}}
ALL_PAIRS = {"imd": {"nv": 30}, "fid": {}, "kid": {"subsets": 30, "subset_size": 60}}


@pytest.mark.parametrize(
    "metrics, keep_kernel",
    [(ALL_PAIRS, True), (ALL_PAIRS, False), (PER_SUBSET, False)],
    ids=["kernel strips from the k-NN search", "kernel strips at scoring", "per-subset products"],
)
def test_score_pair_matches_public_functions(monkeypatch: pytest.MonkeyPatch, metrics: dict, keep_kernel: bool) -> None:
    if metrics is ALL_PAIRS and not keep_kernel:
        monkeypatch.setattr(kid_module, "KERNEL_MAX_BYTES", 0)
    rng = np.random.default_rng(0)
    x = np.abs(rng.standard_normal((300, 32))).astype(np.float32)
    y = (np.abs(rng.standard_normal((280, 32))) * 1.1).astype(np.float32)
    sx, sy = prepare_set(x, metrics), prepare_set(y, metrics)
    assert (sx.stats["kid"].kernel is not None) == keep_kernel
    got = score_pair(sx, sy, metric_draws(0, 5), metrics)
    probes = metric_generator("imd", 0, 5)  # each metric's own stream under the key (0, 5)
    px, py = draw_probes(300, 30, probes), draw_probes(280, 30, probes)
    assert got["imd"] == pytest.approx(imd(x, y, nv=30, probes=(px, py)), rel=1e-12)
    subsets = metric_generator("kid", 0, 5)
    assert got["kid"] == pytest.approx(kid(x, y, metrics["kid"]["subsets"], 60, seed=subsets)[0], rel=1e-5)
    assert got["fid"] == pytest.approx(fid(x, y), rel=1e-7)  # the suite's covariance product is float32


def test_rank_deficient_fid_and_reuse_of_real_state() -> None:
    rng = np.random.default_rng(1)
    x, y, z = (rng.standard_normal((40, 64)) + s for s in (0.0, 0.3, 0.6))
    sx = prepare_set(x, {"fid": {}})
    draws = metric_draws(1)
    assert score_pair(sx, prepare_set(y, {"fid": {}}), draws, {"fid": {}})["fid"] == pytest.approx(fid(x, y), rel=1e-8)
    assert score_pair(sx, prepare_set(z, {"fid": {}}), draws, {"fid": {}})["fid"] == pytest.approx(fid(x, z), rel=1e-8)


def test_metrics_reject_unknown_names_and_options() -> None:
    assert Metrics(["fid"]) == {"fid": {}}
    with pytest.raises(ValueError, match="unknown metric 'is'"):
        Metrics(["is"])
    with pytest.raises(ValueError, match="unknown option"):
        Metrics({"imd": {"kk": 3}})
    with pytest.raises(ValueError, match="normalization"):
        Metrics({"imd": {"normalization": "x"}})


def test_kid_alone_from_every_pair_matches_public_kid() -> None:
    # 30 subsets of 60 rows have more kernel entries than the 300×280 pairs: the suite then reads every
    # subset sum from kernel strips through indicator products, made at scoring when no k-NN search ran.
    rng = np.random.default_rng(3)
    x, y = rng.random((300, 16)).astype(np.float32), (rng.random((280, 16)) * 1.2).astype(np.float32)
    metrics = {"kid": {"subsets": 30, "subset_size": 60}}
    sx, sy = prepare_set(x, metrics), prepare_set(y, metrics)
    assert sx.stats["kid"].kernel is None and sy.stats["kid"].kernel is None
    got = score_pair(sx, sy, metric_draws(9), metrics)["kid"]
    assert got == pytest.approx(kid(x, y, 30, 60, seed=metric_generator("kid", 9))[0], rel=1e-5)


def test_metrics_import_with_torch_numpy_scipy_alone() -> None:
    import subprocess
    import sys

    code = (
        "import sys, ganeval.metrics; "
        "print(','.join(m for m in ('hydra', 'pynndescent', 'pytorch_fid', 'pandas', 'numba', 'sklearn') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
