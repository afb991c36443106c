"""Which precision the candidate Gram products of an exact k-NN search use, and the error bounds that keep the
graph exact whatever it is (`ganeval.metrics.knn`).

`precision="bfloat16"` (CPU or GPU) or `"tf32"` (CUDA) forms the candidate Gram products of the centred rows
in reduced precision; a bound on their error from the row norms and the precision used widens the certainty test,
and the rows it cannot certify are searched again in float32: the graph is the same as the float32
search's. The bound is relative to the row norms (|x_i||x_j|·2u, u = 2⁻⁸ for bfloat16, whose CPU products
also round their outputs to bfloat16), hence the centring: on 3000 non-negative 512-d rows it cut the rows
searched again from 2618 to 66 (pool3-like: 85 to 37), though well-separated clusters, whose norms are their
offsets, are still searched again in full. Without bfloat16 units (an AMD EPYC) the search takes 5–8× longer
than float32, so float32 stays the default; reduced precision is opt-in, and `"auto"` picks it only where a
start-up product measures it at least twice as fast as float32 (`measure_precision`).
"""

from __future__ import annotations

import torch

from ganeval.metrics.knn_candidates import GramHook

PRECISIONS = ("float32", "bfloat16", "tf32", "auto")
# unit roundoff of each product precision: inputs rounded to it (and bfloat16 outputs too)
ROUNDOFF = {"bfloat16": 2.0**-8, "tf32": 2.0**-11}
PROBE_SHAPE = (256, 512, 256)  # the start-up product: small, since bfloat16 without matrix units is ~400× slower
CUDA_PROBE_SHAPE = (4096, 2048, 4096)  # on a GPU the small one would time the launch, not the product
AUTO_SPEEDUP = 2.0  # a reduced precision is considered only this much faster than float32
AUTO_SAMPLE_ROWS = 256  # rows whose certificate `auto` tries on the data at hand before it commits
AUTO_MIN_ROWS = 20000  # below this a search is cheap (and launch-bound on a GPU): auto keeps float32
AUTO_GAIN = 0.8  # reduced precision is taken where its expected cost is at most this share of float32's
_measured: dict[str, str] = {}
_ratios: dict[str, float] = {}  # device -> product time of the chosen precision / float32's



def _product_seconds(a: torch.Tensor, b: torch.Tensor, repeats: int) -> float:
    """The fastest of `repeats` timed products a @ b (after one untimed), synchronised on CUDA."""
    import time

    def once() -> float:
        if a.device.type == "cuda":
            torch.cuda.synchronize(a.device)
        t = time.perf_counter()
        a @ b
        if a.device.type == "cuda":
            torch.cuda.synchronize(a.device)
        return time.perf_counter() - t

    once()
    return min(once() for _ in range(repeats))


def measure_precision(device: torch.device) -> str:
    """The candidate-product precision `auto` uses on `device`, measured once per process: bfloat16 (or TF32 on
    CUDA) where its product of the probe shape runs at least AUTO_SPEEDUP× faster than float32's (matrix units:
    AMX, AVX512-BF16, tensor cores), else float32. Decided by timing, not by the processor's name."""
    key = str(device)
    if key not in _measured:
        m, d, n = CUDA_PROBE_SHAPE if device.type == "cuda" else PROBE_SHAPE
        g = torch.Generator().manual_seed(0)
        a, b = torch.randn(m, d, generator=g).to(device), torch.randn(d, n, generator=g).to(device)
        times = {"float32": _product_seconds(a, b, 5)}
        if device.type == "cuda":
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                times["tf32"] = _product_seconds(a, b, 5)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
        lo_a, lo_b = a.bfloat16(), b.bfloat16()
        times["bfloat16"] = _product_seconds(lo_a, lo_b, 1)
        if times["bfloat16"] * AUTO_SPEEDUP <= times["float32"]:  # worth a closer look
            times["bfloat16"] = _product_seconds(lo_a, lo_b, 5)
        best = min(times, key=times.get)  # type: ignore[arg-type]
        _measured[key] = best if times[best] * AUTO_SPEEDUP <= times["float32"] else "float32"
        _ratios[key] = times[_measured[key]] / times["float32"]
    return _measured[key]


