"""Exact template positions for rendered Helm output, through an instrumented copy of the chart.

Before rendering, each line of each template (and of each ``_*.tpl`` partial) in the COPY of the
chart gets a marker appended: ``#@dralint-<nonce>:<file number>:<line>``. Helm copies literal text
through, so every rendered line ends with the marker of the template line that produced it; an
``include``d define carries the markers of its own lines in ``_helpers.tpl``, whatever ``nindent``
did to the indentation. After rendering, `strip` removes every marker and keeps, per rendered line,
the origin it carried. Lines without a marker are text produced by one action spread over several
lines (``toYaml .Values.x | nindent 8``): they belong to the next marker, the template line that
emitted them, and that position is reported as "from values `x`".

What is left alone, because a marker there would change what the template computes:
- a line whose end lies inside an action (``{{ if and`` continued on the next line) or a template
  comment: text there would be part of the action;
- in partials, a line that is not YAML structure (the bodies of name helpers, used with
  ``trunc 63``; a helper printing an API version that a template compares): only ``key:`` and
  ``- item`` lines are marked there;
- and the plain render is what is linted: a document whose marked render (markers stripped)
  differs from it gets no positions from markers (`dralint.inputs.render` compares them).
- ``.tpl``/template files other than YAML-like text are treated the same way: the marker is a YAML
  comment and is stripped before anything parses the output.

The nonce is random per render, so a chart cannot forge a marker pointing elsewhere. A chart that
fails to render instrumented is rendered again plainly by the caller (positions then fall back to
matching keys).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

#: the template files that are instrumented (Helm renders every file under templates/)
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl", ".txt", "")
_ACTION = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)")


@dataclass(frozen=True)
class Origin:
    """Where a rendered line came from: a file of the chart (relative to the chart) and its line."""

    file: str
    line: int


@dataclass
class Instrumented:
    nonce: str
    #: file number -> path relative to the chart directory ("templates/deployment.yaml")
    files: list[str] = field(default_factory=list)
    #: path relative to the chart -> the original lines of that template
    lines: dict[str, list[str]] = field(default_factory=dict)

    @property
    def pattern(self) -> re.Pattern[str]:
        # the one space `instrument` puts before a marker (a `-}}` may have trimmed it)
        return re.compile(rf" ?#@dralint-{self.nonce}:(\d+):(\d+)")


def _line_end_states(text: str) -> list[bool]:
    """For each line, True when its end lies outside any ``{{ … }}`` action (so text can follow)."""
    states: list[bool] = []
    inside = False
    i = 0
    n = len(text)
    while i < n:
        if not inside and text.startswith("{{", i):
            inside = True
            i += 2
            continue
        if inside and text.startswith("}}", i):
            inside = False
            i += 2
            continue
        if text[i] == "\n":
            states.append(not inside)
        i += 1
    if not text.endswith("\n"):
        states.append(not inside)
    return states


_YAML_LINE = re.compile(r"^\s*(?:-\s+\S|-$|[^\s:#][^:]*:(?:\s|$))")


def _has_literal(line: str) -> bool:
    """A partial's line worth a marker: YAML structure (``key:`` or ``- item``) in its literal text.

    A bare scalar line (``resource.k8s.io/v1`` in a helper whose output a template compares with
    ``eq``) is left alone: a marker there would change the value."""
    return bool(_YAML_LINE.match(_ACTION.sub("", line)))


def instrument(chart_copy: Path) -> Instrumented:
    """Add markers to the templates of a copied chart (its own ``templates/`` only, not sub-charts)."""
    inst = Instrumented(nonce=secrets.token_hex(6))
    templates = chart_copy / "templates"
    if not templates.is_dir():
        return inst
    for path in sorted(p for p in templates.rglob("*") if p.is_file() and not p.is_symlink()):
        if path.name == "NOTES.txt" or path.suffix.lower() not in _TEMPLATE_SUFFIXES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        rel = path.relative_to(chart_copy).as_posix()
        number = len(inst.files)
        inst.files.append(rel)
        lines = text.split("\n")
        inst.lines[rel] = lines
        partial = path.name.startswith("_")
        ends = _line_end_states(text)
        out: list[str] = []
        for i, line in enumerate(lines):
            last = i == len(lines) - 1 and line == ""
            ok = not last and i < len(ends) and ends[i] and "{{/*" not in line and "*/}}" not in line
            if ok and partial and not _has_literal(line):
                ok = False
            if ok and not line.strip():
                ok = False  # an empty line emits nothing worth pointing at
            out.append(f"{line} #@dralint-{inst.nonce}:{number}:{i + 1}" if ok else line)
        path.write_text("\n".join(out), encoding="utf-8")
    return inst


def strip(text: str, inst: Instrumented) -> tuple[str, list[tuple[Origin, bool] | None]]:
    """The rendered text without markers, and per line (origin, exact) or None.

    ``exact`` is False for a line that carried no marker of its own and takes the next one's (text
    an action produced over several lines)."""
    pat = inst.pattern
    lines = text.split("\n")
    clean: list[str] = []
    origins: list[tuple[Origin, bool] | None] = []
    for line in lines:
        m = pat.search(line)
        origin: tuple[Origin, bool] | None = None
        if m:
            number, ln = int(m.group(1)), int(m.group(2))
            if 0 <= number < len(inst.files):
                origin = (Origin(inst.files[number], ln), True)
        clean.append(pat.sub("", line))
        origins.append(origin)
    # unmarked lines take the next marker: the template line whose action printed them
    nxt: tuple[Origin, bool] | None = None
    for i in range(len(origins) - 1, -1, -1):
        here = origins[i]
        if here is not None:
            nxt = here
        elif clean[i].strip() and nxt is not None:
            origins[i] = (nxt[0], False)
    return "\n".join(clean), origins


def values_path(template_line: str) -> str | None:
    """The values key a template line prints (``toYaml .Values.resources`` -> ``resources``)."""
    m = _VALUES_REF.search(template_line)
    return m.group(1)[1:] if m else None


def column_of(template_line: str, key: str | None, value: str | None = None) -> int | None:
    """1-based column of ``key:`` (or of ``value``) in the literal text of a template line."""
    literal = _ACTION.sub(lambda m: " " * len(m.group(0)), template_line)
    if key:
        m = re.search(rf"(?:^|[\s{{,\-])[\"']?({re.escape(key)})[\"']?\s*:", literal)
        if m:
            return m.start(1) + 1
    if value:
        k = literal.find(value)
        if k >= 0:
            return k + 1
    return None


_HAS_RESOURCE = re.compile(r"\$?\.Capabilities\.APIVersions\.Has\s+\"(resource\.k8s\.io/[A-Za-z0-9]+(?:/[A-Za-z]+)?)\"")


def pin_capabilities(chart_copy: Path, served: set[str]) -> int:
    """Answer ``.Capabilities.APIVersions.Has "resource.k8s.io/…"`` from the target cluster, in the copy.

    Offline Helm always lists its own built-in API versions (``--api-versions`` only adds to
    them), so a chart that picks the newest resource.k8s.io version it is offered would render
    ``v1`` for a 1.33 cluster that does not serve it. For this one API group, which the cluster
    profile knows version by version, the test is replaced by its answer. Returns the number of
    tests replaced (sub-charts under ``charts/`` as directories are included)."""
    count = 0
    for path in sorted(p for p in chart_copy.rglob("*") if p.is_file() and not p.is_symlink()):
        if "templates" not in path.relative_to(chart_copy).parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new, n = _HAS_RESOURCE.subn(lambda m: "true" if m.group(1) in served else "false", text)
        if n:
            path.write_text(new, encoding="utf-8")
            count += n
    return count
