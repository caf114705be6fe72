"""The context pack: one entry with every context file's summary, read kind by kind.

The pack must never change a finding: the lazy index answers every query with the same objects in
the same order as an index built file by file, a damaged pack costs only speed, and a context file
that changed is seen in the next run."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from dralint.engine import pack as pack_mod
from dralint.engine.config import build_config, usable_cores
from dralint.engine.lazy import add_summary
from dralint.engine.pack import VALUES, LazyIndex, Pack, pack_bytes
from dralint.engine.pipeline import lint_paths
from dralint.engine.runner import Result
from dralint.engine.summary import FileSummary, summarize
from dralint.inputs.files import discover
from dralint.inputs.index import ALL_VALUES, Index, K8sObject, ValuesDoc, base_name
from dralint.inputs.load import load_bytes
from tests.test_parallel import canonical, load_generator
from tests.test_results_cache import CLASS, TEMPLATE, pod


@pytest.fixture(autouse=True)
def _isolated(user_cache: Path) -> None:
    """Every test here runs with a fake home and user cache directory (`tests.conftest.user_cache`)."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("packcorpus") / "repo"
    load_generator().generate(out, files=60, docs=500, seed=11)
    return out


def summaries_of(root: Path) -> list[tuple[str, str, FileSummary]]:
    """(display, content key, summary) of every file under ``root``, in discovery order."""
    refs, _ = discover([str(root)], root=root)
    out = []
    for n, ref in enumerate(refs):
        sf = load_bytes(ref.display, Path(ref.path).read_bytes())
        out.append((ref.display, f"k{n}", summarize(sf)))
    return out


def ident(unit: K8sObject | ValuesDoc) -> tuple[Any, ...]:
    """Everything a rule can read of a unit known from a summary."""
    if isinstance(unit, ValuesDoc):
        return unit.file.path, unit.doc.index, unit.doc.source, json.dumps(unit.data, sort_keys=True)
    return (unit.file.path, unit.doc.index, unit.doc.source, unit.base_path, unit.api_version, unit.kind, unit.name,
            unit.namespace, unit.claim_names, json.dumps(unit.data, sort_keys=True) if unit.data else None)


def both(files: list[tuple[str, str, FileSummary]], deferred: set[int],
         raw: bytes | None = None) -> tuple[Index, LazyIndex, list[int]]:
    """An index built file by file, and a lazy one where the ``deferred`` files come from the pack."""
    eager = Index()
    for display, _, s in files:
        add_summary(eager, display, s, False, None)
    packed = Pack.from_bytes(raw if raw is not None else pack_bytes({k: s for _, k, s in files}))
    assert packed is not None
    fallbacks: list[int] = []

    def fallback(i: int) -> FileSummary:
        fallbacks.append(i)
        return files[i][2]

    lazy = LazyIndex(packed, fallback)
    for i, (display, key, s) in enumerate(files):
        if i in deferred:
            assert lazy.defer(i, display, key, None, False)
        else:
            lazy.at(i)
            add_summary(lazy, display, s, False, None)
    return eager, lazy, fallbacks


def same_answers(eager: Index, lazy: Index) -> None:
    kinds = sorted({o.kind or "" for o in eager.objects})
    assert len(kinds) > 5
    for kind in kinds:  # first: from the pack's records, before any object of the kind is made
        assert lazy.names_of(kind) == eager.names_of(kind), kind
    for kind in kinds:
        assert [ident(o) for o in lazy.of_kind(kind)] == [ident(o) for o in eager.of_kind(kind)], kind
        for name in sorted({o.name for o in eager.objects if o.kind == kind and o.name})[:20]:
            assert [ident(o) for o in lazy.find_any_namespace(kind, name)] == [
                ident(o) for o in eager.find_any_namespace(kind, name)]
            for ns in (None, "ml", "default"):
                assert [ident(o) for o in lazy.find(kind, name, ns)] == [ident(o) for o in eager.find(kind, name, ns)]
    for path in sorted({o.file.path for o in eager.objects})[:30]:
        for pair in (("ResourceClaim", "ResourceClaimTemplate"), ("DeviceClass",), ("Deployment", "Service")):
            assert [ident(o) for o in lazy.in_file(path, *pair)] == [ident(o) for o in eager.in_file(path, *pair)]
    refs = sorted({n for o in eager.objects for n in o.claim_names})
    assert refs
    for name in refs:
        for ns in (None, "ml"):
            assert lazy.claim_users(name, ns) == eager.claim_users(name, ns)
    assert [ident(o) for o in lazy.all_objects()] == [ident(o) for o in eager.all_objects()]
    assert [ident(v) for v in lazy.all_values()] == [ident(v) for v in eager.all_values()]
    assert lazy.reads == eager.reads


