"""Inventory mode: ResourceSlice loading (v1 and v1beta1 shapes, List dumps, directories), per-node
allocation, DRA403 and DRA402."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dralint.cel.inventory import ClaimSpec, Inventory, allocate, build, claim_spec, evaluator, load, pods_per_node
from dralint.inputs.index import Index
from dralint.inputs.load import load_bytes
from dralint.knowledge.profile import ClusterProfile

from .conftest import RULES, lint_text

DUMP = RULES / "DRA403-unsatisfiable-claim" / "inventory.yaml"


def _v1beta1(dump: str) -> str:
    """The same slices in the v1beta1 shape: attributes and capacity under `basic:`."""
    data = yaml.safe_load(dump)
    for item in data["items"]:
        item["apiVersion"] = "resource.k8s.io/v1beta1"
        for dev in item["spec"]["devices"]:
            dev["basic"] = {"attributes": dev.pop("attributes"), "capacity": dev.pop("capacity")}
    return yaml.safe_dump(data, sort_keys=False)


@pytest.fixture(params=["v1", "v1beta1"])
def inventory_file(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    text = DUMP.read_text()
    if request.param == "v1beta1":
        text = _v1beta1(text)
    p = tmp_path / "slices.yaml"
    p.write_text(text)
    return str(p)


def _claim(name: str, request: str, constraints: str = "") -> str:
    return f"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}, namespace: ml}}
spec:
  spec:
    devices:
      requests:
{request}{constraints}
"""


def _findings(text: str, inventory: str, codes: list[str]) -> list[tuple[str, int, str]]:
    result = lint_text(text, select=codes, inventory=[inventory])
    assert result.internal_errors == []
    return [(f.rule, f.line, f.message) for f in result.findings]


SATISFIABLE = {
    "two-a100-80g-on-node-a": """      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"'}
""",
    "t4-by-memory": """      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("16Gi")) < 0'}
""",
    "all-turing": """      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: All
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].architecture == "Turing"'}
""",
    "a100-plus-t4-same-node": """      - name: big
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")'}
      - name: small
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "Tesla T4"'}
""",
    "preference-falls-back": """      - name: gpu
        firstAvailable:
        - name: h100
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")'}
        - name: a100
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].architecture == "Ampere"'}
""",
}


@pytest.mark.parametrize("name", list(SATISFIABLE))
def test_satisfiable_claims_are_quiet(name: str, inventory_file: str) -> None:
    result = lint_text(_claim(name, SATISFIABLE[name]), select=["DRA403"], inventory=[inventory_file])
    # satisfiable: no error; an unreachable preference is at most info-level advice
    assert [f.message for f in result.findings if str(f.severity) != "info"] == []


def test_same_pcie_root_constraint(inventory_file: str) -> None:
    two = """      - name: a
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: b
        exactly: {deviceClassName: gpu.nvidia.com}
"""
    same_root = "      constraints:\n      - {requests: [a, b], matchAttribute: resource.kubernetes.io/pcieRoot}\n"
    assert _findings(_claim("pair", two, same_root), inventory_file, ["DRA403"]) == []  # node-a: both on pci0000:00
    same_model = "      constraints:\n      - {matchAttribute: gpu.nvidia.com/architecture}\n"
    assert _findings(_claim("pair", two, same_model), inventory_file, ["DRA403"]) == []
    three = two + "      - name: c\n        exactly: {deviceClassName: gpu.nvidia.com}\n"
    [(rule, _, msg)] = _findings(_claim("triple", three, same_model), inventory_file, ["DRA403"])
    assert rule == "DRA403" and "architecture" in msg


def test_two_devices_that_exist_only_on_different_nodes(inventory_file: str) -> None:
    req = """      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("575.0.0")) < 0'}
"""
    # node-b has two GPUs with driver 570: satisfiable there
    assert _findings(_claim("old-driver", req), inventory_file, ["DRA403"]) == []
    req = """      - name: a40
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-40GB"'}
      - name: a80
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"'}
"""
    # one 40GB A100 exists (node-b) and 80GB ones exist (node-a), but never together on one node
    [(rule, line, msg)] = _findings(_claim("mixed", req), inventory_file, ["DRA403"])
    assert rule == "DRA403" and "no single node" in msg and line == 8


