"""Document regions found without a second parse equal the ones the event parser finds.

`doc_regions` reads where each document's content ends off the located data the loader built
(`_located_ends`) instead of running the event parser over the file again (`_content_ends`), and
`migrate` derives the regions of the file it wrote from its own splices (`derived_regions`). Both are
shortcuts of the same answer, so they are checked against the parser on generated files: nested
block and flow collections, block scalars of every chomping, quotes, empty values, comments after
and between documents, ``---``/``...`` markers, CRLF, BOM, anchors and merge keys (those go through
the parser), and JSON.
"""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralint.engine.config import build_config
from dralint.fix import splice
from dralint.fix.derive import Derived, derive_result
from dralint.fix.splice import PassResult, PlannedFix, apply_pass
from dralint.inputs.load import Limits, LMap, LSeq, SourceFile, load_bytes
from dralint.migrate import apply
from dralint.migrate.records import MigrateOptions
from dralint.migrate.run import migrate_files
from dralint.model import Applicability, Edit, Fix, to_plain

from .conftest import REPO
from .test_fix_properties import manifest_file

CONFIG = build_config({}, None, REPO)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

keys = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True)
plain = st.from_regex(r"[a-z][a-z0-9 .]{0,8}[a-z0-9]", fullmatch=True)
comment = st.sampled_from(["", "", "  # note", "  # x: y", " #"])


@st.composite
def scalar(draw: st.DrawFn, indent: int) -> str:
    """A scalar value as it follows ``key:`` (with its own line breaks for block scalars)."""
    kind = draw(st.sampled_from(["plain", "dq", "sq", "num", "empty", "block", "multi", "alias", "anchor"]))
    word = draw(plain)
    pad = " " * (indent + 2)
    if kind == "dq":
        return f' "{word}"'
    if kind == "sq":
        return f" '{word}'"
    if kind == "num":
        return f" {draw(st.integers(0, 999))}"
    if kind == "empty":
        return ""
    if kind == "block":
        head = draw(st.sampled_from(["|", "|-", "|+", ">", ">-", "|2"]))
        lines = draw(st.lists(plain, min_size=1, max_size=3))
        tail = draw(st.sampled_from(["", "\n", "\n\n"]))
        return f" {head}\n" + "\n".join(pad + ln for ln in lines) + tail
    if kind == "alias":  # every generated block document anchors `a0` (a scalar) first
        return " *a0"
    if kind == "anchor":
        return f" &{draw(keys)}x {word}"
    if kind == "multi":
        return f" {word}\n{pad}{draw(plain)}"
    return f" {word}"


def flow(draw: st.DrawFn) -> str:
    items = draw(st.lists(plain, max_size=3))
    if draw(st.booleans()):
        return "{" + ", ".join(f"{k}: {v}" for k, v in zip(items, items, strict=True)) + "}"
    sep = ",\n    " if draw(st.booleans()) else ", "
    return "[" + sep.join(items) + "]"


