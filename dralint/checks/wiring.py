"""DRA3xx: how pods, claims, templates and device classes refer to each other, across files."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from dralint.checks.registry import Context, rule
from dralint.inputs import dra, intended
from dralint.inputs.index import K8sObject
from dralint.knowledge import k8s, workloads
from dralint.model import Applicability, Edit, Fix, JsonPath, Severity, Violation, same, to_plain
from dralint.suggest import closest


def _suggest(name: str, candidates: list[str]) -> str:
    close = closest(name, candidates)
    return f"; did you mean `{close}`?" if close else ""


def _names_in(ctx: Context, kind: str, namespace: str | None) -> list[str]:
    """Names of ``kind`` a pod in ``namespace`` could use, for "did you mean" (one pass over the kind per run)."""
    hit: list[str] | None = ctx.cache.get(("wiring-names", kind, namespace))
    if hit is not None:
        return hit
    by_ns: dict[str | None, list[str]] | None = ctx.cache.get(("wiring-names", kind))
    if by_ns is None:
        by_ns = {}
        for ns, name in ctx.index.names_of(kind):  # names only: no object is made for a hint
            by_ns.setdefault(ns, []).append(name)
        ctx.cache[("wiring-names", kind)] = by_ns
    if namespace is None:  # applied to the current namespace: any of them
        hit = [n for names in by_ns.values() for n in names]
    else:  # objects without a namespace land in the pod's
        hit = by_ns.get(namespace, []) + by_ns.get(None, [])
    ctx.cache[("wiring-names", kind, namespace)] = hit
    return hit


@rule("DRA301", needs="claims")
def undeclared_container_claim(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for ps in obj.pod_specs:
        declared = [c.name for c in dra.pod_claims(ps) if c.name]
        for c in k8s.containers(ps):
            for i, ref in dra.container_claim_refs(c):
                name = ref.get("name")
                if isinstance(name, str) and name not in declared:
                    listed = ", ".join(f"`{d}`" for d in declared) if declared else "none are declared"
                    yield Violation(
                        f"container `{c.name}` uses claim `{name}`, which is not in the pod's "
                        f"`spec.resourceClaims` ({listed}){_suggest(name, declared)}",
                        (*c.path, "resources", "claims", i, "name"),
                        on="value",
                    )


@rule("DRA302", needs="claims")
def unused_pod_claim(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for ps in obj.pod_specs:
        used = {
            name for c in k8s.containers(ps) for _, ref in dra.container_claim_refs(c)
            if isinstance(name := ref.get("name"), str)
        }
        for claim in dra.pod_claims(ps):
            if claim.name and claim.name not in used:
                yield Violation(
                    f"pod claim `{claim.name}` is not used by any container: its devices are allocated and "
                    "stay idle (add it to a container's `resources.claims`, or remove it)",
                    (*claim.path, "name"),
                    on="value",
                )


def _elsewhere(obj: K8sObject, ctx: Context, kind: str, name: str) -> str:
    others = [o.namespace or "(no namespace)" for o in ctx.index.find_any_namespace(kind, name)]
    if others:
        return (f"; a {kind} with that name exists in namespace {', '.join(f'`{n}`' for n in sorted(set(others)))}, "
                "but pods can only use objects in their own namespace")
    return ""


@rule("DRA303", needs="claims")
def missing_resource_claim(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for ps in obj.pod_specs:
        for claim in dra.pod_claims(ps):
            if claim.claim_name and not claim.template_name and not dra.resolve(ctx.index, claim, obj.namespace):
                names = _names_in(ctx, "ResourceClaim", obj.namespace)
                ns = f" in namespace `{obj.namespace}`" if obj.namespace else ""
                hint = _elsewhere(obj, ctx, "ResourceClaim", claim.claim_name) or _suggest(claim.claim_name, names)
                yield Violation(
                    f"ResourceClaim `{claim.claim_name}` is not defined in the linted files{ns}; the pod stays Pending "
                    f"until it exists{hint}",
                    (*claim.path, "source", "resourceClaimName") if "source" in claim.data
                    else (*claim.path, "resourceClaimName"),
                    on="value",
                )


@rule("DRA304", needs="claims")
def missing_claim_template(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for ps in obj.pod_specs:
        for claim in dra.pod_claims(ps):
            name = claim.template_name
            if not name or claim.claim_name:
                continue
            if dra.resolve(ctx.index, claim, obj.namespace) or dra.template_providers(ctx.index, name, obj.namespace):
                continue
            names = _names_in(ctx, "ResourceClaimTemplate", obj.namespace)
            ns = f" in namespace `{obj.namespace}`" if obj.namespace else ""
            yield Violation(
                f"ResourceClaimTemplate `{name}` is not defined in the linted files{ns} (nor created by a "
                "ComputeDomain); the pod stays Pending until it exists"
                f"{_elsewhere(obj, ctx, 'ResourceClaimTemplate', name) or _suggest(name, names)}",
                (*claim.path, "source", "resourceClaimTemplateName") if "source" in claim.data
                else (*claim.path, "resourceClaimTemplateName"),
                on="value",
            )


def known_classes(ctx: Context) -> frozenset[str]:
    """Device classes defined in the set plus those the configured drivers install (made once a run,
    and frozen: every claim asks, and a copy for each was a visible cost with hundreds of classes)."""
    hit: frozenset[str] | None = ctx.cache.get("known-device-classes")
    if hit is None:
        from dralint.knowledge.drivers import installed_classes

        # names only: a one-file run against a packed context then makes no class object for this
        hit = frozenset({name for _, name in ctx.index.names_of("DeviceClass")} | installed_classes(ctx.profile))
        ctx.cache["known-device-classes"] = hit
    return hit


@rule("DRA305", kinds=("ResourceClaim", "ResourceClaimTemplate"))
def unknown_device_class(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    from dralint.knowledge.classes import explain_missing, unknown_driver_of

    # the references are collected over the file's indexed objects, this one among them
    obj = intended.written(obj)
    known = known_classes(ctx)
    refs = _missing_class_refs(obj, ctx, known)
    for dc, where in refs.items():
        first_obj, path = where[0]
        if first_obj is not obj:
            continue  # one finding per class per file, on its first reference
        if unknown_driver_of(dc, ctx.profile):
            continue  # named after a listed driver dralint has no data for: taken as installed
        miss = explain_missing(dc, ctx.profile, known)
        more = len(where) - 1
        also = f" ({more} more reference{'s' if more > 1 else ''} in this file)" if more else ""
        if miss.proven:
            yield Violation(
                f"device class `{dc}` is neither defined in the linted files nor installed by a configured driver"
                f"{also}; {miss.reason}; the scheduler reports \"device class {dc} does not exist\" and the pod "
                "stays Pending",
                path,
                on="value",
            )
        else:
            yield Violation(
                f"device class `{dc}` is not defined in the linted files{also}; {miss.reason}",
                path,
                on="value",
                severity=Severity.WARNING,
            )


def _missing_class_refs(
    obj: K8sObject, ctx: Context, known: frozenset[str]
) -> dict[str, list[tuple[K8sObject, JsonPath]]]:
    """Unknown class -> its references in ``obj``'s file, in file order (computed once per file: the
    memo holds the last file's only, since it holds that file's objects and a streamed run lets
    every other file's objects go)."""
    memo: _ClassRefs | None = ctx.cache.get("dra305-refs")
    if memo is not None and memo.path == obj.file.path and id(obj) in memo.ids:
        return memo.refs  # the ids are those of objects the memo holds: none is reused meanwhile
    out: dict[str, list[tuple[K8sObject, JsonPath]]] = {}
    objs = ctx.index.in_file(obj.file.path, "ResourceClaim", "ResourceClaimTemplate")
    if not any(o is obj for o in objs):
        objs = [obj]  # an object outside the index (a migration plan's own): judged alone
    for o in objs:
        for r in dra.requests(o):
            for alt in r.alternatives:
                dc = alt.device_class
                if dc and dc not in known:  # an empty name is DRA104's (required field)
                    out.setdefault(dc, []).append((o, (*alt.path, "deviceClassName")))
    ctx.cache["dra305-refs"] = _ClassRefs(obj.file.path, objs, {id(o) for o in objs}, out)
    return out


