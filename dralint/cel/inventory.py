"""Inventory mode: evaluate claims against the devices a cluster actually has.

The inventory is a set of ResourceSlices — a ``kubectl get resourceslices -o yaml`` List dump,
single documents or a directory of them, in the v1 shape or the v1beta1 one (``basic:``) — given
with ``--inventory`` / ``inventory:``. Without it, ResourceSlices found among the linted files are
used, but only as evidence about the drivers they cover (a repository rarely holds a whole
cluster's slices).

For a claim, every request is matched the way the scheduler's allocator does it, one node at a
time: a device qualifies when the DeviceClass selectors and the request selectors are true for it
(a CEL run-time error is an allocation error, not a non-match); ``count``/``allocationMode`` say
how many devices a request takes; a device serves at most one request (unless it allows multiple
allocations); ``matchAttribute`` constraints need the same attribute value on every device of the
listed requests; ``firstAvailable`` alternatives are tried in order. All devices of one claim must
be reachable from one node: node-local devices of that node, plus devices available to all nodes.

Selectors are evaluated once per distinct combination of the attribute values they read (most
read one or two attributes), so 10,000 devices × 100 selectors is a few seconds, and the loaded
inventory and the match sets are cached for the run.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dralint.cel.ast import Call, Has, Ident, Index, Lit, Node, Select, walk
from dralint.cel.env import Environment, Program
from dralint.cel.runtime import Device, DomainMap
from dralint.cel.values import CelError, Quantity, Semver
from dralint.inputs import dra
from dralint.inputs.index import Index as ObjIndex
from dralint.inputs.index import K8sObject
from dralint.inputs.load import load_bytes, read_side_file
from dralint.knowledge import drivers, k8s
from dralint.knowledge.profile import ClusterProfile
from dralint.model import JsonPath

GROUP = "resource.k8s.io"
ANY_NODE = "(any node)"
_MISSING = object()
#: bounds on the search (the allocator has its own timeout; dralint just stops looking)
_MAX_COMBOS = 256
_MAX_CONSTRAINT_VALUES = 64


@dataclass
class InvDevice:
    name: str
    driver: str
    pool: str
    #: the node whose pods can use it; None when it is reachable from every node (allNodes/nodeSelector)
    node: str | None
    value: Device  # the CEL `device` variable
    #: qualified attribute name ("gpu.nvidia.com/productName") -> plain value, for matchAttribute
    flat: dict[str, Any]
    multi: bool
    tainted: bool

    def label(self) -> str:
        where = f"node `{self.node}`" if self.node else "every node"
        return f"`{self.name}` ({self.driver}, {where})"


@dataclass
class DeviceClassSpec:
    name: str
    selectors: list[str]
    source: str  # manifests | inventory | driver data


@dataclass
class Inventory:
    devices: list[InvDevice] = field(default_factory=list)
    classes: dict[str, DeviceClassSpec] = field(default_factory=dict)
    #: True for --inventory (the whole cluster); False for slices found among the linted files
    authoritative: bool = True
    sources: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _by_node: dict[str | None, list[int]] = field(default_factory=dict)

    def nodes(self) -> list[str]:
        names = sorted({d.node for d in self.devices if d.node})
        if not names and self.devices:
            return [ANY_NODE]
        return names

    def on_node(self, node: str) -> list[int]:
        """Indexes of the devices a pod on ``node`` can be allocated: its own and the global ones."""
        if not self._by_node:
            by: dict[str | None, list[int]] = defaultdict(list)
            for i, d in enumerate(self.devices):
                by[d.node].append(i)
            self._by_node = dict(by)
        local = self._by_node.get(node, []) if node != ANY_NODE else []
        return local + self._by_node.get(None, [])

    def drivers(self) -> set[str]:
        return {d.driver for d in self.devices}


# ----------------------------------------------------------------------------------------------
# loading


def inventory_files(paths: Iterable[str]) -> list[Path]:
    """The files an inventory is read from: the files named, and the manifests under the directories
    named (symlinked directories inside them are not entered)."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith((".yaml", ".yml", ".json")):
                        out.append(Path(root) / f)
        elif path.is_file():
            out.append(path)
    return out


