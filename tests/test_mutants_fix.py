"""Tests written to kill mutants of `dralint/fix/` that survived `bench/mutation.py --package fix`.

Expectations are read off the small inputs written here; the mutants are listed in bench/mutation-results.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dralint.engine.config import build_config
from dralint.fix.edits import EditError, fmt_path
from dralint.fix.emit import Style, emit_flow
from dralint.fix.loop import fix_paths
from dralint.fix.splice import PlannedFix, Splicer, detect_style
from dralint.inputs.load import load_bytes
from dralint.model import Applicability, Edit, Fix


def test_paths_in_fix_messages_read_like_the_yaml() -> None:
    assert fmt_path(["spec", "devices", "requests", 0, "name"]) == "spec.devices.requests[0].name"
    assert fmt_path([0, "a"]) == "[0].a"
    assert fmt_path([]) == "(document)"


def test_a_flow_list_keeps_its_quoting_for_strings_only() -> None:
    # the list quotes its strings with ", so a new string is quoted the same way; a number stays a number
    orig = {(0,): ('"a"', "a")}
    assert emit_flow(["a", "b", 5, True], orig, Style()) == '["a", "b", 5, true]'


def test_the_preferred_quote_counts_every_quoted_sequence_item() -> None:
    # three double-quoted items and one single-quoted one (the last): the document prefers "
    text = 'args:\n- "a"\n- "b"\n- "c"\n- \'d\'\n'
    [doc] = load_bytes("s.yaml", text.encode()).documents
    assert detect_style(text, doc.data).quote == '"'
    text = "args:\n- 'a'\n- 'b'\n- 'c'\n- \"d\"\n"
    [doc] = load_bytes("s.yaml", text.encode()).documents
    assert detect_style(text, doc.data).quote == "'"


def test_the_second_item_of_a_sequence_is_edited_in_place() -> None:
    # the alias guard compares an item's position with the previous item's, not another item's
    sp = Splicer("a:\n- x: 1\n- x: 2\n- x: 3\n")
    sp.set(("a", 1, "x"), 5)
    assert sp.t == "a:\n- x: 1\n- x: 5\n- x: 3\n"


def test_unwrapping_the_document_itself_is_an_edit_error() -> None:
    with pytest.raises(EditError, match="not a mapping inside a mapping"):
        Splicer("a:\n  b: 1\n").unwrap(())


def test_fix_paths_reads_the_context_but_fixes_only_the_targets(tmp_path: Path) -> None:
    target = tmp_path / "pod.yaml"
    target.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n")
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n")
    run, missing = fix_paths([str(target)], build_config({}, None, tmp_path), context=[str(ctx)])
    assert missing == []
    assert [Path(f.path).name for f in run.files] == ["pod.yaml"]


def test_an_appended_item_carries_its_comment_on_its_own_line() -> None:
    sp = Splicer("a:\n- 1\n- 2\n")
    sp.append(("a",), 3, "added")
    assert sp.t == "a:\n- 1\n- 2\n- 3  # added\n"
    empty = Splicer("a: []\nb: 1\n")
    empty.append(("a",), 3, "added")
    assert "- 3  # added\n" in empty.t and empty.t.endswith("b: 1\n")


def test_renaming_a_single_quoted_key_keeps_the_quotes() -> None:
    sp = Splicer("'a': 1\n\"c\": 2\n")
    sp.rename(("a",), "b")
    sp.rename(("c",), "d")
    assert sp.t == "'b': 1\n\"d\": 2\n"


def test_a_rename_touches_the_old_and_the_new_key_next_to_each_other() -> None:
    fix = Fix("rename", Applicability.SAFE, (Edit("rename", ("spec", "a", "old"), key="new"),))
    assert PlannedFix("X", fix, 0, ("items", 0)).touches() == [
        ("items", 0, "spec", "a", "old"), ("items", 0, "spec", "a", "new")]
