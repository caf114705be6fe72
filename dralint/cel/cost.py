"""A static worst-case cost estimate in the spirit of cel-go's estimator (``checker/cost.go``).

The API server refuses a new selector whose estimated cost exceeds 1,000,000 units; the scheduler
enforces the same limit at run time. The model, as cel-go's:

- a literal costs 0; an identifier, a field selection or an index costs 1;
- a function call costs 1 plus its arguments, except for functions whose work grows with the
  size of their input: string comparisons and ``==`` cost 0.1 per character of the shorter side,
  ``+`` on strings 0.1 per character of the result, ``contains``/``startsWith``/``endsWith`` and the
  other string functions 0.1 per character, ``matches``/``find``/``findAll`` ``(0.1 × (len(s)+1)) ×
  (0.25 × len(regex))``, ``in`` on a list one unit per element, list functions one unit per element
  (the ``sets`` functions n·m; the lists extension as cel-go's ``ext/lists.go``, see `_LIST_FACTOR`);
- the IP/CIDR/URL library calls as Kubernetes' ``library/cost.go``, see `_LIBRARY_CALLS`;
- ``cel.bind`` as its cel-go expansion: an empty list literal (10), the initialiser once, the body;
- the functions that build strings follow Kubernetes' ``library/cost.go``: ``split`` and
  ``replace`` cost 0.2 per input character, ``join`` 0.1 per character of its result, and their
  result sizes are worst cases (``replace`` from the shortest match and the longest replacement).
  No Kubernetes list declares how long its elements are, so ``join`` on any non-empty list is an
  unbounded cost, as the API server estimates it (``"a,b".split(",").join("-")`` is refused);
- ``&&``/``||`` cost both sides, a conditional the condition plus the dearer branch;
- a list literal costs 10 plus its elements, a map literal 30 plus its entries;
- a comprehension costs as its expansion in cel-go: range + accumulator + result + size of the range ×
  (loop condition + step), see `_MACRO_LOOP`;
- ``has()`` costs only its operand (Kubernetes keeps the pre-0.17.7 presence-test cost of 0).

Sizes come from literals, from concatenation and from the limits Kubernetes declares for the
``device`` variable: at most 32 domains, 32 attributes or capacities per domain, attribute strings
of at most 64 characters, a driver name of at most 63. An input of unknown size (for example the
result of ``lists.range(n)`` with a computed ``n``) is treated as unbounded, so a loop over it is
over the limit, as in cel-go. The estimate is an upper bound; dralint reports it when it is over
the limit.
"""

from __future__ import annotations

import math

from dralint.cel import types as ty
from dralint.cel.ast import (
    Bind,
    Call,
    Comprehension,
    Has,
    Ident,
    Index,
    ListLit,
    Lit,
    MapLit,
    Node,
    Select,
    StructLit,
)

UNBOUNDED = 2**63
MAX_DOMAINS = 32
MAX_PER_DOMAIN = 32
MAX_ATTRIBUTE_VALUE = 64
MAX_DRIVER = 63

_LINEAR_STRING = frozenset({
    "contains", "startsWith", "endsWith", "lowerAscii", "upperAscii", "trim", "replace", "split", "substring",
    "charAt", "indexOf", "lastIndexOf", "join", "format", "strings.quote", "quantity", "isQuantity", "semver",
    "isSemver", "isURL", "isIP", "isCIDR", "string", "bytes",
})
_LINEAR_LIST = frozenset({
    "isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "includes", "join",
})

#: The library calls whose cost is a fixed amount plus a factor per character of one argument, as
#: Kubernetes' ``library/cost.go`` estimates them: name -> (fixed units, units per character, which
#: argument is measured: 0 the receiver or the only argument of a global call, 1 the first argument
#: of a receiver call, None for no argument). Such a call costs its arguments plus
#: ``fixed + ceil(factor × size)`` and nothing for the dispatch. The conversions ``int``/``uint``/
#: ``double``/``bool`` are not here: cel-go gives them the plain call cost 1.
#: ``containsIP``/``containsCIDR`` compare two addresses of at most 16 bytes each (ceil(0.1 × 32) = 4);
#: ``containsCIDR`` masks the prefix first (ceil(0.1 × 16) + 1 more).
_LIBRARY_CALLS: dict[str, tuple[int, float, int | None]] = {
    "url": (0, 0.1, 0),
    "ip": (0, 0.1, 0),
    "cidr": (0, 0.1, 0),
    "ip.isCanonical": (0, 0.2, 0),
    "containsIP": (4, 0.1, 1),
    "containsCIDR": (7, 0.1, 1),
    "masked": (1, 0.0, None), "prefixLength": (1, 0.0, None), "family": (1, 0.0, None),
    "isUnspecified": (1, 0.0, None), "isLoopback": (1, 0.0, None), "isLinkLocalMulticast": (1, 0.0, None),
    "isLinkLocalUnicast": (1, 0.0, None), "isGlobalUnicast": (1, 0.0, None),
}

