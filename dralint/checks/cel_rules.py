"""DRA6xx: CEL device selectors in DeviceClasses, ResourceClaims and ResourceClaimTemplates.

Every distinct selector text is compiled once per run for the target environment (see
``dralint.cel``); the rules only look up the cached analysis and place findings on the exact
character in the file, whatever the YAML scalar style.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from dralint.checks.registry import Context, rule
from dralint.inputs.index import K8sObject
from dralint.knowledge import k8s
from dralint.model import Applicability, Edit, Fix, JsonPath, Severity, Violation

if TYPE_CHECKING:
    from dralint.cel.analysis import SelectorReport
    from dralint.cel.checker import Diag

# the CEL stack is imported by the first rule run that meets a selector, not by every `check`
# (a warm run over an unchanged repository runs no rule)

_KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate")

_REJECTED = "The API server rejects the object"


def _reports(obj: K8sObject, ctx: Context) -> list[tuple[JsonPath, str, SelectorReport]]:
    """The analysed selectors of one object, computed once for all five rules."""
    got = obj.memo.get("cel-reports")
    if got is not None:
        return got  # type: ignore[no-any-return]
    from dralint.cel.analysis import analyze, selectors_of

    out = [(path, text, analyze(text, ctx.profile, ctx.cache)) for path, text in selectors_of(obj)]
    obj.memo["cel-reports"] = out
    return out


def _violation(obj: K8sObject, path: JsonPath, text: str, d: Diag, message: str,
               fix: Fix | None = None) -> Violation:
    from dralint.cel.analysis import locate_in_file

    where = locate_in_file(obj, path, text, d.start, d.end)
    return Violation(f"{message} ({where.text})", path, on="value", fix=fix, span=where.span)


def _first(diags: list[Diag]) -> tuple[Diag, int] | None:
    if not diags:
        return None
    ranked = sorted(diags, key=lambda d: (0 if "undeclared reference" in d.message else 1, d.start))
    return ranked[0], len(diags) - 1


@rule("DRA601", kinds=_KINDS)
def cel_syntax_error(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for path, text, rep in _reports(obj, ctx):
        for d in rep.program.diags:
            if d.code == "syntax":
                yield _violation(obj, path, text, d, f"CEL selector does not parse: {d.message}. {_REJECTED}")


def _device_class(obj: K8sObject, path: JsonPath) -> str | None:
    """The class a selector's request uses (the DeviceClass itself for class selectors)."""
    if obj.kind == "DeviceClass":
        return obj.name
    alt = k8s.get(obj.data, *path[:-4])  # (..., "selectors", i, "cel", "expression")
    name = alt.get("deviceClassName") if isinstance(alt, dict) else None
    return name if isinstance(name, str) else None


@rule("DRA602", kinds=_KINDS)
def cel_unknown_attribute(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    from dralint.cel.analysis import device_type_issues
    from dralint.cel.checker import Diag

    for path, text, rep in _reports(obj, ctx):
        typed = device_type_issues(text, _device_class(obj, path), ctx.profile, ctx.cache)
        for issue in [*rep.names, *typed]:
            ref = issue.ref
            fix = None
            if issue.replacement and all(r.rewritable for r in issue.others):
                new = text
                for r in sorted([ref, *issue.others], key=lambda r: -r.start):  # from the end: offsets stay valid
                    if r.start < len(new) and new[r.start] in "\"'":
                        new = new[: r.start + 1] + issue.replacement + new[r.end - 1 :]
                    else:
                        new = new[: r.start] + issue.replacement + new[r.end :]
                fix = Fix(f"Rename `{ref.name}` to `{issue.replacement}`", Applicability.SAFE,
                          (Edit("set", path, value=new),))
            d = Diag("attr", ref.start, ref.end, issue.message)
            yield _violation(obj, path, text, d, issue.message, fix)


@rule("DRA603", kinds=_KINDS)
def cel_type_error(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for path, text, rep in _reports(obj, ctx):
        first = _first([d for d in rep.program.diags if d.code == "type"])
        if first is not None:
            d, more = first
            extra = f" (and {more} more type error{'s' if more > 1 else ''})" if more else ""
            yield _violation(obj, path, text, d, f"CEL selector does not type-check: {d.message}{extra}. "
                             f"{_REJECTED}")
            continue
        for d in rep.runtime:
            yield _violation(obj, path, text, d, f"CEL selector {d.message}")
        for d in rep.internal:  # dralint's own failure: said plainly, as a warning (the verdict is unknown)
            v = _violation(obj, path, text, d, f"CEL selector {d.message}")
            yield Violation(v.message, v.path, on=v.on, span=v.span, severity=Severity.WARNING)


@rule("DRA604", kinds=_KINDS)
def cel_unavailable_in_version(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for path, text, rep in _reports(obj, ctx):
        for d in rep.program.diags:
            if d.code == "unavailable":
                yield _violation(obj, path, text, d, f"{d.message}. {_REJECTED} as a compile error")


@rule("DRA605", kinds=_KINDS)
def cel_cost_exceeded(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    for path, text, rep in _reports(obj, ctx):
        for d in rep.program.diags:
            if d.code == "cost":
                yield _violation(obj, path, text, d, f"CEL selector is over a limit: {d.message}")
