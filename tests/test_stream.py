"""A streamed run (each target checked as it is parsed, its tree let go) reports what a run that
keeps every tree reports.

`lint_files` keeps every tree and builds the whole index before any rule runs; `lint_paths`
streams (`dralint.engine.stream`). The comparisons run both over the same files, with every rule.
"""

from __future__ import annotations

import gc
import os
import time
import weakref
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dralint.checks.registry import Context, load_checks
from dralint.engine.config import build_config
from dralint.engine.lazy import FileLoader
from dralint.engine.pipeline import lint_paths, load_paths
from dralint.engine.runner import FileWork, NeedsIndex, SealedIndex, _Runner, limits_for, lint_files
from dralint.engine.stream import (
    STAGED_KINDS,
    Ahead,
    Stream,
    _document_around,
    _documents_naming,
    stage_of,
    staged_positions,
)
from dralint.inputs.index import Index, K8sObject, file_units
from dralint.inputs.load import DOC_MARKER, LMap, LSeq, line_starts_of, load_bytes
from dralint.model import Violation
from tests.conftest import EXAMPLES, REPO
from tests.test_parallel import canonical, load_generator


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stream") / "repo"
    load_generator().generate(out, files=150, docs=1400, seed=11)
    return out


def both(paths: list[str], jobs: int = 1, **cfg: Any) -> tuple[Any, Any]:
    config = build_config(cfg, None, REPO)
    config.use_cache = False
    streamed = lint_paths(paths, config, jobs=jobs)
    files, _ = load_paths(paths, config)
    whole = lint_files(files, [], config)
    return streamed, whole


@pytest.mark.parametrize("jobs", [1, 2])
def test_streamed_run_reports_what_a_run_with_every_tree_reports(corpus: Path, jobs: int) -> None:
    streamed, whole = both([str(corpus)], jobs=jobs, select=["ALL"])
    assert len(whole.findings) > 100
    assert canonical(streamed) == canonical(whole)
    assert [f.__dict__ for f in streamed.suppressions] == [f.__dict__ for f in whole.suppressions]
    assert [e.__dict__ for e in streamed.internal_errors] == [e.__dict__ for e in whole.internal_errors]
    # it did stream: some files were checked alone and let go, some waited for the index
    assert 0 < streamed.stats["kept_trees"] < len(streamed.files)


def _mappings(v: Any) -> int:
    n, stack = 0, [v]
    while stack:
        x = stack.pop()
        if type(x) is LMap:
            n += 1
            stack.extend(x.values())
        elif type(x) is LSeq:
            stack.extend(x)
    return n


def test_a_streamed_run_leaves_no_parse_trees_behind(corpus: Path) -> None:
    # the run pauses the cyclic collector, so a cache that refers back to its owner (a pod spec's
    # claims kept on the pod spec) would keep trees alive to the end; memos that hold the last
    # file's objects are bounded, a leak grows with the repository
    parsed = sum(_mappings(d.data) for p in corpus.rglob("*") if p.is_file()
                 for d in load_bytes(str(p), p.read_bytes()).documents)
    config = build_config({}, None, corpus)
    config.use_cache = False
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        before = sum(1 for o in gc.get_objects() if type(o) is LMap)  # what other tests' fixtures hold
        result = lint_paths([str(corpus)], config, jobs=1)
        left = sum(1 for o in gc.get_objects() if type(o) is LMap) - before
    finally:
        if was:
            gc.enable()
    assert result.findings and parsed > 10_000
    assert left < parsed // 100


def test_examples_streamed_the_same() -> None:
    streamed, whole = both([str(EXAMPLES)])
    assert canonical(streamed) == canonical(whole)


POD_WITH_TEMPLATE = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  resourceClaims:\n  - name: gpu\n"
    "    resourceClaimTemplateName: {template}\n  containers:\n  - name: c\n    image: x\n"
    "    resources:\n      claims:\n      - name: gpu\n")
TEMPLATE = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: {name}\nspec:\n"
            "  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly:\n"
            "          deviceClassName: gpu.nvidia.com\n")


def _configmaps(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"cm{i}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\ndata:\n  a: '1'\n")


def _streamed(tmp_path: Path) -> Any:
    config = build_config({}, None, tmp_path)
    config.use_cache = False
    return lint_paths([str(tmp_path)], config, jobs=1)


