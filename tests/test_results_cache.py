"""The results cache: a warm run parses nothing, and an edit changes exactly the findings that depend on it.

Every scenario compares the cached run with a run without any cache on the same files (the truth),
and names the findings that must appear or go, so a cache that served stale findings, or one that
never served any, fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dralint.engine.config import build_config
from dralint.engine.pipeline import lint_paths
from dralint.engine.results import Entry, FileRow, deps_digest
from dralint.engine.runner import Result
from dralint.model import Applicability, Edit, Finding, Fix, Severity, Span

CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: big.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
"""

TEMPLATE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: big.example.com}
"""


def pod(name: str, template: str = "one-gpu") -> str:
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml}}
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: {template}
  containers:
  - name: main
    image: busybox
    resources:
      claims: [{{name: gpu, request: gpu}}]
"""


LEGACY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: old, namespace: ml}
spec:
  template:
    spec:
      containers:
      - name: c
        image: busybox  # dralint: disable-next-line=DRA999
        resources: {limits: {nvidia.com/gpu: 1}}
"""

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: ml}\ndata: {a: '1'}\n"


@pytest.fixture(autouse=True)
def _isolated(user_cache: Path) -> None:
    """Every test here runs with a fake home and user cache directory (`tests.conftest.user_cache`)."""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for sub in ("classes", "claims", "apps"):
        (root / sub).mkdir(parents=True)
    (root / "classes" / "big.yaml").write_text(CLASS)
    (root / "claims" / "one-gpu.yaml").write_text(TEMPLATE)
    (root / "apps" / "a.yaml").write_text(pod("a"))
    (root / "apps" / "b.yaml").write_text(pod("b"))
    (root / "apps" / "legacy.yaml").write_text(LEGACY)
    (root / "apps" / "settings.yaml").write_text(CONFIGMAP)
    return root


FILES = 6


def check(repo: Path, cache: Path | None, jobs: int = 1, **cfg: Any) -> Result:
    config = build_config(cfg, None, repo)
    config.use_cache = cache is not None
    if cache is not None:
        config.cache_dir = str(cache)
    return lint_paths([str(repo)], config, jobs=jobs)


def seen(result: Result) -> list[tuple[Any, ...]]:
    """Everything a finding says, its fix's edits included, plus the suppressions."""
    out = [(f.path, f.span, f.rule, f.name, f.severity, f.message, f.object, f.source, repr(f.fix),
            f.doc_index, f.base_path, f.obj_path, repr(f.extra)) for f in result.findings]
    return [*out, ("suppressed", result.suppressed), *((f.path, f.rule, repr(f.extra)) for f in result.suppressions)]


def rules_in(result: Result, path_part: str) -> list[str]:
    return sorted(f.rule for f in result.findings if path_part in f.path)


def warm_equals_truth(repo: Path, cache: Path, **cfg: Any) -> Result:
    warm = check(repo, cache, **cfg)
    truth = check(repo, None, **cfg)
    assert seen(warm) == seen(truth)
    return warm


