"""`ganeval-score`: the same numbers as the metric functions (full sets), as `ganeval.evaluate` and as the Hydra
app (the subsample protocol); folder, .npy, .npz and dataset-name inputs; --json; --out; errors before work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from apphelp import run_inprocess
from ganeval.metrics import fid, imd, kid
from ganeval.app.score_print import significant_decimals
from ganeval.app.score import main

OPTS = ["--option", "imd.nv=20", "--option", "kid.subsets=10", "--option", "kid.subset_size=100", "--quiet"]
METRICS = {"imd": {"nv": 20}, "fid": {}, "kid": {"subsets": 10, "subset_size": 100}}


@pytest.fixture()
def sets(tmp_path: Path) -> dict[str, Path]:
    """A real .npy (300×8), a generated .npy (250×8) and a generated .npz (280×8), float32 features."""
    rng = np.random.default_rng(0)
    real = rng.normal(size=(300, 8)).astype(np.float32)
    fake = (rng.normal(size=(250, 8)) + 0.3).astype(np.float32)
    other = (rng.normal(size=(280, 8)) * 1.2).astype(np.float32)
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    np.savez(tmp_path / "other.npz", feats=other)
    return {"real": tmp_path / "real.npy", "fake": tmp_path / "fake.npy", "other": tmp_path / "other.npz"}


def score_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    """Run ganeval-score with --json in-process; stdout must be one JSON document and nothing else."""
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def by_model(doc: dict) -> dict[tuple[str, str], dict]:
    return {(r["model"], r["metric"]): r for r in doc["results"]}


@pytest.mark.parametrize("seed", [0, 3])
def test_full_sets_equal_the_metric_functions(sets, capsys, seed) -> None:  # type: ignore[no-untyped-def]
    doc = score_json([str(sets["real"]), str(sets["fake"]), str(sets["other"]), *OPTS, "--seed", str(seed)], capsys)
    real, fake = np.load(sets["real"]), np.load(sets["fake"])
    other = np.load(sets["other"])["feats"]
    got = by_model(doc)
    assert doc["mode"] == "full sets" and doc["features"] == {"name": "identity"}  # features default for arrays
    assert [f["model"] for f in doc["fakes"]] == ["fake", "other"] and doc["real"]["rows"] == 300
    for name, y in (("fake", fake), ("other", other)):  # each FAKE on its own, every metric seeded by --seed
        assert got[(name, "imd")]["value"] == imd(real, y, nv=20, seed=seed)
        assert got[(name, "fid")]["value"] == fid(real, y)
        mean, std = kid(real, y, subsets=10, subset_size=100, seed=seed)
        assert got[(name, "kid")]["value"] == mean and got[(name, "kid")]["std"] == std
    assert got[("fake", "fid")]["value"] > 0.1  # a shift of 0.3 in 8 dimensions: FID ≈ 8 × 0.09


def test_protocol_equals_evaluate_and_the_hydra_app(sets, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from ganeval.protocol.api import evaluate_detailed
    from ganeval.results.collate import collate

    out = tmp_path / "jobs" / "score"
    doc = score_json([str(sets["real"]), str(sets["fake"]), *OPTS, "--runs", "3", "--sample-size", "100",
                      "--out", str(out), "--no-plots"], capsys)
    real, fake = np.load(sets["real"]), np.load(sets["fake"])
    lib = evaluate_detailed(real, {"fake": fake}, runs=3, sample_size=100, metrics=METRICS, seed=0, progress=False)
    runs = pd.read_csv(out / "runs.csv")
    merged = runs.merge(lib.runs, on=["run", "model", "metric"], suffixes=("", "_lib"))
    assert len(merged) == 9 and (merged["value"] == merged["value_lib"]).all()
    for r in doc["results"]:
        row = lib.summary[(lib.summary.model == r["model"]) & (lib.summary.metric == r["metric"])].iloc[0]
        assert r["mean"] == row["mean"] and r["half_width"] == row["half_width"] and r["n_runs"] == 3

    hydra_out = tmp_path / "hydra"
    run_inprocess(["experiment=benchmark", "data=array", f"data.path={sets['real']}", "generator=samples",
                   f"generator.path={sets['fake']}", "features=identity", "sample_size=100", "runs=3",
                   "metrics.imd.nv=20", "metrics.kid.subsets=10", "metrics.kid.subset_size=100", "progress=false",
                   "plots=false", f"results_dir={hydra_out}", f"cache_dir={tmp_path / 'cache'}"])
    hydra = pd.read_csv(hydra_out / "runs.csv")
    both = runs.merge(hydra, on=["run", "model", "metric"], suffixes=("", "_hydra"))
    assert len(both) == 9 and (both["value"] == both["value_hydra"]).all()

    for f in ("runs.csv", "runs.meta.json", "summary.csv", "summary.json", "table.md", "table.tex", "report.html"):
        assert (out / f).is_file(), f
    record = json.loads((out / "summary.json").read_text())
    assert record["command"].startswith("ganeval-score ") and "--sample-size 100" in record["command"]
    assert record["experiment"] == "score" and record["extractor"] == {"name": "identity"}
    assert set(collate(out.parent).model) == {"fake"}  # ganeval-collate reads the directory


def test_full_sets_with_out_store_one_run(sets, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "full"
    doc = score_json([str(sets["real"]), str(sets["fake"]), *OPTS, "--out", str(out), "--no-plots"], capsys)
    runs = pd.read_csv(out / "runs.csv")
    summary = pd.read_csv(out / "summary.csv")
    assert (runs.run == 0).all() and len(runs) == 4 and (summary.n_runs == 1).all()  # imd, imd:se, fid, kid
    for r in doc["results"]:
        stored = runs[(runs.model == r["model"]) & (runs.metric == r["metric"])].value.iloc[0]
        assert stored == r["value"]
        if r["metric"] == "imd":
            assert runs[(runs.model == r["model"]) & (runs.metric == "imd:se")].value.iloc[0] == r["se"] > 0
    assert "no interval" in json.loads((out / "summary.json").read_text())["interval_covers"]
    # the same call again resumes from runs.csv (nothing to compute) and prints the same values
    again = score_json([str(sets["real"]), str(sets["fake"]), *OPTS, "--out", str(out), "--no-plots"], capsys)
    assert [r["value"] for r in again["results"]] == [r["value"] for r in doc["results"]]


def _digit_pngs(folder: Path, images: np.ndarray) -> None:
    from PIL import Image

    folder.mkdir(parents=True)
    for i, im in enumerate(images):
        Image.fromarray(im[0]).save(folder / f"{i:04d}.png")


def test_folders_npz_images_and_dataset_names(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from ganeval.data import digits, folder
    from ganeval.features import extract

    d = digits(size=32)  # uint8 N×1×32×32, what `data=digits` loads
    _digit_pngs(tmp_path / "a", d[:150])
    np.savez(tmp_path / "b.npz", images=d[150:330])
    # KID only: FID of 1024-d pixels costs seconds per call and is checked on features above
    args = ["digits", str(tmp_path / "a"), str(tmp_path / "b.npz"), "--features", "pixels", "--metrics", "kid",
            "--option", "kid.subsets=5", "--option", "kid.subset_size=100", "--quiet"]
    doc = score_json(args, capsys)
    got = by_model(doc)
    assert doc["real"] == {"input": "digits", "rows": 1797} and doc["features"]["name"] == "pixels"
    real = extract(d, "pixels", progress=False)
    a = extract(folder(tmp_path / "a"), "pixels", progress=False)
    b = extract(d[150:330], "pixels", progress=False)
    assert got[("a", "kid")]["value"] == kid(real, a, subsets=5, subset_size=100, seed=0)[0]
    assert got[("b", "kid")]["value"] == kid(real, b, subsets=5, subset_size=100, seed=0)[0]
    assert got[("a", "kid")]["value"] != got[("b", "kid")]["value"]


def test_plain_output_one_line_per_fake_and_metric(sets, capsys) -> None:  # type: ignore[no-untyped-def]
    args = [str(sets["real"]), str(sets["fake"]), str(sets["other"]), *OPTS]
    doc = score_json(args, capsys)
    assert main(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    # feature arrays: FID on features of unknown origin, named as every file names it
    assert [ln.split()[:2] for ln in lines] == [[m, label] for m in ("fake", "other")
                                                for label in ("IMD", "FD_features", "KID")]
    for line, r in zip(lines, doc["results"]):
        if r["metric"] == "imd":  # to the decimal of its standard error's first significant digit
            decimals = significant_decimals(r["se"], r["value"])
            assert line.split()[2:5] == [f"{r['value']:.{decimals}f}", "±", f"{r['se']:.2g}"]
            assert "standard error" in line
        else:
            assert float(line.split()[2]) == pytest.approx(r["value"], rel=1e-5)  # printed to 6 significant digits
    assert "std over subsets" in lines[2]
    args = [str(sets["real"]), str(sets["fake"]), *OPTS, "--runs", "3", "--sample-size", "100"]
    assert main(args) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.split()[:2] == ["fake", "IMD"] and "±" in line and "99% CI over 3 runs of 100" in line
    mean, half = line.split()[2], line.split()[4]  # the mean to its interval's precision: half-width to 2 digits
    decimals = len(half.partition(".")[2])
    assert len(mean.partition(".")[2]) == decimals, line
    assert len(half.replace(".", "").lstrip("0")) == 2 if decimals else float(half) >= 10, line


@pytest.mark.slow
def test_inception_is_the_default_for_images(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ganeval.data import digits
    from ganeval.features import extract
    from ganeval.features import inception as inc

    weights = inc.save_random_weights(tmp_path / "random_inception.pth", seed=0)
    d = digits(size=32)
    np.save(tmp_path / "r.npy", d[:6])
    np.save(tmp_path / "f.npy", d[6:12])
    got = by_model(score_json([str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), "--weights", str(weights),
                               "--metrics", "fid", "--quiet", "--batch-size", "6"], capsys))
    feats = extract(d[:12], "inception", weights=weights, batch_size=6, progress=False)  # the same two batches
    assert got[("f", "fid")]["value"] == fid(feats[:6], feats[6:])
    # and without weights, offline: a clear error before any extraction
    monkeypatch.setattr("torch.hub.get_dir", lambda: str(tmp_path / "hub"))
    monkeypatch.delenv(inc.WEIGHTS_ENV, raising=False)
    assert main([str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), "--metrics", "fid", "--no-download", "--quiet"]) == 2
    assert "weights" in capsys.readouterr().err.lower()


@pytest.fixture()
def no_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any feature is extracted (errors must come before that)."""
    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("features were extracted before the error")

    monkeypatch.setattr("ganeval.features.extract_with_info", boom)


