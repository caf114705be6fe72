"""New YAML text in a document's own style: scalars, block mappings and sequences, flow collections,
whole documents (the indentation, dash offset and quote character of `Style`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

from dralint.model import MEMO_KEY_CHARS, JsonPath, same

try:  # C emitter when available; the results are identical, only faster
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]



@dataclass(frozen=True)
class Style:
    """How a document is written: nested mapping indent, sequence dash offset, preferred quote."""

    indent: int = 2
    seq_offset: int = 0
    quote: str = '"'


_FLOW_UNSAFE = re.compile(r"[,\[\]{}]")


def _dump_scalar(v: Any, kind: str) -> str:
    # values come from the linted files: only short ones are memoised
    if isinstance(v, str) and len(v) > MEMO_KEY_CHARS:
        return _make_scalar(v, kind)
    return _memo_scalar(v, kind)


def _make_scalar(v: Any, kind: str) -> str:
    out = yaml.dump(v, Dumper=_Dumper, default_flow_style=True, width=1 << 30, allow_unicode=True)
    if out.endswith("\n...\n"):
        out = out[:-5]
    return out.rstrip("\n")


_memo_scalar = lru_cache(maxsize=8192)(_make_scalar)


def format_scalar(v: Any, quote: str = '"', flow: bool = False) -> str:
    """One-line YAML text for a scalar, read back as the same value by a YAML 1.1 (Kubernetes) parser."""
    if isinstance(v, str) and ("\n" in v or "\r" in v):
        return json.dumps(v, ensure_ascii=False)
    if v is not None and not isinstance(v, (str, int, float, bool)):
        v = str(v)
    out = _dump_scalar(v, type(v).__name__)
    if isinstance(v, str):
        if out[:1] == "'" and quote == '"':
            inner = out[1:-1].replace("''", "'")
            if '"' not in inner and "\\" not in inner:
                out = f'"{inner}"'
        elif out[:1] not in "'\"" and flow and _FLOW_UNSAFE.search(out):
            out = json.dumps(v, ensure_ascii=False)
    return out


def _quoted_like(token: str, v: str) -> str | None:
    """``v`` quoted the way ``token`` was, when that quoting can carry it."""
    if "\n" in v or any(ord(c) < 32 for c in v):
        return json.dumps(v, ensure_ascii=False) if token[:1] == '"' else None
    if token[:1] == '"':
        return json.dumps(v, ensure_ascii=False)
    if token[:1] == "'":
        return "'" + v.replace("'", "''") + "'"
    return None


def _literal(v: str, col: int) -> tuple[str, list[str]] | None:
    """``|`` block for a multi-line string (None when a block cannot carry it exactly)."""
    if v.startswith((" ", "\n")) or "\r" in v or "\t" in v.split("\n", 1)[0][:1] or any(
        ord(c) < 32 and c not in "\n\t" for c in v
    ):
        return None
    if v.endswith("\n\n"):
        chomp, body = "+", v[:-1]
    elif v.endswith("\n"):
        chomp, body = "", v[:-1]
    else:
        chomp, body = "-", v
    lines = [(" " * col + ln) if ln else "" for ln in body.split("\n")]
    return "|" + chomp, lines


def emit_value(v: Any, key_col: int, style: Style) -> tuple[str, list[str]]:
    """(text after ``key:`` on its line, following lines) for a value of a key at ``key_col``."""
    if isinstance(v, dict):
        if not v:
            return " {}", []
        return "", emit_mapping(v, key_col + style.indent, style)
    if isinstance(v, list):
        if not v:
            return " []", []
        return "", emit_sequence(v, key_col + style.seq_offset, style)
    if isinstance(v, str) and "\n" in v:
        lit = _literal(v, key_col + style.indent)
        if lit is not None:
            return " " + lit[0], lit[1]
    return " " + format_scalar(v, style.quote), []


def emit_mapping(m: dict[str, Any], col: int, style: Style) -> list[str]:
    out: list[str] = []
    for k, v in m.items():
        head, lines = emit_value(v, col, style)
        out.append(" " * col + format_scalar(str(k), style.quote) + ":" + head)
        out.extend(lines)
    return out


def emit_item(v: Any, dash_col: int, style: Style) -> list[str]:
    pre = " " * dash_col + "- "
    if isinstance(v, dict) and v:
        lines = emit_mapping(v, dash_col + 2, style)
        return [pre + lines[0][dash_col + 2:], *lines[1:]]
    if isinstance(v, list) and v:
        return [pre + emit_flow(v, {}, style)]
    if isinstance(v, str) and "\n" in v:
        lit = _literal(v, dash_col + 2)
        if lit is not None:
            return [pre + lit[0], *lit[1]]
    if isinstance(v, (dict, list)):
        return [pre + ("{}" if isinstance(v, dict) else "[]")]
    return [pre + format_scalar(v, style.quote)]


def emit_sequence(s: list[Any], dash_col: int, style: Style) -> list[str]:
    out: list[str] = []
    for v in s:
        out.extend(emit_item(v, dash_col, style))
    return out


def emit_flow(v: Any, orig: dict[Any, tuple[str, Any]], style: Style, rel: JsonPath = ()) -> str:
    """Flow text for ``v``, reusing the original token of every scalar that did not change."""
    if isinstance(v, dict):
        parts = []
        for k, x in v.items():
            kt = orig.get(("key", *rel, k))
            parts.append(f"{kt[0] if kt else format_scalar(str(k), style.quote, True)}: "
                         f"{emit_flow(x, orig, style, (*rel, k))}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(v, list):
        quoted = [t[0][:1] for i in range(len(v)) if (t := orig.get((*rel, i))) is not None and isinstance(t[1], str)]
        q = quoted[0] if quoted and quoted[0] in ("'", '"') and len(set(quoted)) == 1 else None
        parts = []
        for i, x in enumerate(v):
            tok = orig.get((*rel, i))
            if q and isinstance(x, str) and not (tok is not None and same(tok[1], x)):
                parts.append(_quoted_like(q, x) or format_scalar(x, style.quote, True))
            else:
                parts.append(emit_flow(x, orig, style, (*rel, i)))
        return "[" + ", ".join(parts) + "]"
    tok = orig.get(rel)
    if tok is not None and same(tok[1], v):
        return tok[0]
    return format_scalar(v, style.quote, True)


def emit_document(value: Any, style: Style, comment: str | None = None) -> str:
    lines = [f"# {comment}"] if comment else []
    if isinstance(value, dict):
        lines.extend(emit_mapping(value, 0, style))
    elif isinstance(value, list):
        lines.extend(emit_sequence(value, 0, style))
    else:
        lines.append(format_scalar(value, style.quote))
    return "\n".join(lines) + "\n"
