"""Objects and the cross-file index.

Every Kubernetes object in every loaded file becomes a `K8sObject`; `kind: List` documents (as
``kubectl get -o yaml`` prints them) are expanded into their items. The `Index` answers the
questions cross-object rules ask ("is there a ResourceClaimTemplate `x` in namespace `y`?") over
*all* files in the context, while findings are only reported for the target files.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from dralint.inputs.load import Document, SourceFile
from dralint.knowledge import k8s
from dralint.model import JsonPath, ObjectRef

#: `K8sObject.facets` bits: the object holds a pod spec / a pod spec that uses DRA claims / it is a
#: resource.k8s.io object
POD = 1
CLAIMS = 2
DRA = 4

T = TypeVar("T")


class once(Generic[T]):
    """A property computed on first use and then stored on the instance.

    `functools.cached_property` does the same, but on Python 3.11 it takes a lock on every first
    use; with ten such properties on each of 20,000 objects that lock was a measurable part of a run.
    """

    def __init__(self, fn: Callable[[Any], T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> once[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> T | once[T]:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)  # the instance's own attribute wins from now on
        return value


def _fresh_memo(_unit: object) -> dict[str, Any]:
    """What the rules of one run worked out about a unit (`K8sObject.memo`, `ValuesDoc.memo`), shared
    among them. It lives and dies with the unit: a streamed run frees units as it goes, so a run-wide
    table keyed by ``id()`` would hand one unit's results to the next unit at the same address."""
    return {}


@dataclass(eq=False)
class K8sObject:
    """One object. Its identity (kind, name, namespace…) is read once: rules ask for it millions of
    times in a large run, and the data is not mutated after loading."""

    file: SourceFile
    doc: Document
    data: dict[str, Any]
    base_path: JsonPath = ()
    #: findings on this object are reported (False for objects that are only context)
    target: bool = True

    def __post_init__(self) -> None:
        # the identity is read for every object (dispatch, summaries): one call sets what six `once`
        # properties would each compute on first use (the instance's attributes win over them)
        data, d = self.data, self.__dict__
        v = data.get("apiVersion")
        d["api_version"] = v if isinstance(v, str) else None
        v = data.get("kind")
        d["kind"] = v if isinstance(v, str) else None
        m = data.get("metadata")
        meta = d["metadata"] = m if isinstance(m, dict) else {}
        v = meta.get("name")
        d["name"] = v if isinstance(v, str) else None
        v = meta.get("namespace")
        d["namespace"] = v if isinstance(v, str) else None
        a = meta.get("annotations")
        d["annotations"] = a if isinstance(a, dict) else {}

    @once
    def api_version(self) -> str | None:
        v = self.data.get("apiVersion")
        return v if isinstance(v, str) else None

    @once
    def kind(self) -> str | None:
        v = self.data.get("kind")
        return v if isinstance(v, str) else None

    @once
    def group(self) -> str:
        return k8s.api_group(self.api_version)

    @once
    def version(self) -> str:
        return k8s.api_version_of(self.api_version)

    @once
    def metadata(self) -> dict[str, Any]:
        m = self.data.get("metadata")
        return m if isinstance(m, dict) else {}

    @once
    def name(self) -> str | None:
        v = self.metadata.get("name")
        return v if isinstance(v, str) else None

    @once
    def namespace(self) -> str | None:
        v = self.metadata.get("namespace")
        return v if isinstance(v, str) else None

    @once
    def annotations(self) -> dict[str, Any]:
        a = self.metadata.get("annotations")
        return a if isinstance(a, dict) else {}

    @property
    def source(self) -> str | None:
        return self.doc.source

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, self.namespace, self.name)

    memo = once(_fresh_memo)

    @once
    def pod_specs(self) -> list[k8s.PodSpecRef]:
        return k8s.pod_specs(self.kind, self.data)

    @once
    def claim_names(self) -> tuple[str, ...]:
        """The ResourceClaims its pods name (``resourceClaimName``), each once."""
        names: dict[str, None] = {}
        for ps in self.pod_specs:
            for _, c in k8s.pod_claims(ps):
                src = c.get("source")
                name = _text(c.get("resourceClaimName")) or (
                    _text(src.get("resourceClaimName")) if isinstance(src, dict) else None)
                if name:
                    names[name] = None
        return tuple(names)

    @once
    def facets(self) -> int:
        """`POD`/`CLAIMS`/`DRA` bits, so that the engine skips the rules that would find nothing to look at."""
        dra = DRA if self.group == k8s.DRA_GROUP else 0
        specs = self.pod_specs
        if not specs:
            return dra
        return dra | POD | (CLAIMS if any(k8s.uses_claims(ps) for ps in specs) else 0)

    def label(self) -> str:
        return self.ref.label()


