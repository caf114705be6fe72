"""DRA2xx: device-plugin (extended resource) usage that a DRA migration has to replace."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dralint.checks.conformance import is_extended_resource_name
from dralint.checks.registry import Context, rule
from dralint.inputs import dra
from dralint.inputs.index import Index, K8sObject
from dralint.knowledge import k8s
from dralint.knowledge.legacy import LegacyResource, legacy
from dralint.model import Applicability, Edit, Fix, JsonPath, Violation


@dataclass(frozen=True)
class Usage:
    pod_spec: k8s.PodSpecRef
    container: k8s.ContainerRef
    resource: LegacyResource
    path: JsonPath  # the resource key in limits (or requests when there is no limit)
    amount: Any
    sections: tuple[str, ...]


def usages(obj: K8sObject, ctx: Context) -> list[Usage]:
    """Every (container, legacy resource) pair of an object; computed once per object and run."""
    hit = obj.memo.get("legacy-usages")
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    know = legacy(ctx.profile)
    out: list[Usage] = []
    for ps in obj.pod_specs:
        for c in k8s.containers(ps):
            found: dict[str, tuple[JsonPath, Any, list[str]]] = {}
            for section, m in k8s.resource_maps(c):
                for name, amount in m.items():
                    res = know.classify(name)
                    if res is None:
                        continue
                    path = (*c.path, "resources", section, name)
                    if name in found:
                        found[name][2].append(section)
                    else:
                        found[name] = (path, amount, [section])
            for name, (path, amount, sections) in found.items():
                res = know.classify(name)
                assert res is not None
                out.append(Usage(ps, c, res, path, amount, tuple(sections)))
    obj.memo["legacy-usages"] = out
    return out


def _amount(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _where(obj: K8sObject, u: Usage) -> str:
    kind = {"initContainers": "init container", "ephemeralContainers": "ephemeral container"}.get(
        u.container.field, "container"
    )
    return f"{kind} `{u.container.name}`"


@rule("DRA201", needs="pod")
def legacy_gpu_extended_resource(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for u in usages(obj, ctx):
        if u.resource.kind != "gpu":
            continue
        yield Violation(
            f"{_where(obj, u)} requests `{u.resource.name}: {_amount(u.amount)}` from the NVIDIA device plugin; "
            f"with DRA, request devices of class `{u.resource.device_class}` through a ResourceClaimTemplate "
            "(`dralint migrate` writes it)",
            u.path,
        )


@rule("DRA202", needs="pod")
def legacy_mig_extended_resource(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for u in usages(obj, ctx):
        if u.resource.kind != "mig":
            continue
        yield Violation(
            f"{_where(obj, u)} requests MIG device `{u.resource.name}: {_amount(u.amount)}` from the device plugin; "
            f"with DRA, claim class `{u.resource.device_class}` with selector "
            f"`device.attributes['gpu.nvidia.com'].profile == '{u.resource.dra_profile}'` "
            "(the DRA profile keeps `+` where the plugin's resource name has `.`)",
            u.path,
        )


@rule("DRA203", needs="pod")
def legacy_shared_gpu_resource(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for u in usages(obj, ctx):
        if u.resource.kind != "shared":
            continue
        yield Violation(
            f"{_where(obj, u)} requests shared GPU replicas `{u.resource.name}: {_amount(u.amount)}` "
            "(device-plugin time-slicing/MPS); with DRA, share one ResourceClaim between the pods and set "
            "a GpuConfig sharing strategy (driver gate TimeSlicingSettings or MPSSupport)",
            u.path,
        )


def _claim_gpu_classes(index: Index, obj: K8sObject, claim: dra.PodClaim, ctx: Context) -> list[str]:
    know = legacy(ctx.profile)
    classes: list[str] = []
    for target in dra.resolve(index, claim, obj.namespace):
        for r in dra.requests(target):
            for alt in r.alternatives:
                dc = alt.device_class
                if dc and (know.is_gpu_class(dc) or _class_serves_gpu(index, dc, ctx)):
                    classes.append(dc)
    return classes


def _class_serves_gpu(index: Index, name: str, ctx: Context) -> bool:
    """A DeviceClass defined in the set whose selectors pick devices of a known GPU driver."""
    know = legacy(ctx.profile)
    vendors = set(know.gpu_classes.values())
    for dc in index.find("DeviceClass", name):
        for sel in k8s.get(dc.data, "spec", "selectors") or []:
            expr = k8s.get(sel, "cel", "expression")
            if not isinstance(expr, str) or not any(v in expr for v in vendors):
                continue
            if "'mig'" not in expr and '"mig"' not in expr:
                return "type" not in expr or "'gpu'" in expr or '"gpu"' in expr
    return False


@rule("DRA204", needs="pod")
def mixed_allocation_models(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    uses = usages(obj, ctx)
    if not uses:
        return
    for ps in obj.pod_specs:
        legacy_here = [u for u in uses if u.pod_spec.path == ps.path]
        if not legacy_here:
            continue
        for claim in dra.pod_claims(ps):
            classes = _claim_gpu_classes(ctx.index, obj, claim, ctx)
            if not classes:
                continue
            u = legacy_here[0]
            yield Violation(
                f"pod asks for GPUs twice: `{u.resource.name}` from the device plugin ({_where(obj, u)}) and "
                f"claim `{claim.name}` ({claim.target_kind} `{claim.target_name}`, class `{classes[0]}`) through DRA; "
                "two allocators would each hand out a GPU. Keep one of them",
                claim.path,
            )


_QUOTA_PREFIXES = ("", "requests.", "limits.")


@rule("DRA205", kinds=("ResourceQuota", "LimitRange"))
def legacy_gpu_quota(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    know = legacy(ctx.profile)
    if obj.kind == "ResourceQuota":
        hard = k8s.get(obj.data, "spec", "hard")
        if not isinstance(hard, dict):
            return
        for key, value in hard.items():
            base = next((key[len(p):] for p in _QUOTA_PREFIXES[1:] if key.startswith(p)), key)
            res = know.classify(base)
            if res is None:
                continue
            dra_key = know.quota_key(res.device_class)
            fix = None
            if dra_key not in hard:
                fix = Fix(
                    f"Add DRA quota `{dra_key}`",
                    Applicability.UNSAFE,
                    (Edit("insert", ("spec", "hard"), value=value, key=dra_key, after=key),),
                )
            yield Violation(
                f"quota on `{key}` does not limit GPUs allocated through DRA; "
                f"limit `{dra_key}` (devices of class `{res.device_class}`) as well",
                ("spec", "hard", key),
                fix=fix,
            )
    else:
        limits = k8s.get(obj.data, "spec", "limits")
        if not isinstance(limits, list):
            return
        for i, item in enumerate(limits):
            if not isinstance(item, dict):
                continue
            for section in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
                m = item.get(section)
                if not isinstance(m, dict):
                    continue
                for key in m:
                    res = know.classify(key)
                    if res is not None:
                        yield Violation(
                            f"LimitRange `{section}` on `{key}` does not apply to GPUs allocated through DRA "
                            f"(claims on class `{res.device_class}`); use a ResourceQuota on "
                            f"`{know.quota_key(res.device_class)}`",
                            ("spec", "limits", i, section, key),
                        )


@rule("DRA206", needs="claims")
def gfd_label_scheduling(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    know = legacy(ctx.profile)
    for ps in obj.pod_specs:
        if not dra.pod_claims(ps):
            continue
        sel = ps.spec.get("nodeSelector")
        if isinstance(sel, dict):
            for key, value in sel.items():
                if know.is_gfd_label(key):
                    cel = know.gfd_cel(key, "=", str(value))
                    yield Violation(_gfd_message(key, cel), (*ps.path, "nodeSelector", key))
        terms = k8s.get(ps.spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                        "nodeSelectorTerms")
        if isinstance(terms, list):
            for ti, term in enumerate(terms):
                exprs = term.get("matchExpressions") if isinstance(term, dict) else None
                if not isinstance(exprs, list):
                    continue
                for ei, e in enumerate(exprs):
                    if not isinstance(e, dict) or not isinstance(e.get("key"), str) or not know.is_gfd_label(e["key"]):
                        continue
                    raw_vals = e.get("values")
                    vals: list[Any] = raw_vals if isinstance(raw_vals, list) else []
                    cel = know.gfd_cel(e["key"], str(e.get("operator")), str(vals[0])) if len(vals) == 1 else None
                    path = (*ps.path, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                            "nodeSelectorTerms", ti, "matchExpressions", ei, "key")
                    yield Violation(_gfd_message(e["key"], cel), path, on="value")


def _gfd_message(key: str, cel: str | None) -> str:
    msg = (f"node label `{key}` (gpu-feature-discovery) picks nodes, not devices: with DRA claims, select the "
           "device in the claim instead")
    if cel:
        msg += f", e.g. CEL `{cel}`"
    return msg


@rule("DRA208", needs="pod")
def extended_resource_bridge(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    # Only a name with a domain (an extended resource name, or a class's implicit
    # deviceclass.resource.kubernetes.io/ name) can be served by a class: a pod that requests none
    # needs no look at the classes, which lets a streamed run check it on its own.
    if not any("/" in name for ps in obj.pod_specs for c in k8s.containers(ps)
               for _, m in k8s.resource_maps(c) for name in m):
        return
    served: dict[str, str] = ctx.cache.get("extended-resource-classes")  # type: ignore[assignment]
    if served is None:
        served = {}
        for dc in ctx.index.of_kind("DeviceClass"):
            ern = k8s.get(dc.data, "spec", "extendedResourceName")
            if isinstance(ern, str) and is_extended_resource_name(ern) and dc.name:  # else rejected
                served.setdefault(ern, dc.name)
        ctx.cache["extended-resource-classes"] = served
    if not served:
        return
    for ps in obj.pod_specs:
        for c in k8s.containers(ps):
            for section, m in k8s.resource_maps(c):
                for name in m:
                    cls = served.get(name)
                    if cls is None and name.startswith("deviceclass.resource.kubernetes.io/"):
                        cls = name.split("/", 1)[1]
                    if cls is None:
                        continue
                    yield Violation(
                        f"`{name}` can be served by DeviceClass `{cls}` through `extendedResourceName` "
                        "(feature gate DRAExtendedResource): on nodes without a device plugin the scheduler "
                        "allocates it through DRA and creates a hidden ResourceClaim for the pod",
                        (*c.path, "resources", section, name),
                    )
                    break
