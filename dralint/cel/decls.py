"""Function declarations of the Kubernetes CEL environment, grouped by the library that brings them.

Each overload names its library; ``schemas/kubernetes/cel.yaml`` says from which Kubernetes
version (or DRA release, or feature gate) each library is part of the environment that new
selectors are compiled against. Signatures follow cel-go's standard declarations, cel-go's
extensions (strings, lists, sets, optional types, bindings, two-variable comprehensions) and the
Kubernetes libraries (lists, regex, URLs, quantity, semver, IP/CIDR, format, DRA ``includes``).
"""

from __future__ import annotations

from dataclasses import dataclass

from dralint.cel.types import (
    BOOL,
    BYTES,
    CIDR,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    IP,
    NAMED_FORMAT,
    QUANTITY,
    SEMVER,
    STRING,
    TIMESTAMP,
    UINT,
    URL,
    T,
    list_of,
    map_of,
    optional_of,
    param,
    type_of,
)


@dataclass(frozen=True)
class Overload:
    id: str
    params: tuple[T, ...]
    result: T
    member: bool
    lib: str


DECLS: dict[str, list[Overload]] = {}


def _add(lib: str, name: str, oid: str, params: tuple[T, ...], result: T, member: bool) -> None:
    DECLS.setdefault(name, []).append(Overload(oid, params, result, member, lib))


def g(lib: str, name: str, oid: str, params: tuple[T, ...], result: T) -> None:
    _add(lib, name, oid, params, result, False)


def m(lib: str, name: str, oid: str, params: tuple[T, ...], result: T) -> None:
    _add(lib, name, oid, params, result, True)


A, B = param("A"), param("B")
_STD = "standard"

# -- standard operators and functions (cel-go) ---------------------------------------------------
for _op in ("_==_", "_!=_"):
    g(_STD, _op, _op, (A, A), BOOL)
for _op, _n in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
    for _t in (BOOL, INT, UINT, DOUBLE, STRING, BYTES, TIMESTAMP, DURATION):
        g(_STD, _op, f"{_n}_{_t.kind}", (_t, _t), BOOL)
    for _a, _b in ((INT, UINT), (INT, DOUBLE), (UINT, INT), (UINT, DOUBLE), (DOUBLE, INT), (DOUBLE, UINT)):
        g(_STD, _op, f"{_n}_{_a.kind}_{_b.kind}", (_a, _b), BOOL)
for _t in (INT, UINT, DOUBLE, STRING, BYTES):
    g(_STD, "_+_", f"add_{_t.kind}", (_t, _t), _t)
g(_STD, "_+_", "add_list", (list_of(A), list_of(A)), list_of(A))
g(_STD, "_+_", "add_timestamp_duration", (TIMESTAMP, DURATION), TIMESTAMP)
g(_STD, "_+_", "add_duration_timestamp", (DURATION, TIMESTAMP), TIMESTAMP)
g(_STD, "_+_", "add_duration_duration", (DURATION, DURATION), DURATION)
for _t in (INT, UINT, DOUBLE):
    g(_STD, "_-_", f"subtract_{_t.kind}", (_t, _t), _t)
    g(_STD, "_*_", f"multiply_{_t.kind}", (_t, _t), _t)
    g(_STD, "_/_", f"divide_{_t.kind}", (_t, _t), _t)
g(_STD, "_-_", "subtract_timestamp_timestamp", (TIMESTAMP, TIMESTAMP), DURATION)
g(_STD, "_-_", "subtract_timestamp_duration", (TIMESTAMP, DURATION), TIMESTAMP)
g(_STD, "_-_", "subtract_duration_duration", (DURATION, DURATION), DURATION)
g(_STD, "_%_", "modulo_int", (INT, INT), INT)
g(_STD, "_%_", "modulo_uint", (UINT, UINT), UINT)
g(_STD, "-_", "negate_int", (INT,), INT)
g(_STD, "-_", "negate_double", (DOUBLE,), DOUBLE)
g(_STD, "!_", "logical_not", (BOOL,), BOOL)
g(_STD, "_?_:_", "conditional", (BOOL, A, A), A)
g(_STD, "@in", "in_list", (A, list_of(A)), BOOL)
g(_STD, "@in", "in_map", (A, map_of(A, B)), BOOL)
for _t, _oid in ((STRING, "string"), (BYTES, "bytes"), (list_of(A), "list"), (map_of(A, B), "map")):
    g(_STD, "size", f"size_{_oid}", (_t,), INT)
    m(_STD, "size", f"{_oid}_size", (_t,), INT)
for _fn in ("contains", "startsWith", "endsWith"):
    m(_STD, _fn, f"{_fn}_string", (STRING, STRING), BOOL)
