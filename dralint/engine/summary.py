"""Summaries: what the index needs from a file that is not linted itself, and their stored form.

A summary holds object identities plus the full data of the kinds other objects look up
(`CARRIED_KINDS`); it is what context files contribute to a run, what the cache stores and what
worker processes exchange."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from dralint.inputs.index import K8sObject, ValuesDoc, objects_of
from dralint.inputs.load import SourceFile
from dralint.knowledge import k8s
from dralint.model import JsonPath

#: kinds whose full data travels in a summary, because rules look them up from other objects
#: (claims and templates by name, device classes, ComputeDomains, device-plugin DaemonSets).
#: Anything else a rule reads from a context object is loaded on demand (correct, only slower).
CARRIED_KINDS = frozenset({
    "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule",
    "ComputeDomain", "DaemonSet", "ResourceQuota", "LimitRange",
})
#: every object of these API groups travels in full too (DRA and NVIDIA driver objects)
CARRIED_GROUPS = ("resource.k8s.io", "nvidia.com")
#: non-Kubernetes documents (Helm values, plugin configs) travel in full up to this many characters
CARRIED_VALUES_CHARS = 256 * 1024
SUMMARY_FORMAT = 3


_CARRIED_SUFFIXES = tuple("." + g for g in CARRIED_GROUPS)


def carried(obj: K8sObject) -> bool:
    if obj.kind in CARRIED_KINDS:
        return True
    group = k8s.api_group(obj.api_version)
    return group in CARRIED_GROUPS or group.endswith(_CARRIED_SUFFIXES)


class Blob:
    """JSON text of one object's data inside a stored summary, decoded on first use."""

    __slots__ = ("buf", "end", "start")

    def __init__(self, buf: bytes, start: int, end: int) -> None:
        self.buf, self.start, self.end = buf, start, end

    def value(self) -> Any:
        return json.loads(self.text())

    def text(self) -> bytes:
        return self.buf[self.start : self.end]


def json_text(data: Any) -> bytes:
    """How a summary stores a carried value: compact JSON, UTF-8."""
    return _ENCODE(data).encode("utf-8")


#: `json.dumps` with the summary's settings, made once; without the check for cycles, which loaded
#: data cannot have (the loader refuses a recursive alias) and which took a sixth of each encoding
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


def _blob(data: Any) -> Blob:
    text = json_text(data)
    return Blob(text, 0, len(text))


def entry_head(data: bytes, fmt: int) -> tuple[dict[str, Any], bytes] | None:
    """A stored entry's first line, a JSON object whose ``format`` is ``fmt``, and the bytes after it;
    None when the line is another format. Raises what `bytes.index` and `json.loads` raise on
    damaged data (callers catch them with the rest of their checks)."""
    nl = data.index(b"\n")
    head = json.loads(data[:nl])
    if head.__class__ is not dict or head.get("format") != fmt:
        return None
    return head, data[nl + 1 :]


class DataTexts:
    """The data part of a stored summary (or pack): each carried value as a JSON text, one after another."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, data: Any, keep: bool) -> list[int] | None:
        """Append ``data`` (when ``keep``); its ``[start, end]`` byte range in the data part, else None."""
        if not keep:
            return None
        # stored text is kept as it is, never decoded to be encoded again
        b = data.text() if isinstance(data, Blob) else json_text(data)
        self.parts.append(b)
        self.size += len(b)
        return [self.size - len(b), self.size]


class SummaryDoc(NamedTuple):
    """A document that holds objects or values: its index in the file and its Helm ``# Source:``."""

    doc: int
    source: str | None


class SummaryObject(NamedTuple):
    """One object: where it is in its file, its identity, and its data when `carried`.

    ``data`` is the live value (just parsed), a `Blob` (read back from the cache), or None when the
    object is not carried: a rule that reads it then loads the file again (`dralint.engine.lazy`).
    """

    doc: int
    base_path: JsonPath
    api_version: str | None
    kind: str | None
    name: str | None
    namespace: str | None
    data: Any
    carried: bool


class SummaryValues(NamedTuple):
    """A document that is not a Kubernetes object (Helm values, plugin configs); ``data`` as in
    `SummaryObject`, carried up to `CARRIED_VALUES_CHARS` characters."""

    doc: int
    data: Any
    carried: bool


