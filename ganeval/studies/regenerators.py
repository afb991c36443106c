"""Each committed reference's regenerator: its derived files (summary, tables, verdicts) written again from its stored
runs by the current code. `scripts/regenerate_references.py` writes them, tests/test_committed_references.py checks them."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

from ganeval.studies import blur_sweep, gan_table, heat_traces, slq_accuracy, stability, torus

# reference name -> function(src, out) writing its derived files from its stored runs; `scratch`: the folder the
# reference was made in (its COMMAND.md, its summary.json's command), cut from the recorded paths
REGENERATORS: dict[str, Callable[[Path, Path], None]] = {
    "torus": torus.regenerate, "paper_table": partial(gan_table.regenerate, scratch="/tmp/pt_ref"),
    "blur_sweep": blur_sweep.regenerate, "slq_accuracy": partial(slq_accuracy.regenerate, scratch="/tmp/heat"),
    "stability": stability.regenerate, "stability_lowrecall": stability.regenerate,
    "heat_traces": partial(heat_traces.regenerate, scratch="/tmp/heat")}
