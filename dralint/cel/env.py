"""The DRA selector environment for one target (Kubernetes minor + feature gates), and compiled
programs.

``Environment.for_profile(profile)`` picks the libraries that new selectors may use on the target
server (from ``schemas/kubernetes/cel.yaml``); ``env.compile(text)`` parses, type-checks, validates
literals and estimates the cost of a selector once — programs are cached per (text, environment),
because a repository repeats the same few dozen selectors thousands of times.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from dralint.cel import types as ty
from dralint.cel.ast import Call, Lit, Node, walk
from dralint.cel.checker import AttrRef, AttrTypes, Checker, Device, Diag
from dralint.cel.cost import estimate
from dralint.cel.parser import MAX_DEPTH, CelSyntaxError, parse
from dralint.cel.runtime import regex_error
from dralint.cel.values import CelError, CelInternalError, Quantity, Semver, internal_message

_DEVICE_FIELD_TYPES: dict[str, ty.T] = {
    "driver": ty.STRING,
    "attributes": ty.map_of(ty.STRING, ty.map_of(ty.STRING, ty.ANY)),
    "capacity": ty.map_of(ty.STRING, ty.map_of(ty.STRING, ty.QUANTITY)),
    "allowMultipleAllocations": ty.BOOL,
}


@cache
def data() -> dict[str, Any]:
    from dralint.knowledge.catalog import load_data

    d = load_data("kubernetes/cel.yaml")
    return d if isinstance(d, dict) else {}


def _minor(text: str) -> int:
    return int(str(text).split(".")[1])


def max_length() -> int:
    return int(data().get("limits", {}).get("max-length", 10240))


def max_cost() -> int:
    return int(data().get("limits", {}).get("max-cost", 1_000_000))


def gate_enabled(feature_gates: dict[str, bool], gate: str, minor: str) -> bool:
    """Whether ``gate`` is on for the target: the configuration wins, then the lifecycle data
    (``schemas/kubernetes/lifecycle.yaml``: default and locking per minor). A gate the target minor
    does not have is off."""
    from dralint.knowledge.lifecycle import for_profile
    from dralint.knowledge.profile import ClusterProfile

    lc = for_profile(ClusterProfile(kubernetes_version=minor, feature_gates=dict(feature_gates)))
    on = lc.gate_enabled(gate)
    if on is None:
        return bool(feature_gates.get(gate, False)) if not lc.known else False
    return on


@dataclass(frozen=True)
class EnvKey:
    minor: int  # target server minor (1.x)
    gates: frozenset[str]  # enabled gates among those the environment depends on


def env_key(kubernetes_version: str, feature_gates: dict[str, bool]) -> EnvKey:
    d = data()
    minor = max(_minor(kubernetes_version), _minor(d.get("minimum-minor", "1.31")))
    text = f"1.{minor}"
    gates = {spec.get("gate") for spec in [*d.get("libraries", {}).values(), *d.get("device-fields", {}).values()]
             if isinstance(spec, dict) and spec.get("gate")}
    return EnvKey(minor, frozenset(g for g in gates if isinstance(g, str) and gate_enabled(feature_gates, g, text)))


@dataclass
class Program:
    text: str
    ast: Node | None
    diags: list[Diag]
    refs: list[AttrRef]
    types: dict[int, ty.T]
    cost: int | None
    _fn: Any = None

    @property
    def ok(self) -> bool:
        return self.ast is not None and not any(d.code in ("syntax", "type", "unavailable", "cost", "internal")
                                                for d in self.diags)

    def evaluate(self, device: dict[str, Any], cost_limit: int | None = None) -> bool:
        """Run the selector on one device; CelError for a run-time error (as the scheduler sees it)."""
        from dralint.cel.interp import Activation, compile_program

        if self._fn is None:
            if self.ast is None:
                raise CelError("the selector does not compile")
            with _deep_recursion():
                self._fn = compile_program(self.ast)
        act = Activation({"device": device}, cost_limit or max_cost())
        try:
            with _deep_recursion():
                v = self._fn(act)
        except CelError:
            raise
        except RecursionError:
            raise CelError("expression too deeply nested to evaluate") from None
        except Exception as e:  # a dralint bug must not stop a lint run: report it as an evaluation error
            raise CelInternalError("evaluator", e) from e
        if type(v) is not bool:
            raise CelError(f"the selector returned a {type(v).__name__}, not a bool")
        return v


@contextmanager
def _deep_recursion() -> Iterator[None]:
    """Expressions may nest up to the parser's limit; give the tree walks room for that."""
    limit = sys.getrecursionlimit()
    need = MAX_DEPTH * 12 + 400
    if limit < need:
        sys.setrecursionlimit(need)
    try:
        yield
    finally:
        if limit < need:
            sys.setrecursionlimit(limit)


