"""DRA101-DRA105, DRA108, DRA109, DRA501: findings, positions, messages, fixes, and the corpus."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralint.engine.runner import Result
from dralint.knowledge import k8s
from dralint.model import Applicability, Edit, Finding

from .conftest import CORPUS, lint_text, requires_shared

MINE = ["DRA101", "DRA102", "DRA103", "DRA104", "DRA105", "DRA108", "DRA109", "DRA501"]
MINORS = ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]


def run(text: str, minor: str | None = None, gates: dict[str, bool] | None = None,
        rc: dict[str, bool] | None = None, select: list[str] | None = None, context: list[tuple[str, str]] = (),
        **extra: Any) -> Result:
    cfg: dict[str, Any] = dict(extra)
    if minor:
        cfg["kubernetes-version"] = minor
    if gates:
        cfg["feature-gates"] = gates
    if rc:
        cfg["runtime-config"] = rc
    result = lint_text(text, select=select or MINE, context=list(context), **cfg)
    assert result.internal_errors == []
    return result


def where(result: Result) -> list[tuple[str, int, int]]:
    return [(f.rule, f.line, f.column) for f in result.findings]


def only(result: Result, code: str) -> list[Finding]:
    return [f for f in result.findings if f.rule == code]


# ----------------------------------------------------------------------------------------------
# (a) the seeds' manifests: the mistakes migration guides make


SEED_BETA_SHAPE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: gpu-claim
  namespace: ml
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      count: 1
"""

SEED_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu-template
  namespace: ml
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
"""

SEED_CONFIG_OBJECTS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: shared-gpu
  namespace: ml
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
    config:
    - requests:
      - name: gpu
      opaque:
        driver: gpu.nvidia.com
        parameters:
          apiVersion: resource.nvidia.com/v1beta1
          kind: GpuConfig
"""

POD_SPEC_WITH_TEMPLATES = {
    "resourceClaimTemplates": [{"name": "gpu", "spec": {"devices": {"requests": [{"name": "gpu"}]}}}],
    "containers": [{"name": "main", "image": "cuda:12"}],
}


def test_seed_v1_claim_with_flat_request_fields() -> None:
    result = run(SEED_BETA_SHAPE)
    assert where(result) == [("DRA108", 10, 7)]
    (f,) = result.findings
    assert "`deviceClassName`, `count` directly under `requests[]`" in f.message
    assert f.fix is not None and f.fix.applicability == Applicability.SAFE
    assert f.fix.edits == (Edit("wrap", ("spec", "devices", "requests", 0), key="exactly",
                                value=("deviceClassName", "count")),)


def test_seed_template_without_inner_spec() -> None:
    result = run(SEED_TEMPLATE)
    assert where(result) == [("DRA109", 7, 3)]
    (f,) = result.findings
    assert f.fix is not None and f.fix.edits == (Edit("wrap", ("spec",), key="spec", value=("devices",)),)


def test_seed_config_with_request_objects() -> None:
    result = run(SEED_CONFIG_OBJECTS)
    assert where(result) == [("DRA101", 14, 9)]
    assert result.findings[0].message.startswith("`requests[0]` must be a string, got a mapping")


