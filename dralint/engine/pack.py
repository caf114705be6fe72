"""The context pack: the summaries of a run's context files in one cache entry, read by kind.

Checking one changed file against the repository (``--context .``, the pre-commit hook) needs the
other files only through the index's queries, and those ask about a few kinds (device classes,
claim templates, claims). Opening two thousand summary entries, decoding them and making twenty
thousand objects to answer them was most of such a run. The pack holds the same summaries grouped
by kind behind one header that says what each file holds; a run reads the header, takes the
dependency digest's rows from it, and decodes the objects of a kind only when a rule first asks
about that kind (`LazyIndex`).

Stored form (`PACK_FORMAT`): one JSON line, the header::

    {"format": 1,
     "files": {content key: [objects, values documents, {kind: objects}, claim refs]},
     "sections": {kind, or "@values": [start, end]}, "data": start}

then the sections, each a JSON list of records, then the carried data as JSON texts. Section ranges
are byte offsets after the header line, data ranges offsets after ``data``. An object record is
``[key, position, doc, Helm source, base path, apiVersion, name, namespace, claim names, data range
or null, carried]``; a values record is ``[key, position, doc, Helm source, data range or null,
carried]`` (``position``: among the file's objects, or its values documents, as in its
`FileSummary`; the Helm source is that of the document).

Records are keyed by file content, as summary entries are, so a record is right for any file with
those bytes, whatever its path; a file whose key the pack lacks is read from its own summary entry.
Like every cache entry the pack is untrusted input: a header that does not check is no pack, and a
file whose records in a section do not check, or do not add up to the header's counts, is read from
its own summary entry instead.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar

from dralint.engine.lazy import FileLoader, RemoteObject, RemoteValues
from dralint.engine.results import FileRow, row_of
from dralint.engine.summary import (
    Blob,
    DataTexts,
    FileSummary,
    SummaryDoc,
    SummaryObject,
    SummaryValues,
    entry_head,
)
from dralint.inputs.index import Index, K8sObject, ValuesDoc, base_name
from dralint.inputs.load import Document, SourceFile
from dralint.model import JsonPath

PACK_FORMAT = 1
#: the section of values documents (not a kind: kinds never start with "@")
VALUES = "@values"
#: fewer context files than this are read from their own entries: a pack would save nothing
PACK_MIN_FILES = 32

_ERRORS = (ValueError, TypeError, LookupError, AttributeError, RecursionError)


class PackFile(NamedTuple):
    """What the header says of one file: its digest row without the path, and how many objects of
    each kind and values documents the sections must hold for it (a section that holds another
    number is damaged, and the file's own summary entry answers instead)."""

    objects: int
    values: int
    counts: dict[str, int]
    kinds: frozenset[str]
    claim_refs: tuple[str, ...]

    def row(self, display: str, key: str) -> FileRow:
        return FileRow(display, key, self.kinds, self.values > 0, self.objects, self.claim_refs)


class ObjectRecord(NamedTuple):
    key: str
    position: int
    doc: int
    source: str | None  # the document's Helm ``# Source:``
    base_path: JsonPath
    api_version: str | None
    kind: str
    name: str | None
    namespace: str | None
    claim_names: tuple[str, ...]
    data: Blob | None
    carried: bool


class ValuesRecord(NamedTuple):
    key: str
    position: int
    doc: int
    source: str | None
    data: Blob | None
    carried: bool


class Pack:
    """A read pack: its header checked, each file's entry and each section decoded on first use."""

    def __init__(self, files: dict[str, Any], sections: dict[str, tuple[int, int]], body: bytes,
                 data_at: int) -> None:
        #: content key -> the header's entry for it (`file` checks and converts it)
        self.files = files
        self._files: dict[str, PackFile | None] = {}
        self._sections = sections
        self._body = body
        self._data_at = data_at  # where the data texts start in ``body``
        self._decoded: dict[str, list[Any] | None] = {}

    @classmethod
    def from_bytes(cls, data: bytes) -> Pack | None:
        """The pack in ``data``; None when it is not one (damaged, foreign or hostile)."""
        try:
            entry = entry_head(data, PACK_FORMAT)
            if entry is None:
                return None
            head, body = entry
            files = head["files"]
            sections: dict[str, tuple[int, int]] = {}
            for name, (start, end) in head["sections"].items():
                if not (start.__class__ is int and end.__class__ is int and 0 <= start <= end <= len(body)):
                    return None
                sections[name] = (start, end)
            data_at = head["data"]
            if files.__class__ is not dict or data_at.__class__ is not int or not 0 <= data_at <= len(body):
                return None
        except _ERRORS:
            return None
        return cls(files, sections, body, data_at)

    def file(self, key: str) -> PackFile | None:
        """The header's word on the file with content ``key``; None when it has none that checks."""
        if key in self._files:
            return self._files[key]
        got: PackFile | None = None
        try:
            count, values, counts, refs = self.files[key]
            if (count.__class__ is int and values.__class__ is int and values >= 0 and counts.__class__ is dict
                    and _strings(list(counts), refs) and set(map(type, counts.values())) <= {int}
                    and all(n > 0 for n in counts.values()) and sum(counts.values()) == count):
                got = PackFile(count, values, counts, frozenset(counts), tuple(refs))
        except _ERRORS:
            got = None
        self._files[key] = got
        return got

    def kinds(self) -> list[str]:
        return [k for k in self._sections if k != VALUES]

    def records(self, kind: str) -> list[ObjectRecord] | None:
        """The objects of ``kind`` in every file of the pack; None when the section does not check."""
        return self._section(kind, lambda raw: self._object_records(kind, raw))  # type: ignore[no-any-return]

    def values(self) -> list[ValuesRecord] | None:
        """The values documents of every file of the pack; None when the section does not check."""
        return self._section(VALUES, self._values_records)  # type: ignore[no-any-return]

    def _section(self, name: str, decode: Callable[[list[Any]], list[Any]]) -> Any:
        if name not in self._decoded:
            got: list[Any] | None = []
            if name in self._sections:
                start, end = self._sections[name]
                try:
                    got = decode(json.loads(self._body[start:end]))
                except _ERRORS:
                    got = None
            self._decoded[name] = got
        return self._decoded[name]

    def _blob(self, r: Any) -> Blob | None:
        if r is None:
            return None
        start, end = r
        at = self._data_at
        if not (start.__class__ is int and end.__class__ is int and 0 <= start <= end <= len(self._body) - at):
            raise ValueError("data range out of the pack")
        return Blob(self._body, at + start, at + end)

    def _object_records(self, kind: str, raw: list[Any]) -> list[ObjectRecord]:
        # every check inline: this loop runs for every object of a kind a rule asks about
        out = []
        file, body, at = self.file, self._body, self._data_at
        room = len(body) - at
        for key, position, doc, source, base, api, name, ns, claims, data, carried in raw:
            f = file(key)
            if f is None or position.__class__ is not int or not 0 <= position < f.objects or kind not in f.kinds:
                raise ValueError("object record out of its file")
            if (doc.__class__ is not int or carried.__class__ is not bool or claims.__class__ is not list
                    or (source is not None and source.__class__ is not str)
                    or (api is not None and api.__class__ is not str)
                    or (name is not None and name.__class__ is not str)
                    or (ns is not None and ns.__class__ is not str)):
                raise ValueError("bad object record")
            if claims and not set(map(type, claims)) <= _STR:
                raise ValueError("bad claim names")
            if base and not set(map(type, base)) <= _PATH:
                raise ValueError("bad base path")
            blob = None
            if data is not None:
                start, end = data
                if not (start.__class__ is int and end.__class__ is int and 0 <= start <= end <= room):
                    raise ValueError("data range out of the pack")
                blob = Blob(body, at + start, at + end)
            out.append(ObjectRecord(key, position, doc, source, tuple(base), api, kind, name, ns, tuple(claims),
                                    blob, carried))
        return out

    def _values_records(self, raw: list[Any]) -> list[ValuesRecord]:
        out = []
        for key, position, doc, source, data, carried in raw:
            f = self.file(key)
            if f is None or position.__class__ is not int or not 0 <= position < f.values:
                raise ValueError("values record out of its file")
            if not (doc.__class__ is int and _optional_strings(source) and carried.__class__ is bool):
                raise ValueError("bad values record")
            out.append(ValuesRecord(key, position, doc, source, self._blob(data), carried))
        return out

    def summaries(self) -> dict[str, FileSummary] | None:
        """Every file's summary, as its own entry would give it (None when a part does not check)."""
        objects: dict[str, dict[int, ObjectRecord]] = defaultdict(dict)
        for kind in self.kinds():
            recs = self.records(kind)
            if recs is None:
                return None
            for r in recs:
                if r.position in objects[r.key]:
                    return None  # two records for one object
                objects[r.key][r.position] = r
        vals = self.values()
        if vals is None:
            return None
        values: dict[str, dict[int, ValuesRecord]] = defaultdict(dict)
        for v in vals:
            if v.position in values[v.key]:
                return None
            values[v.key][v.position] = v
        out = {}
        for key in self.files:
            f = self.file(key)
            objs, vs = objects[key], values[key]
            if f is None or sorted(objs) != list(range(f.objects)) or sorted(vs) != list(range(f.values)):
                return None
            ordered = [objs[p] for p in range(f.objects)]
            counts: dict[str, int] = defaultdict(int)
            for r in ordered:
                counts[r.kind] += 1
            if counts != f.counts:
                return None
            docs = {r.doc: r.source for r in ordered}
            docs.update((v.doc, v.source) for v in vs.values())
            out[key] = FileSummary(
                tuple(SummaryDoc(d, docs[d]) for d in sorted(docs)),
                tuple(SummaryObject(r.doc, r.base_path, r.api_version, r.kind, r.name, r.namespace, r.data, r.carried)
                      for r in ordered),
                tuple(SummaryValues(vs[p].doc, vs[p].data, vs[p].carried) for p in range(f.values)),
                tuple((r.position, n) for r in ordered for n in r.claim_names))
        return out


_STR = {str}
_PATH = {str, int}


def _strings(*lists: Any) -> bool:
    return all(x.__class__ is list and set(map(type, x)) <= _STR for x in lists)


def _optional_strings(*values: Any) -> bool:
    return all(v is None or v.__class__ is str for v in values)


def pack_bytes(summaries: Mapping[str, FileSummary]) -> bytes:
    """The stored form of ``summaries`` (content key -> summary)."""
    data = DataTexts()
    ref = data.add
    files: dict[str, list[Any]] = {}
    by_kind: dict[str, list[list[Any]]] = defaultdict(list)
    values: list[list[Any]] = []
    for key, s in summaries.items():
        row = row_of("", key, s)
        counts: dict[str, int] = defaultdict(int)
        for o in s.objects:
            counts[o.kind or ""] += 1
        files[key] = [len(s.objects), len(s.values), dict(sorted(counts.items())), list(row.claim_refs)]
        sources, names = s.sources(), s.claim_names()
        for position, o in enumerate(s.objects):
            by_kind[o.kind or ""].append([key, position, o.doc, sources.get(o.doc), list(o.base_path), o.api_version,
                                          o.name, o.namespace, list(names.get(position, ())), ref(o.data, o.carried),
                                          o.carried])
        for position, v in enumerate(s.values):
            values.append([key, position, v.doc, sources.get(v.doc), ref(v.data, v.carried), v.carried])
    texts: list[bytes] = []
    sections: dict[str, list[int]] = {}
    at = 0
    for name, recs in [*by_kind.items(), (VALUES, values)]:
        text = json.dumps(recs, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        sections[name] = [at, at + len(text)]
        texts.append(text)
        at += len(text)
    head = {"format": PACK_FORMAT, "files": files, "sections": sections, "data": at}
    head_line = json.dumps(head, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"".join([head_line, b"\n", *texts, *data.parts])


# ----------------------------------------------------------------------------------------------
# the index of a run whose unchanged context files are known from the pack


class _Pending:
    """A context file known from the pack whose objects join the index kind by kind, when asked for."""

    __slots__ = ("display", "docs", "file", "i", "info", "key", "loader", "target")

    def __init__(self, i: int, display: str, key: str, info: PackFile, loader: FileLoader | None,
                 target: bool) -> None:
        self.i, self.display, self.key, self.info, self.loader, self.target = i, display, key, info, loader, target
        self.file: SourceFile | None = None
        self.docs: dict[int, Document] = {}


class LazyIndex(Index):
    """An `Index` some of whose files are known by their pack header only (`defer`).

    A query first adds the deferred files' objects of the kinds it asks about, decoded from the pack
    (or, when its section does not check, from each file's own summary: ``fallback``), then answers
    as `Index` does. Every object carries its rank (input position, place in its file), and the
    lists a query reads are kept in rank order, so answers come in the order an index built file by
    file would give them: the same objects, in the same order, only made later. Queries that read
    every object or every values document add everything first. Deferred files join ``files`` as
    they are first needed (only the objects' own files are read through it).
    """

    def __init__(self, pack: Pack, fallback: Callable[[int], FileSummary]) -> None:
        super().__init__()
        self._pack = pack
        self._fallback = fallback
        self._pending: list[_Pending] = []
        self._done: set[str] = set()  # kinds added from every deferred file
        #: (kind, name) pairs added from every deferred file, ahead of the rest of their kind (`_need_named`)
        self._named: set[tuple[str, str]] = set()
        self._values_done = False
        #: the inputs whose values documents were added (`_add_values`)
        self._values_of: set[int] = set()
        self._rank: dict[int, tuple[int, int]] = {}  # id(unit) -> (input position, place)
        self._at = 0
        self._seq = 0

    # -- building ---------------------------------------------------------------------------
    def at(self, i: int) -> None:
        """What is added next belongs to input ``i`` (until the next call)."""
        self._at = i

    def defer(self, i: int, display: str, key: str, loader: FileLoader | None, target: bool) -> bool:
        """Know input ``i`` from the pack until a query needs it; False when the pack lacks its key."""
        info = self._pack.file(key)
        if info is None:
            return False
        self._pending.append(_Pending(i, display, key, info, loader, target))
        return True

    def add(self, obj: K8sObject) -> None:
        if id(obj) not in self._rank:
            self._rank[id(obj)] = (self._at, self._seq)
            self._seq += 1
        super().add(obj)

    def add_values(self, vd: ValuesDoc) -> None:
        if id(vd) not in self._rank:
            self._rank[id(vd)] = (self._at, self._seq)
            self._seq += 1
        super().add_values(vd)

    # -- queries: add what they need, then answer as `Index` -----------------------------------
    def of_kind(self, *kinds: str) -> Iterator[K8sObject]:
        self._need(kinds)
        return super().of_kind(*kinds)

    def find(self, kind: str, name: str, namespace: str | None = None) -> list[K8sObject]:
        self._need_named(kind, name)
        return super().find(kind, name, namespace)

    def find_any_namespace(self, kind: str, name: str) -> list[K8sObject]:
        self._need_named(kind, name)
        return super().find_any_namespace(kind, name)

    def names_of(self, kind: str) -> list[tuple[str | None, str]]:
        """As `Index.names_of`, from the section's records when the kind's objects are not made yet:
        a "did you mean" hint needs the names, not the objects."""
        holders = [p for p in self._pending if kind in p.info.counts] if kind not in self._done else []
        intact, damaged = _split(self._pack.records(kind) if holders else [], holders, kind)
        if not holders or damaged:
            self._need((kind,))  # a damaged section: the objects, from each file's own entry where needed
            return super().names_of(kind)
        self.reads.add(kind)
        ranked = [(self._rank_of(o), o.namespace, o.name) for o in self._by_kind.get(kind, ()) if o.name]
        named = self._named
        ranked += [((p.i, r.position), r.namespace, r.name) for p, recs in intact for r in recs
                   if r.name and (kind, r.name) not in named]  # those made already are listed above
        ranked.sort(key=_first)
        return [(ns, name) for _, ns, name in ranked]

    def in_file(self, path: str, *kinds: str) -> list[K8sObject]:
        if any(p.display == path for p in self._pending):  # a file known from the pack (rules ask about their own)
            self._need(kinds)
            self._by_path[path].sort(key=self._rank_of)
        return super().in_file(path, *kinds)

    def all_objects(self) -> list[K8sObject]:
        self._everything()
        return super().all_objects()

    def all_values(self) -> list[ValuesDoc]:
        self._everything()
        return super().all_values()

    def values_of_files(self, names: Collection[str]) -> list[ValuesDoc]:
        self._add_values([p for p in self._pending if base_name(p.display) in names])
        return super().values_of_files(names)

    def claim_users(self, name: str, namespace: str | None) -> int:
        self._everything()
        return super().claim_users(name, namespace)

    def targets(self) -> Iterator[K8sObject]:
        self._everything()
        return super().targets()

    def everything(self) -> Index:
        """This index with every deferred file added (for code that reads its lists directly)."""
        self._everything()
        return self

    # -- adding deferred files ----------------------------------------------------------------
    def _need(self, kinds: Iterable[str]) -> None:
        todo = [k for k in kinds if k not in self._done]
        if not todo:
            return
        for kind in todo:
            self._done.add(kind)
            holders = [p for p in self._pending if kind in p.info.counts]
            if not holders:
                continue
            intact, damaged = _split(self._pack.records(kind), holders, kind)
            for p in damaged:
                self._from_summary(p, kind)
            named = {n for k, n in self._named if k == kind}  # made already (no damaged holder then)
            # `_place` spelled out: this loop makes every object of the kind
            rank, add, doc_of = self._rank, super().add, self._doc
            for p, recs in intact:
                sf, loader, target = self._file(p), p.loader, p.target
                for r in recs:
                    if named and r.name in named:
                        continue
                    obj = RemoteObject(sf, doc_of(p, r.doc, r.source), r.base_path,
                                       [r.api_version, kind, r.name, r.namespace], r.data, loader, target)
                    obj.claim_names = r.claim_names
                    rank[id(obj)] = (p.i, r.position)
                    add(obj)
        self._in_order(todo)

    def _need_named(self, kind: str, name: str) -> None:
        """`_need` for the objects of ``kind`` named ``name`` only. A pod's claim template is looked up
        by name, and making every template of a large repository for that was the largest part of a
        one-file run against a packed context; the rest of the kind is made when a query needs it."""
        if kind in self._done or (kind, name) in self._named:
            return
        holders = [p for p in self._pending if kind in p.info.counts]
        intact, damaged = _split(self._pack.records(kind) if holders else [], holders, kind)
        if damaged:  # read from each file's own summary entry: the whole kind, as `_need` does
            self._need((kind,))
            return
        self._named.add((kind, name))
        for p, recs in intact:
            for r in recs:
                if r.name == name:
                    self._place(p, r.position, r.doc, r.source, r.base_path, [r.api_version, kind, r.name, r.namespace],
                                r.claim_names, r.data)
        # only the answer's list is put in order: the kind's list and `objects` are put in order by
        # `_need`, which every query that reads them runs first (sorting every object of the run at
        # each new name would cost a run that looks up thousands of names)
        self._by_kind_name.get((kind, name), []).sort(key=self._rank_of)

    def _from_summary(self, p: _Pending, kind: str) -> None:
        """Add the file's objects of ``kind`` from its own summary entry (the pack's section is damaged)."""
        summary = self._fallback(p.i)
        names, sources = summary.claim_names(), summary.sources()
        for position, o in enumerate(summary.objects):
            if (o.kind or "") == kind:
                self._place(p, position, o.doc, sources.get(o.doc), o.base_path,
                            [o.api_version, o.kind, o.name, o.namespace], names.get(position, ()), o.data)

    def _place(self, p: _Pending, position: int, doc: int, source: str | None, base_path: JsonPath,
               ident: list[Any], claim_names: tuple[str, ...], data: Any) -> None:
        obj = RemoteObject(self._file(p), self._doc(p, doc, source), base_path, ident, data, p.loader, p.target)
        obj.claim_names = claim_names  # from the summary: no load to count a claim's users
        self._rank[id(obj)] = (p.i, position)
        super().add(obj)

    def _file(self, p: _Pending) -> SourceFile:
        """The file's stand-in (made once), as `add_summary` makes it; it lists the documents of the
        units added so far, in document order."""
        if p.file is None:
            p.file = SourceFile(path=p.display, raw=b"")
            self.files.append(p.file)
        return p.file

    def _doc(self, p: _Pending, doc: int, source: str | None) -> Document:
        """A document of the file, shared by its units, as `add_summary` makes it."""
        d = p.docs.get(doc)
        if d is None:
            d = p.docs[doc] = Document(doc, None, 0, 0, source)
            documents = self._file(p).documents
            documents.append(d)
            if len(documents) > 1 and documents[-2].index > doc:
                documents.sort(key=_doc_index)
        return d

    def _in_order(self, kinds: Iterable[str]) -> None:
        rank = self._rank_of
        for kind in kinds:
            objs = self._by_kind.get(kind)
            if not objs:
                continue
            objs.sort(key=rank)
            by_name = self._by_kind_name
            for name in {o.name for o in objs if o.name}:
                same = by_name[(kind, name)]
                if len(same) > 1:
                    same.sort(key=rank)
        self.objects.sort(key=rank)

    def _rank_of(self, unit: K8sObject | ValuesDoc) -> tuple[int, int]:
        return self._rank[id(unit)]

    def _everything(self) -> None:
        self._need({k for p in self._pending for k in p.info.kinds})
        if self._values_done:
            return
        self._values_done = True
        self._add_values(self._pending)

    def _add_values(self, pending: Iterable[_Pending]) -> None:
        """Add the values documents of ``pending`` (those not added before), in rank order."""
        holders = [p for p in pending if p.info.values and p.i not in self._values_of]
        if not holders:
            return
        self._values_of.update(p.i for p in holders)
        intact, damaged = _split(self._pack.values(), holders, None)
        for p, recs in intact:
            for r in recs:
                self._place_values(p, r.position, r.doc, r.source, r.data, r.carried)
        for p in damaged:
            summary = self._fallback(p.i)
            sources = summary.sources()
            for position, v in enumerate(summary.values):
                self._place_values(p, position, v.doc, sources.get(v.doc), v.data, v.carried)
        self.values.sort(key=self._rank_of)
        self._values_by_file = defaultdict(list)
        for vd in self.values:
            self._values_by_file[id(vd.file)].append(vd)

    def _place_values(self, p: _Pending, position: int, doc: int, source: str | None, data: Any,
                      carried: bool) -> None:
        vd = RemoteValues(self._file(p), self._doc(p, doc, source), data, carried, p.loader, p.target)
        self._rank[id(vd)] = (p.i, 1 << 40 | position)  # a file's values after its objects, as `add_summary` adds them
        super().add_values(vd)


R = TypeVar("R", ObjectRecord, ValuesRecord)


def _split(records: list[R] | None, holders: list[_Pending],
           kind: str | None) -> tuple[list[tuple[_Pending, list[R]]], list[_Pending]]:
    """Each holder with its records of ``kind`` (None: its values documents), when they are what the
    header promised (that many, each place once); and the holders whose records are not (``records``
    None: a section that does not check), which are read from their own summary entries instead."""
    by_key: dict[str, list[R]] = defaultdict(list)
    for r in records or ():
        by_key[r.key].append(r)
    intact: list[tuple[_Pending, list[R]]] = []
    damaged: list[_Pending] = []
    for p in holders:
        recs = by_key.get(p.key, [])
        expected = p.info.counts[kind] if kind is not None else p.info.values
        if records is not None and len(recs) == expected and len({r.position for r in recs}) == len(recs):
            intact.append((p, recs))
        else:
            damaged.append(p)
    return intact, damaged


def _first(item: tuple[tuple[int, int], str | None, str]) -> tuple[int, int]:
    return item[0]


def _doc_index(d: Document) -> int:
    return d.index

