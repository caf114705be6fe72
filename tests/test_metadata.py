"""DRA008 and DRA110: type meta and ObjectMeta, checked the way the API server checks them."""

from __future__ import annotations

from .conftest import lint_text


def _findings(text: str, code: str = "DRA110") -> list[tuple[int, int, str]]:
    result = lint_text(text, select=[code])
    assert result.internal_errors == []
    return [(f.line, f.column, f.message) for f in result.findings]


def _obj(api: str, kind: str, meta: str) -> str:
    return f"apiVersion: {api}\nkind: {kind}\nmetadata:\n{meta}"


def test_name_format_follows_the_kind() -> None:
    # the same name is valid for one kind and not for another
    dotted = "  name: a.b\n"
    assert _findings(_obj("v1", "ConfigMap", dotted)) == []
    assert "DNS label" in _findings(_obj("v1", "Namespace", dotted))[0][2]
    assert "DNS-1035" in _findings(_obj("v1", "Service", "  name: 1abc\n"))[0][2]
    assert _findings(_obj("v1", "Pod", "  name: 1abc\n")) == []


def test_custom_resources_and_rbac_only_need_a_path_segment() -> None:
    assert _findings(_obj("rbac.authorization.k8s.io/v1", "ClusterRole", "  name: system:gpu-reader\n")) == []
    assert _findings(_obj("example.com/v1", "Widget", "  name: Mixed_Case\n")) == []
    assert "path segment" in _findings(_obj("example.com/v1", "Widget", "  name: a/b\n"))[0][2]


def test_name_or_generate_name_is_required() -> None:
    got = _findings(_obj("resource.k8s.io/v1", "DeviceClass", '  name: ""\n'))
    assert got and got[0][:2] == (4, 9) and "generateName" in got[0][2]
    assert _findings(_obj("resource.k8s.io/v1", "ResourceClaim", "  generateName: claim-\n")) == []
    bad = _findings(_obj("resource.k8s.io/v1", "ResourceClaim", "  generateName: Claim-\n"))
    assert len(bad) == 1 and "prefix" in bad[0][2]


def test_tool_configurations_have_no_object_meta() -> None:
    assert _findings("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n") == []
    assert _findings("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n") == []


def test_labels_annotations_finalizers_owners() -> None:
    long_value = "v" * 64
    meta = (f"  name: x\n  labels:\n    ok: fine\n    bad key!: x\n    long: {long_value}\n    n: 3\n"
            "  annotations:\n    Example.COM/Mixed: ok\n  finalizers: [\"bad finalizer\"]\n"
            "  ownerReferences:\n  - kind: Job\n    name: j\n")
    got = [m for _, _, m in _findings(_obj("v1", "ConfigMap", meta))]
    assert any("`bad key!`" in m for m in got)
    assert any("64 characters" in m for m in got)
    assert any("int value" in m for m in got)
    assert not any("Example.COM" in m for m in got)  # annotation keys compare in lower case
    assert any("finalizer" in m for m in got)
    assert any("`apiVersion`, `uid`" in m for m in got)
    assert len(got) == 5


def test_annotation_total_size() -> None:
    half = "x" * 140000
    meta = f"  name: x\n  annotations:\n    a: {half}\n    b: {half}\n"
    got = _findings(_obj("v1", "ConfigMap", meta))
    assert len(got) == 1 and "262144" in got[0][2]
    assert _findings(_obj("v1", "ConfigMap", f"  name: x\n  annotations:\n    a: {half}\n")) == []


def test_namespace() -> None:
    assert "namespace" in _findings(_obj("v1", "ConfigMap", "  name: x\n  namespace: Bad_NS\n"))[0][2]


def test_half_type_meta_is_an_error_and_values_files_are_not() -> None:
    got = _findings("kind: Pod\nmetadata:\n  name: p\nspec: {}\n", "DRA008")
    assert len(got) == 1 and got[0][:2] == (1, 1) and "no `apiVersion`" in got[0][2]
    got = _findings("apiVersion: v1\nmetadata:\n  name: p\n", "DRA008")
    assert len(got) == 1 and "no `kind`" in got[0][2]
    # Helm values with a top-level `kind:` are not objects
    assert _findings("kind: Deployment\nreplicaCount: 2\n", "DRA008") == []
    result = lint_text("kind: Pod\nmetadata:\n  name: p\n", select=["DRA002"])
    assert result.findings == []  # reported once, by DRA008


def test_label_keys_and_values_at_their_limits() -> None:
    from dralint.checks.conformance import is_label_key, is_label_value

    prefix = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])  # a 253-character DNS subdomain
    longest = f"{prefix}/{'n' * 63}"
    assert len(longest) == 317
    for _ in range(2):  # the second time from the memo: the same answers
        assert is_label_key(longest) and is_label_key("app.kubernetes.io/name") and is_label_key("a")
        assert not is_label_key(f"{prefix}x/{'n' * 63}")  # the prefix is one character too long
        assert not is_label_key(f"{prefix}/{'n' * 64}")  # the name is
        assert not is_label_key("x" * 100_000) and not is_label_key("-a") and not is_label_key("")
        assert is_label_value("") and is_label_value("v" * 63) and not is_label_value("v" * 64)
        assert not is_label_value("-v") and not is_label_value("v v")


