"""Evaluation: a checked syntax tree is turned once into nested Python closures, which then run per
device without re-walking the tree.

CEL semantics kept here: ``&&``/``||`` are commutative with respect to errors (``false && error`` and
``error && false`` are both false), ``all()``/``exists()`` let a definite answer absorb errors,
an unknown attribute domain reads as an empty map while an unknown attribute name is a
"no such key" error, and every evaluation runs under a cost budget (the 1,000,000 units Kubernetes
enforces): comprehension iterations, string work and every string, list or map the evaluation
builds are charged before they are built (``runtime.CALL_COST`` for functions, here for operators,
literals and comprehension results), so a hostile selector stops with the cost-limit error
instead of hanging the run or exhausting memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dralint.cel import runtime as rt
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
from dralint.cel.decls import QUALIFIED_TYPE_IDENTS, TYPE_IDENTS
from dralint.cel.values import CelError, Optional, TypeValue, UInt

DEFAULT_COST_LIMIT = 1_000_000
#: cel-go's base costs for creating a list or a map (on top of one unit per element, for memory)
LIST_CREATE_COST = 10
MAP_CREATE_COST = 30


class Activation:
    __slots__ = ("cost", "limit", "vars")

    def __init__(self, variables: dict[str, Any], limit: int = DEFAULT_COST_LIMIT) -> None:
        self.vars = variables
        self.cost = 0
        self.limit = limit

    def spend(self, n: int) -> None:
        self.cost += n
        if self.cost > self.limit:
            raise CelError("operation cancelled: actual cost limit exceeded")


Fn = Callable[[Activation], Any]


def _qualified(n: Node) -> str | None:
    parts: list[str] = []
    while isinstance(n, Select) and not n.optional:
        parts.append(n.field)
        n = n.operand
    if isinstance(n, Ident):
        parts.append(n.name)
        return ".".join(reversed(parts))
    return None


def _wrap_call(name: str, f: Callable[..., Any], args: list[Any]) -> Any:
    try:
        return f(*args)
    except CelError:
        raise
    except (TypeError, ValueError, OverflowError, ArithmeticError, AttributeError, IndexError, KeyError) as e:
        raise CelError(f"no such overload or bad argument for {name}: {e}") from None


class Compiler:
    def __init__(self) -> None:
        self.locals: list[set[str]] = []

    def is_local(self, name: str) -> bool:
        return any(name in s for s in self.locals)

    def compile(self, n: Node) -> Fn:
        if isinstance(n, Lit):
            v = n.value
            return lambda a: v
        if isinstance(n, Ident):
            return self.ident(n)
        if isinstance(n, Select):
            return self.select(n)
        if isinstance(n, Index):
            return self.index(n)
        if isinstance(n, Has):
            return self.has(n)
        if isinstance(n, Call):
            return self.call(n)
        if isinstance(n, ListLit):
            return self.list_lit(n)
        if isinstance(n, MapLit):
            return self.map_lit(n)
        if isinstance(n, Bind):
            return self.bind(n)
        if isinstance(n, Comprehension):
            return self.comprehension(n)
        if isinstance(n, StructLit):
            name = n.type_name

            def no_struct(a: Activation) -> Any:
                raise CelError(f"unknown type {name}")

            return no_struct
        raise CelError(f"cannot evaluate {type(n).__name__}")  # pragma: no cover

    # -- variables and selection -------------------------------------------------------------------
    def ident(self, n: Ident) -> Fn:
        name = n.name
        if not self.is_local(name) and name not in ("device", "dyn") and name in TYPE_IDENTS:
            tv = TypeValue({"null_type": "null_type"}.get(name, name))
            return lambda a: tv

        def get(a: Activation) -> Any:
            try:
                return a.vars[name]
            except KeyError:
                raise CelError(f"no such attribute: {name}") from None

        return get

    def select(self, n: Select) -> Fn:
        field = n.field
        q = _qualified(n)
        if q is not None and q in QUALIFIED_TYPE_IDENTS and not self.is_local(q.split(".")[0]):
            tv = TypeValue(q)
            return lambda a: tv
        # fast path for the shape almost every selector has: device.attributes["d"].name
        op = n.operand
        if (not n.optional and isinstance(op, Index) and not op.optional and isinstance(op.index, Lit)
                and op.index.kind == "string" and isinstance(op.operand, Select) and not op.operand.optional
                and op.operand.field in ("attributes", "capacity") and isinstance(op.operand.operand, Ident)
                and op.operand.operand.name == "device" and not self.is_local("device")):
            which, domain = op.operand.field, op.index.value

            def device_lookup(a: Activation) -> Any:
                dom = a.vars["device"][which].get(domain)
                if dom is None or field not in dom:
                    raise CelError(f"no such key: {field}")
                return dom[field]

            return device_lookup
        operand = self.compile(op)
        if n.optional:
            def opt_select(a: Activation) -> Any:
                v = operand(a)
                if type(v) is Optional:
                    if not v.has_value:
                        return v
                    v = v.value
                if isinstance(v, dict):
                    if field in v:
                        return Optional(v[field])
                    return Optional.NONE
                raise rt.no_overload("_?._", v)

            return opt_select

        def sel(a: Activation) -> Any:
            v = operand(a)
            if type(v) is Optional:
                if not v.has_value:
                    return v
                if isinstance(v.value, dict):
                    return Optional(v.value[field]) if field in v.value else Optional.NONE
                return Optional(rt.select(v.value, field))  # selecting on a non-map is an error, as in cel-go
            return rt.select(v, field)

        return sel

    def index(self, n: Index) -> Fn:
        operand = self.compile(n.operand)
        key = self.compile(n.index)
        if n.optional:
            def opt_index(a: Activation) -> Any:
                v = operand(a)
                k = key(a)
                if type(v) is Optional:
                    if not v.has_value:
                        return v
                    v = v.value
                try:
                    return Optional(rt.index(v, k))
                except CelError:
                    if isinstance(v, (dict, list)):
                        return Optional.NONE
                    raise

            return opt_index

        def idx(a: Activation) -> Any:
            v = operand(a)
            k = key(a)
            if type(v) is Optional:
                if not v.has_value:
                    return v
                try:
                    return Optional(rt.index(v.value, k))
                except CelError:
                    return Optional.NONE
            return rt.index(v, k)

        return idx

    def has(self, n: Has) -> Fn:
        operand = self.compile(n.arg.operand)
        field = n.arg.field

        def has(a: Activation) -> bool:
            return rt.has_field(operand(a), field)

        return has

    # -- calls -------------------------------------------------------------------------------------
    def call(self, n: Call) -> Fn:
        fn = n.fn
        if fn == "_&&_":
            return self.logical(n, False)
        if fn == "_||_":
            return self.logical(n, True)
        if fn in ("_<_", "_<=_", "_>_", "_>=_"):
            return self.relation(n)
        operator = _OPERATORS.get(fn)
        if operator is not None:
            return operator(self, n)
        return self.library_call(n)

    def conditional(self, n: Call) -> Fn:
        c, t, f = (self.compile(x) for x in n.args)

        def cond(a: Activation) -> Any:
            v = c(a)
            if v is True:
                return t(a)
            if v is False:
                return f(a)
            raise rt.no_overload("_?_:_", v)

        return cond

    def negation(self, n: Call) -> Fn:
        x = self.compile(n.args[0])

        def not_(a: Activation) -> bool:
            v = x(a)
            if type(v) is not bool:
                raise rt.no_overload("!_", v)
            return not v

        return not_

    def equality(self, n: Call) -> Fn:
        left, right = self.compile(n.args[0]), self.compile(n.args[1])
        if n.fn == "_==_":
            def eq(a: Activation) -> bool:
                x, y = left(a), right(a)
                if type(x) is type(y) and type(x) is str:
                    a.spend(rt.chars(min(len(x), len(y))))
                    return x == y  # type: ignore[no-any-return]
                if isinstance(x, _SIZED) and isinstance(y, _SIZED):
                    a.spend(_compare_cost(x, y))
                return rt.eq(x, y)

            return eq

        def ne(a: Activation) -> bool:
            x, y = left(a), right(a)
            if isinstance(x, _SIZED) and isinstance(y, _SIZED):
                a.spend(_compare_cost(x, y))
            return not rt.eq(x, y)

        return ne

    def arithmetic(self, n: Call) -> Fn:
        fn = n.fn
        if fn == "-_":
            x = self.compile(n.args[0])
            return lambda a: rt.neg(x(a))
        left, right = self.compile(n.args[0]), self.compile(n.args[1])
        if fn == "_+_":
            def plus(a: Activation) -> Any:
                x, y = left(a), right(a)
                # charged before the result exists: no runaway doubling
                if type(x) in (str, bytes) and type(y) is type(x):
                    a.spend(rt.chars(len(x) + len(y)))
                elif isinstance(x, list) and isinstance(y, list):
                    a.spend(len(x) + len(y))  # one unit per element of the new list
                return rt.add(x, y)

            return plus
        op = {"_-_": rt.sub, "_*_": rt.mul, "_/_": rt.div, "_%_": rt.mod}[fn]
        return lambda a: op(left(a), right(a))

    def membership(self, n: Call) -> Fn:
        left, right = self.compile(n.args[0]), self.compile(n.args[1])

        def in_(a: Activation) -> bool:
            v, container = left(a), right(a)
            if isinstance(container, list):
                a.spend(len(container))  # cel-go: one unit per element searched
            return rt.contains_value(container, v)

        return in_

    def library_call(self, n: Call) -> Fn:
        name = n.fn
        parts: list[Fn] = []
        if n.target is not None:
            q = _qualified(n.target)
            if q is not None and not self.is_local(q.split(".")[0]) and f"{q}.{n.fn}" in rt.FUNCS:
                name = f"{q}.{n.fn}"
            else:
                parts.append(self.compile(n.target))
        parts += [self.compile(x) for x in n.args]
        impl = rt.FUNCS.get(name)
        if impl is None:
            def missing(a: Activation) -> Any:
                raise CelError(f"no such function: {name}")

            return missing
        fimpl: Callable[..., Any] = impl
        cost = rt.CALL_COST.get(name)
        if cost is not None:
            fcost: Callable[..., int] = cost

            def charged(a: Activation) -> Any:
                args = [p(a) for p in parts]
                a.spend(_wrap_call(name, fcost, [a.limit - a.cost, *args]))  # before the result is built
                return _wrap_call(name, fimpl, args)

            return charged
        if len(parts) == 1:
            p0 = parts[0]

            def call1(a: Activation) -> Any:
                return _wrap_call(name, fimpl, [p0(a)])

            return call1

        def calln(a: Activation) -> Any:
            return _wrap_call(name, fimpl, [p(a) for p in parts])

        return calln

    def relation(self, n: Call) -> Fn:
        left, right = self.compile(n.args[0]), self.compile(n.args[1])
        fn = n.fn
        if fn == "_<_":
            def test(c: int) -> bool:
                return c < 0
        elif fn == "_<=_":
            def test(c: int) -> bool:
                return c <= 0
        elif fn == "_>_":
            def test(c: int) -> bool:
                return c > 0
        else:
            def test(c: int) -> bool:
                return c >= 0

        def rel(a: Activation) -> bool:
            x, y = left(a), right(a)
            if isinstance(x, _SIZED) and isinstance(y, _SIZED):
                a.spend(_compare_cost(x, y))
            return test(rt.compare(x, y, fn))

        return rel

    def logical(self, n: Call, is_or: bool) -> Fn:
        left, right = self.compile(n.args[0]), self.compile(n.args[1])
        stop = is_or  # the value that decides the result

        def logic(a: Activation) -> bool:
            err: CelError | None = None
            try:
                v = left(a)
                if v is stop:
                    return bool(stop)
                if type(v) is not bool:
                    err = rt.no_overload("_||_" if is_or else "_&&_", v)
            except CelError as e:
                err = e
            w = right(a)
            if w is stop:
                return bool(stop)
            if type(w) is not bool:
                raise rt.no_overload("_||_" if is_or else "_&&_", w)
            if err is not None:
                raise err
            return not stop

        return logic

    # -- literals ----------------------------------------------------------------------------------
    def list_lit(self, n: ListLit) -> Fn:
        elems = [self.compile(e) for e in n.elems]
        optional = n.optional
        cost = LIST_CREATE_COST + len(elems)
        if not optional:
            def build_list(a: Activation) -> list[Any]:
                a.spend(cost)
                return [e(a) for e in elems]

            return build_list

        def build(a: Activation) -> list[Any]:
            a.spend(cost)
            out = []
            for i, e in enumerate(elems):
                v = e(a)
                if i in optional:
                    if type(v) is not Optional:
                        raise rt.no_overload("optional list element", v)
                    if v.has_value:
                        out.append(v.value)
                else:
                    out.append(v)
            return out

        return build

    def map_lit(self, n: MapLit) -> Fn:
        entries = [(self.compile(k), self.compile(v), opt) for k, v, opt in n.entries]
        cost = MAP_CREATE_COST + len(entries)

        def build(a: Activation) -> dict[Any, Any]:
            a.spend(cost)
            out: dict[Any, Any] = {}
            seen: set[tuple[str, Any]] = set()
            for k, v, opt in entries:
                key = k(a)
                if type(key) not in (str, int, UInt, bool):
                    raise CelError(f"unsupported key type: {rt.type_name(key)}")
                # CEL keys 1 and 1u are the same key, true and 1 are not: compare (kind, value) in a set,
                # not every key with every other one
                ident = ("b", key) if type(key) is bool else ("s", key) if type(key) is str else ("n", int(key))
                if ident in seen:
                    raise CelError(f"Failed with repeated key: {key}")
                seen.add(ident)
                val = v(a)
                if opt:
                    if type(val) is not Optional:
                        raise rt.no_overload("optional map entry", val)
                    if not val.has_value:
                        continue
                    val = val.value
                out[key] = val
            return out

        return build

    # -- macros ------------------------------------------------------------------------------------
    def bind(self, n: Bind) -> Fn:
        init = self.compile(n.init)
        self.locals.append({n.var})
        try:
            body = self.compile(n.body)
        finally:
            self.locals.pop()
        var = n.var

        def run(a: Activation) -> Any:
            saved = a.vars.get(var, _UNSET)
            a.vars[var] = init(a)
            try:
                return body(a)
            finally:
                if saved is _UNSET:
                    a.vars.pop(var, None)
                else:
                    a.vars[var] = saved

        return run

    def comprehension(self, n: Comprehension) -> Fn:
        target = self.compile(n.target)
        names = {n.var} | ({n.var2} if n.var2 else set())
        self.locals.append(names)
        try:
            args = [self.compile(x) for x in n.args]
        finally:
            self.locals.pop()
        macro, var, var2 = n.macro, n.var, n.var2
        return _make_comprehension(macro, target, args, var, var2)


class _Unset:
    pass


_UNSET = _Unset()


#: values whose comparison takes time in their size (scalars compare in constant time and are not charged)
_SIZED = (str, bytes, list, dict)


def _compare_cost(x: Any, y: Any) -> int:
    """cel-go's cost of ``==``, ``!=`` and the orderings: 0.1 per element or character of the smaller side."""
    return rt.chars(min(len(x), len(y)))



