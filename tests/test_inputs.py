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


def test_a_file_is_read_to_its_end_or_just_past_the_limit_whatever_its_size_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The read is sized by the file's size when it was looked at; a file that grew since (or one
    whose size says 0, as some special files do) is still read whole, and never more than one
    byte past the limit."""
    import os

    from dralint.inputs import files
    from dralint.inputs.load import Limits

    p = tmp_path / "a.yaml"
    p.write_bytes(b"a: 1\n" * 1000)
    real_stat = os.stat

    def stat_saying(size: int) -> object:
        def fake(path: object, *args: object, **kwargs: object) -> os.stat_result:
            st = real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, size,
                                   int(st.st_atime), int(st.st_mtime), int(st.st_ctime)))
        return fake

    ref = files.FileRef("a.yaml", str(p))
    for seen in (0, 10, 4999, 5000, 6000):
        monkeypatch.setattr(files.os, "stat", stat_saying(seen))
        assert files.read_raw(ref, Limits()) == b"a: 1\n" * 1000, seen
        got = files.read_raw(ref, Limits(max_file_bytes=1234))
        if seen > 1234:  # refused from its size alone
            assert not isinstance(got, bytes) and got.problems[0].code == "DRA005", seen
        else:  # it grew past the limit since: read one byte past it, which the loader refuses
            assert isinstance(got, bytes) and len(got) == 1235, seen
