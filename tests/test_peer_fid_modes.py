"""Whose FID each Inception preprocessing mode gives (issue 45): with the same random weights loaded through each
package's own loading path and the same uint8 batches, `resize="torchmetrics"` gives torchmetrics'
FrechetInceptionDistance (its default, antialias=True) and `resize="legacy_tensorflow"` gives torch-fidelity's FID
(and torchmetrics' with antialias=False), to 1e-6 relative; stage by stage: the network's input, the features, the
FID. The default mode is neither (pytorch-fid's bilinear and 2x-1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("torchmetrics")
pytest.importorskip("torch_fidelity")

from torch_fidelity.feature_extractor_inceptionv3 import FeatureExtractorInceptionV3  # noqa: E402
from torchmetrics.image.fid import FrechetInceptionDistance  # noqa: E402

from ganeval.features.inception import InceptionExtractor, save_random_weights  # noqa: E402
from ganeval.torchmetrics import Protocol  # noqa: E402

N, HW, BATCH = 24, (32, 40), 8


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_random_weights(tmp_path_factory.mktemp("w") / "random_inception.pth", seed=0)


def pools() -> tuple[torch.Tensor, torch.Tensor]:
    """Two uint8 sets far enough apart that the FID is of order one (relative agreement means something)."""
    g = torch.Generator().manual_seed(0)
    real = torch.randint(0, 256, (N, 3, *HW), dtype=torch.uint8, generator=g)
    fake = (torch.randint(0, 256, (N, 3, *HW), generator=g).float() * 0.6 + 40).round().to(torch.uint8)
    return real, fake


def batches(x: torch.Tensor) -> list[torch.Tensor]:
    return [x[i : i + BATCH] for i in range(0, len(x), BATCH)]


def torchmetrics_fid(weights: Path, antialias: bool) -> float:
    real, fake = pools()
    fid = FrechetInceptionDistance(feature=64, feature_extractor_weights_path=str(weights), antialias=antialias)
    for b in batches(real):
        fid.update(b, real=True)
    for b in batches(fake):
        fid.update(b, real=False)
    return float(fid.compute())


class Images(torch.utils.data.Dataset):
    """uint8 C×H×W images, the dataset form torch-fidelity takes."""

    def __init__(self, x: torch.Tensor) -> None:
        self.x = x

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.x[i]


def torch_fidelity_fid(weights: Path) -> float:
    from torch_fidelity import calculate_metrics

    real, fake = pools()
    out = calculate_metrics(input1=Images(real), input2=Images(fake), fid=True, feature_layer_fid="64",
                            feature_extractor_weights_path=str(weights), cuda=False, batch_size=BATCH,
                            verbose=False, save_cpu_ram=True)
    return float(out["frechet_inception_distance"])


def ganeval_fid(weights: Path, mode: str) -> float:
    real, fake = pools()
    metric = Protocol(["fid"], features=64, features_options={"weights": str(weights), "resize": mode})
    for b in batches(real):
        metric.update(b, real=True)
    for b in batches(fake):
        metric.update(b, real=False)
    return float(metric.compute()["fid"])


def test_the_network_input_is_each_peers() -> None:
    from torch_fidelity.interpolate_compat_tensorflow import interpolate_bilinear_2d_like_tensorflow1x

    real, _ = pools()
    x = real.float()
    tm = InceptionExtractor(dims=64, resize="torchmetrics", weights="unused").preprocess(real)
    want = torch.nn.functional.interpolate(x, size=(299, 299), mode="bilinear", align_corners=False, antialias=True)
    assert torch.equal(tm, (want - 128) / 128)
    tf = InceptionExtractor(dims=64, resize="legacy_tensorflow", weights="unused").preprocess(real)
    want = interpolate_bilinear_2d_like_tensorflow1x(x, size=(299, 299), align_corners=False)
    assert torch.equal(tf, (want - 128) / 128)
    assert not torch.allclose(tm, tf, atol=1e-2)  # the two peers feed different pictures


@pytest.mark.parametrize("dims", [64, 192, pytest.param(768, marks=pytest.mark.slow),
                                  pytest.param(2048, marks=pytest.mark.slow)])
def test_features_equal_the_peers_networks(weights: Path, dims: int) -> None:
    """The same weights in torch-fidelity's network (torchmetrics runs it too) and in ganeval's give the same
    features: the networks agree up to float32 summation order; what differs between the peers is the resize."""
    real, _ = pools()
    fidelity = FeatureExtractorInceptionV3("inception-v3-compat", [str(dims)],
                                           feature_extractor_weights_path=str(weights))
    with torch.no_grad():
        tf_theirs = fidelity(real)[0]
        tm_theirs = FrechetInceptionDistance(feature=dims, feature_extractor_weights_path=str(weights)).inception(real)
    tf_ours = InceptionExtractor(dims=dims, weights=weights, resize="legacy_tensorflow")(real)
    tm_ours = InceptionExtractor(dims=dims, weights=weights, resize="torchmetrics")(real)
    scale = float(tf_theirs.abs().max())
    torch.testing.assert_close(tf_ours, tf_theirs, rtol=0, atol=1e-5 * scale)
    torch.testing.assert_close(tm_ours, tm_theirs, rtol=0, atol=1e-5 * scale)
    assert float((tm_theirs - tf_theirs).abs().max()) > 1e-3 * scale  # the peers' own features differ


def test_torchmetrics_mode_gives_torchmetrics_fid(weights: Path) -> None:
    theirs = torchmetrics_fid(weights, antialias=True)
    assert theirs > 0.1
    np.testing.assert_allclose(ganeval_fid(weights, "torchmetrics"), theirs, rtol=1e-6)
    # not the other mode's number: the peers' FIDs differ by 6e-4 relative here (docs/training.md says so)
    assert 5e-4 < abs(ganeval_fid(weights, "legacy_tensorflow") / theirs - 1) < 7e-4


def test_legacy_tensorflow_mode_gives_torch_fidelitys_fid(weights: Path) -> None:
    theirs = torch_fidelity_fid(weights)
    assert theirs > 0.1
    ours = ganeval_fid(weights, "legacy_tensorflow")
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    # torchmetrics with antialias=False resizes as torch-fidelity does, so gives the same number
    np.testing.assert_allclose(torchmetrics_fid(weights, antialias=False), theirs, rtol=1e-6)
    assert abs(ganeval_fid(weights, "legacy_pytorch") / theirs - 1) > 1e-4  # the default mode is pytorch-fid's