#: operators compiled by one method of `Compiler` each (`&&`, `||` and the orderings have their own)
_OPERATORS: dict[str, Callable[[Compiler, Call], Fn]] = {
    "_?_:_": Compiler.conditional,
    "!_": Compiler.negation,
    **dict.fromkeys(("_==_", "_!=_"), Compiler.equality),
    **dict.fromkeys(("_+_", "_-_", "_*_", "_/_", "_%_", "-_"), Compiler.arithmetic),
    "@in": Compiler.membership,
}

def _items(v: Any, two: bool) -> Iterator[tuple[Any, Any]]:
    """The (variable, second variable) pairs of a range, produced as the loop goes (not copied first)."""
    if isinstance(v, list):
        return enumerate(v) if two else ((x, None) for x in v)
    if isinstance(v, dict):
        return iter(v.items()) if two else ((k, None) for k in v)
    raise CelError(f"expression of type '{rt.type_name(v)}' cannot be range of a comprehension")


class _Loop:
    """What every comprehension shares: evaluate the range, bind the loop variables while the body
    runs, and restore whatever they shadowed afterwards (nested comprehensions reuse names)."""

    def __init__(self, target: Fn, var: str, var2: str | None) -> None:
        self.target, self.var, self.var2 = target, var, var2

    def run(self, a: Activation, fn: Callable[[Iterable[tuple[Any, Any]], dict[str, Any]], Any]) -> Any:
        rng = self.target(a)
        vars_ = a.vars
        saved = {k: vars_.get(k, _UNSET) for k in (self.var, self.var2) if k}
        try:
            return fn(_items(rng, self.var2 is not None), vars_)
        finally:
            for k, v in saved.items():
                if v is _UNSET:
                    vars_.pop(k, None)
                else:
                    vars_[k] = v

    def each(self, a: Activation, items: Iterable[tuple[Any, Any]], vars_: dict[str, Any]
             ) -> Iterator[tuple[Any, Any]]:
        for x, y in items:
            a.spend(1)
            vars_[self.var] = x
            if self.var2 is not None:
                vars_[self.var2] = y
            yield x, y


