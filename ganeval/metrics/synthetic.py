"""Synthetic feature sets for benchmarks and tests: arrays shaped like Inception pool3 features.

Real pool3 features are non-negative (average-pooled ReLU outputs), strongly correlated across
dimensions (a few dozen directions carry most of the variance) and have a per-dimension offset.
`pool3_like` imitates that without any network or download, so benchmarks and kNN-recall checks
run on data with the same shape, sign and correlation structure as the real thing.
"""

from __future__ import annotations

import numpy as np
import torch

_CHUNK = 4096  # rows drawn per independent random stream (fixed: keeps outputs reproducible)


def _structure(d: int, rank: int, distribution_seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distribution's fixed parts: offsets (d,), loadings (rank×d), noise scales (d,)."""
    rng = np.random.default_rng([distribution_seed, 0x9E3779B9])
    offset = rng.normal(0.1, 0.25, size=d)
    # Factor j weighs 1/sqrt(1 + j/4): a decaying spectrum, a few strong directions. Scaled so the
    # factors give each dimension a standard deviation of about 0.3.
    spectrum = 1.0 / np.sqrt(1.0 + np.arange(rank) / 4.0)
    spectrum *= 0.3 / np.sqrt(np.sum(spectrum**2))
    loadings = rng.standard_normal((rank, d)) * spectrum[:, None]
    noise = rng.uniform(0.05, 0.15, size=d)
    return offset.astype(np.float32), loadings.astype(np.float32), noise.astype(np.float32)


def pool3_like(
    n: int,
    d: int = 2048,
    seed: int = 0,
    *,
    distribution_seed: int = 0,
    rank: int = 64,
) -> np.ndarray:
    """`n`×`d` float32 features shaped like Inception pool3: relu(offset + loadings·z + noise).

    Built as x = max(0, b + Wᵀz + diag(s)·e) with z ~ N(0, I_rank), e ~ N(0, I_d): a Gaussian with
    low-rank-plus-diagonal covariance WᵀW + diag(s²), clipped at zero (about 40% of entries are 0,
    as after a ReLU). b ~ N(0.1, 0.25²) per dimension; W has Gaussian entries, row j scaled by
    1/sqrt(1 + j/4) (j = 0..rank-1) and all rows together so each dimension gets std ≈ 0.3 from
    the factors; s ~ U(0.05, 0.15), so the factors carry ~90% of the variance before the clip (the
    top 64 principal components keep ~78% after it, at d=2048). `distribution_seed` fixes b, W, s
    (the "model"); `seed` draws the samples, so two seeds give two samples of one distribution and
    two distribution seeds give two different distributions. Rows are drawn in fixed chunks of 4096
    from their own streams, so the first m rows do not depend on `n`.
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if int(rank) != rank or rank < 1:
        raise ValueError(f"rank must be a positive integer, got {rank!r}")
    n, d, rank = int(n), int(d), int(rank)
    offset, loadings, noise = _structure(d, rank, distribution_seed)
    out = np.empty((n, d), dtype=np.float32)
    for c, start in enumerate(range(0, n, _CHUNK)):
        stop = min(start + _CHUNK, n)
        rng = np.random.default_rng([seed, distribution_seed, c])
        z = rng.standard_normal((_CHUNK, rank), dtype=np.float32)
        e = rng.standard_normal((_CHUNK, d), dtype=np.float32)[: stop - start]
        # the whole chunk's product, then its rows: BLAS rounds a product of another height differently
        block = (z @ loadings)[: stop - start]
        block += offset
        block += e * noise
        np.maximum(block, 0.0, out=block)
        out[start:stop] = block
    return out


def pool3_like_on(device: str | torch.device, n: int, d: int = 2048, seed: int = 0, *, distribution_seed: int = 0,
                  rank: int = 64, chunk: int = 65536) -> torch.Tensor:
    """`pool3_like`'s distribution (the same b, W, s for a `distribution_seed`) sampled by torch on `device`:
    other rows than `pool3_like` draws, made in seconds where numpy would take minutes (a 1M×2048 set).
    For timing large sets; numbers that are compared across runs use `pool3_like`."""
    offset, loadings, noise = (torch.from_numpy(a).to(device) for a in _structure(d, rank, distribution_seed))
    g = torch.Generator(device=device).manual_seed(int(seed) * 1000003 + int(distribution_seed))
    out = torch.empty((int(n), d), dtype=torch.float32, device=device)
    for start in range(0, int(n), chunk):
        m = min(chunk, int(n) - start)
        z = torch.randn((m, rank), generator=g, device=device)
        block = z @ loadings + offset + torch.randn((m, d), generator=g, device=device) * noise
        out[start : start + m] = block.clamp_(min=0.0)
    return out
