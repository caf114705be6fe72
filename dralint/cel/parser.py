"""A CEL lexer and recursive-descent parser with exact positions.

Follows the grammar of cel-spec / cel-go (``CEL.g4``): operator precedence, literal forms (raw,
triple-quoted and byte strings, hex and unsigned ints, escapes), reserved words, optional syntax
(``.?f``, ``[?k]``, ``[?e]``, ``{?k: v}``), message construction syntax, backtick-quoted field
names, and macro recognition. Positions are code-point offsets into the expression, like cel-go's;
the first error stops the parse (cel-go lists more, but after the first one they are mostly noise).
"""

from __future__ import annotations

import re

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
from dralint.cel.values import INT64_MAX, INT64_MIN, UINT64_MAX, UInt

_DIGITS = frozenset("0123456789")  # str.isdigit() also accepts other scripts' digits, which int() refuses
_SURROGATES = re.compile("[\ud800-\udfff]")
#: nesting limit, as cel-go's parser (deeper expressions are refused as a syntax error)
MAX_DEPTH = 250

RESERVED = frozenset({
    "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop",
    "package", "namespace", "return", "var", "void", "while",
})

_PUNCT = ("==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",",
          "(", ")", "[", "]", "{", "}")

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
            "?": "?", '"': '"', "'": "'", "`": "`"}

_BINOPS = {
    "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in",
    "+": "_+_", "-": "_-_", "*": "_*_", "/": "_/_", "%": "_%_",
}


class CelSyntaxError(Exception):
    def __init__(self, message: str, pos: int, end: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.end = pos + 1 if end is None else end


class Token:
    __slots__ = ("end", "kind", "start", "text", "value")

    def __init__(self, kind: str, text: str, start: int, end: int, value: object = None) -> None:
        self.kind = kind  # ident, int, uint, double, string, bytes, punct, eof
        self.text = text
        self.start = start
        self.end = end
        self.value = value

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.start})"


def _describe(tok: Token) -> str:
    if tok.kind == "eof":
        return "the end of the expression"
    return f"`{tok.text}`"


# ----------------------------------------------------------------------------------------------
# lexer


def tokenize(src: str) -> list[Token]:
    toks: list[Token] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in " \t\n\r\f":
            i += 1
            continue
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j == -1 else j + 1
            continue
        start = i
        if c.isascii() and (c.isalpha() or c == "_"):
            j = i + 1
            while j < n and src[j].isascii() and (src[j].isalnum() or src[j] == "_"):
                j += 1
            word = src[i:j]
            # string prefixes: r, b, rb, br (any case) directly followed by a quote
            if j < n and src[j] in "\"'" and word.lower() in ("r", "b", "rb", "br"):
                tok, i = _string(src, j, start, word.lower())
                toks.append(tok)
                continue
            toks.append(Token("ident", word, i, j))
            i = j
            continue
        if c in _DIGITS or (c == "." and i + 1 < n and src[i + 1] in _DIGITS):
            tok, i = _number(src, i)
            toks.append(tok)
            continue
        if c in "\"'":
            tok, i = _string(src, i, i, "")
            toks.append(tok)
            continue
        if c == "`":
            j = src.find("`", i + 1)
            if j == -1 or "\n" in src[i:j]:
                raise CelSyntaxError("unterminated backtick-quoted name", i)
            toks.append(Token("quoted", src[i : j + 1], i, j + 1, src[i + 1 : j]))
            i = j + 1
            continue
        for p in _PUNCT:
            if src.startswith(p, i):
                toks.append(Token("punct", p, i, i + len(p)))
                i += len(p)
                break
        else:
            if c == "=":
                raise CelSyntaxError("`=` is not a CEL operator: compare with `==`", i, i + 1)
            if c in "&|":
                raise CelSyntaxError(f"`{c}` is not a CEL operator: use `{c}{c}`", i, i + 1)
            if c == ";":
                raise CelSyntaxError("`;` is not allowed: a selector is a single expression", i, i + 1)
            raise CelSyntaxError(f"unexpected character {c!r}", i, i + 1)
    toks.append(Token("eof", "", n, n))
    return toks


