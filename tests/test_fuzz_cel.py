"""Fuzzing the CEL selector pipeline: no selector text makes parse, check, cost or evaluation raise.

Two generators (hypothesis):

- *random*: expressions built from CEL's grammar (literals at their edges — int64/uint64 bounds,
  NaN, huge doubles, escapes, bytes —, the ``device`` variable, every declared function and macro,
  operators, optionals, comprehensions), so that most inputs compile and then run;
- *mutated*: real selectors (this repository's examples, the API-server verdict bank and the CEL
  conformance suite when ``../shared`` is there) with characters inserted, deleted, replaced, and
  pieces of other selectors spliced in: mostly inputs that do not parse, or parse oddly.

Property, for every input, in several target environments: ``Environment.compile`` and
``check_refined`` never raise and never report an ``internal`` diagnostic (dralint's own failure,
turned into a finding so a lint run survives it), and evaluating a compiled selector on a few
devices raises nothing but a plain ``CelError`` (``CelInternalError`` is a dralint bug). One input
in four also goes through the whole linter inside a DeviceClass and a ResourceClaim
(``tests.test_fuzz.check``). CI runs a few seconds; ``python bench/fuzz.py --only cel-random`` (or
``cel-mutated``) runs the same property for as long as asked.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from dralint.cel import Environment
from dralint.cel.decls import DECLS, MACRO_LIBS
from dralint.cel.runtime import Device, DomainMap
from dralint.cel.values import CelError, CelInternalError, Quantity, Semver
from tests import test_fuzz
from tests.conftest import SHARED

SETTINGS = test_fuzz.SETTINGS


@pytest.fixture(scope="module", autouse=True)
def _forget_the_programs() -> Iterator[None]:
    """Thousands of random programs stay in the environments' caches: drop them with the module,
    since later tests measure the peak memory of child processes, which starts from this process's."""
    yield
    for minor, gates in ENVS:
        Environment.for_target(minor, gates)._cache.clear()
    gc.collect()

ENVS = [("1.31", {}), ("1.34", {}), ("1.35", {}), ("1.37", {"DRAListTypeAttributes": True})]

# -- random expressions ---------------------------------------------------------------------------

_INT_EDGES = ["0", "1", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
              "0x7fffffffffffffff", "0x8000000000000000", "-0x8000000000000000"]
_UINT_EDGES = ["0u", "1u", "18446744073709551615u", "18446744073709551616u", "0xffffffffffffffffu"]
_DOUBLE_EDGES = ["0.0", "-0.0", "1.5", "1e308", "-1e308", "1e309", "9.2233720368547758e18",
                 "-9.2233720368547758e18", "1.8446744073709552e19", "double('NaN')", "double('inf')",
                 "double('-inf')", "4.9e-324", ".5", "1e-7"]
_STRINGS = ['""', '"a"', "'gpu.nvidia.com'", '"A100"', r'"\u00e9\U0001F600"', r'"\x41\101\n\t\\"', '"%s %d %b"',
            '"%.3f %e %x %X %o"', '"2023-01-01T00:00:00Z"', '"0000-01-01T00:00:00Z"', '"9999-12-31T23:59:59Z"',
            '"1h2m3.5s"', '"-315576000001s"', '"10.0.0.0/8"', '"fe80::1%eth0"', '"::ffff:1.2.3.4"', '"1Gi"',
            '"1.2.3"', '"v1.2.3-rc.1"', '"(a+)+$"', '"[a-z"', '"\\\\d"', '"https://u:p@h:80/p?q=1#f"',
            'r"\\d+"', '"""tri"""', "'''x'''", '"1e3"', '"-0"', '"true"', '"NaN"', '"inf"', '"%"']
