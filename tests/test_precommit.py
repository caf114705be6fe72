"""The pre-commit hooks, run by the real pre-commit against this checkout.

pre-commit installs the hooks into a virtualenv of its own (pip, from the package index), exactly as
a user's `pre-commit install` would, from a snapshot of the checkout's current files (committed or
not) in a temporary git repository: each test's configuration names that repository like the
README's snippet names ours. The environment is installed once per test session (the `pre_commit`
fixture in conftest.py, some 15 seconds); deselect these tests with `-m 'not integration'`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from dralint.cli.app import main
from tests.conftest import REPO, PreCommit, git

pytestmark = pytest.mark.integration

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
"""

# uses the template above, which lives in another (unchanged) file
SERVER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: server, namespace: ml}
spec:
  template:
    spec:
      resourceClaims:
        - name: gpu
          resourceClaimTemplateName: one-gpu
      containers:
        - name: main
          image: nvcr.io/nvidia/tritonserver:24.05-py3
          resources:
            claims:
              - name: gpu
"""

LEGACY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  template:
    spec:
      containers:
        - name: train
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources:
            limits:
              nvidia.com/gpu: 2
"""

CONFIG = """\
drivers:
  - name: gpu.nvidia.com
"""


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    """A user's manifest repository: a claim template, a DRA workload, a legacy workload."""
    repo = tmp_path / "manifests"
    (repo / "claims").mkdir(parents=True)
    (repo / "apps").mkdir()
    (repo / "claims" / "template.yaml").write_text(TEMPLATE, encoding="utf-8")
    (repo / "apps" / "server.yaml").write_text(SERVER, encoding="utf-8")
    (repo / "apps" / "trainer.yaml").write_text(LEGACY, encoding="utf-8")
    (repo / ".dralint.yaml").write_text(CONFIG, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "manifests")
    return repo


@dataclass
class HookRun:
    code: int
    output: str


def run_hook(pre_commit: PreCommit, cwd: Path, hook: str, *files: str) -> HookRun:
    """Run ``hook`` on ``files``, or on every tracked file when none are given (``--all-files``)."""
    config = cwd.parent / "pre-commit-config.yaml"  # outside the user's repository: no file of theirs
    config.write_text(pre_commit.config(hook), encoding="utf-8")
    selection = ["--files", *files] if files else ["--all-files"]
    p = pre_commit.run(cwd, "run", "--config", str(config), hook, "--verbose", *selection)
    return HookRun(p.returncode, p.stdout + p.stderr)


def test_hook_definitions() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    assert set(hooks) == {"dralint", "dralint-fix"}
    for h in hooks.values():
        assert h["language"] == "python"
        assert h["types_or"] == ["yaml", "json"]
        assert "--context ." in h["entry"]
        # pre-commit appends the file names: after `--` none of them can be an option
        assert h["entry"].endswith(" --")
    assert hooks["dralint"]["entry"].startswith("dralint check ")
    assert hooks["dralint-fix"]["entry"].startswith("dralint fix ")


def test_hook_fails_on_a_changed_legacy_manifest(pre_commit: PreCommit, manifests: Path) -> None:
    run = run_hook(pre_commit, manifests, "dralint", "apps/trainer.yaml")
    assert run.code == 1, run.output
    assert "apps/trainer.yaml:12:15: DRA201 [warning]" in run.output
    assert "Failed" in run.output


def test_hook_passes_with_a_claim_template_from_an_unchanged_file(
    pre_commit: PreCommit, manifests: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # on its own, the changed file refers to a template dralint cannot see
    monkeypatch.chdir(manifests)
    assert main(["check", "apps/server.yaml"]) == 1
    assert "DRA304" in capsys.readouterr().out
    # the hook loads the repository as context: the template resolves, and the unchanged legacy
    # file is not reported
    run = run_hook(pre_commit, manifests, "dralint", "apps/server.yaml")
    assert run.code == 0, run.output
    assert "Passed" in run.output
    assert "DRA304" not in run.output and "trainer.yaml" not in run.output


def test_hook_reports_only_changed_files_but_resolves_across_all(
    pre_commit: PreCommit, manifests: Path
) -> None:
    broken = SERVER.replace("resourceClaimTemplateName: one-gpu", "resourceClaimTemplateName: two-gpus")
    (manifests / "apps" / "server.yaml").write_text(broken, encoding="utf-8")
    run = run_hook(pre_commit, manifests, "dralint", "apps/server.yaml", "claims/template.yaml")
    assert run.code == 1, run.output
    assert "apps/server.yaml:9:38: DRA304 [warning] ResourceClaimTemplate `two-gpus`" in run.output
    assert "trainer.yaml" not in run.output


def test_fix_hook_rewrites_the_changed_file(pre_commit: PreCommit, manifests: Path) -> None:
    # a container names a subrequest (`gpu/a100`); containers must name the main request, and the
    # safe fix (DRA306) rewrites it
    claim_ref = "              - name: gpu\n"
    wrong = SERVER.replace(claim_ref, claim_ref + "                request: gpu/a100\n")
    target = manifests / "apps" / "server.yaml"
    target.write_text(wrong, encoding="utf-8")
    run = run_hook(pre_commit, manifests, "dralint-fix", "apps/server.yaml")
    fixed = target.read_text(encoding="utf-8")
    assert "request: gpu/a100" not in fixed, run.output
    assert fixed == wrong.replace("request: gpu/a100", "request: gpu")
    # the unchanged files were not touched
    assert (manifests / "apps" / "trainer.yaml").read_text(encoding="utf-8") == LEGACY


# --------------------------------------------------------------------------------------------------
# file names that look like options: pre-commit passes them exactly as git lists them


VICTIM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim, namespace: ml}\ndata: {keep: me}\n"


def _commit(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")


def test_hook_lints_files_named_like_options(pre_commit: PreCommit, manifests: Path) -> None:
    # as options, the first would overwrite victim.yaml with the report, the second would skip every file
    _commit(manifests, {"victim.yaml": VICTIM, "--output=victim.yaml": LEGACY, "--exclude=*.yaml": LEGACY})
    run = run_hook(pre_commit, manifests, "dralint")
    assert (manifests / "victim.yaml").read_text(encoding="utf-8") == VICTIM, run.output
    assert run.code == 1, run.output
    for name in ("--output=victim.yaml", "--exclude=*.yaml", "apps/trainer.yaml"):
        assert f"{name}:12:15: DRA201 [warning]" in run.output


def test_fix_hook_is_not_switched_off_by_a_file_name(pre_commit: PreCommit, manifests: Path) -> None:
    claim_ref = "              - name: gpu\n"
    wrong = SERVER.replace(claim_ref, claim_ref + "                request: gpu/a100\n")
    _commit(manifests, {"apps/server.yaml": wrong, "--exclude=*.yaml": VICTIM})
    run = run_hook(pre_commit, manifests, "dralint-fix")
    fixed = (manifests / "apps" / "server.yaml").read_text(encoding="utf-8")
    assert fixed == wrong.replace("request: gpu/a100", "request: gpu"), run.output
    assert (manifests / "--exclude=*.yaml").read_text(encoding="utf-8") == VICTIM
