"""ruff-like terminal output: ``path:line:col: DRA201 [warning] message [*]`` and a summary.

The path, message and template name come from the input: each is printed through
`escaping.visible` (one finding stays one line, no control character reaches the terminal) and
the whole report through `escaping.log_guard` (no line of it is a GitHub workflow command).
"""

from __future__ import annotations

from collections import Counter

from dralint.engine.runner import Result
from dralint.model import Applicability, Finding, Severity
from dralint.report import ReportOptions
from dralint.report.escaping import log_guard, visible

_COLORS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


def _c(text: str, code: str, on: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if on else text


def _fixable_now(f: Finding) -> bool:
    return f.fix is not None and f.fix.applicability == Applicability.SAFE and not f.source


def _fixable_unsafe(f: Finding) -> bool:
    """An unsafe fix `--unsafe-fixes` would apply: not display-only, and not in Helm-rendered output
    (those documents are never rewritten; the finding names the chart template instead)."""
    return f.fix is not None and f.fix.applicability == Applicability.UNSAFE and not f.source


def line(f: Finding, opts: ReportOptions) -> str:
    c = opts.color
    loc = f"{_c(visible(f.path), '1', c)}:{f.span.line}:{f.span.column}:"
    sev = _c(f"[{f.severity}]", _COLORS[f.severity], c)
    mark = f" {_c('[*]', '32', c)}" if opts.show_fixes and _fixable_now(f) else ""
    src = f" (template {visible(f.source)})" if f.source else ""
    return f"{loc} {_c(f.rule, '1;' + _COLORS[f.severity], c)} {sev} {visible(f.message)}{src}{mark}"


def render_concise(result: Result, opts: ReportOptions) -> str:
    return log_guard("".join(line(f, opts) + "\n" for f in result.findings))


def render(result: Result, opts: ReportOptions) -> str:
    if opts.statistics:  # as ruff: the table instead of the findings
        return log_guard("".join(row + "\n" for row in statistics(result)))
    out = [line(f, opts) for f in result.findings]
    if not opts.quiet:
        out.append(summary(result, opts))
    return log_guard("".join(x + "\n" for x in out))


def statistics(result: Result) -> list[str]:
    counts = Counter(f.rule for f in result.findings)
    fixable = Counter(f.rule for f in result.findings if _fixable_now(f))
    names = {f.rule: f.name for f in result.findings}
    rows = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        mark = "[*]" if fixable[code] else "   "
        rows.append(f"{n:>5}  {code}  {mark} {names[code]}")
    return rows


def _count(n: int, s: Severity) -> str:
    if s == Severity.INFO:
        return f"{n} info"
    return f"{n} {s}{'s' if n != 1 else ''}"


def summary(result: Result, opts: ReportOptions) -> str:
    counts = result.counts()
    n = len(result.findings)
    files = len(result.files)
    if n == 0:
        k8s = result.config.profile.kubernetes_version
        text = f"All checks passed ({files} file{'s' if files != 1 else ''}, Kubernetes {k8s})."
        return _c(text, "32", opts.color)
    parts = [_count(counts[s], s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s]]
    with_findings = len({f.path for f in result.findings})
    where = f"{files} file" if files == 1 and with_findings == 1 else f"{with_findings} of {files} files"
    text = f"Found {n} finding{'s' if n != 1 else ''} ({', '.join(parts)}) in {where}."
    safe = sum(1 for f in result.findings if _fixable_now(f))
    unsafe = 0 if opts.unsafe_fixes else sum(1 for f in result.findings if _fixable_unsafe(f))
    if safe:
        text += f"\n[*] {safe} fixable with `{opts.fix_command}`."
    if unsafe:
        text += f"\n{unsafe} more fixable with `{opts.fix_command} --unsafe-fixes`."
    return text
