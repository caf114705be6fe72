"""The loader: documents, positions, YAML 1.1 scalars, JSON, List dumps, Helm sources, bad input."""

from __future__ import annotations

import random

import pytest
import yaml

from dralint.inputs import load
from dralint.inputs.load import LMap, load_bytes
from dralint.inputs.locate import locate
from tests.conftest import CORPUS, requires_shared


def test_multi_document_positions() -> None:
    text = "# c\napiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"
    sf = load_bytes("x.yaml", text.encode())
    assert [d.data["kind"] for d in sf.documents] == ["Pod", "Service"]
    doc = sf.documents[1]
    assert locate(sf, doc, ("metadata", "name")) .line == 8
    assert locate(sf, doc, ("metadata", "name")).column == 3
    assert locate(sf, doc, ("metadata", "name"), on="value").column == 9


def test_key_and_value_spans() -> None:
    text = "spec:\n  containers:\n  - name: a\n    resources:\n      limits: {nvidia.com/gpu: 1}\n"
    sf = load_bytes("x.yaml", text.encode())
    path = ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    key = locate(sf, sf.documents[0], path)
    assert (key.line, key.column, key.end_line, key.end_column) == (5, 16, 5, 30)
    val = locate(sf, sf.documents[0], path, on="value")
    assert (val.line, val.column) == (5, 32)


def test_missing_path_points_at_deepest_existing_parent() -> None:
    sf = load_bytes("x.yaml", b"spec:\n  template:\n    spec: {}\n")
    span = locate(sf, sf.documents[0], ("spec", "template", "spec", "containers", 0))
    assert (span.line, span.column) == (3, 5)


def test_yaml_11_scalars_as_kubernetes_reads_them() -> None:
    sf = load_bytes("x.yaml", b"a: yes\nb: on\nc: 0755\nd: '1'\ne: 1.5\nf: ~\ng: 2024-01-01\n")
    d = sf.documents[0].data
    assert d == {"a": True, "b": True, "c": 493, "d": "1", "e": 1.5, "f": None, "g": "2024-01-01"}


def test_bom_and_crlf_are_remembered_and_positions_exclude_the_bom() -> None:
    sf = load_bytes("x.yaml", b"\xef\xbb\xbfkind: Pod\r\napiVersion: v1\r\n")
    assert sf.bom and sf.newline == "\r\n"
    span = locate(sf, sf.documents[0], ("apiVersion",))
    assert (span.line, span.column) == (2, 1)


@pytest.mark.parametrize(("raw", "newline"), [
    (b"a: 1\r\nb: 2\n", "\r\n"),  # the first line's ending decides
    (b"a: 1\nb: 2\r\n", "\n"),
    (b"a: 1\rb: 2\r\n", "\r\n"),  # the first LF follows a CR; the lone CR before it decides nothing
    (b"\r\na: 1\n", "\r\n"),
    (b"\na: 1\r\n", "\n"),
    (b"a: 1", "\n"),
    (b"a: '\r'\n", "\n"),
])
def test_newline_style_is_the_first_line_ending(raw: bytes, newline: str) -> None:
    assert load_bytes("x.yaml", raw).newline == newline


def test_json_and_kind_list() -> None:
    text = b'{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod"}]}'
    sf = load_bytes("dump.json", text)
    assert sf.documents[0].data["items"][0]["kind"] == "Pod"


def test_helm_source_comments_attach_to_the_following_document() -> None:
    text = (
        "---\n# Source: chart/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\n"
        "---\n# Source: chart/templates/b.yaml\napiVersion: v1\nkind: Secret\n---\napiVersion: v1\nkind: Pod\n"
    )
    sf = load_bytes("out.yaml", text.encode())
    assert [d.source for d in sf.documents] == ["chart/templates/a.yaml", "chart/templates/b.yaml", None]


def test_duplicate_keys_are_recorded_with_positions() -> None:
    sf = load_bytes("x.yaml", b"metadata:\n  name: a\n  name: b\n")
    doc = sf.documents[0]
    assert doc.data["metadata"]["name"] == "b"
    key, start, _end, first = doc.duplicates[0]
    assert key == "name" and sf.line_col(start) == (3, 3) and sf.line_col(first) == (2, 3)