def test_a_file_that_needs_no_index_is_let_go(tmp_path: Path) -> None:
    _configmaps(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD_WITH_TEMPLATE.format(template="missing"))
    result = _streamed(tmp_path)
    # no file can hold a template (none names the kind), so the pod's question is answered as it streams
    assert result.stats["waited"] == 0 and result.stats["kept_trees"] == 0
    assert any(f.rule == "DRA304" for f in result.findings)


@pytest.fixture
def no_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stages only: nothing is parsed ahead of the stream."""
    monkeypatch.setattr(Ahead, "parse", classmethod(lambda cls, files, limits: None))


def test_a_question_about_a_kind_its_own_file_holds_waits_until_the_stage_ends(tmp_path: Path, no_ahead: None) -> None:
    _configmaps(tmp_path)
    (tmp_path / "pod.yaml").write_text(POD_WITH_TEMPLATE.format(template="gpu") + "---\n" + TEMPLATE.format(name="gpu"))
    result = _streamed(tmp_path)
    assert result.stats["waited"] == 1  # templates were not complete while its own file was checked
    assert result.stats["kept_trees"] == 0  # settled once they were, before the configmaps streamed
    assert not any(f.rule == "DRA304" for f in result.findings)


def test_a_file_that_may_hold_a_kind_is_parsed_before_the_files_that_ask(tmp_path: Path, no_ahead: None) -> None:
    # the template's file sorts last, but it is parsed first: the pods never wait for it
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}-pod.yaml").write_text(POD_WITH_TEMPLATE.format(template="gpu"))
    (tmp_path / "z-template.yaml").write_text(TEMPLATE.format(name="gpu"))
    result = _streamed(tmp_path)
    assert result.stats["waited"] == 0
    assert not any(f.rule == "DRA304" for f in result.findings)
    streamed, whole = both([str(tmp_path)])
    assert canonical(streamed) == canonical(whole)


@pytest.mark.parametrize("ahead", [True, False])
def test_a_kind_spelled_with_escapes_is_found_before_it_is_asked_about(tmp_path: Path, ahead: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if not ahead:
        monkeypatch.setattr(Ahead, "parse", classmethod(lambda cls, files, limits: None))
    # JSON and double-quoted YAML can spell `ResourceClaimTemplate` without its letters in a row
    (tmp_path / "a-pod.yaml").write_text(POD_WITH_TEMPLATE.format(template="gpu"))
    (tmp_path / "z-template.json").write_text(
        '{"apiVersion": "resource.k8s.io/v1", "kind": "Resource\\u0043laimTemplate", "metadata": {"name": "gpu"},'
        ' "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": '
        '{"deviceClassName": "gpu.nvidia.com"}}]}}}}')
    (tmp_path / "z-template2.yaml").write_text(TEMPLATE.format(name="gpu2").replace(
        "kind: ResourceClaimTemplate", 'kind: "ResourceClaim\\\n  Template"'))
    (tmp_path / "b-pod.yaml").write_text(POD_WITH_TEMPLATE.format(template="gpu2"))
    result = _streamed(tmp_path)
    assert not any(f.rule == "DRA304" for f in result.findings), [f.message for f in result.findings]
    streamed, whole = both([str(tmp_path)])
    assert canonical(streamed) == canonical(whole)


@pytest.mark.parametrize(("text", "stage"), [
    (b"kind: DeviceClass\n", 0),
    (b"kind: ResourceSlice\n", 0),
    (b"kind: ResourceClaimTemplate\n", 1),
    (b"kind: ResourceClaim\n", 1),
    (b"kind: ComputeDomain\n", 1),
    (b"kind: Deployment\nspec:\n  resourceClaims: []\n", 2),  # field names are not kinds
    (b"kind: Pod\nargs: ['a\\tb']\n", 2),  # an escape that spells no letter
    (b'{"kind": "\\u0044eviceClass"}', 0),
    (b'kind: "\\x44eviceClass"', 0),
    (b'kind: "Device\\\n  Class"', 0),
    (None, 0),  # unknown text (a file that could not be read): first
])
def test_stage_of(text: bytes | None, stage: int) -> None:
    assert stage_of(text) == stage


def test_the_sealed_index_answers_complete_kinds_and_its_own_file() -> None:
    sealed = SealedIndex()
    sf, objects = _units(CM)
    early = Index()
    early.add_file(sf, True, objects)
    sealed.complete(early, frozenset({"ConfigMap"}), frozenset({"a.yaml"}))
    assert list(sealed.of_kind("ConfigMap")) == objects
    assert sealed.find("ConfigMap", "cm") == objects
    with pytest.raises(NeedsIndex):  # one kind of the two is not complete
        sealed.of_kind("ConfigMap", "Secret")
    with pytest.raises(NeedsIndex):
        sealed.claim_users("cm", None)
    assert sealed.reads == {"ConfigMap"}
    other, mine = _units(CM.replace("name: cm", "name: mine"))
    sealed.own(other, mine, [])
    assert sealed.in_file("a.yaml", "ConfigMap") == mine  # the file being checked, as it is parsed
    sealed.shared = frozenset({"a.yaml"})  # two inputs at one path: neither answers alone
    with pytest.raises(NeedsIndex):
        sealed.in_file("a.yaml", "ConfigMap")


def _units(text: str) -> tuple[Any, list[K8sObject]]:
    sf = load_bytes("a.yaml", text.encode())
    return sf, [u for u in file_units(sf) if isinstance(u, K8sObject)]


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"


def _runner_with(fn: Any) -> _Runner:
    runner = _Runner(build_config({}, None, REPO), Index())
    runner.by_scope.clear()
    runner._calls = {}
    meta = next(iter(runner.selected.values()))
    runner._object_calls = lambda kind, facets, plain: [(fn, meta, runner.contexts[meta.code])]  # type: ignore[method-assign]
    return runner


def test_a_rule_that_asks_the_index_after_yielding_starts_again(tmp_path: Path) -> None:
    calls: list[bool] = []

    def check(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
        yield Violation("before asking", ("metadata",))
        calls.append(True)
        try:  # a rule's own broad handler must not swallow the refusal
            n = sum(1 for _ in ctx.index.of_kind("DeviceClass"))
        except Exception:
            n = -1
        yield Violation(f"classes: {n}", ("metadata",))

    runner = _runner_with(check)
    runner.seal()
    sf, objects = _units(CM)
    work = runner.collect(sf, objects, [], defer=True)
    assert work.findings == [] and len(work.deferred) == 1  # what it yielded before asking is dropped
    runner.unseal(Index())
    runner.finish(work)
    assert [f.message for f in work.findings] == ["before asking", "classes: 0"]
    assert len(calls) == 2


def test_the_sealed_index_refuses_every_question() -> None:
    sealed = SealedIndex()
    with pytest.raises(NeedsIndex):
        sealed.of_kind("DeviceClass")
    with pytest.raises(NeedsIndex):
        _ = sealed.objects
    assert not issubclass(NeedsIndex, Exception)


def test_a_collect_without_deferral_never_sees_a_refusal() -> None:
    def check(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
        yield Violation(f"{sum(1 for _ in ctx.index.of_kind('ConfigMap'))}", ("metadata",))

    runner = _runner_with(check)
    sf, objects = _units(CM)
    index = Index()
    index.add_file(sf, True, objects)
    runner.unseal(index)
    work: FileWork = runner.collect(sf, objects, [])
    assert [f.message for f in work.findings] == ["1"] and not work.deferred


def test_rule_memos_live_on_their_object_not_on_its_address() -> None:
    """Objects are let go as the run streams; a new one at a freed address must not inherit the
    old one's results (a run-wide table keyed by ``id()`` did: DRA201 went missing)."""
    load_checks()
    from dralint.checks.legacy import usages

    ctx = Context(index=Index(), profile=build_config({}, None, REPO).profile)
    gpu = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n" \
          "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    plain = gpu.replace("nvidia.com/gpu", "cpu")
    seen = []
    for text in [plain, gpu] * 20:
        _, (obj,) = _units(text)
        seen.append(len(usages(obj, ctx)))
        ref = weakref.ref(obj)
        del obj
        gc.collect()
        assert ref() is None
    assert seen == [0, 1] * 20


