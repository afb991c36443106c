"""`ganeval.score`: every input kind `ganeval-score` takes, from Python (paths, arrays, tensors, reference files,
dataset names, generator callables), its result (`.to_dict()` equal to `--json`, `.table()`, the sentences) and its
refusals (one-line ValueError before any feature is extracted)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import ganeval
from ganeval.app.score import main
from ganeval.metrics import fid, frechet_distance, kid

OPTS = ["--option", "kid.subsets=10", "--option", "kid.subset_size=100", "--quiet"]
METRICS = {"fid": {}, "kid": {"subsets": 10, "subset_size": 100}}


@pytest.fixture()
def feats(tmp_path: Path) -> dict[str, Path]:
    """A real (300×8) and two generated (250×8, 280×8) float32 feature sets as .npy files."""
    rng = np.random.default_rng(0)
    arrays = {"real": rng.normal(size=(300, 8)), "a": rng.normal(size=(250, 8)) + 0.3,
              "b": rng.normal(size=(280, 8)) * 1.2}
    for name, x in arrays.items():
        np.save(tmp_path / f"{name}.npy", x.astype(np.float32))
    return {name: tmp_path / f"{name}.npy" for name in arrays}


@pytest.fixture(scope="module")
def small_digits() -> np.ndarray:
    from ganeval.data import digits

    return digits(size=16)  # uint8 N×1×16×16


def cli_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def values(result: ganeval.app.scoring.ScoreResult) -> dict[tuple[str, str], float]:  # type: ignore[name-defined]
    return {(r["model"], r["metric"]): r.get("value", r.get("mean")) for r in result.to_dict()["results"]}


def test_to_dict_equals_the_commands_json(feats, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Full sets and the subsample protocol with --out: the document is the one `ganeval-score --json` prints."""
    args = [str(feats["real"]), str(feats["a"]), str(feats["b"])]
    doc = cli_json([*args, "--metrics", "fid,kid", *OPTS], capsys)
    got = ganeval.score(feats["real"], [feats["a"], feats["b"]], metrics=METRICS, progress=False).to_dict()
    assert got == doc and doc["mode"] == "full sets"
    cli_out, py_out = tmp_path / "cli", tmp_path / "py"
    protocol = ["--runs", "3", "--sample-size", "200", "--seed", "4", "--no-plots", "--no-samples"]
    doc = cli_json([*args, "--metrics", "imd,fid", "--option", "imd.nv=10", *protocol, "--out", str(cli_out),
                    "--quiet"], capsys)
    result = ganeval.score(str(feats["real"]), [str(feats["a"]), str(feats["b"])],
                           metrics={"imd": {"nv": 10}, "fid": None},
                           runs=3, sample_size=200, seed=4, out=py_out, plots=False, samples=False, progress=False)
    got = result.to_dict()
    assert got.pop("out") == str(py_out) and doc.pop("out") == str(cli_out)
    assert got == doc and doc["mode"] == "subsample protocol" and len(doc["results"]) == 4
    assert (py_out / "summary.json").is_file() and (py_out / "runs.csv").is_file()


def test_printed_lines_and_sentences_are_the_commands(feats, capsys) -> None:  # type: ignore[no-untyped-def]
    args = [str(feats["real"]), str(feats["a"]), str(feats["b"]), "--metrics", "fid", "--runs", "4",
            "--sample-size", "200", "--quiet"]
    assert main(args) == 0
    printed = capsys.readouterr().out.strip()
    result = ganeval.score(feats["real"], [feats["a"], feats["b"]], metrics="fid", runs=4, sample_size=200,
                           progress=False)
    assert str(result) == printed
    assert result.sentences and all(s in printed for s in result.sentences)  # a and b differ: a comparison in words
    table = result.table()
    assert list(table["model"]) == ["a", "b"] and list(table["metric"]) == ["fid", "fid"]
    assert table["mean"].tolist() == [r["mean"] for r in result.to_dict()["results"]]


def test_arrays_tensors_and_labels(feats) -> None:  # type: ignore[no-untyped-def]
    """Arrays and tensors are scored as their .npy files are; a dict labels the models, a list numbers them."""
    real, a, b = (np.load(feats[k]) for k in ("real", "a", "b"))
    result = ganeval.score(real, {"mine": a, "theirs": torch.from_numpy(b)}, metrics=METRICS, progress=False)
    got = values(result)
    assert got[("mine", "fid")] == fid(real, a) and got[("theirs", "fid")] == fid(real, b)
    assert got[("mine", "kid")] == kid(real, a, subsets=10, subset_size=100, seed=0)[0]
    doc = result.to_dict()
    assert doc["real"] == {"input": "real", "rows": 300}
    assert [f["model"] for f in doc["fakes"]] == ["mine", "theirs"]
    listed = ganeval.score(torch.from_numpy(real), [a, b], metrics="fid", progress=False)
    assert values(listed) == {("fake_0", "fid"): fid(real, a), ("fake_1", "fid"): fid(real, b)}
    one = ganeval.score(real, a, metrics=["fid"], progress=False)
    assert values(one) == {("fake", "fid"): fid(real, a)}