def _error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*args, "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


@pytest.mark.parametrize("make, extra, match", [
    (None, ["nosuch/dir"], "nosuch/dir does not exist"),
    (None, ["nosuchname"], "not a dataset name; .* digits"),
    (("w.npy", lambda: np.zeros((300, 16), np.float32)), ["--metrics", "imd,fid,kid"],
     "need features of one dimension.*8.*16"),
    (("s.npy", lambda: np.ones((50, 8), np.float32)), [], "FAKE .*s.npy has 50 rows, fewer than KID's subset_size=100"),
    (None, ["--runs", "3"], "--sample-size"),
    (None, ["--runs", "3", "--sample-size", "260"], "--sample-size 260 is larger than FAKE .*fake.npy"),
    (None, ["--features", "pixels"], "--features pixels extracts features from images"),
    (("img.npy", lambda: np.zeros((300, 1, 8, 8), np.uint8)), [], "holds images but .* holds features"),
    (("amb.npy", lambda: np.full((300, 3, 4, 4), 7.0, np.float32)), [], "neither images .* nor N×D features"),
    (("five.npy", lambda: np.zeros((300, 2, 2, 2, 2), np.float32)), [], "neither N×D features nor images"),
    (None, ["--metrics", "imd,nope"], "unknown metric 'nope'"),
    (None, ["--option", "prdc.k=3"], "prdc is not among --metrics"),
    (None, ["--option", "kid.subset_size=1.5"], "subset_size must be an integer"),
])
def test_bad_input_fails_before_extraction(sets, tmp_path, capsys, no_extraction, make, extra, match) -> None:  # type: ignore[no-untyped-def]
    real = str(sets["real"])
    fakes = [str(sets["fake"])]
    if make is not None:
        name, build = make
        np.save(tmp_path / name, build())
        fakes = [str(tmp_path / name)]
    if extra and not extra[0].startswith("--"):
        fakes, extra = extra[:1], extra[1:]
    err = _error([real, *fakes, *OPTS, *extra], capsys)
    import re

    assert re.search(match, err), err
    assert err.startswith("ganeval-score: ") and "Traceback" not in err


