"""DRA504: container extended resources that only DRA can serve (Kubernetes' DRAExtendedResource).

A container may ask for ``deviceclass.resource.kubernetes.io/<class>: 1`` instead of a claim: with
the DRAExtendedResource gate on, the scheduler allocates a device of that class through DRA and
creates a hidden claim for the pod. No device plugin ever advertises such a name, so

- with the gate off in the target minor (alpha and off in 1.34 and 1.35, from
  ``schemas/kubernetes/lifecycle.yaml``), the pod stays Pending, always;
- with the gate on, the class must exist: one defined in the linted files, installed by a
  configured driver or declared in the configuration; a missing class is judged as DRA305 judges a
  claim's (an error only when provably absent).

Explicit names (``nvidia.com/gpu`` mapped by a class's ``extendedResourceName``) may still be served
by a device plugin, so they are DRA208's information and DRA501's (the dropped class field), not
this rule's.
"""

from __future__ import annotations

from collections.abc import Iterator

from dralint.checks.registry import Context, rule
from dralint.checks.wiring import known_classes
from dralint.inputs.index import K8sObject
from dralint.knowledge import k8s
from dralint.knowledge.classes import explain_missing, unknown_driver_of
from dralint.model import Severity, Violation

#: the resource-name prefix the API defines for "a device of this class" (KEP-5004); not per release
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
GATE = "DRAExtendedResource"


@rule("DRA504", needs="pod")
def implicit_extended_resource(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    if not obj.pod_specs:
        return
    life = ctx.lifecycle()
    gate = life.gate(GATE)
    for ps in obj.pod_specs:
        for c in k8s.containers(ps):
            seen: set[str] = set()
            for section, m in k8s.resource_maps(c):
                for name in m:
                    if not isinstance(name, str) or not name.startswith(IMPLICIT_PREFIX) or name in seen:
                        continue
                    seen.add(name)  # limits and requests name it together: one finding
                    cls = name[len(IMPLICIT_PREFIX):]
                    path = (*c.path, "resources", section, name)
                    if gate is None or not gate.enabled:
                        minor = ctx.profile.kubernetes_version
                        state = (f"feature gate {GATE} ({gate.describe()} in Kubernetes {minor})" if gate
                                 else f"feature gate {GATE}, which Kubernetes {minor} does not have,")
                        yield Violation(
                            f"container `{c.name}` asks for `{name}`, a device of class `{cls}` allocated through "
                            f"DRA; that needs the {state} and no device plugin serves this name, so the pod stays "
                            f"Pending: enable the gate (`feature-gates: {{{GATE}: true}}` on every component) or "
                            "use a ResourceClaimTemplate and `resources.claims`",
                            path,
                        )
                        continue
                    if cls in known_classes(ctx) or unknown_driver_of(cls, ctx.profile):
                        continue
                    miss = explain_missing(cls, ctx.profile, known_classes(ctx))
                    yield Violation(
                        f"container `{c.name}` asks for `{name}`, but device class `{cls}` is not defined in the "
                        f"linted files; {miss.reason}"
                        + ("; the pod stays Pending" if miss.proven else ""),
                        path,
                        severity=None if miss.proven else Severity.WARNING,
                    )
