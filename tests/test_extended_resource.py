"""DRA504: implicit `deviceclass.resource.kubernetes.io/<class>` requests against the gate and the class.

Which minors have DRAExtendedResource on is read from schemas/kubernetes/lifecycle.yaml (the same
data dralint uses), so the expectation follows the data rather than a copy of today's output.
"""

from __future__ import annotations

from typing import Any

import pytest

from dralint.knowledge.catalog import load_data
from dralint.knowledge.profile import known_minors
from dralint.model import Severity

from .conftest import lint_text

GATE = "DRAExtendedResource"


def _pod(*resources: str, section: str = "limits", init: bool = False) -> str:
    lines = "".join(f"        {r}: 1\n" for r in resources)
    where = "initContainers" if init else "containers"
    return ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
            f"  {where}:\n  - name: c\n    image: busybox\n    resources:\n      {section}:\n{lines}")


def _dra504(text: str, **config: Any) -> list[tuple[int, int, Severity, str]]:
    result = lint_text(text, select=["DRA504"], **config)
    assert result.internal_errors == []
    return [(f.span.line, f.span.column, f.severity, f.message) for f in result.findings if f.rule == "DRA504"]


def _gate_default(minor: str) -> bool | None:
    gates = (load_data("kubernetes/lifecycle.yaml")["minors"][minor] or {}).get("gates") or {}
    g = gates.get(GATE)
    return None if g is None else bool(g.get("default"))


@pytest.mark.parametrize("minor", known_minors())
def test_the_gate_of_the_target_minor_decides(minor: str) -> None:
    name = "deviceclass.resource.kubernetes.io/gpu.nvidia.com"
    text = _pod(name)
    found = _dra504(text, **{"kubernetes-version": minor})
    if _gate_default(minor):
        assert found == []
    else:
        [(line, col, sev, msg)] = found
        assert (line, col) == (text.splitlines().index(f"        {name}: 1") + 1, 9)
        assert sev is Severity.ERROR and GATE in msg and "stays Pending" in msg


def test_the_gate_turned_on_in_the_profile_is_honoured() -> None:
    text = _pod("deviceclass.resource.kubernetes.io/gpu.nvidia.com")
    assert _dra504(text, **{"kubernetes-version": "1.35", "feature-gates": {GATE: True}}) == []


def test_limits_and_requests_naming_it_together_are_one_finding_and_init_containers_count() -> None:
    name = "deviceclass.resource.kubernetes.io/gpu.nvidia.com"
    text = _pod(name, init=True).replace("      limits:\n", "      requests:\n") + f"      limits:\n        {name}: 1\n"
    assert len(_dra504(text, **{"kubernetes-version": "1.35"})) == 1


def test_other_extended_resources_are_not_this_rules() -> None:
    assert _dra504(_pod("nvidia.com/gpu", "example.com/gpu"), **{"kubernetes-version": "1.35"}) == []


ON = {"kubernetes-version": "1.35", "feature-gates": {GATE: True}}


def test_with_the_gate_on_a_misspelt_class_is_an_error() -> None:
    [(_, _, sev, msg)] = _dra504(_pod("deviceclass.resource.kubernetes.io/gpu.nvidia.co"), **ON)
    assert sev is Severity.ERROR and "misspelling of `gpu.nvidia.com`" in msg


def test_with_the_gate_on_an_unknown_class_is_a_warning_until_declared() -> None:
    text = _pod("deviceclass.resource.kubernetes.io/gpu.example.com")
    [(_, _, sev, msg)] = _dra504(text, **ON)
    assert sev is Severity.WARNING and "device-classes: [gpu.example.com]" in msg
    assert _dra504(text, **ON, **{"device-classes": ["gpu.example.com"]}) == []
    assert _dra504(text, **ON, drivers=[{"name": "gpu.example.com"}]) == []


def test_with_the_gate_on_a_class_defined_in_the_set_is_found() -> None:
    dc = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: fast.example.org\n---\n"
    assert _dra504(dc + _pod("deviceclass.resource.kubernetes.io/fast.example.org"), **ON) == []


def _class(ern: str) -> str:
    return ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu.example.com\nspec:\n"
            f"  extendedResourceName: {ern}\n---\n")


@pytest.mark.parametrize(("ern", "served"), [
    ("example.com/gpu", True),
    ("kubernetes.io/gpu", False),  # not an extended resource name: the API server rejects the class
    ("requests.example.com/gpu", False),
])
def test_dra208_takes_only_a_valid_extended_resource_name_as_served(ern: str, served: bool) -> None:
    result = lint_text(_class(ern) + _pod(ern), select=["DRA208"])
    assert [f.rule for f in result.findings] == (["DRA208"] if served else [])


def test_dra208_asks_for_classes_only_for_names_with_a_domain() -> None:
    # a pod that requests only cpu and memory never needs the device classes
    assert lint_text(_class("example.com/gpu") + _pod("cpu", "memory"), select=["DRA208"]).findings == []
