"""The checker's declarations (``dralint/cel/decls.py``) and the runtime (``dralint/cel/runtime.py``,
``interp.py``) describe the same functions.

- every declared overload runs: a call with arguments of exactly the declared types, type-checked
  and evaluated, ends in a value or an ordinary CEL error, never in "no such overload" or an
  unknown function (``string(timestamp)`` once type-checked and had no implementation);
- every runtime function is declared, and the runtime accepts no argument types the checker does
  not declare (with ``dyn`` arguments the checker lets such a call through, and the API server's
  runtime would refuse it).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from dralint.cel import types as ty
from dralint.cel.checker import Checker
from dralint.cel.decls import DECLS, MACRO_LIBS, Overload, libraries
from dralint.cel.env import Environment
from dralint.cel.interp import Activation, compile_program
from dralint.cel.parser import parse
from dralint.cel.runtime import FUNCS
from dralint.cel.values import CelError

#: an expression of each concrete type (element types of lists and maps: int and string)
SAMPLES: dict[str, str] = {
    "bool": "true", "int": "2", "uint": "2u", "double": "2.5", "string": "'a'", "bytes": "b'a'", "null": "null",
    "timestamp": "timestamp('2024-01-01T00:00:00Z')", "duration": "duration('90s')",
    "kubernetes.Quantity": "quantity('2Gi')", "kubernetes.Semver": "semver('1.2.3')",
    "kubernetes.URL": "url('https://example.com:8080/p?q=1')", "net.IP": "ip('10.0.0.1')",
    "net.CIDR": "cidr('10.0.0.0/8')", "kubernetes.NamedFormat": "format.dns1123Label()",
}


def sample(t: ty.T) -> str | None:
    """Source text of a value of type `t` (type parameters and dyn: an int), None if there is none."""
    if t.kind in ("param", "dyn", "any"):
        return "2"
    if t.kind == "opaque" and t.name == "optional_type":
        inner = sample(t.params[0])
        return f"optional.of({inner})" if inner else None
    if t.kind == "opaque":
        return SAMPLES.get(t.name)
    if t.kind == "list":
        inner = sample(t.params[0])
        if t.params[0].kind == "list":  # flatten(list(list(A)))
            return f"[{inner}]" if inner else None
        return f"[{inner}, {inner}]" if inner else None
    if t.kind == "map":
        k, v = sample(t.params[0]), sample(t.params[1])
        return f"{{{k}: {v}}}" if k and v else None
    if t.kind == "type":
        return "type(1)"
    return SAMPLES.get(t.kind)


#: argument values for overloads where any value of the type is not enough (a valid index, a real
#: time-zone name, a list of strings for join, a format string matching its arguments, ...)
SPECIAL: dict[str, list[str]] = {
    "string_char_at_int": ["'abc'", "1"],
    "string_index_of_string_int": ["'abc'", "'b'", "1"],
    "string_last_index_of_string_int": ["'abc'", "'b'", "1"],
    "string_substring_int": ["'abc'", "1"],
    "string_substring_int_int": ["'abc'", "1", "2"],
    "string_format": ["'%d'", "[2]"],
    "list_slice": ["[1, 2, 3]", "0", "2"],
    "list_flatten_int": ["[[1], [2]]", "1"],
    "string_find_all_n": ["'aa'", "'a'", "1"],
    "string_replace_string_string_int": ["'aa'", "'a'", "'b'", "1"],
    "string_split_string_int": ["'a,b'", "','", "1"],
    "list_sets_contains_list": ["[1]", "[1]"],
    "quantity_divide_int_round": ["quantity('2Gi')", "2", "0"],
    "duration_to_duration": ["duration('1s')"],
    "string_to_duration": ["'1s'"],
    "string_to_timestamp": ["'2024-01-01T00:00:00Z'"],
    "string_to_int": ["'2'"], "string_to_uint": ["'2'"], "string_to_double": ["'2.5'"], "string_to_bool": ["'true'"],
    "string_to_quantity": ["'2Gi'"], "string_to_semver": ["'1.2.3'"], "string_bool_to_semver": ["'v1.2'", "true"],
    "string_to_ip": ["'10.0.0.1'"], "string_to_cidr": ["'10.0.0.0/8'"], "string_to_url": ["'https://x/'"],
    "format_named": ["'dns1123Label'"],
    "cidr_contains_ip_string": ["cidr('10.0.0.0/8')", "'10.0.0.1'"],
    "cidr_contains_cidr_string": ["cidr('10.0.0.0/8')", "'10.1.0.0/16'"],
    "list_join": ["['a', 'b']"], "list_join_string": ["['a', 'b']", "'-'"],
    "list_int_sum": ["[1, 2]"], "list_uint_sum": ["[1u, 2u]"], "list_double_sum": ["[1.5]"],
    "list_duration_sum": ["[duration('1s')]"],
    "optional_or_optional": ["optional.of(1)", "optional.none()"],
    "divide_int": ["4", "2"], "divide_uint": ["4u", "2u"], "modulo_int": ["4", "3"], "modulo_uint": ["4u", "3u"],
}
for _fn in ("getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours",
            "getMinutes", "getSeconds", "getMilliseconds"):
    SPECIAL[f"timestamp_{_fn}_tz"] = [SAMPLES["timestamp"], "'Europe/Paris'"]


def _operator(name: str, args: list[str]) -> str:
    if name == "_?_:_":
        return f"({args[0]}) ? ({args[1]}) : ({args[2]})"
    if name in ("-_", "!_"):
        return f"{name[0]}({args[0]})"
    if name == "@in":
        return f"({args[0]}) in ({args[1]})"
    return f"({args[0]}) {name[1:-1]} ({args[1]})"


def call_text(name: str, o: Overload) -> str | None:
    args = SPECIAL.get(o.id) or [sample(p) for p in o.params]
    if any(a is None for a in args):
        return None
    texts = [a for a in args if a is not None]
    if name.startswith(("_", "-", "!", "@")):
        return _operator(name, texts)
    if o.member:
        return f"({texts[0]}).{name}({', '.join(texts[1:])})"
    return f"{name}({', '.join(texts)})"


OVERLOADS = [(name, o) for name, ovs in sorted(DECLS.items()) for o in ovs]
ALL_LIBS = frozenset(libraries())
ENV = Environment.for_target("1.37", {})


def evaluate(text: str) -> tuple[list[str], Any]:
    root = parse(text)
    checker = Checker(text, ALL_LIBS, ENV.device, ENV.lib_note)
    checker.check(root)
    if checker.diags:
        return [d.message for d in checker.diags], None
    try:
        return [], compile_program(root)(Activation({}, 10**9))
    except CelError as e:
        return [], e


def _no_implementation(result: Any) -> bool:
    text = str(result)
    return isinstance(result, CelError) and ("no such overload" in text or "unknown function" in text
                                             or "no such function" in text)


@pytest.mark.parametrize(("name", "overload"), OVERLOADS, ids=[o.id for _, o in OVERLOADS])
def test_every_declared_overload_has_an_implementation(name: str, overload: Overload) -> None:
    text = call_text(name, overload)
    assert text is not None, f"no sample value for {overload.params}"
    diags, result = evaluate(text)
    assert diags == [], (text, diags)  # the call is exactly the declared signature: it must type-check
    assert not _no_implementation(result), (text, result)


def test_every_runtime_function_is_declared() -> None:
    declared = set(DECLS) | set(MACRO_LIBS)
    assert sorted(n for n in FUNCS if n not in declared) == []


#: a value of each runtime type, with its checker type
PROBES: list[tuple[str, ty.T]] = [
    ("true", ty.BOOL), ("2", ty.INT), ("2u", ty.UINT), ("2.5", ty.DOUBLE), ("'a'", ty.STRING), ("b'a'", ty.BYTES),
    # at run time a list or map carries no element types: any declared list or map parameter fits
    ("null", ty.NULL), ("[1]", ty.list_of(ty.DYN)), ("{'a': 1}", ty.map_of(ty.DYN, ty.DYN)),
    (SAMPLES["timestamp"], ty.TIMESTAMP), (SAMPLES["duration"], ty.DURATION),
    (SAMPLES["kubernetes.Quantity"], ty.QUANTITY), (SAMPLES["kubernetes.Semver"], ty.SEMVER),
    (SAMPLES["net.IP"], ty.IP), (SAMPLES["net.CIDR"], ty.CIDR), ("type(1)", ty.type_of(ty.INT)),
]


def _declared_for(name: str, member: bool, types: list[ty.T]) -> bool:
    # one runtime function serves a name's global and member forms (the receiver is the first
    # argument), so `ip(cidr)` runs like `cidr.ip()`: the checker alone tells the two apart
    for o in DECLS.get(name, []):
        if len(o.params) != len(types):
            continue
        m: ty.Mapping | None = {}
        for p, a in zip(o.params, types, strict=True):
            m = ty.assignable(m, p, a) if m is not None else None
        if m is not None:
            return True
    return False


def test_the_runtime_accepts_no_undeclared_argument_types() -> None:
    """Calls through dyn() reach the runtime with any argument types: it must refuse the ones no
    overload declares (bools where ints are declared, numbers where strings are ...)."""
    accepted = []
    names = sorted(n for n in DECLS if n[0].isalpha() and not n.startswith(("optional.", "format.", "lists.")))
    for name in names:
        for member in (False, True):
            arities = {len(o.params) for o in DECLS[name] if o.member == member}
            for k in sorted(a for a in arities if 1 <= a <= 2):
                for combo in itertools.product(PROBES, repeat=k):
                    types = [t for _, t in combo]
                    if _declared_for(name, member, types):
                        continue
                    args = [f"dyn({s})" for s, _ in combo]
                    text = (f"{args[0]}.{name}({', '.join(args[1:])})" if member else f"{name}({', '.join(args)})")
                    diags, result = evaluate(text)
                    if diags or isinstance(result, CelError):
                        continue
                    accepted.append(f"{text} = {result!r}")
    assert accepted == [], "\n".join(accepted[:60]) + f"\n({len(accepted)} in all)"
