"""Certified reduced-precision exact k-NN: the same graph as brute force in float64 (ties to the lower
index), whatever precision forms the candidate products; the error bound really bounds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.metrics import imd
from ganeval.metrics.knn import distance_error, exact_knn, resolve_precision


def brute_force(x: np.ndarray, k: int) -> np.ndarray:
    """Each row's k nearest other rows by float64 direct distances, ties to the lower index, as sets."""
    x64 = x.astype(np.float64)
    d = ((x64[:, None, :] - x64[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d, np.inf)
    n = len(x)
    return np.stack([np.lexsort((np.arange(n), d[i]))[:k] for i in range(n)])


def as_sets(nbrs: np.ndarray) -> list[frozenset]:
    return [frozenset(r.tolist()) for r in np.asarray(nbrs)]


def datasets() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    gauss = rng.standard_normal((500, 64)).astype(np.float32)
    clusters = (rng.standard_normal((10, 32)) * 5)[rng.integers(0, 10, 480)] + 0.05 * rng.standard_normal((480, 32))
    dups = np.concatenate([gauss[:200], gauss[:50], gauss[100:150]])  # exact duplicates, 3 copies of some
    grid = rng.integers(0, 3, (400, 8)).astype(np.float32)  # many exact ties at every distance
    far = gauss[:300] * rng.uniform(0.1, 30, (300, 1)).astype(np.float32)  # very different norms
    offset = gauss[:300] + 40.0  # large common offset: distances small against the norms
    return {"gauss": gauss, "clusters": clusters.astype(np.float32), "dups": dups, "grid": grid,
            "far": far, "offset": offset.astype(np.float32)}


@pytest.mark.parametrize("name", sorted(datasets()))
@pytest.mark.parametrize("k", [1, 5])
def test_bfloat16_graph_is_the_exact_graph(name: str, k: int) -> None:
    x = datasets()[name]
    want = as_sets(brute_force(x, k))
    for precision in ("float32", "bfloat16"):
        got = exact_knn(torch.from_numpy(x), k, height=128, precision=precision).numpy()
        assert as_sets(got) == want, (name, k, precision)


def test_small_candidate_windows_still_exact() -> None:
    """With barely more candidates than k, many rows fail the certificate and are searched in full."""
    x = datasets()["offset"]
    got = exact_knn(torch.from_numpy(x), 5, height=64, extra=1, precision="bfloat16").numpy()
    assert as_sets(got) == as_sets(brute_force(x, 5))


@pytest.mark.parametrize("name", ["gauss", "far", "offset"])
def test_error_bound_bounds_bfloat16_distances(name: str) -> None:
    x = torch.from_numpy(datasets()[name])
    sq = (x * x).sum(dim=1)
    lo = x.bfloat16()
    coarse = (sq[:, None] + sq[None, :] - 2 * (lo @ lo.T).float()).double()
    x64 = x.double()
    true = ((x64[:, None, :] - x64[None, :, :]) ** 2).sum(dim=2)
    err = (coarse - true).abs()
    bound = distance_error(x, sq, "bfloat16")
    assert bool((err <= bound[:, None]).all())
    assert float((err / bound[:, None]).max()) > 1e-3  # the bound is not vacuous by orders of magnitude


def test_precision_choices_are_checked() -> None:
    cpu = torch.device("cpu")
    with pytest.raises(ValueError, match="precision must be one of"):
        resolve_precision("float16", cpu, None)
    with pytest.raises(ValueError, match="needs a CUDA device"):
        resolve_precision("tf32", cpu, None)
    with pytest.raises(ValueError, match="cannot share its Gram strips"):
        resolve_precision("bfloat16", cpu, lambda a, g: None)
    assert resolve_precision("float32", cpu, lambda a, g: None) == "float32"


def test_imd_is_the_same_in_every_precision() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((400, 32)).astype(np.float32)
    y = (rng.standard_normal((400, 32)) * 1.5).astype(np.float32)
    values = {p: imd(x, y, seed=3, knn_precision=p) for p in ("float32", "bfloat16")}
    assert values["bfloat16"] == values["float32"]
    with pytest.raises(ValueError, match="knn_precision"):
        imd(x, y, knn_precision="half")
