"""What a migration is asked to do (`MigrateOptions`) and what it did (per workload and per run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralint.fix.loop import FileOutcome
from dralint.inputs.roots import Roots


@dataclass(frozen=True)
class MigrateOptions:
    template_name_pattern: str = "{workload}-gpu"
    keep_extended_resources: bool = False
    convert_node_selectors: bool = False
    device_class_map: dict[str, str] = field(default_factory=dict)
    extended_resource_bridge: bool = False
    bridge_file: str = "dra-extended-resources.yaml"
    include_custom_resources: bool = False
    #: add the `nvidia.com/gpu` toleration that ExtendedResourceToleration stops adding (--no-gpu-toleration)
    gpu_toleration: bool = True


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
    #: tolerations added for the taints of the extended resources removed
    tolerations: int = 0

    def label(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "kind": self.kind, "namespace": self.namespace,
                "name": self.name, "status": self.status, "reason": self.reason or None,
                "objects": self.objects, "notes": self.notes, "tolerations_added": self.tolerations}


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

    def tolerations(self) -> int:
        return sum(w.tolerations for w in self.migrated())

    def changed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.changed]

    @property
    def failed(self) -> bool:
        return any(f.failures for f in self.files)

    def as_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "summary": {"migrated": len(self.migrated()), "skipped": len(self.skipped()),
                        "tolerations_added": self.tolerations(),
                        "files_changed": len(self.changed()) + len(self.new_files),
                        "failed_files": sum(1 for f in self.files if f.failures)},
            "workloads": [w.as_json() for w in self.workloads],
            "files_changed": [f.path for f in self.changed()] + sorted(self.new_files),
            "failures": [{"path": f.path, "rules": g.rules, "reason": g.reason} for f in self.files
                         for g in f.failures],
            "notes": self.notes,
        }
