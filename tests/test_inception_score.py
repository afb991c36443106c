"""The Inception Score: torch-fidelity's computation on the same logits (float64), an independent reference of
the formula, the FID Inception's logits output, the protocol (it scores the generated subsample) and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.special import log_softmax, softmax

from apphelp import compose_config, run_inprocess
from ganeval import evaluate
from ganeval.metrics import get_metric, inception_score
from ganeval.protocol.api import evaluate_detailed


def reference(logits: np.ndarray, splits: int) -> tuple[float, float]:
    """exp(E_x KL(p(y|x) ‖ p(y))) per split of consecutive rows, in float64 with scipy: mean and std (ddof=0)."""
    z = logits.astype(np.float64)
    n = len(z)
    scores = []
    for i in range(splits):
        part = z[i * n // splits : (i + 1) * n // splits]
        p, log_p = softmax(part, axis=1), log_softmax(part, axis=1)
        kl = (p * (log_p - np.log(p.mean(axis=0, keepdims=True)))).sum(axis=1)
        scores.append(np.exp(kl.mean()))
    return float(np.mean(scores)), float(np.std(scores))


def logits_like(n: int, classes: int = 1008, seed: int = 0) -> np.ndarray:
    """Logits with a few confident classes per row, as a classifier gives on varied images."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, classes)).astype(np.float32)
    z[np.arange(n), rng.integers(0, classes // 4, n)] += 8.0
    return z


@pytest.mark.parametrize("splits", [1, 3, 10])
def test_equal_to_torch_fidelity_on_the_same_logits(splits: int) -> None:
    fidelity = pytest.importorskip("torch_fidelity.metric_isc")
    z = logits_like(1003, seed=splits)
    ours = inception_score(z, splits=splits)
    theirs = fidelity.isc_features_to_metric(torch.from_numpy(z), splits=splits, shuffle=False)
    assert ours[0] == pytest.approx(theirs[fidelity.KEY_METRIC_ISC_MEAN], rel=1e-13, abs=0)
    assert ours[1] == pytest.approx(theirs[fidelity.KEY_METRIC_ISC_STD], rel=1e-9, abs=1e-13)
    # torch-fidelity's default shuffles the rows with its seed 2020 first: the same rows in that order agree too
    perm = np.random.RandomState(2020).permutation(len(z))
    shuffled = fidelity.isc_features_to_metric(torch.from_numpy(z), splits=splits)
    assert inception_score(z[perm], splits=splits)[0] == pytest.approx(shuffled[fidelity.KEY_METRIC_ISC_MEAN], rel=1e-13)


def test_equal_to_an_independent_reference_and_known_values() -> None:
    z = logits_like(500, classes=40, seed=1)
    assert inception_score(z, splits=5) == pytest.approx(reference(z, 5), rel=1e-12)
    assert inception_score(np.zeros((100, 10)), splits=4) == pytest.approx((1.0, 0.0))  # one class distribution: 1
    confident = 60.0 * np.eye(10)[np.arange(200) % 10]  # every split holds each of 10 classes equally: 10
    assert inception_score(confident, splits=4) == pytest.approx((10.0, 0.0), rel=1e-9)


def test_bad_input_is_refused() -> None:
    z = logits_like(20, classes=5)
    with pytest.raises(ValueError, match="splits must be an integer ≥ 1, got 0"):
        inception_score(z, splits=0)
    with pytest.raises(ValueError, match="splits=30 is more than the 20 rows"):
        inception_score(z, splits=30)
    with pytest.raises(ValueError, match="one column per class"):
        inception_score(z[:, :1], splits=2)
    with pytest.raises(ValueError, match="NaN or inf"):
        inception_score(np.full((20, 5), np.nan), splits=2)
    with pytest.raises(ValueError, match=r'metrics=\{"inception_score": \{"splits": 300\}\} exceeds sample_size=100'):
        evaluate(z, z, runs=2, sample_size=100, metrics={"inception_score": {"splits": 300}}, progress=False)


def test_registry_entry() -> None:
    m = get_metric("inception_score")
    assert m.label == "IS" and m.input == "logits" and m.higher_is_better and m.defaults == {"splits": 10}


def test_through_evaluate_it_scores_the_generated_subsample() -> None:
    """Per run, IS of the generated subsample (the protocol's draw: real rows first, then fake rows), whatever
    the real set; intervals over runs; the better model is the higher one."""
    real, fake = logits_like(800, seed=2), logits_like(900, seed=3)
    blurry = 0.3 * fake  # less confident class predictions: a lower IS
    ev = evaluate_detailed(real, {"sharp": fake, "blurry": blurry}, runs=5, sample_size=400,
                           metrics={"inception_score": {"splits": 4}}, seed=11, progress=False)
    for r in range(5):
        rng = np.random.default_rng([11, r])
        rng.choice(len(real), 400, replace=False)
        fi = rng.choice(len(fake), 400, replace=False)  # the first model draws from a copy of this state
        got = ev.runs[(ev.runs.run == r) & (ev.runs.model == "sharp")]["value"].item()
        assert got == pytest.approx(inception_score(fake[fi], splits=4)[0], rel=1e-13)
    s = ev.summary.set_index("model")
    assert (s["n_runs"] == 5).all() and (s["ci_low"] < s["mean"]).all() and (s["mean"] < s["ci_high"]).all()
    assert ev.comparison["better"].item() == "sharp"
    other_real = evaluate(logits_like(800, seed=9), fake, runs=5, sample_size=400,
                          metrics={"inception_score": {"splits": 4}}, seed=11, progress=False)
    assert other_real["mean"].item() == pytest.approx(s.loc["sharp", "mean"], rel=1e-13)


@pytest.mark.slow
def test_inception_logits_are_the_classifier_on_pool3(tmp_path: Path) -> None:
    """features=inception_logits: pool3 (the inception extractor's features) times the 1008×2048 classifier of the
    same weights file, without its bias (torch-fidelity's logits_unbiased); output=logits adds the bias."""
    from hydra.utils import instantiate

    from ganeval.features import InceptionExtractor
    from ganeval.features.inception import load_state_dict, save_random_weights

    weights = save_random_weights(tmp_path / "w.pth", seed=1)
    sd = load_state_dict(weights)
    sd["fc.bias"] = torch.randn(1008, generator=torch.Generator().manual_seed(0))  # a bias that shows
    torch.save(sd, weights)
    w, b = sd["fc.weight"].double(), sd["fc.bias"].double()
    images = torch.randint(0, 256, (2, 3, 80, 80), dtype=torch.uint8, generator=torch.Generator().manual_seed(2))
    pool = InceptionExtractor(weights=weights, download=False, resize=False)(images).double()
    ex = instantiate(compose_config(["features=inception_logits", f"features.weights={weights}",
                                     "features.download=false", "features.resize=false"]).features)
    unbiased = ex(images).double()
    biased = InceptionExtractor(weights=weights, download=False, resize=False, output="logits")(images).double()
    assert unbiased.shape == (2, 1008) and ex.outputs == "logits"
    assert torch.allclose(unbiased, pool @ w.T, rtol=1e-4, atol=1e-4)
    assert torch.allclose(biased, pool @ w.T + b, rtol=1e-4, atol=1e-4)
    assert ex.identity()["output"] == "logits_unbiased"
    assert "output" not in InceptionExtractor(weights=weights, download=False).identity()  # pool3 as before
    with pytest.raises(ValueError, match="leave dims at 2048"):
        InceptionExtractor(dims=768, output="logits")
    with pytest.raises(ValueError, match="output must be one of"):
        InceptionExtractor(output="probabilities")


def test_ganeval_refuses_is_on_features_and_features_metrics_on_logits(tmp_path: Path) -> None:
    real, fake = logits_like(300, classes=20, seed=1), logits_like(300, classes=20, seed=2)
    np.save(tmp_path / "real.npy", real)
    np.save(tmp_path / "fake.npy", fake)
    base = ["experiment=benchmark", "data=array", f"data.path={tmp_path / 'real.npy'}", "generator=samples",
            f"generator.path={tmp_path / 'fake.npy'}", "runs=3", "sample_size=200", "progress=false",
            "plots=false", f"results_dir={tmp_path / 'res'}", f"cache_dir={tmp_path / 'cache'}"]
    with pytest.raises(ValueError, match="metrics.inception_score scores class logits, but features=pixels gives "
                                         "features: use features=inception_logits"):
        run_inprocess(base + ["features=pixels", "metrics=inception_score"])
    # given arrays (features=identity) may be logits: IS runs and gets its table row
    s = run_inprocess(base + ["features=identity", "metrics=inception_score"])
    assert list(s.metric) == ["inception_score"] and (s.n_runs == 3).all()
    assert "| IS |" in (tmp_path / "res" / "table.md").read_text()
    from ganeval.features.inception import save_random_weights

    weights = save_random_weights(tmp_path / "w.pth")
    with pytest.raises(ValueError, match="metrics.imd compares features, but features=inception_logits gives logits"):
        run_inprocess(base + ["features=inception_logits", f"features.weights={weights}", "~metrics.kid", "overwrite=true"])
