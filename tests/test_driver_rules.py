"""DRA106, DRA207, DRA305 notes, DRA502 and DRA503 against the driver release in the profile."""

from __future__ import annotations

from typing import Any

import pytest

from dralint.engine.runner import Result

from .conftest import CORPUS, codes, lint_text, requires_shared

GPU = "gpu.nvidia.com"
CD = "compute-domain.nvidia.com"


def driver(version: str | None = None, **gates: bool) -> dict[str, Any]:
    """Config for both NVIDIA plugins at ``version`` with ``gates``."""
    out = []
    for name in (GPU, CD):
        entry: dict[str, Any] = {"name": name}
        if version:
            entry["version"] = version
        if gates and name == GPU:
            entry["feature-gates"] = gates
        out.append(entry)
    return {"drivers": out}


def claim(requests: str, config: str = "", kind: str = "ResourceClaimTemplate") -> str:
    """A v1 claim (template) with the given requests/config YAML, indented for ``devices``."""
    ind = "      " if kind == "ResourceClaimTemplate" else "    "
    body = "\n".join(ind + line for line in (requests + config).strip("\n").splitlines())
    head = "spec:\n  spec:\n    devices:\n" if kind == "ResourceClaimTemplate" else "spec:\n  devices:\n"
    return f"apiVersion: resource.k8s.io/v1\nkind: {kind}\nmetadata:\n  name: c\n{head}{body}\n"


GPU_REQ = """
requests:
- name: gpu
  exactly:
    deviceClassName: gpu.nvidia.com
"""
MIG_REQ = """
- name: slice
  exactly:
    deviceClassName: mig.nvidia.com
"""


def gpu_config(params: str, requests: str = '["gpu"]', drv: str = GPU) -> str:
    lines = "\n".join("      " + x for x in params.strip("\n").splitlines())
    return f"""
config:
- requests: {requests}
  opaque:
    driver: {drv}
    parameters:
      apiVersion: resource.nvidia.com/v1beta1
{lines}
"""


def found(result: Result, code: str) -> list[tuple[int, int, str]]:
    assert result.internal_errors == []
    return [(f.span.line, f.span.column, f.message) for f in result.findings if f.rule == code]


# --- DRA106 ----------------------------------------------------------------------------------------

def test_dra106_positions_and_messages() -> None:
    text = claim(GPU_REQ, gpu_config("kind: GpuConfig\nsharing:\n  strategy: TimeSlicing\n"
                                     "  timeSlicingConfig:\n    interval: Forever\n  mpsConfig: {}\n"))
    got = found(lint_text(text, select=["DRA106"], **driver(TimeSlicingSettings=True)), "DRA106")
    lines = text.splitlines()
    assert [(line, lines[line - 1].strip()) for line, _, _ in got] == [
        (23, "interval: Forever"), (24, "mpsConfig: {}")]
    assert "`interval` must be one of `Default`, `Short`, `Medium`, `Long`, got \"Forever\"" in got[0][2]
    assert got[0][2].startswith("GpuConfig: ")
    assert "gpu.nvidia.com v0.4.1 rejects this when it prepares the claim, and the pod does not start" in got[0][2]
    assert "`mpsConfig` cannot be combined with `strategy: TimeSlicing`" in got[1][2]


def test_dra106_kind_must_fit_the_device_type() -> None:
    text = claim(GPU_REQ + MIG_REQ, gpu_config("kind: GpuConfig", '["gpu", "slice"]'))
    got = found(lint_text(text, select=["DRA106"]), "DRA106")
    assert len(got) == 1
    assert "GpuConfig applies to `gpu` devices, but it names request `slice` (class `mig.nvidia.com`, `mig` " \
           "devices: use `MigDeviceConfig`)" in got[0][2]
    assert text.splitlines()[got[0][0] - 1].strip() == "kind: GpuConfig"
    ok = claim(GPU_REQ + MIG_REQ, gpu_config("kind: MigDeviceConfig", '["slice"]'))
    assert found(lint_text(ok, select=["DRA106"]), "DRA106") == []


