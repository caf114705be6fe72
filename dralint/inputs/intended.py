"""The object the author meant, when a shape mistake leaves no doubt about it.

Two mistakes from migration guides hide a claim from the rules that judge what it asks for:
v1beta1 request fields written directly under ``requests[]`` of a v1/v1beta2 object (DRA108) and
a ResourceClaimTemplate's claim spec written directly under ``spec`` (DRA109). Each has exactly one
reading (what the safe fix of that rule writes), so the semantic rules judge that reading instead of
finding nothing where they look. `shape_view(obj)` is the object rewritten into it; `View.origin`
maps a path of the rewritten object back to the written one, so findings, fixes and Helm source
mapping keep addressing the user's file.

Positions need no mapping: the rewritten tree reuses the located nodes of the file, and a wrapper
it adds (``spec.spec``, ``exactly``) carries the position of the first key it took in, so `locate` on
the rewritten document points at what the author wrote.

The same steps (`Step`, `apply`) serve the v1beta1/v1alpha3 → v1 conversion, which needs the
target profile and so lives with the rules (`dralint.checks.intended`).
"""

from __future__ import annotations

import dataclasses
import weakref
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dralint.inputs.index import K8sObject
from dralint.inputs.load import LMap, LSeq
from dralint.knowledge import k8s, lifecycle
from dralint.model import Edit, JsonPath

CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")


@dataclass(frozen=True)
class Moved:
    """One rewrite: children of the node at ``at`` (rewritten object) are at ``was`` in the input.

    ``keys`` names the children that moved (None: every path below ``at``); ``made`` says the node
    at ``at`` itself does not exist in the input (a wrapper the rewrite added).
    """

    at: JsonPath
    was: JsonPath
    keys: frozenset[str] | None
    made: bool

    def back(self, path: JsonPath) -> tuple[JsonPath, bool]:
        """``path`` one rewrite earlier, and whether it names a node the input really has."""
        n = len(self.at)
        if path[:n] != self.at:
            return path, True
        if len(path) == n:
            return self.was, not self.made
        if self.keys is not None and path[n] not in self.keys:
            return path, True
        return (*self.was, *path[n:]), True


@dataclass(frozen=True)
class View:
    """A rewritten object and how its paths map back to the written one."""

    obj: K8sObject
    moves: tuple[Moved, ...]
    #: the rewrite changed the API version (a conversion), not only the shape
    converted: bool = False

    def origin(self, path: JsonPath) -> tuple[JsonPath, bool]:
        """The written object's path for ``path``; False when it names a wrapper the rewrite made."""
        exact = True
        for m in reversed(self.moves):
            path, ok = m.back(path)
            exact = exact and ok
        return path, exact

    def edit(self, e: Edit) -> Edit | None:
        """An edit of the rewritten object as an edit of the written one (None when it has none)."""
        path, exact = self.origin(e.path)
        return dataclasses.replace(e, path=path) if exact else None


@dataclass(frozen=True)
class Step:
    """A structural rewrite, in the vocabulary of `dralint.model.Edit` (wrap, unwrap, set, delete)."""

    op: str
    path: JsonPath
    key: str | None = None
    keys: tuple[str, ...] = ()
    value: Any = None


# ----------------------------------------------------------------------------------------------
# located copies: only the nodes on a changed path are copied, every other node is the file's own


def _copy(node: Any) -> Any:
    if isinstance(node, LMap):
        out = LMap(node)
        out.lc, out.s, out.e = array("q", node.lc), node.s, node.e
        return out
    if isinstance(node, LSeq):
        seq = LSeq(node)
        seq.lc, seq.s, seq.e = array("q", node.lc), node.s, node.e
        return seq
    if isinstance(node, dict):
        return dict(node)
    if isinstance(node, list):
        return list(node)
    return node


def _entries(m: dict[str, Any]) -> list[tuple[Any, Any, tuple[int, ...]]]:
    """(key, value, positions) of a mapping, in order; positions are empty for unlocated data."""
    lc = m.lc if isinstance(m, LMap) else None
    return [(k, v, tuple(lc[i * 4: i * 4 + 4]) if lc is not None and len(lc) >= i * 4 + 4 else ())
            for i, (k, v) in enumerate(m.items())]


