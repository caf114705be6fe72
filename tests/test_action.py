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


def run_lint_step(workdir: Path, path_first: Path | None = None,
                  **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str], str]:
    step = _step("lint")
    output = workdir.parent / "github_output"
    summary = workdir.parent / "step_summary"
    output.write_text("", encoding="utf-8")
    summary.write_text("", encoding="utf-8")
    bindir = str(Path(sys.executable).parent)
    if path_first is not None:
        bindir = str(path_first) + os.pathsep + bindir
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


# --------------------------------------------------------------------------------------------------
# one run, pins, cache, args and version (issue 16, point 5)

ACTION_TEXT = (REPO / "action.yml").read_text(encoding="utf-8")
WORKFLOW_TEXT = (EXAMPLES / "github-workflow.yml").read_text(encoding="utf-8")
#: `uses: owner/repo[/path]@ref  # comment`, from the raw text: YAML drops the comment
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<action>[^@\s]+)@(?P<ref>\S+)[ \t]*(?:#\s*(?P<tag>\S+))?", re.M)
SHA = re.compile(r"[0-9a-f]{40}")
#: the major of github/codeql-action that the example workflow must use (v3 is the previous one)
CODEQL_MAJOR = "v4"


def _uses(text: str) -> list[re.Match[str]]:
    return list(USES.finditer(text))


def test_action_declares_the_issue_inputs() -> None:
    assert {"args", "version", "paths", "config", "fail-on", "sarif-file"} <= INPUTS


@pytest.mark.parametrize("name,text", [("action.yml", ACTION_TEXT), ("example workflow", WORKFLOW_TEXT)])
def test_third_party_actions_are_pinned_by_sha_with_the_tag_in_a_comment(name: str, text: str) -> None:
    uses = _uses(text)
    assert uses, name
    for m in uses:
        if m["action"] == "dralint/dralint" or m["action"].startswith("./"):
            continue  # the action itself: the user picks the release (docs/releasing.md)
        assert SHA.fullmatch(m["ref"]), f"{name}: {m.group(0).strip()} is not pinned by a full commit SHA"
        assert m["tag"] and re.fullmatch(r"v\d+(\.\d+)*", m["tag"]), f"{name}: {m.group(0).strip()} has no tag comment"
    # the same action is pinned to the same commit everywhere
    pins: dict[str, set[str]] = {}
    for m in _uses(ACTION_TEXT) + _uses(WORKFLOW_TEXT):
        pins.setdefault(m["action"].split("/")[0] + "/" + m["action"].split("/")[1], set()).add(m["ref"])
    assert all(len(refs) == 1 for refs in pins.values()), pins


def test_example_workflow_uses_the_current_codeql_major() -> None:
    (m,) = [m for m in _uses(WORKFLOW_TEXT) if m["action"] == "github/codeql-action/upload-sarif"]
    assert m["tag"].split(".")[0] == CODEQL_MAJOR


def test_action_caches_pip_downloads_where_pip_puts_them() -> None:
    cache = next(s for s in _steps() if str(s.get("uses", "")).startswith("actions/cache@"))
    install = _step("install")
    assert install["env"]["PIP_CACHE_DIR"] == cache["with"]["path"]
    # the key changes with what is installed (the version input and the action's pyproject are hashed)
    key_step = _step("pip-key")
    assert "${{ steps.pip-key.outputs.hash }}" in cache["with"]["key"]
    assert "DRALINT_VERSION" in key_step["env"] and "pyproject.toml" in key_step["run"]
    assert _steps().index(cache) < _steps().index(install)


def test_every_expression_in_a_step_is_in_env_or_with_never_in_run() -> None:
    for s in _steps():
        for key, value in s.items():
            if key in ("env", "with"):
                continue
            if key == "if":
                continue
            assert "inputs." not in str(value), (s.get("name"), key)


def _counting_python(tmp: Path) -> tuple[Path, Path]:
    """A `python` first on PATH that logs how it was called, then runs this interpreter."""
    shim = tmp / "shim"
    shim.mkdir()
    log = tmp / "python-calls"
    (shim / "python").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{sys.executable}" "$@"\n',
                                 encoding="utf-8")
    (shim / "python").chmod(0o755)
    return shim, log


def test_lint_step_runs_dralint_once_for_annotations_sarif_and_summary(workdir: Path, tmp_path: Path) -> None:
    (workdir / "manifests" / "two.yaml").write_text(GPU_POD.replace("trainer", "second"), encoding="utf-8")
    shim, log = _counting_python(tmp_path)
    p, outputs, summary = run_lint_step(workdir, shim, paths="manifests/")
    assert outputs["exit-code"] == "1", p.stderr
    runs = [c for c in log.read_text(encoding="utf-8").splitlines() if "dralint" in c and "-c" not in c.split()]
    assert len(runs) == 1, runs
    # the three reports tell of the same two findings (two GPU pods, one finding each)
    annotations = [x for x in p.stdout.splitlines() if x.startswith("::warning ")]
    sarif = json.loads((workdir / "dralint.sarif").read_text(encoding="utf-8"))
    assert len(annotations) == 2
    assert len(sarif["runs"][0]["results"]) == 2
    assert "Found 2 findings" in summary


