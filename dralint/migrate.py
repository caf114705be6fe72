"""``dralint migrate``: move GPU workloads from the NVIDIA device plugin to DRA, in place.

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

Every changed file is re-checked before it is written: the migrated workloads must have no legacy
findings left and the documents this run inserted no errors (claims already in the file are not
this run's to judge; ``dralint check`` reports them).
"""

from __future__ import annotations

import multiprocessing as mp
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dralint import dra, drivers, k8s, lifecycle, schema, workloads
from dralint.checks.legacy import Usage, usages
from dralint.config import Config, usable_cores
from dralint.engine import Result, limits_for, lint_files, load_paths
from dralint.fixer import (
    FileOutcome,
    GateFailure,
    PlannedFix,
    Style,
    apply_pass,
    emit_document,
    load_targets,
    to_plain,
    verify,
)
from dralint.index import K8sObject
from dralint.knowledge import LegacyKnowledge, LegacyResource, legacy
from dralint.load import SourceFile, load_bytes, yaml_error_text
from dralint.locate import locate, offsets
from dralint.model import Applicability, Edit, Fix, JsonPath
from dralint.registry import Context
from dralint.roots import Roots, project_roots

LEGACY_RULES = ("DRA201", "DRA202", "DRA203")
#: how gpu-feature-discovery writes MIG-single and shared product labels (reference §8.5/§8.6)
_MIG_PRODUCT = re.compile(r"(?P<product>.+)-MIG-(?P<profile>[0-9]+g\.[0-9]+gb(?:[.+-][a-z.]+)?)")
_SHARED_SUFFIX = "-SHARED"
_SHARED_NOTE = ("the GPU product label ends in -SHARED, so these pods shared GPUs through device-plugin time-slicing; "
                "the claim asks for a whole GPU per pod: use one shared ResourceClaim if they relied on sharing")
_DNS = re.compile(r"[^a-z0-9.-]+")


@dataclass(frozen=True)
class MigrateOptions:
    template_name_pattern: str = "{workload}-gpu"
    keep_extended_resources: bool = False
    convert_node_selectors: bool = False
    device_class_map: dict[str, str] = field(default_factory=dict)
    extended_resource_bridge: bool = False
    bridge_file: str = "dra-extended-resources.yaml"
    include_custom_resources: bool = False


@dataclass
class WorkloadReport:
    path: str
    line: int
    kind: str
    namespace: str | None
    name: str
    status: str  # migrated | skipped | bridged
    reason: str = ""
    objects: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def label(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "kind": self.kind, "namespace": self.namespace,
                "name": self.name, "status": self.status, "reason": self.reason or None,
                "objects": self.objects, "notes": self.notes}


@dataclass
class MigrationReport:
    workloads: list[WorkloadReport]
    files: list[FileOutcome]
    #: new files (the DeviceClasses of --extended-resource-bridge): path -> content
    new_files: dict[str, bytes] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: display path -> the real file to write, and where writes may go (see `FixRun`)
    write_to: dict[str, str] = field(default_factory=dict)
    roots: Roots | None = None

    def migrated(self) -> list[WorkloadReport]:
        return [w for w in self.workloads if w.status in ("migrated", "bridged")]

    def skipped(self) -> list[WorkloadReport]:
        return [w for w in self.workloads if w.status == "skipped"]

    def changed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.changed]

    @property
    def failed(self) -> bool:
        return any(f.failures for f in self.files)

    def as_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "summary": {"migrated": len(self.migrated()), "skipped": len(self.skipped()),
                        "files_changed": len(self.changed()) + len(self.new_files),
                        "failed_files": sum(1 for f in self.files if f.failures)},
            "workloads": [w.as_json() for w in self.workloads],
            "files_changed": [f.path for f in self.changed()] + sorted(self.new_files),
            "failures": [{"path": f.path, "rules": g.rules, "reason": g.reason} for f in self.files
                         for g in f.failures],
            "notes": self.notes,
        }


# ----------------------------------------------------------------------------------------------
# helpers