def _mapping(entries: Iterable[tuple[Any, Any, tuple[int, ...]]], located: bool) -> dict[str, Any]:
    items = list(entries)
    if not located or any(not pos for _, _, pos in items):
        return {k: v for k, v, _ in items}
    out = LMap((k, v) for k, v, _ in items)
    out.lc = array("q", [x for _, _, pos in items for x in pos])
    out.s = items[0][2][0] if items else 0
    out.e = items[-1][2][3] if items else 0
    return out


def _with(root: Any, path: JsonPath, fn: Any) -> Any:
    """``root`` with the node at ``path`` replaced by ``fn(node)``, copying only the nodes on the way."""
    if not path:
        return fn(root)
    head, rest = path[0], path[1:]
    out = _copy(root)
    out[head] = _with(root[head], rest, fn)
    return out


def _wrap(node: dict[str, Any], keys: tuple[str, ...], key: str) -> dict[str, Any]:
    located = isinstance(node, LMap)
    items = _entries(node)
    moved = [x for x in items if x[0] in keys]
    inner = _mapping(moved, located)
    pos: tuple[int, ...] = ()
    if located and moved and all(p for _, _, p in moved):
        # the wrapper key stands where the first moved key is written; its value spans the moved keys
        pos = (moved[0][2][0], moved[0][2][1], moved[0][2][0], moved[-1][2][3])
    out: list[tuple[Any, Any, tuple[int, ...]]] = []
    for k, v, p in items:
        if k in keys:
            if k == moved[0][0]:
                out.append((key, inner, pos))
            continue
        out.append((k, v, p))
    return _mapping(out, located and bool(pos))


def _unwrap(node: dict[str, Any], key: str) -> dict[str, Any]:
    located = isinstance(node, LMap)
    out: list[tuple[Any, Any, tuple[int, ...]]] = []
    for k, v, p in _entries(node):
        if k == key:
            if isinstance(v, dict):
                out.extend(_entries(v))
            continue
        out.append((k, v, p))
    return _mapping(out, located)


