"""Rules read other files only through the index's recording queries: the results cache relies on it.

`Index.reads` is what a stored result is checked against (`dralint.engine.results`); a rule that
walked `index.objects` itself would depend on files the cache does not look at."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dralint.inputs.index import ALL_OBJECTS, ALL_VALUES, Index
from dralint.inputs.load import load_bytes

PKG = Path(__file__).resolve().parent.parent / "dralint"
#: the code that runs inside rules: checks and what they call to look things up
RULE_CODE = [PKG / "checks", PKG / "cel", PKG / "knowledge", PKG / "inputs" / "dra.py", PKG / "suggest.py"]
DIRECT = re.compile(r"\bindex\.(objects|values|files|_by_kind|_by_kind_name|_values_by_file)\b")


def test_rule_code_never_reads_the_index_lists_directly() -> None:
    offenders = []
    for root in RULE_CODE:
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if DIRECT.search(line):
                    offenders.append(f"{path.relative_to(PKG)}:{n}: {line.strip()}")
    assert offenders == []


def test_the_scan_sees_a_direct_read() -> None:
    assert DIRECT.search("for o in ctx.index.objects:") and DIRECT.search("x = index.values[0]")
    assert not DIRECT.search("ctx.index.all_objects()") and not DIRECT.search("index.values_in(sf)")


def test_queries_record_what_they_asked() -> None:
    sf = load_bytes("a.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n[1, 2]\n")
    index = Index()
    index.add_file(sf)
    assert index.reads == set()
    assert index.values_in(sf) and index.reads == set()  # a file's own documents depend on nothing else
    list(index.of_kind("DeviceClass", "ResourceSlice"))
    index.find("ResourceClaim", "c", "ns")
    index.find_any_namespace("Namespace", "ns")
    assert index.reads == {"DeviceClass", "ResourceSlice", "ResourceClaim", "Namespace"}
    assert [o.name for o in index.all_objects()] == ["x"] and ALL_OBJECTS in index.reads
    assert len(index.all_values()) == 1 and ALL_VALUES in index.reads
    fresh = Index()
    fresh.add_file(sf)
    assert fresh.values_of_files({"kustomization.yaml"}) == [] and fresh.reads == {ALL_VALUES}
    assert len(fresh.values_of_files({"a.yaml"})) == 1


def _deployment(name: str, claim: str, replicas: int = 2) -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n"
            f"  replicas: {replicas}\n  template:\n    spec:\n      resourceClaims:\n"
            f"      - {{name: gpu, resourceClaimName: {claim}}}\n      containers:\n      - name: c\n"
            "        image: busybox\n        resources: {claims: [{name: gpu}]}\n")


def test_claim_users_come_from_summaries_without_loading_workloads(tmp_path: Path, monkeypatch: Any) -> None:
    """DRA307 offers its fix only for a claim no other workload uses; counting the users of a claim
    across a repository reads the summaries' claim references, never the context workloads themselves."""
    from dralint.engine.config import build_config
    from dralint.engine.pipeline import lint_paths

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    claim = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, namespace: ml}\n"
             "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}\n")
    (repo / "claim.yaml").write_text(claim)
    target = repo / "apps" / "train.yaml"
    target.write_text(_deployment("train", "shared"))
    (repo / "apps" / "other.yaml").write_text(_deployment("other", "alone", replicas=1))

    def run() -> Any:
        config = build_config({}, None, repo)
        config.cache_dir = str(tmp_path / "xdg" / "dralint" / "c")
        return lint_paths([str(target)], config, context=[str(repo)], jobs=1)

    def dra307_fix(r: Any) -> bool:
        (f,) = [f for f in r.findings if f.rule == "DRA307"]
        return f.fix is not None

    assert dra307_fix(run())  # nobody else names `shared`: the claim can become a template
    (repo / "apps" / "other.yaml").write_text(_deployment("other", "shared", replicas=1))
    run()  # the context's summaries are cached
    (repo / "apps" / "train.yaml").write_text(_deployment("train", "shared", replicas=3))
    r = run()
    assert not dra307_fix(r)  # `other` shares it on purpose: no fix that would split them
    assert r.stats.get("on_demand_loads", 0) == 0
