"""Escaping for the channels dralint writes text to that it did not write itself.

Manifests, file names, configuration values and renderer messages reach the output; none of it may
act on the terminal or the CI log that shows it:

- a terminal runs control characters: ESC starts colour, cursor and title sequences (OSC 8 makes
  a hidden link), ``\\r`` returns to the start of the line and overprints it, and the C1 range
  (``\\x80``-``\\x9f``) holds one-byte forms of the same sequences. `visible` shows every one of them
  as a backslash escape instead (a tab is harmless and kept).
- the GitHub Actions runner reads its log line by line and takes a line that starts with ``::``
  (after any white space) as a workflow command, and ``##[name]`` *anywhere* in a line as the older
  form of one (``##[error]``, ``##[stop-commands]``, ``##[add-mask]``, …). Inside Actions,
  `log_guard` breaks both in every line dralint prints that is not one of its own annotations.
  The runner compares with .NET's culture-aware string functions, which skip zero-width and other
  invisible characters, so "white space" here means anything that does not print.
- machine formats (JSON, XML) keep their exact values; only the way a character is spelt changes,
  see `json_text`.

``::stop-commands::`` is not used: dralint's own annotations must stay live, and stdout and stderr
reach the runner through separate pipes, so a pause sent on one could swallow annotations on the
other.
"""

from __future__ import annotations

import json
import json.encoder
import os
import re
from typing import Any

import click

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0, DEL, C1
_SHORT = {"\n": "\\n", "\r": "\\r"}
_LINE_BREAK = re.compile("(\r\n|\r|\n)")  # what the runner splits its log on
_JSON_CONTROL = re.compile("[\x7f-\x9f]")  # json.dumps escapes C0 itself, but not DEL or C1


def visible(text: str, keep: str = "\t") -> str:
    """Plain text with every control character but those in ``keep`` shown as an escape, e.g. ``\\x1b``.

    With the default, the result is one line.
    """

    def sub(m: re.Match[str]) -> str:
        ch = m.group()
        return ch if ch in keep else _SHORT.get(ch, f"\\x{ord(ch):02x}")

    return _CONTROL.sub(sub, text)


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _invisible(ch: str) -> bool:
    return ch.isspace() or not ch.isprintable()


# two `#` and a `[` with nothing between them but characters that are neither `#`, `[` nor a word
# character; `break_legacy_commands` then keeps only the matches whose gaps are invisible
_LEGACY = re.compile(r"#([^\w#\[]*)#([^\w#\[]*)\[")


def break_legacy_commands(text: str, bracket: str) -> str:
    """Spell the ``[`` of every ``##[`` (invisible characters between them count as nothing) as ``bracket``."""

    def sub(m: re.Match[str]) -> str:
        if all(_invisible(c) for c in m.group(1) + m.group(2)):
            return m.group()[:-1] + bracket
        return m.group()

    return _LEGACY.sub(sub, text)


def command_free(line: str) -> str:
    """One log line the Actions runner cannot read as a workflow command (in either syntax)."""
    line = break_legacy_commands(line, "\\x5b")
    i = line.find("::")
    if i >= 0 and all(_invisible(c) for c in line[:i]):
        line = f"{line[:i]}\\x3a{line[i + 1:]}"
    return line


def log_guard(text: str) -> str:
    """Inside GitHub Actions, make sure no line of ``text`` is a workflow command; elsewhere a no-op."""
    if not in_github_actions():
        return text
    parts = _LINE_BREAK.split(text)
    parts[::2] = [command_free(p) for p in parts[::2]]
    return "".join(parts)


def terminal(text: str) -> str:
    """Multi-line text for a terminal or log: its line breaks kept, every other control escaped, guarded."""
    return log_guard(visible(text, keep="\t\n"))


def json_text(text: str) -> str:
    """A JSON document safe to print: DEL and C1 controls and ``##[`` spelt as ``\\u`` escapes (same value).

    Outside strings JSON has no such characters and no ``#``, so every replacement is inside a string.
    """
    text = _JSON_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return break_legacy_commands(text, "\\u005b")


def echo_err(message: str) -> None:
    """Print one of dralint's messages on stderr (the only way they get there)."""
    click.echo(terminal(message), err=True)


def pretty_json(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, the same text, about three times faster.

    The standard library switches to its pure-Python encoder whenever ``indent`` is set, which made
    the JSON and SARIF reports of a large run cost more than a warm check itself. This walks the
    value once and leaves every string to the C escaper; anything but plain JSON types (a non-string
    key, a subclass) goes to ``json.dumps`` so the text never differs (tests/test_formats.py)."""
    return pretty_json_at(value, "\n")


def pretty_json_at(value: Any, nl: str) -> str:
    """`pretty_json` of a value that sits at indentation ``nl`` (``"\\n"`` plus its spaces) in a
    larger document, so that a long list can be written item by item."""
    out: list[str] = []
    try:
        _pretty(value, nl, out)
    except _Unusual:  # JSON text has no raw line breaks: each one is a place to indent
        return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", nl)
    return "".join(out)


class _Unusual(Exception):
    pass


_ESCAPE = json.encoder.encode_basestring
_FLOAT = float.__repr__


def _pretty(v: Any, nl: str, out: list[str]) -> None:
    t = type(v)
    if t is str:
        out.append(_ESCAPE(v))
    elif t is dict:
        if not v:
            out.append("{}")
            return
        inner = nl + "  "
        sep = "{" + inner
        for k, x in v.items():
            if type(k) is not str:
                raise _Unusual
            out.append(sep)
            out.append(_ESCAPE(k))
            out.append(": ")
            _pretty(x, inner, out)
            sep = "," + inner
        out.append(nl + "}")
    elif t is list or t is tuple:
        if not v:
            out.append("[]")
            return
        inner = nl + "  "
        sep = "[" + inner
        for x in v:
            out.append(sep)
            _pretty(x, inner, out)
            sep = "," + inner
        out.append(nl + "]")
    elif v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif t is int:
        out.append(int.__repr__(v))
    elif t is float and v == v and v not in (float("inf"), float("-inf")):
        out.append(_FLOAT(v))
    else:
        raise _Unusual
