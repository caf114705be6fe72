"""`fix` and `migrate` never rewrite rendered output: charts and overlays are refused with a note,
their findings are reported as `check` reports them, and each says which file to change."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralint.cli.app import cli
from dralint.inputs.render import helm_engine
from tests.conftest import REPO

needs_helm = pytest.mark.skipif(helm_engine() is None, reason="no Helm renderer (helm binary or dralint[helm])")
needs_kustomize = pytest.mark.skipif(shutil.which("kustomize") is None and shutil.which("kubectl") is None,
                                     reason="neither `kustomize` nor `kubectl` on PATH")

# a v1beta1 DeviceClass on 1.35 is DRA102 with a safe fix (convert to v1): in a chart it cannot be
# applied; the apiVersion comes from values key `apiVersion` on template line 1
CLASS = """\
apiVersion: {{ .Values.apiVersion }}
kind: DeviceClass
metadata:
  name: gpu-fast
spec:
  selectors:
    - cel:
        expression: device.driver == "gpu.nvidia.com"
"""


def _invoke(args: list[str], cwd: Path) -> tuple[int, str, str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(old)
    return r.exit_code, r.stdout, r.stderr


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file the user has (dralint's own cache directory, which a check creates, aside)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".dralint_cache" not in p.relative_to(root).parts}


def _chart(root: Path) -> Path:
    chart = root / "charts" / "classes"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: classes\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text("apiVersion: resource.k8s.io/v1beta1\n", encoding="utf-8")
    (chart / "templates" / "class.yaml").write_text(CLASS, encoding="utf-8")
    return chart


@needs_helm
@pytest.mark.parametrize("args", [["check", "--fix"], ["check", "--fix", "--unsafe-fixes"]])
def test_fix_refuses_a_chart_and_names_the_template(tmp_path: Path, args: list[str]) -> None:
    _chart(tmp_path)
    before = _snapshot(tmp_path)
    code, out, err = _invoke([*args, "--isolated", "--kubernetes-version", "1.35", "--format", "json", "."],
                             tmp_path)
    assert _snapshot(tmp_path) == before  # nothing written
    assert code == 1, out + err
    assert "charts/classes is a Helm chart" in err and "never rewrites rendered output" in err
    findings = json.loads(out)["findings"]
    dra102 = [f for f in findings if f["rule"] == "DRA102"]
    assert [(f["path"], f["line"]) for f in dra102] == [("charts/classes/templates/class.yaml", 1)]
    assert dra102[0]["fix"] is None
    assert "change the template `charts/classes/templates/class.yaml` line 1 or the values key `apiVersion`" \
        in dra102[0]["message"]
    assert not [f for f in findings if f["rule"] == "DRA003"]  # the templates are not linted raw


@needs_helm
def test_fix_command_on_a_chart_writes_nothing_and_says_so(tmp_path: Path) -> None:
    _chart(tmp_path)
    before = _snapshot(tmp_path)
    code, out, err = _invoke(["fix", "--isolated", "--kubernetes-version", "1.35", "charts/classes"], tmp_path)
    assert _snapshot(tmp_path) == before
    assert code == 1 and "never rewrites rendered output" in err
    assert "charts/classes/templates/class.yaml:1:" in out and "DRA102" in out


@needs_kustomize
def test_fix_refuses_an_overlay_and_the_named_file_is_fixable(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests" / "fixtures" / "kustomize-patches", tmp_path / "k")
    before = _snapshot(tmp_path)
    code, out, err = _invoke(["check", "--fix", "--isolated", "--unsafe-fixes", "--format", "json", "k/prod"],
                             tmp_path)
    assert _snapshot(tmp_path) == before
    assert code == 1, out + err
    assert "k/prod is a kustomize overlay: `dralint fix` never rewrites built output" in err
    quota = [f for f in json.loads(out)["findings"] if f["rule"] == "DRA205"]
    assert quota[0]["path"] == "k/base/quota.yaml" and quota[0]["fix"] is None
    assert "`dralint fix k/base/quota.yaml` fixes it in that file" in quota[0]["message"]
    # and it does: given the file itself, the unsafe quota fix is applied there
    _invoke(["fix", "--isolated", "--unsafe-fixes", "k/base/quota.yaml"], tmp_path)
    assert "gpu.nvidia.com.deviceclass.resource.k8s.io/devices: 4" in (tmp_path / "k/base/quota.yaml").read_text()


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-train
spec:
  containers:
    - name: main
      image: cuda
      resources:
        limits:
          nvidia.com/gpu: {{ .Values.gpus }}
"""


