"""The files a user or maintainer looks for beside the code: the licence, the citation (matching the paper's own
title and authors), the package index's README (no link that breaks outside the repository), the changelog."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
# the paper's LaTeX source, where a checkout has it beside itself (../shared, or ../../shared for a worktree)
PAPER = next((p for p in (ROOT.parent / "shared/paper/imd-paper.tex", ROOT.parent.parent / "shared/paper/imd-paper.tex")
              if p.is_file()), ROOT / "missing")


def test_licence_is_the_mit_text_that_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text


def _cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_citation_cff_cites_the_imd_paper_and_the_software_version() -> None:
    cff = _cff()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == project["version"] and cff["license"] == project["license"]
    paper = cff["preferred-citation"]
    assert paper["title"] == "The Shape of Data: Intrinsic Distance for Data Distributions" and paper["year"] == 2020
    assert [a["family-names"] for a in paper["authors"]] == [
        "Tsitsulin", "Munkhoeva", "Mottin", "Karras", "Bronstein", "Oseledets", "Müller"]


@pytest.mark.skipif(not PAPER.is_file(), reason="the paper's LaTeX source is not beside this checkout")
def test_citation_matches_the_paper_source() -> None:
    tex = PAPER.read_text()
    title = re.search(r"\\title\{(.*?)\}", tex).group(1).replace("\\\\", " ")
    assert title == _cff()["preferred-citation"]["title"]
    block = tex[tex.index("\\author{"):tex.index("\\begin{document}")]
    block = block.replace('{\\"u}', "ü")
    for a in _cff()["preferred-citation"]["authors"]:
        assert f"{a['given-names']} {a['family-names']}" in block, a


def test_bibtex_in_readme_and_docs_names_the_same_paper() -> None:
    for page in ("README.md", "docs/index.md", "README_PACKAGE.md"):
        text = (ROOT / page).read_text()
        assert "@inproceedings{tsitsulin2020shape," in text, page
        assert "title     = {The Shape of Data: Intrinsic Distance for Data Distributions}" in text, page


def test_package_readme_has_no_link_that_breaks_outside_the_repository() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / project["readme"]).read_text()
    targets = re.findall(r"\]\(([^)]*)\)", text) + re.findall(r'(?:href|src)="([^"]*)"', text)
    assert all(re.match(r"https?://", t) for t in targets), targets
    # its commands are the README's (run by tests/test_commands.py), apart from the install line
    readme = (ROOT / "README.md").read_text()
    commands = [ln.strip() for ln in text.splitlines() if ln.startswith("    ganeval")]
    assert len(commands) >= 3 and all(c in readme for c in commands), commands


def test_changelog_names_every_issue_that_commits_name() -> None:
    import subprocess

    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n") and "## [Unreleased]" in text
    try:
        log = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%s"], capture_output=True, text=True,
                             check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout")
    named = set(re.findall(r"^#(\d+):", log, flags=re.M))
    listed = set(re.findall(r"#(\d+)", text))
    assert named <= listed, sorted(named - listed, key=int)
