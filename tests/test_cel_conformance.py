"""dralint.cel against the official CEL conformance suite (``../shared/conformance/cel-spec/testdata``).

Every test of every file runs (see ``tests/celspec.py`` for the reader and how a test maps onto
dralint's parser, checker and evaluator). A test that needs what a DRA selector can never have
(protobuf messages, enums, containers, declared functions, unknowns) is not applicable. Every
other test must pass, unless an entry of ``EXPECTED_FAILURES`` says why it does not: Kubernetes
being stricter than plain CEL (its environment is what the API server compiles selectors with),
or a known dralint bug. Entries are strict: an entry that matches no failing test fails the suite,
so a fix or a suite update shows up as a stale entry to remove.
"""

from __future__ import annotations

import fnmatch
import gc
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import pytest

from tests.celspec import TESTDATA, Outcome, SpecTest, load_suite, parse_textproto, run, unescape

pytestmark = pytest.mark.skipif(not TESTDATA.is_dir(), reason=f"CEL conformance suite not found at {TESTDATA}")

STRICTER = "kubernetes-stricter"
BUG = "known-bug"


@dataclass(frozen=True)
class Expected:
    """Tests (an fnmatch pattern over ``file/section/test``, optionally narrowed by a piece of the
    failure's text) that fail for a stated reason."""

    pattern: str
    reason: str  # STRICTER or BUG
    why: str
    detail: str = ""

    def covers(self, test: SpecTest, outcome: Outcome) -> bool:
        return fnmatch.fnmatchcase(test.id, self.pattern) and self.detail in outcome.detail


EXPECTED_FAILURES: list[Expected] = [
    Expected("*", STRICTER, "Kubernetes compiles selectors with cel.HomogeneousAggregateLiterals: a list or map "
             "literal whose elements (or keys, or values) have different types is a compile error, e.g. "
             "`[1, 'a']`, `{'k': 1, 2: 'v'}`", "list and map literals must hold one type"),
    Expected("math_ext/*", STRICTER, "the cel-go math extension (math.greatest, math.abs, math.bitAnd, ...) is not "
             "part of the Kubernetes CEL environment"),
    Expected("block_ext/*", STRICTER, "cel.block / cel.index / cel.iterVar (the cel-go optimizer's common "
             "subexpression encoding) are not part of the Kubernetes CEL environment"),
    Expected("encoders_ext/*", STRICTER, "the cel-go encoders extension (base64.encode/decode) is not part of the "
             "Kubernetes CEL environment"),
    Expected("string_ext/reverse/*", STRICTER, "Kubernetes pins the cel-go strings extension at version 2; "
             "`reverse()` came with version 3"),
    Expected("network_ext/ipv4/ipv4_*equals_ipv6", STRICTER, "the Kubernetes ip() refuses IPv4-mapped IPv6 "
             "addresses (`::ffff:c0a8:1`), which the cel-go network extension accepts", "IPv4-mapped"),
]

#: the files whose tests exercise what DRA selectors can use (standard library, strings, lists,
#: optionals, bindings, macros, time, IP/CIDR); the others are about protobuf messages, enums,
#: namespaces, unknowns, or libraries Kubernetes does not have
SELECTOR_FILES = frozenset({
    "basic", "bindings_ext", "comparisons", "conversions", "fp_math", "integer_math", "lists", "logic", "macros",
    "macros2", "network_ext", "optionals", "parse", "plumbing", "string", "string_ext", "timestamps",
    "type_deduction",
})


@pytest.fixture(scope="module", autouse=True)
def _free_the_results() -> Iterator[None]:
    """The results hold every parsed test (~35 MB): let them go with the module, since tests that
    run later measure the peak memory of child processes, which starts from this process's size."""
    yield
    results.cache_clear()
    gc.collect()


