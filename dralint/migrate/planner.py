"""The migration planner: what ``dralint migrate`` changes to move GPU workloads from the NVIDIA device
plugin to DRA, in place.

For every pod template that asks for device-plugin resources (found by the DRA2xx machinery,
`dralint.checks.legacy.usages`), the planner records a `Fix` made of ordinary `Edit`s and the fix
engine applies it with all of its guarantees (only touched documents change, comments kept or
moved onto the new lines, gates before writing, atomic writes):

- a ResourceClaimTemplate, as a new document right after the workload, in the workload's
  namespace, named by ``--template-name-pattern`` (default ``{workload}-gpu``); an identical
  template that already exists in that namespace is reused instead (when that name has no other
  definition and its apiVersion reads the spec the same way);
- the pod's ``resourceClaims`` entry and each container's ``resources.claims`` entry (with
  ``request:`` when a pod needs several requests, e.g. two GPU containers);
- removal of the extended resource from ``requests`` and ``limits`` (kept with
  ``--keep-extended-resources``, which double counts while both allocators run);
- MIG resources become a request on the MIG class with a CEL selector on the DRA profile name
  (``1g.10gb+me`` where the plugin wrote ``mig-1g.10gb.me``);
- ``nvidia.com/gpu.shared`` becomes one ResourceClaim shared by the workload's pods with a
  GpuConfig/MigDeviceConfig TimeSlicing block (the driver gate it needs is reported), or none when
  the definitions of the request's class do not agree on one kind of device of that driver;
- with ``--convert-node-selectors``, gpu-feature-discovery node selectors (and single-term node
  affinities) become CEL selectors on the request, from the mappings in
  ``schemas/extended-resources.yaml`` (product names are compared the way GFD writes them);
- with ``--extended-resource-bridge``, pods stay as they are and a DeviceClass with
  ``extendedResourceName`` is verified or emitted instead (Kubernetes' DRAExtendedResource).

Workloads that cannot be migrated safely are skipped with a reason: Helm-rendered output (change
the chart), pod templates inside custom resources (their CRD may prune ``resourceClaims``), init
containers with GPUs, kustomize patches, HAMi's look-alike resources, amounts that are not whole
numbers, pods that already claim GPUs through DRA, a target Kubernetes that serves no claim API…

Every changed file is re-checked before it is written (`dralint.migrate.apply`): the migrated
workloads must have no legacy findings left and the documents this run inserted no errors (claims
already in the file are not this run's to judge; ``dralint check`` reports them).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from dralint.checks import operators
from dralint.checks.legacy import Usage, usages
from dralint.checks.registry import Context
from dralint.engine.config import Config
from dralint.engine.runner import Result
from dralint.fix.json_splice import is_json_list
from dralint.fix.splice import PlannedFix
from dralint.inputs import dra
from dralint.inputs.index import K8sObject, base_name
from dralint.inputs.kustomize_patches import patched_by
from dralint.inputs.load import SourceFile
from dralint.inputs.locate import locate, offsets
from dralint.knowledge import drivers, gke, k8s, lifecycle, schema, workloads
from dralint.knowledge.legacy import LegacyKnowledge, LegacyResource, legacy
from dralint.migrate.records import MigrateOptions, WorkloadReport
from dralint.model import Applicability, Edit, Fix, JsonPath, fingerprint, same, to_plain

#: how gpu-feature-discovery writes MIG-single and shared product labels (reference §8.5/§8.6)
_MIG_PRODUCT = re.compile(r"(?P<product>.+)-MIG-(?P<profile>[0-9]+g\.[0-9]+gb(?:[.+-][a-z.]+)?)")
_SHARED_SUFFIX = "-SHARED"
_SHARED_NOTE = ("the GPU product label ends in -SHARED, so these pods shared GPUs through device-plugin time-slicing; "
                "the claim asks for a whole GPU per pod: use one shared ResourceClaim if they relied on sharing")


# ----------------------------------------------------------------------------------------------
# helpers


def _label(name: str, limit: int = 63) -> str:
    out = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
    return out[:limit].rstrip("-") or "gpu"


def _amount(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"[0-9]+", v.strip()):
        return int(v.strip())
    return None


def _eol_comment(sf: SourceFile, data: Any, path: JsonPath) -> str | None:
    """The comment at the end of the line holding ``path``'s value, without ``# ``."""
    _, e, ok = offsets(data, path, "value")
    if not ok:
        return None
    text = sf.text
    nl = text.find("\n", e)
    tail = text[e: len(text) if nl == -1 else nl].strip()
    if tail.startswith("#"):
        return tail.lstrip("#").strip() or None
    return None


def _lead_comments(sf: SourceFile, data: Any, path: JsonPath) -> list[str]:
    """The full-line comments right above the key at ``path``, at its column, without ``# ``: they
    are about that key, and go with it when migrate replaces it (the splicer removes them with it)."""
    s, _, ok = offsets(data, path, "key")
    if not ok:
        return []
    text = sf.text
    ls = text.rfind("\n", 0, s) + 1
    col = s - ls
    out: list[str] = []
    while ls > 0:
        prev = text.rfind("\n", 0, ls - 1) + 1
        line = text[prev: ls - 1].rstrip("\r")
        if not line.lstrip().startswith("#") or len(line) - len(line.lstrip()) != col:
            break
        out.insert(0, line.strip().lstrip("#").strip())
        ls = prev
    return out


