"""The small data types every part of dralint shares.

Rules yield `Violation`s that point into an object with a *path*; the engine turns each one into a
`Finding` with a file position (through `dralint.inputs.locate`). Fixes are data (`Fix` of `Edit`s), so the
fixer can inspect, order and verify them before anything is written.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Literal

#: The longest string a memo that lives beyond one object keeps as (part of) its key. Such keys come
#: from the linted files, and a memo must not keep a huge one alive after its file is gone; the real
#: ones are short (a label pair is at most 380 characters, a group, version and kind 253 + 63 + 63).
MEMO_KEY_CHARS = 380

#: A path into a parsed object: mapping keys and sequence indexes, e.g. ("spec", "containers", 0).
JsonPath = tuple["str | int", ...]


class Severity(IntEnum):
    """Ordered so that `severity >= fail_on` decides the exit code."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.strip().upper()]

    def __str__(self) -> str:
        return self.name.lower()


class Applicability(IntEnum):
    """How safe a fix is; higher is safer (the usual linter convention)."""

    DISPLAY_ONLY = 0
    UNSAFE = 1
    SAFE = 2

    def __str__(self) -> str:
        return {0: "display-only", 1: "unsafe", 2: "safe"}[int(self)]


EditOp = Literal[
    "set", "delete", "rename", "insert", "append", "wrap", "unwrap", "insert_document", "replace_document"
]


@dataclass(frozen=True)
class Edit:
    """One change to one document, addressed by a path relative to the object.

    - ``set``: replace the value at ``path`` (creating missing parent mappings).
    - ``delete``: remove the key or sequence item at ``path``.
    - ``rename``: rename the key at ``path`` to ``key``, keeping its position and value.
    - ``insert``: add ``key: value`` to the mapping at ``path``; ``index`` is the position
      (None = append at the end); ``after`` names an existing key to insert after.
    - ``append``: append ``value`` to the sequence at ``path`` (creating it if missing).
    - ``wrap``: move the keys listed in ``value`` (a list or tuple of key names) of the mapping at ``path`` into
      a new child mapping named ``key``, placed where the first moved key was (v1beta1 flat request
      -> ``exactly``; ResourceClaimTemplate ``spec.devices`` -> ``spec.spec.devices``). Comments on the
      moved keys move with them.
    - ``unwrap``: dissolve the mapping at ``path`` (e.g. a ResourceSlice device's ``basic``): its keys
      take its place in the parent, in order.
    - ``insert_document``: add a new YAML document holding ``value`` right after this object's
      document.
    - ``replace_document``: replace this object's whole content with ``value`` (used by
      structural conversions such as apiVersion upgrades; the fixer keeps comments where the
      keys survive).
    """

    op: EditOp
    path: JsonPath = ()
    value: Any = None
    key: str | None = None
    index: int | None = None
    after: str | None = None
    comment: str | None = None


@dataclass(frozen=True)
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Span:
    """1-based start and end of a region in a file (end column is exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Violation:
    """What a rule yields: a message about the node at ``path`` inside the object.

    ``on`` says whether the position should be the mapping key (``"key"``, the default: a field
    is wrong or unexpected) or its value (``"value"``: the value has the wrong type or content).
    File-level rules that already know the position pass ``span`` instead of a path.
    ``severity`` lets a rule report a milder variant (advice next to its errors); a severity the
    user set for the rule in the configuration still wins.
    """

    message: str
    path: JsonPath = ()
    on: Literal["key", "value"] = "key"
    fix: Fix | None = None
    span: Span | None = None
    severity: Severity | None = None


@dataclass(frozen=True)
class ObjectRef:
    api_version: str | None
    kind: str | None
    namespace: str | None
    name: str | None

    def as_json(self) -> dict[str, str | None]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }

    def label(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind or '?'} {ns}{self.name or '?'}"


@dataclass
class Finding:
    rule: str
    name: str
    severity: Severity
    message: str
    path: str
    span: Span
    object: ObjectRef | None = None
    source: str | None = None
    fix: Fix | None = None
    #: internal: which document of the file the finding belongs to (for fixes), -1 = file level
    doc_index: int = -1
    #: internal: path of the object inside its document (non-empty for `kind: List` items)
    base_path: JsonPath = ()
    #: internal: the violation path relative to the object
    obj_path: JsonPath = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.span.line, self.span.column, self.rule)

    def to_dict(self) -> dict[str, Any]:
        """The finding as in ``--format json`` (the contract in RULES.md): plain, JSON-serialisable data."""
        fix = None
        if self.fix is not None:
            fix = {"safety": "safe" if self.fix.applicability == Applicability.SAFE else "unsafe",
                   "title": self.fix.title}
        return {
            "rule": self.rule,
            "name": self.name,
            "severity": str(self.severity),
            "message": self.message,
            "path": self.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "object": self.object.as_json() if self.object else None,
            "source": self.source,
            "fix": fix,
        }


class ConfigError(ValueError):
    """Invalid configuration or options (exit code 2).

    Defined here rather than in `dralint.engine.config` (which re-exports it) because input
    preparation below the engine (Helm/kustomize rendering) refuses bad options with it too."""


# ----------------------------------------------------------------------------------------------
# plain data: what the values of edits and parsed documents mean (shared by fixes, rules and migrate)


def to_plain(v: Any) -> Any:
    """Located or ruamel data to plain dicts/lists (aliases become copies)."""
    if isinstance(v, dict):
        return {str(k) if not isinstance(k, str) else k: to_plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_plain(x) for x in v]
    return v


def fingerprint(v: Any) -> Hashable | None:
    """A hashable value equal for two values exactly when `same` calls them equal; None when there is
    none (a NaN, which hashes by identity; a tuple or an unknown type is left to `same`)."""
    if isinstance(v, str):
        return ("s", str(v))
    if isinstance(v, dict):
        parts = []
        for k, x in v.items():
            f = fingerprint(x)
            if f is None or not isinstance(k, str):
                return None
            parts.append((k, f))
        return ("d", frozenset(parts))
    if isinstance(v, list):
        items = []
        for x in v:
            f = fingerprint(x)
            if f is None:
                return None
            items.append(f)
        return ("l", tuple(items))
    if v is None or type(v) in (bool, int) or (type(v) is float and v == v):
        return ("x", type(v), v)
    return None


def same(a: Any, b: Any) -> bool:
    """Equality that tells ``True`` from ``1`` (YAML does), and that takes a NaN (``.nan``) for itself:
    an unchanged ``.nan`` is the same value, not an edit."""
    if type(a) is not type(b):
        if isinstance(a, str) and isinstance(b, str):
            return str(a) == str(b)
        if not (isinstance(a, dict) and isinstance(b, dict)) and not (isinstance(a, list) and isinstance(b, list)):
            return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) or (type(a) is float and a != a and b != b)
