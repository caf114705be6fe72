"""`dralint migrate`: the corpus of real device-plugin manifests and focused cases."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dralint.cli.app import main
from dralint.engine.config import build_config
from dralint.engine.runner import lint_files
from dralint.fix.splice import doc_regions, file_comments
from dralint.inputs.load import load_bytes
from dralint.migrate.records import MigrateOptions
from dralint.migrate.run import migrate_files

from .conftest import CORPUS, REPO, requires_shared

DEVICE_PLUGIN = CORPUS / "device-plugin"
LEGACY = ("DRA201", "DRA202", "DRA203")


def migrate_text(text: str, path: str = "w.yaml", context: dict[str, str] | None = None,
                 config: dict[str, Any] | None = None, **opts: Any) -> tuple[str, Any]:
    cfg = build_config(config or {}, None, REPO)
    ctx = [load_bytes(p, t.encode()) for p, t in (context or {}).items()]
    rep = migrate_files([load_bytes(path, text.encode())], ctx, cfg, MigrateOptions(**opts))
    assert not rep.failed, [f.failures for f in rep.files]
    return rep.files[0].after.decode(), rep


def lint(files: dict[str, bytes], *codes: str) -> Any:
    cfg = build_config({"select": list(codes) or ["ALL"]}, None, REPO)
    return lint_files([load_bytes(p, b) for p, b in files.items()], [], cfg)


# ----------------------------------------------------------------------------------------------
# the corpus


def _migrate_json(work: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    code = main(["migrate", "--isolated", "--format", "json", "--no-progress", *extra, str(work)])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)  # type: ignore[no-any-return]


@requires_shared
def test_corpus_migration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not DEVICE_PLUGIN.is_dir():
        pytest.skip(f"device-plugin corpus not found at {DEVICE_PLUGIN}")
    work = tmp_path / "device-plugin"
    shutil.copytree(DEVICE_PLUGIN, work)
    files = sorted(p for p in work.rglob("*") if p.suffix in (".yaml", ".yml"))
    before = {p: p.read_bytes() for p in files}
    report = _migrate_json(work, capsys, "--convert-node-selectors")
    migrated = [w for w in report["workloads"] if w["status"] == "migrated"]
    skipped = [w for w in report["workloads"] if w["status"] == "skipped"]
    assert len(migrated) >= 10 and report["failures"] == []
    # every skip says why
    assert skipped and all(w["reason"] for w in skipped)
    reasons = " ".join(w["reason"] for w in skipped)
    assert "custom resource" in reasons and "HAMi" in reasons and "kustomize patch" in reasons
    after = {p: p.read_bytes() for p in files}
    changed = {p for p in files if before[p] != after[p]}
    assert {p.as_posix() for p in changed} == set(report["files_changed"])
    result = lint({p.as_posix(): after[p] for p in files})
    skipped_keys = {(Path(w["path"]).resolve().as_posix(), w["name"]) for w in skipped}
    for f in result.findings:
        if f.rule in LEGACY:  # only where no migration applies
            assert (Path(f.path).resolve().as_posix(), f.object.name if f.object else None) in skipped_keys, \
                f"{f.path}: {f.rule} left after migrating"
    for p in changed:
        old, new = load_bytes(p.name, before[p]), load_bytes(p.name, after[p])
        # the original comments survive (moved comments keep their text)
        assert file_comments(old) - file_comments(new) == Counter(), p
        # every document that was there is still there; documents without legacy usage are byte-identical
        olds, news = doc_regions(old), doc_regions(new)
        new_text = new.text
        for d in old.documents:
            region = old.text[slice(*olds[d.index])]
            if b"nvidia.com/" not in region.encode() or "Source:" in region:
                assert region in new_text, f"{p}: untouched document {d.index} changed"
        assert len(news) > len(olds)  # the new templates
    # the new objects pass the conformance and wiring rules
    errors = [f for f in result.findings if int(f.severity) >= 3 and f.object is not None
              and f.object.kind in ("ResourceClaimTemplate", "ResourceClaim")]
    assert errors == []
    wiring = [f for f in result.findings if f.rule in ("DRA301", "DRA302", "DRA303", "DRA304", "DRA305", "DRA306",
                                                       "DRA309")]
    assert wiring == [], [(f.path, f.message) for f in wiring]
    # a second run has nothing left to do
    again = _migrate_json(work, capsys, "--convert-node-selectors")
    assert again["files_changed"] == [] and not [w for w in again["workloads"] if w["status"] == "migrated"]
    assert {p: p.read_bytes() for p in files} == after


# ----------------------------------------------------------------------------------------------
# focused cases


POD = """apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  containers:
  - name: main
    image: cuda:12
    resources:
      limits:
        nvidia.com/gpu: 2  # two GPUs
        cpu: "4"
      requests:
        nvidia.com/gpu: 2
