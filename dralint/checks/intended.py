"""What the semantic rules judge: the object as its author meant it, reported where they wrote it.

A claim written in the wrong shape (DRA108, DRA109) or in a resource.k8s.io version the target
Kubernetes does not know (DRA102, when the safe conversion to a served version exists) still says
plainly what it asks for. Rules that look for requests, classes, selectors and counts at their proper
places would find nothing there and stay silent, hiding every other mistake until the shape is
fixed. So the registry runs every object rule, except the few that judge the written shape itself
(``shape="written"``: the version and shape rules, whose fixes edit that shape), on `view_for`:
the DRA108/DRA109 rewrite of `dralint.inputs.intended`, then the conversion DRA102 offers.

Each problem is reported once: the shape rule reports the shape, the semantic rules report the
content, and the schema rule (DRA101) no longer meets the misplaced fields as unknown ones.
Findings keep the written positions (the rewritten tree reuses the file's located nodes) and their
paths are mapped back; a fix is kept only when every edit maps onto a node the file has (a fix
computed on a converted object would edit a version the file does not use, so it is dropped).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator

from dralint.checks.registry import Context
from dralint.inputs import intended
from dralint.inputs.index import K8sObject
from dralint.knowledge import lifecycle
from dralint.knowledge.lifecycle import GROUP
from dralint.model import Violation

#: the kinds of the DRA group whose view may differ from the written object: for any other object
#: `view_for` is None, and the engine calls the rules without the view (`RuleImpl.as_written`)
CONVERTIBLE = frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"})


def view_for(obj: K8sObject, ctx: Context) -> intended.View | None:
    """The rewritten object the semantic rules judge, or None when ``obj`` is fine as written."""
    if obj.group != GROUP or obj.kind not in CONVERTIBLE:
        return None
    if "intended-view" in obj.memo:
        return obj.memo["intended-view"]  # type: ignore[no-any-return]
    view = intended.shape_view(obj)
    converted = _converted(view or intended.View(obj, ()), ctx)
    if converted is not None:
        view = converted
    obj.memo["intended-view"] = view
    return view


def _converted(view: intended.View, ctx: Context) -> intended.View | None:
    """The conversion DRA102 offers, for a version the target does not know at all (one it knows,
    served or not, the rules read as written: every rule handles the flat request shape)."""
    obj = view.obj
    lc = ctx.lifecycle()
    kind = obj.kind or ""
    if not lc.known or lc.knows(obj.version, kind) or obj.version in (lifecycle.classic().get("versions") or {}):
        return None  # classic DRA (v1alpha2) has no mechanical conversion: DRA102 says to rewrite it
    target = lc.conversion_target(kind, obj.version)
    if target is None:
        return None
    from dralint.checks.conformance import conversion  # conformance's rules are registered through this module

    edits, _ = conversion(obj, target)
    if edits is None:
        return None
    out = intended.apply(view, intended.steps_from_edits(edits), converted=True)
    return out if out is not view else None


def mapped(view: intended.View, v: Violation) -> Violation:
    """A violation found on the rewritten object, addressed to the written one."""
    path, _ = view.origin(v.path)
    fix = v.fix
    if fix is not None:
        edits = [view.edit(e) for e in fix.edits]
        fix = None if view.converted or any(e is None for e in edits) else \
            dataclasses.replace(fix, edits=tuple(e for e in edits if e is not None))
    return dataclasses.replace(v, path=path, fix=fix)


def on_intended(fn: Callable[..., Iterator[Violation]]) -> Callable[..., Iterator[Violation]]:
    """``fn`` run on the object as meant (see the module doc). The engine calls ``fn`` itself
    (`as_written`) for an object whose view is the object (not of `CONVERTIBLE`)."""

    @functools.wraps(fn)
    def run(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
        view = view_for(obj, ctx)
        if view is None:
            return fn(obj, ctx)
        return (mapped(view, v) for v in fn(view.obj, ctx))

    run.as_written = fn  # type: ignore[attr-defined]
    return run


def as_written(fn: Callable[..., Iterator[Violation]]) -> Callable[..., Iterator[Violation]]:
    """The rule ``fn`` without the intended view: itself unless `on_intended` made it."""
    return getattr(fn, "as_written", fn)
