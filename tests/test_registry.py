"""The metric registry: option tables are the one source of defaults, checked strictly, mirrored by configs."""

from __future__ import annotations

import inspect

import pytest
from omegaconf import OmegaConf

from apphelp import compose_config
from ganeval.app.main import config_dir
from ganeval.metrics import Metrics, fid, get_metric, imd, kid, metric_names
from ganeval.metrics.imd import heat_trace

# what each metrics/*.yaml is for: the option values it changes from the tables' defaults
PURPOSE = {"default": {}, "imd": {}, "approx": {("imd", "knn"): "approx"}, "prdc": {}, "inception_score": {}, "cmmd": {},
           "sfid": {}}


def test_registration_order_and_labels() -> None:
    assert metric_names()[:8] == ("imd", "fid", "kid", "precision", "recall", "density", "coverage", "inception_score")
    assert get_metric("kid").label == "KID×10³" and get_metric("kid").scale == 1e3


@pytest.mark.parametrize("name", sorted(PURPOSE))
def test_metric_configs_mirror_the_option_tables(name: str) -> None:
    assert {p.stem for p in (config_dir() / "metrics").glob("*.yaml")} == set(PURPOSE)
    given = OmegaConf.to_container(compose_config([f"metrics={name}"]).metrics)
    assert isinstance(given, dict)
    for metric, opts in given.items():
        if opts is None:  # null: the metric is not chosen
            continue
        table = get_metric(metric).defaults
        assert set(opts or {}) == set(table), f"metrics/{name}.yaml lists {metric}'s options, all of them"
        for key, value in (opts or {}).items():
            assert value == PURPOSE[name].get((metric, key), table[key]), f"metrics/{name}.yaml: {metric}.{key}"


@pytest.mark.parametrize("fn, metric", [(imd, "imd"), (heat_trace, "imd"), (kid, "kid")])
def test_function_signatures_take_their_defaults_from_the_tables(fn, metric) -> None:  # type: ignore[no-untyped-def]
    params = inspect.signature(fn).parameters
    for key, default in get_metric(metric).defaults.items():
        if key in params:
            assert params[key].default == default, f"{fn.__name__}({key}=...)"


@pytest.mark.parametrize(
    "given, match",
    [
        ({"imd": {"k": True}}, r"metrics.imd.k must be an integer ≥ 1, got True"),
        ({"imd": {"k": 2.5}}, r"metrics.imd.k must be an integer ≥ 1, got 2.5"),
        ({"imd": {"rademacher": "no"}}, r"metrics.imd.rademacher must be true or false"),
        ({"imd": {"knn": "fast"}}, r"metrics.imd.knn must be one of 'exact', 'approx'"),
        ({"kid": {"subset_size": 1}}, r"metrics.kid.subset_size must be an integer ≥ 2"),
        ({"kid": {"coef0": float("nan")}}, r"metrics.kid.coef0 must be a finite number"),
        ({"kid": {"gamma": 1}}, r"kid: unknown option 'gamma'"),
        ({}, "choose at least one metric"),
    ],
)
def test_options_are_checked_strictly(given: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Metrics(given)


def test_metrics_keep_the_order_asked_and_compute_in_registration_order() -> None:
    m = Metrics(["kid", "imd"])
    assert list(m) == ["kid", "imd"] and [spec.name for spec, _ in m.ordered()] == ["imd", "kid"]
    assert Metrics(m) == m and m["kid"]["subsets"] == 100


def test_library_functions_refuse_bad_options_before_work() -> None:
    import numpy as np

    x = np.zeros((30, 3))
    with pytest.raises(ValueError, match="k must be an integer ≥ 1, got True"):
        imd(x, x, k=True)
    with pytest.raises(ValueError, match="subsets must be an integer ≥ 1, got 0"):
        kid(x, x, subsets=0, subset_size=10)
    assert fid(x + np.eye(30, 3), x) >= 0
