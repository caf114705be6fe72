"""The CEL syntax tree.

Every node records ``pos``: the character offset (in code points, as cel-go counts) at which
cel-go reports problems with that node — the operator token for operators, the opening
parenthesis for calls and macros, the dot for field selections, the first character otherwise —
and ``start``/``end``: the extent of the whole subexpression, for underlining.

Macros (``has``, ``all``/``exists``/``exists_one``/``map``/``filter``, the two-variable forms,
``cel.bind``, ``optMap``/``optFlatMap``, ``sortBy``) are kept as `Comprehension`/`Has`/`Bind`
nodes instead of cel-go's expanded loop form: the checker, the cost estimate and the evaluator all
work on them directly.
"""

from __future__ import annotations

from typing import Any


class Node:
    __slots__ = ("end", "pos", "start")

    def __init__(self, pos: int, start: int, end: int) -> None:
        self.pos = pos
        self.start = start
        self.end = end

    def children(self) -> list[Node]:
        return []


class Lit(Node):
    __slots__ = ("kind", "value")

    def __init__(self, pos: int, start: int, end: int, value: Any, kind: str) -> None:
        super().__init__(pos, start, end)
        self.value = value
        self.kind = kind  # bool int uint double string bytes null


class Ident(Node):
    __slots__ = ("name",)

    def __init__(self, pos: int, start: int, end: int, name: str) -> None:
        super().__init__(pos, start, end)
        self.name = name


class Select(Node):
    """``operand.field`` (``optional``: ``operand.?field``); ``pos`` is the dot."""

    __slots__ = ("field", "field_pos", "operand", "optional")

    def __init__(self, pos: int, start: int, end: int, operand: Node, field: str, field_pos: int,
                 optional: bool = False) -> None:
        super().__init__(pos, start, end)
        self.operand = operand
        self.field = field
        self.field_pos = field_pos
        self.optional = optional

    def children(self) -> list[Node]:
        return [self.operand]


class Index(Node):
    """``operand[index]`` (``optional``: ``operand[?index]``); ``pos`` is the bracket."""

    __slots__ = ("index", "operand", "optional")

    def __init__(self, pos: int, start: int, end: int, operand: Node, index: Node, optional: bool = False) -> None:
        super().__init__(pos, start, end)
        self.operand = operand
        self.index = index
        self.optional = optional

    def children(self) -> list[Node]:
        return [self.operand, self.index]


class Call(Node):
    """A function call; operators use cel-go's internal names (``_==_``, ``!_``, ``@in`` ...)."""

    __slots__ = ("args", "fn", "fn_pos", "target")

    def __init__(self, pos: int, start: int, end: int, fn: str, args: list[Node], target: Node | None = None,
                 fn_pos: int | None = None) -> None:
        super().__init__(pos, start, end)
        self.fn = fn
        self.args = args
        self.target = target
        self.fn_pos = pos if fn_pos is None else fn_pos

    def children(self) -> list[Node]:
        return ([self.target] if self.target is not None else []) + list(self.args)


class ListLit(Node):
    __slots__ = ("elems", "optional")

    def __init__(self, pos: int, start: int, end: int, elems: list[Node], optional: frozenset[int]) -> None:
        super().__init__(pos, start, end)
        self.elems = elems
        self.optional = optional

    def children(self) -> list[Node]:
        return list(self.elems)


class MapLit(Node):
    __slots__ = ("entries",)

    def __init__(self, pos: int, start: int, end: int, entries: list[tuple[Node, Node, bool]]) -> None:
        super().__init__(pos, start, end)
        self.entries = entries

    def children(self) -> list[Node]:
        out: list[Node] = []
        for k, v, _ in self.entries:
            out += [k, v]
        return out


class StructLit(Node):
    """``Type{field: value}`` message construction (no message types exist in the DRA environment)."""

    __slots__ = ("fields", "type_name")

    def __init__(self, pos: int, start: int, end: int, type_name: str, fields: list[tuple[str, Node, bool]]) -> None:
        super().__init__(pos, start, end)
        self.type_name = type_name
        self.fields = fields

    def children(self) -> list[Node]:
        return [v for _, v, _ in self.fields]


class Has(Node):
    __slots__ = ("arg",)

    def __init__(self, pos: int, start: int, end: int, arg: Select) -> None:
        super().__init__(pos, start, end)
        self.arg = arg

    def children(self) -> list[Node]:
        return [self.arg]


class Bind(Node):
    """``cel.bind(var, init, body)``."""

    __slots__ = ("body", "init", "var", "var_pos")

    def __init__(self, pos: int, start: int, end: int, var: str, var_pos: int, init: Node, body: Node) -> None:
        super().__init__(pos, start, end)
        self.var = var
        self.var_pos = var_pos
        self.init = init
        self.body = body

    def children(self) -> list[Node]:
        return [self.init, self.body]


class Comprehension(Node):
    """A comprehension macro on ``target``.

    ``macro`` is one of all, exists, exists_one, map, filter (one variable), all2, exists2,
    existsOne2, transformList, transformMap, transformMapEntry (two variables), optMap, optFlatMap,
    sortBy. ``args`` are the expressions after the variable names: [predicate], [transform],
    [filter, transform].
    """

    __slots__ = ("args", "macro", "name", "target", "var", "var2")

    def __init__(self, pos: int, start: int, end: int, macro: str, name: str, target: Node, var: str,
                 var2: str | None, args: list[Node]) -> None:
        super().__init__(pos, start, end)
        self.macro = macro
        self.name = name  # as written (for messages)
        self.target = target
        self.var = var
        self.var2 = var2
        self.args = args

    def children(self) -> list[Node]:
        return [self.target, *self.args]


def walk(node: Node) -> list[Node]:
    """All nodes, parents before children (iterative: expressions can nest deeply)."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.children()))
    return out