_BYTES = ['b""', 'b"abc"', r'b"\xff\x00"', "b'\\377'"]
_LEAVES = [*_INT_EDGES, *_UINT_EDGES, *_DOUBLE_EDGES, *_STRINGS, *_BYTES, "true", "false", "null", "[]", "{}",
           "device.driver", 'device.attributes["gpu.nvidia.com"].productName',
           'device.attributes["gpu.nvidia.com"].index', 'device.attributes["gpu.nvidia.com"].driverVersion',
           'device.attributes["gpu.nvidia.com"]', 'device.capacity["gpu.nvidia.com"].memory', "device.attributes",
           "device.capacity", "device.allowMultipleAllocations", "device", "x", "int", "uint", "string", "type",
           "null_type", "dyn", "list", "map", "bool", "bytes", "double", "google.protobuf.Timestamp",
           'quantity("80Gi")', 'semver("1.2.3")', 'timestamp("2024-01-01T00:00:00Z")', 'duration("1h")',
           'ip("10.0.0.1")', 'cidr("10.0.0.0/8")', 'url("https://x/")', "optional.none()", "format.dns1123Label()",
           '"a,b".split(",")', "[1, 2, 3]", '["a", "b"]', '{"a": 1}', "[1, 'a', 2.0]", "{1: 'a', 'b': 2u}"]
_BINARY = ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "in"]
_FUNCS = sorted(n for n in DECLS if n[0].isalpha())
_MEMBER_FUNCS = sorted({n for n, ovs in DECLS.items() if any(o.member for o in ovs)})
_GLOBAL_FUNCS = sorted({n for n, ovs in DECLS.items() if n[0].isalpha() and any(not o.member for o in ovs)})
_MACROS = sorted(MACRO_LIBS)


@st.composite
def _node(draw: st.DrawFn, depth: int = 0) -> str:
    if depth > 4 or draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(st.sampled_from(_LEAVES), st.integers(-(2**64), 2**64).map(str),
                              st.floats().map(lambda f: repr(f) if f == f and abs(f) != float("inf") else "0.5"),
                              st.text(max_size=6).map(json.dumps)))
    sub = _node(depth + 1)
    op = draw(st.integers(0, 11))
    if op <= 2:
        return f"{draw(sub)} {draw(st.sampled_from(_BINARY))} {draw(sub)}"
    if op == 3:
        return f"{draw(st.sampled_from(['!', '-', '--', '!!']))}{draw(sub)}"
    if op == 4:
        return f"{draw(sub)} ? {draw(sub)} : {draw(sub)}"
    if op == 5:
        args = ", ".join(draw(st.lists(sub, max_size=3)))
        return f"{draw(st.sampled_from(_GLOBAL_FUNCS))}({args})"
    if op == 6:
        args = ", ".join(draw(st.lists(sub, max_size=3)))
        return f"({draw(sub)}).{draw(st.sampled_from(_MEMBER_FUNCS))}({args})"
    if op == 7:
        macro = draw(st.sampled_from(_MACROS))
        if macro == "has":
            return f"has({draw(sub)}.{draw(st.sampled_from(['productName', 'x', 'memory', 'driver']))})"
        if macro == "bind":
            return f"cel.bind(v, {draw(sub)}, {draw(sub)})"
        two = macro.endswith("2") or macro.startswith("transform")
        name = macro.rstrip("2") if macro.endswith("2") else macro
        var = "i, v" if two else "v"
        body = draw(st.sampled_from(["v", "v > 0", "v == 'a'", "size(v) > 1", "i < 2", "true", "v + v"]))
        extra = f", {body}" if macro in ("map_filter", "transformList", "transformMap") else ""
        name = "map" if name == "map_filter" else name
        return f"({draw(sub)}).{name}({var}, {body}{extra})"
    if op == 8:
        return f"[{', '.join(draw(st.lists(sub, max_size=3)))}]"
    if op == 9:
        pairs = draw(st.lists(st.tuples(sub, sub), max_size=2))
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if op == 10:
        sel = draw(st.sampled_from([".productName", ".?productName", "[0]", "[?0]", '["a"]', '[?"a"]', ".x",
                                    "[-1]", "[1u]", "[1.0]"]))
        return f"({draw(sub)}){sel}"
    return f"({draw(sub)})"


random_selector = _node()

# -- mutated real selectors ---------------------------------------------------------------------------

