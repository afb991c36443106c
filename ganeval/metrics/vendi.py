"""The Vendi score (Friedman & Dieng 2023): the effective number of distinct samples of a set,
VS_q = exp(H_q(λ)), λ the eigenvalues of K/n for a similarity kernel with k(x, x) = 1, H_q the Rényi entropy of
order q (q = 1: Shannon, −Σ λ log λ over λ > 0). Higher is more diverse (1 ≤ VS ≤ n).

Kernel: cosine similarity of the features (rows L2-normalised; a zero row stays zero), the `vendi_score`
package's `score_dual` default. Its Gram matrix is never formed: the nonzero eigenvalues of X̂X̂ᵀ/n are those of
the D×D matrix X̂ᵀX̂/n (accumulated in float64), so the cost is N·D² + D³, not N³.
In the protocol it scores one set, like the Inception Score: per run, the generated subsample's Vendi score
(the run's real subsample is not used by it).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ganeval.common import ArrayLike, resolve_device
from ganeval.metrics.linalg import eigvalsh, syrk_t
from ganeval.metrics.registry import GramHook, GramTap, Metric, PairWork, one_of, option, real, register_metric
from ganeval.metrics.validation import finite_result, load_features

OPTIONS = (
    option("q", 1.0, (lambda v: real()[0](v) and v > 0, "a finite number > 0"),
           "order of the Rényi entropy (1: Shannon, the paper's default)"),
    option("kernel", "cosine", one_of("cosine"), "similarity kernel: cosine of the feature rows (dual form, N·D²)"),
)
DEFAULTS = {o.name: o.default for o in OPTIONS}


def normalized(x: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit length (scikit-learn's `normalize`: a zero row stays zero)."""
    norm = torch.linalg.vector_norm(x, dim=1, keepdim=True)
    return x / torch.where(norm > 0, norm, torch.ones_like(norm))


def eigenvalues(x: torch.Tensor) -> torch.Tensor:
    """Eigenvalues of X̂ᵀX̂/n (float64): the nonzero eigenvalues of the cosine kernel matrix over n."""
    xn = normalized(x.double())
    return eigvalsh(syrk_t(xn) / x.shape[0])


def score_from_eigenvalues(w: torch.Tensor, q: float) -> float:
    """exp of the order-q Rényi entropy of the positive eigenvalues (the `vendi_score` package's `entropy_q`)."""
    p = w[w > 0]
    if q == 1:
        h = -(p * p.log()).sum()
    else:
        h = (p**q).sum().log() / (1 - q)
    return float(finite_result(h.exp(), "Vendi"))


def vendi(x: ArrayLike, q: float = DEFAULTS["q"], kernel: str = DEFAULTS["kernel"],
          device: str | torch.device | None = None) -> float:
    """The Vendi score of the rows of x (N×D) with the cosine kernel, as `vendi_score.score_dual(x, q)` gives it.

    Args:
        x: The set's features, N×D (one set: Vendi measures diversity, not a distance).
        q: The order of the Rényi entropy (1: Shannon's).
        kernel: The similarity kernel: `"cosine"`.
        device: Where to compute (`"cpu"`, `"cuda"`); default None: the inputs' device (CUDA tensors stay there), else the CPU.

    Returns:
        exp of the entropy of the kernel matrix's eigenvalues / N: the effective number of distinct rows (from 1 to
        min(N, D)); higher is more diverse.

    Examples:
        >>> from ganeval.metrics import vendi
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(500, 8)).astype(np.float32)
        >>> y = (rng.normal(size=(500, 8)) + 0.3).astype(np.float32)
        >>> round(vendi(x), 3)
        7.95
    """
    o = METRIC.resolve({"q": q, "kernel": kernel}, where="")
    xt = load_features(x, "x", resolve_device(device, x), min_rows=1)
    return score_from_eigenvalues(eigenvalues(xt), float(o["q"]))


def _prepare(x: torch.Tensor, o: Mapping[str, Any], hooks: Sequence[GramHook], tap: GramTap | None) -> torch.Tensor:
    return x  # a generated subsample's rows; a real subsample's are never used


def _one(fake: torch.Tensor, q: float) -> float:
    return score_from_eigenvalues(eigenvalues(fake), q)


def _pair(real_x: torch.Tensor, fake: torch.Tensor, o: Mapping[str, Any], rng: np.random.Generator) -> PairWork:
    """One job: the generated subsample's Vendi score; draws nothing from `rng`."""
    return PairWork([partial(_one, fake, float(o["q"]))], lambda results: float(results[0]))


METRIC = register_metric(Metric(
    name="vendi", options=OPTIONS, prepare=_prepare, pair=_pair, label="Vendi", higher_is_better=True,
    memory=lambda n, d, o: (8.0 * d * d, f"the {d}×{d} float64 matrix X̂ᵀX̂/n"),
    same_dim=False,
    doc="Vendi score (diversity) of the generated subsample: exp of the entropy of the cosine kernel's "
        "eigenvalues over n (Friedman & Dieng 2023)",
))
