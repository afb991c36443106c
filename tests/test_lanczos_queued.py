"""The GPU's queued Lanczos (no value read back per step) computes exactly what the step-by-step loop does.

Run here on CPU tensors, where both paths can be compared bit for bit: ordinary graphs, a graph smaller than
the step count (every probe's Krylov space exhausted), duplicated probes (breakdown of some probes only) and
a tolerance that forces second re-orthogonalisation passes (then the queued path declines and the loop runs).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.metrics import slq
from ganeval.metrics.knn import exact_knn
from ganeval.metrics.laplacian import normalized_adjacency
from ganeval.metrics.synthetic import pool3_like


def graph(n: int, d: int = 16, seed: int = 0) -> torch.Tensor:
    return normalized_adjacency(exact_knn(torch.from_numpy(pool3_like(n, d, seed=seed)), 5))


@pytest.mark.parametrize("n,m,nv", [(400, 10, 20), (900, 10, 8), (12, 20, 6), (300, 1, 4), (300, 2, 4)])
def test_queued_lanczos_equals_the_loop(n: int, m: int, nv: int) -> None:
    s = graph(n)
    probes = torch.from_numpy(np.random.default_rng(n).standard_normal((n, nv)))
    got = slq._lanczos_queued(s, probes, m)
    want = slq.lanczos(s, probes, m)  # on CPU: the loop
    assert got is not None
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


def test_breakdown_of_some_probes() -> None:
    """Probes lying in a small invariant subspace break down early; the others go on: the same zeros and values."""
    x = pool3_like(200, 16, seed=3)
    x[:6] += 100.0  # six far-away rows: a clique of 6 nodes, cut off from the rest of the 5-NN graph
    s = normalized_adjacency(exact_knn(torch.from_numpy(x), 5))
    rng = np.random.default_rng(1)
    probes = rng.standard_normal((200, 6))
    probes[:, 3] = 0.0
    probes[0, 3] = 1.0  # supported on the clique: a Krylov space of at most 6 dimensions
    p = torch.from_numpy(probes)
    got, want = slq._lanczos_queued(s, p, 10), slq.lanczos(s, p, 10)
    assert got is not None
    assert float(want[1][3].abs().min()) == 0.0 and float(want[1][0].abs().min()) > 0  # probe 3 alone broke down
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


def test_declines_where_a_second_pass_would_be_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a tolerance no pass can meet, the loop would repeat passes: the queued path returns None."""
    monkeypatch.setattr(slq, "ORTH_TOL", 0.0)
    s = graph(300)
    p = torch.from_numpy(np.random.default_rng(2).standard_normal((300, 4)))
    assert slq._lanczos_queued(s, p, 6) is None
