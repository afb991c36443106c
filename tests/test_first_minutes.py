"""The install and wording a new user meets first: pytest is no runtime dependency, the README names the CPU-only
PyTorch install, --help says what cache_dir holds, feature-array progress counts rows (not images)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def test_pytest_is_a_dev_dependency_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = lambda deps: {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0].lower() for d in deps}  # noqa: E731
    assert "pytest" not in names(project["dependencies"])
    assert "pytest" in names(project["optional-dependencies"]["dev"])
    assert '".[dev]"' in (ROOT / ".ci" / "run").read_text()  # CI installs the dev extra, which brings pytest


def test_readme_names_the_cpu_only_install_and_keeps_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "--index-url https://download.pytorch.org/whl/cpu" in readme
    assert "pip install torch==2.14.1 torchvision==0.29.1 -e \".[app]\" && ganeval" in readme  # the app: Hydra
    assert "pip install torch==2.14.1 torchvision==0.29.1 -e \".[dev]\" && python -m pytest" in readme


def test_help_says_cache_dir_holds_features_not_generators() -> None:
    from ganeval.app.help import key_descriptions

    line = key_descriptions()["cache_dir"]
    assert "generator" not in line and "feature cache" in line


def test_feature_rows_progress_says_rows(capsys) -> None:  # type: ignore[no-untyped-def]
    from ganeval.features import IdentityExtractor, PixelsExtractor
    from ganeval.features.extraction import extract_with_info

    extract_with_info(np.zeros((30, 4), np.float32), IdentityExtractor(), progress=True)
    err = capsys.readouterr().err
    if "features[identity]" in err:  # identity may skip the pass entirely: then there is no bar to word wrongly
        assert "row" in err and "img" not in err
    extract_with_info(np.zeros((30, 8, 8, 3), np.uint8), PixelsExtractor(), progress=True)
    assert "img" in capsys.readouterr().err