_OWN = [*test_fuzz.CEL,
        'device.attributes["gpu.nvidia.com"].productName.split(" ").map(c, c + c).size() > 0',
        '"a,b".split(",").join("-") == "a-b"', "type(device.driver) == string",
        "timestamp('0000-01-01T00:00:00Z') < timestamp('2000-01-01T00:00:00Z')",
        '"%s-%d".format(["a", 1]) == "a-1"', 'cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))',
        'device.attributes["gpu.nvidia.com"].?productName.orValue("") != ""',
        "[1, 2, 3].exists_one(x, x == 2) && {'a': 1}.all(k, k == 'a')",
        'duration("1h").getMinutes() == 60 && timestamp("2024-02-29T12:00:00+01:00").getHours("+02:00") == 13',
        "9223372036854775807 + 1 > 0", "-9223372036854775808 / -1 == 0", "18446744073709551615u + 1u > 0u",
        'url("https://example.com:8080/p").getPort() == "8080"', 'semver("1.2.3", true).major() == 1']


@cache
def seed_selectors() -> tuple[str, ...]:
    """Selectors to mutate: our own, the verdict bank's and the conformance suite's (when present)."""
    out = list(_OWN)
    bank = SHARED / "conformance" / "apiserver-1.35" / "cel.jsonl"
    if bank.is_file():
        for line in bank.read_text().splitlines():
            expr = json.loads(line).get("expr") if line.strip() else None
            if isinstance(expr, str):
                out.append(expr)
    try:
        from tests.celspec import load_suite
    except ImportError:  # pragma: no cover - the reader ships beside this file
        return tuple(out)
    out += [t.expr for t in load_suite() if t.expr]
    return tuple(out)


_PIECES = ["(", ")", "[", "]", "{", "}", ".", "?", ":", ",", "'", '"', "\\", "\\u", "\\x", "r'", "b'", "'''", "!",
           "-", "&&", "||", "==", " in ", ".?", "[?", "has(", ".all(x, ", "0x", "u", "e", "1e999", "9" * 25,
           "\x00", "é", "\ud800", " ", "\n", "//", "/*", "`", "device", ".map(c, c + c)", ".size()", "format(",
           "%", "timestamp(", "duration(", "dyn(", "type(", "int(", "uint(", "double(", "string(", "optional."]


@st.composite
def mutated_selector(draw: st.DrawFn) -> str:
    seeds = seed_selectors()
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 5))):
        op = draw(st.integers(0, 4))
        pos = draw(st.integers(0, len(text)))
        if op == 0:
            text = text[:pos] + draw(st.sampled_from(_PIECES)) + text[pos:]
        elif op == 1:
            text = text[:pos] + text[pos + draw(st.integers(1, 8)):]
        elif op == 2 and text:
            text = text[:pos] + draw(st.characters()) + text[pos + 1:]
        elif op == 3:  # splice a piece of another selector
            other = draw(st.sampled_from(seeds))
            a = draw(st.integers(0, len(other)))
            text = text[:pos] + other[a : a + draw(st.integers(1, 30))] + text[pos:]
        else:
            text = text[:pos]
    return text


# -- the property ---------------------------------------------------------------------------------

def _devices() -> list[Device]:
    gpu = {"productName": "NVIDIA A100-SXM4-80GB", "type": "gpu", "index": 3, "uuid": "GPU-1",
           "driverVersion": Semver.parse("580.126.20"), "cudaComputeCapability": Semver.parse("8.0.0"),
           "addressing": True, "models": ["m1", "m2"]}
    return [Device(driver="gpu.nvidia.com", allowMultipleAllocations=False,
                   attributes=DomainMap({"gpu.nvidia.com": gpu, "resource.kubernetes.io": {"pcieRoot": "pci0"}}),
                   capacity=DomainMap({"gpu.nvidia.com": {"memory": Quantity.parse("80Gi")}})),
            Device(driver="", allowMultipleAllocations=True, attributes=DomainMap({}), capacity=DomainMap({}))]


DEVICES = _devices()