def test_a_warm_run_reads_only_the_summaries_its_rules_need(tmp_path: Path) -> None:
    """The pre-commit case: one changed file against a warm cache of the repository. Context
    summaries are read only once a rule asks about other files."""
    for i in range(6):
        (tmp_path / f"cm{i}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n")
    (tmp_path / "tpl.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: gpu\nspec:\n  spec:\n"
        "    devices:\n      requests:\n      - name: gpu\n        exactly:\n"
        "          deviceClassName: gpu.nvidia.com\n")
    changed = tmp_path / "changed.yaml"
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  resourceClaims:\n  - name: gpu\n"
           "    resourceClaimTemplateName: {}\n  containers:\n  - name: c\n    image: x\n"
           "    resources:\n      claims:\n      - name: gpu\n")
    past = time.time() - 60  # files changed in the last seconds are not trusted by stat
    for p in tmp_path.iterdir():
        os.utime(p, (past, past))
    config = build_config({}, None, tmp_path)
    config.cache_dir = str(tmp_path / ".cache")

    def run(text: str) -> Any:
        changed.write_text(text)
        return lint_paths([str(changed)], config, context=[str(tmp_path)], jobs=1)

    run(CM)  # fills the cache
    alone = run(CM.replace("name: cm", "name: other"))
    assert alone.stats.get("summaries_read", 0) == 0 and alone.stats["cache_hits"] == 7
    found = run(pod.format("gpu"))
    assert found.stats["summaries_read"] == 7  # the pod asks for its template
    assert not [f for f in found.findings if f.rule == "DRA304"]
    missing = run(pod.format("nope"))
    assert [f.rule for f in missing.findings if f.rule == "DRA304"] == ["DRA304"]


