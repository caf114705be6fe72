"""DRA1xx and DRA501: will the target cluster accept these objects, and will every field take effect?

- DRA101 validates resource.k8s.io objects and every pod template against the JSON schema of the
  target minor (`dralint.knowledge.schema`).
- DRA102/DRA103 read the version lifecycle (`dralint.knowledge.lifecycle`) and record the safe conversion to
  the preferred served version as a fix.
- DRA104/DRA105 replay the API server's validation that a schema cannot express (reference §3).
- DRA108/DRA109 explain the two shape mistakes migration guides make, with the structural fix.
- DRA501 reports fields whose feature gate is off for the profile (dropped or rejected).

Double reporting: DRA108 and DRA109 own the unknown-field noise of the mistakes they explain, so
DRA101 leaves out (a) flat v1beta1 request fields directly under ``requests[]`` of a v1/v1beta2
object, (b) ResourceClaimSpec fields directly under a template's ``spec`` (and the then-missing
``spec.spec``), and (c) the removed pod ``resourceClaims[].source`` wrapper, which DRA309 reports.
DRA104 likewise skips the ``exactly``/``firstAvailable`` union check for requests DRA108 reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

from dralint.checks import admission
from dralint.checks.registry import Context, rule
from dralint.inputs import dra
from dralint.inputs.index import CLAIMS, DRA, POD, K8sObject
from dralint.knowledge import k8s, lifecycle, schema, workloads
from dralint.knowledge.lifecycle import CLAIM_SPEC_BASE, GROUP, Lifecycle
from dralint.model import Applicability, Edit, Fix, JsonPath, Violation
from dralint.suggest import closest

CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_C_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def is_dns_label(s: str) -> bool:
    return len(s) <= 63 and _DNS_LABEL.fullmatch(s) is not None


def is_dns_subdomain(s: str, max_len: int = 253) -> bool:
    return len(s) <= max_len and _DNS_SUBDOMAIN.fullmatch(s) is not None


def is_label_key(s: str) -> bool:
    # longer than a 253-character prefix, `/` and a 63-character name: invalid, and never memoised
    return len(s) <= 317 and _is_label_key(s)


#: label and annotation keys repeat across a repository's objects (`app.kubernetes.io/name`...):
#: each distinct one is checked once (a bounded memo of short strings: they come from the linted files)
@lru_cache(maxsize=4096)
def _is_label_key(s: str) -> bool:
    prefix, slash, name = s.rpartition("/")
    if slash and not is_dns_subdomain(prefix):
        return False
    return 0 < len(name) <= 63 and _LABEL_NAME.fullmatch(name) is not None


def is_label_value(s: str) -> bool:
    return s == "" or (len(s) <= 63 and _is_label_name(s))


@lru_cache(maxsize=4096)
def _is_label_name(s: str) -> bool:
    return _LABEL_NAME.fullmatch(s) is not None


def is_fully_qualified_name(s: str) -> bool:
    domain, slash, name = s.partition("/")
    return bool(slash) and is_dns_subdomain(domain, 63) and len(name) <= 32 and _C_IDENT.fullmatch(name) is not None


def is_extended_resource_name(s: str) -> bool:
    domain, slash, name = s.partition("/")
    if not slash or s.startswith("requests."):
        return False
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    return is_dns_subdomain(domain) and 0 < len(name) <= 63 and _LABEL_NAME.fullmatch(name) is not None


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _suggest(value: str, options: list[str]) -> str:
    close = closest(value, options, cutoff=0.6) or next((o for o in options if o.lower() == value.lower()), None)
    return f"; did you mean `{close}`?" if close else ""


# the shapes' data, read once: these run for every request of every claim

@cache
def _flat_fields() -> tuple[str, ...]:
    return tuple(str(f) for f in lifecycle.shapes().get("flat_request_fields") or ())


@cache
def _claim_spec_fields() -> tuple[str, ...]:
    return tuple(str(f) for f in lifecycle.shapes().get("claim_spec_fields") or ())


def _request_shape(version: str) -> str | None:
    return _request_shapes().get(version)


@cache
def _request_shapes() -> dict[str, str]:
    return {str(k): str(v) for k, v in (lifecycle.shapes().get("request") or {}).items() if v}


# ----------------------------------------------------------------------------------------------
# what DRA108 / DRA109 explain (shared with DRA101 and DRA104 so that they stay quiet about it)


def beta_shape_fields(obj: K8sObject, request: dict[str, Any]) -> list[str]:
    """Flat v1beta1 request fields directly under a request of a v1/v1beta2 (``exactly``-shaped) object."""
    if obj.kind not in CLAIM_KINDS or _request_shape(obj.version) != "exactly":
        return []
    fields = _flat_fields()
    return [k for k in request if k in fields]


def template_spec_not_nested(obj: K8sObject) -> list[str]:
    """ResourceClaimSpec fields written directly under a ResourceClaimTemplate's ``spec``."""
    if obj.kind != "ResourceClaimTemplate":
        return []
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return []
    fields = _claim_spec_fields()
    return [k for k in spec if k in fields]


def _explained_elsewhere(obj: K8sObject, err: schema.SchemaError, requests_base: JsonPath | None) -> bool:
    p = err.path
    if err.code == "unknown-field" and requests_base is not None and len(p) == len(requests_base) + 2 \
            and p[: len(requests_base)] == requests_base and err.field in _flat_fields() \
            and _request_shape(obj.version) == "exactly":
        return True  # DRA108
    if obj.kind == "ResourceClaimTemplate" and template_spec_not_nested(obj):
        if err.code == "unknown-field" and p[:1] == ("spec",) and len(p) == 2 and err.field in _claim_spec_fields():
            return True  # DRA109
        if err.code == "required" and p == ("spec",) and err.field == "spec":
            return True  # DRA109
    # DRA309 reports the removed pod claim `source:` wrapper
    return err.code == "unknown-field" and err.field == "source" and len(p) >= 3 and p[-3] == "resourceClaims"


# ----------------------------------------------------------------------------------------------
# DRA101


def _validate_part(minor: str, key: str, data: Any, prefix: JsonPath) -> list[schema.SchemaError]:
    ks = schema.get(minor, key)
    return schema.validate(ks, data, prefix) if ks is not None else []


def _is_dra_related(err: schema.SchemaError, base: JsonPath) -> bool:
    names = schema.dra_field_names()
    return any(isinstance(p, str) and p in names for p in err.path[len(base):])


