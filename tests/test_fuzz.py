"""Fuzzing load → check → fix: any input ends in findings, never in a crash.

Two generators (hypothesis):

- *structure-aware*: Kubernetes-shaped documents (workloads with GPUs and claims, claims,
  templates, device classes with CEL, slices, quotas, lists, Helm values) in which any subtree
  may be swapped for something of the wrong shape, serialised in varying YAML styles, with
  suppression comments, annotations, CRLF and BOM;
- *bytes*: mutations of valid manifests (byte flips, cut points, YAML syntax fragments such as
  anchors, aliases, merge keys, tags, directives, templates, tabs and NULs) and raw binary.

Properties, for every input, with every rule enabled: loading and linting never raise, no rule
reports an internal error, every finding has a sane position inside the file, linting is
deterministic, and `fix --unsafe-fixes` never raises nor turns a parseable file into one that
does not parse.

CI runs a few seconds per generator (``DRALINT_FUZZ_EXAMPLES``, default 150); ``python bench/fuzz.py
--minutes N`` runs the same properties for as long as asked.
"""

from __future__ import annotations

import importlib.util
import os
import weakref
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralint.engine.config import build_config
from dralint.engine.runner import lint_files
from dralint.inputs.load import load_bytes
from tests.conftest import REPO

EXAMPLES = int(os.environ.get("DRALINT_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize="DRALINT_FUZZ_RANDOM" not in os.environ,
                    suppress_health_check=list(HealthCheck), database=None)
ALL_RULES = build_config({"select": ["ALL"]}, None, REPO)
PROFILED = build_config({"select": ["ALL"], "kubernetes-version": "1.33",
                         "feature-gates": {"DRAPrioritizedList": True},
                         "drivers": [{"name": "gpu.nvidia.com", "version": "25.3.0"}]}, None, REPO)

# -- structure-aware manifests ---------------------------------------------------------------

text = st.one_of(
    st.sampled_from(["gpu", "gpu.nvidia.com", "mig.nvidia.com", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb",
                     "nvidia.com/gpu.shared", "", "yes", "0755", "~", "null", "1e3", "ExactCount", "All",
                     "a" * 300, "ü∂ƒ", "x\ny", "{{ .Values.x }}", "dralint: disable=ALL", "*", "&a"]),
    st.text(max_size=12),
)
scalar = st.one_of(text, st.integers(-2, 10**12), st.booleans(), st.none(), st.floats(allow_nan=True))
junk = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(text, inner, max_size=3)), max_leaves=8)

CEL = [
    'device.driver == "gpu.nvidia.com"',
    'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100"',
    'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("20Gi"))',
    'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("550.0.0")) >= 0',
    '"gpu.nvidia.com" in device.attributes && device.attributes["gpu.nvidia.com"].type == "mig"',
    "device.attributes['gpu.nvidia.com'].index < 4 ||",
    "devcie.driver == 1",
    "[1,2,3].all(x, x > 0) && quantity('1Gi') == quantity('1024Mi')",
    "device.attributes[\"gpu.nvidia.com\"].productName.matches('^(a+)+$')",
    'size(device.attributes) > 0 ? true : "x"',
]


def _maybe(draw: st.DrawFn, value: Any) -> Any:
    """The value, or (sometimes) something of a completely different shape."""
    return draw(junk) if draw(st.integers(0, 9)) == 0 else value


@st.composite
def container(draw: st.DrawFn) -> dict[str, Any]:
    res = draw(st.sampled_from(["nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared", "cpu",
                                "example.com/fpga"]))
    c: dict[str, Any] = {"name": _maybe(draw, draw(st.sampled_from(["main", "c", "sidecar"]))),
                         "image": _maybe(draw, "cuda:12")}
    c["resources"] = _maybe(draw, {
        "limits": {res: _maybe(draw, draw(st.integers(0, 8)))},
        "requests": _maybe(draw, {res: 1}),
        "claims": _maybe(draw, [{"name": _maybe(draw, "gpu"), "request": _maybe(draw, "gpu")}]),
    })
    return c


