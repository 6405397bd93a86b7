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


def _fingerprint_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("results_fingerprint", ROOT / "scripts" / "results_fingerprint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_version_moves_when_results_change() -> None:
    """The examples' results under every profile hash to what tests/results_fingerprint.json recorded
    with this version: results that change need a new version (scripts/results_fingerprint.py)."""
    import json

    import pytest

    pytest.importorskip("ccsim._core")
    script = _fingerprint_script()
    record = json.loads(script.RECORD.read_text())
    assert record["version"] == script.package_version(), "bump recorded without --write: run scripts/results_fingerprint.py --write"
    changed = sorted(k for k, v in script.fingerprint().items() if record["runs"].get(k) != v)
    assert changed == [], ("results changed; bump the version (pyproject.toml, Cargo.toml, CITATION.cff, CHANGELOG.md) "
                           "and run scripts/results_fingerprint.py --write")


def test_recording_other_results_under_the_same_version_is_refused(tmp_path, monkeypatch) -> None:
    import json

    import pytest

    pytest.importorskip("ccsim._core")
    script = _fingerprint_script()
    record = json.loads(script.RECORD.read_text())
    record["runs"]["single_flow@linux"] = "0" * 64
    fake = tmp_path / "record.json"
    fake.write_text(json.dumps(record))
    monkeypatch.setattr(script, "RECORD", fake)
    monkeypatch.setattr(script, "EXAMPLES", ["single_flow"])
    monkeypatch.setattr(script, "PROFILES", ["linux"])
    assert script.main(["--write"]) == 1 and json.loads(fake.read_text()) == record
    monkeypatch.setattr(script, "package_version", lambda: "99.0.0")
    assert script.main(["--write"]) == 0 and json.loads(fake.read_text())["version"] == "99.0.0"
