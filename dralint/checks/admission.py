"""The object the API server validates: decoded, defaulted, and without the fields of disabled gates.

The API server does not validate what the author wrote but what is left after two steps
(reference: ../shared/conformance/apiserver-1.35/README.md): v1 defaulting (`count: 0` → 1, an
empty `allocationMode` → `ExactCount`, an empty toleration operator → `Equal`, Go zero values for
fields the validation accepts at zero) and the create strategy's drop of fields whose feature gate
is off. Validating the written object instead rejects what the server accepts (`count: 0`) and
reports errors inside fields the server throws away (an invalid toleration under an off
DRADeviceTaints gate; DRA501 reports the drop itself).

`defaulted(obj, ctx)` is the object after defaults (what DRA101 checks: decoding-level type errors
inside a dropped field still fail, since decoding comes first); `admitted(obj, ctx)` is after the
drops too (what DRA104 checks). Both return copies: the loaded data is shared and never mutated.
Positions stay those of the written object: defaults only change or add valid values, and drops
only remove, so every path a rule reports on still exists in the file.
"""

from __future__ import annotations

import dataclasses
from functools import cache, lru_cache
from typing import Any

from dralint.checks.registry import Context
from dralint.inputs.index import K8sObject
from dralint.inputs.load import LMap, LSeq
from dralint.knowledge import k8s
from dralint.knowledge.catalog import load_data
from dralint.knowledge.lifecycle import GROUP, expand, match_paths, minor_key
from dralint.model import MEMO_KEY_CHARS, JsonPath


@dataclasses.dataclass(frozen=True)
class Default:
    kinds: tuple[str, ...]
    versions: tuple[str, ...]
    at: tuple[str, ...]
    field: str
    value: Any
    when: tuple[tuple[str, Any], ...]
    requires: tuple[str, ...]
    since: str | None


@cache
def defaults() -> tuple[Default, ...]:
    raw = load_data("kubernetes/defaults.yaml") or {}
    out = []
    for d in raw.get("defaults") or ():
        out.append(Default(tuple(d.get("kinds") or ()), tuple(d.get("versions") or ()), tuple(d["at"]), d["field"],
                           d["value"], tuple((d.get("if") or {}).items()), tuple(d.get("requires") or ()),
                           d.get("minors")))
    return tuple(out)


Plan = tuple[tuple[Default, tuple[tuple[JsonPath, str], ...]], ...]


def _plan(kind: str, version: str, minor: str | None) -> Plan:
    """The defaults for ``kind`` in ``version`` under ``minor``, each with where it applies: (the
    path of the part a pattern starts from, the pattern below it). Worked out once per kind and
    version, not for every object; the strings come from the linted files, so only short ones are
    memoised (`MEMO_KEY_CHARS`)."""
    if len(kind) + len(version) > MEMO_KEY_CHARS:
        return _make_plan(kind, version, minor)
    return _memo_plan(kind, version, minor)


def _make_plan(kind: str, version: str, minor: str | None) -> Plan:
    out = []
    for d in defaults():
        if (d.kinds and kind not in d.kinds) or (d.versions and version not in d.versions):
            continue
        if d.since and minor and minor_key(minor) < minor_key(d.since):
            continue
        out.append((d, tuple(place for pattern in d.at for place in expand(pattern, kind, []))))
    return tuple(out)


_memo_plan = lru_cache(maxsize=64)(_make_plan)


def _unset(value: Any) -> bool:
    return value is None or value == "" or (value == 0 and not isinstance(value, bool))


def apply_defaults(data: dict[str, Any], kind: str, version: str, minor: str | None) -> dict[str, Any]:
    """``data`` with the API server's defaults for ``kind`` in ``version`` filled in: a copy when any
    default applies, else ``data`` itself (most objects need none, and this runs on every DRA object).
    The copy shares what no default changes: only the mappings and sequences on the way to a defaulted
    field are new, so neither ``data`` nor the copy may be changed afterwards (`admitted` clones)."""
    return _fill(data, kind, version, minor)  # type: ignore[no-any-return]


def clone(v: Any) -> Any:
    """A copy of a loaded tree that can be changed without touching the original: mappings and
    sequences are new (positioned ones keep their positions), scalars are shared. `copy.deepcopy`
    did the same through the pickle protocol and was the largest cost of a check on DRA objects."""
    t = v.__class__
    if t is dict:
        return {k: clone(x) for k, x in v.items()}
    if t is list:
        return [clone(x) for x in v]
    if t is LMap:
        return _positioned(v, LMap((k, clone(x)) for k, x in v.items()))
    if t is LSeq:
        return _positioned(v, LSeq(clone(x) for x in v))
    return v  # str, int, float, bool, None: immutable


