"""ganeval-score on a new user's first try: KID's subset size adapts to small sets (with a note), refusals name the
command's flags, single values say what they are (IMD's probe noise, KID subsets that are the whole sets)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from ganeval.app.score import main
from ganeval.app.score_print import in_flags, kid_std_text, significant_decimals
from ganeval.app.score_request import KID_SUBSET_DEFAULT, default_kid_subset
from ganeval.data import folder
from ganeval.metrics import imd, kid
from ganeval.metrics.registry import Metrics


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two folders of 500 8×8 RGB PNGs (a real and a brighter generated set)."""
    root = tmp_path_factory.mktemp("imgs")
    rng = np.random.default_rng(0)
    for name, shift in (("real", 0), ("fake", 40)):
        (root / name).mkdir()
        for i in range(500):
            img = np.clip(rng.integers(0, 200, (8, 8, 3)) + shift, 0, 255).astype(np.uint8)
            Image.fromarray(img).save(root / name / f"{i:03d}.png")
    return {"real": root / "real", "fake": root / "fake"}


def test_kid_default_is_its_option_table_default() -> None:
    assert Metrics({"kid": {}})["kid"]["subset_size"] == KID_SUBSET_DEFAULT


def test_default_kid_subset_rules() -> None:
    m = {"kid": {}, "fid": {}}
    note = default_kid_subset(m, {"REAL a": 500, "FAKE b": 700}, runs=1, sample_size=None)
    assert m["kid"] == {"subset_size": 500} and "500" in note and "--option kid.subset_size" in note
    m = {"kid": {"subset_size": 100}}
    assert default_kid_subset(m, {"a": 500}, 1, None) is None and m["kid"] == {"subset_size": 100}  # user's choice
    m = {"kid": {}}
    assert default_kid_subset(m, {"a": 5000, "b": 1000}, 1, None) is None and m["kid"] == {}  # default fits
    m = {"kid": {}}
    assert "--sample-size" in default_kid_subset(m, {"a": 5000}, runs=10, sample_size=300)
    assert m["kid"] == {"subset_size": 300}
    assert default_kid_subset({"fid": {}}, {"a": 10}, 1, None) is None


