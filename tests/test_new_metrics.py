"""CMMD, sFID, FD∞, Vendi, authenticity and MiFID: each against a direct small computation of its reference's
formula (or the peer package where it installs), through the protocol's stages, and their registry entries."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import linalg

from ganeval import evaluate
from ganeval.metrics import authenticity, cmmd, fd_inf, fid, get_metric, mifid, sfid, vendi
from ganeval.metrics.streams import metric_draws, metric_generator
from ganeval.metrics.suite import prepare_set, score_pair


def frechet64(x: np.ndarray, y: np.ndarray) -> float:
    """pytorch-fid's formula (np.mean, np.cov, scipy.linalg.sqrtm) in float64."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    m1, m2 = x.mean(0), y.mean(0)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = linalg.sqrtm(s1 @ s2)
    covmean = covmean.real if np.iscomplexobj(covmean) else covmean
    d = m1 - m2
    return float(d @ d + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def sets(n: int = 300, m: int = 250, d: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = (1.2 * rng.normal(size=(m, d)) + 0.3).astype(np.float32)
    return x, y


def protocol_value(x: np.ndarray, y: np.ndarray, metrics: dict, seed: int = 0) -> dict[str, float]:
    sx, sy = prepare_set(x, metrics), prepare_set(y, metrics)
    return score_pair(sx, sy, metric_draws(seed), metrics)


# --------------------------------------------------------------------------------------------------- CMMD
def cmmd_reference(x: np.ndarray, y: np.ndarray, sigma: float = 10.0, unbiased: bool = False) -> float:
    """google-research cmmd/distance.py's formula in float64 on full kernel matrices (diagonals dropped for the
    unbiased U-statistic), on L2-normalised rows as its embeddings are."""
    x = x.astype(np.float64) / np.linalg.norm(x, axis=1, keepdims=True)
    y = y.astype(np.float64) / np.linalg.norm(y, axis=1, keepdims=True)
    gamma = 1 / (2 * sigma**2)

    def k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
        return np.exp(-gamma * d2)

    kxx, kyy, kxy = k(x, x), k(y, y), k(x, y)
    if unbiased:
        n, m = len(x), len(y)
        exx = (kxx.sum() - np.trace(kxx)) / (n * (n - 1))
        eyy = (kyy.sum() - np.trace(kyy)) / (m * (m - 1))
        return 1000 * (exx + eyy - 2 * kxy.mean())
    return 1000 * (kxx.mean() + kyy.mean() - 2 * kxy.mean())


@pytest.mark.parametrize("unbiased", [False, True])
@pytest.mark.parametrize("sigma", [10.0, 0.5])
def test_cmmd_equals_the_reference_formula(unbiased: bool, sigma: float) -> None:
    x, y = sets(1100, 700, 24)  # more than one Gram strip
    estimator = "unbiased" if unbiased else "biased"
    ref = cmmd_reference(x, y, sigma, unbiased)
    assert cmmd(x, y, sigma=sigma, estimator=estimator) == pytest.approx(ref, rel=2e-5, abs=1e-9)
    assert cmmd(x.astype(np.float64), y.astype(np.float64), sigma=sigma, estimator=estimator) == pytest.approx(ref, rel=1e-8)
    o = {"cmmd": {"sigma": sigma, "estimator": estimator}}
    assert protocol_value(x, y, o)["cmmd"] == pytest.approx(ref, rel=2e-5, abs=1e-9)


def test_cmmd_estimators_differ_by_the_diagonals_and_vanish_on_one_set() -> None:
    x, _ = sets(200, 10, 8)
    x64 = x.astype(np.float64)
    assert cmmd(x64, x64) == pytest.approx(0.0, abs=1e-10)  # the biased V-statistic: three equal means
    assert cmmd(x64, x64[::-1].copy()) == pytest.approx(0.0, abs=1e-10)
    assert cmmd(x, x) == pytest.approx(0.0, abs=1e-4)  # float32 Gram entries: ~1e-5 of rounding on a 0.1–10 scale
    # the unbiased one drops the XX, YY diagonals but keeps XY's (k = 1 there): negative on one set, like KID
    unbiased = cmmd(x, x, estimator="unbiased")
    assert unbiased < 0 and unbiased == pytest.approx(cmmd_reference(x, x, unbiased=True), abs=1e-4)
    with pytest.raises(ValueError, match="estimator must be one of 'biased', 'unbiased'"):
        cmmd(x, x, estimator="plain")


def test_cmmd_without_normalisation_uses_the_rows_as_given() -> None:
    x, y = sets(150, 120, 6)
    x, y = 0.05 * x.astype(np.float64), 0.05 * y.astype(np.float64)
    gamma = 1 / 200
    xd, yd = x.astype(np.float64), y.astype(np.float64)

    def k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.exp(-gamma * ((a[:, None, :] - b[None, :, :]) ** 2).sum(2))

    ref = 1000 * (k(xd, xd).mean() + k(yd, yd).mean() - 2 * k(xd, yd).mean())
    assert cmmd(x, y, normalize=False) == pytest.approx(ref, rel=1e-9)


# --------------------------------------------------------------------------------------------------- sFID
@pytest.mark.slow
def test_spatial_features_are_mixed_6d_branch1x1_first_7_channels(tmp_path: Path) -> None:
    """features=inception_spatial equals the architecture's own Mixed_6d.branch1x1 output (TF mixed_6/conv), read by
    a forward hook on the whole network with the same weights file, first 7 channels in (H, W, C) order."""
    from hydra.utils import instantiate

    from apphelp import compose_config
    from ganeval.features.inception import load_state_dict, loaded_architecture, save_random_weights

    weights = save_random_weights(tmp_path / "w.pth", seed=3)
    ex = instantiate(compose_config(["features=inception_spatial", f"features.weights={weights}",
                                     "features.download=false"]).features)
    images = torch.randint(0, 256, (2, 3, 40, 56), dtype=torch.uint8, generator=torch.Generator().manual_seed(4))
    got = ex(images)
    net = loaded_architecture(load_state_dict(weights)).eval()
    seen: list[torch.Tensor] = []
    net.Mixed_6d.branch1x1.register_forward_hook(lambda mod, inp, out: seen.append(out.detach().clone()))
    x = torch.nn.functional.interpolate(images.float() / 255, size=(299, 299), mode="bilinear", align_corners=False)
    with torch.no_grad():
        net(2 * x - 1)
    t = seen[0]
    assert t.shape == (2, 192, 17, 17)
    want = t.permute(0, 2, 3, 1)[..., :7].reshape(2, -1)  # the evaluator's spatial[..., :7] then reshape
    assert got.shape == (2, 2023) and ex.outputs == "spatial" and ex.identity()["output"] == "spatial"
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5)
    assert float(want.abs().max()) > 0 and float(want.min()) >= 0  # a ReLU output, not all zeros


def test_sfid_is_fid_on_the_spatial_rows_and_needs_them() -> None:
    x, y = sets(400, 300, 40)
    assert sfid(x, y) == fid(x, y)
    assert sfid(x, y) == pytest.approx(frechet64(x, y), rel=1e-6)
    m = get_metric("sfid")
    assert m.input == "spatial" and m.label == "sFID" and not m.higher_is_better


def test_ganeval_refuses_sfid_on_pool3_features(tmp_path: Path) -> None:
    from apphelp import compose_config
    from ganeval.app.pipeline import check_metric_inputs
    from ganeval.app.plan import Plan
    from ganeval.features import InceptionExtractor
    from ganeval.protocol import Settings

    cfg = compose_config(["features=inception", "metrics=sfid"])
    plan = Plan(name="t", results_dir=tmp_path, device="cpu", config={}, params=cfg, choices={"features": "inception"},
                settings=Settings(runs=2, sample_size=10, metrics={"sfid": {}}, progress=False))
    with pytest.raises(ValueError, match="use features=inception_spatial"):
        check_metric_inputs(plan, InceptionExtractor())
    check_metric_inputs(plan, InceptionExtractor(output="spatial"))


# --------------------------------------------------------------------------------------------------- FD∞
def test_fd_inf_is_chong_and_forsyths_fit_of_the_same_subsets() -> None:
    """Their calculate_FID_infinity on the same draws: FID of the fixed real set against y's subsets of sizes
    linspace(0.1·n, n, points).astype(int), each a fresh permutation's first rows; scikit-learn's
    LinearRegression on 1/n; the intercept. The fit's stderr is scipy's linregress intercept_stderr."""
    from scipy.stats import linregress
    from sklearn.linear_model import LinearRegression

    x, y = sets(900, 800, 12, seed=5)
    out = fd_inf(x, y, points=7, seed=3)
    rng = np.random.default_rng(3)
    ns = np.linspace(0.1 * 800, 800, 7).astype("int32")
    fids = [frechet64(x, y[rng.permutation(800)[:k]]) for k in ns]
    reg = LinearRegression().fit(1 / ns.reshape(-1, 1), np.array(fids).reshape(-1, 1))
    assert out["sizes"] == ns.tolist()
    np.testing.assert_allclose(out["fids"], fids, rtol=1e-6)
    assert out["value"] == pytest.approx(reg.predict(np.array([[0]]))[0, 0], rel=1e-6)
    lr = linregress(1 / ns, fids)
    assert out["slope"] == pytest.approx(lr.slope, rel=1e-6)
    assert out["stderr"] == pytest.approx(lr.intercept_stderr, rel=1e-5)
    assert out["ci_low"] < out["value"] < out["ci_high"]
    # in the protocol: the same draws from FD∞'s own stream, the intercept stored
    own = fd_inf(x, y, points=7, seed=metric_generator("fd_inf", 3))["value"]
    assert protocol_value(x, y, {"fd_inf": {"points": 7}}, seed=3)["fd_inf"] == pytest.approx(own, rel=1e-9)


def test_fd_inf_refuses_sizes_without_a_line() -> None:
    x, y = sets(50, 50, 4)
    with pytest.raises(ValueError, match="need at least 2 rows each and 2 distinct sizes"):
        fd_inf(x, y[:12], points=3, min_fraction=0.1)
    with pytest.raises(ValueError, match=r"metrics.fd_inf: sizes .* raise min_fraction"):
        evaluate(x, y, runs=2, sample_size=10, metrics={"fd_inf": {}}, progress=False)


# -------------------------------------------------------------------------------------------------- Vendi
@pytest.mark.parametrize("q", [1.0, 0.5, 2.0])
def test_vendi_equals_the_vendi_score_package(q: float) -> None:
    vs = pytest.importorskip("vendi_score.vendi")
    x, _ = sets(500, 10, 30, seed=2)
    x[7] = 0.0  # a zero row stays zero, as scikit-learn's normalize leaves it
    assert vendi(x, q=q) == pytest.approx(vs.score_dual(x.astype(np.float64), q=q), rel=1e-10)


def test_vendi_equals_the_kernel_matrix_definition() -> None:
    """exp(−Σ λ log λ), λ the eigenvalues of K/n with K the n×n cosine similarity matrix (the primal form)."""
    x, _ = sets(120, 10, 300, seed=4)  # n < D: the dual matrix has D − n zero eigenvalues
    xn = x.astype(np.float64) / np.linalg.norm(x, axis=1, keepdims=True)
    w = np.linalg.eigvalsh(xn @ xn.T / len(x))
    w = w[w > 0]
    assert vendi(x) == pytest.approx(np.exp(-(w * np.log(w)).sum()), rel=1e-7)
    assert vendi(np.repeat(x[:1], 50, axis=0)) == pytest.approx(1.0, rel=1e-9)  # one distinct sample
    assert vendi(np.eye(40, dtype=np.float32)) == pytest.approx(40.0, rel=1e-9)  # 40 orthogonal ones


def test_vendi_in_the_protocol_scores_the_generated_subsample() -> None:
    x, y = sets(300, 250, 10)
    v = protocol_value(x, y, {"vendi": {}})["vendi"]
    assert v == pytest.approx(vendi(y), rel=1e-12)
    assert get_metric("vendi").higher_is_better


# ------------------------------------------------------------------------------------------- authenticity
def authenticity_reference(real: np.ndarray, synth: np.ndarray) -> float:
    """Alaa et al.'s compute_alpha_precision, the authenticity lines, with scikit-learn's NearestNeighbors."""
    from sklearn.neighbors import NearestNeighbors

    nbrs_real = NearestNeighbors(n_neighbors=2, n_jobs=1, p=2).fit(real)
    real_to_real, _ = nbrs_real.kneighbors(real)
    real_to_real = real_to_real[:, 1].squeeze()
    synth_to_real, synth_to_real_args = nbrs_real.kneighbors(synth)
    synth_to_real, synth_to_real_args = synth_to_real[:, 0].squeeze(), synth_to_real_args[:, 0].squeeze()
    return float(np.mean(real_to_real[synth_to_real_args] < synth_to_real))


def test_authenticity_equals_alaa_et_als_computation() -> None:
    x, y = sets(1200, 900, 8, seed=6)  # several strips of real rows
    y[:100] = x[:100] + 1e-3  # near copies: not authentic
    ref = authenticity_reference(x.astype(np.float64), y.astype(np.float64))
    assert 0.05 < ref < 0.99
    assert authenticity(x, y) == ref
    assert protocol_value(x, y, {"authenticity": {}})["authenticity"] == ref
    both = protocol_value(x, y, {"imd": {"nv": 10}, "authenticity": {}})  # IMD's graph reused as the radii
    assert both["authenticity"] == ref


def test_authenticity_on_integer_data_with_ties_and_duplicates() -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(400, 3)).astype(np.float32)  # many duplicates: radii 0
    y = rng.integers(0, 5, size=(300, 3)).astype(np.float32)
    assert authenticity(x, y) == authenticity_reference(x.astype(np.float64), y.astype(np.float64))


