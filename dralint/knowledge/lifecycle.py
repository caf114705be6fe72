"""resource.k8s.io lifecycle for a cluster profile: served versions, deprecation, feature gates.

Reads ``schemas/kubernetes/lifecycle.yaml`` (the knowledge) and combines it with the user's
`ClusterProfile` (target minor, ``--feature-gates``, ``--runtime-config``). Rules ask questions;
the answers come from the data, so a new Kubernetes minor is a data change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from dralint.knowledge.catalog import load_data
from dralint.knowledge.k8s import DRA_GROUP
from dralint.knowledge.profile import ClusterProfile
from dralint.model import JsonPath

GROUP = DRA_GROUP
CLAIM_SPEC_BASE: dict[str, tuple[str, ...]] = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}


def minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(x) for x in minor.split("."))


def _raw() -> dict[str, Any]:
    data = load_data("kubernetes/lifecycle.yaml")
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class Release:
    """When one version of one kind appeared, was deprecated, is planned to go, and was actually gone."""

    version: str
    kind: str
    introduced: str | None = None
    deprecated: str | None = None
    removal: str | None = None
    gone: str | None = None


@dataclass(frozen=True)
class Gate:
    name: str
    stage: str
    default: bool
    locked: bool
    #: effective value for the profile (default unless the profile overrides an unlocked gate)
    enabled: bool
    #: the profile set it explicitly
    overridden: bool

    def describe(self) -> str:
        state = "on" if self.default else "off"
        lock = ", locked" if self.locked else ""
        return f"{self.stage}, {state} by default{lock}"


@dataclass(frozen=True)
class Control:
    """One entry of a gate's ``controls`` list."""

    gate: str
    kinds: tuple[str, ...]
    paths: tuple[str, ...]
    kind: bool
    when_off: str
    effect: str
    minors: tuple[str, ...]


@dataclass(frozen=True)
class GatedUse:
    """A field (or the kind itself) of one object that needs a gate which is off for the profile."""

    gate: Gate
    control: Control
    path: JsonPath
    #: the pattern that matched (for messages), e.g. "@claimspec.devices.requests[].firstAvailable"
    pattern: str


def _parse_path(pattern: str) -> list[tuple[str, str]]:
    """``a.b[].c{}`` -> [("a",""), ("b","[]"), ("c","{}")]."""
    out: list[tuple[str, str]] = []
    for seg in pattern.split("."):
        m = re.fullmatch(r"(@?[A-Za-z0-9_-]+)(\[\]|\{\})?", seg)
        if not m:
            raise ValueError(f"bad path pattern segment {seg!r} in {pattern!r}")
        out.append((m.group(1), m.group(2) or ""))
    return out


@cache
def _pattern(pattern: str) -> tuple[tuple[str, str], ...]:
    return tuple(_parse_path(pattern))


def match_paths(data: Any, pattern: str, base: JsonPath = ()) -> list[tuple[JsonPath, Any]]:
    """Every (path, value) in ``data`` matching ``pattern`` (without ``@`` placeholders), in document
    order. A list, gathered without a generator per step: the gates and defaults match a dozen
    patterns on every DRA object."""
    out: list[tuple[JsonPath, Any]] = []
    _match(data, _pattern(pattern), 0, base, out)
    return out


def _match(node: Any, segs: tuple[tuple[str, str], ...], i: int, path: JsonPath,
           out: list[tuple[JsonPath, Any]]) -> None:
    n = len(segs)
    while i < n:
        key, fan = segs[i]
        if not isinstance(node, dict) or key not in node:
            return
        child = node[key]
        path = (*path, key)
        if fan:  # "[]": every item of a list; "{}": every value of a mapping
            items = enumerate(child) if fan == "[]" and isinstance(child, list) else (
                child.items() if fan == "{}" and isinstance(child, dict) else ())
            for k, item in items:
                if i + 1 == n:
                    out.append(((*path, k), item))
                else:
                    _match(item, segs, i + 1, (*path, k), out)
            return
        node = child
        i += 1
    out.append((path, node))


def _gate_controls() -> dict[str, tuple[Control, ...]]:
    out: dict[str, tuple[Control, ...]] = {}
    for name, spec in (_raw().get("gates") or {}).items():
        items = []
        for c in (spec or {}).get("controls") or []:
            items.append(Control(
                gate=name,
                kinds=tuple(c.get("kinds") or ()),
                paths=tuple(c.get("paths") or ()),
                kind=bool(c.get("kind", False)),
                when_off=str(c.get("when_off", "dropped")),
                effect=str(c.get("effect", "")),
                minors=tuple(str(m) for m in c.get("minors") or ()),
            ))
        out[name] = tuple(items)
    return out


