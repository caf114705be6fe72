"""`dralint migrate` on the real workloads of ../shared/corpus/workloads-cr and device-plugin (issue 13,
point 5): a table of what happens to each GPU workload, and the checks the issue asks of the result.

The table was written by reading each file (kind, name, how it asks for GPUs, its node selectors
and scheduler), not from dralint's output. Per workload: the outcome with the default options, and
with ``--include-custom-resources``; ``migrated`` or a phrase of the skip reason. The reasons:

- a custom resource's pod template is not edited by default (its CRD may prune `resourceClaims`);
- an operator that asks for GPUs in its own fields has no pod template to migrate (NIM, TrainJob,
  Spark, KubeVirt, a stray `resources` map of an unknown CR);
- a Kubeflow Trainer torch runtime derives `numProcPerNode` from the GPU limit;
- gpu-feature-discovery labels that make `nvidia.com/gpu` a MIG device or a time-shared replica;
- a kustomize patch (no image), a placeholder amount, HAMi's look-alike resources, a JSON file
  holding one object.
Karpenter NodePools and Kueue queues count GPUs by name but run no pods: they are not workloads.
Skipped when ../shared is absent.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralint.cli import main
from dralint.engine.config import build_config
from dralint.engine.pipeline import lint_paths
from dralint.model import Severity

from .conftest import CORPUS, REPO, requires_shared

M = "migrated"
CR = "inside a custom resource"
NOPOD = "no pod template to migrate"
PATCH = "looks like a kustomize patch"
NOT_WHOLE = "not a whole number"

#: file (below corpus/) -> [(kind, name, default outcome, outcome with --include-custom-resources)]
TABLE: dict[str, list[tuple[str, str, str, str]]] = {
    # -- device-plugin corpus: built-ins ----------------------------------------------------------
    # GKE: `gke-accelerator: nvidia-l4` is in schemas/gke.yaml, so the claim selects that product
    "device-plugin/GoogleCloudPlatform/kubernetes-engine-samples/ai-ml/gke-online-serving-single-gpu/src/gke-config/"
    "deployment-triton.yaml": [("Deployment", "triton-deployment", M, M)],
    "device-plugin/GoogleCloudPlatform/kubernetes-engine-samples/ai-ml/llm-multiple-gpus/llama3-70b/"
    "text-generation-inference.yaml": [("Deployment", "llm", M, M)],
    # KAI scheduler: kept, with a note
    "device-plugin/NVIDIA/KAI-Scheduler/docs/batch/pytorch-job.yaml":
        [("PyTorchJob", "pytorch-dist-mnist-nccl", CR, M)],
    "device-plugin/NVIDIA/KAI-Scheduler/docs/dra/gpu-imex-pod.yaml": [("Pod", "gpu-imex-pod", M, M)],
    "device-plugin/NVIDIA/KAI-Scheduler/docs/quickstart/pods/gpu-pod.yaml": [("Pod", "gpu-pod", M, M)],
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-affinity-by-memory.yml":
        [("Pod", "gpu-pod", M, M)],
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-affinity.yml": [("Pod", "gpu-pod", M, M)],
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-selector.yml": [("Pod", "gpu-pod", M, M)],
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-mixed-with-selector.yml":
        [("Pod", "gpu-pod", M, M)],
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-mixed-without-selector.yml":
        [("Pod", "gpu-pod", M, M)],
    # `nvidia.com/gpu.product: A100-SXM4-40GB-MIG-1g.5gb`: the MIG "single" strategy
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-single.yml":
        [("Pod", "gpu-pod", "MIG \"single\" strategy", "MIG \"single\" strategy")],
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/pytorch-job.yml": [("Job", "pytorch-job", M, M)],
    "device-plugin/NVIDIA/gpu-operator/tests/gpu-pod.yaml": [("Pod", "gpu-operator-test", M, M)],
    # `nvidia.com/gpu.product: Tesla-T4-SHARED`: device-plugin time-slicing
    "device-plugin/NVIDIA/gpu-operator/tests/plugin-test.yaml":
        [("Deployment", "nvidia-plugin-test", "time-slicing", "time-slicing")],
    "device-plugin/NVIDIA/k8s-device-plugin/testdata/job-1.yaml": [("Job", "j-e2e-1", M, M)],
    # `mlPolicy.torch: {}`: numProcPerNode is `auto`, which the Trainer derives from nvidia.com/gpu
    "device-plugin/kubeflow/trainer/manifests/base/runtimes/torchtune/llama3_2/llama3_2_1B.yaml":
        [("ClusterTrainingRuntime", "torchtune-llama3.2-1b", "numProcPerNode", "numProcPerNode")],
    "device-plugin/kubernetes-sigs/kueue/site/static/examples/serving-workloads/sample-hami.yaml":
        [("Deployment", "gpu-burn", "HAMi", "HAMi")],
    "device-plugin/kubernetes-sigs/kueue/site/static/examples/serving-workloads/sample-leaderworkerset-tas.yaml":
        [("LeaderWorkerSet", "nginx-leaderworkerset", CR, M)],
    "device-plugin/nebuly-ai/nos/demos/gpu-sharing-comparison/manifests/overlays/mig/patch.yaml":
        [("Deployment", "benchmarks-client", PATCH, PATCH)],
    "device-plugin/nebuly-ai/nos/demos/gpu-sharing-comparison/manifests/overlays/ts/patch.yaml":
        [("Deployment", "benchmarks-client", PATCH, PATCH)],
    "device-plugin/ray-project/kuberay/ray-operator/config/samples/ray-service.stable-diffusion.yaml":
        [("RayService", "stable-diffusion", CR, M)],
    # -- workloads-cr -------------------------------------------------------------------------------
    "workloads-cr/aws/karpenter-provider-aws/examples/workloads/gpu-nvidia.yaml": [("Deployment", "gpu-nvidia", M, M)],
    "workloads-cr/aws-samples/awsome-distributed-training/1.architectures/7.sagemaker-hyperpod-eks/"
    "task-governance/1-imagenet-gpu-team-a.yaml": [("PyTorchJob", "imagenet-gpu-team-a-1", CR, M)],
    "workloads-cr/aws-samples/awsome-distributed-training/3.test_cases/pytorch/FSDP/kubernetes/"
    "llama3_1_8b-fsdp.yaml": [("PyTorchJob", "llama3-1-8b-fsdp", CR, NOT_WHOLE)],  # "$GPU_PER_NODE"
    "workloads-cr/aws-samples/awsome-distributed-training/micro-benchmarks/nccl-tests/kubernetes/"
    "nccl-tests.yaml": [("MPIJob", "nccl-tests", CR, M)],
    "workloads-cr/aws-samples/awsome-distributed-training/micro-benchmarks/nccl-tests/kubernetes/"
    "nccl-tests-gb200.yaml": [("MPIJob", "nccl-tests", CR, M)],
    "workloads-cr/kubeflow/mpi-operator/examples/v2beta1/tensorflow-benchmarks/tensorflow-benchmarks.yaml":
        [("MPIJob", "tensorflow-benchmarks", CR, M)],
    "workloads-cr/kubeflow/examples/tensorflow-horovod/mpi-job.yaml": [("MPIJob", "tf-resnet50-horovod-job", CR, M)],
    "workloads-cr/kubeflow/examples/financial_time_series/tensorflow_model/GPU/tfjob3.yaml":
        [("TFJob", "tfjob-deep-gpu", CR, M)],
    "workloads-cr/NVIDIA/deepops/workloads/examples/k8s/tensorflow-mpi-job.yml":
        [("MPIJob", "tensorflow-mpi-job", CR, M)],
    "workloads-cr/NVIDIA/deepops/workloads/examples/k8s/roce/multi_node_roce_jobfile.yaml":
        [("MPIJob", "tf-roce", CR, M)],
    "workloads-cr/PaddleFlow/paddle-operator/deploy/examples/resnet.yaml": [("PaddleJob", "resnet", CR, M)],
    "workloads-cr/NVIDIA/JAX-Toolbox/.github/eks-workflow-files/jobset.yml": [("JobSet", "jobset", CR, M)],
    # "PLACEHOLDER_NUM_GPU_PER_NODE" in the worker's limits
    "workloads-cr/aws-samples/awsome-distributed-training/3.test_cases/pytorch/verl/kubernetes/rlvr/setup/"
    "raycluster.yaml": [("RayCluster", "rayml-efa", CR, NOT_WHOLE)],
    # an Argo template is pod-like, not a PodSpec (no resourceClaims)
    "workloads-cr/argoproj-labs/hera/examples/workflows/use_cases/fine-tune-llama.yaml":
        [("Workflow", "fine-tune-llm-*", CR, "not a PodSpec")],
    "workloads-cr/NVIDIA/nim-deploy/kserve/nim-models/llama3-8b-instruct_1xgpu_1.0.0.yaml":
        [("InferenceService", "llama3-8b-instruct-1xgpu", CR, M)],
    "workloads-cr/SeldonIO/seldon-core/examples/models/gpu_tensorflow_deep_mnist/deep_mnist_gpu.json":
        [("SeldonDeployment", "deep-mnist-gpu", "only object of a JSON file", "only object of a JSON file")],
    "workloads-cr/kubeflow/katib/examples/v1beta1/nas/darts-gpu.yaml": [("Experiment", "darts-gpu", CR, M)],
    "workloads-cr/kaito-project/kaito/examples/custom-model-integration/custom-model-deployment.yaml":
        [("Workspace", "workspace-custom-llm", CR, M)],
    "workloads-cr/kubeflow/notebooks/workspaces/controller/manifests/kustomize/samples/"
    "jupyterlab_v1beta1_workspacekind.yaml": [("WorkspaceKind", "jupyterlab", NOPOD, NOPOD)],
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nim/serving/standalone/basic/llm.yaml":
        [("NIMService", "meta-llama-3-2-1b-instruct", NOPOD, NOPOD)],
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nim/serving/advanced/multi-node/multi-node-nimservice.yaml":
        [("NIMService", "deepseek-r1", NOPOD, NOPOD)],
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nim/pipelines/rag/rag-pipeline.yaml":
        [("NIMPipeline", "rag-pipeline", NOPOD, NOPOD)],
    "workloads-cr/opendatahub-io/distributed-workloads/benchmarks/kftv2-mpi-ddp-sft/trainjob.yaml":
        [("TrainJob", "mpi-ddp-sft-*", NOPOD, NOPOD)],
    "workloads-cr/awslabs/data-on-eks/data-stacks/spark-on-eks/examples/spark-rapids/spark-rapids-app-gpus.yaml":
        [("SparkApplication", "spark-rapids-yunikorn", NOPOD, NOPOD)],
    "workloads-cr/kubevirt/kubevirt/examples/vmi-gpu.yaml": [("VirtualMachineInstance", "vmi-gpu", NOPOD, NOPOD)],
    # quotas and node limits: no workload
    "workloads-cr/kubernetes-sigs/kueue/site/static/examples/tas/sample-gpu-queues.yaml": [],
    "workloads-cr/kubernetes-sigs/kueue/site/static/examples/provisioning/provisioning-setup.yaml": [],
    "workloads-cr/awslabs/data-on-eks/infra/terraform/manifests/karpenter/nodepool-gpu-g6.yaml": [],
}

OPTIONS = {"default": [], "custom-resources": ["--include-custom-resources"]}


def _rel(path: str, work: Path) -> str:
    return Path(path).resolve().relative_to(work.resolve()).as_posix()


def _copy(tmp_path: Path) -> Path:
    work = tmp_path / "corpus"
    for d in ("workloads-cr", "device-plugin"):
        shutil.copytree(CORPUS / d, work / d, symlinks=True)
    return work


def _migrate(work: Path, capsys: pytest.CaptureFixture[str], opts: list[str]) -> dict[str, Any]:
    main(["migrate", "--isolated", "--no-cache", "--no-progress", "--format", "json", *opts,
          str(work / "workloads-cr"), str(work / "device-plugin")])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _errors(work: Path) -> Counter[tuple[str, str, str]]:
    cfg = build_config({"select": ["ALL"]}, None, REPO)
    cfg.use_cache = False
    result = lint_paths([str(work / "workloads-cr"), str(work / "device-plugin")], cfg)
    return Counter((_rel(f.path, work), f.rule, f.object.label() if f.object else "") for f in result.findings
                   if f.severity >= Severity.ERROR)


@requires_shared
def test_the_table_covers_every_gpu_workload_of_the_detection_table() -> None:
    from .test_real_workloads import EXPECTED

    assert set(TABLE) == set(EXPECTED)


@requires_shared
@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_migrate_outcome_of_every_gpu_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              option: str) -> None:
    work = _copy(tmp_path)
    report = _migrate(work, capsys, OPTIONS[option])
    got: dict[tuple[str, str, str], dict[str, Any]] = {}
    for w in report["workloads"]:
        got[(_rel(w["path"], work), w["kind"], w["name"])] = w
    col = 2 if option == "default" else 3
    want = {(rel, e[0], e[1]): e[col] for rel, es in TABLE.items() for e in es}
    assert sorted(got) == sorted(want)
    wrong = []
    for key, outcome in want.items():
        w = got[key]
        ok = w["status"] == "migrated" if outcome == M else (w["status"] == "skipped" and outcome in w["reason"])
        if not ok:
            wrong.append((key, outcome, w["status"], w["reason"]))
        # every skip says where and why
        assert w["line"] >= 1 and (w["status"] != "skipped" or w["reason"])
    assert wrong == []


def _claiming_pods(doc: Any) -> list[dict[str, Any]]:
    """The pod specs of a document that claim devices: every mapping with `resourceClaims` (a PodSpec,
    or a KServe predictor whose container is a framework shorthand)."""
    out: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("resourceClaims"):
                out.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    return out


@requires_shared
@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_what_the_migrated_corpus_must_show(tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str) -> None:
    work = _copy(tmp_path)
    before_errors = _errors(work)
    report = _migrate(work, capsys, OPTIONS[option])
    assert report["summary"]["failed_files"] == 0, report["failures"]
    listed = {(_rel(w["path"], work), w["kind"], w["name"]): w for w in report["workloads"]}
    # no GPU workload is left without a claim or a listed skip
    for rel, es in TABLE.items():
        for kind, name, *_ in es:
            assert (rel, kind, name) in listed, f"{rel}: {kind} {name} is not in the summary"
    migrated = [w for w in listed.values() if w["status"] == "migrated"]
    assert migrated
    for w in migrated:
        path = work / _rel(w["path"], work)
        docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        (doc,) = [d for d in docs if isinstance(d, dict) and d.get("kind") == w["kind"]
                  and ((d.get("metadata") or {}).get("name") or (d.get("metadata") or {}).get("generateName", "") + "*")
                  == w["name"]]
        claimed = _claiming_pods(doc)
        assert claimed, f"{w['path']}: {w['kind']} {w['name']} has no claim after migrate"
        for ps in claimed:
            # what is left of the pod once node selection and tolerations are set aside names no GPU resource
            rest = {k: v for k, v in ps.items() if k not in ("nodeSelector", "affinity", "tolerations")}
            assert '"nvidia.com/gpu' not in json.dumps(rest) and '"nvidia.com/mig-' not in json.dumps(rest), \
                f"{w['path']}: extended resource left"
            # the pod lost nvidia.com/<...>: it must tolerate the GPU nodes' taint as before
            tolerated = {t.get("key") for t in ps.get("tolerations") or [] if t.get("operator") == "Exists"}
            assert tolerated & {"nvidia.com/gpu", None, ""} or any(
                str(k).startswith("nvidia.com/") for k in tolerated), f"{w['path']}: no GPU toleration"
    # every .json file still parses as JSON
    for p in work.rglob("*.json"):
        json.loads(p.read_text(encoding="utf-8"))
    # `check` shows no new error-level finding
    new = _errors(work) - before_errors
    assert not new, sorted(new)[:5]
