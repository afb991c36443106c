"""Memory before work: the bytes a metric must hold at once, from the rows and the feature dimension alone, against
the memory the machine has, so that a run that cannot fit is refused in one line instead of dying in the
allocator (or by the OOM killer) after the features were extracted.

A metric declares `memory(n, d, options) -> (bytes, what)` in its registry entry: the largest arrays it holds at
once when scoring a pair of n-row sets of d-dimensional features, a lower bound of its peak (FID: the two d×d
float64 covariances). Work done in bounded strips (k-NN searches, kernel sums) declares nothing. A refusal is
therefore never a false alarm: what is counted must be held.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import torch

GIB = float(1 << 30)
WAY_OUT = ("score features of fewer dimensions (images at a smaller size for pixels, e.g. "
           "get_extractor('pixels', max_size=32), or a network's features) or fewer rows")


def covariances(n: int, d: int, options: Mapping[str, Any]) -> tuple[float, str]:
    """FID-like metrics: two d×d float64 covariances, and BᵀΣ₂B of side min(n, d) for the square root's trace."""
    return 8.0 * (2 * d * d + min(n, d) ** 2), f"two {d}×{d} float64 covariances"


def features_bytes(n: int, d: int) -> float:
    """The two sets' rows in float32, the narrowest working precision: held by every metric."""
    return 2 * 4.0 * n * d


def available_bytes(device: str | torch.device | None = None) -> int | None:
    """Memory that can be allocated now: the GPU's free memory for a CUDA device, else the host's MemAvailable
    (/proc/meminfo; elsewhere free physical pages from os.sysconf); None where neither can be read."""
    dev = torch.device(device) if device is not None else torch.device("cpu")
    if dev.type == "cuda":
        return int(torch.cuda.mem_get_info(dev)[0]) if torch.cuda.is_available() else None
    if dev.type != "cpu":
        return None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def needs(metrics: Any, n: int, d: int) -> list[tuple[str, float, str]]:
    """(label, bytes, what) of each chosen metric (`registry.Metrics`) that declares its memory, largest first."""
    out = [(m.label, *m.memory(n, d, o)) for m, o in metrics.ordered() if m.memory is not None]
    return sorted(out, key=lambda t: -t[1])


def check_memory(metrics: Any, n: int, d: int, device: str | torch.device | None = None, parallel: int = 1,
                 way_out: str = WAY_OUT) -> None:
    """Raise ValueError, in one line naming the metric, what it holds and `way_out`, when scoring pairs of n-row
    sets of d features with `metrics` (`parallel` runs at once) needs more than the memory available."""
    avail = available_bytes(device)
    if avail is None:
        return
    each = needs(metrics, n, d)
    total = parallel * (features_bytes(n, d) + sum(b for _, b, _ in each))
    if total <= avail:
        return
    where = "the GPU" if torch.device(device or "cpu").type == "cuda" else "this machine"
    if each and each[0][1] * parallel > total / 2:
        label, b, what = each[0]
        cause = f"{label} needs {b / GIB:.1f} GiB at once for {n} rows of {d}-d features ({what})"
    else:
        cause = f"scoring {n} rows of {d}-d features needs {total / GIB:.1f} GiB at once"
    if parallel > 1:
        cause += f", {parallel} runs in parallel {total / GIB:.1f} GiB"
    raise ValueError(f"{cause}, but {where} has {avail / GIB:.1f} GiB available: {way_out}")