def _workload(kind: str) -> dict[str, Any]:
    """An object of ``kind`` whose pod spec holds the misplaced `resourceClaimTemplates`."""
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "w", "namespace": "ml"}}
    path = k8s.POD_SPEC_PATHS.get(kind, ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec"))
    node = obj
    for step in path[:-1]:
        node = node.setdefault(str(step), {})
    node[str(path[-1])] = copy.deepcopy(POD_SPEC_WITH_TEMPLATES)
    if kind not in k8s.POD_SPEC_PATHS:
        obj["apiVersion"] = "kubeflow.org/v1"
    return obj


@pytest.mark.parametrize("kind", [*k8s.POD_SPEC_PATHS, "PyTorchJob"])
def test_seed_pod_with_resource_claim_templates_in_every_workload_kind(kind: str) -> None:
    text = yaml.safe_dump(_workload(kind), sort_keys=False)
    line_no = next(i for i, line in enumerate(text.splitlines(), 1) if "resourceClaimTemplates:" in line)
    col = text.splitlines()[line_no - 1].index("resourceClaimTemplates") + 1
    result = run(text, select=["DRA101"])
    assert where(result) == [("DRA101", line_no, col)]
    assert "a pod cannot define claim templates" in result.findings[0].message


def test_misplaced_claims_in_containers_and_templates() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: w}
spec:
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    resourceClaims:
    - name: gpu
      resourceClaimTemplateName: t
    spec:
      containers:
      - name: main
        image: cuda:12
        claims:
        - name: gpu
"""
    result = run(text, select=["DRA101"])
    assert where(result) == [("DRA101", 8, 5), ("DRA101", 15, 9)]
    assert "pod claims belong in the pod spec" in result.findings[0].message
    assert "container claims go under `resources.claims`" in result.findings[1].message


def test_no_double_reporting_of_what_dra108_and_dra109_explain() -> None:
    assert [f.rule for f in run(SEED_BETA_SHAPE).findings] == ["DRA108"]
    assert [f.rule for f in run(SEED_TEMPLATE).findings] == ["DRA109"]
    # other unknown fields in the same request are still DRA101's
    text = SEED_BETA_SHAPE.replace("      count: 1\n", "      count: 1\n      colour: green\n")
    assert sorted(f.rule for f in run(text).findings) == ["DRA101", "DRA108"]
    # the removed pod `source:` wrapper is DRA309's
    pod = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims:
  - name: gpu
    source: {resourceClaimTemplateName: t}
  containers: [{name: c, image: i}]
"""
    assert run(pod, select=["DRA101"]).findings == []


# ----------------------------------------------------------------------------------------------
# (b) the NVIDIA DRA driver demos against a 1.35 cluster

DEMOS = CORPUS / "nvidia-dra-driver" / "demo" / "specs"

#: demo file -> codes of these rules expected on Kubernetes 1.35 with default gates (all others: none)
EXPECTED_135: dict[str, set[str]] = {
    # DRAConsumableCapacity and DRAExtendedResource are alpha (off) in 1.35: the fields are dropped
    "consumable-shares/memory-sharing.yaml": {"DRA501"},
    "extended-resources/mig-1g-12gb.yaml": {"DRA501"},
    # classic DRA (resource.k8s.io/v1alpha2): not convertible
    "mig+mps/sharing-demo-claims.yaml": {"DRA102"},
    "mig+mps/sharing-demo-claims-1.yaml": {"DRA102"},
    "selectors/claims.yaml": {"DRA102"},
    # v1beta1 (and one v1alpha3) demos: not served by default since 1.34
    "quickstart/gpu-test7.yaml": {"DRA102"},
    "quickstart/gpu-test8.yaml": {"DRA102"},
    "quickstart/v1beta1/gpu-test1.yaml": {"DRA102"},
    "quickstart/v1beta1/gpu-test2.yaml": {"DRA102"},
    "quickstart/v1beta1/gpu-test3.yaml": {"DRA102"},
    "quickstart/v1beta1/gpu-test4.yaml": {"DRA102"},
    "quickstart/v1beta1/gpu-test5.yaml": {"DRA102"},
    "quickstart/v1beta1/gpu-test6.yaml": {"DRA102"},
    "quickstart/v1beta1/gpu-test-mps.yaml": {"DRA102"},
    "quickstart/v1beta1/gpu-test-vfiopci.yaml": {"DRA102"},
    "quickstart/v1beta1/imex-test1.yaml": {"DRA102"},
}
CLASSIC = {"mig+mps/sharing-demo-claims.yaml", "mig+mps/sharing-demo-claims-1.yaml", "selectors/claims.yaml"}


