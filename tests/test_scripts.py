"""The benchmark scripts that the README and gpu_checks.sh quote still run (tiny sizes, CPU): their tables come out
and what they check holds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> str:
    res = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


@pytest.mark.slow  # over 30 s on the 2-core development machine (issue #56)
def test_imd_scaling_modes_agree() -> None:
    out = run("scripts/imd_scaling.py", "--sizes", "400", "--d", "16", "--modes", "one-pass", "streamed")
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["400"]]
    assert [r[1] for r in rows] == ["one-pass", "streamed"]
    assert rows[0][-1] == rows[1][-1]  # the same IMD either way
    alone = run("scripts/imd_scaling.py", "--sizes", "400", "--d", "16", "--no-knn-alone")
    assert [line.split()[-1] for line in alone.splitlines() if line.split()[:1] == ["400"]] == [rows[0][-1]]


def test_knn_precision_script_finds_the_same_graph() -> None:
    out = run("scripts/knn_precision.py", "--n", "300", "--d", "16")
    assert "auto picks" in out and out.count("same graph: True") == 3 and "False" not in out


@pytest.mark.parametrize("extractor,arch", [("dinov2", "vits14"), ("clip", "ViT-B-32")])
def test_bench_features_times_pretrained_extractors(extractor: str, arch: str, tmp_path: Path) -> None:
    pytest.importorskip("timm" if extractor == "dinov2" else "open_clip")
    out_file = tmp_path / "r.json"
    run("scripts/bench_features.py", "--extractor", extractor, "--arch", arch, "--n", "4", "--batch-size", "2",
        "--forward-batches", "1", "--warmup", "0", "--random-weights", "--json", str(out_file))
    r = json.loads(out_file.read_text())
    assert r["extractor"] == extractor and r["arch"] == arch and r["forward_img_per_s"] > 0
    assert r["end_to_end_img_per_s"] > 0
