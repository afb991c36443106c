"""A `fn(n, seed)` callable's pool drawn in chunks: the same pool as today where it fits, documented seeds past
WHOLE_BYTES, offset-aware callables equal to one call, and memory bounded by a chunk and a batch (tracemalloc)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from ganeval.gan import CallableGenerator
from ganeval.gan import chunked
from ganeval.gan.chunked import chunk_seed, plan, rebatch, takes_offset

SHAPE = (3, 32, 32)  # 3072 bytes a uint8 row
ROW = int(np.prod(SHAPE))


def plain(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, *SHAPE), dtype=np.uint8)


def floats_nhwc(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, 8, 8, 3))


def with_offset(n: int, seed: int, offset: int = 0) -> np.ndarray:
    """Row i of the pool depends on (seed, i) only, so any slice can be drawn alone."""
    return np.stack([plain(1, seed * 1_000_003 + i)[0] for i in range(offset, offset + n)]) if n else \
        np.zeros((0, *SHAPE), np.uint8)


def bad_offset(n: int, seed: int, offset: int = 0) -> np.ndarray:
    return plain(n, seed + offset)  # row o of fn(m, s, offset=o) is not row o of fn(N, s)


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunking past 64 rows, chunks of 10 rows (3072-byte rows): the rule of 2 GiB / 256 MiB, scaled down."""
    monkeypatch.setattr(chunked, "WHOLE_BYTES", 64 * ROW)
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 10 * ROW + 5)


def test_plan_rule() -> None:
    assert plan(100, 7, ROW, False) == [chunked.Call(100, 7)]  # fits: one call, as before
    big = chunked.WHOLE_BYTES // ROW + 1
    calls = plan(big, 7, ROW, False)
    rows = chunked.CHUNK_BYTES // ROW
    assert [c.rows for c in calls] == [rows] * (big // rows) + ([big % rows] if big % rows else [])
    assert [c.seed for c in calls] == [int(np.random.SeedSequence([7, k]).generate_state(1)[0])
                                       for k in range(len(calls))]
    assert all(c.offset is None for c in calls)
    off = plan(25, 3, chunked.CHUNK_BYTES // 10, True)
    assert [(c.rows, c.seed, c.offset) for c in off] == [(10, 3, 0), (10, 3, 10), (5, 3, 20)]
    assert takes_offset(with_offset) and not takes_offset(plain) and not takes_offset(print)


def test_rebatch_equals_slicing_the_whole() -> None:
    x = np.arange(53)
    for sizes in ([53], [10, 10, 10, 10, 10, 3], [1] * 53, [7, 20, 26]):
        chunks = np.split(x, np.cumsum(sizes)[:-1])
        for bs in (1, 4, 10, 53, 60):
            got = list(rebatch(iter(chunks), bs))
            want = [x[i : i + bs] for i in range(0, 53, bs)]
            assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want))


def test_pool_that_fits_is_todays_single_call(small_budget: None) -> None:
    g = CallableGenerator(plain)
    assert np.array_equal(g.sample(64, seed=5), plain(64, 5))  # 64 rows = WHOLE_BYTES: whole
    batches = list(g.sample_batches(64, seed=5, batch_size=25))
    assert [len(b) for b in batches] == [25, 25, 14] and np.array_equal(np.concatenate(batches), plain(64, 5))


def test_large_plain_pool_is_drawn_with_chunk_seeds(small_budget: None) -> None:
    g = CallableGenerator(plain)
    want = np.concatenate([plain(10, chunk_seed(5, k)) for k in range(6)] + [plain(5, chunk_seed(5, 6))])
    got = g.sample(65, seed=5)
    assert np.array_equal(got, want) and not np.array_equal(got, plain(65, 5))
    assert np.array_equal(g.sample(65, seed=5), got)  # same seed, same pool
    for bs in (1, 7, 30, 100):
        batches = list(g.sample_batches(65, seed=5, batch_size=bs))
        assert [len(b) for b in batches] == [min(bs, 65 - i) for i in range(0, 65, bs)]
        assert np.array_equal(np.concatenate(batches), want)
    f = CallableGenerator(floats_nhwc)  # converted chunk by chunk: as the whole would be
    row = 8 * 8 * 3 * 8  # float64 rows: chunks by the callable's own output size
    n = chunked.WHOLE_BYTES // row + 3
    calls = plan(n, 2, row, False)
    want_f = np.concatenate([floats_nhwc(c.rows, c.seed) for c in calls])
    assert np.array_equal(f.sample(n, seed=2), (want_f.transpose(0, 3, 1, 2) * 255).round().astype(np.uint8))


