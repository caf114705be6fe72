"""Report formats for CI: SARIF (schema-validated), GitHub annotations, Markdown, JUnit, --output."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralint.cli.app import main
from dralint.engine.runner import Result
from dralint.report import ReportOptions, format_names, get_formatter, sarif
from dralint.report import github as gh
from dralint.report import markdown as md
from dralint.report.escaping import pretty_json
from tests.conftest import REPO, lint_text

SCHEMA = json.loads((REPO / "tests" / "fixtures" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  containers:
    - name: main
      image: x
      resources:
        limits:
          nvidia.com/gpu: 1
"""

# A container name an attacker controls: a literal "%0A::set-output", real CR/LF, and the
# property delimiters `,` and `:`. YAML double quotes turn \r and \n into the real characters.
HOSTILE_NAME = 'evil%0A::set-output name=x::y\\r\\n::error file=a.yaml::pwned, `x` | <script>alert(1)</script>'
HOSTILE = f"""\
apiVersion: v1
kind: Pod
metadata:
  name: "pod|<b>bold</b>`tick"
spec:
  containers:
    - name: "{HOSTILE_NAME}"
      image: x
      resources:
        limits:
          nvidia.com/gpu: 1
"""


def render(fmt: str, result: Result) -> str:
    return get_formatter(fmt)(result, ReportOptions())


def sarif_validator() -> jsonschema.Draft4Validator:
    return jsonschema.Draft4Validator(SCHEMA)


def test_new_formats_are_registered() -> None:
    assert {"github", "sarif", "markdown", "junit"} <= set(format_names())


# --------------------------------------------------------------------------------------------------
# SARIF


def _mixed_result() -> Result:
    text = GPU_POD + "---\n" + """\
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ResourceQuota
    metadata: {name: q, namespace: ml}
    spec:
      hard:
        requests.nvidia.com/gpu: "4"
"""
    return lint_text(text, path="dir with space/app#1.yaml")


def test_sarif_validates_against_the_official_schema() -> None:
    result = _mixed_result()
    assert len(result.findings) >= 2
    log = json.loads(render("sarif", result))
    errors = sorted(sarif_validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]


def test_sarif_file_level_finding_and_hostile_text_validate() -> None:
    broken = lint_text("apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n", path="broken.yaml")
    assert any(f.rule == "DRA001" for f in broken.findings)
    hostile = lint_text(HOSTILE, path="h.yaml")
    for result in (broken, hostile):
        log = json.loads(render("sarif", result))
        assert not list(sarif_validator().iter_errors(log))


def test_sarif_driver_lists_every_selected_rule_with_help() -> None:
    result = lint_text(GPU_POD)
    run = json.loads(render("sarif", result))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids == sorted(result.selected)
    for r in rules:
        meta = result.selected[r["id"]]
        assert r["name"] == meta.name
        assert r["shortDescription"]["text"] == meta.summary
        assert r["fullDescription"]["text"]
        assert "\n" not in r["fullDescription"]["text"]
        assert r["helpUri"] == f"https://github.com/dralint/dralint/blob/main/docs/rules/{r['id']}.md"
        assert r["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning", "info": "note"}[
            str(meta.severity)]


def test_sarif_result_shape() -> None:
    result = lint_text(GPU_POD, path="apps/pod.yaml")
    run = json.loads(render("sarif", result))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    (res,) = run["results"]
    f = result.findings[0]
    assert res["ruleId"] == "DRA201"
    assert rules[res["ruleIndex"]]["id"] == "DRA201"
    assert res["level"] == "warning"
    assert res["message"]["text"] == f.message
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "apps/pod.yaml", "uriBaseId": "SRCROOT"}
    assert loc["region"] == {"startLine": 12, "startColumn": 11, "endLine": f.span.end_line,
                             "endColumn": f.span.end_column}
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"].endswith("/")
    assert res["properties"]["object"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "ml", "name": "trainer"}
    assert set(res["partialFingerprints"]) == {"dralint/v1"}


