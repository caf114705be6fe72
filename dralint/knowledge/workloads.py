"""Workload discovery as data: where each (API group, kind) keeps its pods and GPU counts.

``schemas/workloads.yaml`` lists, per operator kind and its groups, the paths of pod templates,
PodSpecs, container fields and GPU-count fields. It is read once per process. `pod_specs` is what
`k8s.pod_specs` (and so every rule, migrate and report) uses; `gpu_fields` finds the GPU counts
that an operator, not the pod, carries (rules DRA209 / DRA210). Kinds that the table does not list
fall back to a structural search, so an unknown custom resource is still looked into.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dralint.knowledge import k8s
from dralint.knowledge.catalog import load_data
from dralint.model import MEMO_KEY_CHARS, JsonPath

#: a parsed path: mapping keys, and the two wildcards (every list item, every mapping value)
_ITEMS = "[]"
_VALUES = "*"
Pattern = tuple[str, ...]


@dataclass(frozen=True)
class PodSpecPlace:
    path: Pattern
    #: a template (`metadata` + `spec`) rather than the PodSpec itself
    template: bool
    lists: tuple[str, ...] = k8s.CONTAINER_FIELDS
    single: tuple[str, ...] = ()
    pod_spec: bool = True


@dataclass(frozen=True)
class GpuCountPlace:
    path: Pattern
    shape: str  # resources | resource-map | count | resource-name | named-quantity
    role: str  # request | capacity
    becomes: str
    change: str
    quantity: str = "quantity"
    match: str = "legacy"  # legacy | vendor | any
    #: a milder severity for fields that are advice rather than a device-plugin request
    severity: str | None = None
    #: what migrate does with the field (`set-string`: write the migrated count beside the template)
    migrate: str | None = None
    #: (requirement) the requirement keys that select GPUs
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Derived:
    """An operator field whose behaviour comes from the pods' extended resource (migrate skips it)."""

    field: Pattern
    requires: Pattern | None
    derived_when: tuple[Any, ...]
    becomes: str
    change: str


@dataclass(frozen=True)
class WorkloadKind:
    kind: str
    groups: frozenset[str]
    operator: str
    builtin: bool
    places: tuple[PodSpecPlace, ...]
    gpu_counts: tuple[GpuCountPlace, ...]
    derives: tuple[Derived, ...] = ()


@dataclass(frozen=True)
class GpuField:
    """A GPU count held in an operator field (or, for unknown kinds, in a stray ``resources`` map)."""

    path: JsonPath  # the key (or list item) to point at
    on: str  # "key" | "value"
    name: str | None  # the resource name, when the field names one
    amount: Any
    kind: str
    operator: str | None  # None: found by the structural fallback
    place: GpuCountPlace | None


@dataclass(frozen=True)
class Table:
    by_kind: dict[str, tuple[WorkloadKind, ...]]
    max_depth: int
    marker: str
    container_keys: tuple[str, ...]
    resources_key: str


def _pattern(text: str) -> Pattern:
    out: list[str] = []
    for step in text.split("."):
        if step.endswith(_ITEMS):
            out += [step[: -len(_ITEMS)], _ITEMS]
        else:
            out.append(step)
    return tuple(out)


def _place(raw: Any, template: bool) -> PodSpecPlace:
    if isinstance(raw, str):
        return PodSpecPlace(_pattern(raw), template)
    return PodSpecPlace(
        _pattern(raw["path"]),
        template,
        tuple(raw.get("lists", k8s.CONTAINER_FIELDS)),
        tuple(raw.get("single", ())),
        bool(raw.get("pod_spec", True)),
    )


