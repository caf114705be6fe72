"""The JSON contract (RULES.md, "Output contract"): CI gates and other tools parse this.

Strings carry the input exactly; `escaping.json_text` only changes how a few characters are spelt
(C1 controls, ``##[``), so the document is also safe to print on a terminal or in a CI log.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dralint.engine.runner import Result
from dralint.model import Finding, Severity
from dralint.report import ReportOptions
from dralint.report.escaping import json_text, pretty_json_at

FORMAT_VERSION = 1


def finding_json(f: Finding) -> dict[str, Any]:
    return f.to_dict()  # one definition of the contract, shared with the Python API


def summary_json(result: Result) -> dict[str, Any]:
    counts = result.counts()
    by_rule: dict[str, int] = {}
    for f in result.findings:
        by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
    profile = result.config.profile
    return {
        "files": len(result.files),
        "objects": result.target_objects(),
        "findings": len(result.findings),
        "errors": counts[Severity.ERROR],
        "warnings": counts[Severity.WARNING],
        "info": counts[Severity.INFO],
        "fixable": sum(1 for f in result.findings if f.fix is not None),
        "suppressed": result.suppressed,
        "by_rule": dict(sorted(by_rule.items())),
        "kubernetes_version": profile.kubernetes_version,
        "feature_gates": dict(sorted(profile.feature_gates.items())),
        "runtime_config": dict(sorted(profile.runtime_config.items())),
        "drivers": [
            {"name": d.name, "version": d.version, "feature_gates": dict(sorted(d.feature_gates.items()))}
            for d in profile.drivers
        ],
    }


def suppressed_json(f: Finding) -> dict[str, Any]:
    """A suppressed finding: the finding itself plus how it was silenced and why (the reason after ` -- `)."""
    out = finding_json(f)
    how = f.extra.get("suppression") or {}
    out["suppression"] = {"kind": how.get("kind"), "line": how.get("line"), "justification": how.get("justification")}
    return out


def render(result: Result, opts: ReportOptions) -> str:
    return "".join(render_chunks(result, opts))


def render_chunks(result: Result, opts: ReportOptions) -> Iterator[str]:
    """The report in pieces of about `CHUNK` findings, each made just before it is written: the
    text of ``{"version", "findings", "suppressed", "summary"}`` as `pretty_json` gives it, without
    holding a dict and a dozen small strings for every finding of a large run at once."""
    yield f'{{\n  "version": {FORMAT_VERSION},\n  "findings": '
    yield from _items([finding_json(f) for f in chunk] for chunk in _chunks(result.findings))
    yield ',\n  "suppressed": '
    yield from _items([suppressed_json(f) for f in chunk] for chunk in _chunks(result.suppressions))
    yield ',\n  "summary": ' + json_text(pretty_json_at(summary_json(result), "\n  ")) + "\n}\n"


#: findings per piece of `render_chunks`
CHUNK = 500


def _chunks(findings: list[Finding]) -> Iterator[list[Finding]]:
    for i in range(0, len(findings), CHUNK):
        yield findings[i : i + CHUNK]


def _items(chunks: Iterator[list[dict[str, Any]]]) -> Iterator[str]:
    """A list two spaces in, its items four: ``[]`` when empty. `json_text` applies to each piece
    alone, since what it respells never crosses from one string of the document to the next."""
    sep = "[\n    "
    for items in chunks:
        yield json_text(sep + ",\n    ".join(pretty_json_at(x, "\n    ") for x in items))
        sep = ",\n    "
    yield "\n  ]" if sep != "[\n    " else "[]"