def _number(src: str, i: int) -> tuple[Token, int]:
    n = len(src)
    start = i
    if src.startswith(("0x", "0X"), i):
        j = i + 2
        while j < n and src[j] in "0123456789abcdefABCDEF":
            j += 1
        if j == i + 2:
            raise CelSyntaxError("hexadecimal literal needs digits after `0x`", i, j)
        value = int(src[i + 2 : j], 16)
        if j < n and src[j] in "uU":
            if value > UINT64_MAX:
                raise CelSyntaxError("invalid uint literal: out of range", start, j + 1)
            return Token("uint", src[start : j + 1], start, j + 1, UInt(value)), j + 1
        return Token("int", src[start:j], start, j, value), j
    j = i
    while j < n and src[j] in _DIGITS:
        j += 1
    is_float = False
    if j < n and src[j] == "." and j + 1 < n and src[j + 1] in _DIGITS:
        is_float = True
        j += 1
        while j < n and src[j] in _DIGITS:
            j += 1
    if j < n and src[j] in "eE":
        k = j + 1
        if k < n and src[k] in "+-":
            k += 1
        if k < n and src[k] in _DIGITS:
            is_float = True
            while k < n and src[k] in _DIGITS:
                k += 1
            j = k
    text = src[start:j]
    if is_float:
        return Token("double", text, start, j, float(text)), j
    value = int(text)
    if j < n and src[j] in "uU":
        if value > UINT64_MAX:
            raise CelSyntaxError("invalid uint literal: out of range", start, j + 1)
        return Token("uint", src[start : j + 1], start, j + 1, UInt(value)), j + 1
    return Token("int", text, start, j, value), j


def _string(src: str, q: int, start: int, prefix: str) -> tuple[Token, int]:
    n = len(src)
    raw = "r" in prefix
    is_bytes = "b" in prefix
    quote = src[q : q + 3] if src.startswith(('"""', "'''"), q) else src[q]
    i = q + len(quote)
    out: list[str] = []
    byte_out = bytearray()

    def emit_char(ch: str) -> None:
        if is_bytes:
            byte_out.extend(ch.encode("utf-8"))
        else:
            out.append(ch)

    while True:
        if i >= n:
            raise CelSyntaxError("unterminated string literal", start, n)
        if src.startswith(quote, i):
            i += len(quote)
            break
        c = src[i]
        if c in "\r\n" and len(quote) == 1:
            raise CelSyntaxError("unterminated string literal (a line break inside a quoted string "
                                 "needs triple quotes)", start, i)
        if c == "\\" and not raw:
            if i + 1 >= n:
                raise CelSyntaxError("unterminated string literal", start, n)
            e = src[i + 1]
            if e in _ESCAPES:
                emit_char(_ESCAPES[e])
                i += 2
                continue
            if e in "xX":
                digits = src[i + 2 : i + 4]
                if len(digits) != 2 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                    raise CelSyntaxError("invalid escape sequence: `\\x` needs two hex digits", i, i + 2)
                v = int(digits, 16)
                if is_bytes:
                    byte_out.append(v)
                else:
                    out.append(chr(v))
                i += 4
                continue
            if e in "uU":
                width = 4 if e == "u" else 8
                digits = src[i + 2 : i + 2 + width]
                if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                    raise CelSyntaxError(f"invalid escape sequence: `\\{e}` needs {width} hex digits", i, i + 2)
                v = int(digits, 16)
                if is_bytes:
                    raise CelSyntaxError("unicode escapes are not allowed in bytes literals", i, i + 2 + width)
                if 0xD800 <= v <= 0xDFFF or v > 0x10FFFF:
                    raise CelSyntaxError("invalid unicode code point in escape", i, i + 2 + width)
                out.append(chr(v))
                i += 2 + width
                continue
            if e in "0123":
                digits = src[i + 1 : i + 4]
                if len(digits) == 3 and all(d in "01234567" for d in digits):
                    v = int(digits, 8)
                    if is_bytes:
                        byte_out.append(v)
                    else:
                        out.append(chr(v))
                    i += 4
                    continue
            raise CelSyntaxError(f"invalid escape sequence `\\{e}`", i, i + 2)
        emit_char(c)
        i += 1
    text = src[start:i]
    if is_bytes:
        return Token("bytes", text, start, i, bytes(byte_out)), i
    return Token("string", text, start, i, "".join(out)), i


