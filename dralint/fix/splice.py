"""The splicer: a fix's edits applied to the original text of the documents they touch, then verified.

How a fix reaches the file
--------------------------
Rules record `Fix`es made of `Edit`s (paths relative to the object). For every document a fix
touches, the fixer cuts that document's *region* out of the file (from the line where its root
starts to the end of the line holding its last content) and edits only that text:

1. **Splicing first.** The edit is applied to the region's text at the positions the fast loader
   reports: a changed scalar keeps its quotes or block style, an inserted key copies the column of
   its siblings, new blocks follow the document's own indentation (mapping indent, sequence dash
   offset and preferred quote character are detected per document). Nothing outside the edited
   lines is re-emitted, so comments, flow collections, odd spacing, anchors elsewhere in the
   document, `...`, directives, BOM and line endings survive byte for byte. This is the "splice
   first" strategy of pre-commit's autoupdate; it is also ~20x cheaper than a round trip, which is
   what lets `migrate` rewrite thousands of documents in seconds.
2. **ruamel.yaml round trip as the fallback.** When splicing cannot express an edit faithfully
   (the edit goes through an alias, a merge key or a tagged node, a nested ``- -`` sequence…), the
   region alone is loaded with ruamel (``preserve_quotes``, ``width=4096``, indentation detected
   from the document) and only the nodes that differ are changed. If that document does not come
   back byte-identical from a no-op round trip (mixed sequence styles and similar), applying the
   fix would reformat it, so the fix is downgraded to *unsafe* and the reason is reported.
   JSON files are edited as JSON with their detected indentation, under the same rule.
3. **Verification of every fix.** The edited region is parsed again with the lint parser and its
   data must equal the original data with the edits applied (`apply_plain`); the comments of the
   region are compared as a multiset: a fix that would drop one is downgraded to unsafe (ruff's
   per-instance downgrade).

The gates (`dralint.fix.gates`) and the passes around them (`dralint.fix.loop`) decide what is written.
"""

from __future__ import annotations

import io
import json
import os
import re
from array import array
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from dralint.fix.edits import EditError, _norm_index, apply_plain, diff_edits, fmt_path
from dralint.fix.emit import (
    Style,
    _literal,
    _quoted_like,
    emit_document,
    emit_flow,
    emit_item,
    emit_mapping,
    emit_sequence,
    emit_value,
    format_scalar,
)
from dralint.inputs.load import DOC_MARKER, LMap, LSeq, SourceFile, _shift, load_bytes
from dralint.model import Applicability, Edit, Fix, JsonPath, same, to_plain

try:  # C parser when available; the results are identical, only faster
    from yaml import CSafeLoader as _EventLoader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _EventLoader  # type: ignore[assignment]


class Refuse(Exception):
    """The document cannot be edited faithfully this way (the caller falls back or skips)."""


# ----------------------------------------------------------------------------------------------
# parsing regions, comments, style detection


_PARSED: dict[str, Any] = {}
_PARSED_MAX = 256


def _parse(text: str) -> Any:
    """The located data of one document's text (memoised: a region is read by several steps)."""
    hit = _PARSED.get(text)
    if hit is not None:
        return hit
    data = _parse_uncached(text)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[text] = data
    return data


def _parse_uncached(text: str) -> Any:
    sf = load_bytes("<fix>", text.encode("utf-8"))
    if sf.problems or len(sf.documents) != 1:
        why = sf.problems[0].message if sf.problems else f"{len(sf.documents)} documents"
        raise Refuse(f"the edited document does not parse ({why})")
    doc = sf.documents[0]
    if doc.duplicates:
        raise Refuse(f"the document has a duplicate key `{doc.duplicates[0][0]}`")
    return doc.data


def _scalar_spans(root: Any) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, LMap):
            lc = node.lc
            for i, v in enumerate(node.values()):
                spans.append((lc[4 * i], lc[4 * i + 1]))
                if isinstance(v, (LMap, LSeq)):
                    stack.append(v)
                else:
                    spans.append((lc[4 * i + 2], lc[4 * i + 3]))
        elif isinstance(node, LSeq):
            lc = node.lc
            for i, v in enumerate(node):
                if isinstance(v, (LMap, LSeq)):
                    stack.append(v)
                else:
                    spans.append((lc[2 * i], lc[2 * i + 1]))
    spans.sort()
    return spans


def comments(text: str, root: Any, *more_roots: Any) -> Counter[str]:
    """Every comment of a document (``# …`` outside scalars), as a multiset of their texts."""
    out: Counter[str] = Counter()
    if "#" not in text:
        return out
    spans = _scalar_spans(root)
    for r in more_roots:
        spans.extend(_scalar_spans(r))
    spans.sort()
    starts = [s for s, _ in spans]
    pos = text.find("#")
    while pos != -1:
        if pos == 0 or text[pos - 1] in " \t\n\r":
            i = bisect_right(starts, pos) - 1
            if i < 0 or not (spans[i][0] <= pos < spans[i][1]):
                end = text.find("\n", pos)
                end = len(text) if end == -1 else end
                out[text[pos:end].rstrip()] += 1
                pos = text.find("#", end)
                continue
        pos = text.find("#", pos + 1)
    return out


def file_comments(sf: SourceFile) -> Counter[str]:
    """Every comment of a loaded file, as a multiset of their texts."""
    roots = [d.data for d in sf.documents]
    return comments(sf.text, *(roots or [None]))


def _col(text: str, off: int) -> int:
    return off - (text.rfind("\n", 0, off) + 1)


def detect_style(text: str, root: Any) -> Style:
    """Indentation and quoting as this document writes them (defaults: 2, kubectl-style dashes, ``"``)."""
    indent = seq = None
    dq = sq = 0
    budget = 400
    stack = [root]
    seen: set[int] = set()
    while stack and budget > 0:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, LMap):
            for i, v in enumerate(node.values()):
                ks, ke, vs, _ = node.lc[4 * i: 4 * i + 4]
                budget -= 1
                first = text[vs: vs + 1]
                if isinstance(v, LMap) and v and vs > ke and first not in "{&!*":
                    if indent is None:
                        d = _col(text, v.lc[0]) - _col(text, ks)
                        indent = d if d > 0 else None
                    stack.append(v)
                elif isinstance(v, LSeq) and v and vs > ke and first == "-":
                    if seq is None:
                        seq = _col(text, vs) - _col(text, ks)
                    stack.append(v)
                elif isinstance(v, (LMap, LSeq)):
                    stack.append(v)
                elif first == '"':
                    dq += 1
                elif first == "'":
                    sq += 1
        elif isinstance(node, LSeq):
            for i, v in enumerate(node):
                if isinstance(v, (LMap, LSeq)):
                    stack.append(v)
                else:
                    c = text[node.lc[2 * i]: node.lc[2 * i] + 1]
                    dq += c == '"'
                    sq += c == "'"
    return Style(indent or 2, seq if seq is not None and seq >= 0 else 0, "'" if sq > dq else '"')


# ----------------------------------------------------------------------------------------------
# the splicer: edits on the text of one document


@dataclass
class _Loc:
    value: Any
    parent: _Loc | None
    step: str | int | None
    vs: int
    ve: int
    ks: int = -1
    ke: int = -1
    index: int = -1


