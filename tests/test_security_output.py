"""Text from manifests, file names and renderers cannot act on a terminal, a CI log or the CLI itself.

- terminal: ESC/OSC/CSI sequences, ``\\r`` and C1 controls in a container name or an annotation
  are printed as visible escapes in the text formats;
- GitHub Actions log: a file name, a manifest value or a Helm ``fail`` message holding
  ``\\n::error …`` or ``##[error]`` starts no workflow command, on stdout or on stderr, in any
  format; dralint's own annotations stay intact with their properties encoded;
- options: the pre-commit hooks pass file names after ``--``, so a committed file named
  ``--output=victim.yaml`` or ``--exclude=*.yaml`` is linted, not obeyed.

Each test runs the CLI in-process (``dralint.cli.main``) inside ``tmp_path``, with a fake HOME and no
cache, and sets ``GITHUB_ACTIONS`` itself so the result does not depend on where the suite runs.
"""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralint.cli.app import main
from dralint.inputs.render import helm_engine
from tests.conftest import REPO

# a terminal hyperlink (OSC 8) around text, a screen clear (CSI 2J), a carriage return that would
# overprint the line, a bell and the one-byte C1 form of CSI
HOSTILE = "c\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\x1b[2J\rFAKE\x07\x9b31m"
POD = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    dralint.io/ignore: {json.dumps("DRA999" + HOSTILE)}
spec:
  containers:
    - name: {json.dumps(HOSTILE)}
      image: x
      resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
LEGACY = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
    - name: main
      image: x
      resources: {limits: {nvidia.com/gpu: 1}}
"""
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim}\ndata: {keep: me}\n"
EVIL_NAME = "a\n::error file=x::pwned.yaml"
TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
"""
SERVER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  template:
    spec:
      resourceClaims:
        - name: gpu
          resourceClaimTemplateName: one-gpu
      containers:
        - name: main
          image: x
          resources:
            claims:
              - name: gpu
                request: gpu/a100
"""
# anything the terminal or the runner would act on: C0 (but tab and newline), DEL, C1
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_GAP = "[\\s\u200b-\u200f\u2060\ufeff]*"  # what the runner skips: white space, zero-width characters
ALL_FORMATS = ["text", "concise", "github", "json", "sarif", "junit", "markdown"]


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", "--isolated", "--no-cache", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def workflow_commands(text: str) -> list[str]:
    """Every line the Actions runner would take as a command: ``::`` first (after white space or
    invisible characters), or ``##[`` anywhere."""
    lines = re.split("\r\n|\r|\n", text)
    return [x for x in lines if re.match(f"{_GAP}::", x) or re.search(f"#{_GAP}#{_GAP}\\[", x)]


# -- terminal ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "concise"])
@pytest.mark.parametrize("color", ["never", "always"])
def test_terminal_controls_in_a_name_and_an_annotation_are_shown_escaped(
    isolated: Path, capsys: pytest.CaptureFixture[str], fmt: str, color: str
) -> None:
    (isolated / "pod.yaml").write_text(POD, encoding="utf-8")
    code, out, _ = run(capsys, "--format", fmt, "--color", color, "pod.yaml")
    assert code == 1
    # dralint's own colours are the only escape sequences left
    own = re.sub(r"\x1b\[[0-9;]*m", "", out) if color == "always" else out
    assert not RAW_CONTROL.search(own), repr(out)
    lines = [x for x in own.splitlines() if x.startswith("pod.yaml:")]
    assert len(lines) == 2  # the unused suppression (DRA006) and the legacy request (DRA201)
    (name_line,) = [x for x in lines if "DRA201" in x]
    (annotation_line,) = [x for x in lines if "DRA006" in x]
    assert "c\\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\\\x1b[2J\\rFAKE\\x07\\x9b31m" in name_line
    # the annotation's codes are upper-cased by the suppression parser; the escapes survive it
    assert "\\x1b]8;;HTTPS://EVIL.EXAMPLE/" in annotation_line and "\\rFAKE\\x07\\x9b31M" in annotation_line


