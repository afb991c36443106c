"""One value per metric on the full sets (what pytorch-fid and torch-fidelity print): the library metric
functions on every row of each set, as a run-loop task so the value is stored like a protocol run.

Each generated set is scored against the real set on its own, every metric seeded by `seed`:
`imd(real, fake, seed=seed)` (probes from `default_rng(seed)`, the real set's first, so every generated set
meets the same real probes; with its standard error over those probes, stored beside it as the row `imd:se`),
`fid(real, fake)`, `kid(real, fake, subsets, subset_size, seed=seed)` (its
subsets drawn from `default_rng(seed)`). A metric without a full-set function here (a plugin) runs its
registered stages on the full sets with the draws of `default_rng(seed)`. Each metric is scored on its own,
from a Generator of its own, so its value is the same alone or beside any other metric. There is no interval:
one value covers neither subsampling nor probes (KID also reports its std over subsets, as torch-fidelity does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

import numpy as np

from ganeval.protocol.settings import Settings
from ganeval.protocol.task import RowSpec

if TYPE_CHECKING:
    from ganeval.metrics.registry import Metrics

FULL_SET_NOTE = (
    "One value per metric on the full sets (runs=1): no interval. IMD's probes and KID's subsets are drawn "
    "from numpy.random.default_rng(seed); another seed changes them, and that variation (like the variation over "
    "subsamples) is not covered. For intervals use runs > 1 with a sample size (the subsample protocol)."
)

STORED_EXTRAS = {"imd": ("se",)}  # what a full-set value comes with that runs.csv keeps, as rows "imd:se"
EXTRA_SEP = ":"


def _imd(x: Any, y: Any, seed: int, device: Any, o: Mapping[str, Any]) -> dict[str, float]:
    from ganeval.metrics.imd import imd

    value = imd(x, y, seed=seed, device=device, **o)
    return {"value": float(value), "se": value.se}


def _fid(x: Any, y: Any, seed: int, device: Any, o: Mapping[str, Any]) -> dict[str, float]:
    from ganeval.metrics import fid

    return {"value": fid(x, y, device=device, **o)}


def _kid(x: Any, y: Any, seed: int, device: Any, o: Mapping[str, Any]) -> dict[str, float]:
    from ganeval.metrics import kid

    mean, std = kid(x, y, o["subsets"], o["subset_size"], seed=seed, device=device, degree=o["degree"],
                    coef0=o["coef0"])
    return {"value": mean, "std": std}


FullSetFunction = Callable[[Any, Any, int, Any, Mapping[str, Any]], dict[str, float]]
FULL_SET: dict[str, FullSetFunction] = {"imd": _imd, "fid": _fid, "kid": _kid}


def _stages(name: str) -> FullSetFunction:
    """A registered metric without a full-set function: its stages on the full sets, draws from default_rng(seed)."""

    def run(x: Any, y: Any, seed: int, device: Any, o: Mapping[str, Any]) -> dict[str, float]:
        from ganeval.metrics.suite import prepare_set, score_pair

        chosen = {name: dict(o)}
        sx, sy = prepare_set(x, chosen, device), prepare_set(y, chosen, device)
        return {"value": score_pair(sx, sy, lambda _: np.random.default_rng(seed), chosen, device)[name]}

    return run


def score_full(real: Any, fake: Any, metrics: Mapping[str, Mapping[str, Any]], seed: int = 0,
               device: Any = None) -> dict[str, dict[str, float]]:
    """metric -> {"value": v, ...} of `fake` against `real` on all their rows (KID adds "std" over subsets)."""
    return {name: FULL_SET.get(name, _stages(name))(real, fake, seed, device, opts) for name, opts in metrics.items()}


def check_full_sizes(sizes: Mapping[str, int], metrics: Mapping[str, Mapping[str, Any]], real: str | None = None) -> None:
    """Refuse sets too small for the metric options on the full sets, naming the set and the option to change.
    `real`: the key of the real set in `sizes` (FD∞ draws its sizes from the others only)."""
    for what, n in sizes.items():
        if n < 2:
            raise ValueError(f"{what} has {n} row(s): every metric needs at least 2")
        if "imd" in metrics and metrics["imd"]["k"] >= n:
            raise ValueError(f"{what} has {n} rows, not more than IMD's k={metrics['imd']['k']} neighbours: give more "
                             "rows or lower imd.k")
        if "kid" in metrics and metrics["kid"]["subset_size"] > n:
            raise ValueError(f"{what} has {n} rows, fewer than KID's subset_size={metrics['kid']['subset_size']}: give "
                             f"more rows or lower kid.subset_size (at most {n})")
        if "fd_inf" in metrics and what != real:
            from ganeval.metrics.fd_inf import check_sizes

            o = metrics["fd_inf"]
            try:
                check_sizes(n, o["points"], o["min_fraction"], what)
            except ValueError:
                raise ValueError(f"{what} has {n} rows, too few for FD∞'s sizes (points={o['points']} from "
                                 f"min_fraction={o['min_fraction']} of them: at least 2 rows each, 2 distinct): give more "
                                 "rows or a larger metrics.fd_inf.min_fraction") from None


@dataclass
class FullSetTask:
    """Run 0 -> the rows (run, model, metric, value) of every generated set scored on the full sets (runs=1 only).

    `extras[(model, metric)]` keeps what a value comes with besides itself (KID's std over subsets, IMD's standard
    error); those of `STORED_EXTRAS` are rows of their own ("imd:se"), so a resumed folder has them too."""

    real: Any
    fakes: list[tuple[dict[str, Any], Any]]
    settings: Settings
    extras: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)

    def __call__(self, r: int) -> list[dict[str, Any]]:
        if r != 0:
            raise ValueError(f"scoring on the full sets has one run (run 0), not run {r}")
        s = self.settings
        out: list[dict[str, Any]] = []
        for groups, fake in self.fakes:
            values = score_full(self.real, fake, cast("Metrics", s.metrics), s.seed, s.device)
            for m, v in values.items():
                out.append({"run": r, **groups, "metric": m, "value": float(v["value"])})
                out += [{"run": r, **groups, "metric": m + EXTRA_SEP + k, "value": float(v[k])}
                        for k in STORED_EXTRAS.get(m, ())]
                self.extras[(str(groups.get("model")), m)] = {k: float(x) for k, x in v.items() if k != "value"}
        return out

    def row_spec(self) -> RowSpec:
        """One row per generated set and metric, and one per stored extra ("imd:se")."""
        extras = tuple(m + EXTRA_SEP + k for m in self.settings.metrics for k in STORED_EXTRAS.get(m, ()))
        return RowSpec(tuple(dict(g) for g, _ in self.fakes), tuple(self.settings.metrics) + extras)


def with_standard_errors(summary: Any, extras: Mapping[tuple[str, str], Mapping[str, float]]) -> Any:
    """The full-set summary with a column `se` (SE_COLUMN): each value's estimator standard error where it has one
    (IMD's, over its probes), empty otherwise."""
    from ganeval.results.summary import SE_COLUMN

    if not any("se" in e for e in extras.values()):
        return summary
    se = [extras.get((str(r["model"]), str(r["metric"])), {}).get("se", np.nan) for _, r in summary.iterrows()]
    return summary.assign(**{SE_COLUMN: se})


def split_extras(rows: Any) -> tuple[Any, dict[tuple[str, str], dict[str, float]]]:
    """Full-set rows without the stored-extra rows ("imd:se"), and those as extras[(model, metric)][key]."""
    extra = rows["metric"].str.contains(EXTRA_SEP, regex=False)
    extras: dict[tuple[str, str], dict[str, float]] = {}
    for _, row in rows[extra].iterrows():
        metric, key = str(row["metric"]).split(EXTRA_SEP, 1)
        extras.setdefault((str(row.get("model")), metric), {})[key] = float(row["value"])
    return rows[~extra].reset_index(drop=True), extras
