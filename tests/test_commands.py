"""Every `ganeval …` command written in a config comment, the code blocks of the README and docs/ or `ganeval/app/main.py` works as
written: each is run with dry_run=true (compose + every check that needs no input's content, no work), a -m
command once per job of its sweep; `ganeval-collate` examples name the folder a sweep makes. New experiment files
are picked up by the glob. `python tests/test_commands.py` prints the list."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import RunMode
from omegaconf import open_dict

from ganeval.app.main import config_dir, run_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from apphelp import compose_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
COMMAND = re.compile(r"^(?:[A-Z_]+=\S+\s+)*ganeval(?:-collate)?(?:\s|$)")


def _joined(lines: list[str], i: int, strip: str) -> tuple[str, int]:
    """The command starting on line i with its `\\` continuation lines joined; the index of its last line."""
    text = lines[i].strip().lstrip(strip).strip()
    while text.endswith("\\") and i + 1 < len(lines):
        i += 1
        text = text[:-1].rstrip() + " " + lines[i].strip().lstrip(strip).strip()
    return text, i


def comment_commands(path: Path) -> list[tuple[str, str]]:
    """(file:line, command) of each `#   ganeval …` comment line of a yaml file."""
    out, lines, i = [], path.read_text().splitlines(), 0
    while i < len(lines):
        body = lines[i].strip()
        if body.startswith("#") and COMMAND.match(body.lstrip("#").strip()):
            start = i
            text, i = _joined(lines, i, "#")
            out.append((f"{path.relative_to(ROOT)}:{start + 1}", text))
        i += 1
    return out


def code_block_commands(path: Path, indented: bool = True) -> list[tuple[str, str]]:
    """(file:line, command) of each `ganeval …` line in a fenced or (with `indented`) 4-space indented code block."""
    out, lines, fenced, i = [], path.read_text().splitlines(), False, 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif (fenced or (indented and line.startswith("    "))) and COMMAND.match(line.strip()):
            start = i
            text, i = _joined(lines, i, "")
            out.append((f"{path.relative_to(ROOT)}:{start + 1}", text))
        i += 1
    return out


def documented_commands() -> list[tuple[str, str]]:
    """Every documented command: config comments (experiments, launchers, …), the README and docs/, the app's docstring."""
    out = [c for p in sorted(config_dir().rglob("*.yaml")) for c in comment_commands(p)]
    for page in DOC_PAGES:
        out += code_block_commands(page)
    out += code_block_commands(ROOT / "ganeval" / "app" / "main.py")
    return out


DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]  # the README, then the documentation site
COMMANDS = documented_commands()


def test_the_documented_commands_are_found() -> None:
    where = {w.split(":")[0] for w, _ in COMMANDS}
    experiments = {str(p.relative_to(ROOT)) for p in (config_dir() / "experiment").glob("*.yaml")
                   if comment_commands(p)}
    assert experiments <= where and "README.md" in where and "ganeval/app/main.py" in where
    texts = [c for _, c in COMMANDS]
    assert any(c.startswith("ganeval runs=10 train_epochs=2 sample_size=500") for c in texts)  # the smoke run
    assert any(c.startswith("ganeval-collate") for c in texts) and any(" -m " in f" {c} " for c in texts)


def split(command: str) -> tuple[dict[str, str], str, list[str]]:
    """(environment assignments, program, arguments) of a command line; a trailing `# comment` is dropped."""
    words = shlex.split(command, comments=True)
    env = {}
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    return env, words[0], words[1:]


def sweep_jobs(overrides: list[str]) -> list[list[str]]:
    """The override lists of a -m command's jobs (Hydra's basic sweeper: the product of every comma list)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    parsed = OverridesParser.create().parse_overrides(overrides)
    return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


def dry_run_job(overrides: list[str], job: int | None = None) -> dict[str, Any]:
    """Compose one job as `ganeval` would (job: its number in a sweep) and run it with dry_run=true."""
    cfg = compose_config([*overrides, "dry_run=true"])
    if job is not None:  # what a launcher sets before the job runs
        with open_dict(cfg.hydra):
            cfg.hydra.mode = RunMode.MULTIRUN
            cfg.hydra.job.num = job
            cfg.hydra.runtime.output_dir = os.path.abspath(Path(str(cfg.hydra.sweep.dir)) / str(cfg.hydra.sweep.subdir))
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]
    result = run_app(cfg)
    assert isinstance(result, dict) and result["checked"], result
    return result


def launcher_plugin_missing(overrides: list[str]) -> str | None:
    """The install hint when the command's hydra/launcher option needs a plugin not installed here, else None."""
    import importlib.util

    plugins = {"ray": ("hydra_plugins.hydra_ray_launcher", "ganeval[ray]"),
               "slurm": ("hydra_plugins.hydra_submitit_launcher", "ganeval[slurm]"),
               "submitit": ("hydra_plugins.hydra_submitit_launcher", "ganeval[slurm]")}
    for o in overrides:
        if o.startswith("hydra/launcher="):
            for word, (module, extra) in plugins.items():
                if word in o and importlib.util.find_spec(module) is None:
                    return f"{o} needs {module} (pip install {extra})"
    return None