def _demo_files() -> list[str]:
    if not DEMOS.is_dir():
        return []
    return sorted(p.relative_to(DEMOS).as_posix() for p in DEMOS.rglob("*.yaml"))


def _lint_demo(rel: str, minor: str) -> Result:
    return run((DEMOS / rel).read_text(encoding="utf-8"), minor=minor)


@requires_shared
@pytest.mark.parametrize("rel", _demo_files() or ["(corpus absent)"])
def test_nvidia_demos_on_135(rel: str) -> None:
    result = _lint_demo(rel, "1.35")
    assert {f.rule for f in result.findings} == EXPECTED_135.get(rel, set()), [f.message for f in result.findings]
    for f in only(result, "DRA102"):
        if rel in CLASSIC:
            assert f.fix is None and "classic DRA" in f.message
        else:
            assert f.fix is not None and f.fix.title == "Convert to resource.k8s.io/v1"


@requires_shared
def test_table_covers_real_files() -> None:
    assert set(EXPECTED_135) <= set(_demo_files())


@requires_shared
def test_demos_that_need_136_are_clean_there() -> None:
    for rel in ("consumable-shares/memory-sharing.yaml", "extended-resources/mig-1g-12gb.yaml"):
        assert _lint_demo(rel, "1.36").findings == []


def apply_edits(data: Any, edits: tuple[Edit, ...]) -> Any:
    """A minimal application of the edit ops these rules use (see dralint.model.Edit)."""
    out = copy.deepcopy(data)
    for e in edits:
        parent = out
        for step in e.path[:-1]:
            parent = parent[step]
        last = e.path[-1] if e.path else None
        if e.op == "set":
            parent[last] = e.value
        elif e.op == "delete":
            del parent[last]
        elif e.op == "wrap":
            node = parent[last] if e.path else out
            moved = {k: node[k] for k in e.value}
            rebuilt: dict[str, Any] = {}
            for k, v in node.items():
                if k == e.value[0]:
                    rebuilt[e.key] = moved
                if k not in moved:
                    rebuilt[k] = v
            node.clear()
            node.update(rebuilt)
        elif e.op == "unwrap":
            inner = parent[last]
            rebuilt = {}
            for k, v in parent.items():
                if k == last:
                    rebuilt.update(inner)
                else:
                    rebuilt[k] = v
            parent.clear()
            parent.update(rebuilt)
        else:  # pragma: no cover - not used by these rules
            raise AssertionError(e.op)
    return out


@requires_shared
@pytest.mark.parametrize("rel", sorted(set(EXPECTED_135) - CLASSIC - {"consumable-shares/memory-sharing.yaml",
                                                                       "extended-resources/mig-1g-12gb.yaml"}))
def test_converted_demos_are_accepted_by_135(rel: str) -> None:
    docs = [d for d in yaml.safe_load_all((DEMOS / rel).read_text(encoding="utf-8")) if d]
    result = _lint_demo(rel, "1.35")
    fixes = {(f.obj_path, f.line): f.fix for f in only(result, "DRA102")}
    converted = []
    for d in docs:
        if str(d.get("apiVersion", "")).startswith("resource.k8s.io/"):
            fix = next(fx for (p, _), fx in sorted(fixes.items(), key=lambda x: x[0][1]) if fx is not None)
            fixes = {k: v for k, v in fixes.items() if v is not fix}
            d = apply_edits(d, fix.edits)
            assert d["apiVersion"] == "resource.k8s.io/v1"
        converted.append(d)
    again = run(yaml.safe_dump_all(converted, sort_keys=False), minor="1.35")
    assert again.findings == [], [f.message for f in again.findings]


# ----------------------------------------------------------------------------------------------
# (c) minors 1.32 ... 1.37


