"""The loader: documents, positions, YAML 1.1 scalars, JSON, List dumps, Helm sources, bad input."""

from __future__ import annotations

import random

import pytest

from dralint.inputs import load
from dralint.inputs.load import LMap, load_bytes
from dralint.inputs.locate import locate


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
        monkeypatch.setattr(load, "COUNTED_POSITIONS", 0)
        table = load.SourceFile(path="t.yaml", raw=text.encode(), text=text)
        got_table = [table.line_col(o) for o in range(len(text) + 3)]
        monkeypatch.setattr(load, "COUNTED_POSITIONS", 10**9)
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
