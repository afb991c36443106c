"""Reference statistics files: every layout written offline in its real key layout and read back; FID against them
equal to pytorch-fid's and clean-fid's formulas; --save-ref/--save-stats; bad files refused (exit 2, one line,
before any extraction); EDM2 pickles loaded without running code."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from ganeval.data.references import ReferenceError, read_reference, write_reference
from ganeval.app.score import main

D = 12


def feats(n: int, seed: int, shift: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, D)) @ rng.standard_normal((D, D)) * 0.3 + shift).astype(np.float32)


def moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, np.float64)
    return x.mean(0), np.cov(x, rowvar=False)


@pytest.fixture
def sets(tmp_path: Path) -> dict[str, Path]:
    real, fake = feats(300, 0), feats(200, 1, 0.2)
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    mu, sigma = moments(real)
    np.savez(tmp_path / "stats.npz", mu=mu, sigma=sigma)  # pytorch-fid's --save-stats layout
    return {"real": tmp_path / "real.npy", "fake": tmp_path / "fake.npy", "stats": tmp_path / "stats.npz"}


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def score_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code, out, err = run([*args, "--json", "--quiet"], capsys)
    assert code == 0, err
    return json.loads(out)


def refused(args: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code, out, err = run([*args, "--quiet"], capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# --- layouts, read ---------------------------------------------------------------------------------------------


def test_every_layout_is_recognised_by_its_keys(tmp_path: Path) -> None:
    x = feats(50, 2)
    mu, sigma = moments(x)
    np.savez(tmp_path / "fid_stats_cifar10_train.npz", mu=mu, sigma=sigma)  # TTUR / pytorch-fid
    np.savez(tmp_path / "cifar10_clean_train_32.npz", mu=mu, sigma=sigma)  # clean-fid's name
    np.savez(tmp_path / "cifar10_legacy_tensorflow_test_32_kid.npz", feats=x)  # clean-fid's KID features
    imgs = np.random.default_rng(0).integers(0, 256, (4, 16, 16, 3), dtype=np.uint8)
    np.savez(tmp_path / "VIRTUAL_imagenet256_labeled.npz", arr_0=imgs, mu=mu, sigma=sigma, mu_s=mu[:7],
             sigma_s=sigma[:7, :7])  # ADM's reference batch
    with open(tmp_path / "img512.pkl", "wb") as f:  # EDM2: pickle of {fid: {mu, sigma}, fd_dinov2: {mu, sigma}}
        pickle.dump({"fid": {"mu": mu, "sigma": sigma}, "fd_dinov2": {"mu": mu[:5], "sigma": sigma[:5, :5]}}, f)
    np.savez(tmp_path / "plain.npz", a=x, b=x)

    r = read_reference(tmp_path / "fid_stats_cifar10_train.npz")
    assert r.layout == "pytorch-fid" and r.moments_only and r.mode is None
    np.testing.assert_array_equal(r.moments["inception"].sigma, sigma)
    r = read_reference(tmp_path / "cifar10_clean_train_32.npz")
    assert (r.layout, r.mode, r.meta["split"], r.meta["res"]) == ("clean-fid", "clean", "train", "32")
    r = read_reference(tmp_path / "cifar10_legacy_tensorflow_test_32_kid.npz")
    assert r.layout == "clean-fid-kid" and r.mode == "legacy_tensorflow" and not r.moments_only
    np.testing.assert_array_equal(r.features, x)
    r = read_reference(tmp_path / "VIRTUAL_imagenet256_labeled.npz")
    assert r.layout == "adm" and r.images.shape == (4, 16, 16, 3)
    r = read_reference(tmp_path / "img512.pkl")
    assert r.layout == "edm2" and r.moments_only and set(r.moments) == {"inception", "dinov2"}
    np.testing.assert_array_equal(r.moments["dinov2"].mu, mu[:5])
    assert read_reference(tmp_path / "plain.npz") is None
    assert read_reference(tmp_path / "missing.npz") is None


def test_ganeval_reference_round_trips(tmp_path: Path) -> None:
    x = feats(40, 3)
    meta = {"format": "ganeval-reference", "version": 1, "extractor": {"name": "identity"}, "n": 40}
    mom = write_reference(tmp_path / "ref.npz", x, meta)
    r = read_reference(tmp_path / "ref.npz")
    assert r.layout == "ganeval" and r.meta == meta and r.space == "identity"
    np.testing.assert_array_equal(r.features, x)
    np.testing.assert_allclose(mom.mu, x.astype(np.float64).mean(0), rtol=1e-12)
    np.testing.assert_array_equal(r.moments["identity"].sigma, mom.sigma)


class Boom:
    """A pickle payload that would create a file if unpickled with the standard unpickler."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (self.path, "w"))