def _gpu_chart(root: Path) -> Path:
    chart = root / "charts" / "train"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: train\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text("gpus: 2\n", encoding="utf-8")
    (chart / "templates" / "pod.yaml").write_text(POD, encoding="utf-8")
    return chart


@needs_helm
def test_migrate_on_a_chart_suggests_what_to_add_and_writes_nothing(tmp_path: Path) -> None:
    _gpu_chart(tmp_path)
    before = _snapshot(tmp_path)
    code, out, err = _invoke(["migrate", "--isolated", "--diff", "charts/train"], tmp_path)
    assert _snapshot(tmp_path) == before
    assert code == 1, out + err  # something to do, as for files that would change
    assert "# charts/train is a Helm chart: nothing was written" in out
    assert "--- a/charts/train/templates/pod.yaml (rendered)" in out
    added = [ln[1:] for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    removed = [ln[1:] for ln in out.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    assert "kind: ResourceClaimTemplate" in added and "  name: dralint-train-gpu" in added
    assert "  resourceClaims:" in added and "      resourceClaimTemplateName: dralint-train-gpu" in added
    assert "          nvidia.com/gpu: 2" in removed
    # the workload is named at its template: `kind: Pod` is line 2 of templates/pod.yaml
    assert "suggested  Pod dralint-train  charts/train/templates/pod.yaml:2" in err
    # without --diff nothing is written either, and the run succeeds
    code, out, err = _invoke(["migrate", "--isolated", "--format", "json", "charts/train"], tmp_path)
    assert _snapshot(tmp_path) == before and code == 0, out + err
    workloads = json.loads(out)["workloads"]
    assert [(w["status"], w["path"], w["line"]) for w in workloads] == [
        ("suggested", "charts/train/templates/pod.yaml", 2)]


@needs_kustomize
def test_migrate_refuses_an_overlay(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests" / "fixtures" / "kustomize-patches", tmp_path / "k")
    before = _snapshot(tmp_path)
    code, out, err = _invoke(["migrate", "--isolated", "k/prod"], tmp_path)
    assert _snapshot(tmp_path) == before and code == 0, out + err
    assert "k/prod is a kustomize overlay: `dralint migrate` never rewrites built output" in err


@needs_helm
def test_migrate_over_a_repo_skips_a_chart_that_does_not_render(tmp_path: Path) -> None:
    # a chart that refuses to render without a value (as the NVIDIA charts refuse the default namespace)
    # is one listed skip at its Chart.yaml; the plain manifest beside it is still migrated, and no exit 2
    chart = tmp_path / "charts" / "strict"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: strict\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "templates" / "check.yaml").write_text('{{ fail "set allowDefaultNamespace=true" }}\n',
                                                    encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(POD.replace("{{ .Values.gpus }}", "1").replace("{{ .Release.Name }}", "x"),
                                        encoding="utf-8")
    code, out, err = _invoke(["migrate", "--isolated", "--format", "json", "."], tmp_path)
    assert code == 0, out + err
    workloads = {(w["path"], w["status"]): w for w in json.loads(out)["workloads"]}
    skip = workloads[("charts/strict/Chart.yaml", "skipped")]
    assert skip["line"] == 1 and "does not render" in skip["reason"]
    assert "set allowDefaultNamespace=true" in skip["reason"] and "\\n" not in skip["reason"]
    assert ("pod.yaml", "migrated") in workloads