@st.composite
def block(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    """The lines of a block mapping or sequence at ``indent``."""
    pad = " " * indent
    lines: list[str] = []
    as_seq = depth > 0 and draw(st.booleans())
    names = draw(st.lists(keys, min_size=1, max_size=4, unique=True))
    for name in names:
        if draw(st.integers(0, 5)) == 0:
            lines.append(pad + "# between " + name)
        lead = pad + ("- " if as_seq else "")
        inner = indent + (2 if as_seq else 0)
        choice = draw(st.integers(0, 4 if depth < 3 else 1))
        if choice == 4 and not as_seq:  # merge the anchored mapping `m0` (defined first)
            lines.append(f"{pad}<<: *m0{draw(comment)}")
        elif choice <= 1:
            value = draw(scalar(inner))
            first, _, rest = value.partition("\n")
            lines.append(f"{lead}{name}:{first}" + ("" if rest else draw(comment)))
            if rest:
                lines.extend(rest.split("\n"))
        elif choice == 2:
            lines.append(f"{lead}{name}: {flow(draw)}{draw(comment)}")
        else:
            lines.append(f"{lead}{name}:{draw(comment)}")
            lines.extend(draw(block(inner + draw(st.sampled_from([2, 4])), depth + 1)))
    return lines


@st.composite
def stream(draw: st.DrawFn) -> bytes:
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        shape = draw(st.integers(0, 9))
        if shape == 0:
            body = [flow(draw)]
        elif shape == 1:
            body = [draw(plain)]  # a scalar document
        else:
            body = draw(block(0, 0))
            if draw(st.booleans()):  # the anchors that aliases and merge keys refer to
                body = ["a0base: &a0 shared", "m0base: &m0", "  mk: 1", *body]
            elif draw(st.booleans()):
                body = [ln.replace(" *a0", " x").replace("<<: *m0", "m0: x") for ln in body]
        after = draw(st.sampled_from(["", "", "# trailing\n", "\n\n", "...\n", "# a\n# b\n"]))
        docs.append("\n".join(body) + "\n" + after)
    text = draw(st.sampled_from(["", "---\n", "# head\n---\n"])) + "---\n".join(docs)
    if draw(st.booleans()):
        text = text.rstrip("\n")
    if draw(st.integers(0, 3)) == 0:
        text = text.replace("\n", "\r\n")
    raw = text.encode()
    return b"\xef\xbb\xbf" + raw if draw(st.integers(0, 9)) == 0 else raw


def _parsed(sf: SourceFile) -> dict[int, int]:
    """What the event parser says, for the documents the loader kept."""
    starts = {d.start for d in sf.documents}
    return {k: v for k, v in splice._content_ends(sf.text).items() if k in starts}


@SETTINGS
@given(stream())
def test_located_ends_equal_the_event_parser(raw: bytes) -> None:
    sf = load_bytes("gen.yaml", raw)
    got = splice._located_ends(sf)
    if sf.problems:
        assert got is None
        return
    if got is None:  # only for the shapes the shortcut leaves to the parser
        assert any(c in sf.text for c in "&<!?") or any(d.duplicates for d in sf.documents)
    if got is not None:
        assert got == _parsed(sf)


HAND = [
    "a: 1\n",
    "a: 1\nb:\n",
    "a:\n  - x\n  - {y: 1}  # c\n# after\n---\nb: [1,\n  2]\n...\n# end\n",
    "k: |+\n  text\n\n\n---\nk: >-\n  folded\n  more\n",
    "list:\n- a\n-\n- 'q'\n",
    "x: 1\r\ny:\r\n  z: \"w\"\r\n",
    "[1, 2]\n---\nplain scalar\n---\n{a: b}  # c\n",
    "base: &b {a: 1}\nuse:\n  <<: *b\n  c: 2\n",
    "? complex\n: value\n",
    "a: !!str 1\nb: !custom\n  c: d\n",
    "a: 1\na: 2\n",
    "[a, b]: flow key\n",
    "a: &anchored {x: 1}\n",
]


def test_located_ends_on_hand_picked_files() -> None:
    used = 0
    for text in HAND:
        sf = load_bytes("h.yaml", text.encode())
        got = splice._located_ends(sf)
        if got is not None:
            used += 1
            assert got == _parsed(sf), text
    assert used >= 6  # the shortcut is taken for the common shapes


def test_json_goes_through_the_parser() -> None:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [{"a": [1, 2]}]}, indent=2)
    sf = load_bytes("l.json", text.encode())
    assert splice._located_ends(sf) is None
    assert splice.doc_regions(sf) == {0: (0, len(text))}


def _reference_regions(sf: SourceFile) -> dict[int, tuple[int, int]]:
    """`doc_regions` computed with the event parser only."""
    ends = splice._content_ends(sf.text)
    text = sf.text
    out = {}
    for doc in sf.documents:
        end = ends.get(doc.start)
        ls = text.rfind("\n", 0, doc.start) + 1
        if end is None or text[ls: doc.start].strip():
            continue
        stop = end if end > 0 and text[end - 1] == "\n" else (
            len(text) if text.find("\n", end) == -1 else text.find("\n", end) + 1)
        out[doc.index] = (ls, stop)
    return out


