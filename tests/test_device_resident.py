"""Tensor pools stay where they are: the protocol never copies a pool to the host (issue 27).

Every way a tensor's values reach numpy or the host (`Tensor.numpy`, `Tensor.cpu`, `Tensor.__array__`,
`Tensor.tolist`, `Tensor.to("cpu")`) is patched to raise for tensors that share a pool's storage; the run
must still give exactly the numbers of numpy inputs. On a GPU the same test guards the real transfers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ganeval.protocol import evaluate_detailed
from hostguard import guard_storages

METRICS = {"imd": {}, "fid": {}, "kid": {"subset_size": 50, "subsets": 5}}


@pytest.fixture
def pools() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal((300, 8)).astype(np.float32), rng.standard_normal((250, 8)).astype(np.float32) + 0.3,
            rng.standard_normal((260, 8)).astype(np.float32) * 1.2)


def guard_pools(monkeypatch: pytest.MonkeyPatch, tensors: list[torch.Tensor]) -> list[str]:
    """Make every host conversion of `tensors` (or a view of them) raise; return the list of attempts."""
    return guard_storages(monkeypatch, {t.untyped_storage().data_ptr() for t in tensors})


def run(real, fakes, device: str, results_dir=None):
    return evaluate_detailed(real, fakes, runs=3, sample_size=120, metrics=METRICS, seed=3, device=device,
                             results_dir=results_dir, progress=False).runs


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_tensor_pools_are_never_copied_to_the_host(pools, device, monkeypatch, tmp_path):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    real, fa, fb = pools
    want = run(real, {"a": fa, "b": fb}, device)
    tensors = [torch.from_numpy(a.copy()).to(device) for a in (real, fa, fb)]
    tried = guard_pools(monkeypatch, tensors)
    got = run(tensors[0], {"a": tensors[1], "b": tensors[2]}, device)
    stored = run(tensors[0], {"a": tensors[1], "b": tensors[2]}, device, tmp_path / "r")  # identity hashed too
    assert tried == []
    if device == "cpu":  # the same arithmetic on the same rows: the same numbers
        assert got["value"].tolist() == want["value"].tolist()
    else:  # GPU kernels may sum in another order for another input layout: float32 rounding
        np.testing.assert_allclose(got["value"], want["value"], rtol=1e-4)
    assert stored["value"].tolist() == got["value"].tolist()


def test_the_guard_catches_a_host_copy(pools, monkeypatch):
    """The patch above is live: converting a guarded pool raises (so the test above could fail)."""
    t = torch.from_numpy(pools[0].copy())
    guard_pools(monkeypatch, [t])
    with pytest.raises(AssertionError, match="host copy"):
        t.numpy()
    with pytest.raises(AssertionError, match="host copy"):
        np.asarray(t[:5])  # a view shares the storage


def test_tensor_and_array_pools_share_one_identity(pools, tmp_path):
    """A results directory made from numpy pools resumes from the same values given as tensors."""
    from ganeval.hashing import array_identity

    real = pools[0]
    assert array_identity(real) == array_identity(torch.from_numpy(real.copy()))
    first = evaluate_detailed(real, pools[1], runs=2, sample_size=120, metrics=METRICS, seed=3, device="cpu",
                              results_dir=tmp_path, progress=False).runs
    more = evaluate_detailed(torch.from_numpy(real.copy()), torch.from_numpy(pools[1].copy()), runs=3, sample_size=120,
                             metrics=METRICS, seed=3, device="cpu", results_dir=tmp_path, progress=False).runs
    assert more[more["run"] < 2]["value"].tolist() == first["value"].tolist()
