"""docs/training.md's recipe for logged intervals as a band (TensorBoard's Margin chart, W&B): its code block runs as
written, against a recording writer and, where the tensorboard package is installed, torch's SummaryWriter."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "training.md"


def _recipe() -> dict[str, Any]:
    text = DOC.read_text()
    section = text[text.index("## Intervals as a band in TensorBoard and W&B"):]
    (block,) = re.findall(r"```python\n(.*?)```", section[:section.index("\n## ", 5)], flags=re.S)
    space: dict[str, Any] = {}
    exec(compile(block, str(DOC), "exec"), space)  # noqa: S102 (the documentation's own code)
    return space


class Recorder:
    def __init__(self) -> None:
        self.scalars: list[tuple[str, float, int]] = []

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.scalars.append((tag, value, step))


SCORES = {"fid": 12.5, "fid_ci_low": 11.6, "fid_ci_high": 13.4, "imd": 20.0, "imd_ci_low": 15.0, "imd_ci_high": 25.0}


def test_recipe_logs_every_key_and_lays_out_one_band_per_metric() -> None:
    torch = pytest.importorskip("torch")
    r = _recipe()
    w = Recorder()
    r["log_with_band"](w, {k: torch.tensor(v, dtype=torch.float64) for k, v in SCORES.items()}, 7)
    assert w.scalars == [(f"ganeval/{k}", v, 7) for k, v in SCORES.items()]
    layout = r["band_layout"](["fid", "imd"])
    assert layout == {"ganeval": {"fid": ["Margin", ["ganeval/fid", "ganeval/fid_ci_low", "ganeval/fid_ci_high"]],
                                  "imd": ["Margin", ["ganeval/imd", "ganeval/imd_ci_low", "ganeval/imd_ci_high"]]}}
    logged = {tag for tag, _, _ in w.scalars}
    assert all(tag in logged for chart in layout["ganeval"].values() for tag in chart[1])  # every tag is logged
    assert r["wandb_row"](SCORES) == {f"ganeval/{k}": v for k, v in SCORES.items()}


def test_recipe_with_torchs_summary_writer(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter

    r = _recipe()
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_custom_scalars(r["band_layout"](["fid", "imd"]))
        r["log_with_band"](writer, SCORES, 0)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == sorted(f"ganeval/{k}" for k in SCORES)
    assert events.Scalars("ganeval/fid_ci_high")[0].value == pytest.approx(13.4)
