"""Run-time semantics: equality, ordering, arithmetic with int64/uint64 overflow checks, and the
implementations of the library functions (dispatching on the run-time types of the arguments,
since values typed ``dyn`` at check time arrive here untyped).

Regular expressions use RE2 (the ``google-re2`` package) as cel-go does: the same syntax, and
matching in time linear in the input, so a hostile pattern cannot hang evaluation. Without the
package, Python's ``re`` is used for patterns without nested repetition only.
"""

from __future__ import annotations

import ipaddress
import math
import re
import urllib.parse
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from dralint.cel import chrono
from dralint.cel.values import (
    INT64_MAX,
    INT64_MIN,
    UINT64_MAX,
    CelError,
    Optional,
    Quantity,
    Semver,
    TypeValue,
    UInt,
)

try:  # pragma: no cover - depends on the installed wheel
    import re2 as _re2  # type: ignore[import-untyped,unused-ignore]

    _RE2_OPTIONS = _re2.Options()
    _RE2_OPTIONS.log_errors = False
    HAVE_RE2 = True
except ImportError:  # pragma: no cover
    _re2 = None
    HAVE_RE2 = False


#: largest string or list a function may build (the cost limit bounds the rest)
MAX_STRING = 10_000_000


def no_overload(name: str, *args: Any) -> CelError:
    return CelError(f"no such overload: {name}({', '.join(type_name(a) for a in args)})")


def type_name(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "bool"
    if t is UInt:
        return "uint"
    if t is int:
        return "int"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is bytes:
        return "bytes"
    if v is None:
        return "null_type"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if t is Optional:
        return "optional_type"
    if t is Quantity:
        return "kubernetes.Quantity"
    if t is Semver:
        return "kubernetes.Semver"
    if t is Timestamp:
        return "google.protobuf.Timestamp"
    if t is Duration:
        return "google.protobuf.Duration"
    if t is TypeValue:
        return "type"
    if isinstance(v, CelURL):
        return "kubernetes.URL"
    if isinstance(v, CelIP):
        return "net.IP"
    if isinstance(v, CelCIDR):
        return "net.CIDR"
    if isinstance(v, NamedFormat):
        return "kubernetes.NamedFormat"
    if isinstance(v, Device):
        return "kubernetes.DRADevice"
    return t.__name__


def is_num(v: Any) -> bool:
    t = type(v)
    return t is int or t is float or t is UInt


# ----------------------------------------------------------------------------------------------
# equality and ordering


def eq(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if is_num(a) and is_num(b):
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            return False
        return bool(a == b)  # Python compares int/float exactly
    if ta is not tb:
        if (isinstance(a, list) and isinstance(b, list)) or (isinstance(a, dict) and isinstance(b, dict)):
            pass
        else:
            return False
    if isinstance(a, list):
        return len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        return all(k in b and eq(v, b[k]) for k, v in a.items())
    if ta is Optional:
        if not a.has_value or not b.has_value:
            return bool(a.has_value == b.has_value)
        return eq(a.value, b.value)
    return bool(a == b)


def compare(a: Any, b: Any, op: str) -> int:
    """-1/0/1 for values CEL can order; raises CelError otherwise."""
    ta, tb = type(a), type(b)
    if (ta is bool and tb is bool) or (ta is str and tb is str) or (ta is bytes and tb is bytes):
        return int(a > b) - int(a < b)
    if is_num(a) and is_num(b) and ta is not bool and tb is not bool:
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            raise CelError("NaN values cannot be ordered")
        if (ta is float) != (tb is float):  # cel-go orders an integer against a double as a double (lossy)
            a, b = float(a), float(b)
        return int(a > b) - int(a < b)
    if ta is tb and ta in (Duration, Timestamp):
        return int(a.ns > b.ns) - int(a.ns < b.ns)
    raise no_overload(op, a, b)


def check_int(v: int) -> int:
    if not INT64_MIN <= v <= INT64_MAX:
        raise CelError("integer overflow")
    return v


def check_uint(v: int) -> UInt:
    if not 0 <= v <= UINT64_MAX:
        raise CelError("unsigned integer overflow")
    return UInt(v)


def add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a + b)
    if ta is UInt and tb is UInt:
        return check_uint(a + b)
    if ta is float and tb is float:
        return a + b
    if (ta is str and tb is str) or (ta is bytes and tb is bytes):
        return a + b
    if isinstance(a, list) and isinstance(b, list):
        return a + b
    if ta is Duration and tb is Duration:
        return chrono.duration(a.ns + b.ns)
    if ta is Timestamp and tb is Duration:
        return chrono.timestamp(a.ns + b.ns)
    if ta is Duration and tb is Timestamp:
        return chrono.timestamp(a.ns + b.ns)
    raise no_overload("_+_", a, b)


def sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a - b)
    if ta is UInt and tb is UInt:
        return check_uint(a - b)
    if ta is float and tb is float:
        return a - b
    if ta is Duration and tb is Duration:
        return chrono.duration(a.ns - b.ns)
    if ta is Timestamp and tb is Timestamp:
        return chrono.duration(a.ns - b.ns)
    if ta is Timestamp and tb is Duration:
        return chrono.timestamp(a.ns - b.ns)
    raise no_overload("_-_", a, b)


def mul(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a * b)
    if ta is UInt and tb is UInt:
        return check_uint(a * b)
    if ta is float and tb is float:
        return a * b
    raise no_overload("_*_", a, b)


