"""Certified reduced-precision exact k-NN: the same graph as brute force in float64 (ties to the lower
index), whatever precision forms the candidate products; the error bound really bounds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.metrics import imd
from ganeval.metrics.knn import exact_knn, exact_knn_graph
from ganeval.metrics.knn_precision import distance_error, resolve_precision


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


@pytest.mark.parametrize("name", sorted(datasets()))
@pytest.mark.parametrize("precision,extra", [("float32", None), ("float32", 1), ("bfloat16", None)])
def test_graph_distances_are_the_neighbours_distances(name: str, precision: str, extra: int | None) -> None:
    """The distances the search returns (reused as precision/recall radii) are, per row and in order, those
    of its neighbours within the float32 bound, and ascending: certain rows, re-ranked rows (ties, `extra=1`)
    and fully searched ones alike."""
    x = torch.from_numpy(datasets()[name])
    g = exact_knn_graph(x, 5, height=64, extra=extra, precision=precision)
    assert as_sets(g.nbrs.numpy()) == as_sets(brute_force(x.numpy(), 5))
    truth = ((x.double()[:, None, :] - x.double()[g.nbrs]) ** 2).sum(dim=2)
    bound = distance_error(x, (x * x).sum(dim=1), "float32")[:, None]
    assert g.sq_dist.dtype == x.dtype and g.sq_dist.shape == g.nbrs.shape
    assert bool(((g.sq_dist.double() - truth).abs() <= bound).all())
    assert bool((g.sq_dist[:, 1:] >= g.sq_dist[:, :-1]).all())
    # the k-th distance is the true k-th nearest distance (the radius), whichever tied row holds the place
    want = np.sort(((x.double()[:, None, :] - x.double()[None]) ** 2).sum(dim=2).fill_diagonal_(float("inf")).numpy(), 1)
    assert np.all(np.abs(g.sq_dist[:, -1].double().numpy() - want[:, 4]) <= bound[:, 0].numpy())


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


@pytest.mark.parametrize("name", sorted(datasets()))
@pytest.mark.parametrize("height", [16, 64])
def test_streamed_search_is_the_exact_graph(name: str, height: int) -> None:
    """Large sets merge each strip's candidates at once (bounded memory): the same graph as brute force,
    ties and duplicates included, with the one-pass search's distances up to the products' rounding (its
    head strips are taller, so BLAS sums some pairs in another order)."""
    x = datasets()[name]
    want = as_sets(brute_force(x, 5))
    streamed = exact_knn_graph(torch.from_numpy(x), 5, height=height, stream=True)
    assert as_sets(streamed.nbrs.numpy()) == want
    one_pass = exact_knn_graph(torch.from_numpy(x), 5, height=height, stream=False)
    xt = torch.from_numpy(x)
    bound = distance_error(xt, (xt * xt).sum(dim=1), "float32")[:, None]
    assert bool(((streamed.sq_dist.double() - one_pass.sq_dist.double()).abs() <= 2 * bound).all())
    bf16 = exact_knn(torch.from_numpy(x), 5, height=height, stream=True, precision="bfloat16").numpy()
    assert as_sets(bf16) == want


def test_stream_chosen_by_memory_only_for_large_sets() -> None:
    """The one-pass filter (whose strips KID sums over) stays for every size the protocol usually meets; the
    merge takes over where its held pairs would pass 256 MiB (CPU strips of 512 rows, 5-NN: from ~54k rows)."""
    from ganeval.metrics.knn_candidates import STREAM_ABOVE_BYTES, held_pairs_bytes

    assert held_pairs_bytes(50_000, 10, 512) < STREAM_ABOVE_BYTES < held_pairs_bytes(60_000, 10, 512)
    assert held_pairs_bytes(2_000, 10, 512) == 0


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(datasets()))
def test_gpu_precisions_and_stream_give_the_exact_graph(name: str) -> None:
    """On CUDA: float32, bfloat16 and TF32 candidates, one-pass and streamed, all give brute force's graph,
    and the distances stay within the float32 bound."""
    x = datasets()[name]
    want = as_sets(brute_force(x, 5))
    xt = torch.from_numpy(x).cuda()
    bound = distance_error(xt, (xt * xt).sum(dim=1), "float32")[:, None]
    for precision in ("float32", "bfloat16", "tf32"):
        for stream in (False, True):
            g = exact_knn_graph(xt, 5, height=64, precision=precision, stream=stream)
            assert as_sets(g.nbrs.cpu().numpy()) == want, (precision, stream)
            truth = ((xt.double()[:, None, :] - xt.double()[g.nbrs]) ** 2).sum(dim=2)
            assert bool(((g.sq_dist.double() - truth).abs() <= bound).all()), (precision, stream)


def test_auto_precision_is_measured_not_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """`auto` times a start-up product per device (once per process) and considers a reduced precision only when
    it is at least twice as fast as float32; with KID sharing the strips it stays float32 without measuring."""
    from ganeval.metrics import knn_precision as knn

    cpu = torch.device("cpu")
    for bf16_s, want in ((0.4, "bfloat16"), (0.6, "float32"), (50.0, "float32")):
        monkeypatch.setattr(knn, "_measured", {})
        calls = []
        monkeypatch.setattr(knn, "_product_seconds",
                            lambda a, b, r: calls.append(a.dtype) or (bf16_s if a.dtype == torch.bfloat16 else 1.0))
        assert knn.measure_precision(cpu) == want
        assert knn.measure_precision(cpu) == want  # cached: measured once
        assert calls.count(torch.float32) == 1
        assert knn.resolve_precision("auto", cpu, None) == "auto"  # decided per search, on its data
        monkeypatch.setattr(knn, "_product_seconds", lambda *a: pytest.fail("measured with a hook"))
        assert knn.resolve_precision("auto", cpu, lambda a, g: None) == "float32"
    x = datasets()["clusters"]
    got = exact_knn(torch.from_numpy(x), 5, height=64, precision="auto").numpy()
    assert as_sets(got) == as_sets(brute_force(x, 5))


def test_undecided_share_is_the_certificates_own_verdict() -> None:
    """`undecided_share` tries the certificate on sampled rows: every row of well-separated clusters is in doubt
    (their norms are the clusters' offsets), few of the centred pool3-like rows are, and a sample tells the same."""
    from ganeval.metrics import knn_precision as knn
    from ganeval.metrics.synthetic import pool3_like

    spread = torch.from_numpy(pool3_like(600, 256, seed=1))
    clusters = torch.from_numpy(datasets()["clusters"])
    assert knn.undecided_share(clusters, 5, "bfloat16", rows=10_000) == 1.0
    assert knn.undecided_share(spread, 5, "bfloat16", rows=10_000) < 0.2
    assert knn.undecided_share(spread, 5, "bfloat16", rows=50) < 0.2


@pytest.mark.parametrize("name,want", [("spread", "bfloat16"), ("clusters", "float32")])
def test_auto_weighs_the_rows_searched_again(monkeypatch: pytest.MonkeyPatch, name: str, want: str) -> None:
    """With products measured 5× faster (patched timings), `auto` takes the reduced precision on data its
    certificate decides, and float32 on data whose every row would be searched again; the graph is exact."""
    from ganeval.metrics import knn, knn_precision
    from ganeval.metrics.synthetic import pool3_like

    monkeypatch.setattr(knn_precision, "_measured", {"cpu": "bfloat16"})
    monkeypatch.setattr(knn_precision, "_ratios", {"cpu": 0.2})
    monkeypatch.setattr(knn_precision, "AUTO_MIN_ROWS", 100)
    x = pool3_like(600, 256, seed=1) if name == "spread" else datasets()["clusters"]
    xt = torch.from_numpy(x)
    assert knn_precision.auto_precision(xt, 5) == want
    refined = []
    real_refine = knn._refine
    monkeypatch.setattr(knn, "_refine", lambda *a: refined.append(True) or real_refine(*a))
    got = exact_knn(xt, 5, height=64, precision="auto").numpy()
    assert bool(refined) == (want != "float32")  # the reduced-precision path ran exactly when chosen
    assert as_sets(got) == as_sets(brute_force(x, 5))
    monkeypatch.setattr(knn_precision, "AUTO_MIN_ROWS", 10_000)
    assert knn_precision.auto_precision(xt, 5) == "float32"  # a small set is not worth the trial


@pytest.mark.parametrize("name", ["gauss", "far", "offset"])
def test_centring_error_bounds_the_centred_distances(name: str) -> None:
    """Reduced-precision candidates come from the centred rows: their float64 distances stay within
    `centring_error` of x's own, and the bound is far smaller than the products' error it is added to."""
    from ganeval.metrics.knn_precision import centred, centring_error

    x = torch.from_numpy(datasets()[name])
    xc = centred(x)
    d = ((x.double()[:, None] - x.double()[None]) ** 2).sum(dim=2)
    dc = ((xc.double()[:, None] - xc.double()[None]) ** 2).sum(dim=2)
    sq_c = (xc * xc).sum(dim=1)
    bound = centring_error(sq_c)[:, None]
    assert bool(((dc - d).abs() <= bound).all())
    assert bool((bound[:, 0] < 1e-3 * distance_error(xc, sq_c, "bfloat16")).all())
    # the offset data's norms shrink by centring, and with them the bfloat16 bound
    if name == "offset":
        assert float(distance_error(xc, sq_c, "bfloat16").max()) < 0.01 * float(distance_error(x, (x * x).sum(dim=1), "bfloat16").max())


def test_a_close_call_within_twice_the_bound_is_reranked_exactly() -> None:
    """The k-th/(k+1)-th candidates of a row 1.5·tol apart in float32 (each float32 distance within `tol` of the
    truth, here in the wrong order) are not certain: the row is re-ranked by exact distances and comes back in the
    right order (a margin of tol instead of 2·tol would keep the wrong neighbour)."""
    from ganeval.metrics.knn import _finish

    x = torch.tensor([[0.0, 0.0], [1.0, 0.0], [10.0**0.5, 0.0], [0.0, 10.1**0.5], [30.0**0.5, 0.0],
                      [100.0, 100.0], [-100.0, 100.0]], dtype=torch.float32)
    tol = torch.full((7,), 1.0, dtype=torch.float64)  # the bound on each float32 squared distance
    cand = torch.tensor([[1, 2, 3, 4]])  # row 0's candidates: true squared distances 1, 10, 10.1, 30
    approx = torch.tensor([[1.0, 10.0 + 0.75, 10.1 - 0.75, 30.0]], dtype=torch.float32)  # 2 and 3 swapped, 1.5 apart
    nbrs, dist = _finish(x, torch.tensor([0]), approx, cand, 2, tol)
    assert nbrs.tolist() == [[1, 2]]
    assert dist[0].tolist() == pytest.approx([1.0, 10.0], rel=1e-6)
