"""(issue #56) The protocol's GPU branches run on a CPU with a fake device: `ganeval.common.upload` and
`IndexUploader` replaced by stand-ins that keep CPU tensors and record what they were asked to move, so the
branches the `gpu` tests alone reached are checked here (each test names the bug it kills)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import ganeval.common
from ganeval.protocol.draws import DeviceRows

POOL = np.arange(40, dtype=np.float32).reshape(20, 2)
RUNS = [np.array([0, 3, 5]), np.array([19, 2, 1])]


class FakeDevice:
    """Stand-ins for the uploads to a GPU, on the CPU: what was uploaded (rows) and which index vectors."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fits: int = 1 << 30) -> None:
        self.uploads: list[int] = []
        self.indexers: list[str] = []
        self.indices: list[int] = []
        fake = self

        def upload(a: Any, device: Any) -> torch.Tensor:
            if len(a) > fits:
                raise torch.cuda.OutOfMemoryError("fake: the pool does not fit")
            fake.uploads.append(len(a))
            return a.clone() if isinstance(a, torch.Tensor) else torch.from_numpy(np.array(a))

        class IndexUploader:
            def __init__(self, device: Any) -> None:
                fake.indexers.append(str(device))

            def __call__(self, idx: np.ndarray) -> torch.Tensor:
                fake.indices.append(len(idx))
                return torch.from_numpy(np.ascontiguousarray(idx, dtype=np.int64))

        monkeypatch.setattr(ganeval.common, "upload", upload)
        monkeypatch.setattr(ganeval.common, "IndexUploader", IndexUploader)


def test_a_gpu_pool_is_uploaded_once_and_each_run_moves_its_index_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bugs: the per-subsample copy taken for a pool that was uploaded (`resident is None` flipped: every run copies
    its rows again), or the index uploader made anew (or never) per run."""
    fake = FakeDevice(monkeypatch)
    rows = DeviceRows("cuda:0")
    for idx in RUNS:
        got = rows(POOL, idx)
        assert isinstance(got, torch.Tensor) and np.array_equal(got.numpy(), POOL[idx])
    assert fake.uploads == [20]  # the pool once
    assert fake.indexers == ["cpu"] and fake.indices == [3, 3]  # one uploader (on the pool's device), per run an index


def test_a_gpu_pool_that_does_not_fit_is_copied_per_subsample(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: the out-of-memory fallback not taken (the resident path tried on a pool that failed to upload)."""
    fake = FakeDevice(monkeypatch, fits=10)
    rows = DeviceRows("cuda:0")
    for idx in RUNS:
        assert np.array_equal(rows(POOL, idx).numpy(), POOL[idx])
        assert np.array_equal(rows(torch.from_numpy(POOL), idx).numpy(), POOL[idx])  # a tensor pool alike
    assert fake.uploads == [3, 3, 3, 3] and fake.indexers == []  # only the drawn rows, each time


@pytest.mark.parametrize("imd, queued", [({}, "cuda:0"), ({"knn_precision": "bfloat16"}, "cpu"), (None, "cuda:0")])
def test_statistics_stages_are_queued_on_the_device_unless_a_reduced_precision_search_runs(
        monkeypatch: pytest.MonkeyPatch, imd: dict | None, queued: str) -> None:
    """Bug: `knn_precision == "float32"` flipped: the sets' statistics stages queued on the GPU's streams while
    IMD's bfloat16 k-NN search turns TF32 on for every float32 product there (or kept off the GPU without one).
    The run's values are those of the CPU run: the fake device moves nothing."""
    import copy

    import ganeval.metrics.parallel
    import ganeval.metrics.suite
    from ganeval.protocol import Settings
    from ganeval.protocol.task import Block, MetricTask

    FakeDevice(monkeypatch)
    queued_on: list[str] = []
    real_map, prepare, score = (ganeval.metrics.parallel.stream_map, ganeval.metrics.suite.prepare_set,
                                ganeval.metrics.suite.score_pair)

    def stream_map(fn: Any, items: Any, device: Any) -> Any:
        queued_on.append(str(device))
        return real_map(fn, items, torch.device("cpu"))

    monkeypatch.setattr(ganeval.metrics.parallel, "stream_map", stream_map)
    monkeypatch.setattr(ganeval.metrics.suite, "prepare_set", lambda x, m, device, info=None: prepare(x, m, "cpu", info))
    monkeypatch.setattr(ganeval.metrics.suite, "score_pair", lambda a, b, d, m, device: score(a, b, d, m, "cpu"))
    rng = np.random.default_rng(0)
    real, fake = rng.normal(size=(120, 4)).astype(np.float32), rng.normal(size=(120, 4)).astype(np.float32)
    metrics = {"fid": {}} if imd is None else {"imd": {"nv": 4, **imd}, "fid": {}}
    settings = Settings(runs=1, sample_size=60, metrics=metrics, device="cpu", progress=False)
    on_cpu = MetricTask([Block(real, [({"model": "g"}, fake)])], settings)(0)
    assert queued_on == ["cpu"]
    queued_on.clear()
    gpu = copy.copy(settings)
    object.__setattr__(gpu, "device", "cuda:0")  # as Settings resolves it on a machine with CUDA
    on_gpu = MetricTask([Block(real, [({"model": "g"}, fake)])], gpu)(0)
    assert queued_on == [queued]
    assert on_gpu == on_cpu