@cache
def gate_controls() -> dict[str, tuple[Control, ...]]:
    return _gate_controls()


@cache
def releases() -> dict[tuple[str, str], Release]:
    out: dict[tuple[str, str], Release] = {}
    for version, kinds in (_raw().get("releases") or {}).items():
        for kind, r in (kinds or {}).items():
            r = r or {}
            out[(version, kind)] = Release(version, kind, r.get("introduced"), r.get("deprecated"), r.get("removal"),
                                           r.get("gone"))
    return out


def shapes() -> dict[str, Any]:
    s = _raw().get("shapes")
    return s if isinstance(s, dict) else {}


def classic() -> dict[str, Any]:
    c = _raw().get("classic")
    return c if isinstance(c, dict) else {}


def minors() -> list[str]:
    return sorted((_raw().get("minors") or {}), key=minor_key)


def first_minor_with_default_on(gate: str) -> str | None:
    for m in minors():
        g = ((_raw()["minors"][m] or {}).get("gates") or {}).get(gate)
        if isinstance(g, dict) and g.get("default"):
            return m
    return None


class Lifecycle:
    """Answers for one profile (target minor + feature gates + runtime-config)."""

    def __init__(self, profile: ClusterProfile) -> None:
        self.profile = profile
        self.minor = profile.kubernetes_version
        table = _raw().get("minors") or {}
        data = table.get(self.minor)
        #: the minor whose data answers: the target's own, or the newest one for a target newer than the data
        self.data_minor: str | None = self.minor if isinstance(data, dict) else None
        newest = minors()[-1] if table else None
        if data is None and newest and _safe_key(self.minor) > minor_key(newest):
            data, self.data_minor = table[newest], newest
        #: False when no data applies (a target older than the data): rules then stay silent
        self.known = isinstance(data, dict)
        self._data: dict[str, Any] = data if isinstance(data, dict) else {}
        self._versions: dict[str, dict[str, Any]] = {
            str(v): (spec or {}) for v, spec in (self._data.get("versions") or {}).items()
        }
        self._gates: dict[str, Gate] = {}
        for name, g in (self._data.get("gates") or {}).items():
            g = g or {}
            default = bool(g.get("default", False))
            locked = bool(g.get("locked", False))
            override = profile.feature_gates.get(name)
            # a locked gate cannot be changed (the component refuses to start): keep the default
            enabled = default if locked or override is None else bool(override)
            self._gates[name] = Gate(name, str(g.get("stage", "")), default, locked, enabled, override is not None)
        # the controls of gates that are off for this profile, computed once: most objects need none
        self._off: list[tuple[Gate, Control]] = [
            (self._gates[name], c) for name, controls in gate_controls().items()
            if name in self._gates and not self._gates[name].enabled
            for c in controls if not c.minors or self.minor in c.minors
        ]

    # --- API versions -------------------------------------------------------------------------

    def versions(self) -> list[str]:
        """resource.k8s.io versions this minor's API server knows (newest first by shapes.order)."""
        order = list(shapes().get("order") or [])
        return sorted(self._versions, key=lambda v: order.index(v) if v in order else len(order))

    def knows(self, version: str, kind: str | None = None) -> bool:
        spec = self._versions.get(version)
        if spec is None:
            return False
        return kind is None or kind in (spec.get("kinds") or ())

    def kinds(self, version: str) -> list[str]:
        return list((self._versions.get(version) or {}).get("kinds") or ())

    def default_on(self, version: str) -> bool:
        return bool((self._versions.get(version) or {}).get("default", False))

    def runtime_config(self, version: str) -> bool | None:
        """The operator's explicit choice for ``resource.k8s.io/<version>``, if any (specific wins)."""
        rc = self.profile.runtime_config
        for key in (f"{GROUP}/{version}", f"api/{_stage_of(version)}", "api/all"):
            if key in rc:
                return bool(rc[key])
        return None

    def served(self, version: str, kind: str | None = None) -> bool:
        """Known to this minor and enabled (by default or through runtime-config)."""
        if not self.knows(version, kind):
            return False
        choice = self.runtime_config(version)
        return self.default_on(version) if choice is None else choice

    def release(self, version: str, kind: str) -> Release | None:
        return releases().get((version, kind))

    def deprecated(self, version: str, kind: str) -> Release | None:
        """The release record when ``version``/``kind`` is deprecated in the target minor."""
        r = self.release(version, kind)
        if r is None or not r.deprecated or not self.known:
            return None
        return r if minor_key(self.minor) >= minor_key(r.deprecated) else None

    def conversion_target(self, kind: str, current: str) -> str | None:
        """The preferred served, non-deprecated version of ``kind`` other than ``current``."""
        for v in self.versions():
            if v != current and self.served(v, kind) and self.deprecated(v, kind) is None:
                return v
        return None

    def limit(self, name: str, fallback: int) -> int:
        override = (self._data.get("limits") or {}).get(name)
        if isinstance(override, int):
            return override
        base = (_raw().get("limits") or {}).get(name)
        return base if isinstance(base, int) else fallback

    # --- feature gates ------------------------------------------------------------------------

    def gate(self, name: str) -> Gate | None:
        """The gate as the profile has it; None when the target minor has no such gate."""
        return self._gates.get(name)

    def gate_enabled(self, name: str) -> bool | None:
        g = self._gates.get(name)
        return None if g is None else g.enabled

    def gates(self) -> dict[str, Gate]:
        return dict(self._gates)

    def gated_uses(self, kind: str | None, data: Any, pod_spec_paths: list[JsonPath]) -> list[GatedUse]:
        """Fields (and kinds) of one object that need a gate the profile has off.

        Gates the target minor does not have are skipped: a field that does not exist there at
        all is a schema violation (DRA101), not a gate question.
        """
        out: list[GatedUse] = []
        if not isinstance(data, dict):
            return out
        for g, c in self._off:
            if c.kinds and kind not in c.kinds:
                continue
            if c.kind and kind in c.kinds:
                out.append(GatedUse(g, c, ("kind",), kind or ""))
            for pattern in c.paths:
                for base, rest in expand(pattern, kind, pod_spec_paths):
                    for path, value in match_paths(k8s_get(data, base), rest, base):
                        if meaningful(value):
                            out.append(GatedUse(g, c, path, pattern))
        return out


