"""Engine behaviour: selection, severities, suppressions, context files, pod templates everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dralint.engine.config import ConfigError, build_config, load_config
from dralint.engine.pipeline import lint_paths
from dralint.inputs.load import load_bytes

from .conftest import REPO, codes, lint_text

GPU_POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: cuda
    resources:
      limits:
        nvidia.com/gpu: 1{comment}
"""


def test_selection_by_prefix_and_ignore() -> None:
    text = GPU_POD.format(comment="")
    assert codes(lint_text(text)) == ["DRA201"]
    assert codes(lint_text(text, select=["DRA3"])) == []
    assert codes(lint_text(text, select=["DRA2"], ignore=["DRA201"])) == []


def test_off_by_default_rule_needs_its_exact_code() -> None:
    text = "replicaCount: 2\n"
    assert codes(lint_text(text)) == []
    assert codes(lint_text(text, select=["DRA0"])) == []
    assert codes(lint_text(text, **{"extend-select": ["DRA002"]})) == ["DRA002"]


def test_severity_override_and_unknown_codes() -> None:
    r = lint_text(GPU_POD.format(comment=""), severity={"DRA201": "error"})
    assert str(r.findings[0].severity) == "error"
    with pytest.raises(ConfigError):
        lint_text("a: 1\n", select=["DRA999"])
    with pytest.raises(ConfigError):
        build_config({"selct": ["DRA2"]}, None, REPO)


def test_rule_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="DRA201"):
        build_config({"rules": {"DRA201": {"nope": 1}}}, None, REPO)


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("  # dralint: disable=DRA201", []),
        ("  # dralint: disable=DRA2", []),
        ("  # dralint: disable=all", []),
        ("  # dralint: disable=DRA301", ["DRA201", "DRA006"]),
    ],
)
def test_line_suppressions(comment: str, expected: list[str]) -> None:
    assert sorted(codes(lint_text(GPU_POD.format(comment=comment)))) == sorted(expected)


def test_next_line_and_file_suppressions() -> None:
    text = GPU_POD.replace("        nvidia.com/gpu: 1", "        # dralint: disable=DRA201\n        nvidia.com/gpu: 1")
    assert codes(lint_text(text.format(comment=""))) == []
    text = "# dralint: disable-file=DRA201\n" + GPU_POD.format(comment="")
    assert codes(lint_text(text)) == []


def test_annotation_suppression_and_unused_annotation() -> None:
    text = GPU_POD.replace("  name: p\n", '  name: p\n  annotations:\n    dralint.io/ignore: "DRA201,DRA302"\n')
    r = lint_text(text.format(comment=""))
    assert codes(r) == ["DRA006"]
    assert "DRA302" in r.findings[0].message and r.findings[0].span.line == 6


def test_per_file_ignores() -> None:
    ignores = {"per-file-ignores": {"legacy/*": ["DRA2"]}}
    r = lint_text(GPU_POD.format(comment=""), path="legacy/pod.yaml", **ignores)
    assert codes(r) == []


def test_context_files_are_indexed_but_not_reported() -> None:
    pod = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: t
  containers:
  - name: c
    resources:
      claims: [{name: gpu}]
"""
    template = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: nosuch.example.com}
"""
    assert codes(lint_text(pod)) == ["DRA304"]
    r = lint_text(pod, context=[("t.yaml", template)])
    assert codes(r) == []  # found in context; the context file's own DRA305 is not reported