def test_stderr_shows_controls_escaped(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "missing\x1b]0;title\x07\r.yaml")
    assert code == 2
    assert not RAW_CONTROL.search(err), repr(err)
    assert "missing\\x1b]0;title\\x07\\r.yaml: no such file or directory" in err


# -- GitHub Actions log -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_a_file_name_cannot_start_a_workflow_command(
    isolated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    (isolated / EVIL_NAME).write_text(LEGACY, encoding="utf-8")
    code, out, err = run(capsys, "--format", fmt, ".")
    assert code == 1, err
    commands = workflow_commands(out + "\n" + err)
    if fmt != "github":
        assert commands == []
        return
    # only dralint's own annotation, and its file property carries the whole name, encoded
    (annotation,) = commands
    assert annotation.startswith("::warning file=a%0A%3A%3Aerror file=x%3A%3Apwned.yaml,line=8,col=")
    head, sep, _ = annotation[2:].partition("::")
    assert sep and "::" not in head and "\n" not in head


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_legacy_workflow_commands_in_manifest_text_are_broken(
    isolated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    # the runner also reads `##[name]` anywhere in a line (zero-width characters between do not stop it)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    name = "x ##[error]pwned #\u200b#[stop-commands]tok ::warning::y"
    (isolated / "pod.yaml").write_text(LEGACY.replace("name: main", f"name: {json.dumps(name)}"), encoding="utf-8")
    code, out, err = run(capsys, "--format", fmt, "pod.yaml")
    assert code == 1, err
    commands = workflow_commands(out + err)
    if fmt == "github":
        # dralint's own annotation: the runner reads it as `::warning` and looks no further
        (own,) = commands
        assert own.startswith("::warning file=pod.yaml,")
    else:
        assert commands == []
    # machine formats keep the exact value
    if fmt == "json":
        assert json.loads(out)["findings"][0]["message"].startswith(f"container `{name}`")
    elif fmt == "sarif":
        assert json.loads(out)["runs"][0]["results"][0]["message"]["text"].startswith(f"container `{name}`")
    elif fmt == "junit":
        failure = ET.fromstring(out).find(".//failure")
        assert failure is not None and (failure.get("message") or "").startswith(f"container `{name}`")


def test_own_annotations_are_untouched_under_actions(
    isolated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    (isolated / "pod.yaml").write_text(LEGACY, encoding="utf-8")
    _, out, _ = run(capsys, "--format", "github", "pod.yaml")
    assert out.startswith("::warning file=pod.yaml,line=8,col=")


def test_a_missing_path_on_stderr_starts_no_command(
    isolated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, err = run(capsys, "--format", "github", "gone\n::error file=x::pwned.yaml", "gone\r##[error]y.yaml")
    assert code == 2
    assert workflow_commands(out + err) == []
    assert "pwned.yaml: no such file or directory" in err


def _failing_chart(root: Path, message: str) -> Path:
    chart = root / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n", encoding="utf-8")
    # a Go template string: the renderer puts real line breaks into its error message
    (chart / "templates" / "x.yaml").write_text(f"{{{{ fail {json.dumps(message)} }}}}\n", encoding="utf-8")
    return chart


def test_renderer_messages_start_no_command_under_actions(
    isolated: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if helm_engine() is None:
        pytest.skip("no Helm engine (helm binary or dralint[helm])")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    chart = _failing_chart(isolated, "boom\n::warning::pwned\n  ::error file=x::two\n##[error]three\n\x1b[2Jfour")
    code, out, err = run(capsys, "--helm-chart", str(chart))
    assert code == 1  # a chart that does not render is a DRA009 finding carrying Helm's message
    shown = out + err
    assert "DRA009" in shown
    assert "boom" in shown and "pwned" in shown and "three" in shown  # the message is still shown
    assert workflow_commands(shown) == []
    assert not RAW_CONTROL.search(shown), repr(shown)


# -- options from file names (pre-commit) -----------------------------------------------------------


def _hook_argv(hook_id: str, files: list[str]) -> list[str]:
    """The command line pre-commit builds: the hook's entry, split like a shell would, then the files."""
    hooks: list[dict[str, Any]] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == hook_id]
    argv = shlex.split(hook["entry"])
    assert argv[0] == "dralint"
    return [*argv[1:], *hook.get("args", []), *files]


def test_a_file_named_like_output_option_is_linted_not_obeyed(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (isolated / "victim.yaml").write_text(CONFIGMAP, encoding="utf-8")
    (isolated / "--output=victim.yaml").write_text(LEGACY, encoding="utf-8")
    code = main(_hook_argv("dralint", ["--output=victim.yaml", "victim.yaml"]))
    out = capsys.readouterr().out
    assert (isolated / "victim.yaml").read_text(encoding="utf-8") == CONFIGMAP
    assert code == 1
    assert "--output=victim.yaml:8:" in out and "DRA201" in out


def test_a_file_named_like_exclude_option_excludes_nothing(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (isolated / "apps").mkdir()
    (isolated / "apps" / "trainer.yaml").write_text(LEGACY, encoding="utf-8")
    (isolated / "--exclude=*.yaml").write_text(LEGACY, encoding="utf-8")
    code = main(_hook_argv("dralint", ["--exclude=*.yaml", "apps/trainer.yaml"]))
    out = capsys.readouterr().out
    assert code == 1
    assert "apps/trainer.yaml:8:" in out
    assert "--exclude=*.yaml:8:" in out  # the odd name itself is just another manifest


def test_the_fix_hook_takes_option_like_names_as_files(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a container names a subrequest of its claim; the safe fix (DRA306) names the main request
    (isolated / "template.yaml").write_text(TEMPLATE, encoding="utf-8")
    (isolated / "server.yaml").write_text(SERVER, encoding="utf-8")
    (isolated / "--exclude=*.yaml").write_text(CONFIGMAP, encoding="utf-8")
    code = main(_hook_argv("dralint-fix", ["--exclude=*.yaml", "server.yaml"]))
    captured = capsys.readouterr()
    assert code == 1, captured.err  # a file was changed
    assert (isolated / "server.yaml").read_text(encoding="utf-8") == SERVER.replace("request: gpu/a100", "request: gpu")
    assert (isolated / "--exclude=*.yaml").read_text(encoding="utf-8") == CONFIGMAP


# -- the escaping helpers themselves ----------------------------------------------------------------


def test_the_log_guard_changes_nothing_outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    from dralint.report.escaping import log_guard

    text = "::error::x\n##[error]y\n"
    assert log_guard(text) == text
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert log_guard(text) == "\\x3a:error::x\n##\\x5berror]y\n"
    assert log_guard("a::b # [c] ##x[") == "a::b # [c] ##x["  # nothing a command could start from


def test_json_keeps_the_exact_value() -> None:
    from dralint.report.escaping import json_text

    value = "##[error] #\u200b#[ \x85\x9b\x7f \x1b"
    text = json_text(json.dumps({"v": value}, ensure_ascii=False))
    assert json.loads(text) == {"v": value}
    assert "##[" not in text and not RAW_CONTROL.search(text)


# -- report files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["check"], ["check", "--fix"], ["report"]])
def test_a_committed_link_at_the_report_path_is_not_written_through(
    isolated: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    # `--output report.sarif` is the user's choice, but the file already at that path may come from the pull
    # request: a link to ~/.bashrc must not turn the report into a write outside the checkout
    victim = isolated.parent / "home" / ".bashrc"
    victim.write_text("export KEEP=1\n", encoding="utf-8")
    (isolated / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: i\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n", encoding="utf-8")
    (isolated / "report.out").symlink_to(victim)
    code = main([*command, "--isolated", "--no-cache", "--output", "report.out", "pod.yaml"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot write the report to report.out" in err and "symbolic link" in err
    assert victim.read_text(encoding="utf-8") == "export KEEP=1\n"
    assert (isolated / "report.out").is_symlink()


def test_a_report_file_is_written_when_nothing_is_in_the_way(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (isolated / "pod.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", encoding="utf-8")
    assert main(["check", "--isolated", "--no-cache", "--format", "json", "--output", "out.json", "pod.yaml"]) == 0
    capsys.readouterr()
    assert json.loads((isolated / "out.json").read_text(encoding="utf-8"))["findings"] == []