def _keep(macro: str, filt: Fn | None, a: Activation) -> bool:
    """A filter's verdict for the current element (no filter keeps everything; a non-bool is an error)."""
    if filt is None:
        return True
    keep = filt(a)
    if type(keep) is not bool:
        raise rt.no_overload(macro, keep)
    return keep


def _quantifier(macro: str, args: list[Fn], lp: _Loop) -> Fn:
    want = macro.startswith("exists")
    pred = args[0]

    def quant(a: Activation) -> bool:
        def run(items: Iterable[tuple[Any, Any]], vars_: dict[str, Any]) -> bool:
            # an error is raised only when no element decides the result (CEL's commutative && / ||)
            err: CelError | None = None
            for _ in lp.each(a, items, vars_):
                try:
                    v = pred(a)
                except CelError as e:
                    err = err or e
                    continue
                if v is want:
                    return bool(want)
                if type(v) is not bool:
                    err = err or rt.no_overload(macro, v)
            if err is not None:
                raise err
            return not want

        return lp.run(a, run)  # type: ignore[no-any-return]

    return quant


def _exists_one(macro: str, args: list[Fn], lp: _Loop) -> Fn:
    pred = args[0]

    def one(a: Activation) -> bool:
        def run(items: Iterable[tuple[Any, Any]], vars_: dict[str, Any]) -> bool:
            count = 0
            for _ in lp.each(a, items, vars_):
                v = pred(a)
                if type(v) is not bool:
                    raise rt.no_overload(macro, v)
                count += v
            return count == 1

        return lp.run(a, run)  # type: ignore[no-any-return]

    return one