def _claim_api(profile_lc: lifecycle.Lifecycle) -> tuple[str, bool] | None:
    """(apiVersion for new claims/templates, whether requests use the flat v1beta1 shape).

    The newest version the target API server serves for both kinds, a deprecated one only when
    nothing else is served; None when it serves none (DRA off: new objects would be rejected).
    """
    shapes = lifecycle.shapes().get("request") or {}
    if not profile_lc.known:
        return f"{dra.DRA_GROUP}/v1", False
    served = [v for v in profile_lc.versions()
              if all(profile_lc.served(v, k) for k in ("ResourceClaimTemplate", "ResourceClaim"))]
    if not served:
        return None
    # a stable sort: newest first within the not-deprecated, then within the deprecated versions
    v = sorted(served, key=lambda v: profile_lc.deprecated(v, "ResourceClaimTemplate") is not None)[0]
    return f"{dra.DRA_GROUP}/{v}", str(shapes.get(v, "exactly")) != "exactly"


def workload_name(obj: K8sObject) -> str | None:
    """The name new objects are derived from: ``metadata.name``, else ``generateName`` without its
    trailing dash (the API server appends a random suffix, so the real name is not known yet)."""
    if obj.name:
        return obj.name
    gen = obj.metadata.get("generateName")
    if isinstance(gen, str) and gen.strip("-."):
        return gen.rstrip("-.")
    return None


def _tolerates(t: Any, key: str) -> bool:
    """Whether toleration ``t`` already tolerates the NoSchedule taint ``key`` with any value, as the
    one ExtendedResourceToleration adds (`operator: Exists`; an empty key with Exists tolerates all)."""
    if not isinstance(t, dict) or t.get("operator") != "Exists":
        return False
    return t.get("key") in (None, "", key) and t.get("effect") in (None, "", "NoSchedule")


def _shown_name(obj: K8sObject) -> str:
    if obj.name:
        return obj.name
    gen = obj.metadata.get("generateName")
    return f"{gen}*" if isinstance(gen, str) and gen else "?"


def _slug(ps: k8s.PodSpecRef) -> str:
    parts = [p for p in ps.template_path if p not in ("spec", "template")]
    if not parts:
        return ""
    tail = parts[-2:] if isinstance(parts[-1], int) and len(parts) > 1 else parts[-1:]
    return _label("-".join(str(p) for p in tail))


# ----------------------------------------------------------------------------------------------
# the planner


@dataclass
class _Request:
    name: str
    usage: Usage
    count: int
    device_class: str
    selectors: list[str]
    #: the kind of device the legacy resource stood for (gpu | mig), whatever class it is asked from
    device_type: str = "gpu"


@dataclass
class _Group:
    """One pod claim: exclusive devices (a template per pod) or shared ones (one standalone claim)."""

    claim: str
    usages: list[Usage]
    shared: bool
    requests: list[_Request]
    spec: dict[str, Any]
    #: why a request of a shared claim has no sharing config
    notes: list[str] = field(default_factory=list)


@dataclass
class _Prepared:
    ps: k8s.PodSpecRef
    here: list[Usage]
    groups: list[_Group]
    selector_edits: list[Edit]