@st.composite
def pod_spec(draw: st.DrawFn) -> dict[str, Any]:
    claim_ref = draw(st.sampled_from(["resourceClaimTemplateName", "resourceClaimName", "source"]))
    ref: Any = {"resourceClaimTemplateName": "tmpl"} if claim_ref == "source" else "tmpl"
    spec: dict[str, Any] = {
        "containers": _maybe(draw, draw(st.lists(container(), min_size=1, max_size=2))),
        "resourceClaims": _maybe(draw, [{"name": _maybe(draw, "gpu"), claim_ref: ref}]),
    }
    if draw(st.booleans()):
        spec["initContainers"] = [draw(container())]
    if draw(st.booleans()):
        spec["nodeSelector"] = _maybe(draw, {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"})
    if draw(st.booleans()):
        spec["affinity"] = _maybe(draw, {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "nvidia.com/gpu.memory", "operator": "Gt",
                                                         "values": ["40000"]}]}]}}})
    return spec


@st.composite
def device_request(draw: st.DrawFn) -> dict[str, Any]:
    sel = [{"cel": {"expression": _maybe(draw, draw(st.sampled_from(CEL)))}}]
    exactly = {"deviceClassName": _maybe(draw, draw(st.sampled_from(["gpu.nvidia.com", "mig.nvidia.com", "x"]))),
               "selectors": _maybe(draw, sel), "allocationMode": _maybe(draw, "ExactCount"),
               "count": _maybe(draw, draw(st.integers(-1, 9)))}
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return {"name": _maybe(draw, "gpu"), "exactly": _maybe(draw, exactly)}
    if shape == 1:
        return {"name": "gpu", "firstAvailable": _maybe(draw, [{"name": "a", **exactly}, {"name": "b", **exactly}])}
    if shape == 2:
        return {"name": "gpu", **exactly}  # the v1beta1 flat shape
    return {"name": "gpu", "exactly": exactly, "firstAvailable": [exactly]}


@st.composite
def devices(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "requests": _maybe(draw, draw(st.lists(device_request(), min_size=1, max_size=2))),
        "constraints": _maybe(draw, [{"requests": ["gpu"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]),
        "config": _maybe(draw, [{"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": _maybe(draw, "GpuConfig"),
            "sharing": _maybe(draw, {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}})}}}]),
    }