def reduced_product(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    """a @ b.T in the reduced precision (inputs already rounded for bfloat16), as float32."""
    if precision == "tf32":
        old = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return a @ b.T
        finally:
            torch.backends.cuda.matmul.allow_tf32 = old
    return (a @ b.T).float()


def undecided_share(x: torch.Tensor, k: int, precision: str, rows: int = AUTO_SAMPLE_ROWS) -> float:
    """The share of rows the reduced-precision certificate (`_refine`'s test) leaves undecided, tried on `rows`
    evenly spaced rows against the whole set: those would be searched again in float32."""
    n = x.shape[0]
    kk = min(n - 1, k + max(4 * k, 16))
    pick = torch.linspace(0, n - 1, min(rows, n), device=x.device).round().long().unique()
    xc = centred(x)
    sq_c = (xc * xc).sum(dim=1)
    lo = xc.bfloat16() if precision == "bfloat16" else xc
    keys = reduced_product(lo[pick], lo, precision).mul_(-2.0).add_(sq_c[None, :])
    keys[torch.arange(pick.shape[0], device=x.device), pick] = float("inf")
    coarse, cand = torch.topk(keys, kk, dim=1, largest=False)
    coarse = coarse + sq_c[pick, None]
    err = (distance_error(xc, sq_c, precision) + centring_error(sq_c))[pick]
    sq = (x * x).sum(dim=1)
    d32 = sq[pick, None] + sq[cand] - 2 * torch.bmm(x[pick, None, :], x[cand].transpose(1, 2))[:, 0]
    d32 = torch.sort(d32, dim=1).values.double()
    tol = distance_error(x, sq, "float32")[pick]
    kth = d32[:, k - 1]
    certain = (kth + tol < coarse.amax(dim=1).double() - err) & (d32[:, k] - kth > 2 * tol)
    return 1.0 - float(certain.double().mean())


def auto_precision(x: torch.Tensor, k: int) -> str:
    """`auto`'s choice for this search: a reduced precision only where the device runs its products at least
    AUTO_SPEEDUP× faster (`measure_precision`) and, on this data, the rows its certificate leaves undecided
    (`undecided_share`, each searched again at about twice a symmetric search's per-row cost) keep the whole
    search at most AUTO_GAIN of float32's. Small sets stay float32."""
    choice = measure_precision(x.device)
    if choice == "float32" or x.dtype != torch.float32 or x.shape[0] < AUTO_MIN_ROWS:
        return "float32"
    again = undecided_share(x, k, choice)
    return choice if _ratios[str(x.device)] + 2 * again <= AUTO_GAIN else "float32"


def resolve_precision(precision: str, device: torch.device, gram_hook: GramHook | None) -> str:
    """The product precision to use (`auto` stays `auto` without a hook: `auto_precision` decides on the data); reduced precision refused
    where the Gram strips are shared (KID reuses them, so they must be float32) or unsupported (tf32 off CUDA)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "auto":  # decided per search on its data (`auto_precision`)
        return "float32" if gram_hook is not None else "auto"
    if precision != "float32" and gram_hook is not None:
        raise ValueError(f"precision={precision!r} cannot share its Gram strips (gram_hook): they are not float32")
    if precision == "tf32" and device.type != "cuda":
        raise ValueError("precision='tf32' needs a CUDA device; use 'bfloat16' or 'float32' on CPU")
    return precision


def distance_error(x: torch.Tensor, sq: torch.Tensor, precision: str) -> torch.Tensor:
    """Per row i, a bound (float64) on |computed − true| squared distance to any row j.

    float32: a few ulps of (|x_i|² + max|x_j|²) per √D terms (the long-standing test). Reduced precision:
    inputs rounded with unit roundoff u (|x̃ − x| ≤ u|x|), so |x̃_i·x̃_j − x_i·x_j| ≤ (2u + u²)|x_i||x_j|;
    the float32 accumulation adds at most γ_D|x̃_i||x̃_j| (γ_D = D·u₃₂/(1 − D·u₃₂)) and a bfloat16 output
    u|x̃_i·x̃_j|; the distance |x_i|² + |x_j|² − 2g doubles the product's error and adds the norms' own γ_D.
    """
    d = x.shape[1]
    sq64 = sq.double()
    eps32 = torch.finfo(torch.float32).eps
    if precision == "float32":
        eps = torch.finfo(x.dtype).eps
        return 4.0 * eps * d**0.5 * (sq64 + sq64.max())
    u = ROUNDOFF[precision]
    u32 = eps32 / 2
    gamma = d * u32 / (1 - d * u32)
    out_u = u if precision == "bfloat16" else u32
    norm, top = sq64.sqrt(), sq64.max().sqrt()
    grown = (1 + u) ** 2
    product = (2 * u + u * u + grown * (gamma + out_u * (1 + gamma))) * norm * top
    return 2 * product + gamma * (sq64 + sq64.max()) + 4 * eps32 * (sq64 + sq64.max())


def centred(x: torch.Tensor) -> torch.Tensor:
    """x less its column means (taken in float64, rounded to x's dtype): the same distances, smaller norms."""
    return x - x.mean(dim=0, dtype=torch.float64).to(x.dtype)


def centring_error(sq_c: torch.Tensor) -> torch.Tensor:
    """Per row i, a bound (float64) on how far the centring's rounding moves a squared distance to any row j.

    Subtracting any fixed vector keeps distances exactly; rounding c = x − μ moves each row by at most u₃₂|c|,
    so a distance by η ≤ u₃₂(|c_i| + |c_j|) and its square by η(2d + η) ≤ 3u₃₂(|c_i| + max|c_j|)² (d ≤ |c_i| + |c_j|).
    """
    u32 = torch.finfo(torch.float32).eps / 2
    norm = sq_c.double().sqrt()
    return 3 * u32 * (1 + 4 * u32) * (norm + norm.max()) ** 2