#: the newest version of the claim API per minor (switched on with runtime-config where needed)
CLAIM_VERSION = {"1.32": "v1beta1", "1.33": "v1beta2", "1.34": "v1", "1.35": "v1", "1.36": "v1", "1.37": "v1"}
TAINT_RULE_VERSION = {"1.32": "v1alpha3", "1.33": "v1alpha3", "1.34": "v1alpha3", "1.35": "v1alpha3",
                      "1.36": "v1beta2", "1.37": "v1"}


def _claim(version: str, request: dict[str, Any]) -> str:
    if version in ("v1alpha3", "v1beta1"):
        flat = dict(request.pop("exactly", {}))
        request.update(flat)
    obj = {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaim",
           "metadata": {"name": "c", "namespace": "ml"},
           "spec": {"devices": {"requests": [{"name": "gpu", **request}]}}}
    return yaml.safe_dump(obj, sort_keys=False)


def _feature(feature: str, minor: str) -> str:
    v = CLAIM_VERSION[minor]
    if feature == "firstAvailable":
        return _claim(v, {"firstAvailable": [{"name": "a", "deviceClassName": "gpu.nvidia.com"}]})
    if feature == "adminAccess":
        return _claim(v, {"exactly": {"deviceClassName": "gpu.nvidia.com", "adminAccess": True}})
    if feature == "tolerations":
        return _claim(v, {"exactly": {"deviceClassName": "gpu.nvidia.com",
                                      "tolerations": [{"key": "k", "operator": "Exists"}]}})
    if feature == "capacity":
        return _claim(v, {"exactly": {"deviceClassName": "gpu.nvidia.com",
                                      "capacity": {"requests": {"memory": "4Gi"}}}})
    if feature == "extendedResourceName":
        return yaml.safe_dump({"apiVersion": f"resource.k8s.io/{v}", "kind": "DeviceClass",
                               "metadata": {"name": "gpu.example.com"},
                               "spec": {"selectors": [{"cel": {"expression": "true"}}],
                                        "extendedResourceName": "example.com/gpu"}})
    if feature == "DeviceTaintRule":
        return yaml.safe_dump({"apiVersion": f"resource.k8s.io/{TAINT_RULE_VERSION[minor]}", "kind": "DeviceTaintRule",
                               "metadata": {"name": "maintenance"},
                               "spec": {"deviceSelector": {"driver": "gpu.example.com"},
                                        "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"}}})
    raise AssertionError(feature)


# feature -> expected codes per minor (1.32 ... 1.37); the version is switched on and the DRA gate is on
FEATURE_TABLE: dict[str, list[set[str]]] = {
    # not in the 1.32 schema; alpha in 1.33; beta (on) from 1.34
    "firstAvailable": [{"DRA101"}, {"DRA501"}, set(), set(), set(), set()],
    # alpha (off) in 1.32/1.33, beta (on) from 1.34
    "adminAccess": [{"DRA501"}, {"DRA501"}, set(), set(), set(), set()],
    # DRADeviceTaints: new in 1.33 (alpha), beta (on) in 1.36
    "tolerations": [{"DRA101"}, {"DRA501"}, {"DRA501"}, {"DRA501"}, set(), set()],
    # DRAConsumableCapacity: new in 1.34 (alpha), beta (on) in 1.36
    "capacity": [{"DRA101"}, {"DRA101"}, {"DRA501"}, {"DRA501"}, set(), set()],
    # DRAExtendedResource: new in 1.34 (alpha), beta (on) in 1.36
    "extendedResourceName": [{"DRA101"}, {"DRA101"}, {"DRA501"}, {"DRA501"}, set(), set()],
    # no DeviceTaintRule in 1.32; gate off (DRADeviceTaints, then DRADeviceTaintRules) until 1.37
    "DeviceTaintRule": [{"DRA102"}, {"DRA501"}, {"DRA501"}, {"DRA501"}, {"DRA501"}, set()],
}