@pytest.mark.parametrize(
    ("kind_block", "line"),
    [
        ("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: x}\nspec:\n  jobTemplate:\n    spec:\n      template:\n"
         "        spec:\n          containers:\n          - name: c\n"
         "            resources: {limits: {nvidia.com/gpu: 1}}\n",
         11),
        ("apiVersion: v1\nkind: PodTemplate\nmetadata: {name: x}\ntemplate:\n  spec:\n    containers:\n    - name: c\n"
         "      resources: {limits: {nvidia.com/gpu: 1}}\n", 8),
        ("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: x}\nspec:\n  workerGroupSpecs:\n  - groupName: g\n"
         "    template:\n      spec:\n        containers:\n        - name: c\n"
         "          resources: {limits: {nvidia.com/gpu: 1}}\n", 11),
        ("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: x}\nspec:\n  replicatedJobs:\n"
         "  - name: w\n    template:\n      spec:\n        template:\n          spec:\n            containers:\n"
         "            - name: c\n              resources: {limits: {nvidia.com/gpu: 1}}\n", 13),
    ],
)
def test_pod_templates_in_every_kind(kind_block: str, line: int) -> None:
    r = lint_text(kind_block)
    assert codes(r) == ["DRA201"]
    assert r.findings[0].span.line == line


def test_ephemeral_and_init_containers_are_checked() -> None:
    text = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - name: i
    resources: {limits: {nvidia.com/mig-1g.5gb: 1}}
  ephemeralContainers:
  - name: e
    resources: {requests: {nvidia.com/gpu.shared: 1}}
  containers:
  - name: c
"""
    assert codes(lint_text(text)) == ["DRA202", "DRA203"]


def test_false_friends_are_not_legacy_nvidia_usage() -> None:
    text = GPU_POD.format(comment="").replace("nvidia.com/gpu: 1", "nvidia.com/gpumem: 1024")
    assert codes(lint_text(text)) == []


def test_vendor_resources_from_config() -> None:
    text = GPU_POD.format(comment="").replace("nvidia.com/gpu", "amd.com/gpu")
    assert codes(lint_text(text)) == []
    r = lint_text(text, **{"extended-resources": [{"pattern": r"amd\.com/gpu", "device-class": "gpu.amd.com"}]})
    assert codes(r) == ["DRA201"] and "gpu.amd.com" in r.findings[0].message


def test_helm_source_is_carried_on_findings() -> None:
    text = "# Source: chart/templates/pod.yaml\n" + GPU_POD.format(comment="")
    assert lint_text(text).findings[0].source == "chart/templates/pod.yaml"


def test_kind_list_items_are_objects_with_exact_positions() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- " + GPU_POD.format(comment="").replace("\n", "\n  ").rstrip() + "\n"
    r = lint_text(text)
    assert codes(r) == ["DRA201"]
    assert r.findings[0].span.line == 14 and r.findings[0].object is not None
    assert r.findings[0].object.kind == "Pod"


def test_config_file_discovery(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".dralint.yaml").write_text("ignore: [DRA201]\nkubernetes-version: v1.35.2\n")
    cfg = load_config(cwd=tmp_path / "sub")
    assert cfg.ignore == ["DRA201"] and cfg.profile.kubernetes_version == "1.35"
    (tmp_path / ".dralint.yaml").write_text("ignore: DRA201\n")
    with pytest.raises(ConfigError):
        load_config(cwd=tmp_path)


def test_pyproject_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.dralint]\nselect = ["DRA3"]\n')
    assert load_config(cwd=tmp_path).select == ["DRA3"]


def test_discovery_skips_vcs_venvs_and_excludes(tmp_path: Path) -> None:
    for rel in ["a.yaml", "b.yml", "c.json", "d.txt", ".git/x.yaml", "node_modules/y.yaml", "venv/z.yaml",
                "skip/w.yaml", "tools/py311/lib/v.yaml"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(GPU_POD.format(comment="") if p.suffix != ".json" else "{}")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("")
    (tmp_path / "tools" / "py311" / "pyvenv.cfg").write_text("")  # a virtualenv under any name
    cfg = build_config({"exclude": ["skip"]}, None, tmp_path)
    r = lint_paths([str(tmp_path)], cfg)
    assert sorted(Path(f.path).name for f in r.files) == ["a.yaml", "b.yml", "c.json"]


def test_shared_claim_with_a_sharing_strategy_is_intended() -> None:
    workload = """apiVersion: apps/v1
