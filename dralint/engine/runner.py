"""The rule runner: every selected rule over the target files of one index.

Violations become findings with exact positions (through `dralint.inputs.locate`), then the file's
suppressions apply. `lint_files` is the whole run for files already parsed. Rule crashes are caught
and reported as internal errors (exit 3) rather than losing the run."""

from __future__ import annotations

import os
import sys
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralint.checks.intended import as_written as intended_as_written
from dralint.checks.intended import view_for
from dralint.checks.registry import CheckFn, Context, RuleImpl, load_checks
from dralint.engine import progress
from dralint.engine.config import Config
from dralint.engine.memory import quiet_gc, trees_built
from dralint.engine.suppress import ANNOTATION, Directive, Suppressor, annotation_directive, parse_directives
from dralint.inputs.index import CLAIMS, DRA, POD, Index, K8sObject, ValuesDoc
from dralint.inputs.load import Document, Limits, SourceFile
from dralint.inputs.locate import locate
from dralint.knowledge.catalog import RuleMeta, catalog
from dralint.model import Finding, JsonPath, Severity, Span, Violation

UNUSED_SUPPRESSION = "DRA006"
BLANKET_SUPPRESSION = "DRA010"


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
    #: the suppressed findings themselves, each with ``extra["suppression"]`` (kind, line, justification)
    suppressions: list[Finding] = field(default_factory=list)
    #: how the run went (workers, cache hits, on-demand loads), for --verbose
    stats: dict[str, Any] = field(default_factory=dict)
    #: how many objects the target files hold, when the run knows without building the index
    known_target_objects: int | None = None

    def target_objects(self) -> int:
        if self.known_target_objects is not None:
            return self.known_target_objects
        return sum(1 for o in self.index.objects if o.target)

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


class NeedsIndex(BaseException):
    """Raised by `SealedIndex` when a rule asks the index before it is complete.

    A BaseException, so that a rule's own ``except Exception`` cannot swallow it and quietly
    compute findings from an empty index."""


class SealedIndex:
    """The index while a file is checked on its own (streaming): a question about other files is
    refused, unless it is about kinds that are complete already.

    A streamed run parses the files that may hold the kinds other rules ask about first
    (`dralint.engine.stream.STAGES`); once those are all summarised, `complete` hands over an index of
    the files done so far, and questions about those kinds are answered from it (it holds every
    object of them, in the order the whole index would). The file being checked is known: its values
    documents, and its own objects for `Index.in_file`."""

    def __init__(self) -> None:
        self._file: SourceFile | None = None
        self._objects: Sequence[K8sObject] = ()
        self._values: Sequence[ValuesDoc] = ()
        self._early: Index | None = None
        self._complete: frozenset[str] = frozenset()
        #: paths of the files in ``_early`` (their `Index.in_file` answers are whole)
        self._done: frozenset[str] = frozenset()
        #: paths more than one input has: the index merges their objects, so no file answers alone
        self.shared: frozenset[str] = frozenset()
        #: what rules asked the early indexes (part of the run's `Index.reads`)
        self.reads: set[str] = set()

    def own(self, sf: SourceFile | None, objects: Sequence[K8sObject] = (), values: Sequence[ValuesDoc] = ()) -> None:
        self._file, self._objects, self._values = sf, objects, values

    def complete(self, index: Index, kinds: frozenset[str], done: frozenset[str]) -> None:
        """Answer questions about ``kinds`` (and about the files at ``done``) from ``index``."""
        index.reads = self.reads
        self._early, self._complete, self._done = index, kinds, done

    def let_go(self) -> None:
        """Forget the early index (what the rules asked of it stays in `reads`)."""
        self._early, self._complete, self._done = None, frozenset(), frozenset()

    def _ask(self, name: str, kinds: Sequence[str]) -> Index:
        if self._early is None or not kinds or not self._complete.issuperset(kinds):
            raise NeedsIndex(name)
        return self._early

    def of_kind(self, *kinds: str) -> Iterator[K8sObject]:
        return self._ask("of_kind", kinds).of_kind(*kinds)

    def find(self, kind: str, name: str, namespace: str | None = None) -> list[K8sObject]:
        return self._ask("find", (kind,)).find(kind, name, namespace)

    def find_any_namespace(self, kind: str, name: str) -> list[K8sObject]:
        return self._ask("find_any_namespace", (kind,)).find_any_namespace(kind, name)

    def names_of(self, kind: str) -> list[tuple[str | None, str]]:
        return self._ask("names_of", (kind,)).names_of(kind)

    def in_file(self, path: str, *kinds: str) -> list[K8sObject]:
        if path in self.shared:
            raise NeedsIndex("in_file")
        if self._file is not None and path == self._file.path:
            return [o for o in self._objects if o.kind in kinds]
        if self._early is not None and path in self._done:
            return self._early.in_file(path, *kinds)
        raise NeedsIndex("in_file")

    def values_in(self, sf: SourceFile) -> list[ValuesDoc]:
        if sf is self._file:
            return list(self._values)
        if self._early is not None and sf.path in self._done and sf.path not in self.shared:
            return self._early.values_in(sf)
        raise NeedsIndex("values_in")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # introspection (copy, pickle, test tools), not a rule's question
            raise AttributeError(name)
        raise NeedsIndex(name)


