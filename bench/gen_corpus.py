#!/usr/bin/env python3
"""Write a synthetic, deterministic repository of Kubernetes manifests for benchmarking dralint.

    python bench/gen_corpus.py OUT [--files 2000] [--docs 20000] [--seed 7]

The defaults give about 2,000 files, 20,000 documents and 28 MB, shaped like a platform team's
GitOps repo: application bundles (ServiceAccount, ConfigMap, workload, Service, HPA, PDB, ...),
workloads with and without GPUs (device-plugin `nvidia.com/gpu` limits, node selectors and
tolerations, or DRA `resourceClaims`), ResourceClaimTemplates / ResourceClaims / DeviceClasses
with `exactly` and `firstAvailable` requests and CEL selectors in every quoting style, a few large
ConfigMaps (dashboards, proxy configs), Helm-rendered files with `# Source:` comments,
kustomize-style all-in-one files, anchors and merge keys, CRLF and BOM files, a handful of Helm
values files and device-plugin DaemonSets, and about 1 % deliberately broken DRA objects.

Standard library only; the text is written by the small emitter below, never by a YAML library,
so quoting, comments and indentation vary the way hand-written and rendered files do. The same
arguments always give byte-identical output (each file draws from its own seeded generator).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------------------------
# text emitter: nested dict/list plus a few wrapper types that ask for a particular YAML style


@dataclass
class Note:
    """A comment line placed among the keys of a mapping (or before a sequence item)."""

    text: str


@dataclass
class Trailing:
    """A scalar followed by an end-of-line comment."""

    value: Any
    comment: str


@dataclass
class Literal:
    """A multi-line string written as a block scalar (``|`` or ``>``)."""

    text: str
    style: str = "|"


@dataclass
class Inline:
    """A short list or map written in flow style."""

    value: Any


@dataclass
class Styled:
    """A string with a forced quote style: ``'`` or ``"``."""

    text: str
    quote: str


@dataclass
class Anchored:
    name: str
    value: Any


@dataclass
class Ref:
    """An alias (``*name``); ``merge=True`` writes a ``<<: *name`` merge key instead of a value."""

    name: str


_PLAIN_UNSAFE = re.compile(
    r"^(?:[-+]?(?:\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+)|0x[\da-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|"
    r"\.(?:nan|NaN|NAN)|(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)|"
    r"(?:null|Null|NULL|~)|\d{4}-\d\d?-\d\d?(?:[Tt ].*)?|\d+:\d+(?::\d+)*)$"
)
_FIRST_UNSAFE = set("-?:,[]{}#&*!|>'\"%@`")


def plain_ok(s: str) -> bool:
    """Whether a string survives as a plain scalar and reads back as the same string."""
    if not s or s != s.strip() or s[0] in _FIRST_UNSAFE or _PLAIN_UNSAFE.match(s):
        return False
    return not (": " in s or " #" in s or s.endswith(":") or any(c in s for c in "\n\t\r"))