class Splicer:
    """Edits one document's text in place; every edit re-parses, so positions are always fresh."""

    def __init__(self, text: str, style: Style | None = None) -> None:
        self.t = text
        self.root = _parse(text)
        if not isinstance(self.root, (LMap, LSeq)) or text[self.root.s: self.root.s + 1] in ("{", "["):
            raise Refuse("the document is not a block mapping or sequence")
        if _col(text, self.root.s) != 0 and text[: self.root.s].strip():
            raise Refuse("the document does not start at the beginning of a line")
        self.style = style or detect_style(text, self.root)
        #: a deleted key takes the full-line comments right above it, at its column (bulk transforms
        #: that carry those comments to what replaces the key, e.g. `migrate`; see `edit_region`)
        self.lead_comments = False

    # -- text helpers ------------------------------------------------------------------------
    def _splice(self, s: int, e: int, new: str) -> None:
        before = self.t
        self.t = before[:s] + new + before[e:]
        grafted = _regraft(self.root, before, self.t, s, e, new)
        self.root = grafted if grafted is not None else _parse(self.t)

    def _ls(self, off: int) -> int:
        return self.t.rfind("\n", 0, off) + 1

    def _le(self, off: int) -> int:
        n = self.t.find("\n", off)
        return len(self.t) if n == -1 else n

    def _col(self, off: int) -> int:
        return off - self._ls(off)

    def _after(self, end: int) -> int:
        """Start of the line after the one holding offset ``end - 1`` (the end of some content)."""
        if end > 0 and self.t[end - 1] == "\n":
            return end
        n = self.t.find("\n", end)
        return len(self.t) if n == -1 else n + 1

    def _flow(self, loc: _Loc) -> bool:
        return isinstance(loc.value, (LMap, LSeq)) and self.t[loc.vs: loc.vs + 1] in ("{", "[")

    def _in_flow(self, loc: _Loc | None) -> bool:
        while loc is not None:
            if self._flow(loc):
                return True
            loc = loc.parent
        return False

    def _end(self, v: Any, vs: int, ve: int) -> int:
        """Offset just past the last character of a value's content (trailing comments excluded)."""
        t = self.t
        if isinstance(v, LMap) and v and t[vs: vs + 1] != "{":
            best = vs
            for i, child in enumerate(v.values()):
                ks, ke, cvs, cve = v.lc[4 * i: 4 * i + 4]
                if ks < vs:
                    raise Refuse("a merge key (`<<`) is involved")
                best = max(best, ke if cvs < ke else self._end(child, cvs, cve))
            return best
        if isinstance(v, LSeq) and v and t[vs: vs + 1] != "[":
            s, e = v.lc[-2], v.lc[-1]
            if s < vs:
                raise Refuse("an alias is involved")
            return self._end(v[-1], s, e)
        return ve

    def _entry_end(self, m: LMap, i: int) -> int:
        ke, vs, ve = m.lc[4 * i + 1: 4 * i + 4]
        child = list(m.values())[i]
        return ke if vs < ke else max(ke, self._end(child, vs, ve))

    def _entry_start(self, ks: int) -> tuple[int, bool]:
        ls = self._ls(ks)
        return (ls, True) if not self.t[ls:ks].strip() else (ks, False)

    # -- finding nodes -------------------------------------------------------------------------
    def _resolve(self, path: JsonPath) -> list[_Loc]:
        root = self.root
        chain = [_Loc(root, None, None, root.s, root.e)]
        for step in path:
            cur = chain[-1]
            v = cur.value
            if isinstance(v, LMap) and isinstance(step, str) and step in v:
                i = list(v).index(step)
                ks, ke, vs, ve = v.lc[4 * i: 4 * i + 4]
                if ks < cur.vs:
                    raise Refuse("the path goes through a merge key (`<<`)")
                child = v[step]
                if vs < ke and vs != ve:
                    raise Refuse(f"`{step}` is an alias: editing it would change the anchored node")
                if self.t[vs: vs + 1] in ("&", "!") and isinstance(child, (LMap, LSeq)):
                    raise Refuse(f"`{step}` is anchored or tagged: the edit could change other nodes too")
                chain.append(_Loc(child, cur, step, vs, ve, ks, ke, i))
            elif isinstance(v, LSeq) and isinstance(step, int) and -len(v) <= step < len(v):
                i = _norm_index(v, step)
                s, e = v.lc[2 * i], v.lc[2 * i + 1]
                if s < cur.vs or (i and s <= v.lc[2 * i - 2]):
                    raise Refuse("the path goes through an alias")
                child = v[i]
                if self.t[s: s + 1] in ("&", "!") and isinstance(child, (LMap, LSeq)):
                    raise Refuse("the item is anchored or tagged: the edit could change other nodes too")
                chain.append(_Loc(child, cur, i, s, e, index=i))
            else:
                break
        return chain

    def _full(self, path: JsonPath) -> _Loc:
        chain = self._resolve(path)
        if len(chain) != len(path) + 1:
            raise EditError(f"`{fmt_path(path)}` does not exist")
        return chain[-1]

    def _value_at(self, path: JsonPath) -> Any:
        node: Any = self.root
        for s in path:
            node = node[s]
        return to_plain(node)

    # -- operations ----------------------------------------------------------------------------
    def apply(self, e: Edit, base: JsonPath = ()) -> None:
        p: JsonPath = (*base, *e.path)
        op = e.op
        if op == "set":
            self.set(p, to_plain(e.value))
        elif op == "delete":
            self.delete(p)
        elif op == "rename":
            self.rename(p, str(e.key))
        elif op == "insert":
            self.insert(p, str(e.key), to_plain(e.value), e.index, e.after, e.comment)
        elif op == "append":
            self.append(p, to_plain(e.value), e.comment)
        elif op == "wrap":
            self.wrap(p, [str(k) for k in (e.value or [])], str(e.key))
        elif op == "unwrap":
            self.unwrap(p)
        elif op == "replace_document":
            self.set(tuple(base), to_plain(e.value))
        elif op != "insert_document":
            raise EditError(f"unknown edit operation {op!r}")

    def _plain_edit(self, path: JsonPath, edit: Edit) -> None:
        """Apply ``edit`` (relative to the outermost flow collection on ``path``) by re-emitting it."""
        chain = self._resolve(path)
        j = next((i for i, loc in enumerate(chain) if self._flow(loc)), None)
        if j is None or j == 0:
            raise Refuse("no flow collection to re-emit")
        f = chain[j]
        rel = path[: j]
        orig: dict[Any, tuple[str, Any]] = {}
        self._tokens(f.value, (), orig)
        rel_edit = Edit(edit.op, tuple(path[j:]) + tuple(edit.path), edit.value, edit.key, edit.index,
                        edit.after, edit.comment)
        new = apply_plain(to_plain(f.value), (), [rel_edit])
        self._replace_value(f, new, rel)

    def _tokens(self, v: Any, rel: JsonPath, out: dict[Any, tuple[str, Any]]) -> None:
        if isinstance(v, LMap):
            for i, (k, x) in enumerate(v.items()):
                ks, ke, vs, ve = v.lc[4 * i: 4 * i + 4]
                kkey: tuple[Any, ...] = ("key", *rel, k)
                out[kkey] = (self.t[ks:ke], k)
                if isinstance(x, (LMap, LSeq)):
                    self._tokens(x, (*rel, k), out)
                else:
                    vkey: tuple[Any, ...] = (*rel, k)
                    out[vkey] = (self.t[vs:ve], x)
        elif isinstance(v, LSeq):
            for i, x in enumerate(v):
                if isinstance(x, (LMap, LSeq)):
                    self._tokens(x, (*rel, i), out)
                else:
                    ikey: tuple[Any, ...] = (*rel, i)
                    out[ikey] = (self.t[v.lc[2 * i]: v.lc[2 * i + 1]], x)

    def set(self, p: JsonPath, v: Any) -> None:
        chain = self._resolve(p)
        if len(chain) == len(p) + 1:
            self._replace_value(chain[-1], v, p)
            return
        k = len(chain) - 1
        anc = chain[-1]
        nested = v
        for s in reversed(p[k + 1:]):
            if not isinstance(s, str):
                raise EditError(f"cannot create `{fmt_path(p)}`: sequence item {s} does not exist")
            nested = {s: nested}
        step = p[k]
        if isinstance(step, str) and (anc.value is None or isinstance(anc.value, LMap)):
            self._insert_key(anc, p[:k], step, nested, None, None, None)
        elif isinstance(step, int) and isinstance(anc.value, LSeq) and step == len(anc.value):
            self._append(anc, p[:k], nested, None)
        else:
            raise EditError(f"cannot set `{fmt_path(p)}`: `{fmt_path(p[:k + 1])}` does not exist")

    def _replace_value(self, loc: _Loc, v: Any, path: JsonPath, comment: str | None = None) -> None:
        old = loc.value
        both_maps = isinstance(old, LMap) and isinstance(v, dict)
        both_seqs = isinstance(old, LSeq) and isinstance(v, list)
        if (both_maps or both_seqs) and old and v and not self._flow(loc) and comment is None:
            for sub in diff_edits(to_plain(old), v, path):
                self.apply(sub)
            return
        if self._flow(loc) and old and isinstance(v, (dict, list)) and comment is None:
            orig: dict[Any, tuple[str, Any]] = {}
            self._tokens(old, (), orig)
            self._splice(loc.vs, loc.ve, emit_flow(v, orig, self.style))
            return
        if loc.parent is None:
            if not isinstance(v, (dict, list)) or not v:
                raise EditError("the document root must stay a non-empty mapping or sequence")
            lines = emit_mapping(v, 0, self.style) if isinstance(v, dict) else emit_sequence(v, 0, self.style)
            self._splice(0, len(self.t), "\n".join(lines) + "\n")
            return
        if self._in_flow(loc.parent):
            self._plain_edit(path[:-1], Edit("set", (path[-1],), v))
            return
        if not isinstance(old, (LMap, LSeq)) and not isinstance(v, (dict, list)) and comment is None:
            self._replace_scalar(loc, v, path)
            return
        self._replace_block(loc, v, comment)

    def _replace_scalar(self, loc: _Loc, v: Any, path: JsonPath) -> None:
        tok = self.t[loc.vs: loc.ve]
        old = loc.value
        if tok[:1] in ("&", "!", "*"):
            raise Refuse("the value is anchored, tagged or an alias")
        candidates: list[str] = []
        if isinstance(v, str) and isinstance(old, str):
            sub = _substitute(tok, old, v)
            if sub is not None:
                candidates.append(sub)
        if isinstance(v, str) and tok[:1] in ("'", '"'):
            q = _quoted_like(tok, v)
            if q is not None:
                candidates.append(q)
        if isinstance(v, str) and tok[:1] in ("|", ">"):
            blk = self._block_like(loc, tok, v)
            if blk is not None:
                candidates.append(blk)
        if isinstance(v, str) and "\n" in v and tok[:1] not in ("|", ">"):
            col = self._col(loc.ks) + self.style.indent if loc.ks >= 0 else self._col(loc.vs) + 2
            lit = _literal(v, col)
            if lit is not None:
                candidates.append(lit[0] + "\n" + "\n".join(lit[1]))
        candidates.append(format_scalar(v, self.style.quote))
        start, end = loc.vs, loc.ve
        if start == end:  # null written as nothing: `key:`
            candidates = [" " + c for c in candidates]
        before = self.t
        for c in candidates:
            try:
                self._splice(start, end, c)
                if same(self._value_at(path), v):
                    return
            except Refuse:
                pass
            self.t = before
            self.root = _parse(before)
        raise Refuse(f"cannot write the new value of `{fmt_path(path)}` in place")

    def _block_like(self, loc: _Loc, tok: str, v: str) -> str | None:
        """A new block scalar with the original header style (``|``/``>``) and content indentation."""
        head_end = tok.find("\n")
        if head_end == -1:
            return None
        header = tok[:head_end]
        m = re.match(r"([|>])([0-9]?)([+-]?)([0-9]?)", header)
        if not m:
            return None
        rest = header[m.end():]
        body_lines = tok[head_end + 1:].split("\n")
        ind = next((len(ln) - len(ln.lstrip(" ")) for ln in body_lines if ln.strip()), None)
        if ind is None:
            ind = (self._col(loc.ks) if loc.ks >= 0 else self._col(loc.vs)) + self.style.indent
        kind = m.group(1)
        lit = _literal(v, ind)
        if lit is None:
            return None
        chomp = lit[0][1:]
        if kind == ">" and ("\n" in v.rstrip("\n") or v.startswith(" ")):
            kind = "|"
        trailing = len(tok) - len(tok.rstrip("\n"))
        keep_extra = trailing - 1 if m.group(3) != "+" and trailing > 1 else 0
        tail = "\n" + "\n" * keep_extra if trailing else ""
        return kind + chomp + rest + "\n" + "\n".join(lit[1]) + tail

    def _replace_block(self, loc: _Loc, v: Any, comment: str | None) -> None:
        """Replace a value whose shape changes (scalar <-> collection, empty <-> filled)."""
        t = self.t
        style = self.style
        old = loc.value
        if loc.ks >= 0:  # a mapping entry
            colon = t.find(":", loc.ke)
            if colon == -1:
                raise Refuse("no `:` after the key")
            col = self._col(loc.ks)
            if isinstance(old, (LMap, LSeq)) and old and not self._flow(loc):
                end = self._le(self._end(old, loc.vs, loc.ve) - 1)
                seg = t[colon + 1: self._le(colon)]
                keep = seg.strip() if seg.strip().startswith("#") else None
            else:
                vend = max(loc.ve, colon + 1)
                end = self._le(vend)
                tail = t[vend:end]
                keep = tail.strip() if tail.strip().startswith("#") else None
                if tail.strip() and not keep:
                    raise Refuse("unexpected text after the value")
            head, lines = emit_value(v, col, style)
            if comment:
                head += f"  # {comment}"
            if keep:
                head += "  " + keep
            self._splice(colon + 1, end, head + ("\n" + "\n".join(lines) if lines else ""))
            return
        # a sequence item
        col = self._col(loc.vs)
        if isinstance(old, (LMap, LSeq)) and old and not self._flow(loc):
            end = self._le(self._end(old, loc.vs, loc.ve) - 1)
        else:
            end = loc.ve
        lines = emit_item(v, max(col - 2, 0), style)
        first = lines[0][max(col - 2, 0) + 2:]
        if comment:
            first += f"  # {comment}"
        self._splice(loc.vs, end, "\n".join([first, *lines[1:]]))

    def _insert_key(self, loc: _Loc, path: JsonPath, key: str, value: Any, index: int | None,
                    after: str | None, comment: str | None, comment_line: int = 0) -> None:
        """Insert ``key: value``; ``comment`` goes on emitted line ``comment_line`` (1: a new list's item)."""
        m = loc.value
        if m is None or (isinstance(m, LMap) and not m):
            if self._in_flow(loc.parent) and loc.parent is not None:
                self._plain_edit(path, Edit("insert", (), value, key, index, after))
                return
            self._replace_value(loc, {key: value}, path, comment)
            return
        if not isinstance(m, LMap):
            raise EditError(f"cannot insert into `{fmt_path(path)}`: not a mapping")
        if self._in_flow(loc):
            self._plain_edit(path, Edit("insert", (), value, key, index, after))
            return
        if key in m:
            self.set((*path, key), value)
            return
        keys = list(m)
        col = self._col(m.lc[0])
        lines = emit_mapping({key: value}, col, self.style)
        if comment:
            lines[min(comment_line, len(lines) - 1)] += f"  # {comment}"
        if after is not None and after in m:
            pos = self._after(self._entry_end(m, keys.index(after)))
        elif index is not None and index < len(keys):
            start, own = self._entry_start(m.lc[4 * max(index, 0)])
            if not own:
                text = "\n".join([lines[0].lstrip(" "), *lines[1:]]) + "\n" + " " * col
                self._splice(start, start, text)
                return
            pos = start
        else:
            pos = self._after(self._entry_end(m, len(keys) - 1))
        self._insert_lines(pos, lines)

    def _insert_lines(self, pos: int, lines: list[str]) -> None:
        text = "\n".join(lines) + "\n"
        if pos == len(self.t) and self.t and not self.t.endswith("\n"):
            text = "\n" + text
        self._splice(pos, pos, text)

    def insert(self, p: JsonPath, key: str, value: Any, index: int | None, after: str | None,
               comment: str | None) -> None:
        chain = self._resolve(p)
        if len(chain) != len(p) + 1:
            self.set((*p, key), value)
            return
        self._insert_key(chain[-1], p, key, value, index, after, comment)

    def append(self, p: JsonPath, value: Any, comment: str | None) -> None:
        chain = self._resolve(p)
        if len(chain) != len(p) + 1:
            parent = chain[-1].value
            if len(chain) == len(p) and isinstance(p[-1], str) and isinstance(parent, LMap) and parent \
                    and not self._in_flow(chain[-1]):
                # a new list under an existing block mapping: one splice, the comment on its item
                self._insert_key(chain[-1], p[:-1], p[-1], [value], None, None, comment, comment_line=1)
                return
            if len(chain) == len(p) and isinstance(p[-1], str):
                self._insert_key(chain[-1], p[:-1], p[-1], [value], None, None, None)
                if comment:
                    self._comment_last_item(p, comment)
                return
            self.set(p, [value])
            if comment:
                self._comment_last_item(p, comment)
            return
        self._append(chain[-1], p, value, comment)

    def _comment_last_item(self, p: JsonPath, comment: str) -> None:
        loc = self._full((*p, -1))
        self._splice(self._le(loc.vs), self._le(loc.vs), f"  # {comment}")

    def _append(self, loc: _Loc, p: JsonPath, value: Any, comment: str | None) -> None:
        s = loc.value
        if s is None or (isinstance(s, LSeq) and not s):
            if self._in_flow(loc.parent) and loc.parent is not None:
                self._plain_edit(p, Edit("append", (), value))
                return
            self._replace_value(loc, [value], p, None)
            if comment:
                self._comment_last_item(p, comment)
            return
        if not isinstance(s, LSeq):
            raise EditError(f"cannot append to `{fmt_path(p)}`: not a sequence")
        if self._in_flow(loc):
            self._plain_edit(p, Edit("append", (), value))
            return
        dash_col = self._col(s.s)
        last = len(s) - 1
        end = self._end(s[last], s.lc[2 * last], s.lc[2 * last + 1])
        lines = emit_item(value, dash_col, self.style)
        if comment:
            lines[0] += f"  # {comment}"
        self._insert_lines(self._after(end), lines)

    def delete(self, p: JsonPath) -> None:
        loc = self._full(p)
        par = loc.parent
        if par is None:
            raise EditError("cannot delete the whole document")
        if self._in_flow(par):
            self._plain_edit(p[:-1], Edit("delete", (p[-1],)))
            return
        if isinstance(par.value, LMap):
            m = par.value
            if len(m) == 1:
                self._replace_value(par, {}, p[:-1])
                return
            start, own = self._entry_start(loc.ks)
            if own:
                if self.lead_comments:
                    start = self._lead_start(start, self._col(loc.ks))
                self._splice(start, self._after(self._entry_end(m, loc.index)), "")
                return
            if loc.index + 1 >= len(m):
                raise Refuse("the key shares its line with other content")
            self._splice(loc.ks, m.lc[4 * (loc.index + 1)], "")
            return
        s = par.value
        if len(s) == 1:
            self._replace_value(par, [], p[:-1])
            return
        dash = self.t.rfind("-", 0, loc.vs)
        if dash == -1 or self.t[dash + 1: loc.vs].strip():
            raise Refuse("cannot find the item's dash")
        ls = self._ls(dash)
        if self.t[ls:dash].strip():
            raise Refuse("a nested sequence shares the item's line")
        self._splice(ls, self._after(self._end(loc.value, loc.vs, loc.ve)), "")

    def _lead_start(self, ls: int, col: int) -> int:
        """The start of the full-line comments at column ``col`` right above the line at ``ls``."""
        while ls > 0:
            prev = self.t.rfind("\n", 0, ls - 1) + 1
            line = self.t[prev: ls - 1]
            if not line.lstrip().startswith("#") or len(line) - len(line.lstrip()) != col:
                break
            ls = prev
        return ls

    def rename(self, p: JsonPath, key: str) -> None:
        loc = self._full(p)
        par = loc.parent
        if par is None or not isinstance(par.value, LMap):
            raise EditError(f"cannot rename `{fmt_path(p)}`: not a mapping key")
        if key in par.value and key != p[-1]:
            raise EditError(f"cannot rename `{fmt_path(p)}` to `{key}`: the key exists")
        tok = self.t[loc.ks: loc.ke]
        new = _quoted_like(tok, key) if tok[:1] in ("'", '"') else None
        self._splice(loc.ks, loc.ke, new or format_scalar(key, self.style.quote, self._in_flow(par)))

    def wrap(self, p: JsonPath, keys: list[str], name: str) -> None:
        loc = self._full(p)
        m = loc.value
        if not isinstance(m, LMap) or not m:
            raise EditError(f"cannot wrap keys of `{fmt_path(p)}`: not a mapping")
        if name in m:
            raise EditError(f"`{fmt_path((*p, name))}` exists already")
        if self._in_flow(loc):
            self._plain_edit(p, Edit("wrap", (), keys, name))
            return
        order = list(m)
        idx = [i for i, k in enumerate(order) if k in keys]
        if not idx:
            raise EditError(f"none of {keys} is in `{fmt_path(p)}`")
        col = self._col(m.lc[0])
        ind = self.style.indent
        contiguous = idx == list(range(idx[0], idx[-1] + 1))
        groups = [(idx[0], idx[-1])] if contiguous else [(i, i) for i in idx]
        segs: list[tuple[int, int, bool]] = []
        for a, b in groups:
            start, own = self._entry_start(m.lc[4 * a])
            segs.append((start, self._after(self._entry_end(m, b)), own))
        moved: list[str] = []
        for start, end, own in segs:
            chunk = self.t[start:end]
            if not chunk.endswith("\n"):
                chunk += "\n"
            lines = chunk.split("\n")[:-1]
            if not own:
                lines[0] = " " * col + lines[0]
            moved.extend((" " * ind + ln) if ln else ln for ln in lines)
        first_start, _, first_own = segs[0]
        head = format_scalar(name, self.style.quote) + ":\n"
        block = (" " * col + head if first_own else head) + "\n".join(moved) + "\n"
        t = self.t
        for start, end, _ in reversed(segs[1:]):
            t = t[:start] + t[end:]
        t = t[:first_start] + block + t[segs[0][1]:]
        self.t = t
        self.root = _parse(t)

    def unwrap(self, p: JsonPath) -> None:
        loc = self._full(p)
        par = loc.parent
        v = loc.value
        if par is None or not isinstance(par.value, LMap) or not isinstance(v, LMap):
            raise EditError(f"cannot unwrap `{fmt_path(p)}`: not a mapping inside a mapping")
        if not v:
            self.delete(p)
            return
        clash = set(v) & (set(par.value) - {p[-1]})
        if clash:
            raise EditError(f"cannot unwrap `{fmt_path(p)}`: {sorted(clash)} exist next to it")
        if self._in_flow(par) or self._flow(loc):
            self._plain_edit(p[:-1], Edit("unwrap", (p[-1],)))
            return
        kcol = self._col(loc.ks)
        d = self._col(v.lc[0]) - kcol
        key_line_end = self._le(loc.ke)
        after_colon = self.t[self.t.find(":", loc.ke) + 1: key_line_end].strip()
        if after_colon and not after_colon.startswith("#"):
            raise Refuse("the mapping starts on its key's line")
        end = self._after(self._end(v, loc.vs, loc.ve))
        lines = self.t[key_line_end + 1: end].split("\n")
        trail = lines[-1] == ""
        if trail:
            lines = lines[:-1]
        out = [ln[min(d, len(ln) - len(ln.lstrip(" "))):] for ln in lines]
        start, own = self._entry_start(loc.ks)
        if not own:
            out[0] = out[0].lstrip(" ")
        self._splice(start, end, "\n".join(out) + ("\n" if trail else ""))


