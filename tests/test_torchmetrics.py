"""ganeval.torchmetrics (issue 33): Protocol and IMD give evaluate's numbers bit for bit on CPU, FID and KID equal
torchmetrics' own on the same features, bad input is refused in one line with nothing kept, and the core install
does not need torchmetrics."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

pytest.importorskip("torchmetrics")

from ganeval import evaluate  # noqa: E402
from ganeval.torchmetrics import IMD, Protocol  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
METRICS = {"imd": {}, "fid": {}, "kid": {"subset_size": 50, "subsets": 5}}


def pools(n_real: int = 300, n_fake: int = 260, d: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(n_real, d, generator=g), torch.randn(n_fake, d, generator=g) * 1.2 + 0.3


def feed(metric: Protocol, real: torch.Tensor, fake: torch.Tensor, batch: int = 64) -> Protocol:
    for i in range(0, len(real), batch):
        metric.update(real[i : i + batch], real=True)
    for i in range(0, len(fake), batch):
        metric.update(fake[i : i + batch], real=False)
    return metric


def test_protocol_gives_evaluates_numbers_bit_for_bit() -> None:
    real, fake = pools()
    got = feed(Protocol(METRICS, features="identity", runs=4, sample_size=200, seed=3, confidence=0.9), real, fake)
    out = got.compute()
    want = evaluate(real.numpy(), fake.numpy(), runs=4, sample_size=200, metrics=METRICS, seed=3, confidence=0.9,
                    progress=False)
    assert set(out) == {f"{m}{s}" for m in METRICS for s in ("", "_ci_low", "_ci_high")}
    for row in want.itertuples():
        assert out[row.metric].item() == row.mean
        assert out[f"{row.metric}_ci_low"].item() == row.ci_low and out[f"{row.metric}_ci_high"].item() == row.ci_high
        assert out[row.metric].dtype == torch.float64
    # another seed gives other numbers: the seed reaches evaluate
    other = feed(Protocol(METRICS, features="identity", runs=4, sample_size=200, seed=4), real, fake).compute()
    assert other["imd"].item() != out["imd"].item()


def test_the_rows_kept_are_a_copy_of_the_callers_batch() -> None:
    """A training loop refills one buffer per batch: the features held must not follow it."""
    real, fake = pools()
    buffer = real.clone()
    metric = Protocol(["fid"], features="identity")
    metric.update(buffer, real=True)
    buffer.fill_(7.0)
    assert torch.equal(metric.real_features[0], real)
    assert metric(fake, real=False) is None and len(metric.fake_features) == 1  # calling the metric is update
    assert metric.compute()["fid"].item() == feed(Protocol(["fid"], features="identity"), real, fake).compute()["fid"]


def test_imd_alone_with_one_run_is_one_value() -> None:
    real, fake = pools()
    got = feed(IMD(features="identity", options={"k": 4}), real, fake).compute()
    want = evaluate(real.numpy(), fake.numpy(), runs=1, sample_size=260, metrics={"imd": {"k": 4}}, progress=False)
    assert isinstance(got, torch.Tensor) and got.ndim == 0 and got.item() == want["mean"].item()
    metric = feed(IMD(features="identity", runs=3, sample_size=100), real, fake)
    mean = metric.compute()  # one return type whatever runs, as torchmetrics' FID: a 0-d tensor
    three = metric.compute_interval()  # the dict compute() gave at runs > 1 before
    assert isinstance(mean, torch.Tensor) and mean.ndim == 0 and mean.item() == three["imd"].item()
    assert isinstance(three, dict) and set(three) == {"imd", "imd_ci_low", "imd_ci_high"}
    assert three["imd_ci_low"] < three["imd"] < three["imd_ci_high"]


class Project(nn.Module):
    """A fixed random projection 16 -> 12: the feature network both torchmetrics and ganeval get."""

    num_features = 12

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("w", torch.randn(16, 12, generator=torch.Generator().manual_seed(0)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float() @ self.w


def test_fid_and_kid_equal_torchmetrics_on_the_same_features() -> None:
    """Equal pools scored whole (sample_size = the pool, one KID subset of every row), so the subsampling of either
    side only reorders rows."""
    from torchmetrics.image.fid import FrechetInceptionDistance
    from torchmetrics.image.kid import KernelInceptionDistance

    real, fake = pools(400, 400, 16)
    module = Project()
    fid = feed(FrechetInceptionDistance(feature=module), real, fake)
    kid = KernelInceptionDistance(feature=module, subsets=1, subset_size=400)
    kid = feed(kid, real, fake)
    ours = feed(Protocol({"fid": {}, "kid": {"subsets": 1, "subset_size": 400}}, features=module), real, fake).compute()
    assert ours["fid"].item() > 1 and ours["kid"].item() > 1  # far apart: a relative check means something
    np.testing.assert_allclose(ours["fid"].item(), fid.compute().item(), rtol=1e-6)
    np.testing.assert_allclose(ours["kid"].item(), kid.compute()[0].item(), rtol=1e-6)


def test_inception_by_int_uses_ganevals_extractor(tmp_path: Path) -> None:
    """feature=64 is FID Inception's first block through the real weights loading path; the rows are the extractor's."""
    from ganeval.features.inception import InceptionExtractor, save_random_weights

    weights = save_random_weights(tmp_path / "w.pth", seed=0)
    images = torch.randint(0, 256, (12, 3, 80, 80), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    options = {"weights": str(weights), "resize": False}
    metric = Protocol({"fid": {}}, features=64, features_options=options)
    metric.update(images[:6], real=True)
    metric.update(images[6:], real=False)
    ex = InceptionExtractor(dims=64, **options)
    want = evaluate(ex(images[:6]).numpy(), ex(images[6:]).numpy(), runs=1, sample_size=6, metrics=["fid"],
                    progress=False)
    assert metric.compute()["fid"].item() == want["mean"].item()
    assert metric.real_features[0].shape == (6, 64)
    with pytest.raises(ValueError, match=r"^features=100: dims must be one of"):
        Protocol(features=100)


def test_reset_keeps_the_real_rows_only_when_asked() -> None:
    real, fake = pools()
    keep = feed(Protocol(["fid"], features="identity", reset_real_features=False), real, fake)
    drop = feed(Protocol(["fid"], features="identity"), real, fake)
    before = keep.compute()["fid"].item()
    keep.reset()
    drop.reset()
    assert len(keep.real_features) == len(drop.real_features) + 5 == 5 and keep.fake_features == []
    keep.update(fake, real=False)
    assert keep.compute()["fid"].item() == before
    with pytest.raises(ValueError, match=r"^compute\(\) before any real update"):
        drop.compute()


def refused(metric: Protocol, match: str, x, real=True) -> None:
    """update(x) raises a one-line ValueError matching `match` and leaves the pools as they were."""
    held = [len(metric.real_features), len(metric.fake_features)]
    with pytest.raises(ValueError, match=match) as e:
        metric.update(x, real=real)
    assert "\n" not in str(e.value)
    assert [len(metric.real_features), len(metric.fake_features)] == held


def test_bad_updates_are_refused_and_nothing_is_kept() -> None:
    m = Protocol(["fid"], features="identity")
    m.update(torch.randn(10, 8), real=True)
    refused(m, r"^x must be N×D features", torch.randn(4, 8, 2))
    refused(m, r"^x must hold real numbers", torch.ones(4, 8, dtype=torch.bool))
    refused(m, r"^x must hold real numbers", torch.ones(4, 8, dtype=torch.complex64))
    refused(m, r"^x must be a torch.Tensor", np.ones((4, 8), dtype=np.float32))
    refused(m, r"^x is empty", torch.zeros(0, 8))
    refused(m, r"^x has NaN or inf", torch.tensor([[0.0] * 7 + [float("nan")]] * 3))
    refused(m, r"^x has NaN or inf", torch.tensor([[0.0] * 7 + [float("inf")]] * 3), real=False)
    refused(m, r"^x: features have values up to .* beyond float32", torch.full((3, 8), 1e300, dtype=torch.float64))
    refused(m, r"^x gives 9 features per sample but earlier real updates gave 8", torch.randn(4, 9))
    refused(m, r"^FID needs features of one dimension, but the real pool has 8 features and the fake pool has 9",
            torch.randn(4, 9), real=False)  # FID chosen: pools of two dimensions refused at the first such batch
    refused(m, r"^real must be True or False", torch.randn(4, 8), real=1)
    images = Protocol(["fid"], features="pixels")  # an image extractor: its checks of images
    refused(images, r"^x: images must be N×H×W, N×C×H×W or N×H×W×C", torch.zeros(2, 5, 8, 8))
    refused(images, r"^x: images must be uint8 or floats", torch.zeros(2, 3, 8, 8, dtype=torch.int32))
    refused(images, r"^x: images hold 384 NaN value\(s\)", torch.full((2, 3, 8, 8), float("nan")))  # NaN said as NaN
    refused(images, r"^x: float images must lie in \[0, 1\], got values in \[2, 2\]", torch.full((2, 3, 8, 8), 2.0))
    module = Protocol(["fid"], features=nn.Flatten(0))
    refused(module, r"^features gave \(8,\) for x of 2 samples", torch.zeros(2, 4))


def test_compute_refuses_what_cannot_be_scored() -> None:
    m = Protocol(["fid"], features="identity", sample_size=50)
    with pytest.raises(ValueError, match=r"^compute\(\) before any real update: call update\(x, real=True\)"):
        m.compute()
    m.update(torch.randn(60, 4), real=True)
    with pytest.raises(ValueError, match=r"^compute\(\) before any fake update: call update\(x, real=False\)"):
        m.compute()
    m.update(torch.randn(40, 4), real=False)
    with pytest.raises(ValueError, match=r"^sample_size=50 is larger than the fake rows fed \(40\)"):
        m.compute()
    m.update(torch.randn(10, 4), real=False)
    assert m.compute()["fid"].item() > 0


@pytest.mark.parametrize("kwargs,match", [
    ({"runs": 0}, r"^runs"), ({"sample_size": 1}, r"^sample_size"), ({"sample_size": 2.5}, r"^sample_size"),
    ({"confidence": 1.5}, r"confidence"), ({"seed": -1}, r"^seed"), ({"metrics": ["nope"]}, r"^metrics: "),
    ({"metrics": {"kid": {"subset_size": 100}}, "sample_size": 50}, r"subset_size"),
    ({"features": "nope"}, r"^features='nope': extractor must be one of"), ({"features": 1.5}, r"^features must be"),
    ({"reset_real_features": 1}, r"^reset_real_features"), ({"features": True}, r"^features must be"),
    ({"features": nn.Identity(), "features_options": {"weights": "w.pth"}}, r"^features_options apply to an extractor"),
])
def test_bad_arguments_are_refused_at_construction(kwargs, match) -> None:
    kwargs = {"features": "identity", **kwargs}
    with pytest.raises(ValueError, match=match) as e:
        Protocol(**kwargs)
    assert "\n" not in str(e.value)


def test_missing_weights_are_said_at_construction(tmp_path: Path) -> None:
    from ganeval.features.inception import WeightsNotFoundError

    with pytest.raises(WeightsNotFoundError, match="no such file"):
        Protocol(features=2048, features_options={"weights": str(tmp_path / "missing.pth")})


def python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_core_install_does_not_need_torchmetrics() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "torchmetrics" not in core and "lightning" not in core
    assert project["optional-dependencies"]["torchmetrics"] == ["torchmetrics>=1.0"]
    dev = " ".join(project["optional-dependencies"]["dev"])
    assert "torchmetrics>=" in dev and "lightning>=" in dev
    res = python("import sys, ganeval, ganeval.protocol, ganeval.features, ganeval.metrics; ganeval.evaluate; "
                 "assert 'torchmetrics' not in sys.modules, 'imported'")
    assert res.returncode == 0, res.stderr[-2000:]
    res = python("import sys; sys.modules['torchmetrics'] = None; import ganeval.torchmetrics")
    last = res.stderr.strip().splitlines()[-1]
    assert res.returncode == 1 and last.startswith("ImportError: ganeval.torchmetrics needs the 'torchmetrics' package")
    assert "pip install 'ganeval[torchmetrics]'" in last


@pytest.mark.slow
def test_the_benchmark_script_runs_and_checks_its_numbers(tmp_path: Path) -> None:
    import json

    out = tmp_path / "b.json"
    res = subprocess.run([sys.executable, "scripts/bench_torchmetrics.py", "--n", "300", "--dim", "16", "--runs", "2",
                          "--metrics", "imd", "fid", "--batch", "64", "--json", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    r = json.loads(out.read_text())
    assert r["same_numbers"] is True and r["evaluate_s"] > 0 and r["compute_s"] > 0
    assert r["state_mb_per_10k_features"] == pytest.approx(10000 * 16 * 4 / 1e6)  # float32 rows, nothing else
