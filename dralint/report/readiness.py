"""``dralint report``: how far a repository (or a cluster dump) is from running GPUs on DRA.

Per namespace and per directory: how many workloads still ask the device plugin for GPUs
(`nvidia.com/gpu`, MIG, shared replicas), how many already use DRA claims, how many do both, and
which error findings block the move. It answers the last step of a migration, "does anything
still reference nvidia.com/gpu?", for a whole repository or a ``kubectl get -A -o json`` dump.

Controller-owned objects whose owner is in the same set (the Pods and ReplicaSets of a Deployment
in a cluster dump) are not counted again: the owner stands for them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from dralint.checks.legacy import usages
from dralint.checks.operators import gpu_requests
from dralint.checks.registry import Context
from dralint.engine.runner import Result
from dralint.inputs import dra
from dralint.inputs.index import Index, K8sObject
from dralint.knowledge import k8s
from dralint.model import Finding, Severity
from dralint.report.escaping import json_text, pretty_json, terminal
from dralint.report.markdown import escape
from dralint.report.sarif import help_uri

FORMAT_VERSION = 1
NO_NAMESPACE = "(no namespace)"
#: how many example objects a blocking rule lists
EXAMPLES = 5


@dataclass
class Group:
    workloads: int = 0
    legacy: int = 0
    dra: int = 0
    mixed: int = 0
    legacy_resources: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    warnings: int = 0

    @property
    def ready(self) -> bool:
        return self.legacy == 0 and self.errors == 0

    def as_json(self) -> dict[str, Any]:
        return {
            "workloads": self.workloads,
            "device_plugin": self.legacy,
            "dra": self.dra,
            "both": self.mixed,
            "neither": self.workloads - self.legacy - self.dra + self.mixed,
            "device_plugin_resources": dict(sorted(self.legacy_resources.items())),
            "errors": self.errors,
            "warnings": self.warnings,
            "ready": self.ready,
        }


@dataclass
class Blocker:
    rule: str
    name: str
    count: int = 0
    examples: list[str] = field(default_factory=list)


@dataclass
class Readiness:
    total: Group
    by_namespace: dict[str, Group]
    by_directory: dict[str, Group]
    blockers: list[Blocker]
    legacy_workloads: list[dict[str, Any]]
    files: int
    #: per `<group>/<kind>` of the workload (a Volcano Job is not a batch Job)
    by_kind: dict[str, Group] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "summary": {"files": self.files, **self.total.as_json()},
            "by_namespace": {k: g.as_json() for k, g in sorted(self.by_namespace.items())},
            "by_directory": {k: g.as_json() for k, g in sorted(self.by_directory.items())},
            "by_kind": {k: g.as_json() for k, g in sorted(self.by_kind.items())},
            "blockers": [{"rule": b.rule, "name": b.name, "count": b.count, "examples": b.examples}
                         for b in self.blockers],
            "device_plugin_workloads": self.legacy_workloads,
        }


def _owned_by_present_owner(obj: K8sObject, index: Index) -> bool:
    refs = obj.metadata.get("ownerReferences")
    if not isinstance(refs, list):
        return False
    for r in refs:
        if isinstance(r, dict) and r.get("controller") is True:
            kind, name = r.get("kind"), r.get("name")
            if isinstance(kind, str) and isinstance(name, str) and index.find(kind, name, obj.namespace):
                return True
    return False


def _directory(path: str) -> str:
    parent = PurePosixPath(path.replace("\\", "/")).parent.as_posix()
    return parent if parent not in ("", ".") else "."


def _groups(groups: dict[str, Group], key: str) -> Group:
    g = groups.get(key)
    if g is None:
        g = groups[key] = Group()
    return g


def assess(result: Result) -> Readiness:
    cfg = result.config
    index = result.index
    ctx = Context(index=index, profile=cfg.profile)
    total = Group()
    by_ns: dict[str, Group] = {}
    by_dir: dict[str, Group] = {}
    legacy_list: list[dict[str, Any]] = []
    by_kind: dict[str, Group] = {}
    for obj in index.targets():
        if _owned_by_present_owner(obj, index):
            continue
        # GPUs an operator asks for in its own fields (NIMService, TrainJob, Spark, KubeVirt…)
        operator_uses = gpu_requests(obj, ctx)
        if not obj.pod_specs and not operator_uses:
            continue
        ns = obj.namespace or NO_NAMESPACE
        kind = f"{obj.group}/{obj.kind}" if obj.group else f"{obj.kind}"
        groups = [total, _groups(by_ns, ns), _groups(by_dir, _directory(obj.file.path)), _groups(by_kind, kind)]
        uses = usages(obj, ctx)
        names = [u.resource.name for u in uses] + [f.name or "nvidia.com/gpu" for f in operator_uses]
        has_claims = any(dra.pod_claims(ps) for ps in obj.pod_specs)
        for g in groups:
            g.workloads += 1
            g.legacy += bool(names)
            g.dra += has_claims
            g.mixed += bool(names) and has_claims
            for n in names:
                g.legacy_resources[n] += 1
        if names:
            legacy_list.append({
                "object": obj.ref.as_json(),
                "path": obj.file.path,
                "resources": sorted(set(names)),
                "uses_dra": has_claims,
            })
    blockers: dict[str, Blocker] = {}
    for f in result.findings:
        groups = [total, _groups(by_dir, _directory(f.path))]
        if f.object is not None:
            groups.append(_groups(by_ns, f.object.namespace or NO_NAMESPACE))
            group = k8s.api_group(f.object.api_version)
            kind_group = by_kind.get(f"{group}/{f.object.kind}" if group else f"{f.object.kind}")
            if kind_group is not None:  # kinds that are workloads only
                groups.append(kind_group)
        for g in groups:
            g.errors += f.severity == Severity.ERROR
            g.warnings += f.severity == Severity.WARNING
        if f.severity == Severity.ERROR:
            b = blockers.get(f.rule)
            if b is None:
                b = blockers[f.rule] = Blocker(f.rule, f.name)
            b.count += 1
            if len(b.examples) < EXAMPLES:
                b.examples.append(_where(f))
    ordered = sorted(blockers.values(), key=lambda b: (-b.count, b.rule))
    return Readiness(total, by_ns, by_dir, ordered, legacy_list, len(result.files), by_kind)


def _where(f: Finding) -> str:
    what = f" ({f.object.label()})" if f.object is not None else ""
    return f"{f.path}:{f.span.line}:{f.span.column}{what}"


# --------------------------------------------------------------------------------------------------
# rendering

_COLUMNS = ("workloads", "device plugin", "DRA", "both", "errors", "ready")


def _cells(g: Group) -> tuple[str, ...]:
    return (str(g.workloads), str(g.legacy), str(g.dra), str(g.mixed), str(g.errors), "yes" if g.ready else "no")


def _text_table(title: str, groups: dict[str, Group]) -> list[str]:
    if not groups:
        return []
    keys = sorted(groups)
    width = max(len(title), *(len(k) for k in keys))
    head = f"{title:<{width}}  " + "  ".join(f"{c:>{max(len(c), 5)}}" for c in _COLUMNS)
    out = [head, "-" * len(head)]
    for k in keys:
        cells = zip(_COLUMNS, _cells(groups[k]), strict=True)
        out.append(f"{k:<{width}}  " + "  ".join(f"{v:>{max(len(c), 5)}}" for c, v in cells))
    return [*out, ""]


def _verdict(r: Readiness) -> str:
    t = r.total
    if t.ready:
        return (f"Ready: no workload uses device-plugin GPU resources and nothing blocks the move "
                f"({t.workloads} workloads, {t.dra} on DRA).")
    parts = []
    if t.legacy:
        parts.append(f"{t.legacy} of {t.workloads} workloads still use device-plugin resources")
    if t.errors:
        parts.append(f"{t.errors} error finding{'s block' if t.errors != 1 else ' blocks'} the move")
    return "Not ready: " + "; ".join(parts) + "."


def render_text(r: Readiness) -> str:
    t = r.total
    out = [f"Migration readiness: {r.files} files, {t.workloads} workloads: {t.legacy} on the device plugin, "
           f"{t.dra} on DRA, {t.mixed} on both.", ""]
    if t.legacy_resources:
        out.append("Device-plugin resources still requested: "
                   + ", ".join(f"{k} ({v})" for k, v in sorted(t.legacy_resources.items())))
        out.append("")
    out += _text_table("namespace", r.by_namespace)
    out += _text_table("directory", r.by_directory)
    out += _text_table("kind", r.by_kind)
    if r.blockers:
        out.append("Blocking (error) findings:")
        for b in r.blockers:
            out.append(f"  {b.rule} {b.name}: {b.count}")
            out += [f"      {e}" for e in b.examples]
            if b.count > len(b.examples):
                out.append(f"      … and {b.count - len(b.examples)} more")
        out.append("")
    if r.legacy_workloads:
        out.append("Workloads still on the device plugin:")
        for w in r.legacy_workloads:
            o = w["object"]
            ns = f"{o['namespace']}/" if o["namespace"] else ""
            both = " (also uses DRA claims)" if w["uses_dra"] else ""
            out.append(f"  {w['path']}: {o['kind']} {ns}{o['name']}: {', '.join(w['resources'])}{both}")
        out.append("")
    out.append(_verdict(r))
    return "\n".join(out) + "\n"


def _md_table(title: str, groups: dict[str, Group]) -> list[str]:
    if not groups:
        return []
    out = [f"| {title} | " + " | ".join(_COLUMNS) + " |", "|---|" + "---:|" * (len(_COLUMNS) - 1) + "---|"]
    for k in sorted(groups):
        out.append(f"| {escape(k)} | " + " | ".join(_cells(groups[k])) + " |")
    return [*out, ""]


def render_markdown(r: Readiness) -> str:
    t = r.total
    out = ["## DRA migration readiness", "", escape(_verdict(r)), "",
           f"{r.files} files, {t.workloads} workloads: {t.legacy} on the device plugin, {t.dra} on DRA, "
           f"{t.mixed} on both.", ""]
    if t.legacy_resources:
        out += ["Device-plugin resources still requested: "
                + ", ".join(f"<code>{escape(k)}</code> ({v})" for k, v in sorted(t.legacy_resources.items())), ""]
    if r.by_namespace:
        out += ["### By namespace", "", *_md_table("namespace", r.by_namespace)]
    if r.by_directory:
        out += ["### By directory", "", *_md_table("directory", r.by_directory)]
    if r.by_kind:
        out += ["### By kind", "", *_md_table("kind", r.by_kind)]
    if r.blockers:
        out += ["### Blocking findings", "", "| Rule | Name | Count | Examples |", "|---|---|---:|---|"]
        for b in r.blockers:
            ex = "<br>".join(f"<code>{escape(e)}</code>" for e in b.examples)
            out.append(f"| [{b.rule}]({help_uri(b.rule)}) | {escape(b.name)} | {b.count} | {ex} |")
        out.append("")
    return "\n".join(out) + "\n"


def render(r: Readiness, fmt: str) -> str:
    if fmt == "json":
        return json_text(pretty_json(r.as_json())) + "\n"
    if fmt == "markdown":
        return render_markdown(r)
    return terminal(render_text(r))  # names and paths come from the input: no control character passes
