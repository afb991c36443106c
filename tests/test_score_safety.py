"""Issue #37 through `ganeval-score`: checks before any extraction (protocol image size, outputs that are inputs, an
unusable --cache-dir, FD∞'s sizes from the generated sets), saves that never replace a file written meanwhile, a
stopped --out run that reruns, and the Inception Score's refusal naming a --features value that exists."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ganeval.app.score import main
from ganeval.features import inception as inc


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    code = main([*args, "--quiet"])
    out, err = capsys.readouterr()
    return code, out, [line for line in err.splitlines() if line.strip()]


def refused(args: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code, _, lines = run(args, capsys)
    assert code == 2 and len(lines) == 1, lines
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def no_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any feature extraction fails the test: the refusals come before it."""
    from ganeval.features import extraction

    monkeypatch.setattr(extraction, "run_batches", lambda *a, **k: pytest.fail("features extracted"))


def images(d: Path, n: int, size: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    d.mkdir(parents=True)
    for i in range(n):
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(d / f"{i:03d}.png")
    return d


def feats(path: Path, n: int, seed: int) -> Path:
    np.save(path, np.random.default_rng(seed).standard_normal((n, 4)).astype(np.float32))
    return path


def test_a_protocol_refuses_images_of_another_size(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """(3) imagenet256_adm with a 32×32 ADM batch and 32×32 fakes: refused before extraction, naming the size."""
    no_extraction(monkeypatch)
    rng = np.random.default_rng(0)
    mu, sigma = np.zeros(2048), np.eye(2048)
    np.savez(tmp_path / "VIRTUAL_imagenet256_labeled.npz", arr_0=rng.integers(0, 256, (8, 32, 32, 3), dtype=np.uint8),
             mu=mu, sigma=sigma)
    fakes = images(tmp_path / "fakes", 4, 32)
    refused([str(tmp_path / "VIRTUAL_imagenet256_labeled.npz"), str(fakes), "--protocol", "imagenet256_adm"], capsys,
            "--protocol imagenet256_adm scores 256×256 images with 3 channels", "REAL")
    ok_real = tmp_path / "ok.npz"
    np.savez(ok_real, arr_0=rng.integers(0, 256, (2, 256, 256, 3), dtype=np.uint8), mu=mu, sigma=sigma)
    refused([str(ok_real), str(fakes), "--protocol", "imagenet256_adm"], capsys, "but FAKE", "32×32", "--size 256")


def test_an_output_that_is_an_input_is_refused_whatever_the_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """(6) --save-stats naming the FAKE input (FILE.npz:KEY's file, also by a hard link), even with --overwrite."""
    no_extraction(monkeypatch)
    real = feats(tmp_path / "real.npy", 30, 0)
    np.savez(tmp_path / "fake.npz", x=np.random.default_rng(1).standard_normal((30, 4)).astype(np.float32))
    before = (tmp_path / "fake.npz").read_bytes()
    os.link(tmp_path / "fake.npz", tmp_path / "link.npz")  # another name of the same file (a symlink is refused as one)
    for out, fake in (("fake.npz", "fake.npz:x"), ("link.npz", "fake.npz:x")):
        for flag in ("--save-stats", "--save-ref"):
            refused([str(real), str(tmp_path / fake), flag, str(tmp_path / out), "--overwrite", "--metrics", "fid"],
                    capsys, f"{flag} {tmp_path / out} is an input of this command", "never replaces an input")
    assert (tmp_path / "fake.npz").read_bytes() == before


@pytest.mark.parametrize("kind", ["file", "read-only"])
def test_an_unusable_cache_dir_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """(9) --cache-dir that is a file or cannot be written: one line naming --cache-dir, before any extraction."""
    no_extraction(monkeypatch)
    real, fake = images(tmp_path / "real", 4, 8), images(tmp_path / "fake", 4, 8, 1)
    if kind == "file":
        cache = tmp_path / "afile"
        cache.write_text("")
        words = ("--cache-dir", "is a file")
    else:
        import tempfile

        cache = tmp_path / "ro"
        cache.mkdir(mode=0o555)
        real_tempfile = tempfile.TemporaryFile

        def denied(*args, dir=None, **kwargs):  # type: ignore[no-untyped-def]  # noqa: A002 - tempfile's name
            if dir is not None and Path(dir) == cache:
                raise PermissionError(13, "Permission denied")
            return real_tempfile(*args, dir=dir, **kwargs)

        if os.geteuid() == 0:  # root writes anyway: let the probe meet what anyone else would
            monkeypatch.setattr(tempfile, "TemporaryFile", denied)
        words = ("--cache-dir", "is not writable")
    refused([str(real), str(fake), "--features", "pixels", "--cache-dir", str(cache)], capsys, *words)


def test_fd_inf_sizes_come_from_the_fake_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """(10) a 3- or 12-row FAKE is refused naming FD∞ and the FAKE; a 2-row REAL is scored (FD∞ draws from FAKE)."""
    real = feats(tmp_path / "real.npy", 30, 0)
    for n in (3, 12):
        fake = feats(tmp_path / f"fake{n}.npy", n, n)
        refused([str(real), str(fake), "--metrics", "fd_inf"], capsys, f"FAKE {fake} has {n} rows, too few for FD∞",
                "or a larger --option fd_inf.min_fraction")
    code, out, lines = run([str(feats(tmp_path / "real2.npy", 2, 5)), str(feats(tmp_path / "f40.npy", 40, 6)),
                            "--metrics", "fd_inf", "--json"], capsys)
    assert code == 0, lines
    import json

    from ganeval.metrics.fd_inf import fd_inf

    got = json.loads(out)["results"][0]["value"]
    want = fd_inf(np.load(tmp_path / "real2.npy"), np.load(tmp_path / "f40.npy"), seed=0)["value"]
    assert got == pytest.approx(want, rel=1e-9)


def test_save_with_overwrite_replaces_and_without_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """(5) the wiring of --overwrite into the new-file-only save: an existing file is replaced only with it."""
    real, fake = feats(tmp_path / "real.npy", 30, 0), feats(tmp_path / "fake.npy", 30, 1)
    (tmp_path / "s.npz").write_bytes(b"old")
    refused([str(real), str(fake), "--save-stats", str(tmp_path / "s.npz"), "--metrics", "fid"], capsys,
            "exists; remove it or pass --overwrite")
    code, _, lines = run([str(real), str(fake), "--save-stats", str(tmp_path / "s.npz"), "--overwrite", "--metrics",
                          "fid"], capsys)
    assert code == 0, lines
    with np.load(tmp_path / "s.npz") as z:
        np.testing.assert_allclose(z["mu"], np.load(real).astype(np.float64).mean(0))


def test_the_inception_score_refusal_names_a_features_value_that_works(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    imgs = images(tmp_path / "imgs", 8, 16)
    line = refused([str(imgs), str(imgs), "--features", "pixels", "--metrics", "inception_score"], capsys,
                   "--features inception_logits --metrics inception_score")
    assert "metrics=" not in line.replace("--metrics", "")
    weights = inc.save_random_weights(tmp_path / "random_inception.pth", seed=0)
    code, out, lines = run([str(imgs), str(imgs), "--features", "inception_logits", "--metrics", "inception_score",
                            "--weights", str(weights), "--option", "inception_score.splits=2", "--json"], capsys)
    assert code == 0, lines
    import json

    from ganeval.features import extract
    from ganeval.metrics.inception_score import inception_score

    got = json.loads(out)["results"][0]["value"]
    logits = extract(np.stack([np.asarray(Image.open(p)).transpose(2, 0, 1) for p in sorted(imgs.iterdir())]),
                     "inception", weights=str(weights), output="logits_unbiased", progress=False)
    assert got == pytest.approx(inception_score(logits, splits=2)[0], rel=1e-5)


AFTER_GRIDS = """
import time
from ganeval.app import score_samples
real = score_samples.write_sample_grids
def then_wait(*args, **kwargs):
    out = real(*args, **kwargs)
    time.sleep(60)  # stopped here: the grids written, nothing else
    return out
score_samples.write_sample_grids = then_wait
"""


@pytest.mark.parametrize("sig, status, words", [(signal.SIGTERM, 143, "stopped by SIGTERM"),
                                                (signal.SIGINT, 130, "stopped (Ctrl-C)")])
def test_a_run_stopped_after_its_sample_grids_reruns(tmp_path: Path, sig: int, status: int, words: str) -> None:
    """(13) --out with its sample grids written, then stopped: one line, exit 128 + signal, and the same command run
    again is not refused as a foreign folder."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(AFTER_GRIDS)
    real, fake = images(tmp_path / "real", 8, 8), images(tmp_path / "fake", 8, 8, 1)
    out = tmp_path / "out"
    args = [sys.executable, "-m", "ganeval.app.score", str(real), str(fake), "--features", "pixels", "--metrics",
            "fid", "--batch-size", "2", "--num-workers", "0", "--out", str(out), "--cache-dir", str(tmp_path / "c"),
            "--quiet", "--no-plots"]
    env = {**os.environ, "GANEVAL_CHUNK_SIZE": "2",
           "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not list(out.glob("samples_*.png")) and p.poll() is None:
        time.sleep(0.05)
    time.sleep(0.5)  # the second grid
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.strip()]
    assert p.returncode == status and len(lines) == 1 and words in lines[0] and "rerun the same command" in lines[0], err
    assert sorted(f.name for f in out.iterdir() if f.suffix == ".png")  # the grids were written
    again = subprocess.run(args[:-2] + ["--no-plots"], env={**env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert (out / "runs.csv").is_file()


def test_a_link_at_a_cache_entry_names_the_cache_not_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real, fake = images(tmp_path / "real", 6, 8), images(tmp_path / "fake", 6, 8, 1)
    args = [str(real), str(fake), "--features", "pixels", "--metrics", "fid", "--cache-dir", str(tmp_path / "c")]
    assert run(args, capsys)[0] == 0
    entries = sorted((tmp_path / "c").glob("*.npz"))
    assert entries
    copy = tmp_path / "elsewhere.npz"
    entries[0].rename(copy)
    entries[0].symlink_to(copy)
    line = refused(args, capsys, f"feature cache entry {entries[0]} is a symbolic link", "choose another --cache-dir")
    assert "--out" not in line