def test_npz_key_picks_one_array(sets, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    fake = np.load(sets["fake"])
    np.savez(tmp_path / "two.npz", a=fake, b=fake[::-1].copy())
    err = _error([str(sets["real"]), str(tmp_path / "two.npz"), *OPTS], capsys)
    assert "holds arrays ['a', 'b']" in err and "two.npz:KEY" in err
    doc = score_json([str(sets["real"]), f"{tmp_path / 'two.npz'}:b", "--metrics", "fid", "--quiet"], capsys)
    assert doc["fakes"][0]["model"] == "two:b"
    assert doc["results"][0]["value"] == fid(np.load(sets["real"]), fake[::-1].copy())


def test_fake_given_twice_and_nan_rows(sets, tmp_path, capsys, no_extraction) -> None:  # type: ignore[no-untyped-def]
    err = _error([str(sets["real"]), str(sets["fake"]), str(sets["fake"]), *OPTS], capsys)
    assert "is given 2 times" in err
    bad = np.load(sets["fake"])
    bad[[3, 7]] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    err = _error([str(sets["real"]), str(tmp_path / "nan.npy"), *OPTS], capsys)
    assert "2 row(s) with NaN" in err and "3, 7" in err


def test_module_entry_point_prints_json_only(sets, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "ganeval.app.score", str(sets["real"]), str(sets["fake"]),
                        "--metrics", "fid", "--json"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # progress bars (if any) went to stderr
    assert doc["results"][0]["value"] == fid(np.load(sets["real"]), np.load(sets["fake"]))


def test_help_says_how_inputs_are_resolved() -> None:
    from ganeval.app.score import parser

    text = parser().format_help()
    assert "resolved in this order" in text and "digits" in text and "mnist" in text and "array" not in text.split(
        "loads it:")[1].split("\n")[0]
    assert "--runs 1 (default) scores each FAKE against REAL once on all rows" in text


def test_console_script_is_declared() -> None:
    import tomllib

    doc = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert doc["project"]["scripts"]["ganeval-score"] == "ganeval.app.score:main"


def test_pixels_fid_has_one_name_in_terminal_result_and_files(tmp_path: Path) -> None:
    """FID on pixels is FD_pixels wherever it is shown: the printed lines, print(result), the comparison sentences,
    table.md and report.html (never "FID", which names Inception's features)."""
    import re

    import ganeval
    from ganeval.data import digits

    d = digits(size=8)
    out = tmp_path / "out"
    r = ganeval.score(d[:600], {"a": d[600:900], "b": d[900:1200]}, features="pixels", metrics=["fid"], runs=3,
                      sample_size=200, out=out, plots=False, samples=False, progress=False)
    assert r is not None
    shown = {"lines": "\n".join(r.lines), "print": str(r), "table.md": (out / "table.md").read_text(),
             "report.html": (out / "report.html").read_text()}
    assert [ln.split()[1] for ln in r.lines] == ["FD_pixels", "FD_pixels"]
    for where, text in shown.items():
        assert "FD_pixels" in text or "FD\\_pixels" in text, where
        assert not re.search(r"\bFID\b", text.replace("FID Inception", "")), (where, text[:2000])