@dataclass(eq=False)
class FileWork:
    """One target file's findings before suppression, and the rule runs still waiting for the index."""

    sf: SourceFile
    findings: list[Finding] = field(default_factory=list)
    #: id(finding) -> the object annotation that may silence it; -id(object) -> every object annotation
    annotations: dict[int, Directive] = field(default_factory=dict)
    #: (check, rule, unit, the unit's annotation) pairs that asked the sealed index
    deferred: list[tuple[CheckFn, RuleMeta, Any, Directive | None]] = field(default_factory=list)
    #: the rule crashes on this file
    errors: list[InternalError] = field(default_factory=list)
    #: the file's objects and values documents, while its deferred runs wait for the index
    units: list[K8sObject | ValuesDoc] = field(default_factory=list)


def limits_for(config: Config) -> Limits:
    return Limits(max_file_bytes=config.max_file_size)


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
        #: what `_object_units` asks for an object's intended view with (the view reads the profile only)
        self._view_context = Context(index=index, profile=config.profile, cache=shared)
        self.by_scope: dict[str, list[tuple[RuleImpl, RuleMeta]]] = defaultdict(list)
        for impl, meta in self.impls:
            self.by_scope[impl.scope].append((impl, meta))
        self._kind_cache: dict[str | None, list[tuple[RuleImpl, RuleMeta]]] = {}
        self._calls: dict[tuple[str | None, int, bool], list[tuple[CheckFn, RuleMeta, Context]]] = {}
        self.errors: list[InternalError] = []
        self.sealed = SealedIndex()
        #: findings a suppression silenced (kept for the JSON and SARIF reports)
        self.suppressions: list[Finding] = []

    def object_rules(self, kind: str | None) -> list[tuple[RuleImpl, RuleMeta]]:
        rules = self._kind_cache.get(kind)
        if rules is None:
            rules = [(i, m) for i, m in self.by_scope["object"] if i.kinds is None or kind in i.kinds]
            self._kind_cache[kind] = rules
        return rules

    def _object_calls(self, kind: str | None, facets: int, plain: bool) -> list[tuple[CheckFn, RuleMeta, Context]]:
        """The checks to call on an object, by its kind and facets (a check that needs a pod spec is
        not called for a ConfigMap: with 40 rules and 20,000 objects the calls alone add up);
        ``plain``: the object is its own intended view, so no check looks for another one."""
        calls = self._calls.get((kind, facets, plain))
        if calls is None:
            calls = []
            for i, m in self.object_rules(kind):
                ctx = self.contexts[m.code]
                if i.needs is not None and not any(facets & _NEEDS[n] for n in i.needs):
                    continue
                if i.when is not None and not i.when(kind, facets, ctx):
                    continue
                calls.append((intended_as_written(i.fn) if plain else i.fn, m, ctx))
            self._calls[(kind, facets, plain)] = calls
        return calls

    def _failed(self, meta: RuleMeta, where: str, e: Exception) -> InternalError:
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        error = InternalError(meta.code, where, detail)
        self.errors.append(error)
        if "DRALINT_DEBUG" in os.environ:
            traceback.print_exc(file=sys.stderr)
        return error

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
        return self.settle(self.collect(sf, objects, values))

    def collect(self, sf: SourceFile, objects: Sequence[K8sObject], values: Sequence[ValuesDoc],
                defer: bool = False) -> FileWork:
        """Every rule on one target file's units, before suppression.

        With ``defer``, the index is sealed (`SealedIndex`): a rule that asks it anything gives up
        on that unit, and the (rule, unit) pair is kept in `FileWork.deferred` for `finish` to run
        once the whole index exists. What such a rule yielded before asking is dropped.
        """
        work = FileWork(sf)
        self.sealed.own(sf, objects, values)
        for impl, meta in self.by_scope["file"]:
            self._unit(work, impl.fn, meta, self.contexts[meta.code], sf, None, defer)
        for obj in objects:
            ann = annotation_directive(
                obj.annotations.get(ANNOTATION),
                locate(sf, obj.doc, (*obj.base_path, "metadata", "annotations", ANNOTATION), "value"),
            ) if ANNOTATION in obj.annotations else None
            self._object_units(work, obj, ann, defer)
            if ann is not None:
                work.annotations[-id(obj)] = ann
        for vd in values:
            for impl, meta in self.by_scope["values"]:
                self._unit(work, impl.fn, meta, self.contexts[meta.code], vd, None, defer)
        return work

    def _unit(self, work: FileWork, fn: CheckFn, meta: RuleMeta, ctx: Context, unit: Any,
              ann: Directive | None, defer: bool) -> None:
        """One rule on one unit (the file, an object or a values document)."""
        self._runs(work, ((fn, meta, ctx),), unit, ann, defer)

    def _object_units(self, work: FileWork, obj: K8sObject, ann: Directive | None, defer: bool) -> None:
        # asked once here rather than by each rule (`on_intended`); a failure is left to the rules,
        # which report it as theirs
        try:
            plain = view_for(obj, self._view_context) is None
        except Exception:
            plain = False
        self._runs(work, self._object_calls(obj.kind, obj.facets, plain), obj, ann, defer)

    def _runs(self, work: FileWork, calls: Iterable[tuple[CheckFn, RuleMeta, Context]], unit: Any,
              ann: Directive | None, defer: bool) -> None:
        """Rules on one unit, in one loop: every rule on an object comes here at once, since a call per
        (rule, object) pair was a measurable part of a large run and most pairs find nothing. What a
        rule yielded before it asked a sealed index is dropped; what it yielded before it crashed is kept."""
        sf = work.sf
        if unit is sf:
            def place(meta: RuleMeta, v: Violation) -> Finding:
                return self.finding(meta, v, sf, _doc_at(sf, v), (), None)
        elif isinstance(unit, K8sObject):
            doc, base, obj = unit.doc, unit.base_path, unit

            def place(meta: RuleMeta, v: Violation) -> Finding:
                return self.finding(meta, v, sf, doc, base, obj)
        else:
            def place(meta: RuleMeta, v: Violation) -> Finding:
                return self.finding(meta, v, sf, unit.doc, (), None)
        for fn, meta, ctx in calls:
            found: list[Finding] = []
            try:
                for v in fn(unit, ctx):
                    found.append(place(meta, v))
            except NeedsIndex:
                if not defer:  # cannot happen: only a sealed index raises it
                    raise
                work.deferred.append((fn, meta, unit, ann))
                continue
            except Exception as e:  # a rule bug must not hide the other findings
                work.errors.append(self._failed(meta, sf.path, e))
            if found:
                if ann is not None:
                    for f in found:
                        work.annotations[id(f)] = ann
                work.findings.extend(found)

    def finish(self, work: FileWork) -> None:
        """Run a file's deferred (rule, unit) pairs against the index, which is complete by now."""
        deferred, work.deferred = work.deferred, []
        for fn, meta, unit, ann in deferred:
            self._unit(work, fn, meta, self.contexts[meta.code], unit, ann, False)

    def retry(self, work: FileWork) -> None:
        """Run a file's deferred pairs again on the sealed index, which knows more kinds by now;
        the pairs it still cannot answer stay deferred."""
        deferred, work.deferred = work.deferred, []
        self.sealed.own(None)
        for fn, meta, unit, ann in deferred:
            self._unit(work, fn, meta, self.contexts[meta.code], unit, ann, True)

    def seal(self) -> None:
        """Give the rules a sealed index until `unseal` (see `collect`)."""
        for ctx in self.contexts.values():
            ctx.index = self.sealed  # type: ignore[assignment]

    @property
    def early_reads(self) -> set[str]:
        """What the rules asked before the whole index existed (`SealedIndex.complete`)."""
        return self.sealed.reads

    def unseal(self, index: Index) -> None:
        self.index = index
        for ctx in self.contexts.values():
            ctx.index = index

    def settle(self, work: FileWork) -> tuple[list[Finding], int]:
        """A file's suppressions over its findings: (kept findings, suppressed count)."""
        config, sf, annotations = self.config, work.sf, work.annotations
        per_file = config.file_ignores(sf.path)
        sup = Suppressor(parse_directives(sf))
        kept: list[Finding] = []
        suppressed = 0
        for f in work.findings:
            if any(f.rule == c or f.rule.startswith(c) for c in per_file):
                continue
            if sup.suppressed(f, annotations.get(id(f))):
                suppressed += 1
                self.suppressions.append(f)
                continue
            kept.append(f)
        object_anns = [a for k, a in annotations.items() if k < 0]
        if UNUSED_SUPPRESSION in self.selected:
            kept.extend(_unused(self, sf, sup, object_anns, per_file))
        if BLANKET_SUPPRESSION in self.selected:
            kept.extend(_blanket(self, sf, sup, object_anns, per_file))
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
            progress.advance()
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
        suppressions=sorted(runner.suppressions, key=Finding.sort_key),
    )


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
                msg = f"suppression names an unknown rule `{code}`" + _did_you_mean(code)
            elif code != "ALL" and not any(k == code or k.startswith(code) for k in runner.selected):
                continue  # the rule is not enabled in this run: nothing to judge
            else:
                where = {"file": "in this file", "line": f"on line {d.target_line}", "annotation": "on this object"}
                what = "blanket suppression" if code == "ALL" else f"`{code}`"
                msg = f"unused suppression: {what} suppressed nothing {where[d.kind]}"
            yield Finding(
                rule=meta.code, name=meta.name, severity=runner.config.severity_for(meta), message=msg,
                path=sf.path, span=d.span,
            )


