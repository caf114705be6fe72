"""`dralint migrate` keeps what a workload does, or skips it with the reason (issue 13, point 2):
the GPU-taint toleration, KubeRay's `num-gpus`, operators that derive behaviour from the extended
resource, GKE MIG partitions, time-sharing and accelerators, `generateName`, `schedulerName`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralint.cli.app import main
from dralint.engine.config import build_config
from dralint.inputs.load import load_bytes
from dralint.migrate.records import MigrateOptions, MigrationReport
from dralint.migrate.run import migrate_files

from .conftest import REPO

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def migrate(text: str, **opts: Any) -> tuple[list[Any], MigrationReport]:
    cfg = build_config({}, None, REPO)
    rep = migrate_files([load_bytes("w.yaml", text.encode())], [], cfg, MigrateOptions(**opts))
    assert not rep.failed, [f.failures for f in rep.files]
    return list(yaml.safe_load_all(rep.files[0].after.decode())), rep


def deployment(pod_spec_extra: str = "", meta: str = "  name: web\n", gpus: int = 1) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
{meta}spec:
  template:
    spec:
{pod_spec_extra}      containers:
      - name: app
        image: cuda:12
        resources:
          limits:
            nvidia.com/gpu: {gpus}
"""


def pod_spec(docs: list[Any]) -> Any:
    return docs[0]["spec"]["template"]["spec"]


def claim_requests(docs: list[Any]) -> list[Any]:
    return [r["exactly"] for d in docs[1:] for r in d["spec"]["spec"]["devices"]["requests"]]


# -- the toleration ExtendedResourceToleration used to add -------------------------------------


def test_removing_the_gpu_adds_its_toleration_and_counts_it() -> None:
    docs, rep = migrate(deployment())
    assert pod_spec(docs)["tolerations"] == [GPU_TOLERATION]
    assert "nvidia.com/gpu" not in json.dumps(pod_spec(docs)["containers"])
    assert rep.tolerations() == 1 and rep.as_json()["summary"]["tolerations_added"] == 1


@pytest.mark.parametrize("existing", [
    "      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n",
    "      - {key: nvidia.com/gpu, operator: Exists}\n",  # every effect
    "      - {operator: Exists}\n",  # every taint
])
def test_an_equivalent_toleration_is_not_added_twice(existing: str) -> None:
    docs, rep = migrate(deployment("      tolerations:\n" + existing))
    assert pod_spec(docs)["tolerations"] == yaml.safe_load(existing)
    assert rep.tolerations() == 0


def test_a_narrower_toleration_gets_the_gpu_one_beside_it() -> None:
    # `Equal present` tolerates one value of the taint only; the admission plugin's is `Exists`
    narrow = "      - {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}\n"
    docs, rep = migrate(deployment("      tolerations:\n" + narrow))
    assert pod_spec(docs)["tolerations"] == [*yaml.safe_load(narrow), GPU_TOLERATION]
    assert rep.tolerations() == 1


def test_no_gpu_toleration_and_keep_extended_resources_add_none() -> None:
    for opts in ({"gpu_toleration": False}, {"keep_extended_resources": True}):
        docs, rep = migrate(deployment(), **opts)
        assert "tolerations" not in pod_spec(docs) and rep.tolerations() == 0
        assert docs[1]["kind"] == "ResourceClaimTemplate"


