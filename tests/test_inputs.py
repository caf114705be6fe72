"""Hostile and odd files through the real CLI: a finding or a clear error, exit 1 or 2, no traceback.

Each run is bounded (timeout and address-space limit) so a regression shows up as a failure, not a hung CI.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)

CASES: dict[str, tuple[bytes, str, int]] = {
    # name: (content, expected rule, expected line)
    "alias-bomb.yaml": (BOMB.encode(), "DRA005", 7),  # where the expansion passes the cap
    "invalid-utf8.yaml": (b"apiVersion: v1\nkind: ConfigMap\ndata:\n  k: \xc3\x28\n", "DRA005", 4),
    "deep.yaml": (("a: " + "[" * 5000 + "]" * 5000 + "\n").encode(), "DRA005", 1),
    "deep-block.yaml": ("".join(" " * i + "k:\n" for i in range(1500)).encode(), "DRA005", 1000),
    "tabs.yaml": (b"apiVersion: v1\nkind: Pod\nspec:\n\tcontainers: []\n", "DRA001", 4),
    "binary.yaml": (bytes(range(256)) * 4, "DRA005", 1),
    "template.yaml": (b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n", "DRA003", 4),
    "template-control.yaml": (b"{{- if .Values.enabled }}\napiVersion: v1\nkind: Pod\n{{- end }}\n", "DRA003", 1),
}


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1024 * 1024 * 1024, 1024 * 1024 * 1024))


def run(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dralint", "check", "--format", "json", *extra, str(path)],
        capture_output=True, text=True, timeout=30, preexec_fn=_limit,
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input_ends_in_a_finding(tmp_path: Path, name: str) -> None:
    content, rule, line = CASES[name]
    f = tmp_path / name
    f.write_bytes(content)
    p = run(f)
    assert "Traceback" not in p.stderr
    assert p.returncode == 1, p.stderr
    findings = json.loads(p.stdout)["findings"]
    assert [(x["rule"], x["line"]) for x in findings] == [(rule, line)], findings
    assert findings[0]["path"] == str(f)


@pytest.mark.parametrize("content", [b"", b"# only a comment\n# and another\n", b"---\n---\n"])
def test_empty_files_are_clean_unless_asked(tmp_path: Path, content: bytes) -> None:
    f = tmp_path / "empty.yaml"
    f.write_bytes(content)
    p = run(f)
    assert p.returncode == 0 and "Traceback" not in p.stderr
    assert json.loads(p.stdout)["findings"] == []
    p = run(f, "--extend-select", "DRA002", "--fail-on", "info")
    assert p.returncode == 1
    assert [x["rule"] for x in json.loads(p.stdout)["findings"]] == ["DRA002"]


def test_directory_named_like_a_manifest_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").mkdir()
    (tmp_path / "x.yaml" / "inner.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    p = run(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(tmp_path / "nope.yaml")
    assert p.returncode == 2 and "nope.yaml" in p.stderr and "Traceback" not in p.stderr