def _blanket(
    runner: _Runner, sf: SourceFile, sup: Suppressor, anns: list[Directive], per_file: set[str]
) -> Iterator[Finding]:
    """DRA010: directives without codes. Like DRA006 this runs after suppression, so a blanket
    directive cannot silence the finding about itself; `disable-file=DRA010` and config can."""
    meta = runner.selected[BLANKET_SUPPRESSION]
    if any(c == BLANKET_SUPPRESSION or BLANKET_SUPPRESSION.startswith(c) for c in per_file):
        return
    file_off = {c for d in sup.directives if d.kind == "file" and not d.blanket for c in d.codes}
    if any(c == BLANKET_SUPPRESSION or BLANKET_SUPPRESSION.startswith(c) for c in file_off):
        return
    where = {"file": "every rule in this file", "line": "every rule on line {n}",
             "annotation": "every rule on this object"}
    for d in [*sup.directives, *anns]:
        if not d.blanket:
            continue
        named = ",".join(sorted(d.hits))
        hint = f"name the rules it is meant for (here: `{named}`)" if named else "name the rules it is meant for"
        msg = (f"blanket suppression silences {where[d.kind].format(n=d.target_line)}, "
               f"including problems nobody has seen yet; {hint}")
        yield Finding(
            rule=meta.code, name=meta.name, severity=runner.config.severity_for(meta), message=msg,
            path=sf.path, span=d.span,
        )


def _did_you_mean(word: str) -> str:
    """The closest rule code or name to a misspelt one in a suppression."""
    from dralint.suggest import closest

    cat = catalog()
    options = [*cat, *(m.name for m in cat.values())]
    near = closest(word if word.isupper() else word.lower(), options)
    return f"; did you mean `{near}`?" if near else ""
