"""Identities hold full SHA-256 content hashes (issue #22; they were cut to 8 or 16 hex digits), and a results folder
written with the short ones still resumes: its stored hashes must be prefixes of today's, everything else equal."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ganeval.protocol.store import META_FILE, ConfigMismatchError, identity_hash, same_identity

RNG = np.random.default_rng(0)
REAL, FAKE = RNG.normal(size=(120, 4)).astype(np.float32), RNG.normal(size=(120, 4)).astype(np.float32)


def _shorten(obj, length: int):  # type: ignore[no-untyped-def]
    """The identity as an older ganeval stored it: every "...sha256" hex value cut to `length` digits."""
    if isinstance(obj, dict):
        return {k: (v[:length] if k.endswith("sha256") and isinstance(v, str) else _shorten(v, length))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_shorten(v, length) for v in obj]
    return obj


def _age(d: Path, length: int) -> dict:  # type: ignore[type-arg]
    """Rewrite d's runs.meta.json as an older version wrote it (short hashes, their config hash); return it."""
    meta = json.loads((d / META_FILE).read_text())
    old = _shorten(meta["identity"], length)
    meta.update(identity=old, config_hash=identity_hash(old))
    (d / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return meta


def test_generator_identities_hold_full_sha256(tmp_path: Path) -> None:
    from ganeval.gan import SampleGenerator

    np.save(tmp_path / "s.npy", np.zeros((4, 1, 8, 8), np.uint8))
    ident = SampleGenerator(tmp_path / "s.npy").identity()
    import hashlib

    assert ident["sha256"] == hashlib.sha256((tmp_path / "s.npy").read_bytes()).hexdigest()


def test_evaluate_identity_holds_full_sha256_and_a_short_hash_folder_resumes(tmp_path: Path) -> None:
    from ganeval import evaluate
    from ganeval.hashing import array_identity

    d = tmp_path / "res"
    first = evaluate(REAL, FAKE, runs=2, sample_size=60, metrics=("fid",), progress=False, results_dir=d)
    meta = json.loads((d / META_FILE).read_text())
    assert meta["identity"]["data"]["blocks"][0]["real"]["sha256"] == array_identity(REAL)["sha256"]  # 64 hex
    for runs, length in ((3, 16), (4, 8)):
        old = _age(d, length)
        stored = (d / "runs.csv").read_text()
        again = evaluate(REAL, FAKE, runs=runs, sample_size=60, metrics=("fid",), progress=False, results_dir=d)
        assert again.shape == first.shape and (d / "runs.csv").read_text().startswith(stored)  # resumed, not refused
        migrated = json.loads((d / META_FILE).read_text())
        assert migrated["config_hash"] == meta["config_hash"] != old["config_hash"]
        assert migrated["identity"] == meta["identity"] and migrated["runs_sha256"] != old["runs_sha256"]


def test_a_short_hash_that_is_not_a_prefix_is_refused(tmp_path: Path) -> None:
    from ganeval import evaluate

    d = tmp_path / "res"
    evaluate(REAL, FAKE, runs=2, sample_size=60, metrics=("fid",), progress=False, results_dir=d)
    meta = json.loads((d / META_FILE).read_text())
    old = _shorten(meta["identity"], 16)
    old["data"]["blocks"][0]["real"]["sha256"] = "0" * 16  # other data under a short hash
    meta.update(identity=old, config_hash=identity_hash(old))
    (d / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(ConfigMismatchError, match="another config"):
        evaluate(REAL, FAKE, runs=2, sample_size=60, metrics=("fid",), progress=False, results_dir=d)
    assert json.loads((d / META_FILE).read_text()) == meta  # nothing rewritten


@pytest.mark.parametrize("stored, now, same", [
    ({"sha256": "abcdef01"}, {"sha256": "abcdef01" + "2" * 56}, True),
    ({"sha256": "abcdef01"}, {"sha256": "abcdef02" + "2" * 56}, False),
    ({"sha256": "abcdef0"}, {"sha256": "abcdef01" + "2" * 56}, False),  # shorter than any stored form
    ({"path": "abcdef01"}, {"path": "abcdef01" + "2" * 56}, False),  # only content-hash keys
    ({"code_sha256": "abcdef01", "n": 1}, {"code_sha256": "abcdef01" + "2" * 56, "n": 2}, False),
    ({"a": [{"sha256": "12345678"}]}, {"a": [{"sha256": "12345678" + "0" * 56}]}, True),
    ({"sha256": "abcdef01" + "2" * 56}, {"sha256": "abcdef01"}, False),  # now shorter: never
])
def test_same_identity_accepts_only_stored_prefixes(stored: dict, now: dict, same: bool) -> None:  # type: ignore[type-arg]
    assert same_identity(stored, now) is same


@pytest.mark.slow  # over 30 s on the 2-core development machine (issue #56)
def test_ganeval_app_resumes_a_folder_with_short_hashes(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    np.save(tmp_path / "real.npy", REAL)
    np.save(tmp_path / "fake.npy", FAKE)
    d = tmp_path / "res"
    args = [sys.executable, "-m", "ganeval", "experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}",
            "generator=samples", f"generator.path={tmp_path / 'fake.npy'}", "features=identity", "sample_size=60",
            "metrics.imd.nv=10", "metrics.kid.subsets=5", "metrics.kid.subset_size=40", "progress=false",
            "plots=false", f"results_dir={d}", f"cache_dir={tmp_path / 'cache'}"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "OMP_NUM_THREADS": "1"}
    r = subprocess.run([*args, "runs=1"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    old = _age(d, 8)
    assert [len(g["sha256"]) for g in old["identity"]["data"]["content"]["generators"].values()] == [8]
    r = subprocess.run([*args, "runs=2"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "resuming: 1 of 2" in r.stderr + r.stdout, (r.stderr + r.stdout)[-2000:]