def test_unchanged_repository_parses_nothing(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    cold = check(repo, cache)
    assert cold.stats["parsed"] == FILES and cold.stats["results_reused"] == 0
    assert rules_in(cold, "legacy.yaml"), "the fixture must have findings for the cache to hold"
    warm = warm_equals_truth(repo, cache)
    assert warm.stats["parsed"] == 0 and warm.stats["results_reused"] == FILES
    assert seen(warm) == seen(cold)
    # the files of a warm run are still there for reports that quote them, parsed on demand
    assert sorted(Path(sf.path).name for sf in warm.files) == sorted(
        Path(sf.path).name for sf in cold.files)
    quoted = next(sf for sf in warm.files if sf.path.endswith("legacy.yaml"))
    assert "nvidia.com/gpu" in quoted.text
    # counts come from the entries; the index is still there for a report that walks it
    assert warm.target_objects() == cold.target_objects() == sum(1 for o in cold.index.objects if o.target) == FILES
    assert [(o.kind, o.name) for o in warm.index.objects] == [(o.kind, o.name) for o in cold.index.objects]


def test_same_findings_cold_warm_one_and_two_workers(repo: Path, user_cache: Path) -> None:
    # enough files for the parallel path to be taken with jobs=2
    for i in range(20):
        (repo / "apps" / f"more{i}.yaml").write_text(pod(f"p{i}", "one-gpu" if i % 2 else "missing"))
    truth = seen(check(repo, None))
    runs = {
        "cold -j2": check(repo, Path(repo.parent / "xdg" / "dralint" / "two"), jobs=2),
        "warm -j2": check(repo, Path(repo.parent / "xdg" / "dralint" / "two"), jobs=2),
        "cold -j1": check(repo, Path(repo.parent / "xdg" / "dralint" / "one"), jobs=1),
        "warm -j1": check(repo, Path(repo.parent / "xdg" / "dralint" / "one"), jobs=1),
    }
    for name, r in runs.items():
        assert seen(r) == truth, name
    assert runs["cold -j2"].stats["jobs"] == 2
    assert runs["warm -j2"].stats["results_reused"] == FILES + 20
    assert runs["warm -j1"].stats["parsed"] == 0
    # an entry written by workers serves a one-process run and the other way round
    (repo / "apps" / "more0.yaml").write_text(pod("p0", "one-gpu"))
    mixed = check(repo, Path(repo.parent / "xdg" / "dralint" / "two"), jobs=1)
    assert seen(mixed) == seen(check(repo, None)) and mixed.stats["parsed"] == 1


def test_renaming_the_class_changes_findings_in_the_files_that_use_it(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    before = check(repo, cache)
    assert rules_in(before, "one-gpu.yaml") == []
    (repo / "classes" / "big.yaml").write_text(CLASS.replace("big.example.com", "large.example.com"))
    after = warm_equals_truth(repo, cache)
    # the template, which did not change, now names a class nobody defines
    assert rules_in(after, "one-gpu.yaml") != [] and rules_in(before, "one-gpu.yaml") == []
    assert after.stats["results_stale"] > 0
    # the rename back restores every finding as it was
    (repo / "classes" / "big.yaml").write_text(CLASS)
    assert seen(warm_equals_truth(repo, cache)) == seen(before)


def test_stale_results_are_checked_again_in_stages(repo: Path, user_cache: Path) -> None:
    # which stored results hold is decided before the stream: the files an edit made stale stream
    # with the edited one, in stages, instead of all waiting with their trees for the whole index
    cache = user_cache / "c"
    check(repo, cache)
    (repo / "classes" / "big.yaml").write_text(CLASS.replace("big.example.com", "large.example.com"))
    after = warm_equals_truth(repo, cache)
    assert after.stats["results_stale"] >= 3 and after.stats["results_reused"] < FILES
    assert after.stats["waited"] > 0 and after.stats["kept_trees"] == 0


def test_removing_the_template_reports_both_pods(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    check(repo, cache)
    (repo / "claims" / "one-gpu.yaml").write_text(TEMPLATE.replace("name: one-gpu", "name: two-gpu"))
    after = warm_equals_truth(repo, cache)
    assert rules_in(after, "apps/a.yaml") and rules_in(after, "apps/b.yaml")


def test_an_edit_nothing_depends_on_relints_only_that_file(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    check(repo, cache)
    (repo / "apps" / "settings.yaml").write_text(CONFIGMAP.replace("a: '1'", "a: '2'"))
    (repo / "apps" / "legacy.yaml").write_text(LEGACY.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2"))
    after = warm_equals_truth(repo, cache)
    assert after.stats["parsed"] == 2 and after.stats["results_reused"] == FILES - 2


def test_a_new_file_that_answers_a_lookup_invalidates(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    (repo / "apps" / "a.yaml").write_text(pod("a", "later"))
    before = check(repo, cache)
    assert rules_in(before, "apps/a.yaml")  # the template `later` does not exist yet
    (repo / "claims" / "later.yaml").write_text(TEMPLATE.replace("name: one-gpu", "name: later"))
    after = warm_equals_truth(repo, cache)
    assert not rules_in(after, "apps/a.yaml")


def test_configuration_and_profile_are_part_of_the_key(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    base = check(repo, cache)
    older = warm_equals_truth(repo, cache, **{"kubernetes-version": "1.32"})
    assert older.stats["results_reused"] == 0
    assert seen(older) != seen(base)  # 1.32 does not serve resource.k8s.io/v1: the findings differ
    ignored = warm_equals_truth(repo, cache, ignore=["DRA5"])
    assert ignored.stats["results_reused"] == 0
    assert not [f for f in ignored.findings if f.rule.startswith("DRA5")]
    assert check(repo, cache).stats["results_reused"] == FILES  # the first configuration's entries remain


def test_corrupt_or_tampered_entries_are_misses(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    cold = check(repo, cache)
    entries = sorted(p for p in cache.rglob("r*.json"))
    assert len(entries) == FILES
    good = json.loads(entries[0].read_bytes())
    junk = [b"", b"{", b"[]", json.dumps({**good, "format": 1}).encode(),
            json.dumps({**good, "findings": [[1]]}).encode(), json.dumps({**good, "suppressed": -1}).encode()]
    for p, data in zip(entries, junk, strict=True):
        p.write_bytes(data)
    again = warm_equals_truth(repo, cache)
    assert seen(again) == seen(cold) and again.stats["results_reused"] == 0


def test_a_file_whose_rule_crashed_is_not_stored(repo: Path, user_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from dralint.checks import registry
    from dralint.engine import runner

    checks = dict(registry.load_checks())
    original = checks["DRA501"].fn

    def crash(obj: Any, ctx: Any) -> Any:
        if obj.name == "old":
            raise RuntimeError("planted")
        return original(obj, ctx)

    checks["DRA501"] = dataclasses.replace(checks["DRA501"], fn=crash)
    monkeypatch.setattr(runner, "load_checks", lambda: checks)
    cache = user_cache / "c"
    first = check(repo, cache)
    assert [e.rule for e in first.internal_errors] == ["DRA501"]
    second = check(repo, cache)
    assert [e.rule for e in second.internal_errors] == ["DRA501"]  # reported again, not hidden by the cache
    assert second.stats["parsed"] == 1


def test_entries_round_trip_every_field() -> None:
    fix = Fix("move it", Applicability.UNSAFE, (
        Edit("wrap", ("spec", 0), ("a", "b"), key="exactly"),
        Edit("set", ("x",), {"k": [1, 2.5, None, True], 3: ("t",)}, comment="why"),
        Edit("insert", (), "v", key="k", index=2, after="j"),
    ))
    f = Finding("DRA101", "name", Severity.ERROR, "msg", "a/b.yaml", Span(1, 2, 3, 4), None, "tpl.yaml", fix, 2,
                ("items", 0), ("spec", "x"), {"rendered": {"line": 3}, "tuple": (1, 2)})
    e = Entry(["DeviceClass", "*"], "digest", [f], [f], 1, ["Pod"], True, 3, ["ml/claim"])
    back = Entry.from_bytes(e.to_bytes())
    assert back is not None
    assert repr(back.findings[0]) == repr(f) and back.suppressed == 1 and back.reads == ["*", "DeviceClass"]


def test_the_digest_follows_the_files_that_answer_the_reads() -> None:
    rows = [FileRow("a.yaml", "k1", frozenset({"DeviceClass"}), False),
            FileRow("b.yaml", "k2", frozenset({"Pod"}), True),
            FileRow("-", None, frozenset({"Pod"}), False)]
    base = deps_digest(rows, ["DeviceClass"])
    # a change in a file without a read kind does not move it; one in a file with one does
    assert deps_digest([rows[0], FileRow("b.yaml", "k9", frozenset({"Pod"}), True), rows[2]], ["DeviceClass"]) == base
    assert deps_digest([FileRow("a.yaml", "k7", frozenset({"DeviceClass"}), False), *rows[1:]], ["DeviceClass"]) != base
    # a file that gains an object of a read kind moves it
    assert deps_digest([rows[0], FileRow("b.yaml", "k2", frozenset({"Pod", "DeviceClass"}), True), rows[2]],
                       ["DeviceClass"]) != base
    assert deps_digest(rows[:2], ["@values"]) != deps_digest([rows[0], FileRow("b.yaml", "k3", frozenset(), True)],
                                                              ["@values"])
    # a file without a content key (stdin) can never be compared
    assert deps_digest(rows, ["Pod"]) == "never" and deps_digest(rows, ["*"]) == "never"