def test_per_node_count(inventory_file: str) -> None:
    req = "      - name: gpus\n        exactly: {deviceClassName: gpu.nvidia.com, count: 3}\n"
    [(_, line, msg)] = _findings(_claim("three", req), inventory_file, ["DRA403"])
    assert "needs 3 matching devices on one node" in msg and "2 on `node-a`, 2 on `node-b`" in msg
    assert line == 8  # the request name


def test_nothing_matches_lists_what_the_devices_offer(inventory_file: str) -> None:
    req = """      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'}
"""
    [(_, _, msg)] = _findings(_claim("h100", req), inventory_file, ["DRA403"])
    assert "no device in the inventory matches request `gpu`" in msg
    assert "`NVIDIA A100-SXM4-80GB`" in msg and "`Tesla T4`" in msg


def test_runtime_error_blocks_allocation(inventory_file: str) -> None:
    req = """      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].minor == 0'}
"""
    [(_, _, msg)] = _findings(_claim("stale", req), inventory_file, ["DRA403"])
    assert "run-time error" in msg and "no such key: minor" in msg


def test_unknown_class_is_not_judged(inventory_file: str) -> None:
    req = "      - name: gpu\n        exactly: {deviceClassName: fpga.example.com}\n"
    assert _findings(_claim("fpga", req), inventory_file, ["DRA403"]) == []


def test_class_from_the_linted_files_wins(inventory_file: str) -> None:
    text = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: hopper}