def test_a_pack_gives_back_every_summary_as_stored(corpus: Path) -> None:
    files = summaries_of(corpus)
    packed = Pack.from_bytes(pack_bytes({k: s for _, k, s in files}))
    assert packed is not None
    back = packed.summaries()
    assert back is not None and set(back) == {k for _, k, _ in files}
    for _, key, s in files:
        assert back[key].to_bytes() == s.to_bytes(), key
        row = packed.file(key)
        assert row is not None and row.row("x", key) == pack_mod.row_of("x", key, s)


def test_the_lazy_index_answers_as_the_index_built_file_by_file(corpus: Path) -> None:
    files = summaries_of(corpus)
    for deferred in ({i for i in range(len(files)) if i % 2}, set(range(len(files))), {0, len(files) - 1}):
        eager, lazy, fallbacks = both(files, deferred)
        same_answers(eager, lazy)
        assert fallbacks == []


def test_a_lookup_by_name_makes_only_the_objects_of_that_name(corpus: Path) -> None:
    # a pod's template is looked up by name: the other templates are made only when a query needs them,
    # and every answer after that (names, whole kinds, other names) is still the eager index's
    files = summaries_of(corpus)
    for deferred in (set(range(len(files))), {i for i in range(len(files)) if i % 2}):
        eager, lazy, fallbacks = both(files, deferred)
        kind = "ResourceClaimTemplate"
        names = sorted({o.name for o in eager.objects if o.kind == kind and o.name})
        assert len(names) > 3
        for name in names[:3]:
            for ns in (None, "ml"):
                assert [ident(o) for o in lazy.find(kind, name, ns)] == [ident(o) for o in eager.find(kind, name, ns)]
        if len(deferred) == len(files):  # every object comes from the pack: only those names were made
            made = [o for o in lazy.objects if o.kind == kind]
            assert made and {o.name for o in made} <= set(names[:3])
        assert [ident(o) for o in lazy.find_any_namespace(kind, names[0])] == [
            ident(o) for o in eager.find_any_namespace(kind, names[0])]
        same_answers(eager, lazy)  # names first, then whole kinds: nothing twice, nothing missing
        assert fallbacks == []


def test_the_lazy_index_makes_only_the_kinds_asked_about(corpus: Path) -> None:
    files = summaries_of(corpus)
    eager, lazy, _ = both(files, set(range(len(files))))
    assert lazy.objects == []
    names = lazy.names_of("ResourceClaimTemplate")
    assert names and lazy.objects == [] and "ResourceClaimTemplate" in lazy.reads  # names without objects
    classes = list(lazy.of_kind("DeviceClass"))
    assert classes and {o.kind for o in lazy.objects} == {"DeviceClass"}
    assert len(lazy.objects) == len(classes) < len(eager.objects)
    assert lazy.values == []  # values documents are made by the queries that read them