def test_merge_keys_are_applied() -> None:
    sf = load_bytes("x.yaml", b"base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\n")
    assert sf.documents[0].data["other"] == {"x": 1, "y": 3}


def test_syntax_error_keeps_the_other_documents() -> None:
    text = b"apiVersion: v1\nkind: Pod\n---\nkey: [unclosed\n---\napiVersion: v1\nkind: Service\n"
    sf = load_bytes("x.yaml", text)
    assert [d.data.get("kind") for d in sf.documents if isinstance(d.data, LMap)] == ["Pod", "Service"]
    (p,) = [p for p in sf.problems if p.code == "DRA001"]
    assert p.span.line == 5


@pytest.mark.parametrize(
    ("raw", "code", "fragment"),
    [
        (b"a: \xff\xfe\n", "DRA005", "not UTF-8"),
        (b"a: b\x00c\n", "DRA005", "NUL"),
        ("a: b\n".encode("utf-16"), "DRA005", "UTF-16"),
        (b"a:\n\tb: 1\n", "DRA001", "tab"),
        (b"a: &x [*x]\n", "DRA005", "recursive alias"),
        (b"image: {{ .Values.image }}\n", "DRA003", "template"),
        (("a: " + "[" * 5000 + "]" * 5000).encode(), "DRA005", "nesting"),
    ],
)
def test_bad_input_becomes_a_problem(raw: bytes, code: str, fragment: str) -> None:
    sf = load_bytes("x.yaml", raw)
    assert [p.code for p in sf.problems] == [code]
    assert fragment.lower() in sf.problems[0].message.lower()


def test_templates_in_comments_and_block_scalars_are_not_unrendered_templates() -> None:
    text = (b"# {{ not a template }}\napiVersion: v1\nkind: ConfigMap\ndata:\n  alert: |\n"
            b"    {{ if .Values.x }}{{ $labels.instance }} down\n")
    sf = load_bytes("x.yaml", text)
    assert sf.problems == []


def test_empty_and_comment_only_files() -> None:
    assert load_bytes("e.yaml", b"").documents == []
    sf = load_bytes("c.yaml", b"# only\n# comments\n")
    assert sf.documents == [] and sf.problems == []


def test_positions_by_counting_agree_with_the_line_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first positions of a file are found by counting newlines; the rest from its line table.
    Both give the same line and column for every offset, the end of the text and past it included."""
    texts = ["", "a", "a\n", "\n\n", "ab\ncd\r\nef", "x: 1\n\n  y: [2]\r\n# z\n", "é\nü\n\n€",
             "".join(f"k{i}: {'v' * (i % 7)}\n" for i in range(200))]
    for text in texts:
        counted = load.SourceFile(path="t.yaml", raw=text.encode(), text=text)
        monkeypatch.setattr(load, "COUNTED_LENGTHS", 0)
        table = load.SourceFile(path="t.yaml", raw=text.encode(), text=text)
        got_table = [table.line_col(o) for o in range(len(text) + 3)]
        monkeypatch.setattr(load, "COUNTED_LENGTHS", 10**9)
        got_counted = [counted.line_col(o) for o in range(len(text) + 3)]
        assert got_counted == got_table, text
        assert counted.__dict__["_line_starts"] is None  # every one of them was counted
        assert table.__dict__["_line_starts"] is not None
        # each position is counted from the one before it: backwards and in any order too
        backwards = load.SourceFile(path="t.yaml", raw=text.encode(), text=text)
        assert [backwards.line_col(o) for o in reversed(range(len(text) + 3))] == got_table[::-1], text
        order = list(range(len(text) + 3))
        random.Random(len(text)).shuffle(order)
        shuffled = load.SourceFile(path="t.yaml", raw=text.encode(), text=text)
        assert [shuffled.line_col(o) for o in order] == [got_table[o] for o in order], text


def test_counting_is_bounded_by_the_text_not_by_the_positions_asked() -> None:
    """Positions asked in file order are counted (one pass over the text, however many); positions
    that jump from one end of a file to the other get the line table once the jumps add up to a
    few times the text's length, so a hostile file cannot make each position cost a pass."""
    text = "".join(f"key{i}: value\n" for i in range(5000))
    ordered = load.SourceFile(path="t.yaml", raw=text.encode(), text=text)
    for o in range(0, len(text), 7):
        ordered.line_col(o)
    assert ordered.__dict__["_line_starts"] is None
    jumping = load.SourceFile(path="t.yaml", raw=text.encode(), text=text)
    for _ in range(3):
        assert jumping.line_col(1) == (1, 2)
        assert jumping.line_col(len(text) - 1) == (5000, 15)  # the last newline
    assert jumping.__dict__["_line_starts"] is not None


