"""The documentation site builds without warnings (`mkdocs build --strict`); skipped where mkdocs-material is not
installed (it is in the dev extra)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("material") is None, reason="mkdocs-material is not installed")
def test_docs_build_strict(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "first-minutes" / "index.html").is_file()