# ----------------------------------------------------------------------------------------------------- MiFID
def mifid_reference(real: np.ndarray, fake: np.ndarray, eps: float = 0.1) -> float:
    """Kaggle's competition_scoring.py: FID(gen, real) / (thresholded cosine_distance(gen, real) + 1e-15)."""
    def normalize_rows(a: np.ndarray) -> np.ndarray:
        return np.nan_to_num(a / np.linalg.norm(a, ord=2, axis=1, keepdims=True))

    f1, f2 = fake.astype(np.float64), real.astype(np.float64)
    n1, n2 = normalize_rows(f1[f1.sum(1) != 0]), normalize_rows(f2[f2.sum(1) != 0])
    d = 1.0 - np.abs(n1 @ n2.T)
    dist = float(np.mean(np.min(d, axis=1)))
    thr = dist if dist < eps else 1
    return frechet64(fake, real) / (thr + 1e-15)


def test_mifid_equals_kaggles_computation() -> None:
    x, y = sets(700, 600, 20, seed=8)
    assert mifid(x, y) == pytest.approx(mifid_reference(x, y), rel=1e-6)  # d ≥ ε: MiFID = FID
    assert mifid(x, y) == pytest.approx(fid(x, y), rel=1e-8)
    copies = x[:600] + np.random.default_rng(1).normal(scale=0.05, size=(600, 20)).astype(np.float32)
    copies[3] = 0.0  # a zero-sum row is left out of the cosine distance
    ref = mifid_reference(x, copies)
    assert ref > 10 * frechet64(copies, x)  # memorised: the distance is below ε and divides FID
    assert mifid(x, copies) == pytest.approx(ref, rel=1e-5)
    assert protocol_value(x, copies[:600], {"mifid": {}})["mifid"] == pytest.approx(ref, rel=1e-5)
    assert mifid(x, copies, cosine_distance_eps=1e-9) == pytest.approx(frechet64(copies, x), rel=1e-6)


