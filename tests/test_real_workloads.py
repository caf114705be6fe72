"""Real workloads from many operators (../shared/corpus/workloads-cr and device-plugin): every GPU
request is reported at its line, by the rule its place calls for.

The table was written by reading each file (and its PROVENANCE.md row), not from dralint's
output: DRA201/202/203 where a container asks for the resource (at the limit, or the request when
there is no limit; one per container and resource), DRA209 where an operator field holds the
count (NIM `spec.resources`, TrainJob `resourcesPerNode`, Spark `executor.gpu`, KubeVirt
`gpus[].deviceName`, Ray `num-gpus`, an unknown CR's stray `resources`), DRA210 where Kueue or
Karpenter count GPUs by the resource name. Skipped when ../shared is absent.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from dralint.engine.config import build_config
from dralint.engine.pipeline import lint_paths
from dralint.knowledge import k8s, workloads

from .conftest import CORPUS, REPO, requires_shared

RULES = ("DRA201", "DRA202", "DRA203", "DRA209", "DRA210")

#: file (below corpus/) -> {(rule, line)}
EXPECTED: dict[str, set[tuple[str, int]]] = {
    # -- workloads-cr: built-ins in odd files -----------------------------------------------------
    "workloads-cr/aws/karpenter-provider-aws/examples/workloads/gpu-nvidia.yaml": {("DRA201", 24)},
    # Service + Deployment without GPU + PyTorchJob (requests at 122, limits at 124)
    "workloads-cr/aws-samples/awsome-distributed-training/1.architectures/7.sagemaker-hyperpod-eks/"
    "task-governance/1-imagenet-gpu-team-a.yaml": {("DRA201", 124)},
    # -- Kubeflow training / MPI operators --------------------------------------------------------
    "workloads-cr/aws-samples/awsome-distributed-training/3.test_cases/pytorch/FSDP/kubernetes/"
    "llama3_1_8b-fsdp.yaml": {("DRA201", 45)},  # `$GPU_PER_NODE` placeholder, limits at 45
    "workloads-cr/aws-samples/awsome-distributed-training/micro-benchmarks/nccl-tests/kubernetes/"
    "nccl-tests.yaml": {("DRA201", 88)},
    # a ComputeDomain channel claim next to nvidia.com/gpu: the channel is no GPU class (no DRA204)
    "workloads-cr/aws-samples/awsome-distributed-training/micro-benchmarks/nccl-tests/kubernetes/"
    "nccl-tests-gb200.yaml": {("DRA201", 114)},
    "workloads-cr/kubeflow/mpi-operator/examples/v2beta1/tensorflow-benchmarks/tensorflow-benchmarks.yaml":
        {("DRA201", 52)},
    "workloads-cr/kubeflow/examples/tensorflow-horovod/mpi-job.yaml": {("DRA201", 49)},  # v1alpha1 spec.template
    "workloads-cr/kubeflow/examples/financial_time_series/tensorflow_model/GPU/tfjob3.yaml": {("DRA201", 29)},
    "workloads-cr/NVIDIA/deepops/workloads/examples/k8s/tensorflow-mpi-job.yml": {("DRA201", 53)},  # CRLF
    "workloads-cr/NVIDIA/deepops/workloads/examples/k8s/roce/multi_node_roce_jobfile.yaml": {("DRA201", 60)},
    # PaddlePaddle's own operator (batch.paddlepaddle.org)
    "workloads-cr/PaddleFlow/paddle-operator/deploy/examples/resnet.yaml": {("DRA201", 25)},
    # -- JobSet, Ray, Argo, KServe ----------------------------------------------------------------
    "workloads-cr/NVIDIA/JAX-Toolbox/.github/eks-workflow-files/jobset.yml": {("DRA201", 50)},
    # placeholder GPU count in the worker (limits 147) and its num-gpus (105)
    "workloads-cr/aws-samples/awsome-distributed-training/3.test_cases/pytorch/verl/kubernetes/rlvr/setup/"
    "raycluster.yaml": {("DRA201", 147), ("DRA209", 105)},
    "workloads-cr/argoproj-labs/hera/examples/workflows/use_cases/fine-tune-llama.yaml": {("DRA201", 234)},
    "workloads-cr/NVIDIA/nim-deploy/kserve/nim-models/llama3-8b-instruct_1xgpu_1.0.0.yaml": {("DRA201", 15)},
    # -- CRs the table does not list: the structural fallback --------------------------------------
    "workloads-cr/SeldonIO/seldon-core/examples/models/gpu_tensorflow_deep_mnist/deep_mnist_gpu.json":
        {("DRA201", 28)},
    "workloads-cr/kubeflow/katib/examples/v1beta1/nas/darts-gpu.yaml": {("DRA201", 89)},
    "workloads-cr/kaito-project/kaito/examples/custom-model-integration/custom-model-deployment.yaml":
        {("DRA201", 40)},
    # a `resources` map in a pod-config option, outside any PodSpec
    "workloads-cr/kubeflow/notebooks/workspaces/controller/manifests/kustomize/samples/"
    "jupyterlab_v1beta1_workspacekind.yaml": {("DRA209", 588)},
    # -- operator fields --------------------------------------------------------------------------
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nim/serving/standalone/basic/llm.yaml": {("DRA209", 46)},
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nim/serving/advanced/multi-node/multi-node-nimservice.yaml":
        {("DRA209", 82)},
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nim/pipelines/rag/rag-pipeline.yaml":
        {("DRA209", 25), ("DRA209", 47), ("DRA209", 71)},
    "workloads-cr/opendatahub-io/distributed-workloads/benchmarks/kftv2-mpi-ddp-sft/trainjob.yaml": {("DRA209", 24)},
    "workloads-cr/awslabs/data-on-eks/data-stacks/spark-on-eks/examples/spark-rapids/spark-rapids-app-gpus.yaml":
        {("DRA209", 62)},
    "workloads-cr/kubevirt/kubevirt/examples/vmi-gpu.yaml": {("DRA209", 19)},
    # -- quotas and node limits by resource name ---------------------------------------------------
    "workloads-cr/kubernetes-sigs/kueue/site/static/examples/tas/sample-gpu-queues.yaml":
        {("DRA210", 31), ("DRA210", 39)},
    "workloads-cr/kubernetes-sigs/kueue/site/static/examples/provisioning/provisioning-setup.yaml":
        {("DRA210", 13), ("DRA210", 21), ("DRA210", 54)},
    "workloads-cr/awslabs/data-on-eks/infra/terraform/manifests/karpenter/nodepool-gpu-g6.yaml": {("DRA210", 57)},
    # -- device-plugin corpus ---------------------------------------------------------------------
    "device-plugin/GoogleCloudPlatform/kubernetes-engine-samples/ai-ml/gke-online-serving-single-gpu/src/gke-config/"
    "deployment-triton.yaml": {("DRA201", 51)},
    "device-plugin/GoogleCloudPlatform/kubernetes-engine-samples/ai-ml/llm-multiple-gpus/llama3-70b/"
    "text-generation-inference.yaml": {("DRA201", 41)},
    "device-plugin/NVIDIA/KAI-Scheduler/docs/batch/pytorch-job.yaml": {("DRA201", 25), ("DRA201", 39)},
    "device-plugin/NVIDIA/KAI-Scheduler/docs/dra/gpu-imex-pod.yaml": {("DRA201", 29)},
    "device-plugin/NVIDIA/KAI-Scheduler/docs/quickstart/pods/gpu-pod.yaml": {("DRA201", 19)},
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-affinity-by-memory.yml": {("DRA201", 32)},
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-affinity.yml": {("DRA201", 29)},
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-selector.yml": {("DRA201", 21)},
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-mixed-with-selector.yml": {("DRA202", 17)},
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-mixed-without-selector.yml": {("DRA202", 15)},
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-single.yml": {("DRA201", 18)},
    "device-plugin/NVIDIA/deepops/workloads/examples/k8s/pytorch-job.yml": {("DRA201", 16)},
    "device-plugin/NVIDIA/gpu-operator/tests/gpu-pod.yaml": {("DRA201", 13)},
    "device-plugin/NVIDIA/gpu-operator/tests/plugin-test.yaml": {("DRA201", 33)},
    "device-plugin/NVIDIA/k8s-device-plugin/testdata/job-1.yaml": {("DRA201", 21)},
    "device-plugin/kubeflow/trainer/manifests/base/runtimes/torchtune/llama3_2/llama3_2_1B.yaml": {("DRA201", 102)},
    # HAMi reuses the name nvidia.com/gpu (reported); its gpucores/gpumem are not NVIDIA's plugin
    # (its ClusterQueue covers and limits the same name: 17, 23)
    "device-plugin/kubernetes-sigs/kueue/site/static/examples/serving-workloads/sample-hami.yaml":
        {("DRA201", 71), ("DRA210", 17), ("DRA210", 23)},
    "device-plugin/kubernetes-sigs/kueue/site/static/examples/serving-workloads/sample-leaderworkerset-tas.yaml":
        {("DRA201", 42)},
    "device-plugin/nebuly-ai/nos/demos/gpu-sharing-comparison/manifests/overlays/mig/patch.yaml": {("DRA202", 13)},
    "device-plugin/nebuly-ai/nos/demos/gpu-sharing-comparison/manifests/overlays/ts/patch.yaml": {("DRA203", 13)},
    "device-plugin/ray-project/kuberay/ray-operator/config/samples/ray-service.stable-diffusion.yaml":
        {("DRA201", 55)},
}

#: files that name GPUs without asking for one through a workload field, and why nothing is reported
NOT_REQUESTS = {
    "workloads-cr/NVIDIA/nim-deploy/cloud-service-providers/azure/blueprints/vss-blueprint-aks/"
    "overrides-single-gpu.yaml": "Helm values (nvidia.com/gpu: 0), no Kubernetes object",
    "workloads-cr/aws-samples/awsome-distributed-training/1.architectures/7.sagemaker-hyperpod-eks/slinky-slurm/p5/"
    "p5-values.yaml": "Helm values for the Slinky operator, no Kubernetes object",
    "workloads-cr/awslabs/ai-on-eks/infra/base/terraform/helm-values/jupyterhub-values.yaml": "Helm values",
    "workloads-cr/awslabs/ai-on-eks/infra/base/terraform/helm-values/jupyterhub-values-dummy.yaml": "Helm values",
    "workloads-cr/awslabs/ai-on-eks/infra/emr-spark-rapids/examples/xgboost/executor-pod-template.yaml":
        "a toleration only; the GPU comes from Spark configuration elsewhere",
    "workloads-cr/opendatahub-io/distributed-workloads/examples/stable-diffusion-dreambooth/yaml/distributed/"
    "workbench.yaml": "a toleration only",
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nemo/latest/apps_v1alpha1_nemocustomizer.yaml":
        "a toleration only; the count lives in a separate ConfigMap",
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nim/serving/advanced/dra/auto-creation/example1/llm.yaml":
        "already DRA (draResources)",
    "workloads-cr/NVIDIA/k8s-nim-operator/config/samples/nim/serving/standalone/confidential-computing/"
    "llm-kata-sandbox.yaml": "nvidia.com/pgpu, the Kata passthrough resource, not the GPU device plugin's",
    "workloads-cr/kubevirt/kubevirt/examples/vmi-dra-pgpu.yaml": "already DRA (claimName/requestName)",
    "workloads-cr/redhat-cop/gitops-catalog/openshift-ai/instance/components/nvidia-gpu-accelerator-profile/"
    "accelerator-profile.yaml": "the resource name is a value of a dashboard profile",
    "workloads-cr/kubeflow/pipelines/test_data/compiled-workflows/nvidia_gpu_scheduling_check.yaml":
        "named only inside JSON strings",
    "workloads-cr/kubeflow/pipelines/test_data/sdk_compiled_pipelines/valid/gpu-scheduling/"
    "nvidia_gpu_scheduling_check.yaml": "KFP pipeline IR, not a Kubernetes object",
    "workloads-cr/kubeflow/notebooks/components/crud-web-apps/jupyter/manifests/base/configs/"
    "spawner_ui_config.yaml": "a UI config value",
    "workloads-cr/kaito-project/kaito/examples/inference/kaito_inferenceset_mig_mixed_strategy.yaml":
        "an implicit MIG partition (mode/profile), no resource name",
    "device-plugin/NVIDIA/k8s-device-plugin/deployments/static/nvidia-device-plugin.yml": "the plugin itself",
    "device-plugin/NVIDIA/gpu-operator/tests/plugin-config.yaml": "device-plugin configuration",
    "device-plugin/nebuly-ai/nos/demos/gpu-sharing-comparison/values/nvidia-device-plugin.yaml": "plugin values",
    "device-plugin/kubeflow/trainer/hack/gpu-time-slicing.yml": "a ConfigMap with plugin configuration",
}


@pytest.fixture(scope="module")
def found() -> dict[str, set[tuple[str, int]]]:
    cfg = build_config({"select": list(RULES)}, None, REPO)
    cfg.use_cache = False
    result = lint_paths([str(CORPUS / "workloads-cr"), str(CORPUS / "device-plugin")], cfg)
    out: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for f in result.findings:
        rel = f.path.replace("\\", "/").split("/corpus/", 1)[-1]
        out[rel].add((f.rule, f.span.line))
    return out


@requires_shared
def test_every_file_of_the_corpus_is_in_one_table() -> None:
    files = {p.relative_to(CORPUS).as_posix() for d in ("workloads-cr", "device-plugin")
             for p in (CORPUS / d).rglob("*") if p.is_file() and p.name != "PROVENANCE.md"}
    assert files == set(EXPECTED) | set(NOT_REQUESTS)
    assert not set(EXPECTED) & set(NOT_REQUESTS)


#: files whose GPU request dralint does not reach yet, and why (strict: fixing it must update this)
KNOWN_MISSES: dict[str, str] = {}


def _cases() -> list[object]:
    return [pytest.param(rel, marks=pytest.mark.xfail(reason=KNOWN_MISSES[rel], strict=True))
            if rel in KNOWN_MISSES else rel for rel in sorted(EXPECTED)]


@requires_shared
@pytest.mark.parametrize("rel", _cases())
def test_gpu_requests_reported_at_their_line(rel: str, found: dict[str, set[tuple[str, int]]]) -> None:
    assert found.get(rel, set()) == EXPECTED[rel]


@requires_shared
@pytest.mark.parametrize("rel", sorted(NOT_REQUESTS))
def test_no_gpu_request_no_finding(rel: str, found: dict[str, set[tuple[str, int]]]) -> None:
    assert found.get(rel, set()) == set(), NOT_REQUESTS[rel]


# -- the table itself (no corpus needed) ---------------------------------------------------------

def test_builtin_entries_match_pod_spec_paths() -> None:
    builtins = {k: w for k, ws in workloads.table().by_kind.items() for w in ws if w.builtin}
    assert set(builtins) == set(k8s.POD_SPEC_PATHS)
    for kind, path in k8s.POD_SPEC_PATHS.items():
        assert workloads.builtin_pod_spec_path("v1" if kind in ("Pod", "PodTemplate", "ReplicationController")
                                               else f"{sorted(builtins[kind].groups)[0]}/v1", kind) == path


def test_kind_is_matched_with_its_group() -> None:
    volcano = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "spec": {"tasks": [
        {"name": "w", "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}]}}
    specs = k8s.pod_specs("Job", volcano)
    assert [ps.path for ps in specs] == [("spec", "tasks", 0, "template", "spec")]
    assert not workloads.is_builtin("batch.volcano.sh/v1alpha1", "Job")
    assert workloads.is_builtin("batch/v1", "Job")


def test_kserve_framework_shorthand_is_a_container() -> None:
    isvc = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "spec": {"predictor": {
        "pytorch": {"storageUri": "s3://m", "resources": {"limits": {"nvidia.com/gpu": 1}}},
        "containers": [{"name": "side", "image": "x"}]}}}
    [ps] = k8s.pod_specs("InferenceService", isvc)
    assert {c.path for c in k8s.containers(ps)} == {("spec", "predictor", "containers", 0),
                                                   ("spec", "predictor", "pytorch")}


def test_llm_inference_service_template_is_a_pod_spec() -> None:
    llm = {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "LLMInferenceService",
           "spec": {"template": {"containers": [{"name": "main", "image": "vllm"}]}}}
    assert [ps.path for ps in k8s.pod_specs("LLMInferenceService", llm)] == [("spec", "template")]


def test_argo_template_container_is_found() -> None:
    wf = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "spec": {"templates": [
        {"name": "steps", "steps": []},
        {"name": "train", "container": {"image": "t", "resources": {"limits": {"nvidia.com/gpu": 4}}},
         "sidecars": [{"name": "s", "image": "x"}]}]}}
    [ps] = k8s.pod_specs("Workflow", wf)
    assert not ps.is_pod_spec
    assert {c.path for c in k8s.containers(ps)} == {("spec", "templates", 1, "container"),
                                                   ("spec", "templates", 1, "sidecars", 0)}


def test_unknown_cr_fallback_finds_a_container_list_anywhere() -> None:
    cr = {"apiVersion": "example.com/v1", "kind": "Thing",
          "deep": {"runner": {"containers": [{"name": "a", "image": "b"}]}},
          "notpods": {"containers": ["just", "strings"]}}
    assert [ps.path for ps in k8s.pod_specs("Thing", cr)] == [("deep", "runner")]
