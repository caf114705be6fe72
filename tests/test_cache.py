"""The summary cache: a hit replaces a parse, and nothing it holds can change a finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dralint.cli.app import main
from dralint.engine.cache import FORMAT, SummaryCache
from dralint.engine.config import build_config
from dralint.engine.pipeline import lint_paths
from dralint.engine.runner import Result
from dralint.engine.summary import SUMMARY_FORMAT, Blob, FileSummary, SummaryObject, SummaryValues, summarize
from dralint.inputs.files import DEFAULT_EXCLUDES, discover
from dralint.inputs.load import load_bytes
from tests.test_parallel import canonical

POD = """apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
  containers:
  - name: train
    image: busybox
    resources:
      claims: [{name: gpu, request: gpu}]
"""

TEMPLATE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
"""

SERVICE = """apiVersion: v1
kind: Service
metadata: {name: svc, namespace: ml, labels: {a: b}}
spec:
  selector: {app: x}
"""


@pytest.fixture(autouse=True)
def _isolated(user_cache: Path) -> None:
    """Every test here runs with a fake home and user cache directory (`tests.conftest.user_cache`)."""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "apps").mkdir(parents=True)
    (root / "claims").mkdir()
    (root / "apps" / "pod.yaml").write_text(POD)
    (root / "claims" / "template.yaml").write_text(TEMPLATE)
    (root / "apps" / "service.yaml").write_text(SERVICE)
    for i in range(5):
        (root / "apps" / f"legacy{i}.yaml").write_text(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}}}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: c\n        resources: {limits: {nvidia.com/gpu: 2}}\n")
    return root


def lint(target: Path, repo: Path, cache: Path | None, jobs: int = 1, **cfg: Any) -> Result:
    config = build_config(cfg, None, repo)
    if cache is None:
        config.use_cache = False
    else:
        config.cache_dir = str(cache)
    return lint_paths([str(target)], config, context=[str(repo)], jobs=jobs)


def entries(cache: Path) -> list[Path]:
    """The stored summaries (results entries, named ``r<hash>``, are tests/test_results_cache.py's)."""
    return sorted(p for p in cache.rglob("*.summary") if not p.name.startswith(".tmp"))