def test_dra106_subrequests_and_whole_requests() -> None:
    reqs = """
requests:
- name: acc
  firstAvailable:
  - name: full
    deviceClassName: gpu.nvidia.com
  - name: part
    deviceClassName: mig.nvidia.com
"""
    whole = found(lint_text(claim(reqs, gpu_config("kind: GpuConfig", '["acc"]')), select=["DRA106"]), "DRA106")
    assert len(whole) == 1 and "`acc/part` (class `mig.nvidia.com`" in whole[0][2]
    sub = claim(reqs, gpu_config("kind: GpuConfig", '["acc/full"]'))
    assert found(lint_text(sub, select=["DRA106"]), "DRA106") == []


def test_dra106_config_driver_must_match_the_class() -> None:
    reqs = """
requests:
- name: channel
  exactly:
    deviceClassName: compute-domain-default-channel.nvidia.com
"""
    named = claim(reqs, gpu_config("kind: GpuConfig", '["channel"]'))
    got = found(lint_text(named, select=["DRA106"]), "DRA106")
    assert len(got) == 1 and "names request `channel` (class `compute-domain-default-channel.nvidia.com` of " \
                             "driver `compute-domain.nvidia.com`)" in got[0][2]
    assert named.splitlines()[got[0][0] - 1].strip() == "driver: gpu.nvidia.com"
    everything = claim(reqs, gpu_config("kind: GpuConfig", "[]"))
    got = found(lint_text(everything, select=["DRA106"]), "DRA106")
    assert len(got) == 1 and "applies to all requests, but every request uses a class of " \
                             "`compute-domain.nvidia.com`" in got[0][2]


def test_dra106_uses_device_classes_from_the_linted_set() -> None:
    dc = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: small-mig.example.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
"""
    reqs = "requests:\n- name: s\n  exactly:\n    deviceClassName: small-mig.example.com\n"
    text = claim(reqs, gpu_config("kind: GpuConfig", '["s"]'))
    got = found(lint_text(text, select=["DRA106"], context=[("classes.yaml", dc)]), "DRA106")
    assert len(got) == 1 and "class `small-mig.example.com`, `mig` devices" in got[0][2]
    # without the class in the set nothing is known about it: no guess
    assert found(lint_text(text, select=["DRA106"]), "DRA106") == []


def test_dra106_device_class_configs() -> None:
    text = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: mps-mig.example.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
  config:
  - opaque:
      driver: gpu.nvidia.com
      parameters:
        apiVersion: resource.nvidia.com/v1beta1
        kind: GpuConfig
        sharing: {strategy: Mps}
"""
    got = found(lint_text(text, select=["DRA106"]), "DRA106")
    assert [g[0] for g in got] == [15]
    assert "got \"Mps\"" in got[0][2] and "when it prepares claims of this class" in got[0][2]
    fixed = text.replace("{strategy: Mps}", "{strategy: MPS}")
    got = found(lint_text(fixed, select=["DRA106"]), "DRA106")
    assert len(got) == 1 and "this class selects `mig` devices: the config never takes effect; use " \
                             "`MigDeviceConfig`" in got[0][2]


def test_dra106_one_vfio_config_per_claim() -> None:
    reqs = "requests:\n- name: a\n  exactly:\n    deviceClassName: vfio.gpu.nvidia.com\n" \
           "- name: b\n  exactly:\n    deviceClassName: vfio.gpu.nvidia.com\n"
    cfg = gpu_config("kind: VfioDeviceConfig", '["a"]') + gpu_config("kind: VfioDeviceConfig", '["b"]').replace(
        "config:\n", "")
    got = found(lint_text(claim(reqs, cfg), select=["DRA106"], **driver(PassthroughSupport=True)), "DRA106")
    assert len(got) == 1 and "at most 1 `VfioDeviceConfig` config" in got[0][2]


