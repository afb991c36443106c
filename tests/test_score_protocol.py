"""`ganeval-score --protocol NAME`: the Hydra app's protocols, read from the same files, fix the command's options,
REAL and the FAKE count; a departure exits 2 with one line before any input is read or extracted; the full-set FID
the protocol's papers report is printed beside ganeval's interval (checked against scipy's sqrtm formula)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

from apphelp import compose_config
from ganeval.app import score_protocol
from ganeval.app.main import config_dir
from ganeval.app.protocols import check_protocol, protocol_table
from ganeval.app.score import main, parser
from ganeval.data import sphere


def scipy_fid(x: np.ndarray, y: np.ndarray) -> float:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    d = x.mean(0) - y.mean(0)
    return float(d @ d + np.trace(s1) + np.trace(s2) - 2 * np.trace(scipy.linalg.sqrtm(s1 @ s2).real))


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([*args, "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


def refused(args: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code, _, err = run(args, capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_one_table_for_the_app_and_the_command() -> None:
    """The protocols of `ganeval-score --protocol` are the Hydra group's, with the values `protocol=NAME` composes."""
    table = protocol_table()
    assert sorted(table) == sorted(p.stem for p in (config_dir() / "protocol").glob("*.yaml"))
    for name, spec in table.items():
        assert spec["fixed"] == check_protocol(compose_config(["experiment=benchmark", f"protocol={name}"]))


@pytest.mark.parametrize("name", sorted(protocol_table()))
def test_each_protocol_sets_the_options_left_out(name: str) -> None:
    args = parser().parse_args(["REAL", "FAKE", "--protocol", name])
    spec = score_protocol.apply_protocol(args, {"real", "fakes", "protocol"})
    assert spec is not None and spec["name"] == name
    assert (args.features, args.resize, args.dims, args.seed) == ("inception", "legacy_tensorflow", 2048, 0)
    assert args.size == (256 if name == "ffhq256_50k" else None)


def test_options_given_equal_to_the_protocol_are_kept() -> None:
    argv = ["REAL", "FAKE", "--protocol", "cifar10_test_10k", "--resize", "legacy_tensorflow", "--seed", "0",
            "--features", "inception", "--runs", "20", "--sample-size", "5000"]
    args = parser().parse_args(argv)
    given = score_protocol.given_options(parser(), argv)
    assert given == {"real", "fakes", "protocol", "resize", "seed", "features", "runs", "sample_size"}
    score_protocol.apply_protocol(args, given)
    assert args.resize == "legacy_tensorflow" and args.runs == 20