@pytest.mark.parametrize("where,command", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_documented_command_passes_its_dry_run(where: str, command: str, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)  # results/, multirun/ and caches would go here (a dry run makes none of them)
    env, program, args = split(command)
    if "PYTHONPATH" in env:
        monkeypatch.syspath_prepend(str(tmp_path / env["PYTHONPATH"]))
    if program == "ganeval-collate":
        # the folder it is given is one a documented sweep makes: multirun/DATE/TIME by default, or the
        # results_dir a documented -m command gives
        sweep = str(compose_config([]).hydra.sweep.dir)
        given = {a.partition("=")[2] for _, c in COMMANDS if " -m " in f" {c} " for a in split(c)[2]
                 if a.startswith("results_dir=")}
        folder = args[0].rstrip("/")
        assert re.sub(r"\d", "0", folder) == re.sub(r"\d", "0", sweep) or folder in given, (folder, sweep, given)
        return
    multirun = bool({"-m", "--multirun"} & set(args))
    flags = [a for a in args if a.startswith("-") and a not in ("-m", "--multirun")]
    overrides = [a for a in args if not a.startswith("-")]
    if flags == ["--help"]:
        text = str(compose_config(overrides).hydra.help.template)
        assert "== Experiments" in text
        return
    assert not flags, f"{where}: flags {flags} are not handled by this test"
    missing = launcher_plugin_missing(overrides)
    if missing:
        pytest.skip(missing)
    if not multirun:
        dry_run_job(overrides)
        assert not any(tmp_path.iterdir())  # nothing written by the checks
        return
    jobs = sweep_jobs(overrides)
    assert len(jobs) >= 1
    for i, job in enumerate(jobs):
        result = dry_run_job(job, i)
        assert Path(result["results_dir"]).name == str(i)  # each job its own folder in the sweep's


def test_dry_run_catches_what_a_real_run_would_refuse(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    dry_run_job(["runs=10", "train_epochs=2", "sample_size=500"])  # KID's default subset fitted to 500, noted (#45)
    with pytest.raises(ValueError, match="metrics.kid.subset_size=800 exceeds sample_size=500"):
        dry_run_job(["runs=10", "train_epochs=2", "sample_size=500", "metrics.kid.subset_size=800"])  # chosen: refused
    with pytest.raises(ValueError, match="sample_size=1500 is larger than the generated pool .*n_generated"):
        dry_run_job(["sample_size=1500", "n_generated=1000", "metrics.kid.subset_size=100"])  # the data has 1797
    with pytest.raises(ValueError, match="include names \\['mnst'\\]"):
        dry_run_job(["experiment=paper_table", "include=[mnst]"])
    with pytest.raises(ValueError, match="digits/wgan.train: gan=.nosuch. is not a preset"):
        dry_run_job(["generators.wgan.train.gan=nosuch"])
    with pytest.raises(ValueError, match="data._target_=nosuch.module.load does not import"):
        dry_run_job(["data._target_=nosuch.module.load"])
    with pytest.raises(ValueError, match="dims must be one of"):
        dry_run_job(["features=inception", "features.dims=100"])
    with pytest.raises(ValueError, match="sample_size=5000 is larger than data .*n=4000"):
        dry_run_job(["experiment=torus", "sample_size=5000", "n_generated=8000", "metrics.kid.subset_size=100"])
    with pytest.raises(ValueError, match="data.path must be given|data.path=..."):
        dry_run_job(["experiment=benchmark", "data=array", "generator=samples", "generator.path=x.npy"])
    # from metadata, without loading (issue 25): the digits' 1 797 rows, a dataset absent with download=false,
    # a weights file that is not there
    with pytest.raises(ValueError, match=r"sample_size=5000 is larger than data \(1797 rows\)"):
        dry_run_job(["sample_size=5000", "n_generated=10000", "metrics.kid.subset_size=100"])
    with pytest.raises(ValueError, match=r"sample_size=1000 is larger than data \(901 rows\)"):
        dry_run_job(["data=digits_classes", "data.classes=[0,1,2,3,4]"])
    monkeypatch.setenv("GANEVAL_DATA", str(tmp_path / "nodata"))
    with pytest.raises(ValueError, match="datasets.mnist.data: the dataset is not under .*nodata/MNIST/raw"):
        dry_run_job(["experiment=paper_table", "include=[mnist]", "datasets.mnist.data.download=false"])
    with pytest.raises(Exception, match=r"none.pth \(the `weights` argument\): no such file(?s:.*)features.weights"):
        dry_run_job(["features=inception", f"features.weights={tmp_path / 'none.pth'}"])
    monkeypatch.setenv("GANEVAL_INCEPTION_WEIGHTS", str(tmp_path / "none.pth"))
    with pytest.raises(Exception, match="(?i)weights"):
        dry_run_job(["experiment=paper_table", "include=[mnist]", "features.download=false"])
    assert not (tmp_path / "nodata").exists()


def test_published_dataset_sizes_match_a_load() -> None:
    from sklearn.datasets import load_digits

    from ganeval.data.datasets import DIGITS_PER_CLASS, known_rows

    counts = np.bincount(load_digits().target)
    assert tuple(counts) == DIGITS_PER_CLASS
    assert known_rows("ganeval.data.digits_classes", {"classes": [5, 6]}) == counts[5] + counts[6]
    assert known_rows("ganeval.data.cifar10", {"train": False}) == 10000
    assert known_rows("ganeval.data.celeba", {"split": "valid", "limit": 100}) == 100
    assert known_rows("ganeval.data.folder", {"path": "x"}) is None


def test_dry_run_leaves_the_data_alone_and_names_missing_inputs(tmp_path: Path, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GANEVAL_DATA", str(tmp_path / "data"))
    result = dry_run_job(["experiment=benchmark", "data=cifar10", "features=inception", "generator=checkpoint",
                          "generator.path=models/g.pt"])
    assert result["missing_inputs"] == ["generator.path=models/g.pt"]
    assert "generator.path=models/g.pt does not exist here" in caplog.text
    assert not (tmp_path / "data").exists() and not any(tmp_path.iterdir())  # nothing downloaded or written
    assert result["results_dir"].startswith("results/benchmark/cifar10-vs-g-")


@pytest.mark.slow  # over 30 s on the 2-core development machine (issue #56)
def test_dry_run_through_the_console_command_exits_0_and_writes_no_hydra_folder(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    p = subprocess.run([sys.executable, "-m", "ganeval", "experiment=paper_table", "dry_run=true"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "the config is valid" in p.stderr + p.stdout
    assert sorted(str(f.relative_to(tmp_path)) for f in tmp_path.rglob("*")) == []  # no log, no .hydra/, no data
    p = subprocess.run([sys.executable, "-m", "ganeval", "experiment=quickstart", "sample_size=500",
                        "metrics.kid.subset_size=800", "dry_run=true"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "metrics.kid.subset_size=800 exceeds sample_size=500" in p.stderr + p.stdout


@pytest.mark.slow
def test_the_documented_smoke_run_runs(tmp_path: Path, one_torch_thread) -> None:  # type: ignore[no-untyped-def]
    """The quickstart's smoke command for real (2 epochs, 10 runs of 500), in-process."""
    from apphelp import run_inprocess

    (command,) = [c for _, c in COMMANDS if c.startswith("ganeval runs=10 train_epochs=2")][:1]
    _, _, args = split(command)
    summary = run_inprocess([*args, f"results_dir={tmp_path / 'r'}", f"models_dir={tmp_path / 'm'}",
                             f"cache_dir={tmp_path / 'c'}", "progress=false"])
    assert set(summary.metric) == {"imd", "fid", "kid"} and (summary.n_runs == 10).all()
    assert (summary.sample_size == 500).all() and (tmp_path / "r" / "table.md").exists()


def test_readme_library_example_gives_the_numbers_it_shows() -> None:
    """The documented IMD example (docs/metrics.md): imd(x, y) equals imd_from_traces with one shared generator, and the per-trace
    default seeds give the other value the docs name; its standard error, the reversed order, imd(x, x), the exact value
    and the paper's estimator's value as the docs give them."""
    import numpy as np

    from ganeval.metrics import fid, heat_trace, imd, imd_from_traces

    readme = "".join(page.read_text() for page in DOC_PAGES)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 10)).astype(np.float32)
    y = (1.2 * rng.normal(size=(1000, 10))).astype(np.float32)
    value = imd(x, y)
    g = np.random.default_rng(0)
    assert imd_from_traces(heat_trace(x, seed=g), heat_trace(y, seed=g)) == value
    separate = imd_from_traces(heat_trace(x), heat_trace(y))
    assert 0 < abs(separate - value) < 3 * value.se  # another probe draw, within its error
    others = {"imd(y, x)": f"{imd(y, x):.3f}", "exact": f"{imd(x, y, method='exact'):.3f}",
              "imd(x, x)": f"{imd(x, x):.2f}", "paper": f"{imd(x, y, variance_reduction='paper'):.3f}"}
    for number in (f"{value:.3f}", f"{value.se:.3f}", f"{separate:.3f}", f"{fid(x, y):.3f}", *others.values()):
        assert number in readme, number


if __name__ == "__main__":
    for where, command in COMMANDS:
        print(f"{where}: {command}")