kind: Deployment
metadata: {name: nb, namespace: ml}
spec:
  replicas: 3
  selector: {matchLabels: {app: nb}}
  template:
    metadata: {labels: {app: nb}}
    spec:
      resourceClaims:
      - {name: gpu, resourceClaimName: shared}
      containers:
      - name: c
        resources: {claims: [{name: gpu}]}
"""
    claim = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: ml}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
"""
    sharing = """    config:
    - opaque:
        driver: gpu.nvidia.com
        parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: {strategy: TimeSlicing}}
"""
    assert codes(lint_text(workload, select=["DRA307"], context=[("c.yaml", claim)])) == ["DRA307"]
    assert codes(lint_text(workload, select=["DRA307"], context=[("c.yaml", claim + sharing)])) == []


# -- facets: the engine skips pod/claim rules on objects that cannot trigger them ----------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"containers": [{"name": "c"}]}, False),
        ({"containers": [{"name": "c", "resources": {"limits": {"cpu": 1}}}]}, False),
        ({"resourceClaims": [{"name": "g"}], "containers": [{"name": "c"}]}, True),
        ({"resourceClaims": None, "containers": []}, True),  # malformed, still a claim rule's business
        ({"containers": [{"name": "c", "resources": {"claims": [{"name": "g"}]}}]}, True),
        ({"initContainers": [{"name": "i", "resources": {"claims": [{"name": "g"}]}}]}, True),
        ({"resources": {"claims": [{"name": "g"}]}, "containers": [{"name": "c"}]}, True),
        ({"containers": ["not-a-map", {"resources": "nor-this"}]}, False),
    ],
)
def test_uses_claims(spec: dict[str, object], expected: bool) -> None:
    from dralint.knowledge.k8s import PodSpecRef, uses_claims

    assert uses_claims(PodSpecRef(("spec",), spec, ())) is expected


def test_claim_rules_still_run_where_claims_are_only_on_containers() -> None:
    # no pod-level `resourceClaims`: the object must still reach DRA301
    text = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: cuda
    resources:
      claims:
      - name: gpu
"""
    assert "DRA301" in codes(lint_text(text))


def test_claim_rules_run_on_pod_templates_inside_custom_resources() -> None:
    text = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: ml}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            resourceClaims:
            - name: gpu
              resourceClaimTemplateName: not-there
            containers:
            - name: c
              image: cuda
              resources:
                claims:
                - name: gpu
"""
    assert "DRA304" in codes(lint_text(text))


def test_facets_of_objects() -> None:
    from dralint.inputs.index import CLAIMS, DRA, POD, Index
    from dralint.inputs.load import load_bytes

    text = GPU_POD.format(comment="") + (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: d}\n"
    )
    index = Index()
    index.add_file(load_bytes("x.yaml", text.encode()))
    pod, cm, dc = index.objects
    assert pod.facets == POD and not pod.facets & CLAIMS
    assert cm.facets == 0
    assert dc.facets == DRA


def _template(name: str, ns: str | None) -> str:
    meta = f"{{name: {name}, namespace: {ns}}}" if ns else f"{{name: {name}}}"
    return (f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {meta}\n"
            "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
            "        exactly: {deviceClassName: gpu.nvidia.com}\n")


def _pod_using(template: str, ns: str) -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec:\n  resourceClaims:\n"
            f"  - name: gpu\n    resourceClaimTemplateName: {template}\n  containers:\n  - name: c\n    image: cuda\n"
            "    resources:\n      claims:\n      - name: gpu\n")


def test_did_you_mean_suggests_close_names_of_the_pods_namespace_only() -> None:
    docs = [_template("trainer-gpu", "ml"), _template("trainer-gpus", "other"), _template("shared-gpu", None)]
    result = lint_text("---\n".join([*docs, _pod_using("traner-gpu", "ml")]), select=["DRA304"])
    (f,) = result.findings
    assert "did you mean `trainer-gpu`?" in f.message
    # only the other namespace has a close name: no hint from there (pods cannot use it)
    result = lint_text("---\n".join([_template("trainer-gpus", "other"), _pod_using("trainer-gpu", "ml")]),
                       select=["DRA304"])
    (f,) = result.findings
    assert "did you mean" not in f.message
    # objects without a namespace land in the pod's: they are candidates
    result = lint_text("---\n".join([_template("shared-gpu", None), _pod_using("shared-gpus", "ml")]),
                       select=["DRA304"])
    (f,) = result.findings
    assert "did you mean `shared-gpu`?" in f.message