def test_values_of_named_files_make_only_those_documents(corpus: Path) -> None:
    """DRA101 asks for the kustomizations' documents by file name: a lazy index makes those values
    documents only (no object, no other file's values), and every later answer is still the eager one's."""
    files = summaries_of(corpus)
    for deferred in (set(range(len(files))), {i for i in range(len(files)) if i % 2}):
        eager, lazy, fallbacks = both(files, deferred)
        holders = sorted({base_name(v.file.path) for v in eager.values})
        assert len(holders) > 1
        names = {holders[0]}
        want = [ident(v) for v in eager.values_of_files(names)]
        assert want and [ident(v) for v in lazy.values_of_files(names)] == want
        assert ALL_VALUES in lazy.reads
        if len(deferred) == len(files):
            assert lazy.objects == [] and {base_name(v.file.path) for v in lazy.values} == names
        assert lazy.values_of_files({"kustomization.yaml"}) == eager.values_of_files({"kustomization.yaml"}) == []
        same_answers(eager, lazy)  # then everything: nothing twice, nothing missing
        assert fallbacks == []


def test_a_damaged_section_is_read_from_each_files_own_summary(corpus: Path) -> None:
    files = summaries_of(corpus)
    raw = pack_bytes({k: s for _, k, s in files})
    nl = raw.index(b"\n")
    head = json.loads(raw[:nl])
    start, end = head["sections"]["DeviceClass"]
    damaged = raw[: nl + 1 + start] + b"[" * (end - start) + raw[nl + 1 + end :]
    eager, lazy, fallbacks = both(files, set(range(len(files))), damaged)
    same_answers(eager, lazy)
    holders = {i for i, (_, _, s) in enumerate(files) if any(o.kind == "DeviceClass" for o in s.objects)}
    assert holders and set(fallbacks) == holders  # only the damaged kind's files, and each of them


def _with_section(raw: bytes, kind: str, edit: Any) -> bytes:
    """The pack with the records of one section passed through ``edit`` (the section moved to the end)."""
    nl = raw.index(b"\n")
    head = json.loads(raw[:nl])
    body = raw[nl + 1 :]
    start, end = head["sections"][kind]
    text = json.dumps(edit(json.loads(body[start:end]))).encode()
    head["sections"][kind] = [len(body), len(body) + len(text)]
    return json.dumps(head).encode() + b"\n" + body + text


@pytest.mark.parametrize("edit", [
    lambda recs: recs[1:],  # one file's object is gone from the section
    lambda recs: [*recs, recs[0]],  # one record twice
])
def test_a_section_that_breaks_the_headers_word_is_read_from_each_files_entry(corpus: Path, edit: Any) -> None:
    files = summaries_of(corpus)
    damaged = _with_section(pack_bytes({k: s for _, k, s in files}), "DeviceClass", edit)
    packed = Pack.from_bytes(damaged)
    assert packed is not None and packed.records("DeviceClass") is not None  # each record checks on its own
    assert packed.summaries() is None  # but the pack cannot give the files' summaries back
    eager, lazy, fallbacks = both(files, set(range(len(files))), damaged)
    same_answers(eager, lazy)
    assert len(set(fallbacks)) == 1  # only the file whose records do not add up


@pytest.mark.parametrize("mangle", [
    lambda head: {**head, "format": 99},
    lambda head: {**head, "files": []},
    lambda head: {**head, "data": -1},
    lambda head: {**head, "sections": {"DeviceClass": [5, 2]}},
    lambda head: {k: v for k, v in head.items() if k != "sections"},
])
def test_a_header_that_does_not_check_is_no_pack(corpus: Path, mangle: Any) -> None:
    files = summaries_of(corpus)[:5]
    raw = pack_bytes({k: s for _, k, s in files})
    nl = raw.index(b"\n")
    assert Pack.from_bytes(raw) is not None
    assert Pack.from_bytes(json.dumps(mangle(json.loads(raw[:nl]))).encode() + raw[nl:]) is None
    for garbage in (b"", b"\n", b"{}\n", b"[1,2]\n", b"\xff\xfe\n", raw[:nl]):
        assert Pack.from_bytes(garbage) is None


