"""Sets of different dimension: which chosen metrics can compare them (the registry's `same_dim`), and what to do.

IMD (and any metric registered with `same_dim=False`) compares unaligned sets, e.g. 300-d and 100-d word vectors;
a metric that needs one feature space is refused when chosen explicitly, and left out (said in a note) when it
came with the default metrics.
"""

from __future__ import annotations

from typing import Any, Mapping

from ganeval.metrics.registry import REGISTRY, Metrics


def dimension_free() -> list[str]:
    """The registered metrics that compare sets of different dimension (`same_dim=False`), in registration order."""
    return [m.name for m in REGISTRY.values() if not m.same_dim]


def _labels(names: list[str]) -> str:
    return ", ".join(REGISTRY[n].unscaled_label for n in names)


def mismatch(dims: Mapping[str, int]) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """The first set whose dimension differs from the first set's (the reference), as ((name, d), (name, d));
    None when all sets have one dimension. `dims`: set name -> feature dimension, the reference first."""
    items = list(dims.items())
    first = items[0]
    for item in items[1:]:
        if int(item[1]) != int(first[1]):
            return (first[0], int(first[1])), (item[0], int(item[1]))
    return None


def fit_metrics(metrics: Metrics, dims: Mapping[str, int], chosen: bool) -> tuple[Metrics, str | None]:
    """`metrics` for sets of dimensions `dims` (set name -> dimension, the real set first), and a note.

    One dimension: unchanged, no note. Different dimensions: metrics that need one space (`same_dim`) raise a
    one-line ValueError naming them and both dimensions when `chosen` (the user listed them); with the default
    metrics (`chosen` False) they are left out and the note says so. No dimension-free metric left: ValueError."""
    pair = mismatch(dims)
    if pair is None:
        return metrics, None
    (a, da), (b, db) = pair
    need = [m.name for m, _ in metrics.ordered() if m.same_dim]
    if not need:
        return metrics, None
    free = dimension_free()
    kept = dimension_free_part(metrics)
    where = f"{a} has {da} features and {b} has {db}"
    if chosen or kept is None:
        raise ValueError(f"{_labels(need)} need{'s' if len(need) == 1 else ''} features of one dimension, but {where}: "
                         f"to compare sets of different dimension choose only dimension-free metrics "
                         f"({_labels(free)})")
    note = (f"note: {where}: {_labels(need)} need{'s' if len(need) == 1 else ''} one dimension and "
            f"{'is' if len(need) == 1 else 'are'} left out; scoring {_labels(list(kept))}")
    return kept, note


def dimension_free_part(metrics: Metrics) -> Metrics | None:
    """What `fit_metrics` leaves of the default `metrics` for sets of different dimension (those not needing one
    space); None when it would leave them as they are or refuse them (none or all need one space)."""
    kept = {name: opts for name, opts in metrics.items() if not REGISTRY[name].same_dim}
    return Metrics(kept) if kept and len(kept) < len(metrics) else None


def record_dims(dims: Mapping[str, int]) -> dict[str, Any]:
    """Each set's feature dimension, as results record it ({set name: dimension})."""
    return {str(k): int(v) for k, v in dims.items()}