def _substitute(tok: str, old: str, new: str) -> str | None:
    """Change only the differing characters inside the original token (keeps folding, quotes…)."""
    if old == new:
        return tok
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    a, b = old[p: len(old) - s], new[p: len(new) - s]
    if not a or "\n" in a or "\n" in b or tok.count(a) != 1:
        return None
    if any(c in b for c in "'\"\\#:{}[],&*!|>%@`"):
        return None
    return tok.replace(a, b)


# ----------------------------------------------------------------------------------------------
# fallbacks: ruamel round trip and JSON


def _rt_value(v: Any, quote: str) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString, SingleQuotedScalarString

    if isinstance(v, dict):
        cm = CommentedMap()
        for k, x in v.items():
            cm[k] = _rt_value(x, quote)
        return cm
    if isinstance(v, list):
        cs = CommentedSeq()
        cs.extend(_rt_value(x, quote) for x in v)
        return cs
    if isinstance(v, str):
        if "\n" in v and _literal(v, 0) is not None:
            return LiteralScalarString(v)
        text = format_scalar(v, quote)
        if text[:1] == '"':
            return DoubleQuotedScalarString(v)
        if text[:1] == "'":
            return SingleQuotedScalarString(v)
    return v


def _ruamel_apply(region: str, old: Any, target: Any, style: Style) -> tuple[str, bool]:
    """Edit with a ruamel round trip; the flag says the document round-trips byte-identically."""
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=style.indent, sequence=style.seq_offset + 2, offset=style.seq_offset)
    try:
        tree = y.load(region)
        buf = io.StringIO()
        y.dump(tree, buf)
        same_text = buf.getvalue() == region
        for e in diff_edits(old, target):
            _rt_apply(tree, e, style.quote)
        buf = io.StringIO()
        y.dump(tree, buf)
    except EditError:
        raise
    except Exception as err:  # ruamel raises many types for input it cannot handle
        raise Refuse(f"the YAML round trip failed ({type(err).__name__})") from err
    return buf.getvalue(), same_text


