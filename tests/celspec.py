"""The CEL conformance suite (google/cel-spec ``tests/simple/testdata``) read and run against dralint.cel.

A small reader for the protobuf text format (enough for ``SimpleTestFile``: messages, repeated
fields, strings with C escapes and implicit concatenation, numbers, enum names, ``[type.url]``
Any payloads, ``#`` comments) so that no protobuf dependency is needed, and a runner that maps
each test onto dralint's parser, checker and evaluator:

- declared variables (``type_env`` idents of CEL's own types) become a scope of the checker and
  bound values (``bindings``) the activation;
- a test is *not applicable* when it needs something a DRA selector can never have: protobuf
  messages or enums, a container, declared functions, unknowns;
- the outcome is compared with ``value`` (type and value, NaN equal to NaN), ``eval_error`` (any
  error: at compile time or at run time — messages are not compared, the suite's are cel-go's)
  or ``typed_result``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import SHARED

TESTDATA = SHARED / "conformance" / "cel-spec" / "testdata"

Msg = dict[str, list[Any]]  # field name -> values (every field may repeat)


# -- protobuf text format -------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<ext>\[[A-Za-z0-9_./]+\])
  | (?P<num>[-+]?(?:0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)[fFuU]?)
  | (?P<ident>-?[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>[{}:<>,;\[\]])
""", re.VERBOSE)

_SIMPLE_ESC = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


