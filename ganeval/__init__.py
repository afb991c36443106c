"""ganeval: IMD, FID and KID over many random subsamples, with confidence intervals.

`ganeval.metrics` is importable with torch, numpy and scipy alone; the pipeline layer
(`ganeval.evaluate`, `ganeval.score`, Hydra entry points) is loaded lazily so the metrics stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the signatures checkers and editors show; at run time `__getattr__` imports on first use
    from ganeval.app.scoring import score
    from ganeval.features.reference import save_reference
    from ganeval.protocol import evaluate

__version__ = "0.1.0"
__all__ = ["evaluate", "save_reference", "score", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from ganeval.protocol import evaluate

        return evaluate
    if name == "score":
        from ganeval.app.scoring import score

        return score
    if name == "save_reference":
        from ganeval.features.reference import save_reference

        return save_reference
    raise AttributeError(f"module 'ganeval' has no attribute {name!r}")
