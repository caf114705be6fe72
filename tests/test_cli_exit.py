"""Exit codes and messages of the command line (issue 16, point 1): what a user sees when a path is
wrong, a report cannot be written, a fix run leaves nothing or something behind, or a file does not
parse. Each test runs the real CLI (`dralint.cli.app.main`, the console script's body, or a subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dralint.cli.app import main

REPO = Path(__file__).resolve().parent.parent
#: a pod with a v1beta1-style claim source that DRA309's safe fix rewrites, and the rewritten text
FIXABLE = (REPO / "rules" / "DRA309-pod-claim-source" / "bad.yaml").read_text(encoding="utf-8")
FIXED = (REPO / "rules" / "DRA309-pod-claim-source" / "bad.fixed.yaml").read_text(encoding="utf-8")
#: a container asking the device plugin for a GPU: DRA201, which `fix` leaves to `migrate`
LEGACY = """apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: train
    image: registry.example/train:1
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text`` (how the expectations are derived)."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


# ----------------------------------------------------------------------------------------------
# paths and report files


def test_a_missing_path_prints_only_the_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "does-not-exist"]) == 2
    out, err = capsys.readouterr()
    assert "does-not-exist: no such file or directory" in err
    assert "All checks passed" not in out + err
    assert out == ""


def test_a_missing_path_among_real_ones_writes_nothing_in_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.yaml").write_text(FIXABLE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--isolated", "--select", "DRA309", "p.yaml", "typo.yaml"]) == 2
    out, err = capsys.readouterr()
    assert "typo.yaml: no such file or directory" in err
    assert "All checks passed" not in out + err
    assert (tmp_path / "p.yaml").read_text(encoding="utf-8") == FIXABLE


def test_output_into_a_missing_directory_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pod.yaml").write_text(LEGACY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "no-such-dir" / "report.json"
    assert main(["check", "--isolated", "--format", "json", "--output", str(target), "pod.yaml"]) == 2
    err = capsys.readouterr().err
    assert "cannot write the report" in err and "internal error" not in err
    assert not target.parent.exists()


# ----------------------------------------------------------------------------------------------
# fix: ruff's exit codes


def test_fix_exits_0_when_every_finding_was_fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.yaml").write_text(FIXABLE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--isolated", "--select", "DRA309", "p.yaml"]) == 0
    assert (tmp_path / "p.yaml").read_text(encoding="utf-8") == FIXED
    assert "Fixed 1 finding in 1 file." in capsys.readouterr().err


def test_check_fix_exits_0_when_every_finding_was_fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "p.yaml").write_text(FIXABLE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--fix", "--isolated", "--select", "DRA309", "p.yaml"]) == 0
    assert (tmp_path / "p.yaml").read_text(encoding="utf-8") == FIXED


@pytest.mark.parametrize("command", [["fix"], ["check", "--fix"]])
def test_exit_non_zero_on_fix_keeps_the_old_behaviour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      command: list[str]) -> None:
    (tmp_path / "p.yaml").write_text(FIXABLE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main([*command, "--exit-non-zero-on-fix", "--isolated", "--select", "DRA309", "p.yaml"]) == 1
    assert (tmp_path / "p.yaml").read_text(encoding="utf-8") == FIXED
    # nothing left to change: 0 even with the flag
    assert main([*command, "--exit-non-zero-on-fix", "--isolated", "--select", "DRA309", "p.yaml"]) == 0


def test_fix_exits_1_when_findings_remain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.yaml").write_text(FIXABLE, encoding="utf-8")
    (tmp_path / "legacy.yaml").write_text(LEGACY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--isolated", "--select", "DRA309,DRA201", "p.yaml", "legacy.yaml"]) == 1
    out = capsys.readouterr().out
    assert (tmp_path / "p.yaml").read_text(encoding="utf-8") == FIXED  # the fixable one was still fixed
    line, col = _line_col(LEGACY, LEGACY.index("nvidia.com/gpu"))
    assert f"legacy.yaml:{line}:{col}: DRA201" in out
    # --exit-zero: the remaining warning does not fail the run
    assert main(["fix", "--isolated", "--exit-zero", "--select", "DRA201", "legacy.yaml"]) == 0


def test_fix_diff_exits_1_when_it_would_change_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "p.yaml").write_text(FIXABLE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--diff", "--isolated", "--select", "DRA309", "p.yaml"]) == 1
    assert (tmp_path / "p.yaml").read_text(encoding="utf-8") == FIXABLE


# ----------------------------------------------------------------------------------------------
# syntax errors: where, in the file's own language


def test_a_broken_json_file_is_a_json_syntax_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # valid YAML (a flow mapping with a null value), but not JSON: kubectl would refuse it
    text = '{"apiVersion": "v1", "kind": "ConfigMap",\n "metadata": {"name": "x"},\n "data": }\n'
    (tmp_path / "cm.json").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "cm.json"]) == 1
    out = capsys.readouterr().out
    line, col = _line_col(text, text.index("}\n", text.index('"data"')))
    assert f"cm.json:{line}:{col}: DRA001 [error] JSON syntax error: Expecting value at line {line}, column {col}" \
        in out


def test_a_yaml_error_says_where_the_open_flow_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    text = LEGACY.replace("  containers:\n", "  tolerations: [{key: a}, {key: b}\n  containers:\n")
    (tmp_path / "pod.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "pod.yaml"]) == 1
    out = capsys.readouterr().out
    line, col = _line_col(text, text.index("[{key"))
    assert "DRA001 [error] YAML syntax error:" in out
    assert f"(in the flow sequence that starts at line {line}, column {col})" in out


def test_a_yaml_error_says_where_the_block_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # `image:` indented one space less than `name:`: it ends the container and the list, and then
    # stands deeper than `containers:`, inside the spec's block mapping, where no key can start
    text = LEGACY.replace("    image:", "   image:")
    (tmp_path / "pod.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "pod.yaml"]) == 1
    out = capsys.readouterr().out
    line, col = _line_col(text, text.index("containers:"))
    assert f"(in the block mapping that starts at line {line}, column {col})" in out


# ----------------------------------------------------------------------------------------------
# the console script and the README


def test_console_script_missing_path(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "dralint", "check", "--isolated", "nope/"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 2
    assert p.stdout == "" and "nope/: no such file or directory" in p.stderr
    assert "Traceback" not in p.stderr


def test_readme_documents_the_fix_exit_codes() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("Exit codes"): readme.index("## Usage")]
    assert "--exit-non-zero-on-fix" in section
    assert "every such finding was fixed" in section
    assert "JSON syntax error" in section


# ----------------------------------------------------------------------------------------------
# shell completion (point 9): click's _DRALINT_COMPLETE lists the choices of --format


@pytest.mark.parametrize("option", ["--format", "--output-format"])
def test_completion_lists_the_output_formats(tmp_path: Path, option: str) -> None:
    from dralint.report import format_names

    env = {"COMP_WORDS": f"dralint check {option} ", "COMP_CWORD": "3", "_DRALINT_COMPLETE": "bash_complete",
           "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-m", "dralint"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    offered = {line.partition(",")[2] for line in p.stdout.splitlines()}
    assert offered == set(format_names())


def test_an_unknown_format_is_a_usage_error_listing_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    from dralint.report import format_names

    assert main(["check", "--isolated", "--format", "yml", "."]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in format_names())


def test_readme_documents_shell_completion() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "_DRALINT_COMPLETE=bash_source dralint" in readme and "_DRALINT_COMPLETE=zsh_source dralint" in readme