def unescape(body: str) -> bytes:
    """The bytes of a text-format string literal's content (C escapes; the text itself is UTF-8)."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e in _SIMPLE_ESC:
            out.append(_SIMPLE_ESC[e])
            i += 2
        elif e in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1 : j], 8) & 0xFF)
            i = j
        elif e in "xX":
            j = i + 2
            while j < len(body) and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2 : j], 16))
            i = j
        elif e in "uU":
            n = 4 if e == "u" else 8
            out += chr(int(body[i + 2 : i + 2 + n], 16)).encode("utf-8", "surrogatepass")
            i += 2 + n
        else:
            raise ValueError(f"unknown escape \\{e}")
    return bytes(out)


class _Reader:
    def __init__(self, text: str) -> None:
        self.toks: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"text format: unexpected {text[pos:pos + 20]!r}")
            pos = m.end()
            kind = m.lastgroup or ""
            if kind != "ws":
                self.toks.append((kind, m.group()))
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "")

    def take(self) -> tuple[str, str]:
        t = self.peek()
        self.i += 1
        return t

    def message(self, end: str | None) -> Msg:
        msg: Msg = {}
        while True:
            kind, text = self.peek()
            if kind == "eof" or (kind == "punct" and text == end):
                self.i += 1
                return msg
            if kind == "punct" and text in ",;":
                self.i += 1
                continue
            self.i += 1
            name = text  # an identifier or an [extension / Any type URL]
            if self.peek() == ("punct", ":"):
                self.i += 1
            for v in self.value():
                msg.setdefault(name, []).append(v)

    def value(self) -> list[Any]:
        kind, text = self.take()
        if kind == "punct" and text in "{<":
            return [self.message("}" if text == "{" else ">")]
        if kind == "punct" and text == "[":  # a list of values: the field repeated
            out: list[Any] = []
            while self.peek() != ("punct", "]"):
                if self.peek() == ("punct", ","):
                    self.i += 1
                    continue
                out += self.value()
            self.i += 1
            return out
        if kind == "str":
            data = unescape(text[1:-1])
            while self.peek()[0] == "str":  # adjacent literals concatenate
                data += unescape(self.take()[1][1:-1])
            return [data]
        if kind == "num":
            t = text.rstrip("fFuU") if not text.lower().startswith(("0x", "-0x")) else text
            if re.fullmatch(r"[-+]?(0[xX][0-9a-fA-F]+|[0-9]+)", t):
                return [int(t, 0) if not re.fullmatch(r"[-+]?0[0-9]+", t) else int(t, 8)]
            return [float(t)]
        if kind == "ident":
            low = text.lower().lstrip("-")
            if low in ("inf", "infinity", "nan"):
                return [float(text)]
            return [Ident(text)]
        raise ValueError(f"text format: unexpected {text!r}")


class Ident(str):
    """An enum value or identifier in the text format (distinct from a string literal, which is bytes)."""


def parse_textproto(text: str) -> Msg:
    return _Reader(text).message(None)


def one(msg: Msg, name: str, default: Any = None) -> Any:
    got = msg.get(name)
    return got[-1] if got else default


def text_of(v: Any) -> str:
    return v.decode("utf-8", "surrogatepass") if isinstance(v, bytes) else str(v)


# -- the suite --------------------------------------------------------------------------------------

@dataclass
class SpecTest:
    file: str
    section: str
    name: str
    expr: str
    msg: Msg = field(repr=False)

    @property
    def id(self) -> str:
        return f"{self.file}/{self.section}/{self.name}"


def load_suite(root: Path = TESTDATA) -> list[SpecTest]:
    out: list[SpecTest] = []
    if not root.is_dir():
        return out
    for p in sorted(root.glob("*.textproto")):
        top = parse_textproto(p.read_text(encoding="utf-8"))
        for sec in top.get("section", []):
            for t in sec.get("test", []):
                out.append(SpecTest(p.stem, text_of(one(sec, "name", "")), text_of(one(t, "name", "")),
                                    text_of(one(t, "expr", "")), t))
    return out


# -- running one test ---------------------------------------------------------------------------------

_PRIMS = {"BOOL": "bool", "INT64": "int", "UINT64": "uint", "DOUBLE": "double", "STRING": "string", "BYTES": "bytes"}
_WELL_KNOWN = {"TIMESTAMP": "timestamp", "DURATION": "duration"}


class NotApplicable(Exception):
    """The test needs something a DRA selector environment never has."""


def cel_type(t: Msg) -> Any:
    from dralint.cel import types as ty

    if "primitive" in t:
        return ty.T(_PRIMS[str(one(t, "primitive"))])
    if "well_known" in t and str(one(t, "well_known")) in _WELL_KNOWN:
        return ty.T(_WELL_KNOWN[str(one(t, "well_known"))])
    if "list_type" in t:
        return ty.list_of(cel_type(one(one(t, "list_type"), "elem_type")))
    if "map_type" in t:
        mt = one(t, "map_type")
        return ty.map_of(cel_type(one(mt, "key_type")), cel_type(one(mt, "value_type")))
    if "dyn" in t:
        return ty.DYN
    if "null" in t:
        return ty.NULL
    if "type" in t:
        return ty.type_of(cel_type(one(t, "type")))
    raise NotApplicable(f"type {sorted(t)}")


def cel_value(v: Msg) -> Any:
    """A ``cel.expr.Value`` as the Python value dralint's runtime uses."""
    from dralint.cel.values import TypeValue, UInt

    if "int64_value" in v:
        return int(one(v, "int64_value"))
    if "uint64_value" in v:
        return UInt(int(one(v, "uint64_value")))
    if "double_value" in v:
        return float(one(v, "double_value"))
    if "string_value" in v:
        return text_of(one(v, "string_value"))
    if "bytes_value" in v:
        return bytes(one(v, "bytes_value"))
    if "bool_value" in v:
        return str(one(v, "bool_value")) == "true" or one(v, "bool_value") == 1
    if "null_value" in v:
        return None
    if "list_value" in v:
        return [cel_value(x) for x in one(v, "list_value").get("values", [])]
    if "map_value" in v:
        return {cel_value(one(e, "key")): cel_value(one(e, "value")) for e in one(v, "map_value").get("entries", [])}
    if "type_value" in v:
        return TypeValue(text_of(one(v, "type_value")))
    raise NotApplicable(f"value {sorted(v)}")


