"""Pairwise IMD between named sets that share no coordinates (word vectors of several dimensions or languages): per run,
each set's heat trace on its own subsample, then IMD of every pair from the stored traces (the paper's many-to-many
use). Shared by the `wordvec_dims` and `language_manifolds` studies, with their heatmap figure."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

def shown_command(plan: Any) -> str:
    """The run's command as summary.json records it: `ganeval` and its overrides, without results_dir (a folder of
    the machine that made it, not an input)."""
    return " ".join(["ganeval", *(o for o in plan.record.overrides if not o.startswith("results_dir="))])


PairMetric = Callable[[np.ndarray, np.ndarray, np.random.Generator], float]


def pairwise_rows(sets: Mapping[str, np.ndarray], runs: int, sample_size: int, seed: int,
                  imd_options: Mapping[str, Any], others: Mapping[str, PairMetric] | None = None,
                  aligned: bool = False) -> pd.DataFrame:
    """Rows (run, a, b, metric, value) for every unordered pair of `sets` and run: IMD from the two sets' heat traces
    (each on `sample_size` rows drawn with `default_rng([seed, r, i])`, i the set's position; `aligned`: one draw of
    row indices per run shared by every set, for sets whose rows are the same items), and each metric of `others`
    on the same subsamples (its own generator `default_rng([seed, r, 1000 + j])`, j its position)."""
    from ganeval.metrics import heat_trace, imd_from_traces
    from ganeval.metrics.imd import temperatures

    names = list(sets)
    sizes = {n: len(v) for n, v in sets.items()}
    small = [f"{n} ({s} rows)" for n, s in sizes.items() if s < sample_size]
    if small:
        raise ValueError(f"sample_size={sample_size} is more than {', '.join(small)} hold: lower sample_size")
    t = temperatures(None)
    rows: list[dict[str, Any]] = []
    others = dict(others or {})
    for r in range(runs):
        shared = np.random.default_rng([seed, r]).choice(min(sizes.values()), sample_size, replace=False) \
            if aligned else None
        subs, traces = {}, {}
        for i, n in enumerate(names):
            rng = np.random.default_rng([seed, r, i])
            idx = shared if shared is not None else rng.choice(sizes[n], sample_size, replace=False)
            subs[n] = np.asarray(sets[n][np.sort(idx)], dtype=np.float32)
            traces[n] = heat_trace(subs[n], t=t, seed=rng, **imd_options)
        for a, b in combinations(names, 2):
            rows.append({"run": r, "a": a, "b": b, "metric": "imd", "value": imd_from_traces(traces[a], traces[b], t)})
            for j, (m, fn) in enumerate(others.items()):
                if subs[a].shape[1] == subs[b].shape[1] or getattr(fn, "any_dims", False):
                    rows.append({"run": r, "a": a, "b": b, "metric": m,
                                 "value": float(fn(subs[a], subs[b], np.random.default_rng([seed, r, 1000 + j])))})
    return pd.DataFrame(rows)


def matrices(rows: pd.DataFrame, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Per metric: the symmetric matrix of its mean over runs (NaN where a pair was not scored, 0 on the diagonal)."""
    out = {}
    pos = {n: i for i, n in enumerate(names)}
    for m, g in rows.groupby("metric", sort=False):
        mat = np.full((len(names), len(names)), np.nan)
        np.fill_diagonal(mat, 0.0)
        for (a, b), v in g.groupby(["a", "b"], sort=False)["value"].mean().items():
            mat[pos[a], pos[b]] = mat[pos[b], pos[a]] = v
        out[str(m)] = mat
    return out


def plot_heatmaps(mats: Mapping[str, np.ndarray], names: Sequence[str], path: str | Path, title: str) -> Path:
    """One heatmap per metric side by side (viridis, as the paper's figures), pairs not scored left blank."""
    from ganeval.results.plots import _plt, _save

    plt = _plt()
    fig, axes = plt.subplots(1, len(mats), figsize=(4.2 * len(mats), 3.8), squeeze=False)
    for ax, (m, mat) in zip(axes[0], mats.items()):
        im = ax.imshow(np.ma.masked_invalid(mat), cmap="viridis")
        ax.set_xticks(range(len(names)), [str(n) for n in names], rotation=45, fontsize=8)
        ax.set_yticks(range(len(names)), [str(n) for n in names], fontsize=8)
        ax.set_title(m.upper() if len(m) <= 4 else m)
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(title)
    return _save(fig, path)