@pytest.mark.parametrize(("version", "params", "fragment"), [
    ("25.8", "kind: VfioDeviceConfig", "`VfioDeviceConfig` exists from v25.12.0 on"),
    ("25.12.0", "kind: VfioDeviceConfig\niommu: {enableAPIDevice: true}", "added in v0.4.0"),
    (None, "kind: GpuClaimParameters", "classic-DRA parameters"),
])
def test_dra106_follows_the_release(version: str | None, params: str, fragment: str) -> None:
    text = claim(GPU_REQ, gpu_config(params))
    if "GpuClaimParameters" in params:
        text = text.replace("resource.nvidia.com/v1beta1", "gpu.resource.nvidia.com/v1alpha1")
    got = found(lint_text(text, select=["DRA106"], **driver(version, PassthroughSupport=True)
                          if version not in ("25.8",) else driver(version)), "DRA106")
    assert any(fragment in m for _, _, m in got), got


def test_dra106_ignores_other_drivers_and_odd_shapes() -> None:
    other = claim(GPU_REQ, gpu_config("kind: Whatever\nfoo: 1", drv="dra.example.com"))
    assert found(lint_text(other, select=["DRA106"]), "DRA106") == []
    odd = claim(GPU_REQ, "config:\n- 3\n- opaque: [1]\n- opaque: {driver: gpu.nvidia.com}\n"
                         "- requests: 7\n  opaque: {driver: gpu.nvidia.com, parameters: null}\n")
    got = found(lint_text(odd, select=["DRA106", "DRA502", "DRA503"]), "DRA106")
    assert len(got) == 1 and "`parameters` must be a mapping" in got[0][2]


# --- DRA502 ----------------------------------------------------------------------------------------

TS = "kind: GpuConfig\nsharing:\n  strategy: TimeSlicing\n  timeSlicingConfig: {interval: Long}\n"
MPS = "kind: GpuConfig\nsharing:\n  strategy: MPS\n"


@pytest.mark.parametrize(("version", "gates", "params", "expected"), [
    (None, {}, TS, ["TimeSlicingSettings"]),
    (None, {"TimeSlicingSettings": True}, TS, []),
    (None, {}, MPS, ["MPSSupport"]),
    (None, {"MPSSupport": True}, MPS, []),
    ("25.3", {}, TS, []),       # no gates in v25.3.x: both strategies work
    ("25.3", {}, MPS, []),
    ("25.8", {}, TS, ["TimeSlicingSettings"]),
    ("main", {}, MPS, ["MPSSupport"]),
    (None, {}, "kind: GpuConfig\n", []),
])
def test_dra502_sharing_gates_per_release(version: str | None, gates: dict[str, bool], params: str,
                                         expected: list[str]) -> None:
    got = found(lint_text(claim(GPU_REQ, gpu_config(params)), select=["DRA502"], **driver(version, **gates)),
                "DRA502")
    assert [g for _, _, m in got for g in expected if f"`{g}`" in m] == expected
    assert len(got) == len(expected)
    if got:
        assert "featureGates: {" in got[0][2] and "feature-gates: {" in got[0][2]


def test_dra502_mig_sharing_and_position() -> None:
    text = claim("requests:" + MIG_REQ, gpu_config("kind: MigDeviceConfig\nsharing: {strategy: MPS}", '["slice"]'))
    got = found(lint_text(text, select=["DRA502"]), "DRA502")
    assert len(got) == 1 and "MigDeviceConfig: MPS sharing needs the gpu.nvidia.com driver feature gate " \
                             "`MPSSupport`, which is off in the profile (v0.4.1, Alpha, default off)" in got[0][2]
    assert "strategy: MPS" in text.splitlines()[got[0][0] - 1]


def test_dra502_vfio_class_and_config_once_per_gate() -> None:
    reqs = "requests:\n- name: gpu\n  exactly:\n    deviceClassName: vfio.gpu.nvidia.com\n"
    text = claim(reqs, gpu_config("kind: VfioDeviceConfig"))
    got = found(lint_text(text, select=["DRA502"]), "DRA502")
    assert len(got) == 1 and "class `vfio.gpu.nvidia.com` needs" in got[0][2] and "stays Pending" in got[0][2]
    assert found(lint_text(text, select=["DRA502"], **driver(PassthroughSupport=True)), "DRA502") == []
    only_config = found(lint_text(claim(GPU_REQ, gpu_config("kind: VfioDeviceConfig", "[]")), select=["DRA502"]),
                        "DRA502")
    assert len(only_config) == 1 and "VfioDeviceConfig: `VfioDeviceConfig` needs" in only_config[0][2]