@pytest.mark.parametrize("raw", [
    b"a: 1\n", b"\xef\xbb\xbfa: 1\r\nb: 2\r\n", b"\xff\xfea\x00:\x00", b"\x00\x00\x00a", b"a: \xff\n",
    b"a: \x00\n", b"x" * 50, b"", b"# only a comment\n",
])
def test_a_streamed_files_text_is_what_the_loader_decodes(raw: bytes) -> None:
    from dralint.engine.lazy import FileLoader
    from dralint.inputs.load import Limits

    limits = Limits(max_file_bytes=40)
    stats: dict[str, Any] = {}
    assert FileLoader("f.yaml", None, raw, limits, stats).text() == load_bytes("f.yaml", raw, limits).text
    if raw == b"a: 1\n":
        assert stats == {}  # decoded, not parsed


def test_a_waiting_files_text_is_let_go_and_read_again_from_its_bytes() -> None:
    """While a file waits for the index, and once its waiting rule runs are settled, only its bytes
    are held; whatever reads its text (a rule quoting another file, a report) gets it decoded again."""
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  resourceClaims:\n  - name: gpu\n"
            "    resourceClaimTemplateName: missing\n  containers:\n  - name: c\n    image: x\n"
            "    resources:\n      claims:\n      - name: gpu\n# é\n")
    config = build_config({}, None, REPO)
    limits = limits_for(config)
    sf = load_bytes("pod.yaml", text.encode(), limits)
    runner = _Runner(config, Index())
    runner.seal()
    stream = Stream(runner)
    summary = stream.check(0, sf)
    assert 0 in stream.waiting and sf.__dict__["text"] == ""  # parked: the text is not held
    assert sf.text == text and sf.line_col(len(text) - 2) == (15, 3)  # read again on demand (`é`)
    index = Index()
    stream.add(index, 0, "pod.yaml", summary, FileLoader("pod.yaml", None, sf.raw, limits, {}))
    stream.finish(index)
    assert [f.rule for f in stream.outcomes[0].findings] == ["DRA304"]
    assert sf.__dict__["text"] == "" and sf._line_starts is None  # let go once its runs are settled
    assert sf.text == text


def test_the_unknown_class_memo_lets_each_files_objects_go() -> None:
    """DRA305 groups a file's references once per file; its memo must not keep every file's objects
    (and with them their parse trees) to the end of a streamed run."""
    load_checks()
    from dralint.checks.wiring import unknown_device_class

    ctx = Context(index=Index(), profile=build_config({}, None, REPO).profile)
    claim = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c{n}}}\nspec:\n  devices:\n"
             "    requests:\n    - name: gpu\n      exactly: {{deviceClassName: nowhere.example.com}}\n")
    refs = []
    for n in range(5):
        sf = load_bytes(f"f{n}.yaml", (claim.format(n=n) + "---\n" + claim.format(n=f"{n}b")).encode())
        objects = [u for u in file_units(sf) if isinstance(u, K8sObject)]
        index = Index()
        index.add_file(sf, True, objects)
        ctx.index = index
        found = [len(list(unknown_device_class(o, ctx))) for o in objects]
        assert found == [1, 0]  # one finding per class per file, on its first reference
        refs.append(weakref.ref(objects[0]))
        del sf, objects, index
        ctx.index = Index()
        gc.collect()
        assert all(r() is None for r in refs[:-1])  # only the last file's objects may still be held