def test_offset_callable_chunks_equal_one_call(small_budget: None) -> None:
    g = CallableGenerator(with_offset)
    g.validate()
    for n in (3, 64, 65, 101):
        assert np.array_equal(g.sample(n, seed=4), with_offset(n, 4))
        assert np.array_equal(np.concatenate(list(g.sample_batches(n, seed=4, batch_size=9))), with_offset(n, 4))
    with pytest.raises(ValueError, match=r"generator 'bad_offset'.*fn\(1, seed, offset=2\) differs from row 2"):
        CallableGenerator(bad_offset).validate()


def test_streaming_holds_a_chunk_not_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """4000 rows of 48 KiB (188 MiB as one array) with 1 MiB chunks: the streamed batches peak under 16 MiB."""
    monkeypatch.setattr(chunked, "WHOLE_BYTES", 4 << 20)
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 1 << 20)

    def big(n: int, seed: int) -> np.ndarray:
        return np.random.default_rng(seed).integers(0, 256, (n, 3, 128, 128), dtype=np.uint8)

    g = CallableGenerator(big)
    n, pool = 4000, 4000 * 3 * 128 * 128
    tracemalloc.start()
    try:
        rows = 0
        for b in g.sample_batches(n, seed=0, batch_size=50):
            rows += len(b)
            assert b.dtype == np.uint8 and b.shape[1:] == (3, 128, 128)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rows == n
    assert peak < 16 << 20, f"peak {peak / 2**20:.1f} MiB while streaming a {pool / 2**20:.0f} MiB pool"
    tracemalloc.start()  # the measurement can fail: the whole pool is seen at its size
    try:
        g.sample(n, seed=0)
        _, whole_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert whole_peak >= pool


def test_streamed_features_equal_the_whole_pool(small_budget: None) -> None:
    from ganeval.features import extract_with_info

    g = CallableGenerator(plain)
    want, _ = extract_with_info(g.sample(65, seed=1), "pixels", batch_size=8, progress=False)
    got, _ = extract_with_info(g.sample_batches(65, seed=1, batch_size=8), "pixels", batch_size=8, progress=False)
    assert np.array_equal(got, want)


@pytest.mark.slow  # over 30 s on the 2-core development machine (issue #56)
def test_app_streams_a_large_pool_into_the_extractor(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """`ganeval experiment=benchmark` with an offset-aware image callable: past WHOLE_BYTES its pool is never one
    array (generated_pool is not called) and the results and feature-cache keys equal those of the whole pool."""
    import pandas as pd

    from ganeval.app import generators as app_generators
    from apphelp import run_inprocess

    np.save(tmp_path / "real.npy", plain(300, 99))

    def run(tag: str) -> pd.DataFrame:
        return run_inprocess(["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}",
                              "generator=callable", "generator.function=test_callable_chunks:with_offset",
                              "features=pixels", "sample_size=100", "runs=3", "n_generated=200",
                              f"results_dir={tmp_path / tag}", f"cache_dir={tmp_path / ('cache-' + tag)}",
                              "metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=50",
                              "progress=false", "plots=false"])

    whole = run("whole")
    monkeypatch.setattr(chunked, "WHOLE_BYTES", 64 * ROW)
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 10 * ROW + 5)

    def no_pool(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the pool was drawn whole")

    monkeypatch.setattr(app_generators, "generated_pool", no_pool)
    streamed = run("streamed")
    pd.testing.assert_frame_equal(whole, streamed)
    assert {p.name for p in (tmp_path / "cache-whole").glob("*.npz")} == \
        {p.name for p in (tmp_path / "cache-streamed").glob("*.npz")}
