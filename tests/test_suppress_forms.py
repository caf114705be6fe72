"""Suppression forms (issue 16, point 3): bare `# dralint: disable`, rule names, reasons after ` -- `,
the same forms in the `dralint.io/ignore` annotation, the off-by-default blanket rule DRA010, and the
reason reaching JSON and SARIF."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from dralint.cli.app import main
from tests.conftest import REPO

SCHEMA = json.loads((REPO / "tests" / "fixtures" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def pod(comment: str = "", annotation: str | None = None) -> str:
    """A pod with one container that asks for `nvidia.com/gpu` (DRA201 on its last line)."""
    meta = "metadata:\n  name: p\n"
    if annotation is not None:
        meta += f"  annotations:\n    dralint.io/ignore: {json.dumps(annotation)}\n"
    return ("apiVersion: v1\nkind: Pod\n" + meta + "spec:\n  containers:\n  - name: c\n    image: x\n"
            "    resources:\n      limits:\n        nvidia.com/gpu: 1" + (f"  {comment}" if comment else "") + "\n")


def run_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *extra: str) -> dict:  # type: ignore[type-arg]
    (tmp_path / "pod.yaml").write_text(text, encoding="utf-8")
    capsys.readouterr()
    main(["check", "--isolated", "--no-cache", "--format", "json", *extra, str(tmp_path / "pod.yaml")])
    doc: dict = json.loads(capsys.readouterr().out)  # type: ignore[type-arg]
    return doc


def rules(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [f["rule"] for f in doc["findings"]]


def test_without_a_suppression_the_pod_has_dra201(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert rules(run_json(tmp_path, capsys, pod())) == ["DRA201"]


@pytest.mark.parametrize("comment", [
    "# dralint: disable",
    "# dralint: disable -- migrating in Q3",
    "# dralint: disable=all",
    "# dralint: disable=legacy-gpu-extended-resource",
    "# dralint: disable=Legacy-GPU-Extended-Resource -- migrating in Q3",
    "# dralint: disable=DRA201 -- migrating in Q3",
    "# dralint: disable = dra2 -- a prefix",
])
def test_every_form_suppresses_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], comment: str) -> None:
    doc = run_json(tmp_path, capsys, pod(comment))
    assert rules(doc) == []
    assert [f["rule"] for f in doc["suppressed"]] == ["DRA201"]
    assert doc["summary"]["suppressed"] == 1


def test_bare_disable_suppresses_every_rule_on_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a selector with several problems on one line (an unknown attribute, a type error)
    text = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: c\nspec:\n  selectors:\n"
            "  - cel:\n      expression: device.attributes['gpu.nvidia.com'].productNam == 1 {}\n")
    plain = run_json(tmp_path, capsys, text)
    on_line = sorted({f["rule"] for f in plain["findings"] if f["line"] == 8})
    assert on_line, plain  # something to suppress
    doc = run_json(tmp_path, capsys, text.rstrip("\n") + "  # dralint: disable\n")
    assert [f for f in doc["findings"] if f["line"] == 8] == []
    assert sorted({f["rule"] for f in doc["suppressed"]}) == on_line


def test_reason_is_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(tmp_path, capsys, pod("# dralint: disable=DRA201 -- waiting for driver 25.8"))
    (s,) = doc["suppressed"]
    assert s["suppression"] == {"kind": "line", "line": 11, "justification": "waiting for driver 25.8"}
    assert s["line"] == 11 and s["column"] == 9


def test_without_a_reason_justification_is_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(tmp_path, capsys, pod("# dralint: disable=DRA201"))
    assert doc["suppressed"][0]["suppression"]["justification"] is None


def test_reason_is_in_sarif_and_the_log_stays_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pod.yaml").write_text(pod("# dralint: disable=DRA201 -- waiting for driver 25.8"), encoding="utf-8")
    capsys.readouterr()
    main(["check", "--isolated", "--no-cache", "--format", "sarif", str(tmp_path / "pod.yaml")])
    log = json.loads(capsys.readouterr().out)
    errors = list(jsonschema.Draft4Validator(SCHEMA).iter_errors(log))
    assert not errors, [e.message for e in errors]
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "DRA201"
    assert res["suppressions"] == [{"kind": "inSource", "status": "accepted",
                                    "justification": "waiting for driver 25.8"}]


@pytest.mark.parametrize("value", [
    "all", "DRA201", "legacy-gpu-extended-resource", "legacy-gpu-extended-resource -- reviewed by infra",
    "DRA302, legacy-gpu-extended-resource -- reviewed by infra",
])
def test_annotation_accepts_the_same_forms(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    doc = run_json(tmp_path, capsys, pod(annotation=value))
    assert "DRA201" not in rules(doc)
    (s,) = doc["suppressed"]
    assert s["suppression"]["kind"] == "annotation"
    expected = value.partition(" -- ")[2] or None
    assert s["suppression"]["justification"] == expected


def test_empty_annotation_suppresses_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a chart rendering `{{ .Values.ignore | quote }}` as "" must not switch every rule off
    assert rules(run_json(tmp_path, capsys, pod(annotation=""))) == ["DRA201"]


def test_a_misspelt_rule_name_is_reported_with_a_suggestion(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(tmp_path, capsys, pod("# dralint: disable=legacy-gpu-extended-resourc"))
    assert sorted(rules(doc)) == ["DRA006", "DRA201"]
    (msg,) = [f["message"] for f in doc["findings"] if f["rule"] == "DRA006"]
    assert "`legacy-gpu-extended-resourc`" in msg and "did you mean `legacy-gpu-extended-resource`" in msg


def test_text_that_is_not_a_directive_is_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `disable` followed by a code without `=` is not a directive (it would be a blanket one otherwise)
    assert rules(run_json(tmp_path, capsys, pod("# dralint: disable DRA302"))) == ["DRA201"]


def test_blanket_rule_is_off_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert rules(run_json(tmp_path, capsys, pod("# dralint: disable"))) == []


@pytest.mark.parametrize(("comment", "annotation", "line"), [
    ("# dralint: disable", None, 11),
    ("# dralint: disable -- with a reason", None, 11),
    ("# dralint: disable=all", None, 11),
    ("", "all", 6),
])
def test_blanket_rule_reports_blanket_forms_and_names_what_they_hid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], comment: str, annotation: str | None, line: int
) -> None:
    text = pod(comment, annotation) if annotation is not None else pod(comment)
    if annotation is not None:
        line = text.splitlines().index(f"    dralint.io/ignore: {json.dumps(annotation)}") + 1
    else:
        line = len(text.splitlines())
    doc = run_json(tmp_path, capsys, text, "--extend-select", "DRA010")
    (f,) = doc["findings"]
    assert (f["rule"], f["name"], f["line"]) == ("DRA010", "blanket-suppression", line)
    assert "`DRA201`" in f["message"]  # the rule the suppression should have named


def test_blanket_rule_is_quiet_for_named_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(tmp_path, capsys, pod("# dralint: disable=DRA201"), "--extend-select", "DRA010")
    assert rules(doc) == []


def test_bare_disable_file_silences_the_whole_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(tmp_path, capsys, "# dralint: disable-file -- generated\n" + pod())
    assert rules(doc) == []
    assert doc["suppressed"][0]["suppression"]["justification"] == "generated"


def test_unused_bare_disable_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = pod("# dralint: disable=DRA201").replace("  name: p\n", "  name: p  # dralint: disable\n")
    doc = run_json(tmp_path, capsys, text)
    (f,) = doc["findings"]
    assert f["rule"] == "DRA006" and "blanket suppression suppressed nothing" in f["message"]