#: cel-go's lists extension (``ext/lists.go``): each call allocates a list (10) and dispatches (1),
#: and costs ``factor`` per element of a size that depends on the function: the result's length for
#: ``slice``/``lists.range``/``reverse``, the receiver's for ``flatten`` (× the depth), and the
#: receiver's length squared for ``distinct``/``sort`` (a worst-case pairwise comparison, 0.1 more
#: for string or bytes elements in ``sort``). cel-go also takes that squared size as the result's
#: length. ``first``/``last`` are not here: they cost the plain call 1.
_LIST_FACTOR: dict[str, float] = {
    "slice": 1.0, "lists.range": 1.0, "reverse": 1.0, "flatten": 1.0, "distinct": 2.0, "sort": 2.0,
}
_LIST_SQUARED = frozenset({"distinct", "sort"})
_LIST_CALL_BASE = 11
_REGEX = frozenset({"matches", "find", "findAll"})
#: A named format's ``validate(s)`` is priced by Kubernetes as a regular-expression match of ``s``
#: (0.1 a character) against an expression as long as the longest named format's
#: (``MaxNameFormatRegexSize``, 128 characters at 0.25 each), whatever the format.
_FORMAT_REGEX_COST = math.ceil(128 * 0.25)


def _cap(x: float) -> int:
    return UNBOUNDED if x >= UNBOUNDED else math.ceil(x)


def _per_char(size: int, factor: float) -> int:
    """``factor`` units per character of ``size``; an unbounded size stays unbounded (not a tenth of it)."""
    return UNBOUNDED if size >= UNBOUNDED else math.ceil(factor * size)



#: cel-go estimates a macro as its expansion: range + accumulator init + result + size x (loop
#: condition + step), each node at its own price (identifier 1, call 1, `&&`/`||` free, list literal
#: 10, map literal 30). Per macro: (init + result, condition + the step's own nodes); the step's
#: predicate/transform comes on top. E.g. `exists`: init `false` 0, result `__result__` 1, condition
#: `@not_strictly_false(!__result__)` 3, step `__result__ || p` 1 + p; `map`: init `[]` 10, result 1,
#: condition `true` 0, step `__result__ + [f]` 12 + f; `filter`: step `p ? __result__ + [x] : __result__`.
_MACRO_LOOP: dict[str, tuple[int, int]] = {
    "all": (1, 3), "all2": (1, 3),
    "exists": (1, 4), "exists2": (1, 4),
    "exists_one": (2, 2), "existsOne2": (2, 2),
    "map": (11, 12), "transformList": (11, 12),
    "filter": (11, 13),
    "transformMap": (31, 3), "transformMapEntry": (31, 2),
}