def _rt_apply(tree: Any, e: Edit, quote: str) -> None:
    node = tree
    for s in e.path[:-1] if e.op in ("set", "delete") else e.path:
        try:
            node = node[s]
        except (KeyError, IndexError, TypeError) as err:
            raise Refuse(f"`{fmt_path(e.path)}` is not where the YAML editor expects it") from err
    if e.op == "set":
        if not e.path:
            raise Refuse("cannot replace a whole document in the YAML editor")
        node[e.path[-1]] = _rt_value(e.value, quote)
    elif e.op == "delete":
        del node[e.path[-1]]
    elif e.op == "insert":
        keys = list(node)
        pos = keys.index(e.after) + 1 if e.after in keys else (e.index if e.index is not None else len(keys))
        node.insert(pos, e.key, _rt_value(e.value, quote))
    elif e.op == "append":
        node.append(_rt_value(e.value, quote))


def _json_apply(region: str, target: Any) -> tuple[str, bool]:
    try:
        data = json.loads(region)
    except ValueError as err:
        raise Refuse("not JSON") from err
    m = re.search(r"\n([ \t]+)\S", region)
    indent: int | str | None = (len(m.group(1)) if m.group(1).strip(" ") == "" else m.group(1)) if m else None
    trail = "\n" if region.endswith("\n") else ""
    noop = json.dumps(data, indent=indent, ensure_ascii=False) + trail
    return json.dumps(target, indent=indent, ensure_ascii=False) + trail, noop == region


