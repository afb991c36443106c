"""`ganeval --help`: generated from the experiment files and the schema's key help (app/schema.py), for the chosen command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from omegaconf import OmegaConf

from apphelp import compose_config
from ganeval.app.main import config_dir
from ganeval.app import help as helptext


def _help(overrides: list[str]) -> str:
    return str(compose_config(overrides).hydra.help.template)


def test_every_experiment_and_top_level_key_has_its_line() -> None:
    text = _help([])
    experiments = sorted(p.stem for p in (config_dir() / "experiment").glob("*.yaml"))
    lines = text.splitlines()
    for name in experiments:  # one line each, with a description from its file
        (line,) = [ln for ln in lines if ln.startswith(f"  {name} ")]
        assert len(line.split(None, 1)[1]) > 10, line
    keys = [k for k in OmegaConf.to_container(compose_config([]), resolve=False) if k != "hydra"]  # type: ignore[union-attr]
    described = helptext.key_descriptions()
    groups = {"data", "features", "metrics", "generator"}  # listed under "Config groups"
    assert set(keys) - groups - {"title", "generators"} <= set(described)  # quickstart's own keys are not root keys
    for key in described:
        (line,) = [ln for ln in lines if ln.startswith(f"  {key}=")]
        assert described[key][:20] in line or described[key][:20] in lines[lines.index(line) + 1]
    # Hydra fills in $APP_CONFIG_GROUPS (the console test sees it); any other `$` must come escaped for string.Template
    assert "== Config groups" in text and "$" not in text.replace("$$", "").replace("$APP_CONFIG_GROUPS", "")


def test_descriptions_come_from_the_files(tmp_path: Path) -> None:
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "new.yaml").write_text(
        "# @package _global_\n# A new experiment. Its details follow\n# on more lines.\nruns: 1\n")
    (tmp_path / "experiment" / "bare.yaml").write_text("runs: 1\n")
    assert helptext.experiment_descriptions(tmp_path) == {
        "bare": "(no description: its yaml opens with no comment)", "new": "A new experiment."}
    from ganeval.app.schema import ROOT_KEYS, RootConfig

    described = helptext.key_descriptions()  # a key's line is declared with its field, in the schema alone
    assert set(described) == set(ROOT_KEYS) - {"data", "features", "metrics", "generator"}
    assert described["sample_size"] == RootConfig.__dataclass_fields__["sample_size"].metadata["help"]
    long = "word " * 40
    assert helptext.first_sentence(long).endswith("…") and len(helptext.first_sentence(long)) <= helptext.WIDTH


def test_values_are_those_of_the_chosen_command() -> None:
    quick = _help([])
    torus = _help(["experiment=torus", "runs=7"])
    assert "  runs=30 " in quick and "  train_seeds=[0, 1, 2] " in quick
    assert "  runs=7 " in torus and "  runs=30 " not in torus and "  probe_repeats=0 " in torus


def test_console_help_lists_experiments_and_keys(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    p = subprocess.run([sys.executable, "-m", "ganeval", "--help"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "is powered by Hydra" not in p.stdout
    assert p.stdout.startswith("ganeval: IMD, FID and KID")
    assert re.search(r"\n  quickstart +Quickstart \(the default experiment\)", p.stdout)
    assert "  sample_size=1000 " in p.stdout and "dry_run=false" in p.stdout and "data: array" in p.stdout
    assert not any(tmp_path.iterdir())  # --help writes nothing


def test_a_top_level_key_is_declared_in_one_place() -> None:
    """(issue 21) The schema alone declares a top-level key (type, default, --help line): config.yaml lists none."""
    import re

    from ganeval.app.schema import HELP, ROOT_KEYS

    text = (config_dir() / "config.yaml").read_text()
    top = {m.group(1) for m in re.finditer(r"^([A-Za-z_]\w*):", text, re.M)}
    assert top == {"defaults", "hydra"}, top
    groups = {"data", "features", "metrics", "generator"}
    assert set(HELP) == set(ROOT_KEYS) - groups
    assert len(set(HELP.values())) == len(HELP)  # no key's line copied from another's
    from dataclasses import fields

    from ganeval.app.schema import RootConfig

    # a key that defaults to null says what null (unset) does; run_experiment is set by every experiment's file
    unset = [f.name for f in fields(RootConfig) if f.name in HELP and f.default is None and f.name != "run_experiment"]
    assert sorted(unset) == ["device", "n_generated", "results_dir", "train_epochs", "train_seeds"]
    for key in unset:
        assert re.search(r"\bnull\b|\bif set\b", HELP[key]), (key, HELP[key])


def test_dry_run_help_says_it_prints_the_plan_and_writes_nothing() -> None:
    """The help line of dry_run says what it does since config -> Plan: prints the plan, does no work, writes nothing."""
    line = helptext.key_descriptions()["dry_run"]
    assert "print" in line and "plan" in line and "writes nothing" in line, line