def test_dra502_gated_attributes_and_capacities_on_main() -> None:
    reqs = """
requests:
- name: gpus
  exactly:
    deviceClassName: gpu.nvidia.com
    count: 2
    selectors:
    - cel:
        expression: device.attributes['gpu.nvidia.com'].gpuModuleID >= 0
    capacity:
      requests:
        shares: "1"
constraints:
- requests: ["gpus"]
  matchAttribute: gpu.nvidia.com/partition2
"""
    text = claim(reqs)
    got = found(lint_text(text, select=["DRA502"], **driver("main")), "DRA502")
    assert [m.split(" needs")[0] for _, _, m in got] == [
        "selector reads attribute `gpu.nvidia.com/gpuModuleID`", "request for capacity `shares`"]
    assert "`ConsumableShares`" in got[1][2]
    on = driver("main", FabricManagerPartitioning=True, ConsumableShares=True)
    assert found(lint_text(text, select=["DRA502"], **on), "DRA502") == []
    # not a gate question before main (the attributes do not exist there at all)
    assert found(lint_text(text, select=["DRA502"], **driver("0.4.1")), "DRA502") == []


# --- DRA503 ----------------------------------------------------------------------------------------

def test_dra503_gpu_allocation_is_a_preview() -> None:
    got = found(lint_text(claim(GPU_REQ + MIG_REQ), select=["DRA503"], **driver("0.4.0")), "DRA503")
    assert len(got) == 1 and "not officially supported in v0.4.0" in got[0][2] and got[0][0] == 11
    channel = claim("requests:\n- name: c\n  exactly:\n"
                    "    deviceClassName: compute-domain-default-channel.nvidia.com\n")
    assert found(lint_text(channel, select=["DRA503"]), "DRA503") == []


def test_dra503_alpha_gates_in_use() -> None:
    text = claim(GPU_REQ, gpu_config(MPS))
    got = found(lint_text(text, select=["DRA503"], **driver(MPSSupport=True)), "DRA503")
    assert [m.split(":")[0] for _, _, m in got] == ["class `gpu.nvidia.com`", "GpuConfig"]
    assert "relies on the Alpha driver feature gate `MPSSupport` of gpu.nvidia.com v0.4.1" in got[1][2]
    # with the gate off DRA502 speaks instead
    assert len(found(lint_text(text, select=["DRA503"]), "DRA503")) == 1


def test_dra503_is_off_by_default() -> None:
    assert "DRA503" not in codes(lint_text(claim(GPU_REQ)))


# --- DRA305 notes ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("cls", "config", "fragment"), [
    ("imex.nvidia.com", {}, "IMEX channels now come from a ComputeDomain"),
    ("vfio.gpu.nvidia.com", driver("25.8"), "installed from v25.12.0 on"),
    ("vfio.gpu.nvidia.com", {"drivers": [{"name": CD, "version": "0.4.1"}]}, "add `gpu.nvidia.com` to `drivers`"),
    ("nvidia.com/gpu", {}, "extended resource name, not a DeviceClass"),
])
def test_dra305_notes(cls: str, config: dict[str, Any], fragment: str) -> None:
    text = claim(f"requests:\n- name: r\n  exactly:\n    deviceClassName: {cls}\n")
    got = found(lint_text(text, select=["DRA305"], **config), "DRA305")
    assert len(got) == 1 and fragment in got[0][2]