@pytest.mark.parametrize("feature", FEATURE_TABLE)
@pytest.mark.parametrize("minor", MINORS)
def test_feature_availability_by_minor(feature: str, minor: str) -> None:
    rc = {f"resource.k8s.io/{CLAIM_VERSION[minor]}": True, f"resource.k8s.io/{TAINT_RULE_VERSION[minor]}": True}
    result = run(_feature(feature, minor), minor=minor, gates={"DynamicResourceAllocation": True}, rc=rc,
                 select=["DRA101", "DRA102", "DRA104", "DRA501"])
    expected = FEATURE_TABLE[feature][MINORS.index(minor)]
    assert {f.rule for f in result.findings} == expected, [f.message for f in result.findings]


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("version", ["v1alpha3", "v1beta1", "v1beta2", "v1"])
def test_served_versions_by_minor(minor: str, version: str) -> None:
    result = run(_claim(version, {"exactly": {"deviceClassName": "gpu.nvidia.com"}}), minor=minor,
                 select=["DRA102"])
    served = minor >= "1.34" and version == "v1"
    assert (result.findings == []) is served


def test_the_dra_gate_itself_before_134() -> None:
    text = _claim("v1beta1", {"exactly": {"deviceClassName": "gpu.nvidia.com"}})
    result = run(text, minor="1.32", rc={"resource.k8s.io/v1beta1": True}, select=["DRA501"])
    (f,) = result.findings
    assert (f.line, f.column) == (2, 7)
    assert "ResourceClaim needs feature gate `DynamicResourceAllocation`" in f.message
    assert "on by default from Kubernetes 1.34" in f.message
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims:\n"
           "  - {name: g, resourceClaimName: c}\n  containers: [{name: c, image: i}]\n")
    (f,) = run(pod, minor="1.33", select=["DRA501"]).findings
    assert "silently drops the field: the pod is created without its device claims" in f.message


# ----------------------------------------------------------------------------------------------
# DRA102 / DRA103


def test_v1beta1_slice_conversion_unwraps_basic() -> None:
    text = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes:
        model: {string: a100}
      capacity:
        memory: {value: 40Gi}
  - name: gpu-1
"""
    (f,) = run(text, minor="1.35", select=["DRA102"]).findings
    assert f.fix is not None
    assert f.fix.edits == (Edit("unwrap", ("spec", "devices", 0, "basic")),
                           Edit("set", ("apiVersion",), value="resource.k8s.io/v1"))
    converted = apply_edits(yaml.safe_load(text), f.fix.edits)
    assert run(yaml.safe_dump(converted), minor="1.35").findings == []


def test_v1alpha3_slice_capacities_become_values() -> None:
    text = """\
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      capacity:
        memory: 40Gi
"""
    (f,) = run(text, minor="1.33", rc={"resource.k8s.io/v1beta2": True}, select=["DRA102"]).findings
    assert f.fix is not None and f.fix.title == "Convert to resource.k8s.io/v1beta2"
    converted = apply_edits(yaml.safe_load(text), f.fix.edits)
    assert converted["spec"]["devices"][0] == {"name": "gpu-0", "capacity": {"memory": {"value": "40Gi"}}}
    assert run(yaml.safe_dump(converted), minor="1.33", rc={"resource.k8s.io/v1beta2": True},
               gates={"DynamicResourceAllocation": True}).findings == []


@pytest.mark.parametrize(("text", "why"), [
    ("""\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      firstAvailable:
      - {name: a, deviceClassName: gpu.nvidia.com}
""", "sets both `firstAvailable` and `deviceClassName`"),
    ("""\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: gpu
""", "names neither a device class nor `firstAvailable`"),
    ("""\
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: r}
spec:
  deviceSelector: {deviceClassName: gpu.nvidia.com}
  taint: {key: k, effect: NoSchedule}