class Estimator:
    def __init__(self, types: dict[int, ty.T]) -> None:
        self.types = types
        self.scopes: list[dict[str, int]] = []
        #: element size of an iteration variable, by name (innermost last)

    def typ(self, n: Node) -> ty.T:
        return self.types.get(id(n), ty.DYN)

    def estimate(self, n: Node) -> tuple[int, int]:
        """(cost, size) of a node; size is the length of a string/list/map result (1 for scalars)."""
        if isinstance(n, Lit):
            if n.kind in ("string", "bytes"):
                return 0, len(n.value)
            return 0, 1
        if isinstance(n, Ident):
            for s in reversed(self.scopes):
                if n.name in s:
                    return 1, s[n.name]
            return 1, 1
        if isinstance(n, Select):
            c, _ = self.estimate(n.operand)
            return _cap(c + 1), self._path_size(n)
        if isinstance(n, Has):
            c, _ = self.estimate(n.arg.operand)
            return c, 1
        if isinstance(n, Index):
            c1, _ = self.estimate(n.operand)
            c2, _ = self.estimate(n.index)
            return _cap(c1 + c2 + 1), self._path_size(n)
        if isinstance(n, ListLit):
            total = 10
            for e in n.elems:
                total += self.estimate(e)[0]
            return _cap(total), len(n.elems)
        if isinstance(n, MapLit):
            total = 30
            for k, v, _ in n.entries:
                total += self.estimate(k)[0] + self.estimate(v)[0]
            return _cap(total), len(n.entries)
        if isinstance(n, StructLit):
            return _cap(40 + sum(self.estimate(v)[0] for _, v, _ in n.fields)), 1
        if isinstance(n, Bind):
            ci, si = self.estimate(n.init)
            self.scopes.append({n.var: si})
            try:
                cb, sb = self.estimate(n.body)
            finally:
                self.scopes.pop()
            # cel-go expands cel.bind to a loop over an empty list literal (10), binding the
            # variable as the accumulator: the initialiser is charged once
            return _cap(10 + ci + cb), sb
        if isinstance(n, Comprehension):
            return self._comprehension(n)
        if isinstance(n, Call):
            return self._call(n)
        return 1, 1  # pragma: no cover

    def _path_size(self, n: Node) -> int:
        """Declared maximum sizes along device.attributes / device.capacity / device.driver."""
        path: list[str] = []
        cur: Node = n
        while True:
            if isinstance(cur, Select):
                path.append(cur.field)
                cur = cur.operand
            elif isinstance(cur, Index):
                path.append("[]")
                cur = cur.operand
            else:
                break
        if not (isinstance(cur, Ident) and cur.name == "device"):
            t = self.typ(n)
            return 1 if t.kind in ("bool", "int", "uint", "double", "null") else MAX_ATTRIBUTE_VALUE
        path.reverse()
        if path[:1] == ["driver"]:
            return MAX_DRIVER
        if path[:1] in (["attributes"], ["capacity"]):
            depth = len(path)
            if depth <= 2:
                return MAX_DOMAINS if depth == 1 else MAX_PER_DOMAIN
            return MAX_ATTRIBUTE_VALUE
        return 1

    def _element_size(self, target: Node) -> int:
        """Size of the values a loop variable takes: known for literals and for the ``device``
        maps (declared limits); for any other list cel-go has no entry size, so it is unbounded
        (``s.split("").map(c, c + c)`` is refused by the API server)."""
        if isinstance(target, ListLit):
            return max((self.estimate(e)[1] for e in target.elems), default=0)
        if isinstance(target, MapLit):
            return max((self.estimate(k)[1] for k, _, _ in target.entries), default=0)
        elem_t = self.typ(target)
        inner = elem_t.params[0] if elem_t.kind in ("list", "map") and elem_t.params else ty.DYN
        if inner.kind in ("bool", "int", "uint", "double", "null", "timestamp", "duration"):
            return 1
        cur = target
        while isinstance(cur, (Select, Index)):
            cur = cur.operand
        if isinstance(cur, Ident) and (cur.name == "device" or any(cur.name in s for s in self.scopes)):
            return MAX_ATTRIBUTE_VALUE
        return UNBOUNDED

    def _comprehension(self, n: Comprehension) -> tuple[int, int]:
        cr, size = self.estimate(n.target)
        elem = self._element_size(n.target)
        scope = {n.var: elem}
        if n.var2:
            scope[n.var2] = elem
        self.scopes.append(scope)
        try:
            body = sum(self.estimate(a)[0] for a in n.args)
        finally:
            self.scopes.pop()
        if n.macro in ("optMap", "optFlatMap"):
            return _cap(cr + body + 2), size
        loop = _MACRO_LOOP.get(n.macro)
        if loop is not None:
            fixed, per_iteration = loop
            return _cap(cr + fixed + size * (per_iteration + body)), size
        if n.macro == "sortBy":
            return self._sort_by(n, cr, size, body)
        return _cap(cr + size * (body + 2)), size  # pragma: no cover - every macro is handled above

    def _sort_by(self, n: Comprehension, target_cost: int, size: int, key_cost: int) -> tuple[int, int]:
        """cel-go expands ``l.sortBy(x, k)`` to ``cel.bind(v, l, v.@sortByAssociatedKeys(v.map(x, k)))``:
        the bind's empty list (10) and initialiser, the variable (1), the map over it, and the sort
        of the keys, priced as `sort` (2, or 2.1 for string keys, per squared key count, plus 11)."""
        fixed, per_iteration = _MACRO_LOOP["map"]
        keys = _cap(1 + fixed + size * (per_iteration + key_cost))
        factor = 2.1 if self.typ(n.args[-1]).kind in ("string", "bytes") else 2.0
        squared = _cap(size * size)
        sort = _cap(_LIST_CALL_BASE + _per_char(squared, factor))
        return _cap(10 + target_cost + 1 + keys + sort), squared

    def _call(self, n: Call) -> tuple[int, int]:
        fn = n.fn
        parts = ([n.target] if n.target is not None else []) + list(n.args)
        est = [self.estimate(p) for p in parts]
        arg_cost = sum(c for c, _ in est)
        sizes = [s for _, s in est]
        if fn in ("_&&_", "_||_"):
            return _cap(arg_cost), 1
        if fn == "_?_:_":
            return _cap(est[0][0] + max(est[1][0], est[2][0])), max(sizes[1], sizes[2])
        if fn in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
            t0 = self.typ(parts[0])
            if t0.kind == "type" or self.typ(parts[1]).kind == "type":
                # cel-go knows no size for type values: 0.1 x the smaller unknown size is unbounded
                # (the 1.35 API server refuses `type(device.driver) == string` as too costly)
                return UNBOUNDED, 1
            if t0.kind in ("string", "bytes", "list", "map", "dyn", "any"):
                # cel-go: 0.1 per character of the shorter side, so a comparison with "" costs nothing
                return _cap(arg_cost + (_per_char(min(sizes), 0.1) if min(sizes) == 0
                                        else max(1, _per_char(min(sizes), 0.1)))), 1
            return _cap(arg_cost + 1), 1
        if fn == "_+_":
            total = sizes[0] + sizes[1]
            t0 = self.typ(parts[0])
            if t0.kind in ("string", "bytes"):
                return _cap(arg_cost + _per_char(total, 0.1)), _cap(total)
            if t0.kind == "list":
                return _cap(arg_cost + 1), total
            return _cap(arg_cost + 1), 1
        if fn == "@in":
            t1 = self.typ(parts[1])
            return _cap(arg_cost + (sizes[1] if t1.kind in ("list", "dyn", "any") else 1)), 1
        if fn in _REGEX and len(parts) >= 2:
            str_cost = math.ceil(0.1 * (sizes[0] + 1))
            regex_cost = math.ceil(0.25 * sizes[1])
            return _cap(arg_cost + str_cost * max(regex_cost, 1)), sizes[0] if fn != "matches" else 1
        if fn in _LIST_FACTOR and (n.target is not None or fn == "lists.range"):
            return self._list_call(n, sizes, arg_cost)
        if fn.startswith("sets."):
            return _cap(arg_cost + sizes[0] * sizes[1] + 1), 1
        if fn == "validate" and n.target is not None and len(sizes) == 2:
            str_cost = _per_char(sizes[1], 0.1)
            return _cap(arg_cost + (str_cost * _FORMAT_REGEX_COST if str_cost != UNBOUNDED else UNBOUNDED)), 1
        if fn in _LIBRARY_CALLS:
            fixed, factor, which = _LIBRARY_CALLS[fn]
            measured = 0 if which is None or which >= len(sizes) else _per_char(sizes[which], factor)
            return _cap(arg_cost + fixed + measured), UNBOUNDED if self.typ(n).kind == "string" else 1
        if fn in ("startsWith", "endsWith") and n.target is not None and len(sizes) == 2:
            return _cap(arg_cost + max(1, _per_char(sizes[1], 0.1))), 1  # cel-go: the prefix's length only
        if fn == "contains" and n.target is not None and len(sizes) == 2 and self.typ(parts[0]).kind == "string":
            # cel-go: (0.1 x receiver) x (0.1 x substring)
            str_cost, sub_cost = _per_char(sizes[0], 0.1), _per_char(sizes[1], 0.1)
            return _cap(arg_cost + max(1, str_cost * sub_cost if UNBOUNDED not in (str_cost, sub_cost)
                                       else UNBOUNDED)), 1
        built = self._builder(fn, n, sizes, arg_cost)
        if built is not None:
            return built
        if fn in _LINEAR_LIST and self.typ(parts[0]).kind == "list":
            return _cap(arg_cost + sizes[0] + 1), sizes[0]
        if fn in _LINEAR_STRING:
            return _cap(arg_cost + max(1, _per_char(sum(sizes), 0.1))), sizes[0]
        if fn == "size":
            return _cap(arg_cost + 1), 1
        if sizes and fn in ("dyn", "value", "orValue"):
            return _cap(arg_cost + 1), sizes[0]
        # cel-go knows no result size for other calls: a string or list result (`getHost()`) is
        # of unknown length, so comparing it costs as much as the other side allows
        return _cap(arg_cost + 1), UNBOUNDED if self.typ(n).kind in ("string", "bytes", "list") else 1

    def _list_call(self, n: Call, sizes: list[int], arg_cost: int) -> tuple[int, int]:
        """(cost, result size) of a lists-extension call, see `_LIST_FACTOR`."""
        fn = n.fn
        factor = _LIST_FACTOR[fn]
        if fn == "lists.range":
            size = _literal_int(n.args[0] if n.args else None, UNBOUNDED)
        elif fn == "slice":
            start = _literal_int(n.args[0] if n.args else None, 0)
            end = _literal_int(n.args[1] if len(n.args) > 1 else None, sizes[0])
            size = max(end - start, 0)
        else:
            size = sizes[0]
        if fn == "flatten" and n.args:
            factor = float(_literal_int(n.args[0], UNBOUNDED))
        if fn in _LIST_SQUARED:
            size = _cap(size * size)
            if fn == "sort" and _element_kind(self.typ(n.target) if n.target is not None else ty.DYN) in (
                    "string", "bytes"):
                factor += 0.1
        return _cap(arg_cost + _LIST_CALL_BASE + _per_char(size, factor)), size

    def _builder(self, fn: str, n: Call, sizes: list[int], arg_cost: int) -> tuple[int, int] | None:
        """(cost, result size) of the string functions whose result can outgrow their input, as
        Kubernetes (``library/cost.go``) and cel-go (``checker/cost.go``) estimate them; None for
        other functions."""
        if not sizes:
            return None
        s = sizes[0]  # the receiver, or the only argument of strings.quote
        if fn in ("lowerAscii", "upperAscii", "trim", "substring"):
            return _cap(arg_cost + _per_char(s, 0.1)), s
        if fn == "strings.quote":
            return _cap(arg_cost + _per_char(s, 0.1)), _cap(2 * s + 2)  # every character escaped, two quotes
        if fn == "format":
            return _cap(arg_cost + _per_char(s, 0.1)), _cap(s + sum(sizes[1:]))
        if n.target is None:
            return None
        if fn == "split":
            limit = n.args[1] if len(n.args) > 1 else None
            parts = limit.value if isinstance(limit, Lit) and limit.kind == "int" and limit.value >= 0 else s
            return _cap(arg_cost + _per_char(s, 0.2)), int(parts)
        if fn == "replace" and len(sizes) >= 3:
            old, longest = n.args[0], sizes[2]
            shortest = len(old.value) if isinstance(old, Lit) and old.kind == "string" else 0
            if shortest == 0:  # an empty `old` matches around every character
                size = (s + 1) * longest + s
            elif longest <= shortest:  # the result is no longer than the input
                size = s
            else:
                size = math.ceil(s / shortest) * longest
            return _cap(arg_cost + _per_char(s, 0.2)), _cap(size)
        if fn == "join" and self.typ(n.target).kind in ("list", "dyn", "any"):
            size = 0 if s == 0 else UNBOUNDED  # the elements' length is unknown (see the module docstring)
            return _cap(arg_cost + _per_char(size, 0.1)), size
        return None


def _literal_int(node: Node | None, default: int) -> int:
    """A non-negative integer literal's value, else ``default`` (cel-go reads constants only)."""
    if isinstance(node, Lit) and node.kind in ("int", "uint") and int(node.value) >= 0:
        return int(node.value)
    return default


def _element_kind(t: ty.T) -> str:
    return t.params[0].kind if t.kind == "list" and t.params else "dyn"


def estimate(root: Node, types: dict[int, ty.T]) -> int:
    return Estimator(types).estimate(root)[0]
