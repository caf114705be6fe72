"""DRA111: custom resources of a DRA driver (NVIDIA's ComputeDomain) checked like built-in types.

The CRDs are data per driver release (``custom-resources`` and ``crd-types`` in
``schemas/drivers/*.yaml``): the version each release serves, its fields, required fields, enums
and bounds. An object of such a kind in an API version no release serves, or one that does not
match the configured release's schema, is rejected by the API server (a CRD validates with its
OpenAPI schema exactly as a built-in type does).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dralint.checks.registry import Context, rule
from dralint.inputs.index import K8sObject
from dralint.knowledge import drivers
from dralint.model import Violation


def _crd_kinds(ctx: Context) -> dict[str, tuple[str, str]]:
    """kind -> (served apiVersion, driver project title), over every driver's data."""
    hit: dict[str, tuple[str, str]] | None = ctx.cache.get("driver-crd-kinds")
    if hit is None:
        hit = {}
        for s in drivers.setups(ctx.profile):
            for kind, d in (s.data.raw.get("custom-resources") or {}).items():
                if isinstance(d, dict) and d.get("api-version"):
                    hit.setdefault(str(kind), (str(d["api-version"]), s.data.title))
        ctx.cache["driver-crd-kinds"] = hit
    return hit


def _is_driver_kind(kind: str | None, facets: int, ctx: Context) -> bool:
    return kind is not None and kind in _crd_kinds(ctx)


@rule("DRA111", when=_is_driver_kind)
def driver_custom_resource(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    kind = obj.kind
    if kind is None or obj.api_version is None:
        return
    known = _crd_kinds(ctx).get(kind)
    if known is None:
        return
    served, title = known
    group = served.split("/", 1)[0]
    if obj.group != group:
        return  # a kind of the same name in another API group is not this driver's
    if obj.api_version != served:
        yield Violation(
            f"{kind} `{obj.api_version}` is not served by any release of the {title} (its CRD serves "
            f"`{served}` only): the API server answers \"no matches for kind {kind} in version "
            f"{obj.api_version}\"; use `apiVersion: {served}`",
            ("apiVersion",),
            on="value",
        )
        return
    data: dict[str, Any] = obj.data
    for issue in drivers.validate_custom_resource(ctx.profile, data):
        release = drivers.release_label(ctx.profile, next(iter(_drivers_of(ctx, kind)), "")) or ""
        yield Violation(
            f"{issue.message} (the {kind} CRD of the {title}{' ' + release if release else ''})",
            issue.path,
            on=issue.on,
        )


def _drivers_of(ctx: Context, kind: str) -> list[str]:
    for s in drivers.setups(ctx.profile):
        if kind in (s.data.raw.get("custom-resources") or {}):
            return list(s.data.drivers)
    return []
