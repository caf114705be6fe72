"""The NVIDIA DRA driver data per release, read through `dralint.knowledge.drivers`."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from dralint.cel.values import Quantity
from dralint.cli.app import main
from dralint.engine.config import ConfigError, build_config
from dralint.knowledge import drivers
from dralint.knowledge.catalog import load_data
from dralint.knowledge.profile import ClusterProfile, DriverProfile, ProfileError

from .conftest import CORPUS, REPO, requires_shared

GPU = "gpu.nvidia.com"
CD = "compute-domain.nvidia.com"
RELEASES = ["v25.3.x", "v25.8.x", "v25.12.0", "v0.4.0", "v0.4.1", "main"]


def prof(version: str | None = None, gates: dict[str, bool] | None = None, names: tuple[str, ...] = (GPU, CD)
         ) -> ClusterProfile:
    return ClusterProfile(drivers=[DriverProfile(n, version, dict(gates or {})) for n in names])


def test_release_order_and_default() -> None:
    assert drivers.releases(GPU) == RELEASES
    assert drivers.releases(CD) == RELEASES
    assert drivers.releases("dra.example.com") == []
    # the default profile (no drivers listed) is the newest tagged release with both plugins
    s = drivers.setup_for(ClusterProfile(), GPU)
    assert s is not None and s.release == "v0.4.1" and s.installed
    assert s.components == frozenset({GPU, CD})


@pytest.mark.parametrize(("spelling", "release"), [
    ("0.4.1", "v0.4.1"), ("v0.4.1", "v0.4.1"), ("0.4.0", "v0.4.0"), ("0.4", "v0.4.1"),
    ("25.12.0", "v25.12.0"), ("v25.12", "v25.12.0"), ("25.8.1", "v25.8.x"), ("v25.8.x", "v25.8.x"),
    ("25.3", "v25.3.x"), ("v25.3.2", "v25.3.x"), ("main", "main"), ("MAIN", "main"), ("0.5.0-dev", "main"),
    ("v0.4.1-rc.1", "v0.4.1"), (None, "v0.4.1"), ("", "v0.4.1"),
])
def test_version_spellings(spelling: str | None, release: str) -> None:
    assert drivers.normalize_release(GPU, spelling) == release


@pytest.mark.parametrize("bad", ["0.9", "26.1.0", "25.3.7", "0.5.0", "latest", "v1"])
def test_unknown_versions_are_profile_errors(bad: str) -> None:
    with pytest.raises(ProfileError, match=r"unknown release .*known releases: v25\.3\.x \(25\.3\.0"):
        drivers.normalize_release(GPU, bad)


CLASSES = {
    "v25.3.x": {"gpu.nvidia.com", "mig.nvidia.com", "compute-domain-daemon.nvidia.com",
                "compute-domain-default-channel.nvidia.com"},
    "v25.8.x": {"gpu.nvidia.com", "mig.nvidia.com", "compute-domain-daemon.nvidia.com",
                "compute-domain-default-channel.nvidia.com"},
    "v25.12.0": {"gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com", "compute-domain-daemon.nvidia.com",
                 "compute-domain-default-channel.nvidia.com"},
}


@pytest.mark.parametrize("release", RELEASES)
def test_installed_classes_per_release(release: str) -> None:
    want = CLASSES.get(release, CLASSES["v25.12.0"])
    assert drivers.installed_classes(prof(release)) == want
    assert "imex.nvidia.com" not in drivers.installed_classes(prof(release))


def test_installed_classes_follow_the_listed_plugins() -> None:
    assert drivers.installed_classes(prof("0.4.1", names=(CD,))) == {
        "compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com"}
    assert drivers.installed_classes(prof("0.4.1", names=(GPU,))) == {
        "gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com"}
    # another vendor's driver only: nothing of NVIDIA's is installed
    assert drivers.installed_classes(ClusterProfile(drivers=[DriverProfile("dra.example.com")])) == set()
    # a version given on one plugin applies to its sibling from the same chart
    p = ClusterProfile(drivers=[DriverProfile(GPU, "25.8"), DriverProfile(CD)])
    assert "vfio.gpu.nvidia.com" not in drivers.installed_classes(p)


@pytest.mark.parametrize(("name", "profile", "fragment"), [
    ("imex.nvidia.com", prof(), "removed from the NVIDIA DRA driver before v25.3.0"),
    ("imex.nvidia.com", prof("25.3"), "compute-domain-default-channel.nvidia.com"),
    ("vfio.gpu.nvidia.com", prof("25.8"), "installed from v25.12.0 on; the configured gpu.nvidia.com release "
                                           "v25.8.x does not have it"),
    ("vfio.gpu.nvidia.com", prof("0.4.1", names=(CD,)), "installed only with the `gpu.nvidia.com` plugin"),
    ("gpu.nvidia.com", prof("0.4.1", names=(CD,)), "Helm `resources.gpus.enabled`"),
    ("compute-domain-default-channel.nvidia.com", prof("0.4.1", names=(GPU,)),
     "add `compute-domain.nvidia.com` to `drivers`"),
    ("nvidia.com/gpu", prof(), "extended resource name, not a DeviceClass"),
    ("nvidia.com/mig-1g.5gb", prof(), "request class `mig.nvidia.com`"),
    ("mig-1g-12gb.gpu.nvidia.com", prof(), "user-defined and need their own DeviceClass"),
])
def test_stale_class_notes(name: str, profile: ClusterProfile, fragment: str) -> None:
    note = drivers.stale_class_note(name, profile)
    assert note is not None and fragment in note
    assert "\n" not in note and not note.endswith(".")


def test_no_note_for_unrelated_classes() -> None:
    assert drivers.stale_class_note("example.com-gpu", prof()) is None
    assert drivers.stale_class_note("gpu.example.com", prof()) is None


# --- attributes and capacities -----------------------------------------------------------------

ATTRS: list[tuple[str, str, str, dict[str, bool]]] = [
    # (domain, attribute, type, {release: present})
    (GPU, "index", "int", {"v25.3.x": True, "v25.8.x": False, "main": False}),
    (GPU, "minor", "int", {"v25.3.x": True, "v25.8.x": False}),
    (GPU, "parentIndex", "int", {"v25.3.x": True, "v25.8.x": False}),
    (GPU, "pcieBusID", "string", {"v25.3.x": True, "v25.8.x": True, "v25.12.0": False}),
    (GPU, "addressingMode", "string", {"v25.8.x": False, "v25.12.0": True, "main": True}),
    (GPU, "deviceID", "string", {"v25.8.x": False, "v25.12.0": True}),
    (GPU, "iommuFDEnabled", "bool", {"v25.12.0": False, "v0.4.0": True, "v0.4.1": True}),
    (GPU, "numa", "int", {"v25.8.x": False, "v25.12.0": True, "v0.4.1": True, "main": False}),
    (GPU, "gpuModuleID", "int", {"v0.4.1": False, "main": True}),
    (GPU, "partition8", "int", {"v0.4.1": False, "main": True}),
    (GPU, "productName", "string", dict.fromkeys(RELEASES, True)),
    (GPU, "cudaComputeCapability", "version", dict.fromkeys(RELEASES, True)),
    (GPU, "driverVersion", "version", dict.fromkeys(RELEASES, True)),
    ("resource.kubernetes.io", "pciBusID", "string", {"v25.8.x": False, "v25.12.0": True}),
    ("resource.kubernetes.io", "pcieRoot", "string", dict.fromkeys(RELEASES, True)),
    ("resource.kubernetes.io", "numaNode", "int", {"v0.4.1": False, "main": True}),
    (CD, "type", "string", dict.fromkeys(RELEASES, True)),
    (CD, "id", "int", dict.fromkeys(RELEASES, True)),
]


@pytest.mark.parametrize(("domain", "name", "typ", "presence"), ATTRS, ids=lambda v: v if isinstance(v, str) else "")
def test_attributes_per_release(domain: str, name: str, typ: str, presence: dict[str, bool]) -> None:
    for release, present in presence.items():
        attrs = drivers.attributes(prof(release), domain)
        assert (name in attrs) is present, (release, name)
        if present:
            assert attrs[name] == typ


def test_attributes_by_device_type() -> None:
    p = prof("0.4.1")
    mig = drivers.attributes(p, GPU, "mig")
    assert {"profile", "parentUUID", "uuid"} <= set(mig) and "deviceID" not in mig
    vfio = drivers.attributes(p, GPU, "vfio")
    assert {"deviceID", "vendorID", "iommuFDEnabled", "numa"} <= set(vfio) and "profile" not in vfio
    assert "parentUUID" not in drivers.attributes(p, GPU, "gpu")
    assert drivers.attributes(p, CD, "channel") == {"type": "string", "id": "int"}


def test_list_type_attribute_follows_its_gate() -> None:
    assert drivers.attributes(prof("main"), "resource.kubernetes.io")["numaNode"] == "int"
    on = prof("main", {"DRAListTypeAttributes": True})
    assert drivers.attributes(on, "resource.kubernetes.io")["numaNode"] == "list(int)"


def test_gated_and_gone_attributes() -> None:
    assert drivers.attribute_gate(prof("main"), GPU, "gpuModuleID") == "FabricManagerPartitioning"
    assert drivers.attribute_gate(prof("main"), GPU, "productName") is None
    note = drivers.gone_attribute_note(prof("0.4.1"), GPU, "index")
    assert note is not None and "removed from `gpu.nvidia.com` in v25.8.x" in note and "uuid" in note
    assert drivers.gone_attribute_note(prof("25.3"), GPU, "index") is None
    later = drivers.gone_attribute_note(prof("25.8"), GPU, "iommuFDEnabled")
    assert later is not None and "from v0.4.0 on" in later
    assert drivers.gone_attribute_note(prof(), GPU, "productName") is None


CAPS: list[tuple[str, dict[str, bool]]] = [
    ("memory", dict.fromkeys(RELEASES, True)),
    ("multiprocessors", dict.fromkeys(RELEASES, True)),
    ("memorySlice7", dict.fromkeys(RELEASES, True)),
    ("addressableMemory", {"v25.8.x": False, "v25.12.0": True}),
    ("shares", {"v0.4.1": False, "main": True}),
]


@pytest.mark.parametrize(("name", "presence"), CAPS, ids=lambda v: v if isinstance(v, str) else "")
def test_capacities_per_release(name: str, presence: dict[str, bool]) -> None:
    for release, present in presence.items():
        caps = drivers.capacities(prof(release), GPU)
        assert (name in caps) is present, (release, name)
        if present:
            assert caps[name] == "quantity"
    assert drivers.capacities(prof(), CD) == {}


def test_capacities_by_device_type() -> None:
    assert "addressableMemory" in drivers.capacities(prof(), GPU, "vfio")
    assert "memory" not in drivers.capacities(prof(), GPU, "vfio")
    assert "memorySlice0" in drivers.capacities(prof(), GPU, "mig")
    assert drivers.capacity_gate(prof("main"), GPU, "shares") == "ConsumableShares"


# --- feature gates --------------------------------------------------------------------------------

GATES = {
    "v25.3.x": {},
    "v25.8.x": {"TimeSlicingSettings": False, "MPSSupport": False, "IMEXDaemonsWithDNSNames": True,
                "ContextualLogging": True, "LoggingAlphaOptions": False, "LoggingBetaOptions": True},
}
GATES["v25.12.0"] = {**GATES["v25.8.x"], "PassthroughSupport": False, "DynamicMIG": False,
                     "NVMLDeviceHealthCheck": False, "ComputeDomainCliques": True, "CrashOnNVLinkFabricErrors": True}
GATES["v0.4.0"] = {**GATES["v25.12.0"], "DeviceMetadata": False}
GATES["v0.4.1"] = GATES["v0.4.0"]
GATES["main"] = {**GATES["v0.4.1"], "DRAListTypeAttributes": False, "FabricManagerPartitioning": False,
                 "HostManagedIMEXDaemon": False, "ConsumableShares": False}


@pytest.mark.parametrize("release", RELEASES)
def test_default_gates_per_release(release: str) -> None:
    assert drivers.gates(prof(release), GPU) == GATES[release]
    assert drivers.gates(prof(release), CD) == GATES[release]


def test_profile_gates_override_defaults_for_the_whole_chart() -> None:
    p = ClusterProfile(drivers=[DriverProfile(GPU, "0.4.1", {"MPSSupport": True}), DriverProfile(CD)])
    assert drivers.gates(p, CD)["MPSSupport"] is True
    info = drivers.gate_info(GPU, "MPSSupport")
    assert info is not None and info.stage == "Alpha" and info.default is False and info.since == "v25.8.x"
    assert drivers.gate_info(GPU, "Nope") is None


@pytest.mark.parametrize(("version", "gates", "fragment"), [
    ("0.4.1", {"MPSSuport": True}, "unknown driver feature gate 'MPSSuport' (did you mean MPSSupport?)"),
    ("0.4.1", {"Bogus": True}, "known: TimeSlicingSettings"),
    ("25.3.2", {"TimeSlicingSettings": True}, "v25.3.x has no driver feature gates"),
    ("25.8.1", {"PassthroughSupport": True}, "'PassthroughSupport' does not exist in this release (added in v25.12.0)"),
    ("0.4.1", {"ConsumableShares": True}, "added in main"),
    ("0.4.1", {"DynamicMIG": True, "MPSSupport": True}, "DynamicMIG and MPSSupport cannot both be on"),
    ("25.12.0", {"DynamicMIG": True, "PassthroughSupport": True}, "cannot both be on"),
    ("0.4.1", {"PassthroughSupport": True, "NVMLDeviceHealthCheck": True}, "cannot both be on"),
    ("0.4.1", {"DeviceMetadata": True}, "DeviceMetadata requires PassthroughSupport"),
    ("0.4.1", {"IMEXDaemonsWithDNSNames": False}, "ComputeDomainCliques requires IMEXDaemonsWithDNSNames"),
    ("0.9.9", {}, "unknown release '0.9.9'"),
])
def test_invalid_profiles(version: str, gates: dict[str, bool], fragment: str) -> None:
    with pytest.raises(ProfileError) as e:
        drivers.validate_profile(prof(version, gates, names=(GPU,)))
    assert fragment in str(e.value)


@pytest.mark.parametrize(("version", "gates"), [
    (None, {}), ("25.3", {}), ("25.8", {"TimeSlicingSettings": True, "MPSSupport": True}),
    ("25.12.0", {"PassthroughSupport": True, "DynamicMIG": False}),
    ("0.4.1", {"PassthroughSupport": True, "DeviceMetadata": True, "ContextualLogging": False}),
    ("0.4.1", {"DynamicMIG": True}),
    # v25.12.0 lacks the PassthroughSupport/NVMLDeviceHealthCheck exclusion added in v0.4.0
    ("25.12.0", {"PassthroughSupport": True, "NVMLDeviceHealthCheck": True}),
    ("main", {"ConsumableShares": True, "FabricManagerPartitioning": True}),
])
def test_valid_profiles(version: str | None, gates: dict[str, bool]) -> None:
    drivers.validate_profile(prof(version, gates))


def test_other_vendors_and_version_conflicts() -> None:
    drivers.validate_profile(ClusterProfile(drivers=[DriverProfile("dra.example.com", "9.9", {"Anything": True})]))
    with pytest.raises(ProfileError, match="come from one NVIDIA DRA driver for GPUs chart"):
        drivers.validate_profile(ClusterProfile(drivers=[DriverProfile(GPU, "0.4.1"), DriverProfile(CD, "25.12")]))


def test_config_file_errors_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown release '7'"):
        build_config({"drivers": [{"name": GPU, "version": 7}]}, None, REPO)
    with pytest.raises(ConfigError, match="unknown driver feature gate"):
        build_config({"drivers": [{"name": GPU, "feature-gates": {"TimeSlicing": True}}]}, None, REPO)
    cfg = build_config({"drivers": [{"name": GPU, "version": "v0.4.0", "feature-gates": {"MPSSupport": True}}],
                        "values-files": {"gpu-operator": ["ops/*.yaml"], "dra-driver": ["dra/values.yaml"]}},
                       None, REPO)
    assert drivers.release_label(cfg.profile, GPU) == "v0.4.0"
    assert cfg.profile.values_files == {"gpu-operator": ["ops/*.yaml"], "dra-driver": ["dra/values.yaml"]}
    with pytest.raises(ConfigError, match="values-files"):
        build_config({"values-files": {"gpu-operater": ["x.yaml"]}}, None, REPO)
    with pytest.raises(ConfigError, match="values-files"):
        build_config({"values-files": ["x.yaml"]}, None, REPO)


def test_cli_rejects_unknown_driver_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert main(["check", "--isolated", "--driver", "gpu.nvidia.com=0.9", str(f)]) == 2
    assert "unknown release '0.9'" in capsys.readouterr().err
    assert main(["check", "--isolated", "--driver", "gpu.nvidia.com=v25.12.0", str(f)]) == 0


# --- opaque configs -------------------------------------------------------------------------------

API = "resource.nvidia.com/v1beta1"


def gpu_config(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "GpuConfig", **fields}


def check(params: Any, version: str | None = None, driver: str = GPU) -> drivers.OpaqueCheck:
    return drivers.validate_opaque(prof(version), driver, params)


def messages(c: drivers.OpaqueCheck) -> list[tuple[tuple[Any, ...], str]]:
    return [(i.path, i.message) for i in c.issues]


OPAQUE_CASES: list[tuple[str, Any, tuple[Any, ...], str]] = [
    # (id, parameters, path of the issue, message fragment)
    ("not a mapping", ["x"], (), "`parameters` must be a mapping"),
    ("missing apiVersion", {"kind": "GpuConfig"}, (), "need `apiVersion: resource.nvidia.com/v1beta1`"),
    ("wrong apiVersion", gpu_config(apiVersion="resource.nvidia.com/v1"), ("apiVersion",),
     "`apiVersion` must be `resource.nvidia.com/v1beta1`"),
    ("missing kind", {"apiVersion": API}, (), "need `kind` (one of GpuConfig, MigDeviceConfig, VfioDeviceConfig)"),
    ("unknown kind", gpu_config(kind="GPUConfig"), ("kind",), "(did you mean `GpuConfig`?)"),
    ("kind of other driver", {"apiVersion": API, "kind": "ComputeDomainChannelConfig", "domainID": "x"}, ("kind",),
     "is a config of driver `compute-domain.nvidia.com`"),
    ("unknown top field", gpu_config(sharng={}), ("sharng",), "unknown field `sharng` in GpuConfig (did you mean"),
    ("unknown strategy", gpu_config(sharing={"strategy": "Exclusive"}), ("sharing", "strategy"),
     "must be one of `TimeSlicing`, `MPS`, got \"Exclusive\""),
    ("strategy case", gpu_config(sharing={"strategy": "timeslicing"}), ("sharing", "strategy"),
     "did you mean `TimeSlicing`? values are case-sensitive"),
    ("missing strategy", gpu_config(sharing={"timeSlicingConfig": {"interval": "Long"}}), ("sharing",),
     "`sharing` needs `strategy`"),
    ("interval enum", gpu_config(sharing={"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Longest"}}),
     ("sharing", "timeSlicingConfig", "interval"), "`Default`, `Short`, `Medium`, `Long`"),
    ("interval missing", gpu_config(sharing={"strategy": "TimeSlicing", "timeSlicingConfig": {}}),
     ("sharing", "timeSlicingConfig"), "`timeSlicingConfig` needs `interval`"),
    ("TimeSlicing with mpsConfig", gpu_config(sharing={"strategy": "TimeSlicing", "mpsConfig": {}}),
     ("sharing", "mpsConfig"), "`mpsConfig` cannot be combined with `strategy: TimeSlicing`"),
    ("MPS with timeSlicingConfig",
     gpu_config(sharing={"strategy": "MPS", "timeSlicingConfig": {"interval": "Short"}}),
     ("sharing", "timeSlicingConfig"), "`timeSlicingConfig` cannot be combined with `strategy: MPS`"),
    ("percentage high", gpu_config(sharing={"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 101}}),
     ("sharing", "mpsConfig", "defaultActiveThreadPercentage"), "between 0 and 100, got 101"),
    ("percentage low", gpu_config(sharing={"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": -1}}),
     ("sharing", "mpsConfig", "defaultActiveThreadPercentage"), "between 0 and 100, got -1"),
    ("percentage string",
     gpu_config(sharing={"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": "50"}}),
     ("sharing", "mpsConfig", "defaultActiveThreadPercentage"), "must be an integer, got the string \"50\""),
    ("pinned below 1Mi",
     gpu_config(sharing={"strategy": "MPS", "mpsConfig": {"defaultPinnedDeviceMemoryLimit": "1000Ki"}}),
     ("sharing", "mpsConfig", "defaultPinnedDeviceMemoryLimit"), "at least 1Mi"),
    ("pinned not a quantity",
     gpu_config(sharing={"strategy": "MPS", "mpsConfig": {"defaultPinnedDeviceMemoryLimit": "10GB"}}),
     ("sharing", "mpsConfig", "defaultPinnedDeviceMemoryLimit"), "must be a quantity such as 10Gi"),
    ("per-device below 1Mi",
     gpu_config(sharing={"strategy": "MPS", "mpsConfig": {"defaultPerDevicePinnedMemoryLimit": {"0": "100"}}}),
     ("sharing", "mpsConfig", "defaultPerDevicePinnedMemoryLimit", "0"), "at least 1Mi"),
    ("per-device bad key",
     gpu_config(sharing={"strategy": "MPS", "mpsConfig": {"defaultPerDevicePinnedMemoryLimit": {"gpu0": "1Gi"}}}),
     ("sharing", "mpsConfig", "defaultPerDevicePinnedMemoryLimit", "gpu0"),
     "neither the UUID of an allocated device"),
    ("multiUser before main",
     gpu_config(sharing={"strategy": "MPS", "mpsConfig": {"multiUser": True}}),
     ("sharing", "mpsConfig", "multiUser"), "does not exist in `mpsConfig` in v0.4.1 (added in main)"),
    ("MIG has no timeSlicingConfig",
     {"apiVersion": API, "kind": "MigDeviceConfig",
      "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}},
     ("sharing", "timeSlicingConfig"),
     "unknown field `timeSlicingConfig` in `sharing` (known: `strategy`, `mpsConfig`)"),
    ("vfio backend", {"apiVersion": API, "kind": "VfioDeviceConfig", "iommu": {"backendPolicy": "IommuFD"}},
     ("iommu", "backendPolicy"), "`LegacyOnly`, `PreferIommuFD`"),
    ("vfio api device type", {"apiVersion": API, "kind": "VfioDeviceConfig", "iommu": {"enableAPIDevice": "yes"}},
     ("iommu", "enableAPIDevice"), "must be a boolean (true/false), got the string \"yes\""),
    ("sharing not a mapping", gpu_config(sharing="MPS"), ("sharing",), "`sharing` must be a mapping"),
    ("legacy classic-DRA parameters",
     {"apiVersion": "gpu.resource.nvidia.com/v1alpha1", "kind": "GpuClaimParameters", "count": 2},
     ("apiVersion",), "write `apiVersion: resource.nvidia.com/v1beta1` with `kind: GpuConfig` instead"),
]


@pytest.mark.parametrize(("params", "path", "fragment"), [c[1:] for c in OPAQUE_CASES],
                         ids=[c[0] for c in OPAQUE_CASES])
def test_opaque_validation_rules(params: Any, path: tuple[Any, ...], fragment: str) -> None:
    found = messages(check(params))
    assert any(p == path and fragment in m for p, m in found), found


@pytest.mark.parametrize(("version", "driver", "params", "fragment"), [
    ("25.8", GPU, {"apiVersion": API, "kind": "VfioDeviceConfig"}, "`VfioDeviceConfig` exists from v25.12.0 on"),
    ("25.12.0", GPU, {"apiVersion": API, "kind": "VfioDeviceConfig", "iommu": {}},
     "`iommu` does not exist in VfioDeviceConfig in v25.12.0 (added in v0.4.0)"),
    ("25.3", CD, {"apiVersion": API, "kind": "ComputeDomainChannelConfig", "domainID": "u", "allocationMode": "All"},
     "`allocationMode` does not exist"),
    (None, CD, {"apiVersion": API, "kind": "ComputeDomainChannelConfig", "domainID": ""},
     "`domainID` must not be empty"),
    (None, CD, {"apiVersion": API, "kind": "ComputeDomainDaemonConfig"}, "ComputeDomainDaemonConfig needs `domainID`"),
    (None, CD, {"apiVersion": API, "kind": "ComputeDomainChannelConfig", "domainID": "u", "allocationMode": "Many"},
     "`Single`, `All`"),
])
def test_opaque_validation_per_release(version: str | None, driver: str, params: Any, fragment: str) -> None:
    found = messages(check(params, version, driver))
    assert any(fragment in m for _, m in found), found


@pytest.mark.parametrize("params", [
    gpu_config(),
    gpu_config(sharing={"strategy": "TimeSlicing"}),
    gpu_config(sharing={"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}),
    gpu_config(sharing={"strategy": "MPS", "mpsConfig": {
        "defaultActiveThreadPercentage": 50, "defaultPinnedDeviceMemoryLimit": "10Gi",
        "defaultPerDevicePinnedMemoryLimit": {"0": "1Mi", 1: 2097152, "GPU-2fa81118-aaaa": "1.5Mi"}}}),
    gpu_config(sharing=None),
    {"apiVersion": API, "kind": "MigDeviceConfig", "sharing": {"strategy": "MPS", "mpsConfig": {}}},
    {"apiVersion": API, "kind": "VfioDeviceConfig",
     "iommu": {"backendPolicy": "PreferIommuFD", "enableAPIDevice": True}},
], ids=lambda p: str(p.get("kind")) + str(p.get("sharing", "")))
def test_valid_opaque_parameters(params: Any) -> None:
    assert messages(check(params)) == []


def test_gate_uses_are_reported_separately() -> None:
    ts = check(gpu_config(sharing={"strategy": "TimeSlicing"}))
    assert [(u.path, u.gate) for u in ts.gate_uses] == [(("sharing", "strategy"), "TimeSlicingSettings")]
    mig = check({"apiVersion": API, "kind": "MigDeviceConfig", "sharing": {"strategy": "MPS"}})
    assert [u.gate for u in mig.gate_uses] == ["MPSSupport"]
    vfio = check({"apiVersion": API, "kind": "VfioDeviceConfig"})
    assert [(u.path, u.gate) for u in vfio.gate_uses] == [(("kind",), "PassthroughSupport")]
    assert check(gpu_config()).gate_uses == []


def test_unknown_driver_gives_nothing() -> None:
    assert drivers.validate_opaque(prof(), "dra.example.com", {"x": 1}).issues == []


@pytest.mark.parametrize(("text", "value"), [
    ("10Gi", Fraction(10 * 2**30)), ("1Mi", Fraction(2**20)), ("1.5Mi", Fraction(3 * 2**19)), ("100", Fraction(100)),
    ("1e3", Fraction(1000)), ("2E", Fraction(2 * 10**18)), ("500m", Fraction(1, 2)), (".5Ki", Fraction(512)),
    (1024, Fraction(1024)), ("+1k", Fraction(1000)),
])
def test_parse_quantity(text: Any, value: Fraction) -> None:
    assert drivers.parse_quantity(text) == value


@pytest.mark.parametrize("bad", ["10GB", "Gi", "", "1.2.3Mi", True, None, [], "1 Mi"])
def test_parse_quantity_rejects(bad: Any) -> None:
    assert drivers.parse_quantity(bad) is None


@pytest.mark.parametrize(("text", "value"), [
    ("1e-10", Fraction(1, 10**9)), ("-1e-10", Fraction(-1, 10**9)),  # sub-nano precision rounds up, away from 0
    ("1Ei", Fraction(2**60)),  # (the driver-side parser crashed on `Ei`, reading it as an exponent)
    ("10000000000Ei", Fraction(2**63 - 1)),  # binary SI is capped at the int64 maximum
    (" 1Gi\n", Fraction(2**30)),  # decoding a quantity from JSON trims it
    (1e20, Fraction(10**20)), (0.5, Fraction(1, 2)),  # numbers are read from their text
])
def test_parse_quantity_reads_like_kubernetes(text: Any, value: Fraction) -> None:
    """Driver parameters and CEL selectors share one parser (`dralint.knowledge.quantity`)."""
    assert drivers.parse_quantity(text) == value


@pytest.mark.parametrize("bad", [
    "\u0661Gi",  # a non-ASCII digit (Go's parser takes 0-9 only)
    "1e999999999",  # refused at once, not computed
    "1" * 300,  # longer than any quantity Kubernetes prints
    float("inf"), float("nan"),  # YAML .inf/.nan: not quantities (they used to crash the check)
])
def test_parse_quantity_rejects_what_kubernetes_rejects(bad: Any) -> None:
    assert drivers.parse_quantity(bad) is None


@pytest.mark.parametrize("text", ["10Gi", "1.5Mi", "100", "1e3", "2E", "500m", ".5Ki", "+1k", "-3", "1.", "7n",
                                  "1e-10"])
def test_cel_and_driver_quantities_agree(text: str) -> None:
    assert Fraction(Quantity.parse(text).value) == drivers.parse_quantity(text)


def test_config_kinds_per_release() -> None:
    assert set(drivers.config_kinds(prof("25.8"), GPU)) == {"GpuConfig", "MigDeviceConfig"}
    kinds = drivers.config_kinds(prof("0.4.1"))
    assert set(kinds) == {"GpuConfig", "MigDeviceConfig", "VfioDeviceConfig", "ComputeDomainChannelConfig",
                          "ComputeDomainDaemonConfig"}
    assert kinds["MigDeviceConfig"].device_types == ("mig",)
    assert kinds["VfioDeviceConfig"].gate == "PassthroughSupport" and kinds["VfioDeviceConfig"].max_per_claim == 1
    assert kinds["ComputeDomainChannelConfig"].driver == CD


def test_support_status() -> None:
    note = drivers.support_note(prof("0.4.1"), GPU)
    assert note is not None and "not officially supported in v0.4.1" in note
    assert drivers.support_note(prof("0.4.1"), CD) is None


# --- ComputeDomain CRD ---------------------------------------------------------------------------

def compute_domain(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ComputeDomain", "metadata": {"name": "cd"}, "spec": spec}


def test_compute_domain_crd_per_release() -> None:
    channel = {"resourceClaimTemplate": {"name": "imex"}}
    assert drivers.validate_custom_resource(prof("0.4.0"), compute_domain({"channel": channel})) == []
    old = drivers.validate_custom_resource(prof("25.12.0"), compute_domain({"channel": channel}))
    assert [(i.path, i.message) for i in old] == [(("spec",), "`spec` needs `numNodes`")]
    mode = {**channel, "allocationMode": "All"}
    assert drivers.validate_custom_resource(prof("25.8"), compute_domain({"numNodes": 2, "channel": mode})) == []
    assert drivers.validate_custom_resource(prof("25.3"), compute_domain({"numNodes": 2, "channel": mode}))
    bad = drivers.validate_custom_resource(prof(), compute_domain({"numNodes": -1, "channel": {}}))
    assert {i.message for i in bad} == {"`numNodes` must be at least 0, got -1",
                                        "`channel` needs `resourceClaimTemplate`"}
    assert drivers.validate_custom_resource(prof(), {"apiVersion": "v1", "kind": "ComputeDomain"}) == []
    assert drivers.custom_resource_kinds(prof("25.8")) == {"ComputeDomain": API}
    assert set(drivers.custom_resource_kinds(prof())) == {"ComputeDomain", "ComputeDomainClique"}


def test_compute_domain_json_schema() -> None:
    new = drivers.custom_resource_schema(prof("0.4.1"), "ComputeDomain")
    old = drivers.custom_resource_schema(prof("25.12.0"), "ComputeDomain")
    assert new is not None and old is not None
    assert new["properties"]["spec"]["required"] == ["channel"]
    assert old["properties"]["spec"]["required"] == ["numNodes", "channel"]
    jsonschema.Draft202012Validator.check_schema(new)
    doc = compute_domain({"channel": {"resourceClaimTemplate": {"name": "x"}, "allocationMode": "Single"}})
    jsonschema.validate(doc, new)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, old)
    assert drivers.custom_resource_schema(prof(), "Nope") is None


@requires_shared
def test_corpus_compute_domains_match_the_crd() -> None:
    schema = drivers.custom_resource_schema(prof(), "ComputeDomain")
    assert schema is not None
    seen = 0
    for f in sorted((CORPUS / "nvidia-dra-driver").rglob("*.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "ComputeDomain":
                seen += 1
                jsonschema.validate(doc, schema)
                assert drivers.validate_custom_resource(prof(), doc) == []
    assert seen >= 4


# --- the data file itself -------------------------------------------------------------------------

def test_data_references_are_consistent() -> None:
    raw = load_data("drivers/gpu.nvidia.com.yaml")
    rels = set(raw["releases"])
    assert raw["newest"] in rels

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            # YAML 1.1 reads keys such as `on`/`yes` as booleans: every key must stay a string
            assert all(isinstance(k, str) for k in node), f"{where}: non-string key {list(node)}"
            for key in ("since", "removed", "required-until"):
                if key in node and isinstance(node[key], str):
                    assert node[key] in rels, f"{where}.{key}: {node[key]}"
            for k, v in node.items():
                walk(v, f"{where}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")

    walk(raw, "")
    gates = set(raw["feature-gates"])
    for c in raw["feature-gate-constraints"]:
        assert set(c.get("exclusive", c.get("requires", []))) <= gates
    type_names = set(raw["types"])
    for kind, k in raw["config-kinds"].items():
        assert k["driver"] in raw["drivers"], kind
        assert k.get("gate") is None or k["gate"] in gates
        for f in k.get("fields", {}).values():
            assert f["type"] in type_names | {"string", "int", "bool", "quantity", "map"}, kind
    for t in raw["types"].values():
        for w in t.get("when", []):
            assert w["field"] in t["fields"] and w.get("gate") in gates | {None}
    for name, c in raw["device-classes"].items():
        assert c["driver"] in raw["drivers"], name
        assert f"'{c['driver']}'" in c["selector"], name
        assert c.get("devices-need-gate") in gates | {None}
    for domain in raw["attributes"]:
        for name, a in raw["attributes"][domain].items():
            assert a["type"] in {"string", "int", "bool", "version"}, name
            assert a.get("gate") in gates | {None}, name


def test_chart_data_names_the_switches() -> None:
    facts = drivers.charts()
    assert set(facts["charts"]) == {"gpu-operator", "dra-driver", "device-plugin"}
    for name, c in facts["charts"].items():
        assert c.get("strong"), name
        assert c.get("device-plugin") or c.get("dra-gpus"), name
    assert "k8s-device-plugin" in facts["daemonsets"]["device-plugin"]["images"]
