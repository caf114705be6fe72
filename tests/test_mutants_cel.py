"""Tests written to kill mutants of `dralint/cel/` that survived `bench/mutation.py --package cel`.

Expected values are worked out by hand from the CEL specification; the mutants are listed in
bench/mutation-results.md.
"""

from __future__ import annotations

import pytest

from dralint.cel import CelError, Environment
from dralint.cel.runtime import Device, DomainMap


def _device() -> Device:
    return Device(driver="x.example.com", attributes=DomainMap({}), capacity=DomainMap({}),
                  allowMultipleAllocations=False)


def _diags(expr: str, minor: str = "1.37") -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in Environment.for_target(minor, {}).compile(expr).diags]


def test_transform_map_entry_must_build_a_map_entry() -> None:
    assert _diags("[1, 2].transformMapEntry(i, v, v) == {}") == [
        ("type", "transformMapEntry() must return a map entry, not 'int'")]
    ok = Environment.for_target("1.37", {}).compile("[1, 2].transformMapEntry(i, v, {v: i}) == {1: 0, 2: 1}")
    assert ok.diags == [] and ok.evaluate(_device()) is True


@pytest.mark.parametrize(("expr", "want"), [
    ('int(timestamp("1970-01-02T00:00:00Z"))', 86400),  # one day after the epoch
    ('int(timestamp("1970-01-01T00:00:00Z"))', 0),
    ('int(timestamp("1971-01-01T00:00:00Z"))', 365 * 86400),  # 1970 is not a leap year
])
def test_timestamps_count_seconds_from_the_unix_epoch(expr: str, want: int) -> None:
    prog = Environment.for_target("1.37", {}).compile(f"{expr} == {want}")
    assert prog.diags == [] and prog.evaluate(_device()) is True


def _cost(expr: str) -> int:
    prog = Environment.for_target("1.37", {}).compile(expr)
    assert prog.diags == [] and prog.cost is not None, expr
    return prog.cost


def test_a_map_literal_costs_what_its_entries_cost() -> None:
    # replacing a constant value (free) by an expression adds exactly that expression's cost
    inner = 'device.driver.matches("y")'
    assert _cost(f'{{"k": {inner}}} == {{}}') - _cost('{"k": "v"} == {}') == _cost(inner)


def test_contains_costs_more_than_a_prefix_test() -> None:
    # cel-go: contains() scans the receiver for the substring; startsWith() reads the prefix's length only
    assert _cost('device.driver.contains("abc")') > _cost('device.driver.startsWith("abc")')


@pytest.mark.parametrize("expr", [
    "[3, 1, 2].sortBy(x, -x) == [3, 2, 1]",  # sorted by the key, not by the items
    '["bb", "a", "ccc"].sortBy(s, s.size()) == ["a", "bb", "ccc"]',
])
def test_sort_by_orders_by_the_key_expression(expr: str) -> None:
    prog = Environment.for_target("1.37", {}).compile(expr)
    assert prog.diags == [] and prog.evaluate(_device()) is True


def test_an_octal_escape_needs_three_octal_digits() -> None:
    assert _diags(r'"\019" == "x"') == [("syntax", "invalid escape sequence `\\0`")]  # 9 is not octal
    prog = Environment.for_target("1.37", {}).compile(r'"\101" == "A"')  # octal 101 = 65 = "A"
    assert prog.diags == [] and prog.evaluate(_device()) is True


def test_an_unclosed_method_call_says_what_is_missing() -> None:
    assert _diags('device.driver.startsWith("a"') == [
        ("syntax", "expected `)` to close the argument list, found the end of the expression")]
    assert _diags('device.driver.startsWith("a" "b")') == [
        ("syntax", 'expected `)` to close the argument list, found `"b"`')]


def test_modulus_needs_both_sides_of_one_integer_type() -> None:
    env = Environment.for_target("1.37", {})
    assert env.compile("5u % 2u == 1u").evaluate(_device()) is True
    assert env.compile("-5 % 3 == -2").evaluate(_device()) is True  # the sign of the dividend, as in Go
    with pytest.raises(CelError, match=r"no such overload: _%_\(uint, int\)"):
        env.compile("dyn(5u) % 2 == 1").evaluate(_device())


def test_int_of_a_double_truncates_inside_the_int64_range_and_overflows_outside() -> None:
    env = Environment.for_target("1.37", {})
    assert env.compile("int(2.9) == 2 && int(-2.9) == -2").evaluate(_device()) is True
    for expr in ("int(1e19) == 0", "int(-9.223372036854775808e18) == 0"):  # -2^63 is refused too, as in cel-go
        with pytest.raises(CelError, match="integer overflow"):
            env.compile(expr).evaluate(_device())
