"""CPU work split over threads, one core each: order kept, settings restored, numbers unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.metrics import fid, imd, kid, parallel
from ganeval.metrics.streams import metric_draws
from ganeval.metrics.suite import prepare_set, score_pair


def test_pmap_keeps_order_runs_single_threaded_and_restores_settings() -> None:
    before = torch.get_num_threads()
    got = parallel.pmap(lambda i: (i, torch.get_num_threads(), parallel.cpu_workers()), range(6), workers=2)
    assert got == [(i, 1, 1) for i in range(6)]  # one thread each, and nested maps run sequentially
    assert torch.get_num_threads() == before


def test_single_threaded_nests_and_restores_after_the_last_exit() -> None:
    before = torch.get_num_threads()
    with parallel.single_threaded():
        with parallel.single_threaded():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_errors_in_a_worker_reach_the_caller() -> None:
    def boom(i: int) -> int:
        if i == 3:
            raise ValueError("job 3 failed")
        return i

    with pytest.raises(ValueError, match="job 3 failed"):
        parallel.pmap(boom, range(5), workers=2)


def test_numbers_do_not_depend_on_the_worker_count(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    x = np.abs(rng.standard_normal((700, 24))).astype(np.float32)
    y = (np.abs(rng.standard_normal((650, 24))) * 1.2).astype(np.float32)
    metrics = {"imd": {"nv": 20}, "fid": {}, "kid": {"subsets": 40, "subset_size": 100}}

    def everything() -> tuple:
        run = score_pair(prepare_set(x, metrics), prepare_set(y, metrics), metric_draws(1), metrics)
        return imd(x, y, nv=20), kid(x, y, 40, 100), fid(x, y), tuple(run.values())

    results = []
    for cores in (1, 3):
        monkeypatch.setattr(parallel, "usable_cores", lambda cores=cores: cores)
        results.append(everything())
    assert results[0] == results[1]