def test_closest_respects_the_cutoff() -> None:
    from dralint.suggest import closest

    assert closest("trainer-gpu", ["trainer-gpu2", "x"]) == "trainer-gpu2"
    assert closest("trainer-gpu", ["inference"]) is None
    assert closest("abc", []) is None


def test_small_runs_do_not_freeze_the_callers_objects() -> None:
    import gc

    from dralint.engine.memory import FREEZE_MIN_CHARS, quiet_gc, trees_built

    garbage: list[object] = []
    garbage.append(garbage)  # a cycle the caller expects its collector to free
    with quiet_gc():
        trees_built(100)
        assert gc.get_freeze_count() == 0 and gc.isenabled()
    with quiet_gc():
        trees_built(FREEZE_MIN_CHARS)
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_a_lint_inside_a_quiet_block_keeps_its_trees_frozen() -> None:
    """`migrate` loads its files in a quiet block and lints inside it: the inner block must not thaw them."""
    import gc

    from dralint.engine.memory import FREEZE_MIN_CHARS, quiet_gc, trees_built

    with quiet_gc():
        trees_built(FREEZE_MIN_CHARS)
        frozen = gc.get_freeze_count()
        with quiet_gc():
            trees_built(100)
        assert gc.get_freeze_count() >= frozen > 0 and gc.isenabled()
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_rules_skip_the_intended_view_only_where_it_is_the_object_itself() -> None:
    """The engine asks once per object whether its intended view differs from it: only then are the
    rules called through the view (`on_intended`); an object fine as written, or of another group,
    gets the rules themselves."""
    from dralint.checks.intended import as_written
    from dralint.checks.registry import load_checks
    from dralint.engine.runner import FileWork, _Runner
    from dralint.inputs.index import Index, K8sObject, file_units

    runner = _Runner(build_config({}, None, REPO), Index())
    impls = {impl.code: impl for impl in load_checks().values()}
    seen: dict[str, list[Any]] = {}
    runner._runs = lambda work, calls, unit, ann, defer: seen.setdefault(unit.name, list(calls))  # type: ignore
    claim = "apiVersion: {api}\nkind: ResourceClaim\nmetadata: {{name: {name}}}\nspec:\n  devices:\n" \
            "    requests:\n    - name: gpu\n{body}"
    exact = "      exactly: {deviceClassName: gpu.nvidia.com}\n"
    flat = "      deviceClassName: gpu.nvidia.com\n"  # the v1beta1 shape, written as v1: the view differs
    text = "---\n".join([
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: plain}\nspec:\n  template:\n    spec:\n"
        "      containers: [{name: c, image: x}]\n",
        claim.format(api="resource.k8s.io/v1", name="fine", body=exact),
        claim.format(api="resource.k8s.io/v1", name="viewed", body=flat),
        claim.format(api="example.com/v1", name="other-group", body=flat),
    ])
    sf = load_bytes("a.yaml", text.encode())
    for obj in file_units(sf):
        assert isinstance(obj, K8sObject)
        runner._object_units(FileWork(sf), obj, None, False)
    assert set(seen) == {"plain", "fine", "viewed", "other-group"} and all(seen.values())
    wrapped = 0
    for name, through_view in (("plain", False), ("fine", False), ("viewed", True), ("other-group", False)):
        calls = seen[name]
        for fn, meta, _ in calls:
            impl = impls[meta.code]
            if as_written(impl.fn) is not impl.fn:  # an "intended" rule: the view only where it may differ
                wrapped += 1
                assert fn is (impl.fn if through_view else as_written(impl.fn)), meta.code
            else:
                assert fn is impl.fn
    assert wrapped > 10
