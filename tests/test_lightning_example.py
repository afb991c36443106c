"""The Lightning example of docs/training.md (docs/examples/lightning_gan.py) trains and logs IMD, FID and KID with
their intervals at the epochs it says (issue 33): two epochs on CPU, tiny sets; and the metrics in a LightningModule
under two CPU DDP ranks (gloo), one of them fed nothing, give one process's numbers (issue 45)."""

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


TWO_RANKS = '''"""Two CPU ranks under Lightning's DDP (gloo); rank 1 runs the loop but feeds the metrics nothing."""
import json
import sys

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from ganeval.torchmetrics import IMD, Protocol


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(6, 6)
        self.imd = IMD(features="identity", runs=3, sample_size=60, seed=0)
        self.protocol = Protocol({"fid": {}, "kid": {"subsets": 5, "subset_size": 40}}, features="identity",
                                 runs=3, sample_size=60, seed=0)

    def validation_step(self, batch, batch_idx):
        (x,) = batch
        if self.global_rank == 0:
            for metric in (self.imd, self.protocol):
                metric.update(x, real=True)
                metric.update(1.3 * x + 0.5, real=False)

    def on_validation_epoch_end(self):
        scores = {"imd": self.imd.compute(), **self.protocol.compute()}
        with open(f"{sys.argv[1]}/rank{self.global_rank}.json", "w") as f:
            json.dump({k: float(v) for k, v in scores.items()}, f)


if __name__ == "__main__":
    rows = torch.randn(100, 6, generator=torch.Generator().manual_seed(0))
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, use_distributed_sampler=False)
    trainer.validate(Model(), dataloaders=DataLoader(TensorDataset(rows), batch_size=32))
'''


@pytest.mark.slow
def test_two_lightning_ddp_ranks_one_fed_nothing_give_one_processs_numbers(tmp_path: Path) -> None:
    """`python script.py` with Trainer(accelerator="cpu", devices=2, strategy="ddp") (gloo; Lightning re-runs the
    script for rank 1), rank 1 feeding nothing: no abort, and both ranks get one process's numbers on rank 0's rows."""
    import json
    import os
    import subprocess
    import sys

    import torch

    from ganeval.torchmetrics import IMD, Protocol

    (tmp_path / "two_ranks.py").write_text(TWO_RANKS)
    root = EXAMPLE.parents[2]
    done = subprocess.run([sys.executable, "two_ranks.py", str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert ranks[0] == ranks[1]
    imd = IMD(features="identity", runs=3, sample_size=60, seed=0)
    protocol = Protocol({"fid": {}, "kid": {"subsets": 5, "subset_size": 40}}, features="identity", runs=3,
                        sample_size=60, seed=0)
    rows = torch.randn(100, 6, generator=torch.Generator().manual_seed(0))
    for x in rows.split(32):
        for metric in (imd, protocol):
            metric.update(x, real=True)
            metric.update(1.3 * x + 0.5, real=False)
    want = {"imd": float(imd.compute()), **{k: float(v) for k, v in protocol.compute().items()}}
    assert set(ranks[0]) == set(want) == {"imd", "fid", "fid_ci_low", "fid_ci_high", "kid", "kid_ci_low", "kid_ci_high"}
    for key, value in want.items():
        assert ranks[0][key] == pytest.approx(value, rel=1e-12, abs=0), key
