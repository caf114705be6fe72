"""The command line: formats, exit codes, stdin, rules/explain, config errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dralint.cli.app import main

from .conftest import EXAMPLES, REPO


def run(args: list[str], stdin: bytes | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dralint", *args], input=stdin.decode() if stdin else None, cwd=cwd,
        capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )


def test_json_contract_on_examples() -> None:
    p = run(["check", "examples/legacy", "--format", "json"])
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert doc["version"] == 1
    assert set(doc["summary"]) >= {"files", "findings", "errors", "warnings", "info", "kubernetes_version"}
    keys = {"rule", "name", "severity", "message", "path", "line", "column", "end_line", "end_column", "object",
            "source", "fix"}
    for f in doc["findings"]:
        assert set(f) == keys
        assert f["line"] >= 1 and f["column"] >= 1
    by_path = {(f["path"], f["rule"], f["line"], f["column"]) for f in doc["findings"]}
    assert ("examples/legacy/apps/trainer.yaml", "DRA201", 37, 13) in by_path
    helm = [f for f in doc["findings"] if f["path"].endswith("inference.yaml")]
    assert helm and helm[0]["source"] == "inference/templates/deployment.yaml"
    assert helm[0]["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "serving",
                                 "name": "inference"}


def test_clean_repo_exits_zero() -> None:
    p = run(["check", "examples/dra-v1"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "All checks passed" in p.stdout


def test_text_format_is_ruff_like() -> None:
    p = run(["check", str(EXAMPLES / "legacy" / "platform" / "quota.yaml")])
    first = p.stdout.splitlines()[0]
    assert first.startswith(str(EXAMPLES / "legacy" / "platform" / "quota.yaml") + ":8:5: DRA205 [warning] ")
    assert "\x1b[" not in p.stdout
    assert "Found 1 finding (1 warning) in 1 file." in p.stdout


def test_stdin_with_filename() -> None:
    text = (EXAMPLES / "legacy" / "apps" / "trainer.yaml").read_bytes()
    p = run(["check", "-", "--stdin-filename", "trainer.yaml", "--format", "json"], stdin=text)
    doc = json.loads(p.stdout)
    assert {f["path"] for f in doc["findings"]} == {"trainer.yaml"}


def test_fail_on_exit_zero_and_statistics() -> None:
    assert run(["check", "examples/legacy", "--fail-on", "error"]).returncode == 0
    assert run(["check", "examples/legacy", "--exit-zero"]).returncode == 0
    p = run(["check", "examples/legacy", "--statistics"])
    assert any(line.split()[:2] == ["7", "DRA201"] for line in p.stdout.splitlines())


def test_usage_errors_exit_2() -> None:
    assert run(["check", "--select", "DRA9X", "examples"]).returncode == 2
    assert run(["check", "does-not-exist.yaml"]).returncode == 2
    assert run(["check", "--kubernetes-version", "banana", "examples"]).returncode == 2
    assert run(["check", "--format", "nope", "examples"]).returncode == 2
    assert run(["explain", "DRA999"]).returncode == 2


def test_bad_config_file_exits_2(tmp_path: Path) -> None:
    (tmp_path / ".dralint.yaml").write_text("select: [DRA2]\nunknown-key: 1\n")
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    p = run(["check", "a.yaml"], cwd=tmp_path)
    assert p.returncode == 2 and "unknown-key" in p.stderr and "Traceback" not in p.stderr


def test_rules_and_explain_render_from_rule_folders() -> None:
    p = run(["rules", "--format", "json"])
    rules = json.loads(p.stdout)
    assert {r["code"] for r in rules} >= {"DRA001", "DRA201", "DRA309"}
    p = run(["explain", "DRA201"])
    assert p.returncode == 0 and "# DRA201 legacy-gpu-extended-resource" in p.stdout
    assert (REPO / "rules" / "DRA201-legacy-gpu-extended-resource" / "bad.yaml").read_text().splitlines()[0] in p.stdout
    md = run(["rules", "--format", "markdown"]).stdout
    assert md.startswith("| Code | Name |") and "| DRA204 | mixed-allocation-models |" in md


def test_output_file_keeps_text_on_terminal(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    p = run(["check", "examples/legacy", "--format", "json", "--output", str(out)])
    assert p.returncode == 1
    assert "DRA201 [warning]" in p.stdout
    assert json.loads(out.read_text())["summary"]["findings"] >= 10


def test_color_only_when_asked() -> None:
    p = run(["check", "examples/legacy/platform", "--color", "always"])
    assert "\x1b[" in p.stdout


@pytest.mark.parametrize("argv", [["--version"], ["rules"], ["check", "--help"]])
def test_main_returns_int(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0


def test_target_versions_outside_the_data() -> None:
    p = run(["check", "--kubernetes-version", "1.31", "examples/dra-v1"])
    assert p.returncode == 2 and "older than the oldest minor" in p.stderr
    p = run(["check", "--kubernetes-version", "1.40", "-v", "examples/dra-v1"])
    assert p.returncode == 0 and "no data for Kubernetes 1.40" in p.stderr