# -------------------------------------------------------------------------------------------- registration
def test_registry_entries_directions_and_labels() -> None:
    want = {"cmmd": ("CMMD", False), "sfid": ("sFID", False), "fd_inf": ("FD∞", False), "vendi": ("Vendi", True),
            "authenticity": ("Authenticity", True), "mifid": ("MiFID", False)}
    for name, (label, higher) in want.items():
        m = get_metric(name)
        assert (m.label, m.higher_is_better) == (label, higher), name
    from ganeval.results.tables import direction_sentence

    assert direction_sentence(["fid", "vendi", "authenticity"]) == \
        "Higher is better for Vendi, Authenticity, lower for FID"


def test_evaluate_ranks_by_each_metrics_direction() -> None:
    x, y = sets(500, 500, 12, seed=9)
    rng = np.random.default_rng(2)
    near = (x + 0.05 * rng.normal(size=x.shape)).astype(np.float32)  # near copies of the real rows
    ev = evaluate(x, {"far": y, "near": near}, runs=3, sample_size=300,
                  metrics={"authenticity": {}, "fid": {}, "cmmd": {}}, seed=0, progress=False)
    s = ev.set_index(["model", "metric"])["mean"]
    assert s["near", "authenticity"] < s["far", "authenticity"]
    assert s["near", "fid"] < s["far", "fid"] and s["near", "cmmd"] < s["far", "cmmd"]