# ----------------------------------------------------------------------------------------------
# one fix on one document region


@dataclass
class RegionEdit:
    text: str
    #: the highest applicability this application allows (lowered when comments would be lost…)
    cap: Applicability
    notes: list[str] = field(default_factory=list)
    #: the located data of ``text``, when this knows it (offsets from the start of ``text``)
    root: Any = None


def edit_region(region: str, base: JsonPath, edits: Sequence[Edit], style: Style | None = None,
                is_json: bool = False, keep_comments: bool = False) -> RegionEdit:
    """Apply ``edits`` to one document's text and verify the result (see the module docstring).

    With ``keep_comments`` (bulk transforms such as `migrate`), comments the edits would drop are put
    back as full-line comments where the change starts, instead of making the fix unsafe.
    """
    body = [e for e in edits if e.op != "insert_document"]
    if not body:
        return RegionEdit(region, Applicability.SAFE)
    root = _parse(region)
    target = apply_plain(root, base, body)  # a plain copy, edited
    style = style or detect_style(region, root)
    cap = Applicability.SAFE
    notes: list[str] = []
    text: str | None = None
    new_root: Any = None
    if is_json:
        text, ok = _json_apply(region, target)
        if not ok:
            cap = Applicability.UNSAFE
            notes.append("the JSON file is not in the layout the fixer writes, so it would be reformatted")
    else:
        try:
            sp = Splicer(region, style)
            sp.lead_comments = keep_comments
            for e in body:
                sp.apply(e, base)
            if not _holds(sp.root, target):
                raise Refuse("the spliced text does not hold the intended data")
            text, new_root = sp.t, sp.root
        except Refuse as why:
            text, ok = _ruamel_apply(region, to_plain(root), target, style)
            if not ok:
                cap = Applicability.UNSAFE
                notes.append(f"{why}; the document does not survive a YAML round trip unchanged, "
                             "so applying the fix reformats it")
    if new_root is None:
        new_root = _parse(text)
        if not _holds(new_root, target):
            raise Refuse("the edited document does not hold the intended data")
    lost = comments(region, root) - comments(text, new_root)
    if lost and keep_comments and not is_json:
        kept = _reinsert_comments(region, text, lost, target)
        if kept is not None:
            text = kept
            new_root = None
            lost = Counter()
    if lost:
        cap = Applicability.UNSAFE
        first = next(iter(lost))
        notes.append(f"it would drop the comment `{first}`" + (f" and {sum(lost.values()) - 1} more"
                                                                 if sum(lost.values()) > 1 else ""))
    return RegionEdit(text, cap, notes, None if is_json else new_root)


def _holds(root: Any, target: Any) -> bool:
    """``same(to_plain(root), target)``, mostly without the copy: `same` takes located collections as
    the dicts and lists they are, and when it says yes every key of ``root`` is one of ``target``'s
    strings, which is all the copy changes (other keys become strings)."""
    return bool(same(root, target)) or bool(same(to_plain(root), target))


def _reinsert_comments(before: str, after: str, lost: Counter[str], target: Any) -> str | None:
    """``after`` with the ``lost`` comments put back as full-line comments where their lines were.

    Lines are aligned with difflib; a comment from a removed or replaced line goes right before
    what replaced it, indented like that line. Returns None when the result would not be right.
    """
    from difflib import SequenceMatcher

    a, b = before.split("\n"), after.split("\n")
    # a comment line put back ends like the lines around it (CRLF files keep their "\r")
    eol = "\r" if len(b) > 1 and b[0].endswith("\r") else ""
    left = Counter(lost)
    inserts: dict[int, list[str]] = defaultdict(list)
    for tag, i1, i2, j1, _ in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        ref = b[j1] if j1 < len(b) and b[j1].strip() else (a[i1] if i1 < len(a) else "")
        indent = " " * (len(ref) - len(ref.lstrip(" ")))
        for line in a[i1:i2]:
            stripped = line.rstrip()
            c = next((c for c in left if left[c] > 0 and stripped.endswith(c)), None)
            if c is not None:
                left[c] -= 1
                inserts[j1].append(indent + c + eol)
    first = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    inserts[first].extend(c + eol for c in (+left).elements())
    out: list[str] = []
    for k, line in enumerate(b):
        out.extend(inserts.pop(k, ()))
        out.append(line)
    rest = [line for lines in inserts.values() for line in lines]
    if rest and out and out[-1] == "":
        out[-1:-1] = rest  # before the text's last newline: a document marker may follow the region
    else:
        out.extend(rest)
    text = "\n".join(out)
    try:
        root = _parse(text)
    except Refuse:
        return None
    if not same(to_plain(root), target) or comments(before, _parse(before)) - comments(text, root):
        return None
    return text