def _mapper(macro: str, args: list[Fn], lp: _Loop) -> Fn:
    filt = args[0] if (macro == "map_filter" or (macro == "transformList" and len(args) == 2)
                       or macro == "filter") else None
    expr = args[-1] if macro != "filter" else None

    def mapper(a: Activation) -> list[Any]:
        def run(items: Iterable[tuple[Any, Any]], vars_: dict[str, Any]) -> list[Any]:
            out = []
            for x, _ in lp.each(a, items, vars_):
                if not _keep(macro, filt, a):
                    continue
                a.spend(1)  # the result grows by one element (cel-go appends to its accumulator too)
                out.append(expr(a) if expr is not None else x)
            return out

        return lp.run(a, run)  # type: ignore[no-any-return]

    return mapper


def _merge_entries(a: Activation, macro: str, v: Any, out: dict[Any, Any]) -> None:
    """transformMapEntry: the body's one-entry map joins the result; a key seen before is an error."""
    if not isinstance(v, dict):
        raise rt.no_overload(macro, v)
    a.spend(len(v))
    for k, val in v.items():
        if k in out:
            raise CelError(f"insert failed: key {k} already exists")
        out[k] = val


def _transform_map(macro: str, args: list[Fn], lp: _Loop) -> Fn:
    filt = args[0] if len(args) == 2 else None
    body = args[-1]

    def tmap(a: Activation) -> dict[Any, Any]:
        def run(items: Iterable[tuple[Any, Any]], vars_: dict[str, Any]) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for x, _ in lp.each(a, items, vars_):
                if not _keep(macro, filt, a):
                    continue
                v = body(a)
                if macro == "transformMap":
                    a.spend(1)  # one entry more in the result
                    out[x] = v
                else:
                    _merge_entries(a, macro, v, out)
            return out

        return lp.run(a, run)  # type: ignore[no-any-return]

    return tmap