class Environment:
    def __init__(self, key: EnvKey) -> None:
        self.key = key
        d = data()
        offset = int(d.get("new-expression-offset", 1))
        self.compat = key.minor - offset
        libs: set[str] = set()
        self.lib_specs: dict[str, dict[str, Any]] = dict(d.get("libraries", {}))
        for name, spec in self.lib_specs.items():
            if self._spec_on(spec):
                libs.add(name)
        self.libs = frozenset(libs)
        fields: dict[str, ty.T] = {}
        missing: dict[str, str] = {}
        for name, spec in d.get("device-fields", {}).items():
            if self._spec_on(spec):
                fields[name] = _DEVICE_FIELD_TYPES.get(name, ty.DYN)
            else:
                missing[name] = self._requirement(spec, f"the `{name}` field")
        self.device = Device(fields, missing)
        self._cache: OrderedDict[str, Program] = OrderedDict()

    @classmethod
    def get(cls, key: EnvKey) -> Environment:
        env = _ENVS.get(key)
        if env is None:
            env = _ENVS[key] = cls(key)
        return env

    @classmethod
    def for_target(cls, kubernetes_version: str, feature_gates: dict[str, bool]) -> Environment:
        return cls.get(env_key(kubernetes_version, feature_gates))

    def _spec_on(self, spec: dict[str, Any]) -> bool:
        if "introduced" in spec and _minor(str(spec["introduced"])) > self.compat:
            return False
        if "server" in spec and _minor(str(spec["server"])) > self.key.minor:
            return False
        gate = spec.get("gate")
        return not (gate and gate not in self.key.gates)

    def _requirement(self, spec: dict[str, Any], what: str) -> str:
        target = f"1.{self.key.minor}"
        gate = spec.get("gate")
        if "introduced" in spec:
            intro = _minor(str(spec["introduced"]))
            return (f"needs Kubernetes 1.{intro + 1} or newer: {what} entered the Kubernetes 1.{intro} CEL "
                    f"environment, and the API server checks new selectors against the previous minor's "
                    f"environment (the target is {target})")
        server = _minor(str(spec.get("server", "1.31")))
        if server > self.key.minor:
            extra = f" with the {gate} feature gate" if gate else ""
            return f"needs Kubernetes 1.{server} or newer{extra} ({what}; the target is {target})"
        if gate:
            return (f"needs the {gate} feature gate, which is off for Kubernetes {target} in this configuration "
                    f"({what}; enable it with --feature-gates {gate}=true if the cluster has it on)")
        return f"is not available for Kubernetes {target}"  # pragma: no cover

    def lib_note(self, lib: str) -> str:
        spec = self.lib_specs.get(lib, {})
        title = str(spec.get("title", lib))
        return self._requirement(spec, title)

    # -- compile ---------------------------------------------------------------------------------
    def compile(self, text: str) -> Program:
        prog = self._cache.get(text)
        if prog is not None:
            self._cache.move_to_end(text)
            return prog
        prog = self._compile(text)
        self._cache[text] = prog
        if len(self._cache) > 4096:
            self._cache.popitem(last=False)
        return prog

    def check_refined(self, prog: Program, attr_types: AttrTypes) -> list[Diag]:
        """Type errors that only appear once attribute values get the types the driver publishes."""
        if prog.ast is None or not prog.ok:
            return []
        checker = Checker(prog.text, self.libs, self.device, self.lib_note, attr_types)
        try:
            with _deep_recursion():
                checker.check(prog.ast)
        except Exception as e:  # a dralint bug: a finding, never a crash of the lint run
            return [Diag("internal", prog.ast.start, prog.ast.end, internal_message("type checker", e))]
        if not checker.refined:
            return []
        out = []
        final = checker.final_type(prog.ast)
        if not checker.diags and final.kind not in ("bool", "any", "dyn", "error", "param"):
            out.append(Diag("type", prog.ast.start, prog.ast.end, f"returns {ty.fmt(final)} (the type the driver "
                            "publishes for this attribute), not a bool: the API server accepts it because attribute "
                            "values are typed dynamically, but evaluating it is an error for every device"))
        for d in checker.diags:
            if d.fn in ("_==_", "_!=_", "@in") and len(d.args) == 2:
                kinds = {a.kind for a in d.args}
                if kinds <= ty.NUMERIC:
                    continue  # 1 == 1.0 is true at run time (heterogeneous numeric equality)
            out.append(d)
        return out

    def _compile(self, text: str) -> Program:
        phase = ["parser"]
        try:
            return self._compile_phases(text, phase)
        except Exception as e:  # every Python exception becomes a finding (DRA603), never a crash
            return Program(text, None, [Diag("internal", 0, max(1, len(text)), internal_message(phase[0], e))],
                           [], {}, None)

    def _compile_phases(self, text: str, phase: list[str]) -> Program:
        limit = max_length()
        if len(text) > limit:
            return Program(text, None, [Diag("cost", 0, 1, f"the selector is {len(text):,} characters long; the "
                                             f"limit is {limit:,} (the API server refuses it before compiling)")],
                           [], {}, None)
        try:
            root = parse(text)
        except CelSyntaxError as e:
            return Program(text, None, [Diag("syntax", e.pos, e.end, e.message)], [], {}, None)
        phase[0] = "type checker"
        checker = Checker(text, self.libs, self.device, self.lib_note)
        with _deep_recursion():
            t = checker.check(root)
        diags = list(checker.diags)
        final = checker.final_type(root)
        if not diags and final.kind not in ("bool", "any", "error"):
            diags.append(Diag("type", root.start, root.end, f"must evaluate to bool or the unknown type, not "
                              f"{ty.fmt(final)}: a selector is a condition that is true for matching devices"))
        phase[0] = "literal checks"
        diags += self._literal_checks(root)
        cost: int | None = None
        if not any(d.code in ("syntax", "type", "unavailable") for d in diags):
            phase[0] = "cost estimator"
            with _deep_recursion():
                cost = estimate(root, checker.types)
            if cost > max_cost():
                diags.append(Diag("cost", root.start, root.end, f"the estimated worst-case cost is "
                                  f"{_big(cost)}, over the limit of {max_cost():,} (the API server refuses the "
                                  "selector; loops over large or unbounded lists multiply the cost)"))
        del t
        return Program(text, root, diags, checker.refs, checker.types, cost)

    def _literal_checks(self, root: Node) -> list[Diag]:
        """Literal arguments that the API server rejects (regexes) or that fail on every evaluation."""
        out: list[Diag] = []
        for n in walk(root):
            if not isinstance(n, Call) or not n.args:
                continue
            fn = n.fn
            lit = n.args[0]
            if fn in ("matches", "find", "findAll"):
                pat = n.args[0] if n.target is not None else (n.args[1] if len(n.args) > 1 else None)
                if isinstance(pat, Lit) and pat.kind == "string":
                    err = regex_error(str(pat.value))
                    if err:
                        out.append(Diag("type", pat.start, pat.end, f"invalid regular expression: {err} (the API "
                                        "server validates regex literals with RE2 syntax, which has no "
                                        "back-references or look-arounds)"))
                continue
            if fn == "format" and isinstance(n.target, Lit) and n.target.kind == "string":
                d = format_problem(n.target, n.args[0])
                if d is not None:
                    out.append(d)
                continue
            if n.target is not None or not isinstance(lit, Lit) or lit.kind != "string":
                continue
            value = str(lit.value)
            problem: str | None = None
            if fn == "quantity":
                if not Quantity.valid(value):
                    problem = (f"`quantity({lit_src(lit)})` is not a valid Kubernetes quantity (use forms like "
                               "\"20Gi\", \"500M\", \"1.5\"; suffixes are Ki Mi Gi Ti Pi Ei or n u m k M G T P E)")
            elif fn == "semver":
                normalize = len(n.args) > 1 and isinstance(n.args[1], Lit) and n.args[1].value is True
                if not Semver.valid(value, normalize):
                    problem = (f"`semver({lit_src(lit)})` is not a valid semantic version: it needs "
                               "MAJOR.MINOR.PATCH without leading zeros or a `v` (e.g. \"550.54.15\", \"8.0.0\")")
            elif fn in ("duration", "timestamp"):
                from dralint.cel.runtime import parse_duration, parse_timestamp

                try:
                    (parse_duration if fn == "duration" else parse_timestamp)(value)
                except CelError as e:
                    out.append(Diag("type", lit.start, lit.end, f"{e} (the API server validates {fn} literals)"))
            if problem:
                out.append(Diag("runtime", lit.start, lit.end, problem + ": the API server accepts the selector, "
                                "but it fails with an error every time it is evaluated, which blocks allocation"))
        return out


