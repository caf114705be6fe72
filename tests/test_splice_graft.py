"""The splicer's positions after an edit come from parsing only the collection that changed
(`dralint.fix.splice._regraft`); they must equal a parse of the whole document, and `migrate` must
write the same bytes as when every edit parsed the whole document (issue 17, point 3).

The whole suite runs with ``DRALINT_VERIFY_GRAFTS`` set (tests/conftest.py), so every graft made by
any test is also compared with a whole parse; these tests check that grafts are really made, that
what cannot be grafted is parsed whole, and that the comparison catches a wrong graft."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dralint.engine.config import build_config
from dralint.fix import splice
from dralint.fix.splice import Splicer, _parse_uncached, _regraft, same_located
from dralint.inputs.load import load_bytes
from dralint.migrate.records import MigrateOptions
from dralint.migrate.run import migrate_files
from dralint.model import Edit
from tests.conftest import CORPUS, EXAMPLES, REPO

DOC = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: w  # the name
spec:
  template:
    spec:
      containers:
      - name: a
        image: x
        resources:
          requests:
            cpu: 1
            nvidia.com/gpu: 1
          limits:
            memory: 1Gi
            nvidia.com/gpu: 1
        ports:
        - containerPort: 80
      volumes:
      - name: v
        emptyDir: {}
"""

RES = ("spec", "template", "spec", "containers", 0, "resources")
POD = ("spec", "template", "spec")