def _pngs(folder: Path, images: np.ndarray) -> list[Path]:
    from PIL import Image

    folder.mkdir(parents=True)
    paths = []
    for i, im in enumerate(images):
        paths.append(folder / f"{i:04d}.png")
        Image.fromarray(im[0]).save(paths[-1])
    return paths


def test_folders_zips_tars_and_dataset_names(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Image containers and a dataset name through `score`: the features are pixels of the same images."""
    from ganeval.data import digits
    from ganeval.features import extract

    d = digits(size=32)  # what the dataset name `digits` loads
    paths = _pngs(tmp_path / "a", d[:120])
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as z:
        for p in paths:
            z.write(p, p.name)
    with tarfile.open(tmp_path / "a.tar", "w") as t:
        for p in paths:
            t.add(p, p.name)
    kid_opts = {"kid": {"subsets": 5, "subset_size": 100}}
    inputs = {"folder": tmp_path / "a", "zip": tmp_path / "a.zip", "tar": str(tmp_path / "a.tar"), "array": d[:120]}
    result = ganeval.score("digits", inputs, metrics=kid_opts, features="pixels", progress=False)
    got = values(result)
    want = kid(extract(d, "pixels", progress=False), extract(d[:120], "pixels", progress=False), subsets=5,
               subset_size=100, seed=0)[0]
    assert got == {(m, "kid"): want for m in ("folder", "zip", "tar", "array")}
    assert result.to_dict()["real"] == {"input": "digits", "rows": len(d)}


def test_a_generator_callable_draws_n_generated_with_the_seed(small_digits) -> None:  # type: ignore[no-untyped-def]
    """`fn(n, seed)` is called with n_generated and the score's seed; its images are scored as the array it returns."""
    calls = []

    def generator(n: int, seed: int) -> torch.Tensor:
        calls.append((n, seed))
        rows = np.random.default_rng(seed).choice(len(small_digits), size=n, replace=False)
        return torch.from_numpy(small_digits[rows])

    result = ganeval.score(small_digits[:300], generator, metrics="fid", features="pixels", n_generated=200, seed=3,
                           progress=False)
    assert (200, 3) in calls
    drawn = generator(200, 3).numpy()
    direct = ganeval.score(small_digits[:300], drawn, metrics="fid", features="pixels", seed=3, progress=False)
    assert values(result) == {("fake", "fid"): values(direct)[("fake", "fid")]}
    assert result.to_dict()["fakes"] == [{"model": "fake", "input": "fake", "rows": 200}]


def test_a_reference_file(feats, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A pytorch-fid statistics file as REAL: FID against its moments (fid is then the default metric)."""
    real, a = np.load(feats["real"]).astype(np.float64), np.load(feats["a"]).astype(np.float64)
    mu, sigma = real.mean(0), np.cov(real, rowvar=False)
    np.savez(tmp_path / "stats.npz", mu=mu, sigma=sigma)
    result = ganeval.score(tmp_path / "stats.npz", feats["a"], progress=False)
    got = values(result)
    assert list(got) == [("a", "fid")]
    assert got[("a", "fid")] == pytest.approx(frechet_distance(mu, sigma, a.mean(0), np.cov(a, rowvar=False)), rel=1e-6)
    assert result.to_dict()["reference"]["moments_only"] is True


@pytest.fixture()
def no_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any feature is extracted (refusals come before that)."""
    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("features were extracted before the error")

    monkeypatch.setattr("ganeval.features.extract_with_info", boom)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"metrics": "fid,nope"}, "unknown metric 'nope'"),
    ({"metrics": {"kid": {"subset_sz": 3}}}, "unknown option 'subset_sz'"),
    ({"metrics": {"kid": 3}}, "options must be a mapping"),
    ({"batch_size": 0}, "batch_size must be at least 1"),
    ({"runs": 3}, "give their size with sample_size=M"),
    ({"fakes": lambda n, seed: np.zeros((n, 8, 8), np.uint8)}, "give n_generated=N"),
    ({"fakes": {"a": [[1.0, 2.0]]}}, "a is a list"),
    ({"fakes": {3: np.zeros((10, 8))}}, "non-empty strings"),
    ({"fakes": np.full((250, 8), np.nan)}, "NaN"),
    ({"features": "inception"}, "feature arrays"),
    ({"protocol": "cifar10_test_10k"}, 'protocol="cifar10_test_10k" fixes the real data'),
])
def test_bad_input_is_one_line_before_any_work(feats, no_extraction, kwargs, words):  # type: ignore[no-untyped-def]
    real = np.load(feats["real"])
    fakes = kwargs.pop("fakes", np.load(feats["a"]))
    with pytest.raises(ValueError) as e:
        ganeval.score(real, fakes, progress=False, **kwargs)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)
    assert "--" not in str(e.value) and "metrics." not in str(e.value), str(e.value)  # Python's words, not the command's


def test_import_ganeval_stays_light() -> None:
    """`ganeval.score` is loaded on first use: `import ganeval` brings in neither the app nor Hydra."""
    code = ("import sys, ganeval; assert 'ganeval.app' not in sys.modules and 'hydra' not in sys.modules; "
            "assert callable(ganeval.score) and ganeval.score.__module__ == 'ganeval.app.scoring'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
