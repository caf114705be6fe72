"""format() with a literal format string is checked when the selector compiles, as the API server
does: unknown clauses, a literal argument list of the wrong length, literal arguments a verb cannot
format are compile errors (DRA603), not errors at allocation time."""

from __future__ import annotations

import re

import pytest

from dralint.cel import Environment
from tests.conftest import lint_text

ENV = Environment.for_target("1.35", {})

GOOD = ['"%d-%d".format([1, 2]) == "1-2"', '"%s".format(["a"]) == "a"', '"%.2f%%".format([2.5]) != ""',
        '"%b".format([true]) == "1"', '"%x".format([b"a"]) == "61"', '"none" == "none".format([])',
        'device.driver.format([1]) != ""']  # a format string that is not a literal is checked when it runs


@pytest.mark.parametrize("expr", GOOD)
def test_valid_format_calls_compile(expr: str) -> None:
    prog = ENV.compile(expr)
    assert prog.ok, prog.diags


@pytest.mark.parametrize(("fmt", "args"), [("%d %d", "[1]"), ("%s", "[]"), ("x", "['a']"), ("%d%d%d", "[1, 2]")])
def test_argument_count_must_match_the_clauses(fmt: str, args: str) -> None:
    prog = ENV.compile(f'"{fmt}".format({args}) == ""')
    clauses = len(re.findall(r"%[^%]", fmt.replace("%%", "")))
    given = 0 if args == "[]" else args.count(",") + 1
    assert not prog.ok
    assert [d.message for d in prog.diags if d.code == "type"] == [
        f"the format string has {clauses} clause{'s' if clauses != 1 else ''} but the list has {given} "
        f"argument{'s' if given != 1 else ''}"]


@pytest.mark.parametrize(("fmt", "arg"), [("%d", '"a"'), ("%f", "true"), ("%o", '"a"'), ("%e", 'b"a"')])
def test_a_verb_refuses_literals_it_cannot_format(fmt: str, arg: str) -> None:
    prog = ENV.compile(f'"{fmt}".format([{arg}]) == ""')
    assert not prog.ok
    assert any(d.message.startswith(f"{fmt} cannot format") for d in prog.diags)


@pytest.mark.parametrize("clause", ["%q", "%", "%.x", "%5d"])
def test_unknown_clauses_are_compile_errors(clause: str) -> None:
    prog = ENV.compile(f'"a{clause}".format([1]) == ""')
    assert not prog.ok
    assert any("unknown clause" in d.message and "position 1" in d.message for d in prog.diags)


def test_reported_as_dra603() -> None:
    doc = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n  selectors:\n"
           "  - cel: {expression: '\"%d %d\".format([1]) == device.driver'}\n")
    result = lint_text(doc, select=["DRA6"], **{"kubernetes-version": "1.35"})
    assert [f.rule for f in result.findings] == ["DRA603"]
    assert "2 clauses but the list has 1 argument" in result.findings[0].message