def _sort_by(macro: str, args: list[Fn], lp: _Loop) -> Fn:
    key = args[0]

    def sort_by(a: Activation) -> list[Any]:
        def run(items: Iterable[tuple[Any, Any]], vars_: dict[str, Any]) -> list[Any]:
            keyed = [(key(a), x) for x, _ in lp.each(a, items, vars_)]
            a.spend(rt.sort_cost(0, keyed))
            import functools

            def cmp(p: tuple[Any, Any], q: tuple[Any, Any]) -> int:
                return rt.compare(p[0], q[0], "sortBy")

            return [x for _, x in sorted(keyed, key=functools.cmp_to_key(cmp))]

        return lp.run(a, run)  # type: ignore[no-any-return]

    return sort_by


def _opt_map(macro: str, args: list[Fn], lp: _Loop) -> Fn:
    opt_body = args[0]
    var = lp.var

    def opt(a: Activation) -> Any:
        o = lp.target(a)
        if type(o) is not Optional:
            raise rt.no_overload(macro, o)
        if not o.has_value:
            return o
        saved = a.vars.get(var, _UNSET)
        a.vars[var] = o.value
        try:
            v = opt_body(a)
        finally:
            if saved is _UNSET:
                a.vars.pop(var, None)
            else:
                a.vars[var] = saved
        if macro == "optMap":
            return Optional(v)
        if type(v) is not Optional:
            raise rt.no_overload(macro, v)
        return v

    return opt


_COMPREHENSIONS: dict[str, Callable[[str, list[Fn], _Loop], Fn]] = {
    **dict.fromkeys(("all", "all2", "exists", "exists2"), _quantifier),
    **dict.fromkeys(("exists_one", "existsOne2"), _exists_one),
    **dict.fromkeys(("map", "map_filter", "transformList", "filter"), _mapper),
    **dict.fromkeys(("transformMap", "transformMapEntry"), _transform_map),
    "sortBy": _sort_by,
    **dict.fromkeys(("optMap", "optFlatMap"), _opt_map),
}


def _make_comprehension(macro: str, target: Fn, args: list[Fn], var: str, var2: str | None) -> Fn:
    make = _COMPREHENSIONS.get(macro)
    if make is None:  # pragma: no cover - the parser only produces the macros above
        raise CelError(f"unknown macro {macro}")
    return make(macro, args, _Loop(target, var, var2))


def compile_program(root: Node) -> Fn:
    return Compiler().compile(root)
