"""The snippets in docs/integrations.md work: YAML blocks match the hooks and the action, and every
`dralint` command in the shell blocks runs against a sample repository."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralint.cli.app import main
from dralint.report.sarif import PROJECT_URI
from tests.conftest import REPO

DOC = (REPO / "docs" / "integrations.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", DOC, re.MULTILINE | re.DOTALL)
YAML_BLOCKS = [yaml.safe_load(body) for lang, body in BLOCKS if lang == "yaml"]
HOOKS = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
FIXTURES = REPO / "tests" / "fixtures"

HAVE_HELM = shutil.which("helm") is not None or importlib.util.find_spec("helm_python") is not None
HAVE_KUSTOMIZE = shutil.which("kustomize") is not None or shutil.which("kubectl") is not None


def _commands() -> list[str]:
    out = []
    for lang, body in BLOCKS:
        if lang != "sh":
            continue
        for line in body.splitlines():
            if "dralint " in line:
                out.append(line.strip())
    return out


COMMANDS = _commands()


def test_doc_has_the_sections_and_snippets() -> None:
    for heading in ("## pre-commit", "## GitHub Actions", "## SARIF", "## Helm charts", "## kustomize",
                    "## Migration readiness report"):
        assert heading in DOC
    assert len(YAML_BLOCKS) == 2
    assert len(COMMANDS) >= 8


def test_pre_commit_snippet_names_real_hooks() -> None:
    config = next(b for b in YAML_BLOCKS if "repos" in b)
    (repo,) = config["repos"]
    assert repo["repo"] == PROJECT_URI
    ids = [h["id"] for h in repo["hooks"]]
    assert ids and set(ids) <= set(HOOKS)
    # the commented-out alternative names a real hook too
    assert "- id: dralint-fix" in DOC and "dralint-fix" in HOOKS
    # the hooks table shows the real entries
    for hook in HOOKS.values():
        assert f"`{hook['entry']}`" in DOC


def test_pre_commit_snippet_is_a_valid_config(tmp_path: Path) -> None:
    exe = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    if not Path(exe).exists():
        pytest.skip("pre-commit is not installed")
    body = next(body for lang, body in BLOCKS if lang == "yaml" and "repos:" in body)
    cfg = tmp_path / ".pre-commit-config.yaml"
    cfg.write_text(body, encoding="utf-8")
    p = subprocess.run([exe, "validate-config", str(cfg)], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_actions_snippet_uses_declared_inputs() -> None:
    wf = next(b for b in YAML_BLOCKS if "jobs" in b)
    steps = wf["jobs"]["dralint"]["steps"]
    ours = next(s for s in steps if str(s.get("uses", "")).startswith("dralint/dralint@"))
    assert set(ours["with"]) <= set(ACTION["inputs"])
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == ours["with"]["sarif-file"]
    assert wf["permissions"]["security-events"] == "write"
    # the inputs table lists every input of action.yml
    for name in ACTION["inputs"]:
        assert f"| `{name}` |" in DOC


# --------------------------------------------------------------------------------------------------
# the shell commands, run for real

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
    - name: main
      image: x
      resources:
        limits:
          nvidia.com/gpu: 1
"""


def _dump() -> bytes:
    pod = yaml.safe_load(GPU_POD)
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}).encode()


@pytest.fixture
def sample_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    chart = tmp_path / "charts" / "gpu-app"
    shutil.copytree(FIXTURES / "chart" / "gpu-app", chart)
    shutil.copy(chart / "values-dra.yaml", chart / "values-prod.yaml")
    shutil.copytree(FIXTURES / "kustomize" / "base", tmp_path / "deploy" / "base")
    prod = tmp_path / "deploy" / "overlays" / "prod"
    prod.mkdir(parents=True)
    shutil.copy(FIXTURES / "kustomize" / "overlay" / "serve.yaml", prod / "serve.yaml")
    (prod / "kustomization.yaml").write_text("namespace: ml\nresources:\n  - ../../base\n  - serve.yaml\n",
                                             encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _argv(command: str) -> tuple[list[str], bool, str | None]:
    """dralint's arguments, whether it reads stdin, and a file its stdout is redirected to."""
    piped = "|" in command
    if piped:
        command = command.rsplit("|", 1)[1]
    words = shlex.split(command, comments=True)
    redirect = None
    for op in (">>", ">"):
        if op in words:
            i = words.index(op)
            redirect = words[i + 1]
            words = words[:i] + words[i + 2:]
    assert words[0] == "dralint"
    return words[1:], piped, redirect


@pytest.mark.parametrize("command", COMMANDS)
def test_shell_snippet_runs(command: str, sample_repo: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    if "--helm-chart" in command and not HAVE_HELM:
        pytest.skip("no Helm engine (helm binary or dralint[helm])")
    if "deploy/overlays" in command and not HAVE_KUSTOMIZE:
        pytest.skip("neither kustomize nor kubectl on PATH")
    argv, piped, redirect = _argv(command)
    if piped:
        stdin: Any = io.TextIOWrapper(io.BytesIO(_dump()), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", stdin)
    code = main(argv)
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    assert not out.err.strip() or "warning" in out.err.lower(), out.err
    if redirect:
        Path(redirect).write_text(out.out, encoding="utf-8")
    if "--format sarif" in command:
        assert json.loads(out.out)["version"] == "2.1.0"
    if "--format json" in command:
        assert json.loads(out.out)["version"] == 1
    if "--output" in command:
        written = sample_repo / argv[argv.index("--output") + 1]
        head = "<!DOCTYPE html>" if "--format html" in command else "<?xml"
        assert written.read_text(encoding="utf-8").startswith(head)
    if piped:
        assert json.loads(out.out)["summary"]["device_plugin"] == 1