g(_STD, "matches", "matches", (STRING, STRING), BOOL)
m(_STD, "matches", "matches_string", (STRING, STRING), BOOL)
for _t in (INT, UINT, DOUBLE, STRING, TIMESTAMP):
    g(_STD, "int", f"{_t.kind}_to_int", (_t,), INT)
for _t in (INT, UINT, DOUBLE, STRING):
    g(_STD, "uint", f"{_t.kind}_to_uint", (_t,), UINT)
    g(_STD, "double", f"{_t.kind}_to_double", (_t,), DOUBLE)
for _t in (INT, UINT, DOUBLE, BOOL, STRING, BYTES, TIMESTAMP, DURATION):
    g(_STD, "string", f"{_t.kind}_to_string", (_t,), STRING)
g(_STD, "bytes", "bytes_to_bytes", (BYTES,), BYTES)
g(_STD, "bytes", "string_to_bytes", (STRING,), BYTES)
g(_STD, "bool", "bool_to_bool", (BOOL,), BOOL)
g(_STD, "bool", "string_to_bool", (STRING,), BOOL)
g(_STD, "dyn", "to_dyn", (A,), DYN)
g(_STD, "type", "type", (A,), type_of(A))
g(_STD, "duration", "string_to_duration", (STRING,), DURATION)
g(_STD, "duration", "duration_to_duration", (DURATION,), DURATION)
g(_STD, "timestamp", "string_to_timestamp", (STRING,), TIMESTAMP)
g(_STD, "timestamp", "int_to_timestamp", (INT,), TIMESTAMP)
g(_STD, "timestamp", "timestamp_to_timestamp", (TIMESTAMP,), TIMESTAMP)
for _fn in ("getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear"):
    m(_STD, _fn, f"timestamp_{_fn}", (TIMESTAMP,), INT)
    m(_STD, _fn, f"timestamp_{_fn}_tz", (TIMESTAMP, STRING), INT)
for _fn in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
    m(_STD, _fn, f"timestamp_{_fn}", (TIMESTAMP,), INT)
    m(_STD, _fn, f"timestamp_{_fn}_tz", (TIMESTAMP, STRING), INT)
    m(_STD, _fn, f"duration_{_fn}", (DURATION,), INT)

# -- Kubernetes lists library (v0) ----------------------------------------------------------------
_KL = "k8s-lists"
m(_KL, "isSorted", "list_is_sorted", (list_of(A),), BOOL)
for _t in (INT, UINT, DOUBLE, DURATION):
    m(_KL, "sum", f"list_{_t.kind}_sum", (list_of(_t),), _t)
m(_KL, "min", "list_min", (list_of(A),), A)
m(_KL, "max", "list_max", (list_of(A),), A)
m(_KL, "indexOf", "list_index_of", (list_of(A), A), INT)
m(_KL, "lastIndexOf", "list_last_index_of", (list_of(A), A), INT)


# -- DRA includes() (DRAListTypeAttributes): a scalar or a list attribute contains a value ----------
m("dra-includes", "includes", "dra_includes", (DYN, DYN), BOOL)
# -- Kubernetes lists library v1 (1.37): generic includes ------------------------------------------
m("k8s-lists-v1", "includes", "list_includes", (list_of(A), A), BOOL)

# -- Kubernetes regex library -------------------------------------------------------------------
_KR = "k8s-regex"
m(_KR, "find", "string_find", (STRING, STRING), STRING)
m(_KR, "findAll", "string_find_all", (STRING, STRING), list_of(STRING))
m(_KR, "findAll", "string_find_all_n", (STRING, STRING, INT), list_of(STRING))

# -- Kubernetes URL library -------------------------------------------------------------------
_KU = "k8s-urls"
g(_KU, "url", "string_to_url", (STRING,), URL)
g(_KU, "isURL", "is_url_string", (STRING,), BOOL)
for _fn in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"):
    m(_KU, _fn, f"url_{_fn}", (URL,), STRING)
m(_KU, "getQuery", "url_getQuery", (URL,), map_of(STRING, list_of(STRING)))

