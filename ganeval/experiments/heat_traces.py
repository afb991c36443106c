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

from ganeval.experiments import common
from ganeval.protocol import SharedArray, as_array, check_sizes, run_loop
from ganeval.stats import t_interval


@dataclass
class HeatTraceTask:
    """Callable run r -> rows (run, data, t, metric='heat_trace', value) for every dataset."""

    sets: dict[str, Any]
    t: np.ndarray
    sample_size: int
    imd: dict[str, Any]
    seed: int
    device: str

    def __call__(self, r: int) -> list[dict[str, Any]]:
        from ganeval.metrics import heat_trace

        rows: list[dict[str, Any]] = []
        for name, feats in self.sets.items():
            x = as_array(feats)
            rng = np.random.default_rng([self.seed, r])
            sub = np.asarray(x[rng.choice(len(x), self.sample_size, replace=False)])
            o = self.imd
            h = heat_trace(sub, t=self.t, k=o["k"], m=o["m"], nv=o["nv"], seed=rng, normalization=o["normalization"],
                           knn=o["knn"], rademacher=o["rademacher"], device=self.device)
            rows += [{"run": r, "data": name, "t": float(t), "metric": "heat_trace", "value": float(v)}
                     for t, v in zip(self.t, h)]
        return rows

    def shared(self, tmpdir: str) -> "HeatTraceTask":
        """A copy whose arrays are memory-mapped `.npy` files under `tmpdir` (for worker processes)."""
        sets = {}
        for i, (name, a) in enumerate(self.sets.items()):
            path = os.path.join(tmpdir, f"h{i}.npy")
            np.save(path, np.ascontiguousarray(as_array(a)))
            sets[name] = SharedArray(path)
        return HeatTraceTask(sets, self.t, self.sample_size, self.imd, self.seed, self.device)


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


def run(ctx: common.Context) -> pd.DataFrame:
    """Extract each dataset's features, estimate its heat traces over runs, write summary and heat_traces.png."""
    from ganeval.data.images import to_rgb

    cfg = ctx.cfg
    metrics = common.metric_options(cfg)
    if "imd" not in metrics:
        raise ValueError("heat_traces needs metrics.imd (its k, m, nv, normalization, knn options)")
    ts = t_grid(cfg)
    if not cfg.get("datasets"):
        raise ValueError("heat_traces needs datasets: add some with +data@datasets.NAME=OPTION")
    prep = to_rgb if cfg.get("color", True) else (lambda a: a)
    with ctx.stage("load data"):
        data = {str(k): prep(common.load_data(v, f"datasets.{k}")) for k, v in cfg.datasets.items()}
    check_sizes(int(cfg.sample_size), {f"datasets.{k}": len(v) for k, v in data.items()}, {"imd": metrics["imd"]})
    extractor = common.make_extractor(ctx)
    with ctx.stage("features"):
        feats = {k: common.features(ctx, v, extractor, k) for k, v in data.items()}
    task = HeatTraceTask(feats, ts, int(cfg.sample_size), metrics["imd"], int(cfg.seed), ctx.device)
    identity = {"config_hash": ctx.config_hash}
    from ganeval.hashing import stable_hash

    with ctx.stage("runs"):
        rows = run_loop(task, int(cfg.runs), ctx.results_dir, stable_hash(identity), identity,
                        bool(cfg.overwrite), int(cfg.workers), bool(cfg.progress), desc="heat traces")
    summary = summarize_traces(rows, float(cfg.confidence), int(cfg.sample_size))
    common.write(ctx, summary, None, str(cfg.get("title") or ctx.name), tables=False, metrics=metrics)
    if cfg.plots:
        from ganeval import plots

        plots.plot_heat_traces(summary, ctx.results_dir / "heat_traces.png", metrics["imd"]["normalization"])
    return summary
