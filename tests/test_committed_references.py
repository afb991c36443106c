"""Each committed reference's derived files equal what the current code makes from its stored runs, so a reference
can never disagree with the code that claims it (scripts/regenerate_references.py rewrites them)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from ganeval.studies.regenerators import REGENERATORS
from ganeval.studies.stored import relative_paths

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference"
DERIVED = ("verdict.md", "verdict.csv", "table.md", "summary.json", "summary.csv", "comparison.csv",
           "summary_seeds.csv")


FULL_DIGITS = re.compile(r"-?\d+\.\d{12,}(?:e[-+]?\d+)?")  # a float written with every digit (repr)


def same_text(made: str, stored: str) -> bool:
    """Equal text, except that floats written with every digit may differ in their last two (another CPU's BLAS
    sums in another order); a rounded number, a word or a count differs nowhere."""
    if made == stored:
        return True
    a, b = FULL_DIGITS.split(made), FULL_DIGITS.split(stored)
    x, y = FULL_DIGITS.findall(made), FULL_DIGITS.findall(stored)
    return a == b and len(x) == len(y) and all(math.isclose(float(u), float(v), rel_tol=1e-13, abs_tol=1e-300)
                                                for u, v in zip(x, y))


def test_same_text_forgives_only_the_last_digits_of_full_floats() -> None:
    assert same_text('{"m": 0.52120502707712345}', '{"m": 0.52120502707712351}')
    assert not same_text('{"m": 0.52120502707712345}', '{"m": 0.52120502717712345}')  # the 11th digit
    assert not same_text("IMD 57.81 ± 35.36", "IMD 57.82 ± 35.36")  # rounded numbers compare exactly
    assert not same_text("holds (p 0.0000000000001)", "contradicted (p 0.0000000000001)")


@pytest.mark.parametrize("name", sorted(REGENERATORS))
def test_reference_derived_files_are_what_the_code_makes(name: str, tmp_path: Path) -> None:
    src = REFERENCE / name
    REGENERATORS[name](src, tmp_path)
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made, "the regenerator wrote nothing"
    compared = [f for f in made if f in DERIVED]
    assert "verdict.md" in compared and "summary.json" in compared
    for f in compared:  # timings, paths and machine fields come from the stored record, so whole files compare
        assert same_text((tmp_path / f).read_text(), (src / f).read_text()), f"{name}/{f} differs from what the code makes"
    assert "/tmp/" not in (src / "summary.json").read_text()  # no scratch folder of the machine that made it


def test_relative_paths_cuts_the_scratch_folder() -> None:
    doc = {"a": "/tmp/x/cache", "b": ["/tmp/x/models/m.pt", 3], "c": "/tmp/x", "d": "/tmp/xy/z"}
    assert relative_paths(doc, "/tmp/x") == {"a": "cache", "b": ["models/m.pt", 3], "c": ".", "d": "/tmp/xy/z"}


def test_torus_seeds_are_labelled_by_their_own_values() -> None:
    """With train_seeds=[3, 4, 5] the verdict names seeds 3, 4, 5 (not their positions 0, 1, 2)."""
    from ganeval.studies.stored import read_record, read_runs, summarize_stored
    from ganeval.studies.torus import verdict_files

    src = REFERENCE / "torus"
    record, rows = read_record(src), read_runs(src)
    record.config = {**record.config, "train_seeds": [3, 4, 5]}
    summary, comparison, seeds = summarize_stored(rows, record)
    text = verdict_files(record, rows, summary, comparison, seeds)["verdict.md"]
    assert "seed 3: 7.7 ± 3.3 vs 70.9 ± 4.0 (separate); seed 4:" in text and "seed 0:" not in text
    assert "per training seed 3, 4, 5: good 0.008, 0.042, 0.012" in text


def test_heat_traces_config_hash_is_what_its_config_and_inputs_give() -> None:
    """(issue #26) heat_traces' record names the hash today's code keys its config and inputs by: its resolved config
    less the number-neutral keys, the datasets' content hashes and the extractor's identity, hashed here again."""
    from hydra.utils import instantiate

    from ganeval.app.plan import numeric_config
    from ganeval.hashing import array_identity
    from ganeval.protocol.store import identity_hash
    from ganeval.studies.stored import read_record

    record = read_record(REFERENCE / "heat_traces")
    cfg = record.config
    data = {f"datasets.{k}": array_identity(instantiate(v)) for k, v in cfg["datasets"].items()}  # full SHA-256s,
    content = {"data": data, "extractor": instantiate(cfg["features"]).identity(), "generators": {}}  # as made since #54
    assert record.config_hash == identity_hash({"config": numeric_config(cfg), "content": content}) == "df0e845eb41212bf"
    assert cfg["run_experiment"]["_target_"] == "ganeval.studies.heat_traces.run"  # the module today's code runs


def test_torus_config_hash_is_what_its_command_gives() -> None:
    """(issue #26) torus' runs.meta.json and summary.json name the identity and hash today's code files the reference's
    command under: the command composed again, each model's train spec per training seed identified with the data's
    content hash (`generators.identify_plan`) and the protocol settings, hashed here again;
    runs.meta.json still holds the checksum of the committed runs.csv, so the folder resumes as it is."""
    import hashlib
    import json

    import numpy as np
    from apphelp import app_config

    from ganeval.app import generators, pipeline
    from ganeval.app.plan import numeric_config
    from ganeval.app.validate import build_plan
    from ganeval.protocol.api import store_identity
    from ganeval.protocol.store import identity_hash, same_identity

    src = REFERENCE / "torus"
    record = json.loads((src / "summary.json").read_text())
    meta = json.loads((src / "runs.meta.json").read_text())
    plan = build_plan(app_config(record["overrides"]))
    real = pipeline.load_data(plan, plan.params.data, "data").astype(np.float32)
    for label, spec in dict(plan.params.generators).items():
        seed_plans = generators.plan_generator(plan, real, spec, f"generators.{label}")
        generators.identify_plan(plan, seed_plans, f"torus/{label}", "data")
    identity = store_identity(plan.settings, plan.identity())
    content = identity["data"]["content"]
    assert sorted(content) == ["data", "generators"]  # raw 3-d points: no extractor runs, none is identified
    data_hash = content["data"]["data"]["sha256"]
    assert len(data_hash) == 64 and content["data"]["data"]["shape"] == [4000, 3]
    assert content["generators"] == {f"torus/{m}/train_seed={i}": {"data": data_hash, "train": {
        **record["config"]["generators"][m]["train"], "seed": i}} for m in ("good", "bad") for i in range(3)}
    assert record["config_hash"] == meta["config_hash"] == identity_hash(identity) == "b574a01fa271309d"
    assert same_identity(meta["identity"], identity) and identity_hash(meta["identity"]) == meta["config_hash"]
    assert numeric_config(record["config"]) == json.loads(json.dumps(numeric_config(plan.config), default=str))
    assert hashlib.sha256((src / "runs.csv").read_bytes()).hexdigest() == meta["runs_sha256"]


def test_docs_quote_the_quickstart_reference_verdict() -> None:
    """(issue #36) The sentence the docs and verdict.py's docstring show is the quickstart reference's verdict.md, word
    for word (line breaks aside), and its report.html heads with it: the docs cannot drift from the reference."""
    import html
    import re

    import ganeval.results.verdict as verdict_module
    from ganeval.results.tables import MD_SPECIAL
    from ganeval.results.verdict import split_verdict

    def flat(text: str) -> str:
        return " ".join(text.split())

    [source] = split_verdict((REFERENCE / "quickstart" / "verdict.md").read_text())[0]
    assert "wgan vs wgan\\_gp" in source  # verdict.md escapes the labels for Markdown (issue #58) ...
    sentence = re.sub("\\\\([" + re.escape(MD_SPECIAL) + "])", r"\1", source)  # ... the docs quote it as shown
    assert "would need about 8 (5 to unbounded) training seeds to resolve at the Holm level of its 3 tests" in sentence
    docs = Path(__file__).resolve().parent.parent / "docs"
    assert flat(sentence) in flat((docs / "first-minutes.md").read_text())
    assert flat(sentence) in flat((docs / "experiments.md").read_text())
    assert flat(sentence.split(": ", 1)[1]) in flat(verdict_module.__doc__ or "")  # the docstring drops "digits: "
    page = (REFERENCE / "quickstart" / "report.html").read_text()
    heads = re.findall(r'<p class="verdict">(.*?)</p>', page)
    assert [html.unescape(h) for h in heads] == [sentence]


def test_torus_verdict_carries_the_per_seed_pattern() -> None:
    """(issue #36) verdict.csv and the head of verdict.md carry the per-training-seed pattern (one trained pair each,
    paired by run) beside the across-seed one: each metric separates 3 of 3 pairs; recomputed from runs.csv."""
    import pandas as pd

    from ganeval.results import compare_runs
    from ganeval.results.verdict import split_verdict
    from ganeval.studies.stored import read_runs

    src = REFERENCE / "torus"
    per_seed = compare_runs(read_runs(src), 0.99)
    v = pd.read_csv(src / "verdict.csv").set_index("metric")
    for m, g in per_seed.groupby("metric"):
        apart = int(((g.ci_low > 0) | (g.ci_high < 0)).sum())
        assert (v.loc[m, "seed_pairs_separating"], v.loc[m, "seed_pairs"]) == (apart, len(g)) == (3, 3)
    head = split_verdict((src / "verdict.md").read_text())[0]
    assert head[1].startswith("torus: good vs bad per training seed") and "in 0 of 3" in head[1]