# -- cel-go strings extension ------------------------------------------------------------------
_ST = "strings"
m(_ST, "charAt", "string_char_at_int", (STRING, INT), STRING)
m(_ST, "indexOf", "string_index_of_string", (STRING, STRING), INT)
m(_ST, "indexOf", "string_index_of_string_int", (STRING, STRING, INT), INT)
m(_ST, "lastIndexOf", "string_last_index_of_string", (STRING, STRING), INT)
m(_ST, "lastIndexOf", "string_last_index_of_string_int", (STRING, STRING, INT), INT)
m(_ST, "lowerAscii", "string_lower_ascii", (STRING,), STRING)
m(_ST, "upperAscii", "string_upper_ascii", (STRING,), STRING)
m(_ST, "replace", "string_replace_string_string", (STRING, STRING, STRING), STRING)
m(_ST, "replace", "string_replace_string_string_int", (STRING, STRING, STRING, INT), STRING)
m(_ST, "split", "string_split_string", (STRING, STRING), list_of(STRING))
m(_ST, "split", "string_split_string_int", (STRING, STRING, INT), list_of(STRING))
m(_ST, "substring", "string_substring_int", (STRING, INT), STRING)
m(_ST, "substring", "string_substring_int_int", (STRING, INT, INT), STRING)
m(_ST, "trim", "string_trim", (STRING,), STRING)
m(_ST, "join", "list_join", (list_of(STRING),), STRING)
m(_ST, "join", "list_join_string", (list_of(STRING), STRING), STRING)
# version 2 of the extension (Kubernetes 1.29) added format() and strings.quote()
m("strings-v2", "format", "string_format", (STRING, list_of(DYN)), STRING)
g("strings-v2", "strings.quote", "strings_quote", (STRING,), STRING)

# -- optional types -------------------------------------------------------------------------------
_OP = "optional"
g(_OP, "optional.of", "optional_of", (A,), optional_of(A))
g(_OP, "optional.ofNonZeroValue", "optional_ofNonZeroValue", (A,), optional_of(A))
g(_OP, "optional.none", "optional_none", (), optional_of(A))
m(_OP, "hasValue", "optional_hasValue", (optional_of(A),), BOOL)
m(_OP, "value", "optional_value", (optional_of(A),), A)
m(_OP, "orValue", "optional_orValue_value", (optional_of(A), A), A)
m(_OP, "or", "optional_or_optional", (optional_of(A), optional_of(A)), optional_of(A))

# -- Kubernetes quantity library ----------------------------------------------------------------
_Q = "quantity"
g(_Q, "quantity", "string_to_quantity", (STRING,), QUANTITY)
g(_Q, "isQuantity", "is_quantity_string", (STRING,), BOOL)
# declared as a global function in Kubernetes (``sign(q)``), unlike the other quantity functions
g(_Q, "sign", "quantity_sign", (QUANTITY,), INT)
m(_Q, "isGreaterThan", "quantity_is_greater_than", (QUANTITY, QUANTITY), BOOL)
m(_Q, "isLessThan", "quantity_is_less_than", (QUANTITY, QUANTITY), BOOL)
m(_Q, "compareTo", "quantity_compare_to", (QUANTITY, QUANTITY), INT)
m(_Q, "asApproximateFloat", "quantity_get_float", (QUANTITY,), DOUBLE)
m(_Q, "asInteger", "quantity_get_int", (QUANTITY,), INT)
m(_Q, "isInteger", "quantity_is_integer", (QUANTITY,), BOOL)
m(_Q, "add", "quantity_add", (QUANTITY, QUANTITY), QUANTITY)
m(_Q, "add", "quantity_add_int", (QUANTITY, INT), QUANTITY)
m(_Q, "sub", "quantity_sub", (QUANTITY, QUANTITY), QUANTITY)
m(_Q, "sub", "quantity_sub_int", (QUANTITY, INT), QUANTITY)
# later additions to the quantity library (multiplication and division by an integer)
m("quantity-arith", "mul", "quantity_multiply_int", (QUANTITY, INT), QUANTITY)
m("quantity-arith", "div", "quantity_divide_int_default_rounding", (QUANTITY, INT), QUANTITY)
m("quantity-arith", "div", "quantity_divide_int_round", (QUANTITY, INT, INT), QUANTITY)
m("quantity-arith", "divInt", "quantity_divide_int", (QUANTITY, INT), QUANTITY)

# -- sets extension ---------------------------------------------------------------------------
for _fn in ("contains", "equivalent", "intersects"):
    g("sets", f"sets.{_fn}", f"list_sets_{_fn}_list", (list_of(A), list_of(A)), BOOL)

# -- Kubernetes IP and CIDR libraries -------------------------------------------------------------
_IP = "ip"
g(_IP, "ip", "string_to_ip", (STRING,), IP)
g(_IP, "isIP", "is_ip", (STRING,), BOOL)
g(_IP, "ip.isCanonical", "ip_is_canonical", (STRING,), BOOL)
m(_IP, "family", "ip_family", (IP,), INT)
for _fn in ("isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast"):
    m(_IP, _fn, f"ip_{_fn}", (IP,), BOOL)
