"""Files and objects that are loaded on first use.

An `Input` is a file of the run read but not parsed yet (or not even read, when the cache may
answer for it). Objects added to the index from a summary (`RemoteObject`, `RemoteValues`) carry
their identity; data their summary does not carry is parsed again from the file when a rule reads
it (`FileLoader`), so a summary can make a run slower but never change its findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dralint.engine.summary import Blob, FileSummary
from dralint.inputs.files import FileRef, read_file, read_raw
from dralint.inputs.index import Index, K8sObject, ValuesDoc
from dralint.inputs.load import Document, Limits, SourceFile, load_bytes, plain_text
from dralint.model import JsonPath


class FileLoader:
    """Parses a context file again when a rule reads data its summary does not carry (memoised)."""

    def __init__(self, display: str, ref: FileRef | None, raw: bytes | None, limits: Limits,
                 stats: dict[str, Any]) -> None:
        self.display, self.ref, self.raw, self.limits, self.stats = display, ref, raw, limits, stats
        self._sf: SourceFile | None = None

    def source(self, why: str = "on_demand_loads") -> SourceFile:
        """The parsed file; ``why`` names the run statistic that counts the parse."""
        if self._sf is None:
            self.stats[why] = self.stats.get(why, 0) + 1
            if self.raw is not None:
                self._sf = load_bytes(self.display, self.raw, self.limits)
            elif self.ref is not None:
                self._sf = read_file(self.ref, self.limits)
            else:
                self._sf = SourceFile(self.display, b"")
        return self._sf

    def text(self) -> str:
        """The file's text without parsing it, when its bytes are at hand (as `load_bytes` decodes them)."""
        if self._sf is None and self.raw is not None:
            text = plain_text(self.raw, self.limits)
            if text is not None:
                return text
        return self.source().text

    def data(self, doc_index: int, base_path: JsonPath) -> Any:
        for doc in self.source().documents:
            if doc.index == doc_index:
                node = doc.data
                for step in base_path:
                    try:
                        node = node[step]
                    except (LookupError, TypeError):
                        return {}
                return node
        return {}


class RemoteObject(K8sObject):
    """An object known from a summary: identity always, data when carried or on first use."""

    def __init__(self, file: SourceFile, doc: Document, base_path: JsonPath, ident: list[Any], data: Any,
                 loader: FileLoader | None, target: bool) -> None:
        self.file = file
        self.doc = doc
        self.base_path = base_path
        self.target = target
        self._ident = ident  # apiVersion, kind, name, namespace
        self._data = data
        self._loader = loader

    @property
    def data(self) -> dict[str, Any]:
        d = self._data
        if d is None:
            d = self._data = self._loader.data(self.doc.index, self.base_path) if self._loader else {}
        elif d.__class__ is Blob:
            d = self._data = d.value()
        return d  # type: ignore[no-any-return]

    @data.setter
    def data(self, value: dict[str, Any]) -> None:
        self._data = value

    @property
    def api_version(self) -> str | None:
        return self._ident[0]  # type: ignore[no-any-return]

    @property
    def kind(self) -> str | None:
        return self._ident[1]  # type: ignore[no-any-return]

    @property
    def name(self) -> str | None:
        return self._ident[2]  # type: ignore[no-any-return]

    @property
    def namespace(self) -> str | None:
        return self._ident[3]  # type: ignore[no-any-return]


def _delegate(name: str) -> Any:
    def get(self: LazySourceFile) -> Any:
        return getattr(self.loader.source(), name)

    def put(self: LazySourceFile, value: Any) -> None:
        setattr(self.loader.source(), name, value)

    return property(get, put)


class LazySourceFile(SourceFile):
    """A target file linted by a worker process: its path now, its content parsed again on first use.

    The content comes from the bytes read for the run, so it is what was linted even if the file
    changed on disk since.
    """

    raw = _delegate("raw")
    bom = _delegate("bom")
    newline = _delegate("newline")
    documents = _delegate("documents")
    problems = _delegate("problems")
    is_json = _delegate("is_json")
    _line_starts = _delegate("_line_starts")

    def __init__(self, path: str, loader: FileLoader, text: str | None = None) -> None:
        # not the dataclass __init__: no fields are set here
        self.path = path
        self.loader = loader
        #: given when the caller has it at hand; else decoded from the bytes on first use (no parse)
        self._text = text

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.loader.text()
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        self._text = value


