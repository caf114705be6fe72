"""Where each character of a YAML string value sits in the file.

A CEL error has a column inside the expression; to point at the same character in the manifest
the scalar has to be read back the way YAML reads it: plain and quoted scalars fold line breaks
into spaces and drop indentation, ``''`` is one quote in single-quoted scalars, double-quoted
scalars have escapes (``\\n``, ``\\"``, ``\\u00e9``, escaped line breaks), and block scalars (``|``
keeps line breaks, ``>`` folds them) strip their indentation. The mapping is verified against the
value the parser produced; when it does not match (an exotic form), callers fall back to the
start of the value.
"""

from __future__ import annotations

from typing import Any

from dralint.inputs.load import LMap

_ESC = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
        "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
        "P": "\u2029"}
_HEX = {"x": 2, "u": 4, "U": 8}


def value_offsets(data: Any, key: str) -> tuple[int, int] | None:
    """Start and end character offsets of ``data[key]`` when ``data`` is a located mapping."""
    if not isinstance(data, LMap) or key not in data or not hasattr(data, "lc"):
        return None
    for i, k in enumerate(data):
        if k == key:
            lc = data.lc
            if len(lc) < i * 4 + 4:
                return None
            return lc[i * 4 + 2], lc[i * 4 + 3]
    return None  # pragma: no cover


def char_offsets(text: str, start: int, end: int, value: str) -> list[int] | None:
    """File offsets of every character of ``value`` plus one entry for the position just after it.

    ``text[start:end]`` is the scalar node as the YAML parser marked it. None when the scalar
    cannot be mapped exactly.
    """
    if not 0 <= start <= end <= len(text):
        return None
    i = _skip_properties(text, start, end)
    if i >= end and value == "":
        return [start]
    c = text[i] if i < len(text) else ""
    try:
        if c == '"':
            out = _double(text, i, end)
        elif c == "'":
            out = _single(text, i, end)
        elif c in "|>":
            out = _block(text, i, end, value)
        else:
            out = _plain(text, i, end)
    except (IndexError, ValueError):
        return None
    if out is None:
        return None
    chars, offs = out
    if "".join(chars) != value:
        return None
    tail = offs[-1] + 1 if offs else i
    return [*offs, tail]


def _skip_properties(text: str, i: int, end: int) -> int:
    """Skip an anchor (``&a``) and/or tag (``!!str``) before the scalar itself."""
    while i < end and text[i] in "&!":
        while i < end and text[i] not in " \t\r\n":
            i += 1
        while i < end and text[i] in " \t\r\n":
            i += 1
    return i


def _fold_lines(lines: list[tuple[list[str], list[int], int]]) -> tuple[list[str], list[int]]:
    """Join flow-scalar lines: one line break becomes a space, n breaks become n-1 newlines.

    Each line is (chars, offsets, offset of the line break that ends it).
    """
    chars: list[str] = []
    offs: list[int] = []
    pending: list[int] = []  # offsets of line breaks since the last non-empty line
    first = True
    for lchars, loffs, brk in lines:
        if not first and not lchars:
            pending.append(brk)
            continue
        if not first:
            if len(pending) == 1:
                chars.append(" ")
                offs.append(pending[0])
            else:
                for p in pending[1:]:
                    chars.append("\n")
                    offs.append(p)
            pending = []
        chars += lchars
        offs += loffs
        pending.append(brk)
        first = False
    return chars, offs


def _split_flow(text: str, start: int, stop: int) -> list[tuple[int, int, int]]:
    """Physical lines of text[start:stop]: (content start, content end without trailing blanks, break offset)."""
    out = []
    i = start
    while True:
        nl = text.find("\n", i, stop)
        e = stop if nl == -1 else nl
        ce = e
        while ce > i and text[ce - 1] in " \t\r":
            ce -= 1
        out.append((i, ce, e))
        if nl == -1:
            return out
        i = nl + 1
        while i < stop and text[i] in " \t":
            i += 1


def _plain(text: str, i: int, end: int) -> tuple[list[str], list[int]] | None:
    stop = end
    while stop > i and text[stop - 1] in " \t\r\n":
        stop -= 1
    lines = []
    for s, e, brk in _split_flow(text, i, stop):
        lines.append((list(text[s:e]), list(range(s, e)), brk))
    return _fold_lines(lines)


def _single(text: str, q: int, end: int) -> tuple[list[str], list[int]] | None:
    close = q + 1
    while True:
        close = text.index("'", close)
        if text.startswith("''", close):
            close += 2
            continue
        break
    lines = []
    for s, e, brk in _split_flow(text, q + 1, close):
        chars: list[str] = []
        offs: list[int] = []
        j = s
        while j < e:
            if text.startswith("''", j):
                chars.append("'")
                offs.append(j)
                j += 2
                continue
            chars.append(text[j])
            offs.append(j)
            j += 1
        lines.append((chars, offs, brk))
    return _fold_lines(lines)


