"""The heat-trace accuracy check's total error (issue #26): the Hutchinson std and the estimate's error against a
direct computation (sklearn k-NN graph, scipy's normalised Laplacian, a dense eigendecomposition)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import laplacian
from sklearn.neighbors import NearestNeighbors

from ganeval.protocol import Settings
from ganeval.protocol.draws import draw_rows, run_generator
from ganeval.studies.heat_traces import accuracy_check


def test_total_error_columns_equal_a_direct_computation() -> None:
    x = np.random.default_rng(5).standard_normal((600, 6)).astype(np.float32)
    n, nv, k = 300, 40, 5
    t = np.array([1.0, 10.0, 100.0])
    settings = Settings(runs=1, sample_size=n, metrics={"imd": {"normalization": "er", "nv": nv}}, seed=0,
                        confidence=0.99, device="cpu")
    acc = accuracy_check({"x": x}, t, settings, [40])
    # the same run-0 subsample and probes, drawn as the check draws them
    rng = run_generator(0, 0)
    sub = x[draw_rows(len(x), n, rng)].astype(np.float64)
    probes = rng.standard_normal((n, nv))
    probes /= np.linalg.norm(probes, axis=0, keepdims=True)
    idx = NearestNeighbors(n_neighbors=k + 1).fit(sub).kneighbors(sub, return_distance=False)[:, 1:]
    a = sp.coo_matrix((np.ones(n * k), (np.repeat(np.arange(n), k), idx.ravel())), shape=(n, n)).toarray()
    a = np.maximum(a, a.T)  # union
    lam, u = np.linalg.eigh(laplacian(a, normed=True))
    truth = np.exp(-t[:, None] * lam[None, :]).sum(axis=1)
    c2 = (u.T @ probes) ** 2
    est = n * (c2.T @ np.exp(-lam[:, None] * t[None, :]))  # nv × T single-probe estimates
    rel = est / truth[None, :] - 1.0
    np.testing.assert_allclose(acc.hutchinson_rel_std, rel.std(axis=0, ddof=1) / np.sqrt(nv), rtol=1e-8)
    # with 40 Lanczos steps the quadrature is exact to rounding: the estimate's error is the Hutchinson error
    np.testing.assert_allclose(acc.estimate_rel_error, est.mean(axis=0) / truth - 1.0, atol=1e-9)
    assert (acc.hutchinson_rel_std > 0).all()