class RemoteValues(ValuesDoc):
    def __init__(self, file: SourceFile, doc: Document, data: Any, carried: bool, loader: FileLoader | None,
                 target: bool) -> None:
        self.file = file
        self.doc = doc
        self.target = target
        self._data = data
        self._carried = carried
        self._loader = loader

    @property
    def data(self) -> Any:
        if not self._carried:
            self._data = self._loader.data(self.doc.index, ()) if self._loader else None
            self._carried = True
        elif self._data.__class__ is Blob:
            self._data = self._data.value()
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        self._data, self._carried = value, True


def add_summary(index: Index, display: str, summary: FileSummary, target: bool,
                loader: FileLoader | None, kept: KeptUnits | None = None) -> None:
    """Add a file to the index from its summary (objects in file order, as `Index.add_file` would).

    ``kept``: a streamed file whose units are partly still parsed; those take their places in the
    file's order instead of the summary's, and the summary's share their file."""
    sf = SourceFile(path=display, raw=b"") if kept is None else kept.file
    index.files.append(sf)
    docs = {d.doc: Document(d.doc, None, 0, 0, d.source) for d in summary.docs}
    if kept is None:
        sf.documents = list(docs.values())
    refs = summary.claim_names()
    for position, o in enumerate(summary.objects):
        real = kept.objects.get(position) if kept is not None else None
        if real is not None:
            index.add(real)
            continue
        obj = RemoteObject(sf, docs[o.doc], o.base_path, [o.api_version, o.kind, o.name, o.namespace], o.data,
                           loader, target)
        obj.claim_names = refs.get(position, ())  # from the summary: no load to count a claim's users
        index.add(obj)
    for position, v in enumerate(summary.values):
        real_values = kept.values.get(position) if kept is not None else None
        if real_values is not None:
            index.add_values(real_values)
            continue
        index.add_values(RemoteValues(sf, docs[v.doc], v.data, v.carried, loader, target))


@dataclass
class KeptUnits:
    """The units of a file that are still parsed, by position among its objects and its values documents."""

    file: SourceFile
    objects: dict[int, K8sObject]
    values: dict[int, ValuesDoc]


# ----------------------------------------------------------------------------------------------
# the files of a run, read but not parsed yet


@dataclass
class Input:
    """One file of a run, read but not parsed yet."""

    display: str
    ref: FileRef | None
    raw: bytes | None  # None when ``problem`` is set
    problem: SourceFile | None  # unreadable, special or oversized file (a DRA005 finding)
    target: bool
    key: str | None = None  # cache key (content hash)
    unread: bool = False  # not read yet (a context file that may come from the cache)
    #: already parsed by whoever made it (a rendered chart or overlay); ``raw`` holds its bytes
    loaded: SourceFile | None = None

    @classmethod
    def read(cls, ref: FileRef, limits: Limits, target: bool) -> Input:
        raw = read_raw(ref, limits)
        if isinstance(raw, SourceFile):
            return cls(ref.display, ref, None, raw, target)
        return cls(ref.display, ref, raw, None, target)

    @classmethod
    def of(cls, sf: SourceFile, target: bool) -> Input:
        """A file parsed elsewhere: a rendered manifest (its bytes key the caches) or a note with problems."""
        if sf.problems and not sf.raw:
            return cls(sf.path, None, None, sf, target)
        return cls(sf.path, None, sf.raw, None, target, loaded=sf)

    @classmethod
    def later(cls, ref: FileRef, target: bool = False) -> Input:
        """A file read only if the caches cannot answer for it."""
        return cls(ref.display, ref, None, None, target, unread=True)

    def ensure_read(self, limits: Limits) -> None:
        if self.unread and self.ref is not None:
            raw = read_raw(self.ref, limits)
            self.raw, self.problem = (None, raw) if isinstance(raw, SourceFile) else (raw, None)
            self.unread = False

    def parse(self, limits: Limits) -> SourceFile:
        self.ensure_read(limits)
        if self.problem is not None:
            return self.problem
        if self.loaded is not None:
            return self.loaded
        return load_bytes(self.display, self.raw or b"", limits)

    def loader(self, limits: Limits, stats: dict[str, Any]) -> FileLoader:
        return FileLoader(self.display, self.ref, self.raw, limits, stats)