# ----------------------------------------------------------------------------------------------
# parser

#: member-style macros: name -> {argument count: internal macro name}
_MEMBER_MACROS: dict[str, dict[int, str]] = {
    "all": {2: "all", 3: "all2"},
    "exists": {2: "exists", 3: "exists2"},
    "exists_one": {2: "exists_one"},
    "existsOne": {2: "exists_one", 3: "existsOne2"},
    "map": {2: "map", 3: "map"},
    "filter": {2: "filter"},
    "transformList": {3: "transformList", 4: "transformList"},
    "transformMap": {3: "transformMap", 4: "transformMap"},
    "transformMapEntry": {3: "transformMapEntry", 4: "transformMapEntry"},
    "optMap": {2: "optMap"},
    "optFlatMap": {2: "optFlatMap"},
    "sortBy": {2: "sortBy"},
}


class Parser:
    def __init__(self, src: str) -> None:
        self.src = src
        self.toks = tokenize(src)
        self.i = 0

    # -- token helpers ------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, text: str) -> bool:
        t = self.toks[self.i]
        return t.kind == "punct" and t.text == text

    def next(self) -> Token:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def expect(self, text: str, what: str) -> Token:
        if not self.at(text):
            t = self.tok
            raise CelSyntaxError(f"expected `{text}` {what}, found {_describe(t)}", t.start, max(t.end, t.start + 1))
        return self.next()

    def fail_unexpected(self, after: str | None = None) -> CelSyntaxError:
        t = self.tok
        if t.kind == "eof":
            msg = "the expression ends too early"
            if after:
                msg += f": an operand is missing after `{after}`"
            return CelSyntaxError(msg, t.start, t.start + 1)
        return CelSyntaxError(f"unexpected {_describe(t)}", t.start, t.end)

    # -- grammar --------------------------------------------------------------------------------
    def parse(self) -> Node:
        node = self.expr()
        t = self.tok
        if t.kind != "eof":
            hint = ""
            if t.kind in ("string", "int", "double", "ident") and self.i > 0:
                hint = " (an operator such as `==` or `&&` is missing before it)"
            raise CelSyntaxError(f"unexpected {_describe(t)} after a complete expression{hint}", t.start, t.end)
        return node

    def expr(self) -> Node:
        cond = self.or_expr()
        if self.at("?"):
            q = self.next()
            if_true = self.or_expr()
            self.expect(":", "in a conditional `cond ? a : b`")
            if_false = self.expr()
            return Call(q.start, cond.start, if_false.end, "_?_:_", [cond, if_true, if_false])
        return cond

    def _logical(self, op: str, fn: str, sub: str) -> Node:
        terms = [self.and_expr() if sub == "and" else self.rel()]
        ops: list[Token] = []
        while self.at(op):
            ops.append(self.next())
            if self.tok.kind == "eof":
                raise self.fail_unexpected(op)
            terms.append(self.and_expr() if sub == "and" else self.rel())
        if not ops:
            return terms[0]
        return _balance(fn, terms, ops)

    def or_expr(self) -> Node:
        return self._logical("||", "_||_", "and")

    def and_expr(self) -> Node:
        return self._logical("&&", "_&&_", "rel")

    def rel(self) -> Node:
        left = self.add()
        while True:
            t = self.tok
            op = t.text if t.kind == "punct" and t.text in ("<", "<=", ">", ">=", "==", "!=") else None
            if op is None and t.kind == "ident" and t.text == "in":
                op = "in"
            if op is None:
                return left
            self.next()
            if self.tok.kind == "eof":
                raise self.fail_unexpected(op)
            right = self.add()
            left = Call(t.start, left.start, right.end, _BINOPS[op], [left, right])

    def add(self) -> Node:
        left = self.mul()
        while self.at("+") or self.at("-"):
            t = self.next()
            if self.tok.kind == "eof":
                raise self.fail_unexpected(t.text)
            right = self.mul()
            left = Call(t.start, left.start, right.end, _BINOPS[t.text], [left, right])
        return left

    def mul(self) -> Node:
        left = self.unary()
        while self.at("*") or self.at("/") or self.at("%"):
            t = self.next()
            if self.tok.kind == "eof":
                raise self.fail_unexpected(t.text)
            right = self.unary()
            left = Call(t.start, left.start, right.end, _BINOPS[t.text], [left, right])
        return left

    def unary(self) -> Node:
        node: Node
        if self.at("!"):
            ops = []
            while self.at("!"):
                ops.append(self.next())
            if self.tok.kind == "eof":
                raise self.fail_unexpected("!")
            node = self.member()
            for t in reversed(ops):
                node = Call(t.start, t.start, node.end, "!_", [node])
            return node
        if self.at("-"):
            ops = []
            while self.at("-"):
                ops.append(self.next())
            if self.tok.kind == "eof":
                raise self.fail_unexpected("-")
            # `-<int or double literal>` is one negative literal (so that the int64 minimum parses)
            t = self.tok
            if t.kind in ("int", "double"):
                self.next()
                sign_tok = ops.pop()
                value = -t.value  # type: ignore[operator]
                if t.kind == "int" and not INT64_MIN <= value <= INT64_MAX:
                    raise CelSyntaxError("invalid int literal: out of the int64 range", sign_tok.start, t.end)
                node = Lit(sign_tok.start, sign_tok.start, t.end, value, t.kind)
                node = self.member_suffix(node)
            else:
                node = self.member()
            for t in reversed(ops):
                node = Call(t.start, t.start, node.end, "-_", [node])
            return node
        return self.member()

    def member(self) -> Node:
        return self.member_suffix(self.primary())

    def member_suffix(self, node: Node) -> Node:
        while True:
            if self.at("."):
                dot = self.next()
                optional = False
                if self.at("?"):
                    self.next()
                    optional = True
                t = self.tok
                if t.kind == "quoted":
                    self.next()
                    node = Select(dot.start, node.start, t.end, node, str(t.value), t.start, optional)
                    continue
                if t.kind != "ident":
                    if t.kind == "eof":
                        raise CelSyntaxError("the expression ends after `.`: a field name is missing", t.start)
                    raise CelSyntaxError(f"expected a field name after `.`, found {_describe(t)}", t.start,
                                         max(t.end, t.start + 1))
                self.next()
                # words reserved for future use are fine as field names; the literal keywords are not
                if t.text in ("true", "false", "null", "in"):
                    raise CelSyntaxError(f"`{t.text}` is a keyword and cannot be a field name here (write "
                                         f"`[\"{t.text}\"]` to look up that key)", t.start, t.end)
                if self.at("(") and not optional:
                    open_ = self.next()
                    args = self.args(")")
                    close = self.expect(")", "to close the argument list")
                    node = self.make_member_call(node, t, open_.start, args, close.end)
                else:
                    node = Select(dot.start, node.start, t.end, node, t.text, t.start, optional)
            elif self.at("["):
                br = self.next()
                optional = False
                if self.at("?"):
                    self.next()
                    optional = True
                if self.tok.kind == "eof":
                    raise self.fail_unexpected("[")
                idx = self.expr()
                close = self.expect("]", "to close the index")
                node = Index(br.start, node.start, close.end, node, idx, optional)
            else:
                return node

    def args(self, close: str) -> list[Node]:
        out: list[Node] = []
        if self.at(close):
            return out
        while True:
            if self.tok.kind == "eof":
                raise self.fail_unexpected("(" if not out else ",")
            out.append(self.expr())
            if self.at(","):
                self.next()
                continue
            return out

    def primary(self) -> Node:
        t = self.tok
        if t.kind == "punct":
            if t.text == "(":
                self.next()
                if self.at(")"):
                    raise CelSyntaxError("empty parentheses: an expression is missing", self.tok.start)
                inner = self.expr()
                self.expect(")", "to close the parenthesis")
                return inner
            if t.text == "[":
                return self.list_lit()
            if t.text == "{":
                return self.map_lit()
            if t.text == "." and self.peek().kind == "ident":
                # leading dot: an identifier in the root namespace
                self.next()
                return self.ident_or_call(self.tok, leading_dot=True)
            raise self.fail_unexpected()
        if t.kind == "ident":
            return self.ident_or_call(t, leading_dot=False)
        if t.kind in ("int", "uint", "double", "string", "bytes"):
            self.next()
            if t.kind == "int" and not INT64_MIN <= t.value <= INT64_MAX:  # type: ignore[operator]
                raise CelSyntaxError("invalid int literal: out of the int64 range", t.start, t.end)
            return Lit(t.start, t.start, t.end, t.value, t.kind)
        if t.kind == "quoted":
            raise CelSyntaxError("a backtick-quoted name can only follow `.` in a field selection", t.start, t.end)
        raise self.fail_unexpected()

    def ident_or_call(self, t: Token, leading_dot: bool) -> Node:
        self.next()
        name = t.text
        if name == "true" or name == "false":
            return Lit(t.start, t.start, t.end, name == "true", "bool")
        if name == "null":
            return Lit(t.start, t.start, t.end, None, "null")
        if name == "in":
            raise CelSyntaxError("unexpected `in`: a value is missing before it", t.start, t.end)
        if name in RESERVED:
            raise CelSyntaxError(f"reserved identifier: {name}", t.start, t.end)
        if self.at("("):
            open_ = self.next()
            args = self.args(")")
            close = self.expect(")", "to close the argument list")
            if name == "has" and not leading_dot:
                if len(args) != 1 or not isinstance(args[0], Select) or args[0].optional:
                    bad = args[0] if args else None
                    raise CelSyntaxError("invalid argument to has() macro: it takes one field selection such as "
                                         "`has(device.attributes[\"d\"].name)`",
                                         bad.start if bad else open_.start, bad.end if bad else close.end)
                return Has(open_.start, t.start, close.end, args[0])
            return Call(open_.start, t.start, close.end, name, args, None, t.start)
        if self.at("{") and not leading_dot:
            return self.struct_lit(name, t)
        if self.at(".") and self._qualified_struct_ahead():
            parts = [name]
            while self.at("."):
                self.next()
                parts.append(self.next().text)
            return self.struct_lit(".".join(parts), t)
        return Ident(t.start, t.start, t.end, name)

    def _qualified_struct_ahead(self) -> bool:
        k = self.i
        toks = self.toks
        while toks[k].kind == "punct" and toks[k].text == "." and toks[k + 1].kind == "ident":
            k += 2
        return k > self.i and toks[k].kind == "punct" and toks[k].text == "{"

    def struct_lit(self, type_name: str, t: Token) -> Node:
        open_ = self.next()
        fields: list[tuple[str, Node, bool]] = []
        while not self.at("}"):
            optional = False
            if self.at("?"):
                self.next()
                optional = True
            ft = self.tok
            if ft.kind not in ("ident", "quoted"):
                raise CelSyntaxError(f"expected a field name in `{type_name}{{...}}`, found {_describe(ft)}",
                                     ft.start, max(ft.end, ft.start + 1))
            self.next()
            self.expect(":", "after the field name")
            fields.append((str(ft.value) if ft.kind == "quoted" else ft.text, self.expr(), optional))
            if not self.at(","):
                break
            self.next()
        close = self.expect("}", "to close the message")
        return StructLit(open_.start, t.start, close.end, type_name, fields)

    def list_lit(self) -> Node:
        open_ = self.next()
        elems: list[Node] = []
        optional: set[int] = set()
        while not self.at("]"):
            if self.at("?"):
                self.next()
                optional.add(len(elems))
            if self.tok.kind == "eof":
                raise self.fail_unexpected("[")
            elems.append(self.expr())
            if not self.at(","):
                break
            self.next()
        close = self.expect("]", "to close the list")
        return ListLit(open_.start, open_.start, close.end, elems, frozenset(optional))

    def map_lit(self) -> Node:
        open_ = self.next()
        entries: list[tuple[Node, Node, bool]] = []
        while not self.at("}"):
            optional = False
            if self.at("?"):
                self.next()
                optional = True
            if self.tok.kind == "eof":
                raise self.fail_unexpected("{")
            k = self.expr()
            self.expect(":", "between a map key and its value")
            v = self.expr()
            entries.append((k, v, optional))
            if not self.at(","):
                break
            self.next()
        close = self.expect("}", "to close the map")
        return MapLit(open_.start, open_.start, close.end, entries)

    def make_member_call(self, target: Node, name: Token, open_pos: int, args: list[Node], end: int) -> Node:
        fn = name.text
        if fn == "bind" and isinstance(target, Ident) and target.name == "cel" and len(args) == 3:
            var = args[0]
            if not isinstance(var, Ident):
                raise CelSyntaxError("cel.bind() variable name must be a simple identifier", var.start, var.end)
            return Bind(open_pos, target.start, end, var.name, var.start, args[1], args[2])
        macro = _MEMBER_MACROS.get(fn, {}).get(len(args))
        if macro is not None:
            nvars = 2 if macro in ("all2", "exists2", "existsOne2", "transformList", "transformMap",
                                   "transformMapEntry") else 1
            names: list[str] = []
            for a in args[:nvars]:
                if not isinstance(a, Ident):
                    raise CelSyntaxError(f"argument of {fn}() must be a simple name (the loop variable)",
                                         a.start, a.end)
                names.append(a.name)
            if macro == "map" and len(args) == 3:
                macro = "map_filter"
            return Comprehension(open_pos, target.start, end, macro, fn, target, names[0],
                                 names[1] if nvars == 2 else None, args[nvars:])
        return Call(open_pos, target.start, end, fn, args, target, name.start)