@rule("DRA101", needs=("dra", "pod"))
def schema_violation(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    minor = schema.schema_minor(ctx.profile.kubernetes_version)
    if minor is None:
        return
    errors: list[schema.SchemaError] = []
    if obj.group == GROUP and obj.kind:
        # the API server validates after defaulting (a pool without `generation` decodes as 0)
        obj = admission.defaulted(obj, ctx)
        base = CLAIM_SPEC_BASE.get(obj.kind or "")
        req_base: JsonPath | None = (*base, "devices", "requests") if base else None
        errors += [e for e in _validate_part(minor, f"{obj.api_version}/{obj.kind}", obj.data, ())
                   if not _explained_elsewhere(obj, e, req_base)]
    errors += _pod_template_errors(obj, ctx, minor)
    if any(e.code == "required" for e in errors) and _kustomize_patch(obj, ctx):
        # a patch holds only the fields it changes: what it leaves out comes from the base
        errors = [e for e in errors if e.code != "required"]
    for e in errors:
        yield Violation(e.message, e.path, on=e.on)


def _kustomize_patch(obj: K8sObject, ctx: Context) -> bool:
    """Whether ``obj``'s file is one a kustomization of the run applies as a patch. Asked only of an
    object with a missing field, since it needs every kustomization of the run: a streamed run
    checks such an object once the whole index is there."""
    from dralint.inputs.kustomize_patches import patched_by

    return patched_by(ctx.index, ctx.cache, obj.file.path) is not None


def _pod_template_errors(obj: K8sObject, ctx: Context, minor: str) -> list[schema.SchemaError]:
    out: list[schema.SchemaError] = []
    kind = obj.kind
    known = workloads.builtin_pod_spec_path(obj.api_version, kind)
    if known is not None:
        if kind == "Pod":
            spec = obj.data.get("spec")
            if spec is not None:
                out += _validate_part(minor, "v1/PodSpec", spec, known)
        else:
            template = k8s.get(obj.data, *known[:-1])
            if template is not None:
                out += _validate_part(minor, "v1/PodTemplateSpec", template, known[:-1])
        return [e for e in out if not _explained_elsewhere(obj, e, None)]
    scope = ctx.options.get("custom-resource-pod-specs", "dra")
    if scope == "none":
        return out
    for ps in obj.pod_specs:
        if not ps.is_pod_spec:
            continue
        for e in _validate_part(minor, "v1/PodSpec", ps.spec, ps.path):
            if _explained_elsewhere(obj, e, None):
                continue
            if scope == "all" or _is_dra_related(e, ps.path):
                out.append(e)
    return out


# ----------------------------------------------------------------------------------------------
# DRA102 / DRA103: versions and the conversion fix


def _classic_reason(obj: K8sObject) -> str | None:
    c = lifecycle.classic()
    versions = c.get("versions") or {}
    if obj.version in versions:
        gone = (versions[obj.version] or {}).get("removed")
        return (f"resource.k8s.io/{obj.version} is classic DRA, removed in Kubernetes {gone}; structured parameters "
                "replaced it and nothing converts mechanically: rewrite it as a DeviceClass (CEL selector on the "
                "driver) plus ResourceClaims/ResourceClaimTemplates in resource.k8s.io/v1")
    if obj.kind in (c.get("kinds") or ()):
        return (f"{obj.kind} is classic DRA (removed in Kubernetes 1.31) and has no equivalent in resource.k8s.io/v1; "
                "rewrite it as a DeviceClass with a CEL selector plus ResourceClaims/ResourceClaimTemplates")
    return None


def _requests_base(obj: K8sObject) -> JsonPath | None:
    """Where the claim spec is: the proper place, or a template's misplaced ``spec`` (DRA109)."""
    base = CLAIM_SPEC_BASE.get(obj.kind or "")
    if base is None:
        return None
    if obj.kind == "ResourceClaimTemplate" and not isinstance(k8s.get(obj.data, "spec", "spec"), dict) \
            and template_spec_not_nested(obj):
        return ("spec",)
    return base


def conversion(obj: K8sObject, target: str) -> tuple[list[Edit] | None, str]:
    """Edits that turn ``obj`` into ``resource.k8s.io/<target>``, or (None, why not)."""
    sh = lifecycle.shapes()
    edits: list[Edit] = []
    # each step appends its edits and returns why the object cannot be converted ("" when it can)
    for step in (_dropped_field_edits, _request_shape_edits, _slice_shape_edits):
        why = step(obj, target, sh, edits)
        if why:
            return None, why
    if "status" in obj.data:
        edits.append(Edit("delete", ("status",)))  # the API server discards status on create anyway
    edits.append(Edit("set", ("apiVersion",), value=f"{GROUP}/{target}"))
    return edits, ""


def _dropped_field_edits(obj: K8sObject, target: str, sh: dict[str, Any], edits: list[Edit]) -> str:
    kind = obj.kind or ""
    for dotted in (sh.get("not_convertible") or {}).get(kind) or ():
        for path, value in lifecycle.match_paths(obj.data, dotted):
            if lifecycle.meaningful(value):
                return f"`{schema.where(path)}` has no equivalent in resource.k8s.io/{target}"
    for dotted in (sh.get("drop_if_empty") or {}).get(kind) or ():
        for path, value in lifecycle.match_paths(obj.data, dotted):
            if lifecycle.meaningful(value):
                return f"`{schema.where(path)}` is set, and it has no equivalent in resource.k8s.io/{target}"
            edits.append(Edit("delete", path))
    return ""


def _request_shape_edits(obj: K8sObject, target: str, sh: dict[str, Any], edits: list[Edit]) -> str:
    src_req, dst_req = (sh.get("request") or {}).get(obj.version), (sh.get("request") or {}).get(target)
    if (obj.kind or "") not in CLAIM_KINDS or src_req == dst_req:
        return ""
    if dst_req != "exactly":
        return f"converting requests to the older flat shape of {target} is not automated"
    base = _requests_base(obj)
    reqs = k8s.get(obj.data, *(base or ()), "devices", "requests")
    for i, r in enumerate(reqs if isinstance(reqs, list) else []):
        if not isinstance(r, dict):
            return f"request #{i + 1} is not a mapping"
        flat = [k for k in r if k in _flat_fields()]
        fa = r.get("firstAvailable")
        name = _s(r.get("name")) or f"#{i + 1}"
        if isinstance(fa, list) and fa and flat:
            return f"request `{name}` sets both `firstAvailable` and `{flat[0]}`, which is invalid in every version"
        if not flat and not (isinstance(fa, list) and fa):
            return f"request `{name}` names neither a device class nor `firstAvailable`"
        if flat:
            edits.append(Edit("wrap", (*(base or ()), "devices", "requests", i), key="exactly", value=tuple(flat)))
    return ""


def _slice_shape_edits(obj: K8sObject, target: str, sh: dict[str, Any], edits: list[Edit]) -> str:
    if obj.kind != "ResourceSlice":
        return ""
    src = obj.version
    devices = k8s.get(obj.data, "spec", "devices")
    src_dev, dst_dev = (sh.get("slice_device") or {}).get(src), (sh.get("slice_device") or {}).get(target)
    src_cap, dst_cap = (sh.get("slice_capacity") or {}).get(src), (sh.get("slice_capacity") or {}).get(target)
    if src_dev != dst_dev and dst_dev != "flat":
        return f"converting devices to the older `basic` shape of {target} is not automated"
    if src_cap != dst_cap and dst_cap != "value":
        return f"converting capacities to the bare quantities of {target} is not automated"
    for i, d in enumerate(devices if isinstance(devices, list) else []):
        if not isinstance(d, dict):
            return f"device #{i + 1} is not a mapping"
        holder: JsonPath = ("spec", "devices", i, "basic") if src_dev == "basic" else ("spec", "devices", i)
        caps = k8s.get(obj.data, *holder, "capacity")
        if src_cap != dst_cap and isinstance(caps, dict):
            for cname, q in caps.items():
                if not isinstance(q, dict):
                    edits.append(Edit("set", (*holder, "capacity", cname), value={"value": q}))
        if src_dev != dst_dev and "basic" in d:
            why = _unwrap_basic(d, i, edits)
            if why:
                return why
    return ""


def _unwrap_basic(d: dict[str, Any], i: int, edits: list[Edit]) -> str:
    """A v1beta1 device's `basic` wrapper, lifted into the device (or dropped when it is null)."""
    basic = d.get("basic")
    if basic is None:
        edits.append(Edit("delete", ("spec", "devices", i, "basic")))
        return ""
    if not isinstance(basic, dict):
        return f"device #{i + 1} has a `basic` that is not a mapping"
    clash = [k for k in basic if k in d and k != "basic"]
    if clash:
        return f"device #{i + 1} has `{clash[0]}` both inside and outside `basic`"
    edits.append(Edit("unwrap", ("spec", "devices", i, "basic")))
    return ""


def _conversion_fix(obj: K8sObject, lc: Lifecycle) -> tuple[Fix | None, str]:
    """The fix (if any) and a sentence for the message."""
    target = lc.conversion_target(obj.kind or "", obj.version)
    if target is None:
        return None, ""
    edits, why = conversion(obj, target)
    if edits is None:
        return None, f"; converting to resource.k8s.io/{target} needs a manual rewrite: {why}"
    return (Fix(f"Convert to resource.k8s.io/{target}", Applicability.SAFE, tuple(edits)),
            f"; use resource.k8s.io/{target} (the fix converts it)")


@rule("DRA102", needs="dra", shape="written")
def api_version_not_served(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    if obj.group != GROUP or not obj.kind:
        return
    classic = _classic_reason(obj)
    if classic:
        yield Violation(f"not served by any current Kubernetes: {classic}", ("apiVersion",), on="value")
        return
    lc = ctx.lifecycle()
    if not lc.known:
        return
    v, kind, minor = obj.version, obj.kind, lc.minor
    if lc.served(v, kind):
        return
    gv = f"{GROUP}/{v}"
    rel = lc.release(v, kind)
    if lc.knows(v, kind):
        if lc.runtime_config(v) is False:
            why = f"{gv} is switched off by your runtime-config"
        else:
            why = (f"Kubernetes {minor} does not serve {gv} by default (enable it with "
                   f"`--runtime-config {gv}=true`)")
        dep = lc.deprecated(v, kind)
        if dep is not None:
            why += f"; it is deprecated since {dep.deprecated}" + (f", removal planned in {dep.removal}"
                                                                    if dep.removal else "")
    elif lc.knows(v):
        where = [x for x in lc.versions() if lc.knows(x, kind)]
        why = f"{gv} has no kind {kind} in Kubernetes {minor}" + (
            f" (it exists in {', '.join(where)})" if where else "")
    elif rel is not None and rel.introduced and lifecycle.minor_key(minor) < lifecycle.minor_key(rel.introduced):
        why = f"{gv} {kind} arrives in Kubernetes {rel.introduced}; {minor} does not know it"
    elif rel is not None and rel.gone:
        why = f"{gv} {kind} was removed in Kubernetes {rel.gone}"
    else:
        why = f"Kubernetes {minor} does not know {gv}"
    fix, advice = _conversion_fix(obj, lc)
    if not advice:
        served = [x for x in lc.versions() if lc.served(x, kind)]
        if served:
            advice = f"; the served version{'s are' if len(served) > 1 else ' is'} {', '.join(served)}"
        else:
            known = [x for x in lc.versions() if lc.knows(x, kind)]
            advice = (f"; no version of {kind} is served by default in {minor}: enable one with `--runtime-config "
                      f"{GROUP}/<version>=true`" + (f" (known: {', '.join(known)})" if known else ""))
    yield Violation(f"{kind} {gv} is not served: {why}{advice}", ("apiVersion",), on="value", fix=fix)


@rule("DRA103", needs="dra", shape="written")
def api_version_deprecated(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    if obj.group != GROUP or not obj.kind:
        return
    lc = ctx.lifecycle()
    if not lc.known or not lc.served(obj.version, obj.kind):
        return
    dep = lc.deprecated(obj.version, obj.kind)
    if dep is None:
        return
    fix, advice = _conversion_fix(obj, lc)
    removal = f", removal planned in Kubernetes {dep.removal}" if dep.removal else ""
    yield Violation(
        f"{obj.kind} {GROUP}/{obj.version} is deprecated since Kubernetes {dep.deprecated}{removal}; the API server "
        f"answers with a deprecation warning{advice or ' (no non-deprecated version of this kind is served)'}",
        ("apiVersion",), on="value", fix=fix,
    )


# ----------------------------------------------------------------------------------------------
# DRA108 / DRA109


@rule("DRA108", kinds=CLAIM_KINDS, shape="written")
def beta_shape_in_v1(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    base = CLAIM_SPEC_BASE.get(obj.kind or "")
    reqs = k8s.get(obj.data, *(base or ()), "devices", "requests")
    if base is None or not isinstance(reqs, list):
        return
    for i, r in enumerate(reqs):
        if not isinstance(r, dict):
            continue
        flat = beta_shape_fields(obj, r)
        if not flat:
            continue
        path: JsonPath = (*base, "devices", "requests", i)
        listed = ", ".join(f"`{k}`" for k in flat)
        name = _s(r.get("name"))
        who = f"request `{name}`" if name else f"request #{i + 1}"
        fa = r.get("firstAvailable")
        has_fa = isinstance(fa, list) and bool(fa)
        fix = None
        if "exactly" in r:
            tail = "; move them into the existing `exactly` block"
        elif has_fa:
            tail = ("; this request also has `firstAvailable`: put them into its entries or drop `firstAvailable` "
                    "and wrap them in `exactly:`")
        else:
            tail = "; wrap them in `exactly:` (the fix does)"
            fix = Fix("Wrap the request fields in `exactly:`", Applicability.SAFE,
                      (Edit("wrap", path, key="exactly", value=tuple(flat)),))
        yield Violation(
            f"{who} has {listed} directly under `requests[]`, the v1beta1 shape; in {GROUP}/{obj.version} these "
            "fields belong under `exactly:` (or in each `firstAvailable` entry), so the API server rejects the claim "
            f"(unknown field, then \"exactly one of `exactly` or `firstAvailable` is required\"){tail}",
            (*path, flat[0]), fix=fix,
        )


@rule("DRA109", kinds=("ResourceClaimTemplate",), shape="written")
def template_spec_not_nested_rule(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    fields = template_spec_not_nested(obj)
    if not fields:
        return
    listed = ", ".join(f"`spec.{k}`" for k in fields)
    fix = None
    if "spec" in (obj.data.get("spec") or {}):
        tail = "; it also has `spec.spec`: merge them by hand"
    else:
        tail = "; nest them under `spec.spec` (the fix does)"
        fix = Fix("Nest the claim spec under `spec.spec`", Applicability.SAFE,
                  (Edit("wrap", ("spec",), key="spec", value=tuple(fields)),))
    yield Violation(
        f"ResourceClaimTemplate has {listed}, but a template's claim spec goes under `spec.spec` (`spec` holds "
        "only `metadata` and `spec`); the API server rejects the template (unknown field, and `spec.spec` is "
        f"required){tail}",
        ("spec", fields[0]), fix=fix,
    )


# ----------------------------------------------------------------------------------------------
# DRA104: API-server validation beyond the schema


def _namespace_labels(ctx: Context, ns: str) -> dict[str, Any] | None:
    found = ctx.index.find_any_namespace("Namespace", ns)
    if not found:
        return None
    labels = k8s.get(found[0].data, "metadata", "labels")
    return labels if isinstance(labels, dict) else {}


def _check_selectors(sels: Any, path: JsonPath, lc: Lifecycle) -> Iterator[Violation]:
    if not isinstance(sels, list):
        return
    limit = lc.limit("selectors", 32)
    if len(sels) > limit:
        yield Violation(f"{len(sels)} selectors; the API server allows at most {limit}", path)
    # The 10 Ki expression-length limit is reported with the other CEL limits by DRA605.
    for j, s in enumerate(sels):
        if not isinstance(s, dict):
            continue
        cel = s.get("cel")
        if cel is None:
            yield Violation("selector has no `cel` block: each selector needs `cel: {expression: ...}`",
                            (*path, j))
            continue


def _check_tolerations(tols: Any, path: JsonPath, lc: Lifecycle) -> Iterator[Violation]:
    if not isinstance(tols, list):
        return
    operators = lifecycle.enum_values("tolerationOperator", lc.minor)
    effects = lifecycle.enum_values("taintEffect", lc.minor)
    for j, t in enumerate(tols):
        if not isinstance(t, dict):
            continue
        op = t.get("operator")
        value = t.get("value")
        key = t.get("key")
        tp: JsonPath = (*path, j)
        if isinstance(op, str) and op and operators and op not in operators:
            yield Violation(f"toleration `operator` must be one of {', '.join(f'`{o}`' for o in operators)}, got "
                            f"\"{op}\"{_suggest(op, operators)}", (*tp, "operator"), on="value")
        if op == "Exists" and isinstance(value, str) and value:
            yield Violation("toleration `value` must be empty with `operator: Exists`", (*tp, "value"), on="value")
        elif op in (None, "", "Equal") and isinstance(value, str) and not is_label_value(value):
            yield Violation(f"toleration `value` \"{value}\" is not a valid label value (at most 63 characters: "
                            "letters, digits, `-`, `_`, `.`, starting and ending alphanumeric)", (*tp, "value"),
                            on="value")
        if isinstance(key, str) and key and not is_label_key(key):
            yield Violation(f"toleration `key` \"{key}\" is not a valid label key ([prefix/]name)", (*tp, "key"),
                            on="value")
        eff = t.get("effect")
        if isinstance(eff, str) and eff and effects and eff not in effects:
            yield Violation(_effect_message(eff, effects, lc), (*tp, "effect"), on="value")


def _effect_message(eff: str, effects: list[str], lc: Lifecycle) -> str:
    later = [v for v in lifecycle.enum_values("taintEffect", "999.0") if v not in effects]
    note = f" (`{eff}` needs Kubernetes {_since('taintEffect', eff)}+)" if eff in later else _suggest(eff, effects)
    return f"taint `effect` must be one of {', '.join(f'`{e}`' for e in effects)} in Kubernetes {lc.minor}, " \
           f"got \"{eff}\"{note}"


def _since(enum: str, value: str) -> str:
    return lifecycle.enum_since(enum, value) or "?"


def _check_alternative(alt: dict[str, Any], path: JsonPath, lc: Lifecycle) -> Iterator[Violation]:
    dc = alt.get("deviceClassName")
    if dc == "":
        # an empty string is "not set" to the API server, and the class is required here
        yield Violation("`deviceClassName` is empty; the API server requires a DeviceClass name",
                        (*path, "deviceClassName"), on="value")
    if isinstance(dc, str) and dc and not is_dns_subdomain(dc):
        yield Violation(f"`deviceClassName` \"{dc}\" is not a valid DeviceClass name (a DNS subdomain: lower-case "
                        "letters, digits, `-`, `.`)", (*path, "deviceClassName"), on="value")
    modes = lifecycle.enum_values("allocationMode", lc.minor)
    mode = alt.get("allocationMode")
    if isinstance(mode, str) and mode and mode not in modes:
        yield Violation(f"`allocationMode` must be one of {', '.join(f'`{m}`' for m in modes)}, got \"{mode}\""
                        f"{_suggest(mode, modes)}", (*path, "allocationMode"), on="value")
    count = _int(alt.get("count"))
    if mode == "All":
        if count not in (None, 0):
            yield Violation("`count` must not be set with `allocationMode: All` (All takes every matching device)",
                            (*path, "count"), on="value")
    elif mode in (None, "", "ExactCount") and count is not None and count <= 0:
        yield Violation(f"`count` must be greater than zero, got {count}", (*path, "count"), on="value")
    sels, tols = alt.get("selectors"), alt.get("tolerations")
    if sels is not None:  # most alternatives have neither: no generator for them
        yield from _check_selectors(sels, (*path, "selectors"), lc)
    if tols is not None:
        yield from _check_tolerations(tols, (*path, "tolerations"), lc)


def _request_checks(obj: K8sObject, base: JsonPath, spec: dict[str, Any], lc: Lifecycle) -> Iterator[Violation]:
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return
    reqs = devices.get("requests")
    rpath: JsonPath = (*base, "devices", "requests")
    shape = _request_shape(obj.version)
    if isinstance(reqs, list):
        limit = lc.limit("requests", 32)
        if len(reqs) > limit:
            yield Violation(f"{len(reqs)} requests; the API server allows at most {limit} per claim", rpath)
        seen: dict[str, int] = {}
        for i, r in enumerate(reqs):
            if not isinstance(r, dict):
                continue
            p: JsonPath = (*rpath, i)
            name = r.get("name")
            if isinstance(name, str):
                if not is_dns_label(name):
                    yield Violation(f"request name \"{name}\" is not a DNS label (lower-case letters, digits and `-`, "
                                    "at most 63 characters); containers and constraints refer to it",
                                    (*p, "name"), on="value")
                if name in seen:
                    yield Violation(f"request name `{name}` is used twice (also request #{seen[name] + 1}); names "
                                    "must be unique", (*p, "name"), on="value")
                seen.setdefault(name, i)
            yield from _union_checks(obj, r, p, shape, lc)
    yield from _ref_list_checks(devices.get("constraints"), (*base, "devices", "constraints"), "constraints", lc)
    yield from _ref_list_checks(devices.get("config"), (*base, "devices", "config"), "config", lc)
    cons = devices.get("constraints")
    for j, c in enumerate(cons if isinstance(cons, list) else []):
        if not isinstance(c, dict):
            continue
        cp: JsonPath = (*base, "devices", "constraints", j)
        set_ = [k for k in ("matchAttribute", "distinctAttribute") if c.get(k) not in (None, "")]
        if len(set_) > 1:
            yield Violation("a constraint sets both `matchAttribute` and `distinctAttribute`; exactly one is allowed",
                            (*cp, "distinctAttribute"))
        elif not set_:
            yield Violation("a constraint needs `matchAttribute` (or `distinctAttribute`)", cp)
        for k in set_:
            v = c.get(k)
            if isinstance(v, str) and not is_fully_qualified_name(v):
                yield Violation(f"`{k}` \"{v}\" must be a fully qualified attribute name `<domain>/<name>` (e.g. "
                                "`gpu.nvidia.com/parentUUID`; the name is a C identifier of at most 32 characters)",
                                (*cp, k), on="value")
    yield from _config_checks(devices.get("config"), (*base, "devices", "config"), lc)


def _union_checks(obj: K8sObject, r: dict[str, Any], p: JsonPath, shape: str | None,
                  lc: Lifecycle) -> Iterator[Violation]:
    fa = r.get("firstAvailable")
    has_fa = isinstance(fa, list) and bool(fa)
    if shape == "exactly":
        if beta_shape_fields(obj, r):
            return  # DRA108 reports this request
        exactly = r.get("exactly")
        if exactly is not None and has_fa:
            yield Violation("a request sets both `exactly` and `firstAvailable`; exactly one is allowed",
                            (*p, "firstAvailable"))
        elif exactly is None and not has_fa:
            yield Violation("a request needs exactly one of `exactly` or `firstAvailable` (it has neither)", p)
        if isinstance(exactly, dict):
            yield from _check_alternative(exactly, (*p, "exactly"), lc)
    elif shape == "flat":
        flat = [k for k in r if k in _flat_fields()]
        if has_fa and flat:
            yield Violation(f"`firstAvailable` cannot be combined with `{flat[0]}` on the same request (put it in each "
                            "subrequest)", (*p, flat[0]))
        elif not has_fa and r.get("deviceClassName") is None and not _schema_requires(lc, obj.version,
                                                                                       "DeviceRequest",
                                                                                       "deviceClassName"):
            yield Violation("a request needs `deviceClassName` (or `firstAvailable`)", p)
        if not has_fa:
            yield from _check_alternative(r, p, lc)
    if isinstance(fa, list):
        limit = lc.limit("subrequests", 8)
        if len(fa) > limit:
            yield Violation(f"{len(fa)} `firstAvailable` entries; the API server allows at most {limit}",
                            (*p, "firstAvailable"))
        names: set[str] = set()
        for j, sub in enumerate(fa):
            if not isinstance(sub, dict):
                continue
            sp: JsonPath = (*p, "firstAvailable", j)
            sname = sub.get("name")
            if isinstance(sname, str):
                if not is_dns_label(sname):
                    yield Violation(f"subrequest name \"{sname}\" is not a DNS label (lower-case letters, digits and "
                                    "`-`, at most 63 characters)", (*sp, "name"), on="value")
                if sname in names:
                    yield Violation(f"subrequest name `{sname}` is used twice in this request", (*sp, "name"),
                                    on="value")
                names.add(sname)
            yield from _check_alternative(sub, sp, lc)


def _schema_requires(lc: Lifecycle, version: str, type_name: str, field: str) -> bool:
    minor = schema.schema_minor(lc.minor)
    if minor is None:
        return False
    try:
        d = schema._definition(minor, f"io.k8s.api.resource.{version}.{type_name}")
    except KeyError:
        return False
    return field in (d.get("required") or ())


def _ref_list_checks(items: Any, path: JsonPath, what: str, lc: Lifecycle) -> Iterator[Violation]:
    if not isinstance(items, list):
        return
    limit = lc.limit(what, 32)
    if len(items) > limit:
        yield Violation(f"{len(items)} `{what}` entries; the API server allows at most {limit} per claim", path)
    ref_limit = lc.limit("request_references", 32)
    for j, item in enumerate(items):
        refs = item.get("requests") if isinstance(item, dict) else None
        if not isinstance(refs, list):
            continue
        rp: JsonPath = (*path, j, "requests")
        if len(refs) > ref_limit:
            yield Violation(f"{len(refs)} request references; the API server allows at most {ref_limit}", rp)
        seen: set[str] = set()
        for k, ref in enumerate(refs):
            if not isinstance(ref, str):
                continue
            parts = ref.split("/")
            if len(parts) > 2 or not all(is_dns_label(x) for x in parts):
                yield Violation(f"\"{ref}\" is not a request reference: write `<request>` or `<request>/<subrequest>` "
                                "(DNS labels)", (*rp, k), on="value")
            elif ref in seen:
                yield Violation(f"request `{ref}` is listed twice", (*rp, k), on="value")
            seen.add(ref)


#: the API server's measure of opaque parameters (compact JSON); one encoder, not one per config entry
_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), default=str).encode


def _config_checks(items: Any, path: JsonPath, lc: Lifecycle) -> Iterator[Violation]:
    if not isinstance(items, list):
        return
    max_bytes = lc.limit("opaque_parameters_bytes", 10240)
    for j, c in enumerate(items):
        if not isinstance(c, dict):
            continue
        cp: JsonPath = (*path, j)
        opaque = c.get("opaque")
        if opaque is None:
            yield Violation("a config entry needs an `opaque` block (`driver` + `parameters`)", cp)
            continue
        if not isinstance(opaque, dict):
            continue
        drv = opaque.get("driver")
        if isinstance(drv, str) and drv:
            if len(drv) > 63:
                yield Violation(f"driver name is {len(drv)} characters; at most 63 are allowed",
                                (*cp, "opaque", "driver"), on="value")
            elif not is_dns_subdomain(drv.lower()):
                yield Violation(f"driver name \"{drv}\" is not a DNS subdomain (e.g. `gpu.nvidia.com`)",
                                (*cp, "opaque", "driver"), on="value")
        params = opaque.get("parameters")
        if "parameters" in opaque and params is None:
            yield Violation("`parameters` must be a JSON object, not null", (*cp, "opaque", "parameters"), on="value")
        elif isinstance(params, dict):
            size = len(_COMPACT_JSON(params))
            if size > max_bytes:
                yield Violation(f"`parameters` is {size:,} bytes as JSON; the API server accepts at most "
                                f"{max_bytes:,} on create", (*cp, "opaque", "parameters"))


def _admin_access(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    if not obj.namespace:
        return
    for r in dra.requests(obj):
        for alt in r.alternatives:
            if alt.data.get("adminAccess") is True:
                labels = _namespace_labels(ctx, obj.namespace)
                if labels is None:
                    return  # the Namespace is not in the set: nothing to check against
                if labels.get("resource.kubernetes.io/admin-access") != "true":
                    yield Violation(
                        f"`adminAccess: true` needs the label `resource.kubernetes.io/admin-access: \"true\"` on "
                        f"namespace `{obj.namespace}`; without it the API server refuses to create this "
                        f"{obj.kind} (Forbidden)",
                        (*alt.path, "adminAccess"), on="value",
                    )


@rule("DRA104", needs=("dra", "claims"))
def invalid_device_request(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    lc = ctx.lifecycle()
    # what the API server validates: defaulted, fields of disabled gates dropped (DRA501's)
    obj = admission.admitted(obj, ctx)
    kind = obj.kind
    # a version/kind the target does not know is DRA102's; its rules may not apply
    if obj.group == GROUP and (not lc.known or lc.knows(obj.version, kind or "")):
        # metadata.name is DRA110's (ObjectMeta of every kind)
        if kind in CLAIM_KINDS:
            base = CLAIM_SPEC_BASE[kind]
            spec = k8s.get(obj.data, *base)
            if isinstance(spec, dict):
                yield from _request_checks(obj, base, spec, lc)
            yield from _admin_access(obj, ctx)
            if kind == "ResourceClaimTemplate":
                meta = k8s.get(obj.data, "spec", "metadata")
                if isinstance(meta, dict):
                    for k in meta:
                        if k not in ("labels", "annotations"):
                            yield Violation(
                                f"`spec.metadata.{k}` is not allowed: a template's metadata may only hold `labels` "
                                "and `annotations` (the claim's name and namespace come from the pod)",
                                ("spec", "metadata", k))
        elif kind == "DeviceClass":
            yield from _device_class_checks(obj, lc)
        elif kind == "ResourceSlice":
            yield from _slice_checks(obj, lc)
        elif kind == "DeviceTaintRule":
            yield from _taint_checks(k8s.get(obj.data, "spec", "taint"), ("spec", "taint"), lc, single=True)
    if obj.facets & CLAIMS:  # every pod check is about claims
        yield from _pod_checks(obj)


def _device_class_checks(obj: K8sObject, lc: Lifecycle) -> Iterator[Violation]:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return
    yield from _check_selectors(spec.get("selectors"), ("spec", "selectors"), lc)
    cfg = spec.get("config")
    if isinstance(cfg, list) and len(cfg) > lc.limit("config", 32):
        yield Violation(f"{len(cfg)} config entries; the API server allows at most {lc.limit('config', 32)}",
                        ("spec", "config"))
    yield from _config_checks(cfg, ("spec", "config"), lc)
    ern = spec.get("extendedResourceName")
    if isinstance(ern, str) and ern and not is_extended_resource_name(ern):
        yield Violation(
            f"`extendedResourceName` \"{ern}\" is not a valid extended resource name: use `<domain>/<name>` outside "
            "the kubernetes.io domain (e.g. `nvidia.com/gpu`)",
            ("spec", "extendedResourceName"), on="value",
        )


def _taint_checks(taint: Any, path: JsonPath, lc: Lifecycle, single: bool = False) -> Iterator[Violation]:
    effects = lifecycle.enum_values("taintEffect", lc.minor)
    for t, tp in ([(taint, path)] if single else
                  [(x, (*path, j)) for j, x in enumerate(taint if isinstance(taint, list) else [])]):
        if not isinstance(t, dict):
            continue
        key, value, eff = t.get("key"), t.get("value"), t.get("effect")
        if isinstance(key, str) and key and not is_label_key(key):
            yield Violation(f"taint `key` \"{key}\" is not a valid label key ([prefix/]name)", (*tp, "key"),
                            on="value")
        if isinstance(value, str) and not is_label_value(value):
            yield Violation(f"taint `value` \"{value}\" is not a valid label value", (*tp, "value"), on="value")
        if isinstance(eff, str) and effects and eff not in effects:
            yield Violation(_effect_message(eff, effects, lc), (*tp, "effect"), on="value")


def _slice_checks(obj: K8sObject, lc: Lifecycle) -> Iterator[Violation]:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return
    yield from _slice_node_selection(spec)
    devices = spec.get("devices")
    if spec.get("sharedCounters") and devices:
        yield Violation("a ResourceSlice may have `sharedCounters` or `devices`, not both", ("spec", "sharedCounters"))
    pool = spec.get("pool")
    if isinstance(pool, dict):
        yield from _slice_pool(pool)
    if not isinstance(devices, list):
        return
    advanced = any(isinstance(d, dict) and (_dev(d).get("taints") or _dev(d).get("consumesCounters"))
                   for d in devices)
    limit = lc.limit("slice_devices_advanced" if advanced else "slice_devices", 128)
    if len(devices) > limit:
        yield Violation(f"{len(devices)} devices; the API server allows at most {limit} per slice"
                        + (" when devices use taints or counters" if advanced else ""), ("spec", "devices"))
    names: set[str] = set()
    for i, d in enumerate(devices):
        if isinstance(d, dict):
            yield from _slice_device(d, ("spec", "devices", i), names, lc)


def _slice_node_selection(spec: dict[str, Any]) -> Iterator[Violation]:
    selection = [k for k in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection") if k in spec
                 and spec[k] is not None]
    if not selection:
        yield Violation("a ResourceSlice needs exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                        "`perDeviceNodeSelection`", ("spec",))
    elif len(selection) > 1:
        yield Violation(f"a ResourceSlice sets {', '.join(f'`{k}`' for k in selection)}; exactly one is allowed",
                        ("spec", selection[1]))
    for k in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(k) is False:
            yield Violation(f"`{k}` must be unset or `true`", ("spec", k), on="value")
    if spec.get("nodeName") == "":
        yield Violation("`nodeName` must not be empty", ("spec", "nodeName"), on="value")
    terms = k8s.get(spec, "nodeSelector", "nodeSelectorTerms")
    if isinstance(terms, list) and len(terms) != 1:
        yield Violation(f"`nodeSelector` must have exactly one `nodeSelectorTerms` entry, it has {len(terms)}",
                        ("spec", "nodeSelector", "nodeSelectorTerms"))


def _slice_pool(pool: dict[str, Any]) -> Iterator[Violation]:
    count = _int(pool.get("resourceSliceCount"))
    if count is not None and count <= 0:
        yield Violation("`pool.resourceSliceCount` must be greater than zero",
                        ("spec", "pool", "resourceSliceCount"), on="value")
    gen = _int(pool.get("generation"))
    if gen is not None and gen < 0:
        yield Violation("`pool.generation` must not be negative", ("spec", "pool", "generation"), on="value")
    pname = pool.get("name")
    if isinstance(pname, str) and (len(pname) > 253 or not all(is_dns_subdomain(x) for x in pname.split("/"))):
        yield Violation(f"pool name \"{pname}\" must be DNS subdomains joined by `/`", ("spec", "pool", "name"),
                        on="value")


def _slice_device(d: dict[str, Any], dp: JsonPath, names: set[str], lc: Lifecycle) -> Iterator[Violation]:
    """One device of a slice; ``names`` collects the names seen so far (a repeat is an error)."""
    name = d.get("name")
    if isinstance(name, str):
        if not is_dns_label(name):
            yield Violation(f"device name \"{name}\" is not a DNS label", (*dp, "name"), on="value")
        elif name in names:
            yield Violation(f"device name `{name}` is used twice in this slice", (*dp, "name"), on="value")
        names.add(name)
    body = _dev(d)
    hp: JsonPath = (*dp, "basic") if isinstance(d.get("basic"), dict) else dp
    attrs = body.get("attributes")
    caps = body.get("capacity")
    max_fields = lc.limit("device_attributes_and_capacities", 32)
    n = (len(attrs) if isinstance(attrs, dict) else 0) + (len(caps) if isinstance(caps, dict) else 0)
    if n > max_fields:
        yield Violation(f"{n} attributes and capacities; the API server allows at most {max_fields} per device", dp)
    for aname, a in (attrs.items() if isinstance(attrs, dict) else ()):
        if isinstance(a, dict):
            yield from _slice_attribute(aname, a, (*hp, "attributes", aname), lc)
    taints = body.get("taints")
    if isinstance(taints, list) and len(taints) > lc.limit("device_taints", 16):
        yield Violation(f"{len(taints)} taints; the API server allows at most {lc.limit('device_taints', 16)} "
                        "per device", (*hp, "taints"))
    yield from _taint_checks(taints, (*hp, "taints"), lc)


def _slice_attribute(aname: str, a: dict[str, Any], ap: JsonPath, lc: Lifecycle) -> Iterator[Violation]:
    set_ = [k for k, v in a.items() if v is not None]
    if len(set_) != 1:
        yield Violation(f"attribute `{aname}` must set exactly one value field (`bool`, `int`, `string` or "
                        f"`version`), it sets {len(set_)}", ap)
    max_str = lc.limit("attribute_string_length", 64)
    for k in ("string", "version"):
        v = a.get(k)
        if isinstance(v, str) and len(v) > max_str:
            yield Violation(f"attribute `{aname}` {k} is {len(v)} characters; at most {max_str} are allowed",
                            (*ap, k), on="value")


def _dev(d: dict[str, Any]) -> dict[str, Any]:
    basic = d.get("basic")
    return basic if isinstance(basic, dict) else d


def _pod_checks(obj: K8sObject) -> Iterator[Violation]:
    for ps in obj.pod_specs:
        if k8s.get(ps.spec, "resources", "claims") is not None:
            yield Violation("`resources.claims` is not allowed at pod level (\"claims cannot be set for Resources at "
                            "pod-level\"); put the claim in each container's `resources.claims`",
                            (*ps.path, "resources", "claims"))
        eph = ps.spec.get("ephemeralContainers")
        for i, c in enumerate(eph if isinstance(eph, list) else []):
            if isinstance(c, dict) and k8s.get(c, "resources", "claims") is not None:
                yield Violation("ephemeral containers cannot have `resources` (claims included); the API server "
                                "rejects the pod", (*ps.path, "ephemeralContainers", i, "resources"))
        names: set[str] = set()
        for claim in dra.pod_claims(ps):
            if claim.name is None:
                continue
            if not is_dns_label(claim.name):
                yield Violation(f"pod claim name \"{claim.name}\" is not a DNS label (lower-case letters, digits and "
                                "`-`, at most 63 characters)", (*claim.path, "name"), on="value")
            elif claim.name in names:
                yield Violation(f"pod claim name `{claim.name}` is used twice; names must be unique",
                                (*claim.path, "name"), on="value")
            names.add(claim.name)
        for c in k8s.containers(ps):
            pairs: dict[tuple[str, str], int] = {}
            for i, ref in dra.container_claim_refs(c):
                name, req = ref.get("name"), ref.get("request")
                path: JsonPath = (*c.path, "resources", "claims", i)
                if isinstance(req, str) and req and "/" not in req and not is_dns_label(req):
                    yield Violation(f"`request` \"{req}\" is not a DNS label (it must name one request of the claim)",
                                    (*path, "request"), on="value")
                if not isinstance(name, str):
                    continue
                key = (name, req if isinstance(req, str) else "")
                bare_clash = (key[1] == "" and any(n == name for n, _ in pairs)) or \
                             (key[1] != "" and (name, "") in pairs)
                if key in pairs or bare_clash:
                    yield Violation(
                        f"container `{c.name}` lists claim `{name}` more than once"
                        + (" (a whole-claim entry and a per-request entry overlap)" if bare_clash and key not in pairs
                           else ""), path)
                pairs.setdefault(key, i)


# ----------------------------------------------------------------------------------------------
# DRA105


@rule("DRA105", kinds=CLAIM_KINDS)
def dangling_request_reference(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    base = CLAIM_SPEC_BASE.get(obj.kind or "")
    devices = k8s.get(obj.data, *(base or ()), "devices")
    if base is None or not isinstance(devices, dict):
        return
    reqs = devices.get("requests")
    subs: dict[str, list[str] | None] = {}  # request -> subrequest names (None: not a firstAvailable request)
    for r in reqs if isinstance(reqs, list) else []:
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            continue
        fa = r.get("firstAvailable")
        subs[r["name"]] = [s["name"] for s in fa if isinstance(s, dict) and isinstance(s.get("name"), str)] \
            if isinstance(fa, list) and fa else None
    for what in ("constraints", "config"):
        items = devices.get(what)
        for j, item in enumerate(items if isinstance(items, list) else []):
            refs = item.get("requests") if isinstance(item, dict) else None
            for k, ref in enumerate(refs if isinstance(refs, list) else []):
                if not isinstance(ref, str) or ref.count("/") > 1:
                    continue
                path: JsonPath = (*base, "devices", what, j, "requests", k)
                req, _, sub = ref.partition("/")
                listed = ", ".join(f"`{n}`" for n in subs) or "none"
                if req not in subs:
                    yield Violation(
                        f"`{what}[{j}]` refers to request `{req}`, which this {obj.kind} does not have (it has "
                        f"{listed}), so the API server rejects the object{_suggest(req, list(subs))}",
                        path, on="value")
                elif sub:
                    names = subs[req]
                    if names is None:
                        yield Violation(
                            f"`{ref}` names a subrequest, but request `{req}` has no `firstAvailable` list, so the "
                            f"API server rejects the object; refer to it as `{req}`", path, on="value")
                    elif sub not in names:
                        yield Violation(
                            f"request `{req}` has no subrequest `{sub}` (it has "
                            f"{', '.join(f'`{n}`' for n in names)}), so the API server rejects the object"
                            f"{_suggest(sub, names)}", path, on="value")


# ----------------------------------------------------------------------------------------------
# DRA501


def _gate_text(use: lifecycle.GatedUse, lc: Lifecycle) -> str:
    g = use.gate
    if g.overridden:
        state = f"which your profile turns off in Kubernetes {lc.minor}"
    else:
        state = f"which is {g.stage} and off by default in Kubernetes {lc.minor}"
    later = lifecycle.first_minor_with_default_on(g.name)
    how = f"enable it with `--feature-gates {g.name}=true`"
    if later and lifecycle.minor_key(later) > lifecycle.minor_key(lc.minor) and not g.overridden:
        how += f" (on by default from Kubernetes {later})"
    return f"feature gate `{g.name}`, {state}; {how}"


def _may_be_gated(kind: str | None, facets: int, ctx: Context) -> bool:
    """Only resource.k8s.io objects, pod specs and the few other kinds a gate controls hold gated fields."""
    return bool(facets & (DRA | POD)) or kind in _extra_gated_kinds()


@rule("DRA501", when=_may_be_gated)
def feature_gate_required(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    lc = ctx.lifecycle()
    if not lc.known:
        return
    pod_paths = [ps.path for ps in obj.pod_specs]
    if obj.group != GROUP and not pod_paths and obj.kind not in _extra_gated_kinds():
        return
    for use in lc.gated_uses(obj.kind, obj.data, pod_paths):
        c = use.control
        gate = _gate_text(use, lc)
        effect = f": {c.effect}" if c.effect else ""
        if c.kind and use.path == ("kind",):
            yield Violation(
                f"{obj.kind} needs {gate}. Without it the API server does not serve {obj.kind} at all (kubectl reports "
                "an unknown resource type)", ("kind",), on="value")
            continue
        field = schema.where(use.path)
        if c.when_off == "rejected":
            what = "the API server rejects the object"
        elif c.when_off == "dropped-then-rejected":
            what = f"the API server silently drops the field{effect}, so the object is rejected"
            effect = ""
        else:
            what = f"the API server silently drops the field{effect}"
            effect = ""
        yield Violation(f"`{field}` needs {gate}. With the gate off, {what}", use.path)


@cache
def _extra_gated_kinds() -> frozenset[str]:
    """Non-resource.k8s.io kinds that a gate controls (e.g. PodGroup)."""
    out: set[str] = set()
    for controls in lifecycle.gate_controls().values():
        for c in controls:
            out.update(c.kinds)
    return frozenset(out)