# ----------------------------------------------------------------------------------------------
# positions after a splice, without parsing the whole document again


#: the test suite sets this (and its subprocesses inherit it): every graft is compared with a parse
#: of the whole text, positions included, and a difference is an error
VERIFY_GRAFTS = bool(os.environ.get("DRALINT_VERIFY_GRAFTS"))


def _regraft(root: Any, old: str, text: str, s: int, e: int, new: str) -> Any | None:
    """The located data of ``text`` (``old`` with ``old[s:e]`` replaced by ``new``), from ``root``
    (the data of ``old``) and a parse of only the lines the splice changed.

    A migrated workload takes several edits, and each used to parse the whole document again to
    have fresh positions for the next. Most edits change a few lines deep inside it (a container's
    ``resources``, the end of the pod spec), so only the entries of the innermost block collection
    from the one the splice starts in to the collection's end are parsed, on their own; the entries
    before them are kept and the rest of the tree is copied with its offsets moved. Returns None
    (the caller parses everything) unless the splice is of whole lines, the document has no aliases,
    merge keys or complex keys, and the lines parsed on their own start and end where the whole
    parse puts them: lines that leave a collection belong to a larger one, so the next one up is
    tried (the document's own entries last, from the one the splice starts in).
    """
    if not isinstance(root, (LMap, LSeq)) or (s and old[s - 1] != "\n") or (e and old[e - 1] != "\n") \
            or (new and not new.endswith("\n")) or ("&" in text and "*" in text) or _unordered(text):
        return None
    delta = len(new) - (e - s)
    indent = _indent(new)
    chain: list[tuple[Any, int, Any]] = []  # (collection, position in it, the child holding the splice)
    node = root
    while True:
        found = None
        for i, child in enumerate(node.values() if isinstance(node, LMap) else node):
            if isinstance(child, (LMap, LSeq)) and child and _line_start(old, child.s) <= s and e <= child.e:
                found = (node, i, child)
                break
        if found is None:
            break
        chain.append(found)
        node = found[2]
    containers = [root, *(c for _, _, c in chain)]
    for depth in range(len(containers) - 1, -1, -1):
        c = containers[depth]
        if old[c.s: c.s + 1] in ("{", "["):
            continue  # a flow collection: its items are not lines
        width = 4 if isinstance(c, LMap) else 2
        if indent is not None and indent < _col(old, c.lc[0]) - (2 if width == 2 else 0):
            continue  # the new lines are left of this collection's entries: they are not its own
        # the last entry that starts on or before the splice's first line
        j = max((k for k in range(len(c)) if _line_start(old, c.lc[width * k]) <= s), default=0)
        if not j and not depth:
            continue  # the whole document: that is the caller's parse
        got = _graft_from(c, j, old, text, e, delta)
        if got is not None:
            out = _rebuilt(root, chain[:depth], got, e, delta) if depth else got
            if VERIFY_GRAFTS and not same_located(out, _parse_uncached(text)):
                raise AssertionError(f"a graft differs from the whole parse at {s}..{e} of {text!r}")
            return out
    return None


def _indent(lines: str) -> int | None:
    """The smallest indentation of the lines that hold content (None: there are none)."""
    out = None
    for line in lines.split("\n"):
        body = line.lstrip(" ")
        if body and not body.startswith("#"):
            col = len(line) - len(body)
            out = col if out is None else min(out, col)
    return out


def _graft_from(c: Any, j: int, old: str, text: str, e: int, delta: int) -> Any | None:
    """Collection ``c`` after the splice: its entries before the ``j``-th as they are, the rest
    parsed from the new text on their own; None when those lines do not parse as its entries."""
    if isinstance(c, LMap):
        first = c.lc[4 * j]  # the key
    else:  # the item's dash, on the line the item starts on
        item = c.lc[2 * j]
        first = old.rfind("-", _line_start(old, item), item)
        if first == -1 or old[first + 1: item].strip():
            return None
    start = _line_start(old, first)
    if old[start: first].strip():
        return None  # it shares its first line (`- name: a`)
    try:
        got = _parse_uncached(text[start: c.e + delta])
    except Refuse:
        return None
    if type(got) is not type(c) or not got or got.s != first - start or got.e != c.e + delta - start:
        return None
    _shift(got, start, set())  # parsed just now, for this graft alone: moved in place
    if not j:
        return got
    if isinstance(c, LMap):
        keys = list(c)[:j]
        if any(k in got for k in keys):
            return None  # a duplicate of an earlier key: the whole parse decides
        out: Any = LMap(zip([*keys, *got], [*list(c.values())[:j], *got.values()], strict=True))
        out.lc = array("q", c.lc[: 4 * j]) + got.lc
    else:
        out = LSeq([*c[:j], *got])
        out.lc = array("q", c.lc[: 2 * j]) + got.lc
    out.s, out.e = c.s, got.e
    return out


def _known_region(sf: SourceFile, di: int, s: int, e: int, region: str) -> None:
    """Give `_parse` the region's data from the file's own parse instead of parsing it again, when
    they are the same: the region runs to the next document marker (comment lines after it would
    make the whole parse end the last collections later), and it has no aliases (a copy would
    unshare them) and no duplicate keys (which `_parse` refuses)."""
    doc = sf.documents[di] if di < len(sf.documents) else None
    if doc is None or doc.skip or doc.duplicates or not isinstance(doc.data, (LMap, LSeq)) or region in _PARSED \
            or ("&" in region and "*" in region) or not (e == len(sf.text) or DOC_MARKER.match(sf.text, e)):
        return
    data = _moved(doc.data, -s, 0)
    if VERIFY_GRAFTS and not same_located(data, _parse_uncached(region)):
        raise AssertionError(f"the file's data of document {di} differs from the parse of {region!r}")
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[region] = data


def _line_start(text: str, off: int) -> int:
    return text.rfind("\n", 0, off) + 1


def _moved(node: Any, by: int, after: int) -> Any:
    """A copy of a located collection with its offsets from ``after`` on moved by ``by`` (scalars
    are shared: they carry no offsets)."""
    if not isinstance(node, (LMap, LSeq)):
        return node
    if node.s >= after:  # all of it (offsets inside a collection without merge keys are not before it)
        return _shifted(node, by)
    items = [_moved(v, by, after) for v in (node.values() if isinstance(node, LMap) else node)]
    out: Any = LMap(zip(list(node), items, strict=True)) if isinstance(node, LMap) else LSeq(items)
    out.lc = array("q", [x + by if x >= after else x for x in node.lc])
    out.s = node.s + by if node.s >= after else node.s
    out.e = node.e + by if node.e >= after else node.e
    return out


def _shifted(node: Any, by: int) -> Any:
    """A copy of a located collection with every offset moved by ``by`` (the hot path of `_moved`).

    The collection is copied whole, in C, and only its collections are replaced: most entries are
    scalars, which carry no offsets. The offsets go through a list comprehension, which is faster
    than ``map(by.__add__, ...)``'s call per offset (together: 30 % less time on the corpus)."""
    if node.__class__ is LMap:
        out: Any = LMap(node)
        for k, v in node.items():
            if v.__class__ is LMap or v.__class__ is LSeq:
                out[k] = _shifted(v, by)
    else:
        out = LSeq(node)
        for i, v in enumerate(node):
            if v.__class__ is LMap or v.__class__ is LSeq:
                out[i] = _shifted(v, by)
    out.lc = array("q", [x + by for x in node.lc])
    out.s = node.s + by
    out.e = node.e + by
    return out


