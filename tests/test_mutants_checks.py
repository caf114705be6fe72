"""Tests written to kill mutants of `dralint/checks/` that survived `bench/mutation.py --package checks`.

Expected rules, lines and columns are read off the manifests written here; the mutants are listed in
bench/mutation-results.md.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from dralint.engine.runner import Result

from .conftest import lint_text
from .test_inventory import DUMP, SCARCE

CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c, namespace: ml}}
spec:
  devices:
    requests:
{req}"""


def test_flat_fields_next_to_first_available_say_both_ways_out() -> None:
    text = CLAIM.format(req="""    - name: g
      deviceClassName: gpu.nvidia.com
      firstAvailable:
      - {name: a, deviceClassName: gpu.nvidia.com}
""")
    [f] = lint_text(text, select=["DRA108"]).findings
    assert (f.line, f.column) == (8, 7)  # the first flat field, `deviceClassName`
    assert f.message.endswith("; this request also has `firstAvailable`: put them into its entries or drop "
                              "`firstAvailable` and wrap them in `exactly:`")


def test_an_attribute_the_request_class_never_has_is_judged_by_that_class() -> None:
    # `profile` is a MIG attribute; the request's class gpu.nvidia.com selects whole GPUs only
    text = CLAIM.format(req="""    - name: g
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.nvidia.com"].profile == "1g.5gb"'}
""")
    [f] = lint_text(text, select=["DRA602"]).findings
    assert f.line == 11
    assert "class `gpu.nvidia.com` selects only those" in f.message


def test_a_pod_claim_name_used_twice_points_at_the_second_name() -> None:
    text = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: t
  - name: gpu
    resourceClaimTemplateName: t
  containers:
  - {name: c, image: x}
"""
    dup = [f for f in lint_text(text, select=["DRA104"]).findings if "used twice" in f.message]
    assert [(f.line, f.column) for f in dup] == [(8, 11)]  # the value `gpu` of the second `name:`


def _scarce(tmp_path: Path, kind: str, spec: str, selector: str) -> Result:
    inv = tmp_path / "slices.yaml"
    inv.write_text(DUMP.read_text())
    text = SCARCE.format(kind=kind, spec=spec, template="a100").replace('productName.startsWith("NVIDIA A100")',
                                                                         selector)
    return lint_text(text, select=["DRA402"], inventory=[str(inv)])


def test_the_scarcity_message_counts_pods_in_the_right_number(tmp_path: Path) -> None:
    # the inventory has two A100-80GB GPUs, both on node-a: two pods fit
    r = _scarce(tmp_path, "Deployment", "  replicas: 5\n", 'productName == "NVIDIA A100-SXM4-80GB"')
    [f] = r.findings
    assert "has devices for only 2 pods using template `a100`" in f.message


def test_the_no_surge_fix_also_lets_one_pod_be_unavailable(tmp_path: Path) -> None:
    # a DaemonSet surging with maxUnavailable 0 on node-b's single A100: the fix sets maxSurge 0, and
    # maxUnavailable 1 so that the rollout can proceed at all
    r = _scarce(tmp_path, "DaemonSet", "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n",
                'productName.startsWith("NVIDIA A100")')
    [f] = r.findings
    assert f.fix is not None
    edits = [(e.op, e.path[-1], e.value) for e in f.fix.edits]
    assert ("set", "maxSurge", 0) in edits and ("set", "maxUnavailable", 1) in edits


def test_a_missing_template_is_reported_after_a_claim_by_name() -> None:
    text = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims:
  - {name: a, resourceClaimName: existing}
  - {name: b, resourceClaimTemplateName: missing}
  containers:
  - {name: c, image: x, resources: {claims: [{name: a}, {name: b}]}}
"""
    found = [(f.line, f.message.split(" is not defined")[0]) for f in lint_text(text, select=["DRA304"]).findings]
    assert found == [(7, "ResourceClaimTemplate `missing`")]


def test_the_template_that_replaces_a_shared_claim_lives_in_the_claims_namespace() -> None:
    text = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: ml}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      resourceClaims:
      - {name: gpu, resourceClaimName: shared}
      containers:
      - {name: c, image: x, resources: {claims: [{name: gpu}]}}
"""
    [f] = lint_text(text, select=["DRA307"]).findings
    assert f.fix is not None
    [doc] = [e.value for e in f.fix.edits if e.op == "insert_document"]
    assert doc["kind"] == "ResourceClaimTemplate" and doc["metadata"] == {"name": "shared", "namespace": "ml"}


def test_what_the_devices_offer_is_cut_after_five_values(tmp_path: Path) -> None:
    devices = [{"name": f"gpu-{k}", "attributes": {"type": {"string": "gpu"}, "productName": {"string": f"P{k}"}}}
               for k in range(7)]
    dump = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "spec": {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1},
                  "devices": devices}}]}
    inv = tmp_path / "slices.yaml"
    inv.write_text(yaml.safe_dump(dump))
    text = CLAIM.format(req="""    - name: g
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "nope"'}
""")
    [f] = lint_text(text, select=["DRA403"], inventory=[str(inv)]).findings
    assert "offer productName: `P0`, `P1`, `P2`, `P3`, `P4` …)" in f.message
