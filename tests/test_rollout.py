"""DRA401: surging rollouts of workloads whose claim templates prefer one device over another."""

from __future__ import annotations

import pytest

from .conftest import lint_text

TEMPLATE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: pref, namespace: lab}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - name: a5000
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA RTX A5000"'}
        - name: t10
          deviceClassName: gpu.nvidia.com
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: plain, namespace: lab}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
"""

WORKLOAD = """apiVersion: {api}
kind: {kind}
metadata: {{name: w, namespace: lab}}
spec:
{spec}  template:
    metadata: {{labels: {{app: w}}}}
    spec:
      resourceClaims:
      - {{name: gpu, {source}}}
      containers:
      - name: c
        image: example.com/w:1
        resources: {{claims: [{{name: gpu}}]}}
"""


def _run(kind: str, spec: str, source: str = "resourceClaimTemplateName: pref", api: str = "apps/v1"):  # type: ignore[no-untyped-def]
    text = TEMPLATE + WORKLOAD.format(api=api, kind=kind, spec=spec, source=source)
    result = lint_text(text, select=["DRA401"])
    assert result.internal_errors == []
    return result.findings


@pytest.mark.parametrize(("kind", "spec", "fires", "surge"), [
    ("Deployment", "  replicas: 1\n", True, "maxSurge 1 (the default 25% of 1 replica, rounded up)"),
    ("Deployment", "", True, "the default 25% of 1 replica"),  # replicas defaults to 1
    ("Deployment", "  replicas: 8\n", True, "maxSurge 2 (the default 25% of 8 replicas"),
    ("Deployment", "  replicas: 3\n  strategy: {rollingUpdate: {maxSurge: 50%}}\n", True, "maxSurge 50% (= 2 of 3"),
    ("Deployment", "  replicas: 3\n  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n", True,
     "maxSurge 1"),
    ("Deployment", "  replicas: 3\n  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n", False, ""),
    ("Deployment", "  replicas: 3\n  strategy: {rollingUpdate: {maxSurge: 0%}}\n", False, ""),
    ("Deployment", "  replicas: 3\n  strategy: {type: Recreate}\n", False, ""),
    ("Deployment", "  replicas: 0\n", False, ""),
    ("DaemonSet", "", False, ""),  # DaemonSets do not surge by default
    ("DaemonSet", "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n", True, "maxSurge 1"),
    ("DaemonSet", "  updateStrategy: {type: OnDelete}\n", False, ""),
    ("StatefulSet", "  replicas: 3\n", False, ""),  # each pod is replaced after the old one is gone
])
def test_when_a_rollout_surges(kind: str, spec: str, fires: bool, surge: str) -> None:
    found = _run(kind, spec)
    if not fires:
        assert found == []
        return
    [f] = found
    assert surge in f.message
    assert "fallback (`t10`)" in f.message and "preferred `a5000`" in f.message and "immutable" in f.message
    assert f.fix is not None and str(f.fix.applicability) == "unsafe"


def test_jobs_are_not_rolled() -> None:
    assert _run("Job", "  parallelism: 2\n", api="batch/v1") == []


def test_fix_edits() -> None:
    [f] = _run("Deployment", "  replicas: 2\n")
    assert f.fix is not None
    assert [(e.op, e.path, e.value) for e in f.fix.edits] == [
        ("set", ("spec", "strategy", "rollingUpdate", "maxSurge"), 0),
        ("set", ("spec", "strategy", "rollingUpdate", "maxUnavailable"), 1),
    ]
    [f] = _run("DaemonSet", "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n")
    assert f.fix is not None
    assert [(e.path[-1], e.value) for e in f.fix.edits] == [("maxSurge", 0), ("maxUnavailable", 1)]
    [f] = _run("DaemonSet", "  updateStrategy: {rollingUpdate: {maxSurge: 25%}}\n")
    assert f.fix is not None and [(e.path[-1], e.value) for e in f.fix.edits] == [("maxSurge", 0)]


def test_position() -> None:
    [f] = _run("Deployment", "  replicas: 3\n  strategy: {rollingUpdate: {maxSurge: 1}}\n")
    assert f.obj_path == ("spec", "strategy", "rollingUpdate", "maxSurge")
    [f] = _run("Deployment", "  replicas: 3\n")
    assert f.obj_path[-1] == "resourceClaimTemplateName"  # the default strategy: point at the template use


def test_one_finding_per_workload() -> None:
    text = TEMPLATE + WORKLOAD.format(api="apps/v1", kind="Deployment", spec="  replicas: 1\n",
                                      source="resourceClaimTemplateName: pref").replace(
        "      - {name: gpu, resourceClaimTemplateName: pref}",
        "      - {name: gpu, resourceClaimTemplateName: pref}\n      - {name: gpu2, resourceClaimTemplateName: pref}")
    [f] = lint_text(text, select=["DRA401"]).findings
    assert "`pref`" in f.message


def test_no_preference_no_finding() -> None:
    assert _run("Deployment", "  replicas: 1\n", source="resourceClaimTemplateName: plain") == []
    assert _run("Deployment", "  replicas: 1\n", source="resourceClaimTemplateName: missing") == []
    # a standalone claim is shared: no new allocation per pod (DRA307 covers the sharing)
    assert _run("Deployment", "  replicas: 1\n", source="resourceClaimName: shared") == []


def test_bad_shapes_do_not_crash() -> None:
    for spec in ("  strategy: 7\n", "  strategy: {rollingUpdate: [1]}\n",
                 "  strategy: {rollingUpdate: {maxSurge: x}}\n", "  replicas: '2'\n"):
        _run("Deployment", spec)
    _run("DaemonSet", "  updateStrategy: {rollingUpdate: {maxSurge: true}}\n")
