"""SARIF 2.1.0, the format GitHub code scanning (``github/codeql-action/upload-sarif``) reads.

One run; the driver lists every rule selected for the run (plus any rule that produced a finding),
so the code-scanning UI can show the rule help even for rules that found nothing this time.
Locations are relative URIs against the ``SRCROOT`` base (the working directory), which is what
code scanning resolves against the checkout. ``partialFingerprints`` hash what identifies a
finding independently of line numbers (rule, file, object identity, path inside the object), so
an alert survives edits above it and is closed only when the problem goes away.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from dralint import __version__
from dralint.engine.runner import Result
from dralint.knowledge.catalog import RuleMeta, catalog
from dralint.model import Applicability, Finding, Severity
from dralint.report import ReportOptions
from dralint.report.escaping import json_text, pretty_json

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
PROJECT_URI = "https://github.com/dralint/dralint"
#: generated rule pages (`dralint explain CODE` rendered to docs/rules/<CODE>.md) on the main branch
DOCS_URI = PROJECT_URI + "/blob/main/docs/rules/{code}.md"
BASE_ID = "SRCROOT"
FINGERPRINT_KEY = "dralint/v1"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def help_uri(code: str) -> str:
    return DOCS_URI.format(code=code)


def level(severity: Severity) -> str:
    return _LEVEL[severity]


def artifact_location(path: str, root: Path) -> dict[str, str]:
    """A relative URI with ``uriBaseId`` when the file is under ``root``, else an absolute file URI."""
    p = Path(path)
    if p.is_absolute():
        try:
            rel = p.resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            return {"uri": p.as_uri()}
    else:
        rel = PurePosixPath(p.as_posix()).as_posix()
        if rel.startswith("../"):
            try:
                return {"uri": p.resolve().as_uri()}
            except (ValueError, OSError):
                pass
    return {"uri": quote(rel, safe="/"), "uriBaseId": BASE_ID}


def _one_paragraph(text: str) -> str:
    """Rule prose is wrapped at 100 columns in rule.yaml; join it back (keeping hyphenated words whole)."""
    out = ""
    for line in text.splitlines():
        line = line.strip()
        if not line:
            out = out.rstrip() + " "
            continue
        out += line if out.endswith("-") or not out else " " + line
    return " ".join(out.split())


def _descriptor(meta: RuleMeta, configured: Severity) -> dict[str, Any]:
    full = meta.why or meta.summary
    help_md = f"{meta.summary}\n\n{meta.why}".strip() + f"\n\n[Rule documentation]({help_uri(meta.code)})"
    props: dict[str, Any] = {"tags": [t for t in ("dra", meta.category) if t]}
    if meta.fixable:
        props["fix"] = {"availability": meta.fix_availability,
                        "applicability": str(meta.fix_applicability) if meta.fix_applicability else None}
    return {
        "id": meta.code,
        "name": meta.name,
        "shortDescription": {"text": meta.summary},
        "fullDescription": {"text": _one_paragraph(full)},
        "helpUri": help_uri(meta.code),
        "help": {"text": f"{meta.summary} See {help_uri(meta.code)}", "markdown": help_md},
        "defaultConfiguration": {"level": level(configured)},
        "properties": props,
    }


_DIGITS = re.compile(r"\d+")


def fingerprint(f: Finding) -> str:
    """Stable across commits: no line or column numbers go in."""
    if f.object is not None:
        o = f.object
        key: list[Any] = [f.rule, f.path, o.kind, o.namespace, o.name, [*f.base_path, *f.obj_path]]
    else:
        # file-level findings (syntax, limits): the message without the numbers in it
        key = [f.rule, f.path, _DIGITS.sub("#", f.message)]
    return hashlib.sha256(json.dumps(key, default=str).encode("utf-8")).hexdigest()


def _result(f: Finding, index: int, root: Path, fp: str) -> dict[str, Any]:
    s = f.span
    region: dict[str, int] = {"startLine": max(s.line, 1), "startColumn": max(s.column, 1)}
    end_line = max(s.end_line, region["startLine"])
    region["endLine"] = end_line
    end_col = max(s.end_column, 1)
    if end_line == region["startLine"]:
        end_col = max(end_col, region["startColumn"])
    region["endColumn"] = end_col
    loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": artifact_location(f.path, root), "region": region}}
    props: dict[str, Any] = {"severity": str(f.severity)}
    if f.object is not None:
        o = f.object
        props["object"] = o.as_json()
        loc["logicalLocations"] = [{
            "name": o.name or "",
            "fullyQualifiedName": "/".join(x for x in (o.namespace, o.kind, o.name) if x),
            "kind": "object",
        }]
    if f.source:
        props["source"] = f.source
    rendered = f.extra.get("rendered")
    if isinstance(rendered, dict):  # the position inside `helm template`/`kustomize build` output
        props["renderedLocation"] = rendered
    if f.fix is not None:
        props["fix"] = {"title": f.fix.title,
                        "safety": "safe" if f.fix.applicability == Applicability.SAFE else "unsafe"}
    return {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": level(f.severity),
        "message": {"text": f.message},
        "locations": [loc],
        "partialFingerprints": {FINGERPRINT_KEY: fp},
        "properties": props,
    }


def _suppressed_result(f: Finding, index: int, root: Path) -> dict[str, Any]:
    """A finding silenced in the file: code scanning shows it as dismissed, with the reason."""
    out = _result(f, index, root, fingerprint(f))
    how = f.extra.get("suppression") or {}
    suppression: dict[str, Any] = {"kind": "inSource", "status": "accepted"}
    if how.get("justification"):
        suppression["justification"] = how["justification"]
    out["suppressions"] = [suppression]
    return out


def build(result: Result, root: Path | None = None) -> dict[str, Any]:
    root = root or Path.cwd()
    cfg = result.config
    metas: dict[str, RuleMeta] = dict(result.selected)
    cat = catalog()
    for f in result.findings:
        if f.rule not in metas and f.rule in cat:
            metas[f.rule] = cat[f.rule]
    codes = sorted(metas)
    rules = [_descriptor(metas[c], cfg.severity_for(metas[c])) for c in codes]
    index = {c: i for i, c in enumerate(codes)}
    results = []
    seen: dict[str, int] = {}
    for f in result.findings:
        fp = fingerprint(f)
        n = seen.get(fp, 0)
        seen[fp] = n + 1
        if n:  # the same problem twice in one object: keep both alerts apart, still line-independent
            fp = f"{fp}:{n}"
        results.append(_result(f, index.get(f.rule, -1), root, fp))
    for f in result.suppressions:
        results.append(_suppressed_result(f, index.get(f.rule, -1), root))
    notes: list[dict[str, Any]] = [
        {"level": "error", "message": {"text": f"rule {e.rule} crashed while checking {e.path}: {e.detail}"},
         "associatedRule": {"id": e.rule}}
        for e in result.internal_errors
    ]
    notes += [{"level": "error", "message": {"text": f"{m}: no such file or directory"}} for m in result.missing]
    base_uri = root.resolve().as_uri().rstrip("/") + "/"
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "dralint",
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": PROJECT_URI,
            "rules": rules,
        }},
        "originalUriBaseIds": {BASE_ID: {"uri": base_uri}},
        "invocations": [{
            "executionSuccessful": not result.internal_errors and not result.missing,
            "toolExecutionNotifications": notes,
            "workingDirectory": {"uri": base_uri},
        }],
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {"kubernetesVersion": cfg.profile.kubernetes_version},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(result: Result, opts: ReportOptions) -> str:
    # the exact text, spelt so that printing the log in a terminal or a CI job is safe too
    return json_text(pretty_json(build(result, Path(os.getcwd())))) + "\n"
