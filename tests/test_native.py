"""The native loader (`dralint/inputs/_yamlfast.c`) gives what the Python path gives, document for document.

The module is built by the install when a C compiler and libyaml's headers exist; these tests skip
without it, unless DRALINT_REQUIRE_NATIVE is set (CI sets it, so that the module is always tested
there).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralint.inputs import load
from tests.conftest import CORPUS, EXAMPLES, REPO
from tests.test_load import _same_tree
from tests.test_parallel import load_generator

NATIVE = load.NATIVE

if NATIVE is None and not os.environ.get("DRALINT_REQUIRE_NATIVE"):
    pytestmark = pytest.mark.skip(reason="native loader not built (no C compiler or libyaml headers at install time, "
                                         "or DRALINT_NO_NATIVE set)")


def _parse(raw: bytes, native: bool, limits: load.Limits | None = None, path: str = "x.yaml") -> load.SourceFile:
    saved = load.NATIVE
    load.NATIVE = NATIVE if native else None
    try:
        return load.load_bytes(path, raw, limits)
    finally:
        load.NATIVE = saved


def _same_file(a: load.SourceFile, b: load.SourceFile) -> bool:
    if [p.__dict__ for p in a.problems] != [p.__dict__ for p in b.problems] or len(a.documents) != len(b.documents):
        return False
    for x, y in zip(a.documents, b.documents, strict=True):
        if (x.index, x.start, x.end, x.source, x.skip, x.duplicates) != (y.index, y.start, y.end, y.source, y.skip,
                                                                           y.duplicates):
            return False
        if not _same_tree(x.data, y.data):
            return False
    return True


def _assert_same(raw: bytes, limits: load.Limits | None = None, path: str = "x.yaml") -> None:
    assert NATIVE is not None, "DRALINT_REQUIRE_NATIVE is set but the native loader is not built"
    assert _same_file(_parse(raw, True, limits, path), _parse(raw, False, limits, path)), raw[:300]


def _files(root: Path) -> Iterator[Path]:
    for p in sorted(root.rglob("*")):
        if p.suffix in (".yaml", ".yml", ".json") and p.is_file():
            yield p


def test_the_native_loader_reads_plain_documents_and_leaves_the_rest_to_python() -> None:
    assert NATIVE is not None, "DRALINT_REQUIRE_NATIVE is set but the native loader is not built"
    (data, start, end, null), = NATIVE.compose("a: 1\nb: [x, {c: yes}]\n", 200, 1_000_000)
    assert data == {"a": 1, "b": ["x", {"c": True}]} and (start, end, null) == (0, 22, False)
    assert list(data.lc) == [0, 1, 3, 4, 5, 6, 8, 21] and list(data["b"].lc) == [9, 10, 12, 20]
    for text in ("a: !!str 1\n", "a: 1\na: 2\n", "[a: [", "? [a]\n: b\n", "&k a: 1\n",
                 "a: *x\n", "a: &x [*x]\n", "a: &x 1\nb: &x 2\n",  # undefined, recursive, defined twice
                 "<<: {a: 1}\n", "a: &x 1\nb: {<<: *x}\n", "a: &x [1]\nb: {<<: [*x]}\n"):  # merges of other nodes
        assert NATIVE.compose(text, 200, 1_000_000) is None, text


def test_aliases_share_their_anchor_s_data_and_merges_follow_the_explicit_keys() -> None:
    assert NATIVE is not None, "DRALINT_REQUIRE_NATIVE is set but the native loader is not built"
    text = "base: &b {x: 1, y: 2}\nmore: &m {z: 3}\nuse:\n  y: 9\n  <<: [*b, *m]\n  w: *b\n"
    (data, _, _, _), = NATIVE.compose(text, 200, 1_000_000)
    use = data["use"]
    assert use == {"y": 9, "w": {"x": 1, "y": 2}, "x": 1, "z": 3} and use["w"] is data["base"]
    # a merged key sits where its source has it; an alias's value where its anchor's node is
    at = {k: text[use.lc[4 * j]:use.lc[4 * j + 1]] for j, k in enumerate(use)}
    assert at == {"y": "y", "w": "w", "x": "x", "z": "z"} and use.lc[4 * 2] == text.index("x: 1")
    assert list(use.lc[4:8])[2:] == [text.index("&b"), text.index("}") + 1]  # the node begins at its anchor
    # aliases count as their expanded size: a document over the node limit is left to the full walk
    bomb = "a: &a [1, 1, 1, 1]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n"
    assert NATIVE.compose(bomb, 200, 1_000_000) is not None and NATIVE.compose(bomb, 200, 60) is None


_CASES = [
    "a: 1\nb: two\nc: 3.5\nd: yes\ne: null\nf: ~\ng: 0755\nh: 0x1F\ni: 1e3\nj: 2024-01-01\nk: '1'\nl: \"x\"\n",
    "- a\n- [b, c]\n- {d: e}\n-\n- ''\n",
    "a: |\n  block\n  text\nb: >-\n  folded\n  text\n",
    "---\n---\n...\n---\nx: 1\n...\n",  # empty documents are skipped
    "~\n", "null\n", "'null'\n", "plain root\n", "\"quoted root\"\n", "",  # roots that are scalars
    "# only a comment\n",
    "1: a\ntrue: b\nnull: c\non: d\n3.5: e\n'q': f\n",  # keys that are not strings
    "a: &x 1\nb: *x\n", "base: &b {a: 1}\nuse:\n  <<: *b\n  c: 2\n",  # aliases and merges
    "a: &x {k: v}\nb: *x\nc: {<<: *x, k: w}\n", "s: &s 'q'\nt: *s\n", "l: &l [1, 2]\nm: [*l, *l]\n",
    "- &a {x: 1, y: 1}\n- <<: *a\n  y: 2\n- <<: [*a, *a]\n- {<<: [], z: 1}\n", "&r ~\n", "&r {a: 1}\n",
    "a: &x 1\n---\nb: *x\n",  # an anchor holds within its document
    "a: &a [1, 1, 1, 1, 1]\nb: [*a, *a, *a, *a, *a, *a]\n",  # expands beyond the limit below
    "a: &a {x: 1, y: 2}\nb: {z: 0, <<: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]}\n",  # so do its merges
    "a: &a {b: &b {c: 1}}\nd: *b\ne: {<<: *b, f: *a}\n", "k: &v yes\nl: *v\n<<: {m: 1}\n",
    "a: !!str 1\nb: !custom x\n", "%YAML 1.1\n---\na: 1\n", "%TAG !e! tag:e.com,2000:\n---\na: !e!x 1\n",
    "a: 1\nb: 2\na: 3\n",  # a repeated key
    "é: ünïcödé\nkey: 'naïve – text'\nlist: [α, β]\n",  # positions count characters
    "a: 1\r\nb:\r\n  - c\r\n",  # CRLF
    "\ufeffa: 1\n",  # a BOM
    "a: [1, 2\nb: 3\n", "a: b: c\n", "- a\nb: c\n", "key: 'unterminated\n",  # syntax errors
    "a:\n  b:\n    c:\n      d: [[[[1]]]]\n",  # nesting, within and beyond the limit below
    "\n".join(f"k{i}: [1, 2, 3]" for i in range(10)) + "\n",  # more nodes than the limit below
    "a: 1\n---\nb: [x\n---\nc: 3\n",  # an error in the second of three documents
    "a: {{ .Values.x }}\n",  # a template
]


@pytest.mark.parametrize("text", _CASES)
@pytest.mark.parametrize("limits", [load.Limits(), load.Limits(max_nesting=3, max_expanded_nodes=25)],
                         ids=["default-limits", "small-limits"])
def test_crafted_documents_read_the_same(text: str, limits: load.Limits) -> None:
    _assert_same(text.encode("utf-8"), limits)


@pytest.mark.parametrize("text", ['{"a": [1, 2, {"b": null}], "c": "d"}', '[{"kind": "List"}]', '{"a": 1,}'])
def test_json_reads_the_same(text: str) -> None:
    _assert_same(text.encode(), path="x.json")


def test_a_span_parsed_on_its_own_reads_the_same() -> None:
    raw = b"a: 1\n---\nkind: ConfigMap\ndata:\n  k: v\n---\nz: [1, 2]\n"
    sf = _parse(raw, False)
    start = sf.text.index("kind")
    got = []
    for native in (True, False):
        saved = load.NATIVE
        load.NATIVE = NATIVE if native else None
        try:
            got.append(load.compose_span(sf, start, len(sf.text), load.Limits()))
        finally:
            load.NATIVE = saved
    (a, b), (c, d) = got
    assert a.start == c.start == start and _same_tree(a.data, c.data) and _same_tree(b.data, d.data)


def test_the_generated_bench_corpus_reads_the_same(tmp_path: Path) -> None:
    load_generator().generate(tmp_path, files=120, docs=1200, seed=5)
    files = list(_files(tmp_path))
    assert len(files) >= 100
    for p in files:
        _assert_same(p.read_bytes(), path=str(p))


@pytest.mark.parametrize("root", [EXAMPLES, REPO / "tests" / "fixtures", CORPUS],
                         ids=["examples", "fixtures", "corpus"])
def test_real_files_read_the_same(root: Path) -> None:
    if not root.is_dir():
        pytest.skip(f"{root} not found (the shared corpus sits beside a checkout)")
    n = 0
    for p in _files(root):
        _assert_same(p.read_bytes(), path=str(p))
        n += 1
    assert n > 10


#: plain scalars starting with a character an implicit resolver is registered for, and with others
_FIRST_CHARS = ("a: Yes\nb: n\nc: ~\nd: éa\ne: =\nf: <x\ng: .inf\nh: +1\ni: -x\nj: Off\nk: z1\nl: 0o7\n"
                "m: Null\nT: t\n_: _\n'': ''\n")


def test_plain_scalars_no_resolver_looks_at_are_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    # the native loader takes a plain scalar for a string, asking nothing, when no implicit resolver is
    # registered for its first character; with a resolver that looks at every text, it asks every time
    assert NATIVE is not None, "DRALINT_REQUIRE_NATIVE is set but the native loader is not built"
    first = load._resolver_first_chars()
    assert first is not None and set(first) == {k for k in load._RESOLVER.yaml_implicit_resolvers if k}
    _assert_same(_FIRST_CHARS.encode())
    wildcard = {**load._RESOLVER.yaml_implicit_resolvers, None: []}
    monkeypatch.setattr(load._RESOLVER, "yaml_implicit_resolvers", wildcard, raising=False)
    assert load._resolver_first_chars() is None
    load._load_native()  # set up again: no fast path
    try:
        _assert_same(_FIRST_CHARS.encode())
        load._PLAIN_TAGS.clear()
        _parse(_FIRST_CHARS.encode(), True)
        # every plain scalar went through the resolver (and its memo): the memo knows each of them
        assert {"z1", "_", "éa", "a", "k", "Yes"} <= set(load._PLAIN_TAGS)
    finally:
        monkeypatch.undo()
        load._load_native()
    load._PLAIN_TAGS.clear()
    _parse(_FIRST_CHARS.encode(), True)
    assert "Yes" in load._PLAIN_TAGS and not {"z1", "_", "éa", "a", "k"} & set(load._PLAIN_TAGS)  # asked nothing


def test_setup_refuses_first_characters_it_cannot_look_up_and_keeps_what_it_had() -> None:
    assert NATIVE is not None, "DRALINT_REQUIRE_NATIVE is set but the native loader is not built"
    args = (load.LMap, load.LSeq, load.array, load._PLAIN_TAGS, load._plain_tag, load._scalar_of, load._key_of,
            load._STR)
    with pytest.raises(ValueError, match="ASCII"):
        NATIVE.setup(*args, "zé")
    load._PLAIN_TAGS.clear()
    _parse(b"a: z1\nb: yes\n", True)
    assert "z1" not in load._PLAIN_TAGS and "yes" in load._PLAIN_TAGS  # the shortcut as it was set up before


def _cache_slot(text: str) -> int:
    """The slot of the native module's cache of short texts that ``text`` takes (`text_of`)."""
    h = 2166136261
    for b in text.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return (h ^ (h >> 12)) & 0xFFF


