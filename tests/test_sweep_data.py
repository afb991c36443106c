"""The image rules every layer shares (ganeval/data/images.py) at each edge: layouts, dtypes, ranges, conversion."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.data import images as I


@pytest.mark.parametrize("shape, want", [
    ((2, 5, 6), "NHW"), ((2, 1, 5, 6), "NCHW"), ((2, 3, 5, 6), "NCHW"), ((2, 5, 6, 1), "NHWC"),
    ((2, 5, 6, 3), "NHWC"), ((2, 3, 5, 3), "NCHW"),
])
def test_each_layout_is_named(shape: tuple[int, ...], want: str) -> None:
    assert I.image_layout(shape) == want


@pytest.mark.parametrize("shape", [(2, 5), (2, 2, 5, 6), (2, 4, 5, 4), (2, 5, 6, 2), (1, 1, 1, 1, 1), (4,)])
def test_other_shapes_are_no_layout(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=rf"^x: images must be N×H×W, .* got shape {re_shape(shape)}$"):
        I.image_layout(shape, "x")
    with pytest.raises(ValueError, match=r"^images must be"):
        I.image_layout(shape)


def re_shape(shape: tuple[int, ...]) -> str:
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


def test_a_stated_layout_is_applied_or_refused() -> None:
    a = np.zeros((2, 5, 6, 3), np.uint8)
    assert I.apply_layout(a, "NHWC", "x", "h").shape == (2, 3, 5, 6)
    assert I.apply_layout(torch.from_numpy(a), "nhwc", "x", "h").shape == (2, 3, 5, 6)
    b = np.zeros((2, 1, 5, 6), np.uint8)
    assert I.apply_layout(b, "nchw", "x", "h") is b and I.apply_layout(b, None, "x", "h") is b
    assert I.apply_layout(b, "auto", "x", "h") is b
    both = np.zeros((4, 3, 8, 1), np.uint8)
    with pytest.raises(ValueError, match=r"^x holds images of shape \(4, 3, 8, 1\), which fits both N×C×H×W "
                                         r"\(8×1 images, 3 channels\) and N×H×W×C \(3×8 images, 1 channels\): "
                                         "say which with HOW$"):
        I.apply_layout(both, "auto", "x", "HOW")
    assert I.apply_layout(np.zeros((4, 3, 8, 2)), "auto", "x", "h").shape == (4, 3, 8, 2)
    assert I.apply_layout(np.zeros((4, 2, 8, 3)), "auto", "x", "h").shape == (4, 2, 8, 3)
    with pytest.raises(ValueError, match=r"^layout=nhwc given but x holds a 3-D array of shape \(2, 5, 6\); drop it"):
        I.apply_layout(np.zeros((2, 5, 6)), "nhwc", "x", "h")
    assert I.apply_layout(np.zeros((2, 5, 6)), "nhwc", "x", "h", strict=False).shape == (2, 5, 6)
    with pytest.raises(ValueError, match=r"has 2 on its channel axis \(axis 1; 1 or 3 expected\): it is not NCHW"):
        I.apply_layout(np.zeros((2, 2, 5, 3)), "nchw", "x", "h")
    with pytest.raises(ValueError, match=r"has 2 on its channel axis \(axis 3; 1 or 3 expected\): it is not NHWC"):
        I.apply_layout(np.zeros((2, 3, 5, 2)), "nhwc", "x", "h")
    with pytest.raises(ValueError, match=r"^x: layout must be one of auto, nchw, nhwc, got 'chw'$"):
        I.apply_layout(b, "chw", "x", "h")
    assert I.LAYOUTS == ("auto", "nchw", "nhwc")


def test_describe_names_what_one_item_is() -> None:
    assert I.describe((9, 5, 6)) == "5×6 images with 1 channel"
    assert I.describe((9, 3, 5, 6)) == "5×6 images with 3 channels"
    assert I.describe((9, 1, 5, 6)) == "5×6 images with 1 channel"
    assert I.describe((9, 5, 6, 3)) == "5×6 images with 3 channels"
    assert I.describe((9, 7)) == "rows of shape (7,)"


def test_only_uint8_and_floats_are_image_dtypes() -> None:
    for ok in (np.uint8, np.float16, np.float32, np.float64, torch.uint8, torch.float16, torch.bfloat16):
        I.check_image_dtype(ok)
    for bad in (np.int8, np.int64, np.uint16, bool, torch.int16, torch.int64, torch.bool):
        with pytest.raises(ValueError, match=r"^w: images must be uint8 or floats in \[0, 1\], got dtype"):
            I.check_image_dtype(bad, "w")


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_the_unit_range_is_checked_at_its_edges(lib: str) -> None:
    def arr(*v: float):  # type: ignore[no-untyped-def]
        a = np.array(v, dtype=np.float32)
        return torch.from_numpy(a) if lib == "torch" else a

    I.check_unit_range(arr(0.0, 1.0))
    I.check_unit_range(arr())
    I.check_unit_range(arr(-1e-6, 1 + 1e-6), atol=1e-5)
    with pytest.raises(ValueError, match=r"^v: float images must lie in \[0, 1\], got values in \[-0.5, 1\]; convert"):
        I.check_unit_range(arr(-0.5, 1.0), "v")
    with pytest.raises(ValueError, match=r"got values in \[0, 2\]"):
        I.check_unit_range(arr(0.0, 2.0))
    with pytest.raises(ValueError, match=r"got values in \[0, 1.0000001192092896\]"):
        I.check_unit_range(arr(0.0, np.nextafter(np.float32(1), np.float32(2))))
    with pytest.raises(ValueError, match=r"^images hold 2 NaN value\(s\)"):
        I.check_unit_range(arr(0.5, np.nan, np.nan))
    with pytest.raises(ValueError, match=r"hold 1 NaN"):
        I.check_unit_range(arr(np.nan, 0.5))


def test_the_range_text_shows_enough_digits() -> None:
    assert I.unit_range_text(0.123456, 0.5) == "[0.1235, 0.5]"
    assert I.unit_range_text(-0.00001, 1.00001) == "[-1e-05, 1.00001]"
    assert I.unit_range_text(-0.00001, 1.00001, atol=1e-4) == "[-1e-05, 1]"
    assert I.unit_range_text(-3.0, 7.0) == "[-3, 7]"


def test_nchw_views_of_each_layout() -> None:
    a = np.arange(2 * 4 * 5 * 3).reshape(2, 4, 5, 3)
    assert np.array_equal(I.to_nchw(a), a.transpose(0, 3, 1, 2))
    assert torch.equal(I.to_nchw(torch.from_numpy(a)), torch.from_numpy(a).permute(0, 3, 1, 2))
    g = np.arange(2 * 4 * 5).reshape(2, 4, 5)
    assert np.array_equal(I.to_nchw(g), g[:, None])
    c = np.zeros((2, 3, 4, 5))
    assert I.to_nchw(c) is c


def test_images_to_float_divides_uint8_by_255_and_checks_floats() -> None:
    u = torch.tensor([[[[0, 51, 255]]]], dtype=torch.uint8)
    assert torch.equal(I.images_to_float(u), torch.tensor([[[[0.0, 0.2, 1.0]]]]))
    f = torch.tensor([[[0.5, 1.0]]], dtype=torch.float64)  # N×H×W floats
    got = I.images_to_float(f)
    assert got.dtype == torch.float32 and got.shape == (1, 1, 1, 2)
    with pytest.raises(ValueError, match="float images must lie in"):
        I.images_to_float(torch.tensor([[[1.5]]]))
    with pytest.raises(ValueError, match="got dtype torch.int64"):
        I.images_to_float(torch.zeros(1, 1, 1, dtype=torch.int64))


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_to_uint8_is_affine_round_half_even_and_clipped(lib: str) -> None:
    v = np.array([-2.0, -1.0, 0.0, 1.0, 2.0], dtype=np.float64)
    a = torch.from_numpy(v) if lib == "torch" else v
    assert I.to_uint8(a).tolist() == [0, 0, 128, 255, 255]  # default range (-1, 1); 127.5 → 128 (half to even)
    h = np.array([0.5, 1.5, 2.5, 254.5], dtype=np.float32)
    assert I.to_uint8(torch.from_numpy(h) if lib == "torch" else h, (0, 255)).tolist() == [0, 2, 2, 254]
    w = np.array([0.0, 0.1, 1.0, 3.0], dtype=np.float32)
    got = I.to_uint8(torch.from_numpy(w) if lib == "torch" else w, value_range=(0, 2))
    assert got.dtype == np.uint8 and got.tolist() == [0, 13, 128, 255]
    ints = np.array([0, 1, 2], dtype=np.int32)
    assert I.to_uint8(torch.from_numpy(ints) if lib == "torch" else ints, (0, 2)).tolist() == [0, 128, 255]
    for bad in [(1, 1), (1, 0)]:
        with pytest.raises(ValueError, match=r"value_range must be \(low, high\) with high > low"):
            I.to_uint8(a, bad)
    nan = np.array([0.0, np.nan])
    with pytest.raises(ValueError, match="images contain NaN"):
        I.to_uint8(torch.from_numpy(nan) if lib == "torch" else nan)
    u = np.array([7], np.uint8)
    assert I.to_uint8(torch.from_numpy(u) if lib == "torch" else u).tolist() == [7]


def test_to_uint8_refuses_other_kinds() -> None:
    with pytest.raises(ValueError, match="float or integer tensor, got dtype torch.bool"):
        I.to_uint8(torch.zeros(2, dtype=torch.bool))
    with pytest.raises(ValueError, match="float or integer array, got dtype <U1"):
        I.to_uint8(np.array(["a"]))
    assert I.to_uint8(torch.tensor([0.0], dtype=torch.float16), (0, 1)).tolist() == [0]


def test_to_rgb_repeats_only_a_single_channel() -> None:
    g = np.arange(4).reshape(1, 1, 2, 2)
    assert np.array_equal(I.to_rgb(g), np.repeat(g, 3, axis=1))
    t = torch.from_numpy(g)
    assert I.to_rgb(t).shape == (1, 3, 2, 2) and I.to_rgb(t).data_ptr() == t.data_ptr()
    for same in (np.zeros((1, 3, 2, 2)), np.zeros((1, 2, 2)), np.zeros((4, 1))):
        assert I.to_rgb(same) is same


def test_generator_output_becomes_contiguous_uint8_nchw() -> None:
    f = np.full((2, 4, 5, 3), 0.5, np.float32)
    got = I.as_uint8_images(f, "g", 2)
    assert got.shape == (2, 3, 4, 5) and got.dtype == np.uint8 and (got == 128).all()
    u = np.zeros((2, 4, 5, 3), np.uint8)
    out = I.as_uint8_images(u, "g")
    assert out.flags["C_CONTIGUOUS"] and out.shape == (2, 3, 4, 5)
    assert I.as_uint8_images(np.full((1, 4, 4), 1 + 1e-7), "g", 1).max() == 255  # float slack of 1e-6
    with pytest.raises(ValueError, match="float images must lie"):
        I.as_uint8_images(np.full((1, 4, 4), 1 + 1e-5), "g", 1)
    with pytest.raises(ValueError, match=r"^g: expected 3 images \(N×H×W, N×H×W×C or N×C×H×W\), got an array of "
                                         r"shape \(2, 4, 5, 3\)"):
        I.as_uint8_images(u, "g", 3)
    with pytest.raises(ValueError, match="expected 4 images"):
        I.as_uint8_images(np.zeros((4, 4)), "g", 4)
    with pytest.raises(ValueError, match="^g: images must be uint8 or floats"):
        I.as_uint8_images(np.zeros((1, 4, 4), np.int16), "g", 1)


# ------------------------------------------------------------------------------------------------------------------
# Reference files' checks (ganeval/data/references.py)
# ------------------------------------------------------------------------------------------------------------------
def test_moments_are_checked_at_each_edge() -> None:
    from ganeval.data.references import ReferenceError, check_moments

    one = check_moments(np.array([2], np.int64), np.array([[3]], np.int32), "f")
    assert one.dim == 1 and one.mu.dtype == np.float64 and one.sigma.tolist() == [[3.0]]
    zero = check_moments(np.zeros(3), np.zeros((3, 3)), "f")  # constant features: a zero covariance
    assert zero.dim == 3
    cases = [
        ([1.0], np.eye(1), r"^f: mu is not a numeric array \(list\)"),
        (np.array(["a"]), np.eye(1), r"^f: mu is not a numeric array \(ndarray <U1\)"),
        (np.zeros(1), np.array([[True]]), r"^f: sigma is not a numeric array \(ndarray bool\)"),
        (np.zeros(0), np.zeros((0, 0)), r"^f: mu must be a vector of D means, got shape \(0,\)"),
        (np.zeros((1, 1)), np.eye(1), r"^f: mu must be a vector of D means, got shape \(1, 1\)"),
        (np.zeros(2), np.eye(3), r"^f: mu has 2 entries but sigma has shape \(3, 3\), not 2×2"),
        (np.array([np.nan, np.inf]), np.eye(2), r"^f: mu holds 2 non-finite values"),
        (np.zeros(2), np.array([[1.0, np.inf], [np.inf, 1.0]]), r"^f: sigma holds 2 non-finite values"),
        (np.zeros(2), np.array([[1.0, 0.5], [0.5 + 2e-6, 1.0]]), r"^f: sigma is not symmetric \(max \|sigma - sigmaᵀ\| "
                                                                 r"= 2e-06 of max \|sigma\| 1\)"),
    ]
    for mu, sigma, match in cases:
        with pytest.raises(ReferenceError, match=match):
            check_moments(mu, sigma, "f")
    check_moments(np.zeros(2), np.array([[1.0, 0.5], [0.5 + 5e-7, 1.0]]), "f")  # within SYMMETRY_RTOL


def test_the_psd_check_sits_at_its_tolerance() -> None:
    from ganeval.data.references import PSD_RTOL, ReferenceError, check_psd, stored_eps

    assert stored_eps(np.dtype(np.float32)) == float(np.finfo(np.float32).eps)
    assert stored_eps(np.dtype(np.int64)) == float(np.finfo(np.float64).eps)
    assert PSD_RTOL == 1e-6
    scale = 4.0
    for lam, ok in ((-0.5e-6 * scale, True), (-2e-6 * scale, False)):
        sigma = np.diag([scale, lam])
        if ok:
            check_psd(sigma, np.finfo(np.float64).eps, "s")
        else:
            with pytest.raises(ReferenceError, match=r"^s: sigma has 1 negative eigenvalues down to -8e-06 \(beyond "
                                                     r"the rounding tolerance −1e-06·max\|sigma\| = -4e-06\)"):
                check_psd(sigma, np.finfo(np.float64).eps, "s")
    check_psd(np.diag([scale, -2e-6 * scale]), 1e-5, "s")  # D·ε = 2e-5 > 2e-6: a float of that ε rounds so far
    check_psd(np.zeros((2, 2)), 0.0, "s")


def test_feature_rows_need_two_finite_numeric_rows() -> None:
    from ganeval.data.references import ReferenceError, check_features

    two = np.zeros((2, 3), np.int16)
    assert check_features(two, "f") is two
    for bad, match in ((np.zeros((1, 3)), r"N ≥ 2, got \(1, 3\) float64"), (np.zeros(3), r"got \(3,\)"),
                       ([[1, 2], [3, 4]], "got list"), (np.zeros((2, 2), bool), "bool"),
                       (np.array([[0.0, np.nan], [0.0, 0.0]]), "non-finite values")):
        with pytest.raises(ReferenceError, match=match):
            check_features(bad, "f")  # type: ignore[arg-type]


def test_provenance_fields_have_their_json_types() -> None:
    from ganeval.data.references import ReferenceError, check_meta

    check_meta({"extractor": {"name": "inception"}, "weights_sha256": "ab", "resize_mode": "clean",
                "content_hash": "cd", "n": 3}, "m")
    check_meta({k: None for k in ("extractor", "weights_sha256", "resize_mode", "content_hash", "n")}, "m")
    check_meta({"extractor": {}}, "m")
    for key, bad, name in (("n", True, "bool"), ("n", 3.0, "float"), ("extractor", "x", "str"),
                           ("weights_sha256", 1, "int"), ("resize_mode", [], "list"), ("content_hash", {}, "dict")):
        with pytest.raises(ReferenceError, match=rf"^m: meta's '{key}' must be \w+ or null, got {name} "):
            check_meta({key: bad}, "m")
    with pytest.raises(ReferenceError, match=r"^m: meta's extractor name must be a string, got 3"):
        check_meta({"extractor": {"name": 3}}, "m")


@pytest.mark.parametrize("block", [1, 2, 3, 4096])
def test_stored_moments_must_be_their_features_whatever_the_block(block: int) -> None:
    from ganeval.data.references import AGREE_RTOL, Moments, ReferenceError, check_agree

    f = np.random.default_rng(4).normal(size=(7, 3)) + 5.0
    mom = Moments(f.mean(0), np.cov(f, rowvar=False))
    check_agree(mom, f, "r", block=block)
    check_agree(mom, f.astype(np.float32).astype(np.float64), "r", block=block)
    for mu, sigma in ((mom.mu + np.array([0, 0, 1e-4]), mom.sigma), (mom.mu, mom.sigma * (1 + 1e-4)),
                      (mom.mu, mom.sigma * (1 - 1e-4))):
        with pytest.raises(ReferenceError, match=r"^r: its mu/sigma are not the moments of its own features"):
            check_agree(Moments(mu, sigma), f, "r", block=block)
    assert AGREE_RTOL == 1e-6


# ------------------------------------------------------------------------------------------------------------------
# Blur (ganeval/data/perturb.py), manifolds and embedded sets (ganeval/data/manifolds.py, embedded.py)
# ------------------------------------------------------------------------------------------------------------------
def _blur64(a: np.ndarray, sigma: float) -> np.ndarray:
    """Separable Gaussian blur written out: 2·ceil(3σ)+1 taps, half-sample symmetric reflection, in float64."""
    r = int(np.ceil(3 * sigma))
    x = np.arange(-r, r + 1)
    k = np.exp(-0.5 * (x / sigma) ** 2)
    k /= k.sum()
    p = np.pad(a.astype(np.float64), ((0, 0), (0, 0), (r, r), (r, r)), mode="symmetric")
    rows = sum(k[j] * p[:, :, j : j + a.shape[2], :] for j in range(2 * r + 1))
    out = sum(k[j] * rows[:, :, :, j : j + a.shape[3]] for j in range(2 * r + 1))
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5])
def test_the_blur_is_a_separable_gaussian_with_symmetric_edges(sigma: float) -> None:
    from ganeval.data.perturb import blur_radius, gaussian_blur

    a = np.random.default_rng(3).integers(0, 256, (3, 2, 5, 7), dtype=np.uint8)  # r may exceed the side: 2.5 → 8
    got = gaussian_blur(a, sigma, chunk=2)
    diff = np.abs(got.astype(int) - _blur64(a, sigma).astype(int))
    assert diff.max() <= 1 and (diff > 0).mean() < 0.02  # float32 sums round a few .5 cases the other way
    assert blur_radius(sigma) == int(np.ceil(3 * sigma))
    assert np.array_equal(gaussian_blur(torch.from_numpy(a), sigma), gaussian_blur(a, sigma))


def test_blur_zero_is_a_copy_and_bad_input_is_refused() -> None:
    from ganeval.data.perturb import _symmetric_index, gaussian_blur

    a = np.zeros((1, 1, 3, 3), np.uint8)
    out = gaussian_blur(a, 0)
    assert np.array_equal(out, a) and out is not a
    assert _symmetric_index(3, 4).tolist() == np.pad(np.arange(3), 4, mode="symmetric").tolist()
    for bad, match in ((np.zeros((1, 3, 3), np.uint8), r"uint8 N×C×H×W, got uint8 of shape \(1, 3, 3\)"),
                       (np.zeros((1, 1, 3, 3), np.float32), "got float32")):
        with pytest.raises(ValueError, match=match):
            gaussian_blur(bad, 1.0)
    for sigma in (-0.1, float("nan"), float("inf"), "1"):
        with pytest.raises(ValueError, match="sigma must be a finite number >= 0"):
            gaussian_blur(a, sigma)  # type: ignore[arg-type]


def test_a_torus_is_its_parametrisation() -> None:
    from ganeval.data.manifolds import torus

    pts = torus(500, R=3.0, r=1.0, seed=2).astype(np.float64)
    ring = np.hypot(pts[:, 0], pts[:, 1])
    np.testing.assert_allclose((ring - 3.0) ** 2 + pts[:, 2] ** 2, 1.0, rtol=1e-5)
    assert (ring > 3.0).mean() > 0.55  # the outer side has more area (density ∝ R + r cos θ)
    assert torus().shape == (1000, 3) and torus().dtype == np.float32
    np.testing.assert_allclose(np.hypot(torus(50)[:, 0], torus(50)[:, 1]).max(), 3.0, atol=0.05)  # R=2, r=1
    noisy = torus(200, seed=2, noise=0.1)
    assert 0.05 < np.abs(noisy - torus(200, seed=2)).std() < 0.15
    for kw in ({"R": 1.0, "r": 1.0}, {"R": 2.0, "r": 0.0}, {"R": 1.0, "r": 2.0}):
        with pytest.raises(ValueError, match="need R > r > 0"):
            torus(10, **kw)


def test_a_sphere_has_its_radius_and_dimension() -> None:
    from ganeval.data.manifolds import sphere

    pts = sphere(300, dim=2, seed=1, radius=2.5)
    np.testing.assert_allclose(np.linalg.norm(pts, axis=1), 2.5, rtol=1e-6)
    g = np.random.default_rng(1).standard_normal((300, 2))
    np.testing.assert_allclose(pts, 2.5 * g / np.linalg.norm(g, axis=1, keepdims=True), rtol=1e-6)
    assert sphere().shape == (1000, 3) and np.allclose(np.linalg.norm(sphere(10), axis=1), 1.0)
    for bad in (1, 2.0, True):
        with pytest.raises(ValueError, match="dim must be an int >= 2"):
            sphere(5, dim=bad)  # type: ignore[arg-type]
    for bad in (0, 1.0, -1):
        with pytest.raises(ValueError, match="n must be a positive int"):
            sphere(bad)  # type: ignore[arg-type]
    assert sphere(1).shape == (1, 3)


def test_the_swiss_roll_is_scikit_learns() -> None:
    from sklearn.datasets import make_swiss_roll

    from ganeval.data.manifolds import swiss_roll

    want, _ = make_swiss_roll(n_samples=20, noise=0.0, random_state=3)
    assert np.array_equal(swiss_roll(20, seed=3), want.astype(np.float32))
    assert swiss_roll().shape == (1000, 3)


def test_the_embedded_digits_at_each_size() -> None:
    from sklearn.datasets import load_digits

    from ganeval.data.embedded import digits, digits_classes

    raw = load_digits().images
    eight = digits(8)
    assert eight.shape == (1797, 1, 8, 8) and eight.dtype == np.uint8
    assert np.array_equal(eight[:, 0], np.round(raw * (255.0 / 16.0)).astype(np.uint8))
    assert eight.max() == 255
    assert digits().shape == (1797, 1, 32, 32)
    four = digits(4)
    want = torch.nn.functional.interpolate(torch.from_numpy(raw[:3].astype(np.float32) * (255 / 16))[:, None],
                                           size=(4, 4), mode="bilinear", align_corners=False, antialias=True)
    assert np.array_equal(four[:3], want.round().clamp(0, 255).to(torch.uint8).numpy())
    for bad in (0, 2.0):
        with pytest.raises(ValueError, match="size must be a positive int"):
            digits(bad)  # type: ignore[arg-type]
    some = digits_classes((3, 1))
    assert len(some) == int(np.isin(load_digits().target, [1, 3]).sum())
    assert np.array_equal(some, eight[np.isin(load_digits().target, [1, 3])])
    assert len(digits_classes()) == int((load_digits().target < 5).sum())
    for bad, match in (([], "non-empty list"), ((10,), "digits 0..9"), ((True,), "digits 0..9"), ("12", "list"),
                       ((1, 1), "repeats a digit")):
        with pytest.raises(ValueError, match=match):
            digits_classes(bad)  # type: ignore[arg-type]


def test_photo_patches_are_seeded_crops() -> None:
    from sklearn.datasets import load_sample_images

    from ganeval.data.embedded import patches

    photos = load_sample_images().images
    got = patches(3, size=5, seed=4)
    rng = np.random.default_rng(4)
    which = rng.integers(0, 2, 3)
    for i, k in enumerate(which):
        y = rng.integers(0, photos[k].shape[0] - 4)
        x = rng.integers(0, photos[k].shape[1] - 4)
        assert np.array_equal(got[i], photos[k][y : y + 5, x : x + 5].transpose(2, 0, 1))
    side = min(min(p.shape[:2]) for p in photos)
    assert patches(1, size=side).shape == (1, 3, side, side) and patches(1, size=1).shape == (1, 3, 1, 1)
    assert patches(2).shape == (2, 3, 32, 32)
    for kw in ({"size": side + 1}, {"size": 0}, {"n": 0}, {"n": 1.0}):
        with pytest.raises(ValueError):
            patches(**{"n": 1, **kw})  # type: ignore[arg-type]