def test_two_folders_of_500_score_in_one_try(folders, capsys, caplog) -> None:  # type: ignore[no-untyped-def]
    """Offline, no options but --features pixels: exit 0, the note (a warning: stderr on the command line), KID on
    subsets of 500 equal to kid() on the extractor's features."""
    from ganeval.features import PixelsExtractor, extract_with_info

    assert main([str(folders["real"]), str(folders["fake"]), "--features", "pixels", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "KID's subsets hold 500 rows" in caplog.text and "--runs 10 --sample-size" in err
    kid_line = next(ln for ln in out.splitlines() if " KID " in ln)

    ex = PixelsExtractor()
    fr, _ = extract_with_info(folder(folders["real"]), ex, progress=False)
    ff, _ = extract_with_info(folder(folders["fake"]), ex, progress=False)
    want = kid(fr, ff, subsets=100, subset_size=500, seed=0)[0]
    assert float(kid_line.split()[2]) == pytest.approx(want, rel=1e-5)
    assert "whole sets of 500" in kid_line
    # the README's protocol example works on the same folders
    assert main([str(folders["real"]), str(folders["fake"]), "--features", "pixels", "--runs", "3",
                 "--sample-size", "500", "--metrics", "fid,kid", "--quiet"]) == 0


def test_missing_weights_names_every_way_out(folders, tmp_path, monkeypatch, capsys, caplog) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("GANEVAL_INCEPTION_WEIGHTS", raising=False)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "hub"))
    assert main([str(folders["real"]), str(folders["fake"]), "--no-download", "--quiet"]) == 2
    assert "note:" not in caplog.text  # the KID subset note (500 rows) would only precede the refusal
    err = capsys.readouterr().err.strip().splitlines()
    line = err[-1]
    assert line.startswith("ganeval-score: no FID Inception weights")
    for words in ("--weights FILE", "GANEVAL_INCEPTION_WEIGHTS=FILE", "--features pixels", "--no-download"):
        assert words in line
    assert main([str(folders["real"]), str(folders["fake"]), "--weights", str(tmp_path / "nope.pth"), "--quiet"]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "nope.pth (--weights): no such file" in line and "--features pixels" in line



def test_a_weights_file_that_is_not_weights_is_one_line(folders, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """--weights naming the wrong file (here a .npy array, and a torch file holding a list): exit 2, one line
    naming the file and --weights, no traceback (torch.load's UnpicklingError used to escape)."""
    import torch

    wrong = tmp_path / "feats.npy"
    np.save(wrong, np.zeros((3, 4), dtype=np.float32))
    listed = tmp_path / "list.pth"
    torch.save([1, 2], listed)
    for path in (wrong, listed):
        assert main([str(folders["real"]), str(folders["fake"]), "--weights", str(path), "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("ganeval-score: "), err
        assert str(path) in err[0] and "--weights FILE" in err[0] and "--features pixels" in err[0], err[0]

@pytest.mark.parametrize("extra, flag", [
    (["--runs", "3", "--sample-size", "600"], "--sample-size 600"),
    (["--runs", "3", "--sample-size", "400", "--option", "kid.subset_size=500"], "--option kid.subset_size="),
    (["--option", "kid.subset_size=800"], "--option kid.subset_size=N"),
    (["--option", "imd.k=600"], "--option imd.k=N"),
])
def test_refusals_name_the_flags(folders, capsys, extra, flag) -> None:  # type: ignore[no-untyped-def]
    assert main([str(folders["real"]), str(folders["fake"]), "--features", "pixels", "--quiet", *extra]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert flag in line, line
    for key in ("sample_size", "metrics.", "lower kid.", "lower imd."):
        assert key not in line, line


def test_in_flags_rewrites_keys() -> None:
    assert in_flags("metrics.kid.subset_size=1000 exceeds sample_size=600: lower metrics.kid.subset_size or raise "
                    "sample_size") == ("--option kid.subset_size=1000 exceeds --sample-size 600: lower --option "
                                       "kid.subset_size or change --sample-size")
    assert in_flags("REAL x has 5 rows, not more than IMD's k=5 neighbours: give more rows or lower imd.k") == (
        "REAL x has 5 rows, not more than IMD's k=5 neighbours: give more rows or lower it with --option imd.k=N")
    assert in_flags("--runs must be at least 1") == "--runs must be at least 1"  # flags stay as they are
    assert in_flags("the file to write o/x.png is a symbolic link; remove the link or choose another results_dir") == (
        "the file to write o/x.png is a symbolic link; remove the link or choose another --out")
    assert in_flags("choose another results_dir or pass overwrite=true to discard them; results_dir=/x is a system "
                    "directory") == ("choose another --out or pass --overwrite to discard them; --out /x is a system "
                                     "directory")


def test_imd_digits_follow_its_standard_error(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The full-set IMD is imd(real, fake, seed) with its probes' standard error, in --json, summary.csv, runs.csv
    (the row imd:se, so a rerun that resumes prints it too) and the printed line, whose digits follow the error."""
    rng = np.random.default_rng(1)
    real, fake = rng.normal(size=(200, 6)), rng.normal(size=(180, 6)) + 0.2
    np.save(tmp_path / "r.npy", real)
    np.save(tmp_path / "f.npy", fake)
    args = [str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), "--metrics", "imd", "--option", "imd.nv=20",
            "--seed", "3", "--out", str(tmp_path / "o")]
    assert main([*args, "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    want = imd(real, fake, seed=3, nv=20)
    r = doc["results"][0]
    assert r["value"] == pytest.approx(float(want), rel=1e-9) and r["se"] == pytest.approx(want.se, rel=1e-9)
    assert "imd:se" in (tmp_path / "o" / "runs.csv").read_text()
    assert pd.read_csv(tmp_path / "o" / "summary.csv")["se"].iloc[0] == pytest.approx(want.se, rel=1e-9)
    assert main(args) == 0  # resumed from runs.csv: the error comes back from its row
    d = significant_decimals(want.se, float(want))
    assert f"{float(want):.{d}f} ± {want.se:.2g}  (the standard error of its 20 random probes)" in capsys.readouterr().out
    assert significant_decimals(2.3, 10.0) == 0 and significant_decimals(0.04, 1.0) == 2
    assert significant_decimals(0.0, 123.456) == 3  # no noise: six significant digits


def test_kid_std_text_whole_sets() -> None:
    assert "whole sets of 500" in kid_std_text(0.0, 500, {"real": 500, "fake": 500})
    assert kid_std_text(1e-4, 500, {"real": 500, "fake": 800}) == "  (std over subsets 0.0001)"


def test_a_mistyped_option_or_flag_is_one_line_naming_the_closest(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Refused before any input is read (the inputs here do not exist): exit 2, one line, the closest name."""
    missing = [str(tmp_path / "no_real"), str(tmp_path / "no_fake")]
    assert main([*missing, "--option", "kid.subset_szie=100"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["ganeval-score: --option kid.subset_szie=100: kid: unknown option 'subset_szie' (did you mean "
                   "subset_size?); options are coef0, degree, subset_size, subsets"]
    assert main([*missing, "--option", "kid.subsets=0"]) == 2
    assert "--option kid.subsets=0: --option kid.subsets must be an integer ≥ 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([*missing, "--sample-szie", "100"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "--sample-szie 100 (did you mean --sample-size?)" in err[0]
    with pytest.raises(SystemExit):
        main([*missing, "--bogus"])
    assert "did you mean" not in capsys.readouterr().err  # nothing close: no guess
    with pytest.raises(SystemExit) as e:
        main([*missing, "--features", "pixel"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "(did you mean --features pixels?)" in err[0]


def test_whole_set_note_when_every_run_draws_every_row() -> None:
    from ganeval.app.score_request import whole_set_note

    sizes = {"REAL r/": 500, "FAKE f/": 800}
    note = whole_set_note(sizes, 10, 500)
    assert note is not None and "--sample-size 500 is every row of REAL r/:" in note
    assert "the other sets" in note and "e.g. --sample-size 250" in note
    assert "REAL r/ and FAKE f/" in (whole_set_note({"REAL r/": 500, "FAKE f/": 500}, 10, 500) or "")
    assert whole_set_note(sizes, 10, 400) is None and whole_set_note(sizes, 1, None) is None


def test_score_prints_the_whole_set_note_after_its_checks(tmp_path, capsys, caplog) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    for name in ("r", "f"):
        np.save(tmp_path / f"{name}.npy", rng.normal(size=(60, 4)).astype(np.float32))
    r, f = str(tmp_path / "r.npy"), str(tmp_path / "f.npy")
    assert main([r, f, "--metrics", "fid", "--runs", "3", "--sample-size", "60", "--quiet"]) == 0
    assert "--sample-size 60 is every row of REAL" in caplog.text
    caplog.clear()
    capsys.readouterr()  # the scored command's own lines
    assert main([r, f, "--metrics", "fid", "--runs", "3", "--sample-size", "61", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "larger than" in err[0] and "give that set more rows" in err[0]
    assert "note:" not in caplog.text  # a refused command prints only why


def test_size_hint_only_where_size_can_work() -> None:
    from ganeval.app.score_request import size_hint

    assert size_hint(("r/", (1, 32, 32), True), ("f/", (1, 8, 8), True)) == (
        ", or --size 32 (every image file resized to 32×32, REAL's size)")
    assert size_hint(("digits", (1, 32, 32), False), ("f/", (1, 8, 8), True)) == ""  # --size refuses arrays
    assert size_hint(("r/", (3, 32, 32), True), ("f/", (1, 8, 8), True)) == ""  # channels differ: --size cannot help
    assert size_hint(("r/", (1, 32, 48), True), ("f/", (1, 8, 8), True)) == ""  # not square


def test_two_folders_of_other_sizes_name_size_and_it_works(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from PIL import Image

    rng = np.random.default_rng(0)
    for name, side in (("big", 16), ("small", 8)):
        (tmp_path / name).mkdir()
        for i in range(30):
            Image.fromarray((rng.random((side, side)) * 255).astype(np.uint8)).save(tmp_path / name / f"{i}.png")
    args = [str(tmp_path / "big"), str(tmp_path / "small"), "--features", "pixels", "--metrics", "fid", "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "FID needs features of one dimension" in err[0] and err[0].endswith(
        "or --size 16 (every image file resized to 16×16, REAL's size)")
    assert main([*args, "--size", "16"]) == 0


def test_output_piped_into_head_ends_quietly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    for name in ("r", "f"):
        np.save(tmp_path / f"{name}.npy", rng.normal(size=(40, 4)).astype(np.float32))
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"}
    p = subprocess.Popen([sys.executable, "-m", "ganeval.app.score", "r.npy", "f.npy", "--metrics", "fid", "--json",
                          "--quiet"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader is gone before anything is printed (as `| head -0`)
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 1 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_file_where_a_folder_is_expected_names_the_fix(folders, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """One image file, or a text file, given as a set: one line saying what ganeval-score reads (one image: its
    folder), not "array file must be .npy or .npz"."""
    one = folders["real"] / "000.png"
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    for arg, words in ((one, f"is one image file: give the folder that holds the images, e.g. {one.parent}"),
                       (notes, "is not a file ganeval-score reads: give an image folder")):
        assert main([str(arg), str(folders["fake"]), "--features", "pixels", "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"ganeval-score: {arg} ") and words in err[0], err


def test_layout_and_confidence_refusals_name_their_flags(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A stated --layout that does not fit and a --confidence out of range: the flag as typed, and the way out."""
    rng = np.random.default_rng(0)
    for name in ("r", "f"):
        np.save(tmp_path / f"{name}.npy", rng.integers(0, 255, (60, 8, 8, 3)).astype(np.uint8))
    sets = [str(tmp_path / "r.npy"), str(tmp_path / "f.npy")]
    assert main([*sets, "--features", "pixels", "--layout", "nchw", "--quiet"]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("ganeval-score: --layout nchw given") and "--layout nhwc" in line, line
    assert main([*sets, "--features", "pixels", "--confidence", "2", "--quiet"]) == 2
    assert capsys.readouterr().err.strip().startswith("ganeval-score: --confidence must lie strictly between 0 and 1")


def test_out_into_a_folder_of_someone_elses_files_is_refused(folders, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """--out naming a folder of the user's own files (here the real images' folder) is refused before any work, as
    the app refuses such a results_dir; --overwrite writes beside them."""
    rng = np.random.default_rng(0)
    for name in ("r", "f"):
        np.save(tmp_path / f"{name}.npy", rng.normal(size=(60, 4)).astype(np.float32))
    theirs = tmp_path / "mine"
    theirs.mkdir()
    (theirs / "table.md").write_text("my own table\n")
    args = [str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), "--metrics", "fid", "--quiet", "--out", str(theirs)]
    assert main(args) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and line.startswith(f"ganeval-score: --out {theirs} is not empty (table.md)"), line
    assert "--overwrite" in line and "results_dir" not in line, line
    assert sorted(p.name for p in theirs.iterdir()) == ["table.md"]
    assert main([*args, "--overwrite"]) == 0 and (theirs / "summary.csv").is_file()