def test_context_files_are_parsed_in_stages_too(tmp_path: Path, no_ahead: None) -> None:
    (tmp_path / "a-pod.yaml").write_text(POD_WITH_TEMPLATE.format(template="gpu"))
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    for i in range(3):
        (ctx / f"cm{i}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n")
    (ctx / "z-template.yaml").write_text(TEMPLATE.format(name="gpu"))
    config = build_config({}, None, tmp_path)
    config.use_cache = False
    result = lint_paths([str(tmp_path / "a-pod.yaml")], config, context=[str(ctx)], jobs=1)
    assert result.stats["waited"] == 0  # the context template was summarised before the pod was checked
    assert not any(f.rule == "DRA304" for f in result.findings)
    (ctx / "z-template.yaml").write_text(TEMPLATE.format(name="other"))
    result = lint_paths([str(tmp_path / "a-pod.yaml")], config, context=[str(ctx)], jobs=1)
    assert [f.rule for f in result.findings if f.rule == "DRA304"] == ["DRA304"]


BUNDLE = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: {cls}\nspec:\n  selectors:\n"
          "  - cel:\n      expression: device.driver == 'gpu.nvidia.com'\n---\n"
          + TEMPLATE.replace("gpu.nvidia.com", "{cls}") + "---\n" + POD_WITH_TEMPLATE
          # the rest of an application bundle: what makes parsing the class and template ahead pay
          + "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-{k}\ndata:\n"
                    + "".join(f"  key{j}: value{j}\n" for j in range(8)) for k in range(3)))


def test_documents_parsed_ahead_let_a_bundle_stream_without_waiting(tmp_path: Path) -> None:
    # each bundle's template names the class of the next one, and its pod the template of the next:
    # in stages every one of them would wait for the last bundle
    for n in range(4):
        (tmp_path / f"b{n}.yaml").write_text(BUNDLE.format(cls=f"c{(n + 1) % 4}.example.com", name=f"t{n}",
                                                           template=f"t{(n + 1) % 4}"))
    result = _streamed(tmp_path)
    assert result.stats["parsed_ahead"] == 4 and result.stats["waited"] == 0
    assert not any(f.rule in ("DRA304", "DRA305") for f in result.findings)
    streamed, whole = both([str(tmp_path)])
    assert canonical(streamed) == canonical(whole)


@pytest.mark.parametrize(("broken", "rule"), [
    ("  labels: {a: b\n", "DRA001"),  # a syntax error in the class
    ("  labels: {{ .Values.labels }}\n", "DRA003"),  # an unrendered template in the class
])
def test_a_class_that_does_not_parse_is_parsed_ahead_with_its_whole_file(tmp_path: Path, broken: str,
                                                                         rule: str) -> None:
    # one broken document used to send the whole run to stages, where every bundle waits
    for n in range(4):
        text = BUNDLE.format(cls=f"c{(n + 1) % 4}.example.com", name=f"t{n}", template=f"t{(n + 1) % 4}")
        if n == 1:
            text = text.replace("  name: c2.example.com\n", "  name: c2.example.com\n" + broken, 1)
        (tmp_path / f"b{n}.yaml").write_text(text)
    result = _streamed(tmp_path)
    assert result.stats["parsed_ahead"] == 4 and result.stats["waited"] == 0
    assert rule in {f.rule for f in result.findings}
    streamed, whole = both([str(tmp_path)])
    assert canonical(streamed) == canonical(whole)


