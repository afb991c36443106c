"""Make the committed references' derived files (summaries, tables, verdicts, summary.json) again from their stored
runs with the current code, in place; no new runs. tests/test_committed_references.py checks that nothing would change.

    python scripts/regenerate_references.py            # every reference this knows
    python scripts/regenerate_references.py torus      # one
"""

from __future__ import annotations

import sys
from pathlib import Path

from ganeval.studies.regenerators import REGENERATORS

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference"

if __name__ == "__main__":
    names = sys.argv[1:] or list(REGENERATORS)
    unknown = sorted(set(names) - set(REGENERATORS))
    if unknown:
        print(f"unknown reference(s) {unknown}; known: {sorted(REGENERATORS)}", file=sys.stderr)
        sys.exit(2)
    for name in names:
        REGENERATORS[name](REFERENCE / name, REFERENCE / name)
        print("regenerated", REFERENCE / name)