def test_sarif_uri_is_percent_encoded_and_relative() -> None:
    run = json.loads(render("sarif", _mixed_result()))["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"dir%20with%20space/app%231.yaml"}


def test_sarif_absolute_path_under_cwd_becomes_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert sarif.artifact_location(str(tmp_path / "a" / "b.yaml"), tmp_path) == {
        "uri": "a/b.yaml", "uriBaseId": "SRCROOT"}
    outside = sarif.artifact_location("/elsewhere/x.yaml", tmp_path)
    assert outside == {"uri": "file:///elsewhere/x.yaml"}


def _fingerprints(text: str) -> dict[str, str]:
    run = json.loads(render("sarif", lint_text(text, path="apps/pod.yaml")))["runs"][0]
    return {r["properties"]["object"]["name"]: r["partialFingerprints"]["dralint/v1"] for r in run["results"]}


def test_sarif_fingerprints_survive_line_shifts_but_tell_objects_apart() -> None:
    other = GPU_POD.replace("trainer", "server")
    before = _fingerprints(GPU_POD + "---\n" + other)
    shifted = _fingerprints("# a comment\n# another\n" + other + "---\n" + GPU_POD.replace("image: x", "image: y"))
    assert before == shifted
    assert before["trainer"] != before["server"]


def test_sarif_findings_of_one_rule_in_one_object_get_distinct_fingerprints() -> None:
    # two containers with a GPU limit: two DRA201 results in one Pod (tests/test_survivors.py checks
    # which part of the key tells them apart and the counter for a repeated key)
    two = GPU_POD + "    - name: side\n      image: x\n      resources:\n        limits:\n          nvidia.com/gpu: 1\n"
    run = json.loads(render("sarif", lint_text(two, select=["DRA201"])))["runs"][0]
    fps = [r["partialFingerprints"]["dralint/v1"] for r in run["results"]]
    assert [r["ruleId"] for r in run["results"]] == ["DRA201", "DRA201"]
    assert len(set(fps)) == 2


# --------------------------------------------------------------------------------------------------
# GitHub annotations


def _unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def test_github_escaping_rules() -> None:
    assert gh.escape_data("100%\r\n::x") == "100%25%0D%0A::x"
    assert gh.escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    # `%` is escaped first, so an already-escaped sequence cannot be smuggled through
    assert gh.escape_data("%0A") == "%250A"


def test_github_annotation_format() -> None:
    out = render("github", lint_text(GPU_POD, path="apps/pod.yaml"))
    f = lint_text(GPU_POD, path="apps/pod.yaml").findings[0]
    assert out == (f"::warning file=apps/pod.yaml,line=12,col=11,endLine=12,endColumn={f.span.end_column - 1},"
                   f"title=DRA201::{gh.escape_data(f.message)} (legacy-gpu-extended-resource)\n")


def test_github_severities() -> None:
    result = lint_text(GPU_POD + "---\n" + GPU_POD.replace("trainer", "t2"), path="p.yaml")
    result.findings[0].severity = result.findings[0].severity.__class__.ERROR
    result.findings[1].severity = result.findings[1].severity.__class__.INFO
    lines = render("github", result).splitlines()
    assert lines[0].startswith("::error ") and lines[1].startswith("::notice ")


def test_github_injection_from_manifest_text_is_neutralised() -> None:
    # the pod name is invalid too (DRA110); this test is about one finding's message
    result = lint_text(HOSTILE, path="evil,dir:x/h%0A.yaml", select=["DRA201"])
    assert [f.rule for f in result.findings] == ["DRA201"]
    out = render("github", result)
    lines = out.splitlines()
    # one finding, one line: nothing the manifest says can start a second workflow command
    assert len(lines) == 1
    assert "\r" not in out
    line = lines[0]
    assert line.startswith("::warning file=evil%2Cdir%3Ax/h%250A.yaml,line=")
    # the runner splits the command at the first `::` after the properties; the manifest text
    # must all land in the message, and must decode back to exactly what dralint meant to say
    head, sep, data = line[2:].partition("::")
    assert sep and head.startswith("warning ")
    assert "::" not in head
    assert _unescape_data(data).startswith(result.findings[0].message)
    assert "%0A::set-output" not in data  # the literal text shows up as %250A…, never as a newline
    assert "%250A::set-output" in data


# --------------------------------------------------------------------------------------------------
# Markdown


def _table_cells(row: str) -> list[str]:
    """Split a GFM table row on pipes that are not backslash-escaped."""
    return re.split(r"(?<!\\)\|", row)[1:-1]


def test_markdown_summary_and_rows() -> None:
    out = render("markdown", lint_text(GPU_POD, path="apps/pod.yaml"))
    assert out.startswith("## dralint\n")
    assert "Found 1 finding (1 warning) in 1 file" in out
    assert "[DRA201](https://github.com/dralint/dralint/blob/main/docs/rules/DRA201.md)" in out
    row = next(line for line in out.splitlines() if line.startswith("| :warning:"))
    assert len(_table_cells(row)) == 5
    assert "<code>main</code>" in row  # dralint's own code spans survive as <code>
    assert "<code>apps/pod.yaml:12:11</code>" in row


def test_markdown_clean_run() -> None:
    out = render("markdown", lint_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"))
    assert ":white_check_mark: All checks passed" in out


def test_markdown_escapes_manifest_text() -> None:
    out = render("markdown", lint_text(HOSTILE, path="h.yaml"))
    rows = [line for line in out.splitlines() if line.startswith("| :warning:")]
    assert len(rows) == 1
    (row,) = rows
    assert len(_table_cells(row)) == 5  # the pipe in the names did not add a column
    assert "<script" not in out and "<b>" not in out
    assert "&lt;script&gt;" in out and "&lt;b&gt;" in out
    # the names' backticks are escaped, so no code span is opened by manifest text
    assert "`" not in out.replace("\\`", "")
    assert "\\:\\:set" in out  # no emoji/shortcode or autolink tricks through colons
    assert len(out.splitlines()) == len(out.split("\n")) - 1  # newlines from the manifest became spaces


def test_markdown_message_without_paired_backticks_is_all_plain() -> None:
    assert md.message("a `b` c") == "a <code>b</code> c"
    assert md.message("a `b` `c") == "a \\`b\\` \\`c"


# --------------------------------------------------------------------------------------------------
# JUnit


def test_junit_is_valid_xml_with_escaped_text() -> None:
    text = HOSTILE.replace('name: "pod', 'name: "bell\\x07pod')
    result = lint_text(text + "---\n" + GPU_POD, path="h&<x>.yaml", select=["DRA201"])
    out = render("junit", result)
    root = ET.fromstring(out)
    assert root.tag == "testsuites"
    assert root.get("tests") == "2" and root.get("failures") == "2"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "h&<x>.yaml"
    failures = suite.findall("testcase/failure")
    assert [f.get("type") for f in failures] == ["warning", "warning"]
    messages = {f.get("message") for f in failures}
    assert any(m and "%0A::set-output" in m for m in messages)
    assert "\x07" not in out


def test_junit_clean_file_counts_as_a_passing_test() -> None:
    root = ET.fromstring(render("junit", lint_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")))
    assert root.get("tests") == "1" and root.get("failures") == "0"
    assert root.find("testsuite/testcase/failure") is None


# --------------------------------------------------------------------------------------------------
# CLI: --format and --output


@pytest.fixture
def repo_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("fmt", ["github", "sarif", "markdown", "junit"])
def test_cli_output_writes_the_format_and_text_goes_to_terminal(
    fmt: str, repo_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = repo_dir / f"report.{fmt}"
    code = main(["check", "--isolated", "--format", fmt, "--output", str(out_file), "apps"])
    assert code == 1
    stdout = capsys.readouterr().out
    assert stdout.startswith("apps/pod.yaml:12:11: DRA201 [warning]")
    written = out_file.read_text(encoding="utf-8")
    if fmt == "sarif":
        log: dict[str, Any] = json.loads(written)
        assert not list(sarif_validator().iter_errors(log))
        assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
            "apps/pod.yaml")
    elif fmt == "github":
        assert written.startswith("::warning file=apps/pod.yaml,line=12,col=11")
    elif fmt == "markdown":
        assert written.startswith("## dralint")
    else:
        assert ET.fromstring(written).get("failures") == "1"


def test_cli_format_to_stdout(repo_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--isolated", "--format", "github", "apps"]) == 1
    assert capsys.readouterr().out.startswith("::warning file=apps/pod.yaml")


# -- the JSON writer of the reports -------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    | st.tuples(inner, inner),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_pretty_json_writes_what_json_dumps_writes(value: Any) -> None:
    assert pretty_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_pretty_json_hands_odd_values_to_json_dumps() -> None:
    class Name(str):
        pass

    for odd in ({1: "int key"}, {"k": Name("sub")}, [float("nan"), float("inf")], {"a": {True: 1}}):
        assert pretty_json(odd) == json.dumps(odd, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("copies", [0, 1, 3])
def test_the_json_report_written_in_pieces_is_the_whole_document(monkeypatch: pytest.MonkeyPatch,
                                                                  copies: int) -> None:
    """`render_chunks` writes what `json_text(pretty_json(doc))` of the whole report writes, with
    more findings than one piece holds, none, suppressed ones and hostile strings."""
    from dralint.report import get_chunks, json_report
    from dralint.report.escaping import json_text

    monkeypatch.setattr(json_report, "CHUNK", 2)
    text = "---\n".join([GPU_POD.replace("trainer", f"t{i}") for i in range(copies)] + [HOSTILE])
    text += "---\n" + GPU_POD.replace("name: trainer", "name: quiet\n  annotations:\n"
                                      "    dralint.io/ignore: DRA201 -- shared node pool")
    result = lint_text(text)
    if not copies:
        result.findings = []
    doc = {"version": json_report.FORMAT_VERSION,
           "findings": [json_report.finding_json(f) for f in result.findings],
           "suppressed": [json_report.suppressed_json(f) for f in result.suppressions],
           "summary": json_report.summary_json(result)}
    whole = json_text(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"
    pieces = list(get_chunks("json")(result, ReportOptions()))
    assert "".join(pieces) == whole == get_formatter("json")(result, ReportOptions())
    assert len(pieces) >= 4 + (len(result.findings) + 1) // 2  # one piece per two findings, at least
