"""Trained models' folders say data, model and seed; folders of the earlier layout are found and renamed."""

from __future__ import annotations

import os
from pathlib import Path

from ganeval.app.generators import model_dir, spec_key
from ganeval.hashing import stable_hash

SPEC = {"arch": "digits", "gan": "wgan_quick", "epochs": 2, "batch_size": 64, "seed": 3}


def test_name_and_key() -> None:
    key = stable_hash({"data": "digits", "model": "wgan", **SPEC}, 10)  # the key of the earlier layout, unchanged
    assert spec_key("digits", "wgan", SPEC) == key
    assert model_dir("m", "digits", "wgan", SPEC) == Path("m") / "digits" / f"digits-wgan-seed3-{key}"


def test_old_folder_renamed_once_with_its_files(tmp_path: Path) -> None:
    key = spec_key("digits", "wgan", SPEC)
    old = tmp_path / "digits" / f"wgan-{key}"
    old.mkdir(parents=True)
    (old / "checkpoint.pt").write_bytes(b"weights")
    new = model_dir(tmp_path, "digits", "wgan", SPEC)
    assert new.name == f"digits-wgan-seed3-{key}" and not old.exists()
    assert (new / "checkpoint.pt").read_bytes() == b"weights"
    assert model_dir(tmp_path, "digits", "wgan", SPEC) == new  # found again under its new name


def test_a_link_of_the_old_layout_is_used_in_place(tmp_path: Path) -> None:
    key = spec_key("digits", "wgan", SPEC)
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "digits").mkdir()
    link = tmp_path / "digits" / f"wgan-{key}"
    os.symlink(target, link)
    assert model_dir(tmp_path, "digits", "wgan", SPEC) == link and link.is_symlink()


def test_both_present_the_new_wins_and_the_old_is_left(tmp_path: Path) -> None:
    key = spec_key("digits", "wgan", SPEC)
    old = tmp_path / "digits" / f"wgan-{key}"
    new = tmp_path / "digits" / f"digits-wgan-seed3-{key}"
    old.mkdir(parents=True)
    new.mkdir()
    assert model_dir(tmp_path, "digits", "wgan", SPEC) == new and old.is_dir()


def test_stage_log_names_the_seed_and_keeps_one_time_per_model(caplog) -> None:  # type: ignore[no-untyped-def]
    import logging

    from ganeval.app.plan import Plan

    plan = Plan.__new__(Plan)
    plan.stage_seconds = {}
    with caplog.at_level(logging.INFO, logger="ganeval"):
        for seed in (0, 1):
            with Plan.stage(plan, "train digits/wgan", f"seed {seed} in models/digits/digits-wgan-seed{seed}-x"):
                pass
    assert "train digits/wgan seed 1 in models/digits/digits-wgan-seed1-x done in" in caplog.text
    assert list(plan.stage_seconds) == ["train digits/wgan"]