def _double(text: str, q: int, end: int) -> tuple[list[str], list[int]] | None:
    # find the closing quote (not escaped)
    j = q + 1
    while True:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == '"':
            break
        j += 1
    close = j
    chars: list[str] = []
    offs: list[int] = []
    j = q + 1
    pending: list[int] = []
    line_has_text = True
    while j < close:
        c = text[j]
        if c == "\\":
            e = text[j + 1]
            if e in "\r\n":
                # escaped line break: join without a space; skip the next line's indentation
                k = j + 1
                if text.startswith("\r\n", k):
                    k += 1
                k += 1
                while k < close and text[k] in " \t":
                    k += 1
                j = k
                continue
            if e in _HEX:
                n = _HEX[e]
                chars.append(chr(int(text[j + 2 : j + 2 + n], 16)))
                offs.append(j)
                j += 2 + n
                continue
            if e not in _ESC:
                return None
            chars.append(_ESC[e])
            offs.append(j)
            j += 2
            continue
        if c in "\r\n":
            # drop trailing blanks of this line (unescaped ones)
            while chars and chars[-1] in " \t" and offs and text[offs[-1]] in " \t":
                chars.pop()
                offs.pop()
            nl = text.find("\n", j)
            pending = [nl]
            k = nl + 1
            while True:
                while k < close and text[k] in " \t":
                    k += 1
                if k < close and text[k] in "\r\n":
                    nl2 = text.find("\n", k)
                    pending.append(nl2)
                    k = nl2 + 1
                    continue
                break
            if len(pending) == 1:
                chars.append(" ")
                offs.append(pending[0])
            else:
                for p in pending[1:]:
                    chars.append("\n")
                    offs.append(p)
            j = k
            line_has_text = False
            continue
        chars.append(c)
        offs.append(j)
        line_has_text = True
        j += 1
    del line_has_text
    return chars, offs


def _block(text: str, h: int, end: int, value: str) -> tuple[list[str], list[int]] | None:
    style = text[h]
    k = h + 1
    explicit: int | None = None
    while k < len(text) and text[k] in "+-0123456789":
        if text[k].isdigit():
            explicit = int(text[k])
        k += 1
    nl = text.find("\n", k)
    if nl == -1:
        return None
    body_start = nl + 1
    # the lines of the block (up to the end of the node)
    raw_lines: list[tuple[int, int]] = []
    i = body_start
    while i < end:
        e = text.find("\n", i, end)
        e = end if e == -1 else e
        raw_lines.append((i, e))
        i = e + 1
    candidates: list[int] = []
    first_text = next((s for s, e in raw_lines if text[s:e].strip(" \r")), None)
    if first_text is not None:
        ind = 0
        while text[first_text + ind] == " ":
            ind += 1
        candidates.append(ind)
    if explicit is not None:
        line_start = text.rfind("\n", 0, h) + 1
        parent = 0
        while text[line_start + parent] == " ":
            parent += 1
        candidates += [parent + explicit, explicit]
    for indent in candidates:
        got = _block_with_indent(text, raw_lines, indent, style)
        if got is not None and "".join(got[0]).rstrip("\n") == value.rstrip("\n"):
            chars, offs = got
            # chomping: take exactly as many trailing newlines as the parsed value has
            want = len(value) - len(value.rstrip("\n"))
            core = len("".join(chars).rstrip("\n"))
            chars, offs = chars[:core], offs[:core]
            last = offs[-1] if offs else body_start
            for n in range(want):
                brk = text.find("\n", last + 1 if n == 0 else offs[-1] + 1)
                chars.append("\n")
                offs.append(brk if brk != -1 else last + 1)
            return chars, offs
    return None


def _block_with_indent(text: str, raw_lines: list[tuple[int, int]], indent: int,
                       style: str) -> tuple[list[str], list[int]] | None:
    lines: list[tuple[list[str], list[int], int, bool, bool]] = []  # chars, offs, break, empty, more-indented
    for s, e in raw_lines:
        content_end = e
        if content_end > s and text[content_end - 1] == "\r":
            content_end -= 1
        seg = text[s:content_end]
        if not seg.strip(" "):
            lines.append(([], [], e, True, False))
            continue
        if len(seg) - len(seg.lstrip(" ")) < indent:
            break  # a less-indented line ends the block
        cs = s + indent
        lines.append((list(text[cs:content_end]), list(range(cs, content_end)), e, False,
                      text[cs:cs + 1] in (" ", "\t")))
    chars: list[str] = []
    offs: list[int] = []
    if style == "|":
        for lc, lo, brk, _, _ in lines:
            chars += lc
            offs += lo
            chars.append("\n")
            offs.append(brk)
        return chars, offs
    # folded
    prev_text = False
    prev_more = False
    pending: list[int] = []
    for lc, lo, brk, empty, more in lines:
        if empty:
            pending.append(brk)
            continue
        if prev_text:
            breaks = pending  # the break after the previous text line, then one per empty line
            if prev_more or more:
                for p in breaks:
                    chars.append("\n")
                    offs.append(p)
            elif len(breaks) == 1:
                chars.append(" ")
                offs.append(breaks[0])
            else:
                for p in breaks[1:]:
                    chars.append("\n")
                    offs.append(p)
        else:
            for p in pending:
                chars.append("\n")
                offs.append(p)
        chars += lc
        offs += lo
        pending = [brk]
        prev_text, prev_more = True, more
    for p in pending:
        chars.append("\n")
        offs.append(p)
    return chars, offs