def double_quoted(s: str) -> str:
    escaped = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def single_quoted(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class Writer:
    """Writes one document. Style choices are fixed per file, as a tool or a person would."""

    def __init__(self, seq_indented: bool, quote_values: bool, prefer_double: bool) -> None:
        self.seq_indented = seq_indented  # "key:\n  - a" rather than kubectl's "key:\n- a"
        self.quote_values = quote_values  # charts that wrap every value in quotes
        self.prefer_double = prefer_double
        self.out: list[str] = []

    def scalar(self, v: Any, is_key: bool = False) -> str:
        if isinstance(v, Styled):
            return single_quoted(v.text) if v.quote == "'" else double_quoted(v.text)
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        s = str(v)
        if (not is_key and self.quote_values) or not plain_ok(s):
            if "\n" in s or (self.prefer_double and "'" not in s) or ("'" in s and '"' not in s):
                return double_quoted(s)
            return single_quoted(s)
        return s

    def short(self, v: Any) -> str | None:
        """The text of a value that fits after ``key:`` on one line, else None."""
        if isinstance(v, Trailing):
            head = self.short(v.value)
            return None if head is None else f"{head}  # {v.comment}"
        if isinstance(v, Ref):
            return f"*{v.name}"
        if isinstance(v, Inline):
            if isinstance(v.value, dict):
                return "{" + ", ".join(f"{self.scalar(k, True)}: {self.scalar(x)}" for k, x in v.value.items()) + "}"
            return "[" + ", ".join(self.scalar(x) for x in v.value) + "]"
        if isinstance(v, dict) and not v:
            return "{}"
        if isinstance(v, list) and not v:
            return "[]"
        if isinstance(v, (dict, list, Literal, Anchored, Note)):
            return None
        return self.scalar(v)

    def literal(self, b: Literal, indent: int, head: str) -> None:
        chomp = "" if b.text.endswith("\n") else "-"
        self.out.append(f"{head}{b.style}{chomp}")
        pad = " " * indent
        self.out.extend(pad + line if line else "" for line in b.text.rstrip("\n").split("\n"))

    def mapping(self, m: dict[str, Any], indent: int, first_head: str | None = None) -> None:
        pad = " " * indent
        first = True
        for k, v in m.items():
            if isinstance(v, Note):
                self.out.append(f"{pad}# {v.text}")
                continue
            head = first_head if first and first_head is not None else pad
            first = False
            if k == "<<" and isinstance(v, Ref):
                self.out.append(f"{head}<<: *{v.name}")
                continue
            key = self.scalar(k, is_key=True)
            anchor = ""
            if isinstance(v, Anchored):
                anchor, v = f" &{v.name}", v.value
            text = self.short(v)
            if text is not None:
                self.out.append(f"{head}{key}:{anchor} {text}")
            elif isinstance(v, Literal):
                self.literal(v, indent + 2, f"{head}{key}:{anchor} ")
            elif isinstance(v, dict):
                self.out.append(f"{head}{key}:{anchor}")
                self.mapping(v, indent + 2)
            else:
                self.out.append(f"{head}{key}:{anchor}")
                self.sequence(v, indent + 2 if self.seq_indented else indent)

    def sequence(self, items: list[Any], indent: int) -> None:
        pad = " " * indent
        for item in items:
            if isinstance(item, Note):
                self.out.append(f"{pad}# {item.text}")
                continue
            text = self.short(item)
            if text is not None:
                self.out.append(f"{pad}- {text}")
            elif isinstance(item, dict):
                while item and isinstance(next(iter(item.values())), Note):  # comments go above the dash
                    k0 = next(iter(item))
                    self.out.append(f"{pad}# {item[k0].text}")
                    item = {k: v for k, v in item.items() if k != k0}
                self.mapping(item, indent + 2, first_head=f"{pad}- ")
            elif isinstance(item, Literal):
                self.literal(item, indent + 2, f"{pad}- ")
            else:
                self.out.append(f"{pad}-")
                self.sequence(item, indent + 2)

    def document(self, m: dict[str, Any]) -> str:
        self.out = []
        self.mapping(m, 0)
        return "\n".join(self.out) + "\n"


# --------------------------------------------------------------------------------------------
# vocabulary

GROUPS = ["vision", "speech", "ranking", "forecasting", "genai", "platform", "billing", "catalog", "identity",
          "observability", "ads", "fraud", "maps", "support"]
STEMS = ["acorn", "basalt", "comet", "dune", "elm", "flint", "glacier", "heron", "ibis", "jade", "kelp",
         "lumen", "maple", "nimbus", "opal", "prism", "quill", "reef", "slate", "tundra", "umber", "vortex",
         "willow", "yarrow", "zinc", "aster", "birch", "cedar"]
PARTS = ["serve", "train", "embed", "rank", "ingest", "sync", "proxy", "notebook", "eval", "batch", "api",
         "worker", "router", "indexer", "scorer", "cache", "reporter", "bridge"]
IMAGES = ["nvcr.io/nvidia/pytorch:24.08-py3", "nvcr.io/nvidia/tritonserver:24.08-py3",
          "nvcr.io/nvidia/cuda:12.6.0-base-ubuntu22.04", "docker.io/library/python:3.12-slim",
          "ghcr.io/example/{app}:{ver}", "registry.internal.example/{grp}/{app}:{ver}", "nginx:1.27",
          "docker.io/vllm/vllm-openai:v0.6.1", "quay.io/prometheus/node-exporter:v1.8.2", "alpine:3.20"]
GPU_MODELS = ["NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200",
              "NVIDIA L4", "NVIDIA L40S", "NVIDIA A10G", "Tesla T4"]
NODE_LABEL_MODELS = ["NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-L4", "NVIDIA-A10G", "Tesla-T4"]
GPU_MEMORY = ["12Gi", "16Gi", "24Gi", "40Gi", "48Gi", "80Gi", "141Gi"]
ARCHITECTURES = ["Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell"]
CLASSES = ["gpu.nvidia.com", "gpu.nvidia.com", "gpu.nvidia.com", "mig.nvidia.com", "h100.gpu.example.com"]


# --------------------------------------------------------------------------------------------
# objects


@dataclass
class App:
    """What one application bundle shares between its objects."""

    rng: random.Random
    group: str
    namespace: str | None
    name: str = ""
    device_class: str = "gpu.nvidia.com"
    flow_lists: bool = False
    templates: list[str] = field(default_factory=list)

    def rename(self) -> None:
        r = self.rng
        suffix = f"-{r.randint(1, 40)}" if r.random() < 0.4 else ""
        self.name = f"{r.choice(STEMS)}-{r.choice(PARTS)}{suffix}"

    @property
    def template(self) -> str:
        return f"{self.name}-gpu"

    @property
    def shared_claim(self) -> str:
        return f"{self.name}-shared-gpu"


def labels(app: App) -> dict[str, Any]:
    r = app.rng
    out: dict[str, Any] = {"app.kubernetes.io/name": app.name, "app.kubernetes.io/component": r.choice(PARTS)}
    if r.random() < 0.5:
        out["app.kubernetes.io/managed-by"] = r.choice(["Helm", "kustomize", "argocd", "flux"])
    if r.random() < 0.3:
        out["example.com/team"] = app.group
    return out


def metadata(app: App, name: str | None = None, namespaced: bool = True) -> dict[str, Any]:
    r = app.rng
    m: dict[str, Any] = {"name": name or app.name}
    if namespaced and app.namespace:
        m["namespace"] = app.namespace
    m["labels"] = labels(app)
    if r.random() < 0.3:
        ann: dict[str, Any] = {"example.com/owner": f"{app.group}-oncall@example.com",
                               "example.com/docs": f"https://docs.example.com/{app.group}/{app.name}"}
        if r.random() < 0.35:
            ann["checksum/config"] = f"{r.getrandbits(256):064x}"
        m["annotations"] = ann
    return m


def selector_exprs(r: random.Random) -> list[str]:
    model = r.choice(GPU_MODELS)
    choices = [
        'device.driver == "gpu.nvidia.com"',
        f'device.attributes["gpu.nvidia.com"].productName == "{model}"',
        f'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("{r.choice(GPU_MEMORY)}"))',
        f'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{r.choice(GPU_MEMORY)}")) >= 0',
        f'device.attributes["gpu.nvidia.com"].architecture == "{r.choice(ARCHITECTURES)}"',
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("560.35.3"))',
        'device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("8.0.0")) >= 0',
        'device.attributes["gpu.nvidia.com"].type == "gpu"',
        '"gpu.nvidia.com" in device.attributes && device.attributes["gpu.nvidia.com"].type == "mig"',
        f'device.attributes["gpu.nvidia.com"].index <= {r.randint(1, 7)}',
        f'device.attributes["gpu.nvidia.com"].productName.startsWith("{model.split()[0]}")',
        'device.attributes["resource.kubernetes.io"].pcieRoot != ""',
    ]
    return r.sample(choices, r.choice((1, 1, 2, 2, 3)))


