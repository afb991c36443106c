"""The run record (summary.json): what the numbers are, how they were made and what the intervals cover.

One dataclass writes the file and reads it back, so each field is named once; the JSON keys are the
field names, and optional fields that are None are left out of the file.
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field, fields
from importlib import metadata
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Mapping, get_args, get_origin, get_type_hints

import pandas as pd

from ganeval.results.files import json_text, write_csv, write_json
from ganeval.results.intervals import COVERAGE_NOTE
from ganeval.results.seeds import SEED, SEEDS_FILE
from ganeval.results.tables import write_tables


def package_versions() -> dict[str, str]:
    """Versions of the packages that produce the numbers (and Python's)."""
    out = {"python": platform.python_version()}
    for pkg in ("ganeval", "torch", "numpy", "scipy", "pandas", "hydra-core", "pynndescent"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


@dataclass
class RunRecord:
    """The summary.json of one experiment run; the pipeline steps fill the fields they know."""

    config_hash: str  # the hash results_dir is keyed by (protocol.store.identity_hash): runs.meta.json holds the same
    config: dict[str, Any]  # the resolved config
    seed: int
    device: str
    packages: dict[str, str] = field(default_factory=package_versions)
    interval_covers: str = COVERAGE_NOTE
    stage_seconds: dict[str, float] = field(default_factory=dict)  # stage -> seconds (to the millisecond)
    results: list[dict[str, Any]] = field(default_factory=list)  # the summary's rows
    experiment: str | None = None
    runs: int | None = None
    command: str | None = None  # the command line that made the run (the Hydra app)
    overrides: list[str] | None = None  # its Hydra overrides
    extractor: dict[str, Any] | None = None  # the feature extractor's identity (weights included)
    knn: str | None = None  # IMD's k-NN method, when IMD is scored
    generators: dict[str, dict[str, Any]] | None = None  # "data/model" -> the generator's identity
    seconds_per_run: float | None = None
    hole_fraction: dict[str, float] | None = None  # torus: fraction of each set's points in the hole
    verdict: list[dict[str, Any]] | None = None  # torus: per metric, do the models separate
    # torus with several training seeds: each model's hole fraction per training seed, in the seeds' order
    hole_fraction_per_seed: dict[str, list[float]] | None = None
    # the paper's claims as decided (`ganeval.results.verdicts.Claim.record`): verdict, rule, threshold, vs the paper
    claims: list[dict[str, Any]] | None = None
    # what a verdict's text takes from the run's inputs and machine (stability: pools, machine line), so the verdict
    # can be written again from the stored runs
    context: dict[str, Any] | None = None
    # per model and metric: the shares of one run's variance due to training seeds, subsampling and probes
    # (`seeds.variance_record`)
    variance_shares: list[dict[str, Any]] | None = None
    # under a named protocol: the full-set FID its papers report (column fid_full of the results), what it means
    # and its value per generated pool (`ganeval.protocol.reported`)
    full_set: dict[str, Any] | None = None
    # each set's feature dimension (set -> D; "real" first): sets of different dimension are compared by IMD and the
    # other dimension-free metrics (`ganeval.metrics.dims`)
    dims: dict[str, int] | None = None
    # the note naming the default metrics left out because the sets differ in dimension (or go through two extractors)
    left_out: str | None = None

    def set_results(self, summary: pd.DataFrame, stage_seconds: Mapping[str, float]) -> None:
        """Record the summary's rows and the stage times (to the millisecond), the last fields known before writing."""
        self.results = json.loads(summary.to_json(orient="records"))
        self.stage_seconds = {k: round(float(v), 3) for k, v in stage_seconds.items()}

    def between_given_sets(self) -> bool:
        """Whether `ganeval-score` compared REAL with given sets rather than a generator's samples: word vectors
        (another language or embedding model), sets of another dimension than REAL's (another network's layer) or REAL
        through an extractor of its own (--real-features: another feature space). Their numbers are distances between
        sets: the tables, figures and report head them so, and call no set a generator or better."""
        given = [g for g in (self.generators or {}).values() if isinstance(g, dict) and "source" in g]
        if not given or len(given) < len(self.generators or {}) or any(g["source"] == "generator" for g in given):
            return False
        words = all(g["source"] == "word vectors" for g in given)
        return words or len(set((self.dims or {}).values())) > 1 or "real_features" in self.config

    def protocol(self) -> dict[str, Any]:
        """What makes two runs' numbers comparable: sample size, confidence, extractor, metric options, kNN."""
        return {
            "sample_size": self.config.get("sample_size"),
            "confidence": self.config.get("confidence"),
            "extractor": self.extractor,
            "metrics": self.config.get("metrics"),
            "knn": self.knn,
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: every field under its name, optional fields left out when None."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def to_json(self) -> str:
        """The text of summary.json."""
        return json_text(self.to_dict())

    def write(self, path: str | Path) -> Path:
        """Write the record to `path` atomically."""
        return write_json(self.to_dict(), path)

    @classmethod
    def from_dict(cls, doc: Any, source: str) -> RunRecord:
        """The record of a parsed summary.json; ValueError naming `source` when a key is missing, unknown or mistyped."""
        if not isinstance(doc, dict):
            raise ValueError(f"{source} is not a run record: it holds a JSON {type(doc).__name__}, not an object")
        hints = get_type_hints(cls)
        missing = [f.name for f in fields(cls) if f.name not in doc and NoneType not in _accepted(hints[f.name])]
        unknown = sorted(set(doc) - set(hints))
        if missing or unknown:
            raise ValueError(f"{source} is not a run record: missing keys {missing}, unknown keys {unknown}; "
                             "give a summary.json written by ganeval")
        for key, value in doc.items():
            allowed = _accepted(hints[key])
            if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
                names = " or ".join(t.__name__ for t in allowed)
                raise ValueError(f"{source}: {key} must be {names}, got {type(value).__name__} {value!r:.80}")
        return cls(**doc)

    @classmethod
    def read(cls, path: str | Path) -> RunRecord:
        """Read and check a summary.json; ValueError naming the path when it is missing, not JSON or not a record."""
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as e:
            raise ValueError(f"cannot read the run record {path}: {e.strerror or e}") from e
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"the run record {path} is not JSON ({e}); give a summary.json written by ganeval") from e
        return cls.from_dict(doc, str(path))


def _accepted(hint: Any) -> tuple[type, ...]:
    """The JSON value types a field's annotation admits: containers by their outer type, an int where a float is."""
    types = tuple(get_origin(a) or a for a in (get_args(hint) if isinstance(hint, UnionType) else (hint,)))
    return types + (int,) if float in types else types


def write_results(
    out_dir: str | Path,
    summary: pd.DataFrame,
    comparison: pd.DataFrame | None,
    record: RunRecord,
    title: str = "",
    tables: bool = True,
    seeds: pd.DataFrame | None = None,
) -> list[Path]:
    """Write summary.csv, summary.json, comparison.csv and summary_seeds.csv (when given) and the tables into `out_dir`.

    `summary` is what the tables show (the model level); `seeds` the per-(model, seed) summary, written only
    when it holds a `train_seed` column; the tables bold by `comparison`.
    """
    out = Path(out_dir)
    paths = [write_csv(summary, out / "summary.csv"), record.write(out / "summary.json")]
    if comparison is not None and len(comparison):
        paths.append(write_csv(comparison, out / "comparison.csv"))
    if seeds is not None and SEED in seeds.columns:
        paths.append(write_csv(seeds, out / SEEDS_FILE))
    if tables:
        paths += write_tables(summary, out, comparison, title, extractor=record.extractor or None,
                              given_sets=record.between_given_sets())
    return paths