@pytest.mark.parametrize("extra,words", [
    (["--resize", "clean"], ("fixes features.resize=legacy_tensorflow", "--resize clean", "drop --resize")),
    (["--seed", "3"], ("fixes --seed 0", "gives --seed 3")),
    (["--features", "dinov2"], ("fixes features._target_=ganeval.features.InceptionExtractor", "--features dinov2")),
    (["--dims", "768"], ("fixes features.dims=2048", "--dims 768")),
    (["--metrics", "imd,kid"], ("reports FID", "add fid")),
])
def test_a_departure_exits_2_in_one_line_before_reading_inputs(capsys, extra: list[str], words: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    refused(["no/such/real", "no/such/fake", "--protocol", "cifar10_train_50k", *extra], capsys,
            "--protocol cifar10_train_50k", *words)


def test_unknown_protocol_and_ffhq_size(capsys) -> None:  # type: ignore[no-untyped-def]
    refused(["r", "f", "--protocol", "cifar10_50k"], capsys, "no such protocol", "cifar10_train_50k")
    refused(["r", "f", "--protocol", "ffhq256_50k", "--size", "128"], capsys, "fixes data.size=256", "--size 128")


def test_real_must_be_the_protocols_data(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    imgs = np.random.default_rng(0).integers(0, 256, (6, 8, 8, 3), dtype=np.uint8)
    np.save(tmp_path / "imgs.npy", imgs)
    (tmp_path / "folder").mkdir()
    np.savez(tmp_path / "stats.npz", mu=np.zeros(2048), sigma=np.eye(2048))
    fake = str(tmp_path / "imgs.npy")
    refused([str(tmp_path / "stats.npz"), fake, "--protocol", "cifar10_train_50k"], capsys,
            "fixes the real data (ganeval.data.cifar10, data.train=True)", "give REAL as cifar10")
    refused([fake, fake, "--protocol", "ffhq256_50k"], capsys, "give REAL as the folder, .zip or .tar")
    refused([str(tmp_path / "folder"), fake, "--protocol", "imagenet256_adm"], capsys,
            "ganeval.data.array, data.key=arr_0", "FILE.npz:arr_0")


def test_the_fake_count_is_the_protocols(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """An ADM batch (arr_0 images + moments) is imagenet256_adm's REAL; 6 generated images are refused (50000),
    before any weights are looked for (the --weights file does not exist)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 2048))
    np.savez(tmp_path / "VIRTUAL_imagenet256_labeled.npz", arr_0=rng.integers(0, 256, (4, 256, 256, 3), dtype=np.uint8),
             mu=x.mean(0), sigma=np.cov(x, rowvar=False))
    np.save(tmp_path / "fake.npy", rng.integers(0, 256, (6, 256, 256, 3), dtype=np.uint8))  # the protocol's size
    refused([str(tmp_path / "VIRTUAL_imagenet256_labeled.npz"), str(tmp_path / "fake.npy"), "--protocol",
             "imagenet256_adm", "--weights", str(tmp_path / "none.pth"), "--no-download"], capsys,
            "fixes n_generated=50000", "has 6")


TOY = {"name": "toy", "reports": "FD of 300 generated points against 400 on the 7-sphere, one value",
       "fixed": {"data._target_": "ganeval.data.sphere", "data.n": 400, "data.dim": 8,
                 "features._target_": "ganeval.features.IdentityExtractor", "n_generated": 300, "seed": 0}}


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, np.ndarray]:
    """A protocol of the shipped ones' shape on arrays (a dataset name with the protocol's values, identity)."""
    monkeypatch.setattr(score_protocol, "protocol_table", lambda: {"toy": TOY})
    fake = (sphere(300, 8, seed=5) * 1.2 + 0.1).astype(np.float32)
    np.save(tmp_path / "fake.npy", fake)
    return {"real": sphere(n=400, dim=8, seed=0), "fake": fake, "path": tmp_path / "fake.npy"}  # type: ignore[dict-item]


@pytest.mark.parametrize("runs", [["--runs", "5", "--sample-size", "200"], []])
def test_the_full_set_fid_beside_the_interval(toy, capsys, runs: list[str]) -> None:  # type: ignore[no-untyped-def]
    expected = scipy_fid(toy["real"], toy["fake"])
    code, out, err = run(["sphere", str(toy["path"]), "--protocol", "toy", "--metrics", "fid", *runs], capsys)
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if "full sets" in ln)
    assert f"full sets {expected:.6g}" in line and "protocol toy" in line
    code, out, err = run(["sphere", str(toy["path"]), "--protocol", "toy", "--metrics", "fid", "--json", *runs], capsys)
    doc = json.loads(out)
    assert doc["real"]["rows"] == 400  # the dataset loaded with the protocol's n and dim
    entry = doc["results"][0]
    assert entry["fid_full"] == pytest.approx(expected, rel=1e-9)
    assert doc["protocol"]["protocol"] == "toy" and doc["protocol"]["column"] == "fid_full"
    if runs:
        assert entry["mean"] != entry["fid_full"] and entry["half_width"] > 0
    else:  # one value on the full sets: the same number
        assert entry["value"] == pytest.approx(entry["fid_full"], rel=1e-12)


def test_the_toy_protocol_refuses_like_the_shipped_ones(toy, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    np.save(tmp_path / "short.npy", toy["fake"][:299])
    refused(["sphere", str(tmp_path / "short.npy"), "--protocol", "toy"], capsys, "fixes n_generated=300", "has 299")
    refused(["swiss_roll", str(toy["path"]), "--protocol", "toy"], capsys, "give REAL as sphere")
    refused(["sphere", str(toy["path"]), "--protocol", "toy", "--seed", "1"], capsys, "fixes --seed 0")


def test_given_options_are_those_on_the_command_line() -> None:
    assert score_protocol.given_options(parser(), ["a", "b", "--seed", "0"]) >= {"seed"}
    assert "seed" not in score_protocol.given_options(parser(), ["a", "b"])
    assert isinstance(parser().parse_args(["a"]), argparse.Namespace)


def test_save_ref_under_a_protocol_uses_its_data_and_extractor(toy, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from ganeval.data.references import read_reference

    code, _, err = run(["sphere", "--protocol", "toy", "--save-ref", str(tmp_path / "ref.npz")], capsys)
    assert code == 0, err
    ref = read_reference(tmp_path / "ref.npz")
    assert ref is not None and ref.features is not None
    np.testing.assert_array_equal(ref.features, toy["real"])  # sphere(n=400, dim=8), as the protocol fixes it
    assert ref.meta["extractor"]["name"] == "identity"
