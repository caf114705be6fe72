"""CEL types for the checker: primitive, parameterised, opaque and object types, with cel-go's
assignability rules (``dyn`` matches anything, type parameters are bound by unification, ``null``
is only assignable to nullable kinds) and its spelling in messages."""

from __future__ import annotations


class T:
    """A CEL type. ``kind`` is one of: dyn any error bool int uint double string bytes null
    list map type opaque object param timestamp duration."""

    __slots__ = ("_hash", "kind", "name", "params")

    def __init__(self, kind: str, params: tuple[T, ...] = (), name: str = "") -> None:
        self.kind = kind
        self.params = params
        self.name = name
        self._hash = hash((kind, name, params))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, T) and self._hash == other._hash and self.kind == other.kind
                and self.name == other.name and self.params == other.params)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return fmt(self)


DYN = T("dyn")
ANY = T("any")  # the declared type of attribute values: behaves like dyn, prints as any
ERROR = T("error")
BOOL = T("bool")
INT = T("int")
UINT = T("uint")
DOUBLE = T("double")
STRING = T("string")
BYTES = T("bytes")
NULL = T("null")
TIMESTAMP = T("timestamp")
DURATION = T("duration")
QUANTITY = T("opaque", (), "kubernetes.Quantity")
SEMVER = T("opaque", (), "kubernetes.Semver")
URL = T("opaque", (), "kubernetes.URL")
IP = T("opaque", (), "net.IP")
CIDR = T("opaque", (), "net.CIDR")
NAMED_FORMAT = T("opaque", (), "kubernetes.NamedFormat")
DEVICE = T("object", (), "kubernetes.DRADevice")

NUMERIC = frozenset({"int", "uint", "double"})
COMPARABLE = frozenset({"bool", "int", "uint", "double", "string", "bytes", "timestamp", "duration"})


def list_of(e: T) -> T:
    return T("list", (e,))


def map_of(k: T, v: T) -> T:
    return T("map", (k, v))


def optional_of(e: T) -> T:
    return T("opaque", (e,), "optional_type")


def type_of(e: T) -> T:
    return T("type", (e,))


def param(name: str) -> T:
    return T("param", (), name)


def is_dyn(t: T) -> bool:
    return t.kind in ("dyn", "any", "error")


def is_optional(t: T) -> bool:
    return t.kind == "opaque" and t.name == "optional_type"


_NAMES = {"dyn": "dyn", "any": "any", "error": "*error*", "bool": "bool", "int": "int", "uint": "uint",
          "double": "double", "string": "string", "bytes": "bytes", "null": "null_type",
          "timestamp": "google.protobuf.Timestamp", "duration": "google.protobuf.Duration"}


def fmt(t: T) -> str:
    if t.kind in _NAMES:
        return _NAMES[t.kind]
    if t.kind == "list":
        return f"list({fmt(t.params[0])})"
    if t.kind == "map":
        return f"map({fmt(t.params[0])}, {fmt(t.params[1])})"
    if t.kind == "type":
        return f"type({fmt(t.params[0])})"
    if t.kind == "param":
        return t.name
    if t.params:
        return f"{t.name}({', '.join(fmt(p) for p in t.params)})"
    return t.name


# ----------------------------------------------------------------------------------------------
# unification

Mapping = dict[str, T]


def resolve(m: Mapping, t: T) -> T:
    seen = 0
    while t.kind == "param" and t.name in m and seen < 64:
        t = m[t.name]
        seen += 1
    return t


def substitute(m: Mapping, t: T, free_to_dyn: bool = False) -> T:
    t = resolve(m, t)
    if t.kind == "param":
        return DYN if free_to_dyn else t
    if t.params:
        return T(t.kind, tuple(substitute(m, p, free_to_dyn) for p in t.params), t.name)
    return t


def _occurs(m: Mapping, name: str, t: T) -> bool:
    t = resolve(m, t)
    if t.kind == "param":
        return t.name == name
    return any(_occurs(m, name, p) for p in t.params)


def _nullable(t: T) -> bool:
    return t.kind in ("null", "opaque", "object", "any", "dyn", "error", "timestamp", "duration")


def assignable(m: Mapping, expected: T, actual: T) -> Mapping | None:
    """The bindings under which ``actual`` can be used where ``expected`` is declared, or None."""
    t1, t2 = resolve(m, expected), resolve(m, actual)
    if t1 == t2:
        return m
    if t1.kind == "param":
        if _occurs(m, t1.name, t2):
            return None
        out = dict(m)
        out[t1.name] = t2
        return out
    if t2.kind == "param":
        if _occurs(m, t2.name, t1):
            return None
        out = dict(m)
        out[t2.name] = t1
        return out
    if is_dyn(t1) or is_dyn(t2):
        return m
    if t1.kind == "type" and t2.kind == "type":
        return m  # cel-go: type values are all of one kind (`type(7) == type(7u)` checks, and is false)
    if t1.kind == "null":
        return m if _nullable(t2) else None
    if t2.kind == "null":
        return m if _nullable(t1) else None
    if t1.kind != t2.kind or t1.name != t2.name or len(t1.params) != len(t2.params):
        return None
    cur: Mapping | None = m
    for p1, p2 in zip(t1.params, t2.params, strict=True):
        cur = assignable(cur, p1, p2) if cur is not None else None
        if cur is None:
            return None
    return cur


def most_general(a: T, b: T) -> T:
    if is_dyn(a) or a.kind == "param":
        return a if a.kind != "param" else b
    if is_dyn(b):
        return b
    return a
