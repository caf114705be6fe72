"""DRA4xx: rollout and scheduling safety — surging rollouts against preferred or scarce devices, and
(with an inventory) claims no node can satisfy."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from dralint.checks.registry import Context, rule
from dralint.inputs import dra
from dralint.inputs.index import K8sObject
from dralint.knowledge import k8s
from dralint.model import Applicability, Edit, Fix, JsonPath, Severity, Violation

if TYPE_CHECKING:
    from dralint.cel.inventory import AltSpec, ClaimSpec, Inventory

# the inventory (and with it the CEL stack) is imported by the first rule run that needs it, not by
# every `check`: a warm run over an unchanged repository runs no rule

# ----------------------------------------------------------------------------------------------
# rollout strategy


@dataclasses.dataclass(frozen=True)
class Surge:
    kind: str
    replicas: int
    surge: int
    explained: str  # "maxSurge 1 (the default 25% of 1 replica, rounded up)"
    path: JsonPath  # where the finding points
    max_unavailable: Any


def _int_or_percent(v: Any, total: int, round_up: bool) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        m = re.fullmatch(r"\s*(\d+)\s*%\s*", v)
        if m:
            x = int(m.group(1)) * total / 100
            return math.ceil(x) if round_up else math.floor(x)
        if v.strip().isdigit():
            return int(v.strip())
    return None


def _map(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def surge_of(obj: K8sObject) -> Surge | None:
    """How many extra pods a rolling update creates before old ones go (None: it cannot surge)."""
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return None
    if obj.kind == "Deployment":
        strategy = _map(spec.get("strategy"))
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return None
        replicas = k8s.replicas("Deployment", obj.data)
        if replicas is None or replicas < 1:
            return None
        ru = _map(strategy.get("rollingUpdate"))
        raw = ru.get("maxSurge", "25%")
        surge = _int_or_percent(raw, replicas, round_up=True)
        if surge is None or surge <= 0:
            return None
        if "maxSurge" in ru:
            explained = f"maxSurge {raw!s}" + (f" (= {surge} of {replicas} replicas, rounded up)"
                                               if isinstance(raw, str) and raw.strip().endswith("%") else "")
            path: JsonPath = ("spec", "strategy", "rollingUpdate", "maxSurge")
        else:
            explained = (f"maxSurge {surge} (the default 25% of {replicas} replica{'s' if replicas > 1 else ''}, "
                         "rounded up)")
            path = ("spec", "strategy") if "strategy" in spec else ("spec",)
        return Surge("Deployment", replicas, surge, explained, path, ru.get("maxUnavailable", "25%"))
    if obj.kind == "DaemonSet":
        strategy = _map(spec.get("updateStrategy"))
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return None
        ru = _map(strategy.get("rollingUpdate"))
        raw = ru.get("maxSurge", 0)
        surge = _int_or_percent(raw, 1, round_up=True)  # any positive percentage surges at least one pod
        if surge is None or surge <= 0:
            return None
        return Surge("DaemonSet", 1, surge, f"maxSurge {raw!s}",
                     ("spec", "updateStrategy", "rollingUpdate", "maxSurge"), ru.get("maxUnavailable", 1))
    return None


def _no_surge_fix(obj: K8sObject, s: Surge) -> Fix:
    if s.kind == "DaemonSet":
        edits = [Edit("set", ("spec", "updateStrategy", "rollingUpdate", "maxSurge"), 0)]
        if _int_or_percent(s.max_unavailable, 1, round_up=True) in (0, None):
            edits.append(Edit("set", ("spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), 1))
        return Fix("Roll out without surge (maxSurge: 0)", Applicability.UNSAFE, tuple(edits))
    return Fix("Roll out without surge (maxSurge: 0, maxUnavailable: 1)", Applicability.UNSAFE, (
        Edit("set", ("spec", "strategy", "rollingUpdate", "maxSurge"), 0),
        Edit("set", ("spec", "strategy", "rollingUpdate", "maxUnavailable"), 1),
    ))


def _template_claims(obj: K8sObject, ctx: Context) -> Iterator[tuple[dra.PodClaim, K8sObject]]:
    """Pod claims that come from a ResourceClaimTemplate found in the index (one new claim per pod)."""
    for ps in obj.pod_specs:
        for claim in dra.pod_claims(ps):
            if not claim.template_name or claim.claim_name:
                continue
            found = dra.resolve(ctx.index, claim, obj.namespace)
            if found:
                yield claim, found[0]


@rule("DRA401", kinds=("Deployment", "DaemonSet"), needs="claims")
def rolling_update_preferred_device(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    s = surge_of(obj)
    if s is None:
        return
    found: list[tuple[dra.PodClaim, K8sObject, dra.Request]] = []
    for claim, tmpl in _template_claims(obj, ctx):
        req = next((r for r in dra.requests(tmpl) if r.prioritized), None)
        if req is not None:
            found.append((claim, tmpl, req))
    if not found:
        return
    claim, tmpl, req = found[0]
    names = [a.name or "?" for a in req.alternatives]
    preferred, fallback = names[0], ", ".join(f"`{n}`" for n in names[1:])
    others = sorted({f"`{t.name}`" for _, t, _ in found[1:] if t.name != tmpl.name})
    also = f" (so do the preferences in {', '.join(others)})" if others else ""
    how = ("`maxSurge: 0` and `maxUnavailable: 1` (or `strategy.type: Recreate`)" if s.kind == "Deployment"
           else "`maxSurge: 0`")
    where: JsonPath = (s.path if s.path[-1] == "maxSurge" or s.path == ("spec", "strategy")
                       else (*claim.path, "resourceClaimTemplateName"))
    yield Violation(
        f"{s.kind} `{obj.name or '?'}` rolls out with {s.explained}: each new pod gets a new claim from "
        f"ResourceClaimTemplate `{tmpl.name}` while the old pod still holds its device, so request "
        f"`{req.name or '?'}` is allocated a fallback ({fallback}) instead of the preferred `{preferred}` "
        f"whenever that device is scarce — and keeps it after the old pod is gone, because allocations are "
        f"immutable{also}. Roll out with {how} so the old pod releases its device first",
        where,
        on="key" if where == ("spec", "strategy") else "value",
        fix=_no_surge_fix(obj, s),
    )


# ----------------------------------------------------------------------------------------------
# inventory rules


def _inventory(ctx: Context) -> Inventory | None:
    if not ctx.profile.inventory and not any(o.group == dra.DRA_GROUP for o in ctx.index.of_kind("ResourceSlice")):
        return None  # nothing to allocate from (what `for_context` finds too): the CEL evaluator stays unloaded
    from dralint.cel.inventory import for_context

    return for_context(ctx.index, ctx.profile, ctx.cache)


def _spec(obj: K8sObject, inv: Inventory, ctx: Context) -> ClaimSpec | None:
    from dralint.cel.inventory import ClaimSpec, claim_spec, evaluator

    got = obj.memo.get("rollout-spec")
    if isinstance(got, ClaimSpec):
        return got
    spec = claim_spec(obj, ctx.index, inv, evaluator(inv, ctx.profile, ctx.cache))
    obj.memo["rollout-spec"] = spec
    return spec


def _judgeable(spec: ClaimSpec, inv: Inventory, ctx: Context) -> bool:
    """Enough is known to call the claim unsatisfiable. Slices found among the linted files only count
    for the drivers they cover: every device class must match some device there."""
    from dralint.cel.inventory import evaluator

    if not spec.requests or spec.unknown() is not None:
        return False
    if any(not r.alternatives for r in spec.requests):
        return False  # a malformed request (nothing to allocate): the conformance rules say what is wrong
    if inv.authoritative:
        return True
    ev = evaluator(inv, ctx.profile, ctx.cache)
    for r in spec.requests:
        for a in r.alternatives:
            ms = ev.match(a.class_selectors) if a.class_selectors else None
            if ms is None or not ms.matches:
                return False
    return True


def _source(inv: Inventory) -> str:
    from dralint.cel.inventory import ANY_NODE

    nodes = [n for n in inv.nodes() if n != ANY_NODE]
    where = f"{len(inv.devices)} devices on {len(nodes)} node{'s' if len(nodes) != 1 else ''}"
    if not inv.authoritative:
        where += " in the ResourceSlices of the linted files"
    return where


def _per_node(alt: AltSpec, inv: Inventory) -> dict[str, int]:
    out: dict[str, int] = {}
    if alt.match is None:
        return out
    for node in inv.nodes():
        n = sum(1 for i in inv.on_node(node) if i in alt.match.matches)
        if n:
            out[node] = n
    return out


def _values_hint(alt: AltSpec, inv: Inventory, ctx: Context) -> str:
    """What the class-matching devices actually offer, for the attributes the request selectors read."""
    from dralint.cel.inventory import evaluator

    ev = evaluator(inv, ctx.profile, ctx.cache)
    base = ev.match(alt.class_selectors) if alt.class_selectors else None
    if base is None or not base.matches:
        return ""
    wanted: list[tuple[str, str, str]] = []
    for text in alt.selectors[len(alt.class_selectors):]:
        prog = ev.program(text)
        if prog is None:
            continue
        for ref in prog.refs:
            if ref.kind in ("attributes", "capacity") and (ref.kind, ref.domain, ref.name) not in wanted:
                wanted.append((ref.kind, ref.domain, ref.name))
    parts = []
    for kind, domain, name in wanted[:2]:
        seen: list[str] = []
        for i in sorted(base.matches):
            v = inv.devices[i].value[kind].get(domain, {}).get(name)
            if v is None:
                continue
            t = getattr(v, "text", v)
            if str(t) not in seen:
                seen.append(str(t))
        if seen:
            shown = ", ".join(f"`{x}`" for x in seen[:5]) + (" …" if len(seen) > 5 else "")
            parts.append(f"{name}: {shown}")
    return f" (devices of class `{alt.device_class}` offer {'; '.join(parts)})" if parts else ""


def _diagnose(spec: ClaimSpec, inv: Inventory, ctx: Context) -> tuple[str, JsonPath]:
    """Why no node can satisfy the claim, and where to point."""
    from dralint.cel.inventory import node_errors

    for node in inv.nodes():
        errs = node_errors(spec, inv, node)
        if errs:
            i, msg = next(iter(errs.items()))
            req = next((r for r in spec.requests for a in r.alternatives if a.match and i in a.match.errors),
                       spec.requests[0])
            return (f"a selector of request `{req.name}` fails with a run-time error on device "
                    f"{inv.devices[i].label()}: {msg} (the scheduler treats a selector error as an allocation error "
                    "for the node, not as a device that does not match)", (*req.path, "name"))
    for r in spec.requests:
        if not r.alternatives:
            continue  # a request with nothing to allocate (malformed `exactly`): schema rules report it
        counts = [(_per_node(a, inv), a) for a in r.alternatives]
        if all(not c for c, _ in counts):
            a = r.alternatives[0]
            what = "any of its alternatives" if len(r.alternatives) > 1 else f"class `{a.device_class}`"
            return (f"no device in the inventory matches request `{r.name}` ({what} and its selectors)"
                    f"{_values_hint(a, inv, ctx)}", (*r.path, "name"))
        if not any(max(c.values(), default=0) >= (1 if a.all_mode else a.count) for c, a in counts):
            c, a = counts[0]
            spread = ", ".join(f"{n} on `{node}`" for node, n in sorted(c.items(), key=lambda x: -x[1])[:6])
            return (f"request {a.label()} needs {a.count} matching devices on one node, but the inventory has at most "
                    f"{max(c.values(), default=0)} per node ({spread}); all devices of a claim must be reachable from "
                    "the node the pod runs on", (*r.path, "name"))
    if spec.constraints and len(spec.requests) >= 1:
        reqs, attr, path = spec.constraints[0]
        who = ", ".join(f"`{x}`" for x in reqs) if reqs else "all requests"
        return (f"no node has devices for every request that also agree on `{attr}` (matchAttribute for {who})", path)
    names = ", ".join(f"`{r.name}`" for r in spec.requests)
    return (f"no single node has enough distinct devices for all requests together ({names}); a device serves one "
            "request at a time", (*spec.requests[0].path, "name"))


@rule("DRA403", kinds=("ResourceClaim", "ResourceClaimTemplate"))
def unsatisfiable_claim(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    if obj.group != dra.DRA_GROUP:
        return
    inv = _inventory(ctx)
    if inv is None:
        return
    from dralint.cel.inventory import allocate, alternative_possible
    spec = _spec(obj, inv, ctx)
    if spec is None or not _judgeable(spec, inv, ctx):
        return
    satisfiable = any(allocate(spec, inv, node) is not None for node in inv.nodes())
    if not satisfiable:
        why, path = _diagnose(spec, inv, ctx)
        yield Violation(f"no node can satisfy this claim with the inventory ({_source(inv)}): {why}. A pod using it "
                        "stays Pending (\"cannot allocate all claims\")", path)
        return
    for r in spec.requests:
        if len(r.alternatives) < 2:
            continue
        for a in r.alternatives:
            if not alternative_possible(a, inv):
                yield Violation(
                    f"alternative {a.label()} of request `{r.name}` can never be allocated with the inventory "
                    f"({_source(inv)}): no node has {a.count} device{'s' if a.count > 1 else ''} of class "
                    f"`{a.device_class}` matching its selectors{_values_hint(a, inv, ctx)}; the request always falls "
                    "through to another alternative", (*a.path, "name") if a.name else a.path,
                    severity=Severity.INFO)


def _where(obj: K8sObject, s: Surge) -> JsonPath:
    if s.path[-1] == "maxSurge":
        return s.path
    spec = obj.data.get("spec")
    return ("spec", "replicas") if isinstance(spec, dict) and "replicas" in spec else s.path


@rule("DRA402", kinds=("Deployment", "DaemonSet"), needs="claims")
def rolling_update_scarce_device(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    s = surge_of(obj)
    if s is None:
        return
    inv = _inventory(ctx)
    if inv is None:
        return
    from dralint.cel.inventory import ANY_NODE, pods_per_node
    pairs = list(_template_claims(obj, ctx))
    if not pairs:
        return
    specs: list[ClaimSpec] = []
    for _, tmpl in pairs:
        spec = _spec(tmpl, inv, ctx)
        if spec is None or not _judgeable(spec, inv, ctx):
            return
        specs.append(spec)
    names = ", ".join(f"`{t.name}`" for _, t in pairs)
    if s.kind == "Deployment":
        need = s.replicas + s.surge
        fits = sum(pods_per_node(specs, inv, need).values())
        if fits >= need:
            return
        if fits < s.replicas:
            yield Violation(
                f"Deployment `{obj.name or '?'}` wants {s.replicas} replicas, but the inventory ({_source(inv)}) has "
                f"devices for only {fits} pod{'s' if fits != 1 else ''} using template{'s' if len(pairs) > 1 else ''} "
                f"{names}: the other replicas stay Pending, and a rollout ({s.explained}) stalls",
                _where(obj, s))
            return
        yield Violation(
            f"Deployment `{obj.name or '?'}` rolls out with {s.explained}, so it needs devices for {need} pods at once "
            f"({s.replicas} replicas + {s.surge} surge), but the inventory ({_source(inv)}) has devices for only "
            f"{fits} pod{'s' if fits != 1 else ''} using {names}: the surge pod stays Pending, the old pods are not "
            "replaced and the rollout stalls until progressDeadlineSeconds marks it failed. Roll out with "
            "`maxSurge: 0` and `maxUnavailable: 1` (or `Recreate`)",
            _where(obj, s), on="value" if s.path[-1] == "maxSurge" else "key", fix=_no_surge_fix(obj, s))
        return
    # DaemonSet: the surge pod and the old pod are on the same node
    per_node = pods_per_node(specs, inv, 2, shared=False)
    short = sorted(n for n, k in per_node.items() if k == 1 and n != ANY_NODE)
    if short:
        shown = ", ".join(f"`{n}`" for n in short[:5]) + (" …" if len(short) > 5 else "")
        yield Violation(
            f"DaemonSet `{obj.name or '?'}` rolls out with {s.explained}: the new pod starts on the same node while "
            f"the old one still holds its devices, but node{'s' if len(short) > 1 else ''} {shown} "
            f"{'have' if len(short) > 1 else 'has'} devices for only one pod using {names} (inventory: "
            f"{_source(inv)}), so the update stalls there. Use `maxSurge: 0`",
            s.path, on="value", fix=_no_surge_fix(obj, s))
