"""What a newcomer meets, run the newcomer's way (issue 57): a script run as `python file.py`, a notebook executed
headless (nbclient), the command `ganeval-score`. A generator of feature rows is scored as its rows; a result shown
as a notebook cell's value is its lines (or a table), with no widget warning and no bar for rows in memory; every
refusal names the arguments of the face it came through; the report and comparison.csv give one number one name;
sets that are not generated (two languages) are headed as distances."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
             OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", **extra)
    e.pop("GANEVAL_INCEPTION_WEIGHTS", None)
    return e


def script(tmp_path: Path, text: str, **extra: str) -> subprocess.CompletedProcess:
    """`text` written to a file and run as `python file.py` in `tmp_path`."""
    (tmp_path / "user.py").write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, "user.py"], cwd=tmp_path, env=env(**extra), capture_output=True, text=True,
                          timeout=600)


def command(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """`ganeval-score ARGS` as a user types it (the console script of this environment)."""
    exe = Path(sys.executable).parent / "ganeval-score"
    return subprocess.run([str(exe), *args], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=600)


ROWS = """import numpy as np
import ganeval

def rows(n, seed):
    return np.random.default_rng(seed).normal(size=(n, 8)).astype(np.float32)
"""


def test_a_script_scores_a_generator_of_feature_rows_as_the_rows_themselves(tmp_path: Path) -> None:
    """`score(real_rows, lambda n, seed: rows(n, seed), n_generated=400)` is the score of the same rows given as an
    array (default features and features="identity"); an image extractor is refused for them in one line. Kills: the
    callable's output checked as images ("expected 400 images … got an array of shape (400, 8)")."""
    done = script(tmp_path, ROWS + """
import json
real = rows(400, 1)
drawn = ganeval.score(real, lambda n, seed: rows(n, seed), n_generated=400, metrics="fid,kid", progress=False)
named = ganeval.score(real, lambda n, seed: rows(n, seed), n_generated=400, metrics="fid,kid", features="identity",
                      progress=False)
given = ganeval.score(real, rows(400, 0), metrics="fid,kid", progress=False)
try:
    ganeval.score(real, lambda n, seed: rows(n, seed), n_generated=400, features="inception", progress=False)
    refusal = None
except ValueError as e:
    refusal = str(e)
print(json.dumps({"drawn": [drawn["fid"], drawn["kid"]], "named": [named["fid"], named["kid"]],
                  "given": [given["fid"], given["kid"]], "refusal": refusal}))
""")
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["drawn"] == out["named"] == out["given"] and out["given"][0] > 0
    assert out["refusal"].startswith('features="inception" extracts features from images, but the inputs are feature '
                                     "arrays") and 'features="identity"' in out["refusal"]
    assert "--" not in out["refusal"] and "\n" not in out["refusal"]


def test_a_pool_drawn_in_chunks_of_rows_and_of_images_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool drawn in several calls (`ganeval.gan.chunked`, over 2 GiB) is one kind: a callable answering feature rows
    to one call and images to another is refused in one line. Kills: each chunk read alone, concatenated by numpy."""
    from ganeval.gan import generators
    from ganeval.gan.chunked import Call

    def fickle(n: int, seed: int, offset: int = 0) -> np.ndarray:
        return np.zeros((n, 4), np.float32) if offset == 0 else np.zeros((n, 3, 8, 8), np.uint8)

    monkeypatch.setattr(generators, "plan", lambda n, seed, row, aware: [Call(2, seed, 0), Call(n - 2, seed, 2)])
    with pytest.raises(ValueError, match=r"one call returned feature rows and another an array of shape \(3, 3, 8, 8\)"):
        generators.CallableGenerator(fickle, points=None).sample(5, 0)


@pytest.mark.slow
def test_a_notebook_shows_a_result_as_its_lines_without_warnings_or_bars(tmp_path: Path) -> None:
    """A ScoreResult as a cell's value is what print(r) shows (text) and a table (HTML), never the dataclass with its
    arrays; nothing on stderr but the notes the user's small sets cause: no "IProgress not found" (tqdm.auto without
    ipywidgets), no bar for rows already in memory; several runs draw a text bar. Kills: the dataclass repr, tqdm.auto,
    the identity extraction's and the single run's bars."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = [ROWS + "r = ganeval.score(rows(300, 1), rows(300, 0), metrics='fid')\nr",
             "print(r)",
             "r5 = ganeval.score(rows(300, 1), {'a': rows(300, 0), 'b': rows(300, 2) * 1.1}, runs=3, sample_size=200,"
             " metrics='fid')\nr5"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    old = dict(os.environ)
    os.environ.update(env())
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    first, printed, several = nb.cells
    value = next(o for o in first.outputs if o["output_type"] == "execute_result")["data"]
    lines = "".join(o.get("text", "") for o in printed.outputs if o["output_type"] == "stream" and o["name"] == "stdout")
    assert value["text/plain"] == lines.rstrip("\n") and value["text/plain"].startswith("fake  FD_features ")
    assert "<table>" in value["text/html"] and "FD_features" in value["text/html"] and "array(" not in value["text/html"]
    assert not [o for o in first.outputs if o["output_type"] == "stream" and o["name"] == "stderr"]
    shown = next(o for o in several.outputs if o["output_type"] == "execute_result")["data"]["text/plain"]
    assert "ScoreResult(" not in shown and "99% CI over 3 runs of 200" in shown and len(shown) < 1500
    err = "".join(o.get("text", "") for c in nb.cells for o in c.outputs if o["output_type"] == "stream")
    assert "IProgress" not in err and "features[identity]" not in err and "runs:" in err  # 3 runs: a text bar