@pytest.fixture
def grafts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Whether each splice was grafted (True) or parsed whole (False)."""
    made: list[bool] = []

    def counting(*args: Any) -> Any:
        out = _regraft(*args)
        made.append(out is not None)
        return out

    monkeypatch.setattr(splice, "_regraft", counting)
    yield made


def _whole(text: str) -> Any:
    return _parse_uncached(text)


@pytest.mark.parametrize("edit", [
    Edit("delete", (*RES, "requests", "nvidia.com/gpu")),
    Edit("delete", (*RES, "limits", "nvidia.com/gpu")),
    Edit("insert", RES, [{"name": "gpu"}], key="claims"),
    Edit("insert", (*RES, "requests"), "2", key="memory", index=0),
    Edit("append", (*POD, "volumes"), {"name": "w", "emptyDir": {}}),
    Edit("insert", POD, [{"name": "gpu", "resourceClaimTemplateName": "t"}], key="resourceClaims"),
    Edit("delete", (*POD, "containers", 0, "ports")),
    Edit("insert", (), {"phase": "x"}, key="status"),  # the root's last entry on
    Edit("delete", ("metadata",)),
])
def test_a_nested_line_edit_is_grafted_and_equals_a_whole_parse(grafts: list[bool], edit: Edit) -> None:
    sp = Splicer(DOC)
    sp.apply(edit)
    assert grafts and all(grafts), grafts
    assert same_located(sp.root, _whole(sp.t))
    assert sp.t != DOC


def test_the_edits_of_a_migrated_workload_in_a_row_stay_exact(grafts: list[bool]) -> None:
    sp = Splicer(DOC)
    for e in [Edit("delete", (*RES, "requests", "nvidia.com/gpu")), Edit("delete", (*RES, "limits", "nvidia.com/gpu")),
              Edit("insert", RES, [{"name": "gpu"}], key="claims"),
              Edit("insert", POD, [{"name": "gpu", "resourceClaimTemplateName": "t"}], key="resourceClaims")]:
        sp.apply(e)
        assert same_located(sp.root, _whole(sp.t))
    assert grafts == [True] * 4
    assert "nvidia.com/gpu" not in sp.t and "# the name" in sp.t


def test_lines_that_leave_the_innermost_collection_are_grafted_one_level_up() -> None:
    # a key of `resources` inserted right after the last line of `limits`: on its own, `limits`
    # with that line does not parse as one mapping, so `resources` is parsed instead
    old = DOC
    at = old.index("        ports:")
    new = "          claims:\n          - name: gpu\n"
    text = old[:at] + new + old[at:]
    got = _regraft(_whole(old), old, text, at, at, new)
    assert got is not None
    assert same_located(got, _whole(text))
    assert got["spec"]["template"]["spec"]["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]


@pytest.mark.parametrize("old, find, new", [
    # an alias: the anchored node is shared, so offsets cannot be moved one copy at a time
    ("a: &x\n  b: 1\nc:\n  d: 2\n  e: *x\n", "  d: 2\n", "  f: 3\n"),
    # part of a line, not whole lines
    (DOC, "cpu: 1", "cpu: 2"),
    # the first key of the document: from there on is the whole document
    (DOC, "apiVersion: apps/v1\n", "apiVersion: apps/v2\n"),
])
def test_what_cannot_be_grafted_is_parsed_whole(old: str, find: str, new: str) -> None:
    at = old.index(find)
    text = old[:at] + new + old[at + len(find):]
    assert _regraft(_whole(old), old, text, at, at + len(find), new) is None


def test_a_wrong_graft_is_caught_by_the_check_the_suite_runs_with(monkeypatch: pytest.MonkeyPatch) -> None:
    assert splice.VERIFY_GRAFTS  # set for the whole suite by tests/conftest.py
    real = splice._moved

    def off_by_one(node: Any, by: int, after: int) -> Any:
        return real(node, by + 1, after)

    monkeypatch.setattr(splice, "_moved", off_by_one)
    with pytest.raises(AssertionError, match="differs from the whole parse"):
        Splicer(DOC).apply(Edit("delete", (*RES, "requests", "nvidia.com/gpu")))


def _sources() -> list[Path]:
    files = sorted(p for p in EXAMPLES.rglob("*.yaml"))
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml") and "nvidia.com/gpu" in
                        p.read_text(encoding="utf-8", errors="replace"))
    return files


def test_migrate_writes_the_same_bytes_with_and_without_grafts(monkeypatch: pytest.MonkeyPatch,
                                                             grafts: list[bool]) -> None:
    files = [load_bytes(f"{i}/{p.name}", p.read_bytes()) for i, p in enumerate(_sources())]
    cfg = build_config({}, None, REPO)
    grafted = migrate_files(files, [], cfg, MigrateOptions())
    assert sum(grafts) >= 5, "the examples alone take several grafted edits"
    monkeypatch.setattr(splice, "_regraft", lambda *a: None)
    whole = migrate_files(files, [], cfg, MigrateOptions())
    assert [o.after for o in grafted.files] == [o.after for o in whole.files]
    assert [(r.status, r.reason) for r in grafted.workloads] == [(r.status, r.reason) for r in whole.workloads]
    assert any(o.after != o.before for o in grafted.files)


def test_a_pass_over_a_file_parses_only_the_changed_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The region's data comes from the file's own parse, each edit parses a few lines, and the
    derived result takes the splicer's data: no document is parsed whole again."""
    from dralint.fix import derive
    from dralint.fix.derive import derive_result
    from dralint.fix.splice import PlannedFix, apply_pass
    from dralint.inputs.load import Limits
    from dralint.model import Applicability, Fix

    monkeypatch.setattr(splice, "VERIFY_GRAFTS", False)  # its checks parse everything again
    splice._PARSED.clear()
    parsed: list[str] = []
    real = splice._parse_uncached

    def counting(text: str) -> Any:
        parsed.append(text)
        return real(text)

    composed: list[int] = []
    real_span = derive.compose_span

    def counting_span(*args: Any) -> Any:
        composed.append(1)
        return real_span(*args)

    monkeypatch.setattr(splice, "_parse_uncached", counting)
    monkeypatch.setattr(derive, "compose_span", counting_span)
    text = "kind: ConfigMap\nmetadata:\n  name: c\n---\n" + DOC
    sf = load_bytes("f.yaml", text.encode())
    edits = (Edit("delete", (*RES, "requests", "nvidia.com/gpu")),
             Edit("insert", POD, [{"name": "gpu", "resourceClaimTemplateName": "t"}], key="resourceClaims"))
    pr = apply_pass(sf, [PlannedFix("T", Fix("t", Applicability.SAFE, edits), 1, ())], Applicability.UNSAFE)
    assert pr.applied
    got = derive_result(sf, pr, Limits())
    assert got is not None
    assert parsed and all(len(t) < len(DOC) // 2 for t in parsed), [len(t) for t in parsed]
    assert not composed
    whole = load_bytes("f.yaml", pr.text.encode())
    assert [same_located(a.data, b.data) and (a.start, a.end) == (b.start, b.end)
            for a, b in zip(got.file.documents, whole.documents, strict=True)] == [True, True]


def test_an_unchanged_nan_is_the_same_value() -> None:
    # a fuzz input: `.nan` made the check of a document's own parse fail (NaN is not equal to itself),
    # and a diff would have rewritten an unchanged `.nan`
    from dralint.fix.edits import diff_edits
    from dralint.model import same

    nan = float("nan")
    assert same(nan, nan) and not same(nan, 1.0) and not same(1.0, nan)
    text = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: .nan\n  b: [1, .NaN]\n"
    a, b = load_bytes("x.yaml", text).documents[0].data, _parse_uncached(text.decode())
    assert same_located(a, b)
    changed = {**a, "metadata": {"name": "y"}}
    assert diff_edits(a, changed) == [Edit("set", ("metadata", "name"), value="y")]