@lru_cache(maxsize=1)
def table() -> Table:
    """The parsed ``schemas/workloads.yaml`` (once per process)."""
    data = load_data("workloads.yaml")
    by_kind: dict[str, list[WorkloadKind]] = {}
    for e in data["workloads"]:
        places = tuple(_place(p, True) for p in e.get("templates", ())) + tuple(
            _place(p, False) for p in e.get("pod_specs", ())
        )
        counts = tuple(
            GpuCountPlace(_pattern(g["path"]), g["shape"], g.get("role", "request"), g["becomes"], g["change"],
                          g.get("quantity", "quantity"), g.get("match", "legacy"), g.get("severity"),
                          g.get("migrate"), tuple(g.get("keys", ())))
            for g in e.get("gpu_counts", ())
        )
        derives = tuple(
            Derived(_pattern(d["field"]), _pattern(d["requires"]) if d.get("requires") else None,
                    tuple(d.get("derived_when", (None,))), d["becomes"], d["change"])
            for d in e.get("derives", ())
        )
        wk = WorkloadKind(e["kind"], frozenset(e["groups"]), e["operator"], bool(e.get("builtin", False)),
                          places, counts, derives)
        by_kind.setdefault(wk.kind, []).append(wk)
    fb = data.get("fallback", {})
    return Table(
        {k: tuple(v) for k, v in by_kind.items()},
        int(fb.get("max_depth", 14)),
        str(fb.get("pod_spec_marker", "containers")),
        tuple(fb.get("container_keys", ("name", "image"))),
        str(fb.get("resources_key", "resources")),
    )


def lookup(api_version: Any, kind: str | None) -> WorkloadKind | None:
    """The table entry for an object's group and kind. An object without an ``apiVersion`` (a
    kustomize patch, a fragment) is matched by kind among the built-ins only."""
    if not kind:
        return None
    if not isinstance(api_version, str) or not api_version:
        api_version = ""
    key = (api_version, kind)
    memo = _LOOKUPS
    if key in memo:
        return memo[key]
    entries = table().by_kind.get(kind, ())
    if not api_version:
        found = next((e for e in entries if e.builtin), None)
    else:
        group = k8s.api_group(api_version)
        found = next((e for e in entries if group in e.groups), None)
    if len(memo) < _LOOKUPS_MAX and len(api_version) + len(kind) <= MEMO_KEY_CHARS:
        memo[key] = found
    return found


#: `lookup` by (apiVersion, kind): every rule on a workload asks, and a repository has few distinct
#: pairs. Bounded in entries and in their length (`MEMO_KEY_CHARS`), as the strings come from the
#: linted files
_LOOKUPS: dict[tuple[str, str], WorkloadKind | None] = {}
_LOOKUPS_MAX = 4096


def is_builtin(api_version: Any, kind: str | None) -> bool:
    wk = lookup(api_version, kind)
    return wk is not None and wk.builtin


def builtin_pod_spec_path(api_version: Any, kind: str | None) -> JsonPath | None:
    """Where a built-in workload keeps its pod spec (None for every other kind)."""
    wk = lookup(api_version, kind)
    if wk is None or not wk.builtin or not wk.places:
        return None
    p = wk.places[0]
    return (*p.path, "spec") if p.template else p.path


