"""The composite GitHub Action (action.yml) and the example workflow that uses it.

Beyond shape checks, the action's lint step is executed here with bash the way the runner would
(inputs passed through the environment, GITHUB_OUTPUT/GITHUB_STEP_SUMMARY files), using the
dralint installed in this environment in place of the action's install step.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLES, REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
WORKFLOW = yaml.safe_load((EXAMPLES / "github-workflow.yml").read_text(encoding="utf-8"))
INPUTS = set(ACTION["inputs"])
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")

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


def _steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = ACTION["runs"]["steps"]
    return steps


def _step(step_id: str) -> dict[str, Any]:
    return next(s for s in _steps() if s.get("id") == step_id)


def test_action_shape() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert {"paths", "kubernetes-version", "config", "format", "sarif-file", "fail-on"} <= INPUTS
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description"), name
        assert "default" in spec, name
    for s in _steps():
        if "run" in s:
            assert s.get("shell") == "bash"


def test_every_input_is_used_and_every_reference_is_declared() -> None:
    text = yaml.safe_dump(ACTION["runs"])
    used = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", text))
    assert used == INPUTS
    step_ids = {s.get("id") for s in _steps()}
    for out in ACTION["outputs"].values():
        (ref,) = EXPR.findall(out["value"])
        assert ref.split(".")[1] in step_ids


def test_run_scripts_never_paste_expressions() -> None:
    """`${{ }}` inside a script is substituted before bash parses it: a classic injection hole."""
    for s in _steps():
        if "run" in s:
            assert "${{" not in s["run"], s.get("name")


def test_action_installs_dralint_from_its_own_checkout() -> None:
    install = next(s for s in _steps() if "pip install" in s.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$ACTION_PATH"' in install["run"]
    assert "GITHUB_PATH" in install["run"]


def test_example_workflow_uses_the_action_and_uploads_sarif() -> None:
    steps = WORKFLOW["jobs"]["dralint"]["steps"]
    ours = next(s for s in steps if str(s.get("uses", "")).startswith("dralint/dralint@"))
    assert set(ours["with"]) <= INPUTS
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == ours["with"]["sarif-file"]
    assert ours["with"]["sarif-file"] in upload["if"]  # uploads even when dralint failed the step
    assert "cancelled()" in upload["if"]
    assert WORKFLOW["permissions"]["security-events"] == "write"
    assert steps.index(upload) > steps.index(ours)


# --------------------------------------------------------------------------------------------------
# running the lint step


def _env_for(step: dict[str, Any], inputs: dict[str, str]) -> dict[str, str]:
    values = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()} | inputs

    def sub(m: re.Match[str]) -> str:
        expr = m.group(1)
        assert expr.startswith("inputs."), f"the test cannot evaluate {expr!r}"
        return values[expr.removeprefix("inputs.")]

    return {k: EXPR.sub(sub, str(v)) for k, v in step.get("env", {}).items()}


def run_lint_step(workdir: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str], str]:
    step = _step("lint")
    output = workdir.parent / "github_output"
    summary = workdir.parent / "step_summary"
    output.write_text("", encoding="utf-8")
    summary.write_text("", encoding="utf-8")
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, **_env_for(step, inputs), "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    bash = shutil.which("bash")
    assert bash is not None
    p = subprocess.run([bash, "-e", "-c", step["run"]], cwd=workdir, env=env, capture_output=True, text=True,
                       timeout=120)
    outputs = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines() if "=" in line)
    return p, outputs, summary.read_text(encoding="utf-8")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    w = tmp_path / "repo"
    (w / "manifests").mkdir(parents=True)
    (w / "manifests" / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    (w / "manifests" / "clean.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
                                                encoding="utf-8")
    return w


def test_lint_step_annotates_writes_sarif_and_summary(workdir: Path) -> None:
    p, outputs, summary = run_lint_step(workdir, paths="manifests/", **{"kubernetes-version": "1.34"})
    assert p.returncode == 1, p.stderr
    assert p.stdout.startswith("::warning file=manifests/pod.yaml,line=10,col=11")
    assert outputs == {"exit-code": "1", "sarif-file": "dralint.sarif"}
    sarif = json.loads((workdir / "dralint.sarif").read_text(encoding="utf-8"))
    (res,) = sarif["runs"][0]["results"]
    assert res["ruleId"] == "DRA201"
    assert sarif["runs"][0]["properties"]["kubernetesVersion"] == "1.34"
    assert summary.startswith("## dralint")


def test_lint_step_fail_on_error_passes_warnings(workdir: Path) -> None:
    p, outputs, _ = run_lint_step(workdir, paths="manifests", **{"fail-on": "error", "sarif-file": "",
                                                                 "step-summary": "false"})
    assert p.returncode == 0, p.stderr
    assert outputs["exit-code"] == "0"
    assert not (workdir / "dralint.sarif").exists()


def test_lint_step_inputs_cannot_inject_shell(workdir: Path) -> None:
    p, outputs, _ = run_lint_step(workdir, paths='manifests/pod.yaml $(touch pwned1) ; touch pwned2 *',
                                  config="", **{"kubernetes-version": "$(touch pwned3)"})
    assert not any((workdir / n).exists() for n in ("pwned1", "pwned2", "pwned3"))
    # the bogus version is a usage error (exit 2), reported by dralint itself
    assert outputs["exit-code"] == "2"
    assert "kubernetes" in p.stderr.lower()


def test_lint_step_other_format(workdir: Path) -> None:
    p, _, _ = run_lint_step(workdir, paths="manifests", format="text")
    assert p.stdout.startswith("manifests/pod.yaml:10:11: DRA201 [warning]")


def test_lint_step_runs_without_a_cache(workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a cache read from the checkout would be content the pull request controls
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("DRALINT_CACHE_DIR", raising=False)
    p, outputs, _ = run_lint_step(workdir, paths="manifests")
    assert outputs["exit-code"] == "1", p.stderr
    assert not (workdir / ".dralint_cache").exists()
    assert list(home.iterdir()) == []


def test_lint_step_paths_are_never_options(workdir: Path) -> None:
    (workdir / "victim.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\n", encoding="utf-8")
    (workdir / "--output=victim.yaml").write_text(GPU_POD, encoding="utf-8")
    p, outputs, _ = run_lint_step(workdir, paths="--output=victim.yaml victim.yaml", format="text")
    assert outputs["exit-code"] == "1", p.stderr
    assert "--output=victim.yaml:10:11: DRA201" in p.stdout
    assert "kind: ConfigMap" in (workdir / "victim.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["github", "text"])
def test_lint_step_log_holds_only_dralints_own_commands(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    (workdir / "manifests" / "a\n::error file=x::pwned.yaml").write_text(GPU_POD, encoding="utf-8")
    p, _, _ = run_lint_step(workdir, paths="manifests", format=fmt, **{"sarif-file": "", "step-summary": "false"})
    log = re.split("\r\n|\r|\n", p.stdout + p.stderr)
    commands = [x for x in log if x.lstrip().startswith("::") or "##[" in x]
    if fmt == "text":
        assert commands == []
    else:
        assert sorted(c.split(",", 1)[0] for c in commands) == [
            "::warning file=manifests/a%0A%3A%3Aerror file=x%3A%3Apwned.yaml", "::warning file=manifests/pod.yaml"]


def test_lint_step_never_writes_the_sarif_file_through_a_committed_link(workdir: Path) -> None:
    # the workspace is the pull request's checkout: a committed `dralint.sarif -> ~/.bashrc` must not make
    # the step overwrite the runner's file (a shell `>` redirect would follow the link)
    victim = workdir.parent / "bashrc"
    victim.write_text("export KEEP=1\n", encoding="utf-8")
    (workdir / "dralint.sarif").symlink_to(victim)
    p, outputs, _ = run_lint_step(workdir, paths="manifests/")
    assert victim.read_text(encoding="utf-8") == "export KEEP=1\n"
    assert outputs["exit-code"] == "2", p.stderr
    assert "symbolic link" in p.stderr
