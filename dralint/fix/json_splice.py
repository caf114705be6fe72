"""Fixes on the items of a JSON ``kind: List`` file, edited as JSON text.

A JSON file holds one value, so a new object (the ResourceClaimTemplate of a migrated workload)
cannot follow the document the way a YAML ``---`` document does: it goes into the List's ``items``,
right after the item it belongs to. Only the members a fix changes are written anew; every other
byte of the file (the other items, the members of the changed item that stay the same, spacing,
inline ``{...}`` mappings) is copied from the input.

How a changed value is written: a mapping or list that spans several lines keeps one member per line
at the column of its first member (the layout of ``kubectl get -o json``); one written on a single
line stays on one line. New values take the indentation step of the item they go into. The result
must parse to exactly the data the edits describe, or the fix is not applied.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from dralint.fix.edits import EditError, apply_plain
from dralint.inputs.load import LMap, LSeq, SourceFile
from dralint.model import Applicability, same, to_plain


class _Unfit(Exception):
    """The value cannot be rewritten in place (the caller writes the whole item instead)."""


def is_json_list(sf: SourceFile) -> bool:
    """A JSON file whose one value is a ``kind: List`` with an ``items`` list."""
    if not sf.is_json or len(sf.documents) != 1:
        return False
    data = sf.documents[0].data
    return isinstance(data, LMap) and data.get("kind") == "List" and isinstance(data.get("items"), LSeq)


def _item_index(base: Sequence[Any]) -> int | None:
    if len(base) == 2 and base[0] == "items" and isinstance(base[1], int):
        return base[1]
    return None


class _Writer:
    def __init__(self, text: str, newline: str) -> None:
        self.t = text
        self.nl = newline

    def col(self, off: int) -> int:
        return off - (self.t.rfind("\n", 0, off) + 1)

    def dump(self, v: Any, col: int, unit: int | None) -> str:
        """A new value at column ``col``: one member per line with step ``unit``, or on one line."""
        if unit is None:
            return json.dumps(v, ensure_ascii=False)
        lines = json.dumps(v, indent=unit, ensure_ascii=False).split("\n")
        return (self.nl + " " * col).join(lines)

    def value(self, node: Any, s: int, e: int, new: Any, unit: int | None) -> str:
        """The text of the value at ``s:e`` (``node`` as loaded) rewritten to hold ``new``."""
        if same(to_plain(node), new):
            return self.t[s:e]
        if isinstance(node, LMap) and isinstance(new, dict):
            return self._mapping(node, s, e, new, unit)
        if isinstance(node, LSeq) and isinstance(new, list):
            return self._sequence(node, s, e, new, unit)
        return self.dump(new, self.col(s), unit if "\n" in self.t[s:e] or isinstance(new, (dict, list)) else None)

    def _layout(self, s: int, e: int, first: int | None, unit: int | None) -> tuple[int | None, int, int | None]:
        """(member column or None when on one line, closing column, indentation step)."""
        if "\n" not in self.t[s:e]:
            return None, self.col(s), None
        close = self.col(e - 1)
        member = self.col(first) if first is not None else close + (unit or 2)
        if first is not None and self.t.rfind("\n", s, first) == -1:
            raise _Unfit("the first member shares the opening line")
        return member, close, (member - close) if member > close else (unit or 2)

    def _join(self, parts: list[str], member: int | None, close: int, opener: str, closer: str) -> str:
        if not parts:
            return opener + closer
        if member is None:
            return opener + ", ".join(parts) + closer
        sep = "," + self.nl + " " * member
        return opener + self.nl + " " * member + sep.join(parts) + self.nl + " " * close + closer

    def _mapping(self, node: LMap, s: int, e: int, new: dict[str, Any], unit: int | None) -> str:
        keys = list(node)
        lc = node.lc
        member, close, step = self._layout(s, e, lc[0] if keys else None, unit)
        parts: list[str] = []
        for k, v in new.items():
            if k in node:
                i = keys.index(k)
                ks, _, vs, ve = lc[i * 4: i * 4 + 4]
                parts.append(self.t[ks:vs] + self.value(node[k], vs, ve, v, step) if not same(to_plain(node[k]), v)
                             else self.t[ks:ve])
            else:
                col = member if member is not None else 0
                parts.append(json.dumps(k, ensure_ascii=False) + ": " + self.dump(v, col, step))
        return self._join(parts, member, close, "{", "}")

    def _sequence(self, node: LSeq, s: int, e: int, new: list[Any], unit: int | None) -> str:
        lc = node.lc
        member, close, step = self._layout(s, e, lc[0] if len(node) else None, unit)
        parts: list[str] = []
        for i, v in enumerate(new):
            if i < len(node):
                parts.append(self.value(node[i], lc[i * 2], lc[i * 2 + 1], v, step))
            else:
                parts.append(self.dump(v, member if member is not None else 0, step))
        if len(new) < len(node) and any(not same(to_plain(node[i]), new[i]) for i in range(len(new))):
            raise _Unfit("items were removed and changed")
        return self._join(parts, member, close, "[", "]")


def json_list_pass(sf: SourceFile, planned: Sequence[Any], required: Applicability) -> Any:
    """One pass of fixes over a JSON List file (see the module docstring); a `PassResult`."""
    from dralint.fix.splice import PassResult, Skipped  # the splicer hands JSON Lists to this module

    text = sf.text
    out = PassResult(text)
    root = sf.documents[0].data
    items: LSeq = root["items"]
    by_item: dict[int, list[Any]] = defaultdict(list)
    for pf in planned:
        i = _item_index(pf.base_path)
        if i is None or not 0 <= i < len(items):
            out.skipped.append(Skipped(pf, "the fix is not on an item of the List"))
            continue
        by_item[i].append(pf)
    # new lines take the file's line ending (positions are those of the text as read, CR included)
    w = _Writer(text, sf.newline)
    keys = list(root)
    k = keys.index("items")
    list_s, list_e = root.lc[k * 4 + 2], root.lc[k * 4 + 3]
    multiline = "\n" in text[list_s:list_e]
    edits_at: list[tuple[int, int, str]] = []
    inserted_at: list[int] = []
    for i in sorted(by_item):
        fixes = by_item[i]
        pf, rest = fixes[0], fixes[1:]
        out.deferred.extend(rest)  # one fix per item and pass; the loop applies the others next
        if pf.fix.applicability < required:
            out.needs_unsafe.append(Skipped(pf, "the fix is marked unsafe"))
            continue
        s, e = _span(items, i)
        node = items[i]
        body = [ed for ed in pf.fix.edits if ed.op != "insert_document"]
        try:
            target = apply_plain(node, (), body)
        except EditError as err:
            out.failures.append(Skipped(pf, str(err)))
            continue
        unit = _unit(w, node, s, e)
        try:
            new_text = w.value(node, s, e, target, unit)
        except _Unfit as why:
            out.skipped.append(Skipped(pf, f"the List item cannot be edited in place: {why}"))
            continue
        try:
            if not same(json.loads(new_text), target):
                raise ValueError("different data")
        except ValueError:
            out.skipped.append(Skipped(pf, "the edited List item does not hold the intended data"))
            continue
        col = w.col(s)
        for ed in pf.fix.edits:
            if ed.op == "insert_document":
                sep = ("," + w.nl + " " * col) if multiline else ", "
                new_text += sep + w.dump(to_plain(ed.value), col, unit)
                inserted_at.append(i + len(inserted_at) + 1)
        edits_at.append((s, e, new_text))
        out.applied.append(pf)
    if not edits_at:
        return out
    pieces: list[str] = []
    pos = 0
    for s, e, t in sorted(edits_at):
        pieces.extend([text[pos:s], t])
        pos = e
    pieces.append(text[pos:])
    out.text = "".join(pieces)
    out.touched.add(0)
    out.new_items = {0: set(inserted_at)}
    return out


def _span(seq: LSeq, i: int) -> tuple[int, int]:
    return seq.lc[i * 2], seq.lc[i * 2 + 1]


def _unit(w: _Writer, node: Any, s: int, e: int) -> int | None:
    """The indentation step inside an item (None for an item on one line)."""
    if "\n" not in w.t[s:e] or not isinstance(node, LMap) or not len(node):
        return None if "\n" not in w.t[s:e] else 2
    step = w.col(node.lc[0]) - w.col(s)
    return step if step > 0 else 2


def remap_items(before: set[int], inserted: set[int]) -> set[int]:
    """Positions of earlier-inserted items after a pass inserted ``inserted`` (positions in the result):
    the old items fill the other positions in order."""
    slots: list[int] = []
    x = 0
    need = max(before) + 1 if before else 0
    while len(slots) < need:
        if x not in inserted:
            slots.append(x)
        x += 1
    return set(inserted) | {slots[p] for p in before}
