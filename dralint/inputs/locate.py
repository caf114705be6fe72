"""The one place that turns an object path into a file position.

Rules never compute positions: they yield a path (``("spec", "containers", 0, "resources")``) and
say whether they mean the key or the value; `locate` walks the located data from the loader.
A path that does not exist (a *missing* field) resolves to the deepest part that does, so that
"missing X" findings point at the parent that should hold X.
"""

from __future__ import annotations

from typing import Any, Literal

from dralint.inputs.load import Document, LMap, LSeq, SourceFile
from dralint.model import JsonPath, Span


def offsets(data: Any, path: JsonPath, on: Literal["key", "value"] = "key") -> tuple[int, int, bool]:
    """Character offsets (start, end) for ``path`` in ``data``; the flag says the path was complete."""
    node = data
    start, end = getattr(data, "s", 0), getattr(data, "s", 0)
    if isinstance(data, (LMap, LSeq)):
        start, end = _first_line(data)
    for depth, step in enumerate(path):
        last = depth == len(path) - 1
        if isinstance(node, LMap) and isinstance(step, str) and step in node:
            i = _key_index(node, step)
            ks, ke, vs, ve = node.lc[i * 4 : i * 4 + 4]
            if last and on == "key":
                return ks, ke, True
            start, end = (vs, ve) if last else (ks, ke)
            node = node[step]
        elif isinstance(node, LSeq) and isinstance(step, int) and -len(node) <= step < len(node):
            i = step % len(node)
            s, e = node.lc[i * 2], node.lc[i * 2 + 1]
            start, end = s, e
            node = node[i]
            if not last and isinstance(node, (LMap, LSeq)):
                start, end = _first_line(node)
        else:
            return start, end, False
    if isinstance(node, (LMap, LSeq)) and on == "key":
        start, end = _first_line(node)
    return start, end, True


def _key_index(node: LMap, key: str) -> int:
    for i, k in enumerate(node):
        if k == key:
            return i
    raise KeyError(key)  # pragma: no cover - callers check membership first


def _first_line(node: LMap | LSeq) -> tuple[int, int]:
    """A collection is shown by its first entry (its first key), not by its whole extent."""
    if isinstance(node, LMap) and len(node.lc) >= 2:
        return node.lc[0], node.lc[1]
    if isinstance(node, LSeq) and len(node.lc) >= 2:
        return node.lc[0], node.lc[1]
    return node.s, node.e


def locate(sf: SourceFile, doc: Document, path: JsonPath, on: Literal["key", "value"] = "key") -> Span:
    """The 1-based span of ``path`` (relative to the document root) in the file."""
    if doc.data is None:
        return sf.span(doc.start, doc.start)
    start, end, _ = offsets(doc.data, path, on)
    if end > start and sf.text.find("\n", start, end) != -1 and on == "value":
        # a block value: point at its first line only
        nl = sf.text.find("\n", start, end)
        end = nl
    return sf.span(start, end)