@dataclass
class _Planner:
    result: Result
    config: Config
    opts: MigrateOptions
    ctx: Context = field(init=False)
    know: LegacyKnowledge = field(init=False)
    api: str = field(init=False)
    flat: bool = field(init=False)
    #: (kind, namespace, name) already used by this run -> the spec it was used for
    taken: dict[tuple[str, str | None, str], str] = field(default_factory=dict)
    #: id() of an existing object -> its spec as plain data (see `_plain_spec`; the objects live for the run)
    plain_specs: dict[int, Any] = field(default_factory=dict)
    #: (namespace, spec fingerprint) -> the ResourceClaimTemplates with that spec (see `_templates_like`)
    template_buckets: dict[tuple[str | None, Hashable | None], list[K8sObject]] | None = None
    #: device class name -> (driver, device type, where) of each of its definitions (see `_class_views`)
    class_views: dict[str, list[tuple[str | None, str | None, str]]] = field(default_factory=dict)
    #: (namespace, file, spec json) -> template name created by this run
    created: dict[tuple[str | None, str, str], str] = field(default_factory=dict)
    dra204: set[int] = field(default_factory=set)
    #: (file, offset, its line) of the last line `_line` counted
    last_line: tuple[SourceFile, int, int] | None = None

    def __post_init__(self) -> None:
        self.ctx = Context(index=self.result.index, profile=self.config.profile)
        self.know = legacy(self.config.profile)
        self.lc = lifecycle.for_profile(self.config.profile)
        self.api, self.flat = _claim_api(self.lc) or ("", False)

    # -- entry -----------------------------------------------------------------------------
    def plan(self, obj: K8sObject) -> tuple[PlannedFix | None, WorkloadReport | None]:
        uses = usages(obj, self.ctx)
        if not uses:
            return None, self._operator_only(obj)
        sf = obj.file
        line = self._line(obj, (*obj.base_path, "kind"))
        rep = WorkloadReport(sf.path, line, obj.kind or "?", obj.namespace, _shown_name(obj), "skipped")
        why = self._skip_reason(obj, uses)
        if why:
            rep.reason = why
            return None, rep
        prepared = [self._prepare(obj, ps, [u for u in uses if u.pod_spec.path == ps.path], rep)
                    for ps in obj.pod_specs if any(u.pod_spec.path == ps.path for u in uses)]
        # one name per distinct claim spec: pod templates that need the same devices share a template
        distinct = {repr(g.spec) for p in prepared for g in p.groups}
        edits: list[Edit] = []
        for p in prepared:
            suffix = f"-{_slug(p.ps)}" if len(distinct) > 1 and _slug(p.ps) else ""
            self._emit(obj, p, suffix, edits, rep)
        if self.opts.keep_extended_resources:
            rep.notes.append("kept the extended resources next to the claims: while both allocators run, the pod gets "
                             "GPUs from both (double counting); remove them once the device plugin is gone")
        if not obj.name:
            rep.notes.append(f"the workload has `generateName`: its template is named after `{workload_name(obj)}`")
        for p in prepared:
            sched = p.ps.spec.get("schedulerName")
            if isinstance(sched, str) and sched not in ("", "default-scheduler"):
                rep.notes.append(f"kept `schedulerName: {sched}`: the scheduler that binds the pod allocates its "
                                 "claims; check that this one supports DRA (one that does not leaves the pods "
                                 "Pending)")
        rep.status = "migrated"
        fix = Fix("Migrate from the device plugin to DRA", Applicability.UNSAFE, tuple(edits))
        return PlannedFix("migrate", fix, obj.doc.index, obj.base_path, obj.label(), keep_comments=True), rep

    def _line(self, obj: K8sObject, path: JsonPath) -> int:
        """The line `locate` gives for the key at ``path`` of ``obj``'s document.

        Newlines are counted from the line asked for last when that was before it in the same file
        (objects come in file order), so a file is counted through about once. `locate` builds each
        file's table of line starts instead, which took longer (2.5 % of `migrate` on the bench corpus)
        and which nothing else in the run needs for the original files."""
        sf, doc = obj.file, obj.doc
        off = doc.start if doc.data is None else offsets(doc.data, path, "key")[0]
        base, line = 0, 1
        if self.last_line is not None and self.last_line[0] is sf and self.last_line[1] <= off:
            _, base, line = self.last_line
        line += sf.text.count("\n", base, off)
        self.last_line = (sf, off, line)
        return line

    def _operator_only(self, obj: K8sObject) -> WorkloadReport | None:
        """A workload that asks for GPUs only through its operator's fields (a TrainJob's
        `resourcesPerNode`, a NIMService's `resources`): there is no pod template to migrate."""
        fields = [f for f in operators.gpu_requests(obj, self.ctx) if f.place is None or f.place.severity is None]
        if not fields:
            return None
        line = self._line(obj, (*obj.base_path, "kind"))
        more = f" (and {len(fields) - 1} more such field{'s' if len(fields) > 2 else ''})" if len(fields) > 1 else ""
        return WorkloadReport(obj.file.path, line, obj.kind or "?", obj.namespace, _shown_name(obj), "skipped",
                              "no pod template to migrate: " + operators.describe(obj, fields[0]) + more)

    def _skip_reason(self, obj: K8sObject, uses: list[Usage]) -> str | None:
        if obj.doc.source:
            return (f"Helm-rendered from `{obj.doc.source}`: change the chart template (rendered output is never "
                    "rewritten)")
        kustomization = patched_by(self.result.index, self.ctx.cache, obj.file.path)
        if kustomization is not None:
            if os.path.dirname(kustomization) == os.path.dirname(obj.file.path):
                kustomization = base_name(kustomization)  # the one beside it: its name says enough
            return (f"the file is a patch (`{kustomization}` lists it): migrate the base manifest instead; kustomize "
                    "would read a ResourceClaimTemplate added here as one more patch, with nothing to apply it to")
        if not workload_name(obj):
            return "the object has neither `metadata.name` nor `generateName` to derive a template name from"
        if not self.opts.keep_extended_resources:
            for path, d in workloads.derived_fields(obj.api_version, obj.kind, obj.data):
                return (f"{workloads.operator_of(obj.api_version, obj.kind)} {d.becomes} (`{schema.where(path)}`): "
                        f"{d.change}, or pass --keep-extended-resources")
        if obj.file.is_json and not (is_json_list(obj.file) and len(obj.base_path) == 2):
            # JSON holds one value: the template can only go into a List's `items`, and a YAML
            # document after the object would make the file invalid JSON
            return ("the workload is the only object of a JSON file, which has no room for the new "
                    "ResourceClaimTemplate: put it into a `kind: List` (`items`) or migrate a YAML copy")
        builtin = workloads.is_builtin(obj.api_version, obj.kind)
        if not builtin and not self.opts.include_custom_resources:
            return (f"the pod template is inside a custom resource ({obj.api_version} {obj.kind}); its CRD may not "
                    "carry `resourceClaims` (the API server would prune it): migrate it by hand once the operator "
                    "supports DRA, or pass --include-custom-resources")
        odd = next((u.pod_spec for u in uses if not u.pod_spec.is_pod_spec), None)
        if odd is not None:
            return (f"`{schema.where(odd.path)}` of {obj.kind} is a {workloads.operator_of(obj.api_version, obj.kind)} "
                    "template, not a PodSpec: it has no `resourceClaims`; migrate it by hand")
        if id(obj) in self.dra204:
            return "the pod already claims GPUs through DRA (DRA204): decide which allocator it keeps by hand"
        for u in uses:
            c = u.container
            if c.field == "initContainers":
                return (f"init container `{c.name}` requests `{u.resource.name}`: the device plugin lets the app "
                        "containers reuse those GPUs; decide by hand which claim it should share")
            if c.field == "ephemeralContainers":
                return f"ephemeral container `{c.name}` has resources; fix that first (they are not allowed)"
            if builtin and obj.kind != "Pod" and "image" not in c.container:
                return (f"container `{c.name}` has no image: this looks like a kustomize patch; migrate the base "
                        "manifest instead")
            for _, m in k8s.resource_maps(c):
                for name in m:
                    note = self.know.false_friend(name)
                    if note:
                        return (f"container `{c.name}` also requests `{name}` ({note}): its `{u.resource.name}` "
                                "belongs to that scheduler, not to NVIDIA's device plugin")
            amounts = {s: k8s.get(c.container, "resources", s, u.resource.name) for s in u.sections}
            parsed = {s: _amount(a) for s, a in amounts.items()}
            if any(v is None or v < 1 for v in parsed.values()):
                bad = next(a for s, a in amounts.items() if parsed[s] is None or (parsed[s] or 0) < 1)
                return f"container `{c.name}` asks for `{u.resource.name}: {bad}`, which is not a whole number ≥ 1"
            if len(set(parsed.values())) > 1:
                return (f"container `{c.name}` has different requests and limits for `{u.resource.name}` "
                        f"({', '.join(f'{s}: {amounts[s]}' for s in u.sections)})")
            if u.resource.kind == "shared" and (parsed.get(u.sections[0]) or 0) > 1:
                return (f"container `{c.name}` asks for {parsed[u.sections[0]]} shared GPU replicas; a DRA claim "
                        "shares whole devices, so there is no equivalent")
        if not self.api:
            known = [v for v in self.lc.versions() if self.lc.knows(v, "ResourceClaimTemplate")]
            return (f"Kubernetes {self.lc.minor} serves no {dra.DRA_GROUP} version of ResourceClaimTemplate and "
                    "ResourceClaim, so the API server would reject the new objects: "
                    + (f"switch one on with --runtime-config {dra.DRA_GROUP}/{known[0]}=true (and on the API server) "
                       "or " if known else "") + "target a newer Kubernetes")
        why = self._node_pool_reason(obj, uses)
        if why:
            return why
        if not self.opts.convert_node_selectors:
            for ps in obj.pod_specs:
                prod = k8s.get(ps.spec, "nodeSelector", "nvidia.com/gpu.product")
                if isinstance(prod, str) and _MIG_PRODUCT.fullmatch(prod) and \
                        any(u.resource.kind == "gpu" for u in uses if u.pod_spec.path == ps.path):
                    return (f"the node selector `nvidia.com/gpu.product: {prod}` means the MIG \"single\" strategy: "
                            "`nvidia.com/gpu` is a MIG device here; pass --convert-node-selectors to claim that "
                            "MIG profile")
        return None

    def _node_pool_reason(self, obj: K8sObject, uses: list[Usage]) -> str | None:
        """Why GKE or gpu-feature-discovery labels make `nvidia.com/gpu` something a claim on the
        full-GPU class cannot express (a time-shared GPU, a GPU model dralint cannot name)."""
        for ps in obj.pod_specs:
            if not any(u.resource.kind == "gpu" for u in uses if u.pod_spec.path == ps.path):
                continue
            node_sel = ps.spec.get("nodeSelector")
            g, t = gke.selection(node_sel), gke.labels()
            if g.sharing is not None:
                return (f"the node selector `{t.sharing_strategy}: {g.sharing}` means GKE shares each GPU between "
                        "pods: a claim on the full-GPU class would give each pod a whole GPU; use one shared "
                        "ResourceClaim with a GpuConfig sharing strategy by hand")
            if g.partition is not None and not gke.valid_profile(g.partition):
                return (f"the node selector `{t.partition_size}: {g.partition}` is not a MIG profile dralint can "
                        "select (`<n>g.<m>gb`): claim that MIG device by hand")
            if g.accelerator is not None and g.product is None:
                return (f"the node selector `{t.accelerator}: {g.accelerator}` names a GPU model whose DRA "
                        "`productName` dralint does not know (schemas/gke.yaml): add the selector by hand, or add "
                        "the model to that table")
            prod = k8s.get(node_sel, "nvidia.com/gpu.product")
            if isinstance(prod, str) and prod.endswith(_SHARED_SUFFIX):
                return (f"the node selector `nvidia.com/gpu.product: {prod}` means device-plugin time-slicing: "
                        "`nvidia.com/gpu` is a shared replica here and a claim on the full-GPU class would give "
                        "each pod a whole GPU; use one shared ResourceClaim with a GpuConfig sharing strategy by "
                        "hand")
        return None

    # -- one pod template --------------------------------------------------------------------
    def _prepare(self, obj: K8sObject, ps: k8s.PodSpecRef, here: list[Usage], rep: WorkloadReport) -> _Prepared:
        prod = k8s.get(ps.spec, "nodeSelector", "nvidia.com/gpu.product")
        if not self.opts.convert_node_selectors and isinstance(prod, str) and prod.endswith(_SHARED_SUFFIX):
            rep.notes.append(_SHARED_NOTE)
        selectors: list[str] = []
        mig_profile: str | None = None
        sel_edits: list[Edit] = []
        if self.opts.convert_node_selectors:
            selectors, mig_profile, sel_edits = self._convert_node_selection(obj, ps, rep)
        # GKE's node-pool labels stay on the pod (its autoscaler provisions by them); the claim asks for
        # the same device: that GPU model, and a MIG device of the pool's partition size
        g = gke.selection(ps.spec.get("nodeSelector"))
        vendor = next((u.resource.vendor for u in here), "gpu.nvidia.com")
        if g.product is not None and any(u.resource.kind == "gpu" for u in here):
            selectors.append(gke.product_cel(vendor, g.product))
            rep.notes.append(f"`{gke.labels().accelerator}: {g.accelerator}` became a `productName` selector on "
                             "the request (the node selector is kept)")
        if g.partition is not None and not mig_profile and any(u.resource.kind == "gpu" for u in here):
            mig_profile = g.partition
            rep.notes.append(f"`{gke.labels().partition_size}: {g.partition}`: `nvidia.com/gpu` is a MIG device "
                             f"of that size there, so the request is on the MIG class with profile {g.partition}")
        existing = {c.name for c in dra.pod_claims(ps) if c.name}
        groups: list[_Group] = []
        for is_shared in (False, True):
            group = [u for u in here if (u.resource.kind == "shared") == is_shared]
            if not group:
                continue
            reqs = self._requests(group, selectors, mig_profile)
            claim = self._claim_name(existing, "shared-gpu" if is_shared else "gpu")
            notes: list[str] = []
            groups.append(_Group(claim, group, is_shared, reqs, self._claim_spec(reqs, is_shared, notes), notes))
        return _Prepared(ps, here, groups, sel_edits)

    def _emit(self, obj: K8sObject, p: _Prepared, suffix: str, edits: list[Edit], rep: WorkloadReport) -> None:
        sf = obj.file
        base = obj.base_path
        container_refs: dict[JsonPath, list[tuple[dict[str, str], list[str]]]] = defaultdict(list)
        for g in p.groups:
            kind = "ResourceClaim" if g.shared else "ResourceClaimTemplate"
            name, reused = self._object_name(obj, kind, g.spec, suffix + ("-shared" if g.shared else ""))
            ref_key = "resourceClaimName" if g.shared else "resourceClaimTemplateName"
            edits.append(Edit("append", (*p.ps.path, "resourceClaims"), value={"name": g.claim, ref_key: name}))
            if reused:
                if f"reused {kind} {name}" not in rep.objects and f"{kind} {name}" not in rep.objects:
                    rep.objects.append(f"reused {kind} {name}")
            else:
                meta: dict[str, Any] = {"name": name}
                if obj.namespace:
                    meta["namespace"] = obj.namespace
                body = {"apiVersion": self.api, "kind": kind, "metadata": meta,
                        "spec": g.spec if g.shared else {"spec": g.spec}}
                edits.append(Edit("insert_document", (), value=body))
                rep.objects.append(f"{kind} {name}")
            if g.shared:
                gate = self._sharing_gate(g.usages[0].resource) if "config" in g.spec["devices"] else None
                rep.notes.append(f"`{g.usages[0].resource.name}` became ResourceClaim `{name}`, shared by every pod "
                                 "of this workload (they run on the same device and node)"
                                 + (f"; TimeSlicing needs driver feature gate {gate}" if gate else ""))
                rep.notes.extend(g.notes)
            for r in g.requests:
                ref: dict[str, str] = {"name": g.claim}
                if len(g.requests) > 1:
                    ref["request"] = r.name
                keys = [(*base, *r.usage.container.path, "resources", s, r.usage.resource.name)
                        for s in r.usage.sections]
                notes = [c for k in keys if (c := _eol_comment(sf, obj.doc.data, k))]
                lead = [c for k in keys for c in _lead_comments(sf, obj.doc.data, k) if c]
                if len(notes) + len(lead) == 1 and not self.opts.keep_extended_resources:
                    # one comment about the removed resource: it goes onto the claim that replaces it
                    notes = notes + lead
                container_refs[r.usage.container.path].append((ref, notes))
        for cpath, refs in container_refs.items():
            for ref, notes in refs:
                edits.append(Edit("append", (*cpath, "resources", "claims"), value=ref,
                                  comment="; ".join(notes) if notes else None))
            if not self.opts.keep_extended_resources:
                edits.extend(self._removals(cpath, [u for u in p.here if u.container.path == cpath]))
        edits.extend(p.selector_edits)
        if not self.opts.keep_extended_resources and self.opts.gpu_toleration:
            edits.extend(self._tolerations(p, rep))
        edits.extend(self._counts_beside(obj, p, rep))

    def _tolerations(self, p: _Prepared, rep: WorkloadReport) -> list[Edit]:
        """The tolerations the ExtendedResourceToleration admission plugin added while the pod asked for
        the extended resources (on by default on GKE and other clouds): without the request the pod
        no longer tolerates the GPU nodes' `nvidia.com/gpu` NoSchedule taint and would stay Pending."""
        have = p.ps.spec.get("tolerations")
        if have is not None and not isinstance(have, list):
            return []
        out: list[Edit] = []
        for name in dict.fromkeys(u.resource.name for u in p.here):
            if any(_tolerates(t, name) for t in have or ()):
                continue
            out.append(Edit("append", (*p.ps.path, "tolerations"),
                            value={"key": name, "operator": "Exists", "effect": "NoSchedule"}))
            rep.tolerations += 1
            rep.notes.append(f"added a toleration for the `{name}` NoSchedule taint, which the "
                             "ExtendedResourceToleration admission plugin added while the pod requested it "
                             "(--no-gpu-toleration leaves it out)")
        return out

    def _counts_beside(self, obj: K8sObject, p: _Prepared, rep: WorkloadReport) -> list[Edit]:
        """GPU counts the operator derived from the removed extended resource (KubeRay's
        `rayStartParams.num-gpus`, from the Ray container, the first one): written out explicitly."""
        out: list[Edit] = []
        for path, place in workloads.counts_beside(obj.api_version, obj.kind, p.ps.template_path):
            count = sum(r.count for g in p.groups for r in g.requests
                        if r.usage.container.field == "containers" and r.usage.container.path[-1] == 0)
            if not count:
                continue
            have = k8s.get(obj.data, *path)
            if have is not None:
                if str(have) != str(count):
                    rep.notes.append(f"kept `{schema.where(path)}: {have}`, which differs from the {count} "
                                     "device(s) the claim allocates")
                continue
            parent = k8s.get(obj.data, *path[:-1])
            if parent is not None and not isinstance(parent, dict):
                continue
            value: Any = str(count) if place.migrate == "set-string" else count
            out.append(Edit("set", path, value=value))
            who = workloads.operator_of(obj.api_version, obj.kind)
            rep.notes.append(f"set `{schema.where(path)}: \"{count}\"`: {who} derived it from the removed "
                             "`nvidia.com/gpu` limit")
        return out

    def _claim_name(self, existing: set[str], want: str) -> str:
        name, n = want, 2
        while name in existing:
            name, n = f"{want}-{n}", n + 1
        existing.add(name)
        return name

    def _requests(self, group: list[Usage], selectors: list[str], mig_profile: str | None) -> list[_Request]:
        out: list[_Request] = []
        used: set[str] = set()
        for u in group:
            res = u.resource
            if mig_profile and res.kind == "gpu":
                res = LegacyResource(res.name, "mig", res.vendor, "mig.nvidia.com", mig_profile)
            count = next(a for s in u.sections if (a := _amount(k8s.get(u.container.container, "resources", s,
                                                                        u.resource.name))) is not None)
            dc = self.opts.device_class_map.get(res.device_class, res.device_class)
            sels = list(selectors)
            if res.kind in ("mig", "shared") and res.dra_profile:
                sels.insert(0, f"device.attributes['{res.vendor}'].profile == '{res.dra_profile}'")
            word = "mig" if res.kind == "mig" else "gpu"
            name = word if len(group) == 1 else _label(f"{word}-{u.container.name}")
            k = 2
            base_name = name
            while name in used:  # the suffix goes inside the 63-character limit of a request name
                suffix = f"-{k}"
                name, k = _label(base_name, 63 - len(suffix)) + suffix, k + 1
            used.add(name)
            out.append(_Request(name, u, count, dc, sels, "mig" if res.kind == "mig" or res.profile else "gpu"))
        return out

    def _claim_spec(self, reqs: list[_Request], shared: bool, notes: list[str]) -> dict[str, Any]:
        requests: list[dict[str, Any]] = []
        for r in reqs:
            body: dict[str, Any] = {"deviceClassName": r.device_class}
            if r.count != 1:
                body["count"] = r.count
            if r.selectors:
                body["selectors"] = [{"cel": {"expression": s}} for s in r.selectors]
            requests.append({"name": r.name, **body} if self.flat else {"name": r.name, "exactly": body})
        devices: dict[str, Any] = {"requests": requests}
        if shared:
            configs = []
            for r in reqs:
                kind, why = self._config_kind(r)
                if kind is None:
                    if why:
                        notes.append(f"no TimeSlicing config for request `{r.name}`: {why}; the pods still share the "
                                     "claim's device, without a sharing strategy")
                    continue
                configs.append({"requests": [r.name], "opaque": {"driver": r.usage.resource.vendor, "parameters": {
                    "apiVersion": self._config_api(r.usage.resource.vendor), "kind": kind,
                    "sharing": {"strategy": "TimeSlicing"}}}})
            if configs:
                devices["config"] = configs
        return {"devices": devices}

    def _config_kind(self, r: _Request) -> tuple[str | None, str | None]:
        """(config kind for a sharing config on request ``r``, or None and why none fits).

        A config kind applies to one type of device (GpuConfig to whole GPUs, MigDeviceConfig to MIG
        devices) and the driver fails to prepare a claim whose config does not fit the allocated device
        (DRA106). The request's class decides what it allocates, so every definition of that class must
        agree with the kind: otherwise the claim gets no config (a config is optional; the claim is
        still shared).
        """
        vendor = r.usage.resource.vendor
        views = self._class_views(r.device_class)
        other = next(((d, where) for d, _, where in views if d and d != vendor), None)
        if other:
            return None, (f"class `{r.device_class}` ({other[1]}) selects devices of driver `{other[0]}`, which "
                          f"ignores `{vendor}` configs")
        types: dict[str, str] = {}  # device type -> where the first definition selecting it is
        for _, t, where in views:
            if t:
                types.setdefault(t, where)
        if len(types) > 1:
            return None, f"class `{r.device_class}` selects " + " but ".join(
                f"`{t}` devices ({where})" for t, where in types.items())
        want = next(iter(types), r.device_type)
        if want != r.device_type and any(t is None for _, t, _ in views):
            # some definition selects any device of the driver: the claim may get either kind of device
            return None, (f"class `{r.device_class}` selects `{want}` devices ({types[want]}) or any device "
                          f"({next(where for _, t, where in views if t is None)})")
        for name, k in drivers.config_kinds(self.config.profile, vendor).items():
            if want in k.device_types and not k.generated_by:
                return name, None
        return None, f"`{vendor}` has no sharing config for the `{want}` devices of class `{r.device_class}`"

    def _class_views(self, name: str) -> list[tuple[str | None, str | None, str]]:
        """(driver, device type, where it is defined) of each definition of class ``name`` a check may go by.

        Those are every DeviceClass of that name in the input (linting everything sees one of them,
        a file on its own sees its own) and, for a file without one, the class the driver installs.
        """
        memo = self.class_views.get(name)
        if memo is not None:
            return memo
        views: list[tuple[str | None, str | None, str]] = []
        for dc in self.result.index.find_any_namespace("DeviceClass", name):
            drv, dtype = drivers.selector_facts(dc.data)
            where = f"{dc.file.path}:{locate(dc.file, dc.doc, (*dc.base_path, 'kind')).line}"
            views.append((drv, dtype, f"the DeviceClass in {where}"))
        info = drivers.class_info(name)
        if info is not None:
            views.append((info.driver or None, info.device_type, "as the driver installs it"))
        self.class_views[name] = views
        return views

    def _config_api(self, vendor: str) -> str:
        s = drivers.setup_for(self.config.profile, vendor)
        versions = (s.data.raw.get("config-api-versions") if s is not None else None) or []
        return str(versions[-1]) if versions else "resource.nvidia.com/v1beta1"

    def _sharing_gate(self, res: LegacyResource) -> str | None:
        info = drivers.gate_info(res.vendor, "TimeSlicingSettings")
        if info is None:
            return None
        on = drivers.gates(self.config.profile, res.vendor).get("TimeSlicingSettings")
        return None if on else f"`TimeSlicingSettings` ({info.stage}, off by default)"

    def _object_name(self, obj: K8sObject, kind: str, spec: dict[str, Any], suffix: str) -> tuple[str, bool]:
        ns = obj.namespace
        want_spec = spec if kind == "ResourceClaim" else {"spec": spec}
        if kind == "ResourceClaimTemplate":
            for other in self._templates_like(ns, want_spec):
                if other.name and self._reusable(other, want_spec):
                    return other.name, True
            key = (ns, obj.file.path, repr(want_spec))
            if key in self.created:
                return self.created[key], True
        pattern = self.opts.template_name_pattern
        try:
            raw = pattern.format(workload=f"{workload_name(obj)}{suffix}", kind=(obj.kind or "").lower(),
                                 namespace=ns or "default")
        except (KeyError, IndexError, ValueError):
            raw = f"{obj.name}{suffix}-gpu"
        name, n = k8s.dns_name(raw), 2
        candidate = name
        spec_key = repr(want_spec)
        # the same name with the same spec in another file is fine (each file stays self-contained and
        # applying both is idempotent); a different spec under that name would silently replace it
        while self.taken.get((kind, ns, candidate), spec_key) != spec_key or \
                self.result.index.find(kind, candidate, ns):
            candidate, n = f"{name}-{n}", n + 1
        self.taken[(kind, ns, candidate)] = spec_key
        if kind == "ResourceClaimTemplate":
            self.created[(ns, obj.file.path, repr(want_spec))] = candidate
        return candidate, False

    def _templates_like(self, ns: str | None, want_spec: dict[str, Any]) -> list[K8sObject]:
        """The ResourceClaimTemplates of namespace ``ns`` whose spec is ``want_spec`` (`same`), in index order.

        Found by a fingerprint of the spec, built once per run: comparing every migrated workload's
        template with every template of the repository was most of the planning time."""
        if self.template_buckets is None:
            self.template_buckets = defaultdict(list)
            for other in self.result.index.of_kind("ResourceClaimTemplate"):
                self.template_buckets[(other.namespace, fingerprint(self._plain_spec(other)))].append(other)
        want = fingerprint(want_spec)
        found = self.template_buckets.get((ns, want), []) if want is not None else []
        # a spec without a fingerprint (a NaN, say) is compared the slow way
        odd = self.template_buckets.get((ns, None), []) if want is not None else [
            o for (n, _), objs in self.template_buckets.items() if n == ns for o in objs]
        if not odd:
            return found
        ordered = {id(o): i for i, o in enumerate(self.result.index.of_kind("ResourceClaimTemplate"))}
        return sorted([*found, *(o for o in odd if same(self._plain_spec(o), want_spec))], key=lambda o: ordered[id(o)])

    def _plain_spec(self, obj: K8sObject) -> Any:
        """``spec`` of an existing object as plain data, converted once per run (every migrated workload
        compares its template with all of its namespace's)."""
        hit = self.plain_specs.get(id(obj), self)
        if hit is self:
            hit = self.plain_specs[id(obj)] = to_plain(obj.data.get("spec"))
        return hit

    def _reusable(self, other: K8sObject, want_spec: dict[str, Any]) -> bool:
        """Whether pods may point at existing ``other`` (whose spec is the one this run would write).

        Not when another object of that kind and name in the namespace has a different spec (which one
        the cluster ends up with depends on the order they are applied in), nor when its apiVersion
        reads the spec differently from the one new objects get (a flat v1beta1 request is invalid in
        v1 and the other way round) or is not served.
        """
        assert other.kind is not None and other.name is not None
        if any(not same(self._plain_spec(o), want_spec)
               for o in self.result.index.find(other.kind, other.name, other.namespace)):
            return False
        if other.group != dra.DRA_GROUP:
            return False
        if self.lc.known and not self.lc.served(other.version, other.kind):
            return False
        shape = (lifecycle.shapes().get("request") or {}).get(other.version, "exactly")
        return (str(shape) != "exactly") == self.flat

    def _removals(self, cpath: JsonPath, uses: list[Usage]) -> list[Edit]:
        out: list[Edit] = []
        container = next((u.container.container for u in uses), {})
        by_section: dict[str, list[str]] = defaultdict(list)
        for u in uses:
            for s in u.sections:
                by_section[s].append(u.resource.name)
        for section, names in by_section.items():
            m = k8s.get(container, "resources", section)
            if isinstance(m, dict) and set(m) <= set(names):
                out.append(Edit("delete", (*cpath, "resources", section)))
            else:
                out.extend(Edit("delete", (*cpath, "resources", section, n)) for n in names)
        return out

    # -- node selection ----------------------------------------------------------------------
    def _product_cel(self, vendor: str, value: str) -> str | None:
        entry = self.know.gfd_labels.get("nvidia.com/gpu.product") or {}
        tpl = entry.get("cel")
        if not isinstance(tpl, str):
            return None
        tpl = tpl.replace("'gpu.nvidia.com'", f"'{vendor}'")
        if not value.startswith("NVIDIA-"):
            # older drivers wrote names without the vendor prefix (A100-SXM4-40GB): match the tail
            tpl = re.sub(r"\s*==\s*'\{value\}'", ".endsWith('{value}')", tpl)
        return tpl.format(value=value)

    def _label_cel(self, key: str, op: str, value: str, rep: WorkloadReport,
                   vendor: str) -> tuple[str | None, str | None]:
        """(CEL, MIG profile) for one GFD label condition."""
        if key == "nvidia.com/gpu.product" and op in ("In", "="):
            mig = _MIG_PRODUCT.fullmatch(value)
            profile = None
            if mig:
                value = mig.group("product")
                profile = LegacyResource("", "mig", vendor, "mig.nvidia.com", mig.group("profile")).dra_profile
            elif value.endswith(_SHARED_SUFFIX):
                value = value[: -len(_SHARED_SUFFIX)]
                rep.notes.append(_SHARED_NOTE)
            return self._product_cel(vendor, value), profile
        return self.know.gfd_cel(key, op, value), None

    def _convert_node_selection(self, obj: K8sObject, ps: k8s.PodSpecRef,
                                rep: WorkloadReport) -> tuple[list[str], str | None, list[Edit]]:
        vendor = next((u.resource.vendor for u in usages(obj, self.ctx)), "gpu.nvidia.com")
        cels: list[str] = []
        profile: str | None = None
        edits: list[Edit] = []
        sel = ps.spec.get("nodeSelector")
        if isinstance(sel, dict):
            done: list[str] = []
            for key, value in sel.items():
                if not self.know.is_gfd_label(key):
                    continue
                cel, prof = self._label_cel(key, "=", str(value), rep, vendor)
                if cel is None:
                    rep.notes.append(f"kept node selector `{key}`: it has no DRA device attribute")
                    continue
                cels.append(cel)
                profile = profile or prof
                done.append(key)
            if done and len(done) == len(sel):
                edits.append(Edit("delete", (*ps.path, "nodeSelector")))
            else:
                edits.extend(Edit("delete", (*ps.path, "nodeSelector", k)) for k in done)
        req_path = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
        terms = k8s.get(ps.spec, *req_path, "nodeSelectorTerms")
        if isinstance(terms, list) and len(terms) == 1 and isinstance(terms[0], dict):
            raw_exprs = terms[0].get("matchExpressions")
            exprs: list[Any] = raw_exprs if isinstance(raw_exprs, list) else []
            converted: list[int] = []
            for i, e in enumerate(exprs):
                if not isinstance(e, dict) or not isinstance(e.get("key"), str) or not self.know.is_gfd_label(e["key"]):
                    continue
                vals = e.get("values")
                if not isinstance(vals, list) or len(vals) != 1:
                    rep.notes.append(f"kept node affinity on `{e['key']}`: only single-value conditions convert")
                    continue
                cel, prof = self._label_cel(e["key"], str(e.get("operator")), str(vals[0]), rep, vendor)
                if cel is None:
                    rep.notes.append(f"kept node affinity on `{e['key']}`: it has no DRA device attribute")
                    continue
                cels.append(cel)
                profile = profile or prof
                converted.append(i)
            if converted:
                edits.extend(self._affinity_removals(ps, converted, exprs, terms[0], req_path))
        if cels:
            rep.notes.append("node selection on GPU labels became CEL selectors on the request")
        return cels, profile, edits

    def _affinity_removals(self, ps: k8s.PodSpecRef, converted: list[int], exprs: list[Any],
                           term: dict[str, Any], req_path: tuple[str, ...]) -> list[Edit]:
        term_path: JsonPath = (*ps.path, *req_path, "nodeSelectorTerms", 0)
        if len(converted) < len(exprs) or term.get("matchFields"):
            return [Edit("delete", (*term_path, "matchExpressions", i)) for i in sorted(converted, reverse=True)]
        # the whole required term goes; then every parent that is left empty
        required = k8s.get(ps.spec, *req_path)
        node_aff = k8s.get(ps.spec, "affinity", "nodeAffinity")
        aff = ps.spec.get("affinity")
        if isinstance(required, dict) and len(required) > 1:
            return [Edit("delete", (*ps.path, *req_path, "nodeSelectorTerms"))]
        if isinstance(node_aff, dict) and len(node_aff) > 1:
            return [Edit("delete", (*ps.path, *req_path))]
        if isinstance(aff, dict) and len(aff) > 1:
            return [Edit("delete", (*ps.path, "affinity", "nodeAffinity"))]
        return [Edit("delete", (*ps.path, "affinity"))]