@dataclass(eq=False)
class ValuesDoc:
    """A YAML document that is not a Kubernetes object (Helm values, device-plugin config…)."""

    file: SourceFile
    doc: Document
    data: Any
    target: bool = True

    memo = once(_fresh_memo)


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) else None


#: `Index.reads` entries that are not kinds
ALL_OBJECTS = "*"
ALL_VALUES = "@values"
CLAIM_REFS = "@claim-refs"


def base_name(path: str) -> str:
    """The last part of a display path (``/`` or, on Windows, ``\\`` separated)."""
    return path.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]


def same_namespace(a: str | None, b: str | None) -> bool:
    """Manifests without a namespace are applied to the current namespace: treat them as matching."""
    return a is None or b is None or a == b


@dataclass
class Index:
    """Every object and values document of a run, with the lookups rules use.

    Rules read other files only through the query methods below, never through the lists
    themselves (tests/test_index_reads.py checks the rule packages): each query records what it
    asked for in `reads` (kinds; ``@values`` for other files' values documents; ``*`` for every
    object), which is what the results cache (`dralint.engine.results`) uses to tell whether a
    file's stored findings still hold when other files changed.
    """

    objects: list[K8sObject] = field(default_factory=list)
    values: list[ValuesDoc] = field(default_factory=list)
    files: list[SourceFile] = field(default_factory=list)
    #: what rules have looked up across files in this run (see above)
    reads: set[str] = field(default_factory=set)
    _by_kind: dict[str, list[K8sObject]] = field(default_factory=lambda: defaultdict(list))
    _by_kind_name: dict[tuple[str, str], list[K8sObject]] = field(default_factory=lambda: defaultdict(list))
    _values_by_file: dict[int, list[ValuesDoc]] = field(default_factory=lambda: defaultdict(list))
    _by_path: dict[str, list[K8sObject]] = field(default_factory=lambda: defaultdict(list))
    #: claim name -> the namespace of every object whose pods name it (built on first use)
    _claim_users: dict[str, list[str | None]] | None = None

    def add_file(self, sf: SourceFile, target: bool = True,
                 units: Iterable[K8sObject | ValuesDoc] | None = None) -> None:
        """Add a parsed file; ``units``: its objects and values documents when already made (`file_units`)."""
        self.files.append(sf)
        for obj in file_units(sf, target) if units is None else units:
            if isinstance(obj, ValuesDoc):
                self.add_values(obj)
            else:
                self.add(obj)

    def add(self, obj: K8sObject) -> None:
        self._claim_users = None
        self.objects.append(obj)
        kind = obj.kind or ""
        self._by_kind[kind].append(obj)
        if obj.name:
            self._by_kind_name[(kind, obj.name)].append(obj)
        self._by_path[obj.file.path].append(obj)

    def add_values(self, vd: ValuesDoc) -> None:
        self.values.append(vd)
        self._values_by_file[id(vd.file)].append(vd)

    # -- queries for rules (each records what it read) ---------------------------------------
    def of_kind(self, *kinds: str) -> Iterator[K8sObject]:
        self.reads.update(kinds)
        for k in kinds:
            yield from self._by_kind.get(k, ())

    def find(self, kind: str, name: str, namespace: str | None = None) -> list[K8sObject]:
        """Objects of ``kind`` named ``name`` in ``namespace`` (unset namespaces match)."""
        self.reads.add(kind)
        return [o for o in self._by_kind_name.get((kind, name), ()) if same_namespace(o.namespace, namespace)]

    def find_any_namespace(self, kind: str, name: str) -> list[K8sObject]:
        self.reads.add(kind)
        return list(self._by_kind_name.get((kind, name), ()))

    def all_objects(self) -> list[K8sObject]:
        """Every object of every file: a rule's findings then depend on all of them."""
        self.reads.add(ALL_OBJECTS)
        return self.objects

    def all_values(self) -> list[ValuesDoc]:
        """Every values document (Helm values, plugin configs) of every file."""
        self.reads.add(ALL_VALUES)
        return self.values

    def values_of_files(self, names: Collection[str]) -> list[ValuesDoc]:
        """The values documents of the files whose base name is one of ``names`` (kustomizations).
        Recorded as a read of every values document: what a new file of such a name changes."""
        self.reads.add(ALL_VALUES)
        return [v for v in self.values if base_name(v.file.path) in names]

    def claim_users(self, name: str, namespace: str | None) -> int:
        """How many objects in ``namespace`` have pods that name the ResourceClaim ``name``."""
        self.reads.add(CLAIM_REFS)
        if self._claim_users is None:
            table: dict[str, list[str | None]] = defaultdict(list)
            for o in self.objects:
                for n in o.claim_names:
                    table[n].append(o.namespace)
            self._claim_users = table
        return sum(1 for ns in self._claim_users.get(name, ()) if same_namespace(ns, namespace))

    def names_of(self, kind: str) -> list[tuple[str | None, str]]:
        """(namespace, name) of every named object of ``kind``, in index order ("did you mean" hints)."""
        self.reads.add(kind)
        return [(o.namespace, o.name) for o in self._by_kind.get(kind, ()) if o.name]

    def in_file(self, path: str, *kinds: str) -> list[K8sObject]:
        """The objects of ``kinds`` in the file at ``path``, in file order. A rule asks about its own
        object's file only, whose bytes are part of its stored results' key: nothing is recorded."""
        return [o for o in self._by_path.get(path, ()) if o.kind in kinds]

    def values_in(self, sf: SourceFile) -> list[ValuesDoc]:
        """The values documents of one file (a rule reading its own file depends on nothing else)."""
        return self._values_by_file.get(id(sf), [])

    def targets(self) -> Iterator[K8sObject]:
        return (o for o in self.objects if o.target)


def file_units(sf: SourceFile, target: bool = True) -> list[K8sObject | ValuesDoc]:
    """The objects and values documents of a parsed file, in file order (unusable documents skipped)."""
    return [u for doc in sf.documents if not doc.skip for u in objects_of(sf, doc, target)]


def objects_of(sf: SourceFile, doc: Document, target: bool) -> Iterable[K8sObject | ValuesDoc]:
    data = doc.data
    if not isinstance(data, dict):
        return [ValuesDoc(sf, doc, data, target)] if data is not None else []
    kind = data.get("kind")
    if not isinstance(data.get("apiVersion"), str) or not isinstance(kind, str):
        return [ValuesDoc(sf, doc, data, target)]
    items = data.get("items")
    if kind.endswith("List") and isinstance(items, list):
        out: list[K8sObject | ValuesDoc] = []
        for i, item in enumerate(items):
            if isinstance(item, dict) and isinstance(item.get("kind"), str):
                out.append(K8sObject(sf, doc, item, ("items", i), target))
        return out
    return [K8sObject(sf, doc, data, (), target)]
