"""Edits as data: what a `dralint.model.Edit` means on plain data, independent of any text.

`apply_plain` is the meaning every text edit is verified against (the fixed region, parsed again,
must equal it); `diff_edits` turns one document's data into another's as primitive edits."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dralint.model import Edit, JsonPath, same, to_plain


class EditError(Exception):
    """The fix does not fit the document (missing path, wrong type): a bug in the rule's fix."""



def fmt_path(path: Sequence[str | int]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(document)"


def _step(node: Any, key: str | int, path: JsonPath) -> Any:
    if isinstance(node, dict) and isinstance(key, str):
        if key not in node:
            raise EditError(f"`{fmt_path(path)}` does not exist")
        return node[key]
    if isinstance(node, list) and isinstance(key, int) and -len(node) <= key < len(node):
        return node[key]
    raise EditError(f"`{fmt_path(path)}` does not exist")


def _container(data: Any, path: JsonPath, create: bool) -> Any:
    """The node at ``path``; with ``create``, missing mapping levels (and nulls) become mappings."""
    node = data
    for i, k in enumerate(path):
        if create and isinstance(node, dict) and isinstance(k, str) and node.get(k) is None:
            node[k] = {}
        node = _step(node, k, path[: i + 1])
    return node


def _norm_index(seq: list[Any], i: int) -> int:
    return i + len(seq) if i < 0 else i


def apply_plain(data: Any, base: JsonPath, edits: Iterable[Edit]) -> Any:
    """The document data after ``edits`` (a deep copy; ``data`` is not changed)."""
    root: dict[str, Any] = {"": to_plain(data)}
    for e in edits:
        _apply_plain_one(root, ("", *base, *e.path), e, ("", *base))
    return root[""]


def _apply_plain_one(root: dict[str, Any], p: JsonPath, e: Edit, base: JsonPath) -> None:
    shown = p[1:]
    op = e.op
    if op == "insert_document":
        return
    if op == "replace_document":
        parent = _container(root, base[:-1], False)
        parent[base[-1]] = to_plain(e.value)
        return
    if op == "set":
        parent = _container(root, p[:-1], True)
        if isinstance(parent, dict) and isinstance(p[-1], str):
            parent[p[-1]] = to_plain(e.value)
        elif isinstance(parent, list) and isinstance(p[-1], int) and p[-1] == len(parent):
            parent.append(to_plain(e.value))
        elif isinstance(parent, list) and isinstance(p[-1], int) and -len(parent) <= p[-1] < len(parent):
            parent[p[-1]] = to_plain(e.value)
        else:
            raise EditError(f"cannot set `{fmt_path(shown)}`: its parent is not a mapping or sequence")
        return
    if op == "delete":
        parent = _container(root, p[:-1], False)
        _step(parent, p[-1], shown)
        del parent[p[-1]]
        return
    if op in ("insert", "append"):
        holder = _container(root, p[:-1], True)
        last = p[-1]
        if isinstance(holder, dict) and isinstance(last, str) and holder.get(last) is None:
            holder[last] = {} if op == "insert" else []
        node = _container(root, p, False)
        if op == "append":
            if not isinstance(node, list):
                raise EditError(f"cannot append to `{fmt_path(shown)}`: not a sequence")
            node.append(to_plain(e.value))
            return
        if not isinstance(node, dict) or not isinstance(e.key, str):
            raise EditError(f"cannot insert into `{fmt_path(shown)}`: not a mapping")
        if e.key in node:
            node[e.key] = to_plain(e.value)
            return
        items = list(node.items())
        if e.after is not None and e.after in node:
            pos = list(node).index(e.after) + 1
        elif e.index is not None:
            pos = max(0, min(e.index, len(items)))
        else:
            pos = len(items)
        items.insert(pos, (e.key, to_plain(e.value)))
        node.clear()
        node.update(items)
        return
    if op == "rename":
        parent = _container(root, p[:-1], False)
        _step(parent, p[-1], shown)
        if not isinstance(parent, dict) or not isinstance(e.key, str):
            raise EditError(f"cannot rename `{fmt_path(shown)}`: not a mapping key")
        if e.key in parent and e.key != p[-1]:
            raise EditError(f"cannot rename `{fmt_path(shown)}` to `{e.key}`: the key exists")
        items = [(e.key if k == p[-1] else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
        return
    if op == "wrap":
        node = _container(root, p, False)
        keys = list(e.value or [])
        if not isinstance(node, dict) or not isinstance(e.key, str):
            raise EditError(f"cannot wrap keys of `{fmt_path(shown)}`: not a mapping")
        moved = [k for k in node if k in keys]
        if not moved:
            raise EditError(f"none of {keys} is in `{fmt_path(shown)}`")
        if e.key in node:
            raise EditError(f"`{fmt_path((*shown, e.key))}` exists already")
        wrapped: list[tuple[str, Any]] = []
        for k, v in node.items():
            if k == moved[0]:
                wrapped.append((e.key, {m: node[m] for m in moved}))
            if k not in moved:
                wrapped.append((k, v))
        node.clear()
        node.update(wrapped)
        return
    if op == "unwrap":
        parent = _container(root, p[:-1], False)
        child = _step(parent, p[-1], shown)
        if not isinstance(parent, dict) or not isinstance(child, dict):
            raise EditError(f"cannot unwrap `{fmt_path(shown)}`: not a mapping inside a mapping")
        clash = set(child) & (set(parent) - {p[-1]})
        if clash:
            raise EditError(f"cannot unwrap `{fmt_path(shown)}`: {sorted(clash)} exist next to it")
        items = []
        for k, v in parent.items():
            if k == p[-1]:
                items.extend(child.items())
            else:
                items.append((k, v))
        parent.clear()
        parent.update(items)
        return
    raise EditError(f"unknown edit operation {op!r}")


def diff_edits(old: Any, new: Any, path: JsonPath = ()) -> list[Edit]:
    """Primitive edits (set/delete/insert/append, full paths) that turn ``old`` into ``new``.

    Applied in order, every path stays valid: changes inside kept keys and items come first,
    then deletions (sequence items from the end), then additions in their new order.
    """
    if isinstance(old, dict) and isinstance(new, dict) and old and new:
        out: list[Edit] = []
        for k in old:
            if k in new and not same(old[k], new[k]):
                out.extend(diff_edits(old[k], new[k], (*path, k)))
        out.extend(Edit("delete", (*path, k)) for k in old if k not in new)
        prev: str | None = None
        for k in new:
            if k not in old:
                out.append(Edit("insert", path, value=new[k], key=k, after=prev, index=None if prev else 0))
            prev = k
        return out
    if isinstance(old, list) and isinstance(new, list) and old and new:
        out = []
        for i in range(min(len(old), len(new))):
            if not same(old[i], new[i]):
                out.extend(diff_edits(old[i], new[i], (*path, i)))
        out.extend(Edit("delete", (*path, i)) for i in range(len(old) - 1, len(new) - 1, -1))
        out.extend(Edit("append", path, value=v) for v in new[len(old):])
        return out
    if same(old, new):
        return []
    return [Edit("set", path, value=new)]
