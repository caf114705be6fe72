"""The API server's order: decode → defaults → drops of disabled gates → validate (dralint.checks.admission)."""

from __future__ import annotations

from typing import Any

from dralint.checks.admission import apply_defaults

from .conftest import lint_text

CLAIM = """\
apiVersion: resource.k8s.io/{version}
kind: ResourceClaim
metadata: {{name: c, namespace: n}}
spec:
  devices:
    requests:
    - name: gpu
{request}"""


def _lint(text: str, minor: str = "1.35", **cfg: Any) -> list[tuple[str, str]]:
    result = lint_text(text, select=["DRA101", "DRA104", "DRA305", "DRA501"], **{"kubernetes-version": minor}, **cfg)
    assert result.internal_errors == []
    return [(f.rule, f.message) for f in result.findings]


def test_count_zero_is_defaulted_to_one_before_validation() -> None:
    exact = "      exactly:\n        deviceClassName: gpu.nvidia.com\n        count: 0\n"
    text = CLAIM.format(version="v1", request=exact)
    assert [r for r, _ in _lint(text) if r == "DRA104"] == []
    # with allocationMode All there is no default: count must not be set at all
    text = CLAIM.format(version="v1", request="      exactly:\n        deviceClassName: gpu.nvidia.com\n"
                                              "        allocationMode: All\n        count: 2\n")
    assert [r for r, _ in _lint(text) if r == "DRA104"] == ["DRA104"]


def test_defaults_per_version_and_copy() -> None:
    data = {"spec": {"devices": {"requests": [{"name": "a", "deviceClassName": "x", "count": 0}]}}}
    got = apply_defaults(data, "ResourceClaim", "v1beta1", "1.35")
    assert got["spec"]["devices"]["requests"][0] == {"name": "a", "deviceClassName": "x", "count": 1,
                                                     "allocationMode": "ExactCount"}
    assert data["spec"]["devices"]["requests"][0]["count"] == 0  # the loaded data is never mutated
    # v1 keeps these fields under `exactly`: the flat ones are not defaulted there
    assert apply_defaults(data, "ResourceClaim", "v1", "1.35") == data
    # a wrongly typed value is a decoding error, never overwritten by a default
    typed = {"spec": {"devices": {"requests": [{"name": "a", "exactly": {"count": "0"}}]}}}
    assert apply_defaults(typed, "ResourceClaim", "v1", "1.35")["spec"]["devices"]["requests"][0]["exactly"][
        "count"] == "0"


def test_pool_generation_is_a_zero_value_not_a_missing_field() -> None:
    text = ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: d.example.com\n"
            "  allNodes: true\n  pool: {name: p, resourceSliceCount: 1}\n")
    assert _lint(text) == []
    assert any("resourceSliceCount" in m for _, m in _lint(text.replace(", resourceSliceCount: 1", "")))


def test_fields_of_an_off_gate_are_dropped_not_validated() -> None:
    tol = ("      exactly:\n        deviceClassName: gpu.nvidia.com\n        tolerations:\n"
           "        - {key: k, operator: In}\n")
    text = CLAIM.format(version="v1", request=tol)
    assert [r for r, _ in _lint(text)] == ["DRA501"]
    # with the gate on, the toleration is kept and validated
    assert sorted(r for r, _ in _lint(text, **{"feature-gates": {"DRADeviceTaints": True}})) == ["DRA104"]


def test_empty_device_class_name_is_required_once() -> None:
    text = CLAIM.format(version="v1", request="      exactly:\n        deviceClassName: \"\"\n")
    got = _lint(text)
    assert [r for r, _ in got] == ["DRA104"] and "empty" in got[0][1]
