"""`dralint report`: migration readiness per namespace and directory, in text, JSON and Markdown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dralint.cli.app import main

LEGACY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  template:
    spec:
      containers:
        - name: train
          image: x
          resources:
            limits:
              nvidia.com/gpu: 2
        - name: mig
          image: x
          resources:
            limits:
              nvidia.com/mig-1g.10gb: 1
"""

DRA = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
    - cel:
        expression: device.driver == 'gpu.nvidia.com'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: serving}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: server, namespace: serving}
spec:
  template:
    spec:
      resourceClaims:
        - name: gpu
          resourceClaimTemplateName: gpu
      containers:
        - name: main
          image: x
          resources:
            claims:
              - name: gpu
"""

# an error that blocks the move: the container names a claim the pod does not declare (DRA301)
BROKEN = DRA.replace("claims:\n              - name: gpu", "claims:\n              - name: gpus")

PLAIN = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: serving}
spec:
  template:
    spec:
      containers: [{name: web, image: nginx}]
"""


def _pod(name: str, owner: dict[str, Any] | None, gpu: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "batch"}
    if owner:
        meta["ownerReferences"] = [owner]
    res = {"limits": {"nvidia.com/gpu": "1"}} if gpu else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "x", "resources": res}]}}


def _dump() -> dict[str, Any]:
    """What `kubectl get deploy,rs,pods -A -o json` prints: owned objects appear next to their owners."""
    template = {"spec": {"containers": [{"name": "c", "image": "x",
                                         "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app", "namespace": "batch"},
              "spec": {"template": template}}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "app-5d8", "namespace": "batch",
                       "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "app",
                                            "controller": True, "uid": "1"}]},
          "spec": {"template": template}}
    owned = _pod("app-5d8-x1", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "app-5d8",
                                "controller": True, "uid": "2"}, gpu=True)
    # its ReplicaSet is not in the dump, so this pod counts on its own
    orphan_owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone", "controller": True, "uid": "3"}
    orphan = _pod("lonely", orphan_owner, gpu=True)
    return {"apiVersion": "v1", "kind": "List", "items": [deploy, rs, owned, orphan, _pod("cpu", None, gpu=False)]}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "trainer.yaml").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "dra").mkdir()
    (tmp_path / "dra" / "server.yaml").write_text(DRA, encoding="utf-8")
    (tmp_path / "dra" / "web.yaml").write_text(PLAIN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["report", "--isolated", "--driver", "gpu.nvidia.com", *args])
    return code, capsys.readouterr().out


def test_json_counts_per_namespace_and_directory(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(["--format", "json", "."], capsys)
    assert code == 0
    doc = json.loads(out)
    s = doc["summary"]
    assert (s["workloads"], s["device_plugin"], s["dra"], s["both"], s["neither"]) == (3, 1, 1, 0, 1)
    assert s["device_plugin_resources"] == {"nvidia.com/gpu": 1, "nvidia.com/mig-1g.10gb": 1}
    assert s["ready"] is False
    ml, serving = doc["by_namespace"]["ml"], doc["by_namespace"]["serving"]
    assert (ml["workloads"], ml["device_plugin"], ml["ready"]) == (1, 1, False)
    assert (serving["workloads"], serving["dra"], serving["device_plugin"], serving["ready"]) == (2, 1, 0, True)
    assert set(doc["by_directory"]) == {"legacy", "dra"}
    assert doc["by_directory"]["dra"]["ready"] is True
    (w,) = doc["device_plugin_workloads"]
    assert w["object"]["name"] == "trainer" and w["path"] == "legacy/trainer.yaml"
    assert w["resources"] == ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb"]
    assert doc["blockers"] == []


def test_error_findings_are_listed_as_blockers(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "dra" / "server.yaml").write_text(BROKEN, encoding="utf-8")
    _, out = run(["--format", "json", "dra"], capsys)
    doc = json.loads(out)
    rules = {b["rule"]: b for b in doc["blockers"]}
    assert "DRA301" in rules
    assert rules["DRA301"]["count"] == 1
    assert rules["DRA301"]["examples"][0].startswith("dra/server.yaml:")
    assert doc["by_namespace"]["serving"]["errors"] >= 1
    assert doc["by_namespace"]["serving"]["ready"] is False


def test_text_report(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(["."], capsys)
    assert code == 0
    assert out.startswith("Migration readiness: 3 files, 3 workloads: 1 on the device plugin, 1 on DRA, 0 on both.")
    assert "legacy/trainer.yaml: Deployment ml/trainer: nvidia.com/gpu, nvidia.com/mig-1g.10gb" in out
    assert out.rstrip().endswith("Not ready: 1 of 3 workloads still use device-plugin resources.")


def test_fail_if_not_ready_and_the_ready_case(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--fail-if-not-ready", "."], capsys)[0] == 1
    code, out = run(["--fail-if-not-ready", "dra"], capsys)
    assert code == 0
    assert "Ready: no workload uses device-plugin GPU resources" in out


def test_markdown_report_escapes_names(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "we|ird<dir>").mkdir()
    (repo / "we|ird<dir>" / "x.yaml").write_text(LEGACY, encoding="utf-8")
    code, out = run(["--format", "markdown", "."], capsys)
    assert code == 0
    assert out.startswith("## DRA migration readiness\n")
    assert "| we\\|ird&lt;dir&gt; | 1 | 1 | 0 | 0 | 0 | no |" in out
    assert "<dir>" not in out
    assert "<code>nvidia.com/gpu</code> (2)" in out


def test_kubectl_dump_counts_owners_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    Path("cluster.json").write_text(json.dumps(_dump(), indent=1), encoding="utf-8")
    code, out = run(["--format", "json", "cluster.json"], capsys)
    assert code == 0
    doc = json.loads(out)
    batch = doc["by_namespace"]["batch"]
    # Deployment (stands for its ReplicaSet and pod), the orphan pod, the CPU pod
    assert (batch["workloads"], batch["device_plugin"]) == (3, 2)
    names = sorted(w["object"]["name"] for w in doc["device_plugin_workloads"])
    assert names == ["app", "lonely"]


def test_report_output_file(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(["--format", "json", "--output", "readiness.json", "."], capsys)
    assert code == 0 and out == ""
    assert json.loads((repo / "readiness.json").read_text(encoding="utf-8"))["summary"]["workloads"] == 3


def test_missing_path_is_a_usage_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["report", "--isolated", "nope/"])
    assert code == 2
    assert "nope/: no such file or directory" in capsys.readouterr().err
