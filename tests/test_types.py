"""What the type checker (mypy, run by .ci/run over ganeval/) sees of the public API, and the mismatches it found:
the metric registry's `reach` (2 or 4 values), a memory-mapped real pool in `run_blocks`, and a plugin extractor
that knows its feature dimension only after extracting."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from ganeval.metrics import Metrics, fid
from ganeval.metrics.registry import REGISTRY
from ganeval.metrics.validation import FeatureInfo, working_dtype

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_checker_sees_the_lazy_public_functions_signatures(tmp_path: Path) -> None:
    # `ganeval.score`/`evaluate`/`save_reference` load lazily (module __getattr__); before, mypy saw them as Any
    api = pytest.importorskip("mypy.api")
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent("""
        import ganeval
        reveal_type(ganeval.score)
        reveal_type(ganeval.evaluate)
        reveal_type(ganeval.save_reference)
        ganeval.score("digits", "digits", no_such_option=1)
    """))
    out, err, _ = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"),
                           "--follow-imports", "silent", str(user)])
    revealed = [line.split("Revealed type is ", 1)[1] for line in out.splitlines() if "Revealed type is" in line]
    assert len(revealed) == 3, out + err
    assert all(r.startswith('"def (') for r in revealed), revealed
    assert "ganeval.app.scoring.ScoreResult" in revealed[0] and "ganeval.data.references.Moments" in revealed[2]
    assert 'Unexpected keyword argument "no_such_option"' in out, out


def test_every_registered_reach_gives_the_bounds_the_registry_declares() -> None:
    # the registry declared (working, wide); FID, KID, sFID, FD∞ and MiFID return (working, wide, precise32,
    # precise64): `validation.ReachBounds` is either, and `working_dtype` reads the flags
    reaching = [m for m in REGISTRY.values() if m.reach is not None]
    assert {"fid", "kid", "imd"} <= {m.name for m in reaching}
    for m in reaching:
        for peak in (0.0, 1e-30, 1.0, 1e30):
            bounds = m.reach(peak, 100, 8, m.resolve(None))
            assert len(bounds) in (2, 4), (m.name, bounds)
            assert all(isinstance(b, float) and b >= 0 for b in bounds[:2]), (m.name, bounds)
            assert all(isinstance(b, (bool, np.bool_)) for b in bounds[2:]), (m.name, bounds)
    assert len(REGISTRY["fid"].reach(1.0, 10, 4, {})) == 4 and len(REGISTRY["imd"].reach(1.0, 10, 4, {})) == 2


@pytest.mark.parametrize(("peak", "want"), [(1.0, torch.float32), (1e-3, torch.float64), (1e-5, None)])
def test_kid_precision_flags_reach_the_working_precision_through_the_registry(peak: float, want: torch.dtype | None) -> None:
    # KID's kernel (x·y/D + 1)³: at 1e-3 its terms keep their bits only in float64, at 1e-5 not even there
    info = FeatureInfo(100, 8, peak, torch.float32)
    reaches = Metrics(["imd", "kid"]).reaches()
    if want is None:
        with pytest.raises(ValueError, match=r"^x has values no larger than 1e-05: .*KID.* would lose most of its precision even in float64"):
            working_dtype(info, "x", reaches)
    else:
        assert working_dtype(info, "x", reaches) == want


def test_run_blocks_takes_a_memory_mapped_real_pool(tmp_path: Path) -> None:
    # before: AttributeError 'SharedArray' object has no attribute 'shape' (the dimension and memory checks)
    from ganeval.protocol import Block, Settings, run_blocks, share

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(60, 4)), rng.normal(size=(60, 4)) + 0.3
    settings = Settings(runs=3, sample_size=30, metrics=["fid"], progress=False)
    shared = run_blocks([Block(share(x, os.path.join(tmp_path, "real.npy")), [({"model": "g"}, y)])], settings)
    plain = run_blocks([Block(x, [({"model": "g"}, y)])], settings)
    assert list(shared["value"]) == list(plain["value"]) and len(plain) == 3
    with pytest.raises(ValueError, match="the real set has 4 features and the generated set g has 5"):
        run_blocks([Block(share(x, os.path.join(tmp_path, "r2.npy")), [({"model": "g"}, y[:, :1].repeat(5, 1))])],
                   settings)


def test_an_image_extractor_without_feature_dim_scores_through_score() -> None:
    # the extractor of docs/architecture.md with images = True declares no dimension before extracting (None);
    # before: TypeError in the memory check (2 * d * d with d None)
    import ganeval
    from ganeval.features.base import REGISTRY as EXTRACTORS, Extractor, register
    from ganeval.metrics.registry import FEATURE_SPACES

    name = "channel_mean_test_types"
    try:
        @register(name)
        class ChannelMean(Extractor):
            images = True
            cacheable = False

            def __call__(self, batch: torch.Tensor) -> torch.Tensor:
                return batch.float().mean(dim=(2, 3))

        rng = np.random.default_rng(0)
        a, b = (rng.integers(0, 256, size=(60, 3, 8, 8), dtype=np.uint8) for _ in range(2))
        r = ganeval.score(a, b, features=name, metrics=["fid"], progress=False)
        assert r is not None
        want = fid(a.astype(np.float64).mean(axis=(2, 3)), b.astype(np.float64).mean(axis=(2, 3)))
        got = r.to_dict()["results"][0]
        assert got["metric"] == "fid" and got["value"] == pytest.approx(want, rel=1e-6)
    finally:
        EXTRACTORS.pop(name, None)
        FEATURE_SPACES.pop(name, None)
