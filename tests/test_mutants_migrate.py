"""Tests written to kill mutants of `dralint/migrate/` that survived `bench/mutation.py --package migrate`.

Expectations are read off the manifests written here; the mutants are listed in bench/mutation-results.md.
"""

from __future__ import annotations

import re
from pathlib import Path

from dralint.engine.config import build_config
from dralint.fix.loop import FileOutcome, GateFailure
from dralint.inputs.load import load_bytes
from dralint.migrate.records import MigrateOptions, MigrationReport
from dralint.migrate.run import migrate_files, migrate_paths

from .conftest import REPO
from .test_migrate import POD, SELECTED, migrate_text


def test_a_zero_gpu_request_is_skipped_with_the_amount_quoted() -> None:
    text = POD.replace("nvidia.com/gpu: 2  # two GPUs", "nvidia.com/gpu: 0").replace(
        "      requests:\n        nvidia.com/gpu: 2\n", "")
    out, rep = migrate_text(text)
    assert out == text
    [w] = rep.workloads
    assert w.status == "skipped"
    assert w.reason == "container `main` asks for `nvidia.com/gpu: 0`, which is not a whole number ≥ 1"


def test_the_mig_single_strategy_skip_says_what_to_pass() -> None:
    _, rep = migrate_text(SELECTED)
    assert rep.workloads[0].reason.endswith(
        "`nvidia.com/gpu` is a MIG device here; pass --convert-node-selectors to claim that MIG profile")


def test_request_names_that_collide_get_a_number() -> None:
    # two MIG profiles in one container: both requests would be `mig-main`
    two_profiles = "nvidia.com/mig-1g.5gb: 1\n        nvidia.com/mig-2g.10gb: 1"
    text = POD.replace("nvidia.com/gpu: 2  # two GPUs", two_profiles).replace(
        "      requests:\n        nvidia.com/gpu: 2\n", "")
    out, rep = migrate_text(text)
    assert rep.workloads[0].status == "migrated", rep.workloads[0].reason
    assert "- name: mig-main\n" in out and "- name: mig-main-2\n" in out


def _long_names_pod() -> str:
    a, b = "x" * 60 + "aa", "x" * 60 + "bb"
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: ml}}
spec:
  containers:
  - name: {a}
    image: cuda:12
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
  - name: {b}
    image: cuda:12
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def test_request_names_that_collide_after_shortening_stay_dns_labels() -> None:
    # two containers whose names share their first 59 characters: `gpu-<name>` cut to 63 is the same
    out, rep = migrate_text(_long_names_pod())
    assert rep.workloads[0].status == "migrated"
    names = re.findall(r"^\s+- name: (gpu-\S+)$", out, flags=re.M)
    assert len(names) == 2 and len(set(names)) == 2 and all(len(n) <= 63 for n in names), names


def test_a_template_name_pattern_that_does_not_format_falls_back_to_the_workload_name() -> None:
    out, rep = migrate_text(POD, template_name_pattern="{unknown}-x")
    assert rep.workloads[0].status == "migrated"
    assert "resourceClaimTemplateName: trainer-gpu\n" in out


def test_the_json_report_lists_each_failure_with_its_rules() -> None:
    rep = MigrationReport([], [])
    rep.files.append(FileOutcome("w.yaml", b"a", b"a", failures=[GateFailure(["DRA201"], "it came back")]))
    assert rep.as_json()["failures"] == [{"path": "w.yaml", "rules": ["DRA201"], "reason": "it came back"}]


def test_migrate_paths_reads_the_context_and_migrates_only_the_targets(tmp_path: Path) -> None:
    target = tmp_path / "pod.yaml"
    target.write_text(POD)
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m, namespace: ml}\n")
    rep = migrate_paths([str(target)], build_config({}, None, REPO), MigrateOptions(), context=[str(ctx), str(target)])
    assert [Path(f.path).name for f in rep.files] == ["pod.yaml"]
    assert [w.status for w in rep.workloads] == ["migrated"]


def test_the_bridge_uses_the_class_the_driver_chart_installs_for_the_resource(tmp_path: Path) -> None:
    # gpu.nvidia.com, installed by the NVIDIA DRA driver chart, declares extendedResourceName nvidia.com/gpu
    # (schemas/drivers/gpu.nvidia.com.yaml): nothing new to emit for it
    bridge = tmp_path / "classes.yaml"
    rep = migrate_files([load_bytes("w.yaml", POD.encode())], [], build_config({}, None, REPO),
                        MigrateOptions(extended_resource_bridge=True, bridge_file=str(bridge)))
    [w] = rep.workloads
    assert w.status == "bridged"
    assert "`nvidia.com/gpu` is served by DeviceClass gpu.nvidia.com (installed by the driver's Helm chart)" in w.notes
    assert str(bridge) not in rep.new_files
