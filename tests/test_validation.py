"""Inputs that could make a metric silently wrong: narrow floats, huge values, autograd tensors, and
anything non-finite on the way out (issue 11). Each test failed before `ganeval.metrics.validation`."""

from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np
import pytest
import torch

from ganeval.metrics import fid, frechet_distance, function_metric, heat_trace, imd, imd_from_traces, kid
from ganeval.metrics.fid import statistics
from ganeval.metrics.imd import default_t
from ganeval.metrics.registry import REGISTRY, register_metric
from ganeval.metrics.streams import metric_draws
from ganeval.metrics.suite import prepare_set, score_pair
from ganeval.metrics.validation import load_features

kid_module = importlib.import_module("ganeval.metrics.kid")
ALL = {"imd": {}, "fid": {}, "kid": {"subsets": 4, "subset_size": 60}}


def pair(n: int = 120, d: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((n, d)) * 1.2 + 0.3


def suite(x: Any, y: Any, metrics: dict = ALL) -> dict[str, float]:
    return score_pair(prepare_set(x, metrics), prepare_set(y, metrics), metric_draws(1), metrics)


NARROW: dict[str, Callable[[np.ndarray], Any]] = {
    "numpy-float16": lambda a: a.astype(np.float16),
    "torch-float16": lambda a: torch.from_numpy(a).half(),
    "torch-bfloat16": lambda a: torch.from_numpy(a).bfloat16(),
}


def as_float32(a: Any) -> Any:
    return a.astype(np.float32) if isinstance(a, np.ndarray) else a.float()


@pytest.mark.parametrize("scale", [20.0, 30.0])
@pytest.mark.parametrize("narrow", list(NARROW))
def test_narrow_floats_are_computed_in_float32(narrow: str, scale: float) -> None:
    # the cubic kernel of float16 features ×20 overflows float16 (max 65504): KID was (nan, nan)
    x, y = (NARROW[narrow](a * scale) for a in pair())
    got = kid(x, y, subsets=5, subset_size=100)
    assert np.isfinite(got).all() and got == kid(as_float32(x), as_float32(y), subsets=5, subset_size=100)
    assert suite(x, y) == suite(as_float32(x), as_float32(y))  # the protocol stored empty KID values
    assert imd(x, y) == imd(as_float32(x), as_float32(y)) and fid(x, y) == fid(as_float32(x), as_float32(y))


def test_huge_float32_knn_runs_in_float64() -> None:
    # squared norms of 3e18-sized float32 rows overflow: the k-NN search raised "bincount only supports…"
    x = np.random.default_rng(0).standard_normal((600, 64))
    big = (x * 3e18).astype(np.float32)
    assert np.array_equal(heat_trace(big), heat_trace(big.astype(np.float64)))
    assert np.allclose(heat_trace(big), heat_trace(x), rtol=1e-12)  # the k-NN graph ignores the scale
    assert imd(big, big[::-1].copy()) == imd(big.astype(np.float64), big[::-1].astype(np.float64))


def test_kid_kernel_beyond_float32_runs_in_float64() -> None:
    x, y = (a * 1e12 for a in pair())
    want = kid(x, y, subsets=5, subset_size=100)  # float64 input: computed in float64 as ever
    got = kid(x.astype(np.float32), y.astype(np.float32), subsets=5, subset_size=100)
    assert np.isfinite(got).all() and got == pytest.approx(want, rel=1e-5)
    values = suite(x.astype(np.float32), y.astype(np.float32))
    assert np.isfinite(list(values.values())).all()
    assert values["kid"] == pytest.approx(suite(x, y)["kid"], rel=1e-5)


def test_ordinary_features_are_loaded_without_a_copy() -> None:
    for dtype in (np.float32, np.float64):
        a = pair()[0].astype(dtype)
        t = load_features(a, "x", torch.device("cpu"))
        assert t.dtype == torch.from_numpy(a).dtype and t.data_ptr() == a.__array_interface__["data"][0]


def test_integers_beyond_float32_precision_are_computed_in_float64() -> None:
    x, y = ((a * 1e9).astype(np.int64) for a in pair())
    assert load_features(x, "x", torch.device("cpu")).dtype == torch.float64
    assert load_features(x // 1000, "x", torch.device("cpu")).dtype == torch.float32
    assert fid(x, y) == fid(x.astype(np.float64), y.astype(np.float64))


TOO_LARGE = [
    ("kid", lambda x, y: kid(x, y, subsets=2, subset_size=50), 1e80),
    ("fid", fid, 1e160),
    ("imd", imd, 1e160),
    ("heat_trace", lambda x, y: heat_trace(x), 1e160),
    ("statistics", lambda x, y: statistics(x), 1e160),
    ("suite", suite, 1e160),
]


@pytest.mark.parametrize("name,fn,scale", TOO_LARGE, ids=[c[0] for c in TOO_LARGE])
def test_values_beyond_float64_are_refused_before_work(name: str, fn: Callable, scale: float) -> None:
    x, y = (a * scale for a in pair())
    with pytest.raises(ValueError, match=r"(x|features) has values up to .*e\+\d+: .*rescale the features"):
        fn(x, y)


def test_frechet_distance_refuses_non_finite_and_overflowing_statistics() -> None:
    mu, sigma = np.zeros(4), np.eye(4)
    bad = sigma.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="sigma2 has 1 row"):
        frechet_distance(mu, sigma, mu, bad)
    with pytest.raises(ValueError, match="covariances up to 1e\\+200 .*rescale"):
        frechet_distance(mu, sigma, mu, sigma * 1e200)


def test_autograd_tensors_are_accepted() -> None:
    x, y = (torch.from_numpy(a).float() for a in pair())
    gx, gy = x.clone().requires_grad_(), y.clone().requires_grad_()
    assert fid(gx, gy) == fid(x, y) and imd(gx, gy) == imd(x, y)
    assert kid(gx, gy, subsets=3, subset_size=50) == kid(x, y, subsets=3, subset_size=50)
    assert np.array_equal(heat_trace(gx), heat_trace(x))
    assert suite(gx, gy) == suite(x, y)
    mu, sigma = (s.clone().requires_grad_() for s in statistics(x))
    assert frechet_distance(mu, sigma, *statistics(y)) == frechet_distance(*statistics(x), *statistics(y))


@pytest.mark.parametrize("call", [
    lambda x: imd(x, x, k=True), lambda x: heat_trace(x, rademacher=1), lambda x: kid(x, x, subsets=True),
    lambda x: kid(x, x, subset_size=50, gamma=float("nan")), lambda x: suite(x, x, {"kid": {"degree": True}}),
])
def test_boolean_and_non_finite_options_are_refused(call: Callable) -> None:
    with pytest.raises(ValueError, match="must be"):
        call(pair()[0])


def test_non_finite_inside_a_metric_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    # whatever a check misses, a NaN never leaves a metric: here a kernel made to break down
    x, y = pair()
    monkeypatch.setattr(kid_module, "poly_kernel", lambda g, *a: g.fill_(float("nan")))
    with pytest.raises(ValueError, match="KID came out non-finite"):
        kid(x, y, subsets=5, subset_size=100)
    with pytest.raises(ValueError, match="KID came out non-finite"):
        suite(x, y, {"kid": {"subsets": 200, "subset_size": 60}})  # the all-pairs path
    with pytest.raises(ValueError, match="hy has 1 row"):
        imd_from_traces(np.ones(256), np.r_[np.ones(255), np.inf], default_t())


def test_plugin_metric_returning_nan_raises() -> None:
    metric = register_metric(function_metric("nan_metric", lambda x, y, rng: float("nan")))
    try:
        with pytest.raises(ValueError, match="nan_metric came out non-finite"):
            suite(*pair(), {"nan_metric": {}})
    finally:
        REGISTRY.pop(metric.name)