class _ClassRefs(NamedTuple):
    """`_missing_class_refs` of one file: the claims and templates looked at, and what they reference."""

    path: str
    objects: list[K8sObject]
    ids: set[int]
    refs: dict[str, list[tuple[K8sObject, JsonPath]]]


@rule("DRA306", needs="claims")
def unknown_claim_request(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for ps in obj.pod_specs:
        claims = {c.name: c for c in dra.pod_claims(ps) if c.name}
        for c in k8s.containers(ps):
            for i, ref in dra.container_claim_refs(c):
                req = ref.get("request")
                ref_name = ref.get("name")
                claim = claims.get(ref_name) if isinstance(ref_name, str) else None
                if not isinstance(req, str) or claim is None:
                    continue
                path = (*c.path, "resources", "claims", i, "request")
                if "/" in req:
                    main = req.split("/", 1)[0]
                    yield Violation(
                        f"`request: {req}` names a subrequest; containers must name the main request "
                        f"(`{main}`): the chosen `firstAvailable` alternative is implied",
                        path,
                        on="value",
                        fix=Fix(f"Use the main request `{main}`", Applicability.SAFE, (Edit("set", path, value=main),)),
                    )
                    continue
                targets = dra.resolve(ctx.index, claim, obj.namespace)
                if not targets:
                    continue
                names = set().union(*(dra.request_names(t) for t in targets))
                if req not in names:
                    listed = ", ".join(f"`{n}`" for n in sorted(names)) or "none"
                    yield Violation(
                        f"claim `{claim.name}` ({claim.target_kind} `{claim.target_name}`) has no request `{req}` "
                        f"(it has {listed}){_suggest(req, sorted(names))}",
                        path,
                        on="value",
                    )


def _declares_sharing(claim: K8sObject) -> bool:
    """The claim carries an opaque driver config with a sharing strategy (e.g. a GpuConfig TimeSlicing block)."""
    configs = k8s.get(dra.claim_spec(claim), "devices", "config")
    if not isinstance(configs, list):
        return False
    return any(isinstance(k8s.get(c, "opaque", "parameters", "sharing"), dict) for c in configs)


# ----------------------------------------------------------------------------------------------
# DRA307's fix: a standalone claim shared by replicas -> one claim per pod from a template (also what
# `dralint migrate` would write)


def claim_to_template_fix(obj: K8sObject, claim: dra.PodClaim, index: Any) -> Fix | None:
    """The DRA307 fix: point the pod claim at a ResourceClaimTemplate with the claim's spec.

    The template (same name as the claim, in the claim's namespace) goes in a new document after the
    workload, unless one with that name already exists: then it is reused if its spec is the same,
    and another name is chosen otherwise. The standalone claim itself stays (other workloads may
    use it). Unsafe: every pod then gets devices of its own instead of sharing one allocation.
    """
    if not claim.claim_name or claim.template_name or "resourceClaimName" not in claim.data:
        return None
    found = [o for o in dra.resolve(index, claim, obj.namespace) if o.kind == "ResourceClaim"]
    if len(found) != 1:
        return None
    rc = found[0]
    spec = dra.claim_spec(rc)
    if spec is None or not rc.api_version:
        return None
    ns = rc.namespace or obj.namespace
    want = {"spec": to_plain(spec)}
    name, n = k8s.dns_name(claim.claim_name), 2
    new_doc = True
    while True:
        existing = [t for t in index.find("ResourceClaimTemplate", name, ns)]
        if not existing:
            break
        if any(same(to_plain(t.data.get("spec")), want) for t in existing):
            new_doc = False
            break
        name, n = k8s.dns_name(f"{claim.claim_name}-{n}"), n + 1
    edits: list[Edit] = [Edit("rename", (*claim.path, "resourceClaimName"), key="resourceClaimTemplateName")]
    if name != claim.claim_name:
        edits.append(Edit("set", (*claim.path, "resourceClaimTemplateName"), value=name))
    if new_doc:
        meta: dict[str, Any] = {"name": name}
        if ns:
            meta["namespace"] = ns
        edits.append(Edit("insert_document", (), value={"apiVersion": rc.api_version, "kind": "ResourceClaimTemplate",
                                                        "metadata": meta, "spec": want}))
    return Fix(f"Give each pod its own claim from ResourceClaimTemplate `{name}`", Applicability.UNSAFE,
               tuple(edits))


@rule("DRA307", kinds=("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "DaemonSet", "Job",
                       "CronJob"), needs="claims")
def shared_claim_in_replicated_workload(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    if not workloads.is_builtin(obj.api_version, obj.kind):
        return  # a Volcano `Job` has tasks, not parallelism
    replicas = k8s.replicas(obj.kind, obj.data)
    completions: int | None = None
    if obj.kind in ("Job", "CronJob"):
        spec = obj.data.get("spec") if obj.kind == "Job" else k8s.get(obj.data, "spec", "jobTemplate", "spec")
        par = k8s.get(spec, "parallelism")
        replicas = par if isinstance(par, int) and not isinstance(par, bool) else 1
        comp = k8s.get(spec, "completions")
        completions = comp if isinstance(comp, int) and not isinstance(comp, bool) else None
    many = obj.kind == "DaemonSet" or (replicas is not None and replicas > 1)
    if not many:
        return
    for ps in obj.pod_specs:
        for claim in dra.pod_claims(ps):
            if not claim.claim_name or claim.template_name:
                continue
            targets = dra.resolve(ctx.index, claim, obj.namespace)
            if obj.kind != "DaemonSet" and any(_declares_sharing(c) for c in targets):
                continue  # a claim configured for time-slicing/MPS is meant to be shared by the replicas
            if obj.kind == "DaemonSet":
                who = "every node's pod"
            elif obj.kind in ("Job", "CronJob"):
                who = f"the {replicas} pods that run at once (parallelism: {replicas}" + (
                    f", completions: {completions})" if completions is not None else ")")
            else:
                who = f"all {replicas} replicas"
            extra = (" Node-local devices are allocated on one node, so pods on other nodes stay Pending."
                     if obj.kind == "DaemonSet" else "")
            yield Violation(
                f"standalone ResourceClaim `{claim.claim_name}` is shared by {who}: they all get the same devices."
                f"{extra} Use `resourceClaimTemplateName` for one claim per pod",
                (*claim.path, "resourceClaimName"),
                on="key",
                fix=None if _refuse_claim_fix(obj, claim, ctx) else claim_to_template_fix(obj, claim, ctx.index),
            )


#: rule families that judge a claim's own spec (API conformance, CEL selectors)
_CLAIM_SPEC_FAMILIES = ("DRA1", "DRA6")


def _claim_spec_errors(rc: K8sObject, ctx: Context) -> bool:
    """Whether an error-level rule of the claim-spec families reports the ResourceClaim itself: a
    template copied from it would carry the same error into every pod."""
    from dralint.checks.registry import REGISTRY
    from dralint.knowledge.catalog import catalog
    from dralint.model import Severity

    metas = catalog()
    for code, impl in REGISTRY.items():
        meta = metas.get(code)
        if meta is None or impl.scope != "object" or not code.startswith(_CLAIM_SPEC_FAMILIES):
            continue
        if impl.kinds is not None and rc.kind not in impl.kinds:
            continue
        for v in impl.fn(rc, ctx):
            if (v.severity or meta.severity) >= Severity.ERROR:
                return True
    return False


def _refuse_claim_fix(obj: K8sObject, claim: dra.PodClaim, ctx: Context) -> bool:
    """Cases where replacing the claim by a template would damage the file or change intent: a
    flow-style (or JSON) document would be re-emitted on one line, a claim whose own spec has
    errors would be copied with them, and a claim that other workloads reference too is shared
    on purpose."""
    sf, doc = obj.file, obj.doc
    if sf.is_json or sf.text[doc.start:doc.start + 1] in ("{", "["):
        return True
    found = [o for o in dra.resolve(ctx.index, claim, obj.namespace) if o.kind == "ResourceClaim"]
    if any(_claim_spec_errors(rc, ctx) for rc in found):
        return True
    return claim.claim_name is not None and ctx.index.claim_users(claim.claim_name, obj.namespace) > 1


@rule("DRA309", needs="claims")
def pod_claim_source(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for ps in obj.pod_specs:
        for claim in dra.pod_claims(ps):
            d = claim.data
            src = d.get("source")
            if isinstance(src, dict):
                edits = [Edit("delete", (*claim.path, "source"))]
                for k in ("resourceClaimName", "resourceClaimTemplateName"):
                    if k in src:
                        edits.append(Edit("insert", claim.path, key=k, value=src[k]))
                safe = len(edits) == 2 and not any(k in d for k in ("resourceClaimName", "resourceClaimTemplateName"))
                yield Violation(
                    "`source` wrapper was removed in Kubernetes 1.31: put `resourceClaimName` or "
                    "`resourceClaimTemplateName` directly on the `resourceClaims` entry",
                    (*claim.path, "source"),
                    fix=Fix("Move the claim reference out of `source`", Applicability.SAFE, tuple(edits))
                    if safe
                    else None,
                )
                continue
            has = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if d.get(k)]
            if len(has) == 1:
                continue
            if not has:
                yield Violation(
                    f"pod claim `{claim.name or '?'}` must name exactly one of `resourceClaimName` or "
                    "`resourceClaimTemplateName` (it names neither)",
                    claim.path,
                )
            else:
                yield Violation(
                    f"pod claim `{claim.name or '?'}` names both `resourceClaimName` and `resourceClaimTemplateName`; "
                    "exactly one is allowed",
                    (*claim.path, "resourceClaimTemplateName"),
                )