"""


def test_pod_gets_template_claims_and_loses_the_extended_resource() -> None:
    out, rep = migrate_text(POD)
    assert out == """apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  containers:
  - name: main
    image: cuda:12
    resources:
      limits:
        cpu: "4"
      claims:
      - name: gpu  # two GPUs
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: trainer-gpu
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: trainer-gpu
  namespace: ml
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
"""
    assert [w.status for w in rep.workloads] == ["migrated"]
    assert rep.workloads[0].objects == ["ResourceClaimTemplate trainer-gpu"]


def test_keep_extended_resources_warns_about_double_counting() -> None:
    out, rep = migrate_text(POD, keep_extended_resources=True)
    assert "nvidia.com/gpu: 2  # two GPUs" in out and "resourceClaimTemplateName: trainer-gpu" in out
    assert any("double counting" in n for n in rep.workloads[0].notes)


def test_template_name_pattern_and_device_class_map() -> None:
    out, _ = migrate_text(POD, template_name_pattern="{namespace}-{workload}-{kind}",
                          device_class_map={"gpu.nvidia.com": "a100.example.com"})
    assert "resourceClaimTemplateName: ml-trainer-pod" in out and "deviceClassName: a100.example.com" in out


def test_identical_existing_template_is_reused() -> None:
    existing = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
"""
    out, rep = migrate_text(POD, context={"t.yaml": existing})
    assert "resourceClaimTemplateName: two-gpus" in out and "---" not in out
    assert rep.workloads[0].objects == ["reused ResourceClaimTemplate two-gpus"]


