"""The feature extractors' identities hold their weights' full SHA-256 (issue #22; Inception kept 8 hex digits,
DINOv2/CLIP 16), and what older versions wrote with the short form is still used: results folders resume (their
stored extractor "weights" must be a prefix of today's); feature-cache entries of cache format 1 are not (issue #37)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from ganeval.features import inception as inc
from ganeval.hashing import sha256_file
from ganeval.protocol.store import META_FILE, ConfigMismatchError, identity_hash, same_identity

FULL = "abcdef01" + "23456789" + "0" * 48


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random-init FID Inception weights, saved like the real file (loaded through the real loading path)."""
    return inc.save_random_weights(tmp_path_factory.mktemp("w") / "random_inception.pth", seed=0)


def _inception(weights: Path) -> inc.InceptionExtractor:
    return inc.InceptionExtractor(dims=64, weights=str(weights), resize=False, download=False)


def _age_extractor(d: Path, digits: int, where: tuple[str, ...]) -> dict:  # type: ignore[type-arg]
    """Rewrite d's runs.meta.json as an older version wrote it: the extractor identity at `where` with its weights
    hash cut to `digits` (and the config hash that identity gives); return the aged meta."""
    meta = json.loads((d / META_FILE).read_text())
    node = meta["identity"]
    for k in where:
        node = node[k]
    assert len(node["weights"]) == 64
    node["weights"] = node["weights"][:digits]
    meta["config_hash"] = identity_hash(meta["identity"])
    (d / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return meta


def test_inception_identity_holds_the_full_sha256(weights: Path) -> None:
    ex = _inception(weights)
    assert ex.identity()["weights"] == sha256_file(weights) and len(sha256_file(weights)) == 64


@pytest.mark.parametrize("stored, now, same", [
    ({"extractor": {"name": "inception", "weights": FULL[:8]}}, {"extractor": {"name": "inception", "weights": FULL}},
     True),
    ({"content": {"extractor": {"weights": FULL[:16]}}}, {"content": {"extractor": {"weights": FULL}}}, True),
    ({"features": {"weights": FULL[:8]}}, {"features": {"weights": FULL}}, True),  # ganeval-score's config
    ({"extractor": {"weights": "abcdef02"}}, {"extractor": {"weights": FULL}}, False),  # other weights
    ({"extractor": {"weights": FULL[:7]}}, {"extractor": {"weights": FULL}}, False),  # shorter than any stored form
    ({"extractor": {"weights": FULL[:8], "dims": 64}}, {"extractor": {"weights": FULL, "dims": 2048}}, False),
    ({"generator": {"weights": FULL[:8]}}, {"generator": {"weights": FULL}}, False),  # only an extractor's weights
    ({"weights": FULL[:8]}, {"weights": FULL}, False),
    ({"extractor": {"path": FULL[:8]}}, {"extractor": {"path": FULL}}, False),
    ({"extractor": {"weights": FULL}}, {"extractor": {"weights": FULL[:8]}}, False),  # now shorter: never
])
def test_same_identity_accepts_a_short_extractor_weights_hash(stored: dict, now: dict, same: bool) -> None:  # type: ignore[type-arg]
    assert same_identity(stored, now) is same


def _blocks(weights: Path) -> tuple[list, dict]:  # type: ignore[type-arg]
    from ganeval.features import extract
    from ganeval.protocol import Block

    ex = _inception(weights)
    x = np.random.default_rng(0).integers(0, 256, (24, 3, 75, 75), dtype=np.uint8)
    feats = extract(x, ex, batch_size=24, progress=False)
    return [Block(feats[:12], [({"model": "fake"}, feats[12:])])], {"extractor": ex.identity()}


def test_library_folder_with_a_short_extractor_hash_resumes(weights: Path, tmp_path: Path) -> None:
    from ganeval.protocol import Settings, run_blocks

    blocks, ident = _blocks(weights)
    d = tmp_path / "res"
    settings = Settings(runs=2, sample_size=8, metrics=("fid",), progress=False)
    run_blocks(blocks, settings, d, ident)
    meta = json.loads((d / META_FILE).read_text())
    for runs, digits in ((3, 8), (4, 16)):
        old = _age_extractor(d, digits, ("data", "extractor"))
        stored = (d / "runs.csv").read_text()
        rows = run_blocks(blocks, Settings(runs=runs, sample_size=8, metrics=("fid",), progress=False), d, ident)
        assert sorted(set(rows["run"])) == list(range(runs)) and (d / "runs.csv").read_text().startswith(stored)
        migrated = json.loads((d / META_FILE).read_text())
        assert migrated["config_hash"] != old["config_hash"]
        assert migrated["identity"]["data"] == meta["identity"]["data"]  # today's form: the full hash
    old = _age_extractor(d, 8, ("data", "extractor"))
    old["identity"]["data"]["extractor"]["weights"] = "0" * 8  # other weights under a short hash
    old["config_hash"] = identity_hash(old["identity"])
    (d / META_FILE).write_text(json.dumps(old))
    with pytest.raises(ConfigMismatchError, match="another config"):
        run_blocks(blocks, Settings(runs=5, sample_size=8, metrics=("fid",), progress=False), d, ident)
    assert json.loads((d / META_FILE).read_text()) == old  # nothing rewritten


@pytest.mark.slow
def test_ganeval_app_resumes_a_folder_with_a_short_extractor_hash(weights: Path, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    from apphelp import run_inprocess

    rng = np.random.default_rng(0)
    np.save(tmp_path / "real.npy", rng.integers(0, 256, size=(20, 3, 75, 75), dtype=np.uint8))
    np.save(tmp_path / "fake.npy", rng.integers(0, 128, size=(20, 3, 75, 75), dtype=np.uint8))
    d = tmp_path / "res"
    args = ["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
            f"generator.path={tmp_path / 'fake.npy'}", "features=inception", f"features.weights={weights}",
            "features.download=false", "features.dims=64", "features.resize=false", "sample_size=10",
            "batch_size=20", "~metrics.imd", "~metrics.kid", "progress=false", "plots=false", f"cache_dir={tmp_path / 'cache'}",
            f"results_dir={d}"]
    run_inprocess([*args, "runs=1"])
    old = _age_extractor(d, 8, ("data", "content", "extractor"))
    stored = (d / "runs.csv").read_text()
    with caplog.at_level(logging.INFO):
        run_inprocess([*args, "runs=2"])
    assert "resuming: 1 of 2" in caplog.text and (d / "runs.csv").read_text().startswith(stored)
    migrated = json.loads((d / META_FILE).read_text())
    assert migrated["identity"]["data"]["content"]["extractor"]["weights"] == sha256_file(weights)
    assert migrated["config_hash"] != old["config_hash"]
    summary = json.loads((d / "summary.json").read_text())
    assert summary["config_hash"] == migrated["config_hash"] and summary["extractor"]["weights"] == sha256_file(weights)
    report = (d / "report.html").read_text()
    assert sha256_file(weights)[:8] in report and sha256_file(weights) not in report  # stored full, shown short


def _older_entry(cache_dir: Path, content: str, identity: dict, feats: np.ndarray) -> Path:  # type: ignore[type-arg]
    """Write a feature-cache entry as ganeval's cache format 1 did: under the key of format 1 (issue #37: such an
    entry may hold another set's features, its content identity having been computed by a colliding rule)."""
    from ganeval.features import cache as fcache
    from ganeval.hashing import stable_hash

    path = fcache.cache_path(cache_dir, stable_hash({"content": content, "extractor": identity, "format": 1}, 32))
    fcache.save_cached(path, feats, {"extractor": identity, "content": content, "n": int(feats.shape[0])})
    return path


def _counting(ex: object, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the extractor's forward passes (every batch goes through `device_stage`)."""
    calls: list[int] = []
    real = ex.device_stage  # type: ignore[attr-defined]
    monkeypatch.setattr(ex, "device_stage", lambda b: calls.append(len(b)) or real(b))
    return calls


@pytest.mark.parametrize("short", [False, True])
def test_a_cache_entry_of_format_1_is_not_used(weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               short: bool) -> None:
    """(issue #37) entries of cache format 1, with today's identity or the short weights hash older versions kept,
    are never read: the features are computed and stored under today's key, the old file left alone."""
    from ganeval.features import cache as fcache
    from ganeval.features import extract_with_info
    from ganeval.hashing import StreamHasher

    x = np.random.default_rng(5).integers(0, 256, (3, 3, 75, 75), dtype=np.uint8)
    h = StreamHasher()
    h.update(x)
    ex = _inception(weights)
    identity = {**ex.identity(), "weights": sha256_file(weights)[:8]} if short else ex.identity()
    marked = np.arange(3 * 64, dtype=np.float32).reshape(3, 64)  # not the network's: would prove the entry was read
    old = _older_entry(tmp_path / "c", h.hexdigest(), identity, marked)
    before = old.read_bytes()
    calls = _counting(ex, monkeypatch)
    got, info = extract_with_info(x, ex, cache_dir=tmp_path / "c", progress=False)
    assert calls == [3] and not info["cache_hit"] and not np.array_equal(got, marked)
    assert Path(info["cache_file"]).name == f"{fcache.cache_key(h.hexdigest(), ex.identity())}.npz" != old.name
    assert old.read_bytes() == before


def _aged_reference(src: Path, dst: Path, weights: str, weights_sha256: object = "keep") -> Path:
    """`src` (a ganeval reference) with its recorded extractor "weights" replaced, as an older version wrote it."""
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays["meta"]))
    meta["extractor"]["weights"] = weights
    if weights_sha256 != "keep":
        meta["weights_sha256"] = weights_sha256
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez(dst, **arrays)
    return dst


def test_a_reference_saved_with_the_short_identity_is_accepted(weights: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from ganeval.app.score import main

    rng = np.random.default_rng(3)
    np.save(tmp_path / "real.npy", rng.integers(0, 256, (8, 3, 16, 16), dtype=np.uint8))
    np.save(tmp_path / "fake.npy", rng.integers(0, 200, (8, 3, 16, 16), dtype=np.uint8))
    common = ["--weights", str(weights), "--no-download", "--quiet", "--dims", "64",
              "--metrics", "fid", "--cache-dir", str(tmp_path / "c")]
    ref = tmp_path / "ref.npz"
    assert main(["--save-ref", str(ref), str(tmp_path / "real.npy"), *common]) == 0
    with np.load(ref) as z:
        meta = json.loads(str(z["meta"]))
    full = sha256_file(weights)
    assert meta["extractor"]["weights"] == meta["weights_sha256"] == full  # stored full, and the two agree
    capsys.readouterr()

    def score(real: Path) -> tuple[int, str, str]:
        code = main([str(real), str(tmp_path / "fake.npy"), *common, "--json"])
        out, err = capsys.readouterr()
        return code, out, err

    code, today, err = score(ref)
    assert code == 0, err
    for digits in (8, 16):  # Inception recorded 8 digits; DINOv2/CLIP 16
        code, out, err = score(_aged_reference(ref, tmp_path / f"old{digits}.npz", full[:digits]))
        assert code == 0 and json.loads(out)["results"] == json.loads(today)["results"], err
    for bad, note in ((_aged_reference(ref, tmp_path / "other.npz", "0" * 8), "other weights under a short hash"),
                      (_aged_reference(ref, tmp_path / "both.npz", full[:8], "0" * 64), "its full hash disagrees")):
        code, out, err = score(bad)
        assert code == 2 and "made by another extractor" in err, note
        assert full[:8] in err and full not in err, err  # the hash shown short


def test_report_and_paper_table_show_the_weights_hash_short() -> None:
    from ganeval.hashing import shown_extractor
    from ganeval.results.collate import _same_protocol
    from ganeval.studies.paper_table import protocol_differences

    ident = {"name": "inception", "dims": 2048, "resize": 299, "weights": FULL, "autocast": None}
    assert shown_extractor(ident) == {**ident, "weights": FULL[:8]} and shown_extractor(None) is None
    (line,) = [d for d in protocol_differences(10000, 100, 0.99, ident, None) if "weights" in d]
    assert f"Inception weights {FULL[:8]}… (not the published" in line and FULL not in line
    published = {**ident, "weights": "6726825d" + FULL[8:]}
    assert not [d for d in protocol_differences(10000, 100, 0.99, published, None) if "weights" in d]
    assert _same_protocol("extractor", {**ident, "weights": FULL[:8]}, ident)  # a job of an older version: collated
    assert not _same_protocol("extractor", {**ident, "weights": "abcdef02"}, ident)


def test_ganeval_score_out_folder_with_short_extractor_hashes_resumes(weights: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """ganeval-score's store holds the extractor identity twice (config "features", content "extractor")."""
    from ganeval.app.score import main

    rng = np.random.default_rng(0)
    np.save(tmp_path / "r.npy", rng.integers(0, 256, (12, 3, 16, 16), dtype=np.uint8))
    np.save(tmp_path / "f.npy", rng.integers(0, 200, (12, 3, 16, 16), dtype=np.uint8))
    out = tmp_path / "out"
    args = [str(tmp_path / "r.npy"), str(tmp_path / "f.npy"), "--weights", str(weights), "--no-download", "--dims",
            "64", "--metrics", "fid", "--sample-size", "8", "--out", str(out), "--quiet"]
    assert main([*args, "--runs", "2"]) == 0
    _age_extractor(out, 8, ("data", "config", "features"))
    old = _age_extractor(out, 8, ("data", "content", "extractor"))
    stored = (out / "runs.csv").read_text()
    assert main([*args, "--runs", "3"]) == 0, capsys.readouterr().err
    assert (out / "runs.csv").read_text().startswith(stored) and len((out / "runs.csv").read_text()) > len(stored)
    migrated = json.loads((out / META_FILE).read_text())
    assert migrated["config_hash"] != old["config_hash"]
    assert migrated["identity"]["data"]["config"]["features"]["weights"] == sha256_file(weights)