def test_lint_step_args_are_split_like_a_shell_but_never_run(workdir: Path) -> None:
    (workdir / "manifests" / "skip me.yaml").write_text(GPU_POD, encoding="utf-8")
    p, outputs, _ = run_lint_step(workdir, paths="manifests", format="text", args="--exclude 'skip me.yaml' "
                                  "--exclude pod.yaml --select DRA2 $(touch pwned) `touch pwned2`")
    assert not (workdir / "pwned").exists() and not (workdir / "pwned2").exists()
    # `$(touch pwned)` and the backticks reach dralint as plain words: paths that do not exist
    assert outputs["exit-code"] == "2", p.stderr
    assert "$(touch" in p.stderr and "no such file" in p.stderr
    assert "skip me.yaml" not in p.stdout and "pod.yaml" not in p.stdout


def test_lint_step_args_select_changes_what_is_reported(workdir: Path) -> None:
    p, outputs, _ = run_lint_step(workdir, paths="manifests", args="--ignore DRA201")
    assert outputs["exit-code"] == "0", p.stderr + p.stdout
    assert "DRA201" not in p.stdout


def test_lint_step_args_with_broken_quoting_is_a_usage_error(workdir: Path) -> None:
    p, outputs, _ = run_lint_step(workdir, paths="manifests", args="--exclude 'unclosed")
    assert p.returncode == 2
    assert outputs["exit-code"] == "2"
    assert "quoting" in p.stderr


def _fake_interpreter(tmp: Path) -> tuple[Path, Path]:
    """A stand-in for setup-python's interpreter: `-m venv DIR` makes a DIR/bin/python that logs its
    arguments one a line (so the install step runs without reaching a package index)."""
    log = tmp / "pip-args"
    fake = tmp / "fake-python"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then\n'
        '  mkdir -p "$3/bin"\n'
        f'  printf \'#!/bin/sh\\nfor a in "$@"; do echo "$a"; done > "{log}"\\n\' > "$3/bin/python"\n'
        '  chmod +x "$3/bin/python"\n'
        "fi\n", encoding="utf-8")
    fake.chmod(0o755)
    return fake, log


@pytest.mark.parametrize("version,spec", [
    ("", "<action path>"),
    ("0.2.0", "dralint==0.2.0"),
    ("dralint>=0.1,<0.2", "dralint>=0.1,<0.2"),
    ("--index-url=https://evil.invalid/simple", None),
])
def test_install_step_turns_the_version_input_into_one_pip_requirement(
    tmp_path: Path, version: str, spec: str | None
) -> None:
    step = _step("install")
    fake, log = _fake_interpreter(tmp_path)
    action_path = tmp_path / "action checkout"
    action_path.mkdir()
    github_path = tmp_path / "github_path"
    github_path.write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env |= {"DRALINT_VERSION": version, "ACTION_PATH": str(action_path), "PYTHON": str(fake),
            "PIP_CACHE_DIR": str(tmp_path / "pip-cache"), "RUNNER_TEMP": str(tmp_path / "runner-temp"),
            "GITHUB_PATH": str(github_path)}
    assert set(step["env"]) <= set(env)
    (tmp_path / "runner-temp").mkdir()
    bash = shutil.which("bash")
    assert bash is not None
    p = subprocess.run([bash, "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=60)
    if spec is None:
        assert p.returncode == 2
        assert not log.exists()
        return
    assert p.returncode == 0, p.stderr
    args = log.read_text(encoding="utf-8").splitlines()
    assert args[:2] == ["-m", "pip"] and "install" in args
    # exactly one requirement, after `--`, so nothing in it is read as a pip option
    assert args[args.index("--") + 1:] == [str(action_path) if spec == "<action path>" else spec]
    assert github_path.read_text(encoding="utf-8").strip().endswith("dralint-venv/bin")


def _check(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`dralint check` as the action's lint step calls it (`python -m dralint check ... -- PATHS`)."""
    return subprocess.run([sys.executable, "-m", "dralint", "check", "--no-cache", *args], cwd=workdir,
                          capture_output=True, text=True, timeout=120)


def test_lint_step_rejects_a_bad_output_file_spec(workdir: Path) -> None:
    for spec in ("pdf=x.pdf", "sarif"):
        p = _check(workdir, "--output-file", spec, "--", "manifests")
        assert p.returncode == 2, (spec, p.stdout, p.stderr)
        assert "FORMAT=PATH" in p.stderr or "pdf" in p.stderr, p.stderr
    assert not (workdir / "x.pdf").exists()


def test_lint_step_keeps_the_log_when_a_report_cannot_be_written(workdir: Path) -> None:
    p = _check(workdir, "--format", "github", "--output-file", "sarif=no/such/dir/x.sarif",
               "--output-file", "json=out.json", "--", "manifests")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout.startswith("::warning file=manifests/pod.yaml,line=10"), p.stdout
    assert "no/such/dir/x.sarif" in p.stderr
