"""Findings on rendered output carry no fix: they say which file a person changes instead.

A chart's or overlay's rendered output exists only in memory, so a fix recorded against it has
nowhere to go (`dralint fix` never rewrites it). Such a finding loses its ``fix`` and its message
names what to change: the template line (and the values key when the text came from values) for a
chart, the patch for a field an overlay's patch set, or the base file, which `dralint fix` fixes
when given that file itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dralint.inputs.helm_positions import values_path
from dralint.model import Finding


def _values_on_line(path: object, line: object) -> str | None:
    """The values key a template line reads (``{{ .Values.x }}``), for a value substituted there."""
    if not isinstance(path, str) or not isinstance(line, int) or line < 1:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return values_path(lines[line - 1]) if line <= len(lines) else None


def name_what_to_change(findings: Iterable[Finding], rendered_paths: set[str]) -> None:
    """Clear the fix of every finding on rendered output and say where the change goes."""
    for f in findings:
        if f.fix is None:
            continue
        template = f.extra.get("template")
        patch = f.extra.get("patch")
        if isinstance(template, dict):
            values = f.extra.get("values") or _values_on_line(template.get("path"), template.get("line"))
            where = f"`{template.get('path')}` line {template.get('line')}"
            also = f" or the values key `{values}`" if values else ""
            f.message = f"{f.message}; not fixed in rendered output: change the template {where}{also}"
        elif isinstance(patch, dict):
            f.message = f"{f.message}; not fixed in built output: change the patch `{patch.get('path')}`"
        elif f.path in rendered_paths or f.source:
            f.message = (f"{f.message}; not fixed in rendered output: `dralint fix {f.path}` fixes it in "
                         "that file" if not f.source else
                         f"{f.message}; not fixed in rendered output: change the template `{f.source}`")
        else:
            continue
        f.fix = None
