"""A Markdown summary for ``$GITHUB_STEP_SUMMARY`` (or a PR comment).

Messages quote manifest text (object names, keys, values), so none of it may become Markdown or
HTML: a name like ``x|y`` would split a table cell, ``<img src=…>`` or ``[a](…)`` would render,
and a stray backtick would swallow the rest of the row. Every character Markdown gives meaning to
is backslash-escaped (CommonMark allows it for all ASCII punctuation), ``<``/``>``/``&`` become
entities, and the code spans dralint itself writes (text between backticks) are emitted as
``<code>`` elements around escaped text.
"""

from __future__ import annotations

from collections import Counter

from dralint.engine.runner import Result
from dralint.model import Finding, Severity
from dralint.report import ReportOptions
from dralint.report.sarif import help_uri

#: the most rows a summary shows; GitHub caps a step summary at 1 MiB
MAX_ROWS = 500

_ICON = {Severity.ERROR: ":x:", Severity.WARNING: ":warning:", Severity.INFO: ":information_source:"}
_PUNCT = set("\\`*_[]#!|~^@$:")
_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def escape(text: str) -> str:
    """Plain text that renders literally inside a table cell (one line, nothing active)."""
    out = []
    for ch in text:
        if ch in _ENTITY:
            out.append(_ENTITY[ch])
        elif ch in _PUNCT:
            out.append("\\" + ch)
        elif ch in "\r\n\t" or ord(ch) < 32 or 127 <= ord(ch) <= 159:  # C0, DEL, C1
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def message(text: str) -> str:
    """A dralint message with its `code spans` kept as <code>, everything else escaped."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick (it came from a manifest): no code spans at all
        return escape(text)
    return "".join(f"<code>{escape(p)}</code>" if i % 2 else escape(p) for i, p in enumerate(parts))


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 or word == 'info' else 's'}"


def _row(f: Finding) -> str:
    loc = f"<code>{escape(f.path)}:{f.span.line}:{f.span.column}</code>"
    if f.source:
        loc += f"<br>template <code>{escape(f.source)}</code>"
    what = escape(f.object.label()) if f.object else ""
    fix = " [\\*]" if f.fix is not None else ""
    return (f"| {_ICON[f.severity]} {f.severity} | [{f.rule}]({help_uri(f.rule)}) | {loc} | {what} "
            f"| {message(f.message)}{fix} |")


def render(result: Result, opts: ReportOptions) -> str:
    counts = result.counts()
    n = len(result.findings)
    files = len(result.files)
    k8s = result.config.profile.kubernetes_version
    out = ["## dralint", ""]
    if n == 0:
        out.append(f":white_check_mark: All checks passed ({_count(files, 'file')}, Kubernetes {k8s}).")
    else:
        parts = [_count(counts[s], str(s)) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s]]
        out.append(f"Found {_count(n, 'finding')} ({', '.join(parts)}) in {_count(files, 'file')} "
                   f"(Kubernetes {k8s}).")
        out += ["", "| Rule | Name | Findings | Fixable |", "|---|---|---:|---:|"]
        by_rule = Counter(f.rule for f in result.findings)
        fixable = Counter(f.rule for f in result.findings if f.fix is not None)
        names = {f.rule: f.name for f in result.findings}
        for code, k in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"| [{code}]({help_uri(code)}) | {escape(names[code])} | {k} | {fixable[code]} |")
        out += ["", "<details open><summary>Findings</summary>", "",
                "| Severity | Rule | Location | Object | Message |", "|---|---|---|---|---|"]
        out += [_row(f) for f in result.findings[:MAX_ROWS]]
        if n > MAX_ROWS:
            out += ["", f"… and {n - MAX_ROWS} more (see the job log or the SARIF upload)."]
        out += ["", "</details>"]
    for e in result.internal_errors:
        out += ["", f":boom: internal error in rule {e.rule} while checking <code>{escape(e.path)}</code>: "
                    f"{escape(e.detail)} (this is a bug; please report it)"]
    return "\n".join(out) + "\n"
