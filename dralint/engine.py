"""load → index → check → suppress: the linting pipeline shared by every command.

`lint_files` runs the selected rules over the target files with every file (targets and context)
in one index, turns violations into findings with exact positions, then applies suppressions.
Rule crashes are caught and reported as internal errors (exit 3) rather than losing the run.

`lint_paths` (the CLI's entry) does the same for paths on disk, at repository scale:

- Context files (``--context``) only contribute their *summary* to the index: object identities,
  plus the full data of the kinds other objects look up (`CARRIED_KINDS`). Summaries are cached
  on disk by content hash (`dralint.cache`), so linting one changed file against a repository
  parses one file. Any other data a rule reads from a context object is loaded on demand
  (`RemoteObject`), so a summary can make a run slower but never change its findings.
- Large inputs are linted by worker processes (`dralint.parallel`): each parses its share of the
  files, the summaries are exchanged so that every worker has the whole index, then each runs
  all rules on its own targets and sends back only findings.
Findings are the same with and without workers and cache (tests/test_parallel.py, test_cache.py).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dralint.cache import SummaryCache, default_cache_dir
from dralint.config import Config
from dralint.inputs.files import FileRef, discover, read_file, read_raw
from dralint.inputs.index import CLAIMS, DRA, POD, Index, K8sObject, ValuesDoc, objects_of
from dralint.inputs.load import Document, Limits, SourceFile, load_bytes
from dralint.inputs.locate import locate
from dralint.knowledge import k8s
from dralint.knowledge.catalog import RuleMeta, catalog
from dralint.model import Finding, JsonPath, Severity, Span, Violation
from dralint.registry import CheckFn, Context, RuleImpl, load_checks
from dralint.suppress import ANNOTATION, Directive, Suppressor, annotation_directive, parse_directives

UNUSED_SUPPRESSION = "DRA006"


@dataclass
class InternalError:
    rule: str
    path: str
    detail: str


@dataclass
class Result:
    findings: list[Finding]
    files: list[SourceFile]
    #: the index, or how to build it: a parallel run builds the caller's copy only when it is asked for
    #: (the workers have their own; building it in the main process took CPU from them)
    index_or_builder: Index | Callable[[], Index]
    config: Config
    selected: dict[str, RuleMeta]
    missing: list[str] = field(default_factory=list)
    internal_errors: list[InternalError] = field(default_factory=list)
    suppressed: int = 0
    #: how the run went (workers, cache hits, on-demand loads), for --verbose
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def index(self) -> Index:
        if not isinstance(self.index_or_builder, Index):
            self.index_or_builder = self.index_or_builder()
        return self.index_or_builder

    def counts(self) -> dict[Severity, int]:
        out = dict.fromkeys(Severity, 0)
        for f in self.findings:
            out[f.severity] += 1
        return out


def limits_for(config: Config) -> Limits:
    return Limits(max_file_bytes=config.max_file_size)


def load_paths(
    paths: Sequence[str], config: Config, follow_symlinks: bool = False
) -> tuple[list[SourceFile], list[str]]:
    refs, missing = discover(paths, config.exclude, config.root, follow_symlinks)
    limits = limits_for(config)
    return [read_file(r, limits) for r in refs], missing


def lint_paths(
    paths: Sequence[str],
    config: Config,
    context: Sequence[str] = (),
    stdin: tuple[str, bytes] | None = None,
    follow_symlinks: bool = False,
    jobs: int | None = None,
) -> Result:
    """Lint files and directories (plus stdin as ``(display name, bytes)``).

    ``jobs`` (default: ``config.jobs``) is the number of worker processes; 0 or None picks one
    per core for large inputs and none for a handful of files.
    """
    limits = limits_for(config)
    refs, missing = discover(paths, config.exclude, config.root, follow_symlinks)
    inputs = [Input.read(r, limits, target=True) for r in refs]
    if stdin is not None:
        inputs.append(Input(stdin[0], None, stdin[1], None, True))
    if context:
        target_keys = {_key(p) for p in paths} | {r.key or _key(str(r.path)) for r in refs}
        crefs, _ = discover(context, config.exclude, config.root, follow_symlinks)
        inputs += [Input.later(r) for r in crefs if (r.key or _key(str(r.path))) not in target_keys]
    result = lint_inputs(inputs, config, jobs=config.jobs if jobs is None else jobs)
    result.missing = missing
    return result


def _key(p: str) -> str:
    try:
        return str(Path(p).resolve())
    except (OSError, RuntimeError):
        return p


_NEEDS = {"pod": POD, "claims": CLAIMS, "dra": DRA}


class _Runner:
    def __init__(self, config: Config, index: Index) -> None:
        self.config = config
        self.index = index
        self.selected = config.selected()
        registry = load_checks()
        self.impls: list[tuple[RuleImpl, RuleMeta]] = [
            (registry[c], m) for c, m in self.selected.items() if c in registry
        ]
        self.contexts = {
            m.code: Context(index=index, profile=config.profile, options=config.options_for(m)) for _, m in self.impls
        }
        shared: dict[object, object] = {}
        for ctx in self.contexts.values():
            ctx.cache = shared
        self.by_scope: dict[str, list[tuple[RuleImpl, RuleMeta]]] = defaultdict(list)
        for impl, meta in self.impls:
            self.by_scope[impl.scope].append((impl, meta))
        self._kind_cache: dict[str | None, list[tuple[RuleImpl, RuleMeta]]] = {}
        self._calls: dict[tuple[str | None, int], list[tuple[CheckFn, RuleMeta, Context]]] = {}
        self.errors: list[InternalError] = []

    def object_rules(self, kind: str | None) -> list[tuple[RuleImpl, RuleMeta]]:
        rules = self._kind_cache.get(kind)
        if rules is None:
            rules = [(i, m) for i, m in self.by_scope["object"] if i.kinds is None or kind in i.kinds]
            self._kind_cache[kind] = rules
        return rules

    def _object_calls(self, kind: str | None, facets: int) -> list[tuple[CheckFn, RuleMeta, Context]]:
        """The checks to call on an object, by its kind and facets (a check that needs a pod spec is
        not called for a ConfigMap: with 40 rules and 20,000 objects the calls alone add up)."""
        calls = self._calls.get((kind, facets))
        if calls is None:
            calls = [
                (i.fn, m, self.contexts[m.code]) for i, m in self.object_rules(kind)
                if i.needs is None or any(facets & _NEEDS[n] for n in i.needs)
            ]
            self._calls[(kind, facets)] = calls
        return calls

    def _failed(self, meta: RuleMeta, where: str, e: Exception) -> None:
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        self.errors.append(InternalError(meta.code, where, detail))
        if "DRALINT_DEBUG" in os.environ:
            traceback.print_exc(file=sys.stderr)

    def run(self, impl: RuleImpl, meta: RuleMeta, unit: object, where: str) -> Iterator[Violation]:
        try:
            yield from impl.fn(unit, self.contexts[meta.code])
        except Exception as e:  # a rule bug must not hide the other findings
            self._failed(meta, where, e)

    def finding(
        self,
        meta: RuleMeta,
        v: Violation,
        sf: SourceFile,
        doc: Document | None,
        base: JsonPath,
        obj: K8sObject | None,
    ) -> Finding:
        if v.span is not None:
            span = v.span
        elif doc is not None:
            span = locate(sf, doc, (*base, *v.path), v.on)
        else:
            span = Span(1, 1, 1, 1)
        return Finding(
            rule=meta.code,
            name=meta.name,
            severity=v.severity if v.severity is not None and meta.code not in self.config.severity
            else self.config.severity_for(meta),
            message=v.message,
            path=sf.path,
            span=span,
            object=obj.ref if obj is not None else None,
            source=doc.source if doc is not None else None,
            fix=v.fix,
            doc_index=doc.index if doc is not None else -1,
            base_path=base,
            obj_path=v.path,
        )


    def lint_file(
        self, sf: SourceFile, objects: Sequence[K8sObject], values: Sequence[ValuesDoc]
    ) -> tuple[list[Finding], int]:
        """All rules on one target file, then its suppressions: (kept findings, suppressed count)."""
        config = self.config
        file_findings: list[Finding] = []
        annotations: dict[int, Directive] = {}
        for impl, meta in self.by_scope["file"]:
            for v in self.run(impl, meta, sf, sf.path):
                doc = _doc_at(sf, v)
                file_findings.append(self.finding(meta, v, sf, doc, (), None))
        for obj in objects:
            ann = annotation_directive(
                obj.annotations.get(ANNOTATION),
                locate(sf, obj.doc, (*obj.base_path, "metadata", "annotations", ANNOTATION), "value"),
            ) if ANNOTATION in obj.annotations else None
            for fn, meta, ctx in self._object_calls(obj.kind, obj.facets):
                # called directly (not through `run`): this loop runs rules x objects times
                try:
                    for v in fn(obj, ctx):
                        f = self.finding(meta, v, sf, obj.doc, obj.base_path, obj)
                        if ann is not None:
                            annotations[id(f)] = ann
                        file_findings.append(f)
                except Exception as e:  # a rule bug must not hide the other findings
                    self._failed(meta, sf.path, e)
            if ann is not None:
                annotations[-id(obj)] = ann
        for vd in values:
            for impl, meta in self.by_scope["values"]:
                for v in self.run(impl, meta, vd, sf.path):
                    file_findings.append(self.finding(meta, v, sf, vd.doc, (), None))

        per_file = config.file_ignores(sf.path)
        sup = Suppressor(parse_directives(sf))
        kept: list[Finding] = []
        suppressed = 0
        for f in file_findings:
            if any(f.rule == c or f.rule.startswith(c) for c in per_file):
                continue
            if sup.suppressed(f, annotations.get(id(f))):
                suppressed += 1
                continue
            kept.append(f)
        if UNUSED_SUPPRESSION in self.selected:
            kept.extend(_unused(self, sf, sup, [a for k, a in annotations.items() if k < 0], per_file))
        return kept, suppressed

    def units_by_file(self) -> tuple[dict[int, list[K8sObject]], dict[int, list[ValuesDoc]]]:
        """Target objects and values documents of the index, by ``id()`` of their file."""
        objects_by_file: dict[int, list[K8sObject]] = defaultdict(list)
        for obj in self.index.objects:
            if obj.target:
                objects_by_file[id(obj.file)].append(obj)
        values_by_file: dict[int, list[ValuesDoc]] = defaultdict(list)
        for vd in self.index.values:
            if vd.target:
                values_by_file[id(vd.file)].append(vd)
        return objects_by_file, values_by_file

    def lint_targets(self, targets: Iterable[SourceFile]) -> tuple[list[Finding], int]:
        """Every target file of the index (in the given order): findings (unsorted), suppressed count."""
        objects_by_file, values_by_file = self.units_by_file()
        findings: list[Finding] = []
        suppressed = 0
        for sf in targets:
            kept, n = self.lint_file(sf, objects_by_file.get(id(sf), ()), values_by_file.get(id(sf), ()))
            findings.extend(kept)
            suppressed += n
        return findings, suppressed


def lint_files(targets: Iterable[SourceFile], context_files: Iterable[SourceFile], config: Config) -> Result:
    """Lint parsed files: findings for ``targets``; ``context_files`` only feed the index."""
    with quiet_gc():
        index = Index()
        targets = list(targets)
        for sf in targets:
            index.add_file(sf, target=True)
        for sf in context_files:
            index.add_file(sf, target=False)
        runner = _Runner(config, index)
        trees_built(sum(len(sf.text) for sf in index.files))
        findings, suppressed = runner.lint_targets(targets)
    findings.sort(key=Finding.sort_key)
    return Result(
        findings=findings,
        files=targets,
        index_or_builder=index,
        config=config,
        selected=runner.selected,
        internal_errors=runner.errors,
        suppressed=suppressed,
    )


# ----------------------------------------------------------------------------------------------
# summaries: what the index needs from a file that is not linted itself

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


class FileLoader:
    """Parses a context file again when a rule reads data its summary does not carry (memoised)."""

    def __init__(self, display: str, ref: FileRef | None, raw: bytes | None, limits: Limits,
                 stats: dict[str, Any]) -> None:
        self.display, self.ref, self.raw, self.limits, self.stats = display, ref, raw, limits, stats
        self._sf: SourceFile | None = None

    def source(self) -> SourceFile:
        if self._sf is None:
            self.stats["on_demand_loads"] = self.stats.get("on_demand_loads", 0) + 1
            if self.raw is not None:
                self._sf = load_bytes(self.display, self.raw, self.limits)
            elif self.ref is not None:
                self._sf = read_file(self.ref, self.limits)
            else:
                self._sf = SourceFile(self.display, b"")
        return self._sf

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
    text = _delegate("text")
    bom = _delegate("bom")
    newline = _delegate("newline")
    documents = _delegate("documents")
    problems = _delegate("problems")
    is_json = _delegate("is_json")
    _line_starts = _delegate("_line_starts")

    def __init__(self, path: str, loader: FileLoader) -> None:  # not the dataclass __init__: no fields are set here
        self.path = path
        self.loader = loader


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
                loader: FileLoader | None) -> None:
    """Add a file to the index from its summary (objects in file order, as `Index.add_file` would)."""
    sf = SourceFile(path=display, raw=b"")
    index.files.append(sf)
    docs = {i: Document(i, None, 0, 0, src) for i, src in summary.docs}
    sf.documents = list(docs.values())
    for doc_i, base, api, kind, name, ns, data, _ in summary.objects:
        index.add(RemoteObject(sf, docs[doc_i], tuple(base), [api, kind, name, ns], data, loader, target))
    for doc_i, data, keep in summary.values:
        index.values.append(RemoteValues(sf, docs[doc_i], data, keep, loader, target))


# ----------------------------------------------------------------------------------------------
# paths on disk: read, summarise (or take summaries from the cache), parse targets, lint


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

    @classmethod
    def read(cls, ref: FileRef, limits: Limits, target: bool) -> Input:
        raw = read_raw(ref, limits)
        if isinstance(raw, SourceFile):
            return cls(ref.display, ref, None, raw, target)
        return cls(ref.display, ref, raw, None, target)

    @classmethod
    def later(cls, ref: FileRef) -> Input:
        return cls(ref.display, ref, None, None, False, unread=True)

    def ensure_read(self, limits: Limits) -> None:
        if self.unread and self.ref is not None:
            raw = read_raw(self.ref, limits)
            self.raw, self.problem = (None, raw) if isinstance(raw, SourceFile) else (raw, None)
            self.unread = False

    def parse(self, limits: Limits) -> SourceFile:
        if self.problem is not None:
            return self.problem
        return load_bytes(self.display, self.raw or b"", limits)

    def loader(self, limits: Limits, stats: dict[str, Any]) -> FileLoader:
        return FileLoader(self.display, self.ref, self.raw, limits, stats)


def open_cache(config: Config, limits: Limits) -> SummaryCache | None:
    if not config.use_cache:
        return None
    directory = Path(config.cache_dir) if config.cache_dir else default_cache_dir(config.root)
    if not directory.is_absolute():
        directory = config.root / directory
    return SummaryCache(directory, f"{limits}")


#: below this much input, worker processes cost more than they save
PARALLEL_MIN_BYTES = 2_000_000
PARALLEL_MIN_FILES = 16


def choose_jobs(requested: int | None, nbytes: int, nfiles: int) -> int:
    if requested is not None and requested > 0:
        return max(1, min(requested, nfiles))
    if nbytes < PARALLEL_MIN_BYTES or nfiles < PARALLEL_MIN_FILES:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, nfiles // 8))


def lint_inputs(inputs: list[Input], config: Config, jobs: int | None = None) -> Result:
    """The pipeline behind `lint_paths`: cache lookups, then serial or parallel linting."""
    limits = limits_for(config)
    cache = open_cache(config, limits)
    summaries: dict[int, FileSummary] = {}
    stored: dict[int, bytes] = {}  # the cache entries behind ``summaries`` (workers get them as they are)
    stat: dict[int, os.stat_result] = {}
    if cache is not None:
        cache.load_paths()
    for i, inp in enumerate(inputs):
        if cache is not None and inp.ref is not None and inp.ref.key:
            with contextlib.suppress(OSError):
                stat[i] = os.stat(inp.ref.path)
        if inp.unread and cache is not None and inp.ref is not None and i in stat:
            known = cache.known_key(inp.ref.key, stat[i])
            entry = cache.get(known) if known else None
            hit = FileSummary.from_bytes(entry) if entry is not None else None
            if hit is not None:
                inp.key = known
                summaries[i], stored[i] = hit, entry  # type: ignore[assignment]
                continue  # unchanged since it was summarised: not even read
        inp.ensure_read(limits)
        if cache is None or inp.raw is None:
            continue
        inp.key = cache.key(inp.raw, inp.display.lower().endswith(".json"))
        if not inp.target:
            entry = cache.get(inp.key)
            hit = FileSummary.from_bytes(entry) if entry is not None else None
            if hit is not None:
                summaries[i], stored[i] = hit, entry  # type: ignore[assignment]
    if cache is not None:
        for i, st in stat.items():
            ref, key = inputs[i].ref, inputs[i].key
            if ref is not None and key is not None:
                cache.remember(ref.key, st, key)
        if len(summaries) < len(inputs):
            cache.prepare()
        cache.save_paths()
    todo = [i for i, inp in enumerate(inputs) if i not in summaries]
    nbytes = sum(len(inputs[i].raw or b"") for i in todo)
    n = choose_jobs(jobs, nbytes, len(todo))
    stats: dict[str, Any] = {"jobs": n, "files": len(inputs), "parsed": len(todo),
                             "cache": "off" if cache is None else str(cache.dir), "cache_hits": len(summaries)}
    if n > 1:
        from dralint import parallel

        result = parallel.lint_parallel(inputs, stored, summaries, config, cache, n, stats)
        if result is not None:
            return result
        stats["jobs"] = 1  # a worker failed: do it here
    return _lint_serial(inputs, summaries, config, cache, stats)


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Build parse trees with the cyclic garbage collector paused, then check with it frozen out.

    Trees are acyclic and live for the whole run; with the collector on, every full collection
    walks all of them again (measured: more than half of the load time on a 28 MB repository).
    Rules still get a working collector for their own short-lived garbage: `freeze` moves the
    trees out of its sight. Everything is restored on exit (library callers keep a normal GC).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


#: below this much parsed text, a full collection walking the trees costs less than freezing does
#: to a long-running library caller: `freeze` also takes that process's garbage of the moment out of
#: sight, and after `unfreeze` it sits in the oldest generation, which is rarely collected (a fuzz
#: loop calling `lint_text` grew by gigabytes)
FREEZE_MIN_CHARS = 1_000_000


def trees_built(chars: int = FREEZE_MIN_CHARS) -> None:
    """Called by `quiet_gc` users once the trees (of ``chars`` characters of text) exist: hide large
    ones from the collector, turn it back on."""
    if chars >= FREEZE_MIN_CHARS:
        gc.freeze()
    gc.enable()


def _lint_serial(inputs: list[Input], summaries: dict[int, FileSummary], config: Config,
                 cache: SummaryCache | None, stats: dict[str, Any]) -> Result:
    with quiet_gc():
        return _lint_serial_quiet(inputs, summaries, config, cache, stats)


def _lint_serial_quiet(inputs: list[Input], summaries: dict[int, FileSummary], config: Config,
                       cache: SummaryCache | None, stats: dict[str, Any]) -> Result:
    limits = limits_for(config)
    parsed: dict[int, SourceFile] = {}
    for i, inp in enumerate(inputs):
        if i in summaries:
            continue
        sf = inp.parse(limits)
        if inp.target:
            parsed[i] = sf
            if cache is not None and inp.key is not None and not cache.has(inp.key):
                cache.put(inp.key, summarize(sf).to_bytes())
        else:
            summaries[i] = summarize(sf)  # the parse tree goes; the summary keeps what the index needs
            if cache is not None and inp.key is not None:
                cache.put(inp.key, summaries[i].to_bytes())
    index = Index()
    targets: list[SourceFile] = []
    for i, inp in enumerate(inputs):
        if i in parsed:
            index.add_file(parsed[i], target=True)
            targets.append(parsed[i])
        else:
            add_summary(index, inp.display, summaries[i], inp.target, inp.loader(limits, stats))
    runner = _Runner(config, index)
    trees_built(sum(len(inp.raw or b"") for inp in inputs))
    findings, suppressed = runner.lint_targets(targets)
    findings.sort(key=Finding.sort_key)
    if cache is not None:
        stats["cache_writes"] = cache.writes
    return Result(findings=findings, files=targets, index_or_builder=index, config=config, selected=runner.selected,
                  internal_errors=runner.errors, suppressed=suppressed, stats=stats)


def _doc_at(sf: SourceFile, v: Violation) -> Document | None:
    if v.span is None:
        return None
    for d in sf.documents:
        sl = sf.line_col(d.start)[0]
        el = sf.line_col(d.end)[0]
        if sl <= v.span.line <= el:
            return d
    return None


def _unused(
    runner: _Runner, sf: SourceFile, sup: Suppressor, anns: list[Directive], per_file: set[str]
) -> Iterator[Finding]:
    meta = runner.selected[UNUSED_SUPPRESSION]
    if any(c == UNUSED_SUPPRESSION or UNUSED_SUPPRESSION.startswith(c) for c in per_file):
        return
    cat = catalog()
    file_off = {c for d in sup.directives if d.kind == "file" for c in d.codes}
    if UNUSED_SUPPRESSION in file_off or "ALL" in file_off:
        return
    for d in [*sup.directives, *anns]:
        for code in d.codes:
            if code in d.used:
                continue
            if code != "ALL" and not any(k == code or k.startswith(code) for k in cat):
                msg = f"suppression names an unknown rule `{code}`"
            elif code != "ALL" and not any(k == code or k.startswith(code) for k in runner.selected):
                continue  # the rule is not enabled in this run: nothing to judge
            else:
                where = {"file": "in this file", "line": f"on line {d.target_line}", "annotation": "on this object"}
                msg = f"unused suppression: `{code}` suppressed nothing {where[d.kind]}"
            yield Finding(
                rule=meta.code, name=meta.name, severity=runner.config.severity_for(meta), message=msg,
                path=sf.path, span=d.span,
            )
