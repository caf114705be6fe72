"""The release tag users are told to name (docs/releasing.md): `v` + the version, everywhere."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from dralint import __version__
from tests.conftest import EXAMPLES, REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TAG = f"v{__version__}"
DOCS = [REPO / "README.md", REPO / "docs" / "integrations.md", EXAMPLES / "github-workflow.yml"]


def test_versions_agree() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_releasing_doc_describes_the_tag_scheme() -> None:
    doc = (REPO / "docs" / "releasing.md").read_text(encoding="utf-8")
    assert "`v` followed by the version" in doc and "git tag -a" in doc
    assert "releasing.md" in (REPO / "README.md").read_text(encoding="utf-8")


def _refs(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return re.findall(r"^\s*rev:\s*(\S+)", text, re.M) + re.findall(r"dralint/dralint@(\S+)", text)


def test_every_snippet_names_the_current_release_tag() -> None:
    found = {p.name: _refs(p) for p in DOCS}
    assert found["README.md"], "the README has the pre-commit and Actions snippets"
    for name, refs in found.items():
        for ref in refs:
            assert ref == TAG, f"{name} names {ref}; the current release tag is {TAG} (docs/releasing.md)"
