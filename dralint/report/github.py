"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` line per finding.

The runner reads every stdout line that starts with ``::`` as a command, so anything that comes
from a manifest (object names, keys, file names) must never be able to end the line or start a
new command. The runner's own decoding rules are: in the message, ``%``, CR and LF are
percent-encoded; in the ``key=value`` properties, ``:`` and ``,`` are encoded as well because they
delimit the properties. Encoding ``%`` first makes every other escape unambiguous, so a manifest
that contains the literal text ``%0A::set-output`` is printed as ``%250A::set-output``. Other
control characters (ESC and the C1 range, which a log viewer or terminal may act on) are shown as
backslash escapes in the message, as in the text format; a property keeps its exact value (the
``file`` must name the real file).
"""

from __future__ import annotations

from dralint.engine.runner import Result
from dralint.model import Finding, Severity
from dralint.report import ReportOptions
from dralint.report.escaping import visible

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _percent(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_data(text: str) -> str:
    """Escape the message part of a workflow command (after the second ``::``)."""
    return _percent(visible(text, keep="\t\r\n"))


def escape_property(text: str) -> str:
    """Escape a property value (``file=…``, ``title=…``); the runner decodes it back exactly."""
    return _percent(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    s = f.span
    props = [("file", f.path), ("line", str(s.line)), ("col", str(s.column))]
    end_line = max(s.end_line, s.line)
    props.append(("endLine", str(end_line)))
    if end_line == s.line:
        # the span's end column is exclusive; annotations count the last character
        props.append(("endColumn", str(max(s.column, s.end_column - 1))))
    props.append(("title", f.rule))
    message = f"{f.message} ({f.name})"
    if f.source:
        message += f" [template {f.source}]"
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{_COMMAND[f.severity]} {head}::{escape_data(message)}"


def render(result: Result, opts: ReportOptions) -> str:
    lines = [annotation(f) for f in result.findings]
    for e in result.internal_errors:
        lines.append(
            f"::error file={escape_property(e.path)},title=dralint internal error::"
            + escape_data(f"rule {e.rule} crashed: {e.detail} (this is a bug; please report it)")
        )
    return "".join(line + "\n" for line in lines)