def test_pickles_with_other_classes_are_refused_without_running(tmp_path: Path, sets: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    victim = tmp_path / "pwned"
    mu, sigma = moments(feats(30, 4))
    with open(tmp_path / "evil.pkl", "wb") as f:
        pickle.dump({"fid": {"mu": mu, "sigma": sigma, "x": Boom(str(victim))}}, f)
    with pytest.raises(ReferenceError, match=r"would load io\.open"):
        read_reference(tmp_path / "evil.pkl")
    assert not victim.exists()
    refused([str(tmp_path / "evil.pkl"), str(sets["fake"])], capsys, "evil.pkl", "refused")
    assert not victim.exists()
    with open(tmp_path / "list.pkl", "wb") as f:
        pickle.dump([mu, sigma], f)
    refused([str(tmp_path / "list.pkl"), str(sets["fake"])], capsys, "not an EDM2 reference")


# --- scoring against moments ---------------------------------------------------------------------------------


def test_fid_against_pytorch_fid_stats_equals_pytorch_fid(sets: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    from pytorch_fid.fid_score import calculate_frechet_distance

    doc = score_json([str(sets["stats"]), str(sets["fake"])], capsys)
    (row,) = doc["results"]
    assert row["metric"] == "fid" and doc["reference"]["moments_only"] and doc["reference"]["layout"] == "pytorch-fid"
    with np.load(sets["stats"]) as z:
        want = calculate_frechet_distance(z["mu"], z["sigma"], *moments(np.load(sets["fake"])))
    assert row["value"] == pytest.approx(want, rel=1e-6)
    # the same number as scoring the real features themselves (the stats are theirs)
    direct = score_json([str(sets["real"]), str(sets["fake"]), "--metrics", "fid"], capsys)
    assert direct["results"][0]["value"] == pytest.approx(row["value"], rel=1e-9)
    code, out, _ = run([str(sets["stats"]), str(sets["fake"]), "--quiet"], capsys)
    # feature arrays of no named extractor: FD_features, as every file names it (issue #49: one name per number)
    assert code == 0 and "FD_features" in out and "against the moments of" in out


def test_fid_against_clean_fid_layout_equals_clean_fid_formula(tmp_path: Path, sets: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    from cleanfid.fid import frechet_distance

    mu, sigma = moments(np.load(sets["real"]))
    path = tmp_path / "mine_clean_custom_na.npz"  # clean-fid's make_custom_stats name (res 'na' is not a number)
    np.savez(path, mu=mu, sigma=sigma)
    doc = score_json([str(path), str(sets["fake"])], capsys)
    want = frechet_distance(mu, sigma, *moments(np.load(sets["fake"])))
    assert doc["results"][0]["value"] == pytest.approx(want, rel=1e-6)


def test_edm2_pickle_moments_by_feature_space(tmp_path: Path, sets: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    from pytorch_fid.fid_score import calculate_frechet_distance

    mu, sigma = moments(np.load(sets["real"]))
    with open(tmp_path / "ref.pkl", "wb") as f:
        pickle.dump({"fid": {"mu": mu, "sigma": sigma}}, f)
    doc = score_json([str(tmp_path / "ref.pkl"), str(sets["fake"])], capsys)
    want = calculate_frechet_distance(mu, sigma, *moments(np.load(sets["fake"])))
    assert doc["results"][0]["value"] == pytest.approx(want, rel=1e-6)


def test_runs_draw_generated_subsamples_only(sets: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    from ganeval.metrics import frechet_distance

    doc = score_json([str(sets["stats"]), str(sets["fake"]), "--runs", "3", "--sample-size", "100", "--seed", "5"],
                     capsys)
    assert "generated" in doc["interval_covers"] and "not over the real data" in doc["interval_covers"]
    fake = np.load(sets["fake"])
    with np.load(sets["stats"]) as z:
        mu, sigma = z["mu"], z["sigma"]
    values = []
    for r in range(3):
        idx = np.random.default_rng([5, r]).choice(len(fake), 100, replace=False)
        values.append(frechet_distance(mu, sigma, *moments(fake[idx])))
    assert doc["results"][0]["mean"] == pytest.approx(np.mean(values), rel=1e-9)
    assert doc["results"][0]["n_runs"] == 3


def test_metrics_needing_real_rows_are_refused_naming_what_serves(sets: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    refused([str(sets["stats"]), str(sets["fake"]), "--metrics", "imd,fid,kid"], capsys,
            "IMD, KID need the real set's features", "--save-ref", "_kid.npz")
    refused([str(sets["fake"]), str(sets["stats"])], capsys, "FAKE", "give it as REAL")


@pytest.mark.parametrize("key", ["mu", "sigma"])
def test_moments_are_never_read_as_rows(sets: dict[str, Path], capsys, key: str) -> None:  # type: ignore[no-untyped-def]
    refused([f"{sets['stats']}:{key}", str(sets["fake"])], capsys, "not feature rows")
    refused([str(sets["real"]), f"{sets['stats']}:{key}"], capsys, "not feature rows")


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    mu, sigma = moments(feats(50, 6))
    out = {}
    np.savez(tmp_path / "shapes.npz", mu=mu[:-1], sigma=sigma)
    out["shapes"] = (tmp_path / "shapes.npz", "11 entries but sigma has shape (12, 12)")
    asym = sigma.copy()
    asym[0, 1] += 1.0
    np.savez(tmp_path / "asym.npz", mu=mu, sigma=asym)
    out["asym"] = (tmp_path / "asym.npz", "not symmetric")
    nan = sigma.copy()
    nan[2, 2] = np.nan
    np.savez(tmp_path / "nan.npz", mu=mu, sigma=nan)
    out["nan"] = (tmp_path / "nan.npz", "non-finite")
    inf_mu = mu.copy()
    inf_mu[0] = np.inf
    np.savez(tmp_path / "infmu.npz", mu=inf_mu, sigma=sigma)
    out["infmu"] = (tmp_path / "infmu.npz", "non-finite")
    m2, s2 = moments(np.random.default_rng(0).standard_normal((50, 20)))
    np.savez(tmp_path / "dim20.npz", mu=m2, sigma=s2)
    out["dim"] = (tmp_path / "dim20.npz", "20-d statistics")
    return out


@pytest.mark.parametrize("case", ["shapes", "asym", "nan", "infmu", "dim"])
def test_bad_statistics_exit_2_in_one_line(tmp_path: Path, sets: dict[str, Path], capsys, case: str) -> None:  # type: ignore[no-untyped-def]
    path, words = bad_files(tmp_path)[case]
    refused([str(path), str(sets["fake"])], capsys, str(path), words)


def test_checks_come_before_extraction(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A 1024-d (DINOv2-sized) file against Inception images is refused before weights are even looked for."""
    m, s = moments(np.random.default_rng(0).standard_normal((30, 1024)) @ np.eye(1024))
    np.savez(tmp_path / "dino.npz", mu=m, sigma=s)
    imgs = np.random.default_rng(1).integers(0, 256, (4, 3, 8, 8), dtype=np.uint8)
    np.save(tmp_path / "imgs.npy", imgs)
    args = [str(tmp_path / "dino.npz"), str(tmp_path / "imgs.npy"), "--weights", str(tmp_path / "none.pth"),
            "--no-download"]
    refused(args, capsys, "1024-d statistics", "2048-d")
    # a clean-fid file made with another preprocessing mode than the one asked for
    m, s = moments(np.random.default_rng(0).standard_normal((3000, 2048)).astype(np.float32))
    np.savez(tmp_path / "cifar10_clean_train_32.npz", mu=m, sigma=s)
    refused([str(tmp_path / "cifar10_clean_train_32.npz"), *args[1:]], capsys, "'clean'", "--resize clean")


# --- written -------------------------------------------------------------------------------------------------


def test_save_stats_is_read_by_pytorch_fid(tmp_path: Path, sets: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    from pytorch_fid.fid_score import calculate_frechet_distance

    out = tmp_path / "mine.npz"
    code, _, err = run(["--save-stats", str(out), "--save-ref", str(tmp_path / "ref.npz"), str(sets["real"]),
                        "--quiet"], capsys)
    assert code == 0 and "wrote" in err
    with np.load(out) as z:  # what pytorch_fid.fid_score reads from a stats .npz
        assert set(z.files) == {"mu", "sigma"}
        theirs = calculate_frechet_distance(z["mu"], z["sigma"], *moments(np.load(sets["fake"])))
    ours = score_json([str(sets["real"]), str(sets["fake"]), "--metrics", "fid"], capsys)["results"][0]["value"]
    assert ours == pytest.approx(theirs, rel=1e-6)
    against = score_json([str(out), str(sets["fake"])], capsys)["results"][0]["value"]
    assert against == pytest.approx(ours, rel=1e-9)
    # the ganeval reference serves every metric, with the same numbers as the real set itself
    opts = ["--option", "kid.subset_size=100"]
    a = score_json([str(tmp_path / "ref.npz"), str(sets["fake"]), *opts], capsys)["results"]
    b = score_json([str(sets["real"]), str(sets["fake"]), *opts], capsys)["results"]
    assert [r["metric"] for r in a] == [r["metric"] for r in b] == ["imd", "fid", "kid"]
    for x, y in zip(a, b):
        assert x["value"] == y["value"]  # the same float32 features: the same numbers
    ref = read_reference(tmp_path / "ref.npz")
    assert ref.meta["n"] == 300 and ref.meta["extractor"] == {"name": "identity"} and ref.meta["content_hash"]
    # never replaced silently, never through a link
    refused(["--save-stats", str(out), str(sets["real"])], capsys, "exists", "--overwrite")
    os.symlink(tmp_path / "elsewhere.npz", tmp_path / "link.npz")
    refused(["--save-stats", str(tmp_path / "link.npz"), str(sets["real"])], capsys, "symbolic link")
    assert not (tmp_path / "elsewhere.npz").exists()


def test_save_reference_api_records_the_extractor(tmp_path: Path) -> None:
    import ganeval

    imgs = np.random.default_rng(2).integers(0, 256, (20, 3, 4, 4), dtype=np.uint8)
    mom = ganeval.save_reference(imgs, tmp_path / "r.npz", stats=tmp_path / "s.npz", features="pixels",
                                 progress=False)
    r = read_reference(tmp_path / "r.npz")
    assert r.layout == "ganeval" and r.meta["extractor"]["name"] == "pixels" and r.meta["n"] == 20
    assert r.features.shape == (20, 48)
    np.testing.assert_array_equal(read_reference(tmp_path / "s.npz").moments["pixels"].mu, mom.mu)  # named (#47)


@pytest.mark.slow
def test_inception_modes_through_the_command(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Images through random-weight Inception: --save-stats in clean mode is what pytorch-fid reads, FID against it
    is labelled FID (clean), and a file made in one mode is refused for another."""
    from ganeval.features import InceptionExtractor, extract
    from ganeval.features.inception import save_random_weights
    from ganeval.metrics import fid

    w = save_random_weights(tmp_path / "w.pth")
    rng = np.random.default_rng(0)
    real = rng.integers(0, 256, (8, 3, 16, 16), dtype=np.uint8)
    fake = np.clip(real.astype(int) + rng.integers(-40, 40, real.shape), 0, 255).astype(np.uint8)
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    common = ["--weights", str(w), "--no-download", "--quiet", "--batch-size", "5", "--dims", "64"]  # block 0: fast
    stats = tmp_path / "mine_clean_custom_na.npz"  # clean-fid's custom-stats name: the mode is read from it
    code, _, err = run(["--save-stats", str(stats), str(tmp_path / "real.npy"), "--resize", "clean", *common], capsys)
    assert code == 0, err
    code, out, err = run([str(stats), str(tmp_path / "fake.npy"), "--resize", "clean", *common], capsys)
    assert code == 0, err
    assert out.startswith("fake  FID (clean)")
    ex = InceptionExtractor(weights=w, resize="clean", dims=64)
    f_real = extract(real, ex, batch_size=8, device="cpu", progress=False)
    f_fake = extract(fake, ex, batch_size=8, device="cpu", progress=False)
    with np.load(stats) as z:
        np.testing.assert_allclose(z["mu"], f_real.astype(np.float64).mean(0), rtol=1e-6, atol=1e-6)
    assert float(out.split()[3]) == pytest.approx(fid(f_real, f_fake), rel=1e-5)  # printed with 6 significant digits
    refused([str(stats), str(tmp_path / "fake.npy"), *common], capsys, "'clean'", "--resize clean")


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_edm2_pickles_of_every_protocol_and_numpy_1_names(tmp_path: Path, protocol: int) -> None:
    """EDM2's files were pickled by numpy 1 (numpy.core.*); numpy 2 writes numpy._core.*: both are read."""
    import warnings

    mu, sigma = moments(feats(30, 7))
    data = pickle.dumps({"fid": {"mu": mu, "sigma": sigma}, "fd_dinov2": {"mu": mu.astype(np.float32), "sigma": sigma}},
                        protocol=protocol)
    variants = [data]
    if protocol <= 3:  # module names are text lines there: the numpy-1 spelling can be made by replacement
        variants.append(data.replace(b"numpy._core", b"numpy.core"))
    for i, v in enumerate(variants):
        (tmp_path / f"{i}.pkl").write_bytes(v)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # numpy.core is deprecated in numpy 2
            r = read_reference(tmp_path / f"{i}.pkl")
        np.testing.assert_array_equal(r.moments["inception"].sigma, sigma)
        np.testing.assert_array_equal(r.moments["dinov2"].mu, mu.astype(np.float32))


# --- issue #37: a ganeval reference that is not what ganeval wrote ------------------------------------------------


def _ganeval_ref(path: Path, x: np.ndarray, meta: object, mu: np.ndarray | None = None) -> Path:
    """A ganeval reference file as written, its `meta` and (optionally) `mu` replaced."""
    m = moments(x)
    np.savez(path, features=x, mu=m[0] if mu is None else mu, sigma=m[1], meta=np.array(json.dumps(meta)))
    return path


GOOD_META = {"format": "ganeval-reference", "version": 1, "extractor": {"name": "identity"}, "n": 40}


@pytest.mark.parametrize("meta, words", [
    (None, "its meta is JSON NoneType"),
    ([1, 2], "its meta is JSON list"),
    ("ganeval-reference", "its meta is JSON str"),
    ({**GOOD_META, "extractor": [1]}, "meta's 'extractor' must be dict"),
    ({**GOOD_META, "extractor": "identity"}, "meta's 'extractor' must be dict"),
    ({**GOOD_META, "extractor": {"name": 3}}, "extractor name must be a string"),
    ({**GOOD_META, "resize_mode": 7}, "meta's 'resize_mode' must be str"),
])
def test_a_malformed_meta_is_refused_in_one_line(tmp_path: Path, sets: dict[str, Path], capsys, meta: object,  # type: ignore[no-untyped-def]
                                                 words: str) -> None:
    path = _ganeval_ref(tmp_path / "ref.npz", feats(40, 3), meta)
    with pytest.raises(ReferenceError, match="write the reference again"):
        read_reference(path)
    refused([str(path), str(sets["fake"])], capsys, str(path), words)


def test_moments_that_disagree_with_their_features_are_refused(tmp_path: Path, sets: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    x = feats(40, 3)
    ok = _ganeval_ref(tmp_path / "ok.npz", x, GOOD_META)
    assert read_reference(ok).layout == "ganeval"  # type: ignore[union-attr]
    mu = moments(x)[0].copy()
    mu[0] += 1e-3 * np.sqrt(np.abs(moments(x)[1]).max())  # far above rounding, small enough to go unseen by eye
    bad = _ganeval_ref(tmp_path / "bad.npz", x, GOOD_META, mu)
    refused([str(bad), str(sets["fake"])], capsys, str(bad), "not the moments of its own features")
    m, s = moments(x)
    s = s.copy()
    s[2, 5] = s[5, 2] = s[2, 5] + 1e-3 * np.abs(s).max()  # sigma changed, still a covariance
    np.savez(tmp_path / "bad_sigma.npz", features=x, mu=m, sigma=s, meta=np.array(json.dumps(GOOD_META)))
    refused([str(tmp_path / "bad_sigma.npz"), str(sets["fake"])], capsys, "not the moments of its own features")


class _Writes:
    """An identity extractor whose first batch does something first (another process's write, a check that it ran)."""

    def __init__(self, action) -> None:  # type: ignore[no-untyped-def]
        from ganeval.features import get_extractor

        self.ex = get_extractor("identity")
        self.action = action

    def __call__(self):  # type: ignore[no-untyped-def]
        ex, action = self.ex, self.action
        real = ex.device_stage

        def stage(b):  # type: ignore[no-untyped-def]
            action()
            return real(b)

        ex.device_stage = stage
        return ex


@pytest.mark.parametrize("kind", ["path", "stats"])
def test_a_file_written_meanwhile_at_a_new_output_is_not_replaced(tmp_path: Path, kind: str) -> None:
    """(issue #37) two saves to one new path at once: the second one refuses, the first one's file stays."""
    from ganeval.features.reference import save_reference

    out = tmp_path / "ref.npz"
    theirs = b"another process's file"
    ex = _Writes(lambda: out.exists() or out.write_bytes(theirs))()
    with pytest.raises(ReferenceError, match="exists .*not replaced"):
        save_reference(feats(30, 1), **{kind: out}, extractor=ex, progress=False)
    assert out.read_bytes() == theirs and not list(tmp_path.glob(".*.tmp"))
    save_reference(feats(30, 1), **{kind: out}, extractor=_Writes(lambda: None)(), overwrite=True, progress=False)
    assert out.read_bytes() != theirs


def test_a_read_only_folder_is_refused_before_extraction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(issue #37) --save-ref/--save-stats into a folder that cannot be written: refused before any extraction."""
    import tempfile

    from ganeval.features.reference import save_reference

    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    if os.geteuid() == 0:  # root writes anyway: let the probe meet what anyone else would
        real_tempfile = tempfile.TemporaryFile

        def denied(*args, dir=None, **kwargs):  # type: ignore[no-untyped-def]  # noqa: A002 - tempfile's name
            if dir is not None and Path(dir) == ro:
                raise PermissionError(13, "Permission denied")
            return real_tempfile(*args, dir=dir, **kwargs)

        monkeypatch.setattr(tempfile, "TemporaryFile", denied)
    ex = _Writes(lambda: pytest.fail("extracted before the check"))()
    for kind in ("path", "stats"):
        with pytest.raises(ReferenceError, match=f"{kind} .*ro/r.npz: folder .*ro is not writable"):
            save_reference(feats(30, 1), **{kind: ro / "r.npz"}, extractor=ex, progress=False)