def _expand(data: Any, pattern: Pattern, at: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    """Every (path, node) that a pattern reaches in the data."""
    if not pattern:
        yield at, data
        return
    step, rest = pattern[0], pattern[1:]
    if step == _ITEMS:
        if isinstance(data, list):
            for i, v in enumerate(data):
                yield from _expand(v, rest, (*at, i))
    elif step == _VALUES:
        if isinstance(data, dict):
            for k, v in data.items():
                if isinstance(k, str):
                    yield from _expand(v, rest, (*at, k))
    elif isinstance(data, dict) and step in data:
        yield from _expand(data[step], rest, (*at, step))


def pod_specs(api_version: Any, kind: str | None, data: Any) -> list[k8s.PodSpecRef]:
    """Every pod spec of an object: from the table for known kinds, a structural search otherwise."""
    if not isinstance(data, dict) or not kind:
        return []
    wk = lookup(api_version, kind)
    if wk is not None:
        out: list[k8s.PodSpecRef] = []
        for place in wk.places:
            for path, node in _expand(data, place.path):
                if not isinstance(node, dict):
                    continue
                if place.template:
                    spec = node.get("spec")
                    if isinstance(spec, dict):
                        out.append(k8s.PodSpecRef((*path, "spec"), spec, path))
                elif place.pod_spec or any(f in node for f in (*place.lists, *place.single)):
                    # a pod-like mapping (an Argo template) is a pod only when it runs a container
                    out.append(k8s.PodSpecRef(path, node, path, place.lists, place.single, place.pod_spec))
        return out
    if kind in k8s.NO_POD_KINDS:
        return []
    found: list[k8s.PodSpecRef] = []
    _search(data, (), found, 0, table())
    return found


def _is_container_list(v: Any, keys: tuple[str, ...]) -> bool:
    return isinstance(v, list) and bool(v) and all(
        isinstance(c, dict) and any(k in c for k in keys) for c in v
    )


def _search(node: Any, path: JsonPath, out: list[k8s.PodSpecRef], depth: int, t: Table) -> None:
    if depth > t.max_depth:
        return
    if isinstance(node, dict):
        if path and _is_container_list(node.get(t.marker), t.container_keys):
            # a PodSpec; its template is the parent when it sits under `spec`
            template = path[:-1] if path[-1] == "spec" else path
            out.append(k8s.PodSpecRef(path, node, template))
            return
        for k, v in node.items():
            if isinstance(v, (dict, list)):
                _search(v, (*path, k), out, depth + 1, t)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, (dict, list)):
                _search(v, (*path, i), out, depth + 1, t)


def operator_of(api_version: Any, kind: str | None) -> str | None:
    wk = lookup(api_version, kind)
    return wk.operator if wk is not None else None


# ----------------------------------------------------------------------------------------------
# GPU counts outside pods


def gpu_fields(api_version: Any, kind: str | None, data: Any,
               pod_paths: tuple[JsonPath, ...] = ()) -> list[GpuField]:
    """Every candidate GPU count an operator carries for its pods. Names are not classified here
    (that needs the profile's extended resources): the rules keep the GPU ones."""
    if not isinstance(data, dict) or not kind:
        return []
    wk = lookup(api_version, kind)
    if wk is not None:
        return [f for g in wk.gpu_counts for f in _fields_at(data, g, kind, wk.operator)]
    if kind in k8s.NO_POD_KINDS:
        return []
    out: list[GpuField] = []
    _stray_resources(data, (), out, 0, table(), kind, pod_paths)
    return out


def _fields_at(data: Any, g: GpuCountPlace, kind: str, operator: str) -> Iterator[GpuField]:
    for path, node in _expand(data, g.path):
        if g.shape == "resources":
            # one field per resource, at its limit (or its request when there is no limit), as DRA201
            seen: set[str] = set()
            if isinstance(node, dict):
                for section in ("limits", "requests"):
                    m = node.get(section)
                    if isinstance(m, dict):
                        for name, amount in m.items():
                            if isinstance(name, str) and name not in seen:
                                seen.add(name)
                                yield GpuField((*path, section, name), "key", name, amount, kind, operator, g)
        elif g.shape == "resource-map":
            if isinstance(node, dict):
                for name, amount in node.items():
                    if isinstance(name, str):
                        yield GpuField((*path, name), "key", name, amount, kind, operator, g)
        elif g.shape == "count":
            if node is not None and not isinstance(node, (dict, list)):
                yield GpuField(path, "key", None, node, kind, operator, g)
        elif g.shape == "resource-name":
            if isinstance(node, str):
                yield GpuField(path, "value", node, 1, kind, operator, g)
        elif g.shape == "requirement":
            if isinstance(node, list):
                for i, req in enumerate(node):
                    if isinstance(req, dict) and req.get("key") in g.keys:
                        vals = req.get("values")
                        cond = " ".join([str(req.get("operator", "?")),
                                         *(str(v) for v in (vals if isinstance(vals, list) else []))])
                        yield GpuField((*path, i, "key"), "value", str(req["key"]), cond, kind, operator, g)
        elif g.shape == "named-quantity" and isinstance(node, dict) and isinstance(node.get("name"), str):
            yield GpuField((*path, "name"), "value", node["name"], node.get(g.quantity), kind, operator, g)