def _colliding(n: int) -> list[str]:
    """``n`` different short texts that take the same cache slot."""
    by_slot: dict[int, list[str]] = {}
    for i in range(100_000):
        word = f"k{i}"
        same = by_slot.setdefault(_cache_slot(word), [])
        same.append(word)
        if len(same) == n:
            return same
    raise AssertionError("no collision found")


def test_short_texts_met_before_are_reused_only_when_they_are_the_same() -> None:
    # texts that share a slot of the cache replace each other there; each reads as itself, as a key
    # and as a value, over and over, and keys are interned as the Python path interns them
    assert NATIVE is not None, "DRALINT_REQUIRE_NATIVE is set but the native loader is not built"
    a, b, c = _colliding(3)
    long = "x" * 49  # longer than the cache takes
    text = "".join(f"{k}: {v}\n" for k, v in [(a, b), (b, a), (c, a), (long, c), ("é" + a, a + "é"), (a + "2", long)])
    for _ in range(3):
        (data, _, _, _), = NATIVE.compose(text, 200, 1_000_000)
        assert data == {a: b, b: a, c: a, long: c, "é" + a: a + "é", a + "2": long}
        assert all(k is sys.intern(k) for k in data)
        _assert_same(text.encode())


def test_positions_are_set_through_setattr_for_other_attribute_kinds() -> None:
    # setup takes the slots' places from LMap's and LSeq's member descriptors; types whose `lc`, `s`
    # and `e` are something else (here: plain instance attributes) get them through setattr
    assert NATIVE is not None, "DRALINT_REQUIRE_NATIVE is set but the native loader is not built"

    class Map(dict):  # type: ignore[type-arg]
        pass

    class Seq(list):  # type: ignore[type-arg]
        pass

    rest = (load.array, load._PLAIN_TAGS, load._plain_tag, load._scalar_of, load._key_of, load._STR,
            load._resolver_first_chars())
    NATIVE.setup(Map, Seq, *rest)
    try:
        (data, _, _, _), = NATIVE.compose("a: [1, b]\n", 200, 1_000_000)
        assert type(data) is Map and type(data["a"]) is Seq
        assert (data.s, data.e, list(data.lc)) == (0, 10, [0, 1, 3, 9])
        assert (data["a"].s, data["a"].e, list(data["a"].lc)) == (3, 9, [4, 5, 7, 8])
    finally:
        load._load_native()
    (data, _, _, _), = NATIVE.compose("a: [1, b]\n", 200, 1_000_000)
    assert type(data) is load.LMap and (data.s, data.e, list(data.lc)) == (0, 10, [0, 1, 3, 9])