@SETTINGS
@given(stream())
def test_doc_regions_equal_the_event_parser(raw: bytes) -> None:
    sf = load_bytes("gen.yaml", raw)
    try:
        want = _reference_regions(sf)
    except yaml.YAMLError:
        return
    assert splice.doc_regions(sf) == want


# -- the result of a pass, derived from the pass (dralint.fix.derive) -----------------------------


def _positions(v: object, out: list[tuple[int, int, tuple[int, ...]]]) -> list[tuple[int, int, tuple[int, ...]]]:
    if isinstance(v, (LMap, LSeq)):
        out.append((v.s, v.e, tuple(v.lc)))
        for x in v.values() if isinstance(v, LMap) else v:
            _positions(x, out)
    return out


def _assert_derived_is_the_parse(sf: SourceFile, pr: PassResult) -> bool:
    """The derived result equals parsing the pass's text; False when the pass gave no derived result."""
    derived = derive_result(sf, pr, Limits())
    full = load_bytes(sf.path, (b"\xef\xbb\xbf" if sf.bom else b"") + pr.text.encode())
    if derived is None:
        return False
    new = derived.file
    assert not full.problems
    assert (new.text, new.raw, new.bom, new.newline) == (full.text, full.raw, full.bom, full.newline)
    assert len(new.documents) == len(full.documents)
    kept = {id(d.data) for d in sf.documents}
    for a, b in zip(new.documents, full.documents, strict=True):
        assert (a.index, a.start, a.end, a.duplicates, a.source, a.skip) == \
            (b.index, b.start, b.end, b.duplicates, b.source, b.skip)
        assert to_plain(a.data) == to_plain(b.data)
        if id(a.data) not in kept:  # parsed again: positions too (moved ones keep the input's)
            assert _positions(a.data, []) == _positions(b.data, [])
    assert derived.regions == splice.doc_regions(full) == _reference_regions(full)
    return True


@st.composite
def edits_for(draw: st.DrawFn, sf: SourceFile) -> list[PlannedFix]:
    """Edits of the top-level keys of some block-mapping documents, and documents inserted after them."""
    out = []
    for d in sf.documents:
        if not isinstance(d.data, LMap) or not d.data or not draw(st.booleans()):
            continue
        names = list(d.data)
        ops: list[Edit] = []
        op = draw(st.sampled_from(["set", "insert", "delete", "none"]))
        if op == "set":
            ops.append(Edit("set", (draw(st.sampled_from(names)),), draw(plain)))
        elif op == "insert":
            ops.append(Edit("insert", (), {"n": [draw(plain)]}, key="zz" + draw(keys)))
        elif op == "delete" and len(names) > 1:
            ops.append(Edit("delete", (draw(st.sampled_from(names)),)))
        if draw(st.booleans()):
            ops.append(Edit("insert_document", (), {"kind": "ConfigMap", "data": {"k": draw(plain)}},
                            comment=draw(st.sampled_from([None, "added"]))))
        if ops:
            out.append(PlannedFix("T", Fix("t", Applicability.SAFE, tuple(ops)), d.index, (), keep_comments=True))
    return out


@SETTINGS
@given(st.data())
def test_derived_result_equals_parsing_it(data: st.DataObject) -> None:
    sf = load_bytes("gen.yaml", data.draw(stream()))
    planned = data.draw(edits_for(sf))
    pr = apply_pass(sf, planned, Applicability.UNSAFE)
    if pr.applied and (pr.touched or pr.inserted):
        # these files have no templates or directives: a file that loaded cleanly is always derived
        assert _assert_derived_is_the_parse(sf, pr) or sf.problems