def _under(path: JsonPath, roots: tuple[JsonPath, ...]) -> bool:
    return any(path[: len(r)] == r for r in roots)


def _stray_resources(node: Any, path: JsonPath, out: list[GpuField], depth: int, t: Table, kind: str,
                     pod_paths: tuple[JsonPath, ...]) -> None:
    """``resources`` mappings outside the object's pod specs whose limits/requests name resources."""
    if depth > t.max_depth or _under(path, pod_paths):
        return
    if isinstance(node, dict):
        res = node.get(t.resources_key)
        if isinstance(res, dict):
            seen: set[str] = set()
            for section in ("limits", "requests"):
                m = res.get(section)
                if isinstance(m, dict):
                    for name, amount in m.items():
                        if isinstance(name, str) and name not in seen:
                            seen.add(name)
                            out.append(GpuField((*path, t.resources_key, section, name), "key", name, amount,
                                                kind, None, None))
        for k, v in node.items():
            if k != t.resources_key and isinstance(v, (dict, list)):
                _stray_resources(v, (*path, k), out, depth + 1, t, kind, pod_paths)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, (dict, list)):
                _stray_resources(v, (*path, i), out, depth + 1, t, kind, pod_paths)


# ----------------------------------------------------------------------------------------------
# what migrate must keep in step with the pods


def _matches(pattern: Pattern, path: JsonPath) -> bool:
    if len(pattern) != len(path):
        return False
    for step, p in zip(pattern, path, strict=True):
        if step == _ITEMS:
            if not isinstance(p, int):
                return False
        elif step == _VALUES:
            if not isinstance(p, str):
                return False
        elif step != p:
            return False
    return True


def counts_beside(api_version: Any, kind: str | None, template_path: JsonPath) -> list[tuple[JsonPath, GpuCountPlace]]:
    """The GPU-count fields that migrate writes for the pod template at ``template_path``: each
    count field shares its group with the template (a Ray worker group's `rayStartParams.num-gpus`
    beside its `template`), so its path is the template's group plus the count's own tail."""
    wk = lookup(api_version, kind)
    if wk is None:
        return []
    out: list[tuple[JsonPath, GpuCountPlace]] = []
    for place in wk.places:
        if not place.template or not _matches(place.path, template_path):
            continue
        for g in wk.gpu_counts:
            if g.migrate is None:
                continue
            common = 0
            while common < min(len(place.path), len(g.path)) and place.path[common] == g.path[common]:
                common += 1
            # the count belongs to this template only when they part right below their shared group
            if common == len(place.path) - 1:
                out.append(((*template_path[:common], *g.path[common:]), g))
    return out


def derived_fields(api_version: Any, kind: str | None, data: Any) -> list[tuple[JsonPath, Derived]]:
    """The fields of an object whose value its operator derives from the pods' extended resource
    (a Kubeflow Trainer runtime's `numProcPerNode` left to `auto`)."""
    wk = lookup(api_version, kind)
    if wk is None or not isinstance(data, dict):
        return []
    out: list[tuple[JsonPath, Derived]] = []
    for d in wk.derives:
        scopes = [p for p, _ in _expand(data, d.requires)] if d.requires is not None else [()]
        for scope in scopes:
            path: JsonPath = (*scope, *d.field[len(scope):])
            value = k8s.get(data, *path)
            if value in d.derived_when or (value is None and None in d.derived_when):
                out.append((path, d))
    return out