_FIND_TEXT = st.text(alphabet=st.sampled_from("{}#ab é☃\n"), max_size=30)


@settings(max_examples=500, deadline=None)
@given(_FIND_TEXT, _FIND_TEXT.filter(lambda n: len(n) < 4), st.integers(-3, 33), st.booleans())
def test_find_is_the_text_s_own_find(text: str, needle: str, start: int, as_bytes: bool) -> None:
    # byte-wide texts and ASCII needles are searched in C (two-byte needles by their first byte);
    # every other case is the text's own method: the answers are the same either way
    assert NATIVE is not None, "DRALINT_REQUIRE_NATIVE is set but the native loader is not built"
    if as_bytes:
        hay, token = text.encode(), needle.encode()
        assert NATIVE.find(hay, token, start) == hay.find(token, start)
    else:
        assert NATIVE.find(text, needle, start) == text.find(needle, start)
    assert load.text_find(text, needle) == text.find(needle)


# YAML's punctuation, indentation and a few words: mostly broken text, some of it documents
_PIECES = st.sampled_from(["a", "b", "1", "yes", "~", "null", "é", " ", "  ", "\n", "- ", ": ", ":", "-", "---", "...",
                           "[", "]", "{", "}", ",", "'", '"', "#", "&x ", "*x", "!!str ", "? ", "|", ">", "<<: ",
                           "\t", "\r\n", "%YAML 1.1\n", "\\", "0x1", "1.5", "2024-01-01"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_any_text_reads_the_same(text: str) -> None:
    _assert_same(text.encode("utf-8"), load.Limits(max_nesting=4, max_expanded_nodes=30))


@pytest.mark.parametrize(("module", "env", "why"), [
    (None, {}, "not built"),
    ("unloadable", {}, "not loaded (libyaml-0.so.2: cannot open shared object file"),  # built elsewhere
    (type("Old", (), {"ABI": 0}), {}, "out of date"),  # an editable install's module from an older source
    (NATIVE, {"DRALINT_NO_NATIVE": "1"}, "off"),
])
def test_a_missing_or_stale_native_module_is_not_used(monkeypatch: pytest.MonkeyPatch, module: object,
                                                      env: dict[str, str], why: str) -> None:
    def fake_import(name: str) -> object:
        if module is None:
            raise ModuleNotFoundError(name)
        if module == "unloadable":
            raise ImportError("libyaml-0.so.2: cannot open shared object file: No such file or directory")
        return module

    monkeypatch.setattr(load.importlib, "import_module", fake_import)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    got, reason = load._load_native()
    assert got is None and reason.startswith(why)
