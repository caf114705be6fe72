"""DRA209 / DRA210: GPU counts that operators hold outside any pod spec.

An operator's custom resource can ask for GPUs in its own fields (a NIMService's
`spec.resources`, a TrainJob's `resourcesPerNode`, a Spark executor's `gpu`, a Ray group's
`num-gpus`) or cap and count them by the `nvidia.com/gpu` name (Kueue quotas, Karpenter limits).
The pods never show that field, so DRA201 cannot see it; ``schemas/workloads.yaml`` says where
each one is, which operator turns it into `nvidia.com/gpu` and what to change.
"""

from __future__ import annotations

from collections.abc import Iterator

from dralint.checks.registry import Context, rule
from dralint.inputs.index import K8sObject
from dralint.knowledge import k8s, schema, workloads
from dralint.knowledge.legacy import legacy
from dralint.model import Severity, Violation


def _fields(obj: K8sObject, ctx: Context) -> list[workloads.GpuField]:
    """The object's GPU fields that name a GPU (or count GPUs); once per object and run."""
    hit = obj.memo.get("operator-gpu-fields")
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    know = legacy(ctx.profile)
    pod_paths = tuple(ps.path for ps in obj.pod_specs)
    out: list[workloads.GpuField] = []
    for f in workloads.gpu_fields(obj.api_version, obj.kind, obj.data, pod_paths):
        match = f.place.match if f.place is not None else "legacy"
        if f.name is None:
            keep = f.place is not None and f.place.shape == "count"
        elif match == "any":
            keep = True
        elif match == "vendor":
            keep = know.classify(f.name) is not None or f.name.startswith("nvidia.com/")
        else:
            keep = know.classify(f.name) is not None
        if keep:
            out.append(f)
    obj.memo["operator-gpu-fields"] = out
    return out


def _may_count_gpus(kind: str | None, facets: int, ctx: Context) -> bool:
    """Whether `workloads.gpu_fields` may find a field on an object of ``kind``: a kind of the table,
    or any kind that may hold pods (searched generically)."""
    return bool(kind) and (kind not in k8s.NO_POD_KINDS or kind in workloads.table().by_kind)


def _amount(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _fill(text: str, f: workloads.GpuField) -> str:
    return text.replace("<name>", f.name or "nvidia.com/gpu").replace("<quantity>", _amount(f.amount))


def _message(obj: K8sObject, f: workloads.GpuField) -> str:
    at = schema.where(f.path)
    if f.place is None:
        return (f"{obj.kind} `{at}` asks for `{f.name}: {_amount(f.amount)}` outside any pod spec: the operator of "
                f"`{obj.api_version}` presumably copies it into its pods, where the device plugin serves it; "
                "move the request to a ResourceClaim once that operator supports DRA, or keep the device plugin "
                "for these pods")
    p = f.place
    if p.shape == "count":
        what = f"sets `{f.path[-1]}: {_amount(f.amount)}`"
    elif p.shape == "resource-name":
        what = f"names `{f.name}`"
    elif p.shape == "requirement":
        what = f"requires `{f.name} {_amount(f.amount)}`"
    elif p.role == "capacity":
        what = f"limits `{f.name}` to {_amount(f.amount)}"
    else:
        what = f"asks for `{f.name}: {_amount(f.amount)}`"
    return f"{obj.kind} `{at}` {what}: {f.operator} {_fill(p.becomes, f)}; {_fill(p.change, f)}"


@rule("DRA209", when=_may_count_gpus)
def operator_gpu_count(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for f in _fields(obj, ctx):
        if f.place is not None and f.place.role != "request":
            continue
        sev = Severity[f.place.severity.upper()] if f.place is not None and f.place.severity else None
        yield Violation(_message(obj, f), f.path, on="value" if f.on == "value" else "key", severity=sev)


@rule("DRA210", when=_may_count_gpus)
def gpu_capacity_by_extended_resource(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for f in _fields(obj, ctx):
        if f.place is None or f.place.role != "capacity":
            continue
        yield Violation(_message(obj, f), f.path, on="value" if f.on == "value" else "key")


def gpu_requests(obj: K8sObject, ctx: Context) -> list[workloads.GpuField]:
    """The operator fields through which an object asks for device-plugin GPUs (for `report`)."""
    return [f for f in _fields(obj, ctx) if f.place is None or (f.place.role == "request" and f.name is not None)]


def describe(obj: K8sObject, f: workloads.GpuField) -> str:
    """The DRA209/DRA210 message of one field (``migrate`` names it when it skips the object)."""
    return _message(obj, f)