def _dns(name: str) -> str:
    out = _DNS.sub("-", name.lower()).strip("-.")
    return out[:253] or "gpu"


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
    #: device class name -> (driver, device type, where) of each of its definitions (see `_class_views`)
    class_views: dict[str, list[tuple[str | None, str | None, str]]] = field(default_factory=dict)
    #: (namespace, file, spec json) -> template name created by this run
    created: dict[tuple[str | None, str, str], str] = field(default_factory=dict)
    dra204: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.ctx = Context(index=self.result.index, profile=self.config.profile)
        self.know = legacy(self.config.profile)
        self.lc = lifecycle.for_profile(self.config.profile)
        self.api, self.flat = _claim_api(self.lc) or ("", False)

    # -- entry -----------------------------------------------------------------------------
    def plan(self, obj: K8sObject) -> tuple[PlannedFix | None, WorkloadReport | None]:
        uses = usages(obj, self.ctx)
        if not uses:
            return None, None
        sf = obj.file
        line = locate(sf, obj.doc, (*obj.base_path, "kind")).line
        rep = WorkloadReport(sf.path, line, obj.kind or "?", obj.namespace, obj.name or "?", "skipped")
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
        rep.status = "migrated"
        fix = Fix("Migrate from the device plugin to DRA", Applicability.UNSAFE, tuple(edits))
        return PlannedFix("migrate", fix, obj.doc.index, obj.base_path, obj.label(), keep_comments=True), rep

    def _skip_reason(self, obj: K8sObject, uses: list[Usage]) -> str | None:
        if obj.doc.source:
            return (f"Helm-rendered from `{obj.doc.source}`: change the chart template (rendered output is never "
                    "rewritten)")
        if not obj.name:
            return "the object has no `metadata.name` to derive a template name from"
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
        if not self.opts.convert_node_selectors:
            for ps in obj.pod_specs:
                prod = k8s.get(ps.spec, "nodeSelector", "nvidia.com/gpu.product")
                if isinstance(prod, str) and _MIG_PRODUCT.fullmatch(prod) and \
                        any(u.resource.kind == "gpu" for u in uses if u.pod_spec.path == ps.path):
                    return (f"the node selector `nvidia.com/gpu.product: {prod}` means the MIG \"single\" strategy: "
                            "`nvidia.com/gpu` is a MIG device here; pass --convert-node-selectors to claim that "
                            "MIG profile")
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
                notes = [c for s in r.usage.sections
                         if (c := _eol_comment(sf, obj.doc.data, (*base, *r.usage.container.path, "resources", s,
                                                                  r.usage.resource.name)))]
                container_refs[r.usage.container.path].append((ref, notes))
        for cpath, refs in container_refs.items():
            for ref, notes in refs:
                edits.append(Edit("append", (*cpath, "resources", "claims"), value=ref,
                                  comment="; ".join(notes) if notes else None))
            if not self.opts.keep_extended_resources:
                edits.extend(self._removals(cpath, [u for u in p.here if u.container.path == cpath]))
        edits.extend(p.selector_edits)

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
            while name in used:
                name, k = f"{base_name}-{k}", k + 1
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
            for other in self.result.index.of_kind(kind):
                if other.namespace == ns and other.name and same_json(self._plain_spec(other), want_spec) \
                        and self._reusable(other, want_spec):
                    return other.name, True
            key = (ns, obj.file.path, repr(want_spec))
            if key in self.created:
                return self.created[key], True
        pattern = self.opts.template_name_pattern
        try:
            raw = pattern.format(workload=f"{obj.name}{suffix}", kind=(obj.kind or "").lower(),
                                 namespace=ns or "default")
        except (KeyError, IndexError, ValueError):
            raw = f"{obj.name}{suffix}-gpu"
        name, n = _dns(raw), 2
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
        if any(not same_json(self._plain_spec(o), want_spec)
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


def same_json(a: Any, b: Any) -> bool:
    from dralint.fixer import same

    return same(a, b)


# ----------------------------------------------------------------------------------------------
# DRA307: a standalone claim shared by replicas -> one claim per pod from a template


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
    name, n = _dns(claim.claim_name), 2
    new_doc = True
    while True:
        existing = [t for t in index.find("ResourceClaimTemplate", name, ns)]
        if not existing:
            break
        if any(same_json(to_plain(t.data.get("spec")), want) for t in existing):
            new_doc = False
            break
        name, n = _dns(f"{claim.claim_name}-{n}"), n + 1
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


# ----------------------------------------------------------------------------------------------
# the extended-resource bridge


def _bridge(result: Result, config: Config, opts: MigrateOptions, targets: Sequence[SourceFile],
            ctx: Context) -> tuple[list[WorkloadReport], dict[str, bytes], list[str]]:
    lc = lifecycle.for_profile(config.profile)
    served: dict[str, str] = {}
    for dc in result.index.of_kind("DeviceClass"):
        ern = k8s.get(dc.data, "spec", "extendedResourceName")
        if isinstance(ern, str) and dc.name:
            served.setdefault(ern, dc.name)
    for name in sorted(drivers.installed_classes(config.profile)):
        info = drivers.class_info(name)
        if info is not None and info.extended_resource_name:
            served.setdefault(info.extended_resource_name, f"{name} (installed by the driver's Helm chart)")
    reports: list[WorkloadReport] = []
    new_classes: dict[str, dict[str, Any]] = {}
    target_ids = {id(sf) for sf in targets}
    for obj in result.index.objects:
        if not obj.target or id(obj.file) not in target_ids:
            continue
        uses = usages(obj, ctx)
        if not uses:
            continue
        line = locate(obj.file, obj.doc, (*obj.base_path, "kind")).line
        rep = WorkloadReport(obj.file.path, line, obj.kind or "?", obj.namespace, obj.name or "?", "bridged")
        for u in uses:
            res = u.resource
            if res.kind == "shared":
                rep.status, rep.reason = "skipped", (f"`{res.name}` is a shared replica; extended resources backed "
                                                     "by DRA cannot share devices")
                break
            have = served.get(res.name)
            if have:
                rep.notes.append(f"`{res.name}` is served by DeviceClass {have}")
                continue
            cls_name = _dns(f"extended-{_label(res.name.split('/', 1)[-1])}.{res.vendor}")
            info = drivers.class_info(res.device_class)
            sel = info.selector if info else f"device.driver == '{res.vendor}'"
            if res.kind == "mig" and res.dra_profile:
                sel += f" && device.attributes['{res.vendor}'].profile == '{res.dra_profile}'"
            api = f"{dra.DRA_GROUP}/v1" if not lc.known or lc.served("v1", "DeviceClass") else \
                (_claim_api(lc) or (f"{dra.DRA_GROUP}/v1", False))[0]
            new_classes[cls_name] = {"apiVersion": api, "kind": "DeviceClass", "metadata": {"name": cls_name},
                                     "spec": {"selectors": [{"cel": {"expression": sel}}],
                                              "extendedResourceName": res.name}}
            served[res.name] = cls_name
            rep.objects.append(f"DeviceClass {cls_name}")
        reports.append(rep)
    notes: list[str] = []
    gate = lc.gate("DRAExtendedResource")
    if lc.known and gate is None:
        notes.append(f"Kubernetes {lc.minor} has no DRAExtendedResource: the bridge needs 1.34 or newer")
    elif gate is not None and not gate.enabled:
        notes.append(f"enable feature gate DRAExtendedResource ({gate.describe()}) on the API server, scheduler, "
                     "controller manager and kubelets")
    if reports:
        notes.append("a node must not serve the same extended resource through both the device plugin and DRA")
    files: dict[str, bytes] = {}
    if new_classes:
        path = Path(opts.bridge_file)
        refused = project_roots(config.root).refusal(path, "--bridge-file", hint=False)
        if refused:  # never read (a diff would show it) nor written: the DeviceClasses are not added
            notes.append(f"{refused}; the DeviceClasses were not added")
            return reports, files, notes
        old = path.read_bytes() if path.is_file() else b""
        have_names = set()
        if old:
            for d in load_bytes(str(path), old).documents:
                name = k8s.get(d.data, "metadata", "name")
                if isinstance(name, str):
                    have_names.add(name)
        text = old.decode("utf-8", "replace")
        for name, body in new_classes.items():
            if name in have_names:
                continue
            if text and not text.endswith("\n"):
                text += "\n"
            text += ("---\n" if text.strip() else "") + emit_document(body, Style())
        files[str(path)] = text.encode("utf-8")
    return reports, files, notes


# ----------------------------------------------------------------------------------------------
# running it


def migrate_files(targets: Sequence[SourceFile], context: Sequence[SourceFile], config: Config,
                  opts: MigrateOptions, progress: Callable[[int], None] | None = None) -> MigrationReport:
    """Plan and apply the migration in memory (nothing is written); gate every changed file."""
    scan = replace(config, select=["DRA204"], extend_select=[], ignore=[], per_file_ignores={})
    result = lint_files(list(targets), list(context), scan)
    ctx = Context(index=result.index, profile=config.profile)
    if opts.extended_resource_bridge:
        bridged, new_files, notes = _bridge(result, config, opts, targets, ctx)
        return MigrationReport(bridged, [FileOutcome(sf.path, sf.raw, sf.raw) for sf in targets], new_files, notes)
    planner = _Planner(result, config, opts)
    by_obj = {(f.path, f.doc_index, f.base_path) for f in result.findings if f.rule == "DRA204"}
    planner.dra204 = {id(o) for o in result.index.objects if (o.file.path, o.doc.index, o.base_path) in by_obj}
    plans: dict[str, list[PlannedFix]] = defaultdict(list)
    reports: list[WorkloadReport] = []
    rep_of: dict[int, WorkloadReport] = {}
    target_ids = {id(sf) for sf in targets}
    for obj in result.index.objects:
        if not obj.target or id(obj.file) not in target_ids:
            continue
        pf, rep = planner.plan(obj)
        if rep is not None:
            reports.append(rep)
        if pf is not None and rep is not None:
            plans[obj.file.path].append(pf)
            rep_of[id(pf)] = rep
    outcomes = [FileOutcome(sf.path, sf.raw, sf.raw) for sf in targets]
    todo = [k for k, sf in enumerate(targets) if plans.get(sf.path)]
    job = _Job(list(targets), [plans.get(sf.path, []) for sf in targets], config, opts.keep_extended_resources)
    for done in _run(job, todo, _workers(config, job, todo)):
        _merge(done, outcomes[done.index], job.plans[done.index], rep_of)
        if progress is not None:
            progress(1)
    if progress is not None:
        progress(len(targets) - len(todo))
    return MigrationReport(reports, outcomes)


# ----------------------------------------------------------------------------------------------
# applying the plans, file by file (in worker processes for large inputs)


@dataclass
class _Job:
    targets: list[SourceFile]
    plans: list[list[PlannedFix]]
    config: Config
    keep_legacy: bool


@dataclass
class _Done:
    """What happened to one file; plain data, so it can come back from a worker process."""

    index: int
    after: bytes | None = None
    failure: str | None = None
    #: planned-fix position -> why it was not applied
    skipped: dict[int, str] = field(default_factory=dict)
    notes: dict[int, list[str]] = field(default_factory=dict)
    applied: int = 0


#: from this many planned workloads on, `migrate` applies them in worker processes
PARALLEL_MIN_WORKLOADS = 400


def _workers(config: Config, job: _Job, todo: list[int]) -> int:
    cores = usable_cores()  # also caps a `jobs` set on a Config directly (API callers)
    if config.jobs is not None and config.jobs > 0:
        return max(1, min(config.jobs, len(todo), cores))
    if sum(len(job.plans[k]) for k in todo) < PARALLEL_MIN_WORKLOADS or len(todo) < 4:
        return 1
    return max(1, min(cores, len(todo) // 2))


_JOB: _Job | None = None


def _run(job: _Job, todo: list[int], workers: int) -> Iterator[_Done]:
    global _JOB
    if workers <= 1 or "fork" not in mp.get_all_start_methods():
        for k in todo:
            yield _apply_file(job, k)
        return
    _JOB = job  # the forked workers inherit the loaded files and the plans without pickling them
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            yield from pool.imap_unordered(_apply_in_worker, todo, chunksize=max(1, len(todo) // (workers * 8)))
    finally:
        _JOB = None


def _apply_in_worker(k: int) -> _Done:
    assert _JOB is not None
    return _apply_file(_JOB, k)


def _apply_file(job: _Job, k: int) -> _Done:
    """Apply one file's plans, gate the result and re-check it; the original file object is not changed."""
    sf, planned = job.targets[k], job.plans[k]
    pos = {id(pf): i for i, pf in enumerate(planned)}
    done = _Done(k)
    pr = apply_pass(sf, planned, Applicability.UNSAFE)
    for sk in [*pr.skipped, *pr.failures]:
        done.skipped[pos[id(sk.fix)]] = f"the document cannot be edited safely: {sk.reason}"
    for pf in pr.deferred:  # two workloads of one `kind: List` document touching the same place
        done.skipped[pos[id(pf)]] = "another workload's change in this document overlaps; run migrate again"
    if pr.failures:
        done.failure = pr.failures[0].reason
        return done
    if not pr.applied:
        return done
    for pf in pr.applied:
        if id(pf) in pr.notes:
            done.notes[pos[id(pf)]] = pr.notes[id(pf)]
    new = load_bytes(sf.path, (b"\xef\xbb\xbf" if sf.bom else b"") + pr.text.encode("utf-8"),
                     limits_for(job.config))
    origin: list[int | None] = []
    for d in range(len(sf.documents)):
        origin.append(d)
        origin.extend([None] * pr.inserted.get(d, 0))
    why = verify(sf, new, origin, pr.touched) or _recheck(new, job, {pf.label for pf in pr.applied}, origin)
    if why:
        done.failure = why
        return done
    done.after = new.raw
    done.applied = len(pr.applied)
    return done


def _recheck(new: SourceFile, job: _Job, migrated: set[str], origin: Sequence[int | None]) -> str | None:
    """Migrated workloads must have no legacy findings left, and the new objects no errors.

    Only the documents this run inserted (``origin`` None) are held to "no errors": claims and templates
    that were already in the file keep whatever problems they had (``dralint check`` reports those), and
    the migration never points a pod at one of them unless its spec equals the one it would have written.
    """
    scan = replace(job.config, select=[*LEGACY_RULES, "DRA10"], extend_select=[], ignore=[], per_file_ignores={},
                   jobs=1)
    for f in lint_files([new], [], scan).findings:
        ref = f.object
        if ref is None:
            continue
        if f.rule in LEGACY_RULES and not job.keep_legacy and ref.label() in migrated:
            return f"{ref.label()} still has {f.rule} after migrating: {f.message}"
        inserted = 0 <= f.doc_index < len(origin) and origin[f.doc_index] is None
        if inserted and f.rule.startswith("DRA10") and int(f.severity) >= 3 and \
                ref.kind in ("ResourceClaimTemplate", "ResourceClaim"):
            return f"the new {ref.label()} is invalid ({f.rule}): {f.message}"
    return None


def _merge(done: _Done, outcome: FileOutcome, planned: list[PlannedFix],
           rep_of: dict[int, WorkloadReport]) -> None:
    for i, reason in done.skipped.items():
        rep = rep_of.get(id(planned[i]))
        if rep is not None:
            rep.status, rep.reason, rep.objects = "skipped", reason, []
    for i, notes in done.notes.items():
        rep = rep_of.get(id(planned[i]))
        if rep is not None:
            rep.notes.extend(notes)
    if done.failure:
        outcome.failures.append(GateFailure(["migrate"], done.failure))
        for pf in planned:
            rep = rep_of.get(id(pf))
            if rep is not None and rep.status == "migrated":
                rep.status, rep.reason, rep.objects = "skipped", f"the result failed a check: {done.failure}", []
        return
    if done.after is not None:
        outcome.after = done.after
        outcome.applied["migrate"] = done.applied


def migrate_paths(paths: Sequence[str], config: Config, opts: MigrateOptions, context: Sequence[str] = (),
                  stdin: tuple[str, bytes] | None = None, follow_symlinks: bool = False,
                  progress: Callable[[int], None] | None = None,
                  on_loaded: Callable[[int], None] | None = None) -> MigrationReport:
    targets, missing, write_to, roots = load_targets(paths, config, follow_symlinks)
    if stdin is not None:
        targets.append(load_bytes(stdin[0], stdin[1], limits_for(config)))
    if on_loaded is not None:
        on_loaded(len(targets))
    ctx: list[SourceFile] = []
    if context:
        names = {str(Path(sf.path).resolve()) for sf in targets}
        ctx_files, _ = load_paths(context, config, follow_symlinks)
        ctx = [sf for sf in ctx_files if str(Path(sf.path).resolve()) not in names]
    report = migrate_files(targets, ctx, config, opts, progress)
    report.missing, report.write_to, report.roots = missing, write_to, roots
    return report


def parse_class_map(values: Sequence[str]) -> dict[str, str]:
    """``--device-class-map``: ``FROM=TO`` pairs (comma-separated, repeatable) or a YAML mapping file."""
    out: dict[str, str] = {}
    for v in values:
        p = Path(v)
        if "=" not in v and p.is_file():
            import yaml

            refused = project_roots().refusal(p, "--device-class-map file", hint=False)
            if refused:
                raise ValueError(refused)
            try:
                data = yaml.safe_load(p.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as e:
                raise ValueError(f"{v}: cannot read: {e}") from e
            except yaml.YAMLError as e:
                raise ValueError(f"{v}: invalid YAML: {yaml_error_text(e)}") from e
            if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(x, str)
                                                     for k, x in data.items()):
                raise ValueError(f"{v}: expected a mapping of device class names")
            out.update(data)
            continue
        for pair in v.split(","):
            if not pair.strip():
                continue
            src, sep, dst = pair.partition("=")
            if not sep or not src.strip() or not dst.strip():
                raise ValueError(f"--device-class-map expects FROM=TO, got {pair!r}")
            out[src.strip()] = dst.strip()
    return out


__all__ = ["MigrateOptions", "MigrationReport", "WorkloadReport", "claim_to_template_fix", "migrate_files",
           "migrate_paths", "parse_class_map"]
