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
