"""The generated schema set (schemas/kubernetes/): consistent, canonical, compilable, and usable."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema_rs
import pytest

from dralint.knowledge import schema
from dralint.knowledge.catalog import load_data
from dralint.knowledge.lifecycle import minors as lifecycle_minors

from .conftest import REPO

KUBE = REPO / "schemas" / "kubernetes"
MINORS = ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("update_schemas", REPO / "scripts" / "update_schemas.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _store() -> dict[str, Any]:
    return json.loads((KUBE / "openapi" / "defs.json").read_text(encoding="utf-8"))


def _index(minor: str) -> dict[str, Any]:
    return json.loads((KUBE / minor / "index.json").read_text(encoding="utf-8"))


def _refs(node: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                out.add(v)
            else:
                out |= _refs(v)
    elif isinstance(node, list):
        for v in node:
            out |= _refs(v)
    return out


def test_every_minor_has_an_index_and_matches_the_lifecycle_data() -> None:
    assert list(schema.available_minors()) == MINORS
    assert lifecycle_minors() == MINORS


def test_store_is_content_addressed_and_fully_used() -> None:
    mod = _script()
    store = _store()
    used: set[str] = set()
    for minor in MINORS:
        for name, h in _index(minor)["defs"].items():
            used.add(f"{name}@{h}")
    assert used == set(store), "store entries without a minor, or index entries without a store entry"
    for key, value in store.items():
        name, _, h = key.rpartition("@")
        assert mod.def_hash(value) == h, f"{key}: content does not match its hash"


def test_indexes_are_closed_and_point_at_their_roots() -> None:
    store = _store()
    for minor in MINORS:
        idx = _index(minor)
        defs = idx["defs"]
        for key, root in idx["kinds"].items():
            assert root in defs, f"{minor} {key}: root {root} missing"
        for name, h in defs.items():
            for ref in _refs(store[f"{name}@{h}"]):
                assert ref.startswith("#/$defs/"), f"{minor} {name}: non-local $ref {ref}"
                assert ref.removeprefix("#/$defs/") in defs, f"{minor} {name}: dangling {ref}"


def test_index_pins_the_source_the_script_uses() -> None:
    mod = _script()
    for minor in MINORS:
        src = _index(minor)["source"]
        assert src == {"package": mod.PACKAGE, "version": mod.VERSION, "sha256": mod.SHA256,
                       "schemas": f"v{minor}.0-local-strict"}


def test_files_are_in_the_canonical_form_the_script_writes() -> None:
    """Re-rendering the loaded data gives the same bytes: regenerating cannot produce noise diffs."""
    mod = _script()
    assert mod.render_store(_store()) == (KUBE / "openapi" / "defs.json").read_text(encoding="utf-8")
    for minor in MINORS:
        assert mod.render_index(_index(minor)) == (KUBE / minor / "index.json").read_text(encoding="utf-8")


def test_descriptions_and_annotations_are_stripped() -> None:
    text = (KUBE / "openapi" / "defs.json").read_text(encoding="utf-8")
    assert '"description":' not in text
    assert '"x-kubernetes-' not in text
    # but a *field* named like an annotation keyword would be kept: the cleaner is structural
    mod = _script()
    cleaned = mod.clean({"description": "x", "properties": {"description": {"type": "string", "description": "d"}},
                         "x-kubernetes-list-type": "atomic"})
    assert cleaned == {"properties": {"description": {"type": "string"}}}


def test_pure_type_unions_are_merged() -> None:
    mod = _script()
    assert mod.clean({"oneOf": [{"type": ["string", "null"]}, {"type": ["number", "null"]}]}) == {
        "type": ["string", "number", "null"]}
    mixed = {"oneOf": [{"type": "string"}, {"type": "object", "properties": {}}]}
    assert mod.clean(mixed) == mixed
    store = _store()
    quantity = [v for k, v in store.items() if k.startswith("io.k8s.apimachinery.pkg.api.resource.Quantity@")]
    assert quantity == [{"type": ["string", "number", "null"]}]


def test_identical_definitions_are_stored_once() -> None:
    store = _store()
    names = [k.rpartition("@")[0] for k in store]
    assert "io.k8s.api.resource.v1.ResourceClaim" in names
    # v1 ResourceClaim did not change between 1.34 and 1.35: one entry serves both
    assert _index("1.34")["defs"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"] == \
        _index("1.37")["defs"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    size = sum(p.stat().st_size for p in KUBE.rglob("*.json"))
    assert size < 400_000, f"generated schemas grew to {size:,} bytes"


@pytest.mark.parametrize("minor", MINORS)
def test_every_kind_compiles_and_accepts_a_minimal_object(minor: str) -> None:
    for key in schema.kinds(minor):
        ks = schema.get(minor, key)
        assert ks is not None
        if key.startswith("resource.k8s.io/"):
            api_version, kind = key.rsplit("/", 1)
            obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
            errors = schema.validate(ks, obj)
            # only "spec is required" may be missing from a minimal object
            assert all(e.code == "required" for e in errors), (key, errors)


def test_compiled_validators_are_cached() -> None:
    a = schema.get("1.35", "resource.k8s.io/v1/ResourceClaim")
    assert a is schema.get("1.35", "resource.k8s.io/v1/ResourceClaim")
    assert schema.get("1.35", "resource.k8s.io/v1alpha2/ResourceClass") is None


def test_resource_group_kinds_per_minor() -> None:
    expected = {
        "1.32": {"v1alpha3": 4, "v1beta1": 4},
        "1.33": {"v1alpha3": 5, "v1beta1": 4, "v1beta2": 4},
        "1.34": {"v1": 4, "v1alpha3": 1, "v1beta1": 4, "v1beta2": 4},
        "1.35": {"v1": 4, "v1alpha3": 1, "v1beta1": 4, "v1beta2": 4},
        "1.36": {"v1": 4, "v1alpha3": 2, "v1beta1": 4, "v1beta2": 5},
        "1.37": {"v1": 5, "v1alpha3": 2, "v1beta1": 4, "v1beta2": 5},
    }
    for minor, versions in expected.items():
        counts: dict[str, int] = {}
        for key in schema.kinds(minor):
            if key.startswith("resource.k8s.io/"):
                v = key.split("/")[1]
                counts[v] = counts.get(v, 0) + 1
        assert counts == versions, minor
        assert {"v1/PodSpec", "v1/PodTemplateSpec"} <= set(schema.kinds(minor))


def test_schema_minor_falls_back_to_the_newest_for_future_minors() -> None:
    assert schema.schema_minor("1.35") == "1.35"
    assert schema.schema_minor("1.40") == "1.37"
    assert schema.schema_minor("1.20") is None


def test_messages_point_at_the_right_side() -> None:
    ks = schema.get("1.35", "resource.k8s.io/v1/ResourceClaim")
    assert ks is not None
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "x"},
           "spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "count": "2"}},
                                             {"exactly": {"deviceClassName": "c"}, "exactlyy": {}}]}}}
    errors = {(e.code, e.path, e.on): e.message for e in schema.validate(ks, obj)}
    assert errors[("type", ("spec", "devices", "requests", 0, "exactly", "count"), "value")] == \
        '`count` must be an integer, got the string "2"; write the number without quotes'
    assert errors[("required", ("spec", "devices", "requests", 1), "key")].startswith(
        "`spec.devices.requests[1]` is missing the required field `name`")
    unknown = errors[("unknown-field", ("spec", "devices", "requests", 1, "exactlyy"), "key")]
    assert "did you mean `exactly`?" in unknown


def test_quantities_accept_numbers_strings_and_null_but_not_mappings() -> None:
    ks = schema.get("1.37", "v1/PodSpec")
    assert ks is not None
    spec: dict[str, Any] = {"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": 1, "memory": "1Gi",
                                                                                  "cpu": None}}}]}
    assert schema.validate(ks, spec) == []
    spec["containers"][0]["resources"]["limits"]["memory"] = {"value": "1Gi"}
    (err,) = schema.validate(ks, spec)
    assert err.message.startswith("`memory` must be a quantity")


def test_odd_input_does_not_crash() -> None:
    ks = schema.get("1.37", "resource.k8s.io/v1/ResourceClaim")
    assert ks is not None
    for odd in [None, [], "x", 3, {"spec": []}, {"spec": {"devices": {"requests": "x"}}}, {1: 2},
                {"spec": {"devices": {"requests": [{"name": b"bytes"}]}}}, {"spec": float("nan")},
                {"metadata": {"name": 10**40}}]:
        schema.validate(ks, odd)


def test_hints_file_is_well_formed() -> None:
    hints = load_data("kubernetes/field-hints.yaml")
    assert set(hints) == {"unknown_fields", "wrong_types", "labels", "dra_fields"}
    for type_name, fields in {**hints["unknown_fields"], **hints["wrong_types"]}.items():
        assert isinstance(type_name, str) and isinstance(fields, dict)
        assert all(isinstance(k, str) and isinstance(v, str) and v for k, v in fields.items())


def test_jsonschema_rs_is_the_validator() -> None:
    ks = schema.get("1.35", "v1/PodSpec")
    assert ks is not None and isinstance(ks.validator, jsonschema_rs.Draft202012Validator)


@pytest.mark.skipif(not os.environ.get("DRALINT_KV_WHEEL"),
                    reason="DRALINT_KV_WHEEL is not set to the pinned kubernetes-validate wheel (.ci/run sets it)")
def test_regenerating_from_the_pinned_wheel_changes_nothing() -> None:
    wheel = Path(os.environ["DRALINT_KV_WHEEL"])
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "update_schemas.py"), "--wheel", str(wheel),
                           "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