def test_refusals_from_python_speak_python(tmp_path: Path) -> None:
    """Each refusal names the arguments the caller typed: vocab= (not --vocab), features="pixels" for a misspelt
    name, torchmetrics' features_options for weights (one line, with the offline way out), the in-memory sets as the
    caller named them (real, fakes['output']), and FID refused on feature rows without advice about images. Kills:
    in_python without vocab, no did-you-mean, the torchmetrics message of five lines naming weights=, 'REAL real'."""
    done = script(tmp_path, ROWS + """
import json, numpy as np
from ganeval.torchmetrics import Protocol
real = rows(300, 1)
out = {}
def said(key, call):
    try:
        call()
        out[key] = None
    except Exception as e:
        out[key] = f"{type(e).__name__}: {e}"
said("vocab", lambda: ganeval.score(real, rows(300, 0), vocab=500))
said("pixel", lambda: ganeval.score(real, rows(300, 0), features="pixel"))
said("dims", lambda: ganeval.score(real, {"output": rows(300, 0)[:, :3]}, metrics="fid,imd"))
said("weights", lambda: Protocol(["fid"], features_options={"weights": "missing.pth"}))
said("weights=", lambda: Protocol(["fid"], weights="missing.pth"))
said("offline", lambda: Protocol(["fid"], features_options={"download": False}))
print(json.dumps(out))
""", TORCH_HOME=str(tmp_path / "torch_home"))
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for key, text in out.items():
        assert text is not None and "\n" not in text and "--" not in text, (key, text)
    assert out["vocab"].endswith("but real is not one: drop vocab=")
    assert 'did you mean features="pixels"?' in out["pixel"]
    assert "real (300×8 features) gives 8 and fakes['output'] (300×3 features) gives 3" in out["dims"]
    assert out["dims"].endswith("to compare them as they are") and "image" not in out["dims"]
    for key in ("weights", "offline"):
        assert out[key].startswith("WeightsNotFoundError: no FID Inception weights (")
        assert 'pass the file with features_options={"weights": FILE}' in out[key]
        assert 'score without Inception: features="pixels"' in out[key]
    assert 'download disabled (features_options={"download": False})' in out["offline"]
    assert out["weights="] == "ValueError: weights= is an option of the extractor: give features_options={'weights': ...}"