def _rebuilt(node: Any, chain: list[tuple[Any, int, Any]], graft: Any, e: int, delta: int) -> Any:
    """``node`` with the collection at the end of ``chain`` replaced by ``graft``: the collections on
    the way are copied, what ends after the splice is copied with moved offsets, the rest shared."""
    _, i, _child = chain[0]
    width = 4 if isinstance(node, LMap) else 2
    items = list(node.values()) if isinstance(node, LMap) else list(node)
    for j, v in enumerate(items):
        if j == i:
            items[j] = _rebuilt(v, chain[1:], graft, e, delta) if len(chain) > 1 else graft
        elif isinstance(v, (LMap, LSeq)) and v.e >= e:
            items[j] = _moved(v, delta, e)
    out: Any = LMap(zip(list(node), items, strict=True)) if isinstance(node, LMap) else LSeq(items)
    out.lc = array("q", [x + delta if x >= e else x for x in node.lc])
    out.lc[width * i + width - 2], out.lc[width * i + width - 1] = items[i].s, items[i].e
    out.s = node.s + delta if node.s >= e else node.s
    out.e = node.e + delta if node.e >= e else node.e
    return out


def same_located(a: Any, b: Any) -> bool:
    """Equal data with equal positions (the loader's located values, compared deeply)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, LMap):
        return a.s == b.s and a.e == b.e and list(a.lc) == list(b.lc) and list(a) == list(b) \
            and all(same_located(x, y) for x, y in zip(a.values(), b.values(), strict=True))
    if isinstance(a, LSeq):
        return a.s == b.s and a.e == b.e and list(a.lc) == list(b.lc) and len(a) == len(b) \
            and all(same_located(x, y) for x, y in zip(a, b, strict=True))
    return bool(same(a, b))


# ----------------------------------------------------------------------------------------------
# documents inside a file


def doc_regions(sf: SourceFile) -> dict[int, tuple[int, int]]:
    """Per document index: the region a fix may rewrite (root line start .. end of last content line).

    Documents whose root shares its line with other text (``--- {a: 1}``) have no region.
    Raises `yaml.YAMLError` when the file does not parse.
    """
    text = sf.text
    ends = _located_ends(sf)
    if ends is None:
        ends = _content_ends(text)
    out: dict[int, tuple[int, int]] = {}
    for doc in sf.documents:
        end = ends.get(doc.start)
        region = None if end is None else region_of(text, doc.start, end)
        if region is not None:
            out[doc.index] = region
    return out


def region_of(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The region of a document whose root starts at ``start`` and whose content ends at ``end``."""
    ls = text.rfind("\n", 0, start) + 1
    if text[ls: start].strip():
        return None
    if end > 0 and text[end - 1] == "\n":
        return ls, end
    n = text.find("\n", end)
    return ls, len(text) if n == -1 else n + 1


#: a complex key's ``?`` (when it starts the text or follows a space or flow indicator), and a flow
#: collection used as a key: with those (and merge keys), positions in the located data may not
#: follow the text order or end where the parser's events do. Each pattern starts with a literal,
#: so a search skips to its next occurrence at C speed (the file is searched before every pass,
#: and a region after every splice); one pattern for both brackets would start with a class, which
#: the regular expression engine tests character by character: eight times slower on the corpus.
_QUESTION = re.compile(r"\?(?=[ \t\r\n]|$)")
_FLOW_KEYS = (re.compile(r"\][ \t]*:(?=[ \t\r\n]|$)"), re.compile(r"\}[ \t]*:(?=[ \t\r\n]|$)"))


