"""Rule documentation rendered from the ``rules/`` folders (the same files the tests run)."""

from __future__ import annotations

import json
from typing import Any

from dralint.knowledge.catalog import RuleMeta, catalog

_FIX_LINE = {
    "none": "Fix is not available.",
    "sometimes": "Fix is sometimes available.",
    "always": "Fix is always available.",
}


def rule_markdown(meta: RuleMeta) -> str:
    ex = meta.examples()
    out = [f"# {meta.code} {meta.name}", ""]
    out += [f"**Severity:** {meta.severity} · **Category:** {meta.category or '-'} · "
            f"**Enabled by default:** {'yes' if meta.enabled_by_default else 'no'}", ""]
    fix = _FIX_LINE.get(meta.fix_availability, "")
    if meta.fix_applicability is not None:
        fix += f" Applicability: {meta.fix_applicability}."
    out += [fix, "", "## What it does", "", meta.summary, ""]
    if meta.why:
        out += ["## Why is this bad?", "", meta.why, ""]
    for name, text in ex.items():
        if name.startswith("bad") and not name.endswith(".fixed.yaml"):
            out += [f"## Example (`{name}`)", "", "```yaml", text.rstrip("\n"), "```", ""]
    for name, text in ex.items():
        if name.startswith("good") or name.endswith(".fixed.yaml"):
            out += [f"## Use instead (`{name}`)", "", "```yaml", text.rstrip("\n"), "```", ""]
    if meta.fix_safety:
        out += ["## Fix safety", "", meta.fix_safety, ""]
    props = (meta.options or {}).get("properties", {})
    if props:
        out += ["## Options", ""]
        for k, v in props.items():
            desc = v.get("description", "")
            default = json.dumps(v.get("default")) if "default" in v else "-"
            out.append(f"- `{k}` (default `{default}`): {desc}")
        out.append("")
    if meta.references:
        out += ["## References", ""] + [f"- {r}" for r in meta.references] + [""]
    return "\n".join(out)


def rules_table(metas: list[RuleMeta]) -> str:
    rows = ["| Code | Name | Severity | Fix | Default | Summary |", "|---|---|---|---|---|---|"]
    for m in metas:
        fix = str(m.fix_applicability) if m.fix_applicability is not None else "-"
        summary = m.summary.replace("|", "\\|").replace("\n", " ")
        default = "on" if m.enabled_by_default else "off"
        rows.append(f"| {m.code} | {m.name} | {m.severity} | {fix} | {default} | {summary} |")
    return "\n".join(rows) + "\n"


def rules_json(metas: list[RuleMeta]) -> list[dict[str, Any]]:
    return [
        {
            "code": m.code,
            "name": m.name,
            "severity": str(m.severity),
            "category": m.category,
            "enabled_by_default": m.enabled_by_default,
            "summary": m.summary,
            "fix": {"availability": m.fix_availability,
                    "applicability": str(m.fix_applicability) if m.fix_applicability is not None else None},
            "options": m.options,
            "references": list(m.references),
        }
        for m in metas
    ]


def all_rules() -> list[RuleMeta]:
    return list(catalog().values())
