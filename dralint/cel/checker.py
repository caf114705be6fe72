"""Static type checking of a selector against the DRA CEL environment, the way cel-go's checker does
it for the API server: identifiers and functions must be declared, overloads must match the
argument types (``dyn`` matches anything), list and map literals must be homogeneous,
comprehension ranges must be lists or maps.

Besides the types, the checker records every ``device.attributes[<domain>].<name>`` and
``device.capacity[<domain>].<name>`` lookup with a constant domain and name (also through
``cel.bind`` variables), which the attribute rule and the inventory use.

Positions: cel-go reports a call at its opening parenthesis and a field selection at its dot;
dralint points at the function or field name instead (same line, more useful), and at the
operator token for operators.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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
from dralint.cel.decls import DECLS, MACRO_LIBS, QUALIFIED_TYPE_IDENTS, TYPE_IDENTS, Overload
from dralint.cel.types import T, fmt
from dralint.suggest import closest

_OP_TEXT = {
    "_==_": "==", "_!=_": "!=", "_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">=", "@in": "in", "_+_": "+",
    "_-_": "-", "_*_": "*", "_/_": "/", "_%_": "%", "!_": "!", "-_": "-", "_&&_": "&&", "_||_": "||",
    "_?_:_": "?",
}

_LIT_TYPES = {"bool": ty.BOOL, "int": ty.INT, "uint": ty.UINT, "double": ty.DOUBLE, "string": ty.STRING,
              "bytes": ty.BYTES, "null": ty.NULL}


@dataclass
class Diag:
    """A finding about an expression: ``code`` is syntax, type, unavailable, runtime or cost."""

    code: str
    start: int
    end: int
    message: str
    #: the library or gate that would make an unavailable function work
    needs: str | None = None
    #: for "no matching overload": the function and the argument types
    fn: str | None = None
    args: tuple[T, ...] = ()


@dataclass
class AttrRef:
    """A constant-name lookup into ``device.attributes[domain]`` or ``device.capacity[domain]``."""

    kind: str  # attributes | capacity | attributes-domain | capacity-domain (then name == domain)
    domain: str
    name: str
    start: int  # span of the name (a field name, or a string literal including its quotes)
    end: int
    #: looked up through has(), `in` or `.?`: a missing name is false/empty, not an error
    guarded: bool
    #: the name is a plain field name or a quote-only string literal, so it can be rewritten in place
    rewritable: bool


@dataclass
class Device:
    """How the ``device`` variable looks in one environment."""

    fields: dict[str, T]
    #: fields that exist in some environment but not this one -> why not
    missing: dict[str, str] = field(default_factory=dict)


#: refined attribute types from driver data: (domain, name) -> type or None
AttrTypes = Callable[[str, str], "T | None"]


class Checker:
    def __init__(self, src: str, libs: frozenset[str], device: Device, lib_note: Callable[[str], str],
                 attr_types: AttrTypes | None = None) -> None:
        self.src = src
        self.libs = libs
        self.device = device
        self.lib_note = lib_note
        self.attr_types = attr_types
        self.diags: list[Diag] = []
        self.refs: list[AttrRef] = []
        self.types: dict[int, T] = {}
        self.origin: dict[int, tuple[str, ...]] = {}
        self.scopes: list[dict[str, tuple[T, tuple[str, ...] | None]]] = []
        self.m: ty.Mapping = {}
        self._fresh = 0
        #: attribute lookups whose type was refined from driver data (refined pass only)
        self.refined: set[int] = set()

    # -- helpers ---------------------------------------------------------------------------------
    def err(self, code: str, start: int, end: int, message: str, needs: str | None = None) -> None:
        self.diags.append(Diag(code, start, max(end, start + 1), message, needs))

    def lookup_local(self, name: str) -> tuple[T, tuple[str, ...] | None] | None:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def check(self, node: Node) -> T:
        t = self._check(node)
        t = ty.substitute(self.m, t)
        self.types[id(node)] = t
        return t

    def final_type(self, node: Node) -> T:
        return ty.substitute(self.m, self.types.get(id(node), ty.DYN), free_to_dyn=True)

    # -- dispatch --------------------------------------------------------------------------------
    def _check(self, node: Node) -> T:
        if isinstance(node, Lit):
            return _LIT_TYPES[node.kind]
        if isinstance(node, Ident):
            return self.check_ident(node)
        if isinstance(node, Select):
            return self.check_select(node, test_only=False)
        if isinstance(node, Index):
            return self.check_index(node)
        if isinstance(node, Call):
            return self.check_call(node)
        if isinstance(node, ListLit):
            return self.check_list(node)
        if isinstance(node, MapLit):
            return self.check_map(node)
        if isinstance(node, Has):
            return self.check_has(node)
        if isinstance(node, Bind):
            return self.check_bind(node)
        if isinstance(node, Comprehension):
            return self.check_comprehension(node)
        if isinstance(node, StructLit):
            for _, v, _ in node.fields:
                self.check(v)
            self.err("type", node.start, node.pos, f"undeclared reference to '{node.type_name}' (in container ''): "
                     "there are no message types in the DRA selector environment")
            return ty.ERROR
        return ty.DYN  # pragma: no cover - every node kind is handled above

    def check_ident(self, node: Ident) -> T:
        local = self.lookup_local(node.name)
        if local is not None:
            self.origin[id(node)] = local[1] or ()
            return local[0]
        if node.name == "device":
            self.origin[id(node)] = ("device",)
            return ty.DEVICE
        if node.name in TYPE_IDENTS and node.name != "dyn":  # `dyn` is a type only inside type declarations
            return ty.type_of(TYPE_IDENTS[node.name])
        hint = ""
        if node.start > 0 and self._src_char(node.start - 1) == "-":
            hint = (f"; `-` is subtraction in CEL, so a name like `…-{node.name}` is read as two names "
                    "(DRA attribute names are C identifiers and cannot contain `-`)")
        elif node.name in ("devcie", "devices", "Device", "dev"):
            hint = "; the variable is called `device`"
        self.err("type", node.start, node.end, f"undeclared reference to '{node.name}' (in container ''){hint}")
        return ty.ERROR

    def _src_char(self, i: int) -> str:
        return self.src[i] if 0 <= i < len(self.src) else ""

    # -- field selection ---------------------------------------------------------------------------
    def check_select(self, node: Select, test_only: bool) -> T:
        q = _qualified_name(node) if not test_only else None
        if q is not None and q in QUALIFIED_TYPE_IDENTS and self.lookup_local(q.split(".")[0]) is None:
            return ty.type_of(QUALIFIED_TYPE_IDENTS[q])
        operand_t = self.check(node.operand)
        origin = self.origin.get(id(node.operand), ())
        target, was_opt = operand_t, False
        if ty.is_optional(target):
            target, was_opt = target.params[0], True
        fend = node.field_pos + len(node.field)
        result: T
        if target.kind == "object":
            ft = self.device.fields.get(node.field)
            if ft is None:
                why = self.device.missing.get(node.field)
                if why:
                    self.err("unavailable", node.field_pos, fend, f"`device.{node.field}` {why}", needs=why)
                else:
                    close = _close(node.field, list(self.device.fields))
                    self.err("type", node.field_pos, fend, f"undefined field '{node.field}'"
                             + (f"; did you mean `{close}`?" if close else
                                f" (the device has {', '.join(f'`{f}`' for f in sorted(self.device.fields))})"))
                result = ty.ERROR
            else:
                result = ft
                if node.field == "attributes":
                    self.origin[id(node)] = ("attrs",)
                elif node.field == "capacity":
                    self.origin[id(node)] = ("caps",)
        elif target.kind == "map":
            result = target.params[1]
            self._note_map_lookup(node, origin, node.field, node.field_pos, fend, True,
                                  guarded=test_only or node.optional)
            if origin and origin[0] in ("attr-domain", "cap-domain"):
                result = self._refine(origin, node.field, result, node)
        elif target.kind == "param":
            self.m = ty.assignable(self.m, ty.DYN, target) or self.m
            result = ty.DYN
        elif ty.is_dyn(target):
            result = ty.DYN
        else:
            self.err("type", node.field_pos, fend, f"type '{fmt(target)}' does not support field selection")
            result = ty.ERROR
        if test_only:
            return ty.BOOL
        if was_opt or node.optional:
            return ty.optional_of(result)
        return result

    def _note_map_lookup(self, node: Node, origin: tuple[str, ...], key: str, start: int, end: int,
                         rewritable: bool, guarded: bool) -> None:
        if not origin:
            return
        if origin[0] == "attrs":
            self.origin[id(node)] = ("attr-domain", key)
            self.refs.append(AttrRef("attributes-domain", key, key, start, end, guarded, rewritable))
        elif origin[0] == "caps":
            self.origin[id(node)] = ("cap-domain", key)
            self.refs.append(AttrRef("capacity-domain", key, key, start, end, guarded, rewritable))
        elif origin[0] in ("attr-domain", "cap-domain"):
            kind = "attributes" if origin[0] == "attr-domain" else "capacity"
            self.refs.append(AttrRef(kind, origin[1], key, start, end, guarded, rewritable))

    def _refine(self, origin: tuple[str, ...], name: str, declared: T, node: Node) -> T:
        if self.attr_types is None or origin[0] != "attr-domain":
            return declared
        t = self.attr_types(origin[1], name)
        if t is None:
            return declared
        self.refined.add(id(node))
        return t

    def check_index(self, node: Index) -> T:
        operand_t = self.check(node.operand)
        index_t = self.check(node.index)
        origin = self.origin.get(id(node.operand), ())
        target, was_opt = operand_t, False
        if ty.is_optional(target):
            target, was_opt = target.params[0], True
        result: T
        if target.kind == "map":
            m2 = ty.assignable(self.m, target.params[0], index_t)
            if m2 is None:
                self._no_overload("_[_]", node.pos, node.pos + 1, [operand_t, index_t], False)
                return ty.ERROR
            self.m = m2
            result = target.params[1]
            if isinstance(node.index, Lit) and node.index.kind == "string":
                lit = node.index
                raw = self.src[lit.start : lit.end]
                simple = len(raw) >= 2 and raw[0] in "\"'" and raw[1:-1] == lit.value
                self._note_map_lookup(node, origin, str(lit.value), lit.start, lit.end, simple,
                                      guarded=node.optional)
                if origin and origin[0] in ("attr-domain", "cap-domain"):
                    result = self._refine(origin, str(lit.value), result, node)
        elif target.kind == "list":
            if ty.assignable(self.m, ty.INT, index_t) is None:
                self._no_overload("_[_]", node.pos, node.pos + 1, [operand_t, index_t], False)
                return ty.ERROR
            result = target.params[0]
        elif ty.is_dyn(target) or target.kind == "param":
            result = ty.DYN
        else:
            self._no_overload("_[_]", node.pos, node.pos + 1, [operand_t, index_t], False)
            return ty.ERROR
        if was_opt or node.optional:
            return ty.optional_of(result)
        return result

    def check_has(self, node: Has) -> T:
        self.check_select(node.arg, test_only=True)
        self.types[id(node.arg)] = ty.BOOL
        return ty.BOOL

    # -- calls -----------------------------------------------------------------------------------
    def check_call(self, node: Call) -> T:
        fn = node.fn
        if fn in ("_&&_", "_||_"):
            for a in node.args:
                at = self.check(a)
                if ty.assignable(self.m, ty.BOOL, at) is None:
                    self.err("type", a.start, a.end, f"expected type 'bool' but found '{fmt(at)}' "
                             f"(both sides of `{_OP_TEXT[fn]}` must be conditions)")
            return ty.BOOL
        # a namespaced function written as a member call: optional.none(), lists.range(3) ...
        if node.target is not None:
            qname = _qualified_name(node.target)
            if qname is not None and self.lookup_local(qname.split(".")[0]) is None and f"{qname}.{fn}" in DECLS:
                # rewrite to the global call it is (as cel-go does), for the cost model and the evaluator
                node.fn, node.fn_pos, node.target = f"{qname}.{fn}", node.target.start, None
                arg_types = [self.check(a) for a in node.args]
                return self.resolve(node, node.fn, arg_types, member=False)
        arg_types = []
        if node.target is not None:
            arg_types.append(self.check(node.target))
        arg_types += [self.check(a) for a in node.args]
        if fn == "@in" and len(node.args) == 2:
            origin = self.origin.get(id(node.args[1]), ())
            key = node.args[0]
            if origin and origin[0] in ("attr-domain", "cap-domain") and isinstance(key, Lit) and key.kind == "string":
                raw = self.src[key.start : key.end]
                self._note_map_lookup(node.args[1], origin, str(key.value), key.start, key.end,
                                      len(raw) >= 2 and raw[1:-1] == key.value, guarded=True)
        return self.resolve(node, fn, arg_types, member=node.target is not None)

    def resolve(self, node: Call, name: str, arg_types: list[T], member: bool, name_start: int | None = None) -> T:
        if name in _OP_TEXT:
            start, end = node.pos, node.pos + len(_OP_TEXT[name])
        else:
            start = node.fn_pos if name_start is None else name_start
            end = node.fn_pos + len(node.fn)
        decls = DECLS.get(name)
        if not decls:
            self.err("type", start, end, f"undeclared reference to '{name}' (in container '')"
                     + _unknown_fn_hint(name, member))
            return ty.ERROR
        shaped = [o for o in decls if o.member == member and len(o.params) == len(arg_types)]
        enabled = [o for o in shaped if o.lib in self.libs]
        res = self._match(enabled, arg_types)
        if res is not None:
            return res
        disabled = [o for o in shaped if o.lib not in self.libs]
        dres = self._match(disabled, arg_types)
        if dres is not None or not any(o.lib in self.libs for o in decls):
            lib = (disabled[0] if disabled else decls[0]).lib
            if dres is not None:
                for o in disabled:
                    if self._match([o], arg_types) is not None:
                        lib = o.lib
                        break
            note = self.lib_note(lib)
            self.err("unavailable", start, end, f"`{_display(name, member)}` {note}", needs=note)
            return dres if dres is not None else ty.ERROR
        if not shaped and any(o.member != member for o in decls):
            style = "a method (`x.{0}(...)`)" if not member else "a function (`{0}(x)`)"
            self.err("type", start, end, f"found no matching overload for '{name}' applied to "
                     f"'{_sig([ty.substitute(self.m, t, True) for t in arg_types], member)}': `{name}` is "
                     + style.format(name.split(".")[-1]))
            return ty.ERROR
        self._no_overload(name, start, end, arg_types, member)
        return ty.ERROR

    def _match(self, overloads: list[Overload], arg_types: list[T]) -> T | None:
        result: T | None = None
        for o in overloads:
            params, res_t = self._instantiate(o)
            cur: ty.Mapping | None = self.m
            for p, a in zip(params, arg_types, strict=True):
                cur = ty.assignable(cur, p, a) if cur is not None else None
                if cur is None:
                    break
            if cur is None:
                continue
            self.m = cur
            r = ty.substitute(cur, res_t)
            if result is None:
                result = r
            elif not ty.is_dyn(result) and r != result:
                result = ty.DYN
        return result

    def _instantiate(self, o: Overload) -> tuple[tuple[T, ...], T]:
        self._fresh += 1
        sub = {"A": ty.param(f"_A{self._fresh}"), "B": ty.param(f"_B{self._fresh}")}
        return tuple(ty.substitute(sub, p) for p in o.params), ty.substitute(sub, o.result)

    def _no_overload(self, name: str, start: int, end: int, arg_types: list[T], member: bool) -> None:
        shown = [ty.substitute(self.m, t, True) for t in arg_types]
        self.err("type", start, end, f"found no matching overload for '{name}' applied to '{_sig(shown, member)}'"
                 + _overload_hint(name, shown))
        self.diags[-1].fn = name
        self.diags[-1].args = tuple(shown)

    # -- literals --------------------------------------------------------------------------------
    def check_list(self, node: ListLit) -> T:
        elem: T | None = None
        for i, e in enumerate(node.elems):
            et = self.check(e)
            if i in node.optional:
                if ty.is_optional(et):
                    et = et.params[0]
                elif not ty.is_dyn(et):
                    self.err("type", e.start, e.end, f"expected type '{fmt(ty.optional_of(et))}' but found "
                             f"'{fmt(et)}' (`?` in a list literal needs an optional value)")
            elem = self._join(e, elem, et)
        return ty.list_of(elem if elem is not None else self._new_param())

    def check_map(self, node: MapLit) -> T:
        kt: T | None = None
        vt: T | None = None
        for k, v, opt in node.entries:
            kt = self._join(k, kt, self.check(k))
            if kt is not None and kt.kind not in ("string", "int", "uint", "bool", "dyn", "any", "error", "param"):
                self.err("type", k.start, k.end, f"map keys must be string, int, uint or bool, not '{fmt(kt)}'")
            val_t = self.check(v)
            if opt:
                if ty.is_optional(val_t):
                    val_t = val_t.params[0]
                elif not ty.is_dyn(val_t):
                    self.err("type", v.start, v.end, f"expected type '{fmt(ty.optional_of(val_t))}' but found "
                             f"'{fmt(val_t)}'")
            vt = self._join(v, vt, val_t)
        if kt is None or vt is None:
            return ty.map_of(self._new_param(), self._new_param())
        return ty.map_of(kt, vt)

    def _join(self, e: Node, prev: T | None, cur: T) -> T:
        if prev is None:
            return cur
        m2 = ty.assignable(self.m, prev, cur)
        if m2 is not None:
            self.m = m2
            return ty.most_general(prev, cur)
        self.err("type", e.start, e.end, f"expected type '{fmt(prev)}' but found '{fmt(cur)}' (list and map "
                 "literals must hold one type; wrap values in dyn() to mix types)")
        return ty.ERROR

    def _new_param(self) -> T:
        self._fresh += 1
        return ty.param(f"_var{self._fresh}")

    # -- macros ----------------------------------------------------------------------------------
    def _macro_available(self, macro: str, name: str, start: int, end: int) -> None:
        lib = MACRO_LIBS.get(macro, "standard")
        if lib not in self.libs:
            note = self.lib_note(lib)
            what = "`cel.bind()`" if macro == "bind" else f"the `{name}()` macro" + (
                " with two variables" if macro.endswith("2") or macro.startswith("transform") else "")
            self.err("unavailable", start, end, f"{what} {note}", needs=note)

    def check_bind(self, node: Bind) -> T:
        self._macro_available("bind", "cel.bind", node.start, node.pos)
        init_t = self.check(node.init)
        self.scopes.append({node.var: (init_t, self.origin.get(id(node.init)))})
        try:
            return self.check(node.body)
        finally:
            self.scopes.pop()

    def check_comprehension(self, node: Comprehension) -> T:
        name_start = node.pos - len(node.name)
        self._macro_available(node.macro, node.name, name_start, node.pos)
        range_t = self.check(node.target)
        rt = ty.resolve(self.m, range_t)
        macro = node.macro
        if macro in ("optMap", "optFlatMap"):
            if ty.is_optional(rt):
                vt = rt.params[0]
            elif ty.is_dyn(rt) or rt.kind == "param":
                vt = ty.DYN
            else:
                self.err("type", node.target.start, node.target.end, f"{node.name}() needs an optional value, "
                         f"not '{fmt(rt)}'")
                vt = ty.ERROR
            self.scopes.append({node.var: (vt, None)})
            try:
                body = self.check(node.args[0])
            finally:
                self.scopes.pop()
            if macro == "optMap":
                return ty.optional_of(body)
            if ty.is_optional(body) or ty.is_dyn(body):
                return body if ty.is_optional(body) else ty.optional_of(ty.DYN)
            self.err("type", node.args[0].start, node.args[0].end,
                     f"optFlatMap() must return an optional value, not '{fmt(body)}'")
            return ty.ERROR
        two = node.var2 is not None
        var_t: T
        var2_t: T = ty.DYN
        key_t: T = ty.DYN
        elem_t: T = ty.DYN
        if rt.kind == "list":
            elem_t = rt.params[0]
            key_t = ty.INT
            var_t, var2_t = (ty.INT, elem_t) if two else (elem_t, ty.DYN)
        elif rt.kind == "map":
            key_t, elem_t = rt.params
            var_t, var2_t = (key_t, elem_t) if two else (key_t, ty.DYN)
            elem_t = key_t if not two else elem_t
        elif ty.is_dyn(rt) or rt.kind == "param":
            var_t = ty.DYN
        else:
            self.err("type", node.target.start, node.target.end, f"expression of type '{fmt(rt)}' cannot be range "
                     "of a comprehension (must be list, map, or dynamic)")
            var_t = var2_t = ty.ERROR
        if macro == "sortBy" and rt.kind == "map":
            self.err("type", node.target.start, node.target.end, "sortBy() sorts lists, not maps")
        scope: dict[str, tuple[T, tuple[str, ...] | None]] = {node.var: (var_t, None)}
        if two and node.var2 is not None:
            scope[node.var2] = (var2_t, None)
        self.scopes.append(scope)
        try:
            arg_types = [self.check(a) for a in node.args]
        finally:
            self.scopes.pop()
        if macro in ("all", "exists", "exists_one", "all2", "exists2", "existsOne2", "filter"):
            self._expect_bool(node.args[0], arg_types[0], node.name)
        elif macro == "map_filter" or (macro.startswith("transform") and len(node.args) == 2):
            self._expect_bool(node.args[0], arg_types[0], node.name + " (filter)")
        if macro in ("all", "exists", "exists_one", "all2", "exists2", "existsOne2"):
            return ty.BOOL
        if macro == "map" or macro == "map_filter" or macro == "transformList":
            return ty.list_of(arg_types[-1])
        if macro == "filter":
            if rt.kind == "list":
                return ty.list_of(rt.params[0])
            if rt.kind == "map":
                return ty.list_of(rt.params[0])
            return ty.list_of(ty.DYN)
        if macro == "transformMap":
            return ty.map_of(key_t if rt.kind in ("list", "map") else ty.DYN, arg_types[-1])
        if macro == "transformMapEntry":
            last = ty.resolve(self.m, arg_types[-1])
            if last.kind == "map":
                return last
            if not ty.is_dyn(last):
                self.err("type", node.args[-1].start, node.args[-1].end,
                         f"transformMapEntry() must return a map entry, not '{fmt(last)}'")
            return ty.map_of(ty.DYN, ty.DYN)
        if macro == "sortBy":
            kt = ty.resolve(self.m, arg_types[0])
            if not (ty.is_dyn(kt) or kt.kind in ty.COMPARABLE or kt.kind == "param"):
                self.err("type", node.args[0].start, node.args[0].end,
                         f"sortBy() keys must be comparable (int, uint, double, string, bool, bytes, timestamp or "
                         f"duration), not '{fmt(kt)}'")
            return rt if rt.kind == "list" else ty.list_of(ty.DYN)
        return ty.DYN  # pragma: no cover

    def _expect_bool(self, e: Node, t: T, what: str) -> None:
        if ty.assignable(self.m, ty.BOOL, t) is None:
            self.err("type", e.start, e.end, f"expected type 'bool' but found '{fmt(t)}' (the condition of "
                     f"{what}() must be a bool)")


def _qualified_name(n: Node) -> str | None:
    parts: list[str] = []
    while isinstance(n, Select) and not n.optional:
        parts.append(n.field)
        n = n.operand
    if isinstance(n, Ident):
        parts.append(n.name)
        return ".".join(reversed(parts))
    return None


def _sig(args: list[T], member: bool) -> str:
    if member and args:
        return f"{fmt(args[0])}.({', '.join(fmt(a) for a in args[1:])})"
    return f"({', '.join(fmt(a) for a in args)})"


def _display(name: str, member: bool) -> str:
    return f".{name}()" if member else f"{name}()"


def _close(word: str, options: list[str]) -> str | None:
    got = closest(word, options, cutoff=0.6)
    if got:
        return got
    low = {o.lower(): o for o in options}
    return low.get(word.lower())


def _overload_hint(name: str, args: list[T]) -> str:
    kinds = [a.name if a.kind == "opaque" else a.kind for a in args]
    if name in ("_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_") and len(args) == 2:
        if "kubernetes.Quantity" in kinds:
            other = kinds[1] if kinds[0] == "kubernetes.Quantity" else kinds[0]
            if other == "string":
                return ("; a capacity is a Quantity, not a string: write "
                        "`….memory.compareTo(quantity(\"20Gi\")) >= 0` or `.isGreaterThan(quantity(\"20Gi\"))`")
            if other in ("int", "uint", "double"):
                return ("; a Quantity cannot be compared with a number: convert with `.asInteger()` or compare "
                        "with `quantity(\"…\")` through `compareTo`")
            return "; Quantities are compared with `compareTo`, `isGreaterThan` or `isLessThan`"
        if "kubernetes.Semver" in kinds:
            return ("; versions are compared with `compareTo`, `isGreaterThan` or `isLessThan` against "
                    "`semver(\"1.2.3\")`")
        if kinds[0] == "map" or kinds[1] == "map":
            return ("; `device.attributes` and `device.capacity` are keyed by domain first: "
                    "`device.attributes[\"gpu.nvidia.com\"].productName`")
    return ""


def _unknown_fn_hint(name: str, member: bool) -> str:
    known = {n.lower(): n for n in DECLS if not n.startswith(("_", "@", "!", "-"))}
    if name.lower() in known and known[name.lower()] != name:
        return f"; did you mean `{known[name.lower()]}`?"
    got = closest(name, [n for n in DECLS if n[0].isalpha()], cutoff=0.8)
    return f"; did you mean `{got}`?" if got else ""