def selector_text(r: random.Random, expr: str, damage: bool) -> Any:
    if damage:  # the mistakes people make: typos, half-edited comparisons, lost quotes
        how = r.randrange(4)
        if how == 0:
            expr = expr.replace("device.", "devcie.", 1)
        elif how == 1:
            expr = expr[: expr.rfind('"')]
        elif how == 2:
            expr += " &&"
        else:
            expr = expr.replace("==", "=", 1) if "==" in expr else expr + " =="
    pick = r.random()
    if pick < 0.3:
        return expr
    if pick < 0.5:
        return Styled(expr, "'")
    if pick < 0.7:
        return Styled(expr, '"')
    return Literal(expr, "|" if pick < 0.92 else ">")


def selectors(r: random.Random, exprs: list[str], damage: bool = False) -> list[Any]:
    return [{"cel": {"expression": selector_text(r, e, damage and i == 0)}} for i, e in enumerate(exprs)]


def device_spec(app: App, broken: bool) -> dict[str, Any]:
    r = app.rng
    requests: list[dict[str, Any]] = []
    for i in range(1 if r.random() < 0.75 else 2):
        req: dict[str, Any] = {"name": "gpu" if i == 0 else f"gpu-{i}"}
        damage = r.random() < 0.012
        if r.random() < 0.68:
            ex: dict[str, Any] = {"deviceClassName": app.device_class}
            if r.random() < 0.75:
                ex["selectors"] = selectors(r, selector_exprs(r), damage)
            mode = r.random()
            if mode < 0.45:
                ex["allocationMode"] = "ExactCount"
                ex["count"] = r.choice((1, 1, 2, 4, 8))
            elif mode < 0.52:
                ex["allocationMode"] = "All"
            if r.random() < 0.1:
                ex["capacity"] = {"requests": {"memory": r.choice(GPU_MEMORY)}}
            if r.random() < 0.08:
                ex["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
            req["exactly"] = ex
        else:
            if r.random() < 0.3:
                req["why"] = Note("largest GPU first, smaller ones if the big ones are taken")
            subs = []
            for model in r.sample(GPU_MODELS, r.randint(2, 3)):
                sub: dict[str, Any] = {"name": re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")[:28].strip("-"),
                                       "deviceClassName": app.device_class,
                                       "selectors": selectors(
                                           r, [f'device.attributes["gpu.nvidia.com"].productName == "{model}"'],
                                           damage)}
                if r.random() < 0.35:
                    sub["allocationMode"] = "ExactCount"
                    sub["count"] = r.choice((1, 2))
                subs.append(sub)
            req["firstAvailable"] = subs
        requests.append(req)
    if broken:  # schema mistakes: a wrong field name, a string count, a v1beta1 leftover, no name
        first = requests[0]
        how = r.randrange(4)
        if how == 0 and "exactly" in first:
            first["exact"] = first.pop("exactly")
        elif how == 1:
            target = first["exactly"] if "exactly" in first else first["firstAvailable"][0]
            target["count"] = Styled("2", '"')
        elif how == 2:
            first["deviceClassName"] = app.device_class
        else:
            del first["name"]
    devices: dict[str, Any] = {"requests": requests}
    named = [q["name"] for q in requests if "name" in q]
    if len(named) == 2 and r.random() < 0.7:
        devices["constraints"] = [{"requests": Inline(named), "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
    if r.random() < 0.25:
        strategy = r.choice(["TimeSlicing", "MPS"])
        sharing: dict[str, Any] = {"strategy": strategy}
        if strategy == "TimeSlicing":
            sharing["timeSlicingConfig"] = {"interval": r.choice(["Default", "Short", "Medium", "Long"])}
        else:
            sharing["mpsConfig"] = {"defaultActiveThreadPercentage": r.choice((25, 50, 100))}
        devices["config"] = [{"requests": Inline(named[:1] or ["gpu"]), "opaque": {
            "driver": "gpu.nvidia.com",
            "parameters": {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": sharing}}}]
    return devices


def claim_template(app: App, broken: bool) -> dict[str, Any]:
    r = app.rng
    body: dict[str, Any] = {"spec": {"devices": device_spec(app, broken)}}
    if r.random() < 0.15:
        body = {"metadata": {"labels": {"app.kubernetes.io/name": app.name}}, **body}
    app.templates.append(app.template)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": metadata(app, app.template), "spec": body}


def claim(app: App, broken: bool) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": metadata(app, app.shared_claim), "spec": {"devices": device_spec(app, broken)}}


def device_class(app: App, broken: bool) -> dict[str, Any]:
    r = app.rng
    name = app.device_class if r.random() < 0.45 else f"{r.choice(['a100', 'h100', 'l4', 'mig-2g', 'shared'])}." \
                                                      f"{r.choice(STEMS)}.gpu.example.com"
    sels = [{"cel": {"expression": Styled('device.driver == "gpu.nvidia.com"', r.choice("'\""))}}]
    if r.random() < 0.7:
        sels += selectors(r, selector_exprs(r)[:1])
    spec: dict[str, Any] = {"selectors": sels}
    if r.random() < 0.2:
        spec["extendedResourceName"] = "nvidia.com/gpu"
    if r.random() < 0.3:
        spec["config"] = [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
            "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}}}}]
    if broken:
        spec["selector"] = spec.pop("selectors")
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": metadata(app, name, namespaced=False), "spec": spec}


ENV_NAMES = ["LOG_LEVEL", "MODEL_ID", "BATCH", "NCCL_DEBUG", "OMP_NUM_THREADS", "HTTP_PORT", "HF_HOME",
             "WORKERS", "REGION", "TRACE_SAMPLE_RATE", "FEATURE_X"]


def env(r: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(r.randint(1, 8)):
        name = r.choice(ENV_NAMES) + (f"_{i}" if i > 4 else "")
        roll = r.random()
        if roll < 0.6:
            out.append({"name": name, "value": r.choice(["info", "warn", "16", "64", "true", "/models/cache",
                                                         "meta-llama/Llama-3.1-8B", "eu-west-1", "8080", "0.1"])})
        elif roll < 0.8:
            out.append({"name": name, "valueFrom": {"secretKeyRef": {"name": f"{name.lower()}-secret", "key": "v"}}})
        else:
            out.append({"name": name, "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}})
    return out


def container(app: App, gpu: str, claims: list[str], first: bool) -> dict[str, Any]:
    r = app.rng
    image = r.choice(IMAGES).format(app=app.name, grp=app.group,
                                    ver=f"{r.randint(0, 4)}.{r.randint(0, 30)}.{r.randint(0, 9)}")
    c: dict[str, Any] = {"name": app.name.split("-")[1] if first else r.choice(["sidecar", "metrics", "proxy"]),
                         "image": image}
    if r.random() < 0.5:
        c["imagePullPolicy"] = r.choice(["IfNotPresent", "Always"])
    if r.random() < 0.6:
        args = [f"--port={r.choice((8000, 8080, 9000))}", f"--threads={r.randint(1, 32)}", "--json-logs"]
        args = args[: r.randint(1, 3)]
        cmd = ["python", "-m", app.name.replace("-", "_")]
        c["command"], c["args"] = (Inline(cmd), Inline(args)) if app.flow_lists and r.random() < 0.5 else (cmd, args)
    if r.random() < 0.7:
        c["ports"] = [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
        if r.random() < 0.3:
            c["ports"].append({"name": "metrics", "containerPort": 9102})
    if r.random() < 0.8:
        c["env"] = env(r)
    res: dict[str, Any] = {
        "requests": {"cpu": r.choice(["50m", "200m", "500m", "1", "2", "8"]),
                     "memory": r.choice(["64Mi", "256Mi", "1Gi", "4Gi", "16Gi", "96Gi"])},
        "limits": {"memory": r.choice(["128Mi", "512Mi", "2Gi", "8Gi", "32Gi", "192Gi"])},
    }
    if first and gpu == "plugin":
        n = r.choice((1, 1, 1, 2, 4, 8))
        res["limits"]["nvidia.com/gpu"] = Trailing(n, "TODO: move to a ResourceClaimTemplate") \
            if r.random() < 0.2 else n
        if r.random() < 0.35:
            res["requests"]["nvidia.com/gpu"] = n
    elif first and gpu == "dra":
        res["claims"] = [{"name": n} for n in claims]
        if r.random() < 0.15:
            res["claims"][0]["request"] = "gpu"
    c["resources"] = res
    if r.random() < 0.5:
        c["livenessProbe" if r.random() < 0.4 else "readinessProbe"] = {
            "httpGet": {"path": "/healthz", "port": "http"}, "initialDelaySeconds": r.choice((3, 5, 10)),
            "periodSeconds": 10}
    if r.random() < 0.3:
        c["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
        if gpu != "none":
            c["volumeMounts"].append({"name": "shm", "mountPath": "/dev/shm"})
    if r.random() < 0.3:
        c["securityContext"] = {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": Inline(["ALL"])}}
    return c


def pod_spec(app: App, gpu: str, restart: str | None) -> dict[str, Any]:
    r = app.rng
    spec: dict[str, Any] = {}
    claims: list[str] = []
    if gpu == "dra":
        claims = ["gpu"] if r.random() < 0.8 else ["gpu", "gpu-extra"]
        entries = []
        for n in claims:
            if r.random() < 0.8:
                entries.append({"name": n, "resourceClaimTemplateName": app.template})
            else:
                entries.append({"name": n, "resourceClaimName": app.shared_claim})
        spec["resourceClaims"] = entries
    if r.random() < 0.4:
        spec["serviceAccountName"] = app.name
    if restart:
        spec["restartPolicy"] = restart
    spec["containers"] = [container(app, gpu, claims, i == 0) for i in range(1 if r.random() < 0.8 else 2)]
    if r.random() < 0.2:
        spec["initContainers"] = [{"name": "wait-for-db", "image": "busybox:1.36",
                                   "command": ["sh", "-c", Literal("until nc -z db 5432; do\n  sleep 1\ndone\n")]}]
    if gpu == "plugin":
        if r.random() < 0.7:
            spec["nodeSelector"] = {"nvidia.com/gpu.product": r.choice(NODE_LABEL_MODELS)}
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        if r.random() < 0.3:
            spec["runtimeClassName"] = "nvidia"
    elif gpu == "dra" and r.random() < 0.5:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    elif r.random() < 0.2:
        spec["nodeSelector"] = {"kubernetes.io/arch": "amd64"}
    if gpu != "none" or r.random() < 0.3:
        vols: list[dict[str, Any]] = [{"name": "scratch", "emptyDir": {}}]
        if gpu != "none":
            vols.append({"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}})
        spec["volumes"] = vols
    if r.random() < 0.15:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname", "labelSelector": {
                "matchLabels": {"app.kubernetes.io/name": app.name}}}}]}}
    return spec


WORKLOAD_API = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "Job": "batch/v1",
                "CronJob": "batch/v1", "Pod": "v1"}


def workload(app: App, kind: str) -> dict[str, Any]:
    r = app.rng
    roll = r.random()
    gpu = "plugin" if roll < 0.28 else "dra" if roll < 0.48 else "none"
    doc: dict[str, Any] = {}
    if r.random() < 0.1:
        doc["c"] = Note(f"{kind} {app.name}, owned by {app.group}")
    doc["apiVersion"] = WORKLOAD_API[kind]
    doc["kind"] = kind
    doc["metadata"] = metadata(app, app.name if kind != "Pod" else f"{app.name}-debug")
    restart = "Never" if kind == "Pod" else "OnFailure" if kind in ("Job", "CronJob") else None
    if kind == "Pod":
        doc["spec"] = pod_spec(app, gpu, restart)
        return doc
    tmpl_meta: dict[str, Any] = {"labels": {"app.kubernetes.io/name": app.name}}
    if r.random() < 0.3:
        tmpl_meta["annotations"] = {"prometheus.io/scrape": "true", "prometheus.io/port": "9102"}
    template = {"metadata": tmpl_meta, "spec": pod_spec(app, gpu, restart)}
    if kind in ("Deployment", "StatefulSet", "DaemonSet"):
        spec: dict[str, Any] = {}
        if kind != "DaemonSet":
            spec["replicas"] = r.choice((1, 2, 3, 6)) if r.random() < 0.9 else Trailing(r.randint(1, 5), "HPA owns")
        if kind == "StatefulSet":
            spec["serviceName"] = app.name
        spec["selector"] = {"matchLabels": {"app.kubernetes.io/name": app.name}}
        if kind == "Deployment" and r.random() < 0.3:
            spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}
        spec["template"] = template
        if kind == "StatefulSet" and r.random() < 0.6:
            spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": r.choice(["20Gi", "1Ti"])}}}}]
        doc["spec"] = spec
    elif kind == "Job":
        doc["spec"] = {"backoffLimit": r.randint(0, 6), "completions": r.randint(1, 4), "template": template}
    else:
        doc["spec"] = {"schedule": r.choice(["15 * * * *", "*/10 * * * *", "0 3 * * *", "@hourly"]),
                       "concurrencyPolicy": "Forbid", "jobTemplate": {"spec": {"template": template}}}
    return doc


def big_payload(r: random.Random, kind: str, size: int) -> tuple[str, str]:
    lines: list[str] = []
    n = 0
    if kind == "dashboard":
        lines += ["{", f'  "title": "Accelerators {r.randint(1, 99)}",', '  "panels": [']
        i = 0
        while n < size:
            chunk = [
                "    {",
                f'      "id": {i}, "type": "timeseries", "title": "GPU util {r.choice(STEMS)} {i}",',
                f'      "targets": [{{"expr": "avg(DCGM_FI_DEV_GPU_UTIL{{namespace=\\"{r.choice(GROUPS)}\\"}})"}}],',
                f'      "gridPos": {{"h": 8, "w": 12, "x": {12 * (i % 2)}, "y": {8 * (i // 2)}}}',
                "    },",
            ]
            lines += chunk
            n += sum(len(x) + 1 for x in chunk)
            i += 1
        lines += ["    {}", "  ]", "}"]
        return "dashboard.json", "\n".join(lines) + "\n"
    if kind == "proxy":
        lines += ["worker_processes auto;", "http {"]
        i = 0
        while n < size:
            chunk = [f"  upstream u{i} {{ server {r.choice(STEMS)}-{i}.svc:8080 max_fails=2; }}",
                     f"  server {{ listen {8000 + i % 900}; "
                     f"location /{r.choice(PARTS)}/ {{ proxy_pass http://u{i}; }} }}"]
            lines += chunk
            n += sum(len(x) + 1 for x in chunk)
            i += 1
        lines.append("}")
        return "nginx.conf", "\n".join(lines) + "\n"
    lines.append('platform: "ensemble"')
    i = 0
    while n < size:
        chunk = ["step {", f'  model_name: "{r.choice(STEMS)}_{i}"', "  model_version: -1",
                 f'  input_map {{ key: "in_{i}" value: "raw_{i}" }}', "}"]
        lines += chunk
        n += sum(len(x) + 1 for x in chunk)
        i += 1
    return "config.pbtxt", "\n".join(lines) + "\n"


def config_map(app: App, big: bool) -> dict[str, Any]:
    r = app.rng
    data: dict[str, Any] = {}
    name = f"{app.name}-config"
    if big:
        kind = r.choice(["dashboard", "proxy", "pipeline"])
        fname, text = big_payload(r, kind, r.choice((30_000, 60_000, 120_000, 200_000, 300_000)))
        data[fname] = Literal(text)
        name = f"{app.name}-{kind}"
    else:
        for i in range(r.randint(1, 6)):
            if r.random() < 0.5:
                data[f"{r.choice(ENV_NAMES)}_{i}"] = r.choice(["debug", "4", "45s", "false", "eu-west-1", "v2"])
            else:
                data[f"{r.choice(['server', 'model', 'logging'])}-{i}.yaml"] = Literal(
                    f"listen: 0.0.0.0:{r.choice((8080, 9000))}\nthreads: {r.randint(1, 64)}\n"
                    f"model:\n  id: {r.choice(STEMS)}\n  dtype: bfloat16\nlog:\n  format: json\n")
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(app, name), "data": data}


def small_object(app: App, kind: str) -> dict[str, Any]:
    r = app.rng
    m = metadata(app)
    n = app.name
    if kind == "Service":
        spec: dict[str, Any] = {"selector": {"app.kubernetes.io/name": n},
                                "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}
        if r.random() < 0.2:
            spec["type"] = r.choice(["ClusterIP", "NodePort", "LoadBalancer"])
        return {"apiVersion": "v1", "kind": "Service", "metadata": m, "spec": spec}
    if kind == "ServiceAccount":
        return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": m}
    if kind == "Secret":
        return {"apiVersion": "v1", "kind": "Secret", "metadata": m, "type": "Opaque",
                "stringData": {"token": f"{r.getrandbits(128):032x}", "user": n}}
    if kind == "Ingress":
        return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": m, "spec": {
            "ingressClassName": "nginx", "rules": [{"host": f"{n}.{app.group}.example.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": n, "port": {"name": "http"}}}}]}}]}}
    if kind == "HorizontalPodAutoscaler":
        return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": m, "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": n},
            "minReplicas": 1, "maxReplicas": r.choice((3, 6, 12)),
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": r.choice((60, 70, 80))}}}]}}
    if kind == "PodDisruptionBudget":
        return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": m,
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": n}}}}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": m, "spec": {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": n}}, "policyTypes": Inline(["Ingress"]),
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": app.namespace or "default"}}}]}]}}


def device_plugin_daemonset(app: App) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"name": "nvidia-device-plugin-ds"}}, "template": {
                "metadata": {"labels": {"name": "nvidia-device-plugin-ds"}},
                "spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                         "priorityClassName": "system-node-critical",
                         "containers": [{"name": "nvidia-device-plugin-ctr",
                                         "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                                         "env": [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}],
                                         "securityContext": {"allowPrivilegeEscalation": False,
                                                             "capabilities": {"drop": ["ALL"]}},
                                         "volumeMounts": [{"name": "device-plugin",
                                                           "mountPath": "/var/lib/kubelet/device-plugins"}]}],
                         "volumes": [{"name": "device-plugin",
                                      "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}]}}}}


def helm_values(r: random.Random) -> str:
    """Values of the GPU Operator chart, as teams keep them next to their manifests."""
    return (
        "# values for the gpu-operator chart\n"
        "operator:\n  defaultRuntime: containerd\n"
        f"driver:\n  enabled: {str(r.random() < 0.5).lower()}\n  version: \"560.35.03\"\n"
        "toolkit:\n  enabled: true\n"
        f"devicePlugin:\n  enabled: {str(r.random() < 0.7).lower()}\n  config:\n    name: time-slicing\n"
        "dcgmExporter:\n  enabled: true\n  serviceMonitor:\n    enabled: true\n"
        "gfd:\n  enabled: true\n"
        "migManager:\n  enabled: false\n"
        "nodeStatusExporter:\n  enabled: false\n"
    )


# --------------------------------------------------------------------------------------------
# files

BUNDLE_WORKLOADS = [("Deployment", 17), ("StatefulSet", 4), ("Job", 5), ("CronJob", 3), ("DaemonSet", 2),
                    ("Pod", 3)]
SINGLE_KINDS = [("Deployment", 17), ("Service", 13), ("ConfigMap", 13), ("StatefulSet", 4), ("Job", 5),
                ("CronJob", 3), ("DaemonSet", 2), ("Pod", 3), ("ResourceClaimTemplate", 9), ("ResourceClaim", 4),
                ("DeviceClass", 3), ("ServiceAccount", 8), ("Secret", 3), ("Ingress", 4),
                ("HorizontalPodAutoscaler", 4), ("PodDisruptionBudget", 3), ("NetworkPolicy", 2)]


def pick(r: random.Random, table: list[tuple[str, int]]) -> str:
    return r.choices([k for k, _ in table], [w for _, w in table])[0]


def kinds_in_file(r: random.Random, n: int) -> list[str]:
    if n == 1:
        return [pick(r, SINGLE_KINDS)]
    kinds: list[str] = []
    while len(kinds) < n:
        w = pick(r, BUNDLE_WORKLOADS)
        bundle = [k for k, p in (("ServiceAccount", 0.4), ("ConfigMap", 0.5), ("ResourceClaimTemplate", 0.35))
                  if r.random() < p]
        bundle.append(w)
        if w in ("Deployment", "StatefulSet") and r.random() < 0.8:
            bundle.append("Service")
        bundle += [k for k in ("Ingress", "HorizontalPodAutoscaler", "PodDisruptionBudget", "NetworkPolicy",
                               "Secret", "ResourceClaim", "DeviceClass") if r.random() < 0.12]
        kinds += bundle
    return kinds[:n]


def split_documents(r: random.Random, files: int, docs: int) -> list[int]:
    """Documents per file: many small files, some bundles, a few large all-in-one files."""
    sizes = []
    for _ in range(files):
        roll = r.random()
        sizes.append(1 if roll < 0.35 else r.randint(2, 4) if roll < 0.6 else r.randint(5, 12) if roll < 0.8
                     else r.randint(13, 30) if roll < 0.93 else r.randint(31, 90))
    scaled = [max(1, round(s * docs / sum(sizes))) for s in sizes]
    order = sorted(range(files), key=lambda i: (-scaled[i], i))
    i = 0
    while sum(scaled) != docs:
        j = order[i % files]
        if sum(scaled) < docs:
            scaled[j] += 1
        elif scaled[j] > 1:
            scaled[j] -= 1
        i += 1
    return scaled


def build_document(app: App, kind: str) -> dict[str, Any]:
    r = app.rng
    broken = r.random() < 0.01
    if kind in WORKLOAD_API:
        return workload(app, kind)
    if kind == "ConfigMap":
        return config_map(app, big=r.random() < 0.02)
    if kind == "ResourceClaimTemplate":
        return claim_template(app, broken)
    if kind == "ResourceClaim":
        return claim(app, broken)
    if kind == "DeviceClass":
        return device_class(app, broken)
    return small_object(app, kind)


HELM_TEMPLATE_NAMES = {"HorizontalPodAutoscaler": "hpa", "PodDisruptionBudget": "pdb",
                       "ServiceAccount": "serviceaccount",
                       "ResourceClaimTemplate": "claimtemplate", "NetworkPolicy": "networkpolicy"}


def render(index: int, ndocs: int, seed: int) -> tuple[str, bytes, dict[str, Any]]:
    r = random.Random(f"dralint-bench/{seed}/{index}")
    group = r.choice(GROUPS)
    app = App(r, group, group if r.random() < 0.85 else None, device_class=r.choice(CLASSES),
              flow_lists=r.random() < 0.5)
    app.rename()
    style = r.random()
    helm = ndocs >= 5 and style < 0.25
    kustomize = not helm and ndocs >= 30 and style < 0.6
    w = Writer(seq_indented=r.random() < 0.55, quote_values=helm and r.random() < 0.3,
               prefer_double=r.random() < 0.4)
    chart = f"{app.name.split('-')[0]}-{r.choice(['chart', 'serving', 'training', 'platform'])}"
    kinds = kinds_in_file(r, ndocs)
    anchors = not helm and r.random() < 0.04
    parts: list[str] = []
    if not helm and r.random() < 0.4:
        parts.append(f"# {app.group}: {app.name}\n# Reviewed by the {app.group} owners; see CODEOWNERS.\n")
    for i, kind in enumerate(kinds):
        if kind in WORKLOAD_API and i > 0 and r.random() < 0.7:
            app.rename()
        doc = build_document(app, kind)
        if anchors and kind in WORKLOAD_API and kind != "Pod":
            spec = doc["spec"]
            tmpl = spec["template"] if "template" in spec else spec["jobTemplate"]["spec"]["template"]
            doc["metadata"]["labels"] = Anchored("common", doc["metadata"]["labels"])
            if r.random() < 0.5:
                tmpl["metadata"]["labels"] = Ref("common")
            else:
                tmpl["metadata"]["labels"] = {"<<": Ref("common"), "tier": "gpu"}
        body = w.document(doc)
        if helm:
            sep = f"---\n# Source: {chart}/templates/{HELM_TEMPLATE_NAMES.get(kind, kind.lower())}.yaml\n"
        elif i or r.random() < 0.3:
            roll = r.random()
            sep = f"---\n# {kind} {app.name}\n" if roll < 0.08 else "--- # next\n" if roll < 0.11 else "---\n"
        else:
            sep = ""
        parts.append(sep + body)
    if helm and r.random() < 0.3:  # a template that rendered to nothing
        parts.append(f"---\n# Source: {chart}/templates/tests/test-connection.yaml\n")
    if helm:
        path = f"rendered/{app.group}/{chart}-{index:04d}.yaml"
    elif kustomize:
        path = f"clusters/{r.choice(['prod', 'staging', 'dev'])}/{app.group}/all-{index:04d}.yaml"
    else:
        folder = "dra" if kinds[0] in ("ResourceClaimTemplate", "ResourceClaim", "DeviceClass") else "apps"
        ext = ".yml" if r.random() < 0.1 else ".yaml"
        path = f"{folder}/{app.group}/{app.name}/{kinds[0].lower()}-{index:04d}{ext}"
    data = "".join(parts).encode()
    crlf, bom = r.random() < 0.012, r.random() < 0.005
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    if bom:
        data = b"\xef\xbb\xbf" + data
    info = {"docs": ndocs, "kinds": kinds, "helm": helm, "kustomize": kustomize, "crlf": crlf, "bom": bom,
            "anchors": anchors}
    return path, data, info


def extras(seed: int) -> list[tuple[str, bytes]]:
    """A few files every real GPU platform repo has: device-plugin installs and chart values."""
    r = random.Random(f"dralint-bench/{seed}/extras")
    app = App(r, "platform", "kube-system")
    app.rename()
    w = Writer(seq_indented=False, quote_values=False, prefer_double=False)
    out = [("platform/device-plugin/daemonset.yaml", w.document(device_plugin_daemonset(app)).encode())]
    out += [(f"platform/gpu-operator/values-{env_name}.yaml", helm_values(r).encode())
            for env_name in ("prod", "staging")]
    return out


def generate(out: Path, files: int = 2000, docs: int = 20000, seed: int = 7) -> dict[str, Any]:
    """Write the corpus under ``out`` (replacing it) and return a summary."""
    if out.exists():
        shutil.rmtree(out)
    r = random.Random(seed)
    counts = split_documents(r, files - 3, docs - 3)  # the extras add 3 files of one document each
    totals: dict[str, Any] = {"helm": 0, "kustomize": 0, "crlf": 0, "bom": 0, "anchors": 0}
    kinds: dict[str, int] = {}
    nbytes = largest = 0
    written = [render(i, n, seed) for i, n in enumerate(counts)]
    for _, _, info in written:
        for k in totals:
            totals[k] += int(bool(info[k]))
        for k in info["kinds"]:
            kinds[k] = kinds.get(k, 0) + 1
    for path, data in [*((p, d) for p, d, _ in written), *extras(seed)]:
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        nbytes += len(data)
        largest = max(largest, len(data))
    return {"files": files, "documents": docs, "bytes": nbytes, "MB": round(nbytes / 1e6, 2), "largest": largest,
            "kinds": dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
            **{f"files_{k}": v for k, v in totals.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--summary", type=Path, help="also write the summary as JSON here")
    a = ap.parse_args(argv)
    if a.files < 4 or a.docs < a.files:
        ap.error("need at least 4 files and one document per file")
    summary = generate(a.out, a.files, a.docs, a.seed)
    text = json.dumps(summary, indent=2)
    if a.summary:
        a.summary.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
