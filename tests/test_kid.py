"""KID against a direct O(n²) computation of the unbiased polynomial-kernel MMD²."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

from ganeval.metrics import kid

kid_module = importlib.import_module("ganeval.metrics.kid")


def direct_mmd2(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x.astype(np.float64), y.astype(np.float64)
    d, m = x.shape[1], x.shape[0]
    k = lambda a, b: (a @ b.T / d + 1) ** 3  # noqa: E731
    kxx, kyy, kxy = k(x, x), k(y, y), k(x, y)
    return float(
        (kxx.sum() - np.trace(kxx) + kyy.sum() - np.trace(kyy)) / (m * (m - 1)) - 2 * kxy.sum() / (m * m)
    )


def test_one_subset_of_everything_matches_direct() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((301, 24)).astype(np.float32)  # odd size: unequal symmetric half-blocks
    y = (rng.standard_normal((301, 24)) * 1.2 + 0.2).astype(np.float32)
    mean, std = kid(x, y, subsets=1, subset_size=301)  # one subset: batched per-subset products
    assert mean == pytest.approx(direct_mmd2(x, y), rel=1e-5)
    assert std == 0.0


@pytest.mark.parametrize("subsets", [10, 5])
def test_subsets_match_direct_per_subset(monkeypatch: pytest.MonkeyPatch, subsets: int) -> None:
    # 10 subsets of 40 hold more kernel entries than the 120×90 pairs: KID then reads the subset sums
    # from every pair's kernel (in strips); 5 subsets hold fewer: it batches the subsets (three per chunk).
    monkeypatch.setattr(kid_module, "CHUNK_ELEMENTS", 3 * 40 * 16)
    assert kid_module.all_pairs_cheaper(120, 90, subsets, 40) == (subsets == 10)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((120, 16)), rng.standard_normal((90, 16)) + 0.5
    ix, iy = kid_module.draw_subsets(120, 90, subsets, 40, np.random.default_rng(7))
    direct = np.array([direct_mmd2(x[a], y[b]) for a, b in zip(ix, iy)])
    mean, std = kid(x, y, subsets=subsets, subset_size=40, seed=7)
    assert mean == pytest.approx(direct.mean(), rel=1e-10)
    assert std == pytest.approx(direct.std(ddof=0), rel=1e-8)


def test_seeded_and_separates_distributions() -> None:
    rng = np.random.default_rng(2)
    x, x2, y = rng.standard_normal((500, 8)), rng.standard_normal((500, 8)), rng.standard_normal((500, 8)) + 1
    assert kid(x, y, 20, 100, seed=3) == kid(x, y, 20, 100, seed=3)
    assert kid(x, y, 20, 100, seed=3) != kid(x, y, 20, 100, seed=4)
    same, _ = kid(x, x2, 20, 100)
    diff, _ = kid(x, y, 20, 100)
    assert diff > 20 * abs(same)


def test_torch_input() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((100, 8)), rng.standard_normal((100, 8))
    assert kid(torch.from_numpy(x), torch.from_numpy(y), 5, 50) == pytest.approx(kid(x, y, 5, 50), rel=1e-12)


def test_subset_larger_than_set_names_both_numbers() -> None:
    x, y = np.zeros((50, 4)), np.zeros((80, 4))
    with pytest.raises(ValueError, match=r"subset_size=60.*x.*50"):
        kid(x, y, subsets=2, subset_size=60)


def test_bad_dimensions() -> None:
    with pytest.raises(ValueError, match="D=4.*D=5"):
        kid(np.zeros((50, 4)), np.zeros((50, 5)), 2, 10)
    with pytest.raises(ValueError, match="NaN"):
        kid(np.full((50, 4), np.nan), np.zeros((50, 4)), 2, 10)


@pytest.mark.gpu
def test_gpu_matches_cpu() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((400, 32)), rng.standard_normal((400, 32)) + 0.1
    assert kid(x, y, 10, 200, device="cuda")[0] == pytest.approx(kid(x, y, 10, 200)[0], rel=1e-9)


@pytest.mark.parametrize("height", [1, 7, 64])
def test_strip_sums_equal_direct_subset_sums(height: int) -> None:
    rng = np.random.default_rng(5)
    x, y = torch.randn(50, 6, dtype=torch.float64), torch.randn(40, 6, dtype=torch.float64)
    ix = np.stack([rng.choice(50, 20, replace=False) for _ in range(3)])
    iy = np.stack([rng.choice(40, 20, replace=False) for _ in range(3)])
    kxx = kid_module.poly_kernel(x @ x.T, 1 / 6, 1.0, 3)
    kxy = kid_module.poly_kernel(x @ y.T, 1 / 6, 1.0, 3)
    want_xx = [float(kxx[i][:, i].sum() - kxx[i, i].sum()) for i in ix]
    want_xy = [float(kxy[i][:, j].sum()) for i, j in zip(ix, iy)]
    got_xx = sum(job() for job in kid_module.sym_parts(x, ix, 1 / 6, 1.0, 3, height=height))
    got_xy = sum(job() for job in kid_module.cross_parts(x, y, ix, iy, 1 / 6, 1.0, 3, height=height))
    np.testing.assert_allclose(got_xx.numpy(), want_xx, rtol=1e-12)
    np.testing.assert_allclose(got_xy.numpy(), want_xy, rtol=1e-12)
    strips = [(a, kid_module.kernel_strip(x[a : a + height] @ x[a:].T, 1 / 6, 1.0, 3)) for a in range(0, 50, height)]
    np.testing.assert_allclose(sum(job() for job in kid_module.offdiag_parts(strips, 50, ix)).numpy(), want_xx, rtol=1e-12)


def test_kernel_strips_are_kept_only_up_to_the_memory_cap() -> None:
    """A set's kernel strips (half its N×N kernel of `itemsize`-byte entries) are kept while they fit in
    KERNEL_MAX_BYTES: at the cap they are, one row more they are not, for float32 and float64 alike."""
    from ganeval.metrics.kid import KERNEL_MAX_BYTES, strips_fit

    for itemsize in (4, 8):
        n = int(np.sqrt(2 * KERNEL_MAX_BYTES / itemsize))  # n² · itemsize / 2 ≤ the cap < (n + 1)² · itemsize / 2
        assert n * n * itemsize // 2 <= KERNEL_MAX_BYTES < (n + 1) ** 2 * itemsize // 2
        assert strips_fit(n, itemsize) and not strips_fit(n + 1, itemsize)


def test_kernel_precision_rule_at_its_documented_edge() -> None:
    """With coef0 = 0 the kernel keeps its precision while t^degree stays 2^bits above the smallest normal number of
    the precision (float32 for bits ≤ 24): just above that edge it does, just below it does not."""
    from ganeval.metrics.kid import precise
    from ganeval.metrics.validation import FLOAT32_TINY, FLOAT64_TINY

    for bits, tiny in ((24, FLOAT32_TINY), (53, FLOAT64_TINY)):
        edge = (tiny * 2.0**bits) ** (1 / 3)  # t with t³ at the edge
        assert precise(edge * 1.01, 3, 0.0, bits) and not precise(edge * 0.99, 3, 0.0, bits)
