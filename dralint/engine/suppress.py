"""Suppressions: comment directives, the object annotation, and unused-suppression tracking.

- ``# dralint: disable=DRA201,DRA302`` at the end of a line silences those rules on that line;
  alone on a line it silences them on the next line that holds YAML content.
- ``# dralint: disable-file=DRA201`` anywhere silences the rules for the whole file.
- ``metadata.annotations["dralint.io/ignore"]: "DRA201,DRA302"`` (or ``all``) silences them for
  the object; annotations survive ``helm template`` and ``kustomize build`` where comments do not.

Every form takes codes, prefixes (``DRA2``) or rule names (``legacy-gpu-extended-resource``); no
codes at all (``# dralint: disable``) means every rule, a *blanket* suppression that DRA010 (off by
default) reports. A reason after `` -- `` (``disable=DRA201 -- moved in Q3``) is kept and shown in
JSON and SARIF output as the suppression's justification.

Each directive remembers which of its codes suppressed something, so that unused ones can be
reported (DRA006).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dralint.inputs.load import SourceFile, text_find
from dralint.model import Finding, Span

ANNOTATION = "dralint.io/ignore"

_DIRECTIVE_RE = re.compile(r"#\s*dralint:\s*(disable-file|disable)(?![\w-])([^\n]*)")
#: what may follow ``disable``: nothing, ``=codes``, then optionally `` -- reason``
_REST_RE = re.compile(r"(?:\s*=\s*(?P<codes>[A-Za-z0-9_\-, ]*?))?\s*(?:(?<=\s)--\s*(?P<reason>.*?))?\s*(?:#.*)?")
#: the spelling of a code or prefix (anything else is a rule name)
_CODE_RE = re.compile(r"[A-Za-z]+[0-9]*")
#: what a directive without codes stands for
EVERYTHING = "ALL"


@dataclass
class Directive:
    kind: str  # "line" | "file" | "annotation"
    codes: tuple[str, ...]
    span: Span  # where the directive itself is written
    target_line: int = 0  # for "line"
    used: set[str] = field(default_factory=set)
    #: the text after `` -- ``, if any: why the finding is accepted
    reason: str | None = None
    #: no codes (or ``all``): every rule is silenced
    blanket: bool = False
    #: the rules this directive actually suppressed (what a blanket one should have named)
    hits: set[str] = field(default_factory=set)

    def covers(self, code: str) -> str | None:
        """The code in this directive that matches ``code`` (exact, prefix or 'all')."""
        for c in self.codes:
            if c == "ALL" or code == c or (c.startswith("DRA") and code.startswith(c)):
                return c
        return None


def _split_codes(text: str) -> tuple[str, ...]:
    """Codes and prefixes upper-cased, rule names turned into their codes; an empty list means every rule.

    An unknown name is kept as written, so that DRA006 reports it as an unknown rule."""
    from dralint.knowledge.catalog import by_name

    names = by_name()
    out: list[str] = []
    for c in (c.strip() for c in text.split(",")):
        if not c:
            continue
        if c.lower() in names:
            out.append(names[c.lower()].code)
        elif _CODE_RE.fullmatch(c):
            out.append(c.upper())
        else:
            out.append(c)
    return tuple(out) or (EVERYTHING,)


def split_reason(text: str) -> tuple[str, str | None]:
    """``"DRA201 -- why"`` -> ``("DRA201", "why")``: the codes and the reason (None when there is none)."""
    codes, sep, reason = text.partition(" -- ")
    if not sep and text.strip().startswith("--"):  # no codes, only a reason
        codes, reason, sep = "", text.strip()[2:], "--"
    return codes, (reason.strip() or None) if sep else None


def parse_directives(sf: SourceFile) -> list[Directive]:
    if text_find(sf.text, "dralint:") == -1:
        return []
    out: list[Directive] = []
    starts = sf.line_starts()
    lines = sf.text.split("\n")
    for m in _DIRECTIVE_RE.finditer(sf.text):
        line, col = sf.line_col(m.start())
        before = sf.text[starts[line - 1] : m.start()]
        if before.strip() and not _hash_is_comment(before):
            continue  # the text of a scalar, not a comment
        rest = _REST_RE.fullmatch(m.group(2).rstrip("\r"))
        if rest is None:
            continue  # `# dralint: disable DRA201` and other spellings that are not a directive
        kind = "file" if m.group(1) == "disable-file" else "line"
        span = Span(line, col, line, col + len(m.group(0).rstrip()))
        codes = _split_codes(rest.group("codes") or "")
        reason = (rest.group("reason") or "").strip() or None
        d = Directive(kind, codes, span, reason=reason, blanket=codes == (EVERYTHING,))
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
                    d.hits.add(f.rule)
                    hit = _note(f, d, hit)
        if annotation is not None:
            c = annotation.covers(f.rule)
            if c is not None:
                annotation.used.add(c)
                annotation.hits.add(f.rule)
                hit = _note(f, annotation, hit)
        return hit


def _note(f: Finding, d: Directive, already: bool) -> bool:
    """Record on the finding the first directive that suppressed it (what JSON and SARIF show)."""
    if not already:
        f.extra["suppression"] = {"kind": d.kind, "line": d.span.line, "justification": d.reason}
    return True


def annotation_directive(value: object, span: Span) -> Directive | None:
    if not isinstance(value, str):
        return None
    text, reason = split_reason(value)
    # an empty value silences nothing: a chart that renders `{{ .Values.ignore | quote }}` as "" must
    # not switch every rule off; `all` is the spelling for that
    codes = _split_codes(text) if text.strip() else ()
    return Directive("annotation", codes, span, reason=reason, blanket=codes == (EVERYTHING,))