def _positioned(src: Any, out: Any) -> Any:
    """``out`` with the positions of ``src`` (those it has: a node made by a rule may have none)."""
    for slot in ("lc", "s", "e"):
        if hasattr(src, slot):
            setattr(out, slot, getattr(src, slot))
    return out


def _with_data(obj: K8sObject, data: dict[str, Any]) -> K8sObject:
    """The object with other data (built directly: index objects from summaries have their own
    constructor, which `dataclasses.replace` would call with the wrong arguments)."""
    return K8sObject(obj.file, obj.doc, data, obj.base_path, obj.target)


def _fill(data: Any, kind: str, version: str, minor: str | None) -> Any:
    """``data`` with every default that applies set, copying on write: ``data`` itself when none does.

    Each (default, place) matches on the root as the defaults before left it, so a matched node is
    the current one: a write copies only the containers above the node it writes to, and a node
    met on two paths (an alias) is copied on each."""
    root = data
    copied: set[int] | None = None  # ids of the containers copied so far; None until the first write
    for d, places in _plan(kind, version, minor):
        field, value, when, requires = d.field, d.value, d.when, d.requires
        value_type = type(value)
        for base, pattern in places:
            for path, node in match_paths(k8s.get(root, *base) if base else root, pattern, base):
                if not isinstance(node, dict):
                    continue
                current = node.get(field)
                if not _unset(current):
                    continue
                # a wrongly typed value is a decoding error (DRA101), never replaced by a default
                if current is not None and not isinstance(current, value_type):
                    continue
                if not _applies(node, when, requires):
                    continue
                if copied is None:
                    root = _shallow(root)
                    copied = {id(root)}
                _writable(root, path, copied)[field] = value
    return root


def _applies(node: dict[str, Any], when: tuple[tuple[str, Any], ...], requires: tuple[str, ...]) -> bool:
    """Whether a default's conditions hold on ``node`` (plain loops: this runs for every candidate node)."""
    for k, v in when:
        if node.get(k) != v:
            return False
    return not requires or all(not _unset(node.get(k)) for k in requires)


def _shallow(v: Any) -> Any:
    """A new mapping or sequence with the same items (positioned ones keep their positions)."""
    t = v.__class__
    if t is LMap or t is LSeq:
        out = t(v)
        try:
            out.lc, out.s, out.e = v.lc, v.s, v.e
        except AttributeError:  # a node made by a rule may lack some
            _positioned(v, out)
        return out
    return t(v)


def _writable(root: Any, path: JsonPath, copied: set[int]) -> Any:
    """The node at ``path`` below ``root`` (a copy), with every container on the way copied once."""
    node = root
    for key in path:
        child = node[key]
        if id(child) not in copied:
            child = _shallow(child)
            node[key] = child
            copied.add(id(child))
        node = child
    return node


def _drop(data: Any, path: JsonPath) -> None:
    parent = k8s.get(data, *path[:-1]) if len(path) > 1 else data
    last = path[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        parent.pop(last, None)
    elif isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
        parent[last] = None  # keep later indexes (and so positions) stable


def defaulted(obj: K8sObject, ctx: Context) -> K8sObject:
    # the memo holds None for "unchanged": holding ``obj`` itself would be a cycle the collector must find
    if "defaulted" in obj.memo:
        return obj.memo["defaulted"] or obj
    hit: K8sObject | None = None
    if obj.group == GROUP and obj.kind:
        data = apply_defaults(obj.data, obj.kind, obj.version, ctx.profile.kubernetes_version)
        if data is not obj.data:
            hit = _with_data(obj, data)
    obj.memo["defaulted"] = hit
    return hit or obj


def admitted(obj: K8sObject, ctx: Context) -> K8sObject:
    if "admitted" in obj.memo:
        return obj.memo["admitted"] or obj
    base = defaulted(obj, ctx)
    hit = base if base is not obj else None
    if obj.group == GROUP:
        lc = ctx.lifecycle()
        # only plain drops: a drop that leaves the object invalid ("dropped-then-rejected") is
        # reported by DRA501 together with the rejection it causes
        uses = [u for u in lc.gated_uses(obj.kind, base.data, []) if u.control.when_off == "dropped"]
        if uses:
            data = clone(base.data)
            for use in sorted(uses, key=lambda u: len(u.path), reverse=True):
                _drop(data, use.path)
            hit = _with_data(obj, data)
    obj.memo["admitted"] = hit
    return hit or obj