spec:
  selectors:
  - cel: {expression: 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'}
---
""" + _claim("h", "      - name: gpu\n        exactly: {deviceClassName: hopper}\n")
    [(rule, _, _)] = _findings(text, inventory_file, ["DRA403"])
    assert rule == "DRA403"


SCARCE = """apiVersion: apps/v1
kind: {kind}
metadata: {{name: web, namespace: ml}}
spec:
{spec}  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      resourceClaims:
      - {{name: gpu, resourceClaimTemplateName: {template}}}
      containers:
      - name: c
        image: example.com/web:1
        resources: {{claims: [{{name: gpu}}]}}
---
""" + _claim("a100", """      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")'}
""").replace("{", "{{").replace("}", "}}") + "---\n" + _claim("any", """      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
""").replace("{", "{{").replace("}", "}}")


@pytest.mark.parametrize(("kind", "spec", "template", "want"), [
    # 3 A100s (2 on node-a, 1 on node-b): 3 replicas fit, the surge pod does not
    ("Deployment", "  replicas: 3\n", "a100", "needs devices for 4 pods at once"),
    ("Deployment", "  replicas: 2\n", "a100", None),  # 2 + 1 surge = 3 fit
    ("Deployment", "  replicas: 3\n  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n", "a100", None),
    ("Deployment", "  replicas: 3\n  strategy: {type: Recreate}\n", "a100", None),
    ("Deployment", "  replicas: 5\n", "a100", "devices for only 3 pods"),
    ("Deployment", "  replicas: 3\n", "any", None),  # 4 GPUs: 3 + 1 fit
    ("Deployment", "  replicas: 4\n  strategy: {rollingUpdate: {maxSurge: 2}}\n", "any", "6 pods at once"),
    # a DaemonSet that surges needs two pods' devices per node: node-b has a single A100
    ("DaemonSet", "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n", "a100", "`node-b`"),
    ("DaemonSet", "", "a100", None),  # no surge by default
    ("DaemonSet", "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n", "any", None),
])
def test_scarcity(kind: str, spec: str, template: str, want: str | None, inventory_file: str) -> None:
    text = SCARCE.format(kind=kind, spec=spec, template=template)
    found = [f for f in _findings(text, inventory_file, ["DRA402"]) if f[0] == "DRA402"]
    if want is None:
        assert found == []
    else:
        [(_, _, msg)] = found
        assert want in msg


def test_inventory_loading_shapes(tmp_path: Path) -> None:
    text = DUMP.read_text()
    items = yaml.safe_load(text)["items"]
    # single documents in a directory, one of them an older generation of node-b's pool
    d = tmp_path / "slices"
    d.mkdir()
    (d / "a.yaml").write_text(yaml.safe_dump(items[0]))
    (d / "b.json").write_text(__import__("json").dumps(items[1]))
    stale = yaml.safe_load(yaml.safe_dump(items[1]))
    stale["spec"]["pool"]["generation"] = 2
    stale["spec"]["devices"].append({"name": "gpu-9", "attributes": {"type": {"string": "gpu"}}})
    (d / "c.yaml").write_text("# a stale slice\n---\n" + yaml.safe_dump(stale))
    inv = load([str(d)])
    assert sorted((x.node, x.name) for x in inv.devices) == [
        ("node-a", "gpu-0"), ("node-a", "gpu-1"), ("node-b", "gpu-0"), ("node-b", "gpu-1")]
    assert load([str(d)]) is inv  # loaded once per run
    dev = next(x for x in inv.devices if x.node == "node-b" and x.name == "gpu-1")
    assert dev.value["attributes"]["gpu.nvidia.com"]["productName"] == "Tesla T4"
    assert dev.flat["resource.kubernetes.io/pcieRoot"] == "pci0000:ae"
    assert str(dev.value["capacity"]["gpu.nvidia.com"]["memory"].value) == str(15 * 2**30)


def test_network_attached_devices_are_reachable_from_every_node() -> None:
    slices = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "spec": {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1},
                  "devices": [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "spec": {"driver": "gpu.nvidia.com", "allNodes": True, "pool": {"name": "fabric", "generation": 1},
                  "devices": [{"name": "gpu-9", "attributes": {"type": {"string": "gpu"}}}]}},
    ]
    inv = build(slices)
    profile = ClusterProfile()
    sf = load_bytes("c.yaml", _claim("two", "      - name: g\n        exactly: {deviceClassName: gpu.nvidia.com, "
                                            "count: 2}\n").encode())
    index = Index()
    index.add_file(sf)
    [obj] = index.objects
    spec = claim_spec(obj, index, inv, evaluator(inv, profile, {}))
    got = allocate(spec, inv, "n1")
    assert got is not None
    assert _names(inv, got) == [("n1", "gpu-0"), (None, "gpu-9")]  # the local GPU plus the fabric-attached one


def _names(inv: Inventory, allocation: list[int]) -> list[tuple[str | None, str]]:
    return [(inv.devices[i].node, inv.devices[i].name) for i in allocation]


def _slice(node: str, names: list[str]) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "spec": {"driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": node, "generation": 1},
                     "devices": [{"name": n, "attributes": {"type": {"string": "gpu"}, "index": {"int": k}}}
                                 for k, n in enumerate(names)]}}


def _spec(inv: Inventory, requests: str, constraints: str = "") -> ClaimSpec:
    sf = load_bytes("c.yaml", _claim("t", requests, constraints).encode())
    index = Index()
    index.add_file(sf)
    [obj] = index.objects
    return claim_spec(obj, index, inv, evaluator(inv, ClusterProfile(), {}))


TWO_REQUESTS = """      - name: a
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: b
        exactly: {deviceClassName: gpu.nvidia.com}
"""
COUNT_TWO = "      - name: a\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n"


def test_two_requests_never_share_one_device() -> None:
    # three GPUs on one node; each pod needs two (one per request): one pod fits, not three
    inv = build([_slice("n1", ["gpu-0", "gpu-1", "gpu-2"])])
    two = _spec(inv, TWO_REQUESTS)
    got = allocate(two, inv, "n1")
    assert got is not None
    assert _names(inv, got) == [("n1", "gpu-0"), ("n1", "gpu-1")]  # request a, then request b, first fit
    assert pods_per_node([two], inv, 10) == {"n1": 1}
    # the same demand as one request with count 2
    counted = _spec(inv, COUNT_TWO)
    assert _names(inv, allocate(counted, inv, "n1") or []) == [("n1", "gpu-0"), ("n1", "gpu-1")]
    assert pods_per_node([counted], inv, 10) == {"n1": 1}
    # four GPUs: two pods, each with its own pair
    inv4 = build([_slice("n1", ["gpu-0", "gpu-1", "gpu-2", "gpu-3"])])
    assert pods_per_node([_spec(inv4, TWO_REQUESTS)], inv4, 10) == {"n1": 2}
    assert allocate(_spec(inv4, TWO_REQUESTS), inv4, "n1", removed={0, 1}) == [2, 3]


def test_allocation_moves_a_device_to_the_request_that_needs_it() -> None:
    # request a takes any GPU, request b only gpu-0: a must give gpu-0 up and take gpu-1
    inv = build([_slice("n1", ["gpu-0", "gpu-1"])])
    reqs = """      - name: a
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: b
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].index == 0'}
"""
    got = allocate(_spec(inv, reqs), inv, "n1")
    assert got is not None and _names(inv, got) == [("n1", "gpu-1"), ("n1", "gpu-0")]
    assert allocate(_spec(inv, reqs), inv, "n1", removed={0}) is None  # b has nothing left


def test_per_node_allocation_with_a_constraint(inventory_file: str) -> None:
    inv = load([inventory_file])
    same_root = "      constraints:\n      - {requests: [a, b], matchAttribute: resource.kubernetes.io/pcieRoot}\n"
    spec = _spec(inv, TWO_REQUESTS, same_root)
    # node-a's two GPUs share pci0000:00; node-b's sit on different roots
    assert _names(inv, allocate(spec, inv, "node-a") or []) == [("node-a", "gpu-0"), ("node-a", "gpu-1")]
    assert allocate(spec, inv, "node-b") is None
    assert pods_per_node([spec], inv, 10) == {"node-a": 1, "node-b": 0}


def test_slices_in_the_linted_files_count_only_for_their_drivers() -> None:
    slice_doc = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: n1, generation: 1}
  devices:
  - name: gpu-0
    attributes: {type: {string: gpu}, productName: {string: Tesla T4}}
---
"""
    many = _claim("two", "      - name: g\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n")
    assert [f.rule for f in lint_text(slice_doc + many, select=["DRA403"]).findings] == ["DRA403"]
    other = _claim("imex", "      - name: g\n        exactly: "
                           "{deviceClassName: compute-domain-default-channel.nvidia.com}\n")
    assert lint_text(slice_doc + other, select=["DRA403"]).findings == []  # no slices of that driver here


