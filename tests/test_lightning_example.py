"""The Lightning example of docs/training.md (docs/examples/lightning_gan.py) trains and logs IMD, FID and KID with
their intervals at the epochs it says (issue 33): two epochs on CPU, tiny sets."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

pytest.importorskip("lightning")
pytest.importorskip("torchmetrics")

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "lightning_gan.py"


@pytest.mark.slow
def test_the_lightning_example_logs_the_metrics_every_epoch(tmp_path: Path, one_torch_thread: None) -> None:
    spec = importlib.util.spec_from_file_location("lightning_gan", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.main(["--epochs", "2", "--every", "1", "--train-size", "256", "--eval-size", "256",
                         "--root", str(tmp_path)])
    assert [row["epoch"] for row in model.history] == [0, 1]
    for row in model.history:
        assert set(row) == {"epoch", "imd", "fid", "fid_ci_low", "fid_ci_high", "kid", "kid_ci_low", "kid_ci_high"}
        assert all(math.isfinite(v) for v in row.values())
        assert row["fid_ci_low"] < row["fid"] < row["fid_ci_high"] and row["imd"] > 0
    logged = model.trainer.callback_metrics
    assert logged["fid"].item() == model.history[-1]["fid"] and logged["imd"].item() == model.history[-1]["imd"]