g(_IP, "string", "ip_to_string", (IP,), STRING)
_CI = "cidr"
g(_CI, "cidr", "string_to_cidr", (STRING,), CIDR)
g(_CI, "isCIDR", "is_cidr", (STRING,), BOOL)
m(_CI, "containsIP", "cidr_contains_ip_ip", (CIDR, IP), BOOL)
m(_CI, "containsIP", "cidr_contains_ip_string", (CIDR, STRING), BOOL)
m(_CI, "containsCIDR", "cidr_contains_cidr", (CIDR, CIDR), BOOL)
m(_CI, "containsCIDR", "cidr_contains_cidr_string", (CIDR, STRING), BOOL)
m(_CI, "ip", "cidr_ip", (CIDR,), IP)
m(_CI, "masked", "cidr_masked", (CIDR,), CIDR)
m(_CI, "prefixLength", "cidr_prefix_length", (CIDR,), INT)
g(_CI, "string", "cidr_to_string", (CIDR,), STRING)

# -- Kubernetes format library ----------------------------------------------------------------
FORMAT_NAMES = ("dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "dns1123LabelPrefix",
                "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
                "datetime")
for _fn in FORMAT_NAMES:
    g("format", f"format.{_fn}", f"format_{_fn}", (), NAMED_FORMAT)
g("format", "format.named", "format_named", (STRING,), optional_of(NAMED_FORMAT))
m("format", "validate", "format_validate", (NAMED_FORMAT, STRING), optional_of(list_of(STRING)))

# -- semver: DRA's own library (single-argument forms) and the base library v1 (normalising forms) --
_SV = "semver"
g(_SV, "semver", "string_to_semver", (STRING,), SEMVER)
g(_SV, "isSemver", "is_semver_string", (STRING,), BOOL)
for _fn in ("major", "minor", "patch"):
    m(_SV, _fn, f"semver_{_fn}", (SEMVER,), INT)
m(_SV, "isGreaterThan", "semver_is_greater_than", (SEMVER, SEMVER), BOOL)
m(_SV, "isLessThan", "semver_is_less_than", (SEMVER, SEMVER), BOOL)
m(_SV, "compareTo", "semver_compare_to", (SEMVER, SEMVER), INT)
g("semver-normalize", "semver", "string_bool_to_semver", (STRING, BOOL), SEMVER)
g("semver-normalize", "isSemver", "is_semver_string_bool", (STRING, BOOL), BOOL)

# -- cel-go lists extension (version 3) ---------------------------------------------------------
_LX = "lists-ext"
m(_LX, "slice", "list_slice", (list_of(A), INT, INT), list_of(A))
m(_LX, "flatten", "list_flatten", (list_of(list_of(A)),), list_of(A))
m(_LX, "flatten", "list_flatten_int", (list_of(DYN), INT), list_of(DYN))
m(_LX, "sort", "list_sort", (list_of(A),), list_of(A))
m(_LX, "distinct", "list_distinct", (list_of(A),), list_of(A))
m(_LX, "reverse", "list_reverse", (list_of(A),), list_of(A))
m(_LX, "first", "list_first", (list_of(A),), optional_of(A))
m(_LX, "last", "list_last", (list_of(A),), optional_of(A))
g(_LX, "lists.range", "lists_range", (INT,), list_of(INT))


#: macros and the library that provides each (one-variable comprehensions and has() are standard)
MACRO_LIBS = {
    "all": _STD, "exists": _STD, "exists_one": _STD, "map": _STD, "map_filter": _STD, "filter": _STD,
    "has": _STD,
    "all2": "two-var-comprehensions", "exists2": "two-var-comprehensions",
    "existsOne2": "two-var-comprehensions", "transformList": "two-var-comprehensions",
    "transformMap": "two-var-comprehensions", "transformMapEntry": "two-var-comprehensions",
    "optMap": _OP, "optFlatMap": _OP, "sortBy": _LX, "bind": "bindings",
}

#: identifiers that name types (``type(x) == string``)
TYPE_IDENTS: dict[str, T] = {
    "bool": BOOL, "int": INT, "uint": UINT, "double": DOUBLE, "string": STRING, "bytes": BYTES,
    "null_type": T("null"), "list": list_of(DYN), "map": map_of(DYN, DYN), "dyn": DYN,
    "type": type_of(DYN), "optional_type": optional_of(DYN),
}

#: qualified names of types (``type(t) == google.protobuf.Timestamp``, ``net.IP``)
QUALIFIED_TYPE_IDENTS: dict[str, T] = {
    "google.protobuf.Timestamp": TIMESTAMP, "google.protobuf.Duration": DURATION, "net.IP": IP, "net.CIDR": CIDR,
}


def libraries() -> set[str]:
    libs = {o.lib for ovs in DECLS.values() for o in ovs}
    return libs | set(MACRO_LIBS.values())