def div(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if (ta is int and tb is int) or (ta is UInt and tb is UInt):
        if b == 0:
            raise CelError("division by zero")
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q
        return check_int(q) if ta is int else UInt(q)
    if ta is float and tb is float:
        if b == 0.0:
            if a == 0.0 or math.isnan(a):
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    raise no_overload("_/_", a, b)


def mod(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if (ta is int and tb is int) or (ta is UInt and tb is UInt):
        if b == 0:
            raise CelError("modulus by zero")
        r = abs(a) % abs(b)
        r = r if a >= 0 else -r
        return r if ta is int else UInt(r)
    raise no_overload("_%_", a, b)


def neg(a: Any) -> Any:
    ta = type(a)
    if ta is int:
        return check_int(-a)
    if ta is float:
        return -a
    raise no_overload("-_", a)


def contains_value(container: Any, v: Any) -> bool:
    if isinstance(container, list):
        return any(eq(x, v) for x in container)
    if isinstance(container, dict):
        if isinstance(container, DomainMap):
            return v in container if type(v) is str else False
        if type(v) in (str, int, UInt, bool):
            if v in container:
                # Python's True == 1: make sure the key types agree
                return any(eq(k, v) for k in container)
            if is_num(v) and type(v) is not bool:
                return any(is_num(k) and type(k) is not bool and k == v for k in container)
            return False
        if type(v) is float:
            return any(is_num(k) and type(k) is not bool and k == v for k in container)
        return False
    raise no_overload("@in", v, container)


class DomainMap(dict):  # type: ignore[type-arg]
    """``device.attributes`` / ``device.capacity``: an unknown domain reads as an empty map."""

    __slots__ = ()


EMPTY: dict[str, Any] = {}


class Device(dict):  # type: ignore[type-arg]
    """The ``device`` variable (a message-like object: selecting a field never fails)."""

    __slots__ = ()


def index(container: Any, key: Any) -> Any:
    if isinstance(container, dict):
        if isinstance(container, DomainMap):
            if type(key) is not str:
                raise no_overload("_[_]", container, key)
            return container.get(key, EMPTY)
        try:
            if key in container and type(key) is not bool and type(key) is not float:
                return container[key]
        except TypeError:
            raise no_overload("_[_]", container, key) from None
        for k, v in container.items():
            if eq(k, key):
                return v
        raise CelError(f"no such key: {key}")
    if isinstance(container, list):
        tk = type(key)
        if tk is float:
            if key != int(key):
                raise CelError(f"unsupported index value {key} in list")
            key = int(key)
        elif tk is not int and tk is not UInt:
            raise no_overload("_[_]", container, key)
        if not 0 <= key < len(container):
            raise CelError(f"index out of bounds: {key}")
        return container[key]
    raise no_overload("_[_]", container, key)


def select(operand: Any, field: str) -> Any:
    if isinstance(operand, dict):
        if isinstance(operand, DomainMap):
            return operand.get(field, EMPTY)
        if field in operand:
            return operand[field]
        raise CelError(f"no such key: {field}")
    raise CelError(f"type '{type_name(operand)}' does not support field selection")


def has_field(operand: Any, field: str) -> bool:
    if isinstance(operand, Device):
        return field in operand
    if isinstance(operand, dict):
        return field in operand
    if type(operand) is Optional:  # has(opt.f): false on none, else the test on the value
        return operand.has_value and has_field(operand.value, field)
    raise CelError(f"invalid type for field selection: {type_name(operand)}")


# ----------------------------------------------------------------------------------------------
# regular expressions


def _nested_repetition(pattern: str) -> bool:
    return re.search(r"\)[*+?{]", pattern) is not None and re.search(r"[*+}][^()]*\)[*+?{]", pattern) is not None


@lru_cache(maxsize=512)
def compile_regex(pattern: str) -> Any:
    if HAVE_RE2:
        try:
            return _re2.compile(pattern, options=_RE2_OPTIONS)
        except Exception as e:  # re2.error
            raise CelError(f"invalid regex: {regex_error(pattern) or e}") from None
    if _nested_repetition(pattern):  # pragma: no cover - only without google-re2
        raise CelError("regular expression not evaluated: nested repetition (install google-re2)")
    try:  # pragma: no cover
        return re.compile(pattern)
    except re.error as e:  # pragma: no cover
        raise CelError(f"invalid regex: {e}") from None


def regex_error(pattern: str) -> str | None:
    """RE2's complaint about a pattern, or None when it compiles."""
    if HAVE_RE2:
        try:
            _re2.compile(pattern, options=_RE2_OPTIONS)
        except Exception as e:
            msg = e.args[0] if e.args else str(e)
            return msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)
        return None
    try:  # pragma: no cover
        re.compile(pattern)
    except re.error as e:  # pragma: no cover
        return str(e)
    if re.search(r"\(\?[=!<]|\\[1-9]", pattern):  # pragma: no cover - lookaround and backrefs are not RE2
        return "lookaround and back-references are not supported by RE2"
    return None  # pragma: no cover


def _str(v: Any, name: str, *rest: Any) -> str:
    if type(v) is not str:
        raise no_overload(name, v, *rest)
    return v


def matches(s: Any, pattern: Any) -> bool:
    _str(s, "matches", pattern)
    _str(pattern, "matches", s)
    return compile_regex(pattern).search(s) is not None


def find(s: Any, pattern: Any) -> str:
    _str(s, "find", pattern)
    _str(pattern, "find", s)
    m = compile_regex(pattern).search(s)
    return m.group(0) if m else ""


def find_all(s: Any, pattern: Any, n: Any = -1) -> list[str]:
    _str(s, "findAll", pattern)
    _str(pattern, "findAll", s)
    _int(n, "findAll", s, pattern)
    if n == 0:
        return []
    out = [m.group(0) for m in compile_regex(pattern).finditer(s)]
    return out if n < 0 else out[:n]


# ----------------------------------------------------------------------------------------------
# time (just enough for the standard declarations)


# the types and their rules live in dralint.cel.chrono; these names stay importable from here
Duration = chrono.Duration
Timestamp = chrono.Timestamp
parse_duration = chrono.parse_duration
parse_timestamp = chrono.parse_timestamp


def _ts_part(ts: Any, part: str, tz: Any = None) -> int:
    if type(ts) not in (Duration, Timestamp):
        raise no_overload(part, ts, *([] if tz is None else [tz]))
    return chrono.part(ts, part, tz)


# ----------------------------------------------------------------------------------------------
# URL, IP, CIDR, named formats


class CelURL:
    __slots__ = ("parts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.parts = urllib.parse.urlsplit(text)

    def __eq__(self, o: object) -> bool:
        return isinstance(o, CelURL) and o.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def to_url(s: Any) -> CelURL:
    _str(s, "url")
    try:
        u = CelURL(s)
    except ValueError as e:
        raise CelError(f"URL parse error during conversion from string: {e}") from None
    if not (u.parts.scheme or s.startswith("/")):
        raise CelError("URL must be an absolute URI or an absolute path")
    return u


def _is_url(s: Any) -> bool:
    _str(s, "isURL")
    try:
        to_url(s)
    except CelError:
        return False
    return True


class CelIP:
    __slots__ = ("addr",)

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr

    def __eq__(self, o: object) -> bool:
        return isinstance(o, CelIP) and o.addr == self.addr

    def __hash__(self) -> int:
        return hash(self.addr)


class CelCIDR:
    __slots__ = ("iface",)

    def __init__(self, iface: ipaddress.IPv4Interface | ipaddress.IPv6Interface) -> None:
        self.iface = iface

    def __eq__(self, o: object) -> bool:
        return isinstance(o, CelCIDR) and o.iface == self.iface

    def __hash__(self) -> int:
        return hash(self.iface)


def to_ip(s: Any) -> CelIP:
    _str(s, "ip")
    if "%" in s:
        raise CelError("IP address with zone value is not allowed")
    try:
        a = ipaddress.ip_address(s)
    except ValueError:
        raise CelError(f"IP Address {s!r} parse error during conversion from string") from None
    if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None:
        raise CelError("IPv4-mapped IPv6 address is not allowed")
    return CelIP(a)


def to_cidr(s: Any) -> CelCIDR:
    _str(s, "cidr")
    try:
        i = ipaddress.ip_interface(s)
    except ValueError:
        raise CelError(f"network address {s!r} parse error during conversion from string") from None
    if "/" not in s:
        raise CelError(f"network address {s!r} parse error: a prefix length is required")
    if "%" in s:  # Python reads IPv6 zones (RFC 4007) in prefixes; Go's netip.ParsePrefix refuses them
        raise CelError("CIDR with zone value is not allowed")
    if isinstance(i.ip, ipaddress.IPv6Address) and i.ip.ipv4_mapped is not None:
        raise CelError("IPv4-mapped IPv6 address is not allowed")
    return CelCIDR(i)


def _ok(fn: Callable[[Any], Any], s: Any) -> bool:
    try:
        fn(s)
    except CelError:
        return False
    return True


_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_FORMATS: dict[str, Callable[[str], list[str]]] = {}


class NamedFormat:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, o: object) -> bool:
        return isinstance(o, NamedFormat) and o.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def _fmt_check(pattern: str, max_len: int, what: str) -> Callable[[str], list[str]]:
    rx = re.compile(pattern)

    def check(s: str) -> list[str]:
        errs = []
        if len(s) > max_len:
            errs.append(f"must be no more than {max_len} characters")
        if not rx.fullmatch(s):
            errs.append(what)
        return errs

    return check


_FORMATS.update({
    "dns1123Label": _fmt_check(_LABEL, 63, "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                               "characters or '-', and must start and end with an alphanumeric character"),
    "dns1123Subdomain": _fmt_check(rf"{_LABEL}(\.{_LABEL})*", 253, "a lowercase RFC 1123 subdomain must consist "
                                   "of lower case alphanumeric characters, '-' or '.'"),
    "dns1035Label": _fmt_check(r"[a-z]([-a-z0-9]*[a-z0-9])?", 63, "a DNS-1035 label must start with a letter"),
    "qualifiedName": _fmt_check(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                                r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", 316, "invalid qualified name"),
    "dns1123LabelPrefix": _fmt_check(r"[a-z0-9]([-a-z0-9]*)?", 63, "invalid label prefix"),
    "dns1123SubdomainPrefix": _fmt_check(r"[a-z0-9]([-a-z0-9.]*)?", 253, "invalid subdomain prefix"),
    "dns1035LabelPrefix": _fmt_check(r"[a-z]([-a-z0-9]*)?", 63, "invalid label prefix"),
    "labelValue": _fmt_check(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", 63, "invalid label value"),
    "uri": lambda s: [] if _is_url(s) else ["invalid URI"],
    "uuid": _fmt_check(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", 36,
                       "does not match the UUID format"),
    "byte": _fmt_check(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", 1 << 20,
                       "invalid base64"),
    "date": _fmt_check(r"\d{4}-\d{2}-\d{2}", 10, "invalid date"),
    "datetime": lambda s: [] if _ok(parse_timestamp, s) else ["invalid datetime"],
})


def _validate(fmt: Any, s: Any) -> Optional:
    if not isinstance(fmt, NamedFormat):
        raise no_overload("validate", fmt, s)
    errs = _FORMATS[fmt.name](_str(s, "validate"))
    return Optional(errs) if errs else Optional.NONE


# ----------------------------------------------------------------------------------------------
# strings extension


_ABSENT = object()


def _bool(v: Any, name: str, *rest: Any) -> bool:
    if type(v) is not bool:
        raise no_overload(name, v, *rest)
    return v


def _int(v: Any, name: str, *rest: Any) -> int:
    """An int argument (bools are ints in Python, never in CEL: unchecked calls must not take them)."""
    if type(v) is not int:
        raise no_overload(name, v, *rest)
    return v


def _char_at(s: Any, i: Any) -> str:
    _str(s, "charAt", i)
    _int(i, "charAt", s)
    if not 0 <= i <= len(s):
        raise CelError(f"index out of range: {i}")
    return s[i] if i < len(s) else ""


def _index_of(s: Any, sub_: Any, start: Any = 0) -> int:
    if isinstance(s, list):
        return next((i for i, x in enumerate(s) if eq(x, sub_)), -1)
    s = _str(s, "indexOf", sub_)
    sub_ = _str(sub_, "indexOf", s)
    _int(start, "indexOf", s, sub_)
    if not 0 <= start <= len(s):
        raise CelError(f"index out of range: {start}")
    return int(s.find(sub_, start))


def _last_index_of(s: Any, sub_: Any, start: Any = None) -> int:
    if isinstance(s, list):
        return next((i for i in range(len(s) - 1, -1, -1) if eq(s[i], sub_)), -1)
    s = _str(s, "lastIndexOf", sub_)
    sub_ = _str(sub_, "lastIndexOf", s)
    if start is None:
        return int(s.rfind(sub_))
    _int(start, "lastIndexOf", s, sub_)
    if not 0 <= start < max(len(s), 1):
        raise CelError(f"index out of range: {start}")
    return int(s.rfind(sub_, 0, start + len(sub_)))


def _ascii(s: Any, upper: bool) -> str:
    s = _str(s, "upperAscii" if upper else "lowerAscii")
    table = {c: c - 32 for c in range(97, 123)} if upper else {c: c + 32 for c in range(65, 91)}
    return str(s.translate(table))


def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    s = _str(s, "replace", old, new)
    old, new = _str(old, "replace"), _str(new, "replace")
    _int(n, "replace", s, old, new)
    hits = s.count(old) if old else len(s) + 1
    if n >= 0:
        hits = min(hits, n)
    if len(s) + hits * len(new) > MAX_STRING:
        raise CelError("operation cancelled: replace() would build a string over the size limit")
    return str(s.replace(old, new, n if n >= 0 else -1))


def _split(s: Any, sep: Any, n: Any = -1) -> list[str]:
    s = _str(s, "split", sep)
    sep = _str(sep, "split", s)
    _int(n, "split", s, sep)
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if n > 0 and len(chars) > n:
            chars = [*chars[: n - 1], "".join(chars[n - 1 :])]
        return chars
    return list(s.split(sep, n - 1) if n > 0 else s.split(sep))


def _substring(s: Any, start: Any, end: Any = None) -> str:
    s = _str(s, "substring", start)
    _int(start, "substring", s)
    e = len(s) if end is None else _int(end, "substring", s, start)
    if not 0 <= start <= len(s) or not 0 <= e <= len(s) or start > e:
        raise CelError(f"substring({start}, {e}) is out of range for a string of length {len(s)}")
    return str(s[start:e])


def _join(lst: Any, sep: Any = "") -> str:
    if not isinstance(lst, list) or any(type(x) is not str for x in lst):
        raise no_overload("join", lst)
    return _str(sep, "join").join(lst)


_QUOTE = str.maketrans({'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
                        "\r": "\\r", "\t": "\\t", "\v": "\\v"})


def _quote(s: Any) -> str:
    return '"' + _str(s, "strings.quote").translate(_QUOTE) + '"'


_CLAUSE = re.compile(r"%(?:\.(\d{1,3}))?([sdfexXob%])")


def _clauses(fmt: Any, args: Any) -> Iterator[tuple[str, Any, str, int | None]]:
    """The parts of a format string: (literal text, argument, verb, precision) per clause; the text
    after the last clause comes with verb ``""``. Shared by ``format`` and its cost, so both read
    the format string the same way."""
    _str(fmt, "format", args)
    if not isinstance(args, list):
        raise no_overload("format", fmt, args)
    i, ai = 0, 0
    while True:
        j = fmt.find("%", i)
        if j < 0:
            yield fmt[i:], None, "", None
            return
        m = _CLAUSE.match(fmt, j)
        if not m:
            raise CelError(f"could not parse formatting clause at position {j}")
        prec, verb = m.group(1), m.group(2)
        if verb == "%":
            yield fmt[i:j] + "%", None, "", None
        else:
            if ai >= len(args):
                raise CelError("index out of range: not enough arguments for format string")
            yield fmt[i:j], args[ai], verb, int(prec) if prec else None
            ai += 1
        i = m.end()


def _format(fmt: Any, args: Any) -> str:
    return "".join(text + (_format_one(v, verb, prec) if verb else "") for text, v, verb, prec in _clauses(fmt, args))


def _special_float(v: Any) -> str | None:
    """cel-go's spelling of the doubles every clause prints the same way."""
    if type(v) is float and (math.isnan(v) or math.isinf(v)):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return None


def _format_s(v: Any) -> str:
    """%s: any value; lists and maps element by element (map entries sorted by key), strings bare."""
    special = _special_float(v)
    if special is not None:
        return special
    if v is None:
        return "null"
    if type(v) is TypeValue:
        return v.name
    if isinstance(v, list):
        return "[" + ", ".join(_format_s(x) for x in v) + "]"
    if isinstance(v, dict):
        items = sorted((_format_s(k), _format_s(x)) for k, x in v.items())
        return "{" + ", ".join(f"{k}: {x}" for k, x in items) + "}"
    return to_string(v)


def _format_one(v: Any, verb: str, prec: int | None) -> str:
    if verb == "s":
        return _format_s(v)
    special = _special_float(v)
    if verb == "d":
        if type(v) in (int, UInt):
            return str(int(v))
        if special is not None:
            return special
        raise CelError("decimal clause can only be used on integers")
    if verb in "fe":
        if not is_num(v) or type(v) is bool:
            raise CelError("fixed-point clause can only be used on numbers")
        return special if special is not None else format(float(v), f".{6 if prec is None else prec}{verb}")
    if verb in "xXob":
        if type(v) in (int, UInt) or (type(v) is bool and verb == "b"):
            return format(int(v), {"x": "x", "X": "X", "o": "o", "b": "b"}[verb])
        if type(v) in (str, bytes) and verb in "xX":
            h = (v.encode() if type(v) is str else v).hex()
            return h.upper() if verb == "X" else h
        raise CelError(f"%{verb} clause can only be used on integers")
    raise CelError(f"unknown format verb %{verb}")  # pragma: no cover


# ----------------------------------------------------------------------------------------------
# conversions


def to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        if math.isnan(v):
            return "NaN"
        r = repr(v)
        return r[:-2] if r.endswith(".0") else r
    if t is bytes:
        try:
            return str(v.decode("utf-8"))
        except UnicodeDecodeError:
            raise CelError("invalid UTF-8 in bytes, cannot convert to string") from None
    if isinstance(v, CelIP):
        return str(v.addr)
    if isinstance(v, CelCIDR):
        return str(v.iface)
    if t is Duration:
        return chrono.format_duration(v)
    if t is Timestamp:
        return chrono.format_timestamp(v)
    raise no_overload("string", v)


def to_int(v: Any) -> int:
    t = type(v)
    if t is int:
        return int(v)
    if t is UInt:
        return check_int(int(v))
    if t is float:
        # both ends excluded, as cel-go does: float64 cannot hold 2^63 - 1, and -2^63 is refused alike
        if math.isnan(v) or not -9.223372036854776e18 < v < 9.223372036854776e18:
            raise CelError("integer overflow")
        return int(v)
    if t is str:
        if not re.fullmatch(r"[+-]?[0-9]+", v):
            raise CelError(f"cannot convert {v!r} to int")
        return check_int(int(v))
    if t is Timestamp:
        return int(v.ns // 10**9)
    raise no_overload("int", v)


def to_uint(v: Any) -> UInt:
    t = type(v)
    if t is int or t is UInt:
        return check_uint(int(v))
    if t is float:
        if math.isnan(v) or not 0 <= v < 1.8446744073709552e19:
            raise CelError("unsigned integer overflow")
        return UInt(int(v))
    if t is str:
        if not re.fullmatch(r"\+?[0-9]+", v):
            raise CelError(f"cannot convert {v!r} to uint")
        return check_uint(int(v))
    raise no_overload("uint", v)


def to_double(v: Any) -> float:
    t = type(v)
    if t is float:
        return float(v)
    if t is int or t is UInt:
        return float(v)
    if t is str:
        try:
            return float(v)
        except ValueError:
            raise CelError(f"cannot convert {v!r} to double") from None
    raise no_overload("double", v)


def to_bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str:
        if v in ("1", "t", "T", "true", "TRUE", "True"):
            return True
        if v in ("0", "f", "F", "false", "FALSE", "False"):
            return False
        raise CelError(f"cannot convert {v!r} to bool")
    raise no_overload("bool", v)


def to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode("utf-8")
    raise no_overload("bytes", v)


def type_of(v: Any) -> TypeValue:
    name = type_name(v)
    return TypeValue({"kubernetes.DRADevice": "map"}.get(name, name))


def size(v: Any) -> int:
    if type(v) in (str, bytes) or isinstance(v, (list, dict)):
        return len(v)
    raise no_overload("size", v)


# ----------------------------------------------------------------------------------------------
# lists


def _list(v: Any, name: str) -> list[Any]:
    if not isinstance(v, list):
        raise no_overload(name, v)
    return v


def _sorted_check(lst: list[Any], name: str) -> list[Any]:
    import functools

    def cmp(a: Any, b: Any) -> int:
        if type(a) is not type(b) and not (is_num(a) and is_num(b)):
            raise CelError(f"{name}: list elements must have the same type")
        return compare(a, b, "_<_")

    return sorted(lst, key=functools.cmp_to_key(cmp))


def _is_sorted(lst: Any) -> bool:
    lst = _list(lst, "isSorted")
    return all(compare(lst[i], lst[i + 1], "_<=_") <= 0 for i in range(len(lst) - 1))


def _sum(lst: Any) -> Any:
    lst = _list(lst, "sum")
    if not lst:
        return 0
    acc = lst[0]
    if not is_num(acc) and type(acc) is not Duration:  # Kubernetes sums numbers and durations only;
        raise no_overload("sum", lst)  # summing strings or lists would copy the total n times over
    for x in lst[1:]:
        acc = add(acc, x)
    return acc


def _min_max(lst: Any, want: int, name: str) -> Any:
    lst = _list(lst, name)
    if not lst:
        raise CelError(f"{name} called on empty list")
    best = lst[0]
    for x in lst[1:]:
        if compare(x, best, name) == want:
            best = x
    return best


def _slice(lst: Any, a: Any, b: Any) -> list[Any]:
    lst = _list(lst, "slice")
    _int(a, "slice", lst, b)
    _int(b, "slice", lst, a)
    if a < 0 or b < 0 or a > b or b > len(lst):
        raise CelError(f"cannot slice({a}, {b}), list is length {len(lst)}")
    return list(lst[a:b])


def _flatten(lst: Any, depth: Any = 1) -> list[Any]:
    lst = _list(lst, "flatten")
    _int(depth, "flatten", lst)
    if depth < 0:
        raise CelError("level must be non-negative")
    out: list[Any] = []
    for x in lst:
        if isinstance(x, list) and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


def _distinct(lst: Any) -> list[Any]:
    out: list[Any] = []
    for x in _list(lst, "distinct"):
        if not any(eq(x, y) for y in out):
            out.append(x)
    return out


def _sets_contains(a: Any, b: Any) -> bool:
    a, b = _list(a, "sets.contains"), _list(b, "sets.contains")
    return all(any(eq(x, y) for y in a) for x in b)


def _includes(container: Any, v: Any) -> bool:
    if isinstance(container, list):
        return any(eq(x, v) for x in container)
    return eq(container, v)


def _lists_range(n: Any) -> list[int]:
    if type(n) is not int:
        raise no_overload("lists.range", n)
    if n > 1_000_000:
        raise CelError("operation cancelled: actual cost limit exceeded")
    return list(range(max(n, 0)))


# ----------------------------------------------------------------------------------------------
# quantity / semver helpers


def _q(v: Any, name: str) -> Quantity:
    if type(v) is not Quantity:
        raise no_overload(name, v)
    return v


def _int_arg(v: Any, name: str) -> int:
    if type(v) is not int:
        raise no_overload(name, v)
    return int(v)


def _sv(v: Any, name: str) -> Semver:
    if type(v) is not Semver:
        raise no_overload(name, v)
    return v


def _cmp_obj(a: Any, b: Any, name: str) -> int:
    if type(a) is Quantity and type(b) is Quantity:
        return a.compare(b)
    if type(a) is Semver and type(b) is Semver:
        return a.compare(b)
    raise no_overload(name, a, b)


def _q_arith(a: Any, b: Any, name: str) -> Quantity:
    q = _q(a, name)
    if type(b) is Quantity or type(b) is int:
        return q.add(b) if name == "add" else q.sub(b)
    raise no_overload(name, a, b)


def _opt(v: Any, name: str) -> Optional:
    if type(v) is not Optional:
        raise no_overload(name, v)
    return v


def _opt_value(o: Any) -> Any:
    o = _opt(o, "value")
    if not o.has_value:
        raise CelError("optional.none() dereference")
    return o.value


def _non_zero(v: Any) -> Optional:
    zero = (v in (0, "", b"", None, False) and type(v) is not Quantity) or (isinstance(v, (list, dict)) and not v)
    return Optional.NONE if zero else Optional(v)


def _ip(v: Any, name: str) -> CelIP:
    if not isinstance(v, CelIP):
        raise no_overload(name, v)
    return v


def _cidr(v: Any, name: str) -> CelCIDR:
    if not isinstance(v, CelCIDR):
        raise no_overload(name, v)
    return v


def _url(v: Any, name: str) -> CelURL:
    if not isinstance(v, CelURL):
        raise no_overload(name, v)
    return v


def _go_global_unicast(a: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local:
        return False
    return not (isinstance(a, ipaddress.IPv4Address) and a == ipaddress.IPv4Address("255.255.255.255"))


def _contains_ip(c: Any, ip: Any) -> bool:
    c = _cidr(c, "containsIP")
    addr = to_ip(ip).addr if type(ip) is str else _ip(ip, "containsIP").addr
    return addr in c.iface.network


def _contains_cidr(c: Any, other: Any) -> bool:
    c = _cidr(c, "containsCIDR")
    o = to_cidr(other) if type(other) is str else _cidr(other, "containsCIDR")
    net = o.iface.network
    return net.version == c.iface.network.version and net.subnet_of(c.iface.network)  # type: ignore[arg-type,unused-ignore]


def _query(u: Any) -> dict[str, list[str]]:
    return {k: list(v) for k, v in urllib.parse.parse_qs(_url(u, "getQuery").parts.query,
                                                          keep_blank_values=True).items()}


def _port(u: Any) -> str:
    p = _url(u, "getPort").parts
    try:
        return str(p.port) if p.port is not None else ""
    except ValueError:
        return ""


# ----------------------------------------------------------------------------------------------
# run-time cost of the calls whose work grows with their arguments or their result
#
# Kubernetes charges string work at 0.1 unit per character (cel-go's StringTraversalCostFactor)
# and list work at one unit per element. Each function below is charged *before* it runs, from its
# arguments, for what it reads and for the size of what it builds (``split("")`` of n characters:
# n strings; ``join``: the sum of the lengths; ``replace``: from the number of occurrences), so the
# 1,000,000-unit limit bounds memory as well as time: a selector cannot make one evaluation build
# more than about 10 million characters or a million list elements. Where Kubernetes has a formula
# (``k8s.io/apiserver/pkg/cel/library/cost.go``) it is used as is when the result is no larger than
# the input; the interpreter charges operators, literals and comprehension results the same way.
# A cost function gets the units left (``room``) first, so that a walk over nested values can stop
# as soon as it knows the budget is gone; it returns 0 for arguments the function itself rejects.


def chars(n: int) -> int:
    """Units for reading or writing ``n`` characters: 0.1 each, rounded up."""
    return -(-n // 10)


def _scan_cost(room: int, *args: Any) -> int:
    """matches, find, contains: one pass over the strings."""
    return chars(sum(len(x) for x in args if type(x) is str)) + 1


def _find_all_cost(room: int, s: Any, pattern: Any, n: Any = -1) -> int:
    if type(s) is not str:
        return 0
    found = len(s) + 1  # at most one match per position, empty matches included
    if type(n) is int and n >= 0:
        found = min(found, n)
    return _scan_cost(room, s, pattern) + found


def _split_cost(room: int, s: Any, sep: Any, n: Any = -1) -> int:
    if type(s) is not str or type(sep) is not str or type(n) is not int or n == 0:
        return 0
    parts = len(s) if sep == "" else s.count(sep) + 1
    if n > 0:
        parts = min(parts, n)
    return chars(2 * len(s)) + parts  # Kubernetes: read and copy the string; plus the list's elements


def _replace_cost(room: int, s: Any, old: Any, new: Any, n: Any = -1) -> int:
    if not (type(s) is str and type(old) is str and type(new) is str and type(n) is int):
        return 0
    hits = s.count(old) if old else len(s) + 1  # an empty `old` matches around every character
    if n >= 0:
        hits = min(hits, n)
    return chars(len(s) + len(s) + hits * (len(new) - len(old)))  # read the string, write the result


def _join_cost(room: int, lst: Any, sep: Any = "") -> int:
    if not isinstance(lst, list) or type(sep) is not str:
        return 0
    out = sum(len(x) for x in lst if type(x) is str) + len(sep) * max(len(lst) - 1, 0)
    return chars(2 * out)  # Kubernetes: 0.2 per character of the result


def _copy_cost(room: int, s: Any, *rest: Any) -> int:
    """lowerAscii, upperAscii, trim, substring, string <-> bytes: one pass that writes at most as much."""
    return chars(len(s)) if type(s) in (str, bytes) else 0


_ESCAPED = '"\\\a\b\f\n\r\t\v'


def _quote_cost(room: int, s: Any) -> int:
    if type(s) is not str:
        return 0
    return chars(len(s) + 2 + sum(s.count(c) for c in _ESCAPED))  # two quotes, two characters per escape


def _format_cost(room: int, fmt: Any, args: Any) -> int:
    cap = 10 * room + 10
    size = 0
    for text, v, verb, prec in _clauses(fmt, args):
        size += len(text)
        if verb:
            size += _clause_size(v, verb, prec, cap - size)
        if size > cap:
            break
    return chars(size)


def _clause_size(v: Any, verb: str, prec: int | None, cap: int) -> int:
    if verb == "s" and isinstance(v, (list, dict)):
        return _repr_size(v, cap)
    if type(v) is str and verb in "sxX":  # %x writes two hex digits per UTF-8 byte
        return len(v) if verb == "s" else 2 * len(v) * (1 if v.isascii() else 4)
    if type(v) is bytes and verb == "s":
        return len(v)
    return len(_format_one(v, verb, prec))  # a number, a bool, null, a duration: a few dozen characters


def _repr_size(v: Any, cap: int) -> int:
    """An upper bound on the length of a list or map as ``%s`` prints it, counted no further than
    ``cap``: values can share sub-lists, so the printed size can grow exponentially with the size
    of the expression that built them."""
    size, todo = 0, [v]
    while todo and size <= cap:
        x = todo.pop()
        if isinstance(x, list):
            size += 2 + 2 * len(x)  # brackets and separators
            todo.extend(x)
        elif isinstance(x, dict):
            size += 2 + 4 * len(x)
            for k, val in x.items():
                todo += (k, val)
        elif type(x) is str:
            size += 2 + len(x) * (4 if x.isascii() else 10)  # quotes; one escape is at most 10 characters
        elif type(x) is bytes:
            size += 3 + 4 * len(x)
        else:
            size += len(repr(x))
    return size


def _range_cost(room: int, n: Any) -> int:
    return max(n, 0) if type(n) is int else 0


def _flatten_cost(room: int, lst: Any, depth: Any = 1) -> int:
    """Elements visited (each one is, or is copied into, the result), counted no further than the
    units left: nested lists can share their parts."""
    if not isinstance(lst, list) or type(depth) is not int:
        return 0
    seen, todo = 0, [(lst, depth)]
    while todo and seen <= room:
        xs, d = todo.pop()
        seen += len(xs)
        if d > 0:
            todo.extend((x, d - 1) for x in xs if isinstance(x, list))
    return seen


def sort_cost(room: int, lst: Any) -> int:
    n = len(lst) if isinstance(lst, list) else 0
    return n * max(1, math.ceil(math.log2(max(n, 2))))  # as the estimator: n log n comparisons


def _each_cost(room: int, lst: Any, *rest: Any) -> int:
    """One unit per element for the functions that walk or copy a list once; a string is a scan."""
    if isinstance(lst, list):
        return len(lst)
    return chars(len(lst)) if type(lst) is str else 0


def _pairs_cost(room: int, a: Any, b: Any) -> int:
    """distinct and the sets functions compare every element with every other (as the estimator)."""
    return len(a) * len(b) if isinstance(a, list) and isinstance(b, list) else 0


#: name -> units a call costs, from its arguments, charged before it runs (see above)
CALL_COST: dict[str, Callable[..., int]] = {
    "matches": _scan_cost, "find": _scan_cost, "contains": _scan_cost, "findAll": _find_all_cost,
    "split": _split_cost, "replace": _replace_cost, "join": _join_cost, "format": _format_cost,
    "strings.quote": _quote_cost, "lowerAscii": _copy_cost, "upperAscii": _copy_cost, "trim": _copy_cost,
    "substring": _copy_cost, "string": _copy_cost, "bytes": _copy_cost,
    "lists.range": _range_cost, "flatten": _flatten_cost, "sort": sort_cost,
    "distinct": lambda room, lst: _pairs_cost(room, lst, lst),
    "sets.contains": _pairs_cost, "sets.intersects": _pairs_cost,
    "sets.equivalent": lambda room, a, b: 2 * _pairs_cost(room, a, b),
    "isSorted": _each_cost, "sum": _each_cost, "min": _each_cost, "max": _each_cost, "indexOf": _each_cost,
    "lastIndexOf": _each_cost, "includes": _each_cost, "reverse": _each_cost, "slice": _each_cost,
}


#: name -> implementation (member calls get the receiver as the first argument)
FUNCS: dict[str, Callable[..., Any]] = {
    "size": size,
    "contains": lambda s, x: _str(s, "contains", x).find(_str(x, "contains", s)) >= 0,
    "startsWith": lambda s, x: _str(s, "startsWith", x).startswith(_str(x, "startsWith", s)),
    "endsWith": lambda s, x: _str(s, "endsWith", x).endswith(_str(x, "endsWith", s)),
    "matches": matches,
    "int": to_int, "uint": to_uint, "double": to_double, "string": to_string, "bool": to_bool, "bytes": to_bytes,
    "dyn": lambda v: v, "type": type_of,
    "duration": lambda v: v if type(v) is Duration else parse_duration(_str(v, "duration")),
    "timestamp": lambda v: v if type(v) is Timestamp else (
        chrono.timestamp_from_seconds(v) if type(v) is int else parse_timestamp(_str(v, "timestamp"))),
    # Kubernetes lists / regex / URLs
    "isSorted": _is_sorted, "sum": _sum,
    "min": lambda lst: _min_max(lst, -1, "min"), "max": lambda lst: _min_max(lst, 1, "max"),
    "indexOf": _index_of, "lastIndexOf": _last_index_of,
    "find": find, "findAll": find_all,
    "url": to_url, "isURL": _is_url,
    "getScheme": lambda u: _url(u, "getScheme").parts.scheme,
    "getHost": lambda u: _url(u, "getHost").parts.netloc.rpartition("@")[2],
    "getHostname": lambda u: _url(u, "getHostname").parts.hostname or "",
    "getPort": _port,
    "getEscapedPath": lambda u: _url(u, "getEscapedPath").parts.path,
    "getQuery": _query,
    # strings extension
    "charAt": _char_at, "lowerAscii": lambda s: _ascii(s, False), "upperAscii": lambda s: _ascii(s, True),
    "replace": _replace, "split": _split, "substring": _substring,
    "trim": lambda s: _str(s, "trim").strip(), "join": _join, "format": _format, "strings.quote": _quote,
    # optional types
    "optional.of": lambda v: Optional(v), "optional.ofNonZeroValue": _non_zero,
    "optional.none": lambda: Optional.NONE,
    "hasValue": lambda o: _opt(o, "hasValue").has_value, "value": _opt_value,
    "orValue": lambda o, d: _opt(o, "orValue").value if o.has_value else d,
    "or": lambda o, p: o if _opt(o, "or").has_value else _opt(p, "or"),
    # quantity
    "quantity": lambda s: Quantity.parse(_str(s, "quantity")),
    "isQuantity": lambda s: Quantity.valid(_str(s, "isQuantity")),
    "sign": lambda q: _q(q, "sign").sign(),
    "isGreaterThan": lambda a, b: _cmp_obj(a, b, "isGreaterThan") == 1,
    "isLessThan": lambda a, b: _cmp_obj(a, b, "isLessThan") == -1,
    "compareTo": lambda a, b: _cmp_obj(a, b, "compareTo"),
    "asApproximateFloat": lambda q: _q(q, "asApproximateFloat").as_float(),
    "asInteger": lambda q: _q(q, "asInteger").as_integer(),
    "isInteger": lambda q: _q(q, "isInteger").is_integer(),
    "add": lambda a, b: _q_arith(a, b, "add"), "sub": lambda a, b: _q_arith(a, b, "sub"),
    "mul": lambda q, n: _q(q, "mul").mul(_int_arg(n, "mul")),
    "div": lambda q, n, r=4: _q(q, "div").div(_int_arg(n, "div"), _int_arg(r, "div")),
    "divInt": lambda q, n: _q(q, "divInt").div(_int_arg(n, "divInt"), integer=True),
    # sets
    "sets.contains": _sets_contains,
    "sets.equivalent": lambda a, b: _sets_contains(a, b) and _sets_contains(b, a),
    "sets.intersects": lambda a, b: any(any(eq(x, y) for y in _list(b, "sets.intersects"))
                                        for x in _list(a, "sets.intersects")),
    # IP / CIDR
    "ip": lambda v: CelIP(v.iface.ip) if isinstance(v, CelCIDR) else to_ip(v),
    "isIP": lambda s: _ok(to_ip, _str(s, "isIP")),
    "ip.isCanonical": lambda s: str(to_ip(s).addr) == s,
    "family": lambda v: _ip(v, "family").addr.version,
    "isUnspecified": lambda v: _ip(v, "isUnspecified").addr.is_unspecified,
    "isLoopback": lambda v: _ip(v, "isLoopback").addr.is_loopback,
    # Go: ff02::/16 (any flags nibble: ffX2::) for IPv6, 224.0.0.0/24 for IPv4
    "isLinkLocalMulticast": lambda v: (lambda a: a.packed[0] == 0xFF and a.packed[1] & 0x0F == 0x02
                                       if a.version == 6 else a in ipaddress.ip_network("224.0.0.0/24"))(
        _ip(v, "isLinkLocalMulticast").addr),
    "isLinkLocalUnicast": lambda v: (lambda a: a.is_link_local and not a.is_multicast)(
        _ip(v, "isLinkLocalUnicast").addr),
    "isGlobalUnicast": lambda v: _go_global_unicast(_ip(v, "isGlobalUnicast").addr),
    "cidr": to_cidr, "isCIDR": lambda s: _ok(to_cidr, _str(s, "isCIDR")),
    "containsIP": _contains_ip, "containsCIDR": _contains_cidr,
    "masked": lambda c: CelCIDR(ipaddress.ip_interface(str(_cidr(c, "masked").iface.network))),
    "prefixLength": lambda c: _cidr(c, "prefixLength").iface.network.prefixlen,
    # format
    "format.named": lambda n: Optional(NamedFormat(n)) if _str(n, "format.named") in _FORMATS else Optional.NONE,
    "validate": _validate,
    # semver
    "semver": lambda s, norm=False: Semver.parse(_str(s, "semver", norm), _bool(norm, "semver", s)),
    "isSemver": lambda s, norm=False: Semver.valid(_str(s, "isSemver", norm), _bool(norm, "isSemver", s)),
    "major": lambda v: _sv(v, "major").major, "minor": lambda v: _sv(v, "minor").minor,
    "patch": lambda v: _sv(v, "patch").patch,
    # lists extension
    "slice": _slice, "flatten": _flatten, "sort": lambda lst: _sorted_check(_list(lst, "sort"), "sort"),
    "distinct": _distinct, "reverse": lambda lst: list(reversed(_list(lst, "reverse"))),
    "first": lambda lst: Optional(lst[0]) if _list(lst, "first") else Optional.NONE,
    "last": lambda lst: Optional(lst[-1]) if _list(lst, "last") else Optional.NONE,
    "lists.range": _lists_range,
    # list/DRA includes
    "includes": _includes,
}
for _name in ("getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours",
              "getMinutes", "getSeconds", "getMilliseconds"):
    # the time zone, when given, must be a string (None stands for "not given")
    FUNCS[_name] = (lambda part: lambda ts, tz=_ABSENT: _ts_part(ts, part, None if tz is _ABSENT else
                                                                  _str(tz, part, ts)))(_name)


def _install_formats() -> None:
    from dralint.cel.decls import FORMAT_NAMES

    for name in FORMAT_NAMES:
        FUNCS[f"format.{name}"] = (lambda n: lambda: NamedFormat(n))(name)


_install_formats()
