"""``--extended-resource-bridge``: leave pods as they are and verify or emit a DeviceClass with
``extendedResourceName`` for each device-plugin resource they use (Kubernetes' DRAExtendedResource)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dralint.checks.legacy import usages
from dralint.checks.registry import Context
from dralint.engine.config import Config
from dralint.engine.runner import Result
from dralint.fix.emit import Style, emit_document
from dralint.inputs import dra
from dralint.inputs.load import SourceFile, load_bytes, read_side_file
from dralint.inputs.locate import locate
from dralint.inputs.roots import project_roots
from dralint.knowledge import drivers, gke, k8s, lifecycle
from dralint.migrate.planner import _MIG_PRODUCT, _SHARED_SUFFIX, _claim_api, _label
from dralint.migrate.records import MigrateOptions, WorkloadReport

# ----------------------------------------------------------------------------------------------
# the extended-resource bridge


def _not_a_full_gpu(ps: k8s.PodSpecRef) -> str | None:
    """The node selector that makes `nvidia.com/gpu` a MIG device or a time-shared GPU, if any."""
    sel = ps.spec.get("nodeSelector")
    g, t = gke.selection(sel), gke.labels()
    if g.partition is not None:
        return f"the node selector `{t.partition_size}: {g.partition}` picks MIG partitions"
    if g.sharing is not None:
        return f"the node selector `{t.sharing_strategy}: {g.sharing}` picks shared GPUs"
    prod = k8s.get(sel, "nvidia.com/gpu.product")
    if isinstance(prod, str) and (_MIG_PRODUCT.fullmatch(prod) or prod.endswith(_SHARED_SUFFIX)):
        return f"the node selector `nvidia.com/gpu.product: {prod}` picks MIG devices or shared GPUs"
    return None


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
            special = _not_a_full_gpu(u.pod_spec) if res.kind == "gpu" else None
            if special:
                rep.status, rep.reason = "skipped", (
                    f"{special}: `{res.name}` is not a whole GPU there, and an extended resource backed by DRA "
                    "serves one device class for every pod (the full-GPU class); migrate these pods to claims "
                    "without --extended-resource-bridge")
                break
            if res.kind == "shared":
                rep.status, rep.reason = "skipped", (f"`{res.name}` is a shared replica; extended resources backed "
                                                     "by DRA cannot share devices")
                break
            have = served.get(res.name)
            if have:
                rep.notes.append(f"`{res.name}` is served by DeviceClass {have}")
                continue
            cls_name = k8s.dns_name(f"extended-{_label(res.name.split('/', 1)[-1])}.{res.vendor}")
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
        why, existing = _existing(path)
        if why:  # appending would lose or garble what the file holds: nothing is added
            notes.append(f"--bridge-file {path}: {why}; the DeviceClasses were not added")
            return reports, files, notes
        have_names = set()
        for d in existing.documents if existing is not None else ():
            name = k8s.get(d.data, "metadata", "name")
            if isinstance(name, str):
                have_names.add(name)
        text = existing.raw.decode("utf-8") if existing is not None else ""
        nl = "\r\n" if "\r\n" in text else "\n"  # the file's own line ending for what is appended
        for name, body in new_classes.items():
            if name in have_names:
                continue
            if text and not text.endswith("\n"):
                text += nl
            text += (f"---{nl}" if text.strip() else "") + emit_document(body, Style()).replace("\n", nl)
        files[str(path)] = text.encode("utf-8")
    return reports, files, notes


def _existing(path: Path) -> tuple[str, SourceFile | None]:
    """(why the bridge file cannot take more documents, or "", the file as parsed: None when there is
    none). Read no further than the loader would; refused when it is not UTF-8 YAML (a decode with
    replacements would rewrite bytes the user wrote) or not a regular file."""
    if not path.exists():
        return "", None
    if not path.is_file():
        return "not a regular file", None
    try:
        old = read_side_file(path)
        old.decode("utf-8")
    except OSError as e:
        return f"cannot read it ({e.strerror or e})", None
    except UnicodeDecodeError:
        return "not UTF-8 text", None
    sf = load_bytes(str(path), old)
    if sf.problems:
        return f"cannot be read as YAML ({sf.problems[0].message})", None
    return "", sf