def test_a_label_is_judged_on_every_object_that_carries_it() -> None:
    # valid (key, value) pairs are remembered for the run: a bad one never is, and a key's good value
    # does not vouch for the same key with another value
    labels = "  labels:\n    app: gpu\n    team: {team}\n"
    docs = [_obj("v1", "ConfigMap", f"  name: c{i}\n" + labels.format(team=team))
            for i, team in enumerate(["ml", "-bad-", "ml", "-bad-", "ml"])]
    got = _findings("---\n".join(docs))
    assert [line for line, _, msg in got if "-bad-" in msg] == [15, 31]  # each document: 7 lines and `---`


def test_the_short_road_for_plain_metadata_finds_what_the_full_checks_find() -> None:
    """DRA110 skips its checks for metadata it can tell is valid from labels and annotation keys
    seen valid before; a value that changed type, or a total that grew, must still be found."""
    from dralint.checks import metadata as m
    from dralint.checks.registry import Context
    from dralint.engine.config import build_config
    from dralint.inputs.index import Index, K8sObject, file_units
    from dralint.inputs.load import load_bytes
    from tests.conftest import REPO

    ctx = Context(index=Index(), profile=build_config({}, None, REPO).profile)
    wide = "é" * 100_000  # 200,000 bytes: under the limit, though four bytes a character would not be
    wider = "é" * 140_000  # 280,000 bytes: over it
    metas = [
        "{name: ok, namespace: team-a, labels: {app: web}, annotations: {example.com/x: y}}",
        "{name: ok, labels: {app: 3}}", "{name: ok, labels: {app: [1]}}", "{name: ok, labels: {app: web, b@d: x}}",
        "{name: ok, annotations: {example.com/x: 3}}", "{name: ok, annotations: {example.com/x: null}}",
        f"{{name: ok, annotations: {{example.com/x: {wide}}}}}",
        f"{{name: ok, annotations: {{example.com/x: {wider}}}}}",
        "{name: ok, annotations: {Bad Key: x}}", "{name: ok, namespace: Bad_NS}", "{name: ok, namespace: 7}",
        "{name: ok, namespace: [a]}", "{name: ok, namespace: {a: b}}", "{name: ok, labels: [a]}",
        "{name: Not_Valid}", "{name: ''}",
        "{generateName: gen-}", "{name: ok, generateName: 3}", "{name: ok, finalizers: ['bad one']}",
        "{name: ok, ownerReferences: [{kind: Job}]}", "{name: ok, labels: null, annotations: null}",
    ]
    for _ in range(2):  # the second time, the memos hold everything seen valid the first time
        for meta in metas:
            for kind in ("ConfigMap", "Service"):
                sf = load_bytes("a.yaml", f"apiVersion: v1\nkind: {kind}\nmetadata: {meta}\n".encode())
                (obj,) = [u for u in file_units(sf) if isinstance(u, K8sObject)]
                data = obj.data["metadata"]
                if meta == metas[-1]:  # a template's placeholders (a rendered file keeps none, a patch may)
                    data = obj.data["metadata"] = {"name": "{{ .Values.n }}", "namespace": "{{ .Release.Namespace }}",
                                                   "labels": {"{{ k }}": "{{ v }}"}}
                full = [*m._check_name(obj, data), *m._check_namespace(obj, data), *m._check_labels(data),
                        *m._check_annotations(data), *m._check_finalizers(data), *m._check_owners(data)]
                assert list(m.invalid_object_metadata(obj, ctx)) == full, meta
                if m._plainly_valid(obj, data):
                    assert full == [], meta
    assert any("280013 bytes" in v.message for v in m._check_annotations({"annotations": {"example.com/x": wider}}))


def test_the_memos_of_valid_names_keep_only_short_strings() -> None:
    """A value with a template's placeholders passes at any length; the run's memos of valid labels,
    annotation keys and namespaces come from the linted files, so they keep only short ones."""
    from dralint.checks import metadata as m
    from dralint.inputs.index import K8sObject, file_units
    from dralint.inputs.load import load_bytes

    long = "{{ x }}" + "y" * 10_000
    assert list(m._check_labels({"labels": {"k": long}})) == []
    assert list(m._check_annotations({"annotations": {long: "v"}})) == []
    sf = load_bytes("a.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (obj,) = [u for u in file_units(sf) if isinstance(u, K8sObject)]
    assert m._plainly_valid(obj, {"name": "a", "namespace": long})
    assert ("k", long) not in m._GOOD_LABELS and long not in m._GOOD_NOTE_KEYS and long not in m._GOOD_NAMESPACES
    assert list(m._check_labels({"labels": {"k": "short"}})) == [] and ("k", "short") in m._GOOD_LABELS
