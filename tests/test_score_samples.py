"""ganeval-score's sample grids: the seeded images of each image input, written atomically into --out (never through a
link), shown in report.html, off with --no-samples."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ganeval.app.score import main
from ganeval.app.score_samples import GRID_STREAM, fit_tiles, grid_name, sample_indices

ARGS = ["--features", "pixels", "--metrics", "fid", "--quiet", "--no-plots"]


def numbered_folder(d: Path, n: int, offset: int) -> None:
    """n 8×8 grey PNGs; image i is flat at grey level offset + i (so a tile says which image it is)."""
    d.mkdir()
    for i in range(n):
        Image.fromarray(np.full((8, 8), offset + i, dtype=np.uint8)).save(d / f"{i:03d}.png")


def tiles(path: Path, count: int) -> list[int]:
    """The grey level of each tile of a grid of 8×8 images saved at scale 2 (pad 2, so tiles every 20 px)."""
    a = np.asarray(Image.open(path))
    nrow = int(np.ceil(np.sqrt(count)))
    levels = []
    for k in range(count):
        r, q = divmod(k, nrow)
        y, x = 2 * (2 + r * 10), 2 * (2 + q * 10)
        tile = a[y:y + 16, x:x + 16]
        assert (tile == tile[0, 0]).all()  # one whole image per tile, no padding in it
        levels.append(int(tile[0, 0]))
    return levels


@pytest.fixture()
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    numbered_folder(tmp_path / "real", 40, 0)
    fake = (np.arange(100, 130, dtype=np.uint8)[:, None, None] * np.ones((1, 8, 8), np.uint8))  # N×H×W, level 100 + i
    np.save(tmp_path / "fake.npy", fake)
    return tmp_path / "real", tmp_path / "fake.npy"


def test_grids_show_the_seeded_images_of_each_input(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    real, fake = inputs
    out = tmp_path / "res"
    assert main([str(real), str(fake), *ARGS, "--seed", "3", "--out", str(out)]) == 0
    want = np.sort(np.random.default_rng([3, GRID_STREAM]).choice(40, 16, replace=False))
    assert tiles(out / "samples_0_real_real.png", 16) == list(want)  # the folder's sorted files 000.png ...
    want_f = np.sort(np.random.default_rng([3, GRID_STREAM]).choice(30, 16, replace=False))
    assert tiles(out / "samples_1_fake.png", 16) == list(100 + want_f)
    html = (out / "report.html").read_text()
    assert 'alt="samples_0_real_real.png"' in html and 'alt="samples_1_fake.png"' in html
    first = (out / "samples_1_fake.png").read_bytes()
    assert main([str(real), str(fake), *ARGS, "--seed", "3", "--out", str(out)]) == 0
    assert (out / "samples_1_fake.png").read_bytes() == first  # same seed, same grid
    assert not list(out.glob(".*.tmp"))  # atomic: no temporary file left


def test_another_seed_draws_other_images_and_small_sets_show_every_image() -> None:
    assert not np.array_equal(sample_indices(1000, 0), sample_indices(1000, 1))
    assert list(sample_indices(5, 0)) == [0, 1, 2, 3, 4]
    assert len(sample_indices(1000, 0, count=9)) == 9 and len(set(sample_indices(1000, 0))) == 16


def test_no_samples_flag_and_feature_inputs_write_none(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    real, fake = inputs
    assert main([str(real), str(fake), *ARGS, "--no-samples", "--out", str(tmp_path / "a")]) == 0
    assert not list((tmp_path / "a").glob("samples_*"))
    rng = np.random.default_rng(0)
    for name in ("r", "f"):
        np.save(tmp_path / f"{name}.npy", rng.normal(size=(50, 4)).astype(np.float32))
    assert main([str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), "--metrics", "fid", "--quiet", "--no-plots",
                 "--out", str(tmp_path / "b")]) == 0
    assert not list((tmp_path / "b").glob("samples_*"))  # features: no images to show


def test_a_link_in_the_grids_place_is_refused_not_written_through(inputs: tuple[Path, Path], tmp_path: Path,
                                                                  capsys) -> None:  # type: ignore[no-untyped-def]
    real, fake = inputs
    out = tmp_path / "res"
    out.mkdir()
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"keep")
    os.symlink(victim, out / "samples_1_fake.png")
    # a folder holding only someone's link is not ganeval's: refused as such; --overwrite reaches the link itself
    assert main([str(real), str(fake), *ARGS, "--out", str(out)]) == 2
    assert "is not empty (samples_1_fake.png)" in capsys.readouterr().err
    assert main([str(real), str(fake), *ARGS, "--out", str(out), "--overwrite"]) == 2
    assert victim.read_bytes() == b"keep" and (out / "samples_1_fake.png").is_symlink()
    err = capsys.readouterr().err
    assert "samples_1_fake.png is a symbolic link" in err and "choose another --out" in err and len(err.strip().splitlines()) == 1


def test_names_and_large_images() -> None:
    assert grid_name(0, "real_my set") == "samples_0_real_my_set.png"
    assert grid_name(2, "fake.npz:arr_0") == "samples_2_fake.npz_arr_0.png" and grid_name(1, "..") == "samples_1_set.png"
    big = np.zeros((2, 3, 512, 256), np.uint8)
    assert fit_tiles(big).shape == (2, 3, 128, 64) and fit_tiles(big[:, :, :64, :64]).shape == (2, 3, 64, 64)


def test_colour_folder_tiles_keep_their_colours(tmp_path: Path) -> None:
    from ganeval.app.score_inputs import load_input
    from ganeval.app.score_samples import write_sample_grids

    d = tmp_path / "rgb"
    d.mkdir()
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    for i, c in enumerate(colours):
        Image.fromarray(np.tile(np.array(c, np.uint8), (8, 8, 1))).save(d / f"{i}.png")
    [path] = write_sample_grids(tmp_path / "out", [load_input(str(d))], seed=0)
    a = np.asarray(Image.open(path))  # 2×2 grid at scale 2: tiles at (4, 4), (4, 24), (24, 4)
    assert [tuple(a[y, x]) for y, x in ((4, 4), (4, 24), (24, 4))] == colours