@cache
def results() -> list[tuple[SpecTest, Outcome, Expected | None]]:
    out = []
    for t in load_suite():
        o = run(t)
        exp = next((e for e in EXPECTED_FAILURES if e.covers(t, o)), None) if o.status == "fail" else None
        out.append((t, o, exp))
    return out


def figures() -> dict[str, object]:
    """Pass rates, for the report (``python -m tests.test_cel_conformance``)."""
    rs = results()
    def rate(rows: list[tuple[SpecTest, Outcome, Expected | None]]) -> str:
        ran = [r for r in rows if r[1].status != "n/a"]
        passed = sum(r[1].status == "pass" for r in ran)
        excused = sum(r[2] is not None for r in ran)
        return (f"{passed}/{len(ran)} = {100 * passed / max(len(ran), 1):.1f} % pass; "
                f"{passed}/{len(ran) - excused} = {100 * passed / max(len(ran) - excused, 1):.1f} % without the "
                f"expected failures")
    sel = [r for r in rs if r[0].file in SELECTOR_FILES]
    return {
        "tests": len(rs), "not applicable": sum(r[1].status == "n/a" for r in rs),
        "all files": rate(rs), "selector files": rate(sel),
        "expected failures by reason": dict(Counter(r[2].reason for r in rs if r[2] is not None)),
        "expected-failure entries by reason": dict(Counter(e.reason for e in EXPECTED_FAILURES)),
        "crashes": sum(r[1].crash for r in rs),
    }


def test_the_suite_is_read_whole() -> None:
    """The reader finds every test: as many as the files have `test {` blocks, each with its expression."""
    files = sorted(TESTDATA.glob("*.textproto"))
    blocks = sum(len(re.findall(r"(?m)^\s*test\s*:?\s*\{", p.read_text())) for p in files)
    tests = load_suite()
    assert len(tests) == blocks
    assert all(t.expr or t.name for t in tests)
    assert len({t.file for t in tests}) == sum(1 for p in files if re.search(r"(?m)^\s*test\s*:?\s*\{", p.read_text()))


def test_text_format_reader() -> None:
    msg = parse_textproto('a: 1 b { c: "x" \'y\' d: [1, 2] } b { e: -inf } # comment\n f: ENUM g: "\\303\\251\\n"')
    assert msg["a"] == [1]
    assert msg["b"][0]["c"] == [b"xy"] and msg["b"][0]["d"] == [1, 2]
    assert msg["b"][1]["e"][0] == float("-inf")
    assert msg["f"] == ["ENUM"] and msg["g"] == ["é\n".encode()]
    assert unescape(r"\x41\101\u00e9") == "AAé".encode()


def test_no_test_crashes_dralint() -> None:
    crashes = [(t.id, o.detail) for t, o, _ in results() if o.crash]
    assert crashes == []


def test_every_applicable_test_passes_or_is_an_expected_failure() -> None:
    unexpected = [(t.id, t.expr, o.detail) for t, o, e in results() if o.status == "fail" and e is None]
    assert unexpected == [], "\n".join(map(str, unexpected[:40]))


def test_every_expected_failure_entry_is_still_needed() -> None:
    used = {id(e) for _, _, e in results() if e is not None}
    stale = [e.pattern for e in EXPECTED_FAILURES if id(e) not in used]
    assert stale == []


def test_every_entry_says_why() -> None:
    for e in EXPECTED_FAILURES:
        assert e.reason in (STRICTER, BUG) and len(e.why) > 30


def test_selector_files_pass() -> None:
    """On the files that matter for selectors, everything applicable passes but for Kubernetes' strictness."""
    rows = [(t, o, e) for t, o, e in results() if t.file in SELECTOR_FILES and o.status != "n/a"]
    assert len(rows) > 1000
    assert all(o.status == "pass" or (e is not None and e.reason == STRICTER) for _, o, e in rows)


if __name__ == "__main__":  # pragma: no cover - prints the figures
    for k, v in figures().items():
        print(f"{k}: {v}")
