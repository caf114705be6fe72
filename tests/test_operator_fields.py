"""Operator fields that name or select GPUs outside any pod (issue 13): a VLLMRuntime's `gpuType`
and its sidecar's `gpu` (DRA209), a Karpenter NodePool's requirements on the instance's GPUs
(DRA210). Expected lines are those of the text below."""

from __future__ import annotations

from .conftest import lint_text

VLLM = """apiVersion: production-stack.vllm.ai/v1alpha1
kind: VLLMRuntime
metadata:
  name: v
spec:
  deploymentConfig:
    resources:
      gpu: "1"
      gpuType: nvidia.com/mig-1g.10gb
    sidecarConfig:
      resources:
        gpu: "1"
"""

NODEPOOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.k8s.aws/instance-gpu-manufacturer
          operator: In
          values: ["nvidia"]
"""


def _found(text: str, rule: str) -> list[tuple[int, str]]:
    return [(f.span.line, f.message) for f in lint_text(text, select=[rule]).findings if f.rule == rule]


def test_vllm_runtime_gpu_type_and_sidecar_gpu_are_reported() -> None:
    found = _found(VLLM, "DRA209")
    assert [line for line, _ in found] == [8, 9, 12]
    assert "`nvidia.com/mig-1g.10gb`" in found[1][1] and "sidecar" in found[2][1]


def test_a_gpu_type_of_another_vendor_is_not_a_device_plugin_gpu() -> None:
    found = _found(VLLM.replace("nvidia.com/mig-1g.10gb", "example.com/npu"), "DRA209")
    assert 9 not in [line for line, _ in found]


def test_nodepool_gpu_requirement_is_reported_at_its_key() -> None:
    found = _found(NODEPOOL, "DRA210")
    assert [line for line, _ in found] == [12]
    assert "karpenter.k8s.aws/instance-gpu-manufacturer In nvidia" in found[0][1]
    assert _found(NODEPOOL.replace("instance-gpu-manufacturer", "instance-family"), "DRA210") == []


def test_the_workload_table_lookups_are_remembered_only_for_short_names() -> None:
    """`workloads.lookup` remembers its answers for the run; the strings come from the linted files,
    so a huge kind is answered but not kept."""
    from dralint.knowledge import workloads

    huge = "K" * 10_000
    assert workloads.lookup("example.com/v1", huge) is None
    assert ("example.com/v1", huge) not in workloads._LOOKUPS
    deployment = workloads.lookup("apps/v1", "Deployment")
    assert deployment is not None and workloads._LOOKUPS[("apps/v1", "Deployment")] is deployment