@st.composite
def k8s_object(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["Pod", "Deployment", "Job", "CronJob", "StatefulSet", "DaemonSet", "RayCluster",
                                 "ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice",
                                 "ResourceQuota", "LimitRange", "ComputeDomain", "ConfigMap", "List", "values"]))
    meta: dict[str, Any] = {"name": _maybe(draw, draw(st.sampled_from(["tmpl", "gpu.nvidia.com", "x"]))),
                            "namespace": _maybe(draw, draw(st.sampled_from(["ml", "default"])))}
    if draw(st.integers(0, 4)) == 0:
        meta["annotations"] = {"dralint.io/ignore": _maybe(draw, draw(st.sampled_from(["DRA201", "all", "DRA9"])))}
    ps = draw(pod_spec())
    api = {"Pod": "v1", "Job": "batch/v1", "CronJob": "batch/v1", "RayCluster": "ray.io/v1",
           "ComputeDomain": "resource.nvidia.com/v1beta1", "ConfigMap": "v1", "List": "v1",
           "ResourceQuota": "v1", "LimitRange": "v1"}.get(kind, "apps/v1")
    if kind.startswith(("Resource", "Device")) and kind not in ("ResourceQuota",):
        api = draw(st.sampled_from(["resource.k8s.io/v1", "resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"]))
    body: dict[str, Any] = {"apiVersion": _maybe(draw, api), "kind": _maybe(draw, kind), "metadata": _maybe(draw, meta)}
    template = {"metadata": {"labels": {"a": "b"}}, "spec": ps}
    if kind == "Pod":
        body["spec"] = ps
    elif kind == "CronJob":
        body["spec"] = {"jobTemplate": {"spec": {"template": template}}}
    elif kind == "RayCluster":
        body["spec"] = {"workerGroupSpecs": [{"template": template}]}
    elif kind in ("Deployment", "Job", "StatefulSet", "DaemonSet"):
        body["spec"] = {"replicas": _maybe(draw, 3), "template": template,
                        "strategy": _maybe(draw, {"rollingUpdate": {"maxSurge": "25%"}})}
    elif kind == "ResourceClaim":
        body["spec"] = {"devices": draw(devices())}
    elif kind == "ResourceClaimTemplate":
        body["spec"] = _maybe(draw, {"spec": {"devices": draw(devices())}})
    elif kind == "DeviceClass":
        body["spec"] = {"selectors": [{"cel": {"expression": draw(st.sampled_from(CEL))}}],
                        "extendedResourceName": _maybe(draw, "nvidia.com/gpu")}
    elif kind == "ResourceSlice":
        body["spec"] = {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "p", "generation": 1,
                                                                               "resourceSliceCount": 1},
                        "devices": [{"name": "gpu-0", "attributes": {"productName": {"string": "NVIDIA A100"}},
                                     "capacity": {"memory": {"value": _maybe(draw, "80Gi")}}}]}
    elif kind == "ResourceQuota":
        body["spec"] = {"hard": {"requests.nvidia.com/gpu": _maybe(draw, "4")}}
    elif kind == "LimitRange":
        body["spec"] = {"limits": [{"max": {"nvidia.com/gpu": 2}}]}
    elif kind == "ComputeDomain":
        body["spec"] = {"numNodes": 2, "channel": {"resourceClaimTemplate": {"name": "tmpl"}}}
    elif kind == "ConfigMap":
        body["data"] = _maybe(draw, {"k": "v"})
    elif kind == "List":
        body["items"] = [draw(k8s_object()) for _ in range(draw(st.integers(0, 2)))]
    else:  # Helm values of the GPU stack, not an object
        return {"devicePlugin": {"enabled": _maybe(draw, True)}, "driver": {"enabled": True},
                "gpuCluster": {"deployCR": _maybe(draw, True)}, "resources": {"gpus": {"enabled": True}},
                "gpuResourcesEnabledOverride": _maybe(draw, True), "kubeletPlugin": {}}
    if draw(st.integers(0, 5)) == 0:
        body[draw(text)] = draw(junk)  # an unknown field
    return body


@st.composite
def manifest(draw: st.DrawFn) -> bytes:
    docs = draw(st.lists(k8s_object(), min_size=1, max_size=4))
    style = draw(st.sampled_from([False, None, True]))
    indent = draw(st.sampled_from([2, 4]))
    parts = []
    for d in docs:
        try:
            parts.append(yaml.safe_dump(d, default_flow_style=style, indent=indent, sort_keys=draw(st.booleans()),
                                        allow_unicode=draw(st.booleans()), width=draw(st.sampled_from([40, 4096]))))
        except (yaml.YAMLError, ValueError):
            parts.append("a: b\n")
    lines = "---\n".join(parts).splitlines()
    for _ in range(draw(st.integers(0, 3))):  # comments and suppressions on random lines
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        note = draw(st.sampled_from(["  # dralint: disable=DRA201", "  # dralint: disable=ALL", "  # note",
                                     "# dralint: disable-file=DRA3", "# dralint: disable=DRA999"]))
        if lines:
            lines[i] = note.strip() if note.startswith("#") else lines[i] + note
    out = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n...\n"]))
    if draw(st.booleans()):
        out = "# Source: chart/templates/x.yaml\n" + out
    raw = out.encode("utf-8")
    if draw(st.integers(0, 4)) == 0:
        raw = raw.replace(b"\n", b"\r\n")
    if draw(st.integers(0, 4)) == 0:
        raw = b"\xef\xbb\xbf" + raw
    return raw


# -- byte-level mutations -----------------------------------------------------------------------