""", "`spec.deviceSelector.deviceClassName` has no equivalent"),
])
def test_refuses_conversions_that_are_not_mechanical(text: str, why: str) -> None:
    (f,) = run(text, minor="1.37", select=["DRA102"]).findings
    assert f.fix is None
    assert why in f.message


def test_classic_kinds_and_versions() -> None:
    text = ("apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClass\nmetadata: {name: gpu}\n"
            "driverName: gpu.nvidia.com\n")
    (f,) = run(text, select=["DRA102"]).findings
    assert (f.line, f.column) == (1, 13)
    assert "classic DRA" in f.message and "nothing converts mechanically" in f.message and f.fix is None
    (f,) = run("apiVersion: resource.k8s.io/v1\nkind: ResourceClass\nmetadata: {name: g}\n", select=["DRA102"]).findings
    assert "ResourceClass is classic DRA" in f.message


def test_version_newer_than_the_target() -> None:
    text = _claim("v1", {"exactly": {"deviceClassName": "gpu.nvidia.com"}})
    (f,) = run(text, minor="1.33", select=["DRA102"]).findings
    assert "arrives in Kubernetes 1.34" in f.message
    assert "no version of ResourceClaim is served by default in 1.33" in f.message


def test_runtime_config_turning_a_version_off() -> None:
    text = _claim("v1", {"exactly": {"deviceClassName": "gpu.nvidia.com"}})
    (f,) = run(text, minor="1.35", rc={"resource.k8s.io/v1": False}, select=["DRA102"]).findings
    assert "switched off by your runtime-config" in f.message


def test_deprecated_but_served() -> None:
    text = _claim("v1beta1", {"exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}})
    result = run(text, minor="1.35", rc={"resource.k8s.io/v1beta1": True}, select=["DRA102", "DRA103"])
    (f,) = result.findings
    assert f.rule == "DRA103" and str(f.severity) == "warning"
    assert "deprecated since Kubernetes 1.35, removal planned in Kubernetes 1.38" in f.message
    assert f.fix is not None and f.fix.edits[0] == Edit("wrap", ("spec", "devices", "requests", 0), key="exactly",
                                                         value=("deviceClassName", "count"))
    assert run(text, minor="1.34", rc={"resource.k8s.io/v1beta1": True}, select=["DRA103"]).findings == []


# ----------------------------------------------------------------------------------------------
# DRA104 / DRA105


CLAIM_HEAD = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\n"
              "spec:\n  devices:\n")


def test_union_count_and_mode() -> None:
    text = CLAIM_HEAD + """\
    requests:
    - name: a
      exactly: {deviceClassName: gpu.nvidia.com, count: -1}
      firstAvailable: [{name: x, deviceClassName: gpu.nvidia.com}]
    - name: b
      exactly: {deviceClassName: GPU_Class, allocationMode: all}
"""
    msgs = [f.message for f in run(text, select=["DRA104"]).findings]
    assert any("sets both `exactly` and `firstAvailable`" in m for m in msgs)
    assert any("`count` must be greater than zero, got -1" in m for m in msgs)
    assert any("\"GPU_Class\" is not a valid DeviceClass name" in m for m in msgs)
    assert any("`allocationMode` must be one of `ExactCount`, `All`, got \"all\"; did you mean `All`?" in m
               for m in msgs)


def test_limits_and_cel_length() -> None:
    reqs = "".join(f"    - {{name: r{i}, exactly: {{deviceClassName: gpu.nvidia.com}}}}\n" for i in range(33))
    (f,) = run(CLAIM_HEAD + "    requests:\n" + reqs, select=["DRA104"]).findings
    assert "33 requests; the API server allows at most 32" in f.message
    long = "device.driver == '" + "x" * 10300 + "'"
    text = CLAIM_HEAD + f"    requests:\n    - name: a\n      exactly:\n        deviceClassName: gpu.nvidia.com\n" \
                        f"        selectors:\n        - cel:\n            expression: \"{long}\"\n"
    # the length limit is reported once, by the CEL rules
    assert run(text, select=["DRA104"]).findings == []
    assert [f.rule for f in run(text, select=["DRA1", "DRA6"]).findings] == ["DRA605"]


def test_admin_access_needs_the_namespace_label_when_the_namespace_is_known() -> None:
    claim = CLAIM_HEAD + ("    requests:\n    - name: a\n"
                          "      exactly: {deviceClassName: gpu.nvidia.com, adminAccess: true}\n")
    assert run(claim, select=["DRA104"]).findings == []  # Namespace not in the set: nothing to check
    ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n"
    (f,) = run(claim, select=["DRA104"], context=[("ns.yaml", ns)]).findings
    assert "resource.kubernetes.io/admin-access" in f.message and (f.line, f.column) == (8, 63)
    labelled = ns.replace("{name: ml}", "{name: ml, labels: {resource.kubernetes.io/admin-access: \"true\"}}")
    assert run(claim, select=["DRA104"], context=[("ns.yaml", labelled)]).findings == []


def test_taint_effect_none_needs_135() -> None:
    text = """\
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: r}
spec:
  deviceSelector: {driver: gpu.example.com}
  taint: {key: example.com/x, effect: None}