def test_refusals_of_the_command_speak_its_flags(tmp_path: Path) -> None:
    """The command's words: --vocab 5000 (not vocab=5000), --features pixels for a misspelt name, no advice about
    images for word vectors of two dimensions. Kills: FLAG_WORDS without vocab."""
    for lang, dim in (("en", 6), ("fr", 4)):
        rows = np.random.default_rng(dim).normal(size=(40, dim))
        (tmp_path / f"{lang}.vec").write_text(f"40 {dim}\n" + "".join(
            f"{lang}{i} " + " ".join(f"{x:.4f}" for x in v) + "\n" for i, v in enumerate(rows)), encoding="utf-8")
    vocab = command(tmp_path, "en.vec", "fr.vec", "--vocab", "5000", "--metrics", "imd")
    assert vocab.returncode == 2 and vocab.stderr.strip().endswith("fewer than --vocab 5000"), vocab.stderr
    fid = command(tmp_path, "en.vec", "fr.vec", "--metrics", "fid")
    assert fid.returncode == 2 and "REAL en.vec (40×6 features) gives 6 and FAKE fr.vec (40×4 features) gives 4" in \
        fid.stderr and fid.stderr.strip().endswith("to compare them as they are"), fid.stderr
    pixel = command(tmp_path, "en.vec", "fr.vec", "--features", "pixel")
    assert pixel.returncode == 2 and "(did you mean --features pixels?)" in pixel.stderr


def test_a_mistyped_flag_is_refused_before_torch_is_imported() -> None:
    """`ganeval-score a b --bogus` answers from the flags alone: torch and the extractors are never imported (they
    took 4–5 s before the refusal). Kills: the full parser (the extractor registry) built first, and the torchrun
    group module imported by `main`."""
    code = ("import sys\nfrom ganeval.app.score import main\ntry:\n    rc = main(['a', 'b', '--bogus'])\n"
            "except SystemExit as e:\n    rc = e.code\nprint(rc, 'torch' in sys.modules, 'ganeval.features' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["2", "False", "False"], done.stdout + done.stderr
    assert "unrecognized arguments: --bogus" in done.stderr
    typo = subprocess.run([sys.executable, "-c", code.replace("'--bogus'", "'--sampel-size', '5'")], env=env(),
                          capture_output=True, text=True, timeout=120)
    assert "(did you mean --sample-size?)" in typo.stderr and typo.stdout.split()[1] == "False"


@pytest.mark.slow
def test_the_reports_smallest_detectable_is_comparison_csvs_mde_holm(tmp_path: Path) -> None:
    """table.md's "smallest detectable" (the Holm level of the comparisons made together) is comparison.csv's
    `mde_holm`, named there; `mde` is the one-comparison number. Kills: the text computing a number no file holds."""
    rng = np.random.default_rng(0)
    for name, shift in (("real", 0.0), ("a", 0.3), ("b", 0.5)):
        np.save(tmp_path / f"{name}.npy", (rng.normal(size=(300, 4)) + shift).astype(np.float32))
    done = command(tmp_path, "real.npy", "a.npy", "b.npy", "--runs", "4", "--sample-size", "150", "--metrics",
                   "fid,kid", "--out", "res", "--quiet")
    assert done.returncode == 0, done.stderr
    comparison = pd.read_csv(tmp_path / "res" / "comparison.csv")
    assert {"mde", "mde_holm"} <= set(comparison.columns)
    assert (comparison["mde_holm"] > comparison["mde"]).all()  # 2 tests: the stricter level needs more
    table = (tmp_path / "res" / "table.md").read_text()
    assert "comparison.csv: mde_holm, where mde is at 99% for one comparison alone" in table
    for _, r in comparison.iterrows():
        scale = 1e3 if r["metric"] == "kid" else 1.0
        assert f"smallest detectable {r['mde_holm'] * scale:.3g} (4 runs)" in table


@pytest.mark.slow
def test_two_languages_are_headed_as_distances_not_generators(tmp_path: Path) -> None:
    """IMD between two word-vector files: the table says distances and closer, the report calls the second a set,
    not a generator, and the summary panel is headed "(distance)", not "lower is better". Kills: the headings of a
    generator's score on sets that are not generated."""
    for lang, dim in (("en", 6), ("fr", 4)):
        rows = np.random.default_rng(dim).normal(size=(60, dim))
        (tmp_path / f"{lang}.vec").write_text(f"60 {dim}\n" + "".join(
            f"{lang}{i} " + " ".join(f"{x:.4f}" for x in v) + "\n" for i, v in enumerate(rows)), encoding="utf-8")
    done = command(tmp_path, "en.vec", "fr.vec", "--metrics", "imd", "--out", "res", "--quiet")
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "res" / "table.md").read_text()
    assert "Distances between the real set and each given set" in table and "Lower is better" not in table
    report = (tmp_path / "res" / "report.html").read_text()
    assert "set fr" in report and "generator fr" not in report
    assert "(distance)" in report and "is better)" not in report