SEEDS = [p.read_bytes() for p in sorted((REPO / "examples").rglob("*.yaml"))[:12]] or [b"apiVersion: v1\nkind: Pod\n"]
FRAGMENTS = [b"&a ", b"*a", b"<<: *a\n", b"!!binary ", b"!custom ", b"%YAML 1.1\n---\n", b"{{ .Values.x }}", b"\t",
             b"\x00", b"---\n", b"...\n", b"? ", b": ", b"- ", b"[", b"]", b"{", b"}", b"|-\n", b">+\n", b"'", b'"',
             b"\\u0000", b"#", b"\r", b"\xef\xbb\xbf", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"nvidia.com/gpu: 1\n",
             b"resourceClaimTemplateName: ", b"  " * 40, b"[" * 300, b"a: &a [*a]\n"]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.integers(0, 3))
        pos = draw(st.integers(0, len(data)))
        if op == 0:
            data[pos:pos] = draw(st.sampled_from(FRAGMENTS))
        elif op == 1 and data:
            data[min(pos, len(data) - 1)] = draw(st.integers(0, 255))
        elif op == 2:
            del data[pos : pos + draw(st.integers(1, 40))]
        else:
            data = data[:pos]
    return bytes(data)


raw_input = st.one_of(mutated(), st.binary(max_size=300))


# -- the properties -----------------------------------------------------------------------------

#: crashes found by fuzzing in code owned elsewhere, not fixed yet: (rule, text of the error).
#: `check` tolerates exactly these; `test_known_crash_still_happens` fails once one is fixed, so the
#: entry gets removed and the fuzzer guards the fix from then on.
#: crashes the fuzzers found and that are fixed: each must stay fixed (see test_fixed_crashes_stay_fixed)
FIXED_CRASHES: dict[tuple[str, str], bytes] = {
    # checks/wiring.py DRA302 put container claim names in a set without checking they are strings
    ("DRA302", "unhashable type"): b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                                   b"  - name: main\n    resources:\n      claims:\n      - name: {}\n"
                                   b"  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: t}\n",
    # checks/rollout.py DRA403 took `r.alternatives[0]` of a request whose `exactly` is not a mapping
    ("DRA403", "IndexError"): b"apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\n"
                              b"metadata: {name: x, namespace: default}\nspec:\n  spec:\n    devices:\n"
                              b"      requests:\n      - {name: gpu, exactly: ''}\n---\n"
                              b"apiVersion: resource.k8s.io/v1beta2\nkind: ResourceSlice\nmetadata: {name: s}\n"
                              b"spec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n"
                              b"  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  devices:\n  - name: g0\n",
}

#: crashes found by fuzzing and not fixed yet (strict xfail below): move an entry to FIXED_CRASHES when fixed
KNOWN_CRASHES: dict[tuple[str, str], bytes] = {}


def _unknown(errors: list[Any]) -> list[dict[str, str]]:
    return [e.__dict__ for e in errors
            if not any(e.rule == rule and text in e.detail for rule, text in KNOWN_CRASHES)]



def check(raw: bytes, path: str = "fuzz.yaml", fix: bool = True) -> None:
    """Everything that must hold for any input; raises AssertionError with the reason."""
    sf = load_bytes(path, raw)
    # text lines, or raw lines when the bytes did not decode (a DRA005 can point into them)
    lines = max(len(sf.text.splitlines()), raw.count(b"\n"), 1) + 1
    for cfg in (ALL_RULES, PROFILED):
        result = lint_files([sf], [], cfg)
        assert _unknown(result.internal_errors) == [], _unknown(result.internal_errors)
        for f in result.findings:
            assert f.message and isinstance(f.message, str), f
            assert 1 <= f.span.line <= lines and f.span.column >= 1, (f.rule, f.span, lines)
            assert (f.span.end_line, f.span.end_column) >= (f.span.line, f.span.column), (f.rule, f.span)
            f.message.encode("utf-8")  # printable in every report format
        again = lint_files([load_bytes(path, raw)], [], cfg)
        assert [(f.rule, f.span, f.message) for f in again.findings] == \
            [(f.rule, f.span, f.message) for f in result.findings], "linting is not deterministic"
    if fix:
        check_fix(raw, path, sf)


