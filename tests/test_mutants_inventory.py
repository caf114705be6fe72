"""Tests written to kill mutants of `dralint/cel/inventory.py` that survived `bench/mutation.py --package inventory`.

Each test names the behaviour it pins; the mutant it was written against is in bench/mutation-results.md.
Expectations come from reading the inventory built here, not from running the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dralint.cel.env import Program
from dralint.cel.inventory import (
    Evaluator,
    Inventory,
    allocate,
    alternative_possible,
    build,
    evaluator,
    for_context,
    load,
    pods_per_node,
)
from dralint.cel.values import CelError, Semver
from dralint.inputs.index import Index
from dralint.knowledge.profile import ClusterProfile

from .test_inventory import _names, _spec


def _slice(node: str, devices: list[tuple[str, dict[str, object]]], driver: str = "gpu.nvidia.com",
           **spec: object) -> dict[str, object]:
    body: dict[str, object] = {"driver": driver, "pool": {"name": node, "generation": 1},
                               "devices": [{"name": n, "attributes": a} for n, a in devices]}
    if node:
        body["nodeName"] = node
    body.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "spec": body}


def test_devices_missing_one_domain_are_still_told_apart_by_another() -> None:
    # neither device has the a.example.com domain; they differ only in b.example.com/y, which the
    # selector also reads: grouping devices by the values a selector reads must not stop at the first
    # missing domain, or gpu-2 would get gpu-1's answer
    inv = build([_slice("n1", [("gpu-1", {"b.example.com/y": {"string": "1"}}),
                               ("gpu-2", {"b.example.com/y": {"string": "2"}})])])
    ev = evaluator(inv, ClusterProfile(), {})
    got = ev.results('device.attributes["a.example.com"].x == "z" || device.attributes["b.example.com"].y == "1"')
    assert got is not None
    assert got[0] is True
    assert got[1] is not True


def test_a_constraint_search_looks_at_64_values_then_gives_up() -> None:
    # request a and b must share `index`; the first 64 distinct values each exist on one device only,
    # the 65th on two. The documented bound is 64 values per constraint, so the pair is not found; one
    # single fewer and the pair is the 64th value, which is found.
    def inventory(singles: int) -> Inventory:
        # `type: gpu` is what the gpu.nvidia.com class selects on
        devs = [(f"gpu-{k}", {"type": {"string": "gpu"}, "index": {"int": k}}) for k in range(singles)]
        devs += [(f"gpu-pair-{k}", {"type": {"string": "gpu"}, "index": {"int": 1000}}) for k in range(2)]
        return build([_slice("n1", devs)])

    reqs = """      - name: a
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: b
        exactly: {deviceClassName: gpu.nvidia.com}