def _set(node: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    located = isinstance(node, LMap)
    out: list[tuple[Any, Any, tuple[int, ...]]] = []
    for k, v, p in _entries(node):
        if k != key:
            out.append((k, v, p))
            continue
        if isinstance(value, dict) and len(value) == 1 and not isinstance(v, dict) \
                and next(iter(value.values())) == v and p:
            # a scalar boxed into a one-key mapping (a bare capacity quantity → {value: q}) keeps its place
            out.append((k, _mapping([(next(iter(value)), v, (p[2], p[3], p[2], p[3]))], True), p))
        else:
            out.append((k, value, p))
    if key not in node:
        out.append((key, value, ()))
        located = False
    return _mapping(out, located)


def _delete(node: dict[str, Any], key: str) -> dict[str, Any]:
    return _mapping([x for x in _entries(node) if x[0] != key], isinstance(node, LMap))


def apply(view: View, steps: Iterable[Step], converted: bool = False) -> View:
    """``view`` rewritten by ``steps`` (paths in the coordinates after the earlier steps)."""
    data: Any = view.obj.data
    moves = list(view.moves)
    for s in steps:
        target = k8s.get(data, *s.path) if s.path else data
        if s.op == "wrap" and isinstance(target, dict) and s.key:
            keys = tuple(k for k in s.keys if k in target)
            if not keys:
                continue
            data = _with(data, s.path, lambda n, s=s, keys=keys: _wrap(n, keys, s.key or ""))
            moves.append(Moved((*s.path, s.key), s.path, frozenset(keys), made=True))
        elif s.op == "unwrap" and s.path and isinstance(k8s.get(data, *s.path[:-1]), dict):
            inner = target if isinstance(target, dict) else {}
            last = str(s.path[-1])
            data = _with(data, s.path[:-1], lambda n, last=last: _unwrap(n, last))
            moves.append(Moved(s.path[:-1], s.path, frozenset(inner), made=False))
        elif s.op in ("set", "delete") and s.path and isinstance(k8s.get(data, *s.path[:-1]), dict):
            last = str(s.path[-1])
            if s.op == "set":
                data = _with(data, s.path[:-1], lambda n, last=last, s=s: _set(n, last, s.value))
                if isinstance(s.value, dict) and not isinstance(target, dict):
                    moves.append(Moved((*s.path, next(iter(s.value), "")), s.path, None, made=False))
            else:
                data = _with(data, s.path[:-1], lambda n, last=last: _delete(n, last))
    if data is view.obj.data:
        return view
    return View(_rebuilt(view.obj, data), tuple(moves), view.converted or converted)


def _rebuilt(obj: K8sObject, data: dict[str, Any]) -> K8sObject:
    """A K8sObject for ``data`` whose document holds it at the original place (for `locate`)."""
    root = data if not obj.base_path else _with(obj.doc.data, obj.base_path, lambda _: data)
    out = K8sObject(obj.file, dataclasses.replace(obj.doc, data=root), data, obj.base_path, obj.target)
    _WRITTEN[out] = written(obj)
    return out


#: rewritten object -> the indexed object it was made from
_WRITTEN: weakref.WeakKeyDictionary[K8sObject, K8sObject] = weakref.WeakKeyDictionary()


def written(obj: K8sObject) -> K8sObject:
    """The object of the index that ``obj`` is a rewrite of (``obj`` itself when it is not one): for
    rules that compare the object in hand with the index's objects. Paths of the written object stay
    valid on a rewrite (no rewrite adds a wrapper where the input has a node)."""
    return _WRITTEN.get(obj, obj)


def steps_from_edits(edits: Iterable[Edit]) -> list[Step]:
    """A fix's structural edits as rewrite steps (inserts and document edits have no place here)."""
    out = []
    for e in edits:
        if e.op == "wrap":
            out.append(Step("wrap", e.path, key=e.key, keys=tuple(e.value or ())))
        elif e.op in ("unwrap", "delete", "set"):
            out.append(Step(e.op, e.path, value=e.value))
    return out


# ----------------------------------------------------------------------------------------------
# DRA108 / DRA109: the two shape mistakes with one reading


def _claim_spec_fields() -> tuple[str, ...]:
    return tuple(str(f) for f in lifecycle.shapes().get("claim_spec_fields") or ())


def _flat_fields() -> tuple[str, ...]:
    return tuple(str(f) for f in lifecycle.shapes().get("flat_request_fields") or ())


def shape_steps(obj: K8sObject) -> list[Step]:
    """The rewrites that put a claim's misplaced fields where they belong, when the intent is plain:
    a template's claim spec without a ``spec.spec`` to clash with, a flat request without an
    ``exactly`` or ``firstAvailable`` of its own (otherwise DRA108/DRA109 ask for a human look)."""
    if obj.group != k8s.DRA_GROUP or obj.kind not in CLAIM_KINDS:
        return []
    steps: list[Step] = []
    spec = obj.data.get("spec")
    base: JsonPath = ("spec", "spec") if obj.kind == "ResourceClaimTemplate" else ("spec",)
    holder = k8s.get(obj.data, *base)
    if obj.kind == "ResourceClaimTemplate" and isinstance(spec, dict) and "spec" not in spec:
        moved = tuple(k for k in spec if k in _claim_spec_fields())
        if moved:
            steps.append(Step("wrap", ("spec",), key="spec", keys=moved))
            holder = spec
    if (lifecycle.shapes().get("request") or {}).get(obj.version) != "exactly" or not isinstance(holder, dict):
        return steps
    reqs = k8s.get(holder, "devices", "requests")
    for i, r in enumerate(reqs if isinstance(reqs, list) else []):
        if not isinstance(r, dict) or "exactly" in r or "firstAvailable" in r:
            continue
        flat = tuple(k for k in r if k in _flat_fields())
        if flat:
            steps.append(Step("wrap", (*base, "devices", "requests", i), key="exactly", keys=flat))
    return steps


_SHAPE: weakref.WeakKeyDictionary[K8sObject, View | None] = weakref.WeakKeyDictionary()


def shape_view(obj: K8sObject) -> View | None:
    """``obj`` with its DRA108/DRA109 mistakes corrected, or None when it has none (most objects)."""
    if obj.group != k8s.DRA_GROUP or obj.kind not in CLAIM_KINDS:
        return None
    try:
        return _SHAPE[obj]
    except KeyError:
        pass
    steps = shape_steps(obj)
    view = apply(View(obj, ()), steps) if steps else None
    out = view if view is not None and view.obj is not obj else None
    _SHAPE[obj] = out
    return out


def origin(obj: K8sObject, path: JsonPath) -> JsonPath:
    """``path`` of `shape_view(obj)` as a path of ``obj`` (what readers of other objects report)."""
    view = shape_view(obj)
    return view.origin(path)[0] if view is not None else path
