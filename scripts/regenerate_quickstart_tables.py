"""Rewrite results/reference/quickstart's derived files (comparison.csv, tables, summaries) from its stored runs.csv
by the code tests/test_record.py checks them with; the measurements (runs.csv) are read, never written."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from ganeval.results import RunRecord, summarize_levels, variance_record, write_results

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference" / "quickstart"

if __name__ == "__main__":
    rows = pd.read_csv(REFERENCE / "runs.csv", keep_default_na=False, na_values=[""])
    rec = RunRecord.read(REFERENCE / "summary.json")
    levels = summarize_levels(rows, rec.config["confidence"], rec.config["sample_size"])
    again = dataclasses.replace(rec, results=[], variance_shares=None)
    again.set_results(levels.summary, rec.stage_seconds)
    again.variance_shares = variance_record(levels.variance)
    assert again == rec, "the record of these runs no longer holds the committed numbers"
    for p in write_results(REFERENCE, levels.summary, levels.comparison, again, title=rec.config["title"],
                           seeds=levels.seeds):
        print("wrote", p)