"""
    cons = "      constraints:\n      - matchAttribute: gpu.nvidia.com/index\n"
    inv63 = inventory(63)
    got = allocate(_spec(inv63, reqs, cons), inv63, "n1")
    assert got is not None and _names(inv63, got) == [("n1", "gpu-pair-0"), ("n1", "gpu-pair-1")]
    inv64 = inventory(64)
    assert allocate(_spec(inv64, reqs, cons), inv64, "n1") is None


def test_a_device_that_names_its_own_reach_overrides_the_slice_node() -> None:
    # per-device node selection: the device's own `allNodes: true` wins over the slice's nodeName
    # (and the device's own nodeName over the slice's), so the device is reachable from every node
    s = _slice("n1", [("gpu-0", {"type": {"string": "gpu"}}), ("gpu-9", {"type": {"string": "gpu"}})])
    devices = s["spec"]["devices"]  # type: ignore[index]
    devices[1]["allNodes"] = True
    inv = build([s, _slice("n2", [("gpu-5", {"type": {"string": "gpu"}})])])
    assert [(d.name, d.node) for d in inv.devices] == [("gpu-0", "n1"), ("gpu-9", None), ("gpu-5", "n2")]
    two = "      - name: g\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n"
    got = allocate(_spec(inv, two), inv, "n2")
    assert got is not None and _names(inv, got) == [("n2", "gpu-5"), (None, "gpu-9")]


def test_list_attributes_are_lists_and_version_lists_are_parsed() -> None:
    inv = build([_slice("n1", [("gpu-0", {"modes": {"strings": ["a", "b"]}, "cuda": {"versions": ["12.4.0", "11.8.0"]},
                                          "bad": {"versions": ["12.4.0", "not-a-version"]}})])])
    [dev] = inv.devices
    assert dev.flat["gpu.nvidia.com/modes"] == ["a", "b"]
    assert dev.flat["gpu.nvidia.com/cuda"] == [Semver.parse("12.4.0"), Semver.parse("11.8.0")]
    assert "gpu.nvidia.com/bad" not in dev.flat  # one unparsable version drops the attribute


def test_a_device_without_a_name_is_skipped_not_the_rest_of_the_slice() -> None:
    s = _slice("n1", [("gpu-1", {}), ("gpu-2", {})])
    s["spec"]["devices"].insert(0, {"attributes": {}})  # type: ignore[index]
    inv = build([s])
    assert [d.name for d in inv.devices] == ["gpu-1", "gpu-2"]


def test_device_labels_say_where_the_device_is_reachable_from() -> None:
    s = _slice("n1", [("gpu-0", {}), ("gpu-9", {}), ("gpu-s", {}), ("gpu-n", {})])
    devs = s["spec"]["devices"]  # type: ignore[index]
    devs[1]["allNodes"] = True
    devs[2]["nodeSelector"] = {"nodeSelectorTerms": []}
    devs[3]["nodeName"] = "n7"
    local, fabric, selected, named = build([s]).devices
    assert local.label() == "`gpu-0` (gpu.nvidia.com, node `n1`)"
    assert fabric.label() == "`gpu-9` (gpu.nvidia.com, every node)"
    assert (selected.node, named.node) == (None, "n7")


def test_a_no_schedule_taint_keeps_a_device_from_requests_that_do_not_tolerate_it() -> None:
    s = _slice("n1", [("gpu-0", {"type": {"string": "gpu"}}), ("gpu-1", {"type": {"string": "gpu"}}),
                      ("gpu-2", {"type": {"string": "gpu"}})])
    devs = s["spec"]["devices"]  # type: ignore[index]
    devs[0]["taints"] = [{"key": "broken", "effect": "NoSchedule"}]
    devs[2]["taints"] = [{"key": "note", "effect": "None"}]  # not an effect that keeps pods away
    inv = build([s])
    assert [d.tainted for d in inv.devices] == [True, False, False]
    one = "      - name: g\n        exactly: {deviceClassName: gpu.nvidia.com, count: 3}\n"
    assert allocate(_spec(inv, one), inv, "n1") is None
    tolerant = ("      - name: g\n        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 3\n"
                "          tolerations: [{key: broken, operator: Exists}]\n")
    got = allocate(_spec(inv, tolerant), inv, "n1")
    assert got is not None and [n for _, n in _names(inv, got)] == ["gpu-0", "gpu-1", "gpu-2"]


def test_a_device_class_from_the_inventory_is_used_for_requests_naming_it() -> None:
    # fpga.example.com is in no driver data: only the inventory's DeviceClass defines it
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "fpga.example.com"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "fpga.example.com"'}}]}}
    inv = build([_slice("n1", [("fpga-0", {})], driver="fpga.example.com"),
                 _slice("n1", [("gpu-0", {"type": {"string": "gpu"}})])], [cls])
    spec = _spec(inv, "      - name: f\n        exactly: {deviceClassName: fpga.example.com}\n")
    assert spec.unknown() is None
    got = allocate(spec, inv, "n1")
    assert got is not None and _names(inv, got) == [("n1", "fpga-0")]


def test_load_reads_device_classes_and_for_context_answers_from_its_cache(tmp_path: Path) -> None:
    dump = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "fpga.example.com"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "fpga.example.com"'}}]}},
        _slice("n1", [("fpga-0", {})], driver="fpga.example.com")]}
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump(dump))
    inv = load([str(path)])
    assert list(inv.classes) == ["fpga.example.com"]
    assert inv.classes["fpga.example.com"].selectors == ['device.driver == "fpga.example.com"']
    profile = ClusterProfile(inventory=[str(path)])
    cache: dict[object, object] = {}
    first = for_context(Index(), profile, cache)
    assert first is not None and [d.name for d in first.devices] == ["fpga-0"]
    assert for_context(Index(), profile, cache) is first  # the second rule asking gets the same inventory


#: selectors that read the device in different ways; devices that differ in what each reads
SELECTORS = [
    'device.attributes["a.example.com"].x == "z" || device.attributes["b.example.com"].y == "1"',
    'size(device.attributes["b.example.com"]) == 2',
    '"b.example.com" in device.attributes',
    '"z" in device.attributes["b.example.com"]',
    'device.capacity["b.example.com"].mem.compareTo(quantity("1Gi")) > 0',
]


def test_grouped_selector_results_equal_evaluating_every_device_on_its_own() -> None:
    # the evaluator evaluates a selector once per distinct combination of the values it reads; whatever
    # it groups, the answers must be the ones each device gives by itself
    devs = [("d-y1", {"b.example.com/y": {"string": "1"}}),
            ("d-y2", {"b.example.com/y": {"string": "2"}}),
            ("d-y1-z", {"b.example.com/y": {"string": "1"}, "b.example.com/z": {"string": "q"}}),
            ("d-none", {}),
            ("d-a", {"a.example.com/x": {"string": "z"}, "b.example.com/y": {"string": "2"}})]
    s = _slice("n1", devs, driver="b.example.com")
    for dev, mem in zip(s["spec"]["devices"], ["2Gi", "512Mi", None, "4Gi", None], strict=True):  # type: ignore[index]
        if mem:
            dev["capacity"] = {"mem": {"value": mem}}
    inv = build([s])
    ev = evaluator(inv, ClusterProfile(), {})
    for text in SELECTORS:
        got = ev.results(text)
        prog = ev.program(text)
        assert got is not None and prog is not None, text
        for i, d in enumerate(inv.devices):
            try:
                want: bool | str = prog.evaluate(d.value)
            except CelError as e:
                want = str(e)
            assert got[i] == want, (text, d.name)


@pytest.mark.parametrize(("text", "evaluations"), [
    ('device.attributes["b.example.com"].y == "1"', 2),  # two distinct values of y
    ('device.attributes["b.example.com"]["y"] == "1"', 2),
    ('"z" in device.attributes["b.example.com"]', 1),  # reads only whether z exists: nowhere
    ('device.capacity["b.example.com"].mem.compareTo(quantity("1Gi")) > 0', 1),  # no device has it
    ('device.driver == "b.example.com"', 1),
])
def test_a_selector_is_evaluated_once_per_distinct_value_it_reads(
        text: str, evaluations: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # the documented speed-up (10,000 devices x 100 selectors in seconds): 60 devices, but a selector
    # runs once per combination of the values it reads
    inv = build([_slice("n1", [(f"d-{k}", {"b.example.com/y": {"string": str(k % 2)}}) for k in range(60)],
                        driver="b.example.com")])
    ev = evaluator(inv, ClusterProfile(), {})
    calls: list[int] = []
    real = Evaluator._eval

    def counting(self: Evaluator, prog: Program, i: int) -> bool | str:
        calls.append(i)
        return real(self, prog, i)

    monkeypatch.setattr(Evaluator, "_eval", counting)
    got = ev.results(text)
    assert got is not None and len(got) == 60
    assert len(calls) == evaluations


def test_devices_reachable_from_every_node_are_counted_once_across_nodes() -> None:
    gpu = {"type": {"string": "gpu"}}
    fabric = _slice("", [("gpu-9", gpu)], allNodes=True)
    fabric["spec"]["pool"] = {"name": "fabric", "generation": 1}  # type: ignore[index]
    inv = build([_slice("n1", [("gpu-0", gpu)]), _slice("n2", [("gpu-5", gpu)]), fabric])
    one = _spec(inv, "      - name: g\n        exactly: {deviceClassName: gpu.nvidia.com}\n")
    # n1 takes its own GPU and the fabric one; n2 only its own, the fabric GPU is gone by then
    assert pods_per_node([one], inv, 10) == {"n1": 2, "n2": 1}
    # per node on its own (shared=False), each node could use the fabric GPU
    assert pods_per_node([one], inv, 10, shared=False) == {"n1": 2, "n2": 2}


def test_an_alternative_is_possible_only_where_one_node_has_count_devices() -> None:
    gpu = {"type": {"string": "gpu"}}
    inv = build([_slice("n1", [("gpu-0", gpu)]), _slice("n2", [("gpu-5", gpu)])])
    for count, possible in ((1, True), (2, False)):
        spec = _spec(inv, f"      - name: g\n        exactly: {{deviceClassName: gpu.nvidia.com, count: {count}}}\n")
        [alt] = spec.requests[0].alternatives
        assert alternative_possible(alt, inv) is possible, count