def same(a: Any, b: Any) -> bool:
    """Equal with the same CEL type (1 and 1u and 1.0 differ; NaN equals NaN; lists and maps deeply)."""
    from dralint.cel.runtime import type_name

    if type_name(a) != type_name(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        for k, x in a.items():
            match = [y for k2, y in b.items() if same(k, k2)]
            if not match or not same(x, match[0]):
                return False
        return True
    return bool(a == b)


@dataclass
class Outcome:
    status: str  # "pass", "fail" or "n/a"
    detail: str = ""
    #: where a failure happened: "parse", "check" (compile-time rejection), "eval", "value"
    stage: str = ""
    crash: bool = False  # a Python exception other than a CEL error came out of dralint


def _needs_messages(msg: Any) -> bool:
    if isinstance(msg, dict):
        return any(k in ("object_value", "enum_value", "message_type", "abstract_type", "function", "unknown",
                         "any_unknowns") or k.startswith("[") or _needs_messages(v) for k, v in msg.items())
    if isinstance(msg, list):
        return any(_needs_messages(x) for x in msg)
    return False


def run(test: SpecTest) -> Outcome:
    from dralint.cel.ast import StructLit, walk
    from dralint.cel.checker import Checker
    from dralint.cel.decls import libraries
    from dralint.cel.env import Environment
    from dralint.cel.interp import Activation, compile_program
    from dralint.cel.parser import CelSyntaxError, parse
    from dralint.cel.values import CelError, CelInternalError

    t = test.msg
    if "container" in t or _needs_messages({k: v for k, v in t.items() if k != "expr"}):
        return Outcome("n/a", "messages, enums, containers, declared functions or unknowns")
    if any("." in text_of(one(d, "name", "")) for d in t.get("type_env", [])):
        return Outcome("n/a", "qualified variable names (namespaces)")
    try:
        if any(isinstance(n, StructLit) for n in walk(parse(test.expr))):
            return Outcome("n/a", "builds a protobuf message")
    except CelSyntaxError:
        pass
    if str(one(t, "disable_macros", "")) == "true":
        return Outcome("n/a", "macros disabled")
    try:
        scope = {text_of(one(d, "name")): (cel_type(one(one(d, "ident"), "type")), None)
                 for d in t.get("type_env", []) if "ident" in d}
        bindings = {text_of(one(b, "key")): cel_value(one(one(b, "value"), "value")) for b in t.get("bindings", [])}
        want = one(t, "value")
        expected: Any = cel_value(want) if want is not None else None
    except NotApplicable as e:
        return Outcome("n/a", str(e))
    expect_error = "eval_error" in t or "any_eval_errors" in t
    typed = one(t, "typed_result")
    if typed is not None:
        try:
            expected = cel_value(one(typed, "result")) if "result" in typed else None
        except NotApplicable as e:
            return Outcome("n/a", str(e))
    env = Environment.for_target("1.37", {})
    try:
        try:
            root = parse(test.expr)
        except CelSyntaxError as e:
            return Outcome("fail", f"does not parse: {e.message}", "parse")
        if str(one(t, "disable_check", "")) != "true":
            checker = Checker(test.expr, frozenset(libraries()), env.device, env.lib_note)
            checker.scopes.append(scope)
            checker.check(root)
            if checker.diags:
                if expect_error:  # an error is expected and the checker finds it first: as in cel-go
                    return Outcome("pass", f"rejected at compile time: {checker.diags[0].message}")
                return Outcome("fail", f"does not type-check: {checker.diags[0].message}", "check")
            if str(one(t, "check_only", "")) == "true":
                return Outcome("pass")
            literal = env._literal_checks(root)
            bad = [d for d in literal if d.code == "type"]
            if bad:
                return Outcome("pass" if expect_error else "fail", f"rejected at compile time: {bad[0].message}",
                               "" if expect_error else "check")
        fn = compile_program(root)
        try:
            got = fn(Activation(dict(bindings), 10**9))
        except CelInternalError as e:
            return Outcome("fail", str(e), "eval", crash=True)
        except CelError as e:
            if expect_error:
                return Outcome("pass")
            return Outcome("fail", f"evaluation error: {e}", "eval")
    except RecursionError:
        return Outcome("fail", "recursion", "eval", crash=True)
    except Exception as e:  # dralint raised a Python exception: the worst kind of failure
        return Outcome("fail", f"{type(e).__name__}: {e}", "eval", crash=True)
    if expect_error:
        return Outcome("fail", f"expected an error, got {got!r}", "value")
    if want is None and typed is None:
        return Outcome("pass")  # a test that only asks for success (no value given)
    if typed is not None and "result" not in typed:
        return Outcome("pass")
    if not same(got, expected):
        return Outcome("fail", f"got {got!r}, want {expected!r}", "value")
    return Outcome("pass")
