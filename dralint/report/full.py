"""``--output-format full``: each finding with the source line it points at, a caret under the
column, and the title of its fix, the way ruff shows findings by default.

The source line is input text: it goes through `escaping.visible` like every other piece of input
(tabs are kept so that the caret lines up under them) and the report through `escaping.log_guard`.
Only target files of the run are quoted, from the text already read; nothing is read again.
"""

from __future__ import annotations

from dralint.engine.runner import Result
from dralint.model import Applicability, Finding
from dralint.report import ReportOptions
from dralint.report.escaping import log_guard, visible
from dralint.report.text import _c, line, summary

#: longest stretch of a source line quoted: a minified JSON file is one very long line
MAX_QUOTE = 200


def _texts(result: Result) -> dict[str, str]:
    """The text of every file a finding quotes (only those: a file whose findings came from the
    results cache is parsed again when its text is asked for)."""
    quoted = {f.path for f in result.findings}
    out: dict[str, str] = {}
    for sf in result.files:
        if sf.path not in quoted:
            continue
        text = sf.text or (sf.raw.decode("utf-8", "replace") if sf.raw else "")
        out[sf.path] = text
    return out


def _source_line(text: str, number: int) -> str | None:
    lines = text.split("\n")
    if not 1 <= number <= len(lines):
        return None
    return lines[number - 1].rstrip("\r")


def _caret(source: str, column: int, width: int) -> tuple[str, str]:
    """The quoted part of the line and the caret line under it (tabs copied so that they align)."""
    start = max(0, column - 1)
    lo = max(0, start - MAX_QUOTE // 2) if len(source) > MAX_QUOTE else 0
    quoted = source[lo: lo + MAX_QUOTE]
    prefix = "…" if lo else ""
    pad = "".join(ch if ch == "\t" else " " for ch in quoted[: start - lo])
    width = max(1, min(width, len(quoted) - (start - lo))) if start - lo < len(quoted) else 1
    return prefix + visible(quoted), " " * len(prefix) + pad + "^" * width


def block(f: Finding, text: str | None, opts: ReportOptions) -> list[str]:
    out = [line(f, opts)]
    src = _source_line(text, f.span.line) if text is not None else None
    if src is not None:
        width = f.span.end_column - f.span.column if f.span.end_line == f.span.line else len(src) - f.span.column + 1
        quoted, caret = _caret(src, f.span.column, width)
        gutter = str(f.span.line)
        blank = " " * len(gutter)
        out += [f"{blank} |", f"{gutter} | {quoted}", f"{blank} | {_c(caret, '31', opts.color)}"]
    if f.fix is not None:
        safety = "safe" if f.fix.applicability == Applicability.SAFE else "unsafe"
        out.append(f"  = fix ({safety}): {visible(f.fix.title)}")
    return out


def render(result: Result, opts: ReportOptions) -> str:
    texts = _texts(result)
    out: list[str] = []
    for f in result.findings:
        out += block(f, texts.get(f.path), opts)
        out.append("")
    if not opts.quiet:
        out.append(summary(result, opts))
    return log_guard("".join(x + "\n" for x in out))
