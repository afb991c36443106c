"""The interpretability figure: normalised heat traces of several datasets over t, with bands over runs.

Run r subsamples `sample_size` rows of each dataset's features with `numpy.random.default_rng([seed, r])`
and estimates its heat trace (SLQ, probes from the same generator) on a log grid of t.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ganeval.experiments import pipeline
from ganeval.protocol import RowSpec, Settings, as_array, run_loop, share
from ganeval.protocol.api import unique_names
from ganeval.protocol.draws import draw_rows, run_generator
from ganeval.results import t_interval


@dataclass
class HeatTraceTask:
    """Callable run r -> rows (run, data, t, metric='heat_trace', value) for every dataset."""

    sets: dict[str, Any]
    t: np.ndarray
    settings: Settings

    def __call__(self, r: int) -> list[dict[str, Any]]:
        from ganeval.metrics import heat_trace

        s = self.settings
        rows: list[dict[str, Any]] = []
        for name, feats in self.sets.items():
            x = as_array(feats)
            rng = run_generator(s.seed, r)
            sub = np.asarray(x[draw_rows(len(x), s.sample_size, rng)])
            h = heat_trace(sub, t=self.t, seed=rng, device=s.device, **s.metrics["imd"])
            rows += [{"run": r, "data": name, "t": float(t), "metric": "heat_trace", "value": float(v)}
                     for t, v in zip(self.t, h)]
        return rows

    def row_spec(self) -> RowSpec:
        """One row per dataset and t."""
        return RowSpec(tuple({"data": name, "t": float(t)} for name in self.sets for t in self.t), ("heat_trace",))

    def shared(self, tmpdir: str) -> "HeatTraceTask":
        """A copy whose arrays are memory-mapped `.npy` files under `tmpdir` (for worker processes)."""
        sets = {name: share(a, os.path.join(tmpdir, f"h{i}.npy")) for i, (name, a) in enumerate(self.sets.items())}
        return HeatTraceTask(sets, self.t, self.settings)


def t_grid(cfg: Any) -> np.ndarray:
    """`n_t` log-spaced temperatures on [t_min, t_max]."""
    lo, hi, n = float(cfg.t_min), float(cfg.t_max), int(cfg.n_t)
    if not (0 < lo < hi) or n < 2:
        raise ValueError(f"need 0 < t_min < t_max and n_t ≥ 2, got t_min={lo}, t_max={hi}, n_t={n}")
    return np.logspace(np.log10(lo), np.log10(hi), n)


def summarize_traces(rows: pd.DataFrame, confidence: float, sample_size: int) -> pd.DataFrame:
    """Per dataset and t: mean, std and Student-t interval of the trace over runs."""
    out = []
    for (name, t), g in rows.groupby(["data", "t"], sort=False):
        out.append({"data": name, "t": t, "metric": "heat_trace", **t_interval(g["value"].to_numpy(), confidence),
                    "sample_size": sample_size, "confidence": confidence})
    return pd.DataFrame(out)


def run(ctx: pipeline.Context) -> pd.DataFrame:
    """Extract each dataset's features, estimate its heat traces over runs, write summary and heat_traces.png."""
    from ganeval.data.images import to_rgb

    cfg, settings = ctx.cfg, ctx.settings
    if "imd" not in settings.metrics:
        raise ValueError("heat_traces needs metrics.imd (its k, m, nv, normalization, knn options)")
    ts = t_grid(cfg)
    if not cfg.get("datasets"):
        raise ValueError("heat_traces needs datasets: add some with +data@datasets.NAME=OPTION")
    prep = to_rgb if cfg.get("color", True) else (lambda a: a)
    with ctx.stage("load data"):
        labels = unique_names(cfg.datasets, "datasets")
        data = {k: prep(pipeline.load_data(ctx, v, f"datasets.{k}")) for k, v in zip(labels, cfg.datasets.values())}
    settings.check_pools({f"datasets.{k}": len(v) for k, v in data.items()})
    extractor = pipeline.make_extractor(ctx)
    pipeline.open_results(ctx, protocol=False)  # runs of another config or content: refused before extraction
    with ctx.stage("features"):
        feats = {k: pipeline.features(ctx, v, extractor, k) for k, v in data.items()}
    task = HeatTraceTask(feats, ts, settings)
    with ctx.stage("runs"):
        rows = run_loop(task, settings, ctx.results_dir, ctx.identity(), pipeline.strict_bool(cfg, "overwrite"),
                        desc="heat traces")
    summary = summarize_traces(rows, settings.confidence, settings.sample_size)
    pipeline.write(ctx, summary, None, str(cfg.get("title") or ctx.name), tables=False)
    if pipeline.strict_bool(cfg, "plots"):
        from ganeval.results import plots

        plots.plot_heat_traces(summary, ctx.results_dir / "heat_traces.png", settings.metrics["imd"]["normalization"])
    return summary
