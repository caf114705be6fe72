"""Summaries: what the index needs from a file that is not linted itself, and their stored form.

A summary holds object identities plus the full data of the kinds other objects look up
(`CARRIED_KINDS`); it is what context files contribute to a run, what the cache stores and what
worker processes exchange."""

from __future__ import annotations

import json
from typing import Any

from dralint.inputs.index import K8sObject, ValuesDoc, objects_of
from dralint.inputs.load import SourceFile
from dralint.knowledge import k8s

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
SUMMARY_FORMAT = 2


def carried(obj: K8sObject) -> bool:
    if obj.kind in CARRIED_KINDS:
        return True
    group = k8s.api_group(obj.api_version)
    return any(group == g or group.endswith("." + g) for g in CARRIED_GROUPS)


class Blob:
    """JSON text of one object's data inside a stored summary, decoded on first use."""

    __slots__ = ("buf", "end", "start")

    def __init__(self, buf: bytes, start: int, end: int) -> None:
        self.buf, self.start, self.end = buf, start, end

    def value(self) -> Any:
        return json.loads(self.buf[self.start : self.end])


class FileSummary:
    """A file's contribution to the index, without its parse tree.

    ``docs``: [document index, Helm source]; ``objects``: [document index, base path, apiVersion,
    kind, name, namespace, data, carried]; ``values``: [document index, data, carried]. ``data`` is
    the live value (just parsed), a `Blob` (read back), or None when not carried.

    Stored form: one line of JSON (everything but the data), then the carried data as JSON texts
    one after another, so that reading a summary decodes identities only; data is decoded when a
    rule asks for it (most context objects are never looked at).
    """

    __slots__ = ("docs", "objects", "values")

    def __init__(self, docs: list[list[Any]], objects: list[list[Any]], values: list[list[Any]]) -> None:
        self.docs, self.objects, self.values = docs, objects, values

    @classmethod
    def of(cls, sf: SourceFile) -> FileSummary:
        docs: list[list[Any]] = []
        objects: list[list[Any]] = []
        values: list[list[Any]] = []
        for doc in sf.documents:
            if doc.skip:
                continue
            units = objects_of(sf, doc, False)
            if not units:
                continue
            docs.append([doc.index, doc.source])
            for u in units:
                if isinstance(u, ValuesDoc):
                    keep = doc.end - doc.start <= CARRIED_VALUES_CHARS
                    values.append([doc.index, u.data if keep else None, keep])
                else:
                    keep = carried(u)
                    objects.append([doc.index, list(u.base_path), u.api_version, u.kind, u.name, u.namespace,
                                    u.data if keep else None, keep])
        return cls(docs, objects, values)

    def to_bytes(self) -> bytes:
        blobs: list[bytes] = []
        pos = 0

        def ref(data: Any, keep: bool) -> list[int] | None:
            nonlocal pos
            if not keep:
                return None
            if isinstance(data, Blob):
                b = data.buf[data.start : data.end]
            else:
                b = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            blobs.append(b)
            pos += len(b)
            return [pos - len(b), pos]

        head = {
            "format": SUMMARY_FORMAT,
            "docs": self.docs,
            "objects": [[*o[:6], ref(o[6], o[7]), o[7]] for o in self.objects],
            "values": [[v[0], ref(v[1], v[2]), v[2]] for v in self.values],
        }
        return b"".join([json.dumps(head, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), b"\n", *blobs])

    @classmethod
    def from_bytes(cls, data: bytes) -> FileSummary | None:
        """Read a stored summary; None when it is not one (corrupt or foreign cache entries).

        Every field the index relies on is type-checked, so a damaged entry is a miss rather than
        a crash later on; this loop runs for every object of every cached file, so it is plain.
        """
        try:
            nl = data.index(b"\n")
            head = json.loads(data[:nl])
            if head.__class__ is not dict or head.get("format") != SUMMARY_FORMAT:
                return None
            body = data[nl + 1 :]
            size = len(body)
            docs, objects, values = head["docs"], head["objects"], head["values"]
            ids = set()
            for d in docs:
                if len(d) != 2 or d[0].__class__ is not int or not (d[1] is None or d[1].__class__ is str):
                    return None
                ids.add(d[0])
            for o in objects:
                if len(o) != 8 or o[0] not in ids:
                    return None
                for x in (o[2], o[3], o[4], o[5]):
                    if x is not None and x.__class__ is not str:
                        return None
                base = o[1]
                if base:
                    if any(x.__class__ is not str and x.__class__ is not int for x in base):
                        return None
                    o[1] = tuple(base)
                else:
                    o[1] = ()
                r = o[6]
                if r is not None:
                    if r[0].__class__ is not int or r[1].__class__ is not int or not 0 <= r[0] <= r[1] <= size:
                        return None
                    o[6] = Blob(body, r[0], r[1])
                o[7] = o[7] is True
            for v in values:
                if len(v) != 3 or v[0] not in ids:
                    return None
                r = v[1]
                if r is not None:
                    if r[0].__class__ is not int or r[1].__class__ is not int or not 0 <= r[0] <= r[1] <= size:
                        return None
                    v[1] = Blob(body, r[0], r[1])
                v[2] = v[2] is True
        except (ValueError, TypeError, LookupError, AttributeError, RecursionError):
            return None
        return cls(docs, objects, values)


def summarize(sf: SourceFile) -> FileSummary:
    return FileSummary.of(sf)
