"""The API server's order: decode → defaults → drops of disabled gates → validate (dralint.checks.admission)."""

from __future__ import annotations

from pathlib import Path
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


def test_defaults_copy_only_the_way_to_what_they_set() -> None:
    req = {"name": "a", "deviceClassName": "x", "count": 0}
    other = {"name": "b", "deviceClassName": "x", "count": 2, "allocationMode": "ExactCount"}
    selectors = [{"cel": {"expression": "true"}}]
    data = {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [req, other], "constraints": selectors}}}
    before = repr(data)
    got = apply_defaults(data, "ResourceClaim", "v1beta1", "1.35")
    assert repr(data) == before  # the loaded data is never changed
    requests = got["spec"]["devices"]["requests"]
    assert requests[0] == {**req, "count": 1, "allocationMode": "ExactCount"} and requests[0] is not req
    assert requests[1] is other  # nothing set there: shared, not copied
    assert got["metadata"] is data["metadata"] and got["spec"]["devices"]["constraints"] is selectors
    assert got is not data and got["spec"] is not data["spec"]


def test_defaults_are_those_of_a_whole_copy_on_every_dra_object(tmp_path: Path) -> None:
    import copy

    from dralint.checks import admission
    from dralint.engine.config import build_config
    from dralint.engine.pipeline import load_paths

    from .conftest import EXAMPLES
    from .test_parallel import load_generator

    load_generator().generate(tmp_path, files=80, docs=800, seed=3)  # claims, templates and slices in every shape
    files, _ = load_paths([str(EXAMPLES), str(tmp_path)], build_config({}, None, EXAMPLES))
    n = changed = 0
    for sf in files:
        for doc in sf.documents:
            data = doc.data
            if not isinstance(data, dict) or not str(data.get("apiVersion", "")).startswith("resource.k8s.io/"):
                continue
            kind, version = data.get("kind"), str(data["apiVersion"]).split("/")[1]
            for minor in ("1.32", "1.35"):
                whole = copy.deepcopy(data)
                got = admission.apply_defaults(data, kind, version, minor)
                # the old way: fill a deep copy in place, which is what every default must give
                assert got == _filled_in_place(whole, kind, version, minor)
                n += 1
                changed += got is not data
    assert n > 100 and changed > 20


def _targets(data: Any, kind: str, pattern: str) -> list[tuple[Any, Any]]:
    """Where a pattern of schemas/kubernetes/defaults.yaml applies, worked out for each object (the
    reference for the engine's plan made once per kind and version)."""
    from dralint.knowledge.lifecycle import CLAIM_SPEC_BASE, match_paths

    head, _, rest = pattern.partition(".")
    if head != "@claimspec":
        return match_paths(data, pattern)
    base = CLAIM_SPEC_BASE.get(kind)
    if base is None:
        return []
    node = data
    for step in base:
        node = node.get(step) if isinstance(node, dict) else None
    return match_paths(node, rest, base)


def _filled_in_place(data: Any, kind: str, version: str, minor: str) -> Any:
    from dralint.checks import admission
    from dralint.knowledge.lifecycle import minor_key

    for d in admission.defaults():
        if (d.kinds and kind not in d.kinds) or (d.versions and version not in d.versions):
            continue
        if d.since and minor and minor_key(minor) < minor_key(d.since):
            continue
        for pattern in d.at:
            for _, node in _targets(data, kind, pattern):
                if not isinstance(node, dict) or not admission._unset(node.get(d.field)):
                    continue
                if d.field in node and not isinstance(node[d.field], type(d.value)) and node[d.field] is not None:
                    continue
                if all(node.get(k) == v for k, v in d.when) and not any(admission._unset(node.get(k))
                                                                         for k in d.requires):
                    node[d.field] = d.value
    return data