#: the literal kinds each format() verb takes (cel-go's format validation at compile time)
_VERB_KINDS = {"d": {"int", "uint", "double"}, "f": {"int", "uint", "double"}, "e": {"int", "uint", "double"},
               "x": {"int", "uint", "string", "bytes"}, "X": {"int", "uint", "string", "bytes"},
               "o": {"int", "uint"}, "b": {"int", "uint", "bool"}}


def format_problem(fmt: Lit, args: Node) -> Diag | None:
    """A literal format string checked as the API server does when it compiles the selector: every
    clause must be one format() knows, and with a literal argument list there must be one argument
    per clause, of a kind the verb takes."""
    import re

    from dralint.cel.ast import ListLit
    from dralint.cel.runtime import _CLAUSE

    text = str(fmt.value)
    verbs: list[str] = []
    i = 0
    while (j := text.find("%", i)) >= 0:
        m = _CLAUSE.match(text, j)
        if not m:
            bad = re.match(r"%[^a-zA-Z%]*.?", text[j:])
            return Diag("type", fmt.start, fmt.end, f"the format string has an unknown clause "
                        f"`{bad.group() if bad else '%'}` at position {j} (format() knows %s %d %f %e %x %X %o %b "
                        "and %%, with an optional precision such as %.2f)")
        if m.group(2) != "%":
            verbs.append(m.group(2))
        i = m.end()
    if not isinstance(args, ListLit):
        return None
    if len(args.elems) != len(verbs):
        return Diag("type", args.start, args.end, f"the format string has {len(verbs)} clause"
                    f"{'s' if len(verbs) != 1 else ''} but the list has {len(args.elems)} argument"
                    f"{'s' if len(args.elems) != 1 else ''}")
    for verb, arg in zip(verbs, args.elems, strict=True):
        if isinstance(arg, Lit) and verb in _VERB_KINDS and arg.kind not in _VERB_KINDS[verb]:
            return Diag("type", arg.start, arg.end, f"%{verb} cannot format a {arg.kind} "
                        f"(it takes {', '.join(sorted(_VERB_KINDS[verb]))})")
    return None


def lit_src(lit: Lit) -> str:
    return '"' + str(lit.value).replace('"', '\\"') + '"'


def _big(n: int) -> str:
    return "unbounded" if n >= 2**62 else f"{n:,}"


_ENVS: dict[EnvKey, Environment] = {}