def test_cold_then_warm_gives_the_same_findings(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "cache"
    target = repo / "apps" / "pod.yaml"
    plain = lint(target, repo, None)
    cold = lint(target, repo, cache)
    assert cold.stats["cache_hits"] == 0 and cold.stats["parsed"] == 8
    assert len(entries(cache)) == 8  # every file's summary, the target's too
    warm = lint(target, repo, cache)
    # nothing is parsed: the context from summaries, the target's findings from its results entry
    assert warm.stats["cache_hits"] == 7 and warm.stats["parsed"] == 0 and warm.stats["results_reused"] == 1
    assert canonical(cold) == canonical(warm) == canonical(plain)
    assert [f.rule for f in plain.findings] == []  # the template in claims/ resolves the claim


def test_whole_repository_warm_cache_with_workers(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "cache"
    plain = lint(repo, repo, None)
    lint(repo, repo, cache, jobs=2)
    again = lint(repo, repo, cache, jobs=2)
    assert canonical(again) == canonical(plain)
    assert [f.rule for f in plain.findings].count("DRA201") == 5


def test_an_edited_context_file_is_read_again(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "cache"
    target = repo / "apps" / "pod.yaml"
    assert [f.rule for f in lint(target, repo, cache).findings] == []
    (repo / "claims" / "template.yaml").write_text(TEMPLATE.replace("- name: gpu", "- name: gpus"))
    r = lint(target, repo, cache)
    assert [f.rule for f in r.findings] == ["DRA306"]  # the request was renamed; the cache did not hide it
    assert r.stats["cache_hits"] == 6


def test_corrupt_or_foreign_entries_are_misses(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "cache"
    target = repo / "apps" / "pod.yaml"
    lint(target, repo, cache)
    bad = [b"", b"\x80\x04\x95 not json", b"[1, 2]", b'{"format": 999}', b"{" * 100_000]
    for p, junk in zip(entries(cache), bad * 4, strict=False):
        p.write_bytes(junk)
    r = lint(target, repo, cache)
    assert canonical(r) == canonical(lint(target, repo, None))


def test_entries_are_json_never_pickle(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "cache"
    lint(repo / "apps" / "pod.yaml", repo, cache)
    for p in entries(cache):
        raw = p.read_bytes()
        head_text, _, body = raw.partition(b"\n")
        head = json.loads(head_text)
        assert head["format"] == SUMMARY_FORMAT
        refs = [o[6] for o in head["objects"]] + [v[1] for v in head["values"]]
        for start, end in (r for r in refs if r is not None):
            json.loads(body[start:end])  # every carried object is plain JSON text
        assert sum(e - s for s, e in (r for r in refs if r is not None)) == len(body)
    assert (cache / ".gitignore").read_text().strip().endswith("*")
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_unusable_cache_directory_only_costs_speed(repo: Path, user_cache: Path) -> None:
    user_cache.mkdir(parents=True)
    blocker = user_cache / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    r = lint(repo / "apps" / "pod.yaml", repo, blocker)
    assert canonical(r) == canonical(lint(repo / "apps" / "pod.yaml", repo, None))


def test_key_depends_on_content_and_limits(tmp_path: Path) -> None:
    a = SummaryCache(tmp_path / "c", "limits-1", tmp_path)
    b = SummaryCache(tmp_path / "c", "limits-2", tmp_path)
    assert a.dir != b.dir
    assert a.key(b"x: 1\n", False) != a.key(b"x: 2\n", False)
    assert a.key(b"{}", True) != a.key(b"{}", False)
    assert a.key(b"x: 1\n", False) == b.key(b"x: 1\n", False)  # the salt is in the directory


def test_summary_carries_lookups_and_defers_the_rest() -> None:
    sf = load_bytes("x.yaml", (TEMPLATE + "---\n" + SERVICE + "---\nfoo: bar\n").encode())
    s = summarize(sf)
    kinds = {o.kind: o for o in s.objects}
    assert kinds["ResourceClaimTemplate"].data["spec"]["spec"]["devices"]["requests"][0]["name"] == "gpu"
    svc = kinds["Service"]
    assert svc.data is None and not svc.carried and (svc.name, svc.namespace) == ("svc", "ml")
    assert s.values == (SummaryValues(2, {"foo": "bar"}, True),)
    back = FileSummary.from_bytes(s.to_bytes())
    assert back is not None
    assert back.docs == s.docs
    def identity(o: SummaryObject) -> tuple[Any, ...]:
        return o.doc, o.base_path, o.api_version, o.kind, o.name, o.namespace, o.carried

    assert [identity(o) for o in back.objects] == [identity(o) for o in s.objects]
    rct = next(o for o in back.objects if o.kind == "ResourceClaimTemplate")
    assert rct.data.value() == kinds["ResourceClaimTemplate"].data  # decoded on demand
    assert back.values[0].data.value() == {"foo": "bar"}
    assert FileSummary.from_bytes(b'{"format":3,"docs":[],"objects":[[0,[],null,"X",null,null,[0,99],true]],'
                                  b'"values":[],"claim_refs":[]}\n{}') is None  # a blob outside the entry


def test_a_compact_summary_holds_text_not_trees_and_stores_the_same_bytes() -> None:
    sf = load_bytes("x.yaml", (TEMPLATE + "---\n" + SERVICE + "---\nfoo: bar\n").encode())
    s = summarize(sf)
    c = s.compact()
    assert c.to_bytes() == s.to_bytes()
    assert c.compact() == c  # already text: left as it is
    rct = next(o for o in c.objects if o.kind == "ResourceClaimTemplate")
    assert isinstance(rct.data, Blob) and rct.data.value() == next(
        o.data for o in s.objects if o.kind == "ResourceClaimTemplate")
    assert next(o for o in c.objects if o.kind == "Service").data is None  # not carried: nothing to hold
    assert isinstance(c.values[0].data, Blob) and c.values[0].data.value() == {"foo": "bar"}


def test_stored_summary_form_is_pinned() -> None:
    """The cache entry layout (SUMMARY_FORMAT 3): one JSON line of positional records in field order,
    then the carried data; changing it needs a new format number (old entries must read as misses)."""
    sf = load_bytes("x.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\nfoo: bar\n---\n"
                              b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims:\n"
                              b"  - {name: g, resourceClaimName: shared}\n  containers: []\n")
    assert summarize(sf).to_bytes() == (
        b'{"format":3,"docs":[[0,null],[1,null],[2,null]],"objects":[[0,[],"v1","ConfigMap","c",null,null,false],'
        b'[2,[],"v1","Pod","p",null,null,false]],"values":[[1,[0,13],true]],"claim_refs":[[1,"shared"]]}\n'
        b'{"foo":"bar"}'
    )
    assert FileSummary.from_bytes(b'{"format":2,"docs":[],"objects":[],"values":[]}\n') is None
    assert FileSummary.from_bytes(b'{"format":3,"docs":[[0,null]],"objects":[[0,[],"v1","X","c",null,null]],'
                                  b'"values":[],"claim_refs":[]}\n') is None  # a record with a field missing
    assert FileSummary.from_bytes(b'{"format":3,"docs":[],"objects":[],"values":[],"claim_refs":[[0,"x"]]}\n'
                                  ) is None  # a claim reference to an object that is not there


def test_rules_reading_undeclared_context_data_still_see_it(repo: Path, user_cache: Path) -> None:
    # a Service is not carried in summaries: reading its data loads the file on demand
    cache = user_cache / "cache"
    lint(repo / "apps" / "pod.yaml", repo, cache)
    r = lint(repo / "apps" / "pod.yaml", repo, cache)
    svc = r.index.find("Service", "svc", "ml")[0]
    assert not svc.target
    assert svc.data["spec"] == {"selector": {"app": "x"}}
    assert svc.metadata["labels"] == {"a": "b"}
    assert r.stats["on_demand_loads"] == 1


def test_default_location_is_skipped_by_discovery(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(repo)
    assert main(["check", "apps/pod.yaml", "--context", "."]) == 0
    assert (repo / ".dralint_cache" / f"v{FORMAT}").is_dir()
    assert ".dralint_cache" in DEFAULT_EXCLUDES
    refs, _ = discover(["."], root=repo)
    assert not any(".dralint_cache" in str(r.path) for r in refs)
    assert main(["check", "apps/pod.yaml", "--context", ".", "--no-cache", "--cache-dir", str(repo / "c2")]) == 0
    assert not (repo / "c2").exists()
    capsys.readouterr()


def test_cache_dir_option_environment_and_config(repo: Path, user_cache: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(repo)
    assert main(["check", "apps/pod.yaml", "--context", ".", "--cache-dir", str(user_cache / "c1")]) == 0
    assert entries(user_cache / "c1")
    assert main(["check", "apps/pod.yaml", "--context", ".", "--cache-dir", "build/c2"]) == 0  # in the project
    assert entries(repo / "build" / "c2")
    monkeypatch.setenv("DRALINT_CACHE_DIR", str(user_cache / "c3"))
    assert main(["check", "apps/pod.yaml", "--context", "."]) == 0
    assert entries(user_cache / "c3")
    monkeypatch.delenv("DRALINT_CACHE_DIR")
    capsys.readouterr()
    # anywhere else is a usage error that names both allowed places
    assert main(["check", "apps/pod.yaml", "--context", ".", "--cache-dir", str(tmp_path / "c4")]) == 2
    err = capsys.readouterr().err
    assert "neither inside the project" in err and str(user_cache) in err and not (tmp_path / "c4").exists()
    # the configuration file in the tree can no longer choose it
    (repo / ".dralint.yaml").write_text("cache-dir: build/lint-cache\n")
    assert main(["check", "apps/pod.yaml", "--context", "."]) == 2
    err = capsys.readouterr().err
    assert "--cache-dir" in err and "DRALINT_CACHE_DIR" in err and "Traceback" not in err
    assert not (repo / "build" / "lint-cache").exists()


def test_summary_from_the_index_objects_is_the_summary_of_the_file() -> None:
    """A parsed target is summarised from the objects the rules worked on: the same bytes as from scratch."""
    from dralint.inputs.index import Index

    raw = (b"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a},"
           b" spec: {resourceClaims: [{name: g, resourceClaimName: c}], containers: []}}\n"
           b"- {apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: c}, spec: {}}\n---\n"
           b"foo: bar\n---\n[1, 2]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n")
    sf = load_bytes("x.yaml", raw)
    index = Index()
    index.add_file(sf, target=True)
    known = [*index.objects, *index.values]
    assert summarize(sf, known).to_bytes() == summarize(sf).to_bytes()
    assert summarize(sf).claim_refs == ((0, "c"),)


def test_every_cache_file_named_json_is_json_and_old_layouts_go(repo: Path, user_cache: Path) -> None:
    """Tools check every ``*.json`` in a tree: summaries (a JSON line, then JSON texts) are named
    ``.summary``; results entries and the stat index are real JSON. A marked older layout is removed."""
    cache = user_cache / "cache"
    old = cache / "v2" / "0123456789abcdef"
    old.mkdir(parents=True)
    (old / ".dralint-salt-dir").write_text("made by dralint\n")
    (old / "ab").mkdir()
    (old / "ab" / "ab12.json").write_bytes(b'{"format":2}\n{"x":1}')
    unmarked = cache / "v1" / "keep"
    unmarked.mkdir(parents=True)
    lint(repo, repo, cache)
    assert not (cache / "v2").exists() and unmarked.is_dir()  # only what dralint marked as its own
    named_json = list(cache.rglob("*.json"))
    assert len(named_json) >= 8  # the results entries of every file
    for p in named_json:
        json.loads(p.read_bytes())
    assert len(entries(cache)) == 8


def test_a_tree_linted_from_outside_gets_no_files(repo: Path, user_cache: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """No configuration file, no git work tree, not the working directory: the tree is someone else's
    (a vendored or read-only checkout), so its cache lives in the user cache directory."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    assert main(["check", "--exit-zero", "--format", "json", str(repo)]) == 0
    first = capsys.readouterr().out
    assert main(["check", "--exit-zero", "--format", "json", "-v", str(repo)]) == 0
    second = capsys.readouterr()
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before  # nothing added to the tree
    assert not list(elsewhere.iterdir())  # nor to the working directory
    assert second.out == first and "results_reused 8" in second.err  # and the cache still works
    assert list((user_cache / "trees").glob("*/v*/*/*/*.summary"))