def test_unreachable_firstavailable_alternative(inventory_file: str) -> None:
    req = """      - name: gpu
        firstAvailable:
        - name: h100
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")'}
        - name: any
          deviceClassName: gpu.nvidia.com
"""
    found = _findings(_claim("pref", req), inventory_file, ["DRA403"])
    [(_, line, msg)] = found
    assert "alternative `gpu/h100`" in msg and "can never be allocated" in msg and line == 10
    result = lint_text(_claim("pref", req), select=["DRA403"], inventory=[inventory_file])
    assert [str(f.severity) for f in result.findings] == ["info"]  # advice, not an error
    inv = load([inventory_file])
    sf = load_bytes("c.yaml", _claim("pref", req).encode())
    index = Index()
    index.add_file(sf)
    spec = claim_spec(index.objects[0], index, inv, evaluator(inv, ClusterProfile(), {}))
    from dralint.cel.inventory import alternative_possible

    assert [alternative_possible(a, inv) for a in spec.requests[0].alternatives] == [False, True]


def test_an_inventory_file_over_the_size_limit_is_a_problem_not_read(tmp_path: Path) -> None:
    d = tmp_path / "slices"
    d.mkdir()
    (d / "a.yaml").write_text(yaml.safe_dump(yaml.safe_load(DUMP.read_text())["items"][0]))
    (d / "big.yaml").write_text("#" * (16 * 1024 * 1024 + 1))
    inv = load([str(d)])
    assert sorted(x.name for x in inv.devices) == ["gpu-0", "gpu-1"]  # the other file is read
    assert any("big.yaml" in p and "larger than 16,777,216 bytes" in p for p in inv.problems), inv.problems
