"""The documentation site builds without warnings (`mkdocs build --strict`), its API reference generated from the
docstrings (a renamed or removed function fails the build); skipped where mkdocs-material or mkdocstrings is not
installed (they are in the dev extra)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("material") is None or importlib.util.find_spec("mkdocstrings") is None,
                    reason="mkdocs-material or mkdocstrings is not installed")
def test_docs_build_strict(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "first-minutes" / "index.html").is_file()
    # the reference holds each public object's docstring, taken from the code
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    import ganeval.app.scoring
    import ganeval.metrics
    import ganeval.protocol.api

    for obj in (ganeval.app.scoring.score, ganeval.app.scoring.ScoreResult, ganeval.protocol.api.evaluate,
                ganeval.metrics.fid, ganeval.metrics.imd, ganeval.metrics.register_metric):
        first = " ".join(obj.__doc__.split("\n\n")[0].split()).split("`")[0][:40]
        assert first in " ".join(api.split()), (obj, first)