def _balance(fn: str, terms: list[Node], ops: list[Token]) -> Node:
    """Build a balanced tree for a chain of `&&` or `||` (as cel-go does), keeping operator positions."""
    if len(terms) == 1:
        return terms[0]
    mid = len(ops) // 2
    left = _balance(fn, terms[: mid + 1], ops[:mid])
    right = _balance(fn, terms[mid + 1 :], ops[mid + 1 :])
    return Call(ops[mid].start, left.start, right.end, fn, [left, right])


def depth(node: Node) -> int:
    """Nesting depth of a tree (iterative)."""
    best = 0
    stack = [(node, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        for c in n.children():
            stack.append((c, d + 1))
    return best


def parse(src: str) -> Node:
    """Parse an expression; raises `CelSyntaxError` with the offset of the problem."""
    # A lone surrogate (YAML's "\ud800" escape) cannot reach the API server: Go's decoders turn it
    # into U+FFFD. Do the same, one character for one, so that offsets stay valid.
    src = _SURROGATES.sub("\ufffd", src)
    p = Parser(src)
    import sys

    limit = sys.getrecursionlimit()
    need = MAX_DEPTH * 12 + 200
    if limit < need + 200:
        sys.setrecursionlimit(need + 200)
    try:
        node = p.parse()
    except RecursionError:
        raise CelSyntaxError(f"the expression nests deeper than {MAX_DEPTH} levels", 0, len(src)) from None
    finally:
        if limit < need + 200:
            sys.setrecursionlimit(limit)
    if depth(node) > MAX_DEPTH:
        raise CelSyntaxError(f"the expression nests deeper than {MAX_DEPTH} levels", 0, len(src))
    return node