def _attr_types(domain: str, name: str) -> Any:
    from dralint.cel import types as ty

    return {"productName": ty.STRING, "index": ty.INT, "driverVersion": ty.SEMVER}.get(name)


def check_cel(text: str, lint: bool | None = None) -> None:
    """Everything that must hold for any selector text; raises AssertionError with the reason."""
    for minor, gates in ENVS:
        env = Environment.for_target(minor, gates)
        prog = env.compile(text)
        refined = env.check_refined(prog, _attr_types)
        for d in [*prog.diags, *refined]:
            # the first line names the phase, exception and place: bench/fuzz.py groups failures by it
            assert d.code != "internal", f"{_where(d.message)}\non {minor}: {text!r}\n{d.message}"
        if prog.ok:
            for dev in DEVICES:
                try:
                    prog.evaluate(dev, cost_limit=200_000)
                except CelInternalError as e:
                    raise AssertionError(f"{_where(str(e))}\non {minor}: {text!r}\n{e}") from e.cause
                except CelError:
                    pass
    if lint if lint is not None else hash(text) % 4 == 0:
        test_fuzz.check(_as_manifest(text), fix=False)


def _where(message: str) -> str:
    m = re.search(r"CEL ([a-z ]+) failed on it \((\w+)( at [\w.]+:\d+)?", message)
    return f"CEL {m.group(1)}: {m.group(2)}{m.group(3) or ''}" if m else message.splitlines()[0]


def _as_manifest(text: str) -> bytes:
    sel = [{"cel": {"expression": text}}]
    docs = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"},
             "spec": {"selectors": sel}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "r", "namespace": "d"},
             "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                                          "selectors": sel}}]}}}]
    return yaml.safe_dump_all(docs, allow_unicode=True).encode("utf-8", "surrogatepass")


@SETTINGS
@given(random_selector)
def test_random_selectors(text: str) -> None:
    check_cel(text)


@SETTINGS
@given(mutated_selector())
def test_mutated_selectors(text: str) -> None:
    check_cel(text)


#: selectors that once crashed dralint's CEL code (each a Python exception out of compile or evaluate)
FIXED: list[str] = [
    "timestamp('0000-01-01T00:00:00Z') < timestamp('2000-01-01T00:00:00Z')",  # ValueError out of datetime
    '¹evice.driver == "gpu.nvidia.com"',  # str.isdigit() took a superscript digit for a number
    'duration("") == duration("1s")',  # IndexError on an empty duration
    'b"\ud800" == b""',  # UnicodeEncodeError: a lone surrogate in a bytes literal
]


def test_fixed_selector_crashes_stay_fixed() -> None:
    for text in FIXED:
        check_cel(text, lint=True)


def test_an_internal_failure_is_a_finding_not_a_crash(monkeypatch: Any) -> None:
    """Whatever breaks inside the CEL code, compile returns a program with an `internal` diagnostic
    and the linter reports it as a DRA603 warning instead of an internal error of the run."""
    from dralint.cel import env as env_mod
    from tests.conftest import lint_text

    def broken(*a: Any, **k: Any) -> int:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(env_mod, "estimate", broken)
    env = Environment.for_target("1.33", {"DRAAdminAccess": True})  # an environment no other test caches into
    text = 'device.driver == "boom.example.com"'
    env._cache.pop(text, None)
    prog = env.compile(text)
    assert [d.code for d in prog.diags] == ["internal"] and not prog.ok
    assert "cost estimator" in prog.diags[0].message and "ZeroDivisionError" in prog.diags[0].message
    doc = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n  selectors:\n"
           "  - cel: {expression: 'device.driver == \"boom2.example.com\"'}\n")
    target = {"kubernetes-version": "1.33", "feature-gates": {"DRAAdminAccess": True}}
    result = lint_text(doc, select=["DRA6"], **target)
    assert result.internal_errors == []
    assert [(f.rule, f.severity.name) for f in result.findings] == [("DRA603", "WARNING")]
    assert "this is a bug in dralint" in result.findings[0].message
