"""JUnit XML for CI systems that show test reports (GitLab, Jenkins, Azure Pipelines, …).

One ``<testsuite>`` per linted file, one ``<testcase>`` per finding (a ``<failure>`` whose type is
the severity); a file without findings gets one passing test case so it is counted. The XML is
built with ElementTree, which escapes markup. Text from the input is cleaned first: control
characters (which XML 1.0 cannot carry, or which would act on a terminal or start a new line in a
CI log when the report is printed) are shown as escapes, and the rest of what XML cannot carry
becomes U+FFFD. ``##[`` (a GitHub Actions command anywhere in a log line) is written with a
character reference, which XML readers turn back into the same text.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from dralint.engine.runner import Result
from dralint.model import Finding
from dralint.report import ReportOptions
from dralint.report.escaping import break_legacy_commands, visible

_INVALID_XML = re.compile("[\ufffe\uffff\ud800-\udfff]")  # controls are gone by then (see clean)


def clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", visible(text))


def _case(suite: ET.Element, f: Finding) -> None:
    name = f"{f.rule} {f.name} at {f.span.line}:{f.span.column}"
    case = ET.SubElement(suite, "testcase", {
        "classname": clean(f.path), "name": clean(name), "file": clean(f.path), "line": str(f.span.line),
    })
    lines = [f"{clean(f.path)}:{f.span.line}:{f.span.column}: {f.rule} [{f.severity}] {clean(f.message)}"]
    if f.object is not None:
        lines.append(f"object: {clean(f.object.label())}")
    if f.source:
        lines.append(f"template: {clean(f.source)}")
    failure = ET.SubElement(case, "failure", {"type": str(f.severity), "message": clean(f.message)})
    failure.text = "\n".join(lines)  # the line breaks are dralint's own; input text never starts a line


def render(result: Result, opts: ReportOptions) -> str:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for sf in result.files:
        by_file.setdefault(sf.path, [])
    for f in result.findings:
        by_file[f.path].append(f)
    errors_by_file: dict[str, list[str]] = defaultdict(list)
    for e in result.internal_errors:
        errors_by_file[e.path].append(f"rule {e.rule} crashed: {e.detail}")
        by_file.setdefault(e.path, [])
    root = ET.Element("testsuites", {"name": "dralint"})
    total = failures = errors = 0
    for path in sorted(by_file):
        findings = by_file[path]
        crashes = errors_by_file.get(path, [])
        suite = ET.SubElement(root, "testsuite", {"name": clean(path)})
        for f in findings:
            _case(suite, f)
        for c in crashes:
            case = ET.SubElement(suite, "testcase", {"classname": clean(path), "name": "dralint internal error"})
            ET.SubElement(case, "error", {"message": clean(c)}).text = clean(c)
        if not findings and not crashes:
            ET.SubElement(suite, "testcase", {"classname": clean(path), "name": "dralint", "file": clean(path)})
        n = max(len(findings) + len(crashes), 1)
        suite.set("tests", str(n))
        suite.set("failures", str(len(findings)))
        suite.set("errors", str(len(crashes)))
        suite.set("skipped", "0")
        total += n
        failures += len(findings)
        errors += len(crashes)
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    ET.indent(root)
    xml = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + break_legacy_commands(xml, "&#91;") + "\n"