def _objects(data: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(data, dict):
        return
    items = data.get("items")
    if isinstance(items, list) and str(data.get("kind", "")).endswith("List"):
        for it in items:
            if isinstance(it, dict):
                yield it
    else:
        yield data


def _attr_value(v: Any) -> Any:
    """A ResourceSlice attribute value ({string: x} / {int: 1} / {version: 1.2.3} / list forms)."""
    if not isinstance(v, dict):
        return _MISSING
    for key in ("string", "int", "bool"):
        if key in v:
            x = v[key]
            if key == "int" and isinstance(x, bool):
                return _MISSING
            return x
    if "version" in v:
        try:
            return Semver.parse(str(v["version"]), normalize=True)
        except CelError:
            return _MISSING
    for key in ("strings", "ints", "bools", "versions"):
        if key in v and isinstance(v[key], list):
            if key == "versions":
                out = []
                for x in v[key]:
                    try:
                        out.append(Semver.parse(str(x), normalize=True))
                    except CelError:
                        return _MISSING
                return out
            return list(v[key])
    return _MISSING


def _quantity(v: Any) -> Quantity | None:
    raw = v.get("value") if isinstance(v, dict) else v
    if isinstance(raw, bool) or raw is None:
        return None
    try:
        return Quantity.parse(str(raw))
    except CelError:
        return None


def _split(qualified: str, driver: str) -> tuple[str, str]:
    if "/" in qualified:
        d, _, n = qualified.partition("/")
        return d, n
    return driver, qualified


def devices_from_slice(data: dict[str, Any]) -> list[InvDevice]:
    spec = data.get("spec")
    if not isinstance(spec, dict):
        return []
    driver = spec.get("driver")
    if not isinstance(driver, str):
        return []
    pool = k8s.get(spec, "pool", "name")
    pool = pool if isinstance(pool, str) else ""
    slice_node = spec.get("nodeName") if isinstance(spec.get("nodeName"), str) else None
    out: list[InvDevice] = []
    devs = spec.get("devices")
    for dev in devs if isinstance(devs, list) else []:
        if not isinstance(dev, dict) or not isinstance(dev.get("name"), str):
            continue
        basic = dev.get("basic")
        body: dict[str, Any] = basic if isinstance(basic, dict) else dev
        node = slice_node
        if isinstance(dev.get("nodeName"), str):
            node = dev["nodeName"]
        elif dev.get("allNodes") is True or isinstance(dev.get("nodeSelector"), dict):
            node = None
        attrs: dict[str, dict[str, Any]] = defaultdict(dict)
        flat: dict[str, Any] = {}
        raw_attrs = body.get("attributes")
        for qn, v in (raw_attrs.items() if isinstance(raw_attrs, dict) else ()):
            val = _attr_value(v)
            if val is _MISSING:
                continue
            domain, name = _split(str(qn), driver)
            attrs[domain][name] = val
            flat[f"{domain}/{name}"] = val
        caps: dict[str, dict[str, Any]] = defaultdict(dict)
        raw_caps = body.get("capacity")
        for qn, v in (raw_caps.items() if isinstance(raw_caps, dict) else ()):
            q = _quantity(v)
            if q is not None:
                domain, name = _split(str(qn), driver)
                caps[domain][name] = q
        multi = body.get("allowMultipleAllocations") is True
        taints = body.get("taints")
        tainted = isinstance(taints, list) and any(
            isinstance(t, dict) and t.get("effect") in ("NoSchedule", "NoExecute") for t in taints)
        value = Device(driver=driver, attributes=DomainMap(attrs), capacity=DomainMap(caps),
                       allowMultipleAllocations=multi)
        out.append(InvDevice(dev["name"], driver, pool, node, value, flat, multi, tainted))
    return out


def _generation(data: dict[str, Any]) -> int:
    g = k8s.get(data, "spec", "pool", "generation")
    return g if isinstance(g, int) and not isinstance(g, bool) else 0


def _class_spec(data: dict[str, Any], source: str) -> DeviceClassSpec | None:
    name = k8s.get(data, "metadata", "name")
    if not isinstance(name, str):
        return None
    sels = k8s.get(data, "spec", "selectors")
    exprs = [e for s in (sels if isinstance(sels, list) else [])
             if isinstance(e := k8s.get(s, "cel", "expression"), str)]
    return DeviceClassSpec(name, exprs, source)


def build(slices: Iterable[dict[str, Any]], classes: Iterable[dict[str, Any]] = (),
          authoritative: bool = True) -> Inventory:
    """An inventory from ResourceSlice and DeviceClass objects (the newest pool generation wins)."""
    inv = Inventory(authoritative=authoritative)
    newest: dict[tuple[str, str], int] = {}
    slist = [s for s in slices if isinstance(s, dict)]
    for s in slist:
        key = (str(k8s.get(s, "spec", "driver")), str(k8s.get(s, "spec", "pool", "name")))
        newest[key] = max(newest.get(key, 0), _generation(s))
    for s in slist:
        key = (str(k8s.get(s, "spec", "driver")), str(k8s.get(s, "spec", "pool", "name")))
        if _generation(s) < newest.get(key, 0):
            continue  # a stale slice of a pool that is being republished
        inv.devices.extend(devices_from_slice(s))
    for c in classes:
        spec = _class_spec(c, "inventory")
        if spec is not None:
            inv.classes[spec.name] = spec
    return inv


_LOADED: dict[tuple[Any, ...], Inventory] = {}


def load(paths: list[str]) -> Inventory:
    """Load ``--inventory`` paths once per run (keyed by path, size and mtime)."""
    files = inventory_files(paths)
    key_parts: list[Any] = []
    for f in files:
        try:
            st = f.stat()
            key_parts.append((str(f), st.st_size, st.st_mtime_ns))
        except OSError:
            key_parts.append((str(f), -1, -1))
    key = tuple(key_parts)
    hit = _LOADED.get(key)
    if hit is not None:
        return hit
    slices: list[dict[str, Any]] = []
    classes: list[dict[str, Any]] = []
    problems: list[str] = []
    for f in files:
        try:
            raw = read_side_file(f)  # no further than the loader reads: it refuses a bigger file anyway
        except OSError as e:
            problems.append(f"{f}: {e}")
            continue
        sf = load_bytes(str(f), raw)
        problems += [f"{f}: {p.message}" for p in sf.problems]
        for doc in sf.documents:
            for obj in _objects(doc.data):
                if str(obj.get("apiVersion", "")).split("/")[0] != GROUP:
                    continue
                if obj.get("kind") == "ResourceSlice":
                    slices.append(obj)
                elif obj.get("kind") == "DeviceClass":
                    classes.append(obj)
    inv = build(slices, classes, authoritative=True)
    inv.sources = [str(f) for f in files]
    inv.problems = problems
    if len(_LOADED) >= 4:  # a long-lived process (editor integration) keeps only the recent ones
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[key] = inv
    return inv


def for_context(index: ObjIndex, profile: ClusterProfile, cache: dict[Any, Any]) -> Inventory | None:
    """The run's inventory: --inventory when given, else the ResourceSlices among the linted files."""
    key = ("dralint.cel.inventory", tuple(profile.inventory))
    if key in cache:
        got = cache[key]
        return got if isinstance(got, Inventory) else None
    inv: Inventory | None
    if profile.inventory:
        inv = load(profile.inventory)
    else:
        slices = [o.data for o in index.of_kind("ResourceSlice") if o.group == GROUP]
        inv = build(slices, authoritative=False) if slices else None
        if inv is not None:
            inv.sources = sorted({o.file.path for o in index.of_kind("ResourceSlice")})
    if inv is not None and not inv.devices:
        inv = None if not profile.inventory else inv
    cache[key] = inv
    return inv


# ----------------------------------------------------------------------------------------------
# selector evaluation over the inventory


def _projection(prog: Program) -> tuple[tuple[str, str, str], ...] | None:
    """The constant (kind, domain, name) lookups a selector reads, when those are all it reads of the
    device; None when it reads the device in another way (then every device is evaluated)."""
    if prog.ast is None:
        return None
    parents: dict[int, Node] = {}
    for n in walk(prog.ast):
        for c in n.children():
            parents[id(c)] = n
        if isinstance(n, Has):
            parents[id(n.arg)] = n
    out: set[tuple[str, str, str]] = set()
    for n in walk(prog.ast):
        if not (isinstance(n, Ident) and n.name == "device"):
            continue
        p = parents.get(id(n))
        if isinstance(p, Select) and p.field in ("driver", "allowMultipleAllocations"):
            continue
        if not (isinstance(p, Select) and p.field in ("attributes", "capacity")):
            return None
        dom = parents.get(id(p))
        if not (isinstance(dom, Index) and isinstance(dom.index, Lit) and dom.index.kind == "string"):
            return None
        leaf = parents.get(id(dom))
        name: str | None = None
        if isinstance(leaf, Select):
            name = leaf.field
        elif isinstance(leaf, Index) and isinstance(leaf.index, Lit) and leaf.index.kind == "string":
            name = str(leaf.index.value)
        elif isinstance(leaf, Call) and leaf.fn == "@in" and len(leaf.args) == 2 and leaf.args[1] is dom \
                and isinstance(leaf.args[0], Lit) and leaf.args[0].kind == "string":
            name = str(leaf.args[0].value)
        if name is None:
            return None
        out.add((p.field, str(dom.index.value), name))
    # a comprehension or bind variable called `device` would shadow the variable
    if any(getattr(n, "var", None) == "device" or getattr(n, "var2", None) == "device" for n in walk(prog.ast)):
        return None
    return tuple(sorted(out))


def _key(d: InvDevice, proj: tuple[tuple[str, str, str], ...]) -> tuple[Any, ...] | None:
    v = d.value
    parts: list[Any] = [d.driver, d.multi]
    for kind, domain, name in proj:
        x = v[kind].get(domain)
        if x is None:
            parts.append(("no-domain",))
            continue
        y = x.get(name, _MISSING)
        if isinstance(y, list):
            try:
                y = ("list", tuple(y))
                hash(y)
            except TypeError:
                return None
        parts.append(y)
    return tuple(parts)


@dataclass
class MatchSet:
    """Which devices a sequence of selectors (class then request) accepts."""

    matches: frozenset[int]
    #: device index -> run-time error message (an allocation error on that device's node)
    errors: dict[int, str]


class Evaluator:
    def __init__(self, inv: Inventory, profile: ClusterProfile) -> None:
        self.inv = inv
        self.env = Environment.for_target(profile.kubernetes_version, profile.feature_gates)
        self._single: dict[str, dict[int, bool | str]] = {}
        self._sets: dict[tuple[str, ...], MatchSet] = {}
        self._groups: dict[tuple[tuple[str, str, str], ...], dict[tuple[Any, ...], list[int]]] = {}

    def program(self, text: str) -> Program | None:
        p = self.env.compile(text)
        return p if p.ast is not None and not any(d.code in ("syntax", "type") for d in p.diags) else None

    def _groups_for(self, proj: tuple[tuple[str, str, str], ...]) -> dict[tuple[Any, ...], list[int]] | None:
        g = self._groups.get(proj)
        if g is None:
            g = defaultdict(list)
            for i, d in enumerate(self.inv.devices):
                k = _key(d, proj)
                if k is None:
                    return None
                g[k].append(i)
            self._groups[proj] = g
        return g

    def results(self, text: str) -> dict[int, bool | str] | None:
        """Device index -> True/False/error message for one selector (None: does not compile)."""
        got = self._single.get(text)
        if got is not None:
            return got
        prog = self.program(text)
        if prog is None:
            return None
        out: dict[int, bool | str] = {}
        proj = _projection(prog)
        groups = self._groups_for(proj) if proj is not None else None
        if groups is not None:
            for members in groups.values():
                r = self._eval(prog, members[0])
                for i in members:
                    out[i] = r
        else:
            for i in range(len(self.inv.devices)):
                out[i] = self._eval(prog, i)
        self._single[text] = out
        return out

    def _eval(self, prog: Program, i: int) -> bool | str:
        try:
            return prog.evaluate(self.inv.devices[i].value)
        except CelError as e:
            return str(e)
        except RecursionError:
            return "expression too deeply nested to evaluate"

    def match(self, selectors: tuple[str, ...]) -> MatchSet | None:
        """Devices for which the selectors, in order, are all true (None: a selector does not compile)."""
        got = self._sets.get(selectors)
        if got is not None:
            return got
        per = []
        for s in selectors:
            r = self.results(s)
            if r is None:
                return None
            per.append(r)
        matches: set[int] = set()
        errors: dict[int, str] = {}
        for i in range(len(self.inv.devices)):
            for r in per:
                v = r[i]
                if v is True:
                    continue
                if v is not False:
                    errors[i] = str(v)
                break
            else:
                matches.add(i)
        ms = MatchSet(frozenset(matches), errors)
        self._sets[selectors] = ms
        return ms


def evaluator(inv: Inventory, profile: ClusterProfile, cache: dict[Any, Any]) -> Evaluator:
    key = ("dralint.cel.inventory.evaluator", id(inv), profile.kubernetes_version,
           tuple(sorted(profile.feature_gates.items())))
    ev = cache.get(key)
    if not isinstance(ev, Evaluator):
        ev = Evaluator(inv, profile)
        cache[key] = ev
    return ev


# ----------------------------------------------------------------------------------------------
# claims


@dataclass
class AltSpec:
    """One way to satisfy a request, resolved: class, selectors, count."""

    path: JsonPath
    request: str
    name: str | None  # subrequest name
    device_class: str | None
    selectors: tuple[str, ...]
    class_selectors: tuple[str, ...]
    count: int
    all_mode: bool
    tolerates: bool
    #: why it cannot be evaluated (unknown class, selector that does not compile)
    unknown: str | None = None
    match: MatchSet | None = None

    def label(self) -> str:
        return f"`{self.request}/{self.name}`" if self.name else f"`{self.request}`"


@dataclass
class ReqSpec:
    name: str
    path: JsonPath
    alternatives: list[AltSpec]
    prioritized: bool


@dataclass
class ClaimSpec:
    requests: list[ReqSpec]
    #: (requests it applies to (empty = all), qualified attribute, path)
    constraints: list[tuple[tuple[str, ...], str, JsonPath]]

    def unknown(self) -> str | None:
        for r in self.requests:
            for a in r.alternatives:
                if a.unknown:
                    return a.unknown
        return None


def resolve_class(name: str | None, index: ObjIndex, inv: Inventory) -> DeviceClassSpec | None:
    if not name:
        return None
    for o in index.find_any_namespace("DeviceClass", name):
        if o.group == GROUP:
            spec = _class_spec(o.data, "manifests")
            if spec is not None:
                return spec
    if name in inv.classes:
        return inv.classes[name]
    info = drivers.class_info(name)
    if info is not None and info.selector:
        return DeviceClassSpec(name, [info.selector], "driver data")
    return None


def claim_spec(obj: K8sObject, index: ObjIndex, inv: Inventory, ev: Evaluator) -> ClaimSpec:
    reqs: list[ReqSpec] = []
    for r in dra.requests(obj):
        if not r.name:
            continue
        alts: list[AltSpec] = []
        for a in r.alternatives:
            cls = resolve_class(a.device_class, index, inv)
            sels = tuple(t for _, t in a.selectors)
            tol = bool(a.data.get("tolerations"))
            class_sels = tuple(cls.selectors) if cls else ()
            alt = AltSpec(a.path, r.name, a.name, a.device_class,
                          (*class_sels, *sels), class_sels, max(a.count, 1), a.allocation_mode == "All", tol)
            if cls is None:
                alt.unknown = f"device class `{a.device_class}` is not defined in the linted files or the inventory"
            else:
                alt.match = ev.match(alt.selectors)
                if alt.match is None:
                    alt.unknown = "a selector does not compile"
            alts.append(alt)
        reqs.append(ReqSpec(r.name, r.path, alts, r.prioritized))
    cons: list[tuple[tuple[str, ...], str, JsonPath]] = []
    spec = dra.claim_spec(obj)
    cl = k8s.get(spec, "devices", "constraints") if spec else None
    base = (*dra.claim_spec_path(obj.kind), "devices", "constraints")
    for i, c in enumerate(cl if isinstance(cl, list) else []):
        attr = k8s.get(c, "matchAttribute")
        if isinstance(attr, str):
            names = k8s.get(c, "requests")
            reqnames = tuple(str(x).split("/")[0] for x in names) if isinstance(names, list) else ()
            cons.append((reqnames, attr, (*base, i, "matchAttribute")))
    return ClaimSpec(reqs, cons)


# -- per-node feasibility -------------------------------------------------------------------------


def _assignment(needs: list[int], options: list[list[int]], multi: set[int]) -> list[list[int]] | None:
    """The devices each request gets (needs[i] distinct ones from options[i]; a device in ``multi``
    may serve several requests and is left out of the answer, as it is not used up), or None.
    Augmenting paths over the request/device bipartite graph: the answer is the matching itself,
    so no device is handed to two requests."""
    owner: dict[int, tuple[int, int]] = {}  # device -> (request, slot)
    slots = [(i, k) for i, n in enumerate(needs) for k in range(n)]

    def try_assign(slot: tuple[int, int], seen: set[int]) -> bool:
        req = slot[0]
        # a free device first, in inventory order, as the scheduler's first fit would take it;
        # only then move another request's device along an augmenting path
        for d in options[req]:
            if d in multi:
                return True
            if d not in owner and d not in seen:
                owner[d] = slot
                return True
        for d in options[req]:
            if d in seen:
                continue
            seen.add(d)
            if try_assign(owner[d], seen):
                owner[d] = slot
                return True
        return False

    if not all(try_assign(slot, set()) for slot in slots):
        return None
    out: list[list[int]] = [[] for _ in needs]
    for d, (req, _) in sorted(owner.items(), key=lambda kv: kv[1]):
        out[req].append(d)
    return out


def _feasible(alts: list[AltSpec], candidates: list[int], inv: Inventory,
              constraints: list[tuple[tuple[str, ...], str, JsonPath]], names: list[str],
              removed: set[int]) -> list[int] | None:
    """Devices (one allocation) for one alternative per request on one node, or None."""
    cand = [i for i in candidates if i not in removed]
    base_opts: list[list[int]] = []
    for a in alts:
        assert a.match is not None
        base_opts.append([i for i in cand if i in a.match.matches and (a.tolerates or not inv.devices[i].tainted)])
    # constraint value combinations
    choices: list[list[tuple[int, str, Any]]] = [[]]
    for ci, (reqs, attr, _) in enumerate(constraints):
        applies = [j for j, n in enumerate(names) if not reqs or n in reqs]
        values: list[Any] = []
        for j in applies:
            for i in base_opts[j]:
                v = inv.devices[i].flat.get(attr, _MISSING)
                if v is not _MISSING and all(v != w for w in values):
                    values.append(v)
        values = values[:_MAX_CONSTRAINT_VALUES]
        if not values:
            return None
        choices = [[*c, (ci, attr, v)] for c in choices for v in values][:_MAX_COMBOS]
    for combo in choices:
        opts: list[list[int]] = [list(o) for o in base_opts]
        for ci, attr, v in combo:
            reqs = constraints[ci][0]
            for j, rname in enumerate(names):
                if not reqs or rname in reqs:
                    opts[j] = [i for i in opts[j] if _same(inv.devices[i].flat.get(attr, _MISSING), v)]
        needs: list[int] = []
        for a, o in zip(alts, opts, strict=True):
            if a.all_mode:
                if not o:
                    break
                needs.append(len(o))
            else:
                needs.append(a.count)
        else:
            multi = {i for i in cand if inv.devices[i].multi}
            got = _assignment(needs, opts, multi)
            if got is not None:
                return [i for per_request in got for i in per_request]
    return None


def _same(a: Any, b: Any) -> bool:
    return a is not _MISSING and type(a) is type(b) and bool(a == b)


def _combos(spec: ClaimSpec) -> Iterator[list[AltSpec]]:
    """One alternative per request, in preference order (firstAvailable order), bounded."""
    lists = [r.alternatives for r in spec.requests]
    out: list[list[AltSpec]] = [[]]
    for alts in lists:
        out = [[*c, a] for c in out for a in alts][:_MAX_COMBOS]
    yield from out


def allocate(spec: ClaimSpec, inv: Inventory, node: str, removed: set[int] | None = None) -> list[int] | None:
    """Devices for one claim on one node (first feasible alternative combination), or None.

    A selector that fails with a run-time error on a device the node can reach makes the allocator
    give up on that node, as the scheduler does."""
    if node_errors(spec, inv, node):
        return None
    names = [r.name for r in spec.requests]
    cands = inv.on_node(node)
    for combo in _combos(spec):
        got = _feasible(combo, cands, inv, spec.constraints, names, removed or set())
        if got is not None:
            return got
    return None


def node_errors(spec: ClaimSpec, inv: Inventory, node: str) -> dict[int, str]:
    """Selector run-time errors on devices a pod on ``node`` would be evaluated against."""
    cands = set(inv.on_node(node))
    out: dict[int, str] = {}
    for r in spec.requests:
        for a in r.alternatives:
            if a.match is not None:
                for i, msg in a.match.errors.items():
                    if i in cands:
                        out.setdefault(i, msg)
    return out


def alternative_possible(alt: AltSpec, inv: Inventory) -> bool:
    """Whether some node has enough matching devices for this alternative alone."""
    if alt.match is None:
        return True
    for node in inv.nodes():
        n = sum(1 for i in inv.on_node(node)
                if i in alt.match.matches and (alt.tolerates or not inv.devices[i].tainted))
        if (n >= 1 if alt.all_mode else n >= alt.count):
            return True
    return False


def pods_per_node(specs: list[ClaimSpec], inv: Inventory, limit: int, shared: bool = True) -> dict[str, int]:
    """How many pods (each needing its own allocation of every claim in ``specs``) fit per node, up
    to ``limit`` in total (per node when ``shared`` is False); devices reachable from every node
    are counted once across nodes when ``shared``."""
    out: dict[str, int] = {}
    removed: set[int] = set()
    total = 0
    for node in inv.nodes():
        if not shared:
            removed, total = set(), 0
        k = 0
        while total < limit:
            used: list[int] = []
            ok = True
            for spec in specs:
                got = allocate(spec, inv, node, removed | set(used))
                if got is None:
                    ok = False
                    break
                used += got
            if not ok:
                break
            if not used:  # only shareable devices: every pod fits
                k += limit - total
                total = limit
                break
            removed |= set(used)
            k += 1
            total += 1
        out[node] = k
    return out
