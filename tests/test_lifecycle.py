"""schemas/kubernetes/lifecycle.yaml and its reader: versions, deprecation, gates, gated fields."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from dralint.cli.app import cli
from dralint.knowledge import lifecycle, schema
from dralint.knowledge.catalog import load_data
from dralint.knowledge.lifecycle import Lifecycle, for_profile, match_paths
from dralint.knowledge.profile import ClusterProfile, known_minors, newest_minor

MINORS = ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]


def lc(minor: str, gates: dict[str, bool] | None = None, rc: dict[str, bool] | None = None) -> Lifecycle:
    return for_profile(ClusterProfile(kubernetes_version=minor, feature_gates=gates or {}, runtime_config=rc or {}))


def test_known_minors_and_default_target() -> None:
    assert known_minors() == MINORS
    assert newest_minor() == "1.37"
    assert ClusterProfile().kubernetes_version == "1.37"


@pytest.mark.parametrize("minor", MINORS)
def test_kinds_per_version_agree_with_the_generated_schemas(minor: str) -> None:
    from_schemas: dict[str, set[str]] = {}
    for key in schema.kinds(minor):
        if key.startswith("resource.k8s.io/"):
            _, version, kind = key.split("/")
            from_schemas.setdefault(version, set()).add(kind)
    life = lc(minor)
    assert {v: set(life.kinds(v)) for v in life.versions()} == from_schemas


# (minor) -> versions served by default (reference §1.2: only v1, and only from 1.34)
SERVED_BY_DEFAULT = {"1.32": [], "1.33": [], "1.34": ["v1"], "1.35": ["v1"], "1.36": ["v1"], "1.37": ["v1"]}


@pytest.mark.parametrize("minor", MINORS)
def test_served_by_default(minor: str) -> None:
    life = lc(minor)
    assert [v for v in life.versions() if life.served(v)] == SERVED_BY_DEFAULT[minor]


def test_runtime_config_switches_versions_on_and_off() -> None:
    assert lc("1.35", rc={"resource.k8s.io/v1beta1": True}).served("v1beta1", "ResourceClaim")
    assert not lc("1.35", rc={"resource.k8s.io/v1": False}).served("v1", "ResourceClaim")
    assert lc("1.35", rc={"api/beta": True}).served("v1beta2", "DeviceClass")
    assert lc("1.35", rc={"api/all": True}).served("v1alpha3", "DeviceTaintRule")
    # the specific key wins over the stage-wide one
    assert not lc("1.35", rc={"api/beta": True, "resource.k8s.io/v1beta1": False}).served("v1beta1")
    # runtime-config cannot serve a kind the version does not have
    assert not lc("1.35", rc={"resource.k8s.io/v1alpha3": True}).served("v1alpha3", "ResourceClaim")


@pytest.mark.parametrize(("minor", "version", "kind", "deprecated"), [
    ("1.34", "v1beta1", "ResourceClaim", False),
    ("1.35", "v1beta1", "ResourceClaim", True),
    ("1.35", "v1beta2", "ResourceClaim", False),
    ("1.36", "v1beta2", "ResourceClaim", True),
    ("1.36", "v1beta2", "DeviceTaintRule", False),
    ("1.36", "v1alpha3", "DeviceTaintRule", True),
    ("1.37", "v1", "ResourceClaim", False),
])
def test_deprecation(minor: str, version: str, kind: str, deprecated: bool) -> None:
    assert (lc(minor).deprecated(version, kind) is not None) is deprecated


def test_conversion_target_prefers_served_non_deprecated_versions() -> None:
    assert lc("1.35").conversion_target("ResourceClaim", "v1beta1") == "v1"
    assert lc("1.33", rc={"resource.k8s.io/v1beta2": True}).conversion_target("ResourceClaim", "v1beta1") == "v1beta2"
    assert lc("1.32").conversion_target("ResourceClaim", "v1beta1") is None
    assert lc("1.36").conversion_target("DeviceTaintRule", "v1alpha3") is None  # v1beta2 is off by default
    assert lc("1.37").conversion_target("DeviceTaintRule", "v1alpha3") == "v1"


@pytest.mark.parametrize(("minor", "gate", "enabled"), [
    ("1.32", "DynamicResourceAllocation", False),
    ("1.34", "DynamicResourceAllocation", True),
    ("1.33", "DRAPrioritizedList", False),
    ("1.34", "DRAPrioritizedList", True),
    ("1.35", "DRADeviceTaints", False),
    ("1.36", "DRADeviceTaints", True),
    ("1.36", "DRADeviceTaintRules", False),
    ("1.37", "DRADeviceTaintRules", True),
    ("1.35", "DRAExtendedResource", False),
    ("1.36", "DRAExtendedResource", True),
    ("1.37", "DRAFractionalCapacityRange", False),
    ("1.32", "DRAPrioritizedList", None),  # not in 1.32 at all
])
def test_gate_defaults(minor: str, gate: str, enabled: bool | None) -> None:
    assert lc(minor).gate_enabled(gate) is enabled


def test_gate_overrides_and_locks() -> None:
    assert lc("1.35", {"DRAExtendedResource": True}).gate_enabled("DRAExtendedResource") is True
    assert lc("1.36", {"DRAExtendedResource": False}).gate_enabled("DRAExtendedResource") is False
    # locked gates keep their default whatever the profile says (the component would refuse to start)
    g = lc("1.37", {"DRAExtendedResource": False}).gate("DRAExtendedResource")
    assert g is not None and g.locked and g.enabled
    g = lc("1.35", {"DRAConsumableCapacity": True}).gate("DRAConsumableCapacity")
    assert g is not None and g.overridden


def test_data_is_consistent() -> None:
    data = load_data("kubernetes/lifecycle.yaml")
    gates = set(data["gates"])
    when_off = {"dropped", "dropped-then-rejected", "rejected", "not-served"}
    for minor, spec in data["minors"].items():
        assert set(spec["gates"]) <= gates, f"{minor}: gates without a `gates:` entry"
        for g in spec["gates"].values():
            assert g["stage"] in ("alpha", "beta", "GA") and isinstance(g["default"], bool)
        for version, v in spec["versions"].items():
            for kind in v["kinds"]:
                assert (version, kind) in lifecycle.releases(), f"{minor}: no release record for {version} {kind}"
    for name, controls in lifecycle.gate_controls().items():
        for c in controls:
            assert c.when_off in when_off, name
            for p in c.paths:
                lifecycle._pattern(p)  # parses
            assert not c.minors or set(c.minors) <= set(MINORS)
    # every gate is in at least one minor
    in_minors = {g for spec in data["minors"].values() for g in spec["gates"]}
    assert gates == in_minors


def test_match_paths() -> None:
    data: dict[str, Any] = {"spec": {"devices": [{"name": "a", "attributes": {"x": {"bools": [True]}, "y": {"int": 1}}},
                                                 {"basic": {"taints": [{"key": "k"}]}}]}}
    assert list(match_paths(data, "spec.devices[].attributes{}.bools")) == [
        (("spec", "devices", 0, "attributes", "x", "bools"), [True])]
    assert [p for p, _ in match_paths(data, "spec.devices[].basic.taints")] == [
        ("spec", "devices", 1, "basic", "taints")]
    assert list(match_paths(data, "spec.devices[].nope")) == []
    assert list(match_paths({"spec": "odd"}, "spec.devices[].name")) == []


def _reference_paths(node: Any, segs: list[tuple[str, str]], path: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    """The pattern language read as its docstring says, one step at a time (what `match_paths` must give)."""
    if not segs:
        return [(path, node)]
    (key, fan), rest = segs[0], segs[1:]
    if not isinstance(node, dict) or key not in node:
        return []
    child, here = node[key], (*path, key)
    if fan == "[]":
        return [m for j, v in enumerate(child) for m in _reference_paths(v, rest, (*here, j))] \
            if isinstance(child, list) else []
    if fan == "{}":
        return [m for k, v in child.items() for m in _reference_paths(v, rest, (*here, k))] \
            if isinstance(child, dict) else []
    return _reference_paths(child, rest, here)


_TREES = st.recursive(
    st.sampled_from([None, 1, "x", True]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=12,
)
_PATTERNS = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["", "[]", "{}"])), min_size=1,
                     max_size=4)


@settings(max_examples=400, deadline=None)
@given(_TREES, _PATTERNS)
def test_match_paths_reads_the_pattern_language(data: Any, segs: list[tuple[str, str]]) -> None:
    pattern = ".".join(k + f for k, f in segs)
    assert match_paths(data, pattern, ("base",)) == _reference_paths(data, segs, ("base",))


def test_gated_uses_for_claims_pods_and_kinds() -> None:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "spec": {"spec": {"devices": {"requests": [
                 {"name": "a", "firstAvailable": [{"name": "x", "deviceClassName": "c", "tolerations": [{}]}]},
                 {"name": "b", "exactly": {"deviceClassName": "c", "adminAccess": False}}]}}}}
    uses = lc("1.33").gated_uses("ResourceClaimTemplate", claim, [])
    found = {(u.gate.name, u.path) for u in uses}
    assert ("DRAPrioritizedList", ("spec", "spec", "devices", "requests", 0, "firstAvailable")) in found
    assert ("DRADeviceTaints", ("spec", "spec", "devices", "requests", 0, "firstAvailable", 0, "tolerations")) in found
    assert ("DynamicResourceAllocation", ("kind",)) in found
    assert not any(g == "DRAAdminAccess" for g, _ in found), "adminAccess: false changes nothing when dropped"
    assert lc("1.36").gated_uses("ResourceClaimTemplate", claim, []) == []
    pod = {"spec": {"resourceClaims": [{"name": "g"}], "containers": [{"resources": {"claims": [{"name": "g"}]}}]}}
    paths = {u.path for u in lc("1.33").gated_uses("Pod", pod, [("spec",)])}
    assert paths == {("spec", "resourceClaims"), ("spec", "containers", 0, "resources", "claims")}
    assert lc("1.33", {"DynamicResourceAllocation": True}).gated_uses("Pod", pod, [("spec",)]) == []


def test_enum_values_follow_the_minor() -> None:
    assert lifecycle.enum_values("taintEffect", "1.34") == ["NoSchedule", "NoExecute"]
    assert lifecycle.enum_values("taintEffect", "1.35") == ["NoSchedule", "NoExecute", "None"]


def test_minors_outside_the_data() -> None:
    assert not lc("1.30").known
    newer = lc("1.39")
    assert newer.known and newer.data_minor == "1.37"
    assert newer.served("v1", "ResourceClaim") and not newer.served("v1beta1", "ResourceClaim")
    assert newer.deprecated("v1beta2", "ResourceClaim") is not None


def test_default_target_is_shown_in_verbose_and_json(tmp_path: Any) -> None:
    f = tmp_path / "x.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    runner = CliRunner()
    res = runner.invoke(cli, ["check", "--isolated", "--verbose", str(f)])
    assert "target Kubernetes 1.37" in res.output  # stderr is mixed into output by CliRunner
    res = runner.invoke(cli, ["check", "--isolated", "--format", "json", str(f)])
    doc = json.loads(res.stdout)
    assert doc["summary"]["kubernetes_version"] == "1.37"
    res = runner.invoke(cli, ["check", "--isolated", "--format", "json", "--kubernetes-version", "v1.34.2", str(f)])
    assert json.loads(res.stdout)["summary"]["kubernetes_version"] == "1.34"
