"""Kubernetes object shapes: where pod templates and containers live, in every workload kind.

The one walk over pod specs and containers that every rule uses (legacy resources, claim wiring,
rollout safety, migration), so no rule re-discovers them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dralint.model import JsonPath

#: the API group of Dynamic Resource Allocation
DRA_GROUP = "resource.k8s.io"

#: kind -> path of the pod spec inside the object, for the built-in workload kinds. Discovery
#: goes through ``schemas/workloads.yaml`` by group and kind (a Volcano Job is no batch Job): ask
#: `workloads.builtin_pod_spec_path`; a test keeps this mapping equal to the table's built-ins
POD_SPEC_PATHS: dict[str, JsonPath] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
}

#: kinds of the core/apps/batch groups that never hold pod templates (no generic search there)
NO_POD_KINDS = frozenset(
    {
        "ConfigMap", "Secret", "Service", "ServiceAccount", "Namespace", "Role", "RoleBinding",
        "ClusterRole", "ClusterRoleBinding", "Ingress", "NetworkPolicy", "PersistentVolumeClaim",
        "PersistentVolume", "StorageClass", "HorizontalPodAutoscaler", "PodDisruptionBudget",
        "ResourceQuota", "LimitRange", "Endpoints", "EndpointSlice", "PriorityClass",
        "CustomResourceDefinition", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate",
        "ResourceSlice", "DeviceTaintRule", "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
        "Event", "Lease", "APIService", "List",
    }
)

CONTAINER_FIELDS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True)
class PodSpecRef:
    """A pod spec inside an object: its path and the data."""

    path: JsonPath
    spec: dict[str, Any]
    #: path of the enclosing template (``("spec","template")`` for a Deployment; the object for a Pod)
    template_path: JsonPath
    #: fields holding lists of containers, and fields holding one container each (KServe's
    #: framework shorthands, an Argo template's `container`), as ``schemas/workloads.yaml`` says
    container_lists: tuple[str, ...] = CONTAINER_FIELDS
    single_containers: tuple[str, ...] = ()
    #: False when the mapping only looks like a PodSpec (an Argo template): not validated as one
    is_pod_spec: bool = True


@dataclass(frozen=True)
class ContainerRef:
    path: JsonPath
    container: dict[str, Any]
    field: str  # containers | initContainers | ephemeralContainers
    name: str


def _get(data: Any, path: JsonPath) -> Any:
    for step in path:
        if isinstance(step, str) and isinstance(data, dict):
            data = data.get(step)
        elif isinstance(step, int) and isinstance(data, list) and -len(data) <= step < len(data):
            data = data[step]
        else:
            return None
    return data


def get(data: Any, *path: str | int) -> Any:
    """Safe nested lookup: None when any step is missing or of the wrong type."""
    return _get(data, path)


def pod_specs(kind: str | None, data: Any) -> list[PodSpecRef]:
    """Every pod spec in an object, found by its API group and kind through
    ``schemas/workloads.yaml`` (a structural search for kinds the table does not list)."""
    from dralint.knowledge import workloads  # the table module builds on this one

    if not isinstance(data, dict):
        return []
    return workloads.pod_specs(data.get("apiVersion"), kind, data)


def containers(ps: PodSpecRef) -> tuple[ContainerRef, ...]:
    """The pod spec's containers, made once per pod spec: half a dozen rules walk them on every
    workload, and making the references again each time was a visible part of a large run."""
    made = ps.__dict__.get("_containers")
    if made is None:
        made = ps.__dict__["_containers"] = tuple(_containers(ps))  # a frozen dataclass's own cache
    return made


def _containers(ps: PodSpecRef) -> Iterator[ContainerRef]:
    for f in ps.container_lists:
        items = ps.spec.get(f)
        if not isinstance(items, list):
            continue
        for i, c in enumerate(items):
            if isinstance(c, dict):
                name = c.get("name")
                yield ContainerRef((*ps.path, f, i), c, f, name if isinstance(name, str) else f"#{i}")
    for f in ps.single_containers:
        c = ps.spec.get(f)
        if isinstance(c, dict):
            name = c.get("name")
            yield ContainerRef((*ps.path, f), c, f, name if isinstance(name, str) else f)


def uses_claims(ps: PodSpecRef) -> bool:
    """Whether a pod spec mentions DRA claims anywhere (pod ``resourceClaims``, pod or container
    ``resources.claims``), well-formed or not: the claim rules have nothing to say about the others."""
    if "resourceClaims" in ps.spec or _has_claims(ps.spec):
        return True
    return any(_has_claims(c.container) for c in containers(ps))


def _has_claims(owner: dict[str, Any]) -> bool:
    res = owner.get("resources")
    return isinstance(res, dict) and "claims" in res


def pod_claims(ps: PodSpecRef) -> list[tuple[int, dict[str, Any]]]:
    claims = ps.spec.get("resourceClaims")
    if not isinstance(claims, list):
        return []
    return [(i, c) for i, c in enumerate(claims) if isinstance(c, dict)]


def resource_maps(c: ContainerRef) -> Iterator[tuple[str, dict[str, Any]]]:
    """The container's ``resources.requests`` and ``resources.limits`` mappings."""
    res = c.container.get("resources")
    if not isinstance(res, dict):
        return
    for section in ("limits", "requests"):
        m = res.get(section)
        if isinstance(m, dict):
            yield section, m


def api_group(api_version: str | None) -> str:
    if not api_version or "/" not in api_version:
        return ""
    return api_version.split("/", 1)[0]


def api_version_of(api_version: str | None) -> str:
    if not api_version:
        return ""
    return api_version.rsplit("/", 1)[-1]


def replicas(kind: str | None, data: Any) -> int | None:
    """Declared replicas of a workload (None when not applicable, 1 when defaulted)."""
    if kind in ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"):
        r = get(data, "spec", "replicas")
        if r is None:
            return 1
        return r if isinstance(r, int) and not isinstance(r, bool) else None
    return None


_DNS = re.compile(r"[^a-z0-9.-]+")


def dns_name(name: str) -> str:
    """``name`` made a valid object name (DNS-1123 subdomain): lower case, runs of other characters
    replaced by ``-``, at most 253 characters; ``gpu`` when nothing is left (new objects are GPU claims)."""
    out = _DNS.sub("-", name.lower()).strip("-.")
    return out[:253] or "gpu"
