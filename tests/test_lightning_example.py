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


@pytest.mark.slow
def test_the_numbers_docs_training_quotes_are_what_the_documented_command_prints(tmp_path: Path) -> None:
    """docs/training.md quotes the scores `python docs/examples/lightning_gan.py --epochs 6 --every 2` prints: run as a
    user runs it (a script file), every quoted number equals the printed one (4 significant digits)."""
    import os
    import re
    import subprocess
    import sys

    root = EXAMPLE.parents[2]
    done = subprocess.run([sys.executable, str(EXAMPLE), "--epochs", "6", "--every", "2", "--root", str(tmp_path)],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    printed = [dict(zip(line.split()[::2], line.split()[1::2])) for line in done.stdout.splitlines()
               if line.startswith("epoch ")]
    assert [row["epoch"] for row in printed] == ["1", "3", "5"]
    text = " ".join((root / "docs" / "training.md").read_text().split())
    quoted = re.search(r"FID fell (.+?) and KID (.+?), while IMD read (.+?) \(one run each", text)
    assert quoted is not None, "docs/training.md no longer quotes the run"
    fid = re.findall(r"([\d.]+) \[([\d.]+), ([\d.]+)\]", quoted.group(1))
    assert fid == [(r["fid"], r["fid_ci_low"], r["fid_ci_high"]) for r in printed]
    assert quoted.group(2).split(" → ") == [r["kid"] for r in printed]
    assert quoted.group(3).split(", ") == [r["imd"] for r in printed]
