"""The shared corpus's kustomize overlays build and lint with findings in the overlay's patches, and
Helm's `tpl` keeps template positions.

Overlays (`../shared/corpus/kustomize/…/online-inference-gpu`, PROVENANCE.md there): the vLLM base
Deployment has no GPU (`resources: {}`); each overlay's `patch-resources.yaml` (strategic merge)
adds `nvidia.com/gpu` to container `inference-server`. Read from those files: in
`l4-gemma-3-1b-it/patch-resources.yaml` the limit `nvidia.com/gpu: "1"` is line 27, column 15; in
`h100-llama-3-3-70b-instruct/patch-resources.yaml` the limit `nvidia.com/gpu: "4"` is line 29,
column 15 (after cpu and memory). The nodeSelector patches add `cloud.google.com/compute-class`,
which is no GPU-feature-discovery label: no finding. Two env files the configMapGenerators read are
made by the repository's scripts and not in git; the test writes them (any values) in its copy.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralint.cli.app import cli
from dralint.inputs.render import helm_engine

from .conftest import CORPUS, requires_shared

OVERLAYS = CORPUS / "kustomize" / "GoogleCloudPlatform" / "accelerated-platforms" / "platforms" / "gke" / "base" \
    / "use-cases" / "inference-ref-arch" / "kubernetes-manifests" / "online-inference-gpu"
needs_kustomize = pytest.mark.skipif(shutil.which("kustomize") is None and shutil.which("kubectl") is None,
                                     reason="neither `kustomize` nor `kubectl` on PATH")
needs_helm = pytest.mark.skipif(helm_engine() is None, reason="no Helm renderer (helm binary or dralint[helm])")


def _run(args: list[str], cwd: Path) -> tuple[int, list[dict[str, object]], str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, ["check", "--isolated", "--no-cache", "--format", "json", *args],
                               catch_exceptions=False)
    finally:
        os.chdir(old)
    try:
        findings = json.loads(r.stdout)["findings"]
    except (ValueError, KeyError):
        findings = []
    return r.exit_code, findings, r.output


def _table(findings: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return sorted((f["rule"], f["path"], f["line"], f["column"]) for f in findings)


@pytest.fixture
def overlays(tmp_path: Path) -> Path:
    if not OVERLAYS.is_dir():
        pytest.skip(f"the kustomize corpus is not at {OVERLAYS}")
    tree = tmp_path / "online-inference-gpu"
    shutil.copytree(OVERLAYS, tree)
    for p in [tree, *tree.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)  # the shared folder is read-only; the copy gets two files
    (tree / "base" / "deployment.env").write_text(
        "INFERENCE_KUBERNETES_NAMESPACE=inference\nINFERENCE_KUBERNETES_SERVICE_ACCOUNT=inference-sa\n"
        "MODEL_BUCKET_NAME=models\n", encoding="utf-8")
    (tree / "vllm" / "base" / "vllm.env").write_text("CONTAINER_IMAGE_URL=vllm/vllm-openai:v0.8.5\n", encoding="utf-8")
    return tree


@requires_shared
@needs_kustomize
@pytest.mark.parametrize(("overlay", "line", "amount"), [
    ("l4-gemma-3-1b-it", 27, "1"),
    ("h100-llama-3-3-70b-instruct", 29, "4"),
])
def test_corpus_overlay_findings_are_in_its_patch(overlays: Path, overlay: str, line: int, amount: str) -> None:
    code, findings, out = _run([f"vllm/{overlay}"], overlays)
    assert code == 1, out
    assert _table(findings) == [("DRA201", f"vllm/{overlay}/patch-resources.yaml", line, 15)], out
    f = findings[0]
    assert f"`nvidia.com/gpu: {amount}`" in str(f["message"])
    assert "the resource is in `vllm/base/deployment.yaml`" in str(f["message"])
    # the overlay's nameSuffix and the namespace from the generated ConfigMap were applied
    assert f["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "inference",
                           "name": f"vllm-{overlay}"}


@requires_shared
@needs_kustomize
def test_both_corpus_overlays_in_one_run(overlays: Path) -> None:
    _code, findings, out = _run(["vllm/l4-gemma-3-1b-it", "vllm/h100-llama-3-3-70b-instruct"], overlays)
    assert _table(findings) == [
        ("DRA201", "vllm/h100-llama-3-3-70b-instruct/patch-resources.yaml", 29, 15),
        ("DRA201", "vllm/l4-gemma-3-1b-it/patch-resources.yaml", 27, 15),
    ], out


TPL_VALUES = """\
gpus: 2
podName: "{{ .Release.Name }}-gpu"
count: "{{ .Values.gpus }}"
resources:
  limits:
    nvidia.com/gpu: "{{ .Values.gpus }}"
"""
TPL_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ tpl .Values.podName . }}
spec:
  containers:
    - name: main
      image: cuda
      resources:
        {{- tpl (toYaml .Values.resources) . | nindent 8 }}
    - name: second
      image: cuda
      resources:
        limits:
          nvidia.com/gpu: {{ tpl .Values.count . | quote }}
"""


@needs_helm
def test_tpl_output_keeps_template_positions(tmp_path: Path) -> None:
    chart = tmp_path / "charts" / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text(TPL_VALUES, encoding="utf-8")
    (chart / "templates" / "pod.yaml").write_text(TPL_POD, encoding="utf-8")
    code, findings, out = _run(["."], tmp_path)
    assert code == 1, out
    # `main`: the whole block is `tpl` of toYaml of values, emitted by line 10 (the action at
    # column 9); `second`: a literal key on line 15 whose value `tpl` computed (key at column 11)
    assert _table(findings) == [
        ("DRA201", "charts/app/templates/pod.yaml", 10, 9),
        ("DRA201", "charts/app/templates/pod.yaml", 15, 11),
    ], out
    by_line = {f["line"]: str(f["message"]) for f in findings}
    assert "from values `resources`" in by_line[10]
    assert "from values" not in by_line[15]
    assert "`nvidia.com/gpu: 2`" in by_line[10] and "`nvidia.com/gpu: 2`" in by_line[15]  # tpl was evaluated
    assert {f["object"]["name"] for f in findings} == {"dralint-gpu"}  # type: ignore[index]