def test_a_file_that_disagrees_with_its_documents_parsed_ahead_sends_the_run_to_stages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(3):
        (tmp_path / f"b{n}.yaml").write_text(BUNDLE.format(cls=f"c{(n + 1) % 3}.example.com", name=f"t{n}",
                                                           template=f"t{(n + 1) % 3}"))
    real = Ahead.parse.__func__  # type: ignore[attr-defined]

    def wrong(cls: type[Ahead], files: Any, limits: Any) -> Ahead:
        got: Ahead = real(cls, files, limits)
        i = min(got.expected)
        got.expected[i] = got.expected[i][:-1]  # as if the scan had missed the file's template
        return got

    monkeypatch.setattr(Ahead, "parse", classmethod(wrong))
    result = _streamed(tmp_path)
    assert result.stats["parsed_ahead"] == "disagreed"
    monkeypatch.undo()
    assert canonical(result) == canonical(_streamed(tmp_path))


@pytest.mark.parametrize(("text", "json", "spans"), [
    (b"kind: ConfigMap\n", False, []),
    (b"kind: DeviceClass\n", False, [(0, 18)]),
    (b"a: 1\n---\nkind: DeviceClass\n---\nb: 2\n", False, [(5, 27)]),
    (b"--- \nkind: ResourceClaim\r\n--- !!map\r\nb: 2\r\n", False, [(0, 26)]),
    (b"a: 1\n----\nkind: ComputeDomain\n", False, [(0, 30)]),  # `----` starts no document
    (b"x: 1\n...\n# c\n---\nkind: ResourceSlice\n", False, [(13, 37)]),
    (b'{"kind": "DeviceClass"}', True, [(0, 23)]),
    (b'a: 1\n---\nkind: "\\x44eviceClass"\n', False, [(0, 32)]),  # an escape: the whole file
    (b"%TAG ! tag:x,2000:\n---\nkind: DeviceClass\n", False, [(0, 41)]),  # a directive: the whole file
])
def test_documents_naming_a_staged_kind(text: bytes, json: bool, spans: list[tuple[int, int]]) -> None:
    assert _documents_naming(text, json) == spans


def test_nothing_is_parsed_ahead_when_the_kinds_have_files_of_their_own(tmp_path: Path) -> None:
    # classes and templates in their own files: stages alone keep nothing waiting, parsing twice would cost
    (tmp_path / "a-pod.yaml").write_text(POD_WITH_TEMPLATE.format(template="gpu"))
    (tmp_path / "z-template.yaml").write_text(TEMPLATE.format(name="gpu"))
    result = _streamed(tmp_path)
    assert "parsed_ahead" not in result.stats and result.stats["waited"] == 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["---", "...", "----", "-- -", "a", " ", "\t", "\n", "\r", "\r\n", "#", ":",
                                 "\n---\n", "\n...\n", "\n--- ", "\n---"]),
                max_size=30).map("".join))
@example("x\n---\na\n...\n---\na")
def test_documents_are_bounded_by_the_marker_lines_the_loader_splits_on(text: str) -> None:
    raw = text.encode()
    bounds = [0, *(m.start() for m in DOC_MARKER.finditer(text)), len(raw)]
    for pos, ch in enumerate(text):
        if ch == "a":  # where a kind's name may start
            k = bisect_right(bounds, pos) - 1
            for lo in bounds[: k + 1]:  # searched from any bound known to come before (the document before's end)
                assert _document_around(raw, pos, lo) == (bounds[k], bounds[k + 1])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["Device", "DeviceClass", "DeviceTaintRul", "DeviceTaintRule", "Resource",
                                 "ResourceClaim", "ResourceClaimTemplate", "ResourceSlic", "ResourceSlice",
                                 "ComputeDomain", "Compute", "kind: ", "\n", "x", "e"]), max_size=20).map("".join))
def test_staged_names_are_found_where_each_name_starts(text: str) -> None:
    # the scan searches shared first words: it must find what searching every name finds
    raw = text.encode()
    naive = sorted({i for name in STAGED_KINDS for i in range(len(raw)) if raw.startswith(name.encode(), i)})
    assert staged_positions(raw) == naive


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["%", "%TAG", "a", " ", "\n", "\r", "#"]), max_size=20).map("".join))
def test_a_directive_line_is_found(text: str) -> None:
    raw = text.encode()
    expected = [i for i in range(len(raw)) if raw.startswith(b"%", i) and (i == 0 or raw[i - 1] == 10)]
    assert list(line_starts_of(raw, b"%")) == expected
    assert list(line_starts_of(text, "%")) == [len(raw[:i].decode()) for i in expected]
