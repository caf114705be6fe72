"""Tests for behaviours that a mutation probe (issue 18) could break without any test failing.

Each test names the planted bug it kills; the expectations are written from the input, not
recorded from a run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from dralint.checks.registry import REGISTRY, RuleImpl, load_checks
from dralint.cli.app import main
from dralint.report import ReportOptions, get_formatter, sarif

from .conftest import codes, lint_text
from .test_migrate import POD, _template, migrate_text

# ----------------------------------------------------------------------------------------------
# CEL: the bracketed attribute form is typed like the dotted one (cel/checker.py check_index)

_CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: c}}
spec:
  selectors:
  - cel:
      expression: '{expr}'
"""


@pytest.mark.parametrize("expr", [
    'device.attributes["gpu.nvidia.com"].driverVersion == "550.54.15"',
    'device.attributes["gpu.nvidia.com"]["driverVersion"] == "550.54.15"',
])
def test_bracketed_attribute_is_typed_from_driver_data(expr: str) -> None:
    # driverVersion is a version attribute: comparing it with a string is a type error in both forms
    [f] = lint_text(_CLASS.format(expr=expr.replace("'", "''")), select=["DRA603"]).findings
    assert f.rule == "DRA603" and "Semver" in f.message, f.message


def test_bracketed_attribute_of_the_right_type_is_quiet() -> None:
    expr = 'device.attributes["gpu.nvidia.com"]["driverVersion"].compareTo(semver("550.0.0")) >= 0'
    assert lint_text(_CLASS.format(expr=expr), select=["DRA603"]).findings == []


# ----------------------------------------------------------------------------------------------
# suppression directives (suppress.py)

GPU_POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: {image}
    resources:
      limits:
{before}        nvidia.com/gpu: 1{after}
"""


def test_next_line_directive_skips_comment_and_blank_lines() -> None:
    # the directive applies to the next line with YAML content, past the explanation under it
    before = "        # dralint: disable=DRA201\n        # the device plugin stays until the driver is out\n\n"
    assert codes(lint_text(GPU_POD.format(image="cuda", before=before, after=""))) == []


def test_next_line_directive_does_not_reach_past_content() -> None:
    # content in between: the directive is spent on `cpu: 1` (unused) and the GPU line is reported
    before = "        # dralint: disable=DRA201\n        cpu: 1\n"
    assert sorted(codes(lint_text(GPU_POD.format(image="cuda", before=before, after="")))) == ["DRA006", "DRA201"]


@pytest.mark.parametrize("image", [
    '"cuda # dralint: disable=DRA201"',  # the first `#` of the line is inside the quotes
    '"cuda # one # dralint: disable=DRA201"',
    "'cuda # it''s # dralint: disable=DRA201'",  # '' is a quote inside a single-quoted scalar
])
def test_directive_inside_a_quoted_scalar_is_text(image: str) -> None:
    # the image string is not a comment: no directive, so nothing unused (DRA006) and DRA201 stays
    assert codes(lint_text(GPU_POD.format(image=image, before="", after=""))) == ["DRA201"]


@pytest.mark.parametrize("after", [
    "  # dralint: disable=DRA201",
    "  # one GPU, it's enough # dralint: disable=DRA201",  # after another comment with an apostrophe
])
def test_directive_after_a_quoted_hash_is_a_comment(after: str) -> None:
    text = GPU_POD.format(image="\"cuda#12\"  # tag '#12'", before="", after=after)
    assert codes(lint_text(text)) == []
    # the same on a line whose value holds a '#' in balanced quotes
    text = GPU_POD.format(image='"cuda#12" # dralint: disable=DRA201', before="", after="")
    assert sorted(codes(lint_text(text))) == ["DRA006", "DRA201"]  # a real directive, on the image line


# ----------------------------------------------------------------------------------------------
# SARIF fingerprints (report/sarif.py)

TWO_CONTAINERS = """apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: main
    image: x
    resources: {limits: {nvidia.com/gpu: 1}}
  - name: side
    image: x
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def _sarif_results(result: Any) -> list[dict[str, Any]]:
    return json.loads(get_formatter("sarif")(result, ReportOptions()))["runs"][0]["results"]  # type: ignore[no-any-return]


def test_fingerprint_tells_paths_in_one_object_apart() -> None:
    result = lint_text(TWO_CONTAINERS, select=["DRA201"])
    a, b = result.findings
    assert a.object == b.object and a.rule == b.rule
    assert sarif.fingerprint(a) != sarif.fingerprint(b)  # containers/0 vs containers/1
    fps = [r["partialFingerprints"]["dralint/v1"] for r in _sarif_results(result)]
    assert fps == [sarif.fingerprint(a), sarif.fingerprint(b)]  # no counter needed: the keys differ