def test_records_that_do_not_check_are_no_section(corpus: Path) -> None:
    files = summaries_of(corpus)[:8]
    raw = pack_bytes({k: s for _, k, s in files})
    nl = raw.index(b"\n")
    head = json.loads(raw[:nl])
    body = raw[nl + 1 :]
    kind = next(k for k in head["sections"] if k != VALUES)
    start, end = head["sections"][kind]
    records = json.loads(body[start:end])
    bad_records = [
        [["nokey", *records[0][1:]]],  # a file the header does not know
        [[records[0][0], 10**6, *records[0][2:]]],  # a position past the file's objects
        [[*records[0][:9], [0, 10**9], records[0][10]]],  # data out of the pack
        [[*records[0][:4], [{"a": 1}], *records[0][5:]]],  # a base path that is not a path
        [records[0][:5]],  # too short
    ]
    for bad in bad_records:
        text = json.dumps(bad).encode()
        head2 = {**head, "sections": {**head["sections"], kind: [len(body), len(body) + len(text)]}}
        mangled = json.dumps(head2).encode() + b"\n" + body + text
        got = Pack.from_bytes(mangled)
        assert got is not None and got.records(kind) is None


# -- whole runs: one changed file against a repository whose context comes from the pack ---------

#: a bundle as teams write them: a claim template and the pod that uses it, whose class lives elsewhere
BUNDLE = TEMPLATE + "---\n" + pod("trainer")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for d in ("apps", "classes", "fill"):
        (root / d).mkdir(parents=True)
    (root / "apps" / "bundle.yaml").write_text(BUNDLE)
    (root / "classes" / "class.yaml").write_text(CLASS)
    for i in range(pack_mod.PACK_MIN_FILES + 8):
        (root / "fill" / f"svc{i}.yaml").write_text(
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}, namespace: ml}}\nspec:\n  ports: [{{port: {i}}}]\n"
            "---\nreplicaCount: 2\n")
    age(root)
    return root


def age(root: Path) -> None:
    """Files older than the cache's two-second window, as a checkout's are (so their keys are remembered)."""
    old = time.time() - 3600
    for p in root.rglob("*.yaml"):
        os.utime(p, (old, old))


def check(repo: Path, cache: Path | None, jobs: int = 1) -> Result:
    config = build_config({}, None, repo)
    if cache is None:
        config.use_cache = False
    else:
        config.cache_dir = str(cache)
    return lint_paths([str(repo / "apps" / "bundle.yaml")], config, context=[str(repo)], jobs=jobs)


def packs(cache: Path) -> list[Path]:
    return sorted(cache.rglob("context.pack"))


