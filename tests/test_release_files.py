"""The files a release carries agree with the package: CITATION.cff names the version of
pyproject.toml, the changelog has its Unreleased section, a local virtualenv is never committed."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_citation_names_the_packages_version_and_licence() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    citation = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", citation, re.M)
    assert re.search(rf'^version: "{re.escape(project["version"])}"$', citation, re.M)
    assert "  - MIT\n  - Apache-2.0" in citation and project["license"]["text"] == "MIT OR Apache-2.0"


def test_changelog_has_an_unreleased_section_listing_changes_to_results() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    unreleased = text.split("\n## Unreleased\n", 1)[1].split("\n## ", 1)[0]
    assert "### Changes to results" in unreleased
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"\n## {version}\n" in text


def test_a_virtualenv_is_ignored() -> None:
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()
