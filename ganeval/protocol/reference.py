"""FID/FD of generated sets against a reference's moments alone (a pytorch-fid/clean-fid/EDM2 statistics file):
one value on each full generated set (runs=1), or the subsample protocol over the generated set only (runs > 1).

Run r of seed s draws each generated set's rows from its own copy of `numpy.random.default_rng([s, r])` (as
the protocol does after the real draw, which a moments-only reference has none of). The interval therefore
covers the variation over generated subsamples only: the reference is fixed, its own sampling is not covered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ganeval.protocol.draws import branch, draw_rows, run_generator
from ganeval.protocol.settings import Settings
from ganeval.protocol.task import RowSpec

MOMENTS_ONLY_NOTE = (
    "Against the moments (mu, sigma) of reference {ref}: the reference is fixed, so an interval covers the "
    "variation over subsamples of the generated set only, not over the real data; with runs=1, one value on the "
    "full generated set (no interval), the number pytorch-fid/clean-fid print for the same file."
)


@dataclass
class MomentsTask:
    """Run r -> one FID row per generated set against fixed reference moments (`mu`, `sigma`, float64)."""

    mu: np.ndarray
    sigma: np.ndarray
    fakes: list[tuple[dict[str, Any], Any]]
    settings: Settings
    _ref: Any = field(default=None, repr=False)

    def reference_statistics(self) -> Any:
        """The reference's statistics with its square-root factor, made once and reused by every run."""
        from ganeval.metrics.fid import FidStatistics

        if self._ref is None:
            dev = torch.device(self.settings.device or "cpu")
            self._ref = FidStatistics(torch.as_tensor(self.mu, dtype=torch.float64, device=dev),
                                      torch.as_tensor(self.sigma, dtype=torch.float64, device=dev))
        return self._ref

    def __call__(self, r: int) -> list[dict[str, Any]]:
        from ganeval.metrics.fid import fid_from_statistics, fid_statistics, load

        s = self.settings
        ref = self.reference_statistics()
        dev = ref.mu.device
        rng = run_generator(s.seed, r)
        out: list[dict[str, Any]] = []
        for groups, fake in self.fakes:
            rows = np.asarray(fake) if s.runs == 1 else np.asarray(fake)[draw_rows(len(fake), s.sample_size, branch(rng))]
            x = load(rows, str(groups.get("model", "fake")), dev)
            if x.shape[1] != ref.mu.shape[0]:
                raise ValueError(f"{groups.get('model')}: {x.shape[1]}-d features against {ref.mu.shape[0]}-d "
                                 "reference moments")
            value = fid_from_statistics(ref, fid_statistics(x))
            out.append({"run": r, **groups, "metric": "fid", "value": float(value)})
        return out

    def row_spec(self) -> RowSpec:
        """One FID row per generated set."""
        return RowSpec(tuple(dict(g) for g, _ in self.fakes), ("fid",))