def _unordered(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` may hold a merge key, a complex key or a flow collection as a key."""
    stop = len(text) if end is None else end
    if text.find("<<", start, stop) != -1 or any(p.search(text, start, stop) for p in _FLOW_KEYS):
        return True
    if text.find("?", start, stop) == -1:
        return False
    return any(m.start() == start or text[m.start() - 1] in " \t\r\n,[{"
               for m in _QUESTION.finditer(text, start, stop))


def _located_ends(sf: SourceFile) -> dict[int, int] | None:
    """`_content_ends` read off the data the loader already built, or None where it cannot be.

    Every scalar and flow collection ends where the parser's event for it ends, and without merges,
    complex or duplicate keys the last entry of a block collection is also its last text, so the end
    of a document is found by following last entries down (depth, not size). Where that path meets
    an alias (whose positions are the anchored node's) or a collection with an anchor or tag, and
    for files that did not load cleanly, the event parser answers: re-parsing a file to find its
    documents' ends is what this avoids for the common case.
    """
    text = sf.text
    if sf.problems or sf.is_json or _unordered(text):
        return None
    ends: dict[int, int] = {}
    for doc in sf.documents:
        if doc.skip or doc.duplicates:
            return None
        end = _last_content(text, doc.data, doc.end)
        if end is None:
            return None
        ends[doc.start] = end
    return ends


def _last_content(text: str, v: Any, end: int) -> int | None:
    """End of the last content of a node (``end``: the node's end, used when it is a scalar); None
    when the path to it goes through an alias or a collection with an anchor or tag."""
    last = -1
    while isinstance(v, (LMap, LSeq)):
        first = text[v.s: v.s + 1]
        if first in ("{", "["):
            return max(last, v.e)
        if first in ("!", "&", "*") or not v:
            return None
        lc = v.lc
        if isinstance(v, LMap):
            ks, ke, vs = lc[-4], lc[-3], lc[-2]
            # a key or value placed before where it should be is shared with an earlier node
            if ks < v.s or vs < ke or (len(lc) > 4 and ks <= lc[-8]):
                return None
            last = max(last, ke)
            v, end = v[next(reversed(v))], lc[-1]
        else:
            if lc[-2] < v.s or (len(lc) > 2 and lc[-2] <= lc[-4]):
                return None
            v, end = v[-1], lc[-1]
    return max(last, end)


_ENDS: dict[str, dict[int, int]] = {}


def _content_ends(text: str) -> dict[int, int]:
    """Root start -> end of the last content of each document (from the event stream; memoised)."""
    hit = _ENDS.get(text)
    if hit is not None:
        return hit
    if len(_ENDS) >= 16:
        _ENDS.pop(next(iter(_ENDS)))
    ends: dict[int, int] = {}
    root: int | None = None
    last = -1
    flow: list[bool] = []
    ev: Any
    for ev in yaml.parse(text, Loader=_EventLoader):
        cls = ev.__class__
        if cls is yaml.DocumentStartEvent:
            root, last, flow = None, -1, []
        elif cls is yaml.DocumentEndEvent:
            if root is not None:
                ends[root] = last
        elif cls in (yaml.MappingStartEvent, yaml.SequenceStartEvent):
            if root is None:
                root = ev.start_mark.index
            flow.append(bool(ev.flow_style))
        elif cls in (yaml.MappingEndEvent, yaml.SequenceEndEvent):
            if flow and flow.pop():
                last = max(last, ev.end_mark.index)
        elif cls in (yaml.ScalarEvent, yaml.AliasEvent):
            if root is None:
                root = ev.start_mark.index
            last = max(last, ev.end_mark.index)
    if len(_ENDS) >= _PARSED_MAX:  # bounded like _PARSED: library callers run many fixes in one process
        _ENDS.pop(next(iter(_ENDS)))
    _ENDS[text] = ends
    return ends


def _trailing_comments_end(text: str, pos: int) -> int:
    """Where the comment and blank lines that follow ``pos`` (a line start) end: the start of the
    first line that is neither (a ``---``/``...`` marker, the next content) or the end of the text.
    Trailing blank lines after the last comment stay where they are (they separate documents)."""
    end = pos
    cur = pos
    while cur < len(text):
        nl = text.find("\n", cur)
        stop = len(text) if nl == -1 else nl + 1
        line = text[cur:stop].strip()
        if line.startswith("#"):
            end = stop
        elif line:
            break
        cur = stop
    return end


@dataclass
class PlannedFix:
    """A fix to apply to one object of one file (from a finding, or planned by `migrate`)."""

    rule: str
    fix: Fix
    doc_index: int
    base_path: JsonPath
    label: str = ""
    obj_path: JsonPath = ()
    #: put comments the edits would drop back in instead of lowering the applicability (migrate)
    keep_comments: bool = False

    def key(self) -> tuple[Any, ...]:
        return (self.rule, self.label, self.obj_path, self.fix.title, repr(self.fix.edits))

    def touches(self) -> list[JsonPath]:
        out: list[JsonPath] = []
        b = tuple(self.base_path)
        for e in self.fix.edits:
            p = (*b, *e.path)
            if e.op == "insert_document":
                continue
            if e.op == "replace_document":
                out.append(b)
            elif e.op == "delete" and p and isinstance(p[-1], int):
                out.append(p[:-1])
            elif e.op == "rename":
                out.extend([p, (*p[:-1], str(e.key))])
            elif e.op == "insert":
                out.append((*p, str(e.key)))
            elif e.op == "wrap":
                out.extend((*p, str(k)) for k in (*(e.value or []), e.key))
            else:
                out.append(p)
        return out


def _overlap(a: JsonPath, b: JsonPath) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


@dataclass
class Skipped:
    fix: PlannedFix
    reason: str


@dataclass
class PassResult:
    text: str
    applied: list[PlannedFix] = field(default_factory=list)
    deferred: list[PlannedFix] = field(default_factory=list)
    needs_unsafe: list[Skipped] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    failures: list[Skipped] = field(default_factory=list)
    touched: set[int] = field(default_factory=set)
    #: document index -> number of documents inserted after it
    inserted: dict[int, int] = field(default_factory=dict)
    #: id(applied fix) -> what its verification noticed (e.g. a comment it had to drop)
    notes: dict[int, list[str]] = field(default_factory=dict)
    #: document index -> positions in the result's `items` of the objects inserted into a JSON List
    new_items: dict[int, set[int]] = field(default_factory=dict)
    #: where the text changed, in order: (start, end) in the input -> (start, end) in ``text``; a
    #: rewritten region, or the documents inserted after one (an empty input span). Empty for JSON Lists.
    changes: list[tuple[int, int, int, int]] = field(default_factory=list)
    #: the input's document regions (`doc_regions`), as this pass read them
    regions: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: document index -> where its rewritten region / the documents inserted after it are in ``text``
    placed: dict[int, tuple[int, int]] = field(default_factory=dict)
    added: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: document index -> its rewritten region's text and located data, as the last edit left them
    #: (offsets from the region's start; `dralint.fix.derive` takes them instead of parsing the region)
    roots: dict[int, tuple[str, Any]] = field(default_factory=dict)


def apply_pass(sf: SourceFile, planned: Sequence[PlannedFix], required: Applicability) -> PassResult:
    """Apply one pass of non-overlapping fixes to a file's text (nothing is written)."""
    from dralint.fix.json_splice import is_json_list, json_list_pass

    if planned and is_json_list(sf) and all(len(pf.base_path) == 2 and pf.base_path[0] == "items"
                                            for pf in planned):
        # a JSON List is edited item by item, and new objects become items (JSON holds one value)
        result: PassResult = json_list_pass(sf, planned, required)
        return result
    text = sf.text
    out = PassResult(text)
    try:
        regions = doc_regions(sf)
    except yaml.YAMLError:
        for pf in planned:
            out.skipped.append(Skipped(pf, "the file has YAML syntax errors; fix those first"))
        return out
    out.regions = regions
    by_doc: dict[int, list[PlannedFix]] = defaultdict(list)
    for pf in planned:
        by_doc[pf.doc_index].append(pf)
    new_regions: dict[int, str] = {}
    new_docs: dict[int, list[str]] = defaultdict(list)
    for di in sorted(by_doc):
        if di not in regions:
            for pf in by_doc[di]:
                out.skipped.append(Skipped(pf, "the document's content starts on its `---` line"))
            continue
        s, e = regions[di]
        region = text[s:e]
        crlf = "\r\n" in region
        work = region.replace("\r\n", "\n") if crlf else region
        if not crlf and not sf.is_json:
            _known_region(sf, di, s, e, work)
        try:
            style = detect_style(work, _parse(work)) if not sf.is_json else Style()
        except Refuse as why:
            for pf in by_doc[di]:
                out.skipped.append(Skipped(pf, str(why)))
            continue
        accepted: list[JsonPath] = []
        root: Any = None  # the located data of `work`, when the last edit knows it
        for pf in by_doc[di]:
            touch = pf.touches()
            if any(_overlap(a, b) for a in touch for b in accepted):
                out.deferred.append(pf)
                continue
            if pf.fix.applicability < required:
                out.needs_unsafe.append(Skipped(pf, "the fix is marked unsafe"))
                continue
            try:
                res = edit_region(work, pf.base_path, pf.fix.edits, style, sf.is_json, pf.keep_comments)
            except EditError as err:
                out.failures.append(Skipped(pf, str(err)))
                continue
            except Refuse as why:
                out.skipped.append(Skipped(pf, str(why)))
                continue
            if min(pf.fix.applicability, res.cap) < required:
                out.needs_unsafe.append(Skipped(pf, "; ".join(res.notes) or "the fix is marked unsafe"))
                continue
            work, root = res.text, res.root
            accepted.extend(touch)
            out.applied.append(pf)
            if res.notes:
                out.notes[id(pf)] = res.notes
            for ed in pf.fix.edits:
                if ed.op == "insert_document":
                    new_docs[di].append(emit_document(to_plain(ed.value), style, ed.comment))
        if work != (region.replace("\r\n", "\n") if crlf else region):
            new_regions[di] = work.replace("\n", "\r\n") if crlf else work
            out.touched.add(di)
            if root is not None and not crlf:  # with CRLF, the offsets of `work` are not the file's
                out.roots[di] = (work, root)
    if not new_regions and not new_docs:
        return out
    pieces: list[str] = []
    pos = 0
    size = 0  # the length of the result so far (of `pieces`)

    def put(piece: str) -> None:
        nonlocal size
        pieces.append(piece)
        size += len(piece)

    for di in sorted(set(new_regions) | set(new_docs), key=lambda d: regions[d][0]):
        s, e = regions[di]
        put(text[pos:s])
        if di in new_regions:
            out.changes.append((s, e, size, size + len(new_regions[di])))
            out.placed[di] = (size, size + len(new_regions[di]))
        put(new_regions.get(di, text[s:e]))
        pos = e
        if di in new_docs:
            # the comments (and blank lines) after the document's last content are still the
            # document's (commented-out lines of a pod spec, a closing note): the new documents go
            # after them, so that uncommenting them does not land inside an inserted object
            tail = _trailing_comments_end(text, pos)
            if tail > pos:
                put(text[pos:tail])
                pos = tail
            m = re.match(r"\.\.\.[ \t]*(#[^\n]*)?(\r?\n|$)", text[pos:])
            if m:
                put(text[pos: pos + m.end()])
                pos += m.end()
            nl = sf.newline
            prefix = "" if (pieces[-1].endswith("\n") or not pieces[-1]) else nl
            at = size
            for doc_text in new_docs[di]:
                put(prefix + "---" + nl + doc_text.replace("\n", nl))
                prefix = ""
            out.changes.append((pos, pos, at, size))
            out.added[di] = (at, size)
            out.inserted[di] = len(new_docs[di])
    put(text[pos:])
    out.text = "".join(pieces)
    return out
