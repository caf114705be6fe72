"""Rules judge the intended shape (issue 15, point 3).

A claim with a shape mistake that has one reading (DRA108: v1beta1 request fields under a v1
``requests[]``; DRA109: a template's claim spec directly under ``spec``) or in a version the target
does not know but that converts to v1 (DRA102) must still get every other finding, at the position
of the written text, each once. Expected lines and columns are read from the input text itself.
"""

from __future__ import annotations

from collections import Counter

from dralint.inputs import intended
from dralint.inputs.index import Index
from dralint.inputs.load import load_bytes
from dralint.model import Finding

from .conftest import lint_text

V135 = {"kubernetes-version": "1.35"}


def _pos(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """(line, column) of the ``nth`` occurrence of ``needle`` in ``text`` (1-based)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def _at(findings: list[Finding], rule: str) -> list[tuple[int, int]]:
    return [(f.line, f.column) for f in findings if f.rule == rule]


def _once(findings: list[Finding]) -> None:
    twice = [k for k, n in Counter((f.rule, f.line, f.column, f.message) for f in findings).items() if n > 1]
    assert not twice, twice


NOT_NESTED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: domain
spec:
  devices:
    requests:
    - name: channel
      exactly:
        deviceClassName: compute-domain.nvidia.com
        count: -1
        tolerations:
        - key: maintenance
          operator: Exists
        selectors:
        - cel:
            expression: device.driver == "x" +
    constraints:
    - requests: [chanel]
      matchAttribute: gpu.nvidia.com/parentUUID
"""


def test_template_not_nested_gets_class_and_shape_findings() -> None:
    """The issue's example: DRA109, and DRA305 at the class name the user wrote."""
    fs = lint_text(NOT_NESTED, **V135).findings
    assert _at(fs, "DRA109") == [_pos(NOT_NESTED, "devices:")]
    line, col = _pos(NOT_NESTED, "compute-domain.nvidia.com")
    assert _at(fs, "DRA305") == [(line, col)]
    _once(fs)


def test_template_not_nested_counts_references_and_gates() -> None:
    """DRA104 (count), DRA105 (dangling reference) and DRA501 (a gated field) read the nested spec."""
    fs = lint_text(NOT_NESTED, **V135).findings
    assert _at(fs, "DRA104") == [_pos(NOT_NESTED, "-1")]
    assert _at(fs, "DRA105") == [_pos(NOT_NESTED, "chanel")]
    assert _at(fs, "DRA501") == [_pos(NOT_NESTED, "tolerations:")]
    # DRA101 does not see the misplaced `devices` as an unknown field: DRA109 explains it
    assert not [f for f in fs if f.rule == "DRA101"], [f.message for f in fs]


def test_template_not_nested_cel_selectors() -> None:
    fs = lint_text(NOT_NESTED, **V135).findings
    expr_line, expr_col = _pos(NOT_NESTED, 'device.driver == "x" +')
    got = [f for f in fs if f.rule == "DRA601"]
    assert len(got) == 1
    assert got[0].line == expr_line and got[0].column >= expr_col


def test_template_not_nested_schema_errors_inside() -> None:
    """A type error inside the misplaced spec was hidden by the unknown-field suppression."""
    text = NOT_NESTED.replace("count: -1", "count: two")
    fs = lint_text(text, **V135).findings
    assert _pos(text, "two") in _at(fs, "DRA101") or _pos(text, "count: two") in _at(fs, "DRA101"), \
        [(f.rule, f.line, f.column, f.message) for f in fs]


FLAT_IN_V1 = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: flat
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      allocationMode: Sometimes
"""


def test_flat_request_in_v1_gets_request_checks() -> None:
    """DRA104 skipped requests that DRA108 reports; it now checks them as wrapped in `exactly`."""
    fs = lint_text(FLAT_IN_V1, **V135).findings
    assert _at(fs, "DRA108") == [_pos(FLAT_IN_V1, "deviceClassName:")]
    assert _at(fs, "DRA104") == [_pos(FLAT_IN_V1, "Sometimes")]
    _once(fs)


V1ALPHA3 = """\
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaim
metadata:
  name: old
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
      count: -1
"""


def test_unknown_version_is_judged_as_converted() -> None:
    """1.35 has no v1alpha3 ResourceClaim: DRA102 offers the conversion, and the rest is judged on it."""
    fs = lint_text(V1ALPHA3, **V135).findings
    assert _at(fs, "DRA102") == [_pos(V1ALPHA3, "resource.k8s.io/v1alpha3")]
    assert _at(fs, "DRA104") == [_pos(V1ALPHA3, "-1")]
    assert not [f for f in fs if f.rule == "DRA101"], [f.message for f in fs]
    # fixes of findings on a converted object would edit a version the file does not use
    assert all(f.fix is None for f in fs if f.rule != "DRA102")
    _once(fs)


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  resourceClaims:
  - name: c
    resourceClaimTemplateName: domain
  containers:
  - name: app
    image: x
    resources:
      claims:
      - name: c
        request: {request}
"""


def test_other_objects_read_the_intended_template() -> None:
    """A pod naming a request of a mis-nested template: DRA306 looks at the template's real requests."""
    good = lint_text(POD.format(request="channel"), context=[("t.yaml", NOT_NESTED)], select=["DRA306"], **V135)
    assert not good.findings, [f.message for f in good.findings]
    bad = lint_text(POD.format(request="chanel"), context=[("t.yaml", NOT_NESTED)], select=["DRA306"], **V135)
    assert [f.rule for f in bad.findings] == ["DRA306"]


CASE_TYPO = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel:
            expression: device.attributes["gpu.nvidia.com"].ProductName == "x"
"""


def test_fix_of_a_semantic_finding_edits_the_written_path() -> None:
    fs = lint_text(CASE_TYPO, **V135).findings
    typo = [f for f in fs if f.rule == "DRA602"]
    assert typo and typo[0].fix is not None, [(f.rule, f.message) for f in fs]
    written = ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression")
    assert [e.path for e in typo[0].fix.edits] == [written]
    assert typo[0].obj_path == written


def test_view_maps_paths_back() -> None:
    sf = load_bytes("t.yaml", NOT_NESTED.encode())
    index = Index()
    index.add_file(sf)
    obj = index.objects[0]
    view = intended.shape_view(obj)
    assert view is not None
    assert view.obj.data["spec"]["spec"]["devices"] is obj.data["spec"]["devices"]
    assert view.origin(("spec", "spec", "devices", "requests", 0)) == (("spec", "devices", "requests", 0), True)
    assert view.origin(("spec", "spec")) == (("spec",), False)  # the wrapper the rewrite made
    assert view.origin(("metadata", "name")) == (("metadata", "name"), True)
    assert intended.written(view.obj) is obj
    # the written object is untouched
    assert "spec" not in obj.data["spec"]


def test_ambiguous_shapes_are_not_rewritten() -> None:
    """Both `spec.devices` and `spec.spec`: DRA109 asks for a human merge, nothing is guessed."""
    text = NOT_NESTED.replace("spec:\n  devices:", "spec:\n  spec: {}\n  devices:", 1)
    sf = load_bytes("t.yaml", text.encode())
    index = Index()
    index.add_file(sf)
    assert intended.shape_view(index.objects[0]) is None
