"""DRA111: driver CRDs (ComputeDomain) validated from the driver data like built-in types.

Expectations are read from schemas/drivers/gpu.nvidia.com.yaml (the served version, the required
fields) rather than copied from dralint's output.
"""

from __future__ import annotations

import pytest

from dralint.knowledge.catalog import load_data
from dralint.model import Severity

from .conftest import CORPUS, lint_text, requires_shared

CD = load_data("drivers/gpu.nvidia.com.yaml")["custom-resources"]["ComputeDomain"]


def _cd(api_version: str, spec: str) -> str:
    return f"apiVersion: {api_version}\nkind: ComputeDomain\nmetadata:\n  name: cd\n  namespace: ns\nspec:\n{spec}"


GOOD_SPEC = "  numNodes: 0\n  channel:\n    resourceClaimTemplate:\n      name: cd-channel\n"


def _dra111(text: str, **config: object) -> list[tuple[int, int, str]]:
    result = lint_text(text, select=["DRA111"], **config)
    assert result.internal_errors == []
    assert all(f.severity is Severity.ERROR for f in result.findings)
    return [(f.span.line, f.span.column, f.message) for f in result.findings if f.rule == "DRA111"]


def test_the_served_version_with_the_required_fields_passes() -> None:
    assert _dra111(_cd(CD["api-version"], GOOD_SPEC)) == []


@pytest.mark.parametrize("version", ["v1alpha1", "v1", "v2beta1"])
def test_a_version_the_crd_does_not_serve_is_an_error(version: str) -> None:
    group = CD["api-version"].split("/")[0]
    assert f"{group}/{version}" != CD["api-version"]
    [(line, col, msg)] = _dra111(_cd(f"{group}/{version}", GOOD_SPEC))
    assert (line, col) == (1, len("apiVersion: ") + 1)
    assert f"`{CD['api-version']}`" in msg


def test_a_missing_required_field_is_an_error_at_its_parent() -> None:
    text = _cd(CD["api-version"], "  numNodes: 0\n  channel:\n    resourceClaimTemplate: {}\n")
    [(line, _, msg)] = _dra111(text)
    assert line == text.splitlines().index("    resourceClaimTemplate: {}") + 1
    assert "needs `name`" in msg


def test_numnodes_is_required_only_before_the_release_the_data_names() -> None:
    until = load_data("drivers/gpu.nvidia.com.yaml")["crd-types"]["ComputeDomainSpec"]["fields"]["numNodes"]
    text = _cd(CD["api-version"], "  channel:\n    resourceClaimTemplate:\n      name: c\n")
    assert _dra111(text) == []  # the newest release
    old = next(iter(load_data("drivers/gpu.nvidia.com.yaml")["releases"]))
    assert old != until["required-until"]
    found = _dra111(text, drivers=[{"name": "compute-domain.nvidia.com", "version": old}])
    assert [m for _, _, m in found if "needs `numNodes`" in m]


def test_unknown_fields_are_errors() -> None:
    text = _cd(CD["api-version"], GOOD_SPEC + "  numNode: 2\n")
    [(_, _, msg)] = _dra111(text)
    assert "unknown field `numNode`" in msg


def test_a_kind_of_the_same_name_in_another_group_is_not_the_drivers() -> None:
    assert _dra111(_cd("example.org/v1", "  anything: 1\n")) == []


@requires_shared
def test_the_nvidia_demo_compute_domains_pass() -> None:
    files = [p for p in CORPUS.rglob("*.yaml") if "kind: ComputeDomain\n" in p.read_text(errors="replace")]
    if not files:
        pytest.skip("no ComputeDomain in the shared corpus")
    for p in files:
        assert _dra111(p.read_text()) == [], p