def test_a_different_template_with_the_same_name_gets_a_new_name() -> None:
    other = POD.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1")
    out, _ = migrate_text(POD, context={"t.yaml": "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                                                   "metadata: {name: trainer-gpu, namespace: ml}\nspec: {spec: {}}\n"})
    assert "name: trainer-gpu-2" in out
    assert other  # the same workload with another count would not reuse a foreign spec


MIG_AND_SHARED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: infer
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: a
        image: x
        resources:
          limits:
            nvidia.com/gpu.shared: 1
      - name: b
        image: y
        resources:
          limits:
            nvidia.com/mig-1g.10gb.me: 2
            nvidia.com/gpu: 1
"""


def test_mig_profiles_and_shared_gpus() -> None:
    out, rep = migrate_text(MIG_AND_SHARED)
    assert "expression: device.attributes['gpu.nvidia.com'].profile == '1g.10gb+me'" in out
    assert "deviceClassName: mig.nvidia.com\n          count: 2" in out
    assert "          - name: gpu\n            request: mig-b\n          - name: gpu\n            request: gpu-b" in out
    assert "resourceClaimName: infer-shared-gpu" in out and "kind: GpuConfig" in out
    assert "strategy: TimeSlicing" in out
    assert any("TimeSlicingSettings" in n for n in rep.workloads[0].notes)
    result = lint({"w.yaml": out.encode()})
    assert [f for f in result.findings if f.rule in LEGACY] == []
    # with the driver's default gates the sharing block is the one thing left to enable
    assert [(f.rule, f.obj_path[-1]) for f in result.findings if int(f.severity) >= 3] == [("DRA502", "strategy")]
    gated = build_config({"select": ["ALL"], "drivers": [{"name": "gpu.nvidia.com", "feature-gates": {
        "TimeSlicingSettings": True}}]}, None, REPO)
    result = lint_files([load_bytes("w.yaml", out.encode())], [], gated)
    assert [f for f in result.findings if int(f.severity) >= 3] == []


PATCH = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
      - name: main
        resources:
          limits:
            nvidia.com/gpu: 1
"""

CR = """apiVersion: example.com/v1
kind: Trainer
metadata:
  name: trainer
  namespace: ml
spec:
  template:
    spec:
      containers:
      - name: main
        image: cuda:12
        resources:
          limits:
            nvidia.com/gpu: 2
"""


@pytest.mark.parametrize(("text", "reason"), [
    ("---\n# Source: chart/templates/pod.yaml\n" + POD, "Helm-rendered from `chart/templates/pod.yaml`"),
    (POD.replace("  containers:\n", "  initContainers:\n"), "init container `main`"),
    (PATCH, "kustomize patch"),
    (POD.replace("nvidia.com/gpu: 2  # two GPUs", "nvidia.com/gpu: 500m"), "not a whole number"),
    (POD.replace("nvidia.com/gpu: 2\n", "nvidia.com/gpu: 1\n"), "different requests and limits"),
    (POD.replace('cpu: "4"', "nvidia.com/gpumem: 1024"), "HAMi"),
    (CR, "custom resource"),
])
def test_skips_say_why(text: str, reason: str) -> None:
    out, rep = migrate_text(text)
    assert out == text
    [w] = rep.workloads
    assert w.status == "skipped"
    assert reason in w.reason, w.reason


def test_custom_resources_on_request() -> None:
    out, rep = migrate_text(CR, include_custom_resources=True)
    assert rep.workloads[0].status == "migrated"
    assert "      resourceClaims:\n      - name: gpu\n        resourceClaimTemplateName: trainer-gpu\n" in out


SELECTED = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  nodeSelector:  # pick the A100 nodes
    nvidia.com/gpu.product: A100-SXM4-40GB-MIG-1g.5gb
    kubernetes.io/os: linux
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: nvidia.com/gpu.memory
            operator: Gt
            values: ["16384"]
  containers:
  - name: main
    image: x
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def test_mig_single_strategy_needs_node_selector_conversion() -> None:
    _, rep = migrate_text(SELECTED)
    assert rep.workloads[0].status == "skipped" and "MIG \"single\" strategy" in rep.workloads[0].reason
    out, rep = migrate_text(SELECTED, convert_node_selectors=True)
    assert rep.workloads[0].status == "migrated"
    assert "  nodeSelector:  # pick the A100 nodes\n    kubernetes.io/os: linux\n" in out
    assert "affinity" not in out.split("---")[0]
    assert "deviceClassName: mig.nvidia.com" in out
    assert "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'" in out
    assert ".productName.replace(' ', '-').endsWith('A100-SXM4-40GB')" in out
    assert "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('16384Mi'))" in out


def test_extended_resource_bridge_leaves_pods_and_emits_a_device_class(tmp_path: Path) -> None:
    text = POD.replace("nvidia.com/gpu: 2  # two GPUs", "nvidia.com/mig-2g.20gb: 1").replace(
        "      requests:\n        nvidia.com/gpu: 2\n", "")
    cfg = build_config({}, None, REPO)
    bridge = tmp_path / "classes.yaml"
    rep = migrate_files([load_bytes("w.yaml", text.encode())], [], cfg,
                        MigrateOptions(extended_resource_bridge=True, bridge_file=str(bridge)))
    assert not rep.changed() and rep.workloads[0].status == "bridged"
    body = rep.new_files[str(bridge)].decode()
    assert "extendedResourceName: nvidia.com/mig-2g.20gb" in body
    assert "profile == '2g.20gb'" in body
    result = lint({"c.yaml": body.encode()}, "DRA1")
    assert [f for f in result.findings if int(f.severity) >= 3] == []


def test_crlf_bom_and_other_documents_survive(tmp_path: Path) -> None:
    text = "# header\r\n---\r\napiVersion: v1\r\nkind: Namespace\r\nmetadata: {name: ml}\r\n---\r\n" + \
        POD.replace("\n", "\r\n")
    raw = b"\xef\xbb\xbf" + text.encode()
    cfg = build_config({}, None, REPO)
    rep = migrate_files([load_bytes("w.yaml", raw)], [], cfg, MigrateOptions())
    after = rep.files[0].after
    assert after.startswith(b"\xef\xbb\xbf# header\r\n---\r\napiVersion: v1\r\nkind: Namespace\r\nmetadata: {name: ml}"
                            b"\r\n---\r\n")
    assert b"\n" not in after.replace(b"\r\n", b"")
    assert b"kind: ResourceClaimTemplate\r\n" in after


def test_cli_dry_run_diff_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(POD)
    monkeypatch.chdir(tmp_path)
    assert main(["migrate", "--isolated", "--dry-run", "p.yaml"]) == 1
    out = capsys.readouterr().out
    assert "Would migrate 1 workload, skipped 0; 1 file would change." in out
    assert "migrated  Pod ml/trainer  p.yaml:2  ResourceClaimTemplate trainer-gpu" in out
    assert main(["migrate", "--isolated", "--diff", "p.yaml"]) == 1
    assert "+kind: ResourceClaimTemplate\n" in capsys.readouterr().out
    assert f.read_text() == POD
    assert main(["migrate", "--isolated", "--format", "json", "p.yaml"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"] == {"migrated": 1, "skipped": 0, "tolerations_added": 1, "files_changed": 1,
                               "failed_files": 0}
    assert "resourceClaimTemplateName: trainer-gpu" in f.read_text()
    assert main(["migrate", "--isolated", "--template-name-pattern", "gpu", "p.yaml"]) == 2


def test_dra307_fix_turns_the_shared_claim_into_a_template() -> None:
    from dralint.checks.wiring import claim_to_template_fix
    from dralint.fix.splice import PlannedFix, apply_pass
    from dralint.inputs import dra
    from dralint.model import Applicability

    bad = (REPO / "rules" / "DRA307-shared-claim-in-replicated-workload" / "bad.yaml").read_bytes()
    result = lint({"bad.yaml": bad}, "DRA307")
    assert [f.rule for f in result.findings] == ["DRA307"]
    ds = next(o for o in result.index.objects if o.kind == "DaemonSet")
    [claim] = dra.pod_claims(ds.pod_specs[0])
    fix = claim_to_template_fix(ds, claim, result.index)
    assert fix is not None and fix.applicability == Applicability.UNSAFE
    pr = apply_pass(result.files[0], [PlannedFix("DRA307", fix, ds.doc.index, ds.base_path)], Applicability.UNSAFE)
    text = pr.text
    assert "        resourceClaimTemplateName: node-gpu\n" in text and "resourceClaimName" not in text.split("---")[0]
    docs = text.split("---\n")
    assert docs[2] == bad.decode().split("---\n")[1]  # the standalone claim stays as it was
    assert docs[1] == ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n"
                       "  name: node-gpu\n  namespace: ml\nspec:\n  spec:\n    devices:\n      requests:\n"
                       "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n")
    after = lint({"bad.yaml": text.encode()})
    assert [f for f in after.findings if f.rule == "DRA307" or int(f.severity) >= 3] == []
    # the same template is reused when it exists already
    again = lint({"bad.yaml": text.encode().replace(b"resourceClaimTemplateName", b"resourceClaimName")}, "DRA307")
    ds = next(o for o in again.index.objects if o.kind == "DaemonSet")
    fix2 = claim_to_template_fix(ds, dra.pod_claims(ds.pod_specs[0])[0], again.index)
    assert fix2 is not None and [e.op for e in fix2.edits] == ["rename"]


# ----------------------------------------------------------------------------------------------
# the objects migrate writes are valid, or the workload is skipped with the reason


def new_object_errors(out: str, rep: Any, context: dict[str, str] | None = None,
                      config: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """Errors that the whole rule set reports on the claims and templates this run wrote."""
    written = {o for w in rep.workloads for o in w.objects if not o.startswith("reused ")}
    cfg = build_config({"select": ["ALL"], **(config or {})}, None, REPO)
    ctx = [load_bytes(p, t.encode()) for p, t in (context or {}).items()]
    result = lint_files([load_bytes("w.yaml", out.encode())], ctx, cfg)
    return [(f.rule, f.message) for f in result.findings if int(f.severity) >= 3 and f.object is not None
            and f"{f.object.kind} {f.object.name}" in written]


WEB = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ml
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: app:1
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def _template(name: str, requests: str, api: str = "resource.k8s.io/v1", extra: str = "") -> str:
    return (f"apiVersion: {api}\nkind: ResourceClaimTemplate\nmetadata: {{name: {name}, namespace: ml}}\n"
            f"spec:\n  spec:\n    devices:\n      requests:\n{requests}{extra}")


@pytest.mark.parametrize(("rule", "existing"), [
    # GpuConfig on a MIG class
    ("DRA106", _template("tuned", "      - name: gpu\n        exactly: {deviceClassName: mig.nvidia.com}\n",
                         extra="      config:\n      - requests: [gpu]\n        opaque:\n"
                               "          driver: gpu.nvidia.com\n          parameters:\n"
                               "            apiVersion: resource.nvidia.com/v1beta1\n            kind: GpuConfig\n"
                               "            sharing: {strategy: TimeSlicing}\n")),
    ("DRA101", _template("nameless", "      - exactly: {deviceClassName: gpu.nvidia.com}\n")),
    ("DRA108", _template("flat", "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n")),
    ("DRA104", _template("empty", "      - name: gpu\n        exact: {deviceClassName: gpu.nvidia.com}\n")),
])
def test_invalid_claims_already_in_the_file_do_not_stop_the_migration(rule: str, existing: str) -> None:
    # the self-check used to hold every claim and template of the file to "no errors", so one broken
    # object written by hand failed the whole file as if migrate had produced it ("this is a bug")
    text = WEB + "---\n" + existing
    before = lint({"w.yaml": text.encode()}, rule)
    assert rule in {f.rule for f in before.findings}  # the hand-written object really is invalid
    out, rep = migrate_text(text)
    assert [(w.status, w.objects) for w in rep.workloads] == [("migrated", ["ResourceClaimTemplate web-gpu"])]
    assert out.endswith("---\n" + existing)  # left as it was
    assert new_object_errors(out, rep) == []


def test_a_template_name_defined_twice_is_not_reused() -> None:
    # which of the two `two-gpus` the cluster keeps depends on the order they are applied in
    ours = "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n"
    other = "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2, allocationMode: All}\n"
    ctx = {"t.yaml": _template("two-gpus", ours) + "---\n" + _template("two-gpus", other)}
    out, rep = migrate_text(POD, context=ctx)
    assert "resourceClaimTemplateName: trainer-gpu\n" in out
    assert rep.workloads[0].objects == ["ResourceClaimTemplate trainer-gpu"]
    assert new_object_errors(out, rep, ctx) == []
    # one definition (or two identical ones) is reused as before
    twice = _template("two-gpus", ours) + "---\n" + _template("two-gpus", ours)
    out, rep = migrate_text(POD, context={"t.yaml": twice})
    assert rep.workloads[0].objects == ["reused ResourceClaimTemplate two-gpus"]


@pytest.mark.parametrize(("api", "requests", "config"), [
    # v1 spec under v1beta1, which has no `exactly` (and is not served by default in 1.37)
    ("resource.k8s.io/v1beta1", "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n",
     {}),
    # the flat v1beta1 request under v1, when new objects are written as v1beta1
    ("resource.k8s.io/v1", "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n        count: 2\n",
     {"kubernetes-version": "1.32", "runtime-config": {"resource.k8s.io/v1beta1": True},
      "feature-gates": {"DynamicResourceAllocation": True}}),
])
def test_a_template_whose_api_version_reads_the_spec_differently_is_not_reused(
        api: str, requests: str, config: dict[str, Any]) -> None:
    ctx = {"t.yaml": _template("two-gpus", requests, api)}
    assert [f for f in lint({"t.yaml": ctx["t.yaml"].encode()}, "DRA1").findings if int(f.severity) >= 3]
    out, rep = migrate_text(POD, context=ctx, config=config)
    assert rep.workloads[0].objects == ["ResourceClaimTemplate trainer-gpu"], rep.workloads[0].objects
    assert new_object_errors(out, rep, ctx, config) == []


SHARED_WEB = WEB.replace("nvidia.com/gpu: 1", "nvidia.com/gpu.shared: 1")
GATED = {"drivers": [{"name": "gpu.nvidia.com", "feature-gates": {"TimeSlicingSettings": True}}]}


def _device_class(name: str, *selectors: str) -> str:
    sels = "".join(f"  - cel:\n      expression: '{s}'\n" for s in selectors)
    return f"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: {name}\nspec:\n  selectors:\n{sels}"


@pytest.mark.parametrize(("device_class", "class_map", "kind", "note"), [
    # the cluster's gpu.nvidia.com selects MIG devices here, whole GPUs as the driver installs it
    (_device_class("gpu.nvidia.com", 'device.driver == "gpu.nvidia.com"',
                   'device.attributes["gpu.nvidia.com"].type == "mig"'), {}, None,
     "class `gpu.nvidia.com` selects `mig` devices (the DeviceClass in w.yaml:2) but `gpu` devices (as the driver "
     "installs it)"),
    # --device-class-map to another driver's class: a gpu.nvidia.com config never reaches it
    (_device_class("fpga.example.com", 'device.driver == "fpga.example.com"'),
     {"gpu.nvidia.com": "fpga.example.com"}, None,
     "selects devices of driver `fpga.example.com`, which ignores `gpu.nvidia.com` configs"),
    # --device-class-map to a class of MIG devices only: their config kind
    (_device_class("slices.example.com", 'device.driver == "gpu.nvidia.com"',
                   'device.attributes["gpu.nvidia.com"].type == "mig"'),
     {"gpu.nvidia.com": "slices.example.com"}, "MigDeviceConfig", None),
    # ... or a class that may give MIG devices or whole GPUs: neither kind fits every allocation
    (_device_class("slices.example.com", 'device.driver == "gpu.nvidia.com"',
                   'device.attributes["gpu.nvidia.com"].type == "mig"') + "---\n" +
     _device_class("slices.example.com", 'device.driver == "gpu.nvidia.com"'),
     {"gpu.nvidia.com": "slices.example.com"}, None, "selects `mig` devices (the DeviceClass in w.yaml:2) or any"),
])
def test_the_sharing_config_fits_the_class_of_the_shared_claim(device_class: str, class_map: dict[str, str],
                                                                kind: str | None, note: str | None) -> None:
    # the generator used to write GpuConfig unless the class was literally mig.nvidia.com; the driver
    # fails to prepare a claim whose config kind does not fit the device (DRA106)
    text = device_class + "---\n" + SHARED_WEB
    out, rep = migrate_text(text, config=GATED, device_class_map=class_map)
    [w] = rep.workloads
    assert (w.status, w.objects) == ("migrated", ["ResourceClaim web-shared-gpu"])
    claim = out.split("kind: ResourceClaim\n")[1]
    if kind is None:
        assert "config:" not in claim and "TimeSlicingSettings" not in " ".join(w.notes)
        assert any(note in n and "no TimeSlicing config for request `gpu`" in n for n in w.notes), w.notes
    else:
        assert f"kind: {kind}" in claim and "strategy: TimeSlicing" in claim
    assert new_object_errors(out, rep, config=GATED) == []


def test_no_served_claim_api_skips_with_the_reason() -> None:
    # Kubernetes 1.32 serves resource.k8s.io/v1beta1 only when switched on; the generator used to
    # fall back to v1, which 1.32 does not know (DRA102)
    old = {"kubernetes-version": "1.32", "feature-gates": {"DynamicResourceAllocation": True}}
    out, rep = migrate_text(WEB, config=old)
    assert out == WEB
    [w] = rep.workloads
    assert w.status == "skipped"
    assert w.reason.startswith("Kubernetes 1.32 serves no resource.k8s.io version of ResourceClaimTemplate"), w.reason
    assert "--runtime-config resource.k8s.io/v1beta1=true" in w.reason
    on = {**old, "runtime-config": {"resource.k8s.io/v1beta1": True}}
    out, rep = migrate_text(WEB, config=on)
    assert rep.workloads[0].status == "migrated"
    assert "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate" in out
    assert "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n" in out
    assert new_object_errors(out, rep, config=on) == []


@pytest.mark.parametrize("existing", ["crlf", "not-utf8", "broken-yaml", "directory"])
def test_the_bridge_file_keeps_what_it_holds(tmp_path: Path, existing: str) -> None:
    """Classes are appended to an existing bridge file in its own line endings; a file they cannot be
    appended to without changing what it holds is left alone, with a note that says why."""
    text = POD.replace("nvidia.com/gpu: 2  # two GPUs", "nvidia.com/mig-2g.20gb: 1").replace(
        "      requests:\n        nvidia.com/gpu: 2\n", "")
    bridge = tmp_path / "classes.yaml"
    old = {"crlf": b"# kept\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: c}\r\n",
           "not-utf8": b"# caf\xe9\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
           "broken-yaml": b"apiVersion: v1\nkind: [ConfigMap\n"}.get(existing)
    if old is None:
        bridge.mkdir()
    else:
        bridge.write_bytes(old)
    rep = migrate_files([load_bytes("w.yaml", text.encode())], [], build_config({}, None, REPO),
                        MigrateOptions(extended_resource_bridge=True, bridge_file=str(bridge)))
    if existing == "crlf":
        assert old is not None
        new = rep.new_files[str(bridge)]
        assert new.startswith(old) and b"extendedResourceName: nvidia.com/mig-2g.20gb\r\n" in new
        assert b"\n" not in new.replace(b"\r\n", b"")
        return
    assert str(bridge) not in rep.new_files
    why = {"not-utf8": "not UTF-8 text", "broken-yaml": "cannot be read as YAML",
           "directory": "not a regular file"}[existing]
    assert any(why in n and "were not added" in n for n in rep.notes), rep.notes


@pytest.mark.parametrize("listed", [True, False])
def test_a_patch_a_kustomization_lists_is_skipped_even_with_an_image(tmp_path: Path, listed: bool,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # a strategic merge patch that sets the image as well: the guess from a missing image cannot see it
    work = tmp_path / "k"
    shutil.copytree(REPO / "tests" / "fixtures" / "kustomize-patches", work)
    patch = work / "staging" / "mig.yaml"
    text = patch.read_text().replace("        - name: train\n", "        - name: train\n          image: trainer:2\n")
    patch.write_text(text)
    if not listed:
        (work / "staging" / "kustomization.yaml").unlink()
    report = _migrate_json(work, capsys)
    [w] = [w for w in report["workloads"] if w["path"].endswith("mig.yaml")]
    if listed:
        assert w["status"] == "skipped"
        assert w["reason"].startswith("the file is a patch (`kustomization.yaml` lists it)"), w["reason"]
        assert patch.read_text() == text
    else:
        assert w["status"] == "migrated"
        assert "ResourceClaimTemplate" in patch.read_text()
