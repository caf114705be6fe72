"""The text scans that decide whether the splicer and `derive` may trust located data without a parse."""

from __future__ import annotations

import pytest

from dralint.fix.derive import _depends_on_more
from dralint.fix.splice import _unordered


@pytest.mark.parametrize(("text", "expected"), [
    ("a: 1\nb: [1, 2]\nc: {d: 1}\n", False),
    ("[a, b]: 1\n", True),
    ("{a: 1}: x\n", True),
    ("k:\n  [a, b] \t: 1\n", True),
    ("k: {a: 1}:\n", True),  # a key at the end of the line
    ("k: [a]:x\n", False),  # `:` without a space after it is part of a plain scalar
    ("k: [a]", False),
    ("a: 1\n<<: *base\n", True),
    ("? a\n: 1\n", True),
    ("k: [a, ? b]\n", True),
    ("k: what?\n", False),
])
def test_unordered(text: str, expected: bool) -> None:
    assert _unordered(text) is expected


def test_unordered_looks_only_between_start_and_end() -> None:
    text = "a: [x]: 1\nb: 2\n"
    assert _unordered(text, 0, 9) and not _unordered(text, 10)


@pytest.mark.parametrize(("text", "expected"), [
    ("a: 1\n", False),
    ("%YAML 1.1\n---\na: 1\n", True),
    ("a: 1\n---\n%TAG ! tag:x,2000:\n---\nb: 2\n", True),
    ("a: 50%\nb: '%x'\n", False),  # a `%` that does not start a line is data
    ("a: \"{{ .Values.x }}\"\n", True),
    ("# Source: chart/templates/x.yaml\na: 1\n", True),
])
def test_depends_on_more(text: str, expected: bool) -> None:
    assert _depends_on_more(text) is expected
