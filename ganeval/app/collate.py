"""`ganeval-collate DIR [--out OUT]`: merge the job directories of a sweep into one summary and table
(`ganeval.results.collate`); exit 2 with one line when the jobs cannot be collated."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

import ganeval.features  # noqa: F401  (the extractors' FD names, which the tables label FID with)
from ganeval.results.collate import write_collated


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: ganeval-collate DIR [--out OUT]."""
    parser = argparse.ArgumentParser(prog="ganeval-collate", description="merge the job directories of a sweep into one summary and table")
    parser.add_argument("dir", help="the sweep directory (e.g. multirun/2026-01-01/12-00-00)")
    parser.add_argument("--out", default=None, help="where to write summary.csv and table.md/.tex (default: DIR)")
    args = parser.parse_args(argv)
    out = Path(args.out or args.dir)
    try:
        levels, written = write_collated(args.dir, out)
    except ValueError as e:
        print(f"ganeval-collate: {e}", file=sys.stderr)
        return 2
    print(f"collated {levels.seeds.shape[0]} rows from {args.dir} into {out}: {', '.join(p.name for p in written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
