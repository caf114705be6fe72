"""Selector analysis for the rules: where selectors are, what is wrong with them (cached per run),
and where a problem sits in the file.

The API-server view (syntax, types, versions, cost) comes from the compiled `Program`; on top of
it, with the driver data (``schemas/drivers``), dralint checks attribute and capacity names and
the types the driver publishes for them — mistakes the API server cannot see and that only show
up at allocation time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralint.cel import types as ty
from dralint.cel.checker import AttrRef, Diag
from dralint.cel.env import Environment, Program, data
from dralint.cel.yamlpos import char_offsets, value_offsets
from dralint.inputs import dra
from dralint.inputs.index import K8sObject
from dralint.knowledge import drivers, k8s
from dralint.knowledge.profile import ClusterProfile
from dralint.model import JsonPath, Span
from dralint.suggest import closest

DRA_GROUP = "resource.k8s.io"
STANDARD_DOMAIN = "resource.kubernetes.io"


def selectors_of(obj: K8sObject) -> list[tuple[JsonPath, str]]:
    """(path, expression) of every CEL selector of a DeviceClass, ResourceClaim or template."""
    if obj.group != DRA_GROUP:
        return []
    if obj.kind == "DeviceClass":
        out: list[tuple[JsonPath, str]] = []
        sels = k8s.get(obj.data, "spec", "selectors")
        if isinstance(sels, list):
            for i, s in enumerate(sels):
                expr = k8s.get(s, "cel", "expression")
                if isinstance(expr, str):
                    out.append((("spec", "selectors", i, "cel", "expression"), expr))
        return out
    if obj.kind in dra.CLAIM_KINDS:
        return [sel for r in dra.requests(obj) for alt in r.alternatives for sel in alt.selectors]
    return []


_ENV_BY_PROFILE: dict[tuple[Any, ...], Environment] = {}


def environment(profile: ClusterProfile) -> Environment:
    key = (profile.kubernetes_version, tuple(sorted(profile.feature_gates.items())))
    env = _ENV_BY_PROFILE.get(key)
    if env is None:
        env = _ENV_BY_PROFILE[key] = Environment.for_target(profile.kubernetes_version, profile.feature_gates)
    return env


# ----------------------------------------------------------------------------------------------
# driver knowledge

_ATTR_TYPES = {"string": ty.STRING, "int": ty.INT, "bool": ty.BOOL, "version": ty.SEMVER}


def _standard_names() -> dict[str, str]:
    """Kubernetes-defined attribute names (the domain every driver may publish into)."""
    return {str(k): str(v) for k, v in (data().get("standard-attributes") or {}).items()}


def known_domains() -> list[str]:
    return sorted({STANDARD_DOMAIN, *drivers.known_drivers()})


class DriverView:
    """Attribute/capacity names and types for the configured driver releases."""

    def __init__(self, profile: ClusterProfile) -> None:
        self.profile = profile
        self._attrs: dict[str, dict[str, str] | None] = {}
        self._caps: dict[str, dict[str, str] | None] = {}

    def attributes(self, domain: str) -> dict[str, str] | None:
        if domain not in self._attrs:
            if domain == STANDARD_DOMAIN:
                self._attrs[domain] = {**_standard_names(), **drivers.attributes(self.profile, domain)}
            elif drivers.knows_driver(domain):
                self._attrs[domain] = drivers.attributes(self.profile, domain)
            else:
                self._attrs[domain] = None
        return self._attrs[domain]

    def capacities(self, domain: str) -> dict[str, str] | None:
        if domain not in self._caps:
            self._caps[domain] = drivers.capacities(self.profile, domain) if drivers.knows_driver(domain) else None
        return self._caps[domain]

    def attr_type(self, domain: str, name: str) -> ty.T | None:
        names = self.attributes(domain)
        if not names:
            return None
        return _ATTR_TYPES.get(str(names.get(name, "")))  # list(...) types stay dynamic


# ----------------------------------------------------------------------------------------------
# findings about one selector text


@dataclass
class NameIssue:
    """DRA602: an attribute/capacity name (or domain) the driver does not publish."""

    ref: AttrRef
    message: str
    replacement: str | None = None  # a case-only correction of the name
    #: every lookup of the same name in the selector (the finding points at the first)
    others: list[AttrRef] = field(default_factory=list)


@dataclass
class SelectorReport:
    program: Program
    names: list[NameIssue] = field(default_factory=list)
    #: DRA603 problems that only show at allocation time (literal arguments, attribute types)
    runtime: list[Diag] = field(default_factory=list)
    #: dralint's own failures on this selector (a bug to report; the selector is not fully checked)
    internal: list[Diag] = field(default_factory=list)


def analyze(text: str, profile: ClusterProfile, cache: dict[Any, Any]) -> SelectorReport:
    env = environment(profile)
    key = ("dralint.cel.analyze", text, env.key,
           tuple((d.name, d.version, tuple(sorted(d.feature_gates.items()))) for d in profile.drivers))
    got = cache.get(key)
    if isinstance(got, SelectorReport):
        return got
    view = cache.get(("dralint.cel.driverview", key[3]))
    if not isinstance(view, DriverView):
        view = DriverView(profile)
        cache[("dralint.cel.driverview", key[3])] = view
    prog = env.compile(text)
    report = SelectorReport(prog)
    report.runtime = [d for d in prog.diags if d.code == "runtime"]
    report.internal = [d for d in prog.diags if d.code == "internal"]
    if prog.ast is not None:
        report.names = _name_issues(prog, view)
        for d in env.check_refined(prog, view.attr_type):
            if d.code == "internal":
                report.internal.append(d)
                continue
            msg = d.message
            if d.fn in ("_==_", "_!=_") and len(d.args) == 2:
                outcome = "false" if d.fn == "_==_" else "true"
                msg = (f"compares values of different types ({ty.fmt(d.args[0])} and {ty.fmt(d.args[1])}), so it "
                       f"is always {outcome}: the attribute has the type the driver publishes, and CEL equality "
                       f"between different types is never true{_hint_tail(d.message)}")
            elif not msg.startswith("returns "):
                msg = (f"fails when evaluated: {msg} (the API server accepts it because attribute values are typed "
                       "dynamically; at allocation time the error stops the scheduler from allocating the claim)")
            report.runtime.append(Diag("runtime", d.start, d.end, msg))
    cache[key] = report
    return report


def device_type_issues(text: str, device_class: str | None, profile: ClusterProfile,
                       cache: dict[Any, Any]) -> list[NameIssue]:
    """Names the driver publishes, but not on the kind of device the request's class selects
    (`profile` exists on MIG devices only, so reading it on `gpu.nvidia.com` devices fails)."""
    if not device_class:
        return []
    info = drivers.class_info(device_class)
    if info is None or not info.device_type:
        return []
    key = ("dralint.cel.typeissues", text, info.name, environment(profile).key)
    got = cache.get(key)
    if isinstance(got, list):
        return got
    report = analyze(text, profile, cache)
    flagged = {(i.ref.start, i.ref.kind) for i in report.names}
    out: list[NameIssue] = []
    for ref in report.program.refs:
        if ref.guarded or ref.kind not in ("attributes", "capacity") or (ref.start, ref.kind) in flagged:
            continue
        if ref.domain != info.driver and ref.domain != STANDARD_DOMAIN:
            continue
        every = (drivers.attributes if ref.kind == "attributes" else drivers.capacities)(profile, ref.domain)
        typed = (drivers.attributes if ref.kind == "attributes" else drivers.capacities)(
            profile, ref.domain, info.device_type)
        if ref.name in every and ref.name not in typed:
            what = "attribute" if ref.kind == "attributes" else "capacity"
            out.append(NameIssue(ref, f"`{ref.name}` is not published on {info.device_type} devices, and class "
                                 f"`{info.name}` selects only those: on every device this request can get, the "
                                 f"lookup is a run-time error in Kubernetes that stops the scheduler from allocating "
                                 f"the claim (guard it with `has(...)`, or use the class that selects devices with "
                                 f"this {what})"))
    cache[key] = out
    return out


def _hint_tail(message: str) -> str:
    i = message.find("; ")
    return message[i:] if i != -1 else ""


def _name_issues(prog: Program, view: DriverView) -> list[NameIssue]:
    """One issue per unknown name (the first lookup), however often the selector reads it."""
    out: list[NameIssue] = []
    by_name: dict[tuple[str, str, str, bool], NameIssue] = {}
    for ref in sorted(prog.refs, key=lambda r: r.start):
        k = (ref.kind, ref.domain, ref.name, ref.guarded)
        if k in by_name:
            if ref.start != by_name[k].ref.start:
                by_name[k].others.append(ref)
            continue
        issue = _domain_issue(ref) if ref.kind.endswith("-domain") else _name_issue(ref, view)
        if issue is not None:
            by_name[k] = issue
            out.append(issue)
    for issue in out:
        if issue.others:
            issue.message += f" (the selector reads it {len(issue.others) + 1} times)"
    return out


def _domain_issue(ref: AttrRef) -> NameIssue | None:
    domains = known_domains()
    if ref.domain in domains:
        return None
    close = closest(ref.domain, domains, cutoff=0.8)
    if not close:
        return None
    what = "attribute" if ref.kind.startswith("attributes") else "capacity"
    return NameIssue(ref, f"`{ref.domain}` is not a {what} domain dralint knows; did you mean `{close}`? An "
                     "unknown domain reads as an empty map, so every name looked up in it is missing"
                     + ("." if ref.guarded else ": a run-time error that blocks allocation."))


def _name_issue(ref: AttrRef, view: DriverView) -> NameIssue | None:
    is_attr = ref.kind == "attributes"
    names = view.attributes(ref.domain) if is_attr else view.capacities(ref.domain)
    if names is None or ref.name in names:
        return None
    what = "attribute" if is_attr else "capacity"
    release = drivers.release_label(view.profile, ref.domain)
    rel_txt = f" (driver release {release})" if release else ""
    standard = ref.domain == STANDARD_DOMAIN
    lower = {n.lower(): n for n in names}
    case_fix = lower.get(ref.name.lower())
    close = case_fix or closest(ref.name, list(names), cutoff=0.75)
    gone = drivers.gone_attribute_note(view.profile, ref.domain, ref.name) if is_attr else None
    if standard and close is None and gone is None:
        return None  # other drivers may publish standard attributes dralint does not list
    # the other kind of lookup (capacity read as an attribute or the reverse)
    other = view.capacities(ref.domain) if is_attr else view.attributes(ref.domain)
    if other and ref.name in other:
        right = "capacity" if is_attr else "attributes"
        return NameIssue(ref, f"`{ref.name}` is a {'capacity' if is_attr else 'attribute'} of {ref.domain}, not "
                         f"{'an attribute' if is_attr else 'a capacity'}: read it as "
                         f"`device.{right}[\"{ref.domain}\"].{ref.name}`." + _consequence(ref, what))
    owner = f"{ref.domain} publishes" if not standard else "the configured drivers publish in this domain"
    msg = gone or f"`{ref.name}` is not {'an' if is_attr else 'a'} {what} {owner}{rel_txt}"
    if close:
        msg += f"; did you mean `{close}`?"
    elif not gone and len(names) <= 20:
        msg += f" (it publishes {', '.join(f'`{n}`' for n in sorted(names))})."
    else:
        msg += "."
    msg += _consequence(ref, what)
    return NameIssue(ref, msg, case_fix if case_fix and ref.rewritable else None)


def _consequence(ref: AttrRef, what: str) -> str:
    if ref.guarded:
        return " The guarded lookup never finds it, so this part of the selector never matches."
    article = "an" if what[0] in "aeiou" else "a"
    return (f" Looking up {article} {what} a device does not have is a run-time error in Kubernetes, not a "
            "non-match: the scheduler stops allocating the claim and the pod stays Pending (guard optional names "
            f"with `has(...)` or `\"{ref.name}\" in …`).")


# ----------------------------------------------------------------------------------------------
# positions


@dataclass
class Where:
    span: Span | None
    text: str  # "column 15 of the expression, line 12 column 30 of the file"


def locate_in_file(obj: K8sObject, path: JsonPath, expr: str, start: int, end: int) -> Where:
    """The file span of expression characters [start, end)."""
    before = expr[:start]
    eline_no = before.count("\n") + 1
    ecol = start - (before.rfind("\n") + 1) + 1
    at_end = start >= len(expr.rstrip())
    if at_end:
        in_expr = "at the end of the expression"
    elif eline_no > 1:
        in_expr = f"line {eline_no}, column {ecol} of the expression"
    else:
        in_expr = f"column {ecol} of the expression"
    parent = k8s.get(obj.data, *path[:-1]) if len(path) > 1 else obj.data
    key = path[-1]
    offs = None
    if isinstance(key, str):
        vo = value_offsets(parent, key)
        if vo is not None:
            offs = char_offsets(obj.file.text, vo[0], vo[1], expr)
    if offs is None:
        return Where(None, in_expr)
    sf = obj.file
    stripped = len(expr.rstrip())
    if start >= stripped and stripped > 0:
        # the end of the expression: point just after its last character, not at the next line
        s_off = offs[stripped - 1] + 1
        e_off = s_off + 1
    else:
        s_off = offs[min(start, len(offs) - 1)]
        last = min(max(end, start + 1), len(expr))
        e_off = offs[last - 1] + 1 if last > 0 else s_off + 1
        if e_off <= s_off:
            e_off = s_off + 1
    line, c = sf.line_col(s_off)
    eline, ec = sf.line_col(e_off)
    if eline != line:
        # keep the underline on one line
        eline, ec = line, len(sf.line_text(line)) + 1
        if ec <= c:
            ec = c + 1
    return Where(Span(line, c, eline, ec), f"{in_expr}; file line {line}, column {c}")