"""
    (f,) = run(text, minor="1.34", select=["DRA104"]).findings
    assert "`None` needs Kubernetes 1.35+" in f.message
    assert run(text, minor="1.35", select=["DRA104"]).findings == []


def test_pod_side_checks() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources:
    claims: [{name: gpu}]
  resourceClaims:
  - {name: gpu, resourceClaimName: c}
  - {name: gpu, resourceClaimName: d}
  containers:
  - name: main
    image: i
    resources:
      claims:
      - {name: gpu}
      - {name: gpu, request: Big_One}
  ephemeralContainers:
  - name: debug
    image: i
    resources:
      claims: [{name: gpu}]
"""
    msgs = [(f.line, f.message) for f in run(text, select=["DRA104"]).findings]
    assert msgs[0][0] == 6 and "not allowed at pod level" in msgs[0][1]
    assert any("pod claim name `gpu` is used twice" in m for _, m in msgs)
    assert any("\"Big_One\" is not a DNS label" in m for _, m in msgs)
    assert any("lists claim `gpu` more than once" in m for _, m in msgs)
    assert any(line == 20 and "ephemeral containers cannot have `resources`" in m for line, m in msgs)


def test_slice_and_class_checks() -> None:
    slice_ = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  allNodes: true
  pool: {name: n1, generation: 1, resourceSliceCount: 0}
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100, int: 3}
  - name: gpu-0
"""
    msgs = [f.message for f in run(slice_, select=["DRA104"]).findings]
    assert any("sets `nodeName`, `allNodes`; exactly one is allowed" in m for m in msgs)
    assert any("resourceSliceCount` must be greater than zero" in m for m in msgs)
    assert any("attribute `model` must set exactly one value field" in m for m in msgs)
    assert any("device name `gpu-0` is used twice" in m for m in msgs)
    dc = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: g}\nspec:\n" \
         "  extendedResourceName: kubernetes.io/gpu\n  config:\n  - {}\n"
    msgs = [f.message for f in run(dc, select=["DRA104"]).findings]
    assert any("not a valid extended resource name" in m for m in msgs)
    assert any("needs an `opaque` block" in m for m in msgs)


def test_dangling_references() -> None:
    text = CLAIM_HEAD + """\
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
    config:
    - requests: [gpus]
      opaque: {driver: gpu.nvidia.com, parameters: {}}
