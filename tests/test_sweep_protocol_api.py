"""The protocol's input checks (ganeval/protocol/api.py) at their edges: features' shapes and kinds, NaN rows found
in every chunk, labels that would pool, and blocks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.protocol import api as A


def test_features_are_two_dimensional_floats() -> None:
    ints = np.arange(6, dtype=np.int64).reshape(3, 2)
    got = A.as_features("x", ints)
    assert got.dtype == np.float32 and np.array_equal(got, ints)
    f64 = np.zeros((2, 2))
    assert A.as_features("x", f64) is f64
    t = torch.ones(2, 3, dtype=torch.int32, requires_grad=False)
    assert A.as_features("x", t).dtype == torch.float32
    g = torch.ones(2, 3, requires_grad=True)
    out = A.as_features("x", g)
    assert not out.requires_grad and out.dtype == torch.float32
    for bad in (np.zeros(3), np.zeros((1, 2, 3)), torch.zeros(3)):
        with pytest.raises(ValueError, match=r"^x must be an N×D feature array, got shape \("):
            A.as_features("x", bad)


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_nan_rows_are_found_in_every_chunk_and_named(lib: str) -> None:
    a = np.zeros((10, 2), np.float32)
    a[[1, 4, 5, 6, 7, 9], 0] = [np.nan, np.inf, -np.inf, np.nan, np.nan, np.nan]
    x = torch.from_numpy(a) if lib == "torch" else a
    with pytest.raises(ValueError, match=r"^p has 6 row\(s\) with NaN or inf values \(of 10; rows 1, 4, 5, 6, 7, "
                                         r"\.\.\.\): remove or fix them before scoring$"):
        A.check_finite("p", x, chunk=3)
    b = np.zeros((7, 2), np.float32)
    b[6, 1] = np.nan  # the last row of the last, shorter chunk
    with pytest.raises(ValueError, match=r"has 1 row\(s\) .* \(of 7; rows 6\)"):
        A.check_finite("p", torch.from_numpy(b) if lib == "torch" else b, chunk=3)
    A.check_finite("p", np.zeros((7, 2)) if lib == "numpy" else torch.zeros(7, 2), chunk=3)
    A.check_finite("p", np.zeros((0, 2)))
    A.check_finite("p", np.full((2, 2), 255, np.uint8))


def test_labels_that_become_one_are_refused() -> None:
    assert A.unique_names([1, "2", None], "model") == ["1", "2", "None"]
    with pytest.raises(ValueError, match=r"^model 1 and '1' both become the label '1', so their runs would be pooled"):
        A.unique_names([1, "1"], "model")


def test_blocks_are_checked_before_any_run() -> None:
    from ganeval.protocol.settings import Settings
    from ganeval.protocol.task import Block

    s = Settings(runs=2, sample_size=4, metrics=["fid"])
    real = np.random.default_rng(0).normal(size=(5, 3))
    fake = np.arange(15, dtype=np.int64).reshape(5, 3)
    (b,) = A.check_blocks([Block(real, [({"model": "m"}, fake)], {"data": "d"})], s)
    assert b.fakes[0][1].dtype == np.float32 and b.groups == {"data": "d"} and b.draw == ()
    with pytest.raises(ValueError, match="^blocks is empty"):
        A.check_blocks([], s)
    with pytest.raises(ValueError, match=r"^block \{'data': 'd'\} has no generated set$"):
        A.check_blocks([Block(real, [], {"data": "d"})], s)
    with pytest.raises(ValueError, match=r"^sample_size=4 is larger than the generated pool \{'model': 'm'\} \(3 rows\)"):
        A.check_blocks([Block(real, [({"model": "m"}, fake[:3])], {})], s)
    bad = real.copy()
    bad[2, 0] = np.nan
    with pytest.raises(ValueError, match=r"^the real pool 0 has 1 row\(s\) with NaN"):
        A.check_blocks([Block(bad, [({"model": "m"}, fake)], {})], s)
    with pytest.raises(ValueError, match="FID"):
        A.check_blocks([Block(real, [({"model": "m"}, np.zeros((5, 4)))], {})], s)  # FID needs one dimension
    ident = A.store_identity(s, {"real": "abc"})
    assert ident == {**s.identity(), "data": {"real": "abc"}}
