"""The shared corpus of real manifests (skipped when ../shared is absent)."""

from __future__ import annotations

from collections import Counter

import pytest

from dralint.engine.config import build_config
from dralint.engine.pipeline import lint_paths

from .conftest import CORPUS, REPO, requires_shared

DEVICE_PLUGIN = CORPUS / "device-plugin"

# Written by reading each file, not by grepping for resource names: one finding per container and
# legacy resource (requests and limits of the same container count once). Files with no legacy
# request (the plugin DaemonSet, plugin config files, Helm values) are absent on purpose; the HAMi
# sample's `nvidia.com/gpu` is reported while its `gpucores`/`gpumem` (not NVIDIA's plugin) are not.
EXPECTED = {
    "GoogleCloudPlatform/kubernetes-engine-samples/ai-ml/gke-online-serving-single-gpu/src/gke-config/"
    "deployment-triton.yaml": {"DRA201": 1},
    "GoogleCloudPlatform/kubernetes-engine-samples/ai-ml/llm-multiple-gpus/llama3-70b/"
    "text-generation-inference.yaml": {"DRA201": 1},
    "NVIDIA/KAI-Scheduler/docs/batch/pytorch-job.yaml": {"DRA201": 2},  # master + worker
    "NVIDIA/KAI-Scheduler/docs/dra/gpu-imex-pod.yaml": {"DRA201": 1},  # next to an IMEX channel claim
    "NVIDIA/KAI-Scheduler/docs/quickstart/pods/gpu-pod.yaml": {"DRA201": 1},
    "NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-affinity-by-memory.yml": {"DRA201": 1},
    "NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-affinity.yml": {"DRA201": 1},
    "NVIDIA/deepops/workloads/examples/k8s/gpu-usage/gpu-with-selector.yml": {"DRA201": 1},
    "NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-mixed-with-selector.yml": {"DRA202": 1},
    "NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-mixed-without-selector.yml": {"DRA202": 1},
    "NVIDIA/deepops/workloads/examples/k8s/gpu-usage/mig-single.yml": {"DRA201": 1},
    "NVIDIA/deepops/workloads/examples/k8s/pytorch-job.yml": {"DRA201": 1},
    "NVIDIA/gpu-operator/tests/gpu-pod.yaml": {"DRA201": 1},
    "NVIDIA/gpu-operator/tests/plugin-test.yaml": {"DRA201": 1},
    "NVIDIA/k8s-device-plugin/testdata/job-1.yaml": {"DRA201": 1},
    "kubeflow/trainer/manifests/base/runtimes/torchtune/llama3_2/llama3_2_1B.yaml": {"DRA201": 1},
    "kubernetes-sigs/kueue/site/static/examples/serving-workloads/sample-hami.yaml": {"DRA201": 1},
    "kubernetes-sigs/kueue/site/static/examples/serving-workloads/sample-leaderworkerset-tas.yaml": {"DRA201": 1},
    "nebuly-ai/nos/demos/gpu-sharing-comparison/manifests/overlays/mig/patch.yaml": {"DRA202": 1},
    "nebuly-ai/nos/demos/gpu-sharing-comparison/manifests/overlays/ts/patch.yaml": {"DRA203": 1},
    "ray-project/kuberay/ray-operator/config/samples/ray-service.stable-diffusion.yaml": {"DRA201": 1},
}


@requires_shared
def test_every_legacy_request_in_the_device_plugin_corpus_is_reported() -> None:
    cfg = build_config({"select": ["DRA201", "DRA202", "DRA203"]}, None, REPO)
    result = lint_paths([str(DEVICE_PLUGIN)], cfg)
    assert result.internal_errors == []
    got: dict[str, Counter[str]] = {}
    for f in result.findings:
        rel = f.path.split("device-plugin/", 1)[1]
        got.setdefault(rel, Counter())[f.rule] += 1
    assert {k: dict(v) for k, v in got.items()} == EXPECTED
    assert sum(sum(v.values()) for v in EXPECTED.values()) == 22


@requires_shared
@pytest.mark.parametrize("sub", ["device-plugin", "nvidia-dra-driver"])
def test_nothing_crashes_on_the_corpus(sub: str) -> None:
    cfg = build_config({"select": ["ALL"]}, None, REPO)
    result = lint_paths([str(CORPUS / sub)], cfg)
    assert result.internal_errors == []
    assert result.missing == []
    assert len(result.files) > 10


@requires_shared
def test_compute_domain_channel_claim_next_to_device_plugin_gpus_is_not_double_counting() -> None:
    cfg = build_config({"select": ["DRA204"]}, None, REPO)
    result = lint_paths([str(CORPUS / "nvidia-dra-driver" / "demo" / "specs" / "imex"),
                         str(DEVICE_PLUGIN / "NVIDIA" / "KAI-Scheduler")], cfg)
    assert result.findings == []