"""
    (f,) = run(text, select=["DRA105"]).findings
    assert (f.line, f.column) == (10, 18)
    assert "refers to request `gpus`" in f.message and "did you mean `gpu`?" in f.message


def test_beta_shape_without_a_safe_fix() -> None:
    text = SEED_BETA_SHAPE.replace("      count: 1\n", "      exactly: {count: 1}\n")
    (f,) = only(run(text), "DRA108")
    assert f.rule == "DRA108" and f.fix is None and "move them into the existing `exactly` block" in f.message


def test_template_with_both_shapes_has_no_fix() -> None:
    text = SEED_TEMPLATE + "  spec: {}\n"
    (f,) = only(run(text), "DRA109")
    assert f.fix is None and "merge them by hand" in f.message


# ----------------------------------------------------------------------------------------------
# DRA501 messages


def test_gate_messages_say_what_the_api_server_does() -> None:
    dc = _feature("extendedResourceName", "1.35")
    (f,) = run(dc, minor="1.35", select=["DRA501"]).findings
    assert "needs feature gate `DRAExtendedResource`, which is alpha and off by default in Kubernetes 1.35" in f.message
    assert "the API server silently drops the field: pods asking for that extended resource" in f.message
    assert "on by default from Kubernetes 1.36" in f.message
    assert run(dc, minor="1.35", gates={"DRAExtendedResource": True}, select=["DRA501"]).findings == []
    (f,) = run(dc, minor="1.36", gates={"DRAExtendedResource": False}, select=["DRA501"]).findings
    assert "which your profile turns off" in f.message
    fa = _feature("firstAvailable", "1.33")
    (f,) = run(fa, minor="1.33", gates={"DynamicResourceAllocation": True}, rc={"resource.k8s.io/v1beta2": True},
               select=["DRA501"]).findings
    assert "silently drops the field: the request is left with neither `exactly` nor `firstAvailable`" in f.message
    assert "so the object is rejected" in f.message


# ----------------------------------------------------------------------------------------------
# robustness


ODD = [
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec: []\n",
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec: {devices: {requests: [1, null, [], {name: 3}]}}\n",
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nspec: {devices: 3, spec: 4}\n",
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
    "spec: {metadata: [], spec: {devices: {config: [3]}}}\n",
    "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nspec: {devices: [{basic: 3}, {basic: {capacity: 1}}]}\n",
    "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourceSlice\nspec: {devices: [{name: a, basic: {capacity: {m: 1}}, "
    "capacity: {}}]}\n",
    "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nspec: {devices: {requests: [{name: a, count: x}]}}\n",
    "apiVersion: resource.k8s.io/v9\nkind: Whatever\n",
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: 7}\nspec: {selectors: [{cel: 3}, 4]}\n",
    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec: {nodeSelector: {nodeSelectorTerms: 3}, pool: 2, "
    "devices: [{attributes: {a: 1}, taints: [3]}]}\n",
    "apiVersion: v1\nkind: Pod\nspec: {containers: 3, resourceClaims: {a: b}}\n",
    "apiVersion: v1\nkind: Pod\nspec: [1, 2]\n",
    "apiVersion: apps/v1\nkind: Deployment\nspec: {template: []}\n",
    "apiVersion: batch/v1\nkind: CronJob\n"
    "spec: {jobTemplate: {spec: {template: {spec: {containers: [{claims: 1}]}}}}}\n",
    "apiVersion: x/v1\nkind: Custom\nspec: {a: {spec: {containers: [{resources: {claims: 3}}], resourceClaims: 7}}}\n",
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {namespace: ml}\nspec: {devices: {requests: "
    "[{name: a, exactly: {adminAccess: true, count: .nan, tolerations: [{operator: 3}]}}]}}\n",
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec: {devices: {constraints: [{requests: [a/b/c, 3]}], "
    "config: [{requests: x, opaque: {driver: 3, parameters: null}}]}}\n",
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec: {devices: {requests: [{name: a, exactly: "
    "{count: 99999999999999999999999}}]}}\n",
]


@pytest.mark.parametrize("text", ODD)
@pytest.mark.parametrize("minor", ["1.32", "1.37"])
def test_odd_input_never_crashes(text: str, minor: str) -> None:
    run(text, minor=minor, context=[("ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n")])


def test_rule_examples_folders_exist() -> None:
    rules = Path(__file__).resolve().parent.parent / "rules"
    for code in MINE:
        assert len(list(rules.glob(f"{code}-*"))) == 1