@pytest.mark.parametrize(("cls", "config"), [
    ("vfio.gpu.nvidia.com", driver("25.12.0")),
    ("vfio.gpu.nvidia.com", {}),
    ("gpu.nvidia.com", driver("25.3")),
    ("compute-domain-default-channel.nvidia.com", {"drivers": [{"name": CD}]}),
])
def test_dra305_installed_classes(cls: str, config: dict[str, Any]) -> None:
    text = claim(f"requests:\n- name: r\n  exactly:\n    deviceClassName: {cls}\n")
    assert found(lint_text(text, select=["DRA305"], **config), "DRA305") == []


# --- DRA207 ----------------------------------------------------------------------------------------

OPERATOR_DRA = "operator: {defaultRuntime: containerd}\ndriver: {enabled: true}\ndevicePlugin: {enabled: false}\n" \
               "gpuCluster:\n  deployCR: true\n"
OPERATOR_PLUGIN = "operator: {defaultRuntime: containerd}\ndriver: {enabled: true}\ntoolkit: {enabled: true}\n"
DRA_CHART = "resources:\n  gpus: {enabled: true}\ngpuResourcesEnabledOverride: true\nkubeletPlugin: {}\n"
PLUGIN_CHART = "migStrategy: mixed\nconfig: {name: time-slicing}\n"


def test_dra207_across_two_files() -> None:
    r = lint_text(DRA_CHART, path="dra/values.yaml", select=["DRA207"], context=[("gpu/values.yaml", PLUGIN_CHART)])
    got = found(r, "DRA207")
    assert len(got) == 1 and got[0][:2] == (3, 1)
    assert "NVIDIA DRA driver chart values turn on DRA GPU allocation (`resources.gpus.enabled: true` and " \
           "`gpuResourcesEnabledOverride: true`) while the device plugin is enabled in gpu/values.yaml (NVIDIA " \
           "device-plugin chart values)" in got[0][2]
    # reported once: on the DRA side, not again on the device-plugin values
    r = lint_text(PLUGIN_CHART, path="gpu/values.yaml", select=["DRA207"], context=[("dra/values.yaml", DRA_CHART)])
    assert found(r, "DRA207") == []


def test_dra207_operator_with_dra_chart_and_single_file() -> None:
    r = lint_text(DRA_CHART, path="dra.yaml", select=["DRA207"], context=[("op.yaml", OPERATOR_PLUGIN)])
    assert "op.yaml (GPU Operator values)" in found(r, "DRA207")[0][2]
    both = OPERATOR_DRA.replace("devicePlugin: {enabled: false}\n", "")
    got = found(lint_text(both, select=["DRA207"]), "DRA207")
    assert len(got) == 1 and got[0][:2] == (4, 3)
    assert "`devicePlugin.enabled` defaulting to true and `clusterPolicy.deployCR` defaulting to true" in got[0][2]
    assert found(lint_text(OPERATOR_DRA, select=["DRA207"]), "DRA207") == []


@pytest.mark.parametrize(("dra", "plugin"), [
    ("resources:\n  gpus: {enabled: true}\ngpuResourcesEnabledOverride: false\nkubeletPlugin: {}\n", PLUGIN_CHART),
    ("resources:\n  gpus: {enabled: false}\ngpuResourcesEnabledOverride: true\nkubeletPlugin: {}\n", PLUGIN_CHART),
    (DRA_CHART, "migStrategy: none\ndevicePlugin: {enabled: false}\nfailOnInitError: true\n"),
    (DRA_CHART, "image: {repository: x}\nresources: {}\n"),  # not recognised as any chart
])
def test_dra207_quiet_when_one_side_is_off(dra: str, plugin: str) -> None:
    r = lint_text(dra, path="a.yaml", select=["DRA207"], context=[("b.yaml", plugin)])
    assert found(r, "DRA207") == []


def test_dra207_helm_truthiness() -> None:
    # a Helm `if` treats the string "false" as true
    quoted = DRA_CHART.replace("{enabled: true}", '{enabled: "false"}')
    r = lint_text(quoted, path="a.yaml", select=["DRA207"], context=[("b.yaml", PLUGIN_CHART)])
    assert len(found(r, "DRA207")) == 1