def test_ganeval_score_takes_the_new_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ganeval.app.score import main

    x, y = sets(300, 300, 8, seed=10)
    np.save(tmp_path / "real.npy", x)
    np.save(tmp_path / "fake.npy", y)
    names = "cmmd,fd_inf,vendi,authenticity,mifid,sfid"
    assert main([str(tmp_path / "real.npy"), str(tmp_path / "fake.npy"), "--metrics", names,
                 "--option", "fd_inf.points=5", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {r["metric"]: r["value"] for r in doc["results"]}
    assert set(got) == set(names.split(","))
    assert got["cmmd"] == pytest.approx(cmmd(x, y), rel=1e-12)
    assert got["vendi"] == pytest.approx(vendi(y), rel=1e-12)
    assert got["authenticity"] == authenticity(x, y)
    assert got["fd_inf"] == pytest.approx(fd_inf(x, y, points=5, seed=0)["value"], rel=1e-9)


def test_authenticity_and_mifid_take_kids_cross_strips() -> None:
    """With KID summing over every pair, both hook onto its real × generated Gram strips (no strips of their own)
    and give the values of their own pass."""
    from ganeval.metrics import Metrics
    from ganeval.metrics.registry import CROSS_GRAM_HOOKS

    x, y = sets(900, 700, 12, seed=11)
    y[:80] = x[:80] + 1e-3
    chosen = {"kid": {"subsets": 5, "subset_size": 400}, "authenticity": {}, "mifid": {}}
    sx, sy = prepare_set(x, chosen), prepare_set(y, chosen)
    m = Metrics(chosen)
    from ganeval.metrics.registry import Shared

    ctx = Shared({}, m)
    kid_work = get_metric("kid").pair(sx.stats["kid"], sy.stats["kid"], m["kid"], np.random.default_rng(0), context=ctx)
    auth_work = get_metric("authenticity").pair(sx.stats["authenticity"], sy.stats["authenticity"], {},
                                                np.random.default_rng(0), context=ctx)
    mifid_work = get_metric("mifid").pair(sx.stats["mifid"], sy.stats["mifid"], m["mifid"], np.random.default_rng(0),
                                          context=ctx)
    assert auth_work.jobs == [] and len(mifid_work.jobs) == 1 and len(ctx.memo[CROSS_GRAM_HOOKS]) == 2
    got = protocol_value(x, y, chosen)
    assert got["authenticity"] == authenticity(x, y) == authenticity_reference(x.astype(np.float64), y.astype(np.float64))
    assert got["mifid"] == pytest.approx(mifid(x, y), rel=1e-6)
    assert kid_work.jobs


def test_cmmd_takes_imds_strips_and_kids_cross_strips(monkeypatch: pytest.MonkeyPatch) -> None:
    """With IMD (exact k-NN) and KID (every pair) in the run, CMMD's set sums come from IMD's Gram strips (its tap)
    and its cross sum from KID's strips (no jobs of its own), with the value of its own pass."""
    from ganeval.metrics import Metrics
    from ganeval.metrics.registry import CROSS_GRAM_HOOKS, Shared

    x, y = sets(1100, 900, 20, seed=12)
    for o in ({}, {"estimator": "unbiased", "sigma": 0.7}, {"normalize": False, "sigma": 3.0}):
        chosen = {"imd": {"nv": 10}, "kid": {"subsets": 5, "subset_size": 500}, "cmmd": o}
        m = Metrics(chosen)
        sx, sy = prepare_set(x, m), prepare_set(y, m)
        ctx = Shared({}, m)
        get_metric("kid").pair(sx.stats["kid"], sy.stats["kid"], m["kid"], np.random.default_rng(0), context=ctx)
        w = get_metric("cmmd").pair(sx.stats["cmmd"], sy.stats["cmmd"], m["cmmd"], np.random.default_rng(0), context=ctx)
        assert w.jobs == [] and len(ctx.memo[CROSS_GRAM_HOOKS]) == 1
        alone = prepare_set(x, {"cmmd": o}).stats["cmmd"].upper
        assert sx.stats["cmmd"].upper == pytest.approx(alone, rel=1e-6)
        with monkeypatch.context() as mp:  # with IMD's strips tapped, CMMD makes none of its own
            import sys

            mp.setattr(sys.modules["ganeval.metrics.cmmd"], "self_strip_sum", lambda *a: (_ for _ in ()).throw(AssertionError("own strips")))
            assert prepare_set(x, m).stats["cmmd"].upper == sx.stats["cmmd"].upper
        got = protocol_value(x, y, chosen)["cmmd"]
        assert got == pytest.approx(cmmd(x, y, **o), rel=2e-5, abs=1e-8)
