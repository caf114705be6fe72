"""Suppressions: comment directives, the object annotation, and unused-suppression tracking.

- ``# dralint: disable=DRA201,DRA302`` at the end of a line silences those rules on that line;
  alone on a line it silences them on the next line that holds YAML content.
- ``# dralint: disable-file=DRA201`` anywhere silences the rules for the whole file.
- ``metadata.annotations["dralint.io/ignore"]: "DRA201,DRA302"`` (or ``all``) silences them for
  the object; annotations survive ``helm template`` and ``kustomize build`` where comments do not.

Each directive remembers which of its codes suppressed something, so that unused ones can be
reported (DRA006).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dralint.inputs.load import SourceFile
from dralint.model import Finding, Span

ANNOTATION = "dralint.io/ignore"

_DIRECTIVE_RE = re.compile(r"#\s*dralint:\s*(disable-file|disable)\s*=\s*([A-Za-z0-9_\-, ]+)")


@dataclass
class Directive:
    kind: str  # "line" | "file" | "annotation"
    codes: tuple[str, ...]
    span: Span  # where the directive itself is written
    target_line: int = 0  # for "line"
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> str | None:
        """The code in this directive that matches ``code`` (exact, prefix or 'all')."""
        for c in self.codes:
            if c == "ALL" or code == c or (c.startswith("DRA") and code.startswith(c)):
                return c
        return None


def _split_codes(text: str) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


def parse_directives(sf: SourceFile) -> list[Directive]:
    if "dralint:" not in sf.text:
        return []
    out: list[Directive] = []
    starts = sf.line_starts()
    lines = sf.text.split("\n")
    for m in _DIRECTIVE_RE.finditer(sf.text):
        line, col = sf.line_col(m.start())
        before = sf.text[starts[line - 1] : m.start()]
        if before.strip() and not _hash_is_comment(before):
            continue  # the text of a scalar, not a comment
        kind = "file" if m.group(1) == "disable-file" else "line"
        span = Span(line, col, line, col + len(m.group(0)))
        d = Directive(kind, _split_codes(m.group(2)), span)
        if kind == "line":
            if before.strip():
                d.target_line = line
            else:
                d.target_line = _next_content_line(lines, line)
        out.append(d)
    return out


def _hash_is_comment(before: str) -> bool:
    """Whether a '#' after ``before`` (the start of its line) begins a YAML comment: it must follow
    whitespace, and not sit inside a quoted scalar opened earlier on the line (best effort: a
    quoted scalar continued from an earlier line is not seen)."""
    if not before[-1:].isspace():
        return False
    quote = ""
    prev = ""  # the last non-blank character outside quotes
    i = 0
    while i < len(before):
        c = before[i]
        if quote == '"':
            if c == "\\":
                i += 1  # an escaped character, perhaps a quote
            elif c == '"':
                quote = ""
        elif quote == "'":
            if c == "'" and before[i + 1 : i + 2] == "'":
                i += 1  # '' is a quote inside a single-quoted scalar
            elif c == "'":
                quote = ""
        elif c == "#" and (i == 0 or before[i - 1].isspace()):
            return True  # already inside an earlier comment
        elif c in "\"'" and prev in ("", ":", "-", "[", "{", ",", "?"):
            quote = c  # a quote opens a scalar only where a scalar can start (not in `it's`)
        if not c.isspace() and not quote:
            prev = c
        i += 1
    return not quote


def _next_content_line(lines: list[str], line: int) -> int:
    for i in range(line, len(lines)):  # lines is 0-based; ``line`` is the 1-based directive line
        s = lines[i].strip()
        if s and not s.startswith("#"):
            return i + 1
    return line + 1


@dataclass
class Suppressor:
    """Applies all suppressions of one file and remembers which were used."""

    directives: list[Directive]

    def suppressed(self, f: Finding, annotation: Directive | None) -> bool:
        hit = False
        for d in self.directives:
            if d.kind == "file" or (d.kind == "line" and d.target_line == f.span.line):
                c = d.covers(f.rule)
                if c is not None:
                    d.used.add(c)
                    hit = True
        if annotation is not None:
            c = annotation.covers(f.rule)
            if c is not None:
                annotation.used.add(c)
                hit = True
        return hit


def annotation_directive(value: object, span: Span) -> Directive | None:
    if not isinstance(value, str):
        return None
    return Directive("annotation", _split_codes(value), span)