def test_dra207_values_files_from_config() -> None:
    bare_dra = "gpuResourcesEnabledOverride: true\n"  # too little to recognise... except it is a strong key
    bare_plugin = "devicePlugin: {enabled: true}\n"
    r = lint_text(bare_dra, path="deploy/dra.yaml", select=["DRA207"], context=[("deploy/plugin.yaml", bare_plugin)])
    assert found(r, "DRA207") == []
    r = lint_text(bare_dra, path="deploy/dra.yaml", select=["DRA207"], context=[("deploy/plugin.yaml", bare_plugin)],
                  **{"values-files": {"device-plugin": ["deploy/plugin*.yaml"]}})
    assert len(found(r, "DRA207")) == 1


def test_dra207_umbrella_chart_and_daemonsets() -> None:
    umbrella = "gpu-operator:\n  devicePlugin: {enabled: true}\n  gpuCluster: {deployCR: true}\n"
    got = found(lint_text(umbrella, select=["DRA207"]), "DRA207")
    assert len(got) == 1 and got[0][:2] == (3, 16)
    ds = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-device-plugin-daemonset}
spec:
  template:
    spec:
      containers:
      - name: plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
"""
    r = lint_text(DRA_CHART, path="dra.yaml", select=["DRA207"], context=[("ds.yaml", ds)])
    assert "ds.yaml (DaemonSet `nvidia-device-plugin-daemonset`)" in found(r, "DRA207")[0][2]
    kubelet = ds.replace("nvidia-device-plugin-daemonset", "dra-kubelet-plugin").replace(
        "name: plugin", "name: gpus").replace("nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                                              "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1")
    r = lint_text(PLUGIN_CHART, path="plugin.yaml", select=["DRA207"], context=[("ds.yaml", kubelet)])
    got = found(r, "DRA207")
    assert len(got) == 1 and "DRA driver's GPU plugin is deployed by ds.yaml (DaemonSet `dra-kubelet-plugin`)" \
        in got[0][2]


def test_dra207_same_chart_files_are_not_paired() -> None:
    # base values and an override of one chart are layered by Helm, not two installs
    r = lint_text(OPERATOR_DRA, path="values-dra.yaml", select=["DRA207"],
                  context=[("values.yaml", OPERATOR_PLUGIN + "devicePlugin: {enabled: true}\n")])
    assert found(r, "DRA207") == []


def test_dra207_odd_documents_do_not_crash() -> None:
    text = "- a\n---\n42\n---\ngpuCluster: 3\nclusterPolicy: [1]\ndevicePlugin: x\n---\nresources: {gpus: 1}\n"
    assert lint_text(text, select=["DRA207"]).internal_errors == []


# --- the upstream demos -----------------------------------------------------------------------------

QUICKSTART = CORPUS / "nvidia-dra-driver" / "demo" / "specs" / "quickstart" / "v1"
EXPECTED_DEFAULT = {
    "gpu-test5.yaml": [("DRA502", "TimeSlicingSettings"), ("DRA502", "MPSSupport")],
    "gpu-test-mps.yaml": [("DRA502", "MPSSupport")],
    "gpu-test-vfio-config.yaml": [("DRA502", "PassthroughSupport")],
}
ALL_GATES = driver(None, TimeSlicingSettings=True, MPSSupport=True, PassthroughSupport=True)


def _corpus(name: str, config: dict[str, Any]) -> list[tuple[str, str]]:
    path = QUICKSTART / name
    r = lint_text(path.read_bytes(), path=str(path), select=["DRA106", "DRA502"], **config)
    assert r.internal_errors == []
    return [(f.rule, f.message) for f in r.findings]


@requires_shared
@pytest.mark.parametrize("name", sorted(EXPECTED_DEFAULT))
def test_quickstart_demos_with_default_gates(name: str) -> None:
    got = _corpus(name, {})
    assert len(got) == len(EXPECTED_DEFAULT[name])
    for (code, message), (want_code, gate) in zip(got, EXPECTED_DEFAULT[name], strict=True):
        assert code == want_code and f"`{gate}`" in message


@requires_shared
@pytest.mark.parametrize("name", sorted(EXPECTED_DEFAULT))
def test_quickstart_demos_with_gates_enabled(name: str) -> None:
    assert _corpus(name, ALL_GATES) == []


@requires_shared
def test_all_quickstart_v1_demos_are_valid_configs() -> None:
    for path in sorted(QUICKSTART.glob("*.yaml")):
        assert [c for c, _ in _corpus(path.name, ALL_GATES)] == [], path.name


ODD_SHAPES = [
    "spec: 5",
    "spec: {selectors: 5, config: 7}",
    "spec: {selectors: [5, {cel: 3}, {cel: {expression: 4}}], config: [{opaque: {driver: gpu.nvidia.com, "
    "parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: [1]}}}]}",
    "metadata: 3\nspec: {selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}}], "
    "config: [{opaque: {driver: gpu.nvidia.com, parameters: {kind: 3, apiVersion: [1]}}}]}",
]


@pytest.mark.parametrize("body", ODD_SHAPES)
@pytest.mark.parametrize("kind", ["DeviceClass", "ResourceClaim", "ResourceClaimTemplate"])
def test_odd_shapes_never_crash(kind: str, body: str) -> None:
    text = f"apiVersion: resource.k8s.io/v1\nkind: {kind}\nmetadata: {{name: x}}\n{body}\n"
    for spec_body in (text, text.replace("spec: {", "spec: {spec: {devices: {requests: 3, constraints: [1, "
                                                   "{matchAttribute: 5}], config: 7}}, x: {")):
        r = lint_text(spec_body, select=["DRA106", "DRA502", "DRA503", "DRA207"], **driver("main"))
        assert r.internal_errors == []


def test_odd_mps_values_are_reported_not_crashed() -> None:
    params = "kind: GpuConfig\nsharing:\n  strategy: MPS\n  mpsConfig:\n    defaultActiveThreadPercentage: 5.5\n" \
             "    defaultPinnedDeviceMemoryLimit: [1]\n    defaultPerDevicePinnedMemoryLimit: 3\n"
    got = found(lint_text(claim(GPU_REQ, gpu_config(params)), select=["DRA106"], **driver(MPSSupport=True)),
                "DRA106")
    assert [m.split(";")[0] for _, _, m in got] == [
        "GpuConfig: `defaultActiveThreadPercentage` must be an integer, got the number 5.5",
        "GpuConfig: `defaultPinnedDeviceMemoryLimit` must be a quantity such as 10Gi, got a list",
        "GpuConfig: `defaultPerDevicePinnedMemoryLimit` must be a mapping, got the number 3",
    ]


def test_dra106_configs_that_read_alike_are_judged_each_on_its_own() -> None:
    """A run judges each distinct parameters value once; values that read alike (a number and a
    quoted number, an integer and a float) still get their own verdicts, on their own lines."""
    mps = "kind: GpuConfig\nsharing:\n  strategy: MPS\n  mpsConfig:\n    defaultActiveThreadPercentage: {}\n"
    docs = [claim(GPU_REQ, gpu_config(mps.format(v))).replace("name: c\n", f"name: c{i}\n")
            for i, v in enumerate(["50", '"50"', "50", "50.0", "500", '"50"'])]
    text = "---\n".join(docs)
    got = found(lint_text(text, select=["DRA106"], **driver(MPSSupport=True)), "DRA106")
    starts = [sum(d.count("\n") + 1 for d in docs[:i]) for i in range(len(docs))]
    per_doc = [sorted(m.split(";")[0] for line, _, m in got if starts[i] < line <= starts[i] + docs[i].count("\n"))
               for i in range(len(docs))]
    assert per_doc[0] == per_doc[2] == []
    assert per_doc[1] == per_doc[5] and per_doc[1] and "integer" in per_doc[1][0]
    assert per_doc[3] and "integer" in per_doc[3][0]
    assert per_doc[4] and "100" in per_doc[4][0]