def test_the_same_problem_twice_gets_a_counter() -> None:
    result = lint_text(TWO_CONTAINERS, select=["DRA201"])
    first = result.findings[0]
    # two findings with one key (a rule reporting the same path twice): both alerts kept apart
    result.findings = [first, dataclasses.replace(first, message=first.message + " (again)")]
    fp = sarif.fingerprint(first)
    assert [r["partialFingerprints"]["dralint/v1"] for r in _sarif_results(result)] == [fp, f"{fp}:1"]


# ----------------------------------------------------------------------------------------------
# migrate: when an existing ResourceClaimTemplate may be reused (migrate.py _object_name/_reusable)

EXACTLY = "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n"


def test_a_template_in_another_namespace_is_not_reused() -> None:
    # `two-gpus` exists only in team-a; a pod in team-b cannot reference it
    existing = _template("two-gpus", EXACTLY).replace("namespace: ml", "namespace: team-a")
    pod = POD.replace("namespace: ml", "namespace: team-b")
    out, rep = migrate_text(pod, context={"t.yaml": existing})
    assert rep.workloads[0].objects == ["ResourceClaimTemplate trainer-gpu"]
    assert "resourceClaimTemplateName: trainer-gpu\n" in out and "namespace: team-b" in out.split("---")[1]
    # the same template in the pod's namespace is reused (the guard is the namespace, nothing else)
    out, rep = migrate_text(pod, context={"t.yaml": existing.replace("team-a", "team-b")})
    assert rep.workloads[0].objects == ["reused ResourceClaimTemplate two-gpus"]


def test_a_template_whose_api_version_is_not_served_is_not_reused() -> None:
    # v1beta2 reads `exactly:` as v1 does, but Kubernetes 1.37 does not serve it by default
    ctx = {"t.yaml": _template("two-gpus", EXACTLY, "resource.k8s.io/v1beta2")}
    _, rep = migrate_text(POD, context=ctx)
    assert rep.workloads[0].objects == ["ResourceClaimTemplate trainer-gpu"]
    _, rep = migrate_text(POD, context=ctx, config={"runtime-config": {"resource.k8s.io/v1beta2": True}})
    assert rep.workloads[0].objects == ["reused ResourceClaimTemplate two-gpus"]  # served: reused


def test_a_served_template_whose_api_version_has_the_other_shape_is_not_reused() -> None:
    # 1.33 serving v1beta1 and v1beta2: new templates are v1beta2 (`exactly:`); a v1beta1 template
    # with the same `exactly:` spec is served, but v1beta1 has flat requests, so it is invalid
    cfg = {"kubernetes-version": "1.33", "feature-gates": {"DynamicResourceAllocation": True},
           "runtime-config": {"resource.k8s.io/v1beta1": True, "resource.k8s.io/v1beta2": True}}
    out, rep = migrate_text(POD, context={"t.yaml": _template("two-gpus", EXACTLY, "resource.k8s.io/v1beta1")},
                            config=cfg)
    assert rep.workloads[0].objects == ["ResourceClaimTemplate trainer-gpu"]
    assert "apiVersion: resource.k8s.io/v1beta2" in out
    _, rep = migrate_text(POD, context={"t.yaml": _template("two-gpus", EXACTLY, "resource.k8s.io/v1beta2")},
                          config=cfg)
    assert rep.workloads[0].objects == ["reused ResourceClaimTemplate two-gpus"]  # same shape: reused


# ----------------------------------------------------------------------------------------------
# exit codes (cli.py report_problems)


def test_internal_error_exits_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    load_checks()
    impl = REGISTRY["DRA201"]

    def broken(obj: Any, ctx: Any) -> Any:
        raise KeyError("planted")
        yield  # pragma: no cover - a generator, like every check

    monkeypatch.setitem(REGISTRY, "DRA201", RuleImpl(impl.code, broken, impl.scope, impl.kinds, impl.needs))
    p = tmp_path / "pod.yaml"
    p.write_text(GPU_POD.format(image="cuda", before="", after=""))
    code = main(["check", "--isolated", "--no-cache", "--jobs", "1", "--select", "DRA201", str(p)])
    err = capsys.readouterr().err
    assert code == 3
    assert "internal error in rule DRA201" in err and "planted" in err