def test_derived_result_on_hand_picked_passes() -> None:
    cases = [
        ("a: 1\nb: 2\n---\nc: 3\n", 0),
        ("# head\n---\na: 1\n# tail\n\n---\nc: [1,\n  2]\n...\n---\nd: 4\n", 1),
        ("a: 1\r\nb:\r\n  - x\r\n---\r\nc: 3", 0),
        ("x: &a 1\ny: *a\nz: {p: q}\n---\nw: 1\n", 0),
    ]
    for text, di in cases:
        sf = load_bytes("h.yaml", text.encode())
        edits = (Edit("insert", (), "v", key="new"),
                 Edit("insert_document", (), {"kind": "ConfigMap", "data": {"k": "v"}}))
        pr = apply_pass(sf, [PlannedFix("T", Fix("t", Applicability.SAFE, edits), di, ())], Applicability.UNSAFE)
        assert pr.applied, text
        assert _assert_derived_is_the_parse(sf, pr), text


def test_what_cannot_be_derived_is_parsed_whole() -> None:
    """Templates, directives and a rewritten region that splits in two give no derived result."""
    for text in ("a: 1\nb: '{{ x }}'\n", "%YAML 1.1\n---\na: 1\n"):
        sf = load_bytes("h.yaml", text.encode())
        pr = apply_pass(sf, [PlannedFix("T", Fix("t", Applicability.SAFE, (Edit("set", ("a",), "z"),)), 0, ())],
                        Applicability.UNSAFE)
        assert pr.applied and derive_result(sf, pr, Limits()) is None, text
    sf = load_bytes("h.yaml", b"a: 1\nb: 2\n")
    pr = apply_pass(sf, [PlannedFix("T", Fix("t", Applicability.SAFE, (Edit("set", ("a",), "z"),)), 0, ())],
                    Applicability.UNSAFE)
    pr.text = pr.text.replace("b: 2", "---\nb: 2")  # as a broken splice would
    pr.placed[0] = (0, len(pr.text))
    assert derive_result(sf, pr, Limits()) is None


@SETTINGS
@given(manifest_file(("legacy", "configmap", "source")))
def test_migrate_derives_what_parsing_gives(raw: bytes) -> None:
    """Every result `migrate` derives equals parsing it, and the migration is the same either way."""
    seen: list[bool] = []

    def checked(sf: SourceFile, pr: PassResult, limits: Limits) -> Derived | None:
        seen.append(_assert_derived_is_the_parse(sf, pr))
        return derive_result(sf, pr, limits)

    def parsed(sf: SourceFile, pr: PassResult, limits: Limits) -> Derived | None:
        return None

    outcomes = []
    for fn in (checked, parsed):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(apply, "derive_result", fn)
            report = migrate_files([load_bytes("f.yaml", raw)], [], CONFIG, MigrateOptions())
        outcomes.append([(f.after, [g.reason for g in f.failures]) for f in report.files])
    assert outcomes[0] == outcomes[1]
    assert all(seen)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_comments_put_back_at_a_documents_end_keep_the_next_marker(newline: str) -> None:
    """A block replaced by a scalar whose comments are kept (`migrate`'s keep_comments): the comments
    go back before the document's last newline, so the `---` after it is still a document marker
    (it once ended up at the end of the last comment, and the file lost a document), and they end
    their lines as the file does."""
    text = ("# top\na:\n  # inside a\n  x: |\n    x0\n\n  # before b\n  b:\n    # inside b\n    c: c0\n"
            "---\n[]\n---\n[]\n")
    sf = load_bytes("gen.yaml", ("\ufeff" + text.replace("\n", newline)).encode())
    planned = [PlannedFix("T", Fix("t", Applicability.SAFE, (Edit("set", ("a",), "a0"),)), 0, (), keep_comments=True)]
    pr = apply_pass(sf, planned, Applicability.UNSAFE)
    assert pr.applied
    assert _assert_derived_is_the_parse(sf, pr)
    out = load_bytes("gen.yaml", pr.text.encode())
    assert [to_plain(d.data) for d in out.documents] == [{"a": "a0"}, [], []]
    assert all(c in pr.text for c in ("# inside a", "# before b", "# inside b"))
    lines = pr.text.split("\n")[:-1]
    assert all(line.endswith("\r") for line in lines) == (newline == "\r\n")
    assert any(line.endswith("\r") for line in lines) == (newline == "\r\n")