@dataclass(frozen=True, slots=True)
class FileSummary:
    """A file's contribution to the index, without its parse tree.

    Stored form (`to_bytes`, `SUMMARY_FORMAT`): one line of JSON with everything but the data, then
    the carried data as JSON texts one after another, so that reading a summary decodes identities
    only; data is decoded when a rule asks for it (most context objects are never looked at). In the
    first line each record is a list of its fields in declaration order, with the data replaced by
    the ``[start, end]`` byte range of its text after the line (null when not carried).

    The records are typed named tuples rather than frozen dataclasses: `from_bytes` builds one per
    object of every cached file, and a frozen dataclass's ``__init__`` made that loop (and the warm
    pre-commit run) measurably slower; fields are read by name only.
    """

    docs: tuple[SummaryDoc, ...]
    objects: tuple[SummaryObject, ...]
    values: tuple[SummaryValues, ...]
    #: (position in ``objects``, claim name) for every ResourceClaim an object's pods name: rules
    #: count a claim's users across the repository (DRA308) without loading every workload
    claim_refs: tuple[tuple[int, str], ...] = ()

    def claim_names(self) -> dict[int, tuple[str, ...]]:
        """Position among ``objects`` -> the claims its pods name (from ``claim_refs``)."""
        names: dict[int, list[str]] = {}
        for position, name in self.claim_refs:
            names.setdefault(position, []).append(name)
        return {p: tuple(n) for p, n in names.items()}

    def sources(self) -> dict[int, str | None]:
        """Document index -> its Helm ``# Source:``."""
        return {d.doc: d.source for d in self.docs}

    @classmethod
    def of(cls, sf: SourceFile, known: Sequence[K8sObject | ValuesDoc] | None = None) -> FileSummary:
        """The summary of a parsed file; ``known``: the index's objects and values of it, which have
        already worked out their identity and claims for the rules (else they are made again)."""
        docs: list[SummaryDoc] = []
        objects: list[SummaryObject] = []
        values: list[SummaryValues] = []
        refs: list[tuple[int, str]] = []
        by_doc: dict[int, list[K8sObject | ValuesDoc]] = {}
        for u in known or ():
            by_doc.setdefault(id(u.doc), []).append(u)
        for doc in sf.documents:
            if doc.skip:
                continue
            units = by_doc.get(id(doc), []) if known is not None else objects_of(sf, doc, False)
            if not units:
                continue
            docs.append(SummaryDoc(doc.index, doc.source))
            for u in units:
                if isinstance(u, ValuesDoc):
                    keep = doc.end - doc.start <= CARRIED_VALUES_CHARS
                    values.append(SummaryValues(doc.index, u.data if keep else None, keep))
                else:
                    keep = carried(u)
                    refs.extend((len(objects), name) for name in u.claim_names)
                    objects.append(SummaryObject(doc.index, u.base_path, u.api_version, u.kind, u.name, u.namespace,
                                                 u.data if keep else None, keep))
        return cls(tuple(docs), tuple(objects), tuple(values), tuple(refs))

    def compact(self) -> FileSummary:
        """This summary with every carried value as its JSON text, decoded again when a rule reads it
        (as from the cache). A parse tree with its positions takes about ten times the memory of its
        text, and a streamed run keeps the summary of every file it parsed to the end."""
        objects = tuple(o if o.data is None or o.data.__class__ is Blob else o._replace(data=_blob(o.data))
                        for o in self.objects)
        values = tuple(v if v.data is None or v.data.__class__ is Blob else v._replace(data=_blob(v.data))
                       for v in self.values)
        return FileSummary(self.docs, objects, values, self.claim_refs)

    def to_bytes(self) -> bytes:
        texts = DataTexts()
        ref = texts.add
        head = {
            "format": SUMMARY_FORMAT,
            "docs": [[d.doc, d.source] for d in self.docs],
            "objects": [[o.doc, o.base_path, o.api_version, o.kind, o.name, o.namespace, ref(o.data, o.carried),
                         o.carried] for o in self.objects],
            "values": [[v.doc, ref(v.data, v.carried), v.carried] for v in self.values],
            "claim_refs": [list(r) for r in self.claim_refs],
        }
        return b"".join([json.dumps(head, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), b"\n",
                         *texts.parts])

    @classmethod
    def from_bytes(cls, data: bytes) -> FileSummary | None:
        """Read a stored summary; None when it is not one (corrupt or foreign cache entries).

        Every field the index relies on is type-checked, so a damaged entry is a miss rather than
        a crash later on; this loop runs for every object of every cached file, so it is plain.
        """
        try:
            entry = entry_head(data, SUMMARY_FORMAT)
            if entry is None:
                return None
            head, body = entry
            size = len(body)
            docs: list[SummaryDoc] = []
            objects: list[SummaryObject] = []
            values: list[SummaryValues] = []
            ids = set()
            for d in head["docs"]:
                if len(d) != 2:
                    return None
                doc, source = d
                if doc.__class__ is not int or not (source is None or source.__class__ is str):
                    return None
                ids.add(doc)
                docs.append(SummaryDoc(doc, source))
            for o in head["objects"]:
                if len(o) != 8:
                    return None
                doc, base, api, kind, name, ns, r, keep = o
                if doc not in ids:
                    return None
                for x in (api, kind, name, ns):
                    if x is not None and x.__class__ is not str:
                        return None
                if base:
                    if any(x.__class__ is not str and x.__class__ is not int for x in base):
                        return None
                    base = tuple(base)
                else:
                    base = ()
                blob = None
                if r is not None:
                    if r[0].__class__ is not int or r[1].__class__ is not int or not 0 <= r[0] <= r[1] <= size:
                        return None
                    blob = Blob(body, r[0], r[1])
                objects.append(SummaryObject(doc, base, api, kind, name, ns, blob, keep is True))
            for v in head["values"]:
                if len(v) != 3:
                    return None
                doc, r, keep = v
                if doc not in ids:
                    return None
                blob = None
                if r is not None:
                    if r[0].__class__ is not int or r[1].__class__ is not int or not 0 <= r[0] <= r[1] <= size:
                        return None
                    blob = Blob(body, r[0], r[1])
                values.append(SummaryValues(doc, blob, keep is True))
            refs: list[tuple[int, str]] = []
            for position, name in head["claim_refs"]:
                if position.__class__ is not int or not 0 <= position < len(objects) or name.__class__ is not str:
                    return None
                refs.append((position, name))
        except (ValueError, TypeError, LookupError, AttributeError, RecursionError):
            return None
        return cls(tuple(docs), tuple(objects), tuple(values), tuple(refs))


def summarize(sf: SourceFile, known: Sequence[K8sObject | ValuesDoc] | None = None) -> FileSummary:
    return FileSummary.of(sf, known)