def test_one_file_against_a_packed_context(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    truth = check(repo, None)
    first = check(repo, cache)
    assert first.stats.get("pack_written") == pack_mod.PACK_MIN_FILES + 9 and len(packs(cache)) == 1
    (repo / "apps" / "bundle.yaml").write_text(BUNDLE + "# edited\n")  # a new key: its results are not reused
    edited_truth = check(repo, None)
    warm = check(repo, cache)
    # every context file known from the pack: no summary entry read, none parsed, the pack not rewritten
    assert warm.stats["packed"] == pack_mod.PACK_MIN_FILES + 9
    assert "summaries_read" not in warm.stats and warm.stats["parsed"] == 1 and "pack_written" not in warm.stats
    assert canonical(first) == canonical(truth)
    assert canonical(warm) == canonical(edited_truth)
    assert "DRA305" not in {f.rule for f in warm.findings}  # the class in classes/ resolves the request

    # the class is renamed: the changed context file is read (the pack does not know its bytes);
    # one file of 41 is too few to write the pack again
    (repo / "classes" / "class.yaml").write_text(CLASS.replace("big.example.com", "small.example.com"))
    age(repo)
    renamed = check(repo, cache)
    assert canonical(renamed) == canonical(check(repo, None))
    assert "DRA305" in {f.rule for f in renamed.findings}  # the template's class is gone
    assert renamed.stats["parsed"] == 2 and renamed.stats["packed"] == pack_mod.PACK_MIN_FILES + 8
    assert "pack_written" not in renamed.stats
    again = check(repo, cache)
    assert canonical(again) == canonical(renamed) and "pack_written" not in again.stats

    # more than a twentieth of the context changed: a new pack, which knows the renamed class too
    for i in range(3):
        (repo / "fill" / f"svc{i}.yaml").write_text(f"apiVersion: v1\nkind: Service\nmetadata: {{name: t{i}}}\n")
    age(repo)
    many = check(repo, cache)
    assert many.stats.get("pack_written") == pack_mod.PACK_MIN_FILES + 9
    assert canonical(many) == canonical(check(repo, None))
    (repo / "apps" / "bundle.yaml").write_text(BUNDLE + "# edited again\n")  # its rules run, and read the pack
    after = check(repo, cache)
    assert after.stats["packed"] == pack_mod.PACK_MIN_FILES + 9 and "summaries_read" not in after.stats
    assert canonical(after) == canonical(check(repo, None))


def test_a_damaged_or_foreign_pack_costs_only_speed(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    check(repo, cache)
    (path,) = packs(cache)
    (repo / "apps" / "bundle.yaml").write_text(BUNDLE + "# edited\n")
    truth = check(repo, None)
    good = path.read_bytes()
    nl = good.index(b"\n")
    for damaged in (b"garbage", good[: nl + 40], good[: nl + 1] + b"x" * (len(good) - nl - 1)):
        path.write_bytes(damaged)
        got = check(repo, cache)
        assert canonical(got) == canonical(truth)


def test_a_symlinked_pack_is_neither_read_nor_written_through(repo: Path, user_cache: Path, tmp_path: Path) -> None:
    cache = user_cache / "c"
    check(repo, cache)
    (path,) = packs(cache)
    outside = tmp_path / "outside.pack"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)
    (repo / "apps" / "bundle.yaml").write_text(BUNDLE + "# edited\n")
    got = check(repo, cache)
    assert "packed" not in got.stats  # the link was not followed
    assert canonical(got) == canonical(check(repo, None))
    before = outside.read_bytes()
    (repo / "fill" / "new.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: n}\n")
    age(repo)
    check(repo, cache)  # a context file the pack lacks: a new pack replaces the link, never its target
    assert outside.read_bytes() == before
    assert not path.is_symlink() and Pack.from_bytes(path.read_bytes()) is not None


def test_a_run_with_workers_writes_the_pack_too(repo: Path, user_cache: Path) -> None:
    cache = user_cache / "c"
    first = check(repo, cache, jobs=2)
    assert first.stats["jobs"] == min(2, usable_cores())  # the workers' path, where there are two cores
    assert first.stats.get("pack_written") == pack_mod.PACK_MIN_FILES + 9
    (repo / "apps" / "bundle.yaml").write_text(BUNDLE + "# edited\n")
    warm = check(repo, cache)
    assert warm.stats["packed"] == pack_mod.PACK_MIN_FILES + 9 and "summaries_read" not in warm.stats
    assert canonical(warm) == canonical(check(repo, None))


def test_every_file_checked_against_a_packed_generated_repository(corpus: Path, user_cache: Path,
                                                                   tmp_path: Path) -> None:
    """Each file of a generated repository, checked alone against the rest from the pack, gets the
    findings it gets with no cache at all."""
    repo = tmp_path / "repo"
    shutil.copytree(corpus, repo)
    age(repo)
    cache = user_cache / "c"
    config = build_config({}, None, repo)
    config.cache_dir = str(cache)
    plain = build_config({}, None, repo)
    plain.use_cache = False
    refs, _ = discover([str(repo)], root=repo)
    lint_paths([str(refs[0].path)], config, context=[str(repo)], jobs=1)  # writes the pack
    packed_runs = 0
    for ref in refs:
        got = lint_paths([str(ref.path)], config, context=[str(repo)], jobs=1)
        assert canonical(got) == canonical(lint_paths([str(ref.path)], plain, context=[str(repo)], jobs=1)), ref
        packed_runs += "packed" in got.stats
    assert packed_runs > len(refs) // 3  # the pack answered for the files whose rules looked elsewhere