def check_fix(raw: bytes, path: str, sf: Any) -> None:
    try:
        from dralint.fix.loop import fix_files
    except ImportError:  # pragma: no cover - the fixer ships with dralint now
        return
    run = fix_files([sf], [], ALL_RULES, unsafe=True)
    assert _unknown(run.result.internal_errors) == [], _unknown(run.result.internal_errors)
    for outcome in run.files:
        if outcome.after == outcome.before:
            continue
        before = load_bytes(path, outcome.before)
        after = load_bytes(path, outcome.after)
        broken = {p.code for p in after.problems} - {p.code for p in before.problems}
        assert not broken & {"DRA001", "DRA003", "DRA005"}, (broken, outcome.after[:2000])


@SETTINGS
@given(manifest())
def test_structured_manifests(raw: bytes) -> None:
    check(raw)


@SETTINGS
@given(raw_input)
def test_mutated_bytes(raw: bytes) -> None:
    check(raw)


@SETTINGS
@given(raw_input, st.sampled_from(["x.json", "x.yml", "-"]))
def test_mutated_bytes_other_names(raw: bytes, path: str) -> None:
    check(raw, path, fix=False)


@pytest.mark.parametrize("fixed", sorted(FIXED_CRASHES))
def test_fixed_crashes_stay_fixed(fixed: tuple[str, str]) -> None:
    result = lint_files([load_bytes("k.yaml", FIXED_CRASHES[fixed])], [], ALL_RULES)
    assert result.internal_errors == []
    check(FIXED_CRASHES[fixed])


@pytest.mark.parametrize("known", sorted(KNOWN_CRASHES) or [pytest.param(
    ("", ""), marks=pytest.mark.skip(reason="no crash found by fuzzing is open: KNOWN_CRASHES is empty"))])
@pytest.mark.xfail(strict=True, reason="a crash found by fuzzing, owned by the rule's author (see KNOWN_CRASHES)")
def test_known_crash_still_happens(known: tuple[str, str]) -> None:
    """XPASS (a failure, strict) means the crash is fixed: delete its KNOWN_CRASHES entry."""
    result = lint_files([load_bytes("k.yaml", KNOWN_CRASHES[known])], [], ALL_RULES)
    assert not any(e.rule == known[0] and known[1] in e.detail for e in result.internal_errors)


def test_the_harness_can_fail(monkeypatch: Any) -> None:
    """A rule that crashes must make `check` fail (a fuzzer that cannot fail finds nothing)."""
    from dralint.checks.registry import REGISTRY, RuleImpl, load_checks

    load_checks()
    impl = REGISTRY["DRA201"]

    def broken(obj: Any, ctx: Any) -> Any:
        raise KeyError("boom")
        yield  # pragma: no cover - a generator, like every check

    monkeypatch.setitem(REGISTRY, "DRA201", RuleImpl(impl.code, broken, impl.scope, impl.kinds))
    with pytest.raises(AssertionError, match="boom"):
        check(b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n", fix=False)


def test_long_run_harness_frees_garbage(monkeypatch: Any, tmp_path: Path) -> None:
    """bench/fuzz.py frees every input's cyclic garbage.

    Each `lint_files` freezes all live objects, garbage included, and unfreezes them into the oldest
    generation, which the automatic collector then almost never examines; hypothesis leaves cycles
    behind for every input, and a 30-minute run reached 22 GB until the harness collected itself.
    """
    spec = importlib.util.spec_from_file_location("dralint_bench_fuzz", REPO / "bench" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    class Cycle:
        me: Any = None

    left: list[weakref.ref[Cycle]] = []

    def check_leaving_a_cycle(raw: bytes) -> None:
        c = Cycle()
        c.me = c
        left.append(weakref.ref(c))
        del c  # garbage now, but only a collection can free it: lint_files hides it by freezing it
        lint_files([load_bytes("k.yaml", b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")], [], ALL_RULES)

    monkeypatch.setattr(bench.props, "check", check_leaving_a_cycle)
    monkeypatch.setattr(bench, "GC_EVERY", 0.0)
    n = bench.run("bytes", 60.0, 1, tmp_path, {}, max_batches=2)
    assert n == len(left) > 0
    assert sum(r() is not None for r in left) == 0