def test_cli_summary_counts_tolerations_and_the_flag_opts_out(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(deployment())
    assert main(["migrate", "--isolated", "--dry-run", str(f)]) == 1
    assert "Would add 1 GPU toleration " in capsys.readouterr().out
    assert main(["migrate", "--isolated", "--no-gpu-toleration", "--format", "json", str(f)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["tolerations_added"] == 0
    assert "tolerations" not in yaml.safe_load_all(f.read_text()).__next__()["spec"]["template"]["spec"]


# -- KubeRay -------------------------------------------------------------------------------------

RAY = """apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - {name: head, image: ray}
  workerGroupSpecs:
  - groupName: a
    rayStartParams: {block: "true"}
    template:
      spec:
        containers:
        - name: worker
          image: ray
          resources: {limits: {nvidia.com/gpu: 4}}
        - name: sidecar
          image: log
          resources: {limits: {nvidia.com/gpu: 1}}
  - groupName: b
    rayStartParams: {num-gpus: "1"}
    template:
      spec:
        containers:
        - name: worker
          image: ray
          resources: {limits: {nvidia.com/gpu: 2}}
"""


def test_ray_groups_get_num_gpus_from_the_ray_container() -> None:
    docs, rep = migrate(RAY, include_custom_resources=True)
    groups = docs[0]["spec"]["workerGroupSpecs"]
    # KubeRay derived num-gpus from the Ray container (the first): 4, not the sidecar's GPU
    assert groups[0]["rayStartParams"] == {"block": "true", "num-gpus": "4"}
    # an explicit value is the user's: kept, and the difference is noted
    assert groups[1]["rayStartParams"] == {"num-gpus": "1"}
    assert any("differs from the 2" in n for n in rep.workloads[0].notes)
    assert docs[0]["spec"]["headGroupSpec"]["rayStartParams"] == {}  # the head asked for no GPU


# -- operators that derive behaviour from the extended resource -------------------------------

RUNTIME = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: torch
                  resources: {limits: {nvidia.com/gpu: 2}}
"""


def test_trainer_runtime_is_skipped_naming_the_field() -> None:
    _, rep = migrate(RUNTIME, include_custom_resources=True)
    (w,) = rep.workloads
    assert w.status == "skipped"
    assert "`spec.mlPolicy.torch.numProcPerNode`" in w.reason and "--keep-extended-resources" in w.reason
    # an explicit count is not derived, so the runtime migrates
    explicit = RUNTIME.replace("    torch: {}", "    torch: {numProcPerNode: 2}")
    _, rep = migrate(explicit, include_custom_resources=True)
    assert rep.workloads[0].status == "migrated"
    _, rep = migrate(RUNTIME, include_custom_resources=True, keep_extended_resources=True)
    assert rep.workloads[0].status == "migrated"


def test_a_gpu_asked_for_only_by_an_operator_field_is_listed_as_skipped() -> None:
    trainjob = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch}
  trainer:
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8}
"""
    _, rep = migrate(trainjob)
    (w,) = rep.workloads
    assert (w.status, w.line) == ("skipped", 2)
    assert "no pod template to migrate" in w.reason and "spec.trainer.resourcesPerNode" in w.reason


# -- GKE -----------------------------------------------------------------------------------------


def test_gke_partition_size_claims_that_mig_profile() -> None:
    docs, _ = migrate(deployment("      nodeSelector:\n        cloud.google.com/gke-gpu-partition-size: 2g.10gb\n",
                                 gpus=2))
    (req,) = claim_requests(docs)
    assert req["deviceClassName"] == "mig.nvidia.com" and req["count"] == 2
    assert [s["cel"]["expression"] for s in req["selectors"]] == [
        "device.attributes['gpu.nvidia.com'].profile == '2g.10gb'"]
    # the node-pool label stays: GKE's autoscaler provisions by it
    assert pod_spec(docs)["nodeSelector"] == {"cloud.google.com/gke-gpu-partition-size": "2g.10gb"}


def test_gke_accelerator_becomes_a_product_name_selector_from_the_table() -> None:
    table = yaml.safe_load((REPO / "schemas" / "gke.yaml").read_text())["accelerators"]
    docs, _ = migrate(deployment("      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n"))
    (req,) = claim_requests(docs)
    assert req["deviceClassName"] == "gpu.nvidia.com"
    assert [s["cel"]["expression"] for s in req["selectors"]] == [
        f"device.attributes['gpu.nvidia.com'].productName == '{table['nvidia-l4']}'"]


@pytest.mark.parametrize(("selector", "words"), [
    ("cloud.google.com/gke-accelerator: nvidia-tesla-k80", "does not know"),
    ("cloud.google.com/gke-gpu-sharing-strategy: time-sharing", "shares each GPU"),
    ("cloud.google.com/gke-gpu-partition-size: half", "not a MIG profile"),
    ("nvidia.com/gpu.product: Tesla-T4-SHARED", "time-slicing"),
])
def test_gke_and_gfd_selections_a_full_gpu_claim_cannot_express_are_skipped(selector: str, words: str) -> None:
    text = deployment(f"      nodeSelector:\n        {selector}\n")
    out = migrate_files([load_bytes("w.yaml", text.encode())], [], build_config({}, None, REPO), MigrateOptions())
    (w,) = out.workloads
    assert w.status == "skipped" and words in w.reason and selector.split(":")[0] in w.reason
    assert out.files[0].after == text.encode()


@pytest.mark.parametrize("selector", [
    "cloud.google.com/gke-gpu-partition-size: 1g.5gb",
    "cloud.google.com/gke-gpu-sharing-strategy: mps",
    "nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
])
def test_bridge_never_serves_mig_or_shared_gpus_from_the_full_gpu_class(selector: str) -> None:
    text = deployment(f"      nodeSelector:\n        {selector}\n")
    rep = migrate_files([load_bytes("w.yaml", text.encode())], [], build_config({}, None, REPO),
                        MigrateOptions(extended_resource_bridge=True, bridge_file=str(REPO / "no-such-dir" / "x.yaml")))
    (w,) = rep.workloads
    assert w.status == "skipped" and selector.split(":")[0] in w.reason
    assert rep.new_files == {}
    # a plain full-GPU workload is still bridged
    plain = migrate_files([load_bytes("w.yaml", deployment().encode())], [], build_config({}, None, REPO),
                          MigrateOptions(extended_resource_bridge=True))
    assert plain.workloads[0].status == "bridged"


# -- names and schedulers --------------------------------------------------------------------------


def test_generate_name_gives_the_template_its_name() -> None:
    docs, rep = migrate(deployment(meta="  generateName: batch-run-\n"))
    assert docs[1]["metadata"]["name"] == "batch-run-gpu"
    assert pod_spec(docs)["resourceClaims"][0]["resourceClaimTemplateName"] == "batch-run-gpu"
    assert rep.workloads[0].status == "migrated" and rep.workloads[0].name == "batch-run-*"


def test_a_custom_scheduler_is_kept_and_named_in_the_notes() -> None:
    docs, rep = migrate(deployment("      schedulerName: volcano\n"))
    assert pod_spec(docs)["schedulerName"] == "volcano"
    assert any("schedulerName: volcano" in n for n in rep.workloads[0].notes)
    _, rep = migrate(deployment("      schedulerName: default-scheduler\n"))
    assert not any("schedulerName" in n for n in rep.workloads[0].notes)


def test_every_skip_has_file_line_and_reason_in_text_and_json(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "two.yaml"
    f.write_text(deployment() + "---\n" + deployment("      nodeSelector:\n        "
                                                     "cloud.google.com/gke-gpu-sharing-strategy: time-sharing\n",
                                                     meta="  name: shared\n"))
    assert main(["migrate", "--isolated", "--dry-run", str(f)]) == 1
    text = capsys.readouterr().out
    second_kind_line = f.read_text().splitlines().index("kind: Deployment", 2) + 1
    row = next(ln for ln in text.splitlines() if ln.lstrip().startswith("skipped"))
    assert f"{f}:{second_kind_line}" in row and "shares each GPU" in row
    assert main(["migrate", "--isolated", "--dry-run", "--format", "json", str(f)]) == 1
    skipped = [w for w in json.loads(capsys.readouterr().out)["workloads"] if w["status"] == "skipped"]
    assert [(w["name"], w["line"]) for w in skipped] == [("shared", second_kind_line)]
    assert "shares each GPU" in skipped[0]["reason"]
