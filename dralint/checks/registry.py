"""Rule registration: ``@rule("DRA201")`` binds a check function to its ``rules/`` folder.

A check is a small generator over one unit — an object (default), a whole file, or a non-object
YAML document (``values``: Helm values, plugin configs) — that yields `Violation`s with paths.
The engine does scoping, positions, severities and suppressions; a test keeps this registry and
the ``rules/`` folders one-to-one.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from dralint.model import Violation

if TYPE_CHECKING:
    from dralint.inputs.index import Index, K8sObject, ValuesDoc
    from dralint.inputs.load import SourceFile
    from dralint.knowledge.lifecycle import Lifecycle
    from dralint.knowledge.profile import ClusterProfile

Scope = Literal["object", "file", "values"]
#: what an object check needs to find anything: a pod spec, a pod spec that uses DRA claims, or a
#: resource.k8s.io object (a tuple: any of them)
Need = Literal["pod", "claims", "dra"]
Needs = Need | tuple[Need, ...]
#: what an object rule judges: the object as meant (shape mistakes corrected, unknown versions
#: converted) or as written (the rules about the version and shape themselves)
Shape = Literal["intended", "written"]


@dataclass
class Context:
    """What a check may look at besides its own unit."""

    index: Index
    profile: ClusterProfile
    options: dict[str, Any] = field(default_factory=dict)
    #: per-run memo shared by all checks (compiled CEL programs, validators, lookups); never keyed by
    #: a unit's ``id()`` (units are freed as a run streams): per-unit results go in ``unit.memo``
    cache: dict[Any, Any] = field(default_factory=dict)

    def lifecycle(self) -> Lifecycle:
        """The versions, gates and shapes of the run's profile (one profile per run: looked up once)."""
        hit: Lifecycle | None = self.cache.get("lifecycle")
        if hit is None:
            from dralint.knowledge.lifecycle import for_profile

            hit = self.cache["lifecycle"] = for_profile(self.profile)
        return hit


CheckFn = Callable[..., Iterator[Violation]]
#: (kind, facets, the check's context) -> whether the check may find anything there
Applies = Callable[[str | None, int, Context], bool]


@dataclass(frozen=True)
class RuleImpl:
    code: str
    fn: CheckFn
    scope: Scope
    #: object kinds the check applies to (None = every object); filtered by the engine
    kinds: frozenset[str] | None
    #: objects without any of these are skipped by the engine (see `K8sObject.facets`)
    needs: tuple[Need, ...] | None = None
    #: whether the check can find anything on an object of this kind and facets in this run (None:
    #: it can); asked once per (kind, facets) and run, for checks that apply to every object but find
    #: something only on kinds that data or the profile name. The check must not rely on it: other
    #: callers (a migration's plan) call it without asking
    when: Applies | None = None


REGISTRY: dict[str, RuleImpl] = {}


def rule(
    code: str, *, scope: Scope = "object", kinds: tuple[str, ...] | None = None, needs: Needs | None = None,
    shape: Shape = "intended", when: Applies | None = None,
) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` for ``code``. An object rule judges the object as its author meant it
    (`dralint.checks.intended`) unless it says ``shape="written"`` (it judges the shape itself)."""

    def deco(fn: CheckFn) -> CheckFn:
        known = REGISTRY.get(code)
        if known is not None and getattr(known.fn, "__wrapped__", known.fn) is not fn:
            raise RuntimeError(f"rule {code} registered twice ({known.fn.__qualname__}, {fn.__qualname__})")
        wants = (needs,) if isinstance(needs, str) else needs
        run = fn
        if scope == "object" and shape == "intended":
            from dralint.checks.intended import on_intended  # imports this module: bound at first use

            run = on_intended(fn)
        REGISTRY[code] = RuleImpl(code, run, scope, frozenset(kinds) if kinds else None, wants, when)
        return fn

    return deco


_loaded = False


def load_checks() -> dict[str, RuleImpl]:
    """Import every module of ``dralint.checks`` so that their ``@rule`` decorators run."""
    global _loaded
    if not _loaded:
        import dralint.checks as pkg

        for mod in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"dralint.checks.{mod.name}")
        _loaded = True
    return REGISTRY


# Type aliases for check signatures (documentation only).
ObjectCheck = Callable[["K8sObject", Context], Iterator[Violation]]
FileCheck = Callable[["SourceFile", Context], Iterator[Violation]]
ValuesCheck = Callable[["ValuesDoc", Context], Iterator[Violation]]