def expand(pattern: str, kind: str | None, pod_spec_paths: list[JsonPath]) -> list[tuple[JsonPath, str]]:
    """Resolve a leading ``@claimspec``/``@podspec`` into concrete base paths: (base, the pattern
    below it) for each, ``((), pattern)`` for a pattern without a placeholder."""
    head, _, rest = pattern.partition(".")
    if head == "@claimspec":
        base = CLAIM_SPEC_BASE.get(kind or "")
        return [(base, rest)] if base else []
    if head == "@podspec":
        return [(p, rest) for p in pod_spec_paths]
    return [((), pattern)]


def k8s_get(data: Any, path: JsonPath) -> Any:
    for step in path:
        if isinstance(step, str) and isinstance(data, dict):
            data = data.get(step)
        elif isinstance(step, int) and isinstance(data, list) and 0 <= step < len(data):
            data = data[step]
        else:
            return None
    return data


def meaningful(value: Any) -> bool:
    """Dropping an unset/false/empty field changes nothing, so it is not worth a finding."""
    return value not in (None, False, "", [], {})


def _safe_key(minor: str) -> tuple[int, ...]:
    try:
        return minor_key(minor)
    except ValueError:
        return ()


def _stage_of(version: str) -> str:
    if "alpha" in version:
        return "alpha"
    if "beta" in version:
        return "beta"
    return "ga"


_CACHE: dict[tuple[Any, ...], Lifecycle] = {}


def for_profile(profile: ClusterProfile) -> Lifecycle:
    """One `Lifecycle` per distinct profile content (profiles are mutable dataclasses: key by value)."""
    key = (profile.kubernetes_version, tuple(sorted(profile.feature_gates.items())),
           tuple(sorted(profile.runtime_config.items())))
    hit = _CACHE.get(key)
    if hit is None:
        hit = Lifecycle(profile)
        _CACHE[key] = hit
    return hit


@cache
def enum_values(name: str, minor: str) -> list[str]:
    """Values of an enum-like field accepted by ``minor`` (all values when the minor is unknown)."""
    spec = (_raw().get("enums") or {}).get(name) or {}
    out = []
    for value, since in spec.items():
        try:
            if minor_key(minor) >= minor_key(str(since)):
                out.append(str(value))
        except ValueError:
            out.append(str(value))
    return out


def enum_since(name: str, value: str) -> str | None:
    since = ((_raw().get("enums") or {}).get(name) or {}).get(value)
    return str(since) if since is not None else None
