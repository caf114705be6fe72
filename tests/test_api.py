"""The Python API: ``dralint.lint_text`` and ``dralint.fix_text``."""

from __future__ import annotations

import pytest

import dralint
from dralint.engine.config import ConfigError
from dralint.fix import loop
from dralint.model import Applicability, Edit, Fix, Severity

from .conftest import RULES

SOURCE = (RULES / "DRA309-pod-claim-source" / "bad.yaml").read_text()
QUOTA = (RULES / "DRA205-legacy-gpu-quota" / "bad.yaml").read_text()
POD_ONLY = SOURCE.split("---\n")[0]
TEMPLATE = "---\n" + SOURCE.split("---\n")[1]


def test_lint_text_returns_findings_with_positions_and_fixes() -> None:
    findings = dralint.lint_text(SOURCE, select=["DRA309"])
    assert [(f.rule, f.line, f.severity) for f in findings] == [("DRA309", 9, Severity.ERROR)]
    assert findings[0].fix is not None and findings[0].fix.applicability == Applicability.SAFE


def test_profile_keywords_change_the_answer() -> None:
    claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n" \
            "    requests:\n    - name: g\n      exactly: {deviceClassName: gpu.nvidia.com}\n"
    assert [f.rule for f in dralint.lint_text(claim, select=["DRA102"])] == []
    assert [f.rule for f in dralint.lint_text(claim, select=["DRA102"], kubernetes_version="1.33")] == ["DRA102"]


def test_context_resolves_cross_file_references() -> None:
    assert "DRA304" in [f.rule for f in dralint.lint_text(POD_ONLY, select=["DRA304"])]
    assert dralint.lint_text(POD_ONLY, select=["DRA304"], context={"t.yaml": TEMPLATE}) == []


def test_bad_options_are_configuration_errors() -> None:
    with pytest.raises(ConfigError):
        dralint.lint_text(SOURCE, no_such_option=True)


def test_fix_text_safe_and_unsafe() -> None:
    assert dralint.fix_text(SOURCE, select=["DRA309"]) == (RULES / "DRA309-pod-claim-source" / "bad.fixed.yaml"
                                                           ).read_text()
    # the quota fix changes what is enforced: unsafe
    assert dralint.fix_text(QUOTA, select=["DRA205"]) == QUOTA
    assert dralint.fix_text(QUOTA, unsafe=True, select=["DRA205"]) == (RULES / "DRA205-legacy-gpu-quota" /
                                                                      "bad.fixed.yaml").read_text()
    fixed = dralint.fix_text(SOURCE, unsafe=True)
    assert dralint.fix_text(fixed, unsafe=True) == fixed


def test_fix_text_keeps_bytes_it_does_not_fix() -> None:
    text = "\ufeff" + SOURCE.replace("\n", "\r\n")
    out = dralint.fix_text(text.encode(), select=["DRA309"])
    assert out.startswith("\ufeffapiVersion: v1\r\n") and "\n" not in out.replace("\r\n", "")


def test_fix_text_raises_when_a_gate_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    real = loop.lint_files

    def lint(targets, context, config):  # type: ignore[no-untyped-def]
        res = real(targets, context, config)
        for f in res.findings:
            if f.object is not None and f.object.name == "worker":
                f.fix = Fix("rename the pod", Applicability.SAFE, (Edit("set", ("metadata", "name"), value="x"),))
        return res

    monkeypatch.setattr(loop, "lint_files", lint)
    with pytest.raises(dralint.FixError) as err:
        dralint.fix_text(SOURCE, select=["DRA309"])
    assert err.value.rules == ["DRA309"]
    assert "identity" in str(err.value)
