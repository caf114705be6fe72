"""Reading DRA objects the same way everywhere: claim specs, requests (in every API shape),
and the claims a pod spec refers to.

v1 and v1beta2 requests are ``{name, exactly: {...}}`` or ``{name, firstAvailable: [...]}``;
v1alpha3/v1beta1 requests are flat (``{name, deviceClassName, count, ...}``). Rules should not care:
`requests()` yields one `Request` per request with its alternatives normalised.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dralint.inputs import intended
from dralint.inputs.index import Index, K8sObject
from dralint.knowledge import k8s
from dralint.model import JsonPath

CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")
DRA_GROUP = k8s.DRA_GROUP


@dataclass(frozen=True)
class Alternative:
    """One way to satisfy a request: the ``exactly`` block, a ``firstAvailable`` entry, or a flat request."""

    path: JsonPath  # of the mapping holding deviceClassName etc.
    name: str | None  # subrequest name (None for exactly/flat)
    data: dict[str, Any]

    @property
    def device_class(self) -> str | None:
        v = self.data.get("deviceClassName")
        return v if isinstance(v, str) else None

    @property
    def selectors(self) -> list[tuple[JsonPath, str]]:
        out: list[tuple[JsonPath, str]] = []
        sels = self.data.get("selectors")
        if isinstance(sels, list):
            for i, s in enumerate(sels):
                expr = k8s.get(s, "cel", "expression")
                if isinstance(expr, str):
                    out.append(((*self.path, "selectors", i, "cel", "expression"), expr))
        return out

    @property
    def count(self) -> int:
        c = self.data.get("count")
        return c if isinstance(c, int) and not isinstance(c, bool) else 1

    @property
    def allocation_mode(self) -> str:
        m = self.data.get("allocationMode")
        return m if isinstance(m, str) else "ExactCount"


@dataclass(frozen=True)
class Request:
    path: JsonPath
    name: str | None
    data: dict[str, Any]
    alternatives: tuple[Alternative, ...]
    #: True when the request uses firstAvailable (a preference list)
    prioritized: bool
    #: True when written in the flat v1alpha3/v1beta1 shape
    flat: bool


def claim_spec_path(obj_kind: str | None) -> JsonPath:
    return ("spec", "spec") if obj_kind == "ResourceClaimTemplate" else ("spec",)


def claim_spec(obj: K8sObject) -> dict[str, Any] | None:
    """The claim spec as the author meant it (a template's misplaced ``spec.devices`` included, see
    `dralint.inputs.intended`)."""
    view = intended.shape_view(obj)
    spec = k8s.get((view.obj if view is not None else obj).data, *claim_spec_path(obj.kind))
    return spec if isinstance(spec, dict) else None


def requests(obj: K8sObject) -> tuple[Request, ...]:
    """Every device request of a ResourceClaim or ResourceClaimTemplate, read in the shape the author
    meant (`dralint.inputs.intended`: DRA108/DRA109 mistakes corrected), with paths into ``obj``.
    Read once per object (`K8sObject.memo`): a dozen rules ask for them."""
    memo = obj.memo
    got: tuple[Request, ...] | None = memo.get("requests")
    if got is None:
        got = memo["requests"] = tuple(_read_requests(obj))
    return got


def _read_requests(obj: K8sObject) -> Iterator[Request]:
    view = intended.shape_view(obj)
    if view is None:
        yield from _requests(obj)
        return
    for r in _requests(view.obj):
        alts = tuple(dataclasses.replace(a, path=view.origin(a.path)[0]) for a in r.alternatives)
        yield dataclasses.replace(r, path=view.origin(r.path)[0], alternatives=alts)


def _requests(obj: K8sObject) -> Iterator[Request]:
    base = claim_spec_path(obj.kind)
    reqs = k8s.get(obj.data, *base, "devices", "requests")
    if not isinstance(reqs, list):
        return
    for i, r in enumerate(reqs):
        if not isinstance(r, dict):
            continue
        path: JsonPath = (*base, "devices", "requests", i)
        name = r.get("name") if isinstance(r.get("name"), str) else None
        alts: list[Alternative] = []
        fa = r.get("firstAvailable")
        exactly = r.get("exactly")
        if isinstance(fa, list) and fa:
            for j, sub in enumerate(fa):
                if isinstance(sub, dict):
                    sn = sub.get("name") if isinstance(sub.get("name"), str) else None
                    alts.append(Alternative((*path, "firstAvailable", j), sn, sub))
        if isinstance(exactly, dict):
            alts.append(Alternative((*path, "exactly"), None, exactly))
        flat = "deviceClassName" in r or "selectors" in r or "count" in r or "allocationMode" in r
        if flat and not isinstance(exactly, dict):
            alts.append(Alternative(path, None, r))
        yield Request(path, name, r, tuple(alts), bool(isinstance(fa, list) and len(fa) > 1), flat)


def request_names(obj: K8sObject) -> set[str]:
    return {r.name for r in requests(obj) if r.name}


@dataclass(frozen=True)
class PodClaim:
    """A ``spec.resourceClaims`` entry of a pod spec, resolved against the index."""

    pod_spec: k8s.PodSpecRef
    index: int
    name: str | None
    claim_name: str | None
    template_name: str | None
    data: dict[str, Any]

    @property
    def path(self) -> JsonPath:
        return (*self.pod_spec.path, "resourceClaims", self.index)

    @property
    def target_kind(self) -> str | None:
        if self.template_name:
            return "ResourceClaimTemplate"
        if self.claim_name:
            return "ResourceClaim"
        return None

    @property
    def target_name(self) -> str | None:
        return self.template_name or self.claim_name


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def pod_claims(ps: k8s.PodSpecRef) -> list[PodClaim]:
    # not kept on ``ps`` as its containers are: each entry refers back to ``ps``, and that cycle would
    # keep the whole parse tree alive in a streamed run, where the cyclic collector is paused
    out = []
    for i, c in k8s.pod_claims(ps):
        raw_src = c.get("source")
        src: dict[str, Any] = raw_src if isinstance(raw_src, dict) else {}
        out.append(
            PodClaim(
                ps, i, _str(c.get("name")),
                _str(c.get("resourceClaimName")) or _str(src.get("resourceClaimName")),
                _str(c.get("resourceClaimTemplateName")) or _str(src.get("resourceClaimTemplateName")),
                c,
            )
        )
    return out


def resolve(index: Index, claim: PodClaim, namespace: str | None) -> list[K8sObject]:
    """The ResourceClaim/ResourceClaimTemplate objects a pod claim entry refers to."""
    if not claim.target_kind or not claim.target_name:
        return []
    return index.find(claim.target_kind, claim.target_name, namespace)


def template_providers(index: Index, name: str, namespace: str | None) -> list[K8sObject]:
    """ComputeDomains whose controller creates a ResourceClaimTemplate with this name."""
    out = []
    for cd in index.of_kind("ComputeDomain"):
        if k8s.get(cd.data, "spec", "channel", "resourceClaimTemplate", "name") == name:
            from dralint.inputs.index import same_namespace

            if same_namespace(cd.namespace, namespace):
                out.append(cd)
    return out


def container_claim_refs(c: k8s.ContainerRef) -> list[tuple[int, dict[str, Any]]]:
    res = c.container.get("resources")
    claims = res.get("claims") if isinstance(res, dict) else None
    if not isinstance(claims, list):
        return []
    return [(i, x) for i, x in enumerate(claims) if isinstance(x, dict)]
