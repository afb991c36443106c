"""The image rules of `ganeval.data.images`: layouts, dtypes, [0, 1] range, uint8 <-> float, grey -> RGB."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import ganeval.data as gd
from ganeval.data.images import (
    as_uint8_images,
    check_image_dtype,
    check_unit_range,
    image_layout,
    images_to_float,
    to_nchw,
    to_rgb,
    to_uint8,
)

NCHW = np.arange(2 * 3 * 4 * 5, dtype=np.uint8).reshape(2, 3, 4, 5)


# --------------------------------------------------------------------------- layouts
@pytest.mark.parametrize(
    "shape, layout",
    [((2, 4, 5), "NHW"), ((2, 1, 4, 5), "NCHW"), ((2, 3, 4, 5), "NCHW"), ((2, 4, 5, 1), "NHWC"),
     ((2, 4, 5, 3), "NHWC"), ((2, 3, 4, 3), "NCHW")],  # fmt: skip  # channel axis 1 wins when both fit
)
def test_image_layout(shape: tuple[int, ...], layout: str) -> None:
    assert image_layout(shape) == layout


@pytest.mark.parametrize("shape", [(2, 5), (2, 5, 6, 7), (2, 2, 6, 6, 3), (4,)])
def test_image_layout_rejects_other_shapes(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"^gen: images must be N×H×W, N×C×H×W or N×H×W×C.*channel axis"):
        image_layout(shape, "gen")
    with pytest.raises(ValueError, match=rf"^images must .*got shape \({shape[0]},"):
        image_layout(shape)


@pytest.mark.parametrize("as_tensor", [False, True])
def test_to_nchw_every_layout(as_tensor: bool) -> None:
    conv = torch.from_numpy if as_tensor else np.asarray
    x = conv(NCHW)
    assert to_nchw(x) is x
    got = to_nchw(conv(np.ascontiguousarray(NCHW.transpose(0, 2, 3, 1))))
    assert isinstance(got, type(x)) and np.array_equal(np.asarray(got), NCHW)
    grey = to_nchw(conv(NCHW[:, 0]))
    assert tuple(grey.shape) == (2, 1, 4, 5) and np.array_equal(np.asarray(grey)[:, 0], NCHW[:, 0])


# --------------------------------------------------------------------------- dtypes and range
@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.float64, torch.uint8, torch.float32,
                                   torch.bfloat16])  # fmt: skip
def test_check_image_dtype_accepts(dtype: object) -> None:
    check_image_dtype(dtype)


@pytest.mark.parametrize("dtype", [np.int16, np.int64, np.bool_, torch.int32, torch.int8])
def test_check_image_dtype_rejects(dtype: object) -> None:
    with pytest.raises(ValueError, match=r"^x: images must be uint8 or floats in \[0, 1\].*to_uint8"):
        check_image_dtype(dtype, "x")


@pytest.mark.parametrize("as_tensor", [False, True])
def test_check_unit_range(as_tensor: bool) -> None:
    conv = torch.tensor if as_tensor else np.array
    check_unit_range(conv([0.0, 0.5, 1.0]))
    check_unit_range(conv(np.zeros((0, 3), np.float32)))  # empty: nothing to check
    check_unit_range(conv([-1e-7, 1 + 1e-7]), atol=1e-6)
    for bad, shown in (([0.0, 1.5], r"\[0, 1.5\]"), ([-0.5, 1.0], r"\[-0.5, 1\]")):
        with pytest.raises(ValueError, match=rf"^s: float images must lie in \[0, 1\], got values in .*{shown}"):
            check_unit_range(conv(bad), "s")
    with pytest.raises(ValueError, match=r"^s: images hold 1 NaN value\(s\): remove or fix those samples$"):
        check_unit_range(conv([0.2, np.nan, 0.4]), "s")  # NaN said as NaN (issue #45), not "a range of [nan, nan]"
    with pytest.raises(ValueError, match="must lie in"):
        check_unit_range(conv([-1e-7, 1.0]))


# --------------------------------------------------------------------------- uint8 <-> float
def test_images_to_float_every_layout() -> None:
    want = torch.from_numpy(NCHW).float() / 255
    for x in (NCHW, NCHW.transpose(0, 2, 3, 1)):
        got = images_to_float(torch.from_numpy(np.ascontiguousarray(x)))
        assert got.dtype == torch.float32 and torch.equal(got, want)
    assert torch.equal(images_to_float(want.double()), want)  # floats in [0, 1] kept (as float32)
    assert images_to_float(torch.from_numpy(NCHW[:, 0])).shape == (2, 1, 4, 5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        images_to_float(want + 1)
    with pytest.raises(ValueError, match="uint8 or floats"):
        images_to_float(torch.zeros(2, 3, 4, 4, dtype=torch.int32))
    with pytest.raises(ValueError, match="N×H×W"):
        images_to_float(torch.zeros(2, 5, 4, 4))


def test_to_uint8_maps_range_rounds_and_clips() -> None:
    x = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0], dtype=np.float32)
    # (x + 1) * 127.5 = [-127.5, 0, 63.75, 127.5, 191.25, 255, 510] -> round half to even, clip
    assert to_uint8(x).tolist() == [0, 0, 64, 128, 191, 255, 255]
    assert to_uint8(np.array([0.0, 0.2, 1.0]), value_range=(0, 1)).tolist() == [0, 51, 255]
    assert gd.to_uint8 is to_uint8  # the public name README users call


def test_to_uint8_torch_matches_numpy_and_roundtrips() -> None:
    rng = np.random.default_rng(0)
    u = rng.integers(0, 256, (4, 3, 5, 5), dtype=np.uint8)
    f = u.astype(np.float32) / 127.5 - 1.0
    np.testing.assert_array_equal(to_uint8(f), u)
    np.testing.assert_array_equal(to_uint8(torch.from_numpy(f)), u)
    noisy = rng.uniform(-1.2, 1.2, (3, 3, 4, 4)).astype(np.float32)
    np.testing.assert_array_equal(to_uint8(torch.from_numpy(noisy)), to_uint8(noisy))
    out = to_uint8(torch.from_numpy(f))
    assert isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.shape == u.shape
    assert to_uint8(u) is u  # uint8 passes through
    # uint8 -> [0, 1] float -> uint8 is the identity
    np.testing.assert_array_equal(to_uint8(images_to_float(torch.from_numpy(u)), value_range=(0, 1)), u)


def test_to_uint8_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="NaN"):
        to_uint8(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="NaN"):
        to_uint8(torch.tensor([0.0, float("nan")]))
    with pytest.raises(ValueError, match="value_range"):
        to_uint8(np.zeros(3), value_range=(1, 1))
    with pytest.raises(ValueError, match="dtype"):
        to_uint8(np.array(["a"]))
    with pytest.raises(ValueError, match="dtype"):
        to_uint8(torch.zeros(3, dtype=torch.bool))


# --------------------------------------------------------------------------- grey -> RGB
def test_to_rgb() -> None:
    grey = NCHW[:, :1]
    rgb = to_rgb(grey)
    assert rgb.shape == (2, 3, 4, 5) and all(np.array_equal(rgb[:, c], grey[:, 0]) for c in range(3))
    t = to_rgb(torch.from_numpy(grey))
    assert t.shape == (2, 3, 4, 5) and np.array_equal(t.numpy(), rgb)
    points = np.zeros((5, 3), np.float32)
    for unchanged in (NCHW, points, torch.from_numpy(NCHW)):
        assert to_rgb(unchanged) is unchanged


# --------------------------------------------------------------------------- generator output
def test_as_uint8_images_layouts() -> None:
    assert np.array_equal(as_uint8_images(NCHW.transpose(0, 2, 3, 1), "t"), NCHW)
    assert as_uint8_images(NCHW.transpose(0, 2, 3, 1), "t").flags.c_contiguous
    assert as_uint8_images(np.zeros((2, 4, 4)), "t").shape == (2, 1, 4, 4)
    floats = NCHW.astype(np.float32) / 255
    assert np.array_equal(as_uint8_images(floats, "t", 2), NCHW)
    assert np.array_equal(as_uint8_images(floats * (1 + 1e-7), "t"), NCHW)  # rounding slack is clipped


@pytest.mark.parametrize(
    "a, n, match",
    [
        (np.zeros((2, 1, 4, 4), np.int32), None, "^t: images must be uint8 or float"),
        (np.zeros((2, 5, 4, 4), np.uint8), None, "^t: .*channel axis"),
        (np.zeros((2, 4), np.uint8), None, "^t: images must be N×H×W"),
        (np.full((2, 1, 4, 4), 2.0), None, r"^t: float images must lie in \[0, 1\]"),
        (np.full((2, 1, 4, 4), np.nan), None, r"^t: images hold 32 NaN value\(s\)"),
        (np.zeros((3, 1, 4, 4), np.uint8), 2, "^t: expected 2 images"),
        (np.zeros((2, 4), np.uint8), 2, "^t: expected 2 images"),
    ],
)
def test_as_uint8_images_rejects(a: np.ndarray, n: int | None, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        as_uint8_images(a, "t", n)


def test_importing_the_rules_stays_light() -> None:
    code = ("import sys, ganeval.data.images; heavy = {'PIL', 'scipy', 'pandas', 'hydra', 'sklearn', "
            "'torchvision', 'matplotlib'} & set(sys.modules); print(sorted(heavy))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