def _same_tree(a: object, b: object) -> bool:
    """Equal data, types and positions (``lc``, ``s``, ``e``) all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (load.LMap, load.LSeq)):
        assert isinstance(b, (load.LMap, load.LSeq))
        if (a.lc, a.s, a.e) != (b.lc, b.s, b.e) or len(a) != len(b):
            return False
        if isinstance(a, load.LMap):
            assert isinstance(b, load.LMap)
            return list(a) == list(b) and all(_same_tree(a[k], b[k]) for k in a)
        return all(_same_tree(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _both_walks(text: str, limits: load.Limits) -> tuple[object, object]:
    """What `_Walker.document` (the plain walk where it applies) and the full `walk` give for each
    document of ``text``: its data and duplicates, or the limit it exceeds."""
    out: list[list[object]] = [[], []]
    for node in yaml.compose_all(text, Loader=load.COMPOSE_LOADER):
        if node is None:
            continue
        for k, full in enumerate((False, True)):
            w = load._Walker(limits, aliases=False)
            try:
                data = w.walk(node, 0)[0] if full else w.document(node)
                out[k].append((data, w.duplicates))
            except load._LimitExceeded as e:
                out[k].append((str(e), e.offset))
    return out[0], out[1]


_WALKS = [
    "a: 1\nb: [x, {c: d}]\nc: yes\n",
    "a: 1\nb: 2\na: 3\nnested: {x: 1, x: 2}\n",  # duplicate keys
    "base: {a: 1}\nuse:\n  <<: {a: 2, b: 3}\n  b: 4\n",  # a merge key without aliases
    "? [a, b]\n: 1\n1: x\nnull: y\ntrue: z\n",  # keys that are not strings
    "plain scalar root\n",
    "- " * 12 + "x\n",  # nested past the limit below
    "\n".join(f"k{i}: [1, 2, 3]" for i in range(8)) + "\n",  # more nodes than the limit below
    "a:\n" + "  " + "- [1, 2, 3, 4]\n  " * 5 + "\nb: " + "[" * 12 + "]" * 12 + "\n",  # size then depth
]


@pytest.mark.parametrize("text", _WALKS)
def test_the_plain_walk_gives_what_the_full_walk_gives(text: str) -> None:
    limits = load.Limits(max_expanded_nodes=20, max_nesting=8)
    plain, full = _both_walks(text, limits)
    for (a, x), (b, y) in zip(plain, full, strict=True):
        assert _same_tree(a, b) and x == y


@requires_shared
def test_the_plain_walk_gives_what_the_full_walk_gives_on_the_corpus() -> None:
    n = 0
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
            continue
        try:
            plain, full = _both_walks(path.read_bytes().decode("utf-8-sig"), load.Limits())
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        for (a, x), (b, y) in zip(plain, full, strict=True):
            assert _same_tree(a, b) and x == y, path
            n += 1
    assert n > 100


def test_source_lines_are_found_as_the_line_anchored_pattern_finds_them() -> None:
    """`_sources` searches for the text and tries the pattern only at line starts; it must find
    exactly what the pattern finds when tried everywhere (random texts of the pieces that matter)."""
    pieces = ["# Source: ", "# Source:", "chart/t.yaml", " ", "\n", "\r\n", "\r", "x", "#", "\t", "---\n"]
    rng = random.Random(17)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 14)))
        expected = [(m.start(), m.group(1)) for m in load._SOURCE_RE.finditer(text)]
        assert load._sources(text) == expected, repr(text)
